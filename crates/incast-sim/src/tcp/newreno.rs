//! Congestion control and loss recovery: Reno and NewReno (RFC 5681 + RFC 6582).
//!
//! **Models:** slow start and congestion avoidance (RFC 5681 §3.1), fast
//! retransmit / fast recovery on the `dupack_threshold`-th duplicate ACK with
//! window inflation (RFC 5681 §3.2), the loss window after a retransmission
//! timeout, and the restart window after idle (RFC 5681 §4.1; the sender
//! decides when, see `tcp::idle_restart`). One recovery procedure serves both
//! variants: NewReno (RFC 6582 §3.2) adds partial-ACK retransmissions and the
//! `recover` guard against spurious fast retransmits after a timeout; Reno
//! (`TcpVariant::Reno`, RFC 5681 §3.2 alone) leaves recovery on any ACK of
//! new data with cwnd = ssthresh, so a second loss in the window waits for
//! more duplicate ACKs or the timer (FAST08 §5.1.1). With `slow_start` off,
//! cwnd grows by congestion avoidance only, from the first ACK and after every
//! timeout (FAST08 §5.1.3). `TcpVariant::Cubic` runs the NewReno recovery
//! with two hooks into `tcp::cubic` (RFC 9438): the congestion-avoidance
//! increase, and ssthresh = max(cwnd·β_cubic, 2·SMSS) at each loss event.
//! **Deliberately different:** `recover` starts unset rather than at the
//! ISS, so a loss of the very first segment can still fast-retransmit. The
//! retransmission timer is reset by the first partial ACK only — the
//! "Impatient" variant of RFC 6582 §4, as its §3.2 step 3 specifies — so later
//! partial ACKs do not restart it as RFC 6298 (5.3) alone would (Linux rearms
//! on every ACK of new data). Slow start off is a growth rule (cwnd < ssthresh
//! never selects slow start), not an ssthresh value: ssthresh starts at the
//! initial window and keeps its RFC 5681 values, so it still sizes recovery.
//! With SACK on, RFC 6675 (`tcp::sack`) replaces this recovery procedure;
//! this module then only sizes the window ([`NewReno::on_sack_recovery`]),
//! and undoes a spurious timeout's reduction ([`NewReno::undo`], `tcp::spurious`).
//! **Not modelled:** appropriate byte counting (RFC 3465), ECN, the
//! gradual cwnd decay of RFC 2861 / RFC 7661 after idle or
//! application-limited periods.
//!
//! Sequence offsets: `recover` holds one past the highest byte sent
//! (SND.MAX), so the RFC's "covers more than recover" is `ack > recover` and
//! "acknowledges all of the data up to and including recover" is `ack >= recover`.

use super::cubic::Cubic;
use super::{CubicConfig, TcpVariant};
use crate::time::{SimDuration, SimTime};

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

/// Reno/NewReno congestion state of one sender.
#[derive(Clone, Debug)]
pub struct NewReno {
    smss: u64,
    threshold: u32,
    variant: TcpVariant,
    slow_start: bool,
    /// Initial window in bytes (IW).
    iw: u64,
    cwnd: u64,
    ssthresh: u64,
    /// SND.MAX when the last fast retransmit or timeout happened.
    recover: Option<u64>,
    in_recovery: bool,
    /// No partial ACK seen yet in this recovery episode.
    first_partial: bool,
    dupacks: u32,
    /// Cubic window growth and decrease (`TcpVariant::Cubic` only).
    cubic: Option<Cubic>,
}

impl NewReno {
    /// Initial NewReno state with slow start: cwnd = `init_cwnd`·SMSS,
    /// ssthresh arbitrarily high.
    pub fn new(smss: u32, init_cwnd: u32, dupack_threshold: u32) -> Self {
        let smss = smss as u64;
        let iw = smss * init_cwnd.max(1) as u64;
        NewReno {
            smss,
            threshold: dupack_threshold.max(1),
            variant: TcpVariant::NewReno,
            slow_start: true,
            iw,
            cwnd: iw,
            // RFC 5681 (3.1): "The initial value of ssthresh SHOULD be set
            // arbitrarily high (e.g., to the size of the largest possible advertised window)"
            ssthresh: u64::MAX,
            // DEVIATION (Linux): RFC 6582 (3.2 step 1) sets recover to the ISS,
            // which would block a fast retransmit of segment 0; Linux has no guard
            // before its first recovery, so neither do we.
            recover: None,
            in_recovery: false,
            first_partial: true,
            dupacks: 0,
            cubic: None,
        }
    }

    /// The same state running `variant`, with slow start on or off.
    pub fn with_options(mut self, variant: TcpVariant, slow_start: bool) -> Self {
        self.variant = variant;
        self.slow_start = slow_start;
        self = self.with_cubic(CubicConfig::default());
        if !slow_start {
            // Additive increase from the start (FAST08 §5.1.3): ssthresh = IW
            // so the state reads as congestion avoidance.
            self.ssthresh = self.iw;
        }
        self
    }

    /// Cubic's constants, when the variant is Cubic (otherwise no effect).
    pub fn with_cubic(mut self, cfg: CubicConfig) -> Self {
        self.cubic = (self.variant == TcpVariant::Cubic).then(|| Cubic::new(self.smss, cfg));
        self
    }

    /// The Cubic state, when the variant is Cubic.
    #[inline]
    pub fn cubic(&self) -> Option<&Cubic> {
        self.cubic.as_ref()
    }

    /// Congestion window in bytes.
    #[inline]
    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }
    /// Slow-start threshold in bytes.
    #[inline]
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
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
    /// `recover` (one past the highest byte sent at the last loss event).
    #[inline]
    pub fn recover(&self) -> Option<u64> {
        self.recover
    }

    /// An ACK advanced SND.UNA by `acked` bytes to `ack` at `now`; `flight` is
    /// the data still outstanding after it and `srtt` the smoothed RTT (zero
    /// before a sample), which only Cubic's congestion avoidance reads.
    #[inline]
    pub fn on_new_ack(&mut self, acked: u64, ack: u64, flight: u64, now: SimTime, srtt: SimDuration) -> NewAck {
        self.dupacks = 0;
        if self.in_recovery {
            if self.variant == TcpVariant::Reno {
                // RFC 5681 (3.2 step 6): "When the next ACK arrives that acknowledges
                // previously unacknowledged data, a TCP MUST set cwnd to ssthresh"
                self.cwnd = self.ssthresh;
                self.in_recovery = false;
                return NewAck::Advance;
            }
            let recover = self.recover.unwrap_or(0);
            if ack >= recover {
                // RFC 6582 (3.2 step 3): full acknowledgment — "Set cwnd to either
                // (1) min (ssthresh, max(FlightSize, SMSS) + SMSS) or (2) ssthresh"; (1).
                self.cwnd = self.ssthresh.min(flight.max(self.smss) + self.smss);
                // RFC 6582 (3.2 step 3): "Exit the fast recovery procedure."
                self.in_recovery = false;
                return NewAck::Advance;
            }
            // RFC 6582 (3.2 step 3): partial acknowledgment — "Deflate the
            // congestion window by the amount of new data acknowledged ...
            // If the partial ACK acknowledges at least one SMSS of new data,
            // then add back SMSS bytes to the congestion window."
            self.cwnd = self.cwnd.saturating_sub(acked);
            if acked >= self.smss {
                self.cwnd += self.smss;
            }
            // RFC 6582 (3.2 step 3): "For the first partial ACK that arrives
            // during fast recovery, also reset the retransmit timer."
            let reset_timer = self.first_partial;
            self.first_partial = false;
            return NewAck::Partial { reset_timer };
        }
        if self.slow_start && self.cwnd < self.ssthresh {
            // RFC 5681 (3.1): "cwnd += min (N, SMSS)" (2) during slow start.
            self.cwnd += acked.min(self.smss);
        } else if let Some(cubic) = &mut self.cubic {
            // RFC 9438 (4.2–4.5): Cubic's window function in congestion avoidance.
            self.cwnd = cubic.on_ack(self.cwnd, acked, now, srtt);
        } else {
            // RFC 5681 (3.1): "cwnd += SMSS*SMSS/cwnd" (3) "... if the above
            // formula yields 0, the result SHOULD be rounded up to 1 byte."
            self.cwnd += (self.smss * self.smss / self.cwnd).max(1);
        }
        NewAck::Advance
    }

    /// A duplicate ACK (RFC 5681 §2) of `ack`; `flight` is the outstanding data
    /// and `snd_max` one past the highest byte sent. Returns true when the
    /// first unacknowledged segment must be fast-retransmitted now.
    pub fn on_dup_ack(&mut self, ack: u64, flight: u64, snd_max: u64) -> bool {
        self.dupacks = self.dupacks.saturating_add(1);
        if self.in_recovery {
            // RFC 5681 (3.2 step 4): "For each additional duplicate ACK received
            // (after the third), cwnd MUST be incremented by SMSS."
            self.cwnd += self.smss;
            return false;
        }
        if self.dupacks != self.threshold {
            return false;
        }
        // RFC 6582 (3.2 step 2): "the TCP sender first checks the value of recover
        // to see if the Cumulative Acknowledgment field covers more than recover.
        // ... If not, the TCP does not enter fast retransmit and does not reset ssthresh."
        if self.variant != TcpVariant::Reno && self.recover.is_some_and(|r| ack <= r) {
            return false;
        }
        self.ssthresh = match &mut self.cubic {
            // RFC 9438 (4.6): ssthresh = max(cwnd·β_cubic, 2·SMSS), see `tcp::cubic`.
            Some(cubic) => cubic.on_congestion(self.cwnd),
            // RFC 5681 (3.2 step 2): "a TCP MUST set ssthresh to no more than the
            // value given in equation (4)": "ssthresh = max (FlightSize / 2, 2*SMSS)"
            None => (flight / 2).max(2 * self.smss),
        };
        // RFC 6582 (3.2 step 2): "the value of recover is incremented to the value
        // of the highest sequence number transmitted by the TCP so far."
        self.recover = Some(snd_max);
        // RFC 5681 (3.2 step 3): "The lost segment starting at SND.UNA MUST be
        // retransmitted and cwnd set to ssthresh plus 3*SMSS." — threshold·SMSS.
        self.cwnd = self.ssthresh + self.threshold as u64 * self.smss;
        self.in_recovery = true;
        self.first_partial = true;
        true
    }

    /// RFC 6675 loss recovery begins with `flight` bytes outstanding: cwnd and
    /// ssthresh both drop to RFC 5681's eq. (4) (or Cubic's β), with no
    /// inflation — the SACK sender counts `pipe` instead (`tcp::sack`).
    pub fn on_sack_recovery(&mut self, flight: u64) {
        self.ssthresh = match &mut self.cubic {
            Some(cubic) => cubic.on_congestion(self.cwnd),
            // RFC 6675 (5 step 4.2): "ssthresh = cwnd = (FlightSize / 2)", with
            // RFC 5681's floor of 2·SMSS.
            None => (flight / 2).max(2 * self.smss),
        };
        self.cwnd = self.ssthresh;
        self.dupacks = 0;
    }

    /// Restart from a window of `cwnd` bytes, in slow start up to ssthresh
    /// (GIP §V-C, at the head of each stripe unit; `tcp::gip`).
    pub fn restart_at(&mut self, cwnd: u64) {
        self.cwnd = cwnd;
        if let Some(cubic) = &mut self.cubic {
            cubic.on_idle_restart();
        }
    }

    /// An ECN congestion response set the window to `cwnd` bytes; ssthresh
    /// follows (RFC 8257 §3.3 / Linux `dctcp_ssthresh`, `tcp::dctcp`).
    pub fn on_ecn_cut(&mut self, cwnd: u64) {
        self.cwnd = cwnd;
        self.ssthresh = cwnd;
    }

    /// Rude TCP turned off at once with `flight` bytes outstanding, more than
    /// cwnd allows: a congestion event (RUDE §3.2), ssthresh = cwnd =
    /// max(flight/2, 2·SMSS) as RFC 5681's eq. (4).
    pub fn on_rude_exit(&mut self, flight: u64) {
        self.ssthresh = (flight / 2).max(2 * self.smss);
        self.cwnd = self.ssthresh;
    }

    /// Limit cwnd to `max` bytes (F-RTO step 3a, `tcp::spurious`; GIP Pattern 123).
    pub fn cap_cwnd(&mut self, max: u64) {
        self.cwnd = self.cwnd.min(max);
    }

    /// Undo a spurious timeout: cwnd and ssthresh return to at least
    /// `prior_cwnd` and `prior_ssthresh` (Linux `tcp_undo_cwnd_reduction`),
    /// and `recover` moves to `snd_una` (RFC 5682 §2.1 step 3b).
    pub fn undo(&mut self, prior_cwnd: u64, prior_ssthresh: u64, snd_una: u64) {
        self.cwnd = self.cwnd.max(prior_cwnd);
        self.ssthresh = self.ssthresh.max(prior_ssthresh);
        self.recover = Some(snd_una);
    }

    /// The sender resumes after an idle period longer than the RTO.
    pub fn on_idle_restart(&mut self) {
        // RFC 5681 (4.1): "TCP SHOULD set cwnd to no more than RW before beginning
        // transmission if the TCP has not sent data in an interval exceeding the
        // retransmission timeout." — "RW = min(IW,cwnd)"
        self.cwnd = self.cwnd.min(self.iw);
        if let Some(cubic) = &mut self.cubic {
            cubic.on_idle_restart();
        }
    }

    /// The retransmission timer expired with `flight` bytes outstanding.
    /// `repeated` is true when the segment at SND.UNA was already
    /// retransmitted by the timer (no progress since the previous timeout).
    pub fn on_rto(&mut self, flight: u64, snd_max: u64, repeated: bool) {
        // RFC 5681 (3.1): "when a TCP sender detects segment loss using the
        // retransmission timer and the given segment has already been
        // retransmitted by way of the retransmission timer at least once, the
        // value of ssthresh is held constant."
        if !repeated {
            self.ssthresh = match &mut self.cubic {
                // RFC 9438 (4.8): "CUBIC follows Reno to reduce cwnd [RFC5681] but
                // sets ssthresh using β_cubic (same as in Section 4.6)".
                Some(cubic) => cubic.on_congestion(self.cwnd),
                // RFC 5681 (3.1): "ssthresh = max (FlightSize / 2, 2*SMSS)" (4)
                None => (flight / 2).max(2 * self.smss),
            };
        }
        if let Some(cubic) = &mut self.cubic {
            cubic.on_timeout();
        }
        // RFC 5681 (3.1): "upon a timeout ... cwnd MUST be set to no more than the
        // loss window, LW, which equals 1 full-sized segment"
        self.cwnd = self.smss;
        // RFC 6582 (3.2 step 4): "After a retransmit timeout, record the highest
        // sequence number transmitted in the variable recover, and exit the fast
        // recovery procedure if applicable."
        self.recover = Some(snd_max);
        self.in_recovery = false;
        self.dupacks = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const T0: SimTime = SimTime::ZERO;

    fn cc() -> NewReno {
        NewReno::new(MSS as u32, 10, 3)
    }

    /// Enter recovery with 10 segments outstanding and SND.MAX = 10·MSS.
    fn recovering() -> NewReno {
        let mut c = cc();
        assert!(!c.on_dup_ack(0, 10 * MSS, 10 * MSS));
        assert!(!c.on_dup_ack(0, 10 * MSS, 10 * MSS));
        assert!(c.on_dup_ack(0, 10 * MSS, 10 * MSS));
        c
    }

    /// RFC 5681 (3.1): slow start adds min(N, SMSS) per ACK.
    #[test]
    fn rfc5681_3_1_slow_start_adds_min_n_smss() {
        let mut c = cc();
        assert_eq!(c.cwnd(), 10 * MSS);
        c.on_new_ack(MSS, MSS, 0, T0, SimDuration::ZERO);
        assert_eq!(c.cwnd(), 11 * MSS);
        c.on_new_ack(3 * MSS, 4 * MSS, 0, T0, SimDuration::ZERO);
        assert_eq!(c.cwnd(), 12 * MSS, "a stretch ACK still adds one SMSS");
        c.on_new_ack(100, 4 * MSS + 100, 0, T0, SimDuration::ZERO);
        assert_eq!(c.cwnd(), 12 * MSS + 100);
    }

    /// RFC 5681 (3.1): congestion avoidance adds SMSS·SMSS/cwnd per ACK, at least 1 byte.
    #[test]
    fn rfc5681_3_1_congestion_avoidance_adds_smss_squared_over_cwnd() {
        let mut c = cc();
        c.on_rto(8 * MSS, 8 * MSS, false);
        assert_eq!((c.cwnd(), c.ssthresh()), (MSS, 4 * MSS));
        for _ in 0..3 {
            c.on_new_ack(MSS, 0, 0, T0, SimDuration::ZERO);
        }
        assert_eq!(c.cwnd(), 4 * MSS);
        c.on_new_ack(MSS, 0, 0, T0, SimDuration::ZERO);
        assert_eq!(c.cwnd(), 4 * MSS + 250);
        c.on_new_ack(MSS, 0, 0, T0, SimDuration::ZERO);
        assert_eq!(c.cwnd(), 4 * MSS + 250 + 1_000_000 / 4250);
        let mut big = NewReno::new(1, 1, 3);
        big.on_rto(100, 100, false);
        big.cwnd = 1000;
        big.on_new_ack(1, 0, 0, T0, SimDuration::ZERO);
        assert_eq!(big.cwnd(), 1001, "1·1/1000 rounds up to 1 byte");
    }

    /// RFC 5681 (3.2 step 2): the third duplicate ACK sets ssthresh by eq. (4),
    /// cwnd = ssthresh + 3·SMSS, and asks for the retransmission.
    #[test]
    fn rfc5681_3_2_step2_third_dup_ack_enters_fast_recovery() {
        let c = recovering();
        assert!(c.in_recovery());
        assert_eq!(c.ssthresh(), 5 * MSS);
        assert_eq!(c.cwnd(), 8 * MSS);
        assert_eq!(c.recover(), Some(10 * MSS));
        let mut small = cc();
        for _ in 0..3 {
            small.on_dup_ack(0, 2 * MSS, 2 * MSS);
        }
        assert_eq!(small.ssthresh(), 2 * MSS, "floor of 2·SMSS");
    }

    /// RFC 5681 (3.2 step 3): a threshold other than 3 inflates by threshold·SMSS.
    #[test]
    fn rfc5681_3_2_step3_other_threshold_inflates_by_threshold() {
        let mut c = NewReno::new(MSS as u32, 10, 2);
        assert!(!c.on_dup_ack(0, 10 * MSS, 10 * MSS));
        assert!(c.on_dup_ack(0, 10 * MSS, 10 * MSS));
        assert_eq!(c.cwnd(), 7 * MSS);
    }

    /// RFC 5681 (3.2 step 4): each further duplicate ACK inflates cwnd by SMSS.
    #[test]
    fn rfc5681_3_2_step4_further_dup_acks_inflate() {
        let mut c = recovering();
        assert!(!c.on_dup_ack(0, 10 * MSS, 10 * MSS));
        assert!(!c.on_dup_ack(0, 10 * MSS, 10 * MSS));
        assert_eq!(c.cwnd(), 10 * MSS);
    }

    /// RFC 6582 (3.2 step 3): a partial ACK deflates by the amount acked, adds
    /// back one SMSS, and resets the timer on the first partial ACK only.
    #[test]
    fn rfc6582_3_2_step3_partial_ack_deflates() {
        let mut c = recovering();
        c.on_dup_ack(0, 10 * MSS, 10 * MSS);
        assert_eq!(c.cwnd(), 9 * MSS);
        assert_eq!(
            c.on_new_ack(3 * MSS, 3 * MSS, 7 * MSS, T0, SimDuration::ZERO),
            NewAck::Partial { reset_timer: true }
        );
        assert_eq!(c.cwnd(), 9 * MSS - 3 * MSS + MSS);
        assert_eq!(c.on_new_ack(MSS, 4 * MSS, 6 * MSS, T0, SimDuration::ZERO), NewAck::Partial { reset_timer: false });
        assert_eq!(c.cwnd(), 7 * MSS);
        assert_eq!(
            c.on_new_ack(500, 4 * MSS + 500, 6 * MSS, T0, SimDuration::ZERO),
            NewAck::Partial { reset_timer: false }
        );
        assert_eq!(c.cwnd(), 7 * MSS - 500, "less than one SMSS acked: no add-back");
        assert!(c.in_recovery());
    }

    /// RFC 6582 (3.2 step 3): a full ACK exits with min(ssthresh, max(FlightSize, SMSS) + SMSS).
    #[test]
    fn rfc6582_3_2_step3_full_ack_exits() {
        let mut c = recovering();
        assert_eq!(c.on_new_ack(10 * MSS, 10 * MSS, 0, T0, SimDuration::ZERO), NewAck::Advance);
        assert!(!c.in_recovery());
        assert_eq!(c.cwnd(), 2 * MSS, "nothing outstanding: SMSS + SMSS");
        let mut c = recovering();
        c.on_new_ack(10 * MSS, 10 * MSS, 6 * MSS, T0, SimDuration::ZERO);
        assert_eq!(c.cwnd(), 5 * MSS, "capped at ssthresh");
    }

    /// RFC 6582 (3.2 step 2): after a timeout, duplicate ACKs that do not cover
    /// more than `recover` neither retransmit nor touch ssthresh.
    #[test]
    fn rfc6582_3_2_step2_recover_guards_after_timeout() {
        let mut c = cc();
        c.on_rto(10 * MSS, 10 * MSS, false);
        let ssthresh = c.ssthresh();
        for _ in 0..5 {
            assert!(!c.on_dup_ack(2 * MSS, MSS, 10 * MSS));
        }
        // Exactly at recover still does not cover more than it.
        c.on_new_ack(8 * MSS, 10 * MSS, MSS, T0, SimDuration::ZERO);
        for _ in 0..3 {
            assert!(!c.on_dup_ack(10 * MSS, MSS, 11 * MSS));
        }
        assert_eq!(c.ssthresh(), ssthresh);
        c.on_new_ack(MSS, 11 * MSS, 4 * MSS, T0, SimDuration::ZERO);
        for _ in 0..2 {
            assert!(!c.on_dup_ack(11 * MSS, 4 * MSS, 15 * MSS));
        }
        assert!(c.on_dup_ack(11 * MSS, 4 * MSS, 15 * MSS), "beyond recover: a new loss");
    }

    /// RFC 5681 (3.2 step 6): under Reno, a partial ACK is an ACK of new data
    /// like any other: cwnd = ssthresh, recovery ends, nothing is retransmitted.
    #[test]
    fn rfc5681_3_2_step6_reno_exits_on_any_new_ack() {
        let mut c = NewReno::new(MSS as u32, 10, 3).with_options(TcpVariant::Reno, true);
        for _ in 0..3 {
            c.on_dup_ack(0, 10 * MSS, 10 * MSS);
        }
        assert!(c.in_recovery());
        assert_eq!(c.on_new_ack(3 * MSS, 3 * MSS, 7 * MSS, T0, SimDuration::ZERO), NewAck::Advance);
        assert!(!c.in_recovery());
        assert_eq!(c.cwnd(), 5 * MSS);
    }

    /// RFC 5681 (3.2): Reno has no `recover` guard — duplicate ACKs after a
    /// timeout may fast-retransmit again.
    #[test]
    fn rfc5681_3_2_reno_has_no_recover_guard() {
        let mut c = NewReno::new(MSS as u32, 10, 3).with_options(TcpVariant::Reno, true);
        c.on_rto(10 * MSS, 10 * MSS, false);
        assert!(!c.on_dup_ack(2 * MSS, MSS, 10 * MSS));
        assert!(!c.on_dup_ack(2 * MSS, MSS, 10 * MSS));
        assert!(c.on_dup_ack(2 * MSS, MSS, 10 * MSS));
    }

    /// RFC 5681 (4.1): the restart window is min(IW, cwnd).
    #[test]
    fn rfc5681_4_1_restart_window_is_min_iw_cwnd() {
        let mut c = cc();
        c.cwnd = 25 * MSS;
        c.on_idle_restart();
        assert_eq!(c.cwnd(), 10 * MSS);
        c.cwnd = 4 * MSS;
        c.on_idle_restart();
        assert_eq!(c.cwnd(), 4 * MSS);
    }

    /// FAST08 §5.1.3: slow start off starts in congestion avoidance (ssthresh = IW).
    #[test]
    fn rfc5681_3_1_slow_start_off_starts_in_congestion_avoidance() {
        let mut c = NewReno::new(MSS as u32, 10, 3).with_options(TcpVariant::NewReno, false);
        assert_eq!(c.ssthresh(), 10 * MSS);
        c.on_new_ack(MSS, MSS, 0, T0, SimDuration::ZERO);
        assert_eq!(c.cwnd(), 10 * MSS + 100);
    }

    /// RFC 5681 (3.1): a timeout sets cwnd to the loss window, ssthresh by eq. (4),
    /// and holds ssthresh when the same segment times out again.
    #[test]
    fn rfc5681_3_1_timeout_sets_loss_window() {
        let mut c = recovering();
        c.on_rto(10 * MSS, 10 * MSS, false);
        assert_eq!((c.cwnd(), c.ssthresh()), (MSS, 5 * MSS));
        assert!(!c.in_recovery());
        c.on_rto(MSS, 10 * MSS, true);
        assert_eq!((c.cwnd(), c.ssthresh()), (MSS, 5 * MSS));
    }
}
