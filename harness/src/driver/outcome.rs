//! What the driver is given (`DriverConfig`) and what a load leaves (`Outcome`): every request
//! recorded, the time and CPU it took, the requests due and how many waited for a connection.

use super::record::Recorder;
use std::time::{Duration, Instant};

/// Requests sent and answered with 2xx, per mix entry.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EntryCount {
    pub sent: u64,
    pub ok: u64,
}

/// Where and how the driver runs: its threads, their CPUs, and when the load starts.
pub struct DriverConfig {
    pub threads: usize,
    pub cpus: Vec<usize>,
    /// When the load starts (a common start agreed with other load hosts); shortly after the
    /// call when None.
    pub start: Option<Instant>,
}

/// What a load left: the recorder of every request, and what the driver spent on it.
pub struct Outcome {
    pub recorder: Recorder,
    /// Measured phase length (the profile's duration, or less when cancelled).
    pub duration: Duration,
    /// Wall time including the drain of in-flight requests.
    pub wall: Duration,
    /// CPU time of the driver threads.
    pub cpu: Duration,
    pub threads: usize,
    pub cancelled: bool,
    /// Requests due: open model, arrivals scheduled; closed model, requests started. Each ends
    /// answered, failed, or unanswered at the end (an error too): ok + errors = due.
    pub due: u64,
    /// Open model: requests that had to wait because every allowed connection was busy.
    pub pool_waits: u64,
    /// Per second: the busiest driver CPU's busy share (%), every process counted.
    pub cpu_busy_pct: Vec<f64>,
    /// Per mix entry (empty for a single path).
    pub entries: Vec<EntryCount>,
    /// Writes answered with 2xx: (index of the request in the cycle, its token counter or 0).
    pub acks: Vec<(u32, u64)>,
}
