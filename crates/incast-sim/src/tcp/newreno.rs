//! Fast retransmit and fast recovery: Reno (RFC 5681 §3.2) and NewReno (RFC 6582).
//!
//! **Models:** fast retransmit on the `dupack_threshold`-th duplicate ACK,
//! with ssthresh from the congestion-control algorithm (`tcp::cc`) and the
//! window inflated to ssthresh + threshold·SMSS, one SMSS more per further
//! duplicate (RFC 5681 §3.2). One recovery procedure serves both variants:
//! NewReno (RFC 6582 §3.2) adds partial-ACK retransmissions with window
//! deflation, the full-ACK exit at min(ssthresh, max(FlightSize, SMSS) +
//! SMSS) or at ssthresh (the two options of its §3.2 step 3,
//! [`RecoveryExit`]), and the `recover` guard against spurious fast retransmits after a
//! timeout; Reno (`LossRecovery::Reno`, RFC 5681 §3.2 alone) leaves recovery
//! on any ACK of new data with cwnd = ssthresh (with `recovery_exit =
//! "ssthresh"` under the ns-2 ssthresh rule, at ns-2's unrounded half
//! window, which small windows put below ssthresh's two-segment floor), so a
//! second loss in the window waits for more duplicate ACKs or the timer
//! (FAST08 §5.1.1).
//! Outside recovery every ACK of new data grows the window by the
//! algorithm's rules (`tcp::cc`). With SACK on, RFC 6675 (`tcp::sack`)
//! replaces this procedure.
//! **Deliberately different:** `recover` starts unset rather than at the
//! ISS, so a loss of the very first segment can still fast-retransmit. The
//! retransmission timer is reset by the first partial ACK only — the
//! "Impatient" variant of RFC 6582 §4, as its §3.2 step 3 specifies — so later
//! partial ACKs do not restart it as RFC 6298 (5.3) alone would (Linux rearms
//! on every ACK of new data).
//! With `partial_ack_window = "ns2"` a partial ACK deflates as ns-2.35's
//! NewReno agent does by default (`NewRenoTcpAgent::partialnewack`,
//! `partial_window_deflation_` 1): the inflation first, and what it does not
//! cover out of the window recovery will leave at, so a recovery with
//! several partial ACKs ends below ssthresh and slow-starts back to it. With
//! `"ssthresh"` a partial ACK drops the whole inflation instead
//! (`partial_window_deflation_` 0: "dupwnd_ = 0").
//! With `recovery_burst` (ns-2.35 `NewRenoTcpAgent::recv`: "send_much(0, 0,
//! 2)" once `dupacks_` passed the threshold), each ACK in recovery releases
//! at most that many new segments besides the retransmission; the sender
//! counts them ([`NewReno::burst_left`]).
//! With `reno_recover_guard` Reno keeps NewReno's `recover` guard, as
//! ns-2.35's Reno agent does: `RenoTcpAgent::dupack_action` (`bug_fix_`)
//! fast-retransmits within `recover_` only while the last window cut is a
//! fast retransmit still under way, and any new ACK marks that cut exited
//! (`CWND_ACTION_EXITED` in `RenoTcpAgent::recv`), so a second loss in a
//! window waits for the timer.
//! With `prr` on, the sender replaces the inflation by Proportional Rate
//! Reduction as Linux runs it without SACK (`tcp::prr`).
//! With `dupack_idle`, ACKs that repeat the last one while nothing is
//! outstanding count as duplicates of their own, as ns-2.35's Reno and
//! NewReno agents count every "seqno() == last_ack_" (`TcpAgent::recv`):
//! the threshold-th cuts the window as a fast retransmit does (ns-2's
//! `dupack_action`, guard included), with nothing to resend, and leaves
//! cwnd at the window recovery exits at ([`NewReno::on_idle_dup_ack`]).
//! **Not modelled:** ECN (DCTCP's reaction is `tcp::cc::dctcp`).
//!
//! Sequence offsets: `recover` holds one past the highest byte sent
//! (SND.MAX), so the RFC's "covers more than recover" is `ack > recover` and
//! "acknowledges all of the data up to and including recover" is `ack >= recover`.

use super::cc::CongestionWindow;
use super::recovery::LossRecovery;
use crate::time::{SimDuration, SimTime};

/// cwnd on the full acknowledgment that ends NewReno's fast recovery
/// (RFC 6582 §3.2 step 3 offers both).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RecoveryExit {
    /// Option (1): min(ssthresh, max(FlightSize, SMSS) + SMSS), so that little
    /// outstanding data does not turn into a burst.
    #[default]
    Flight,
    /// Option (2): ssthresh, as ns-2.35's NewReno agent (`dupwnd_ = 0` with
    /// `exit_recovery_fix_` 0) and Linux's `tcp_end_cwnd_reduction` do; the
    /// window's worth not in flight leaves at once. The full ACK then grows
    /// cwnd like any ACK of new data, as in ns-2 (`opencwnd`). Under
    /// `SsthreshRule::Ns2` "ssthresh" is ns-2's unrounded `halfwin`, for
    /// Reno's exit too (`RenoTcpAgent::recv` drops `dupwnd_` only).
    Ssthresh,
}

/// The window a partial ACK leaves in NewReno's fast recovery.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PartialAckWindow {
    /// RFC 6582 (3.2 step 3): "Deflate the congestion window by the amount
    /// of new data acknowledged", adding back one SMSS when that is at least
    /// one SMSS: the inflation of the duplicates stays.
    #[default]
    Deflate,
    /// ns-2.35 `NewRenoTcpAgent::recv` with `partial_window_deflation_` 0:
    /// "dupwnd_ = 0" — the window falls back to the one the fast retransmit
    /// set (ns-2's `halfwin`, else ssthresh), and the duplicates after it
    /// inflate it again.
    Ssthresh,
    /// ns-2.35 `NewRenoTcpAgent::partialnewack` with
    /// `partial_window_deflation_` 1 (`ns-default.tcl` since 2003): the same
    /// total as `Deflate`, but taken from the inflation
    /// (`dupwnd_ -= (deflate - 1)`) and, where that is smaller than the data
    /// acknowledged, from the window the full ACK restores
    /// (`cwnd_ -= (deflate - dupwnd_); dupwnd_ = 1`, `cwnd_` at least one
    /// segment).
    Ns2,
}

/// What the sender must do after an ACK of new data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewAck {
    /// Ordinary progress (or the full ACK ending recovery): restart the timer.
    Advance,
    /// Partial ACK in fast recovery: retransmit the first unacknowledged
    /// segment; restart the timer only when `reset_timer`.
    Partial {
        /// True for the first partial ACK of this recovery episode.
        reset_timer: bool,
    },
}

/// Reno/NewReno fast-recovery state of one sender.
#[derive(Clone, Debug)]
pub struct NewReno {
    smss: u64,
    threshold: u32,
    /// RFC 6582's partial ACKs and `recover` guard (false: Reno).
    partial_acks: bool,
    /// Reno keeps NewReno's `recover` guard (ns-2).
    reno_guard: bool,
    /// cwnd at the full ACK.
    exit: RecoveryExit,
    /// cwnd at a partial ACK.
    partial_window: PartialAckWindow,
    /// SND.MAX when the last fast retransmit or timeout happened.
    recover: Option<u64>,
    in_recovery: bool,
    /// No partial ACK seen yet in this recovery episode.
    first_partial: bool,
    dupacks: u32,
    /// Duplicate ACKs counted with nothing outstanding (`dupack_idle`).
    idle_dupacks: u32,
    /// Most new segments per ACK in recovery (`None`: no cap).
    burst: Option<u32>,
    /// New segments the latest ACK may still release in recovery.
    burst_left: u32,
    /// The window fast recovery leaves at ssthresh (`RecoveryExit::Ssthresh`):
    /// ssthresh, or ns-2's unrounded `halfwin`.
    exit_window: u64,
}

impl NewReno {
    /// Out of recovery, for segments of `smss` bytes, fast retransmit on the
    /// `dupack_threshold`-th duplicate ACK; Reno's recovery for
    /// `LossRecovery::Reno`, NewReno's otherwise, leaving
    /// recovery with cwnd by `exit`, at most `burst` new segments per ACK in it.
    pub fn new(
        smss: u64,
        dupack_threshold: u32,
        recovery: LossRecovery,
        exit: RecoveryExit,
        burst: Option<u32>,
    ) -> Self {
        NewReno {
            smss,
            threshold: dupack_threshold.max(1),
            partial_acks: recovery != LossRecovery::Reno,
            reno_guard: false,
            exit,
            partial_window: PartialAckWindow::Deflate,
            // DEVIATION (Linux): RFC 6582 (3.2 step 1) sets recover to the ISS,
            // which would block a fast retransmit of segment 0; Linux has no guard
            // before its first recovery, so neither do we.
            recover: None,
            in_recovery: false,
            first_partial: true,
            dupacks: 0,
            idle_dupacks: 0,
            burst,
            burst_left: 0,
            exit_window: 0,
        }
    }

    /// The same, with the window a partial ACK leaves set by `partial_window`.
    pub fn with_partial_window(mut self, partial_window: PartialAckWindow) -> Self {
        self.partial_window = partial_window;
        self
    }

    /// The same, Reno keeping NewReno's `recover` guard when `guard`.
    pub fn with_reno_guard(mut self, guard: bool) -> Self {
        self.reno_guard = guard;
        self
    }

    /// True when the recovery burst cap lets one more new segment go out
    /// for the latest ACK, which it then counts; always true outside
    /// recovery or without a cap.
    #[inline]
    pub fn burst_left(&mut self) -> bool {
        if !self.in_recovery || self.burst.is_none() {
            return true;
        }
        let left = self.burst_left > 0;
        self.burst_left -= u32::from(left);
        left
    }

    /// An ACK arrived: it may release a new burst.
    #[inline]
    fn refill(&mut self) {
        self.burst_left = self.burst.unwrap_or(0);
    }

    /// True while in fast recovery.
    #[inline]
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    /// Consecutive duplicate ACKs counted.
    #[inline]
    pub fn dupacks(&self) -> u32 {
        self.dupacks
    }
    /// True when an ACK of new data up to `ack` is a partial ACK (NewReno in
    /// recovery, `ack` short of `recover`); never for Reno.
    #[inline]
    pub fn is_partial(&self, ack: u64) -> bool {
        self.in_recovery && self.partial_acks && self.recover.is_some_and(|r| ack < r)
    }

    /// `recover` (one past the highest byte sent at the last loss event).
    #[inline]
    pub fn recover(&self) -> Option<u64> {
        self.recover
    }

    /// An ACK advanced SND.UNA by `acked` bytes to `ack` at `now`; `flight` is
    /// the data still outstanding after it and `srtt` the smoothed RTT (zero
    /// before a sample). Outside recovery the window `w` grows.
    // Inline always: it runs on every new ACK, and with `#[inline]` alone
    // LLVM keeps it out of line.
    #[inline(always)]
    pub fn on_new_ack(
        &mut self,
        w: &mut CongestionWindow,
        acked: u64,
        ack: u64,
        flight: u64,
        now: SimTime,
        srtt: SimDuration,
    ) -> NewAck {
        self.dupacks = 0;
        self.idle_dupacks = 0;
        self.refill();
        if self.in_recovery {
            let exit = self.on_recovery_ack(w, acked, ack, flight);
            if !self.in_recovery && self.exit == RecoveryExit::Ssthresh {
                // ns-2 NewRenoTcpAgent::recv: the full ACK goes on through
                // recv_newack_helper, whose opencwnd grows the window as usual.
                w.on_ack(acked, now, srtt);
            }
            return exit;
        }
        w.on_ack(acked, now, srtt);
        NewAck::Advance
    }

    /// [`NewReno::on_new_ack`] in fast recovery.
    fn on_recovery_ack(&mut self, w: &mut CongestionWindow, acked: u64, ack: u64, flight: u64) -> NewAck {
        if !self.partial_acks {
            // RFC 5681 (3.2 step 6): "When the next ACK arrives that acknowledges
            // previously unacknowledged data, a TCP MUST set cwnd to ssthresh";
            // ns-2.35's RenoTcpAgent::recv drops dupwnd_ only, leaving cwnd_ at
            // the unrounded halfwin the fast retransmit set.
            w.set_cwnd(match self.exit {
                RecoveryExit::Flight => w.ssthresh(),
                RecoveryExit::Ssthresh => self.exit_window,
            });
            self.in_recovery = false;
            return NewAck::Advance;
        }
        let recover = self.recover.unwrap_or(0);
        if ack >= recover {
            // RFC 6582 (3.2 step 3): full acknowledgment — "Set cwnd to either
            // (1) min (ssthresh, max(FlightSize, SMSS) + SMSS) or (2) ssthresh".
            w.set_cwnd(match self.exit {
                RecoveryExit::Flight => w.ssthresh().min(flight.max(self.smss) + self.smss),
                RecoveryExit::Ssthresh => self.exit_window,
            });
            // RFC 6582 (3.2 step 3): "Exit the fast recovery procedure."
            self.in_recovery = false;
            return NewAck::Advance;
        }
        w.set_cwnd(match self.partial_window {
            // RFC 6582 (3.2 step 3): partial acknowledgment — "Deflate the
            // congestion window by the amount of new data acknowledged ...
            // If the partial ACK acknowledges at least one SMSS of new data,
            // then add back SMSS bytes to the congestion window."
            PartialAckWindow::Deflate => {
                w.cwnd().saturating_sub(acked) + if acked >= self.smss { self.smss } else { 0 }
            }
            // ns-2.35: "if (partial_window_deflation_ == 0) dupwnd_ = 0;"
            PartialAckWindow::Ssthresh => self.exit_window,
            PartialAckWindow::Ns2 => {
                let inflation = w.cwnd().saturating_sub(self.exit_window);
                if inflation <= acked {
                    // ns-2.35: "cwnd_ -= (deflate - dupwnd_); dupwnd_ = 1;"
                    // and "if (cwnd_ < 1) {cwnd_ = 1;}"
                    self.exit_window = self.exit_window.saturating_sub(acked - inflation).max(self.smss);
                    self.exit_window.saturating_add(self.smss)
                } else {
                    // ns-2.35: "dupwnd_ -= (deflate - 1);"
                    w.cwnd() - acked + self.smss
                }
            }
        });
        // RFC 6582 (3.2 step 3): "For the first partial ACK that arrives
        // during fast recovery, also reset the retransmit timer."
        let reset_timer = self.first_partial;
        self.first_partial = false;
        NewAck::Partial { reset_timer }
    }

    /// A duplicate ACK (RFC 5681 §2) of `ack`; `flight` is the outstanding data
    /// and `snd_max` one past the highest byte sent; `ns2_half` is ns-2's
    /// `halfwin` under `SsthreshRule::Ns2`. Returns true when the first
    /// unacknowledged segment must be fast-retransmitted now.
    pub fn on_dup_ack(
        &mut self,
        w: &mut CongestionWindow,
        ack: u64,
        flight: u64,
        snd_max: u64,
        ns2_half: Option<u64>,
    ) -> bool {
        self.dupacks = self.dupacks.saturating_add(1);
        self.refill();
        if self.in_recovery {
            // RFC 5681 (3.2 step 4): "For each additional duplicate ACK received
            // (after the third), cwnd MUST be incremented by SMSS."
            // Saturating: BBR's ssthresh (and so this window) is infinite; its cong_control sets cwnd.
            w.set_cwnd(w.cwnd().saturating_add(self.smss));
            return false;
        }
        if self.dupacks != self.threshold || self.guarded(ack) {
            return false;
        }
        self.cut(w, flight, snd_max, ns2_half);
        // RFC 5681 (3.2 step 3): "The lost segment starting at SND.UNA MUST be
        // retransmitted and cwnd set to ssthresh plus 3*SMSS." — threshold·SMSS
        // (ns-2: `cwnd_ = halfwin`, `dupwnd_ = numdupacks_`).
        w.set_cwnd(self.exit_window.saturating_add(self.threshold as u64 * self.smss));
        self.in_recovery = true;
        self.first_partial = true;
        true
    }

    /// An ACK of `ack` that repeats the last one with nothing outstanding,
    /// counted as a duplicate (`dupack_idle`: ns-2.35 `TcpAgent::recv`).
    /// Returns true when it is the threshold-th and cut the window: ns-2's
    /// `dupack_action` (`recover_ = maxseq_`, `slowdown(CLOSE_SSTHRESH_HALF|
    /// CLOSE_CWND_HALF)`) with nothing lost, so cwnd stays at the window
    /// recovery exits at, as ns-2's agent has it once the segment that
    /// `dupack_action` sends beyond the data ("output(last_ack_ + 1)") is
    /// acknowledged ("dupwnd_ = 0"). That segment is not sent here: the
    /// application has written nothing beyond SND.MAX.
    pub fn on_idle_dup_ack(&mut self, w: &mut CongestionWindow, ack: u64, snd_max: u64, ns2_half: Option<u64>) -> bool {
        self.idle_dupacks = self.idle_dupacks.saturating_add(1);
        if self.in_recovery || self.idle_dupacks != self.threshold || self.guarded(ack) {
            return false;
        }
        self.cut(w, 0, snd_max, ns2_half);
        w.set_cwnd(self.exit_window);
        true
    }

    /// RFC 6582 (3.2 step 2): "the TCP sender first checks the value of
    /// recover to see if the Cumulative Acknowledgment field covers more than
    /// recover. ... If not, the TCP does not enter fast retransmit and does
    /// not reset ssthresh."
    #[inline]
    fn guarded(&self, ack: u64) -> bool {
        (self.partial_acks || self.reno_guard) && self.recover.is_some_and(|r| ack <= r)
    }

    /// The window cut of a fast retransmit with `flight` bytes outstanding and
    /// SND.MAX at `snd_max`: ssthresh, the window recovery exits at, `recover`.
    fn cut(&mut self, w: &mut CongestionWindow, flight: u64, snd_max: u64, ns2_half: Option<u64>) {
        // RFC 5681 (3.2 step 2): "a TCP MUST set ssthresh to no more than the
        // value given in equation (4)" — the algorithm's (`tcp::cc`); ns-2
        // `slowdown`: "ssthresh_ = (int) halfwin", "cwnd_ = halfwin".
        let ssthresh = w.on_loss(ns2_half.map_or(flight, |h| w.ns2_loss_basis(h)));
        self.exit_window = ns2_half.map_or(ssthresh, |h| h.max(self.smss));
        // RFC 6582 (3.2 step 2): "the value of recover is incremented to the value
        // of the highest sequence number transmitted by the TCP so far."
        self.recover = Some(snd_max);
    }

    /// The retransmission timer expired with SND.MAX at `snd_max`.
    pub fn on_rto(&mut self, snd_max: u64) {
        // RFC 6582 (3.2 step 4): "After a retransmit timeout, record the highest
        // sequence number transmitted in the variable recover, and exit the fast
        // recovery procedure if applicable."
        self.recover = Some(snd_max);
        self.in_recovery = false;
        self.dupacks = 0;
        self.idle_dupacks = 0;
    }

    /// A spurious timeout was undone: `recover` moves to `snd_una`
    /// (RFC 5682 §2.1 step 3b).
    pub fn on_undo(&mut self, snd_una: u64) {
        self.recover = Some(snd_una);
    }
}

#[cfg(test)]
mod tests {
    use super::super::cc::reno::{CaIncrease, Reno};
    use super::super::cc::Algorithm;
    use super::*;

    const MSS: u64 = 1000;
    const T0: SimTime = SimTime::ZERO;

    /// Recovery state and a Reno window of 10 segments.
    struct Cc {
        r: NewReno,
        w: CongestionWindow,
    }

    impl Cc {
        fn new(recovery: LossRecovery, threshold: u32) -> Self {
            Cc {
                r: NewReno::new(MSS, threshold, recovery, RecoveryExit::Flight, None),
                w: CongestionWindow::new(MSS, 10, true, Algorithm::Reno(Reno::new(MSS, CaIncrease::Exact))),
            }
        }
        fn dup(&mut self, ack: u64, flight: u64, snd_max: u64) -> bool {
            self.r.on_dup_ack(&mut self.w, ack, flight, snd_max, None)
        }
        fn new_ack(&mut self, acked: u64, ack: u64, flight: u64) -> NewAck {
            self.r.on_new_ack(&mut self.w, acked, ack, flight, T0, SimDuration::ZERO)
        }
        fn rto(&mut self, flight: u64, snd_max: u64) {
            self.w.on_rto(flight, false, flight);
            self.r.on_rto(snd_max);
        }
        fn cwnd(&self) -> u64 {
            self.w.cwnd()
        }
    }

    fn cc() -> Cc {
        Cc::new(LossRecovery::NewReno, 3)
    }

    /// Enter recovery with 10 segments outstanding and SND.MAX = 10·MSS.
    fn recovering() -> Cc {
        let mut c = cc();
        assert!(!c.dup(0, 10 * MSS, 10 * MSS));
        assert!(!c.dup(0, 10 * MSS, 10 * MSS));
        assert!(c.dup(0, 10 * MSS, 10 * MSS));
        c
    }

    /// RFC 5681 (3.2 step 2): the third duplicate ACK sets ssthresh by eq. (4),
    /// cwnd = ssthresh + 3·SMSS, and asks for the retransmission.
    #[test]
    fn rfc5681_3_2_step2_third_dup_ack_enters_fast_recovery() {
        let c = recovering();
        assert!(c.r.in_recovery());
        assert_eq!(c.w.ssthresh(), 5 * MSS);
        assert_eq!(c.cwnd(), 8 * MSS);
        assert_eq!(c.r.recover(), Some(10 * MSS));
        let mut small = cc();
        for _ in 0..3 {
            small.dup(0, 2 * MSS, 2 * MSS);
        }
        assert_eq!(small.w.ssthresh(), 2 * MSS, "floor of 2·SMSS");
    }

    /// RFC 5681 (3.2 step 3): a threshold other than 3 inflates by threshold·SMSS.
    #[test]
    fn rfc5681_3_2_step3_other_threshold_inflates_by_threshold() {
        let mut c = Cc::new(LossRecovery::NewReno, 2);
        assert!(!c.dup(0, 10 * MSS, 10 * MSS));
        assert!(c.dup(0, 10 * MSS, 10 * MSS));
        assert_eq!(c.cwnd(), 7 * MSS);
    }

    /// RFC 5681 (3.2 step 4): each further duplicate ACK inflates cwnd by SMSS.
    #[test]
    fn rfc5681_3_2_step4_further_dup_acks_inflate() {
        let mut c = recovering();
        assert!(!c.dup(0, 10 * MSS, 10 * MSS));
        assert!(!c.dup(0, 10 * MSS, 10 * MSS));
        assert_eq!(c.cwnd(), 10 * MSS);
    }

    /// RFC 6582 (3.2 step 3): a partial ACK deflates by the amount acked, adds
    /// back one SMSS, and resets the timer on the first partial ACK only.
    #[test]
    fn rfc6582_3_2_step3_partial_ack_deflates() {
        let mut c = recovering();
        c.dup(0, 10 * MSS, 10 * MSS);
        assert_eq!(c.cwnd(), 9 * MSS);
        assert_eq!(c.new_ack(3 * MSS, 3 * MSS, 7 * MSS), NewAck::Partial { reset_timer: true });
        assert_eq!(c.cwnd(), 9 * MSS - 3 * MSS + MSS);
        assert_eq!(c.new_ack(MSS, 4 * MSS, 6 * MSS), NewAck::Partial { reset_timer: false });
        assert_eq!(c.cwnd(), 7 * MSS);
        assert_eq!(c.new_ack(500, 4 * MSS + 500, 6 * MSS), NewAck::Partial { reset_timer: false });
        assert_eq!(c.cwnd(), 7 * MSS - 500, "less than one SMSS acked: no add-back");
        assert!(c.r.in_recovery());
    }

    /// ns-2.35 `NewRenoTcpAgent::recv` ("if (partial_window_deflation_ == 0)
    /// dupwnd_ = 0"): a partial ACK drops the whole inflation, leaving the
    /// window the fast retransmit set; later duplicates inflate it again.
    #[test]
    fn ns2_partial_ack_falls_back_to_the_fast_retransmit_window() {
        let mut c = recovering();
        c.r = c.r.clone().with_partial_window(PartialAckWindow::Ssthresh);
        c.dup(0, 10 * MSS, 10 * MSS);
        assert_eq!(c.cwnd(), 9 * MSS);
        assert_eq!(c.new_ack(3 * MSS, 3 * MSS, 7 * MSS), NewAck::Partial { reset_timer: true });
        assert_eq!(c.cwnd(), 5 * MSS, "ssthresh, where RFC 6582 leaves 7 segments");
        assert!(!c.dup(3 * MSS, 7 * MSS, 10 * MSS));
        assert_eq!(c.cwnd(), 6 * MSS);
        assert_eq!(c.new_ack(MSS, 4 * MSS, 6 * MSS), NewAck::Partial { reset_timer: false });
        assert_eq!(c.cwnd(), 5 * MSS);
        assert!(c.r.in_recovery());
    }

    /// ns-2.35 `NewRenoTcpAgent::partialnewack` (`partial_window_deflation_`
    /// 1): a partial ACK the inflation covers leaves the window RFC 6582
    /// gives; one it does not cover takes the rest from the window the full
    /// ACK restores, so recovery ends below ssthresh.
    #[test]
    fn ns2_partial_ack_beyond_the_inflation_lowers_the_exit_window() {
        let mut c = Cc {
            r: NewReno::new(MSS, 3, LossRecovery::NewReno, RecoveryExit::Ssthresh, None)
                .with_partial_window(PartialAckWindow::Ns2),
            w: CongestionWindow::new(MSS, 10, true, Algorithm::Reno(Reno::new(MSS, CaIncrease::Exact))),
        };
        for _ in 0..4 {
            c.dup(0, 10 * MSS, 10 * MSS);
        }
        assert_eq!(c.cwnd(), 9 * MSS, "ssthresh 5 + inflation 4");
        assert_eq!(c.new_ack(2 * MSS, 2 * MSS, 8 * MSS), NewAck::Partial { reset_timer: true });
        assert_eq!(c.cwnd(), 8 * MSS, "inflation 4 covers 2: 4 - (2 - 1) = 3 left, as RFC 6582");
        assert_eq!(c.new_ack(5 * MSS, 7 * MSS, 3 * MSS), NewAck::Partial { reset_timer: false });
        assert_eq!(c.cwnd(), 4 * MSS, "base 5 - (5 - 3) = 3, inflation 1: 4, as RFC 6582");
        assert_eq!(c.new_ack(3 * MSS, 10 * MSS, 0), NewAck::Advance);
        assert_eq!(c.cwnd(), 4 * MSS, "exits at the lowered base 3, then slow start adds one");
        assert_eq!(c.w.ssthresh(), 5 * MSS);
        let mut floor = recovering();
        floor.r = floor.r.clone().with_partial_window(PartialAckWindow::Ns2);
        assert_eq!(floor.new_ack(9 * MSS, 9 * MSS, MSS), NewAck::Partial { reset_timer: true });
        assert_eq!(floor.cwnd(), 2 * MSS, "base at least one segment, inflation one");
    }

    /// ns-2.35 `RenoTcpAgent::recv`: the ACK that ends Reno's recovery drops
    /// the inflation (`dupwnd_ = 0`) and leaves `cwnd_` at the unrounded
    /// `halfwin` the fast retransmit set, below the two-segment floor of
    /// ssthresh at small windows, where RFC 5681 sets cwnd to ssthresh.
    #[test]
    fn ns2_reno_leaves_recovery_at_the_unrounded_half_window() {
        let mut c = Cc {
            r: NewReno::new(MSS, 3, LossRecovery::Reno, RecoveryExit::Ssthresh, None),
            w: CongestionWindow::new(MSS, 3, true, Algorithm::Reno(Reno::new(MSS, CaIncrease::Exact))),
        };
        for _ in 0..3 {
            c.r.on_dup_ack(&mut c.w, 0, 3 * MSS, 3 * MSS, Some(1500));
        }
        assert_eq!((c.w.ssthresh(), c.cwnd()), (2 * MSS, 1500 + 3 * MSS), "ssthresh_ = 2, cwnd_ = 1.5 + dupwnd_ 3");
        assert_eq!(c.new_ack(MSS, MSS, 2 * MSS), NewAck::Advance);
        assert_eq!(c.cwnd(), 2500, "cwnd_ 1.5, below ssthresh_ 2: opencwnd's slow start adds one");
        let mut rfc = Cc::new(LossRecovery::Reno, 3);
        for _ in 0..3 {
            rfc.dup(0, 3 * MSS, 3 * MSS);
        }
        rfc.new_ack(MSS, MSS, 2 * MSS);
        assert_eq!(rfc.cwnd(), 2 * MSS, "RFC 5681: ssthresh");
    }

    /// RFC 6582 (3.2 step 3): a full ACK exits with min(ssthresh, max(FlightSize, SMSS) + SMSS).
    #[test]
    fn rfc6582_3_2_step3_full_ack_exits() {
        let mut c = recovering();
        assert_eq!(c.new_ack(10 * MSS, 10 * MSS, 0), NewAck::Advance);
        assert!(!c.r.in_recovery());
        assert_eq!(c.cwnd(), 2 * MSS, "nothing outstanding: SMSS + SMSS");
        let mut c = recovering();
        c.new_ack(10 * MSS, 10 * MSS, 6 * MSS);
        assert_eq!(c.cwnd(), 5 * MSS, "capped at ssthresh");
    }

    /// RFC 6582 (3.2 step 2): after a timeout, duplicate ACKs that do not cover
    /// more than `recover` neither retransmit nor touch ssthresh.
    #[test]
    fn rfc6582_3_2_step2_recover_guards_after_timeout() {
        let mut c = cc();
        c.rto(10 * MSS, 10 * MSS);
        let ssthresh = c.w.ssthresh();
        for _ in 0..5 {
            assert!(!c.dup(2 * MSS, MSS, 10 * MSS));
        }
        // Exactly at recover still does not cover more than it.
        c.new_ack(8 * MSS, 10 * MSS, MSS);
        for _ in 0..3 {
            assert!(!c.dup(10 * MSS, MSS, 11 * MSS));
        }
        assert_eq!(c.w.ssthresh(), ssthresh);
        c.new_ack(MSS, 11 * MSS, 4 * MSS);
        for _ in 0..2 {
            assert!(!c.dup(11 * MSS, 4 * MSS, 15 * MSS));
        }
        assert!(c.dup(11 * MSS, 4 * MSS, 15 * MSS), "beyond recover: a new loss");
    }

    /// ns-2.35 `TcpAgent::recv` (`dupack_idle`): with nothing outstanding the
    /// threshold-th duplicate cuts the window, outside recovery and with
    /// nothing to resend; RFC 6582's guard holds such a cut back while the ACK
    /// does not pass `recover`, and an ACK of new data starts the count again.
    #[test]
    fn ns2_duplicates_with_nothing_outstanding_cut_the_window() {
        let mut c = cc();
        let idle =
            |c: &mut Cc, ack: u64| (0..3).map(|_| c.r.on_idle_dup_ack(&mut c.w, ack, ack, None)).collect::<Vec<_>>();
        c.new_ack(10 * MSS, 10 * MSS, 0);
        assert_eq!(idle(&mut c, 10 * MSS), [false, false, true]);
        assert!(!c.r.in_recovery());
        assert_eq!((c.w.ssthresh(), c.cwnd(), c.r.recover()), (2 * MSS, 2 * MSS, Some(10 * MSS)));
        assert_eq!(idle(&mut c, 10 * MSS), [false; 3], "a fourth to sixth do not count again");
        c.rto(MSS, 12 * MSS);
        c.new_ack(2 * MSS, 12 * MSS, 0);
        assert_eq!(idle(&mut c, 12 * MSS), [false; 3], "within recover after a timeout");
        c.new_ack(MSS, 13 * MSS, 0);
        assert_eq!(idle(&mut c, 13 * MSS), [false, false, true], "beyond recover");
    }

    /// ns-2.35 `RenoTcpAgent::dupack_action` (`bug_fix_`): once a fast
    /// recovery has exited on a new ACK, or after a timeout, Reno's duplicate
    /// ACKs that do not pass `recover` do not fast-retransmit (NewReno's RFC
    /// 6582 guard). RFC 5681 Reno has no such wait: a second loss in the
    /// window gets its own fast retransmit.
    #[test]
    fn ns2_reno_keeps_the_recover_guard() {
        // Three duplicate ACKs, every one delivered: did one fast-retransmit?
        let dupacks = |c: &mut Cc, ack: u64| (0..3).fold(false, |fr, _| c.dup(ack, MSS, 12 * MSS) | fr);
        for guard in [false, true] {
            let mut c = Cc::new(LossRecovery::Reno, 3);
            c.r = c.r.clone().with_reno_guard(guard);
            assert!(dupacks(&mut c, 0), "a first loss fast-retransmits");
            c.new_ack(2 * MSS, 2 * MSS, 9 * MSS); // a partial ACK: Reno leaves recovery
            assert_eq!(dupacks(&mut c, 2 * MSS), !guard, "a second loss in the window, guard {guard}");
            c.rto(10 * MSS, 12 * MSS);
            c.new_ack(MSS, 3 * MSS, 9 * MSS);
            assert_eq!(dupacks(&mut c, 3 * MSS), !guard, "after a timeout, guard {guard}");
            c.new_ack(9 * MSS, 12 * MSS + 1, MSS);
            assert!(dupacks(&mut c, 12 * MSS + 1), "beyond recover: a new loss, guard {guard}");
        }
    }

    /// RFC 5681 (3.2 step 6): under Reno, a partial ACK is an ACK of new data
    /// like any other: cwnd = ssthresh, recovery ends, nothing is retransmitted.
    #[test]
    fn rfc5681_3_2_step6_reno_exits_on_any_new_ack() {
        let mut c = Cc::new(LossRecovery::Reno, 3);
        for _ in 0..3 {
            c.dup(0, 10 * MSS, 10 * MSS);
        }
        assert!(c.r.in_recovery());
        assert_eq!(c.new_ack(3 * MSS, 3 * MSS, 7 * MSS), NewAck::Advance);
        assert!(!c.r.in_recovery());
        assert_eq!(c.cwnd(), 5 * MSS);
    }

    /// RFC 5681 (3.2): Reno has no `recover` guard — duplicate ACKs after a
    /// timeout may fast-retransmit again.
    #[test]
    fn rfc5681_3_2_reno_has_no_recover_guard() {
        let mut c = Cc::new(LossRecovery::Reno, 3);
        c.rto(10 * MSS, 10 * MSS);
        assert!(!c.dup(2 * MSS, MSS, 10 * MSS));
        assert!(!c.dup(2 * MSS, MSS, 10 * MSS));
        assert!(c.dup(2 * MSS, MSS, 10 * MSS));
    }

    /// RFC 6582 (3.2 step 4): a timeout records SND.MAX in `recover` and exits
    /// fast recovery; the window takes the loss window (`tcp::cc`).
    #[test]
    fn rfc6582_3_2_step4_timeout_exits_recovery() {
        let mut c = recovering();
        c.rto(10 * MSS, 12 * MSS);
        assert!(!c.r.in_recovery());
        assert_eq!((c.r.recover(), c.r.dupacks()), (Some(12 * MSS), 0));
        assert_eq!((c.cwnd(), c.w.ssthresh()), (MSS, 5 * MSS));
    }
}
