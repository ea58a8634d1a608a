//! Receiver ACK-policy traces: delayed ACK, immediate ACKs, piggybacking.

use super::*;

fn receiver(cfg: &TcpConfig) -> Endpoint {
    Endpoint::new(cfg, SimTime::ZERO, Some(SimDuration::from_micros(100)))
}

/// RFC 5681 (4.2): a lone in-order segment waits for the 40 ms delayed-ACK
/// timer, armed at its arrival.
#[test]
fn rfc5681_4_2_lone_segment_waits_for_delayed_ack_timer() {
    let mut ep = receiver(&cfg_delack());
    recv(&mut ep, ms(1), data(0, MSS));
    expect_nothing(&mut ep, ms(1));
    assert_eq!(ep.poll_timeout(), Some(ms(41)));
    ep.on_timer(SimTime(ms(41).as_ps() - 1));
    expect_nothing(&mut ep, ms(41));
    ep.on_timer(ms(41));
    expect_ack(&mut ep, ms(41), seg(1));
    expect_nothing(&mut ep, ms(41));
    assert_eq!(ep.poll_timeout(), None);
    let st = ep.stats();
    assert_eq!((st.delayed_ack_timeouts, st.acks_sent, st.segments_sent()), (1, 1, 1));
}

/// RFC 1122 (4.2.3.2): the second full-sized segment is ACKed at once and
/// the pending timer is cancelled.
#[test]
fn rfc1122_4_2_3_2_second_full_segment_acked_at_once() {
    let mut ep = receiver(&cfg_delack());
    recv(&mut ep, us(0), data(seg(0), MSS));
    expect_nothing(&mut ep, us(0));
    recv(&mut ep, us(12), data(seg(1), MSS));
    expect_ack(&mut ep, us(12), seg(2));
    assert_eq!(ep.poll_timeout(), None);
    // The third waits again; the fourth is ACKed at once.
    recv(&mut ep, us(24), data(seg(2), MSS));
    expect_nothing(&mut ep, us(24));
    recv(&mut ep, us(36), data(seg(3), MSS));
    expect_ack(&mut ep, us(36), seg(4));
    assert_eq!(ep.stats().delayed_ack_timeouts, 0);
}

/// RFC 5681 (4.2): an out-of-order segment draws an immediate duplicate ACK.
#[test]
fn rfc5681_4_2_out_of_order_segment_acked_at_once() {
    let mut ep = receiver(&cfg_delack());
    recv(&mut ep, us(0), data(seg(0), MSS));
    expect_nothing(&mut ep, us(0));
    recv(&mut ep, us(24), data(seg(2), MSS));
    expect_ack(&mut ep, us(24), seg(1));
    recv(&mut ep, us(36), data(seg(3), MSS));
    expect_ack(&mut ep, us(36), seg(1));
    assert_eq!(ep.delivered(), seg(1));
}

/// RFC 5681 (4.2): a segment filling all or part of a gap is ACKed at once,
/// even when less than one MSS is unacknowledged.
#[test]
fn rfc5681_4_2_gap_fill_acked_at_once() {
    let mut ep = receiver(&cfg_delack());
    recv(&mut ep, us(0), data(seg(1), MSS));
    expect_ack(&mut ep, us(0), 0);
    recv(&mut ep, us(10), data(0, 500));
    expect_ack(&mut ep, us(10), 500);
    recv(&mut ep, us(20), data(500, 500));
    expect_ack(&mut ep, us(20), seg(2));
    assert_eq!(ep.delivered(), seg(2));
    assert_eq!(ep.poll_timeout(), None);
}

/// RFC 793 (3.9): a duplicate segment draws an immediate ACK and is not
/// delivered twice.
#[test]
fn rfc793_3_9_duplicate_segment_acked_at_once() {
    let mut ep = receiver(&cfg_delack());
    recv(&mut ep, us(0), data(seg(0), MSS));
    recv(&mut ep, us(12), data(seg(1), MSS));
    expect_ack(&mut ep, us(12), seg(2));
    recv(&mut ep, us(24), data(seg(0), MSS));
    expect_ack(&mut ep, us(24), seg(2));
    assert_eq!(ep.delivered(), seg(2));
}

/// CMU09 §5: with delayed ACK off, every data segment is ACKed at once.
#[test]
fn off_mode_acks_every_segment() {
    let mut ep = receiver(&cfg());
    for i in 1..=3 {
        recv(&mut ep, us(i), data(100 * (i - 1), 100));
        expect_ack(&mut ep, us(i), 100 * i);
    }
    assert_eq!(ep.poll_timeout(), None);
    assert_eq!(ep.stats().acks_sent, 3);
}

/// Sending data piggybacks the owed ACK and cancels the delayed-ACK timer
/// (the server answering a client's request).
#[test]
fn piggybacked_ack_cancels_delayed_ack_timer() {
    let mut ep = receiver(&cfg_delack());
    recv(&mut ep, us(0), data(0, 100));
    expect_nothing(&mut ep, us(0));
    assert_eq!(ep.poll_timeout(), Some(ms(40)));
    ep.send(seg(2));
    let first = expect_data(&mut ep, us(5), seg(0), MSS);
    assert_eq!(first.ack, 100);
    let last = expect_data(&mut ep, us(5), seg(1), MSS);
    assert!(last.has(flags::PSH), "the tail of the buffer is pushed");
    assert!(!first.has(flags::PSH));
    expect_nothing(&mut ep, us(5));
    // Only the retransmission timer remains.
    assert_eq!(ep.poll_timeout(), Some(us(5) + SimDuration::from_millis(10)));
    ep.on_timer(ms(40));
    assert_eq!(ep.stats().delayed_ack_timeouts, 0);
    assert_eq!(ep.stats().acks_sent, 0);
}

/// A pure ACK carries SND.NXT as its sequence number.
#[test]
fn pure_ack_carries_snd_nxt() {
    let mut ep = with_flight(&cfg(), seg(2), 2);
    recv(&mut ep, us(10), data(0, 100));
    let s = expect_tx(&mut ep, us(10));
    assert_eq!((s.seq, s.ack, s.len), (seg(2), 100, 0));
}
