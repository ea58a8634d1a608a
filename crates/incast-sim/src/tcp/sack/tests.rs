use super::*;

const MSS: u64 = 1000;

fn board() -> Scoreboard {
    Scoreboard::new(MSS as u32, 3, false)
}

fn seg(i: u64) -> (u64, u64) {
    (i * MSS, (i + 1) * MSS)
}

/// RFC 6675 §4 `Update`: blocks merge, and a cumulative ACK forgets what it covers.
#[test]
fn rfc6675_4_update_merges_and_prunes() {
    let mut b = board();
    assert!(b.update(0, [seg(2)].into_iter()));
    assert!(b.update(0, [seg(3), seg(5)].into_iter()));
    assert!(!b.update(0, [seg(2)].into_iter()), "nothing new");
    assert_eq!(b.ranges(), &[(2000, 4000), (5000, 6000)]);
    b.update(3000, std::iter::empty());
    assert_eq!(b.ranges(), &[(3000, 4000), (5000, 6000)]);
}

/// ns-3's `MarkHeadAsLost`: at a fast retransmit a head not yet lost
/// leaves the pipe, resent or not; a head `IsLost` already calls lost
/// stays as `pipe` counts it (out, or in once resent).
#[test]
fn pipe_with_the_head_lost_leaves_the_head_out() {
    let mut b = board();
    b.update(0, [seg(1), seg(2)].into_iter());
    assert_eq!((b.pipe(0, 6 * MSS), b.pipe_head_lost(0, 6 * MSS, MSS)), (4 * MSS, 3 * MSS));
    let mut resent = b.clone();
    assert_eq!(resent.enter_recovery(0, 6 * MSS), (0, MSS));
    assert_eq!((resent.pipe(0, 6 * MSS), resent.pipe_head_lost(0, 6 * MSS, MSS)), (4 * MSS, 3 * MSS));
    b.update(0, [seg(3)].into_iter());
    assert_eq!((b.pipe(0, 6 * MSS), b.pipe_head_lost(0, 6 * MSS, MSS)), (2 * MSS, 2 * MSS));
    b.enter_recovery(0, 6 * MSS);
    assert_eq!((b.pipe(0, 6 * MSS), b.pipe_head_lost(0, 6 * MSS, MSS)), (3 * MSS, 3 * MSS));
}

/// RFC 6675 §4 `IsLost`: lost once DupThresh segments are SACKed above it.
#[test]
fn rfc6675_4_is_lost_after_dupthresh_sacked_segments_above() {
    let mut b = board();
    b.update(0, [seg(1), seg(2)].into_iter());
    assert!(!b.is_lost(0), "two SACKed segments above: not yet");
    b.update(0, [seg(4)].into_iter());
    assert!(b.is_lost(0));
    assert!(!b.is_lost(3000), "only one SACKed segment above segment 3");
}

/// RFC 6675 §4 `IsLost`: small segments count by bytes: more than
/// (DupThresh − 1)·SMSS SACKed bytes above.
#[test]
fn rfc6675_4_is_lost_counts_bytes_beyond_two_smss() {
    let mut b = board();
    b.update(0, [(1000, 3000)].into_iter());
    assert!(!b.is_lost(0), "exactly 2·SMSS bytes: not more than");
    b.update(0, [(3000, 3001)].into_iter());
    assert!(b.is_lost(0));
}

/// RFC 6675 §4 `SetPipe`: a window of 10 with segment 0 lost and 1..=9
/// SACKed has nothing in the pipe; the retransmission of 0 puts one
/// segment back.
#[test]
fn rfc6675_4_set_pipe() {
    let mut b = board();
    b.update(0, [(1000, 10_000)].into_iter());
    assert_eq!(b.pipe(0, 10_000), 0);
    assert_eq!(b.enter_recovery(0, 10_000), (0, 1000));
    assert_eq!(b.pipe(0, 10_000), 1000);
    assert_eq!(b.next_seg(0, 10_000, 10_000, true), None, "nothing else to send");
}

/// Linux tcp_rack_mark_skb_lost: a retransmission RACK finds lost again
/// leaves the pipe (`retrans_out`) and is the next segment sent; once it
/// is resent, it is back in the pipe.
#[test]
fn a_retransmission_lost_again_leaves_the_pipe_and_goes_first() {
    let mut b = board();
    b.update(0, [(1000, 10_000)].into_iter());
    b.enter_recovery(0, 10_000);
    b.set_rack_relost(Some((0, 1000)));
    assert_eq!(b.pipe(0, 10_000), 0);
    assert_eq!(b.next_seg(0, 10_000, 12_000, true), Some((0, 1000, NextSegRule::Lost)), "before new data");
    b.on_sent(1000, NextSegRule::Lost);
    assert_eq!(b.pipe(0, 10_000), 1000);
    assert_eq!(b.next_seg(0, 10_000, 12_000, true), Some((10_000, 1000, NextSegRule::New)));
}

/// RFC 6675 §4 `NextSeg`: lost holes first, lowest first; then new data;
/// then unSACKed holes not yet lost; then one rescue retransmission.
/// Linux (`sack_recovery = "linux"`) stops after the new data: segment 5
/// is not marked lost, so `tcp_xmit_retransmit_queue` skips it.
#[test]
fn rfc6675_4_next_seg_rules_in_order() {
    let lost_then_new = vec![(2000, NextSegRule::Lost), (10_000, NextSegRule::New), (11_000, NextSegRule::New)];
    // Segment 5 has one SACKed segment above it: not lost, so rule (3) sends it after the new data.
    assert_eq!(next_segs(board()), [lost_then_new.clone(), vec![(5000, NextSegRule::Unsacked)]].concat());
    assert_eq!(next_segs(board().with_recovery(SackRecovery::Linux)), lost_then_new);
}

/// What `NextSeg` sends in [`rfc6675_4_next_seg_rules_in_order`]'s recovery, in order.
fn next_segs(mut b: Scoreboard) -> Vec<(u64, NextSegRule)> {
    // Sent 0..10; 0, 2 and 5 lost, 1, 3, 4 and 6 SACKed, 7..=9 in flight; 2 more to write.
    b.update(0, [(1000, 2000), (3000, 5000), (6000, 7000)].into_iter());
    assert_eq!(b.enter_recovery(0, 10_000), (0, 1000), "step 4.3: HighACK's segment first");
    let mut high_data = 10_000;
    let mut sent = vec![];
    while let Some((s, len, rule)) = b.next_seg(0, high_data, 12_000, true) {
        high_data = high_data.max(s + len);
        b.on_sent(s + len, rule);
        sent.push((s, rule));
    }
    sent
}

/// DEVIATION (Linux "lost retransmit", tcp_sacktag_write_queue): segment 0
/// is retransmitted when HighData is 10; once a SACK covers segment 10,
/// sent after that retransmission, while segment 0 is still missing, the
/// retransmission was lost: HighRxt falls back and NextSeg resends it.
/// RFC 6675 alone (the switch off) never sends it twice in one recovery.
#[test]
fn a_retransmission_lost_again_is_resent_once_later_data_is_sacked() {
    for (on, expected) in [(true, Some((0, 1000, NextSegRule::Lost))), (false, None)] {
        let mut b = Scoreboard::new(MSS as u32, 3, on);
        b.update(0, [(1000, 4000)].into_iter());
        assert_eq!(b.enter_recovery(0, 10_000), (0, 1000));
        b.on_sent(1000, NextSegRule::Lost);
        // Segment 10 (new data after the retransmission) is SACKed; 0 is not.
        b.update(0, [(1000, 4000), (10_000, 11_000)].into_iter());
        let next = b.next_seg(0, 11_000, 11_000, false).filter(|&(s, _, _)| s == 0);
        assert_eq!(next, expected, "lost_retransmit = {on}");
    }
}

/// RFC 6675 §4 `NextSeg` rule (4): with every hole resent and no new data,
/// one rescue retransmission of the highest unSACKed segment, once.
/// Linux and ns-3 have none: the segment stays on its way.
#[test]
fn rfc6675_4_one_rescue_retransmission() {
    for rule in [SackRecovery::Rfc6675, SackRecovery::Linux, SackRecovery::Ns3] {
        let mut b = board().with_recovery(rule);
        b.update(0, [(1000, 4000)].into_iter());
        assert_eq!(b.enter_recovery(0, 5000), (0, 1000));
        assert_eq!(b.next_seg(0, 5000, 5000, true), None, "RescueRxt is the first retransmission's end");
        // HighACK advances past RescueRxt; segment 4 (above the SACKs) is outstanding.
        b.update(4000, std::iter::empty());
        let Some((s, len, next)) = b.next_seg(4000, 5000, 5000, true) else {
            // Neither rule (4) in Linux nor ns-3's NextSeg ("we choose to not respect the SHOULD").
            assert_ne!(rule, SackRecovery::Rfc6675);
            continue;
        };
        assert_eq!((s, len, next, rule), (4000, 1000, NextSegRule::Rescue, SackRecovery::Rfc6675));
        b.on_sent(s + len, next);
        assert_eq!(b.next_seg(4000, 5000, 5000, true), None);
    }
}

/// RFC 6675 §5 steps 1–4: the third duplicate ACK starts recovery; so
/// does IsLost(HighACK) before it; not again until RecoveryPoint after a timeout.
#[test]
fn rfc6675_5_entry_and_timeout_guard() {
    let mut b = board();
    assert!(!b.on_dup_ack(0));
    assert!(!b.on_dup_ack(0));
    assert!(b.on_dup_ack(0));

    let mut b = board();
    b.update(0, [(1000, 4000)].into_iter());
    assert!(b.on_dup_ack(0), "three segments SACKed above HighACK on the first duplicate ACK");

    let mut b = board();
    b.on_timeout(10_000);
    for _ in 0..5 {
        assert!(!b.on_dup_ack(2000), "RFC 6675 (5.1): no new recovery below RecoveryPoint");
    }
    b.on_cumulative_ack(10_000);
    b.on_dup_ack(10_000);
    b.on_dup_ack(10_000);
    assert!(b.on_dup_ack(10_000));
}

/// RFC 6675 §5 step A: recovery ends on the cumulative ACK of RecoveryPoint.
#[test]
fn rfc6675_5_a_recovery_ends_at_recovery_point() {
    let mut b = board();
    b.enter_recovery(0, 10_000);
    assert!(!b.on_cumulative_ack(5000));
    assert!(b.in_recovery());
    assert!(b.on_cumulative_ack(10_000));
    assert!(!b.in_recovery());
}

/// A window of ten segments that lost 0-4 and had 5-9 SACKed, as ns-2.35's
/// `Sack1` sees it once its third duplicate ACK started recovery.
fn ns2_half_window_lost() -> Scoreboard {
    let mut b = board().with_recovery(SackRecovery::Ns2);
    for i in 5..10 {
        b.on_ack();
        assert!(b.update(0, [seg(i)].into_iter()));
        if b.on_dup_ack(0) {
            assert_eq!(b.enter_recovery(0, 10 * MSS), (0, MSS));
        }
    }
    b
}

/// ns-2.35 `Sack1TcpAgent::dupack_action` and `recv`: `pipe_` starts at
/// the outstanding segments less three, loses one per further ACK, and
/// keeps the holes: with cwnd at 5 of 10 segments and five lost, it
/// cannot send, where RFC 6675's `SetPipe` leaves the lost holes out.
#[test]
fn ns2_sack1_pipe_keeps_the_holes() {
    let mut b = ns2_half_window_lost();
    assert!(b.in_recovery());
    assert!(!b.may_send(5 * MSS, 0, 10 * MSS), "pipe_ = 10 - 3 - 2 = 5, not below cwnd_ 5");
    assert!(b.may_send(6 * MSS, 0, 10 * MSS));
    let mut rfc = board();
    for i in 5..10 {
        rfc.update(0, [seg(i)].into_iter());
        if rfc.on_dup_ack(0) {
            rfc.enter_recovery(0, 10 * MSS);
        }
    }
    assert!(rfc.may_send(5 * MSS, 0, 10 * MSS), "RFC 6675: pipe 1 (the retransmission)");
    // The retransmission of segment 0 comes back as a partial ACK: "--pipe_" twice.
    b.on_ack();
    b.update(MSS, [seg(5)].into_iter());
    assert!(!b.on_cumulative_ack(MSS));
    assert!(b.may_send(5 * MSS, MSS, 10 * MSS), "pipe_ 3");
}

/// ns-2.35 `ScoreBoardRQ::GetNextRetran`: every hole below the highest SACK
/// goes, in order and once, with no `IsLost` test and no rescue.
#[test]
fn ns2_sack1_resends_every_hole_below_the_highest_sack_in_order() {
    let mut b = ns2_half_window_lost();
    let mut sent = vec![];
    while let Some((seq, len, rule)) = b.next_seg(0, 10 * MSS, 10 * MSS, false) {
        b.on_sent(seq + len, rule);
        sent.push(seq / MSS);
    }
    assert_eq!(sent, [1, 2, 3, 4], "segment 0 went at the third duplicate ACK");
    let mut one = board().with_recovery(SackRecovery::Ns2);
    one.update(0, [seg(1)].into_iter());
    assert!(!one.is_lost(0), "one SACKed segment above: RFC 6675 would not resend it");
    assert_eq!(one.next_seg(0, 2 * MSS, 2 * MSS, false), Some((0, MSS, NextSegRule::Unsacked)));
}

/// ns-2.35 `Sack1TcpAgent::timeout` and `recv`: a timeout clears the
/// scoreboard and no SACK block is read until a new cumulative ACK, which
/// clears it again outside recovery.
#[test]
fn ns2_sack1_timeout_clears_the_scoreboard_until_a_new_ack() {
    let mut b = ns2_half_window_lost();
    b.on_timeout(10 * MSS);
    assert!(b.is_empty() && !b.in_recovery());
    assert!(!b.update(0, [seg(6)].into_iter()), "timeout_: the block is not read");
    assert!(b.is_empty());
    assert!(!b.on_cumulative_ack(MSS));
    assert!(b.update(MSS, [seg(6)].into_iter()));
    assert!(!b.on_dup_ack(MSS), "no new recovery before an ACK passes the point of the timeout");
    b.on_cumulative_ack(2 * MSS);
    assert!(b.is_empty(), "ClearScoreBoard on every new ACK outside recovery");
}

/// ns-2.35 `Sack1TcpAgent::recv`: the ACK that ends a recovery sets
/// `recover_ = 0`, so a loss just above the old recovery point starts the
/// next recovery at its third duplicate ACK.
#[test]
fn ns2_sack1_recovers_again_right_after_a_recovery_ends() {
    let mut b = ns2_half_window_lost();
    assert!(b.on_cumulative_ack(10 * MSS), "the full ACK ends recovery");
    let starts: Vec<bool> = (11..14)
        .map(|i| {
            b.update(10 * MSS, [seg(i)].into_iter());
            b.on_dup_ack(10 * MSS)
        })
        .collect();
    assert_eq!(starts, [false, false, true], "segment 10 lost: its third duplicate ACK");
}

/// Linux `tcp_mark_skb_lost` adds each segment to `tp->lost` once: the
/// lost marks count what they newly take in, not what they held before,
/// nor what a timeout (which counts its outstanding data itself) already
/// called lost.
#[test]
fn take_newly_lost_counts_each_lost_octet_once() {
    let mut b = board();
    b.update(0, [seg(2), seg(3)].into_iter());
    assert_eq!(b.take_newly_lost(0), 0, "two SACKed segments above: nothing lost yet");
    b.update(0, [seg(4)].into_iter());
    assert_eq!(b.take_newly_lost(0), 2 * MSS, "segments 0 and 1");
    assert_eq!(b.take_newly_lost(0), 0, "the same marks again");
    b.update(0, [seg(6), seg(7), seg(8)].into_iter());
    assert_eq!(b.take_newly_lost(0), MSS, "segment 5; segments 0 and 1 are counted");
    b.on_timeout(9 * MSS);
    b.enter_recovery_after_timeout(0, 12 * MSS, 9 * MSS);
    assert_eq!(b.take_newly_lost(0), 0, "below the timeout's HighData the timeout counted it");
}
