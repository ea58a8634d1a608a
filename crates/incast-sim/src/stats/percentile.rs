//! Nearest-rank percentiles.

use serde::Serialize;

/// p50, p99 and maximum of a sample; `None` for an empty sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Percentiles {
    /// Median (nearest rank).
    pub p50: Option<f64>,
    /// 99th percentile (nearest rank).
    pub p99: Option<f64>,
    /// Largest value.
    pub max: Option<f64>,
}

impl Percentiles {
    /// Nearest-rank percentiles of `values` (order irrelevant).
    pub fn of(values: &[f64]) -> Self {
        if values.is_empty() {
            return Percentiles::default();
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let rank = |p: f64| v[((p / 100.0 * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Percentiles { p50: Some(rank(50.0)), p99: Some(rank(99.0)), max: v.last().copied() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_on_one_to_hundred() {
        let v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let p = Percentiles::of(&v);
        assert_eq!((p.p50, p.p99, p.max), (Some(50.0), Some(99.0), Some(100.0)));
    }

    #[test]
    fn single_value_is_every_percentile() {
        let p = Percentiles::of(&[7.0]);
        assert_eq!((p.p50, p.p99, p.max), (Some(7.0), Some(7.0), Some(7.0)));
    }

    #[test]
    fn empty_sample_has_no_percentiles() {
        assert_eq!(Percentiles::of(&[]), Percentiles::default());
    }
}
