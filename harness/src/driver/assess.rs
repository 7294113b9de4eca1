//! The driver's account of itself: its threads, CPUs and CPU time, how late an open model's
//! requests left against their schedule, and whether it (not the server) may have been the limit.

use super::summary::Latency;
use serde::{Deserialize, Serialize};

/// Above this share of its CPUs the driver may be what limits throughput.
pub const DRIVER_SATURATED: f64 = 0.90;
/// Open model: a p99 dispatch lag above this means the schedule was not kept.
pub const LAG_LIMIT_MS: f64 = 10.0;
/// A driver CPU this busy in a second (every process counted) leaves the driver no headroom.
pub const CPU_BUSY_LIMIT_PCT: f64 = 90.0;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DriverReport {
    pub threads: usize,
    pub cpus: Vec<usize>,
    pub cpu_s: f64,
    pub cpu_s_per_100k: f64,
    /// CPU time / (wall time x threads).
    pub utilization: f64,
    /// Open model: how late the driver's scheduler released requests against their intended
    /// send time (ms); only this says the driver fell behind.
    pub schedule_lag: Option<Latency>,
    /// Open model: how long released requests waited for a free connection (ms) before they
    /// were sent: a slow server holding its connections, counted in latency, not the driver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_wait: Option<Latency>,
    /// Per second of the run: the busiest driver CPU's busy share (%), all processes counted
    /// (the driver shares its CPUs with the services and the harness).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_busy_pct: Vec<f64>,
    pub saturated: bool,
    pub warnings: Vec<String>,
    /// Share of the machine's CPU time stolen by the hypervisor during the run (%).
    #[serde(default)]
    pub cpu_steal_pct: f64,
}

/// The warning of a load whose driver CPUs (`busy`: the busiest one's share each second) were
/// at least CPU_BUSY_LIMIT_PCT busy in some second; None when they never were.
pub fn busy_warning(cpus: &[usize], busy: &[f64]) -> Option<String> {
    let busy_seconds = busy.iter().filter(|b| **b >= CPU_BUSY_LIMIT_PCT).count();
    (busy_seconds > 0).then(|| format!(
        "driver CPUs saturated: CPU {} was >= {CPU_BUSY_LIMIT_PCT:.0}% busy in {busy_seconds} of {} seconds (every process on it counts: the harness and its sampler, and PostgreSQL, Kafka and the downstream service where they share it; see the pinning): figures of those seconds may be the driver's limit, not the server's",
        crate::util::cpus::format_cpus(cpus),
        busy.len()
    ))
}

/// The driver's report on a finished load: `requests` is what the CPU per request counts.
pub fn driver_report(o: &super::Outcome, cpus: &[usize], requests: u64) -> DriverReport {
    let cpu_s = o.cpu.as_secs_f64();
    let utilization = cpu_s / (o.wall.as_secs_f64() * o.threads as f64).max(1e-9);
    let lag = (!o.recorder.lag.is_empty()).then(|| Latency::from_histogram(&o.recorder.lag));
    let connection_wait =
        (!o.recorder.conn_wait.is_empty()).then(|| Latency::from_histogram(&o.recorder.conn_wait));
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
    if let Some(w) = busy_warning(cpus, &o.cpu_busy_pct) {
        saturated = true;
        warnings.push(w);
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
        cpu_s_per_100k: if requests > 0 {
            cpu_s * 100_000.0 / requests as f64
        } else {
            0.0
        },
        utilization,
        schedule_lag: lag,
        connection_wait,
        cpu_busy_pct: o.cpu_busy_pct.clone(),
        saturated,
        warnings,
        cpu_steal_pct: 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_driver_cpu_busy_in_any_second_is_named_with_how_many() {
        assert_eq!(busy_warning(&[1], &[40.0, 89.9, 60.0]), None);
        let w = busy_warning(&[1], &[40.0, 95.0, 90.0, 60.0]).unwrap();
        assert!(w.contains("CPU 1 was >= 90% busy in 2 of 4 seconds"), "{w}");
    }
}
