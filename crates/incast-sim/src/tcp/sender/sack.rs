//! The sender's SACK path: RFC 6675 loss recovery (entry, NextSeg, the
//! window outside recovery with SACKed data left out), PRR with SACK (RFC
//! 6937), and the ns-3.44 rules of `tcp.sack_recovery = "ns3"` that read
//! the sent-segment log (`TcpTxBuffer::BytesInFlight`, `NextSeg` after a
//! timeout).

use super::Sender;
use crate::tcp::cc::SsthreshRule;
use crate::tcp::clock::TcpClock;
use crate::tcp::prr::PrrFlavor;
use crate::tcp::sack::LostMarks;
use crate::tcp::EndpointStats;
use crate::time::{SimDuration, SimTime};

impl<const EXTRAS: bool, const PACED: bool> Sender<EXTRAS, PACED> {
    /// An ACK of new data, `acked` bytes up to `ack`, with SACK on (`sacked_before`
    /// bytes above the old SND.UNA were SACKed before it; `cut` when ECN cut
    /// the window): ends recovery at RecoveryPoint and grows the window outside
    /// it. Returns whether the retransmission timer restarts.
    // Out of line, so that the per-ACK path without SACK stays small enough
    // to be inlined in `Sim::deliver`.
    #[inline(never)]
    pub(super) fn sack_new_ack(
        &mut self,
        ack: u64,
        acked: u64,
        sacked_before: u64,
        cut: bool,
        now: SimTime,
        srtt: SimDuration,
    ) -> bool {
        let counted = if self.cc.counts_segments() { self.delivered(acked, sacked_before) } else { acked };
        let Some(sb) = self.sack.as_mut() else { return true };
        // RFC 6675 (5): no window growth during recovery; (A) it ends at RecoveryPoint.
        let recovering = sb.in_recovery();
        let ended = sb.on_cumulative_ack(ack);
        if ended && self.prr.is_some() {
            // Linux tcp_end_cwnd_reduction: "tcp_snd_cwnd_set(tp, tp->snd_ssthresh)".
            self.cc.set_cwnd(self.cc.ssthresh());
        }
        // ns-3 ProcessAck grows the window on the ACK that ends recovery too:
        // ExitRecovery, then "IncreaseWindow(m_tcb, segsAcked)" in CA_OPEN.
        let grows = !recovering || ended && self.prr.as_ref().is_some_and(|p| p.flavor() == PrrFlavor::Ns3);
        if grows && !cut {
            self.cc.on_ack(counted, now, srtt);
        }
        // ns-3 ProcessAck in recovery: "NewAck(ackNumber, m_isFirstPartialAck)",
        // the timer restarted by the first partial ACK only (RFC 6582's rule).
        let later_partial = sb.is_ns3() && recovering && !ended && !sb.first_partial_ack();
        !later_partial
    }

    /// What an ACK that moved SND.UNA over `acked` bytes newly delivered, the
    /// SACKed bytes above SND.UNA having been `sacked_before` (RFC 6937:
    /// "DeliveredData = (change in snd.una) + (change in SACKed bytes)"); ns-3
    /// grows the window from that ("bytesAcked = currentDelivered"), not from
    /// `acked`.
    pub(super) fn delivered(&self, acked: u64, sacked_before: u64) -> u64 {
        let sacked = self.sack.as_deref().map_or(0, |sb| sb.sacked_in(self.snd_una, self.snd_max));
        (acked + sacked).saturating_sub(sacked_before)
    }

    /// PRR (RFC 6937) after an ACK in SACK recovery: SND.UNA moved from
    /// `old_una`, and before the ACK `sacked_before` bytes above it were
    /// SACKed and, for Linux's PRR in recovery, `lost_before` marked lost;
    /// for ns-3's, whether the ACK SACKed new data (`newly_sacked`) and
    /// acknowledged a retransmission (`resent_acked`).
    #[inline(never)]
    pub(super) fn prr_update(
        &mut self,
        old_una: u64,
        sacked_before: u64,
        lost_before: Option<LostMarks>,
        newly_sacked: bool,
        resent_acked: bool,
    ) {
        // EnterRecovery marks the head lost until its fast retransmission leaves.
        let ns3_pipe = self.ns3_pipe(self.sack_rtx.is_some());
        let delivered = self.delivered(self.snd_una - old_una, sacked_before);
        let (Some(prr), Some(sb)) = (self.prr.as_mut(), self.sack.as_ref()) else { return };
        if !sb.in_recovery() || delivered == 0 {
            return;
        }
        let mut pipe = sb.pipe(self.snd_una, self.snd_max);
        if let Some(ns3) = ns3_pipe {
            pipe = ns3;
        } else if prr.flavor() != PrrFlavor::Rfc6937 {
            // Linux: tcp_packets_in_flight before the fast retransmission leaves;
            // ns-3: EnterRecovery's BytesInFlight(), the head marked lost.
            pipe -= self.sack_rtx.map_or(0, |(_, len)| len).min(pipe);
        }
        if prr.flavor() == PrrFlavor::Ns3 {
            let partial = self.snd_una > old_una && delivered >= self.mss;
            let (ssthresh, sacked) = (self.cc.ssthresh(), newly_sacked);
            if let Some(cwnd) = prr.on_ns3_ack(delivered, pipe, ssthresh, sacked, partial, resent_acked) {
                self.cc.set_cwnd(cwnd);
            }
            return;
        }
        // An ACK that starts recovery is a duplicate: it never advances SND.UNA.
        let clean = self.snd_una > old_una && lost_before.is_some_and(|b| !sb.newly_lost(b, self.snd_una));
        self.cc.set_cwnd(prr.on_ack(delivered, pipe, self.cc.ssthresh(), clean));
    }

    /// RFC 6675 (5 step 4): loss recovery starts at HighACK `ack`, with the
    /// fast retransmission of its segment.
    pub(super) fn enter_sack_recovery(&mut self, now: SimTime, clock: &TcpClock, ack: u64, stats: &mut EndpointStats) {
        stats.fast_retransmits += 1;
        // ns-3's BytesInFlight() once EnterRecovery has marked the head lost.
        let ns3_pipe = self.ns3_pipe(true);
        let (prior_cwnd, pipe_head_lost) = match self.sack.as_ref() {
            Some(sb) => (self.cc.cwnd(), ns3_pipe.unwrap_or_else(|| sb.pipe_head_lost(ack, self.snd_max, self.mss))),
            None => (self.cc.cwnd(), 0),
        };
        self.cut_for_sack_recovery(pipe_head_lost);
        if let Some(prr) = self.prr.as_mut() {
            let flight = match (prr.flavor(), self.sack.as_ref()) {
                // TcpPrrRecovery::EnterRecovery: "m_recoveryFlightSize = tcb->m_bytesInFlight".
                (PrrFlavor::Ns3, Some(_)) => pipe_head_lost,
                _ => self.snd_nxt - self.snd_una,
            };
            prr.enter(flight, prior_cwnd);
        }
        let Some(sb) = self.sack.as_mut() else { return };
        // (4.1) RecoveryPoint = HighData; (4.3) retransmit HighACK's segment.
        self.sack_rtx = Some(sb.enter_recovery(ack, self.snd_max));
        self.restart_for_fast_retransmit(now, clock);
    }

    /// The window cut as SACK recovery starts, `pipe_head_lost` being the
    /// pipe with the head marked lost (what ns-3 cuts from).
    fn cut_for_sack_recovery(&mut self, pipe_head_lost: u64) {
        match self.ssthresh_rule {
            // RFC 6675 (5 step 4.2): "ssthresh = cwnd = (FlightSize / 2)", where
            // FlightSize leaves out what SACKed data let through beyond cwnd
            // (RFC 5681 3.2 leaves out Limited Transmit's segments).
            SsthreshRule::Rfc5681 => self.cc.on_sack_recovery((self.snd_nxt - self.snd_una).min(self.cc.cwnd())),
            // ns-3.44 TcpSocketBase::EnterRecovery: MarkHeadAsLost, then
            // "GetSsThresh(m_tcb, bytesInFlight)" with BytesInFlight() the pipe.
            SsthreshRule::Ns3 => self.cc.on_sack_recovery(pipe_head_lost),
            // ns-2.35 Sack1TcpAgent::dupack_action: "slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF)".
            SsthreshRule::Ns2 => {
                let half = self.cc.ns2_half(false, self.peer_wnd);
                self.cc.on_loss(self.cc.ns2_loss_basis(half));
                self.cc.set_cwnd(half.max(self.mss));
            }
        }
    }

    /// RACK found a segment go-back-N resent since the timeout lost again,
    /// the ACK of `ack` leaving the loss state unfinished: Linux leaves
    /// `TCP_CA_Loss` for recovery (`tcp_fastretrans_alert`: "Change state if
    /// cwnd is undone or retransmits are lost", `tcp_enter_recovery`, counted
    /// as `TCPSackRecovery`), the window cut as at any recovery's start
    /// (`tcp_init_cwnd_reduction`). Nothing is resent at once: what the timeout
    /// marked lost and go-back-N has not yet resent stays lost, what it resent
    /// is in flight (HighRxt at its point), and the segments found lost again
    /// go first (`tcp_xmit_retransmit_queue` resends what is marked lost, from
    /// the head). F-RTO's test ends with the loss state. `resent_to` is one
    /// past what go-back-N has resent.
    #[cold]
    pub(super) fn enter_recovery_from_loss(&mut self, ack: u64, resent_to: u64, stats: &mut EndpointStats) {
        let (prior_cwnd, pipe) = match self.sack.as_ref() {
            Some(sb) => (self.cc.cwnd(), self.ns3_pipe(false).unwrap_or_else(|| sb.pipe(ack, self.snd_max))),
            None => return,
        };
        stats.fast_retransmits += 1;
        self.cut_for_sack_recovery(pipe);
        if let Some(prr) = self.prr.as_mut() {
            prr.enter(self.snd_max - ack, prior_cwnd);
        }
        if let Some(sb) = self.sack.as_mut() {
            sb.enter_recovery_after_timeout(resent_to, self.snd_max, self.loss_high);
        }
        self.loss_high = 0;
        self.snd_nxt = self.snd_max;
        self.frto_new = 0;
        self.spurious.cancel();
    }

    /// `(seq, len)` of the next segment with SACK on: the segment that starts
    /// recovery, then RFC 6675 `NextSeg` while cwnd − pipe ≥ SMSS during
    /// recovery; otherwise new data (or, after a timeout, the next unSACKed
    /// data) as the window allows, SACKed data not counting as outstanding.
    pub(super) fn next_sack_segment(&mut self, now: SimTime) -> Option<(u64, u64)> {
        if let Some(first) = self.sack_rtx.take() {
            return Some(first);
        }
        if self.sack.as_deref()?.in_recovery() {
            // RFC 6675 (5 step C): "If cwnd - pipe >= 1 SMSS, the sender SHOULD
            // transmit one or more segments"
            let (cwnd, ns3_pipe) = (self.rude.window(self.cc.cwnd(), u64::MAX), self.ns3_pipe(false));
            let sb = self.sack.as_deref_mut()?;
            let may = match ns3_pipe {
                Some(pipe) => cwnd >= pipe + self.mss,
                None => sb.may_send(cwnd, self.snd_una, self.snd_max),
            };
            if !may {
                return None;
            }
            let may_send_new = self.snd_max + self.mss.min(self.app_end - self.snd_max) <= self.snd_una + self.peer_wnd;
            let (seq, len, rule) = sb.next_seg(self.snd_una, self.snd_max, self.app_end, may_send_new)?;
            sb.on_sent(seq + len, rule);
            return Some((seq, len));
        }
        if self.sack.as_deref().is_some_and(|sb| sb.is_ns3() && self.snd_una < sb.timeout_high()) {
            return self.ns3_next_after_timeout();
        }
        let mut run_end = u64::MAX;
        if self.snd_nxt < self.snd_max {
            // After a timeout: skip what the receiver holds (Linux tcp_enter_loss keeps SACK marks).
            (self.snd_nxt, run_end) = self.sack.as_deref()?.hole_at(self.snd_nxt);
        }
        let unsent = self.app_end.saturating_sub(self.snd_nxt);
        if unsent == 0 {
            return None;
        }
        if self.snd_una == self.snd_max {
            self.restart_if_idle(now);
        }
        let sb = self.sack.as_deref()?;
        let flight = self.snd_nxt - self.snd_una - sb.sacked_in(self.snd_una, self.snd_nxt);
        let usable = self.send_window().saturating_sub(flight);
        let len = unsent.min(self.mss).min(run_end - self.snd_nxt);
        // RFC 9293 (3.8.6.2.1): "usable window ... U = SND.UNA + SND.WND - SND.NXT".
        // The flight leaves SACKed bytes out, the peer's window does not: new data
        // must end within it, and a retransmission start within it (or at
        // SND.UNA), as Linux's tcp_snd_wnd_test and tcp_retransmit_skb require.
        let wnd_end = self.snd_una + self.peer_wnd;
        let in_window = if self.snd_nxt < self.snd_max {
            self.snd_nxt < wnd_end || self.snd_nxt == self.snd_una
        } else {
            self.snd_nxt + len <= wnd_end
        };
        if len <= usable && in_window || self.frto_allows(len) {
            return Some((self.snd_nxt, len));
        }
        None
    }

    /// With `tcp.sack_recovery = "ns3"`, the pipe as ns-3.44 counts it
    /// (`TcpTxBuffer::BytesInFlight`: "m_sentSize - leftOut + retrans"):
    /// a segment retransmitted since the last timeout counts whole, SACKed or
    /// not (`Update` clears its lost mark, not its retransmitted one); any
    /// other SACKed byte does not, nor a segment marked lost: every unSACKed
    /// one a timeout found outstanding (`SetSentListLost`), one with
    /// DupThresh segments SACKed above it (`UpdateLostCount`), and with
    /// `head_lost` the head (`MarkHeadAsLost` at a fast retransmit). `None`
    /// with any other recovery.
    pub(super) fn ns3_pipe(&self, head_lost: bool) -> Option<u64> {
        let sb = self.sack.as_deref().filter(|sb| sb.is_ns3())?;
        let mut pipe = 0;
        for (s, e, r) in self.log.outstanding(self.snd_una) {
            if r.resent_since_timeout {
                pipe += e - s;
            } else if !(sb.ns3_lost(s) || head_lost && s == self.snd_una) {
                pipe += e - s - sb.sacked_in(s, e);
            }
        }
        Some(pipe)
    }

    /// After a timeout, what ns-3.44 sends next (`TcpTxBuffer::NextSeg`, rules
    /// 1 and 2, as `SendPendingData` calls it outside recovery): the first
    /// segment marked lost and not yet resent, but only below the highest
    /// SACKed byte when any is SACKed, else new data; a lost segment above
    /// the highest SACK waits until SACKs of later data pass it. Within cwnd
    /// less [`Sender::ns3_pipe`] and the peer's window.
    pub(super) fn ns3_next_after_timeout(&self) -> Option<(u64, u64)> {
        let pipe = self.ns3_pipe(false)?;
        let sb = self.sack.as_deref()?;
        if self.send_window() < pipe + self.mss {
            return None;
        }
        let highest_sack = sb.ranges().last().map(|&(_, end)| end);
        for (s, e, r) in self.log.outstanding(self.snd_una) {
            if r.resent_since_timeout {
                continue;
            }
            let (hole, run_end) = sb.hole_at(s);
            if hole >= e {
                continue;
            }
            if highest_sack.is_some_and(|h| hole >= h) {
                break;
            }
            if sb.ns3_lost(hole) {
                return Some((hole, self.mss.min(e.min(run_end) - hole)));
            }
        }
        let len = self.mss.min(self.app_end.saturating_sub(self.snd_max));
        (len > 0 && self.snd_max + len <= self.snd_una + self.peer_wnd).then_some((self.snd_max, len))
    }
}
