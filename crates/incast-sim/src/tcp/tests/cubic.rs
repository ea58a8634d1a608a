//! Cubic (RFC 9438) on a live endpoint: the decrease at fast retransmit and
//! timeout, and the Reno-friendly first step of congestion avoidance.

use super::*;

/// `cfg()` running Cubic.
fn cubic_cfg() -> TcpConfig {
    TcpConfig { cc: CcChoice::Cubic, ..cfg() }
}

/// RFC 9438 (4.6): ten segments out (cwnd 10 000 bytes), segment 0 lost; the
/// third duplicate ACK fast-retransmits with ssthresh = cwnd·717/1024 = 7001
/// (NewReno's FlightSize/2 would be 5000) and cwnd = ssthresh + 3·SMSS.
#[test]
fn rfc9438_4_6_fast_retransmit_cuts_to_beta_cwnd() {
    let mut ep = with_flight(&cubic_cfg(), seg(10), 10);
    for t in [100, 110] {
        recv(&mut ep, us(t), ack(seg(0)));
        expect_nothing(&mut ep, us(t));
    }
    recv(&mut ep, us(120), ack(seg(0)));
    expect_data(&mut ep, us(120), seg(0), MSS);
    assert!(ep.in_recovery());
    assert_eq!((ep.ssthresh(), ep.cwnd()), (7001, 10_001));
    // RFC 6582 (3.2 step 3): the full ACK ends recovery as NewReno's does.
    recv(&mut ep, us(240), ack(seg(10)));
    assert!(!ep.in_recovery());
    assert_eq!(ep.cwnd(), 2000, "min(ssthresh, max(FlightSize, SMSS) + SMSS)");
}

/// RFC 9438 (4.8): "CUBIC follows Reno to reduce cwnd [RFC5681] but sets
/// ssthresh using β_cubic" — a timeout with cwnd 10 000 leaves cwnd = 1 SMSS,
/// ssthresh = 7001, and go-back-N resends segment 0.
#[test]
fn rfc9438_4_8_timeout_sets_ssthresh_by_beta() {
    let mut ep = with_flight(&cubic_cfg(), seg(10), 10);
    let deadline = ep.poll_timeout().expect("timer armed");
    ep.on_timer(deadline);
    assert_eq!((ep.ssthresh(), ep.cwnd()), (7001, MSS as u64));
    expect_data(&mut ep, deadline, seg(0), MSS);
    expect_nothing(&mut ep, deadline);
}

/// RFC 9438 (4.3): with slow start off the first ACK is in congestion
/// avoidance; the epoch starts with K = 0 at cwnd = 10 000 (§4.8: no W_max
/// yet), W_cubic(t + RTT) has barely moved, and W_est = 10 000 + SMSS·α·acked/cwnd
/// = 10 000 + 1000·(921/1741)·1000/10 000 = 10 052 wins (NewReno: 10 100).
#[test]
fn rfc9438_4_3_first_congestion_avoidance_ack_is_reno_friendly() {
    let mut ep = with_flight(&TcpConfig { slow_start: false, ..cubic_cfg() }, seg(20), 10);
    recv(&mut ep, us(100), ack(seg(1)));
    assert_eq!(ep.cwnd(), 10_052);
    let mut reno = with_flight(&TcpConfig { slow_start: false, ..cfg() }, seg(20), 10);
    recv(&mut reno, us(100), ack(seg(1)));
    assert_eq!(reno.cwnd(), 10_100);
}

/// Linux tcp_cubic HyStart (`tcp.cubic_hystart`): a 40-segment response, IW
/// 10, the ACKs coming back 60 µs apart at a 100 µs RTT. Once cwnd reaches
/// 16 segments, the round's ACK train is longer than half the minimum RTT,
/// so slow start ends there (ssthresh = cwnd) instead of running on.
#[test]
fn hystart_ends_slow_start_at_sixteen_segments_on_an_ack_train() {
    let slow_start_end = |hystart: bool| {
        let cfg = TcpConfig { cubic: CubicConfig { hystart, ..CubicConfig::default() }, ..cubic_cfg() };
        let mut ep = with_flight(&cfg, seg(40), 10);
        let mut sent = 10;
        let mut t = 100;
        for acked in 1..=30 {
            recv(&mut ep, us(t), ack(seg(acked)));
            sent += drain(&mut ep, us(t)).len() as u64;
            t += 60;
        }
        assert_eq!(sent, 40, "the whole response went out");
        ep.ssthresh()
    };
    assert_eq!(slow_start_end(true), 16 * MSS as u64);
    assert_eq!(slow_start_end(false), u64::MAX, "RFC 5681: still in slow start");
}

/// Linux `tcp_cubic.c` (`tcp.cubic_flavor = "linux"`) on the first ACKs of
/// congestion avoidance: windows are whole segments and, with no W_max yet,
/// `cnt` = 20 ("increase cwnd 5% per RTT"), so cwnd stays 10 000 bytes for 19
/// acknowledged segments (RFC 9438 grows it on the first, test above) and
/// takes its next segment on the 20th.
#[test]
fn linux_flavor_grows_one_segment_per_cnt_acknowledged() {
    let linux = CubicConfig { flavor: CubicFlavor::Linux, ..CubicConfig::default() };
    let mut ep = with_flight(&TcpConfig { slow_start: false, cubic: linux, ..cubic_cfg() }, seg(40), 10);
    for acked in 1..=19 {
        recv(&mut ep, us(100 + acked), ack(seg(acked)));
        drain(&mut ep, us(100 + acked));
    }
    assert_eq!(ep.cwnd(), 10_000);
    recv(&mut ep, us(120), ack(seg(20)));
    assert_eq!(ep.cwnd(), 11_000);
}
