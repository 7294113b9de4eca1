//! Where a results set's noise is, as results.json keeps it: per contender and scenario, the
//! spread between the windows of one start and between starts (stats/windows.rs computes it).

use serde::{Deserialize, Serialize};

/// One contender and scenario's components, as results.json keeps them and the report shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Components {
    pub contender: String,
    pub scenario: String,
    /// Starts (runs at steady state) with at least two whole windows.
    pub starts: usize,
    /// Whole windows per start used (the fewest any of those starts had).
    pub windows: usize,
    pub window_s: u32,
    /// Mean throughput over those windows (req/s).
    pub mean: f64,
    /// Spread between the windows of one start, as a coefficient of variation (%).
    pub within_cv_pct: f64,
    /// Spread between starts beyond what their windows explain (%); 0 when the starts' means
    /// vary no more than their windows predict.
    pub between_cv_pct: f64,
    /// Mean seconds from a process's start to its window (start, contract check, warm-up).
    pub start_cost_s: f64,
    /// The windows per start that minimise the mean's variance for the time spent, 1 to
    /// MAX_WINDOWS.
    pub best_windows: u32,
}
