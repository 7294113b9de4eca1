//! Runs a plan: for each repeat, for each contender: start (pinned) -> wait ready -> verify ->
//! for each scenario: warm-up (not recorded) -> measured run (driver + sampler) -> stop.
//! Results are saved after every run; Ctrl-C or a crashing contender leaves partial results
//! marked as such, and every process started here is stopped.
//!
//! What a run writes is the results stage's (results/), and what is watched beside the load is
//! observe/'s: this stage sequences.
//!
//! Holds: `context` (what a round runs in), `launch` (start a contender and check it), `round` (one
//! contender's round), `kinds/` (each kind of measurement: one run, a pipeline, a capacity search,
//! overload phases, the write check), `resume`, `watch` (sampling, events, crashes, Ctrl-C beside
//! the driver), `finish`, `slo`, `warnings`, `jvm_train` (a JVM's training start), `external` and
//! `deployed` (a contender iobound did not start, or started on another host), `hosts` and
//! `verdicts` (the verdicts after every round, and when automatic repeats stop).
//! Uses: util, plan, services, conformance, driver, sampler, remote (contenders and load on
//! other hosts), results (the record it writes), observe (what is watched beside the load),
//! stats (verdicts between rounds).

mod context;
mod deployed;
pub mod external;
mod finish;
mod hosts;
mod jvm_train;
mod kinds;
pub mod launch;
mod prepare;
mod resume;
mod round;
mod slo;
mod verdicts;
mod warnings;
mod watch;

use crate::plan::Plan;
use crate::remote::deploy::Fleet;
use crate::remote::record_load::RecordLoadHosts;
use crate::results::record::{ContenderInfo, Results};
use crate::services::{contender, ServiceChoice, Services};
use crate::util::interrupt;
use anyhow::{Context, Result};
use context::RunCtx;
pub use external::{External, ExternalArm, ExternalProcess};
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use verdicts::VerdictWatch;

pub use launch::{launch, Launched, STOP_GRACE};
pub use prepare::check_contenders;
use prepare::{prepare, Prepared};

/// Where a plan's results go.
#[derive(Debug, Clone)]
pub enum Destination {
    /// A new timestamped directory under this one.
    Under(PathBuf),
    /// The directory of an earlier sitting of the same plan, continued (`run --resume`).
    Resume(PathBuf),
}

pub struct Options {
    pub root: PathBuf,
    pub out: Destination,
    /// Drive an already running server instead of starting contenders.
    pub external: Option<External>,
    pub services: ServiceChoice,
    /// Hosts the load comes from (and the contender host it goes to), over SSH.
    pub hosts: Option<crate::plan::hosts::Inventory>,
}

/// A new results directory under `base`, never one that exists already (two runs of a plan
/// in the same second get `-2`, `-3`, ...): made exclusively, so a run cannot write into
/// another's directory or follow a link someone put in its place.
fn results_dir(base: &Path, plan: &Plan) -> Result<PathBuf> {
    let stem = format!(
        "{}-{}",
        crate::util::clock::stamp(SystemTime::now()),
        plan.name
    );
    let unwritable = |dir: &Path| {
        format!(
            "results directory {} is not writable; choose another with --out DIR",
            dir.display()
        )
    };
    std::fs::create_dir_all(base).with_context(|| unwritable(&base.join(&stem)))?;
    let mut n = 1;
    let dir = loop {
        let name = if n == 1 {
            stem.clone()
        } else {
            format!("{stem}-{n}")
        };
        let dir = base.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => break dir,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => return Err(e).with_context(|| unwritable(&dir)),
        }
    };
    ready_for_writing(&dir).with_context(|| unwritable(&dir))?;
    Ok(dir)
}

/// Makes the subdirectories a run writes into (a new directory's, or a resumed one's: results
/// committed under docs/results keep no logs) and checks that files can be written there.
pub(crate) fn ready_for_writing(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir.join("histograms"))?;
    std::fs::create_dir_all(dir.join("logs"))?;
    std::fs::write(dir.join(".write-test"), b"")?;
    std::fs::remove_file(dir.join(".write-test"))
}

/// The results of a plan before anything has run: its contenders, the machine, "running".
fn new_results(
    plan: &Plan,
    opts: &Options,
    prepared: &[Prepared],
    java: Option<&Path>,
) -> Result<Results> {
    let mut contenders: Vec<ContenderInfo> = prepared
        .iter()
        .map(|p| ContenderInfo {
            arm_of: p.arm_of.clone(),
            ..ContenderInfo::of(&p.manifest, &p.tunables, java)
        })
        .collect();
    if let Some(ext) = &opts.external {
        contenders.extend(ext.infos());
    }
    Ok(Results {
        schema_version: crate::results::record::SCHEMA_VERSION,
        tool: format!("iobound {}", env!("CARGO_PKG_VERSION")),
        started_at: crate::util::clock::now(),
        finished_at: None,
        complete: false,
        incomplete_reason: Some("running".into()),
        plan: serde_json::to_value(plan)?,
        environment: crate::results::environment::collect(&opts.root, java, plan),
        contenders,
        runs: Vec::new(),
        thresholds: Vec::new(),
        capacity: Vec::new(),
        verdicts: Vec::new(),
        windows: Vec::new(),
        resumed_at: Vec::new(),
        rejudged_at: None,
    })
}

/// What the results say about the database and the Kafka broker the contenders were given.
fn record_services(s: &Services, res: &mut Results) {
    res.environment.database = match &s.database {
        Some(db) => format!(
            "{}; pool of {} connections per contender (IOBOUND_DB_POOL)",
            db.description, db.pool
        ),
        None => "none (no scenario calls /messages)".into(),
    };
    if let Some(k) = &s.kafka {
        res.environment.kafka = k.description.clone();
    }
}

/// Starts the services and records them in the results; Ok(None) when the user interrupted
/// the start (the results then say so and nothing is measured).
fn start_services(
    plan: &Plan,
    opts: &Options,
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    res: &mut Results,
) -> Result<Option<Services>> {
    match Services::start(
        &opts.root,
        &crate::services::Settings::of(plan),
        rt,
        &dir.join("logs"),
        &opts.services,
        plan.uses_database(),
        plan.has_pipeline(),
    ) {
        Ok(s) => {
            record_services(&s, res);
            res.checkpoint(dir);
            Ok(Some(s))
        }
        Err(e) if interrupt::stopped() => {
            res.incomplete_reason = Some(format!(
                "interrupted by the user while the services started ({e:#}); nothing was measured"
            ));
            res.finished_at = Some(crate::util::clock::now());
            res.checkpoint(dir);
            Ok(None)
        }
        Err(e) => {
            res.incomplete_reason = Some(format!("services did not start: {e:#}"));
            res.checkpoint(dir);
            Err(e)
        }
    }
}

/// Runs the plan, judging the runs after every round (where `runs = "auto"` decides whether
/// to repeat again); returns the results directory and the results with their verdicts.
pub fn run_plan(plan: &Plan, opts: &Options) -> Result<(PathBuf, Results)> {
    let mut watch = VerdictWatch::new(plan);
    let (dir, mut res) = measure_plan(plan, opts, &mut watch)?;
    watch.finish(&mut res, &dir);
    Ok((dir, res))
}

/// The plan's rounds, `watch` asked after each one.
fn measure_plan(
    plan: &Plan,
    opts: &Options,
    watch: &mut VerdictWatch,
) -> Result<(PathBuf, Results)> {
    let (prepared, java) = prepare(plan, opts)?;
    let (dir, resumed) = match &opts.out {
        Destination::Under(base) => (results_dir(base, plan)?, None),
        Destination::Resume(dir) => (dir.clone(), Some(resume::reopen(dir, plan)?)),
    };
    // The harness itself (driver, sampler) stays off the contender's CPUs.
    crate::util::cpus::pin_current_thread(&plan.driver_cpus)
        .context("pinning the harness to the driver CPUs")?;
    // C10K: the driver needs a socket per user.
    contender::raise_nofile();
    interrupt::install();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut res = match resumed {
        Some(r) => r,
        None => new_results(plan, opts, &prepared, java.as_deref())?,
    };
    res.save(&dir)?;
    announce(plan, opts, &res, &dir);
    let (fleet, record_load) = match &opts.hosts {
        Some(inv) => {
            let (fleet, record_load) = hosts::connect_hosts(inv, opts, plan, &dir, &mut res)?;
            (Some(fleet), record_load)
        }
        None => (None, None),
    };
    let mut services = None;
    let mut services_host = None;
    if let Some(h) = fleet.as_ref().and_then(|f| f.services.as_ref()) {
        let (host, s) = hosts::start_services_on_host(h, plan, opts, &rt, &dir, &mut res)?;
        services_host = Some(host);
        services = Some(s);
    } else if opts.external.is_none() {
        match start_services(plan, opts, &rt, &dir, &mut res)? {
            Some(s) => services = Some(s),
            None => return Ok((dir, res)),
        }
    }
    let outcome = run_rounds(
        plan,
        opts,
        &dir,
        &rt,
        &mut res,
        services.as_ref(),
        Round {
            prepared: &prepared,
            java: java.as_deref(),
            after: watch,
            fleet: fleet.as_ref(),
            record_load: record_load.as_ref(),
        },
    );
    if let Some(s) = services.as_mut() {
        s.stop();
    }
    drop(services_host);
    // Removes the per-run directories on the hosts and closes the connections.
    drop(fleet);
    outcome?;
    let interrupted = interrupt::stopped();
    res.complete = !interrupted;
    res.incomplete_reason =
        interrupted.then(|| "interrupted by the user; runs measured so far are kept".to_string());
    res.finished_at = Some(crate::util::clock::now());
    res.checkpoint(&dir);
    Ok((dir, res))
}

/// What the plan runs and where its results go, said before anything starts.
fn announce(plan: &Plan, opts: &Options, res: &Results, dir: &Path) {
    let runs = match plan.sequential {
        Some(_) => format!(
            "up to {} runs (auto: until every difference is decided)",
            plan.runs
        ),
        None => format!("{} run(s)", plan.runs),
    };
    eprintln!(
        "iobound: plan {:?}: {} contender(s) x {} scenario(s) x {runs}; results in {}",
        plan.name,
        res.contenders.len(),
        plan.scenarios.len(),
        dir.display()
    );
    if opts.hosts.is_none() {
        // With --hosts the pinning is the hosts' own, said once they are connected.
        eprintln!("iobound: {}", res.environment.pinning);
    }
}

/// What every round runs and what is asked after it.
struct Round<'a, 'b> {
    prepared: &'a [Prepared],
    java: Option<&'a Path>,
    after: &'b mut VerdictWatch,
    fleet: Option<&'a Fleet>,
    /// The pipelines' load tool on the load hosts (with --hosts, when a pipeline runs).
    record_load: Option<&'a RecordLoadHosts>,
}

fn run_rounds(
    plan: &Plan,
    opts: &Options,
    dir: &Path,
    rt: &tokio::runtime::Runtime,
    res: &mut Results,
    services: Option<&Services>,
    round: Round<'_, '_>,
) -> Result<()> {
    let Round {
        prepared,
        java,
        after,
        fleet,
        record_load,
    } = round;
    let mut ctx = RunCtx {
        plan,
        services,
        dir,
        rt,
        res,
        sample_tree: None,
        abort_p99_ms: None,
        gave_up: Default::default(),
        settle: Default::default(),
        profiler: None,
        profile_ahead: Default::default(),
        fleet,
        record_load,
        remote: None,
        host_shares: Default::default(),
        pending_start: None,
        warm_started: Default::default(),
        trained: Default::default(),
    };
    // Rounds an earlier sitting finished (`--resume`) are not run again; the stop rule is
    // asked first, as it was after them.
    let names: Vec<String> = match &opts.external {
        Some(ext) => ext.names(),
        None => prepared.iter().map(|p| p.manifest.name.clone()).collect(),
    };
    let done = resume::rounds_done(ctx.res, &names, &plan.scenarios);
    if done > 0 && after.after_round(&mut *ctx.res, dir, done) {
        return Ok(());
    }
    let finished =
        |res: &Results, name: &str, run: u32| resume::finished(res, name, &plan.scenarios, run);
    'repeats: for run in done + 1..=plan.runs {
        if let Some(ext) = &opts.external {
            if interrupt::stopped() {
                break 'repeats;
            }
            ctx.external_round(ext, run)?;
        } else {
            for (i, p) in prepared.iter().enumerate() {
                if interrupt::stopped() {
                    break 'repeats;
                }
                if finished(ctx.res, &p.manifest.name, run) {
                    continue;
                }
                if fleet.is_some_and(|f| f.contender.is_some()) {
                    ctx.deployed_round(i, &p.manifest, &p.tunables, run)?;
                } else {
                    ctx.contender_round(i, &p.manifest, &p.tunables, java, run)?;
                }
            }
        }
        if interrupt::stopped() {
            break;
        }
        if after.after_round(&mut *ctx.res, dir, run) {
            break;
        }
        ctx.res.checkpoint(dir);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_runs_of_a_plan_in_one_second_get_two_directories() {
        let plan = crate::plan::PlanFile {
            name: Some("twice".into()),
            contenders: vec!["x".into()],
            scenarios: vec![crate::plan::ScenarioFile {
                name: "s".into(),
                path: Some("/".into()),
                load: crate::plan::LoadFile {
                    model: "closed".into(),
                    users: Some(1),
                    duration: Some("1s".into()),
                    ..Default::default()
                },
                ..Default::default()
            }],
            ..Default::default()
        }
        .validate()
        .unwrap();
        let base = tempfile::tempdir().unwrap();
        let dirs: Vec<PathBuf> = (0..3)
            .map(|_| results_dir(base.path(), &plan).unwrap())
            .collect();
        assert_ne!(dirs[0], dirs[1]);
        assert_ne!(dirs[1], dirs[2]);
        assert!(dirs.iter().all(|d| d.starts_with(base.path())));
    }

    #[test]
    fn unwritable_results_directory_is_named_with_the_fix() {
        let plan = crate::plan::PlanFile {
            contenders: vec!["x".into()],
            scenarios: vec![crate::plan::ScenarioFile {
                name: "s".into(),
                path: Some("/".into()),
                mix: None,
                warmup: None,
                load: crate::plan::LoadFile {
                    model: "closed".into(),
                    users: Some(1),
                    duration: Some("1s".into()),
                    ..Default::default()
                },
                downstream: None,
                ..Default::default()
            }],
            ..Default::default()
        }
        .validate()
        .unwrap();
        // /proc refuses new directories even to root.
        let e = format!(
            "{:#}",
            results_dir(Path::new("/proc/iobound-results"), &plan).unwrap_err()
        );
        assert!(
            e.contains("/proc/iobound-results/")
                && e.contains("is not writable; choose another with --out DIR"),
            "{e}"
        );
    }
}
