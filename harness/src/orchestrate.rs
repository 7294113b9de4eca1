//! Runs a plan: for each repeat, for each contender: start (pinned) -> wait ready -> verify ->
//! for each scenario: warm-up (not recorded) -> measured run (driver + sampler) -> stop.
//! Results are saved after every run; Ctrl-C or a crashing contender leaves partial results
//! marked as such, and every process started here is stopped.

use crate::contender::{self, describe_exit, log_tail, Running};
use crate::driver::{self, record::Live, DriverConfig, Target};
use crate::manifest::{self, Manifest, StartVars};
use crate::plan::{Load, Plan, Profile, Scenario};
use crate::progress::Progress;
use crate::results::{self, ContenderInfo, DriverReport, Resources, Results, Run, RunStatus};
use crate::sampler::Sampler;
use crate::stats::Latency;
use crate::{interrupt, verify};
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Above this share of its CPUs the driver may be what limits throughput.
const DRIVER_SATURATED: f64 = 0.90;
/// Open model: a p99 dispatch lag above this means the schedule was not kept.
const LAG_LIMIT_MS: f64 = 10.0;
const STOP_GRACE: Duration = Duration::from_secs(4);

pub fn jvm_flags(plan: &Plan) -> Vec<String> {
    let mut f = vec![format!("-Xms{}", plan.jvm_heap), format!("-Xmx{}", plan.jvm_heap)];
    f.extend(plan.jvm_flags.iter().cloned());
    f
}

/// A contender process just started, with the argv that started it.
pub struct Launched {
    pub proc: Running,
    pub argv: Vec<String>,
    pub startup_timeout: Duration,
}

/// Starts `m` on a free loopback port, pinned to the plan's contender CPUs, with the plan's
/// JVM flags; readiness is the caller's next step.
pub fn launch(m: &Manifest, tunables: &BTreeMap<String, String>, plan: &Plan, java: Option<&Path>, log: &Path, env: &[(String, String)]) -> Result<Launched> {
    let port = contender::free_port()?;
    let flags = jvm_flags(plan);
    let argv = m.command(&StartVars { java, jvm_flags: &flags, port }, tunables)?;
    eprintln!("[{}] starting on 127.0.0.1:{port}, CPU {}", m.name, crate::util::format_cpus(&plan.contender_cpus));
    let proc = contender::start(&argv, &m.dir, &plan.contender_cpus, port, log, env)?;
    let startup_timeout = crate::util::parse_duration(m.startup_timeout.as_deref().unwrap_or("120s"))?;
    Ok(Launched { proc, argv, startup_timeout })
}

struct Prepared {
    manifest: Manifest,
    tunables: BTreeMap<String, String>,
}

pub struct Options {
    pub root: PathBuf,
    /// Parent of the timestamped results directory.
    pub out: PathBuf,
    /// Drive an already running server instead of starting contenders.
    pub external: Option<SocketAddr>,
    pub services: crate::services::ServiceChoice,
}

/// Everything that can be checked before a process starts: contenders exist, tunables are
/// known, artifacts are built, a JDK is there, the results directory is writable.
fn prepare(plan: &Plan, opts: &Options) -> Result<(Vec<Prepared>, Option<PathBuf>)> {
    if opts.external.is_some() {
        return Ok((Vec::new(), None));
    }
    let all = manifest::discover(&opts.root)?;
    let mut out = Vec::new();
    for name in &plan.contenders {
        let m = manifest::find(&all, name)?;
        let tunables = m.resolve_tunables(plan.tunables.get(name))?;
        for s in &plan.scenarios {
            if s.pipeline != m.is_pipeline() {
                let (what, fits) = if m.is_pipeline() { ("a Kafka pipeline", "pipeline = true scenarios") } else { ("an HTTP server", "HTTP scenarios (path or mix)") };
                bail!("scenario {:?} cannot run on {name}: it is {what} and runs only {fits}; split the plan or pick other contenders (`iobound list`)", s.name);
            }
        }
        if !m.artifact_path().exists() {
            bail!("{name} is not built ({} is missing); run `./iobound build` (it runs: {})", m.artifact_path().display(), m.build);
        }
        out.push(Prepared { manifest: m, tunables });
    }
    for key in plan.tunables.keys() {
        if !plan.contenders.contains(key) {
            bail!("tunables.{key}: {key} is not among the plan's contenders ({})", plan.contenders.join(", "));
        }
    }
    let java = if out.iter().any(|p| p.manifest.is_jvm()) {
        Some(crate::env::find_java().context(
            "no JDK >= 21 found (looked at $JAVA_HOME and /usr/lib/jvm/*); install one, e.g. `apt-get install temurin-25-jdk` or `openjdk-21-jdk`, or set JAVA_HOME",
        )?)
    } else {
        None
    };
    Ok((out, java))
}

fn results_dir(base: &Path, plan: &Plan) -> Result<PathBuf> {
    let dir = base.join(format!("{}-{}", crate::util::stamp(SystemTime::now()), plan.name));
    std::fs::create_dir_all(dir.join("histograms"))
        .and_then(|_| std::fs::create_dir_all(dir.join("logs")))
        .and_then(|_| std::fs::write(dir.join(".write-test"), b""))
        .and_then(|_| std::fs::remove_file(dir.join(".write-test")))
        .with_context(|| format!("results directory {} is not writable; choose another with --out DIR", dir.display()))?;
    Ok(dir)
}

/// Runs the plan; returns the results directory and the results.
pub fn run_plan(plan: &Plan, opts: &Options) -> Result<(PathBuf, Results)> {
    let (prepared, java) = prepare(plan, opts)?;
    let dir = results_dir(&opts.out, plan)?;
    // The harness itself (driver, sampler) stays off the contender's CPUs.
    crate::util::pin_current_thread(&plan.driver_cpus).context("pinning the harness to the driver CPUs")?;
    // C10K: the driver needs a socket per user.
    contender::raise_nofile();
    interrupt::install();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let environment = crate::env::collect(&opts.root, java.as_deref(), plan);
    let mut res = Results {
        schema_version: results::SCHEMA_VERSION,
        tool: format!("iobound {}", env!("CARGO_PKG_VERSION")),
        started_at: results::now(),
        finished_at: None,
        complete: false,
        incomplete_reason: Some("running".into()),
        plan: serde_json::to_value(plan)?,
        environment,
        contenders: Vec::new(),
        runs: Vec::new(),
    };
    for p in &prepared {
        let m = &p.manifest;
        res.contenders.push(ContenderInfo {
            name: m.name.clone(),
            model: m.model.clone(),
            language: m.language.clone(),
            framework: m.framework.clone(),
            config: m.config.clone(),
            tunables: p.tunables.clone(),
            command: Vec::new(),
            startup_s: None,
            verification: None,
            failure: None,
        });
    }
    if opts.external.is_some() {
        res.contenders.push(ContenderInfo {
            name: "external".into(),
            model: "unknown".into(),
            language: "unknown".into(),
            framework: "an already running server (not started, verified or sampled by iobound)".into(),
            config: String::new(),
            tunables: BTreeMap::new(),
            command: Vec::new(),
            startup_s: None,
            verification: None,
            failure: None,
        });
    }
    res.save(&dir)?;
    eprintln!("iobound: plan {:?}: {} contender(s) x {} scenario(s) x {} run(s); results in {}", plan.name, res.contenders.len(), plan.scenarios.len(), plan.runs, dir.display());
    eprintln!("iobound: {}", res.environment.pinning);

    let mut services = if opts.external.is_none() {
        match crate::services::Services::start(&opts.root, plan, &rt, &dir.join("logs"), &opts.services, plan.has_pipeline()) {
            Ok(s) => {
                res.environment.database = format!("{}; pool of {} connections per contender (IOBOUND_DB_POOL)", s.database.description, s.database.pool);
                if let Some(k) = &s.kafka {
                    res.environment.kafka = k.description.clone();
                }
                res.save(&dir)?;
                Some(s)
            }
            Err(e) if interrupt::stopped() => {
                res.incomplete_reason = Some(format!("interrupted by the user while the services started ({e:#}); nothing was measured"));
                res.finished_at = Some(results::now());
                res.save(&dir)?;
                return Ok((dir, res));
            }
            Err(e) => {
                res.incomplete_reason = Some(format!("services did not start: {e:#}"));
                res.save(&dir)?;
                return Err(e);
            }
        }
    } else {
        None
    };
    let outcome = run_rounds(plan, opts, &dir, &rt, &mut res, services.as_ref(), &prepared, java.as_deref());
    if let Some(s) = services.as_mut() {
        s.stop();
    }
    outcome?;
    let interrupted = interrupt::stopped();
    res.complete = !interrupted;
    res.incomplete_reason = interrupted.then(|| "interrupted by the user; runs measured so far are kept".to_string());
    res.finished_at = Some(results::now());
    res.save(&dir)?;
    Ok((dir, res))
}

#[allow(clippy::too_many_arguments)]
fn run_rounds(
    plan: &Plan,
    opts: &Options,
    dir: &Path,
    rt: &tokio::runtime::Runtime,
    res: &mut Results,
    services: Option<&crate::services::Services>,
    prepared: &[Prepared],
    java: Option<&Path>,
) -> Result<()> {
    let mut ctx = RunCtx { plan, services, dir, rt, res };
    'repeats: for run in 1..=plan.runs {
        if let Some(addr) = opts.external {
            for s in &plan.scenarios {
                if interrupt::stopped() {
                    break 'repeats;
                }
                match &s.overload {
                    Some(o) => ctx.overload_round("external", None, addr, s, o, run),
                    None => ctx.measure_scenario("external", None, addr, s, run),
                }
            }
            continue;
        }
        for (i, p) in prepared.iter().enumerate() {
            if interrupt::stopped() {
                break 'repeats;
            }
            ctx.contender_round(i, p, java, run)?;
        }
    }
    Ok(())
}

struct RunCtx<'a> {
    plan: &'a Plan,
    /// None when driving an external server.
    services: Option<&'a crate::services::Services>,
    dir: &'a Path,
    rt: &'a tokio::runtime::Runtime,
    res: &'a mut Results,
}

impl RunCtx<'_> {
    fn fail_all(&mut self, name: &str, run: u32, why: &str) -> Result<()> {
        for s in &self.plan.scenarios {
            self.res.runs.push(failed_run(name, s, run, why));
        }
        self.res.save(self.dir)
    }

    /// One contender, one repeat: start, verify, every scenario, stop.
    fn contender_round(&mut self, index: usize, p: &Prepared, java: Option<&Path>, run: u32) -> Result<()> {
        let m = &p.manifest;
        let log = self.dir.join("logs").join(format!("{}.run{run}.log", m.name));
        eprintln!("\n[{}] run {run}/{}", m.name, self.plan.runs);
        let services = self.services.context("contenders need the harness's services")?;
        let Launched { mut proc, argv, startup_timeout } = launch(m, &p.tunables, self.plan, java, &log, &services.env())?;
        self.res.contenders[index].command = argv;
        match proc.wait_ready(self.rt, &m.ready, startup_timeout) {
            Ok(t) => {
                eprintln!("[{}] ready in {:.1}s", m.name, t.as_secs_f64());
                self.res.contenders[index].startup_s = Some(t.as_secs_f64());
                self.res.save(self.dir)?;
            }
            Err(e) => {
                let why = format!("start-up failed: {e:#}");
                eprintln!("[{}] {why}", m.name);
                self.res.contenders[index].failure = Some(why.clone());
                proc.stop(STOP_GRACE);
                return self.fail_all(&m.name, run, &why);
            }
        }
        eprintln!("[{}] verifying against the contract", m.name);
        let v = match (&services.kafka, m.is_pipeline()) {
            (Some(k), true) => crate::pipeline::verify(k, &self.plan.driver_cpus, &self.dir.join("logs"), &m.name),
            _ => verify::verify(self.rt, proc.addr, &verify::Context { corpus: &services.corpus, downstream_timeout: services.downstream_timeout, database: Some(&services.database) })?,
        };
        verify::print(&m.name, &v);
        let passed = v.passed;
        self.res.contenders[index].verification = Some(v);
        self.res.save(self.dir)?;
        if interrupt::stopped() {
            proc.stop(STOP_GRACE);
            return self.res.save(self.dir);
        }
        if !passed {
            let why = "failed the contract checks (see verification); not measured".to_string();
            self.res.contenders[index].failure = Some(why.clone());
            proc.stop(STOP_GRACE);
            return self.fail_all(&m.name, run, &why);
        }
        let addr = proc.addr;
        for (si, s) in self.plan.scenarios.iter().enumerate() {
            if interrupt::stopped() {
                break;
            }
            if let Some(status) = proc.exited() {
                let why = format!("not run: the contender had exited ({})", describe_exit(status));
                for rest in &self.plan.scenarios[si..] {
                    self.res.runs.push(failed_run(&m.name, rest, run, &why));
                }
                break;
            }
            match &s.overload {
                Some(o) => self.overload_round(&m.name, Some(&mut proc), addr, s, o, run),
                None => self.measure_scenario(&m.name, Some(&mut proc), addr, s, run),
            }
            self.res.save(self.dir)?;
        }
        let status = proc.stop(STOP_GRACE);
        eprintln!("[{}] stopped ({})", m.name, describe_exit(status));
        self.res.save(self.dir)
    }

    /// Warm-up then measured run of one scenario; the run is appended to the results.
    fn measure_scenario(&mut self, name: &str, mut proc: Option<&mut Running>, addr: SocketAddr, s: &Scenario, run: u32) {
        if let Err(why) = self.set_downstream(&s.downstream) {
            self.res.runs.push(failed_run(name, s, run, &format!("could not set the downstream service ({}): {why}", s.downstream)));
            return;
        }
        let uses_db = !s.mix.is_empty() || s.path.starts_with("/messages");
        if let (Some(sv), true) = (self.services, uses_db) {
            if let Err(e) = sv.database.reset(self.rt) {
                self.res.runs.push(failed_run(name, s, run, &format!("could not reset the database: {e:#}")));
                return;
            }
        }
        if s.pipeline {
            return self.measure_pipeline(name, proc, s, run);
        }
        let mut warm_left = None;
        if !s.warmup.is_zero() {
            let warm = warmup_load(&s.load, s.warmup);
            let target = scenario_target(addr, s, warm.connection_close, &format!("iobound {name} {} r{run} warm ", s.name));
            let bar = Progress::new(&format!("{name} {} warm-up", s.name), s.warmup);
            let outcome = self.drive(&target, &warm, proc.as_deref_mut(), &bar, None, &[], &mut Vec::new());
            bar.finish();
            match outcome {
                Err(e) => {
                    self.res.runs.push(failed_run(name, s, run, &format!("warm-up failed: {e:#}")));
                    return;
                }
                Ok((o, _)) if o.abandoned > 0 => warm_left = Some(o.abandoned),
                Ok(_) => {}
            }
        }
        if interrupt::stopped() {
            return;
        }
        let started_at = results::now();
        let wall_start = SystemTime::now();
        let target = scenario_target(addr, s, s.load.connection_close, &format!("iobound {name} {} r{run} run ", s.name));
        let bar = Progress::new(&format!("{name} {}", s.name), s.load.profile.duration());
        // Reading /proc/net/tcp costs the harness's CPU (10,000 lines at C10K, four times a
        // second): only where the scenario calls the downstream service.
        let calls_downstream = s.path == "/enrich" || s.path.starts_with("/enrich?");
        let downstream_port = self.services.filter(|_| calls_downstream).map(|sv| sv.downstream.addr.port());
        let sampler = proc.as_ref().map(|p| Sampler::new(p.pid, Instant::now(), downstream_port));
        let mut samples = Vec::new();
        let steal_before = crate::sampler::cpu_steal();
        let mut fired = Vec::new();
        let outcome = self.drive(&target, &s.load, proc.as_deref_mut(), &bar, sampler.as_ref().map(|sm| (sm, &mut samples)), &s.events, &mut fired);
        bar.finish();
        let mut r = new_run(name, s, run);
        r.started_at = started_at;
        let (outcome, crash) = match outcome {
            Ok(v) => v,
            Err(e) => {
                r.failure = Some(format!("driver failed: {e:#}"));
                self.res.runs.push(r);
                return;
            }
        };
        let (mut summary, intervals) = results::summarize(&outcome.recorder, outcome.duration, &s.load.profile);
        summary.abandoned = outcome.abandoned;
        r.driver = driver_report(&outcome, &self.plan.driver_cpus, summary.ok + summary.drained);
        r.driver.cpu_steal_pct = crate::sampler::steal_pct(steal_before, crate::sampler::cpu_steal());
        if r.driver.cpu_steal_pct > crate::analysis::STEAL_LIMIT_PCT {
            r.driver.warnings.push(format!("the hypervisor stole {:.1}% of this machine's CPU time during the run: figures may be low", r.driver.cpu_steal_pct));
        }
        match crate::analysis::encode_histogram(&outcome.recorder.overall().0) {
            Ok(h) => r.histogram = Some(h),
            Err(e) => r.driver.warnings.push(format!("histogram not kept: {e:#}")),
        }
        if let Some(n) = warm_left {
            r.driver.warnings.push(format!("the warm-up left {n} requests unanswered: the server may still have been busy with them when measurement began"));
        }
        if outcome.abandoned > 0 {
            r.driver.warnings.push(format!("{} requests were still unanswered {}s after the run and were abandoned", outcome.abandoned, crate::driver::drain_window(&s.load).as_secs()));
        }
        r.entries = target
            .entries
            .iter()
            .zip(&outcome.entries)
            .map(|(e, c)| results::EntryResult { method: e.method.clone(), path: e.path.clone(), weight: e.weight, sent: c.sent, ok: c.ok })
            .collect();
        if let (Some(sv), true) = (self.services, target.entries.iter().any(|e| e.is_write())) {
            match check_writes(self.rt, &sv.database, &target, &outcome.acks) {
                Ok(w) => {
                    if w.lost > 0 {
                        r.failure = Some(format!("{} acknowledged writes are not in the database, e.g. {}", w.lost, w.lost_examples.join("; ")));
                    }
                    r.writes = Some(w);
                }
                Err(e) => r.driver.warnings.push(format!("the write check could not run: {e:#}")),
            }
        }
        results::level_peaks(&mut summary.levels, &samples);
        r.resources = Resources::from_samples(samples, summary.ok + summary.drained);
        let lost_writes = r.writes.as_ref().is_some_and(|w| w.lost > 0);
        r.status = if crash.is_some() || lost_writes {
            RunStatus::Failed
        } else if outcome.cancelled {
            RunStatus::Incomplete
        } else {
            RunStatus::Ok
        };
        if let (Some(why), Some(p)) = (crash, proc.as_ref()) {
            r.failure = Some(format!("the contender exited during the run ({why}); last log lines:\n{}", log_tail(&p.log, 12)));
        }
        let hlog = format!("histograms/{name}.{}.run{run}.hlog", s.name);
        match results::write_hlog(&outcome.recorder, &self.dir.join(&hlog), wall_start, &format!("{name}.{}", s.name)) {
            Ok(()) => r.histogram_log = Some(hlog),
            Err(e) => r.driver.warnings.push(format!("histogram log not written: {e:#}")),
        }
        eprintln!(
            "  {:.0} req/s, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms, {} errors, peak {} threads, {:.0} MB RSS",
            summary.rps, summary.latency.p50, summary.latency.p99, summary.latency.max, summary.errors.total(), r.resources.peak_threads, r.resources.peak_rss_mb
        );
        if let Some(w) = &r.writes {
            eprintln!(
                "  writes: {} creates, {} updates, {} deletes acknowledged; {} lost{}",
                w.creates_acknowledged,
                w.updates_acknowledged,
                w.deletes_acknowledged,
                w.lost,
                if w.creates_unacknowledged > 0 { format!(" ({} rows committed without an answer)", w.creates_unacknowledged) } else { String::new() }
            );
        }
        for w in &r.driver.warnings {
            eprintln!("  warning: {w}");
        }
        r.summary = summary;
        r.intervals = intervals;
        finish_events(&mut r, fired);
        self.res.runs.push(r);
    }

    /// A pipeline scenario: warm-up and measured load through Kafka, sampled and watched like
    /// an HTTP run; the run gets the delivery check.
    fn measure_pipeline(&mut self, name: &str, mut proc: Option<&mut Running>, s: &Scenario, run: u32) {
        let Some(kafka) = self.services.and_then(|sv| sv.kafka.as_ref()) else {
            self.res.runs.push(failed_run(name, s, run, "no Kafka broker (pipeline scenarios need one)"));
            return;
        };
        let Profile::Open { rate, duration, .. } = s.load.profile else {
            self.res.runs.push(failed_run(name, s, run, "a pipeline scenario needs an open-model load"));
            return;
        };
        let logs = self.dir.join("logs");
        let (cpus, drain) = (self.plan.driver_cpus.clone(), s.load.timeout.as_secs_f64() + 5.0);
        if !s.warmup.is_zero() {
            eprintln!("  {name} {} warm-up: {rate} records/s for {}s", s.name, s.warmup.as_secs());
            let tag = format!("{name}-{}-r{run}-warm", s.name);
            if let Err(e) = crate::pipeline::run_load(kafka, &cpus, &logs, rate, s.warmup.as_secs_f64(), drain, &tag, |_| !interrupt::stopped()) {
                self.res.runs.push(failed_run(name, s, run, &format!("warm-up failed: {e:#}")));
                return;
            }
        }
        if interrupt::stopped() {
            return;
        }
        let mut r = new_run(name, s, run);
        let sampler = proc.as_ref().map(|p| Sampler::new(p.pid, Instant::now(), None));
        let mut samples = Vec::new();
        let mut fired = Vec::new();
        let mut crash = None;
        let steal_before = crate::sampler::cpu_steal();
        eprintln!("  {name} {}: {rate} records/s for {}s (then up to {drain:.0}s for the last records)", s.name, duration.as_secs());
        let tag = format!("{name}-{}-r{run}", s.name);
        let report = crate::pipeline::run_load(kafka, &cpus, &logs, rate, duration.as_secs_f64(), drain, &tag, |elapsed| {
            if let Some(sm) = sampler.as_ref() {
                samples.push(sm.sample());
            }
            self.fire_due_event(&s.events, &mut fired, elapsed);
            if let Some(st) = proc.as_mut().and_then(|p| p.exited()) {
                crash = Some(describe_exit(st));
                return false;
            }
            !interrupt::stopped()
        });
        let report = match report {
            Ok(x) => x,
            Err(e) => {
                r.status = if crash.is_some() { RunStatus::Failed } else { RunStatus::Incomplete };
                r.failure = Some(match (&crash, proc.as_ref()) {
                    (Some(why), Some(p)) => format!("the contender exited during the run ({why}); last log lines:
{}", log_tail(&p.log, 12)),
                    _ => format!("pipeline load: {e:#}"),
                });
                self.res.runs.push(r);
                return;
            }
        };
        let seconds = duration.as_secs_f64();
        let check = report.check();
        let ok = report.received.saturating_sub(report.failed);
        r.intervals = crate::pipeline::intervals(&report, rate, seconds);
        // Throughput counts records that arrived inside the measured phase, as for HTTP runs;
        // the ones that arrived while draining count in latency, not in throughput.
        let inside: u64 = r.intervals.iter().filter(|i| !i.drain).map(|i| i.ok).sum();
        r.summary.duration_s = seconds;
        r.summary.ok = inside;
        r.summary.drained = ok.saturating_sub(inside);
        r.summary.rps = inside as f64 / seconds;
        r.summary.errors.status = report.failed;
        r.summary.errors.timeout = report.lost;
        match crate::analysis::decode_histogram(&report.histogram) {
            Ok(h) => {
                r.summary.latency = Latency::from_histogram(&h);
                r.summary.littles_law_concurrency = r.summary.rps * r.summary.latency.mean / 1000.0;
                r.histogram = Some(report.histogram.clone());
            }
            Err(e) => r.driver.warnings.push(format!("latency histogram unreadable: {e:#}")),
        }
        r.driver.cpus = cpus.clone();
        r.driver.cpu_steal_pct = crate::sampler::steal_pct(steal_before, crate::sampler::cpu_steal());
        r.resources = Resources::from_samples(samples, ok);
        finish_events(&mut r, fired);
        if check.lost > 0 {
            r.status = RunStatus::Failed;
            r.failure = Some(format!("{} of {} records never arrived in output, e.g. sequence numbers {:?}", check.lost, check.sent, check.lost_examples));
        } else if crash.is_some() {
            r.status = RunStatus::Failed;
        } else {
            r.status = RunStatus::Ok;
        }
        eprintln!(
            "  {:.0} records/s, p50 {:.1} ms, p99 {:.1} ms, {} lost, {} duplicates, {} failed enrichments, peak lag {}, peak {} threads, {:.0} MB RSS",
            r.summary.rps, r.summary.latency.p50, r.summary.latency.p99, check.lost, check.duplicates, check.failed_enrichments, check.peak_lag, r.resources.peak_threads, r.resources.peak_rss_mb
        );
        r.delivery = Some(check);
        self.res.runs.push(r);
    }

    /// An overload scenario: the scenario's closed load probes capacity C, then open-model
    /// phases at C/2, factor x C and C/2 again, each a run of its own ("<name>-probe",
    /// "<name>-calm", "<name>-<factor>x", "<name>-after"); the overload run gets the verdict.
    fn overload_round(&mut self, name: &str, mut proc: Option<&mut Running>, addr: SocketAddr, s: &Scenario, o: &crate::plan::Overload, run: u32) {
        let probe = Scenario { name: format!("{}-probe", s.name), overload: None, ..s.clone() };
        self.measure_scenario(name, proc.as_deref_mut(), addr, &probe, run);
        let Some(capacity) = self.res.runs.last().filter(|r| r.scenario == probe.name && r.status == RunStatus::Ok).map(|r| r.summary.rps).filter(|c| *c > 0.0) else {
            return;
        };
        let max_connections = 10_000;
        let phase = |suffix: String, rate: f64, length: Duration| Scenario {
            name: format!("{}-{suffix}", s.name),
            warmup: Duration::ZERO,
            load: Load { profile: Profile::Open { rate, ramp_to: rate, duration: length, max_connections }, ..s.load.clone() },
            overload: None,
            ..s.clone()
        };
        let factor_name = format!("{}x", o.factor);
        let phases = [phase("calm".into(), capacity / 2.0, o.calm), phase(factor_name, capacity * o.factor, o.duration), phase("after".into(), capacity / 2.0, o.calm)];
        let first = self.res.runs.len();
        for p in &phases {
            if interrupt::stopped() || proc.as_mut().is_some_and(|p| p.exited().is_some()) {
                return;
            }
            self.measure_scenario(name, proc.as_deref_mut(), addr, p, run);
        }
        let runs = &self.res.runs[first..];
        let (Some(calm), Some(over), Some(after)) = (runs.iter().find(|r| r.scenario == phases[0].name), runs.iter().find(|r| r.scenario == phases[1].name), runs.iter().find(|r| r.scenario == phases[2].name)) else {
            return;
        };
        let e = &over.summary.errors;
        let sent = over.summary.ok + over.summary.drained + e.total();
        let v = crate::faults::verdict(capacity, o.factor, sent, over.summary.rps, e.status + e.connect + e.io, e.timeout, calm.summary.latency.p99, over.summary.latency.p99, &after.intervals, after.summary.latency.p99);
        eprintln!("  overload: {} ({})", v.behaviour, v.explanation);
        let over_name = phases[1].name.clone();
        if let Some(r) = self.res.runs[first..].iter_mut().find(|r| r.scenario == over_name) {
            r.overload = Some(v);
        }
    }

    /// Sends a /_control query to the downstream service (none when driving an external server).
    fn set_downstream(&self, query: &str) -> std::result::Result<(), String> {
        let Some(sv) = self.services else { return Ok(()) };
        match self.rt.block_on(crate::http1::fetch(sv.downstream.addr, "GET", &format!("/_control?{query}"), None)) {
            Ok(r) if r.status == 200 => Ok(()),
            Ok(r) => Err(format!("status {}: {}", r.status, String::from_utf8_lossy(&r.body))),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Applies the next of a scenario's mid-run events once its time has come (called every
    /// 250 ms while a run goes on) and records it in `fired`.
    fn fire_due_event(&self, events: &[crate::plan::Event], fired: &mut Vec<crate::faults::EventRecord>, elapsed: Duration) {
        if let (Some(e), Some(_)) = (events.get(fired.len()), self.services) {
            if elapsed >= e.at {
                let applied = self.set_downstream(&e.downstream).is_ok();
                fired.push(crate::faults::EventRecord { at_s: elapsed.as_secs_f64(), downstream: e.downstream.clone(), applied });
            }
        }
    }

    /// Runs the driver in its own thread while this thread samples the contender every
    /// 250 ms, updates the progress bar and watches for Ctrl-C and crashes.
    fn drive(
        &self,
        target: &Target,
        load: &Load,
        mut proc: Option<&mut Running>,
        bar: &Progress,
        mut sampling: Option<(&Sampler, &mut Vec<crate::sampler::Sample>)>,
        events: &[crate::plan::Event],
        fired: &mut Vec<crate::faults::EventRecord>,
    ) -> Result<(driver::Outcome, Option<String>)> {
        let live = Arc::new(Live::default());
        let cancel = Arc::new(AtomicBool::new(false));
        let cfg = DriverConfig { threads: self.plan.driver_threads, cpus: self.plan.driver_cpus.clone() };
        let (t, l, lv, c) = (target.clone(), load.clone(), live.clone(), cancel.clone());
        let handle = std::thread::spawn(move || driver::run(&t, &l, &cfg, lv, c));
        let mut crash = None;
        let t0 = Instant::now();
        let mut tick = 0u32;
        loop {
            if let Some((sampler, samples)) = sampling.as_mut() {
                samples.push(sampler.sample());
            }
            bar.update(&live, load.profile.target_at(t0.elapsed()), t0.elapsed());
            self.fire_due_event(events, fired, t0.elapsed());
            if interrupt::stopped() {
                cancel.store(true, Ordering::SeqCst);
            }
            if let Some(p) = proc.as_mut() {
                if let Some(status) = p.exited() {
                    crash.get_or_insert_with(|| describe_exit(status));
                    cancel.store(true, Ordering::SeqCst);
                }
            }
            if handle.is_finished() {
                break;
            }
            tick += 1;
            let next = t0 + Duration::from_millis(250) * tick;
            while Instant::now() < next && !handle.is_finished() {
                std::thread::sleep(Duration::from_millis(10).min(next.saturating_duration_since(Instant::now())));
            }
        }
        let outcome = handle.join().map_err(|_| anyhow::anyhow!("the driver thread panicked"))??;
        Ok((outcome, crash))
    }
}

/// Warm-up offers the scenario's starting load (first level, or the starting rate): more
/// would leave a queue behind in a saturated server that the measured run would inherit.
fn warmup_load(load: &Load, length: Duration) -> Load {
    let profile = match load.profile {
        Profile::Closed { users, step_users, think, .. } => {
            let first = if users > 0 { users } else { step_users.max(1) };
            Profile::Closed { users: first, step_users: 0, steps: 0, level: length, think }
        }
        Profile::Open { rate, max_connections, .. } => Profile::Open { rate, ramp_to: rate, duration: length, max_connections },
    };
    Load { profile, ..load.clone() }
}

pub fn driver_report(o: &driver::Outcome, cpus: &[usize], requests: u64) -> DriverReport {
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

/// The scenario's requests; a mix's write tokens start with `tag`.
fn scenario_target(addr: SocketAddr, s: &Scenario, close: bool, tag: &str) -> Target {
    if s.mix.is_empty() {
        Target::new(addr, &s.path, close)
    } else {
        Target::mix(addr, &s.mix, close, tag)
    }
}

/// Looks up every acknowledged write of a run in the database.
fn check_writes(rt: &tokio::runtime::Runtime, db: &crate::database::Database, target: &Target, acks: &[(u32, u64)]) -> Result<crate::database::WriteCheck> {
    let acks: Vec<crate::database::Ack> = acks
        .iter()
        .map(|&(i, token)| {
            let entry = &target.entries[target.slots[i as usize].entry as usize];
            let id = target.path_of(i as usize).rsplit('/').next().and_then(|x| x.parse::<i64>().ok());
            crate::database::Ack { method: entry.method.clone(), id: id.filter(|_| entry.method != "POST"), token: (token > 0).then(|| target.token(token)) }
        })
        .collect();
    let ids: Vec<i64> = acks.iter().filter_map(|a| a.id).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let tagged = db.texts_with_prefix(rt, &target.tag)?;
    let rows = db.texts_of(rt, &ids)?;
    Ok(crate::database::judge_writes(&acks, &target.tag, &tagged, &rows))
}

/// Keeps a run's mid-run events and, when a fault began and cleared (two events or more), the
/// recovery after it, from the run's per-second rows.
fn finish_events(r: &mut Run, fired: Vec<crate::faults::EventRecord>) {
    if let (Some(first), Some(last), true) = (fired.first(), fired.last(), fired.len() >= 2) {
        r.recovery = crate::faults::recovery(&r.intervals, first.at_s, last.at_s);
        if let Some(rc) = &r.recovery {
            match rc.recovered_after_s {
                Some(s) => eprintln!("  recovery: back within {:.0} ms p99 {s:.0} s after the fault cleared (worst p99 {:.0} ms, {} errors)", rc.limit_ms, rc.worst_p99_ms, rc.errors),
                None => eprintln!("  recovery: not back within {:.0} ms p99 by the end of the run (worst p99 {:.0} ms, {} errors)", rc.limit_ms, rc.worst_p99_ms, rc.errors),
            }
        }
    }
    if fired.iter().any(|e| !e.applied) {
        r.driver.warnings.push("the downstream did not accept a mid-run change; see events".into());
    }
    r.events = fired;
}

/// A run of scenario `s` with nothing measured yet (see Run::new).
fn new_run(name: &str, s: &Scenario, run: u32) -> Run {
    Run::new(name, &s.name, run, &s.path, serde_json::to_value(&s.load).unwrap_or_default(), &s.load.profile.describe())
}

fn failed_run(name: &str, s: &Scenario, run: u32, why: &str) -> Run {
    Run { failure: Some(why.to_string()), ..new_run(name, s, run) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwritable_results_directory_is_named_with_the_fix() {
        let plan = crate::plan::PlanFile {
            contenders: vec!["x".into()],
            scenarios: vec![crate::plan::ScenarioFile {
                name: "s".into(),
                path: Some("/".into()),
                mix: None,
                warmup: None,
                load: crate::plan::LoadFile { model: "closed".into(), users: Some(1), duration: Some("1s".into()), ..Default::default() },
                downstream: None,
                ..Default::default()
            }],
            ..Default::default()
        }
        .validate()
        .unwrap();
        // /proc refuses new directories even to root.
        let e = format!("{:#}", results_dir(Path::new("/proc/iobound-results"), &plan).unwrap_err());
        assert!(e.contains("/proc/iobound-results/") && e.contains("is not writable; choose another with --out DIR"), "{e}");
    }

    #[test]
    fn warmup_offers_the_first_level_only() {
        let load = Load {
            profile: Profile::Closed { users: 250, step_users: 2250, steps: 1, level: Duration::from_secs(12), think: Duration::ZERO },
            timeout: Duration::from_secs(20),
            connection_close: false,
        };
        let w = warmup_load(&load, Duration::from_secs(2));
        assert_eq!(w.profile, Profile::Closed { users: 250, step_users: 0, steps: 0, level: Duration::from_secs(2), think: Duration::ZERO });
        let ramp = Load { profile: Profile::Open { rate: 10.0, ramp_to: 300.0, duration: Duration::from_secs(60), max_connections: 100 }, ..load };
        assert_eq!(warmup_load(&ramp, Duration::from_secs(5)).profile, Profile::Open { rate: 10.0, ramp_to: 10.0, duration: Duration::from_secs(5), max_connections: 100 });
    }
}
