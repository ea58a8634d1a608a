use super::*;
use crate::time::SimDuration;

fn sender(mss: u32, init_cwnd: u32) -> (Sender, TcpClock) {
    let cfg = TcpConfig { mss, init_cwnd, ..TcpConfig::default() };
    (Sender::<true>::new(&cfg, Rng::substream(0, "rto/0")), TcpClock::new(SimDuration::ZERO))
}

fn drain(s: &mut Sender, c: &TcpClock, now: SimTime) -> Vec<(u64, u32)> {
    std::iter::from_fn(|| s.poll_data(now, c)).map(|t| (t.seq, t.len)).collect()
}

/// RFC 1122 (4.2.3.4): full-sized segments, then the tail of the buffer.
#[test]
fn rfc1122_4_2_3_4_full_segments_then_tail() {
    let (mut s, c) = sender(1000, 10);
    s.write(2500, SendFlags::NONE);
    assert_eq!(drain(&mut s, &c, SimTime(0)), vec![(0, 1000), (1000, 1000), (2000, 500)]);
    assert_eq!(s.flight_size(), 2500);
}

/// RFC 1122 (4.2.3.4): no runt segment when the window cannot take a full one.
#[test]
fn rfc1122_4_2_3_4_no_runt_when_window_short() {
    let (mut s, c) = sender(1000, 2);
    s.write(1500, SendFlags::NONE);
    assert_eq!(drain(&mut s, &c, SimTime(0)), vec![(0, 1000), (1000, 500)]);
    s.write(3000, SendFlags::NONE);
    // cwnd 2000, 1500 in flight: 500 usable, but 3000 more queued → wait.
    assert_eq!(drain(&mut s, &c, SimTime(0)), vec![]);
}

/// ns-2.35 `TcpAgent::output` and `newack` (`rtt_timing = "ns2"`): one
/// segment is timed at a time, so the ACK of a segment sent while another
/// was being timed gives no sample, where RFC 6298 (3) samples every ACK.
#[test]
fn ns2_times_one_segment_at_a_time() {
    let us = SimDuration::from_micros;
    let ack = |a: u64| Segment::new(0, a, 0, 64_000, flags::ACK);
    let srtt_after_two_acks = |timing: RttTiming| {
        let mut cfg = TcpConfig { mss: 1000, init_cwnd: 10, ..TcpConfig::default() };
        cfg.rto.timing = timing;
        let (mut s, c) = (Sender::<true>::new(&cfg, Rng::substream(0, "rto/0")), TcpClock::new(SimDuration::ZERO));
        let mut stats = EndpointStats::default();
        s.write(2000, SendFlags::NONE);
        assert_eq!(drain(&mut s, &c, SimTime::ZERO).len(), 2);
        s.on_ack(SimTime::ZERO + us(100), &c, &ack(1000), None, &mut stats);
        s.on_ack(SimTime::ZERO + us(500), &c, &ack(2000), None, &mut stats);
        s.rto().srtt()
    };
    assert_eq!(srtt_after_two_acks(RttTiming::Ns2), Some(us(100)), "segment 2 was not timed");
    assert!(srtt_after_two_acks(RttTiming::EveryAck) > Some(us(100)), "RFC 6298: both ACKs sample");
}

/// RFC 6298 (5.1): the first data segment starts the timer; later ones do not move it.
#[test]
fn rfc6298_5_1_timer_started_by_first_data_segment() {
    let (mut s, c) = sender(1000, 10);
    assert_eq!(s.rtx_deadline(), None);
    s.write(1000, SendFlags::NONE);
    s.poll_data(SimTime(5), &c);
    assert_eq!(s.rtx_deadline(), Some(SimTime(5) + s.rto().rto()));
    s.write(1000, SendFlags::NONE);
    s.poll_data(SimTime(9), &c);
    assert_eq!(s.rtx_deadline(), Some(SimTime(5) + s.rto().rto()));
}
