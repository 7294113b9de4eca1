//! Garbage collection as a run records it: the collections, pauses and heap of the measured
//! window, in total and second by second. Read from each runtime's log by observe/gc.rs.

use serde::{Deserialize, Serialize};

/// One second of the measured run's collections.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GcSecond {
    /// Second of the measured run (0-based).
    pub t: u32,
    pub collections: u32,
    pub pause_ms: f64,
    pub max_pause_ms: f64,
    /// Heap after the last collection of that second (MB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_after_mb: Option<f64>,
}

/// The collections of one measured run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GcReport {
    /// Where the figures come from: "JVM -Xlog:gc", "Go gctrace", "Node --trace-gc".
    pub source: String,
    pub collections: u64,
    /// Time the application was paused, summed over the run.
    pub pause_total_ms: f64,
    pub pause_max_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_after_max_mb: Option<f64>,
    /// Allocated during the run (MB per second of the run): heap before each collection minus
    /// heap after the one before (JVM and Go; Node's young collections make it unreliable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation_mb_per_s: Option<f64>,
    pub per_second: Vec<GcSecond>,
}
