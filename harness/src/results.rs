//! The results model (results.json) and how it is written: atomically (temp file + rename),
//! after every run, so an interrupted or crashed plan leaves valid partial results.

use crate::driver::record::{Errors, Recorder};
use crate::sampler::Sample;
use crate::stats::Latency;
use crate::verify::Verification;
use anyhow::{Context, Result};
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime};

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    pub schema_version: u32,
    pub tool: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// False until every planned run has ended; stays false when interrupted.
    pub complete: bool,
    pub incomplete_reason: Option<String>,
    pub plan: serde_json::Value,
    pub environment: Environment,
    pub contenders: Vec<ContenderInfo>,
    pub runs: Vec<Run>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Environment {
    pub hostname: String,
    pub os: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpus_online: usize,
    pub memory_gib: f64,
    pub java: Option<String>,
    pub harness_version: String,
    pub git_commit: Option<String>,
    pub contender_cpus: Vec<usize>,
    pub driver_cpus: Vec<usize>,
    pub driver_threads: usize,
    pub jvm_flags: Vec<String>,
    pub pinning: String,
    /// The PostgreSQL behind /messages, and the pool each contender gets.
    #[serde(default)]
    pub database: String,
    /// The Kafka broker behind pipeline scenarios (empty when none ran).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kafka: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ContenderInfo {
    pub name: String,
    pub model: String,
    pub language: String,
    pub framework: String,
    pub config: String,
    pub tunables: BTreeMap<String, String>,
    pub command: Vec<String>,
    pub startup_s: Option<f64>,
    pub verification: Option<Verification>,
    /// Why the contender was not measured, when it was not.
    pub failure: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Ok,
    /// Stopped early by the user; its figures cover only the part that ran.
    Incomplete,
    /// The contender crashed, stopped answering, or failed start-up or verification.
    Failed,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    pub contender: String,
    pub scenario: String,
    /// 1-based repeat index.
    pub run: u32,
    pub status: RunStatus,
    pub failure: Option<String>,
    pub path: String,
    pub load: serde_json::Value,
    pub load_description: String,
    pub started_at: String,
    pub summary: Summary,
    pub driver: DriverReport,
    pub intervals: Vec<IntervalRow>,
    pub resources: Resources,
    /// HdrHistogram interval log of this run, relative to the results directory.
    pub histogram_log: Option<String>,
    /// The run's whole latency histogram (µs; HdrHistogram V2 + deflate, base64), so that
    /// percentiles over repeats come from merged histograms with results.json alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
    /// A mix's requests per entry, sent and answered 2xx.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entries: Vec<EntryResult>,
    /// For mixes that write: the check that every acknowledged write is in the database.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes: Option<crate::database::WriteCheck>,
    /// Downstream changes made during the measured phase.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<crate::faults::EventRecord>,
    /// How the contender came back after the fault those changes made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<crate::faults::Recovery>,
    /// Overload phases: shed, queued or absorbed, and the recovery after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overload: Option<crate::faults::OverloadVerdict>,
    /// Pipeline scenarios: every record sent must arrive in `output`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<crate::kafka::DeliveryCheck>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct EntryResult {
    pub method: String,
    pub path: String,
    pub weight: u32,
    pub sent: u64,
    pub ok: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Summary {
    /// Length of the measured phase (s).
    pub duration_s: f64,
    /// Successful (2xx) responses completed inside the measured phase.
    pub ok: u64,
    /// Errors of requests sent in the measured phase (including those failing while draining).
    pub errors: Errors,
    /// Successful responses per second inside the measured phase.
    pub rps: f64,
    /// Responses to requests sent in the measured phase that completed after it (counted in
    /// latency, not in throughput).
    pub drained: u64,
    /// Requests still unanswered when the drain window closed.
    pub abandoned: u64,
    /// Latency of every successful response, from one merged histogram.
    pub latency: Latency,
    /// Little's law: mean concurrency = throughput x mean latency (closed model sanity line).
    pub littles_law_concurrency: f64,
    /// One row per load level: each step of a closed model (an open ramp gives one per second).
    pub levels: Vec<Level>,
}

/// Throughput and latency while the load stayed at one level (e.g. one step of users).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Level {
    /// Users (closed) or arrival rate (open).
    pub target: f64,
    /// Whole seconds measured at this level, from `from_s` to `to_s` into the run.
    pub seconds: u32,
    pub from_s: u32,
    pub to_s: u32,
    pub rps: f64,
    /// From the merged histograms of the level's seconds.
    pub latency: Latency,
    /// The contender's peaks while at this level (0 when it was not sampled).
    pub peak_threads: u64,
    pub peak_rss_mb: f64,
}

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

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IntervalRow {
    /// Second since the measured phase began.
    pub t: u32,
    /// Users (closed) or scheduled arrivals per second (open) during this second.
    pub target: f64,
    pub ok: u64,
    pub errors: u64,
    pub latency: Latency,
    /// True for seconds after the measured phase (in-flight requests draining).
    pub drain: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Resources {
    pub samples: Vec<Sample>,
    pub peak_threads: u64,
    pub peak_rss_mb: f64,
    pub peak_fds: u64,
    pub peak_sockets: u64,
    /// Most connections the contender held to the downstream service at once.
    #[serde(default)]
    pub peak_downstream_conns: u64,
    /// Contender CPU seconds (user + sys) during the measured phase.
    pub cpu_s: f64,
    pub cpu_ms_per_1k_requests: f64,
    pub ctx_voluntary: u64,
    pub ctx_involuntary: u64,
}

/// Fills each level's resource peaks from the samples taken during it.
pub fn level_peaks(levels: &mut [Level], samples: &[Sample]) {
    for l in levels {
        let during = samples.iter().filter(|s| s.t >= f64::from(l.from_s) && s.t < f64::from(l.to_s));
        for s in during {
            l.peak_threads = l.peak_threads.max(s.threads);
            l.peak_rss_mb = l.peak_rss_mb.max(s.rss_mb);
        }
    }
}

impl Resources {
    pub fn from_samples(samples: Vec<Sample>, requests: u64) -> Resources {
        let peak = |f: fn(&Sample) -> f64| samples.iter().map(f).fold(0.0, f64::max);
        let (first, last) = (samples.first().cloned().unwrap_or_default(), samples.last().cloned().unwrap_or_default());
        let cpu_s = (last.cpu_user_s + last.cpu_sys_s - first.cpu_user_s - first.cpu_sys_s).max(0.0);
        Resources {
            peak_threads: peak(|s| s.threads as f64) as u64,
            peak_rss_mb: peak(|s| s.rss_mb),
            peak_fds: peak(|s| s.fds as f64) as u64,
            peak_sockets: peak(|s| s.sockets as f64) as u64,
            peak_downstream_conns: peak(|s| s.downstream_conns as f64) as u64,
            cpu_s,
            cpu_ms_per_1k_requests: if requests > 0 { cpu_s * 1e6 / requests as f64 } else { 0.0 },
            ctx_voluntary: last.ctx_voluntary.saturating_sub(first.ctx_voluntary),
            ctx_involuntary: last.ctx_involuntary.saturating_sub(first.ctx_involuntary),
            samples,
        }
    }
}

/// Interval rows and the phase summary from a driver's recorder. `measured` is the length of
/// the measured phase; later intervals are the drain.
pub fn summarize(rec: &Recorder, measured: Duration, profile: &crate::plan::Profile) -> (Summary, Vec<IntervalRow>) {
    let full = measured.as_secs() as usize;
    let mut rows = Vec::new();
    let mut ok_in = 0;
    let mut drained = 0;
    let mut errors_in = Errors::default();
    for (i, iv) in rec.intervals.iter().enumerate() {
        let drain = i >= full && !(i == full && measured.subsec_nanos() > 0);
        if drain {
            drained += iv.hist.len();
        } else {
            ok_in += iv.hist.len();
        }
        // Errors while draining belong to requests sent in the measured phase: they count.
        errors_in.merge(&iv.errors);
        rows.push(IntervalRow {
            t: i as u32,
            target: profile.target_at(Duration::from_secs(i as u64)),
            ok: iv.hist.len(),
            errors: iv.errors.total(),
            latency: Latency::from_histogram(&iv.hist),
            drain,
        });
    }
    let levels = levels(rec, &rows, measured);
    let (all, _) = rec.overall();
    let latency = Latency::from_histogram(&all);
    let secs = measured.as_secs_f64();
    let rps = if secs > 0.0 { ok_in as f64 / secs } else { 0.0 };
    let summary = Summary {
        duration_s: secs,
        ok: ok_in,
        errors: errors_in,
        rps,
        drained,
        abandoned: 0,
        littles_law_concurrency: rps * latency.mean / 1000.0,
        latency,
        levels,
    };
    (summary, rows)
}

/// Groups the measured seconds by load level. Only whole seconds count, so a level's
/// throughput is not diluted by a partial second.
fn levels(rec: &Recorder, rows: &[IntervalRow], measured: Duration) -> Vec<Level> {
    let whole = measured.as_secs() as usize;
    let mut out: Vec<(Level, hdrhistogram::Histogram<u64>)> = Vec::new();
    for (i, row) in rows.iter().enumerate().take(whole) {
        let idx = match out.iter().position(|(l, _)| l.target == row.target) {
            Some(p) => p,
            None => {
                out.push((Level { target: row.target, from_s: i as u32, ..Level::default() }, crate::driver::record::new_histogram()));
                out.len() - 1
            }
        };
        let (level, hist) = &mut out[idx];
        level.seconds += 1;
        level.to_s = i as u32 + 1;
        level.rps += row.ok as f64;
        hist.add(&rec.intervals[i].hist).expect("same histogram bounds");
    }
    out.into_iter()
        .map(|(mut l, h)| {
            l.rps /= f64::from(l.seconds.max(1));
            l.latency = Latency::from_histogram(&h);
            l
        })
        .collect()
}

/// Writes the run's per-second histograms as an HdrHistogram interval log (values in µs).
pub fn write_hlog(rec: &Recorder, path: &Path, started: SystemTime, tag: &str) -> Result<()> {
    let mut buf = Vec::new();
    let mut ser = V2DeflateSerializer::new();
    {
        let mut w = IntervalLogWriterBuilder::new()
            .add_comment("iobound latency histograms, one per second of the run; values in microseconds")
            .with_start_time(started)
            .with_base_time(started)
            .with_max_value_divisor(1000.0)
            .begin_log_with(&mut buf, &mut ser)?;
        for (i, iv) in rec.intervals.iter().enumerate() {
            w.write_histogram(&iv.hist, Duration::from_secs(i as u64), Duration::from_secs(1), Tag::new(tag))
                .map_err(|e| anyhow::anyhow!("cannot encode histogram: {e:?}"))?;
        }
    }
    write_atomic(path, &buf)
}

/// Writes `bytes` to `path` via a temporary file in the same directory and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!("{}.tmp", path.extension().and_then(|e| e.to_str()).unwrap_or("")));
    {
        let mut f = std::fs::File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path).with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))
}

impl Results {
    pub fn save(&self, dir: &Path) -> Result<()> {
        let json = serde_json::to_vec_pretty(self)?;
        write_atomic(&dir.join("results.json"), &json)
    }

    pub fn load(path: &Path) -> Result<Results> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        let r: Results = serde_json::from_str(&text).with_context(|| format!("{} is not an iobound results file", path.display()))?;
        anyhow::ensure!(
            r.schema_version == SCHEMA_VERSION,
            "{} has schema_version {}; this iobound reads {SCHEMA_VERSION}",
            path.display(),
            r.schema_version
        );
        Ok(r)
    }
}

impl Run {
    /// A run with nothing measured yet: status failed until the measurement says otherwise, no
    /// failure given, started now.
    pub fn new(contender: &str, scenario: &str, run: u32, path: &str, load: serde_json::Value, load_description: &str) -> Run {
        Run {
            contender: contender.into(),
            scenario: scenario.into(),
            run,
            status: RunStatus::Failed,
            failure: None,
            path: path.into(),
            load,
            load_description: load_description.into(),
            started_at: now(),
            summary: Summary::default(),
            driver: DriverReport::default(),
            intervals: Vec::new(),
            resources: Resources::default(),
            histogram_log: None,
            histogram: None,
            entries: Vec::new(),
            writes: None,
            events: Vec::new(),
            recovery: None,
            overload: None,
            delivery: None,
        }
    }
}

pub fn now() -> String {
    crate::util::rfc3339(SystemTime::now())
}

#[cfg(test)]
pub mod test_support {
    use super::*;

    pub fn blank_run(contender: &str, scenario: &str, run: u32) -> Run {
        Run::new(contender, scenario, run, "/plaintext", serde_json::Value::Null, "closed, 1 user")
    }


    pub fn blank_results(contenders: &[&str]) -> Results {
        Results {
            schema_version: SCHEMA_VERSION,
            tool: "iobound test".into(),
            started_at: now(),
            finished_at: None,
            complete: true,
            incomplete_reason: None,
            plan: serde_json::Value::Null,
            environment: Environment::default(),
            contenders: contenders
                .iter()
                .map(|n| ContenderInfo {
                    name: n.to_string(),
                    model: "event-loop".into(),
                    language: "java".into(),
                    framework: "test".into(),
                    config: String::new(),
                    tunables: BTreeMap::new(),
                    command: Vec::new(),
                    startup_s: None,
                    verification: None,
                    failure: None,
                })
                .collect(),
            runs: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::record::{ErrorKind, Live};
    use crate::plan::Profile;
    use std::time::Instant;

    #[test]
    fn summary_counts_drain_outside_throughput() {
        let start = Instant::now();
        let live = Live::default();
        let mut rec = Recorder::new(start);
        for s in 0..3u64 {
            for _ in 0..100 {
                rec.ok(start + Duration::from_millis(s * 1000 + 10), Duration::from_millis(5), &live);
            }
        }
        rec.error(start + Duration::from_millis(1500), ErrorKind::Timeout, &live);
        let profile = Profile::Closed { users: 10, step_users: 0, steps: 0, level: Duration::from_secs(2), think: Duration::ZERO };
        let (s, rows) = summarize(&rec, Duration::from_secs(2), &profile);
        assert_eq!(s.ok, 200);
        assert_eq!(s.drained, 100);
        assert_eq!(s.errors.timeout, 1);
        let mut late = Recorder::new(start);
        late.error(start + Duration::from_millis(2500), ErrorKind::Io, &live);
        assert_eq!(summarize(&late, Duration::from_secs(2), &profile).0.errors.io, 1, "drain errors count");
        assert!((s.rps - 100.0).abs() < 1e-9);
        assert_eq!(s.latency.count, 300);
        assert_eq!(rows.len(), 3);
        assert!(rows[2].drain && !rows[1].drain);
        assert_eq!(rows[0].target, 10.0);
        // Little's law: 100 req/s x 5 ms = 0.5 requests in flight on average.
        assert!((s.littles_law_concurrency - 0.5).abs() < 0.01, "{}", s.littles_law_concurrency);
        assert_eq!(s.levels.len(), 1);
        assert_eq!((s.levels[0].target, s.levels[0].seconds, s.levels[0].rps), (10.0, 2, 100.0));
        assert_eq!((s.levels[0].from_s, s.levels[0].to_s), (0, 2));
        let mut levels = s.levels.clone();
        let sample = |t: f64, threads: u64| Sample { t, threads, rss_mb: threads as f64, ..Sample::default() };
        level_peaks(&mut levels, &[sample(0.5, 20), sample(1.9, 30), sample(2.1, 99)]);
        assert_eq!((levels[0].peak_threads, levels[0].peak_rss_mb), (30, 30.0));
    }

    #[test]
    fn hlog_is_readable_by_the_standard_parser() {
        let start = Instant::now();
        let live = Live::default();
        let mut rec = Recorder::new(start);
        rec.ok(start + Duration::from_millis(10), Duration::from_millis(7), &live);
        rec.ok(start + Duration::from_millis(1010), Duration::from_millis(9), &live);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.hlog");
        write_hlog(&rec, &p, SystemTime::now(), "a.b").unwrap();
        let bytes = std::fs::read(&p).unwrap();
        let entries: Vec<_> = hdrhistogram::serialization::interval_log::IntervalLogIterator::new(&bytes)
            .filter_map(|e| match e {
                Ok(hdrhistogram::serialization::interval_log::LogEntry::Interval(h)) => Some(h.tag().map(|t| t.as_str().to_string())),
                _ => None,
            })
            .collect();
        assert_eq!(entries, vec![Some("a.b".to_string()), Some("a.b".to_string())]);
        assert!(!dir.path().join("x.hlog.tmp").exists());
    }

    #[test]
    fn resources_take_peaks_and_deltas() {
        let s = |t: f64, threads: u64, rss: f64, cpu: f64| Sample { t, threads, rss_mb: rss, cpu_user_s: cpu, cpu_sys_s: cpu / 2.0, ..Sample::default() };
        let r = Resources::from_samples(vec![s(0.0, 20, 100.0, 1.0), s(0.25, 220, 180.0, 2.0), s(0.5, 210, 170.0, 3.0)], 1000);
        assert_eq!(r.peak_threads, 220);
        assert_eq!(r.peak_rss_mb, 180.0);
        assert!((r.cpu_s - 3.0).abs() < 1e-9);
        assert!((r.cpu_ms_per_1k_requests - 3000.0).abs() < 1e-6);
    }
}
