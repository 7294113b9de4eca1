//! A pipeline scenario: records through Kafka instead of HTTP requests. The Kafka load tool's
//! report becomes a run like any other (latency from each record's intended send time to its
//! arrival in `output`, per-second rows, the contender's resources) plus the delivery check:
//! every record sent must arrive.

use super::pipeline_warmup::{self, WarmupReadings};
use crate::driver::assess::busy_warning;
use crate::driver::cpu_busy::CpuBusy;
use crate::driver::summary::{decode_histogram, IntervalRow, Latency};
use crate::observe::window_check::judge_pipeline_window;
use crate::plan::{Profile, Scenario};
use crate::remote::deploy::Fleet;
use crate::remote::record_load::RecordLoadHosts;
use crate::results::details::Detail;
use crate::results::faults::EventRecord;
use crate::results::record::{Run, RunStatus};
use crate::run::context::{failed_run, new_run, RunCtx};
use crate::run::finish::{finish, Ended};
use crate::sampler::{self, Sample, Sampling};
use crate::services::contender::Running;
use crate::services::exit_words::log_tail;
use crate::services::kafka::{run_load, Kafka, LoadReport, RecordLoad, LOCAL_START_AHEAD};
use crate::util::interrupt;
use std::path::PathBuf;
use std::time::Duration;

impl RunCtx<'_> {
    /// A pipeline scenario: warm-up and measured load through Kafka, sampled and watched like
    /// an HTTP run; the run gets the delivery check.
    pub(in crate::run) fn measure_pipeline(
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
                "  {name} {} warm-up: {rate} records/s for {}s, then the measured load without a pause",
                s.name,
                s.warmup.as_secs()
            );
        }
        let Some(mut r) = self.pipeline_run(&load, name, proc, s, run, duration) else {
            return; // stopped during the warm-up: nothing was measured
        };
        judge_pipeline_window(&mut r, s);
        if let Some(check) = r.details.delivery() {
            eprintln!(
                "  {:.0} records/s, p50 {:.1} ms, p99 {:.1} ms, {} lost, {} duplicates, {} failed enrichments, peak lag {}, peak {} threads, {:.0} MB RSS",
                r.summary.rps, r.summary.latency.p50, r.summary.latency.p99, check.lost, check.duplicates, check.failed_enrichments, check.peak_lag, r.resources.peak_threads, r.resources.peak_rss_mb
            );
        }
        self.res.runs.push(r);
    }

    /// The warm-up and the measured load, one schedule without a pause between them (the load
    /// tool, its producer and consumer, and the pipeline carry on as they were): the contender's
    /// CPU read during the warm-up, to judge it at its end (run/kinds/pipeline_warmup.rs); the
    /// measured phase sampled, its events fired, the contender watched. The run is finished
    /// from the load tool's report, or failed with why it has none; None when stopped before
    /// the measured phase.
    fn pipeline_run(
        &mut self,
        load: &Pipeline,
        name: &str,
        mut proc: Option<&mut Running>,
        s: &Scenario,
        run: u32,
        duration: Duration,
    ) -> Option<Run> {
        let mut r = new_run(name, s, run);
        let mut watch = Phases {
            warm_sampler: (!s.warmup.is_zero())
                .then(|| self.sampler(proc.as_deref(), None))
                .flatten(),
            read: WarmupReadings::default(),
            sampler: None,
            samples: Vec::new(),
            fired: Vec::new(),
            steal_before: None,
            busy: None,
            crash: None,
        };
        eprintln!(
            "  {name} {}: {} records/s for {}s (then up to {:.0}s for the last records)",
            s.name,
            load.rate,
            duration.as_secs(),
            load.drain
        );
        let tag = format!("{name}-{}-r{run}", s.name);
        let report = load.run(s.warmup, duration, &tag, |elapsed| {
            self.pipeline_second(&mut watch, proc.as_deref_mut(), s, elapsed)
        });
        let measuring = watch.sampler.is_some();
        let busy = watch.busy.take().map(CpuBusy::stop).unwrap_or_default();
        if let Some(Some(sm)) = watch.sampler.as_ref() {
            watch.samples.push(sm.sample_full());
        }
        let report = match report {
            Ok(x) => x,
            Err(_) if !measuring && interrupt::stopped() => return None,
            Err(e) => return Some(no_report(r, &watch, proc.as_deref(), measuring, &e)),
        };
        if let Some(warm) = report.warmup.as_deref() {
            let w = pipeline_warmup::judge(warm, s.warmup, &watch.read, self.plan.warmup_band);
            eprintln!(
                "[{name}] warm-up: {} at its end ({:.0} s)",
                if w.settled { "steady" } else { "not steady" },
                w.seconds
            );
            if w.unsettled() {
                r.driver
                    .warnings
                    .push(pipeline_warmup::unsettled_warning(&w));
            }
            r.warmup = Some(w);
        }
        let delivered = delivered(
            &mut r,
            &report,
            load.rate,
            duration.as_secs_f64(),
            load.drain,
        );
        load_cpus_busy(&mut r, &load.cpus, busy);
        let ended = Ended {
            samples: watch.samples,
            steal_before: watch.steal_before,
            fired: watch.fired,
            crash: watch.crash,
            cancelled: false,
            requests: delivered,
            limits: self.cgroup_limits(proc.as_deref()),
        };
        Some(finish(r, ended, proc.as_deref()))
    }

    /// Every 250 ms of a pipeline's load (`elapsed` from its schedule's start): during the
    /// warm-up the contender's CPU and its JIT compilers' are read; from the measured phase's
    /// start it is sampled and the scenario's events fire (their times count from that start).
    /// False stops the load: the contender exited, or Ctrl-C.
    fn pipeline_second(
        &self,
        w: &mut Phases,
        proc: Option<&mut Running>,
        s: &Scenario,
        elapsed: Duration,
    ) -> bool {
        if elapsed < s.warmup {
            if let Some(sm) = w.warm_sampler.as_ref() {
                let x = sm.sample();
                w.read.cpu.push(x.cpu_user_s + x.cpu_sys_s);
                if let Some(jit) = x.jit_cpu_s {
                    w.read.jit.push(jit);
                }
            }
        } else {
            if w.sampler.is_none() {
                // The measured phase begins: its own sampler, its seconds from now, and the
                // load tool's CPUs watched here (across hosts the load runs on the load hosts).
                w.warm_sampler = None;
                if self.fleet.is_none() {
                    w.busy = Some(CpuBusy::watch(self.plan.driver_cpus.clone()));
                }
                w.steal_before = sampler::cpu_steal();
                w.sampler = Some(self.sampler(proc.as_deref(), self.downstream_port(s)));
            }
            if let Some(Some(sm)) = w.sampler.as_ref() {
                w.samples.push(sm.sample());
            }
            self.fire_due_event(&s.events, &mut w.fired, elapsed - s.warmup);
        }
        if let Some(why) = self.server_gone(proc) {
            w.crash = Some(why);
            return false;
        }
        !interrupt::stopped()
    }
}

/// The load tool's CPUs here and how busy they were each second: it shares them with the
/// broker and the downstream service, so a busy one may have been the limit.
fn load_cpus_busy(r: &mut Run, cpus: &[usize], busy: Vec<f64>) {
    r.driver.cpus = cpus.to_vec();
    if let Some(w) = busy_warning(cpus, &busy) {
        r.driver.saturated = true;
        r.driver.warnings.push(w);
    }
    r.driver.cpu_busy_pct = busy;
}

/// A pipeline run whose load ended without a report: stopped in the measured phase, it keeps
/// what it measured (incomplete); a contender that exited, or a warm-up that failed, fails it.
fn no_report(
    mut r: Run,
    watch: &Phases,
    proc: Option<&Running>,
    measuring: bool,
    e: &anyhow::Error,
) -> Run {
    r.status = if watch.crash.is_some() || !measuring {
        RunStatus::Failed
    } else {
        RunStatus::Incomplete
    };
    let phase = if measuring {
        "pipeline load"
    } else {
        "warm-up failed"
    };
    r.failure = Some(match (&watch.crash, proc) {
        (Some(why), Some(p)) => format!(
            "the contender exited during the run ({why}); last log lines:\n{}",
            log_tail(&p.log, 12)
        ),
        (Some(why), None) => format!("the contender exited during the run ({why})"),
        _ => format!("{phase}: {e:#}"),
    });
    r
}

/// What a pipeline's load keeps from one tick to the next.
struct Phases {
    /// The contender's sampler during the warm-up (its CPU and its JIT compilers' only), and
    /// their readings.
    warm_sampler: Option<Box<dyn Sampling>>,
    read: WarmupReadings,
    /// The measured phase's sampler: None before that phase, Some(None) with nothing to sample.
    sampler: Option<Option<Box<dyn Sampling>>>,
    samples: Vec<Sample>,
    fired: Vec<EventRecord>,
    steal_before: Option<(u64, u64)>,
    /// The load tool's CPUs here, from the measured phase's start: how busy each second.
    busy: Option<CpuBusy>,
    crash: Option<String>,
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
    /// `warmup` then `seconds` of the load, one schedule; `tick` gets the time since its start.
    fn run(
        &self,
        warmup: Duration,
        seconds: Duration,
        tag: &str,
        tick: impl FnMut(Duration) -> bool,
    ) -> anyhow::Result<LoadReport> {
        let load = RecordLoad {
            rate: self.rate,
            warmup: warmup.as_secs_f64(),
            seconds: seconds.as_secs_f64(),
            drain: self.drain,
            start_epoch_ms: Some(
                crate::util::clock::unix_ms() + LOCAL_START_AHEAD.as_millis() as u64,
            ),
        };
        match self.hosts {
            Some((fleet, hosts)) => hosts.run(fleet, self.kafka, &self.logs, load, tag, tick),
            None => run_load(self.kafka, &self.cpus, &self.logs, load, tag, tick),
        }
    }
}

/// Fills a pipeline run's figures and delivery check from the load tool's report (`drain`: the
/// seconds it waited for the last records); returns the records delivered (the population of
/// CPU per record).
fn delivered(r: &mut Run, report: &LoadReport, rate: f64, seconds: f64, drain: f64) -> u64 {
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
            "the Kafka load tool (on a load host, or here) was ready {} ms after its schedule's start: the records due meanwhile went out at once (their latency counts from when they were due)",
            report.start_late_ms
        ));
    }
    if check.lost > 0 {
        r.failure = Some(format!(
            "{} of {} records did not arrive in output within {:.0} s of the load's end, e.g. sequence numbers {:?}",
            check.lost, check.sent, drain, check.lost_examples
        ));
    }
    r.details.set(Detail::Delivery(check));
    r.load_hosts = report.hosts.clone();
    ok
}

/// The mean latency (ms) of one second's records, from its histogram (µs); 0 where the second
/// has none, or the tool sent none (an older tool).
fn second_mean_ms(histogram: &str) -> f64 {
    decode_histogram(histogram)
        .ok()
        .filter(|h| !h.is_empty())
        .map_or(0.0, |h| h.mean() / 1000.0)
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
                mean: second_mean_ms(&i.histogram),
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
        delivered(&mut run, &r, 5.0, 2.0, 7.0);
        let s = &run.summary;
        assert_eq!((s.due, s.ok, s.drained), (10, 6, 1));
        assert_eq!(s.ok + s.drained + s.errors.total() + s.errors.cut, s.due);
        assert!(run
            .failure
            .unwrap()
            .contains("2 of 10 records did not arrive in output within 7 s of the load's end"));
    }
}
