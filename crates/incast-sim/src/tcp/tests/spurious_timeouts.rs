//! Spurious retransmission timeouts: F-RTO (RFC 5682) and Eifel (RFC 3522)
//! on scripted traces, and the undo of the window reduction.

use super::*;

fn cfg_frto() -> TcpConfig {
    TcpConfig { spurious_rto: SpuriousRto::Frto, ..cfg() }
}

/// 20 segments written, 10 sent at t = 0, then silence until the timer fires
/// (a delay spike, or a lost window); the timeout retransmits segment 0.
fn timed_out(cfg: &TcpConfig) -> (Endpoint, SimTime) {
    let mut ep = with_flight(cfg, seg(20), 10);
    let t = expire(&mut ep);
    assert_eq!(drain(&mut ep, t.snapshot.time), vec![(seg(0), MSS)]);
    (ep, t.snapshot.time)
}

/// RFC 5682 §2.1: the first ACK covers the retransmitted segment, so two new
/// segments go out instead of retransmissions; the next ACK acknowledges
/// segments that were never retransmitted: the timeout was spurious, cwnd and
/// ssthresh return to their values before it, and sending resumes at SND.MAX.
#[test]
fn rfc5682_ack_of_unretransmitted_data_is_spurious_and_undone() {
    let (mut ep, t) = timed_out(&cfg_frto());
    assert_eq!(ep.cwnd(), seg(1));
    let t1 = t + SimDuration::from_micros(10);
    assert!(!ep.on_segment(t1, &ack(seg(1))));
    assert_eq!(drain(&mut ep, t1), vec![(seg(10), MSS), (seg(11), MSS)], "step 2b: new data, not segment 1");
    let t2 = t1 + SimDuration::from_micros(10);
    assert!(ep.on_segment(t2, &ack(seg(6))), "step 3b: spurious");
    assert_eq!(ep.cwnd(), seg(11), "undo: the window before the timeout, grown by this ACK in slow start");
    assert_eq!(ep.ssthresh(), u64::MAX);
    assert_eq!(ep.stats().spurious_timeouts, 1);
    assert_eq!(drain(&mut ep, t2)[0], (seg(12), MSS), "new data from SND.MAX, no go-back-N");
}

/// RFC 5682 §2.1 step 3a: after the two new segments a duplicate ACK shows
/// real loss: cwnd ≤ 3·SMSS and go-back-N from SND.UNA; nothing is undone.
#[test]
fn rfc5682_duplicate_ack_after_new_data_keeps_the_timeout() {
    let (mut ep, t) = timed_out(&cfg_frto());
    let t1 = t + SimDuration::from_micros(10);
    recv(&mut ep, t1, ack(seg(1)));
    drain(&mut ep, t1);
    let t2 = t1 + SimDuration::from_micros(10);
    assert!(!ep.on_segment(t2, &ack(seg(1))));
    assert!(ep.cwnd() <= seg(3));
    assert_eq!(drain(&mut ep, t2)[0], (seg(1), MSS), "conventional recovery resends segment 1");
    assert_eq!(ep.stats().spurious_timeouts, 0);
}

/// Without detection the same trace is a plain timeout: the ACK of segment 0
/// grows cwnd to 2 and go-back-N resends segments 1 and 2.
#[test]
fn without_detection_the_same_trace_goes_back_n() {
    let (mut ep, t) = timed_out(&cfg());
    let t1 = t + SimDuration::from_micros(10);
    assert!(!ep.on_segment(t1, &ack(seg(1))));
    assert_eq!(drain(&mut ep, t1), vec![(seg(1), MSS), (seg(2), MSS)]);
}

/// RFC 3522 §2: with timestamps, the first ACK of new data after the
/// retransmission echoes the original's TSval (0 ms), older than the
/// retransmission's (10 ms): spurious, undone at once.
#[test]
fn rfc3522_echo_of_the_original_transmission_is_spurious() {
    let cfg = TcpConfig { timestamps: true, spurious_rto: SpuriousRto::Eifel, ..cfg() };
    let mss = cfg.segment_payload() as u64;
    let mut ep = Endpoint::new(&cfg, SimTime::ZERO, Some(SimDuration::from_micros(100)));
    ep.send(20 * mss);
    let first = drain(&mut ep, SimTime::ZERO);
    assert_eq!(first.len(), 10);
    let t = expire(&mut ep);
    let resent = expect_tx(&mut ep, t.snapshot.time);
    assert_eq!((resent.seq, resent.ts().unwrap().val), (0, 10));
    let mut late = ack(5 * mss);
    late.set_ts(Some(Timestamps { val: 1, ecr: 0 }));
    assert!(ep.on_segment(t.snapshot.time + SimDuration::from_micros(50), &late));
    assert_eq!(ep.cwnd(), 11 * mss, "the window before the timeout, grown by this ACK in slow start");

    // The same ACK echoing the retransmission's TSval is no evidence.
    let mut ep = Endpoint::new(&cfg, SimTime::ZERO, Some(SimDuration::from_micros(100)));
    ep.send(20 * mss);
    drain(&mut ep, SimTime::ZERO);
    let t = expire(&mut ep);
    expect_tx(&mut ep, t.snapshot.time);
    let mut own = ack(mss);
    own.set_ts(Some(Timestamps { val: 1, ecr: 10 }));
    assert!(!ep.on_segment(t.snapshot.time + SimDuration::from_micros(50), &own));
    assert_eq!(ep.stats().spurious_timeouts, 0);
}
