//! Flow-size distributions: the published ones the datacenter papers sample
//! (shipped as data files beside this module, each stating its source), or
//! a user's, as an empirical CDF.
//!
//! **Models:** a CDF is a list of points (size in bytes, fraction of flows
//! no larger), sizes and fractions both non-decreasing, the last fraction 1.
//! A size is drawn by inverting the CDF at a uniform `u`, interpolating
//! linearly between the two points around it (as the traffic generators of
//! pFabric and HPCC do), rounded to whole bytes, at least 1.
//! **Deliberately different:** a CDF that starts above fraction 0 gives its
//! first size to the flows below it (a step at the first point).
//! **Not modelled:** correlations between a flow's size and its endpoints or
//! arrival time.

use crate::settings::python_repr;
use serde_json::Value as Json;

/// A published distribution shipped with the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Published {
    /// Web search (DCTCP, SIGCOMM 2010, Figure 4).
    WebSearch,
    /// Data mining (VL2, SIGCOMM 2009, Figure 2).
    DataMining,
    /// Facebook Hadoop (Roy et al., SIGCOMM 2015, Figure 6).
    Hadoop,
}

/// The published distributions by name, with their data files.
pub const PUBLISHED: [(&str, Published, &str); 3] = [
    ("websearch", Published::WebSearch, include_str!("flow_sizes/websearch.cdf")),
    ("datamining", Published::DataMining, include_str!("flow_sizes/datamining.cdf")),
    ("hadoop", Published::Hadoop, include_str!("flow_sizes/hadoop.cdf")),
];

/// An empirical CDF of flow sizes: `(bytes, fraction no larger)` points.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCdf {
    points: Vec<(u64, f64)>,
}

impl Eq for SizeCdf {}

impl SizeCdf {
    /// The points of a published distribution.
    pub fn published(which: Published) -> SizeCdf {
        let (_, _, text) = PUBLISHED.iter().find(|p| p.1 == which).expect("every published CDF is listed");
        SizeCdf::parse_text(text).expect("a shipped CDF file is well formed")
    }

    /// Check `points` and keep them: at least one, sizes and fractions
    /// non-decreasing, fractions in [0, 1], the last one 1, the last size above 0.
    pub fn new(points: Vec<(u64, f64)>) -> Result<SizeCdf, String> {
        let Some(&(last_size, last)) = points.last() else {
            return Err("a CDF needs at least one point".into());
        };
        for (i, w) in points.windows(2).enumerate() {
            let ((s0, f0), (s1, f1)) = (w[0], w[1]);
            if s1 < s0 {
                return Err(format!("not monotone: size {s1} after {s0} at point {}", i + 2));
            }
            if f1 < f0 {
                return Err(format!("not monotone: fraction {f1} after {f0} at point {}", i + 2));
            }
        }
        if let Some((i, &(_, f))) = points.iter().enumerate().find(|(_, p)| !(0.0..=1.0).contains(&p.1)) {
            return Err(format!("fraction {f} at point {} is outside 0..1", i + 1));
        }
        if last != 1.0 || last_size == 0 {
            return Err(format!("the last point must have fraction 1 and a size above 0, got ({last_size}, {last})"));
        }
        Ok(SizeCdf { points })
    }

    /// Read a CDF file's text: a line per point, `bytes fraction` (blank
    /// lines and `#` comments skipped). Errors name the line.
    pub fn parse_text(text: &str) -> Result<SizeCdf, String> {
        let mut points = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            let point = match fields.as_slice() {
                [size, fraction] => size.parse::<f64>().ok().zip(fraction.parse::<f64>().ok()),
                _ => None,
            };
            match point {
                Some((size, fraction)) if size >= 0.0 && size.fract() == 0.0 && size < 2f64.powi(63) => {
                    points.push((size as u64, fraction))
                }
                _ => return Err(format!("line {}: expected `bytes fraction`, got {line:?}", n + 1)),
            }
        }
        SizeCdf::new(points)
    }

    /// Read `[[bytes, fraction], ...]`, as the canonical form writes it.
    pub fn from_json(raw: &Json) -> Result<SizeCdf, String> {
        let bad = || format!("expected [bytes, fraction] pairs, got {}", python_repr(raw));
        let pairs = raw.as_array().ok_or_else(bad)?;
        let points = pairs
            .iter()
            .map(|p| match p.as_array().map(Vec::as_slice) {
                Some([s, f]) => s.as_u64().zip(f.as_f64()).ok_or_else(bad),
                _ => Err(bad()),
            })
            .collect::<Result<Vec<_>, _>>()?;
        SizeCdf::new(points)
    }

    /// `[[bytes, fraction], ...]`.
    pub fn to_json(&self) -> Json {
        Json::Array(self.points.iter().map(|&(s, f)| Json::from(vec![Json::from(s), Json::from(f)])).collect())
    }

    /// The size at quantile `u` in [0, 1): linear between the points around it.
    pub fn quantile(&self, u: f64) -> u64 {
        let i = self.points.partition_point(|p| p.1 <= u);
        let size = match (i.checked_sub(1).map(|j| self.points[j]), self.points.get(i)) {
            (Some((s0, f0)), Some(&(s1, f1))) => s0 as f64 + (s1 - s0) as f64 * (u - f0) / (f1 - f0),
            (None, Some(&(s1, _))) => s1 as f64,
            (_, None) => self.points[self.points.len() - 1].0 as f64,
        };
        (size.round() as u64).max(1)
    }

    /// The fraction of flows no larger than `bytes` (the CDF itself, linear between points).
    pub fn cdf(&self, bytes: f64) -> f64 {
        let i = self.points.partition_point(|p| (p.0 as f64) <= bytes);
        match (i.checked_sub(1).map(|j| self.points[j]), self.points.get(i)) {
            (Some((s0, f0)), Some(&(s1, f1))) => f0 + (f1 - f0) * (bytes - s0 as f64) / (s1 - s0) as f64,
            (None, _) => 0.0,
            (_, None) => 1.0,
        }
    }

    /// The mean size in bytes: each segment between points holds its
    /// fraction of flows spread uniformly between its sizes.
    pub fn mean(&self) -> f64 {
        let first = self.points[0];
        let head = first.1 * first.0.max(1) as f64;
        head + self
            .points
            .windows(2)
            .map(|w| (w[1].1 - w[0].1) * ((w[0].0 + w[1].0) as f64 / 2.0).max(1.0))
            .sum::<f64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped files read; web search's mean is 1.71 MB by its points,
    /// data mining's above 7 MB, Hadoop's median 700 bytes.
    #[test]
    fn the_published_distributions_read_and_have_their_means() {
        let web = SizeCdf::published(Published::WebSearch);
        assert!((web.mean() - 1_711_250.0).abs() < 1.0, "{}", web.mean());
        let mining = SizeCdf::published(Published::DataMining);
        assert!(mining.mean() > 7e6, "{}", mining.mean());
        assert_eq!(SizeCdf::published(Published::Hadoop).quantile(0.5), 700);
    }

    #[test]
    fn quantiles_interpolate_between_points() {
        let web = SizeCdf::published(Published::WebSearch);
        assert_eq!(web.quantile(0.0), 1);
        assert_eq!(web.quantile(0.15), 10_000);
        assert_eq!(web.quantile(0.175), 15_000);
        assert_eq!(web.quantile(0.999_999), 29_999_333);
        assert!((web.cdf(15_000.0) - 0.175).abs() < 1e-12);
    }

    #[test]
    fn a_cdf_that_is_not_monotone_or_not_ending_at_one_is_refused() {
        assert_eq!(
            SizeCdf::parse_text("100 0.5\n50 0.7\n200 1").unwrap_err(),
            "not monotone: size 50 after 100 at point 2"
        );
        assert_eq!(
            SizeCdf::parse_text("100 0.5\n150 0.4\n200 1").unwrap_err(),
            "not monotone: fraction 0.4 after 0.5 at point 2"
        );
        assert!(SizeCdf::parse_text("100 0.5\n200 0.9").unwrap_err().starts_with("the last point must"));
        assert_eq!(
            SizeCdf::parse_text("# sizes\n100 half\n").unwrap_err(),
            "line 2: expected `bytes fraction`, got \"100 half\""
        );
        assert_eq!(SizeCdf::parse_text("").unwrap_err(), "a CDF needs at least one point");
    }
}
