//! RACK-TLP (RFC 8985): time-based loss detection and the tail loss probe, with SACK.
//!
//! **Models:** RACK (§6.2): the send time of the most recently sent segment
//! known to be delivered (`RACK.xmit_ts`, from the newest cumulatively
//! acknowledged segment, the highest SACKed one and those in the ACK's first
//! SACK block, which holds the segment that triggered it, RFC 2018 §4) and
//! the RTT it gives (`RACK.rtt`); an unacknowledged segment last sent before
//! it (earlier, or at the same instant and earlier in sequence:
//! `RACK_sent_after`, which the bursts here make matter) is lost once
//! `RACK.rtt + RACK.reo_wnd` has passed since it was sent. `RACK.reo_wnd` is
//! `RACK.min_RTT / 4`, and 0 in recovery or once `DupThresh` segments are
//! SACKed (§6.2 step 4 with no reordering seen, as Linux's
//! `tcp_rack_reo_wnd`). The sender turns the verdict into a lost boundary
//! for the RFC 6675 scoreboard (`tcp::sack`), so a probe's SACK can start
//! recovery and `NextSeg` resends what RACK found lost. An ACK that moves
//! `RACK.xmit_ts` while an unSACKed segment sent before it is not yet that
//! old arms the reordering timer (§6.2 step 6, §6.3) for when the last such
//! segment will be, plus Linux's `TCP_TIMEOUT_MIN` of two clock ticks (none
//! on an exact clock; `tcp_rack_mark_lost`); at its expiry RACK judges the
//! segments again, a lost head starts recovery, and the retransmission timer
//! runs for what is left of the head's RTO (`tcp_rack_reo_timeout`,
//! `tcp_rearm_rto`). As in Linux the reordering timer holds the socket's one
//! timer: while it is armed neither the probe nor the RTO fires, an ACK of
//! new data that does not arm it, a probe or a restart of the retransmission
//! timer replaces it.
//! TLP (§7) as Linux's `tcp_schedule_loss_probe` and `tcp_send_loss_probe`
//! run it: outside recovery and loss, with data in flight, a probe timeout
//! of 2·SRTT plus 2 ms (`TCP_TIMEOUT_MIN_US`), or plus RTO_min with one
//! segment in flight (a delayed ACK may hold it), at the retransmission
//! timer's expiry if that comes first (the probe then goes instead of the
//! timeout), restarted after each burst and each ACK of new data. When it
//! fires, one segment goes out: new data if the peer window allows (whatever
//! cwnd says), else the highest outstanding segment again, and the
//! retransmission timer restarts a whole RTO later (§7.3, `tcp_rearm_rto`);
//! only one probe is outstanding (`TLP.end_seq`). An ACK beyond the probe
//! ends the episode; when the probe was a retransmission and no recovery
//! started, it repaired a loss, and the window is cut as for one (§7.4.2:
//! "invoke a congestion control response").
//! A retransmitted segment sets `RACK.xmit_ts` only when at least
//! `RACK.min_RTT` passed since it was resent (§6.2 step 2; no timestamps are
//! consulted). Retransmissions are judged by when they were last sent, as
//! originals are: in recovery, a resent segment that RACK's clock finds lost
//! again leaves `pipe` and is resent first (Linux `tcp_rack_mark_skb_lost`,
//! counted as `TCPLostRetransmit`), the detection of lost retransmissions
//! that replaced the sequence-based one of `sack_lost_retransmit` in Linux
//! 4.4. In the loss state after a timeout the same test runs over what
//! go-back-N has resent, with a reordering window of 0, and a retransmission
//! found lost again starts recovery (Linux `tcp_fastretrans_alert`, case
//! `TCP_CA_Loss`: "Change state if cwnd is undone or retransmits are lost",
//! on to `tcp_enter_recovery`; `tcp::sack`).
//! **Deliberately different:** the reduction after a repaired loss is
//! immediate (cwnd = ssthresh), where Linux reaches it through CWR and PRR.
//! **Not modelled:** D-SACK-driven adaptation of `reo_wnd` (§6.2 step 4) and the undo of a
//! probe that proved spurious (there is no reordering here).

use super::sack::Scoreboard;
use super::sent_log::{SentLog, SentRecord};
use crate::time::{SimDuration, SimTime};

/// Linux `TCP_TIMEOUT_MIN_US`: what the probe timeout adds to 2·SRTT with
/// more than one segment in flight.
const PROBE_SLACK: SimDuration = SimDuration::from_millis(2);

/// RACK and TLP state of one sender.
#[derive(Clone, Copy, Debug, Default)]
pub struct RackTlp {
    /// `RACK.xmit_ts`.
    xmit_ts: Option<SimTime>,
    /// `RACK.end_seq`: where the segment sent at `xmit_ts` ends.
    end_seq: u64,
    /// `RACK.rtt`.
    rtt: SimDuration,
    /// `RACK.min_RTT`.
    min_rtt: Option<SimDuration>,
    /// `TLP.end_seq`: SND.MAX after the outstanding probe.
    probe_end: Option<u64>,
    /// The outstanding probe resent data (`TLP.is_retrans`).
    probe_retransmitted: bool,
    /// When the armed probe timer fires.
    probe_at: Option<SimTime>,
    /// The probe segment `(seq, len)` due now, sent whatever cwnd says.
    due: Option<(u64, u64)>,
    /// When the armed reordering timer fires (§6.3, `RACK.reo_timer`).
    reo_at: Option<SimTime>,
}

impl RackTlp {
    /// RACK (RFC 8985 §6.2) on an ACK of everything below `ack` whose first
    /// SACK block is `first_block` (or at the reordering timer's expiry, with
    /// `ack` SND.UNA and no block), reading the sender's log and `sb`, its
    /// scoreboard, with SND.UNA `snd_una`: note the newest transmission it shows
    /// delivered, then hand the scoreboard the boundary below which every
    /// unSACKed segment is lost, and, `recovering` below the offset it holds
    /// (HighRxt in recovery, go-back-N's point in the loss state after a
    /// timeout), the retransmissions lost again; then the reordering window
    /// is 0, as Linux's `tcp_rack_reo_wnd` makes it from `TCP_CA_Recovery`
    /// on. Returns
    /// how many retransmitted segments it found lost for the first time and,
    /// when the newest delivery moved, when the last unSACKed segment sent
    /// before it that is not lost yet will be (step 5's `timeout`).
    #[inline]
    #[expect(clippy::too_many_arguments, reason = "the sender's log, scoreboard and state, and the ACK's fields")]
    pub fn detect(
        &mut self,
        sb: &mut Scoreboard,
        log: &mut SentLog,
        snd_una: u64,
        now: SimTime,
        ack: u64,
        first_block: Option<(u64, u64)>,
        recovering: Option<u64>,
    ) -> (u64, Option<SimTime>) {
        let rack = self;
        // RFC 8985 (6.2 step 2): a retransmitted segment counts only when its
        // delivery cannot be the original's: "now - Segment.xmit_ts < RACK.min_RTT"
        // would be ambiguous.
        let plausible = |r: &SentRecord| !r.retransmitted || rack.unambiguous(r.sent_at, now);
        // The newest delivered: among what the cumulative ACK covers, and the
        // segment holding the top SACKed octet.
        let mut newest = None;
        for r in log.as_slice().iter().take_while(|r| r.end <= ack).filter(|r| plausible(r)) {
            newest = newest.max(Some((r.sent_at, r.end)));
        }
        if let Some(&(_, top)) = sb.ranges().last() {
            let i = log.as_slice().partition_point(|r| r.end < top);
            if let Some(r) = log.as_slice().get(i).filter(|r| plausible(r)) {
                newest = newest.max(Some((r.sent_at, r.end)));
            }
        }
        // RFC 2018 (4): "The first SACK block ... MUST specify the contiguous
        // block of data containing the segment which triggered this ACK": in
        // recovery often a retransmission, sent after everything above it.
        if let Some((start, end)) = first_block {
            let sent = log.as_slice();
            let first = sent.partition_point(|r| r.end <= start);
            let mut from = sent.get(first.wrapping_sub(1)).map_or(snd_una, |r| r.end);
            for r in &sent[first..] {
                if r.end > end {
                    break;
                }
                if from >= start && plausible(r) {
                    newest = newest.max(Some((r.sent_at, r.end)));
                }
                from = r.end;
            }
        }
        let advanced = newest.is_some_and(|(sent_at, end)| rack.on_delivered(sent_at, end, now));
        if sb.is_empty() {
            sb.set_rack_lost(0);
            sb.set_rack_relost(None);
            return (0, None);
        }
        let reo_wnd = rack.reo_wnd(recovering.is_some(), sb.dupthresh_boundary() > 0);
        let mut boundary = 0;
        for r in log.as_slice().iter().skip_while(|r| r.end <= ack).filter(|r| !r.retransmitted) {
            if !rack.is_lost(r.sent_at, r.end, now, reo_wnd) {
                break;
            }
            boundary = r.end;
        }
        sb.set_rack_lost(boundary);
        // Linux tcp_rack_mark_lost runs only "if (tp->rack.advanced)".
        let mut wait = None;
        if advanced {
            let mut start = ack;
            for r in log.as_slice().iter().skip_while(|r| r.end <= ack) {
                let s = std::mem::replace(&mut start, r.end).max(ack);
                match rack.lost_at(r.sent_at, r.end, reo_wnd) {
                    // Originals leave in sequence: none after this one was sent before it.
                    None if !r.retransmitted => break,
                    Some(at) if at > now && sb.sacked_in(s, r.end) < r.end - s => wait = wait.max(Some(at)),
                    _ => {}
                }
            }
        }
        // RFC 8985 (6.2 step 5) judges every segment by its latest
        // transmission, retransmissions too ("The advantage of RACK is it
        // applies to both original and retransmitted packet", Linux
        // tcp_recovery.c), in recovery and in the loss state alike
        // (`tcp_rack_detect_loss` skips only what is marked lost and not yet
        // resent): the lowest run of retransmitted, unSACKed segments that
        // RACK's clock finds lost again.
        let (mut relost, mut newly): (Option<(u64, u64)>, u64) = (None, 0);
        let resent_below = recovering.unwrap_or(0);
        if resent_below > ack {
            let mut start = ack;
            for r in log.iter_mut().skip_while(|r| r.end <= ack) {
                let s = std::mem::replace(&mut start, r.end).max(ack);
                if s >= resent_below {
                    break;
                }
                let lost_again = r.retransmitted
                    && sb.sacked_in(s, r.end) < r.end - s
                    && rack.is_lost(r.sent_at, r.end, now, reo_wnd);
                if lost_again && !r.lost_again {
                    r.lost_again = true;
                    newly += 1;
                }
                match (lost_again, &mut relost) {
                    (true, Some(run)) => run.1 = r.end,
                    (true, None) => relost = Some((s, r.end)),
                    (false, Some(_)) => break,
                    (false, None) => {}
                }
            }
        }
        sb.set_rack_relost(relost);
        (newly, wait)
    }

    /// Nothing delivered, no probe.
    pub fn new() -> Self {
        RackTlp::default()
    }

    /// The segment ending at `end`, last sent at `sent_at`, is known
    /// delivered at `now` (§6.2 step 2: only a segment sent after the latest
    /// one, by `RACK_sent_after`, moves `RACK.xmit_ts` and `RACK.end_seq`;
    /// the latest one reported again is not newly delivered, and leaves
    /// `RACK.rtt` as its first report set it).
    /// Returns true when it moved them (Linux `tp->rack.advanced`).
    #[inline]
    pub fn on_delivered(&mut self, sent_at: SimTime, end: u64, now: SimTime) -> bool {
        if self.xmit_ts.is_some_and(|t| (sent_at, end) <= (t, self.end_seq)) {
            return false;
        }
        self.xmit_ts = Some(sent_at);
        self.end_seq = end;
        self.rtt = now.since(sent_at);
        self.min_rtt = Some(self.min_rtt.map_or(self.rtt, |m| m.min(self.rtt)));
        true
    }

    /// True when a retransmission sent at `sent_at` and delivered by `now`
    /// gives an unambiguous RTT: at least `RACK.min_RTT` (§6.2 step 2).
    #[inline]
    pub fn unambiguous(&self, sent_at: SimTime, now: SimTime) -> bool {
        self.min_rtt.is_some_and(|m| now.since(sent_at) >= m)
    }

    /// `RACK.reo_wnd` (§6.2 step 4, no reordering seen): 0 `in_recovery` (or
    /// the loss state) or when `dupthresh_sacked`, else a quarter of the minimum RTT.
    #[inline]
    pub fn reo_wnd(&self, in_recovery: bool, dupthresh_sacked: bool) -> SimDuration {
        match self.min_rtt {
            Some(m) if !in_recovery && !dupthresh_sacked => SimDuration(m.as_ps() / 4),
            _ => SimDuration::ZERO,
        }
    }

    /// §6.2 step 5: an unacknowledged segment ending at `end`, last sent at
    /// `sent_at`, is lost at `now` with reordering window `reo_wnd`. It must
    /// have been sent before the latest delivered one: earlier, or at the same
    /// instant and earlier in sequence (RFC 8985 `RACK_sent_after`, Linux
    /// `tcp_skb_sent_after`); a burst leaves at one instant here, and the
    /// segments behind a delivered one in it are still on their way.
    #[inline]
    pub fn is_lost(&self, sent_at: SimTime, end: u64, now: SimTime, reo_wnd: SimDuration) -> bool {
        self.lost_at(sent_at, end, reo_wnd).is_some_and(|at| at <= now)
    }

    /// When the segment ending at `end`, last sent at `sent_at`, counts as
    /// lost if nothing is heard of it: `RACK.rtt + reo_wnd` after it was sent,
    /// for a segment sent before the latest delivered one (§6.2 step 5,
    /// `RACK_detect_loss`'s `remaining`); `None` for one sent after it.
    #[inline]
    pub fn lost_at(&self, sent_at: SimTime, end: u64, reo_wnd: SimDuration) -> Option<SimTime> {
        let before = self.xmit_ts.is_some_and(|t| sent_at < t || sent_at == t && end < self.end_seq);
        before.then(|| sent_at + self.rtt + reo_wnd)
    }

    /// Arm the reordering timer for `at`, or disarm it. Linux keeps the two
    /// in one timer slot: arming it disarms the probe.
    #[inline]
    pub fn arm_reo(&mut self, at: Option<SimTime>) {
        if at.is_some() {
            self.probe_at = None;
        }
        self.reo_at = at;
    }

    /// When the reordering timer fires, if armed.
    #[inline]
    pub fn reo_at(&self) -> Option<SimTime> {
        self.reo_at
    }

    /// The probe timeout (Linux `tcp_schedule_loss_probe`) for smoothed RTT
    /// `srtt` with `segments` in flight and the RTO floor `rto_min`.
    #[inline]
    pub fn pto(srtt: SimDuration, segments: u64, rto_min: SimDuration) -> SimDuration {
        // "Probe timeout is 2*rtt. Add minimum RTO to account for delayed ack
        // when there's one outstanding packet."
        srtt + srtt + if segments == 1 { rto_min } else { PROBE_SLACK }
    }

    /// True when no probe is outstanding, so one may be scheduled.
    #[inline]
    pub fn may_probe(&self) -> bool {
        self.probe_end.is_none()
    }

    /// Arm the probe timer for `at`, or disarm it. Arming it disarms the
    /// reordering timer (`tcp_schedule_loss_probe` resets the socket's one timer).
    #[inline]
    pub fn arm(&mut self, at: Option<SimTime>) {
        if at.is_some() {
            self.reo_at = None;
        }
        self.probe_at = at;
    }

    /// When the probe timer fires, if armed.
    #[inline]
    pub fn probe_at(&self) -> Option<SimTime> {
        self.probe_at
    }

    /// The probe `segment` is due, resending data when `retransmitted`;
    /// SND.MAX will be `snd_max` once it is sent.
    #[inline]
    pub fn on_probe_due(&mut self, segment: (u64, u64), snd_max: u64, retransmitted: bool) {
        self.due = Some(segment);
        self.probe_end = Some(snd_max);
        self.probe_retransmitted = retransmitted;
        self.probe_at = None;
    }

    /// The probe segment to send now, if one is due.
    #[inline]
    pub fn take_probe(&mut self) -> Option<(u64, u64)> {
        self.due.take()
    }

    /// An ACK of everything below `ack` arrived: true when it ends a probe
    /// episode in which the probe repaired a loss (§7.4.2), unless
    /// `recovering` (recovery took over the repair).
    #[inline]
    pub fn on_ack(&mut self, ack: u64, recovering: bool) -> bool {
        match self.probe_end {
            Some(end) if ack >= end => {
                self.probe_end = None;
                self.probe_retransmitted && !recovering
            }
            _ => false,
        }
    }

    /// A retransmission timeout: the probe episode is over.
    #[inline]
    pub fn on_timeout(&mut self) {
        self.probe_end = None;
        self.probe_at = None;
        self.due = None;
        self.reo_at = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> SimDuration {
        SimDuration::from_micros(n)
    }
    fn at(n: u64) -> SimTime {
        SimTime::ZERO + us(n)
    }

    /// RFC 8985 §6.2: a segment sent before the most recently delivered one is
    /// lost once RACK.rtt + reo_wnd has passed since it was sent.
    #[test]
    fn rfc8985_6_2_lost_after_rtt_plus_reo_wnd() {
        let mut r = RackTlp::new();
        r.on_delivered(at(100), 5_000, at(200)); // RACK.rtt = 100 us, min_RTT 100 us
        let reo = r.reo_wnd(false, false);
        assert_eq!(reo, us(25), "min_RTT / 4");
        assert!(!r.is_lost(at(90), 9_000, at(200), reo), "sent 110 us ago: not yet 125");
        assert!(r.is_lost(at(90), 9_000, at(215), reo));
        assert!(!r.is_lost(at(150), 1_000, at(1000), reo), "sent after RACK.xmit_ts: no evidence");
        assert_eq!(r.reo_wnd(true, false), SimDuration::ZERO, "in recovery");
        assert_eq!(r.reo_wnd(false, true), SimDuration::ZERO, "DupThresh SACKed");
    }

    /// RFC 8985 §6.2 step 2: an older delivery does not move RACK.xmit_ts back.
    #[test]
    fn rfc8985_6_2_xmit_ts_only_moves_forward() {
        let mut r = RackTlp::new();
        r.on_delivered(at(100), 5_000, at(200));
        r.on_delivered(at(50), 9_000, at(300));
        assert!(r.is_lost(at(100), 4_000, at(200), SimDuration::ZERO), "RACK.rtt is still 100 us");
        assert!(!r.is_lost(at(101), 4_000, at(10_000), SimDuration::ZERO), "RACK.xmit_ts is still 100 us");
    }

    /// RFC 8985 §6.2 step 2 acts on each segment "newly acknowledged": the
    /// highest SACKed segment, reported again by every later ACK, does not
    /// stretch RACK.rtt, so a segment sent before it still ages toward loss.
    #[test]
    fn rfc8985_6_2_a_delivery_reported_again_keeps_its_rtt() {
        let mut r = RackTlp::new();
        assert!(r.on_delivered(at(100), 5_000, at(200)));
        assert!(!r.on_delivered(at(100), 5_000, at(900)), "not newly delivered");
        assert!(r.is_lost(at(90), 4_000, at(215), SimDuration::ZERO), "RACK.rtt is still 100 us");
    }

    /// RFC 8985 §6.2 (`RACK_sent_after`): of segments sent at one instant, the
    /// later in sequence counts as sent after. A burst's segment behind the
    /// delivered one is not lost however long it takes; one ahead of it is.
    #[test]
    fn rfc8985_6_2_a_tie_in_send_time_goes_by_sequence() {
        let mut r = RackTlp::new();
        r.on_delivered(at(100), 4_000, at(200));
        assert!(r.is_lost(at(100), 3_000, at(200), SimDuration::ZERO), "ahead of it in the burst");
        assert!(!r.is_lost(at(100), 5_000, at(10_000), SimDuration::ZERO), "behind it in the burst");
        assert!(!r.is_lost(at(100), 4_000, at(10_000), SimDuration::ZERO), "the delivered one itself");
        r.on_delivered(at(100), 6_000, at(250));
        assert!(r.is_lost(at(100), 5_000, at(250), SimDuration::ZERO), "a later one of the burst delivered");
        r.on_delivered(at(100), 2_000, at(260));
        assert!(r.is_lost(at(100), 5_000, at(260), SimDuration::ZERO), "an earlier one does not move RACK.end_seq");
    }

    /// Linux holds the probe and the reordering timer in one slot: arming
    /// either disarms the other; disarming one leaves the other as it was.
    #[test]
    fn linux_probe_and_reordering_timer_share_one_slot() {
        let mut r = RackTlp::new();
        r.arm(Some(at(500)));
        r.arm_reo(Some(at(200)));
        assert_eq!((r.probe_at(), r.reo_at()), (None, Some(at(200))));
        r.arm(None);
        assert_eq!(r.reo_at(), Some(at(200)), "disarming the probe leaves the reordering timer");
        r.arm(Some(at(600)));
        assert_eq!((r.probe_at(), r.reo_at()), (Some(at(600)), None));
    }

    /// Linux tcp_schedule_loss_probe: 2·SRTT + 2 ms, or + RTO_min with one segment out.
    #[test]
    fn linux_probe_timeout() {
        assert_eq!(RackTlp::pto(us(100), 5, us(200_000)), us(2_200));
        assert_eq!(RackTlp::pto(us(100), 1, us(200_000)), us(200_200));
    }

    /// RFC 8985 §7.4.2: a retransmitted probe that is acknowledged while no
    /// recovery started repaired a loss; one probe at a time.
    #[test]
    fn rfc8985_7_4_a_repairing_probe_calls_for_a_response() {
        let mut r = RackTlp::new();
        r.on_probe_due((9_000, 1_000), 10_000, true);
        assert_eq!(r.take_probe(), Some((9_000, 1_000)));
        assert!(!r.may_probe());
        assert!(!r.on_ack(9_000, false), "not yet beyond the probe");
        assert!(r.on_ack(10_000, false));
        assert!(r.may_probe());
        r.on_probe_due((19_000, 1_000), 20_000, false);
        assert!(!r.on_ack(20_000, false), "a probe of new data repaired nothing");
    }
}
