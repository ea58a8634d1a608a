//! Restart after idle (RFC 5681 4.1).

use super::*;

/// Ten segments sent at t = 0 and acknowledged one by one: slow start grows
/// cwnd to 20 segments and the sender goes idle with nothing outstanding.
fn grown_then_idle(restart_after_idle: bool) -> Endpoint {
    let mut ep = with_flight(&TcpConfig { restart_after_idle, ..cfg() }, seg(10), 10);
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
