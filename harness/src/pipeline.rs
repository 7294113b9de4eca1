//! Pipeline scenarios: records through Kafka instead of HTTP requests. The load is the pipeline
//! jar's LoadTool, started and supervised like any child (pinned to the driver's CPUs, killed on
//! Ctrl-C); its report becomes a run like any other (latency from each record's intended send
//! time to its arrival in `output`, per-second rows, the contender's resources) plus the
//! delivery check: every record sent must arrive.

use crate::contender;
use crate::kafka::{Kafka, LoadReport};
use crate::results::IntervalRow;
use crate::stats::Latency;
use crate::verify::{CaseResult, Verification};
use anyhow::{bail, Context, Result};
use std::path::Path;
use std::time::{Duration, Instant};

/// Runs the load tool for `seconds` at `rate` records/s; `tick` is called every 250 ms with the
/// time since start and stops the load when it returns false.
pub fn run_load(kafka: &Kafka, cpus: &[usize], dir: &Path, rate: f64, seconds: f64, drain: f64, tag: &str, mut tick: impl FnMut(Duration) -> bool) -> Result<LoadReport> {
    // The load tool runs in `dir`: give it absolute paths (results directories may be relative).
    let dir = &std::path::absolute(dir).with_context(|| format!("cannot resolve {}", dir.display()))?;
    let out = dir.join(format!("{tag}.json"));
    let log = dir.join(format!("{tag}.log"));
    let argv = kafka.load_argv(rate, seconds, drain, tag, &out);
    let mut proc = contender::start(&argv, dir, cpus, 0, &log, &[])?;
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = proc.exited() {
            break s;
        }
        if !tick(t0.elapsed()) {
            proc.stop(Duration::from_secs(2));
            bail!("stopped before the load finished");
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    proc.stop(Duration::from_secs(1));
    if !status.success() {
        bail!("the pipeline load tool failed ({}); last log lines:\n{}", contender::describe_exit(status), contender::log_tail(&log, 12));
    }
    let text = std::fs::read_to_string(&out).with_context(|| format!("the load tool wrote no report to {}", out.display()))?;
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(&log);
    serde_json::from_str(&text).context("the load tool's report is not what iobound expects")
}

/// The pipeline contract: 200 records at 100/s must all arrive in `output`, each enriched with
/// its key's downstream value. A load that cannot run is a failed check, not an error.
pub fn verify(kafka: &Kafka, cpus: &[usize], dir: &Path, name: &str) -> Verification {
    let tag = format!("verify-{name}-{}", std::process::id());
    let r = match run_load(kafka, cpus, dir, 100.0, 2.0, 20.0, &tag, |_| !crate::interrupt::stopped()) {
        Ok(r) => r,
        Err(e) => {
            let detail = format!("{e:#}");
            return Verification { passed: false, cases: vec![CaseResult { name: "pipeline: records flow from input to output".into(), passed: false, detail }] };
        }
    };
    let cases = vec![
        CaseResult {
            name: "pipeline: every record sent to input arrives in output".into(),
            passed: r.lost == 0 && r.sent > 0,
            detail: format!("{} sent, {} arrived, {} duplicates, {} lost {:?}", r.sent, r.received, r.duplicates, r.lost, r.lost_examples),
        },
        CaseResult {
            name: "pipeline: each record is its input plus the downstream's value for its key".into(),
            passed: r.malformed == 0 && r.failed == 0,
            detail: format!("{} malformed, {} with a failed enrichment", r.malformed, r.failed),
        },
    ];
    Verification { passed: cases.iter().all(|c| c.passed), cases }
}

/// Per-second rows of a load report; seconds past `seconds` are the drain.
pub fn intervals(r: &LoadReport, rate: f64, seconds: f64) -> Vec<IntervalRow> {
    let last = r.intervals.iter().rposition(|i| i.ok > 0 || i.errors > 0).map_or(0, |p| p + 1);
    r.intervals[..last]
        .iter()
        .map(|i| IntervalRow {
            t: i.t,
            target: rate,
            ok: i.ok,
            errors: i.errors,
            latency: Latency { p50: i.p50, p90: i.p90, p99: i.p99, max: i.max, ..Latency::default() },
            drain: f64::from(i.t) >= seconds,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_stop_at_the_last_record_and_mark_the_drain() {
        let r: LoadReport = serde_json::from_str(
            r#"{"sent":3,"received":3,"duplicates":0,"failed":0,"malformed":0,"lost":0,"lost_examples":[],"histogram":"","intervals":[
            {"t":0,"ok":1,"errors":0,"lag":0,"p50":5,"p90":6,"p99":7,"max":8},{"t":1,"ok":1,"errors":0,"lag":0,"p50":5,"p90":6,"p99":7,"max":8},
            {"t":2,"ok":1,"errors":0,"lag":0,"p50":5,"p90":6,"p99":9,"max":9},{"t":3,"ok":0,"errors":0,"lag":0,"p50":0,"p90":0,"p99":0,"max":0}]}"#,
        )
        .unwrap();
        let rows = intervals(&r, 1.0, 2.0);
        assert_eq!(rows.len(), 3);
        assert_eq!((rows[1].drain, rows[2].drain, rows[2].latency.p99), (false, true, 9.0));
    }
}
