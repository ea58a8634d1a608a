//! Restart after idle (RFC 5681 4.1).

use super::*;
use crate::tcp::idle_restart::IdleRule;

/// Ten segments sent at t = 0 and acknowledged one by one: slow start grows
/// cwnd to 20 segments and the sender goes idle with nothing outstanding.
fn grown_then_idle(restart_after_idle: bool) -> Endpoint {
    grown_then_idle_with(&TcpConfig { restart_after_idle, ..cfg() })
}

/// [`grown_then_idle`] with the settings `c`; the last ACK arrives at 110 µs.
fn grown_then_idle_with(c: &TcpConfig) -> Endpoint {
    let mut ep = with_flight(c, seg(10), 10);
    for i in 1..=10 {
        recv(&mut ep, us(100 + i), ack(seg(i)));
    }
    assert_eq!((ep.cwnd(), ep.flight_size()), (20_000, 0));
    ep.send(seg(30));
    ep
}

/// RFC 5681 (4.1): after not sending for longer than the RTO, the sender
/// restarts from RW = min(IW, cwnd).
#[test]
fn rfc5681_4_1_idle_longer_than_rto_restarts_from_iw() {
    let mut ep = grown_then_idle(true);
    let t = SimTime(ep.rto().0 + 1);
    assert_eq!(drain(&mut ep, t).len(), 10);
    assert_eq!(ep.cwnd(), 10_000);
}

/// RFC 5681 (4.1): an idle period no longer than the RTO keeps cwnd.
#[test]
fn rfc5681_4_1_idle_shorter_than_rto_keeps_cwnd() {
    let mut ep = grown_then_idle(true);
    let t = SimTime(ep.rto().0);
    assert_eq!(drain(&mut ep, t).len(), 20);
    assert_eq!(ep.cwnd(), 20_000);
}

/// RFC 5681 (4.1): with the restart off, a long idle period keeps cwnd.
#[test]
fn rfc5681_4_1_restart_off_keeps_cwnd() {
    let mut ep = grown_then_idle(false);
    let t = ms(1000);
    assert_eq!(drain(&mut ep, t).len(), 20);
    assert_eq!(ep.cwnd(), 20_000);
}

/// ns-2.35 (`TcpAgent::newtimer`, `TcpAgent::timeout`): the timer the last
/// ACK re-armed expires one RTO after it with nothing outstanding, and the
/// window restarts at one segment; sending just before that keeps cwnd.
#[test]
fn ns2_idle_timer_restarts_at_one_segment_one_rto_after_the_last_ack() {
    let c = TcpConfig { idle_restart: IdleRule::Ns2, ..cfg() };
    let mut ep = grown_then_idle_with(&c);
    let before = us(110) + SimDuration(ep.rto().0 - 1);
    assert_eq!(drain(&mut ep, before).len(), 20);
    let mut ep = grown_then_idle_with(&c);
    let at = us(110) + ep.rto();
    assert_eq!(drain(&mut ep, at), vec![(seg(10), MSS)]);
    assert_eq!((ep.cwnd(), ep.ssthresh()), (1000, u64::MAX));
}
