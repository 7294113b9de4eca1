//! A pipeline scenario: records through Kafka instead of HTTP requests. The Kafka load tool's
//! report becomes a run like any other (latency from each record's intended send time to its
//! arrival in `output`, per-second rows, the contender's resources) plus the delivery check:
//! every record sent must arrive.

use super::details::Detail;
use super::finish::{finish, Ended};
use super::results::{Run, RunStatus};
use super::round::{failed_run, new_run, RunCtx};
use crate::driver::summary::{decode_histogram, IntervalRow, Latency};
use crate::plan::{Profile, Scenario};
use crate::remote::deploy::Fleet;
use crate::remote::record_load::RecordLoadHosts;
use crate::sampler;
use crate::services::contender::{log_tail, Running};
use crate::services::kafka::{run_load, Kafka, LoadReport, RecordLoad};
use crate::util::interrupt;
use std::path::PathBuf;
use std::time::Duration;

impl RunCtx<'_> {
    /// A pipeline scenario: warm-up and measured load through Kafka, sampled and watched like
    /// an HTTP run; the run gets the delivery check.
    pub(super) fn measure_pipeline(
        &mut self,
        name: &str,
        proc: Option<&mut Running>,
        s: &Scenario,
        run: u32,
    ) {
        let Some(kafka) = self.services.and_then(|sv| sv.kafka.as_ref()) else {
            let why = "no Kafka broker (pipeline scenarios need one)";
            self.res.runs.push(failed_run(name, s, run, why));
            return;
        };
        let Profile::Open { rate, duration, .. } = s.load.profile else {
            let why = "a pipeline scenario needs an open-model load";
            self.res.runs.push(failed_run(name, s, run, why));
            return;
        };
        let load = Pipeline {
            kafka,
            hosts: self.fleet.zip(self.record_load),
            cpus: self.plan.driver_cpus.clone(),
            logs: self.dir.join("logs"),
            rate,
            drain: s.load.timeout.as_secs_f64() + 5.0,
        };
        if !s.warmup.is_zero() {
            eprintln!(
                "  {name} {} warm-up: {rate} records/s for {}s",
                s.name,
                s.warmup.as_secs()
            );
            let tag = format!("{name}-{}-r{run}-warm", s.name);
            if let Err(e) = load.run(s.warmup, &tag, |_| !interrupt::stopped()) {
                let why = format!("warm-up failed: {e:#}");
                self.res.runs.push(failed_run(name, s, run, &why));
                return;
            }
        }
        if interrupt::stopped() {
            return;
        }
        let r = self.pipeline_run(&load, name, proc, s, run, duration);
        if let Some(check) = r.details.delivery() {
            eprintln!(
                "  {:.0} records/s, p50 {:.1} ms, p99 {:.1} ms, {} lost, {} duplicates, {} failed enrichments, peak lag {}, peak {} threads, {:.0} MB RSS",
                r.summary.rps, r.summary.latency.p50, r.summary.latency.p99, check.lost, check.duplicates, check.failed_enrichments, check.peak_lag, r.resources.peak_threads, r.resources.peak_rss_mb
            );
        }
        self.res.runs.push(r);
    }

    /// The measured load: sampled, its events fired, the contender watched; the run finished
    /// from the load tool's report (or failed with why it has none).
    fn pipeline_run(
        &mut self,
        load: &Pipeline,
        name: &str,
        mut proc: Option<&mut Running>,
        s: &Scenario,
        run: u32,
        duration: Duration,
    ) -> Run {
        let mut r = new_run(name, s, run);
        // The pipelines call the downstream service for every record: count those connections.
        let downstream_port = self.services.map(|sv| sv.downstream.addr.port());
        let sampler = self.sampler(proc.as_deref(), downstream_port);
        let (mut samples, mut fired, mut crash) = (Vec::new(), Vec::new(), None);
        let steal_before = sampler::cpu_steal();
        eprintln!(
            "  {name} {}: {} records/s for {}s (then up to {:.0}s for the last records)",
            s.name,
            load.rate,
            duration.as_secs(),
            load.drain
        );
        let tag = format!("{name}-{}-r{run}", s.name);
        let report = load.run(duration, &tag, |elapsed| {
            if let Some(sm) = sampler.as_ref() {
                samples.push(sm.sample());
            }
            self.fire_due_event(&s.events, &mut fired, elapsed);
            if let Some(why) = self.server_gone(proc.as_deref_mut()) {
                crash = Some(why);
                return false;
            }
            !interrupt::stopped()
        });
        if let Some(sm) = sampler.as_ref() {
            samples.push(sm.sample_full());
        }
        let report = match report {
            Ok(x) => x,
            Err(e) => {
                r.status = if crash.is_some() {
                    RunStatus::Failed
                } else {
                    RunStatus::Incomplete
                };
                r.failure = Some(match (&crash, proc.as_ref()) {
                    (Some(why), Some(p)) => format!(
                        "the contender exited during the run ({why}); last log lines:\n{}",
                        log_tail(&p.log, 12)
                    ),
                    (Some(why), None) => format!("the contender exited during the run ({why})"),
                    _ => format!("pipeline load: {e:#}"),
                });
                return r;
            }
        };
        let delivered = delivered(&mut r, &report, load.rate, duration.as_secs_f64());
        r.driver.cpus = load.cpus.clone();
        let ended = Ended {
            samples,
            steal_before,
            fired,
            crash,
            cancelled: false,
            requests: delivered,
        };
        finish(r, ended, proc.as_deref())
    }
}

/// The record load of one pipeline scenario: the broker, the load hosts (when --hosts) or the
/// load tool's CPUs here, its log folder, the rate, and how long to wait for the last records.
struct Pipeline<'a> {
    kafka: &'a Kafka,
    hosts: Option<(&'a Fleet, &'a RecordLoadHosts)>,
    cpus: Vec<usize>,
    logs: PathBuf,
    rate: f64,
    drain: f64,
}

impl Pipeline<'_> {
    fn run(
        &self,
        seconds: Duration,
        tag: &str,
        tick: impl FnMut(Duration) -> bool,
    ) -> anyhow::Result<LoadReport> {
        let load = RecordLoad {
            rate: self.rate,
            seconds: seconds.as_secs_f64(),
            drain: self.drain,
        };
        match self.hosts {
            Some((fleet, hosts)) => hosts.run(fleet, self.kafka, &self.logs, load, tag, tick),
            None => run_load(self.kafka, &self.cpus, &self.logs, load, tag, tick),
        }
    }
}

/// Fills a pipeline run's figures and delivery check from the load tool's report; returns the
/// records delivered (the population of CPU per record).
fn delivered(r: &mut Run, report: &LoadReport, rate: f64, seconds: f64) -> u64 {
    let check = report.check();
    let ok = report.received.saturating_sub(report.failed);
    r.intervals = intervals(report, rate, seconds);
    // Throughput counts records that arrived inside the measured phase, as for HTTP runs;
    // the ones that arrived while draining count in latency, not in throughput.
    let inside: u64 = r.intervals.iter().filter(|i| !i.drain).map(|i| i.ok).sum();
    r.summary.duration_s = seconds;
    // Every record sent is due: it arrives enriched (ok, in the measured phase or while
    // draining), arrives marked failed, or is lost.
    r.summary.due = report.sent;
    r.summary.ok = inside;
    r.summary.drained = ok.saturating_sub(inside);
    r.summary.rps = inside as f64 / seconds;
    r.summary.errors.status = report.failed;
    r.summary.errors.timeout = report.lost;
    match decode_histogram(&report.histogram) {
        Ok(h) => {
            r.summary.latency = Latency::from_histogram(&h);
            r.summary.littles_law_concurrency = r.summary.rps * r.summary.latency.mean / 1000.0;
            r.histogram = Some(report.histogram.clone());
        }
        Err(e) => r
            .driver
            .warnings
            .push(format!("latency histogram unreadable: {e:#}")),
    }
    if report.start_late_ms > 50 {
        r.driver.warnings.push(format!(
            "a load host's Kafka load tool was ready {} ms after the common start: the records due meanwhile went out at once (their latency counts from when they were due)",
            report.start_late_ms
        ));
    }
    if check.lost > 0 {
        r.failure = Some(format!(
            "{} of {} records never arrived in output, e.g. sequence numbers {:?}",
            check.lost, check.sent, check.lost_examples
        ));
    }
    r.details.set(Detail::Delivery(check));
    r.load_hosts = report.hosts.clone();
    ok
}

/// Per-second rows of a load report; seconds past `seconds` are the drain.
pub fn intervals(r: &LoadReport, rate: f64, seconds: f64) -> Vec<IntervalRow> {
    let last = r
        .intervals
        .iter()
        .rposition(|i| i.ok > 0 || i.errors > 0)
        .map_or(0, |p| p + 1);
    r.intervals[..last]
        .iter()
        .map(|i| IntervalRow {
            t: i.t,
            target: rate,
            ok: i.ok,
            errors: i.errors,
            latency: Latency {
                p50: i.p50,
                p90: i.p90,
                p99: i.p99,
                max: i.max,
                ..Latency::default()
            },
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
        assert_eq!(
            (rows[1].drain, rows[2].drain, rows[2].latency.p99),
            (false, true, 9.0)
        );
    }

    #[test]
    fn every_record_sent_is_due_and_accounted_for() {
        // 10 sent at 5/s for 2 s: 6 arrive enriched inside the 2 s, 1 while draining, 1 marked
        // failed, 2 never arrive.
        let r: LoadReport = serde_json::from_str(
            r#"{"sent":10,"received":8,"duplicates":0,"failed":1,"malformed":0,"lost":2,"lost_examples":[3,7],"histogram":"","intervals":[
            {"t":0,"ok":3,"errors":0,"lag":0,"p50":5,"p90":6,"p99":7,"max":8},{"t":1,"ok":3,"errors":1,"lag":0,"p50":5,"p90":6,"p99":7,"max":8},
            {"t":2,"ok":1,"errors":0,"lag":0,"p50":5,"p90":6,"p99":9,"max":9}]}"#,
        )
        .unwrap();
        let mut run = Run::new("p", "s", 1, "", serde_json::Value::Null, "");
        delivered(&mut run, &r, 5.0, 2.0);
        let s = &run.summary;
        assert_eq!((s.due, s.ok, s.drained), (10, 6, 1));
        assert_eq!(s.ok + s.drained + s.errors.total() + s.errors.cut, s.due);
        assert!(run
            .failure
            .unwrap()
            .contains("2 of 10 records never arrived"));
    }
}
