//! A Node contender's event-loop delay as a run records it, second by second over the
//! measured window (read from its log by observe/event_loop.rs).

use serde::{Deserialize, Serialize};

/// One second of the measured run's event-loop delay (the worst process's).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LoopSecond {
    /// Second of the measured run (0-based).
    pub t: u32,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// A Node contender's event-loop delay over one measured run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct EventLoopReport {
    pub source: String,
    /// The highest of the seconds' p99 (percentiles of different seconds are not merged).
    pub worst_p99_ms: f64,
    /// The longest delay in the run.
    pub max_ms: f64,
    pub per_second: Vec<LoopSecond>,
}
