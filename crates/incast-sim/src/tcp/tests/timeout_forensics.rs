//! Timeout forensics traces: which FAST08 §5.1 / GIP §III class each
//! scripted loss pattern's timeout falls in.

use super::*;
use crate::tcp::forensics::{GipClass, TimeoutClass};

/// FAST08 §5.1 / GIP §III: a whole 10-segment response is lost, no ACK comes
/// back (DART 0): a full window loss and an FLoss-TO, recorded with the state
/// before the timeout. The next timeout of the same segment is a lost retransmit.
#[test]
fn fast08_5_1_gip_iii_whole_window_lost_is_full_window_loss_and_floss() {
    let mut ep = with_flight(&cfg(), seg(10), 10);
    let t = expire(&mut ep);
    assert_eq!((t.class, t.gip_class), (TimeoutClass::FullWindowLoss, GipClass::Floss));
    let s = t.snapshot;
    assert_eq!((s.backoff, s.cwnd, s.flight, s.dart), (0, seg(10), seg(10), 0));
    assert_eq!(ep.cwnd(), seg(1), "the timeout acted after the snapshot");
    assert_eq!(drain(&mut ep, t.snapshot.time), vec![(seg(0), MSS)]);

    let again = expire(&mut ep);
    assert_eq!(again.snapshot.backoff, 1);
    assert_eq!(again.snapshot.rto, s.rto.saturating_mul(2));
    assert_eq!(again.class, TimeoutClass::LostRetransmit);
    assert_eq!(again.gip_class, GipClass::Floss);
    let st = ep.stats();
    assert_eq!((st.timeouts, st.timeout_classes.full_window_loss, st.timeout_classes.lost_retransmit), (2, 1, 1));
    assert_eq!(st.gip_timeout_classes.floss, 2);
}

/// FAST08 §5.1 / GIP §III: the last two segments of a response are lost; the
/// one after the hole draws a single duplicate ACK, too few for fast
/// retransmit: a last packet loss and a LAck-TO.
#[test]
fn fast08_5_1_gip_iii_tail_lost_is_last_packet_loss_and_lack() {
    let mut ep = with_flight(&cfg(), seg(10), 10);
    recv(&mut ep, us(100), ack(seg(8)));
    recv(&mut ep, us(110), ack(seg(8)));
    expect_nothing(&mut ep, us(110));
    let t = expire(&mut ep);
    assert_eq!((t.class, t.gip_class), (TimeoutClass::LastPacketLoss, GipClass::Lack));
    assert_eq!((t.snapshot.dart, t.snapshot.flight, t.snapshot.backoff), (1, seg(2), 0));
    assert_eq!(t.snapshot.segments_beyond, 1);
}

/// FAST08 §5.1: segment 1 is fast-retransmitted on the third duplicate ACK
/// and that retransmission is lost too; the timer expires with DART 3: a lost
/// retransmit (GIP §III: neither FLoss nor LAck, data was left unsent).
#[test]
fn fast08_5_1_lost_fast_retransmission_is_lost_retransmit() {
    let mut ep = with_flight(&cfg(), seg(20), 10);
    recv(&mut ep, us(100), ack(seg(1)));
    assert_eq!(drain(&mut ep, us(100)), vec![(seg(10), MSS), (seg(11), MSS)]);
    for t in [110, 120, 130] {
        recv(&mut ep, us(t), ack(seg(1)));
    }
    assert_eq!(drain(&mut ep, us(130)), vec![(seg(1), MSS)]);
    assert_eq!(ep.stats().fast_retransmits, 1);
    let t = expire(&mut ep);
    assert_eq!((t.class, t.gip_class), (TimeoutClass::LostRetransmit, GipClass::Other));
    assert_eq!((t.snapshot.dart, t.snapshot.backoff), (3, 0));
}

/// FAST08 §5.1: an ACK of new data resets DART and the back-off count.
#[test]
fn fast08_5_1_new_ack_resets_dart_and_backoff() {
    let mut ep = with_flight(&cfg(), seg(20), 10);
    recv(&mut ep, us(100), ack(seg(1)));
    recv(&mut ep, us(110), ack(seg(1)));
    let first = expire(&mut ep);
    assert_eq!(first.snapshot.dart, 1);
    let now = first.snapshot.time;
    assert_eq!(drain(&mut ep, now), vec![(seg(1), MSS)]);
    recv(&mut ep, now + SimDuration::from_micros(100), ack(seg(2)));
    drain(&mut ep, now + SimDuration::from_micros(100));
    let t = expire(&mut ep);
    assert_eq!((t.snapshot.dart, t.snapshot.backoff), (0, 0));
    assert_eq!(t.gip_class, GipClass::Other, "part of the write was acknowledged");
}
