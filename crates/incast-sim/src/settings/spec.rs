//! The ways a plain setting is written: counts, flags, choices, numbers,
//! probabilities, and "a value or a word" (`"off"`, `"all"`, ...). Quantities
//! with units are in `settings::quantity`.
//!
//! Error messages quote the value as Python prints it, since that is what a
//! user of the Python API or of a TOML file wrote.

use super::Spec;
use serde_json::Value as Json;

/// `value` as Python's `repr` prints it: `'abc'`, `2.5`, `True`, `1e-05`.
pub fn python_repr(value: &Json) -> String {
    match value {
        Json::Null => "None".into(),
        Json::Bool(b) => if *b { "True" } else { "False" }.into(),
        Json::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (_, Some(u), _) => u.to_string(),
            (_, _, Some(f)) => python_float(f),
            _ => n.to_string(),
        },
        Json::String(s) => {
            let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
            let mut out = String::from(quote);
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    c if c == quote => {
                        out.push('\\');
                        out.push(c);
                    }
                    c => out.push(c),
                }
            }
            out.push(quote);
            out
        }
        Json::Array(items) => format!("[{}]", items.iter().map(python_repr).collect::<Vec<_>>().join(", ")),
        Json::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", python_repr(&Json::String(k.clone())), python_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A float as Python's `repr`: the shortest round-trip digits, in exponent
/// form below 1e-4 and from 1e16 on.
fn python_float(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    // `{:e}` always writes `<digits>e<exponent>`; were it not to, the plain form serves.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..16).contains(&exp) {
        let plain = format!("{f}");
        if plain.contains('.') {
            plain
        } else {
            format!("{plain}.0")
        }
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    }
}

/// A whole number in `[lo, hi]`, of `what` (servers, segments...); integral
/// floats and digit strings are accepted.
#[derive(Clone, Copy, Debug)]
pub struct Count {
    /// Smallest allowed.
    pub lo: u64,
    /// Largest allowed.
    pub hi: u64,
    /// What is counted, for messages ("" for plain numbers).
    pub what: &'static str,
}

impl Count {
    /// Whole numbers from `lo` to `hi` of `what`.
    pub const fn new(lo: u64, hi: u64, what: &'static str) -> Count {
        Count { lo, hi, what }
    }

    fn described(&self) -> String {
        let top = match self.hi {
            u64::MAX => "2^64-1".to_string(),
            h if h == u64::from(u32::MAX) => "2^32-1".to_string(),
            h => h.to_string(),
        };
        let of = if self.what.is_empty() { String::new() } else { format!(" of {}", self.what) };
        format!("a whole number{of} between {} and {top}", self.lo)
    }

    fn number(&self, raw: &Json) -> Result<u64, String> {
        let n: Option<i128> = match raw {
            Json::Number(n) => n
                .as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from))
                .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 1e38).map(|f| f as i128)),
            Json::String(s) if !s.trim().is_empty() && s.trim().bytes().all(|b| b.is_ascii_digit()) => {
                s.trim().parse::<i128>().ok()
            }
            _ => None,
        };
        let Some(n) = n else {
            return Err(format!("{} is not {}", python_repr(raw), self.described()));
        };
        if n < i128::from(self.lo) || n > i128::from(self.hi) {
            return Err(format!("must be {}, got {n}", self.described()));
        }
        Ok(n as u64)
    }
}

macro_rules! count_spec {
    ($($t:ty),*) => {$(
        impl Spec<$t> for Count {
            fn parse(&self, raw: &Json) -> Result<$t, String> {
                let n = self.number(raw)?;
                <$t>::try_from(n).map_err(|_| format!("must be {}, got {n}", self.described()))
            }
            fn toml(&self, value: &$t) -> Json {
                Json::from(*value)
            }
            fn kind(&self) -> &'static str {
                "count"
            }
            fn allowed(&self) -> String {
                self.described()
            }
        }
    )*};
}
count_spec!(u8, u16, u32, u64);

/// `true` or `false` (TOML booleans, or those words from `--set`).
#[derive(Clone, Copy, Debug)]
pub struct Flag;

impl Spec<bool> for Flag {
    fn parse(&self, raw: &Json) -> Result<bool, String> {
        match raw {
            Json::Bool(b) => Ok(*b),
            Json::String(s) if s == "true" || s == "false" => Ok(s == "true"),
            _ => Err(format!("must be true or false, got {}", python_repr(raw))),
        }
    }
    fn toml(&self, value: &bool) -> Json {
        Json::Bool(*value)
    }
    fn kind(&self) -> &'static str {
        "flag"
    }
    fn allowed(&self) -> String {
        "true or false".into()
    }
}

/// One of a fixed set of words, each naming a value.
#[derive(Clone, Copy, Debug)]
pub struct Choice<T: 'static>(pub &'static [(&'static str, T)]);

impl<T: Copy + PartialEq> Choice<T> {
    fn listed(&self) -> String {
        self.0.iter().map(|(w, _)| format!("\"{w}\"")).collect::<Vec<_>>().join(" or ")
    }
    /// The word of `value`.
    pub fn word(&self, value: T) -> &'static str {
        self.0.iter().find(|(_, v)| *v == value).map_or("?", |(w, _)| w)
    }
}

impl<T: Copy + PartialEq> Spec<T> for Choice<T> {
    fn parse(&self, raw: &Json) -> Result<T, String> {
        // A word made of digits (GIP's "333") may come unquoted, as `--set tcp.gip=333` gives it.
        let word = match raw {
            Json::String(s) => Some(s.clone()),
            Json::Number(n) if n.is_u64() => Some(n.to_string()),
            _ => None,
        };
        if let Some((_, v)) = word.and_then(|s| self.0.iter().find(|(w, _)| *w == s)) {
            return Ok(*v);
        }
        Err(format!("must be {}, got {}", self.listed(), python_repr(raw)))
    }
    fn toml(&self, value: &T) -> Json {
        Json::String(self.word(*value).into())
    }
    fn kind(&self) -> &'static str {
        "choice"
    }
    fn allowed(&self) -> String {
        self.listed()
    }
}

/// A plain number (never a string) in an interval, open or closed at each end.
#[derive(Clone, Copy, Debug)]
pub struct Number {
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// Is `lo` itself allowed?
    pub lo_closed: bool,
    /// Is `hi` itself allowed?
    pub hi_closed: bool,
    /// The interval in words, for messages.
    pub what: &'static str,
}

impl Number {
    /// Strictly between 0 and 1.
    pub const FRACTION: Number =
        Number { lo: 0.0, hi: 1.0, lo_closed: false, hi_closed: false, what: "a number between 0 and 1 (exclusive)" };
    /// From 0 to 1.
    pub const UNIT_INTERVAL: Number =
        Number { lo: 0.0, hi: 1.0, lo_closed: true, hi_closed: true, what: "a number from 0 to 1" };
    /// Positive and finite.
    pub const POSITIVE: Number =
        Number { lo: 0.0, hi: f64::INFINITY, lo_closed: false, hi_closed: false, what: "a positive number" };
}

impl Spec<f64> for Number {
    fn parse(&self, raw: &Json) -> Result<f64, String> {
        let v = raw.as_f64().filter(|_| raw.is_number());
        let ok = v.is_some_and(|v| {
            (if self.lo_closed { self.lo <= v } else { self.lo < v })
                && (if self.hi_closed { v <= self.hi } else { v < self.hi })
        });
        match v {
            Some(v) if ok => Ok(v),
            _ => Err(format!("must be {}, got {}", self.what, python_repr(raw))),
        }
    }
    fn toml(&self, value: &f64) -> Json {
        Json::from(*value)
    }
    fn kind(&self) -> &'static str {
        "number"
    }
    fn allowed(&self) -> String {
        self.what.into()
    }
}

/// A plain number kept as a whole number of `1/scale` steps (rounded to
/// nearest, ties to even), as the kernels it models keep it: Cubic's β in
/// 1/1024, ICTCP's fractions in thousandths. A number whose steps fall outside
/// `[min, max]` is refused, never clamped.
#[derive(Clone, Copy, Debug)]
pub struct Scaled {
    /// The numbers allowed.
    pub number: Number,
    /// Steps per unit.
    pub scale: f64,
    /// Fewest steps kept.
    pub min: u32,
    /// Most steps kept.
    pub max: u32,
}

impl Scaled {
    /// A number from 0 to 1, in thousandths.
    pub const PERMILLE: Scaled = Scaled { number: Number::UNIT_INTERVAL, scale: 1000.0, min: 0, max: 1000 };
}

impl Spec<u32> for Scaled {
    fn parse(&self, raw: &Json) -> Result<u32, String> {
        let x = self.number.parse(raw)?;
        let steps = (x * self.scale).round_ties_even();
        if steps < f64::from(self.min) || steps > f64::from(self.max) {
            let (lo, hi) = (f64::from(self.min) / self.scale, f64::from(self.max) / self.scale);
            return Err(format!(
                "{} kept in steps of 1/{} is {steps}, outside {lo} to {hi}",
                python_repr(raw),
                self.scale
            ));
        }
        Ok(steps as u32)
    }
    fn toml(&self, value: &u32) -> Json {
        Json::from(f64::from(*value) / self.scale)
    }
    fn kind(&self) -> &'static str {
        "number"
    }
    fn allowed(&self) -> String {
        format!("{}, kept in steps of 1/{}", self.number.what, self.scale)
    }
}

/// A probability from 0 up to (not including) 1, kept in parts per billion.
#[derive(Clone, Copy, Debug)]
pub struct Probability;

impl Spec<u32> for Probability {
    fn parse(&self, raw: &Json) -> Result<u32, String> {
        let what = "a probability from 0 up to 1 (exclusive)";
        let p = raw.as_f64().filter(|p| raw.is_number() && (0.0..1.0).contains(p));
        let Some(p) = p else {
            return Err(format!("must be {what}, got {}", python_repr(raw)));
        };
        let ppb = (p * 1e9).round_ties_even();
        if ppb >= 1e9 {
            return Err(format!(
                "must be {what} once kept in parts per billion, got {} (rounds to 1)",
                python_repr(raw)
            ));
        }
        Ok(ppb as u32)
    }
    fn toml(&self, value: &u32) -> Json {
        Json::from(f64::from(*value) / 1e9)
    }
    fn kind(&self) -> &'static str {
        "probability"
    }
    fn allowed(&self) -> String {
        "a probability from 0 up to 1 (exclusive), kept in parts per billion".into()
    }
}

/// A value of `spec`, or `word` (`"off"`, `"never"`, `"all"`, `"link"`) for none.
#[derive(Clone, Copy, Debug)]
pub struct OrWord<S> {
    /// The word meaning none.
    pub word: &'static str,
    /// The spec of a value.
    pub spec: S,
    /// How the value is named in messages ("a duration", "a positive duration", ...).
    pub what: &'static str,
}

impl<T, S: Spec<T>> Spec<Option<T>> for OrWord<S> {
    fn parse(&self, raw: &Json) -> Result<Option<T>, String> {
        let is_word = match raw {
            Json::Null => true,
            Json::String(s) => s.trim().eq_ignore_ascii_case(self.word),
            _ => false,
        };
        if is_word {
            return Ok(None);
        }
        self.spec.parse(raw).map(Some).map_err(|e| format!("must be \"{}\" or {}; {e}", self.word, self.what))
    }
    fn toml(&self, value: &Option<T>) -> Json {
        value.as_ref().map_or_else(|| Json::String(self.word.into()), |v| self.spec.toml(v))
    }
    fn si(&self, value: &Option<T>) -> Json {
        value.as_ref().map_or_else(|| Json::String(self.word.into()), |v| self.spec.si(v))
    }
    fn kind(&self) -> &'static str {
        self.spec.kind()
    }
    fn allowed(&self) -> String {
        format!("{}, or \"{}\"", self.spec.allowed(), self.word)
    }
    fn none_word(&self) -> Option<&'static str> {
        Some(self.word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_name_their_range_and_what_they_count() {
        let c = Count::new(1, 100_000, "servers");
        assert_eq!(Spec::<u32>::parse(&c, &json!("64")), Ok(64));
        assert_eq!(
            Spec::<u32>::parse(&c, &json!(0)).unwrap_err(),
            "must be a whole number of servers between 1 and 100000, got 0"
        );
        assert_eq!(
            Spec::<u32>::parse(&c, &json!(2.5)).unwrap_err(),
            "2.5 is not a whole number of servers between 1 and 100000"
        );
        assert_eq!(
            Spec::<u32>::parse(&c, &json!(true)).unwrap_err(),
            "True is not a whole number of servers between 1 and 100000"
        );
    }

    #[test]
    fn a_choice_spelled_in_digits_may_come_as_a_number() {
        let c = Choice(&[("off", 0u8), ("333", 3), ("123", 1)]);
        assert_eq!(c.parse(&json!("333")), Ok(3));
        assert_eq!(c.parse(&json!(123)), Ok(1));
        assert_eq!(c.parse(&json!(332)).unwrap_err(), "must be \"off\" or \"333\" or \"123\", got 332");
        assert!(c.parse(&json!(333.0)).is_err(), "only a whole number spells the word");
    }

    #[test]
    fn python_repr_matches_python() {
        assert_eq!(python_repr(&json!(1e-5)), "1e-05");
        assert_eq!(python_repr(&json!(1e30)), "1e+30");
        assert_eq!(python_repr(&json!(0.0001)), "0.0001");
        assert_eq!(python_repr(&json!(2.0)), "2.0");
        assert_eq!(python_repr(&json!("it's")), "\"it's\"");
    }
}
