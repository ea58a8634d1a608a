//! Loss-recovery variants of FAST08 §5.1: Reno vs NewReno, limited transmit,
//! slow start off.

use super::*;

/// Six segments sent at t = 0 with IW 6; segments 0 and 1 are lost. The four
/// that arrive bring four duplicate ACKs; the third fast-retransmits segment 0.
fn first_two_of_six_lost(recovery: LossRecovery) -> Endpoint {
    let mut ep = with_flight(&TcpConfig { init_cwnd: 6, recovery, ..cfg() }, seg(6), 6);
    for t in [100, 110] {
        recv(&mut ep, us(t), ack(seg(0)));
        expect_nothing(&mut ep, us(t));
    }
    recv(&mut ep, us(120), ack(seg(0)));
    expect_data(&mut ep, us(120), seg(0), MSS);
    recv(&mut ep, us(130), ack(seg(0)));
    expect_nothing(&mut ep, us(130));
    assert_eq!((ep.ssthresh(), ep.cwnd()), (3000, 7000));
    ep
}

/// RFC 5681 (3.2 step 6), FAST08 §5.1.1: "with a window size of six, Reno will
/// *always* experience a timeout when the first two packets of the window are
/// lost" — the partial ACK ends recovery with cwnd = ssthresh < FlightSize.
#[test]
fn rfc5681_3_2_step6_reno_times_out_on_two_losses_in_six() {
    let mut ep = first_two_of_six_lost(LossRecovery::Reno);
    recv(&mut ep, us(220), ack(seg(1)));
    assert!(!ep.in_recovery());
    assert_eq!(ep.cwnd(), 3000, "cwnd = ssthresh");
    expect_nothing(&mut ep, us(220));
    let deadline = ep.poll_timeout().expect("timer armed");
    ep.on_timer(deadline);
    assert_eq!(ep.stats().timeouts, 1);
    expect_data(&mut ep, deadline, seg(1), MSS);
}

/// RFC 6582 (3.2 step 3), FAST08 §5.1.1: NewReno retransmits the second hole
/// on the partial ACK and recovers both losses without a timeout.
#[test]
fn rfc6582_3_2_step3_newreno_recovers_two_losses_in_six() {
    let mut ep = first_two_of_six_lost(LossRecovery::NewReno);
    recv(&mut ep, us(220), ack(seg(1)));
    assert!(ep.in_recovery());
    expect_data(&mut ep, us(220), seg(1), MSS);
    recv(&mut ep, us(320), ack(seg(6)));
    assert!(!ep.in_recovery());
    assert_eq!(ep.poll_timeout(), None, "everything acknowledged");
    assert_eq!((ep.stats().timeouts, ep.stats().fast_retransmits), (0, 1));
    assert_eq!(ep.stats().retransmitted_segments, 2);
}

/// RFC 3042 (2): with segment 1 lost and a full window (11 segments out),
/// the first and second duplicate ACKs each release exactly one new segment
/// without changing cwnd; the third fast-retransmits, and RFC 5681 (3.2 step 2)
/// leaves the limited-transmit segments out of FlightSize for ssthresh.
#[test]
fn rfc3042_2_first_two_dup_acks_send_one_new_segment_each() {
    let mut ep = with_flight(&TcpConfig { limited_transmit: true, ..cfg() }, seg(20), 10);
    recv(&mut ep, us(100), ack(seg(1)));
    assert_eq!(drain(&mut ep, us(100)), vec![(seg(10), MSS), (seg(11), MSS)]);
    for (t, next) in [(110, 12), (120, 13)] {
        recv(&mut ep, us(t), ack(seg(1)));
        assert_eq!(drain(&mut ep, us(t)), vec![(seg(next), MSS)]);
        assert_eq!(ep.cwnd(), 11_000, "cwnd unchanged");
    }
    recv(&mut ep, us(130), ack(seg(1)));
    assert_eq!(drain(&mut ep, us(130)), vec![(seg(1), MSS)]);
    assert_eq!(ep.ssthresh(), 5500, "(13 − 2 limited-transmit segments) / 2");
    assert_eq!(ep.cwnd(), 8500);
    assert_eq!(ep.stats().fast_retransmits, 1);
}

/// RFC 3042 (2): limited transmit needs the receiver's window to allow it.
#[test]
fn rfc3042_2_limited_transmit_respects_peer_window() {
    let narrow = |n| {
        let mut seg = ack(n);
        seg.wnd = 11_000;
        seg
    };
    let mut ep = with_flight(&TcpConfig { limited_transmit: true, ..cfg() }, seg(20), 10);
    recv(&mut ep, us(100), narrow(seg(1)));
    assert_eq!(drain(&mut ep, us(100)), vec![(seg(10), MSS), (seg(11), MSS)]);
    recv(&mut ep, us(110), narrow(seg(1)));
    expect_nothing(&mut ep, us(110));
}

/// ns-2.35's limited transmit (`tcp.limited_transmit_resends`): after a
/// timeout has rewound the sender to segment 0, the first two duplicate ACKs
/// each push out the next segment in sequence, sent before, beyond cwnd
/// (`send_one` sends `t_seqno_`); RFC 3042's new-data rule sends nothing.
#[test]
fn ns2_limited_transmit_resends_after_a_timeout_rfc3042_does_not() {
    for (resends, sent) in [(true, vec![vec![(seg(1), MSS)], vec![(seg(2), MSS)]]), (false, vec![vec![], vec![]])] {
        let c = TcpConfig { limited_transmit: true, limited_transmit_resends: resends, ..cfg() };
        let mut ep = with_flight(&c, seg(10), 10);
        expire(&mut ep);
        assert_eq!(drain(&mut ep, ms(20)), vec![(seg(0), MSS)], "go-back-N: one segment at cwnd 1");
        for (i, expected) in sent.iter().enumerate() {
            recv(&mut ep, ms(20) + SimDuration::from_micros(10 * (i as u64 + 1)), ack(0));
            assert_eq!(&drain(&mut ep, ms(21)), expected, "resends {resends}, duplicate ACK {}", i + 1);
        }
        assert_eq!(ep.cwnd(), 1000, "cwnd unchanged");
    }
}

/// FAST08 §5.1.3: with slow start off, cwnd grows by congestion avoidance
/// (RFC 5681 (3.1) eq. (3), SMSS·SMSS/cwnd per ACK) from the first ACK.
#[test]
fn rfc5681_3_1_slow_start_off_grows_additively_from_first_ack() {
    let mut ep = with_flight(&TcpConfig { slow_start: false, ..cfg() }, seg(100), 10);
    assert_eq!(ep.ssthresh(), 10_000);
    recv(&mut ep, us(100), ack(seg(1)));
    assert_eq!(ep.cwnd(), 10_100);
    assert_eq!(drain(&mut ep, us(100)), vec![(seg(10), MSS)]);
    recv(&mut ep, us(101), ack(seg(2)));
    assert_eq!(ep.cwnd(), 10_100 + 1_000_000 / 10_100);
}

/// FAST08 §5.1.3: with slow start off, a timeout restarts from the loss window
/// and grows additively even below ssthresh (RFC 5681 (3.1) eq. (3)).
#[test]
fn rfc5681_3_1_slow_start_off_grows_additively_after_timeout() {
    let mut ep = with_flight(&TcpConfig { slow_start: false, ..cfg() }, seg(10), 10);
    recv(&mut ep, us(100), ack(seg(1)));
    let deadline = ep.poll_timeout().unwrap();
    ep.on_timer(deadline);
    assert_eq!((ep.cwnd(), ep.ssthresh()), (1000, 4500));
    expect_data(&mut ep, deadline, seg(1), MSS);
    let t = deadline + SimDuration::from_micros(100);
    recv(&mut ep, t, ack(seg(2)));
    assert_eq!(ep.cwnd(), 2000, "SMSS·SMSS/cwnd = one SMSS at cwnd = SMSS");
    assert_eq!(drain(&mut ep, t), vec![(seg(2), MSS), (seg(3), MSS)]);
    recv(&mut ep, t + SimDuration::from_micros(1), ack(seg(3)));
    assert_eq!(ep.cwnd(), 2500, "slow start would give 3000");
}
