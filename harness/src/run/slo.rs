//! Judging a run against a capacity scenario's SLO: every limit, latency over every request
//! due, and whether a failure was the server's or the driver's.

use crate::plan::metrics::{Metric, Source, Stat};
use crate::plan::thresholds::{with_unit, Op, Threshold};
use crate::results::figures::figure;
use crate::results::record::{Run, RunStatus};

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

/// Whether `r` kept every limit of `slo`, and what it broke. Values come from the probe's own
/// summary and resources; latency from the histogram of every request due.
pub fn judge(r: &Run, slo: &[Threshold]) -> (bool, Vec<Breach>) {
    let s = &r.summary;
    let due = s.ok + s.drained + s.errors.total();
    let all = &s.latency_all;
    let mut broke = Vec::new();
    for t in slo {
        let Some(m) = Metric::by_key(&t.metric) else {
            continue; // parsing the plan refused any other name
        };
        // Latency over every request due (failed ones at the time they failed, unanswered ones
        // when they were given up), so that a rate at which requests time out cannot pass on
        // the latency of the few that were answered.
        let v = match m.source {
            Source::Throughput => s.rps,
            Source::Errors if due > 0 => s.errors.total() as f64 * 100.0 / due as f64,
            Source::Errors => 0.0,
            Source::Latency(Stat::Quantile(q)) => all.kept_quantile(q),
            Source::LatencyAll => all.p99,
            Source::Latency(Stat::Mean) => all.mean,
            Source::Latency(Stat::Stdev) => all.stdev,
            Source::Run(f) => figure(r, f),
        };
        if v.is_nan() {
            continue; // a figure this run does not have (no GC log): no limit to break
        }
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
        m if Metric::by_key(m).is_some_and(Metric::is_latency) => b.value - lag_p99_ms > b.limit,
        _ => true,
    })
}

/// An SLO rule in words as the capacity report shows it: latency limits say they judge every
/// request, and the errors limit the search adds when the SLO has none says so.
pub fn slo_words(t: &Threshold, default_errors: bool) -> String {
    let d = t.describe();
    if Metric::by_key(&t.metric).is_some_and(Metric::is_latency) {
        format!("{d} (all requests)")
    } else if t.metric == "errors" && default_errors {
        format!("{d} (default)")
    } else {
        d
    }
}
