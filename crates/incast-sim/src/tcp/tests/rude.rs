//! Rude TCP traces (RUDE §2.3, §3): congestion control off, the rude bit,
//! and turning it back on.

use super::*;
use crate::tcp::rude::RudeRequest;

fn cfg_rude() -> TcpConfig {
    TcpConfig { rude_allowed: true, rude: true, ..cfg() }
}

/// RUDE §2.3: with congestion control off the whole receive window goes out
/// at once, every segment marked; a polite sender stops at its initial window.
#[test]
fn rude_2_3_sends_the_receive_window_and_marks_every_segment() {
    let mut ep = Endpoint::new(&cfg_rude(), SimTime::ZERO, Some(SimDuration::from_micros(100)));
    ep.send(seg(50));
    let sent: Vec<Segment> = std::iter::from_fn(|| ep.poll_transmit(SimTime::ZERO)).collect();
    assert_eq!(sent.len(), 50);
    assert!(sent.iter().all(|s| s.has(flags::RUDE)));
    let mut polite = with_flight(&cfg(), seg(50), 10);
    expect_nothing(&mut polite, SimTime::ZERO);
}

/// RUDE §3.2, second case: off_now with 50 segments out and a fair window of
/// 10 is a congestion event — cwnd = ssthresh = 25 segments — and unmarked.
#[test]
fn rude_3_2_off_now_with_too_much_in_flight_halves_to_the_flight() {
    let mut ep = Endpoint::new(&cfg_rude(), SimTime::ZERO, Some(SimDuration::from_micros(100)));
    ep.send(seg(60));
    assert_eq!(drain(&mut ep, SimTime::ZERO).len(), 60);
    ep.set_rude(RudeRequest::OffNow);
    assert!(!ep.rude());
    assert_eq!((ep.cwnd(), ep.ssthresh()), (seg(30), seg(30)));
}

/// RUDE §3.2, third case: off_nicely keeps sending by the data in flight,
/// still marked, and stops marking once the fair window catches up.
#[test]
fn rude_3_2_off_nicely_stays_marked_until_the_windows_meet() {
    let mut ep = Endpoint::new(&cfg_rude(), SimTime::ZERO, Some(SimDuration::from_micros(100)));
    ep.send(seg(12));
    assert_eq!(drain(&mut ep, SimTime::ZERO).len(), 12);
    ep.set_rude(RudeRequest::OffNicely);
    assert!(ep.rude(), "12 in flight against a fair window of 10");
    ep.send(seg(1000));
    assert_eq!(drain(&mut ep, us(50)), vec![], "R = 12 segments, all in flight");
    // Slow start: each ACK grows F and R by one segment; R − F stays 2
    // segments until it is within 1 % of F, i.e. F ≥ 200.
    let mut n = 0;
    while ep.rude() {
        n += 1;
        recv(&mut ep, us(100 + n), ack(seg(n)));
        let out = drain(&mut ep, us(100 + n));
        assert!(out.iter().all(|&(_, len)| len == MSS));
        assert!(n < 500);
    }
    assert!(ep.cwnd() >= seg(200), "converged at cwnd {}", ep.cwnd());
}
