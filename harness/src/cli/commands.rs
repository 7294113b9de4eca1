//! The command bodies: run (and demo), verify, list, table, report, compare, load, bench.

use super::args::{dur, DownstreamArgs, LoadArgs, ServeArgs};
use super::bench;
use super::flags::load_file;
use super::own_server::parse_url;
use crate::driver;
use crate::plan::Plan;
use crate::results::dir::ResultsDir;
use crate::results::record::{Results, RunStatus};
use crate::run;
use crate::services::{manifest, ServiceChoice};
use crate::stats::gates::{FailIf, Outcome};
use crate::util::{interrupt, numbers::median};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A results directory and its results.json, from either path.
pub fn results_at(path: &Path) -> Result<(PathBuf, Results)> {
    let (dir, file) = if path.is_dir() {
        (path.to_path_buf(), path.join("results.json"))
    } else {
        (
            path.parent().unwrap_or(Path::new(".")).to_path_buf(),
            path.to_path_buf(),
        )
    };
    Ok((dir, Results::load(&file)?))
}

/// Exit status of a run whose measurements were complete, no contender failed, and a
/// threshold broke.
pub const THRESHOLD_BROKEN: i32 = 4;

/// What a run checks once measured, beside its plan's thresholds, and where it reports them.
#[derive(Default)]
pub struct Checks<'a> {
    /// Also write the thresholds and gates as JUnit XML here (`--junit`).
    pub junit: Option<&'a Path>,
    /// `--fail-if`: each arm against the contender it is an arm of.
    pub fail_if: &'a [FailIf],
}

pub fn run(
    plan: &Plan,
    root: &Path,
    out: run::Destination,
    external: Option<run::External>,
    choice: ServiceChoice,
    checks: Checks<'_>,
    hosts: Option<crate::plan::hosts::Inventory>,
) -> Result<i32> {
    let opts = run::Options {
        root: root.to_path_buf(),
        out,
        external,
        services: choice,
        hosts,
    };
    let (dir, mut res) = run::run_plan(plan, &opts)?;
    if plan.has_thresholds() {
        res.thresholds =
            crate::stats::gates::check_thresholds(&plan.scenarios, ResultsDir::new(&res, &dir));
    }
    res.save_last(&dir)?;
    let text = crate::report::write_outputs(ResultsDir::new(&res, &dir))?;
    crate::util::emit(&text)?;
    let gates = crate::report::compare::arm_gates(ResultsDir::new(&res, &dir), checks.fail_if);
    if !checks.fail_if.is_empty() {
        print!("{}", crate::report::compare::describe_gates(&gates));
    }
    if let Some(path) = checks.junit {
        let suite = format!(
            "iobound run {}",
            res.plan
                .get("name")
                .and_then(|v| v.as_str())
                .unwrap_or("plan")
        );
        let mut cases = crate::report::gates::threshold_cases(&res);
        cases.extend(crate::report::gates::gate_cases(&gates));
        crate::util::files::write_atomic(
            path,
            crate::report::gates::junit(&suite, &cases).as_bytes(),
        )?;
        eprintln!("junit:   {}", path.display());
    }
    eprintln!("results: {}", dir.join("results.json").display());
    if dir.join("report.html").exists() {
        eprintln!(
            "report:  {} (open it in a browser)",
            dir.join("report.html").display()
        );
    }
    Ok(if !res.complete {
        130
    } else if res.runs.iter().any(|r| r.status == RunStatus::Failed) {
        3
    } else if res.thresholds.iter().any(|t| !t.passed)
        || gates.iter().any(|g| g.outcome == Outcome::Fail)
    {
        THRESHOLD_BROKEN
    } else {
        0
    })
}

pub fn list(root: &Path) -> Result<i32> {
    use std::fmt::Write;
    let java = crate::services::jdk::find_java();
    let mut out = String::new();
    for m in manifest::discover(root)? {
        let runtime = m.runtime_version(java.as_deref());
        let built = if m.artifact_path().exists() {
            "built"
        } else {
            "not built: run ./iobound build"
        };
        let _ = writeln!(out, "{}  [{}]  {}", m.name, m.model, m.language);
        let _ = writeln!(out, "    {}", m.framework);
        let _ = writeln!(
            out,
            "    runtime: {}",
            runtime
                .as_deref()
                .unwrap_or("unknown (not installed or not built)")
        );
        let _ = writeln!(out, "    {}", m.config);
        for (k, t) in &m.tunables {
            let _ = writeln!(out, "    tunable {k} = {} ({})", t.default, t.help);
        }
        let _ = writeln!(out, "    artifact {} ({built})", m.artifact);
    }
    crate::util::emit(out.trim_end())?;
    Ok(0)
}

/// `iobound list --builds`: what the launcher builds, tests, checks and formats, from the
/// manifests' `[build]` tables (services/folder_builds.rs).
pub fn list_builds(root: &Path, plan: Option<&Path>) -> Result<i32> {
    use crate::services::folder_builds::{builds_listing, folder_builds, plan_listing};
    let manifests = manifest::discover(root)?;
    let builds = folder_builds(root, &manifests)?;
    let Some(plan) = plan else {
        println!("{}", builds_listing(&builds));
        return Ok(0);
    };
    let plan = crate::plan::PlanFile::load(plan)?.validate()?;
    let mut runs = Vec::new();
    for name in &plan.contenders {
        let name = plan.contender_of(name);
        let m = manifests.iter().find(|m| m.name == name).with_context(|| {
            format!("the plan names contender {name:?}, which no contenders/*/contender.toml is")
        })?;
        runs.push(m);
    }
    let services = (plan.uses_database(), plan.has_pipeline());
    println!("{}", plan_listing(root, &builds, &runs, services)?);
    Ok(0)
}

/// `iobound load`: drive one URL, print a JSON summary on stdout.
pub fn load_cmd(a: &LoadArgs, driver_cpus: Option<&str>) -> Result<i32> {
    let cpus = driver_cpus
        .map(crate::util::cpus::parse_cpu_list)
        .transpose()
        .context("--driver-cpus")?
        .unwrap_or_default();
    let url = a.url.as_deref().context("--url is required")?;
    let (addr, path) = parse_url(url, a.allow_remote)?;
    let lf = load_file(a);
    let load = lf.validate("load")?;
    crate::services::contender::raise_nofile();
    let target = driver::Target::new(addr, &path, load.connection_close);
    let cfg = driver::DriverConfig {
        threads: 1,
        cpus: cpus.clone(),
        start: None,
    };
    let live = Arc::new(driver::record::Live::default());
    interrupt::install();
    let o = driver::run(&target, &load, &cfg, live, interrupt::stop_flag())?;
    let (s, _) = crate::driver::summary::summarize(&o.recorder, o.duration, &load.profile);
    let report = crate::driver::assess::driver_report(&o, &cpus, s.ok + s.drained);
    let v = serde_json::json!({
        "ok": s.ok, "errors": s.errors.total(), "error_kinds": s.errors, "drained": s.drained,
        "due": o.due, "cut": s.errors.cut, "stopped": o.cancelled,
        "accounted": s.ok + s.drained + s.errors.total() + s.errors.cut, "latency_all_ms": s.latency_all, "rps": s.rps, "duration_s": s.duration_s, "latency_ms": s.latency,
        "driver_cpu_s": o.cpu.as_secs_f64(), "schedule_lag_ms": report.schedule_lag, "connection_wait_ms": report.connection_wait, "cpu_busy_pct": report.cpu_busy_pct,
        "saturated": report.saturated, "warnings": report.warnings,
    });
    crate::util::emit(&serde_json::to_string_pretty(&v)?)?;
    Ok(0)
}

/// `iobound bench driver`: CPU per request of the iobound driver against wrk.
pub fn bench_driver(
    connections: u32,
    duration: &str,
    repeats: u32,
    path: &str,
    json: bool,
) -> Result<i32> {
    let exe = std::env::current_exe()?;
    let online = crate::util::cpus::online_cpus();
    let args = bench::BenchArgs {
        connections,
        duration: dur(duration),
        repeats,
        path: path.to_string(),
        server_cpus: vec![0],
        driver_cpus: vec![if online > 1 { 1 } else { 0 }],
    };
    eprintln!("bench driver: built-in server on CPU 0; wrk -t1 and iobound (1 thread) on CPU {}; {connections} connections, {duration} each, GET {path}", args.driver_cpus[0]);
    let pairs = bench::driver(&exe, &args)?;
    let ratio = median(
        pairs
            .iter()
            .map(|(w, i)| i.cpu_s_per_100k / w.cpu_s_per_100k)
            .collect(),
    );
    let wrk = median(pairs.iter().map(|(w, _)| w.cpu_s_per_100k).collect());
    let ours = median(pairs.iter().map(|(_, i)| i.cpu_s_per_100k).collect());
    println!("driver CPU per 100k requests (median of {repeats}): wrk {wrk:.3} s, iobound {ours:.3} s, ratio iobound/wrk {ratio:.2}");
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"path": path, "connections": connections, "runs": pairs, "median_ratio": ratio})
            )?
        );
    }
    Ok(0)
}

/// `iobound hosts check FILE`: exit 0 when every host is reachable and ready, 1 otherwise.
/// `root` is the repository, whose built Python environment names the interpreter the
/// contender hosts need.
pub fn hosts_check(file: &Path, root: &Path) -> Result<i32> {
    let inv = crate::plan::hosts::Inventory::load(file)?;
    let control = crate::remote::ssh::tempfile_dir::Dir::new("iobound-ssh")?;
    eprintln!(
        "iobound: checking {} host(s) of {} over ssh (nothing is changed on them)",
        inv.hosts.len(),
        file.display()
    );
    let venv = crate::remote::check::VenvPython::read(&root.join(".cache/python"));
    let reports = crate::remote::check::check(&inv, control.path(), venv.as_ref());
    print!("{}", crate::remote::check::render(&reports));
    Ok(if reports.iter().all(|r| r.problems().is_empty()) {
        0
    } else {
        1
    })
}

/// `iobound compare A B [--fail-if RULE]... [--junit FILE]`: the comparison, then the gates;
/// exits THRESHOLD_BROKEN when one fails.
pub fn compare_cmd(a: &Path, b: &Path, fail_if: &[String], junit: Option<&Path>) -> Result<i32> {
    use crate::report::{compare, gates};
    let rules = fail_if
        .iter()
        .map(|r| FailIf::parse(r))
        .collect::<Result<Vec<_>>>()?;
    let (da, ra) = results_at(a)?;
    let (db, rb) = results_at(b)?;
    let (set_a, set_b) = (ResultsDir::new(&ra, &da), ResultsDir::new(&rb, &db));
    crate::util::emit(&compare::render(set_a, set_b)?)?;
    if rules.is_empty() {
        return Ok(0);
    }
    let checked = compare::gates(set_a, set_b, &rules);
    print!("{}", compare::describe_gates(&checked));
    if let Some(path) = junit {
        let xml = gates::junit("iobound compare", &gates::gate_cases(&checked));
        crate::util::files::write_atomic(path, xml.as_bytes())?;
        eprintln!("junit: {}", path.display());
    }
    let failed = checked.iter().any(|g| g.outcome == Outcome::Fail);
    Ok(if failed { THRESHOLD_BROKEN } else { 0 })
}

/// `iobound serve`: the built-in test server, in the foreground.
pub fn serve_cmd(a: &ServeArgs) -> Result<i32> {
    let ip = a.address.unwrap_or(std::net::Ipv4Addr::LOCALHOST);
    crate::services::ports::ensure_port_free(ip.into(), a.port)?;
    crate::services::test_server::serve(crate::services::test_server::ServeConfig {
        port: a.port,
        address: a.address,
        stall_at: a.stall_at.as_deref().map(dur),
        stall_for: dur(&a.stall_for),
        workers: a.workers.map(|n| n as usize),
        jit_warmup: a.jit_warmup.as_deref().map(dur),
        jit_plateau: a.jit_plateau.as_deref().map(dur),
        leak_kb: a.leak_kb.map(|k| k as usize),
    })?;
    Ok(0)
}

/// `iobound downstream`: the downstream service of /enrich, in the foreground.
pub fn downstream_cmd(a: &DownstreamArgs) -> Result<i32> {
    crate::services::ports::ensure_port_free(a.address.into(), a.port)?;
    let b = crate::plan::downstream::Behaviour::new(
        &a.latency,
        &a.error_rate,
        &a.stall_prob,
        &a.stall_for,
    )?;
    crate::services::test_server::downstream(a.address, a.port, b, a.seed)?;
    Ok(0)
}

/// `iobound table`: the terminal table of a results directory, or its Markdown rows.
pub fn table_cmd(
    path: &Path,
    markdown: bool,
    export: Option<crate::report::export::Format>,
) -> Result<i32> {
    let (dir, res) = results_at(path)?;
    let set = ResultsDir::new(&res, &dir);
    if let Some(format) = export {
        crate::util::emit(&crate::report::export::export(set, format))?;
    } else if markdown {
        crate::util::emit(&crate::report::markdown_tables::render_markdown(set))?;
    } else {
        crate::util::emit(&crate::report::table::render(set))?;
    }
    Ok(0)
}

/// `iobound render`: every marked table and figure of the pages written from its results
/// (paths in markers are relative to the repository root); 1 when --check finds a difference.
pub fn render_pages(root: &Path, pages: &[PathBuf], check: bool) -> Result<i32> {
    let pages = if pages.is_empty() {
        crate::pages::render::reader_pages(root)?
    } else {
        pages.to_vec()
    };
    let mut differ = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page)
            .with_context(|| format!("cannot read {}", page.display()))?;
        let written = crate::pages::render::render(&text, root)
            .with_context(|| format!("{}", page.display()))?;
        if written == text {
            continue;
        }
        differ += 1;
        if check {
            println!("{}: differs from what its results print", page.display());
        } else {
            crate::util::files::write_atomic(page, written.as_bytes())?;
            println!("{}: rendered", page.display());
        }
    }
    Ok(i32::from(check && differ > 0))
}

/// `iobound report`: every output of a results directory, written again from results.json.
pub fn report_cmd(path: &Path, rejudge: bool) -> Result<i32> {
    let (dir, mut res) = results_at(path)?;
    if rejudge {
        crate::stats::verdict::rejudge(&mut res, &dir);
        res.save(&dir)?;
        eprintln!("iobound: verdicts judged again by today's rules and written to results.json");
    }
    crate::util::emit(&crate::report::write_outputs(ResultsDir::new(&res, &dir))?)?;
    Ok(0)
}
