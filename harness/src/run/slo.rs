//! Judging a run against a capacity scenario's SLO: every limit, latency over every request
//! due, and whether a failure was the server's or the driver's.

use super::results::{Run, RunStatus};
use crate::plan::thresholds::{with_unit, Op, Threshold};

/// A limit a probe broke: the metric, what was measured and the limit, in the metric's unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Breach {
    /// The SLO's metric, or "driver" when the driver fell behind.
    pub metric: String,
    pub value: f64,
    pub limit: f64,
    /// "p99 412.0 ms > 200 ms", "the driver fell behind".
    pub text: String,
}

/// The latency metrics an SLO may name: judged over every request due (failed ones at the
/// time they failed, unanswered ones when they were given up), so that a rate at which
/// requests time out cannot pass on the latency of the few that were answered.
const LATENCY_METRICS: &[&str] = &[
    "p50", "p75", "p90", "p95", "p99", "p99_all", "p999", "max", "mean",
];

/// Whether `r` kept every limit of `slo`, and what it broke. Values come from the probe's own
/// summary and resources; latency from the histogram of every request due.
pub fn judge(r: &Run, slo: &[Threshold]) -> (bool, Vec<Breach>) {
    let s = &r.summary;
    let due = s.ok + s.drained + s.errors.total();
    let all = &s.latency_all;
    let mut broke = Vec::new();
    for t in slo {
        let v = match t.metric.as_str() {
            "throughput" => s.rps,
            "errors" => {
                if due > 0 {
                    s.errors.total() as f64 * 100.0 / due as f64
                } else {
                    0.0
                }
            }
            "p50" => all.p50,
            "p75" => all.p75,
            "p90" => all.p90,
            "p95" => all.p95,
            "p99" | "p99_all" => all.p99,
            "p999" => all.p999,
            "max" => all.max,
            "mean" => all.mean,
            "threads" => r.resources.peak_threads as f64,
            "rss" => r.resources.peak_rss_mb,
            "cpu" => r.resources.cpu_ms_per_1k_requests,
            "sockets" => r.resources.peak_sockets as f64,
            "gc_pause_total" => r.gc.as_ref().map_or(0.0, |g| g.pause_total_ms),
            "gc_pause_max" => r.gc.as_ref().map_or(0.0, |g| g.pause_max_ms),
            _ => continue,
        };
        if !t.op.holds(v, t.limit) {
            let missed = if matches!(t.op, Op::Ge | Op::Gt) {
                "<"
            } else {
                ">"
            };
            broke.push(Breach {
                metric: t.metric.clone(),
                value: v,
                limit: t.limit,
                text: format!(
                    "{} {} {missed} {}",
                    t.metric,
                    with_unit(t.unit, (v * 10.0).round() / 10.0),
                    with_unit(t.unit, t.limit)
                ),
            });
        }
    }
    if r.driver.saturated {
        broke.push(Breach {
            metric: "driver".into(),
            value: f64::NAN,
            limit: f64::NAN,
            text: "the driver fell behind".into(),
        });
    }
    (broke.is_empty() && r.status == RunStatus::Ok, broke)
}

/// Whose failure a failed probe is, decided once:
/// - a broken errors limit, or a limit on resources or throughput, is the server's;
/// - a broken latency limit is the server's when the value exceeds the limit by more than the
///   driver's own p99 lateness (latency counts from the intended send time, so a late driver
///   adds at most about its lateness to a request);
/// - "the driver fell behind" alone is the driver's: the probe says nothing of the server.
pub fn servers_failure(broke: &[Breach], lag_p99_ms: f64) -> bool {
    broke.iter().any(|b| match b.metric.as_str() {
        "driver" => false,
        m if LATENCY_METRICS.contains(&m) => b.value - lag_p99_ms > b.limit,
        _ => true,
    })
}

/// An SLO rule in words as the capacity report shows it: latency limits say they judge every
/// request, and the errors limit the search adds when the SLO has none says so.
pub fn slo_words(t: &Threshold, default_errors: bool) -> String {
    let d = t.describe();
    if LATENCY_METRICS.contains(&t.metric.as_str()) {
        format!("{d} (all requests)")
    } else if t.metric == "errors" && default_errors {
        format!("{d} (default)")
    } else {
        d
    }
}
