//! Statistics derived from histograms: percentile summaries, throughput per interval.
//! Percentiles are read from (merged) histograms only; nothing here averages percentiles.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Latency summary in milliseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Latency {
    pub count: u64,
    pub min: f64,
    pub mean: f64,
    pub stdev: f64,
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    pub p9999: f64,
    pub max: f64,
}

fn ms(us: f64) -> f64 {
    (us / 1000.0 * 1000.0).round() / 1000.0
}

impl Latency {
    pub fn from_histogram(h: &Histogram<u64>) -> Latency {
        if h.is_empty() {
            return Latency::default();
        }
        let q = |p: f64| ms(h.value_at_quantile(p) as f64);
        Latency {
            count: h.len(),
            min: ms(h.min() as f64),
            mean: ms(h.mean()),
            stdev: ms(h.stdev()),
            p50: q(0.50),
            p75: q(0.75),
            p90: q(0.90),
            p95: q(0.95),
            p99: q(0.99),
            p999: q(0.999),
            p9999: q(0.9999),
            max: ms(h.max() as f64),
        }
    }
}

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Relative difference of `b` against baseline `a`, as a signed percentage.
pub fn relative_change(a: f64, b: f64) -> Option<f64> {
    if a == 0.0 || !a.is_finite() || !b.is_finite() {
        None
    } else {
        Some((b - a) / a * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::record::new_histogram;

    #[test]
    fn percentiles_in_milliseconds() {
        let mut h = new_histogram();
        for us in 1..=10_000u64 {
            h.record(us * 100).unwrap(); // 0.1 ms .. 1000 ms, uniform
        }
        let l = Latency::from_histogram(&h);
        assert_eq!(l.count, 10_000);
        assert!((l.p50 - 500.0).abs() < 1.0, "{}", l.p50);
        assert!((l.p99 - 990.0).abs() < 1.0, "{}", l.p99);
        assert!((l.max - 1000.0).abs() < 1.0);
        assert!((l.mean - 500.05).abs() < 1.0);
        assert!(l.min <= 0.1001);
    }

    #[test]
    fn empty_histogram_is_all_zero() {
        assert_eq!(Latency::from_histogram(&new_histogram()), Latency::default());
    }

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(Vec::new()).is_nan());
    }

    #[test]
    fn change() {
        assert_eq!(relative_change(100.0, 150.0), Some(50.0));
        assert_eq!(relative_change(0.0, 1.0), None);
    }
}
