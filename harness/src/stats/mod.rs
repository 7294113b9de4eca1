//! Statistics over a result set: estimates with their intervals, over repeats or within one
//! run, and how two of them differ. Percentiles are read from merged histograms only; nothing
//! here averages percentiles.
//!
//! Holds: `gates` (thresholds and `compare --fail-if` rules), `metrics` (the metrics tables show,
//! and how two cells differ on each), `resample` (intervals: order statistics over runs, block
//! bootstrap within a run; merged histogram counts), `significance` (the Mann-Whitney test over
//! runs; its exact distribution in `ranks`), `sequential` (repeats that stop once decided),
//! `futility` (stopping a question the rounds left cannot decide) and `futility_rates` (its error
//! rates, by simulation), `judge` (one difference judged by a design), `verdict` (findings,
//! judged), `verdict_words` (their words), `capacity` (findings on repeated capacity searches),
//! `repeats` (one cell per contender x scenario: every metric with its interval; noise),
//! `estimates` (how each of a cell's estimates is made: latency from merged histograms, a figure
//! per run), `runs` (which runs stand for what: scenarios, merged histograms, the representative
//! run), `windows` (how much of a cell's noise is between starts and how much between the windows
//! of one start; the windows per start that buy the most).
//! Uses: util, plan (metric names of thresholds), driver (summaries, histogram codec),
//! sampler, results (the record of runs), observe (the steady-state rule, to judge a stored
//! window again).

pub mod capacity;
mod estimates;
pub mod futility;
pub mod futility_rates;
pub mod gates;
pub mod judge;
pub mod metrics;
mod ranks;
pub mod repeats;
mod resample;
pub mod runs;
pub mod sequential;
pub mod significance;
pub mod verdict;
pub mod verdict_words;
pub mod windows;

pub use metrics::{measured, shown, Difference, Metric, METRICS};
pub use repeats::{cell, cells, Cell};
pub use runs::{cell_runs, merged_histogram, representative, scenarios};
use serde::Serialize;

/// A point value with its interval (absent when there is nothing to take one from; what kind
/// of interval it is, the cell's `method` says) and the per-run values differences are tested on.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// One value per run (empty when the runs carry no histogram to take it from).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_run: Vec<f64>,
}

impl Estimate {
    pub(crate) fn point(value: f64) -> Estimate {
        Estimate {
            value,
            lo: None,
            hi: None,
            per_run: vec![value],
        }
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
