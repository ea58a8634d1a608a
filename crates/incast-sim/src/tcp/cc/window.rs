//! The congestion window and slow-start threshold, moved by one algorithm.
//!
//! **Models:** cwnd and ssthresh as every algorithm shares them (Linux keeps
//! them in `tcp_sock`, outside `tcp_congestion_ops`): the initial window;
//! slow start, cwnd += min(N, SMSS) per ACK while cwnd < ssthresh (RFC 5681
//! §3.1 eq. 2), otherwise the algorithm's congestion avoidance; ssthresh
//! from the algorithm at each loss event; the loss window of one SMSS after
//! a timeout, ssthresh held when the same segment times out again (§3.1);
//! the restart window min(IW, cwnd) after idle (§4.1; the sender decides
//! when, see `tcp::idle_restart`); and the direct settings other mechanisms
//! make — fast recovery's inflation (`tcp::newreno`), an ECN cut, GIP's
//! restart at a stripe-unit head, F-RTO's cap and the undo of a spurious
//! timeout (`tcp::spurious`), Rude TCP's congestion event (`tcp::rude`).
//! With `slow_start` off, cwnd grows by congestion avoidance only, from the
//! first ACK and after every timeout (FAST08 §5.1.3).
//! **Deliberately different:** slow start off is a growth rule (cwnd <
//! ssthresh never selects slow start), not an ssthresh value: ssthresh
//! starts at the initial window and keeps its RFC 5681 values, so it still
//! sizes recovery.
//! With `cwnd_validation = "linux"` an ACK grows the window only while it
//! limits the sender (`tcp::cwnd_validation`).
//! The algorithm may end slow start on an RTT sample (Cubic's HyStart,
//! `tcp::cc::hystart`): ssthresh then takes cwnd's value. After idle,
//! Linux's restart instead of RFC 5681's halves cwnd per idle RTO
//! (`tcp_cwnd_restart`, `tcp::idle_restart`). What a loss event halves is
//! `SsthreshRule`'s: RFC 5681's FlightSize, ns-2.35's window before
//! inflation, or with SACK ns-3.44's pipe (RFC 6675 `SetPipe`, the lost head
//! left out).
//! An algorithm that steers by rate (`cong_control`, BBR) owns cwnd: each
//! ACK's rate sample sets it from the window before that ACK, so what slow
//! start, congestion avoidance and loss recovery set meanwhile is
//! discarded, as Linux's `tcp_cong_control` skips `tcp_cong_avoid` and
//! `tcp_cwnd_reduction` for it; a timeout still drops it to the loss
//! window (`tcp_enter_loss`).
//! **Not modelled:** the decay of RFC 2861 / RFC 7661 over
//! application-limited periods.

use super::reno::half_flight;
use super::{Algorithm, CaState, CongestionControl, RttSample};
use crate::tcp::cwnd_validation::{CwndUsage, CwndValidation};
use crate::tcp::delivery_rate::RateSample;
use crate::time::{SimDuration, SimTime};

/// What a loss event (fast retransmit or timeout) cuts ssthresh from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SsthreshRule {
    /// RFC 5681 (3.1) eq. (4): max(FlightSize/2, 2·SMSS), from the data
    /// outstanding (which NewReno's window inflation may have pushed up to the
    /// peer window), held when the segment already timed out once.
    #[default]
    Rfc5681,
    /// ns-2.35 `TcpAgent::slowdown(CLOSE_SSTHRESH_HALF|...)`, at fast
    /// retransmit and at every timeout: `halfwin = min(cwnd_, wnd_) / 2`,
    /// `ssthresh_ = (int) halfwin` whole segments, at least 2; ns-2 keeps fast
    /// recovery's inflation in `dupwnd_`, outside `cwnd_`, so the half is of
    /// the window before inflation, and fast recovery restores `cwnd_ =
    /// halfwin`, fraction included (`tcp::newreno`).
    Ns2,
    /// ns-3.44 `TcpSocketBase::EnterRecovery` and `ReTxTimeout`: with SACK,
    /// max(pipe/2, 2·SMSS) from RFC 6675's pipe (`BytesInFlight()`: what is
    /// outstanding less what is SACKed or deemed lost, plus what was
    /// resent), the head counted lost at a fast retransmit (`MarkHeadAsLost`);
    /// held when the segment already timed out once. Without SACK, as
    /// [`SsthreshRule::Rfc5681`].
    Ns3,
}

/// cwnd, ssthresh and the algorithm that moves them.
#[derive(Clone, Debug)]
pub struct CongestionWindow {
    smss: u64,
    /// Initial window in bytes (IW).
    iw: u64,
    slow_start: bool,
    cwnd: u64,
    ssthresh: u64,
    algorithm: Algorithm,
    /// Whether the window limited the sender lately (`tcp::cwnd_validation`).
    usage: CwndUsage,
    /// Growth in whole segments acknowledged (`tcp.ca_increase = "ns3"`,
    /// [`CongestionWindow::counting_segments`]) ...
    in_segments: bool,
    /// ... the bytes acknowledged short of a segment carried.
    short_of_segment: u32,
    /// The loss-recovery state the algorithm was last told.
    ca_state: CaState,
}

impl CongestionWindow {
    /// cwnd = `init_cwnd`·`smss` bytes run by `algorithm`; with `slow_start`,
    /// ssthresh arbitrarily high, otherwise at the initial window.
    pub fn new(smss: u64, init_cwnd: u32, slow_start: bool, algorithm: Algorithm) -> Self {
        let iw = smss * init_cwnd.max(1) as u64;
        CongestionWindow {
            smss,
            iw,
            slow_start,
            cwnd: iw,
            ssthresh: if slow_start {
                // RFC 5681 (3.1): "The initial value of ssthresh SHOULD be set
                // arbitrarily high (e.g., to the size of the largest possible advertised window)"
                u64::MAX
            } else {
                // Additive increase from the start (FAST08 §5.1.3): ssthresh = IW
                // so the state reads as congestion avoidance.
                iw
            },
            algorithm,
            usage: CwndUsage::new(CwndValidation::Off),
            in_segments: false,
            short_of_segment: 0,
            ca_state: CaState::Open,
        }
    }

    /// True when growth counts whole segments ([`CongestionWindow::counting_segments`]).
    #[inline]
    pub fn counts_segments(&self) -> bool {
        self.in_segments
    }

    /// The same window, grown as ns-3.44 grows it: an ACK counts the whole
    /// segments it acknowledges, the bytes short of one carried to the next
    /// (`TcpSocketBase::ProcessAck`: "segsAcked = bytesAcked /
    /// m_segmentSize", the rest in `m_bytesAckedNotProcessed`), so an ACK of
    /// a short segment alone grows nothing; slow start adds one segment for
    /// one or more, and what is left goes to congestion avoidance once cwnd
    /// reaches ssthresh (`TcpNewReno::IncreaseWindow`).
    pub fn counting_segments(mut self, on: bool) -> Self {
        self.in_segments = on;
        self
    }

    /// The same window, grown only as `rule` allows (`tcp::cwnd_validation`).
    pub fn with_validation(mut self, rule: CwndValidation) -> Self {
        self.usage = CwndUsage::new(rule);
        self
    }

    /// True when the sender must report its bursts ([`CongestionWindow::on_burst`]).
    #[inline]
    pub fn tracks_usage(&self) -> bool {
        self.usage.tracks()
    }

    /// A burst of sending ended with `flight` bytes in flight between
    /// `snd_una` and `snd_nxt`, stopped by cwnd when `cwnd_limited`.
    #[inline]
    pub fn on_burst(&mut self, snd_una: u64, snd_nxt: u64, flight: u64, cwnd_limited: bool) {
        self.usage.on_burst(snd_una, snd_nxt, flight, cwnd_limited);
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
    /// The algorithm and its state.
    #[inline]
    pub fn algorithm(&self) -> &Algorithm {
        &self.algorithm
    }
    /// True when data segments are ECN-capable (the algorithm needs ECN).
    #[inline]
    pub fn needs_ecn(&self) -> bool {
        self.algorithm.needs_ecn()
    }

    /// Set cwnd to `cwnd` bytes (fast recovery's inflation and deflation, PRR).
    #[inline]
    pub fn set_cwnd(&mut self, cwnd: u64) {
        self.cwnd = cwnd;
    }

    /// An ACK of `acked` new bytes at `now`, outside loss recovery: slow
    /// start, or the algorithm's congestion avoidance (`srtt` zero before
    /// the first sample).
    #[inline(always)]
    pub fn on_ack(&mut self, acked: u64, now: SimTime, srtt: SimDuration) {
        // Linux tcp_reno_cong_avoid / cubictcp_cong_avoid: "if (!tcp_is_cwnd_limited(sk)) return;"
        if !self.usage.may_grow(self.cwnd, self.ssthresh) {
            return;
        }
        if self.in_segments {
            return self.grow_in_segments(acked, now, srtt);
        }
        if self.slow_start && self.cwnd < self.ssthresh {
            // RFC 5681 (3.1): "cwnd += min (N, SMSS)" (2) during slow start.
            self.cwnd += acked.min(self.smss);
        } else {
            self.cwnd = self.algorithm.cong_avoid(self.cwnd, acked, now, srtt);
        }
    }

    /// [`CongestionWindow::on_ack`] in whole segments (`counting_segments`).
    // Cold and out of line: only ns-3's increase (`tcp.ca_increase = "ns3"`)
    // counts whole segments, and the default byte-counting path stays short.
    #[cold]
    #[inline(never)]
    fn grow_in_segments(&mut self, acked: u64, now: SimTime, srtt: SimDuration) {
        let mut segments = acked / self.smss;
        let mut rest = u64::from(self.short_of_segment) + acked % self.smss;
        if rest >= self.smss {
            segments += 1;
            rest -= self.smss;
        }
        self.short_of_segment = rest as u32; // below one segment
        if self.slow_start && self.cwnd < self.ssthresh && segments > 0 {
            self.cwnd += self.smss;
            segments -= 1;
        }
        if self.cwnd >= self.ssthresh && segments > 0 {
            self.cwnd = self.algorithm.cong_avoid(self.cwnd, segments * self.smss, now, srtt);
        }
    }

    /// An ACK at `now` gave the RTT sample `rtt` of the newest segment it
    /// covers, with SND.UNA `snd_una` and SND.NXT `snd_nxt`: the algorithm
    /// may end slow start (Linux `hystart_update`: "tp->snd_ssthresh = tcp_snd_cwnd(tp)").
    // Inline always: it runs on every ACK with an RTT sample, and with
    // `#[inline]` alone LLVM keeps it out of line.
    #[inline(always)]
    pub fn on_rtt_sample(&mut self, now: SimTime, rtt: SimDuration, snd_una: u64, snd_nxt: u64) {
        let in_slow_start = self.slow_start && self.cwnd < self.ssthresh;
        let sample = RttSample { now, rtt, snd_una, snd_nxt, cwnd: self.cwnd, in_slow_start };
        if self.algorithm.on_rtt_sample(&sample) {
            self.ssthresh = self.cwnd;
        }
    }

    /// A loss event with `flight` bytes outstanding: ssthresh from the
    /// algorithm, returned.
    #[inline]
    pub fn on_loss(&mut self, flight: u64) -> u64 {
        self.ssthresh = self.algorithm.ssthresh(self.cwnd, flight);
        self.ssthresh
    }

    /// The retransmission timer expired with `flight` bytes outstanding,
    /// marking `lost` bytes lost. `repeated` is true when the segment at
    /// SND.UNA was already retransmitted by the timer (no progress since the
    /// previous timeout).
    pub fn on_rto(&mut self, flight: u64, repeated: bool, lost: u64) {
        // RFC 5681 (3.1): "when a TCP sender detects segment loss using the
        // retransmission timer and the given segment has already been
        // retransmitted by way of the retransmission timer at least once, the
        // value of ssthresh is held constant."
        if !repeated {
            self.on_loss(flight);
        }
        self.algorithm.on_timeout(lost);
        // RFC 5681 (3.1): "upon a timeout ... cwnd MUST be set to no more than the
        // loss window, LW, which equals 1 full-sized segment"
        self.cwnd = self.smss;
        // Linux tcp_enter_loss: "tcp_set_ca_state(sk, TCP_CA_Loss)", at every timeout.
        self.ca_state = CaState::Loss;
        self.algorithm.set_state(CaState::Loss);
    }

    /// The handshake at `now` gave the RTT sample `rtt` (Linux's `init` runs after it).
    pub fn on_init(&mut self, now: SimTime, rtt: SimDuration) {
        self.algorithm.on_init(now, rtt, self.cwnd);
    }

    /// The sender's loss-recovery state is `state`: the algorithm hears of
    /// each change (Linux `tcp_set_ca_state`).
    #[inline]
    pub fn set_ca_state(&mut self, state: CaState) {
        if state != self.ca_state {
            self.ca_state = state;
            self.algorithm.set_state(state);
        }
    }

    /// ns-2's `halfwin` for [`SsthreshRule::Ns2`]: half of `min(cwnd_, wnd_)`
    /// with `peer_wnd` as `wnd_` and cwnd taken before NewReno's inflation
    /// (`inflated`: in fast recovery, where the window before inflation is
    /// ssthresh).
    pub fn ns2_half(&self, inflated: bool, peer_wnd: u64) -> u64 {
        let cwnd = if inflated { self.cwnd.min(self.ssthresh) } else { self.cwnd };
        cwnd.min(peer_wnd) / 2
    }

    /// The "flight" whose half under RFC 5681's eq. (4) is ns-2's
    /// `ssthresh_ = (int) halfwin`: twice `half` rounded down to whole segments.
    pub fn ns2_loss_basis(&self, half: u64) -> u64 {
        2 * (half / self.smss * self.smss)
    }

    /// The sender resumes after an idle period longer than the RTO.
    pub fn on_idle_restart(&mut self) {
        // RFC 5681 (4.1): "TCP SHOULD set cwnd to no more than RW before beginning
        // transmission if the TCP has not sent data in an interval exceeding the
        // retransmission timeout." — "RW = min(IW,cwnd)"
        self.cwnd = self.cwnd.min(self.iw);
        self.algorithm.on_restart();
    }

    /// Data goes out at `now` with nothing in flight, the last having gone
    /// out at `last_send`, application-limited when `app_limited` (Linux `CA_EVENT_TX_START`).
    #[inline]
    pub fn on_tx_start(&mut self, now: SimTime, last_send: Option<SimTime>, app_limited: bool) {
        self.algorithm.on_tx_start(now, last_send, app_limited);
    }

    /// Linux `tcp_cwnd_restart` after `idle` with no data sent, the RTO being
    /// `rto`: ssthresh = max(ssthresh, ¾·cwnd) (`tcp_current_ssthresh`), then
    /// cwnd halved "while ((delta -= icsk_rto) > 0 && cwnd > restart_cwnd)",
    /// at least RW = min(IW, cwnd). Counted in whole segments, as Linux does.
    pub fn on_linux_idle_restart(&mut self, idle: SimDuration, rto: SimDuration) {
        let segments = self.cwnd / self.smss;
        self.ssthresh = self.ssthresh.max(((segments >> 1) + (segments >> 2)) * self.smss);
        let restart = (self.iw / self.smss).min(segments);
        let (mut cwnd, mut delta) = (segments, idle.as_ps());
        while delta > rto.as_ps() && cwnd > restart {
            delta -= rto.as_ps();
            cwnd >>= 1;
        }
        self.cwnd = cwnd.max(restart).max(1) * self.smss;
        self.algorithm.on_restart();
    }

    /// Restart from a window of `cwnd` bytes, in slow start up to ssthresh
    /// (GIP §V-C, at the head of each stripe unit; `tcp::gip`).
    pub fn restart_at(&mut self, cwnd: u64) {
        self.cwnd = cwnd;
        self.algorithm.on_restart();
    }

    /// RFC 6675 loss recovery begins with `flight` bytes outstanding: cwnd and
    /// ssthresh both drop to the algorithm's ssthresh, with no inflation —
    /// the SACK sender counts `pipe` instead (`tcp::sack`).
    pub fn on_sack_recovery(&mut self, flight: u64) {
        // RFC 6675 (5 step 4.2): "ssthresh = cwnd = (FlightSize / 2)", with
        // RFC 5681's floor of 2·SMSS (or Cubic's β).
        self.cwnd = self.on_loss(flight);
    }

    /// An ACK of `acked` bytes up to `ack` with ECN-Echo `ece`, SND.NXT being
    /// `snd_nxt`, for an algorithm that needs ECN. When it calls for a cut
    /// and the sender is not `recovering`, cwnd and ssthresh both take the
    /// cut window (RFC 8257 §3.3 / Linux `dctcp_ssthresh`) and this returns
    /// true: that ACK grows nothing (Linux enters CWR).
    #[inline]
    pub fn on_ecn_echo(&mut self, acked: u64, ack: u64, ece: bool, snd_nxt: u64, recovering: bool) -> bool {
        match self.algorithm.on_ecn_echo(acked, ack, ece, snd_nxt, self.cwnd) {
            Some(cwnd) if !recovering => {
                self.cwnd = cwnd;
                self.ssthresh = cwnd;
                true
            }
            _ => false,
        }
    }

    /// Rude TCP turned off at once with `flight` bytes outstanding, more than
    /// cwnd allows: a congestion event (RUDE §3.2), ssthresh = cwnd =
    /// max(flight/2, 2·SMSS) as RFC 5681's eq. (4), whatever the algorithm.
    pub fn on_rude_exit(&mut self, flight: u64) {
        self.ssthresh = half_flight(flight, self.smss);
        self.cwnd = self.ssthresh;
    }

    /// Limit cwnd to `max` bytes (F-RTO step 3a, `tcp::spurious`; GIP Pattern 123).
    pub fn cap_cwnd(&mut self, max: u64) {
        self.cwnd = self.cwnd.min(max);
    }

    /// Undo a spurious timeout: cwnd and ssthresh return to at least
    /// `prior_cwnd` and `prior_ssthresh` (Linux `tcp_undo_cwnd_reduction`).
    pub fn undo(&mut self, prior_cwnd: u64, prior_ssthresh: u64) {
        self.cwnd = self.algorithm.undo_cwnd(self.cwnd, prior_cwnd);
        self.ssthresh = self.ssthresh.max(prior_ssthresh);
    }

    /// An ACK's delivery-rate sample, cwnd having been `prior_cwnd` before
    /// that ACK: an algorithm that steers by rate sets cwnd from it and from
    /// that window (Linux `tcp_cong_control`: "if (icsk->icsk_ca_ops->cong_control)"
    /// it runs in place of `tcp_cong_avoid` and `tcp_cwnd_reduction`, so what
    /// they set on this ACK is discarded).
    pub fn on_rate_sample(&mut self, rs: &RateSample, prior_cwnd: u64) {
        if self.algorithm.has_cong_control() {
            self.cwnd = self.algorithm.cong_control(rs, prior_cwnd).max(self.smss);
        }
    }

    /// True when the algorithm asks that data sent from now count as application-limited.
    #[inline]
    pub fn marks_app_limited(&self) -> bool {
        self.algorithm.marks_app_limited()
    }

    /// The pacing rate the algorithm sets, if it sets one (bytes per second).
    #[inline]
    pub fn pacing_rate(&self) -> Option<u64> {
        self.algorithm.pacing_rate()
    }

    /// True when the algorithm's pacing rate may have moved since the last
    /// call ([`CongestionControl::take_pacing_moved`]).
    #[inline]
    pub fn take_pacing_moved(&mut self) -> bool {
        self.algorithm.take_pacing_moved()
    }

    /// The fewest segments a paced burst holds (Linux `min_tso_segs`).
    #[inline]
    pub fn min_tso_segs(&self) -> u32 {
        self.algorithm.min_tso_segs()
    }
}

#[cfg(test)]
mod tests {
    use super::super::dctcp::{Dctcp, ALPHA_ONE};
    use super::super::reno::{CaIncrease, Reno};
    use super::*;
    use crate::tcp::DctcpConfig;

    const MSS: u64 = 1000;
    const T0: SimTime = SimTime::ZERO;

    fn window(slow_start: bool) -> CongestionWindow {
        CongestionWindow::new(MSS, 10, slow_start, Algorithm::Reno(Reno::new(MSS, CaIncrease::Exact)))
    }

    fn ack(w: &mut CongestionWindow, acked: u64) {
        w.on_ack(acked, T0, SimDuration::ZERO);
    }

    /// ns-3's growth counts whole segments (`tcp.ca_increase = "ns3"`): an ACK
    /// of a 500-byte segment grows nothing, the next one completes a segment
    /// and slow start adds one; the exact rule adds the bytes acknowledged.
    #[test]
    fn ns3_grows_only_for_whole_segments_acknowledged() {
        let mut ns3 = CongestionWindow::new(MSS, 10, true, Algorithm::Reno(Reno::new(MSS, CaIncrease::Ns3)))
            .counting_segments(true);
        let mut exact = CongestionWindow::new(MSS, 10, true, Algorithm::Reno(Reno::new(MSS, CaIncrease::Exact)));
        ns3.on_ack(MSS / 2, T0, SimDuration::ZERO);
        exact.on_ack(MSS / 2, T0, SimDuration::ZERO);
        assert_eq!((ns3.cwnd(), exact.cwnd()), (10 * MSS, 10 * MSS + MSS / 2));
        ns3.on_ack(MSS / 2, T0, SimDuration::ZERO);
        assert_eq!(ns3.cwnd(), 11 * MSS, "the two halves make a segment");
        // Three segments at once: one for slow start, none left over below ssthresh.
        ns3.on_ack(3 * MSS, T0, SimDuration::ZERO);
        assert_eq!(ns3.cwnd(), 12 * MSS);
    }

    /// RFC 5681 (3.1): slow start adds min(N, SMSS) per ACK.
    #[test]
    fn rfc5681_3_1_slow_start_adds_min_n_smss() {
        let mut w = window(true);
        assert_eq!((w.cwnd(), w.ssthresh()), (10 * MSS, u64::MAX));
        ack(&mut w, MSS);
        assert_eq!(w.cwnd(), 11 * MSS);
        ack(&mut w, 3 * MSS);
        assert_eq!(w.cwnd(), 12 * MSS, "a stretch ACK still adds one SMSS");
        ack(&mut w, 100);
        assert_eq!(w.cwnd(), 12 * MSS + 100);
    }

    /// RFC 5681 (3.1): at ssthresh, growth passes to the algorithm's
    /// congestion avoidance (Reno's SMSS·SMSS/cwnd).
    #[test]
    fn rfc5681_3_1_congestion_avoidance_from_ssthresh() {
        let mut w = window(true);
        w.on_rto(8 * MSS, false, 8 * MSS);
        assert_eq!((w.cwnd(), w.ssthresh()), (MSS, 4 * MSS));
        for _ in 0..3 {
            ack(&mut w, MSS);
        }
        assert_eq!(w.cwnd(), 4 * MSS);
        ack(&mut w, MSS);
        assert_eq!(w.cwnd(), 4 * MSS + 250);
    }

    /// FAST08 §5.1.3: slow start off starts in congestion avoidance (ssthresh = IW).
    #[test]
    fn rfc5681_3_1_slow_start_off_starts_in_congestion_avoidance() {
        let mut w = window(false);
        assert_eq!(w.ssthresh(), 10 * MSS);
        ack(&mut w, MSS);
        assert_eq!(w.cwnd(), 10 * MSS + 100);
        w.on_rto(10 * MSS, false, 10 * MSS);
        ack(&mut w, MSS);
        assert_eq!(w.cwnd(), 2 * MSS, "below ssthresh, still no slow start");
    }

    /// RFC 5681 (3.1): a timeout sets cwnd to the loss window, ssthresh by eq. (4),
    /// and holds ssthresh when the same segment times out again.
    #[test]
    fn rfc5681_3_1_timeout_sets_loss_window() {
        let mut w = window(true);
        w.on_rto(10 * MSS, false, 10 * MSS);
        assert_eq!((w.cwnd(), w.ssthresh()), (MSS, 5 * MSS));
        w.on_rto(MSS, true, MSS);
        assert_eq!((w.cwnd(), w.ssthresh()), (MSS, 5 * MSS));
    }

    /// RFC 5681 (4.1): the restart window is min(IW, cwnd).
    #[test]
    fn rfc5681_4_1_restart_window_is_min_iw_cwnd() {
        let mut w = window(true);
        w.set_cwnd(25 * MSS);
        w.on_idle_restart();
        assert_eq!(w.cwnd(), 10 * MSS);
        w.set_cwnd(4 * MSS);
        w.on_idle_restart();
        assert_eq!(w.cwnd(), 4 * MSS);
    }

    /// Linux tcp_cwnd_restart: with cwnd 40 segments and IW 10, ssthresh
    /// rises to 30 (3/4 cwnd) and cwnd halves once per RTO of idle beyond
    /// the first, never below min(IW, cwnd): 20 after 1.5 RTOs, 10 after 2.5
    /// and 10 after ten; RFC 5681 goes to 10 at once.
    #[test]
    fn linux_idle_restart_halves_once_per_idle_rto() {
        let rto = SimDuration::from_millis(200);
        for (idle_ms, cwnd) in [(300, 20), (500, 10), (2_000, 10)] {
            let mut w = window(true);
            w.on_sack_recovery(80 * MSS);
            w.set_cwnd(40 * MSS);
            w.on_linux_idle_restart(SimDuration::from_millis(idle_ms), rto);
            assert_eq!((w.cwnd(), w.ssthresh()), (cwnd * MSS, 40 * MSS), "{idle_ms} ms idle");
        }
        let mut w = window(true);
        w.on_sack_recovery(20 * MSS);
        w.set_cwnd(40 * MSS);
        w.on_linux_idle_restart(SimDuration::from_millis(300), rto);
        assert_eq!((w.cwnd(), w.ssthresh()), (20 * MSS, 30 * MSS), "ssthresh = max(ssthresh, 3/4 cwnd)");
    }

    /// RFC 6675 (5 step 4.2): SACK recovery sets ssthresh = cwnd = FlightSize/2, no inflation.
    #[test]
    fn rfc6675_5_step4_2_sack_recovery_halves_without_inflation() {
        let mut w = window(true);
        w.on_sack_recovery(10 * MSS);
        assert_eq!((w.cwnd(), w.ssthresh()), (5 * MSS, 5 * MSS));
    }

    /// RFC 8257 (3.3): an ECE cuts cwnd by α/2 and ssthresh follows, at most
    /// once per observation window; in loss recovery α still moves but
    /// the window is left to recovery.
    #[test]
    fn rfc8257_3_3_ecn_cut_sets_both_and_waits_out_recovery() {
        let dctcp = Dctcp::new(MSS, DctcpConfig { alpha_init: ALPHA_ONE, g_shift: 4 });
        let mut w = CongestionWindow::new(MSS, 10, true, Algorithm::Dctcp(Box::new(dctcp)));
        assert!(w.needs_ecn());
        assert!(w.on_ecn_echo(MSS, MSS, true, 10 * MSS, false));
        assert_eq!((w.cwnd(), w.ssthresh()), (5 * MSS, 5 * MSS));
        assert!(!w.on_ecn_echo(MSS, 2 * MSS, true, 10 * MSS, false), "one cut per window");
        assert!(!w.on_ecn_echo(MSS, 11 * MSS, true, 20 * MSS, true), "recovering: no cut");
        assert_eq!((w.cwnd(), w.ssthresh()), (5 * MSS, 5 * MSS));
        let mut reno = window(true);
        assert!(!reno.needs_ecn());
        assert!(!reno.on_ecn_echo(MSS, MSS, true, 10 * MSS, false), "no ECN response without ECN");
    }
}
