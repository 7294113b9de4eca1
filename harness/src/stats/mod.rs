//! Statistics over a result set: estimates with their intervals, over repeats or within one
//! run, and how two of them differ. Percentiles are read from merged histograms only; nothing
//! here averages percentiles.
//!
//! Holds: `resample` (bootstrap units and merged histogram counts), `repeats` (one cell per
//! contender x scenario: every metric with its interval; differences; noise).
//! Uses: util, driver (summaries, histogram codec), sampler, run (the results model).

pub mod repeats;
mod resample;

pub use repeats::{cell, cells, merged_histogram, representative, scenarios, Cell, Difference, Metric, METRICS};
use serde::Serialize;

/// A point value with its 95% interval (absent when there is nothing to resample).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

impl Estimate {
    pub(crate) fn point(value: f64) -> Estimate {
        Estimate { value, lo: None, hi: None }
    }

    /// Whether the two intervals are apart; None when either has no interval.
    pub fn differs(&self, other: &Estimate) -> Option<bool> {
        let (alo, ahi, blo, bhi) = (self.lo?, self.hi?, other.lo?, other.hi?);
        Some(ahi < blo || bhi < alo)
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

    #[test]
    fn change() {
        assert_eq!(relative_change(100.0, 150.0), Some(50.0));
        assert_eq!(relative_change(0.0, 1.0), None);
    }
}
