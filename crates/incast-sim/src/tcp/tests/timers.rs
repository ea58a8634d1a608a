//! Retransmission-timer and RTT-sampling traces (RFC 6298).

use super::*;

/// The handshake RTT is the first sample: SRTT = 100 µs, RTO = RTO_min.
#[test]
fn rfc6298_2_2_handshake_rtt_is_first_sample() {
    let ep = Endpoint::new(&cfg(), SimTime::ZERO, Some(SimDuration::from_micros(100)));
    assert_eq!(ep.srtt(), Some(SimDuration::from_micros(100)));
    assert_eq!(ep.rto(), SimDuration::from_millis(10));
    let cold = Endpoint::new(&cfg(), SimTime::ZERO, None);
    assert_eq!((cold.srtt(), cold.rto()), (None, SimDuration::from_secs(1)));
}

/// Linux `tcp_clean_rtx_queue`: a cumulative ACK samples the OLDEST segment it
/// newly acknowledges.
#[test]
fn rtt_sample_from_oldest_newly_acked_segment() {
    let mut ep = Endpoint::new(&cfg(), SimTime::ZERO, Some(SimDuration::from_micros(100)));
    ep.send(seg(1));
    expect_data(&mut ep, us(0), seg(0), MSS);
    ep.send(seg(1));
    expect_data(&mut ep, us(50), seg(1), MSS);
    recv(&mut ep, us(300), ack(seg(2)));
    // R = 300 µs (not 250): SRTT = 7/8·100 + 1/8·300 = 125 µs.
    assert_eq!(ep.srtt(), Some(SimDuration::from_micros(125)));
}

/// RFC 6298 (3): no RTT sample from an ACK covering retransmitted data, so
/// the backed-off RTO stays; the next ACK of never-retransmitted data samples
/// and collapses it (RFC 6298 (5)).
#[test]
fn rfc6298_3_karn_no_sample_from_retransmitted_data() {
    let mut ep = with_flight(&cfg(), seg(1), 1);
    let deadline = ep.poll_timeout().unwrap();
    assert_eq!(deadline, ms(10));
    ep.on_timer(deadline);
    assert_eq!(ep.rto(), SimDuration::from_millis(20));
    expect_data(&mut ep, deadline, seg(0), MSS);
    recv(&mut ep, deadline + SimDuration::from_micros(100), ack(seg(1)));
    assert_eq!(ep.srtt(), Some(SimDuration::from_micros(100)), "ambiguous ACK: no sample");
    assert_eq!(ep.rto(), SimDuration::from_millis(20), "back-off retained");

    let t = ms(20);
    ep.send(seg(1));
    expect_data(&mut ep, t, seg(1), MSS);
    recv(&mut ep, t + SimDuration::from_micros(100), ack(seg(2)));
    assert_eq!(ep.rto(), SimDuration::from_millis(10), "valid sample collapses back-off");
}

/// RFC 6298 (5.2) and (5.3): the timer restarts on each ACK of new data and
/// stops when everything is acknowledged.
#[test]
fn rfc6298_5_3_timer_restarts_on_new_ack_and_stops_when_idle() {
    let mut ep = with_flight(&cfg(), seg(2), 2);
    assert_eq!(ep.poll_timeout(), Some(ms(10)));
    recv(&mut ep, us(100), ack(seg(1)));
    assert_eq!(ep.poll_timeout(), Some(us(100) + SimDuration::from_millis(10)));
    recv(&mut ep, us(200), ack(seg(2)));
    assert_eq!(ep.poll_timeout(), None);
}

/// RFC 6298 (5.5), (5.6): each expiry doubles the RTO and re-arms the timer.
#[test]
fn rfc6298_5_5_repeated_expiry_doubles_timer() {
    let mut ep = with_flight(&cfg(), seg(1), 1);
    let mut at = ms(10);
    for rto_ms in [20, 40, 80] {
        assert_eq!(ep.poll_timeout(), Some(at));
        ep.on_timer(at);
        expect_data(&mut ep, at, seg(0), MSS);
        at += SimDuration::from_millis(rto_ms);
    }
    assert_eq!(ep.poll_timeout(), Some(at));
    assert_eq!(ep.stats().timeouts, 3);
}

/// `on_timer` before any deadline changes nothing.
#[test]
fn early_on_timer_is_a_no_op() {
    let mut ep = with_flight(&cfg_delack(), seg(1), 1);
    recv(&mut ep, us(10), data(0, 100));
    let before = (ep.poll_timeout(), ep.stats().clone(), ep.cwnd());
    ep.on_timer(us(20));
    ep.on_timer(ms(9));
    assert_eq!(before, (ep.poll_timeout(), ep.stats().clone(), ep.cwnd()));
    expect_nothing(&mut ep, ms(9));
}

/// CMU09 §6: with a 1 ms jiffy clock and RTO_min = 1 ms the effective RTO is
/// 5 ms, and the timer fires on a tick boundary.
#[test]
fn rfc6298_2_2_jiffy_clock_rto_is_five_ticks_on_tick_boundary() {
    let g = SimDuration::from_millis(1);
    let jiffy = TcpConfig { rto: RtoConfig { min: g, granularity: g, ..RtoConfig::default() }, ..cfg() };
    let mut ep = Endpoint::new(&jiffy, SimTime::ZERO, Some(SimDuration::from_micros(100)));
    assert_eq!(ep.rto(), SimDuration::from_millis(5));
    ep.send(seg(2));
    expect_data(&mut ep, us(300), seg(0), MSS);
    // tick(0.3 ms) = 0, so the timer expires at tick 5 = 5 ms.
    assert_eq!(ep.poll_timeout(), Some(ms(5)));
    // Segment 0 is ACKed in tick 2 (1.75 ms later): a two-tick sample.
    expect_data(&mut ep, us(1_950), seg(1), MSS);
    recv(&mut ep, us(2_050), ack(seg(1)));
    // SRTT = 7/8·1 + 1/8·2 = 1.125 ms, RTTVAR = 3/4·1 + 1/4·1 = 1 ms, RTO = 5.125 ms:
    // restarted in tick 2, it expires after ceil(5.125) = 6 ticks, at 8 ms.
    assert_eq!(ep.srtt(), Some(SimDuration::from_micros(1_125)));
    assert_eq!(ep.poll_timeout(), Some(ms(8)));
    ep.on_timer(us(7_999));
    expect_nothing(&mut ep, us(7_999));
    ep.on_timer(ms(8));
    expect_data(&mut ep, ms(8), seg(1), MSS);
    assert_eq!(ep.stats().timeouts, 1);
}
