//! Quantities with units: durations, rates and sizes (and `"64pkt"` packet
//! counts for buffer limits).
//!
//! Unit strings are parsed exactly, as decimals (`"1.1Gbps"` is exactly
//! 1 100 000 000 bit/s). A unit is never guessed: a plain number other than
//! 0 is refused, naming the units it needs (the plain-SI form of a whole
//! scenario says so once, `scenario::shape`, and gets its units there).
//! Printing picks the largest unit that keeps the value exact.

use super::spec::python_repr;
use super::Spec;
use crate::time::{BitRate, Bytes, SimDuration};
use serde_json::Value as Json;

/// Most decimal digits a quantity may have before it is refused as too large.
const MAX_EXPONENT: i64 = 40;

/// An exact decimal: `digits × 10^exp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Decimal {
    digits: u128,
    exp: i64,
}

impl Decimal {
    const ZERO: Decimal = Decimal { digits: 0, exp: 0 };

    /// `"1.5"`, `"2e-3"`, `".5"`: digits with an optional point and exponent, no sign.
    fn parse(text: &str) -> Option<Decimal> {
        let (mantissa, exp) = match text.find(['e', 'E']) {
            Some(i) => (&text[..i], text[i + 1..].parse::<i64>().ok()?),
            None => (text, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if int.is_empty() && frac.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return None;
        }
        let all = format!("{int}{frac}");
        let all = all.trim_start_matches('0');
        let significant = all.trim_end_matches('0');
        let trailing = (all.len() - significant.len()) as i64;
        let exp = exp.checked_sub(frac.len() as i64)?.checked_add(trailing)?;
        if significant.is_empty() {
            return Some(Decimal::ZERO);
        }
        if significant.len() > 38 {
            return None;
        }
        Some(Decimal { digits: significant.parse().ok()?, exp })
    }

    /// Decimal exponent of the leading digit (Python's `Decimal.adjusted`).
    fn adjusted(self) -> i64 {
        self.exp + self.digits.checked_ilog10().map_or(0, i64::from)
    }

    /// `self × 10^shift`, rounded half to even; `None` when it does not fit in a u64.
    fn scaled_round(self, shift: i64) -> Option<u64> {
        if self.digits == 0 {
            return Some(0);
        }
        let e = self.exp + shift;
        if e >= 0 {
            let factor = 10u128.checked_pow(u32::try_from(e).ok()?)?;
            return u64::try_from(self.digits.checked_mul(factor)?).ok();
        }
        let Ok(down) = u32::try_from(-e) else { return Some(0) };
        let Some(div) = 10u128.checked_pow(down) else { return Some(0) };
        let (q, r) = (self.digits / div, self.digits % div);
        let q = match (2 * r).cmp(&div) {
            std::cmp::Ordering::Greater => q + 1,
            std::cmp::Ordering::Equal if q % 2 == 1 => q + 1,
            _ => q,
        };
        u64::try_from(q).ok()
    }

    /// `self × 10^shift` exactly, or `None` when it is not a whole number or too large.
    fn scaled_exact(self, shift: i64) -> Option<u64> {
        let e = self.exp + shift;
        if self.digits == 0 {
            Some(0)
        } else if e >= 0 {
            u64::try_from(self.digits.checked_mul(10u128.checked_pow(u32::try_from(e).ok()?)?)?).ok()
        } else {
            let div = 10u128.checked_pow(u32::try_from(-e).ok()?)?;
            (self.digits % div == 0).then(|| u64::try_from(self.digits / div).ok()).flatten()
        }
    }
}

/// `n / 10^places` as a plain decimal string, trailing zeros dropped: `(1500, 3)` → `"1.5"`.
fn plain(n: u64, places: u32) -> String {
    let div = 10u64.pow(places);
    let (int, frac) = (n / div, n % div);
    if frac == 0 {
        return int.to_string();
    }
    let frac = format!("{frac:0width$}", width = places as usize);
    format!("{int}.{}", frac.trim_end_matches('0'))
}

/// `n` base units in the largest of `units` (name, power of ten) it reaches,
/// as an exact decimal: `(1_500_000, [("ms", 9), ("us", 6)], "ps")` → `"1.5us"`.
fn in_largest_unit(n: u64, units: &[(&str, u32)], base: &str) -> String {
    match units.iter().find(|&&(_, places)| n >= 10u64.pow(places)) {
        Some(&(unit, places)) => format!("{}{unit}", plain(n, places)),
        None => format!("{n}{base}"),
    }
}

/// What a quantity was given as: zero, or digits with a unit.
enum Quantity<'a> {
    Zero,
    WithUnit(Decimal, &'a str),
}

/// Split a quantity: the number 0 (`-0.0` included), or a string of digits
/// and a unit. Errors name `what` the value should be, the `forms` allowed
/// and, for a number without its unit, an `example` of each form.
fn quantity<'a>(raw: &'a Json, what: &str, forms: &str, example: &str) -> Result<Quantity<'a>, String> {
    let r = python_repr(raw);
    match raw {
        // A JSON number is never NaN or infinite; a float pattern compares
        // with `==`, so `-0.0` is zero too.
        Json::Number(n) => match n.as_f64() {
            Some(0.0) => Ok(Quantity::Zero),
            Some(f) if f < 0.0 => Err(format!("{r} is not {what}: it must not be negative")),
            _ => Err(format!("{r} needs a unit, e.g. {example}")),
        },
        Json::String(s) => {
            let text = s.trim();
            if text.starts_with('-') {
                return Err(format!("{r} is not {what}: it must not be negative"));
            }
            let Some((num, unit)) = split_number(text) else {
                return Err(format!("{r} is not {what}: use {forms}"));
            };
            let Some(d) = Decimal::parse(num) else {
                return Err(format!("{r} is too large to be {what}"));
            };
            if unit.is_empty() {
                return if d.digits == 0 && what == "a duration" && text == "0" {
                    Ok(Quantity::Zero)
                } else {
                    Err(format!("{r} needs a unit, e.g. {example}"))
                };
            }
            if d.adjusted() > MAX_EXPONENT {
                return Err(format!("{r} is too large to be {what}"));
            }
            Ok(Quantity::WithUnit(d, unit))
        }
        _ => Err(format!("{r} is not {what}: use {forms}")),
    }
}

/// `"1.5 ms"` → `("1.5", "ms")`: digits with an optional point and exponent,
/// optional spaces, then a unit that starts with neither a digit nor a point.
fn split_number(text: &str) -> Option<(&str, &str)> {
    let b = text.as_bytes();
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let int_end = digits(0);
    let mut end = int_end;
    if end < b.len() && b[end] == b'.' {
        end = digits(end + 1);
        if end == int_end + 1 {
            return None;
        }
    } else if int_end == 0 {
        return None;
    }
    if end < b.len() && (b[end] == b'e' || b[end] == b'E') {
        let mut i = end + 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let exp_end = digits(i);
        if exp_end > i {
            end = exp_end;
        }
    }
    let (num, rest) = text.split_at(end);
    let unit = rest.trim();
    let ok = unit.is_empty()
        || (!unit.starts_with(|c: char| c.is_ascii_digit() || c == '.') && !unit.contains(char::is_whitespace));
    ok.then_some((num, unit))
}

/// A span of time. Strings carry a unit (`ps`, `ns`, `us`, `µs`, `ms`, `s`)
/// or are `"0"`; numbers are seconds. Values are kept in whole picoseconds,
/// rounded to nearest (ties to even).
#[derive(Clone, Copy, Debug)]
pub struct Duration {
    /// Zero is refused.
    pub positive: bool,
}

impl Duration {
    /// Any duration, zero included.
    pub const ANY: Duration = Duration { positive: false };
    /// A duration of at least 1 ps.
    pub const POSITIVE: Duration = Duration { positive: true };
    const FORMS: &'static str = "a number with one of ps, ns, us, µs, ms, s (e.g. \"100us\"), or 0";
    const EXAMPLE: &'static str = "\"1s\" or \"200ms\"";

    fn unit_exponent(unit: &str) -> Option<i64> {
        Some(match unit {
            "ps" => 0,
            "ns" => 3,
            "us" | "µs" | "μs" => 6,
            "ms" => 9,
            "s" => 12,
            _ => return None,
        })
    }

    /// A duration as the shortest exact string: `"100us"`, `"1.5ms"`, `"0"`.
    pub fn format(d: SimDuration) -> String {
        match d.as_ps() {
            0 => "0".into(),
            ps => in_largest_unit(ps, &[("s", 12), ("ms", 9), ("us", 6), ("ns", 3)], "ps"),
        }
    }
}

impl Spec<SimDuration> for Duration {
    fn parse(&self, raw: &Json) -> Result<SimDuration, String> {
        let r = python_repr(raw);
        let (d, e) = match quantity(raw, "a duration", Self::FORMS, Self::EXAMPLE)? {
            Quantity::Zero => (Decimal::ZERO, 0),
            Quantity::WithUnit(d, unit) => match Self::unit_exponent(unit) {
                Some(e) => (d, e),
                None => return Err(format!("{r} is not a duration: use {}", Self::FORMS)),
            },
        };
        let Some(ps) = d.scaled_round(e) else {
            return Err(format!("{r} is too long: the engine counts at most 2^64 ps (about 213 days)"));
        };
        if ps == 0 && d.digits != 0 {
            return Err(format!("{r} rounds to 0: durations are kept in whole picoseconds"));
        }
        if self.positive && ps == 0 {
            return Err(format!("must be positive (at least 1ps), got {r}"));
        }
        Ok(SimDuration::from_ps(ps))
    }
    fn toml(&self, value: &SimDuration) -> Json {
        Json::String(Self::format(*value))
    }
    fn si(&self, value: &SimDuration) -> Json {
        Json::from(value.as_ps() as f64 / 1e12)
    }
    fn kind(&self) -> &'static str {
        "duration"
    }
    fn allowed(&self) -> String {
        if self.positive { "a positive duration (e.g. \"100us\")" } else { "a duration (e.g. \"100us\", or 0)" }.into()
    }
}

/// A link rate in whole bit/s: `"1Gbps"`, `"2.5Mbps"`, or a number of bit/s.
#[derive(Clone, Copy, Debug)]
pub struct Rate;

impl Rate {
    const FORMS: &'static str = "a number with one of bps, Kbps, Mbps, Gbps, Tbps (e.g. \"1Gbps\")";
    const EXAMPLE: &'static str = "\"1Gbps\" or \"100Mbps\"";

    /// A rate as the largest unit that keeps it exact: `"1Gbps"`, `"2.5Mbps"`.
    pub fn format(rate: BitRate) -> String {
        in_largest_unit(rate.as_bps(), &[("Tbps", 12), ("Gbps", 9), ("Mbps", 6), ("Kbps", 3)], "bps")
    }
}

impl Spec<BitRate> for Rate {
    fn parse(&self, raw: &Json) -> Result<BitRate, String> {
        let r = python_repr(raw);
        let (d, e) = match quantity(raw, "a rate", Self::FORMS, Self::EXAMPLE)? {
            Quantity::Zero => (Decimal::ZERO, 0),
            Quantity::WithUnit(d, unit) => match unit {
                "bps" => (d, 0),
                "Kbps" => (d, 3),
                "Mbps" => (d, 6),
                "Gbps" => (d, 9),
                "Tbps" => (d, 12),
                _ => return Err(format!("{r} is not a rate: use {}", Self::FORMS)),
            },
        };
        let bps = match d.scaled_exact(e) {
            Some(bps) => bps,
            None if d.scaled_round(e).is_none() => return Err(format!("{r} is too fast: at most 2^64-1 bit/s")),
            None => return Err(format!("{r} is not a whole number of bit/s")),
        };
        if bps == 0 {
            return Err(format!("must be a positive rate (e.g. \"1Gbps\"), got {r}"));
        }
        Ok(BitRate::bps(bps))
    }
    fn toml(&self, value: &BitRate) -> Json {
        Json::String(Self::format(*value))
    }
    fn si(&self, value: &BitRate) -> Json {
        Json::from(value.as_bps())
    }
    fn kind(&self) -> &'static str {
        "rate"
    }
    fn allowed(&self) -> String {
        "a positive rate (e.g. \"1Gbps\")".into()
    }
}

/// A size in whole bytes: `"32KiB"`, `"1.5KB"`, `"100B"`, or a number of bytes.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    /// The smallest size allowed.
    pub min: u64,
}

impl Size {
    const FORMS: &'static str = "a whole number of bytes with one of B, KB, MB, GB, KiB, MiB, GiB (e.g. \"32KiB\")";
    const EXAMPLE: &'static str = "\"1500B\" or \"32KiB\"";

    /// Bytes with an exact binary or decimal unit when one fits: `"32KiB"`.
    pub fn format(b: u64) -> String {
        for (unit, factor) in [
            ("GiB", 1u64 << 30),
            ("MiB", 1 << 20),
            ("KiB", 1 << 10),
            ("GB", 1_000_000_000),
            ("MB", 1_000_000),
            ("KB", 1000),
        ] {
            if b >= factor && b % factor == 0 {
                return format!("{}{unit}", b / factor);
            }
        }
        format!("{b}B")
    }

    /// Whole bytes of a quantity; the error names `what` it should have been,
    /// the `forms` allowed and an `example` of each for a number without its unit.
    pub fn bytes(raw: &Json, what: &str, forms: &str, example: &str) -> Result<u64, String> {
        let r = python_repr(raw);
        let (d, factor) = match quantity(raw, what, forms, example)? {
            Quantity::Zero => (Decimal::ZERO, 1u64),
            Quantity::WithUnit(d, unit) => match unit {
                "B" => (d, 1),
                "KB" => (d, 1000),
                "MB" => (d, 1_000_000),
                "GB" => (d, 1_000_000_000),
                "KiB" => (d, 1 << 10),
                "MiB" => (d, 1 << 20),
                "GiB" => (d, 1 << 30),
                _ => return Err(format!("{r} is not {what}: use {forms}")),
            },
        };
        let scaled =
            Decimal { digits: d.digits.checked_mul(u128::from(factor)).ok_or_else(|| too_large(&r))?, exp: d.exp };
        match scaled.scaled_exact(0) {
            Some(b) => Ok(b),
            None if scaled.scaled_round(0).is_none() => Err(too_large(&r)),
            None => Err(format!("{r} is not a whole number of bytes")),
        }
    }
}

fn too_large(r: &str) -> String {
    format!("{r} is too large: at most 2^64-1 bytes")
}

impl Spec<Bytes> for Size {
    fn parse(&self, raw: &Json) -> Result<Bytes, String> {
        let b = Size::bytes(raw, "a size", Self::FORMS, Self::EXAMPLE)?;
        if b < self.min {
            let s = if self.min == 1 { "" } else { "s" };
            return Err(format!("must be at least {} byte{s}, got {}", self.min, python_repr(raw)));
        }
        Ok(Bytes::new(b))
    }
    fn toml(&self, value: &Bytes) -> Json {
        Json::String(Size::format(value.get()))
    }
    fn si(&self, value: &Bytes) -> Json {
        Json::from(value.get())
    }
    fn kind(&self) -> &'static str {
        "size"
    }
    fn allowed(&self) -> String {
        format!("a size of at least {} (e.g. \"32KiB\")", Size::format(self.min))
    }
}

/// `"64pkt"` (or `"64pkts"`) as a whole number of packets; `None` when the
/// value is not written in packets.
pub fn packet_count(raw: &Json) -> Option<Result<u64, String>> {
    let Json::String(s) = raw else { return None };
    let text = s.trim();
    let count = text.strip_suffix("pkts").or_else(|| text.strip_suffix("pkt"))?.trim_end();
    let (num, unit) = split_number(count)?;
    let d = Decimal::parse(num).filter(|_| unit.is_empty())?;
    let r = python_repr(raw);
    Some(if d.adjusted() > MAX_EXPONENT {
        Err(format!("{r} is too large to be a buffer limit"))
    } else {
        d.scaled_exact(0).ok_or_else(|| format!("{r} is not a whole number of packets"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn durations_parse_exactly_and_print_back() {
        let d = |v: Json| Duration::ANY.parse(&v).map(SimDuration::as_ps);
        assert_eq!(d(json!("100us")), Ok(100_000_000));
        assert_eq!(d(json!("1.5 ms")), Ok(1_500_000_000));
        assert_eq!(d(json!("0")), Ok(0));
        assert_eq!(d(json!("2e-3s")), Ok(2_000_000_000));
        assert_eq!(d(json!("0.6ps")), Ok(1));
        assert_eq!(d(json!("0.1ps")).unwrap_err(), "'0.1ps' rounds to 0: durations are kept in whole picoseconds");
        assert_eq!(d(json!("100")).unwrap_err(), "'100' needs a unit, e.g. \"1s\" or \"200ms\"");
        assert_eq!(
            d(json!("100xs")).unwrap_err(),
            "'100xs' is not a duration: use a number with one of ps, ns, us, µs, ms, s (e.g. \"100us\"), or 0"
        );
        assert_eq!(d(json!("-1ms")).unwrap_err(), "'-1ms' is not a duration: it must not be negative");
        assert!(d(json!("1e8s")).unwrap_err().contains("too long"));
        for text in ["100us", "1.5ms", "200ms", "120s", "1ns", "7ps", "0"] {
            assert_eq!(Duration::format(Duration::ANY.parse(&json!(text)).unwrap()), text);
        }
        assert_eq!(Duration::ANY.si(&SimDuration::from_micros(100)), json!(0.0001));
    }

    #[test]
    fn rates_and_sizes_are_whole_and_print_in_the_largest_exact_unit() {
        assert_eq!(Rate.parse(&json!("1.1Gbps")), Ok(BitRate::bps(1_100_000_000)));
        assert_eq!(Rate.parse(&json!("0Gbps")).unwrap_err(), "must be a positive rate (e.g. \"1Gbps\"), got '0Gbps'");
        assert_eq!(Rate::format(BitRate::bps(2_500_000)), "2.5Mbps");
        assert_eq!(Size { min: 1 }.parse(&json!("1.5KB")), Ok(Bytes::new(1500)));
        assert_eq!(Size::format(32768), "32KiB");
        assert_eq!(Size { min: 1 }.parse(&json!("1.5B")).unwrap_err(), "'1.5B' is not a whole number of bytes");
    }

    /// A unit is never guessed: a plain number other than zero is refused,
    /// naming the units it needs, whatever the quantity.
    #[test]
    fn a_plain_number_other_than_zero_needs_a_unit() {
        assert_eq!(Duration::ANY.parse(&json!(1)).unwrap_err(), "1 needs a unit, e.g. \"1s\" or \"200ms\"");
        assert_eq!(Duration::ANY.parse(&json!(0.0002)).unwrap_err(), "0.0002 needs a unit, e.g. \"1s\" or \"200ms\"");
        assert_eq!(Rate.parse(&json!(1e10)).unwrap_err(), "10000000000.0 needs a unit, e.g. \"1Gbps\" or \"100Mbps\"");
        assert_eq!(Size { min: 1 }.parse(&json!(1500)).unwrap_err(), "1500 needs a unit, e.g. \"1500B\" or \"32KiB\"");
        assert_eq!(Duration::ANY.parse(&json!(-1)).unwrap_err(), "-1 is not a duration: it must not be negative");
        assert_eq!(Duration::ANY.parse(&json!(0)), Ok(SimDuration::ZERO));
        assert_eq!(Size { min: 0 }.parse(&json!(0)), Ok(Bytes::new(0)));
    }

    /// Negative zero is zero (IEEE 754 compares them equal), for every kind
    /// of quantity; it once panicked formatting its digits.
    #[test]
    fn negative_zero_is_zero() {
        assert_eq!(Duration::ANY.parse(&json!(-0.0)), Ok(SimDuration::ZERO));
        assert_eq!(Duration::POSITIVE.parse(&json!(-0.0)).unwrap_err(), "must be positive (at least 1ps), got -0.0");
        assert_eq!(Rate.parse(&json!(-0.0)).unwrap_err(), "must be a positive rate (e.g. \"1Gbps\"), got -0.0");
        assert_eq!(Size { min: 1 }.parse(&json!(-0.0)).unwrap_err(), "must be at least 1 byte, got -0.0");
    }
}
