//! The TCP clock: exact high-resolution time or a jiffy counter.
//!
//! **Models:** the clock TCP reads for RTT samples and arms its timers with.
//! With granularity `G = 0` it is the simulator's exact picosecond clock (Linux
//! hrtimers, CMU09 §6.1). With `G > 0` it is a jiffy counter ticking every `G`
//! (Linux `jiffies`, HZ = 1000 → 1 ms, HZ = 250 → 4 ms): RTT samples are whole
//! ticks and timers expire on tick boundaries, which is why CMU09 §6 observed a
//! 5 ms effective RTO with RTO_min = 1 ms on a 1 ms jiffy clock.
//! **Deliberately different:** the jiffy counter starts at 0 at simulation
//! time 0 on every host (Linux starts it at an arbitrary value; only the
//! phase matters and all hosts share one clock here).
//! **Not modelled:** timer slack, deferrable timers, the timer wheel's
//! cascading coarseness for far-away deadlines.

use crate::time::{SimDuration, SimTime};

/// The clock one endpoint reads: exact, or ticking every `granularity`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpClock {
    /// Jiffy length in picoseconds; 0 for exact time.
    g: u64,
}

impl TcpClock {
    /// A clock of granularity `g` (zero = exact high-resolution timers).
    pub fn new(g: SimDuration) -> Self {
        TcpClock { g: g.as_ps() }
    }

    /// The granularity G (zero for an exact clock).
    #[inline]
    pub fn granularity(&self) -> SimDuration {
        SimDuration(self.g)
    }

    /// True for a jiffy clock (G > 0).
    #[inline]
    pub fn is_jiffy(&self) -> bool {
        self.g > 0
    }

    /// tick(t) = floor(t / G): the jiffy counter at time `t`.
    #[inline]
    pub fn tick(&self, t: SimTime) -> u64 {
        debug_assert!(self.g > 0);
        t.as_ps() / self.g
    }

    /// An RTT sample for a segment sent at `sent` and acknowledged at `now`.
    ///
    /// Exact clock: `now - sent`. Jiffy clock: `tick(now) - tick(sent)` whole
    /// ticks, at least one tick.
    #[inline]
    pub fn sample(&self, sent: SimTime, now: SimTime) -> SimDuration {
        if self.g == 0 {
            return now.since(sent);
        }
        // DEVIATION (Linux 2.6 `tcp_rtt_estimator`): "if (m == 0) m = 1;" — a
        // sample shorter than a jiffy counts as one jiffy.
        let ticks = (self.tick(now) - self.tick(sent)).max(1);
        SimDuration(ticks * self.g)
    }

    /// The sample a round trip of exactly `rtt` ending at `now` produces.
    ///
    /// Used for the handshake's RTT, which the caller knows only as a span.
    pub fn sample_span(&self, rtt: SimDuration, now: SimTime) -> SimDuration {
        if self.g == 0 {
            return rtt;
        }
        if now.as_ps() >= rtt.as_ps() {
            self.sample(SimTime(now.as_ps() - rtt.as_ps()), now)
        } else {
            SimDuration((rtt.as_ps() / self.g).max(1) * self.g)
        }
    }

    /// When a timer armed at `now` for `d` expires.
    ///
    /// Exact clock: `now + d`. Jiffy clock: `(tick(now) + ceil(d/G))·G`, as Linux
    /// arms `expires = jiffies + timeout` and services it when `jiffies` gets there.
    #[inline]
    pub fn deadline(&self, now: SimTime, d: SimDuration) -> SimTime {
        if self.g == 0 {
            return now + d;
        }
        let ticks = self.tick(now).saturating_add(d.as_ps().div_ceil(self.g));
        SimTime(ticks.saturating_mul(self.g))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000_000;

    #[test]
    fn exact_clock_is_transparent() {
        let c = TcpClock::new(SimDuration::ZERO);
        assert_eq!(c.sample(SimTime(10), SimTime(35)), SimDuration(25));
        assert_eq!(c.deadline(SimTime(10), SimDuration(7)), SimTime(17));
        assert_eq!(c.sample_span(SimDuration(9), SimTime(3)), SimDuration(9));
    }

    /// CMU09 §6: "TCP measures RTTs in 1ms granularity at best".
    #[test]
    fn jiffy_samples_are_whole_ticks_at_least_one() {
        let c = TcpClock::new(SimDuration::from_millis(1));
        // 100 µs inside one jiffy: still one tick.
        assert_eq!(c.sample(SimTime(MS + 100), SimTime(MS + 200)), SimDuration(MS));
        // 100 µs across a tick boundary: one tick.
        assert_eq!(c.sample(SimTime(2 * MS - 50), SimTime(2 * MS + 50)), SimDuration(MS));
        // 2.9 ms spanning three boundaries: three ticks.
        assert_eq!(c.sample(SimTime(MS / 2), SimTime(3 * MS + MS * 4 / 10)), SimDuration(3 * MS));
        assert_eq!(c.sample_span(SimDuration(MS / 10), SimTime(0)), SimDuration(MS));
    }

    /// Linux: `expires = jiffies + timeout`, serviced when jiffies reaches it.
    #[test]
    fn jiffy_deadlines_land_on_tick_boundaries() {
        let c = TcpClock::new(SimDuration::from_millis(1));
        // Armed 0.3 ms into tick 4 for 5 ms: expires at tick 9 = 9 ms (4.7 ms later).
        assert_eq!(c.deadline(SimTime(4 * MS + 3 * MS / 10), SimDuration(5 * MS)), SimTime(9 * MS));
        // A 40 ms delayed ACK armed at 0.9 ms fires at 40 ms.
        assert_eq!(c.deadline(SimTime(9 * MS / 10), SimDuration(40 * MS)), SimTime(40 * MS));
        // A fractional duration rounds up to whole ticks.
        assert_eq!(c.deadline(SimTime(0), SimDuration(MS + 1)), SimTime(2 * MS));
    }
}
