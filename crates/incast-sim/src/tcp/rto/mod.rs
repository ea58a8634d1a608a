//! Retransmission timeout estimator: RFC 6298, Linux's variant of it, or ns-2's.
//!
//! **Models:** three flavors (`RtoConfig::flavor`), one module each: the RFC
//! 6298 formula (`rto::rfc6298`, the default), Linux's `tcp_rtt_estimator`
//! and `__tcp_set_rto` (`rto::linux`) and ns-2.35's `TcpAgent::rtt_update`
//! (`rto::ns2`).
//! This module holds what they share: the knobs ([`RtoConfig`]), reading an
//! RTT sample off the TCP clock or in whole microseconds (`RttResolution`),
//! RTO_min/RTO_max clamping (RFC 6298 (2.4), (2.5)) and the back-off. All
//! flavors back off exponentially (RFC 6298 §5.5; Linux
//! `tcp_retransmit_timer`) up to RTO_max and at most `RtoConfig::max_backoff`
//! doublings, and collapse the back-off on the next valid sample (§5), or
//! with `backoff_reset = "new_ack"` on any ACK of new data (ns-3's
//! `TcpSocketBase::NewAck`).
//! **Deliberately different:** RTO_min and RTO_max are configuration, not the
//! RFC's 1 s and ≥ 60 s — the incast experiments sweep RTO_min down to
//! microseconds. Arithmetic is integer picoseconds, truncating at each step
//! (Linux truncates at microseconds). On a jiffy clock the timer's expiry
//! rounds to ticks (`tcp::clock`), and so does the sample unless
//! `rtt_resolution` is "us" (Linux 3.15 and later measure RTT in
//! microseconds, Linux 2.6 in jiffies); where it is a jiffy, the Linux
//! flavor's estimator also computes in whole jiffies, as 2.6's did (`rto::linux`).
//! **Not modelled:** timestamp RTTM (RFC 7323 §4).
//!
//! Which segments yield samples (Karn's rule, RFC 6298 §3) is decided by the
//! sender (`tcp::sender`); this module only folds samples in. Randomizing the
//! armed timer and delaying its expiry is `tcp::rto_timer`.

mod linux;
mod ns2;
mod rfc6298;

use linux::LinuxEst;
use ns2::Ns2Est;

use super::clock::TcpClock;
pub use super::clock::TimerWheel;
pub use super::rto_timer::RtoRestart;
use crate::settings::{Choice, Count, Duration, Flag};
use crate::time::{SimDuration, SimTime};

/// Picoseconds in a microsecond, the unit of Linux's RTT samples.
const US: u64 = SimDuration::from_micros(1).as_ps();

crate::settings! {
    /// Retransmission-timer knobs (RFC 6298).
    ///
    /// Default values:
    /// - `min`: 200 ms — Linux `TCP_RTO_MIN`, the value the incast papers start from
    ///   (FAST08 Table 1). RFC 6298 (2.4) says 1 s.
    /// - `max`: 120 s — Linux `TCP_RTO_MAX`; RFC 6298 (2.5) allows any value ≥ 60 s.
    /// - `initial`: 1 s — RFC 6298 (2.1). Rarely used: connections start with the
    ///   handshake's RTT sample already taken (see [`super::Endpoint::new`]).
    /// - `granularity`: 0 — high-resolution timers. A non-zero value is a jiffy
    ///   clock (Linux HZ=1000 → 1 ms, HZ=250 → 4 ms); see `tcp::rto`.
    /// - `wheel`: [`TimerWheel::Tick`] — a jiffy timer fires on the tick it
    ///   expires at (Linux before 4.8); `Linux` as Linux 4.8's timer wheel
    ///   rounds it up; see `tcp::clock`.
    /// - `randomize`: false — RFC 6298 and Linux arm the timer for exactly RTO.
    ///   True is the CMU09 §5 "randomized timeout delay", `timeout = RTO +
    ///   (rand(0.5) × RTO)`; see `tcp::rto_timer`.
    /// - `max_backoff`: 64 doublings — Linux caps the back-off only through
    ///   `TCP_RTO_MAX`, and RFC 6298 (5.5) only through the RTO maximum; 64 is
    ///   beyond any doubling of a non-zero RTO that stays below `max`, so the
    ///   default leaves `max` as the only cap. CMU09 §7 (Fig 12) describes a back-off
    ///   "until the maximum factor of 64 * RTO", i.e. `max_backoff = 6`.
    /// - `scheduling_delay`: 0 — timers fire exactly. CMU09 §3 adds "a small
    ///   random timer scheduling delay of up to 20µs"; a non-zero D postpones every
    ///   retransmission-timer expiry (not the delayed-ACK timer) by a uniform draw
    ///   from [0, D]; see `tcp::rto_timer`.
    /// - `flavor`: [`RtoFlavor::Rfc6298`] — the RFC formula; `Linux` is the
    ///   kernel's `tcp_rtt_estimator` / `__tcp_set_rto`, `Ns2` ns-2.35's
    ///   `TcpAgent::rtt_update`; see `tcp::rto`.
    /// - `tick`: 10 ms — ns-2.35's `tcpTick_` (tcl/lib/ns-default.tcl); used by
    ///   the `Ns2` flavor only.
    /// - `resolution`: [`RttResolution::Clock`] — RTT samples read on the TCP
    ///   clock, whole jiffies on a jiffy clock (Linux before 3.15);
    ///   `Microsecond` is Linux 3.15 and later; see `tcp::rto`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct RtoConfig {
        /// Lower bound on the retransmission timeout (RTO_min).
        "rto_min" min: SimDuration = SimDuration::from_millis(200), Duration::ANY;
        /// Upper bound on the retransmission timeout, back-off included (RTO_max).
        "rto_max" max: SimDuration = SimDuration::from_secs(120), Duration::POSITIVE;
        /// RTO before any RTT sample.
        "rto_initial" initial: SimDuration = SimDuration::from_secs(1), Duration::POSITIVE;
        /// Timer granularity G: 0 for exact timers, else the jiffy length (1ms, 4ms).
        "clock_granularity" granularity: SimDuration = SimDuration::ZERO, Duration::ANY;
        /// When a jiffy clock's timers fire: "tick", on the tick they expire at
        /// (Linux before 4.8), or "linux", a tick later under 63 ticks and at
        /// the next multiple of 8^n ticks beyond, as Linux 4.8's timer wheel
        /// rounds every expiry up (calc_index). Read only with a clock_granularity.
        "clock_wheel" wheel: TimerWheel = TimerWheel::Tick,
            Choice(&[("tick", TimerWheel::Tick), ("linux", TimerWheel::Linux)]);
        /// CMU09 §5 randomized timeout: each armed retransmission timer lasts RTO + rand(0, 0.5)·RTO.
        "rto_randomize" randomize: bool = false, Flag;
        /// Most doublings of the RTO after consecutive timeouts (rto_max still applies).
        "rto_max_backoff" max_backoff: u32 = 64, Count::new(0, u32::MAX as u64, "doublings");
        /// CMU09 §3 timer scheduling delay: each retransmission-timer expiry is
        /// late by a uniform draw from [0, this].
        "rto_scheduling_delay" scheduling_delay: SimDuration = SimDuration::ZERO, Duration::ANY;
        /// RTO formula: "rfc6298" (max(RTO_min, SRTT + 4·RTTVAR)), "linux"
        /// (tcp_rtt_estimator / __tcp_set_rto: SRTT + max(4·mdev, RTO_min)) or
        /// "ns2" (ns-2.35's estimator in whole ticks of rto_tick).
        "rto_flavor" flavor: RtoFlavor = RtoFlavor::Rfc6298,
            Choice(&[("rfc6298", RtoFlavor::Rfc6298), ("linux", RtoFlavor::Linux), ("ns2", RtoFlavor::Ns2)]);
        /// "ns2" flavor: the tick RTT samples and the RTO are counted in (ns-2's
        /// tcpTick_); timers stay exact, as in ns-2.
        "rto_tick" tick: SimDuration = SimDuration::from_millis(10), Duration::POSITIVE;
        /// When a backed-off RTO returns to the estimate: "valid_sample" (RFC
        /// 6298 (5.7) with Karn's rule: only a new RTT sample collapses it, as
        /// Linux and ns-2 do) or "new_ack" (any ACK of new data recomputes it
        /// without back-off, as ns-3's TcpSocketBase::NewAck does).
        "rto_backoff_reset" backoff_reset: BackoffReset = BackoffReset::ValidSample,
            Choice(&[("valid_sample", BackoffReset::ValidSample), ("new_ack", BackoffReset::NewAck)]);
        /// When the running retransmission timer restarts: "rfc6298" (on an
        /// ACK of new data only, RFC 6298 (5.3)), "fast_retransmit" (also
        /// when a fast retransmission starts loss recovery, as ns-2's
        /// dupack_action does with reset_rtx_timer(1,0)) or "head_retransmit"
        /// (also whenever the head of the queue is retransmitted, as Linux's
        /// tcp_xmit_retransmit_queue does).
        "rto_restart" restart: RtoRestart = RtoRestart::Rfc6298,
            Choice(&[
                ("rfc6298", RtoRestart::Rfc6298),
                ("fast_retransmit", RtoRestart::FastRetransmit),
                ("head_retransmit", RtoRestart::HeadRetransmit),
            ]);
        /// What an RTT sample is measured in: "clock" (the TCP clock: whole
        /// jiffies on a jiffy clock, as Linux before 3.15 measured them) or
        /// "us" (whole microseconds whatever the timers' granularity, as Linux
        /// 3.15 and later do); the "ns2" flavor counts its own ticks either way.
        "rtt_resolution" resolution: RttResolution = RttResolution::Clock,
            Choice(&[("clock", RttResolution::Clock), ("us", RttResolution::Microsecond)]);
        /// Which ACKs give RTT samples: "every_ack" (every ACK of new data
        /// Karn's rule allows, RFC 6298 (3) and Linux) or "ns2" (ns-2.35's one
        /// timed segment: a new segment is timed when none is, a fast
        /// retransmission or a timeout cancels the timing, and only the ACK
        /// of the timed segment gives a sample and collapses the back-off).
        "rtt_timing" timing: RttTiming = RttTiming::EveryAck,
            Choice(&[("every_ack", RttTiming::EveryAck), ("ns2", RttTiming::Ns2)]);
    }
}

/// Which ACKs give RTT samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RttTiming {
    /// Every ACK of new data that Karn's rule allows (RFC 6298 (3), Linux).
    #[default]
    EveryAck,
    /// ns-2.35's `rtt_active_`/`rtt_seq_`/`rtt_ts_` (`TcpAgent::output`,
    /// `newack`, `reset_rtx_timer`): one segment timed at a time.
    Ns2,
}

/// What an RTT sample is measured in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RttResolution {
    /// The TCP clock (`tcp::clock`): exact, or whole jiffies (at least one)
    /// on a jiffy clock, as Linux 2.6 measured with `tcp_time_stamp`.
    #[default]
    Clock,
    /// Whole microseconds: Linux 3.15 and later (`tcp_rtt_estimator` takes
    /// `mrtt_us` from the send time in `skb_mstamp`, "tcp: switch rtt
    /// estimations to usec resolution"), while the timers stay on jiffies.
    Microsecond,
}

/// When a backed-off RTO falls back to the estimate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BackoffReset {
    /// Only a new RTT sample resets the back-off (RFC 6298 (5.7), Karn §3).
    #[default]
    ValidSample,
    /// Every ACK of new data resets it (ns-3).
    NewAck,
}

/// The RTO formula.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RtoFlavor {
    /// RFC 6298 (2.2)–(2.4): `max(RTO_min, SRTT + max(G, 4·RTTVAR))`.
    #[default]
    Rfc6298,
    /// Linux `tcp_rtt_estimator` / `__tcp_set_rto`: `SRTT + rttvar`, where the
    /// variance term `rttvar` (4·mdev) is floored at RTO_min, so RTO ≈
    /// SRTT + max(4·mdev, RTO_min).
    Linux,
    /// ns-2.35 `TcpAgent::rtt_update` / `rtt_timeout`: integer ticks of
    /// `RtoConfig::tick`, RTO = max(RTO_min, SRTT + 4·RTTVAR) ≥ 2 ticks.
    Ns2,
}

impl RtoConfig {
    /// RFC 6298 (2.4), (2.5): the bounds agree with each other.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.min > self.max {
            let f = crate::settings::Duration::format;
            return Err(("tcp.rto_min", format!("must not exceed tcp.rto_max ({}), got {}", f(self.max), f(self.min))));
        }
        Ok(())
    }
}

/// SRTT/RTTVAR state and the current back-off of one sender.
#[derive(Clone, Debug)]
pub struct RtoEstimator {
    cfg: RtoConfig,
    /// Clock granularity G in picoseconds (0 = exact).
    g: u64,
    /// (SRTT, RTTVAR) in picoseconds, once a sample has been taken.
    est: Option<(u64, u64)>,
    /// Linux flavor state, once a sample has been taken (boxed, as the ns-2
    /// flavor's: the estimator of the RFC 6298 flavor stays small).
    linux: Option<Box<LinuxEst>>,
    /// The Linux flavor's RTO_min, in picoseconds (`linux::rto_min`).
    linux_rto_min: u64,
    /// The unit of the Linux flavor's integers, in picoseconds (`linux::unit`).
    linux_unit: u64,
    /// ns-2 flavor state, once a sample has been taken.
    ns2: Option<Box<Ns2Est>>,
    /// Number of doublings since the last valid sample.
    backoff: u32,
    /// [`RtoEstimator::rto`], recomputed whenever a sample or a timeout changes it.
    rto: SimDuration,
}

impl RtoEstimator {
    /// An estimator with no sample yet. G comes from `cfg.granularity`.
    pub fn new(cfg: RtoConfig) -> Self {
        let g = cfg.granularity.as_ps();
        let mut e = RtoEstimator {
            g,
            cfg,
            est: None,
            linux: None,
            linux_rto_min: linux::rto_min(cfg.min.as_ps(), g),
            linux_unit: linux::unit(g, cfg.resolution),
            ns2: None,
            backoff: 0,
            rto: cfg.initial,
        };
        e.rto = e.backed_off_rto();
        e
    }

    /// The RTT sample of a segment sent at `sent` and acknowledged at `now`:
    /// read on `clock`, or in whole microseconds (`RttResolution`); the ns-2
    /// flavor counts the boundaries of its own tick crossed (`ns2::sample`),
    /// whatever the clock.
    #[inline]
    pub fn sample(&self, clock: &TcpClock, sent: SimTime, now: SimTime) -> SimDuration {
        if self.cfg.flavor == RtoFlavor::Ns2 {
            return ns2::sample(self.cfg.tick, sent, now);
        }
        match self.cfg.resolution {
            RttResolution::Clock => clock.sample(sent, now),
            // Linux `tcp_stamp_us_delta`: the difference of two microsecond stamps.
            RttResolution::Microsecond => SimDuration((now.as_ps() / US - sent.as_ps() / US) * US),
        }
    }

    /// The sample of a round trip of exactly `rtt` ending at `now` (the
    /// handshake's, known only as a span), at this estimator's resolution.
    pub fn sample_span(&self, clock: &TcpClock, rtt: SimDuration, now: SimTime) -> SimDuration {
        match self.cfg.resolution {
            // A span of whole microseconds (Linux `tcp_stamp_us_delta` of the SYN's stamps).
            RttResolution::Microsecond if self.cfg.flavor != RtoFlavor::Ns2 => SimDuration(rtt.as_ps() / US * US),
            _ => clock.sample_span(rtt, now),
        }
    }

    /// Fold in one RTT sample `r` (already rounded to the clock by the caller).
    /// For the Linux flavor the sample closes a window (no sequence numbers).
    pub fn on_rtt_sample(&mut self, r: SimDuration) {
        let next = self.linux.as_ref().map_or(0, |l| l.rtt_seq().wrapping_add(1));
        self.on_ack_rtt_sample(r, next, next);
    }

    /// Fold in one RTT sample `r` taken from an ACK that moved SND.UNA to
    /// `snd_una` while SND.NXT was `snd_nxt` (Linux windows; RFC 6298 ignores them).
    #[inline(always)]
    pub fn on_ack_rtt_sample(&mut self, r: SimDuration, snd_una: u64, snd_nxt: u64) {
        // RFC 6298 (5): "once a new RTT measurement is obtained ... [this] may
        // result in "collapsing" RTO back down after ... exponential back off"
        self.backoff = 0;
        if self.cfg.flavor != RtoFlavor::Rfc6298 {
            return self.other_flavor_sample(r, snd_una, snd_nxt);
        }
        let (srtt, rttvar) = rfc6298::sample(self.est, r.as_ps(), self.g);
        self.est = Some((srtt, rttvar));
        // Without back-off the RTO is the formula's, clamped (`base_rto`).
        self.rto = self.clamp(rfc6298::rto(srtt, rttvar, self.g));
    }

    /// [`RtoEstimator::on_ack_rtt_sample`] for the Linux and ns-2 flavors.
    // Out of line: the default RFC 6298 sample stays inline on the per-ACK
    // path, and the other flavors pay the call.
    #[inline(never)]
    fn other_flavor_sample(&mut self, r: SimDuration, snd_una: u64, snd_nxt: u64) {
        if self.cfg.flavor == RtoFlavor::Linux {
            linux::tcp_rtt_estimator(&mut self.linux, r.as_ps(), snd_una, snd_nxt, self.linux_rto_min, self.linux_unit);
        } else {
            ns2::rtt_update(&mut self.ns2, r.as_ps(), self.cfg.tick.as_ps());
        }
        self.rto = self.backed_off_rto();
    }

    /// `rto` picoseconds within RTO_min and RTO_max.
    #[inline]
    fn clamp(&self, rto: u64) -> SimDuration {
        // RFC 6298 (2.4): "if it is less than 1 second, then the RTO SHOULD be
        // rounded up" — to the configured RTO_min instead of 1 s.
        // RFC 6298 (2.5): "A maximum value MAY be placed on RTO".
        SimDuration(rto.max(self.cfg.min.as_ps()).min(self.cfg.max.as_ps()))
    }

    /// An ACK of new data arrived (after any RTT sample it gave). With
    /// `backoff_reset = "new_ack"` the RTO returns to the estimate.
    // DEVIATION (ns-3): RFC 6298 keeps the backed-off RTO until a valid RTT
    // sample; ns-3's TcpSocketBase::NewAck recomputes it from SRTT and RTTVAR.
    #[inline]
    pub fn on_new_ack(&mut self) {
        if self.cfg.backoff_reset == BackoffReset::NewAck {
            self.reset_backoff();
        }
    }

    /// The back-off collapses without a sample: ns-3's any new ACK
    /// (`BackoffReset::NewAck`), or ns-2's partial ACK of the timed segment
    /// (`NewRenoTcpAgent::partialnewack`: "rtt_active_ = 0; t_backoff_ = 1;").
    pub fn reset_backoff(&mut self) {
        if self.backoff > 0 {
            self.backoff = 0;
            self.rto = self.backed_off_rto();
        }
    }

    /// The retransmission timer expired: back off.
    pub fn on_timeout(&mut self) {
        // RFC 6298 (5.5): "The host MUST set RTO <- RTO * 2 ("back off the
        // timer"). The maximum value ... may be used to provide an upper bound"
        // CMU09 §7: back-off "until the maximum factor of 64 * RTO" — `max_backoff`.
        if self.rto() < self.cfg.max && self.backoff < self.cfg.max_backoff.min(63) {
            self.backoff += 1;
            self.rto = self.backed_off_rto();
        }
        if let Some(e) = self.ns2.as_deref_mut().filter(|_| self.backoff > 3) {
            ns2::rtt_backoff(e);
        }
    }

    /// RTO before back-off: the RFC 6298 (2.2)–(2.5) formula (or Linux
    /// `__tcp_set_rto`, or ns-2 `rtt_timeout`), clamped.
    pub fn base_rto(&self) -> SimDuration {
        let rto = match (self.est, self.linux.as_deref(), self.ns2.as_deref()) {
            (_, _, Some(e)) => e.rto(self.cfg.tick.as_ps()),
            (_, Some(l), _) => l.rto(),
            (Some((srtt, rttvar)), None, _) => rfc6298::rto(srtt, rttvar, self.g),
            // RFC 6298 (2.1): "the sender SHOULD set RTO <- 1 second" (configurable).
            (None, None, None) => self.cfg.initial.as_ps(),
        };
        self.clamp(rto)
    }

    /// The current RTO, back-off included, never above RTO_max.
    #[inline]
    pub fn rto(&self) -> SimDuration {
        self.rto
    }

    /// [`RtoEstimator::base_rto`] doubled `backoff` times, never above RTO_max.
    fn backed_off_rto(&self) -> SimDuration {
        let base = self.base_rto().as_ps();
        let backed = base.checked_shl(self.backoff).filter(|v| v >> self.backoff == base);
        let rto = backed.unwrap_or(u64::MAX).min(self.cfg.max.as_ps());
        if self.cfg.flavor == RtoFlavor::Ns2 {
            return SimDuration(ns2::at_least_two_ticks(rto, self.cfg.tick.as_ps()));
        }
        SimDuration(rto)
    }

    /// RTO_min, the floor of the RTO.
    #[inline]
    pub fn rto_min(&self) -> SimDuration {
        self.cfg.min
    }

    /// Smoothed RTT, once a sample has been taken.
    pub fn srtt(&self) -> Option<SimDuration> {
        match (self.linux.as_deref(), self.ns2.as_deref()) {
            (Some(l), _) => Some(SimDuration(l.srtt())),
            (_, Some(e)) => Some(SimDuration(e.srtt(self.cfg.tick.as_ps()))),
            _ => self.est.map(|(s, _)| SimDuration(s)),
        }
    }

    /// What Linux's `TCP_INFO` reports as `tcpi_rttvar`, once a sample has
    /// been taken: the mean deviation of the samples (`mdev_us >> 2`) for
    /// the Linux flavor, RTTVAR for the others.
    pub fn tcp_info_rttvar(&self) -> Option<SimDuration> {
        match self.linux.as_deref() {
            Some(l) => Some(SimDuration(l.mdev())),
            None => self.rttvar(),
        }
    }

    /// RTT variation, once a sample has been taken; for the Linux flavor
    /// `rttvar_us / 4`, so that RTO = SRTT + 4·RTTVAR in both flavors.
    pub fn rttvar(&self) -> Option<SimDuration> {
        match (self.linux.as_deref(), self.ns2.as_deref()) {
            (Some(l), _) => Some(SimDuration(l.rttvar())),
            (_, Some(e)) => Some(SimDuration(e.rttvar(self.cfg.tick.as_ps()))),
            _ => self.est.map(|(_, v)| SimDuration(v)),
        }
    }

    /// Doublings applied since the last valid sample.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn us(v: u64) -> SimDuration {
        SimDuration::from_micros(v)
    }
    pub(super) fn ps(v: u64) -> SimDuration {
        SimDuration(v)
    }
    pub(super) fn ms(v: u64) -> SimDuration {
        SimDuration::from_millis(v)
    }
    pub(super) fn cfg(min: SimDuration) -> RtoConfig {
        RtoConfig { min, ..RtoConfig::default() }
    }

    /// RFC 6298 (2.1): before any sample the RTO is the initial value.
    #[test]
    fn rfc6298_2_1_initial_rto_before_any_sample() {
        let e = RtoEstimator::new(cfg(us(1)));
        assert_eq!(e.srtt(), None);
        assert_eq!(e.rto(), SimDuration::from_secs(1));
    }

    /// RFC 6298 (2.4): the computed RTO is rounded up to RTO_min.
    #[test]
    fn rfc6298_2_4_rto_min_floor() {
        let mut e = RtoEstimator::new(RtoConfig::default());
        e.on_rtt_sample(us(100));
        assert_eq!(e.rto(), SimDuration::from_millis(200));
    }

    /// RFC 6298 (2.5): the computed RTO is capped at RTO_max.
    #[test]
    fn rfc6298_2_5_rto_max_cap() {
        let mut e = RtoEstimator::new(RtoConfig { max: SimDuration::from_secs(2), ..cfg(us(1)) });
        e.on_rtt_sample(SimDuration::from_secs(1));
        assert_eq!(e.base_rto(), SimDuration::from_secs(2));
    }

    /// RFC 6298 (5.5): back-off doubles and is capped by RTO_max.
    #[test]
    fn rfc6298_5_5_backoff_doubles_until_max() {
        let mut e = RtoEstimator::new(RtoConfig::default());
        e.on_rtt_sample(us(100));
        let mut expect = SimDuration::from_millis(200);
        for _ in 0..9 {
            assert_eq!(e.rto(), expect);
            e.on_timeout();
            expect = expect.saturating_mul(2).min(SimDuration::from_secs(120));
        }
        // 200 ms · 2^9 = 102.4 s; the next doubling is capped at 120 s and stays there.
        assert_eq!(e.rto(), SimDuration::from_millis(102_400));
        e.on_timeout();
        assert_eq!(e.rto(), SimDuration::from_secs(120));
        for _ in 0..100 {
            e.on_timeout();
        }
        assert_eq!(e.rto(), SimDuration::from_secs(120));
    }

    /// RFC 6298 (5): the next valid sample collapses the backed-off RTO.
    #[test]
    fn rfc6298_5_new_sample_collapses_backoff() {
        let mut e = RtoEstimator::new(cfg(us(1)));
        e.on_rtt_sample(us(100));
        e.on_timeout();
        e.on_timeout();
        assert_eq!(e.rto(), us(1200));
        e.on_rtt_sample(us(100));
        assert_eq!(e.backoff(), 0);
        // RTTVAR = 3/4·50 = 37.5 µs; RTO = 100 + 150 µs.
        assert_eq!(e.rto(), us(250));
    }

    /// RFC 6298 (5.7), Karn §3: an ACK that gives no RTT sample (it covers a
    /// retransmission) keeps the backed-off RTO; ns-3's NewAck recomputes it.
    #[test]
    fn backoff_survives_an_ack_without_sample_unless_new_ack_resets_it() {
        for (reset, rto_after_ack) in [(BackoffReset::ValidSample, us(1200)), (BackoffReset::NewAck, us(300))] {
            let mut e = RtoEstimator::new(RtoConfig { backoff_reset: reset, ..cfg(us(1)) });
            e.on_rtt_sample(us(100));
            e.on_timeout();
            e.on_timeout();
            assert_eq!(e.rto(), us(1200));
            e.on_new_ack();
            assert_eq!(e.rto(), rto_after_ack, "{reset:?}");
        }
    }

    /// CMU09 §7: back-off "until the maximum factor of 64 * RTO" — `max_backoff`
    /// caps the doublings below RTO_max.
    #[test]
    fn cmu09_7_max_backoff_caps_doublings() {
        let mut e = RtoEstimator::new(RtoConfig { max_backoff: 6, ..cfg(us(1)) });
        e.on_rtt_sample(us(100));
        assert_eq!(e.rto(), us(300));
        for _ in 0..20 {
            e.on_timeout();
        }
        assert_eq!(e.backoff(), 6);
        assert_eq!(e.rto(), us(300 * 64));
        // RTO_max still applies with the cap.
        let mut capped = RtoEstimator::new(RtoConfig { max_backoff: 6, max: us(1000), ..cfg(us(1)) });
        capped.on_rtt_sample(us(100));
        for _ in 0..20 {
            capped.on_timeout();
        }
        assert_eq!(capped.rto(), us(1000));
        // max_backoff = 0: no back-off at all.
        let mut flat = RtoEstimator::new(RtoConfig { max_backoff: 0, ..cfg(us(1)) });
        flat.on_rtt_sample(us(100));
        flat.on_timeout();
        assert_eq!(flat.rto(), us(300));
    }
}
