//! The TCP clock: exact high-resolution time or a jiffy counter.
//!
//! **Models:** the clock TCP reads for RTT samples and arms its timers with.
//! With granularity `G = 0` it is the simulator's exact picosecond clock (Linux
//! hrtimers, CMU09 §6.1). With `G > 0` it is a jiffy counter ticking every `G`
//! (Linux `jiffies`, HZ = 1000 → 1 ms, HZ = 250 → 4 ms): RTT samples are whole
//! ticks and timers expire on tick boundaries, which is why CMU09 §6 observed a
//! 5 ms effective RTO with RTO_min = 1 ms on a 1 ms jiffy clock. A timer
//! armed for `d` expires `ceil(d/G)` ticks after the current one
//! (`usecs_to_jiffies`, `expires = jiffies + timeout`); with
//! `tcp.clock_wheel = "tick"` it fires on that tick (Linux before 4.8, whose
//! cascading wheel ran a timer when `jiffies` reached `expires`), with
//! `"linux"` as Linux 4.8's wheel places it (`calc_wheel_index`): "The timer
//! wheel has to guarantee that a timer does not fire early", so `calc_index`
//! rounds every expiry up by its level's granularity, one tick for deadlines
//! under 63 ticks and the next multiple of 8^n ticks at level n. Traced on
//! this project's kernel (6.18, `timer:timer_start`, a 4-server run): every
//! one of 3,030 TCP timers armed under 63 ticks (2,841 `tcp_write_timer`, 189
//! `tcp_delack_timer`) had `bucket_expiry = expires + 1`, so an RTO of two
//! ticks fires 8-12 ms after it is armed at HZ=250, not 4-8.
//! **Deliberately different:** the jiffy counter starts at 0 at simulation
//! time 0 on every host (Linux starts it at an arbitrary value; only the
//! phase matters and all hosts share one clock here).
//! **Not modelled:** timer slack, deferrable timers, a wheel clock lagging
//! `jiffies` on an idle CPU (`forward_timer_base`), and the pre-4.8 wheel's
//! cascading coarseness for far-away deadlines.

use crate::time::{SimDuration, SimTime};

/// When a jiffy clock's timer fires after the tick it expires at (module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TimerWheel {
    /// On that tick: Linux before 4.8.
    #[default]
    Tick,
    /// As Linux 4.8's wheel rounds it up: one tick later under 63 ticks, the
    /// next multiple of 8^n ticks at level n (`calc_index`).
    Linux,
}

/// Linux `LVL_CLK_SHIFT`: each wheel level is 8 times coarser than the one below.
const LVL_CLK_SHIFT: u32 = 3;
/// Linux `LVL_SIZE - 1`: level n holds deadlines under `63 << 3n` ticks (`LVL_START(n + 1)`).
const LVL_LAST: u64 = 63;
/// Linux `LVL_DEPTH` for HZ > 100.
const LVL_DEPTH: u32 = 9;

/// The clock one endpoint reads: exact, or ticking every `granularity`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpClock {
    /// Jiffy length in picoseconds; 0 for exact time.
    g: u64,
    /// How timers fire on a jiffy clock.
    wheel: TimerWheel,
}

impl TcpClock {
    /// A clock of granularity `g` (zero = exact high-resolution timers) whose
    /// timers fire on the tick they expire at.
    pub fn new(g: SimDuration) -> Self {
        TcpClock { g: g.as_ps(), wheel: TimerWheel::Tick }
    }

    /// The same clock, its timers fired as `wheel` fires them.
    pub fn with_wheel(self, wheel: TimerWheel) -> Self {
        TcpClock { wheel, ..self }
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

    /// When a timer armed at `now` for `d` fires.
    ///
    /// Exact clock: `now + d`. Jiffy clock: Linux arms `expires = jiffies +
    /// timeout` with `timeout = ceil(d/G)`; the timer fires at `expires·G`, or
    /// with the Linux wheel at the bucket `calc_index` rounds it up to.
    #[inline]
    pub fn deadline(&self, now: SimTime, d: SimDuration) -> SimTime {
        if self.g == 0 {
            return now + d;
        }
        let timeout = d.as_ps().div_ceil(self.g);
        let expires = self.tick(now).saturating_add(timeout);
        let fires = match self.wheel {
            TimerWheel::Tick => expires,
            TimerWheel::Linux => bucket_expiry(expires, timeout),
        };
        SimTime(fires.saturating_mul(self.g))
    }
}

/// Linux `calc_wheel_index` and `calc_index`: the tick a timer expiring at
/// `expires`, `delta` ticks away, fires at: "expires = (expires >>
/// LVL_SHIFT(lvl)) + 1; *bucket_expiry = expires << LVL_SHIFT(lvl);" at the
/// first level whose range holds `delta`.
fn bucket_expiry(expires: u64, delta: u64) -> u64 {
    let mut lvl = 0;
    while lvl + 1 < LVL_DEPTH && delta >= LVL_LAST << (LVL_CLK_SHIFT * lvl) {
        lvl += 1;
    }
    let shift = LVL_CLK_SHIFT * lvl;
    ((expires >> shift) + 1) << shift
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

    /// Linux 4.8's wheel (`timer:timer_start` on this project's 6.18 kernel:
    /// `expires=… [timeout=1] bucket_expiry=expires+1`): on a 4 ms clock a
    /// timer armed 0.3 ms into tick 1 for 5 ms (two ticks) expires at tick 3
    /// and fires at tick 4, 11.7 ms later, where the pre-4.8 rule fires it at
    /// tick 3, 7.7 ms later; 250 ticks away (level 1, 8-tick buckets) it fires
    /// at the next multiple of 8 above its expiry.
    #[test]
    fn linux_wheel_fires_a_tick_after_expiry_and_rounds_far_timers_to_their_level() {
        let g = SimDuration::from_millis(4);
        let (tick, wheel) = (TcpClock::new(g), TcpClock::new(g).with_wheel(TimerWheel::Linux));
        let now = SimTime(4 * MS + 3 * MS / 10);
        assert_eq!(tick.deadline(now, SimDuration(5 * MS)), SimTime(12 * MS));
        assert_eq!(wheel.deadline(now, SimDuration(5 * MS)), SimTime(16 * MS));
        assert_eq!(wheel.deadline(now, SimDuration(62 * 4 * MS)), SimTime((1 + 62 + 1) * 4 * MS), "last of level 0");
        // expires = 1 + 250 = 251 → (251 >> 3) + 1 = 32 → tick 256.
        assert_eq!(wheel.deadline(now, SimDuration(250 * 4 * MS)), SimTime(256 * 4 * MS));
        let exact = TcpClock::new(SimDuration::ZERO).with_wheel(TimerWheel::Linux);
        assert_eq!(exact.deadline(SimTime(10), SimDuration(7)), SimTime(17), "no wheel without jiffies");
    }
}
