//! Wide-area delay on a link: a one-way delay that changes over time, for
//! CMU09 §8's question whether a 200 µs RTO_min is safe on the Internet.
//!
//! **Models:** Internet delay as CMU09 §3.2 describes it (after Allman and
//! Paxson, SIGCOMM 1999, and Zhang et al., IMW 2001): draws from a
//! distribution most of the time, with rare spikes nobody can predict and
//! now and then a shift of the distribution itself (cross traffic
//! arriving, a route changing). A direction of a WAN link adds to its propagation
//! delay, for each frame whose last bit leaves at `t`,
//! `level(t) + spike(t) + jitter`:
//! - `level` starts at `delay`; level shifts (route changes) come as a
//!   Poisson process with mean gap `shift_interval`, each redrawing the
//!   level uniformly in `[delay − shift, delay + shift]`;
//! - spikes (a bufferbloated hop filling up) come as a Poisson process with
//!   mean gap `spike_interval`; from its start a spike raises the delay by
//!   `spike_height` for `spike_duration`; overlapping spikes do not stack,
//!   the raise lasts until the later one ends;
//! - `jitter` is drawn per frame, exponential with mean `jitter` (a queue's
//!   waiting time) or uniform in `[0, jitter]`.
//!
//! The spike and shift processes are functions of time alone, each from its
//! own seeded substream per link direction; jitter draws one number per
//! frame in sending order. The wire stays FIFO: a frame never overtakes the
//! one before it on the same direction, so its arrival is
//! `max(departure + propagation + wan delay, previous arrival)`; a frame
//! whose draw is smaller waits behind the previous one, as on a real path
//! whose hops are queues.
//! **Deliberately different:** the two directions of a link draw their
//! spikes, shifts and jitter independently (a route change or a filling
//! buffer on the way out says nothing about the way back); the delay is
//! added on the wire, after the port's queue, so it holds no buffer.
//! **Not modelled:** loss during a spike (use `link.loss`), reordering,
//! delay that depends on the link's own load, diurnal patterns.

use crate::rng::Rng;
use crate::settings::{Choice, Duration, OrWord};
use crate::time::{SimDuration, SimTime};

/// The distribution of the per-frame jitter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JitterDist {
    /// Exponential with mean `jitter`: mostly small, now and then several
    /// times the mean (the wait in an M/M/1 queue).
    #[default]
    Exponential,
    /// Uniform in `[0, jitter]`.
    Uniform,
}

/// "off", or a duration (a positive one with `positive`).
const fn off_or(spec: Duration, what: &'static str) -> OrWord<Duration> {
    OrWord { word: "off", spec, what }
}

crate::settings! {
    /// The wide-area delay model (CMU09 §3.2, §8). Off unless `delay` is set; then
    /// it applies to both directions of every client's link (star and tree),
    /// or to the links of a topology file that say `wan = true` (by default the
    /// clients').
    ///
    /// Default values: off; when on, no jitter (exponential when set), no
    /// spikes and no level shifts until their interval is set.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct WanConfig {
        /// Base one-way delay added to each direction of a WAN link, on top of
        /// its propagation delay (link.propagation); "off" turns the model off.
        "delay" delay: Option<SimDuration> = None, off_or(Duration::ANY, "a duration");
        /// Per-frame jitter: the mean (exponential) or the limit (uniform).
        "jitter" jitter: SimDuration = SimDuration::ZERO, Duration::ANY;
        /// Distribution of the jitter: "exponential" or "uniform" in [0, jitter].
        "jitter_dist" jitter_dist: JitterDist = JitterDist::Exponential,
            Choice(&[("exponential", JitterDist::Exponential), ("uniform", JitterDist::Uniform)]);
        /// Mean time between delay spikes (a Poisson process), or "off".
        "spike_interval" spike_interval: Option<SimDuration> = None,
            off_or(Duration::POSITIVE, "a positive duration");
        /// How much a spike raises the delay.
        "spike_height" spike_height: SimDuration = SimDuration::ZERO, Duration::ANY;
        /// How long a spike lasts.
        "spike_duration" spike_duration: SimDuration = SimDuration::ZERO, Duration::ANY;
        /// Mean time between level shifts (route changes, a Poisson process), or "off".
        "shift_interval" shift_interval: Option<SimDuration> = None,
            off_or(Duration::POSITIVE, "a positive duration");
        /// A level shift redraws the base delay uniformly within delay ± shift.
        "shift" shift: SimDuration = SimDuration::ZERO, Duration::ANY;
    }
}

impl WanConfig {
    /// Is the model on?
    pub fn is_on(&self) -> bool {
        self.delay.is_some()
    }
}

/// A Poisson process of events, each gap exponential with mean `mean`.
#[derive(Clone, Debug)]
struct Poisson {
    mean: u64,
    next: SimTime,
    rng: Rng,
}

impl Poisson {
    /// The process, or one that never fires when `mean` is `None`.
    fn new(mean: Option<SimDuration>, rng: Rng) -> Self {
        let mut p = Poisson { mean: mean.map_or(0, SimDuration::as_ps), next: SimTime::NEVER, rng };
        if mean.is_some() {
            p.next = SimTime::ZERO;
            p.step();
        }
        p
    }

    fn step(&mut self) {
        // A zero gap would fire twice at one instant: every gap lasts at least 1 ps.
        self.next += SimDuration::from_ps(self.rng.exponential(self.mean).max(1));
    }

    /// The next event at or before `t`, if any.
    fn pop_until(&mut self, t: SimTime) -> Option<SimTime> {
        (self.next <= t).then(|| {
            let at = self.next;
            self.step();
            at
        })
    }
}

/// The model's state on one direction of one link.
#[derive(Clone, Debug)]
pub struct WanDelay {
    cfg: WanConfig,
    base: SimDuration,
    level: SimDuration,
    spike_until: SimTime,
    spikes: Poisson,
    shifts: Poisson,
    jitter: Rng,
    shift_rng: Rng,
    last_arrival: SimTime,
}

impl WanDelay {
    /// The model `cfg` (which must be on) for the link direction called
    /// `name`; its substreams are `wan/<name>/{spikes,shifts,shift,jitter}`
    /// of `seed`.
    pub fn new(cfg: &WanConfig, seed: u64, name: &str) -> Self {
        let base = cfg.delay.expect("the WAN model is on");
        let stream = |what: &str| Rng::substream(seed, &format!("wan/{name}/{what}"));
        WanDelay {
            cfg: *cfg,
            base,
            level: base,
            spike_until: SimTime::ZERO,
            spikes: Poisson::new(cfg.spike_interval, stream("spikes")),
            shifts: Poisson::new(cfg.shift_interval, stream("shifts")),
            jitter: stream("jitter"),
            shift_rng: stream("shift"),
            last_arrival: SimTime::ZERO,
        }
    }

    /// Run the spike and shift processes up to `t`.
    fn advance(&mut self, t: SimTime) {
        while let Some(start) = self.spikes.pop_until(t) {
            self.spike_until = self.spike_until.max(start + self.cfg.spike_duration);
        }
        while self.shifts.pop_until(t).is_some() {
            let low = self.base - self.cfg.shift;
            let span = (self.base + self.cfg.shift - low).as_ps();
            self.level = low + SimDuration::from_ps(self.shift_rng.below(span + 1));
        }
    }

    /// The base level (after shifts) and spike raise at `t`, without jitter.
    pub fn delay_at(&mut self, t: SimTime) -> SimDuration {
        self.advance(t);
        let spike = if t < self.spike_until { self.cfg.spike_height } else { SimDuration::ZERO };
        self.level + spike
    }

    /// When a frame whose last bit leaves at `tx_done`, and which would
    /// reach the far end at `arrival` without the model, arrives: later by
    /// the delay at `tx_done` plus a jitter draw, and never before the
    /// previous frame on this direction (a FIFO wire).
    pub fn arrival(&mut self, tx_done: SimTime, arrival: SimTime) -> SimTime {
        let j = self.cfg.jitter.as_ps();
        let jitter = match self.cfg.jitter_dist {
            _ if j == 0 => 0,
            JitterDist::Exponential => self.jitter.exponential(j),
            JitterDist::Uniform => self.jitter.below(j + 1),
        };
        let at = arrival + self.delay_at(tx_done) + SimDuration::from_ps(jitter);
        self.last_arrival = self.last_arrival.max(at);
        self.last_arrival
    }

    /// The base delay before any shift (what a handshake at time zero sees).
    pub fn base(&self) -> SimDuration {
        self.base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000_000;

    fn wan(delay_ms: u64) -> WanConfig {
        WanConfig { delay: Some(SimDuration::from_millis(delay_ms)), ..WanConfig::default() }
    }

    fn ms(x: u64) -> SimTime {
        SimTime(x * MS)
    }

    /// Without jitter, spikes or shifts every frame takes exactly the base delay.
    #[test]
    fn without_jitter_spikes_or_shifts_the_delay_is_the_base() {
        let mut w = WanDelay::new(&wan(20), 1, "0");
        for t in (0..10_000).map(|i| ms(i * 7)) {
            assert_eq!(w.arrival(t, t), t + SimDuration::from_millis(20));
        }
    }

    /// A spike raises the delay by its height from its start for exactly its
    /// duration; the start is the first gap of the spike substream.
    #[test]
    fn a_spike_raises_the_delay_for_its_duration() {
        let cfg = WanConfig {
            spike_interval: Some(SimDuration::from_secs(10)),
            spike_height: SimDuration::from_millis(300),
            spike_duration: SimDuration::from_millis(500),
            ..wan(20)
        };
        let mut gaps = Rng::substream(3, "wan/0/spikes");
        let first = SimTime(gaps.exponential(10_000 * MS));
        let second = first + SimDuration(gaps.exponential(10_000 * MS));
        assert!(second > first + cfg.spike_duration, "this seed's spikes do not overlap");
        let mut w = WanDelay::new(&cfg, 3, "0");
        let (base, raised) = (SimDuration::from_millis(20), SimDuration::from_millis(320));
        assert_eq!(w.delay_at(SimTime(first.0 - 1)), base);
        assert_eq!(w.delay_at(first), raised);
        assert_eq!(w.delay_at(first + SimDuration(cfg.spike_duration.0 - 1)), raised);
        assert_eq!(w.delay_at(first + cfg.spike_duration), base);
        assert_eq!(w.delay_at(second), raised);
    }

    /// Level shifts keep the base within `delay ± shift`, and do move it.
    #[test]
    fn level_shifts_stay_within_their_bounds() {
        let cfg = WanConfig {
            shift_interval: Some(SimDuration::from_millis(100)),
            shift: SimDuration::from_millis(5),
            ..wan(20)
        };
        let mut w = WanDelay::new(&cfg, 7, "1");
        let levels: Vec<SimDuration> = (0..100_000).map(|i| w.delay_at(ms(i))).collect();
        let (lo, hi) = (SimDuration::from_millis(15), SimDuration::from_millis(25));
        assert!(levels.iter().all(|d| (lo..=hi).contains(d)));
        let changes = levels.windows(2).filter(|p| p[0] != p[1]).count();
        // About one shift every 100 ms over 100 s.
        assert!((800..1200).contains(&changes), "{changes}");
        let mean = levels.iter().map(|d| d.0 as f64).sum::<f64>() / levels.len() as f64;
        assert!((mean / MS as f64 - 20.0).abs() < 0.5, "{mean}");
    }

    /// Extra delay of 50 000 frames 100 ms apart (far enough for none to
    /// wait behind another), in milliseconds.
    fn jitter_ms(dist: JitterDist, jitter_ms: u64) -> Vec<f64> {
        let cfg = WanConfig { jitter: SimDuration::from_millis(jitter_ms), jitter_dist: dist, ..wan(0) };
        let mut w = WanDelay::new(&cfg, 2, "0");
        (0..50_000).map(|i| ms(i * 100)).map(|t| (w.arrival(t, t).0 - t.0) as f64 / MS as f64).collect()
    }

    fn mean(xs: &[f64]) -> f64 {
        xs.iter().sum::<f64>() / xs.len() as f64
    }

    /// Exponential jitter has its mean and now and then several times it.
    #[test]
    fn exponential_jitter_has_its_mean_and_a_long_tail() {
        let xs = jitter_ms(JitterDist::Exponential, 2);
        assert!((mean(&xs) - 2.0).abs() < 0.05, "{}", mean(&xs));
        assert!(xs.iter().any(|&x| x > 10.0));
    }

    /// Uniform jitter spreads evenly up to its limit and never beyond.
    #[test]
    fn uniform_jitter_stays_within_its_limit() {
        let xs = jitter_ms(JitterDist::Uniform, 4);
        assert!((mean(&xs) - 2.0).abs() < 0.05, "{}", mean(&xs));
        assert!(xs.iter().all(|&x| (0.0..=4.0).contains(&x)));
        assert!(xs.iter().any(|&x| x > 3.99));
    }

    /// Frames sent back to back with jitter far larger than their spacing
    /// arrive in the order sent; some wait behind an earlier frame.
    #[test]
    fn the_wire_never_reorders() {
        let cfg = WanConfig { jitter: SimDuration::from_millis(5), ..wan(20) };
        let mut w = WanDelay::new(&cfg, 11, "0");
        let arrivals: Vec<SimTime> = (0..10_000).map(|i| SimTime(i * 12_304_000)).map(|t| w.arrival(t, t)).collect();
        assert!(arrivals.windows(2).all(|p| p[0] <= p[1]));
        assert!(arrivals.windows(2).any(|p| p[0] == p[1]), "some frame was held behind the one before");
    }

    /// The same seed and name give the same delays; another name others.
    #[test]
    fn delays_are_a_function_of_seed_and_name() {
        let cfg = WanConfig {
            jitter: SimDuration::from_millis(1),
            spike_interval: Some(SimDuration::from_millis(200)),
            spike_height: SimDuration::from_millis(50),
            spike_duration: SimDuration::from_millis(20),
            shift_interval: Some(SimDuration::from_millis(300)),
            shift: SimDuration::from_millis(10),
            ..wan(20)
        };
        let run = |name: &str| {
            let mut w = WanDelay::new(&cfg, 9, name);
            (0..5_000).map(|i| w.arrival(ms(i), ms(i))).collect::<Vec<_>>()
        };
        assert_eq!(run("0"), run("0"));
        assert_ne!(run("0"), run("1"));
    }
}
