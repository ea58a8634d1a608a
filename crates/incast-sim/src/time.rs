//! Simulated time, link rates and byte counts.
//!
//! **Models:** time as an integer count of picoseconds (`u64`, about 213 days
//! of simulated time), rates in bits per second, sizes in bytes.
//! **Deliberately different:** no floating-point time anywhere; serialization
//! delays are rounded *up* to the next picosecond, so a link never runs faster
//! than its nominal rate.
//! **Not modelled:** clock drift between hosts (every host reads the same clock).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Div, Sub};

const PS_PER_NS: u64 = 1_000;
const PS_PER_US: u64 = 1_000_000;
const PS_PER_MS: u64 = 1_000_000_000;
const PS_PER_S: u64 = 1_000_000_000_000;

/// An instant of simulated time, in picoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SimTime(pub u64);

/// A span of simulated time, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SimDuration(pub u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// Later than any run reaches (about 213 days): a deadline that never comes.
    pub const NEVER: SimTime = SimTime(u64::MAX);
    /// Picoseconds since the start of the run.
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Time since `earlier`, or zero if `earlier` is later (saturating).
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
    /// Seconds since the start, for reports only (never fed back into the engine).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
}

impl SimDuration {
    /// No time at all.
    pub const ZERO: SimDuration = SimDuration(0);
    /// The longest representable span.
    pub const MAX: SimDuration = SimDuration(u64::MAX);
    /// From picoseconds.
    pub const fn from_ps(ps: u64) -> Self {
        SimDuration(ps)
    }
    /// From nanoseconds.
    pub const fn from_nanos(ns: u64) -> Self {
        SimDuration(ns * PS_PER_NS)
    }
    /// From microseconds.
    pub const fn from_micros(us: u64) -> Self {
        SimDuration(us * PS_PER_US)
    }
    /// From milliseconds.
    pub const fn from_millis(ms: u64) -> Self {
        SimDuration(ms * PS_PER_MS)
    }
    /// From seconds.
    pub const fn from_secs(s: u64) -> Self {
        SimDuration(s * PS_PER_S)
    }
    /// Picoseconds in this span.
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// True for the zero span.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
    /// Seconds, for reports only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    /// Microseconds, for reports only.
    pub fn as_micros_f64(self) -> f64 {
        self.0 as f64 / PS_PER_US as f64
    }
    /// Milliseconds, for reports only.
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / PS_PER_MS as f64
    }
    /// `self * k`, saturating at [`SimDuration::MAX`].
    pub fn saturating_mul(self, k: u64) -> Self {
        SimDuration(self.0.saturating_mul(k))
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}
impl Div<u64> for SimDuration {
    type Output = SimDuration;
    /// Integer division, rounding down.
    fn div(self, k: u64) -> SimDuration {
        SimDuration(self.0 / k)
    }
}
impl Sub for SimDuration {
    type Output = SimDuration;
    fn sub(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_sub(d.0))
    }
}

fn fmt_ps(ps: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let (div, unit) = match ps {
        p if p >= PS_PER_S => (PS_PER_S, "s"),
        p if p >= PS_PER_MS => (PS_PER_MS, "ms"),
        p if p >= PS_PER_US => (PS_PER_US, "us"),
        p if p >= PS_PER_NS => (PS_PER_NS, "ns"),
        _ => (1, "ps"),
    };
    write!(f, "{}{}", ps as f64 / div as f64, unit)
}
impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ps(self.0, f)
    }
}
impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ps(self.0, f)
    }
}

/// A link rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BitRate(pub u64);

impl BitRate {
    /// From bits per second.
    pub const fn bps(b: u64) -> Self {
        BitRate(b)
    }
    /// From megabits per second.
    pub const fn mbps(m: u64) -> Self {
        BitRate(m * 1_000_000)
    }
    /// From gigabits per second.
    pub const fn gbps(g: u64) -> Self {
        BitRate(g * 1_000_000_000)
    }
    /// Bits per second.
    pub const fn as_bps(self) -> u64 {
        self.0
    }
    /// Time to serialize `bytes` at this rate, rounded up to a whole picosecond.
    ///
    /// Exact for every frame size a simulation produces: `bytes · 8·10¹²`
    /// fits in a `u64` for any `bytes` below 2.3 MB.
    #[inline]
    pub fn tx_time(self, bytes: u64) -> SimDuration {
        debug_assert!(self.0 > 0);
        let num = bytes as u128 * 8 * PS_PER_S as u128;
        SimDuration(num.div_ceil(self.0 as u128) as u64)
    }
}

/// Serialization cost of one byte at a fixed rate, precomputed so that the
/// per-packet hot path multiplies instead of dividing when the rate allows it.
#[derive(Clone, Copy, Debug)]
pub struct ByteTime {
    rate: BitRate,
    /// Exact picoseconds per byte when `8·10¹²` is divisible by the rate.
    exact_ps_per_byte: Option<u64>,
}

impl ByteTime {
    /// Precompute for `rate`.
    pub fn new(rate: BitRate) -> Self {
        let bits = 8 * PS_PER_S;
        let exact_ps_per_byte = (bits % rate.0 == 0).then_some(bits / rate.0);
        ByteTime { rate, exact_ps_per_byte }
    }
    /// Same as [`BitRate::tx_time`].
    #[inline]
    pub fn tx_time(&self, bytes: u64) -> SimDuration {
        match self.exact_ps_per_byte {
            Some(p) => SimDuration(bytes * p),
            None => self.rate.tx_time(bytes),
        }
    }
    /// The rate this was built for.
    pub fn rate(&self) -> BitRate {
        self.rate
    }
}

/// A number of bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Bytes(pub u64);

impl Bytes {
    /// From bytes.
    pub const fn new(b: u64) -> Self {
        Bytes(b)
    }
    /// From kibibytes.
    pub const fn kib(k: u64) -> Self {
        Bytes(k * 1024)
    }
    /// From mebibytes.
    pub const fn mib(m: u64) -> Self {
        Bytes(m * 1024 * 1024)
    }
    /// The count.
    pub const fn get(self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1538-byte wire frame takes 12.304 µs at 1 Gbps.
    #[test]
    fn full_frame_at_one_gigabit() {
        assert_eq!(BitRate::gbps(1).tx_time(1538), SimDuration::from_nanos(12_304));
        assert_eq!(ByteTime::new(BitRate::gbps(1)).tx_time(1538), SimDuration::from_nanos(12_304));
    }

    /// Rates that do not divide 8·10¹² round up, never down.
    #[test]
    fn inexact_rates_round_up() {
        let r = BitRate::bps(3_000_000_000);
        let t = r.tx_time(1);
        assert_eq!(t.as_ps(), 2667); // 8000/3 = 2666.67
        assert_eq!(ByteTime::new(r).tx_time(1), t);
    }

    #[test]
    fn display_picks_a_readable_unit() {
        assert_eq!(SimDuration::from_micros(100).to_string(), "100us");
        assert_eq!(SimDuration::from_millis(200).to_string(), "200ms");
        assert_eq!(SimDuration::from_nanos(1500).to_string(), "1.5us");
    }

    #[test]
    fn time_arithmetic_saturates() {
        assert_eq!(SimTime(u64::MAX) + SimDuration(5), SimTime(u64::MAX));
        assert_eq!(SimTime(5).since(SimTime(9)), SimDuration::ZERO);
    }
}
