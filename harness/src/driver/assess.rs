//! The driver's account of itself: its threads, CPUs and CPU time, how late an open model's
//! requests left against their schedule, and whether it (not the server) may have been the limit.

use super::summary::Latency;
use serde::{Deserialize, Serialize};

/// Above this share of its CPUs the driver may be what limits throughput.
const DRIVER_SATURATED: f64 = 0.90;
/// Open model: a p99 dispatch lag above this means the schedule was not kept.
const LAG_LIMIT_MS: f64 = 10.0;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DriverReport {
    pub threads: usize,
    pub cpus: Vec<usize>,
    pub cpu_s: f64,
    pub cpu_s_per_100k: f64,
    /// CPU time / (wall time x threads).
    pub utilization: f64,
    /// Open model: how late requests were sent against their schedule (ms): scheduler lateness
    /// plus waiting for a free connection.
    pub schedule_lag: Option<Latency>,
    pub saturated: bool,
    pub warnings: Vec<String>,
    /// Share of the machine's CPU time stolen by the hypervisor during the run (%).
    #[serde(default)]
    pub cpu_steal_pct: f64,
}

/// The driver's report on a finished load: `requests` is what the CPU per request counts.
pub fn driver_report(o: &super::Outcome, cpus: &[usize], requests: u64) -> DriverReport {
    let cpu_s = o.cpu.as_secs_f64();
    let utilization = cpu_s / (o.wall.as_secs_f64() * o.threads as f64).max(1e-9);
    let lag = (!o.recorder.lag.is_empty()).then(|| Latency::from_histogram(&o.recorder.lag));
    let mut warnings = Vec::new();
    let mut saturated = false;
    if utilization > DRIVER_SATURATED {
        saturated = true;
        warnings.push(format!(
            "the driver used {:.0}% of its CPU: it, not the server, may be the bottleneck; give it more CPUs (--driver-cpus) or lower the load",
            utilization * 100.0
        ));
    }
    if o.pool_waits > 0 {
        warnings.push(format!(
            "{} requests found all --max-connections busy and waited in the driver (counted as latency): raise max_connections if the server should be offered more connections",
            o.pool_waits
        ));
    }
    if let Some(l) = &lag {
        if l.p99 > LAG_LIMIT_MS {
            saturated = true;
            warnings.push(format!(
                "the driver fell behind its schedule (send lag p99 {:.1} ms, max {:.1} ms): latencies still count from the intended send time, but the offered rate was not met",
                l.p99, l.max
            ));
        }
    }
    DriverReport {
        threads: o.threads,
        cpus: cpus.to_vec(),
        cpu_s,
        cpu_s_per_100k: if requests > 0 { cpu_s * 100_000.0 / requests as f64 } else { 0.0 },
        utilization,
        schedule_lag: lag,
        saturated,
        warnings,
        cpu_steal_pct: 0.0,
    }
}
