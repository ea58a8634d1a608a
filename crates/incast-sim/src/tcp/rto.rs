//! Retransmission timeout estimator: RFC 6298, Linux's variant of it, or ns-2's.
//!
//! **Models:** three flavors (`RtoConfig::flavor`).
//! - RFC 6298 (default): SRTT/RTTVAR smoothing with α = 1/8, β = 1/4 (§2), the
//!   clock granularity term G (§2.2, §4), RTO_min/RTO_max clamping (§2.4,
//!   §2.5). A jiffy clock (G > 0) floors SRTT and RTTVAR at one tick each, so
//!   the effective RTO is never below 5 ticks (CMU09 §6: 5 ms at G = 1 ms even
//!   with RTO_min = 1 ms).
//! - Linux: `tcp_rtt_estimator` and `__tcp_set_rto` (net/ipv4/tcp_input.c),
//!   in the kernel's scaled integers: `srtt` holds 8·SRTT, `mdev` 4·mdev (with
//!   the finer gain when the RTT falls), `mdev_max` the largest `mdev` of the
//!   current window of data, reset to RTO_min (`tcp_rto_min_us`) at each window
//!   end, and `rttvar` = max(`mdev_max`, …) decaying towards `mdev_max` by 1/4
//!   per window; the first sample sets `rttvar = max(2·R, RTO_min)`.
//!   `__tcp_set_rto` returns `(srtt >> 3) + rttvar`, so RTO = SRTT + rttvar ≥
//!   SRTT + RTO_min: RTO ≈ SRTT + max(4·mdev, RTO_min), NOT the RFC's
//!   max(RTO_min, SRTT + 4·RTTVAR). RTO_min there is in jiffies
//!   (`icsk_rto_min`), so on a jiffy clock it is rounded up to whole ticks
//!   first: with 4 ms ticks an RTO_min of 1 ms floors `rttvar` at 4 ms and
//!   5 ms at 8 ms, and the RTO, armed in whole jiffies, is then at least 8
//!   and 12 ms for any SRTT above zero. `tcp_bound_rto` caps it at RTO_max. A window
//!   ends on the first sample whose SND.UNA is past the SND.NXT recorded at the
//!   previous window end (`after(tp->snd_una, tp->rtt_seq)`).
//! - ns-2 (2.35, `TcpAgent::rtt_update`, `rtt_timeout`, `rtt_backoff` in
//!   tcp/tcp.cc): the estimator kept in whole ticks of `RtoConfig::tick`
//!   (`tcpTick_`, 10 ms by default): a sample counts the tick boundaries it
//!   crossed, at least one; `t_srtt_` holds 8·SRTT and `t_rttvar_` 4·RTTVAR
//!   in ticks, the first sample setting RTTVAR = R/2; the RTO is
//!   (8·SRTT + 32·RTTVAR) / 8 whole ticks, raised to RTO_min before the
//!   back-off multiplies it (`rfc2988_`), capped at RTO_max, and at least two
//!   ticks. Past a back-off factor of 8 the SRTT is folded into RTTVAR and
//!   cleared, so the next sample starts the estimate again. With the default
//!   tick and a 100 µs RTT every sample is one tick and the RTO settles at
//!   3 ticks (30 ms) whatever RTO_min below that. Which ACKs give samples is
//!   the sender's (`rtt_timing`): every ACK Karn's rule allows (RFC 6298
//!   (3)), or ns-2's one timed segment at a time (`TcpAgent::output`,
//!   `newack`, `reset_rtx_timer`), whose ACK alone collapses the back-off.
//!
//! All flavors back off exponentially (RFC 6298 §5.5; Linux
//! `tcp_retransmit_timer`) up to RTO_max and at most `RtoConfig::max_backoff`
//! doublings, and collapse the back-off on the next valid sample (§5).
//! **Deliberately different:** RTO_min and RTO_max are configuration, not the
//! RFC's 1 s and ≥ 60 s — the incast experiments sweep RTO_min down to
//! microseconds. Arithmetic is integer picoseconds, truncating at each step
//! (Linux truncates at microseconds). The Linux flavor has no G term and no
//! jiffy floor on SRTT and RTTVAR; on a jiffy clock the timer's expiry rounds
//! to ticks (`tcp::clock`), and so does the sample unless `rtt_resolution` is
//! "us" (Linux 3.15 and later measure RTT in microseconds, Linux 2.6 in
//! jiffies). Samples given without sequence numbers
//! ([`RtoEstimator::on_rtt_sample`]) each close a Linux window.
//! **Not modelled:** timestamp RTTM (RFC 7323 §4), clearing SRTT after
//! repeated back-offs (§5 note), Linux's per-route `rto_min` (`RTAX_RTO_MIN`)
//! and its BPF RTT hook.
//!
//! Which segments yield samples (Karn's rule, RFC 6298 §3) is decided by the
//! sender (`tcp::sender`); this module only folds samples in. Randomizing the
//! armed timer and delaying its expiry is `tcp::rto_timer`.

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

/// ns-2 `TcpAgent` RTT fields, in ticks with its scaling.
#[derive(Clone, Copy, Debug)]
struct Ns2Est {
    /// `t_srtt_`: 8·SRTT in ticks (0: cleared by a long back-off).
    srtt8: i64,
    /// `t_rttvar_`: 4·RTTVAR in ticks.
    rttvar4: i64,
    /// `t_rtxcur_`: the RTO before clamping and back-off, in ticks, as of the
    /// last sample (a back-off that clears SRTT leaves it alone).
    rtxcur: u64,
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
    /// The Linux flavor's RTO_min, in picoseconds: Linux keeps it in jiffies
    /// (`icsk_rto_min`, set with `usecs_to_jiffies`; `tcp_rto_min_us` is
    /// `jiffies_to_usecs(tcp_rto_min(sk))`), so on a jiffy clock it is
    /// RTO_min rounded up to whole ticks: 4 ms for 1 ms at HZ=250.
    linux_rto_min: u64,
    /// ns-2 flavor state, once a sample has been taken.
    ns2: Option<Box<Ns2Est>>,
    /// Number of doublings since the last valid sample.
    backoff: u32,
    /// [`RtoEstimator::rto`], recomputed whenever a sample or a timeout changes it.
    rto: SimDuration,
}

/// Linux `struct tcp_sock` RTT fields, in picoseconds with the kernel's scaling.
#[derive(Clone, Copy, Debug)]
struct LinuxEst {
    /// `srtt_us`: 8·SRTT.
    srtt8: u64,
    /// `mdev_us`: 4·mdev.
    mdev4: u64,
    /// `mdev_max_us`: largest `mdev_us` of the current window, at least RTO_min.
    mdev_max: u64,
    /// `rttvar_us`: the variance term added to SRTT, at least `mdev_max`.
    rttvar: u64,
    /// `rtt_seq`: SND.NXT when the current window began.
    rtt_seq: u64,
}

impl RtoEstimator {
    /// An estimator with no sample yet. G comes from `cfg.granularity`.
    pub fn new(cfg: RtoConfig) -> Self {
        let g = cfg.granularity.as_ps();
        let min = cfg.min.as_ps();
        let mut e = RtoEstimator {
            g,
            cfg,
            est: None,
            linux: None,
            linux_rto_min: if g > 0 { min.div_ceil(g).saturating_mul(g) } else { min },
            ns2: None,
            backoff: 0,
            rto: cfg.initial,
        };
        e.rto = e.backed_off_rto();
        e
    }

    /// The RTT sample of a segment sent at `sent` and acknowledged at `now`:
    /// read on `clock`, or in whole microseconds (`RttResolution`); the ns-2
    /// flavor counts the boundaries of its own tick crossed, at least one (ns-2
    /// `rtt_update`, on a clock whose phase all hosts share as `tcp::clock`'s
    /// jiffies do), whatever the clock.
    #[inline]
    pub fn sample(&self, clock: &TcpClock, sent: SimTime, now: SimTime) -> SimDuration {
        if self.cfg.flavor == RtoFlavor::Ns2 {
            let tick = self.cfg.tick.as_ps();
            return SimDuration((now.as_ps() / tick - sent.as_ps() / tick).max(1) * tick);
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
        let next = self.linux.as_ref().map_or(0, |l| l.rtt_seq.wrapping_add(1));
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
        let (srtt, rttvar) = self.rfc6298_sample(r.as_ps());
        // Without back-off the RTO is the formula's, clamped (`base_rto`).
        self.rto = self.clamp(self.rfc6298_rto(srtt, rttvar));
    }

    /// [`RtoEstimator::on_ack_rtt_sample`] for the Linux and ns-2 flavors.
    // Out of line: the default RFC 6298 sample stays inline on the per-ACK
    // path, and the other flavors pay the call.
    #[inline(never)]
    fn other_flavor_sample(&mut self, r: SimDuration, snd_una: u64, snd_nxt: u64) {
        if self.cfg.flavor == RtoFlavor::Linux {
            self.linux_sample(r.as_ps(), snd_una, snd_nxt);
        } else {
            self.ns2_sample(r.as_ps());
        }
        self.rto = self.backed_off_rto();
    }

    /// RFC 6298 (2.2), (2.3); returns the new (SRTT, RTTVAR).
    #[inline]
    fn rfc6298_sample(&mut self, r: u64) -> (u64, u64) {
        let (mut srtt, mut rttvar) = match self.est {
            // RFC 6298 (2.2): "the host MUST set SRTT <- R, RTTVAR <- R/2"
            None => (r, r / 2),
            Some((srtt, rttvar)) => {
                // RFC 6298 (2.3): "RTTVAR <- (1 - beta) * RTTVAR + beta * |SRTT - R'|"
                // "The value of SRTT used in the update to RTTVAR is its value
                // before updating SRTT itself" — so RTTVAR first, with beta = 1/4.
                let rttvar = (rttvar.saturating_mul(3).saturating_add(srtt.abs_diff(r))) / 4;
                // RFC 6298 (2.3): "SRTT <- (1 - alpha) * SRTT + alpha * R'", alpha = 1/8.
                let srtt = (srtt.saturating_mul(7).saturating_add(r)) / 8;
                (srtt, rttvar)
            }
        };
        // CMU09 §6: "both the smoothed RTT estimate and RTT variance have a
        // 1 jiffy (1ms) lower bound" on a jiffy clock.
        srtt = srtt.max(self.g);
        rttvar = rttvar.max(self.g);
        self.est = Some((srtt, rttvar));
        (srtt, rttvar)
    }

    /// RFC 6298 (2.2): "RTO <- SRTT + max (G, K*RTTVAR) where K = 4".
    #[inline]
    fn rfc6298_rto(&self, srtt: u64, rttvar: u64) -> u64 {
        srtt.saturating_add(self.g.max(rttvar.saturating_mul(4)))
    }

    /// `rto` picoseconds within RTO_min and RTO_max.
    #[inline]
    fn clamp(&self, rto: u64) -> SimDuration {
        // RFC 6298 (2.4): "if it is less than 1 second, then the RTO SHOULD be
        // rounded up" — to the configured RTO_min instead of 1 s.
        // RFC 6298 (2.5): "A maximum value MAY be placed on RTO".
        SimDuration(rto.max(self.cfg.min.as_ps()).min(self.cfg.max.as_ps()))
    }

    /// Linux `tcp_rtt_estimator`, line by line, in picoseconds.
    #[inline(never)]
    fn linux_sample(&mut self, r: u64, snd_una: u64, snd_nxt: u64) {
        let rto_min = self.linux_rto_min;
        // Keep 8·R inside i64 (R ≤ 2^59 ps, about 6.7 days).
        let r = r.min(1 << 59);
        let Some(l) = self.linux.as_deref_mut() else {
            // Linux: "no previous measure." `srtt = m << 3`, `tp->mdev_us = m << 1;
            // /* make sure rto = 3*rtt */`, `tp->rttvar_us = max(tp->mdev_us,
            // tcp_rto_min_us(sk))`, `tp->mdev_max_us = tp->rttvar_us`, `tp->rtt_seq = tp->snd_nxt`.
            let rttvar = (r << 1).max(rto_min);
            let srtt8 = (r << 3).max(1);
            self.linux = Some(Box::new(LinuxEst { srtt8, mdev4: r << 1, mdev_max: rttvar, rttvar, rtt_seq: snd_nxt }));
            return;
        };
        // Linux: "m -= (srtt >> 3); /* m is now error in rtt est */"
        let mut m = r as i64 - (l.srtt8 >> 3) as i64;
        // Linux: "srtt += m; /* rtt = 7/8 rtt + 1/8 new */"
        let srtt8 = (l.srtt8 as i64 + m) as u64;
        if m < 0 {
            // Linux: "m = -m; m -= (tp->mdev_us >> 2); ... we use finer gain for
            // mdev in this case (alpha*beta)" — `if (m > 0) m >>= 3;`
            m = -m - (l.mdev4 >> 2) as i64;
            if m > 0 {
                m >>= 3;
            }
        } else {
            m -= (l.mdev4 >> 2) as i64;
        }
        // Linux: "tp->mdev_us += m; /* mdev = 3/4 mdev + 1/4 new */"
        l.mdev4 = (l.mdev4 as i64 + m) as u64;
        if l.mdev4 > l.mdev_max {
            l.mdev_max = l.mdev4;
            l.rttvar = l.rttvar.max(l.mdev_max);
        }
        // Linux: "if (after(tp->snd_una, tp->rtt_seq))" — the window of data has ended.
        if snd_una > l.rtt_seq {
            if l.mdev_max < l.rttvar {
                // Linux: "tp->rttvar_us -= (tp->rttvar_us - tp->mdev_max_us) >> 2;"
                l.rttvar -= (l.rttvar - l.mdev_max) >> 2;
            }
            l.rtt_seq = snd_nxt;
            // Linux: "tp->mdev_max_us = tcp_rto_min_us(sk);"
            l.mdev_max = rto_min;
        }
        // Linux: "tp->srtt_us = max(1U, srtt);"
        l.srtt8 = srtt8.max(1);
    }

    /// ns-2 `TcpAgent::rtt_update` for a sample of `r` picoseconds.
    fn ns2_sample(&mut self, r: u64) {
        // ns-2: "t_rtt_ = int((tao + tickoff) / tcp_tick_)", the tick boundaries
        // crossed, which `sample` already counted; a timestamp sample is
        // "int(tao /tcp_tick_ + 0.5)". "if (t_rtt_ < 1) t_rtt_ = 1;"
        let tick = self.cfg.tick.as_ps();
        let t_rtt = (r.saturating_add(tick / 2) / tick).clamp(1, 1 << 40) as i64;
        let (srtt8, rttvar4) = match self.ns2.as_deref() {
            Some(&Ns2Est { srtt8, rttvar4, .. }) if srtt8 != 0 => {
                // ns-2: "delta = t_rtt_ - (t_srtt_ >> T_SRTT_BITS); if ((t_srtt_ += delta) <= 0) t_srtt_ = 1;"
                let mut delta = t_rtt - (srtt8 >> 3);
                let srtt8 = (srtt8 + delta).max(1);
                // ns-2: "delta -= (t_rttvar_ >> T_RTTVAR_BITS); if ((t_rttvar_ += delta) <= 0) t_rttvar_ = 1;"
                delta = delta.abs() - (rttvar4 >> 2);
                (srtt8, (rttvar4 + delta).max(1))
            }
            // ns-2: "t_srtt_ = t_rtt_ << T_SRTT_BITS; t_rttvar_ = t_rtt_ << (T_RTTVAR_BITS-1);"
            _ => (t_rtt << 3, t_rtt << 1),
        };
        // ns-2: "t_rtxcur_ = (((t_rttvar_ << (rttvar_exp_ + (T_SRTT_BITS - T_RTTVAR_BITS)))
        // + t_srtt_) >> T_SRTT_BITS) * tcp_tick_;" with rttvar_exp_ 2.
        let rtxcur = (((rttvar4 << 3) + srtt8) >> 3) as u64;
        let est = Ns2Est { srtt8, rttvar4, rtxcur };
        match self.ns2.as_deref_mut() {
            Some(e) => *e = est,
            None => self.ns2 = Some(Box::new(est)),
        }
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
            // ns-2 `rtt_backoff`: "if (t_backoff_ > 8) { t_rttvar_ += (t_srtt_ >>
            // T_SRTT_BITS); t_srtt_ = 0; }" (t_backoff_ = 2^backoff); t_rtxcur_ stays.
            e.rttvar4 += e.srtt8 >> 3;
            e.srtt8 = 0;
        }
    }

    /// RTO before back-off: the RFC 6298 (2.2)–(2.5) formula (or Linux
    /// `__tcp_set_rto`), clamped.
    pub fn base_rto(&self) -> SimDuration {
        let rto = match (self.est, self.linux.as_deref(), self.ns2.as_deref()) {
            // ns-2 `rtt_timeout`: t_rtxcur_, raised to minrto_ before the back-off
            // ("Correction from Tom Kelly to be RFC2988-compliant").
            (_, _, Some(e)) => e.rtxcur.saturating_mul(self.cfg.tick.as_ps()),
            // Linux `__tcp_set_rto`: "return usecs_to_jiffies((tp->srtt_us >> 3) + tp->rttvar_us);"
            (_, Some(l), _) => (l.srtt8 >> 3).saturating_add(l.rttvar),
            (Some((srtt, rttvar)), None, _) => self.rfc6298_rto(srtt, rttvar),
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
            // ns-2 `rtt_timeout`: "if (timeout < 2.0 * tcp_tick_) ... timeout = 2.0 * tcp_tick_;"
            return SimDuration(rto.max(self.cfg.tick.as_ps().saturating_mul(2)));
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
            (Some(l), _) => Some(SimDuration(l.srtt8 >> 3)),
            (_, Some(e)) => Some(SimDuration(e.srtt8 as u64 * self.cfg.tick.as_ps() / 8)),
            _ => self.est.map(|(s, _)| SimDuration(s)),
        }
    }

    /// What Linux's `TCP_INFO` reports as `tcpi_rttvar`, once a sample has
    /// been taken: the mean deviation of the samples (`mdev_us >> 2`) for
    /// the Linux flavor, RTTVAR for the others.
    pub fn tcp_info_rttvar(&self) -> Option<SimDuration> {
        match self.linux.as_deref() {
            Some(l) => Some(SimDuration(l.mdev4 / 4)),
            None => self.rttvar(),
        }
    }

    /// RTT variation, once a sample has been taken; for the Linux flavor
    /// `rttvar_us / 4`, so that RTO = SRTT + 4·RTTVAR in both flavors.
    pub fn rttvar(&self) -> Option<SimDuration> {
        match (self.linux.as_deref(), self.ns2.as_deref()) {
            (Some(l), _) => Some(SimDuration(l.rttvar / 4)),
            (_, Some(e)) => Some(SimDuration(e.rttvar4 as u64 * self.cfg.tick.as_ps() / 4)),
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

    fn us(v: u64) -> SimDuration {
        SimDuration::from_micros(v)
    }
    fn ps(v: u64) -> SimDuration {
        SimDuration(v)
    }
    fn cfg(min: SimDuration) -> RtoConfig {
        RtoConfig { min, ..RtoConfig::default() }
    }

    /// RFC 6298 (2.1): before any sample the RTO is the initial value.
    #[test]
    fn rfc6298_2_1_initial_rto_before_any_sample() {
        let e = RtoEstimator::new(cfg(us(1)));
        assert_eq!(e.srtt(), None);
        assert_eq!(e.rto(), SimDuration::from_secs(1));
    }

    /// RFC 6298 (2.2): first sample sets SRTT <- R, RTTVAR <- R/2.
    #[test]
    fn rfc6298_2_2_first_sample_initialises() {
        let mut e = RtoEstimator::new(cfg(us(1)));
        e.on_rtt_sample(us(100));
        assert_eq!(e.srtt(), Some(us(100)));
        assert_eq!(e.rttvar(), Some(us(50)));
        assert_eq!(e.rto(), us(300));
    }

    /// RFC 6298 (2.3): RTTVAR is updated with the old SRTT, then SRTT; exact values.
    #[test]
    fn rfc6298_2_3_updates_rttvar_before_srtt() {
        let mut e = RtoEstimator::new(cfg(us(1)));
        e.on_rtt_sample(us(100));
        e.on_rtt_sample(us(200));
        // RTTVAR = 3/4·50 + 1/4·|100 − 200| = 62.5 µs (not 59.375, which the new SRTT gives).
        assert_eq!(e.rttvar(), Some(ps(62_500_000)));
        // SRTT = 7/8·100 + 1/8·200 = 112.5 µs.
        assert_eq!(e.srtt(), Some(ps(112_500_000)));
        assert_eq!(e.rto(), ps(362_500_000));
        e.on_rtt_sample(us(100));
        assert_eq!(e.rttvar(), Some(us(50)));
        assert_eq!(e.srtt(), Some(ps(110_937_500)));
        assert_eq!(e.rto(), ps(310_937_500));
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

    /// Constant samples converge to max(RTO_min, SRTT) once RTTVAR decays to zero.
    #[test]
    fn converges_on_constant_samples() {
        let mut e = RtoEstimator::new(cfg(us(1)));
        for _ in 0..200 {
            e.on_rtt_sample(us(100));
        }
        assert_eq!(e.rttvar(), Some(SimDuration::ZERO));
        assert_eq!(e.rto(), us(100));
    }

    /// CMU09 §6: at G = 1 ms with RTO_min = 1 ms, SRTT and RTTVAR are floored at
    /// one tick and RTO = SRTT + 4·RTTVAR = 5 ms; an exact clock gives RTO_min.
    #[test]
    fn rfc6298_2_2_jiffy_clock_gives_five_tick_effective_rto() {
        let g = SimDuration::from_millis(1);
        let jiffy = RtoConfig { min: g, granularity: g, ..RtoConfig::default() };
        let mut e = RtoEstimator::new(jiffy);
        // A 100 µs round trip measures as one tick (see `clock::TcpClock::sample`).
        e.on_rtt_sample(g);
        assert_eq!(e.rttvar(), Some(g), "R/2 = 0.5 ms is floored at one tick");
        assert_eq!(e.rto(), SimDuration::from_millis(5));
        for _ in 0..100 {
            e.on_rtt_sample(g);
        }
        assert_eq!((e.srtt(), e.rttvar()), (Some(g), Some(g)));
        assert_eq!(e.rto(), SimDuration::from_millis(5));

        let mut exact = RtoEstimator::new(RtoConfig { granularity: SimDuration::ZERO, ..jiffy });
        for _ in 0..100 {
            exact.on_rtt_sample(us(100));
        }
        assert_eq!(exact.rto(), g);
    }

    fn linux(min: SimDuration) -> RtoConfig {
        RtoConfig { min, flavor: RtoFlavor::Linux, ..RtoConfig::default() }
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

    /// Linux `tcp_rtt_estimator`: "tp->rttvar_us = max(tp->mdev_us,
    /// tcp_rto_min_us(sk))" and `__tcp_set_rto` = SRTT + rttvar — with
    /// RTO_min = 200 ms and 100 µs samples, RTO = 200.1 ms, not RFC 6298's 200 ms.
    #[test]
    fn linux_tcp_set_rto_adds_rto_min_to_srtt() {
        let mut lx = RtoEstimator::new(linux(SimDuration::from_millis(200)));
        let mut rfc = RtoEstimator::new(cfg(SimDuration::from_millis(200)));
        for i in 0..50 {
            lx.on_rtt_sample(us(100));
            rfc.on_rtt_sample(us(100));
            assert_eq!(lx.rto(), us(200_100), "sample {i}");
            assert_eq!(rfc.rto(), SimDuration::from_millis(200), "sample {i}");
        }
        assert_eq!(lx.srtt(), Some(us(100)));
    }

    /// Linux `tcp_rtt_estimator` with RTO_min = 200 µs: the first sample gives
    /// `mdev_us = m << 1` = 200 µs = RTO_min, so RTO = 3·R = 300 µs; constant
    /// samples keep rttvar at its floor RTO_min, so RTO stays SRTT + 200 µs
    /// while RFC 6298 converges to SRTT = 100 µs, floored at 200 µs.
    #[test]
    fn linux_tcp_rtt_estimator_floors_rttvar_at_rto_min() {
        let mut lx = RtoEstimator::new(linux(us(200)));
        let mut rfc = RtoEstimator::new(cfg(us(200)));
        lx.on_rtt_sample(us(100));
        rfc.on_rtt_sample(us(100));
        assert_eq!((lx.rto(), rfc.rto()), (us(300), us(300)));
        for _ in 0..200 {
            lx.on_rtt_sample(us(100));
            rfc.on_rtt_sample(us(100));
        }
        assert_eq!(lx.rto(), us(300));
        assert_eq!(rfc.rto(), us(200));
        // With RTO_min below the variance, mdev sets the RTO: first sample 3·R.
        let mut small = RtoEstimator::new(linux(us(1)));
        small.on_rtt_sample(us(100));
        assert_eq!(small.rto(), us(300));
    }

    /// Linux `tcp_rtt_estimator`: a rising RTT raises `mdev` with gain 1/4; a
    /// falling one only with gain 1/32 ("we use finer gain for mdev in this
    /// case (alpha*beta)"); `rttvar` decays towards `mdev_max` by 1/4 per window.
    #[test]
    fn linux_tcp_rtt_estimator_mdev_gains_and_window_decay() {
        let mut e = RtoEstimator::new(linux(us(1)));
        e.on_ack_rtt_sample(us(100), 0, 10);
        // srtt8 = 800, mdev4 = 200, rttvar = 200 (µs).
        // Rise to 200 µs within the window (snd_una 5 ≤ rtt_seq 10): m = 100,
        // srtt8 = 900, m - mdev4/4 = 50, mdev4 = 250 > mdev_max → rttvar = 250.
        e.on_ack_rtt_sample(us(200), 5, 20);
        assert_eq!(e.srtt(), Some(ps(112_500_000)));
        assert_eq!(e.rto(), ps(362_500_000));
        // Fall to 100 µs, ending the window (snd_una 11 > 10): m = −12.5 µs,
        // srtt8 = 887.5; |m| − mdev4/4 = 12.5 − 62.5 < 0, not scaled: mdev4 = 200.
        // Window end: rttvar 250 > mdev_max 250? no decay; mdev_max ← RTO_min.
        e.on_ack_rtt_sample(us(100), 11, 30);
        assert_eq!(e.srtt(), Some(ps(110_937_500)));
        assert_eq!(e.rto(), ps(110_937_500 + 250_000_000));
        // Next window end: mdev4 = 200 − 200/4 + … stays below 250, so rttvar
        // decays by (250 − mdev_max)/4.
        e.on_ack_rtt_sample(us(110), 31, 40);
        let v = e.rttvar().expect("sampled").as_ps() * 4;
        assert!(v < 250_000_000 && v > 180_000_000, "rttvar {v}");
    }

    /// Linux 3.15 "tcp: switch rtt estimations to usec resolution": on a 4 ms
    /// jiffy clock a 312.7 µs round trip measures 312 µs, where Linux 2.6's
    /// `tcp_time_stamp` counted one jiffy; the RTO then is SRTT + RTO_min
    /// (1 ms, held as one 4 ms jiffy) instead of 4 ms + 4 ms, and the timer
    /// expires on a tick.
    #[test]
    fn linux_3_15_samples_in_microseconds_on_a_jiffy_clock() {
        let g = SimDuration::from_millis(4);
        let clock = TcpClock::new(g);
        let (sent, now) = (SimTime(g.as_ps() * 10 - us(100).as_ps()), SimTime(g.as_ps() * 10 + 212_700_000));
        let jiffies = RtoEstimator::new(RtoConfig { granularity: g, ..linux(SimDuration::from_millis(1)) });
        let micro = RtoEstimator::new(RtoConfig { resolution: RttResolution::Microsecond, ..jiffies.cfg });
        assert_eq!(jiffies.sample(&clock, sent, now), g);
        assert_eq!(micro.sample(&clock, sent, now), us(312));
        assert_eq!(micro.sample_span(&clock, ps(312_700_000), now), us(312));
        // The handshake's span ends at time zero: still the whole span, not zero.
        assert_eq!(micro.sample_span(&clock, ps(312_700_000), SimTime::ZERO), us(312));
        let mut e = micro.clone();
        e.on_rtt_sample(micro.sample(&clock, sent, now));
        // First sample: rttvar = max(2·R, RTO_min in jiffies) = 4 ms.
        assert_eq!(e.rto(), us(4312));
        assert_eq!(clock.deadline(now, e.rto()), SimTime(g.as_ps() * 12));
    }

    /// Linux keeps RTO_min in jiffies (`icsk_rto_min`, `tcp_rto_min_us`): on
    /// a 4 ms clock 1 ms floors the variance term at 4 ms and 5 ms at 8 ms,
    /// so 100 µs round trips give RTOs of 4.1 and 8.1 ms, where on an exact
    /// clock they give 1.1 and 5.1 ms.
    #[test]
    fn linux_rounds_rto_min_up_to_whole_jiffies() {
        let rto_after_samples = |min: u64, g: SimDuration| {
            let cfg = RtoConfig { granularity: g, resolution: RttResolution::Microsecond, ..linux(ms(min)) };
            let mut e = RtoEstimator::new(cfg);
            for _ in 0..50 {
                e.on_rtt_sample(us(100));
            }
            e.rto()
        };
        let (jiffy, exact) = (ms(4), SimDuration::ZERO);
        assert_eq!((rto_after_samples(1, jiffy), rto_after_samples(5, jiffy)), (us(4100), us(8100)));
        assert_eq!((rto_after_samples(1, exact), rto_after_samples(5, exact)), (us(1100), us(5100)));
        assert_eq!(rto_after_samples(8, jiffy), us(8100), "a whole number of jiffies stays as it is");
    }

    fn ns2(min: SimDuration) -> RtoEstimator {
        RtoEstimator::new(RtoConfig { min, flavor: RtoFlavor::Ns2, ..RtoConfig::default() })
    }
    fn ms(v: u64) -> SimDuration {
        SimDuration::from_millis(v)
    }

    /// ns-2 `rtt_update`: a 100 µs round trip on the default 10 ms tick counts
    /// as one tick; SRTT = 1 tick, RTTVAR = 1/2 tick, RTO = (8 + 16) >> 3 = 3
    /// ticks, and further one-tick samples leave it there (RTTVAR's 1/4 step
    /// truncates to nothing) — 30 ms with a 1 ms RTO_min, the floor above it.
    #[test]
    fn ns2_rtt_update_counts_ticks_and_settles_at_three() {
        let clock = TcpClock::new(SimDuration::ZERO);
        for (min, rto) in [(ms(1), ms(30)), (ms(200), ms(200))] {
            let mut e = ns2(min);
            let sent = SimTime(ms(25).as_ps());
            let r = e.sample(&clock, sent, sent + us(100));
            assert_eq!(r, ms(10), "a sample within one tick is one tick");
            for _ in 0..20 {
                e.on_ack_rtt_sample(r, 0, 0);
                assert_eq!(e.rto(), rto);
            }
            assert_eq!(e.srtt(), Some(ms(10)));
        }
    }

    /// ns-2 `rtt_update` counts the tick boundaries a sample crossed: 100 µs
    /// across a boundary is one tick, 25 ms from the middle of a tick three.
    #[test]
    fn ns2_samples_count_tick_boundaries_crossed() {
        let (clock, e) = (TcpClock::new(SimDuration::ZERO), ns2(ms(1)));
        let at = |v: u64| SimTime(us(v).as_ps());
        assert_eq!(e.sample(&clock, at(9_950), at(10_050)), ms(10));
        assert_eq!(e.sample(&clock, at(5_000), at(30_000)), ms(30));
    }

    /// ns-2 `rtt_timeout` raises t_rtxcur_ to minrto_ before the back-off
    /// multiplies it, and `rtt_backoff` clears SRTT once the factor passes 8,
    /// so the next sample starts the estimate afresh (RTTVAR = R/2) rather
    /// than smoothing into the old one.
    #[test]
    fn ns2_backoff_doubles_from_rto_min_and_clears_srtt_past_eight() {
        let mut e = ns2(ms(1));
        for _ in 0..30 {
            e.on_ack_rtt_sample(ms(50), 0, 0);
        }
        // t_rttvar_ falls 10, 8, 6, 5, 4, 3 and stops (3 >> 2 = 0): RTO = 5 + 3 ticks.
        assert_eq!(e.rto(), ms(80));
        for k in 1..=4 {
            e.on_timeout();
            assert_eq!(e.rto(), ms(80 << k));
        }
        e.on_ack_rtt_sample(ms(10), 0, 0);
        assert_eq!((e.srtt(), e.rto()), (Some(ms(10)), ms(30)), "restarted from the one-tick sample");
    }
}
