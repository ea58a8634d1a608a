//! The retransmission timer's expiry (RFC 6298 §5.4-5.6, go-back-N, the
//! loss window of RFC 5681 §3.1 or its ns-2/ns-3 forms), the snapshot timeout
//! forensics classifies (FAST08 §5.1, GIP §III), and the spurious-timeout
//! detector's verdicts (F-RTO RFC 5682, Eifel RFC 3522, undo as Linux's
//! `tcp_undo_cwnd_reduction`), and the ground truth a timeout is judged by:
//! whether the network dropped every copy of the segment it resends.

use super::Sender;
use crate::tcp::cc::SsthreshRule;
use crate::tcp::clock::TcpClock;
use crate::tcp::forensics::{self, Timeout, TimeoutSnapshot};
use crate::tcp::spurious::Verdict;
use crate::tcp::{EndpointStats, Segment};
use crate::time::SimTime;

impl<const EXTRAS: bool, const PACED: bool> Sender<EXTRAS, PACED> {
    /// Fire the retransmission timer if due; returns the classified timeout
    /// when it expired with data outstanding.
    pub fn on_timer(&mut self, now: SimTime, clock: &TcpClock, stats: &mut EndpointStats) -> Option<Timeout> {
        if let Some(rack) = self.rack.as_mut() {
            // The reordering timer holds the socket's one timer while armed.
            if let Some(at) = rack.reo_at() {
                if at <= now {
                    rack.arm_reo(None);
                    self.on_reordering_timeout(now, clock, stats);
                }
                return None;
            }
            if rack.probe_at().is_some_and(|p| p <= now) {
                rack.arm(None);
                if self.may_probe() && self.send_probe() {
                    stats.loss_probes += 1;
                    // RFC 8985 (7.3) and Linux tcp_send_loss_probe's tcp_rearm_rto:
                    // after a probe the retransmission timer runs a whole RTO from now.
                    self.rtx_deadline = Some(self.timer.deadline(now, clock, self.rto.rto()));
                    return None;
                }
            }
        }
        match self.rtx_deadline {
            Some(d) if d <= now => self.rtx_deadline = None,
            _ => return None,
        }
        if self.snd_una == self.snd_max {
            return None;
        }
        stats.timeouts += 1;
        // FAST08 §5.1 / GIP §III: classify from the state BEFORE the timeout acts.
        let timeout = forensics::classify(self.snapshot(now));
        let cwnd = self.cc.cwnd();
        if EXTRAS {
            // F-RTO and Eifel are optional parts: without them, nothing to note.
            let rtx_end = self.snd_max.min(self.snd_una + self.mss);
            let ssthresh = self.cc.ssthresh();
            self.spurious.on_timeout(self.snd_una, rtx_end, self.snd_max, cwnd, ssthresh, self.backoff > 0);
        }
        let (basis, repeated) = match self.ssthresh_rule {
            SsthreshRule::Rfc5681 => (self.fair_flight(self.flight_size()), self.backoff > 0),
            // ns-3.44 TcpSocketBase::ReTxTimeout: "inFlightBeforeRto = BytesInFlight()".
            SsthreshRule::Ns3 => match self.sack.as_ref() {
                Some(sb) => {
                    let pipe = self.ns3_pipe(false).unwrap_or_else(|| sb.pipe(self.snd_una, self.snd_max));
                    (pipe, self.backoff > 0)
                }
                None => (self.fair_flight(self.flight_size()), self.backoff > 0),
            },
            SsthreshRule::Ns2 => {
                let half = self.cc.ns2_half(self.recovery.in_recovery(), self.peer_wnd);
                (self.cc.ns2_loss_basis(half), false)
            }
        };
        // Linux tcp_timeout_mark_lost: what was sent since the last timeout is lost.
        let lost = self.snd_nxt - self.snd_una;
        if let Some(rate) = self.rate.as_deref_mut() {
            rate.on_lost(lost);
        }
        self.cc.on_rto(basis, repeated, lost);
        self.recovery.on_rto(self.snd_max);
        self.local.cancel();
        if EXTRAS && self.rude.marked() {
            self.rude_follow(cwnd);
        }
        if let Some(sb) = self.sack.as_mut() {
            // RFC 6675 (5.1): "RecoveryPoint MUST be set to HighData" and recovery ends.
            sb.on_timeout(self.snd_max);
        }
        if self.sack.is_some() {
            // Resent from now on is what go-back-N resends (RACK's loss state reads
            // it); ns-3's TcpTxBuffer::SetSentListLost: every unSACKed segment
            // "becomes lost", "(*it)->m_retrans = false".
            self.log.forget_resends();
        }
        self.sack_rtx = None;
        // ns-2.35 reset_rtx_timer, which the timeout calls: "rtt_active_ = 0".
        self.timed = None;
        if let Some(rack) = self.rack.as_mut() {
            rack.on_timeout();
        }
        self.frto_new = 0;
        self.backoff = self.backoff.saturating_add(1);
        self.loss_high = self.snd_max;
        self.retransmit_now = false;
        self.limited.reset();
        // RFC 6298 (5.4): "Retransmit the earliest segment that has not been
        // acknowledged" — go-back-N: everything from SND.UNA is sent again.
        self.snd_nxt = self.snd_una;
        if let Some(pacer) = self.pacer.as_mut() {
            // Linux tcp_retransmit_timer sends the head itself, outside tcp_write_xmit's pacing check.
            pacer.exempt_next();
        }
        // RFC 6298 (5.5): "The host MUST set RTO <- RTO * 2"
        self.rto.on_timeout();
        // RFC 6298 (5.6): "Start the retransmission timer, such that it expires
        // after RTO seconds (for the value of RTO after the doubling"
        self.rtx_deadline = Some(self.timer.deadline(now, clock, self.rto.rto()));
        Some(timeout)
    }

    /// What timeout forensics needs, read before a timeout changes anything.
    #[cold]
    pub(super) fn snapshot(&self, now: SimTime) -> TimeoutSnapshot {
        // The record covering SND.UNA is the oldest one still held.
        let (una_end, una_retransmitted) = self.log.front().map_or((self.snd_max, false), |r| (r.end, r.retransmitted));
        TimeoutSnapshot {
            time: now,
            rto: self.rto.rto(),
            backoff: self.backoff,
            cwnd: self.cc.cwnd(),
            flight: self.flight_size(),
            dart: self.dart,
            una_retransmitted,
            all_sent: self.snd_max == self.app_end,
            segments_beyond: self.snd_max.saturating_sub(una_end) / self.mss,
            write_unacked: self.snd_una == self.write_start,
            dupack_threshold: self.dupack_threshold,
        }
    }

    /// The network dropped a copy of `[seq, end)` this sender sent.
    #[cold]
    pub fn on_copy_dropped(&mut self, seq: u64, end: u64) {
        self.log.on_copy_dropped(seq, end);
    }

    /// True when the segment at SND.UNA, which a timeout resends, has a copy
    /// the network has not dropped: it reached the receiver or is still on
    /// its way (CMU09 §8.1: a spurious timeout comes of a delay, not a drop).
    #[cold]
    pub fn head_undropped(&self) -> bool {
        self.log.front().is_some_and(|r| r.copies > 0)
    }

    /// Act on what the spurious-timeout detector makes of this ACK; true when
    /// it judged the latest timeout spurious.
    #[cold]
    pub(super) fn on_verdict(&mut self, ack: u64, dup: bool, seg: &Segment, stats: &mut EndpointStats) -> bool {
        match self.spurious.on_ack(ack, self.snd_una, dup, seg.ts().map(|t| t.ecr)) {
            Verdict::Continue => false,
            Verdict::SendNew => {
                // RFC 5682 (2.1 step 2b): "transmit up to two new (previously
                // unsent) segments" — if there are any and the peer window allows.
                if self.app_end > self.snd_max && self.snd_max + self.mss <= ack + seg.wnd as u64 {
                    self.snd_nxt = self.snd_max;
                    self.frto_new = 2;
                } else {
                    self.spurious.cancel();
                }
                false
            }
            Verdict::Conventional => {
                // RFC 5682 (2.1 step 3a): "set the congestion window to no more than
                // 3 * MSS, and continue with the slow start algorithm retransmitting
                // unacknowledged segments."
                self.cc.cap_cwnd(3 * self.mss);
                self.snd_nxt = self.snd_una;
                self.frto_new = 0;
                false
            }
            Verdict::Spurious => {
                let (cwnd, ssthresh) = self.spurious.prior();
                // Undo (Linux tcp_undo_cwnd_reduction); RFC 5682 (2.1 step 3b):
                // "set the value of the "recover" variable to SND.UNA".
                self.cc.undo(cwnd, ssthresh);
                self.recovery.on_undo(ack);
                if let Some(sb) = self.sack.as_mut() {
                    sb.on_undo();
                }
                // RFC 4015 (3 step 4): resume with previously unsent data.
                self.snd_nxt = self.snd_max;
                self.frto_new = 0;
                stats.spurious_timeouts += 1;
                // Linux tcp_try_undo_loss: the undo leaves the loss state.
                self.loss_high = 0;
                true
            }
        }
    }
}
