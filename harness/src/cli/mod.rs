//! The command line: arguments -> plan -> run -> report. The entry of the program; the one
//! folder that may use every stage.
//! Uses: util, plan, driver, services, sampler, conformance, remote, results, observe, run,
//! stats, report, pages.
//!
//! Holds: `args` (subcommands and flags; a load's own in `load_args`), `help` (the longer
//! help texts), `flags` (flags -> plan), `own_server` (--url, --cmd, --pid and --arm: a server
//! of the user's own as the contender), `commands` (the command bodies), `verify` (the contract
//! against every contender), `bench` (the driver benchmark against wrk), `service_args` (the
//! flags of `downstream` and `serve`).

mod agent;
mod args;
mod bench;
mod capacity_plan;
mod commands;
mod flags;
#[cfg(test)]
mod generated_inputs;
mod help;
mod load_args;
mod own_server;
mod remote_args;
mod service_args;
mod verify;

use crate::plan::PlanFile;
use crate::services::ServiceChoice;
use anyhow::Result;
use args::{BenchCmd, Cli, Cmd, HostsCmd};
use clap::Parser;
use std::path::{Path, PathBuf};

/// The repository root: $IOBOUND_HOME, else the ancestor of the binary holding contenders/.
fn root() -> PathBuf {
    if let Ok(h) = std::env::var("IOBOUND_HOME") {
        return PathBuf::from(h);
    }
    let exe = std::env::current_exe().ok();
    let found = exe.as_deref().and_then(|e| {
        e.ancestors()
            .find(|a| a.join("contenders").is_dir() && a.join("contract").is_dir())
    });
    found
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// `iobound run`: the plan from its flags, its gates checked, then run (or described, with
/// --dry-run).
fn run_cmd(a: &args::RunArgs, root: &Path) -> Result<i32> {
    let (plan, external) = flags::build_plan(a, root)?;
    let fail_if = flags::arm_gate_rules(a, &plan, external.as_ref())?;
    if a.dry_run {
        return dry_run(&plan, root, external.as_ref());
    }
    run_with(&plan, root, a, external, &fail_if)
}

/// `iobound capacity`: the search's plan, then run (or described, with --dry-run).
fn capacity_cmd(c: &args::CapacityArgs, root: &Path) -> Result<i32> {
    if !c.run.fail_if.is_empty() {
        anyhow::bail!("--fail-if gates the arms of a run (`iobound run`); a capacity search has its own question: give --slo");
    }
    let (plan, external) = capacity_plan::build_capacity_plan(c, root)?;
    if c.run.dry_run {
        return dry_run(&plan, root, external.as_ref());
    }
    run_with(&plan, root, &c.run, external, &[])
}

/// `run` and `capacity`: the plan they built, run with the services, hosts and JUnit file
/// their shared flags name.
fn run_with(
    plan: &crate::plan::Plan,
    root: &Path,
    a: &args::RunArgs,
    external: Option<crate::run::External>,
    fail_if: &[crate::stats::gates::FailIf],
) -> Result<i32> {
    let adopted = external
        .as_ref()
        .is_some_and(|e| matches!(e.process, crate::run::ExternalProcess::Pid(_)));
    if adopted && plan.limits.any() {
        anyhow::bail!(
            "--cpus, --memory and [limits] hold a server iobound starts, and --pid names one already running; give --cmd to have iobound start it under them, or run without them"
        );
    }
    let hosts = flags::hosts_for_run(a, external.as_ref())?;
    if hosts.is_some() {
        flags::refuse_trained_starts_across_hosts(&plan.tunables)?;
    }
    let services = ServiceChoice {
        url: a.db_url.clone(),
        allow_remote: a.load.allow_remote,
        kafka_bootstrap: a.kafka_bootstrap.clone(),
    };
    let out = match &a.resume {
        Some(dir) => crate::run::Destination::Resume(dir.clone()),
        None => crate::run::Destination::Under(a.out.clone()),
    };
    commands::run(
        plan,
        root,
        out,
        external,
        services,
        commands::Checks {
            junit: a.junit.as_deref(),
            fail_if,
        },
        hosts,
    )
}

/// Where `cmd` only reads and prints (nothing it starts, a contender, a service, an ssh
/// connection, or half-writes, a report's files, outlives it if a closed pipe ends it), a
/// closed pipe ends it quietly.
fn end_quietly_if_it_only_prints(cmd: &Cmd) {
    let prints_only = match cmd {
        Cmd::Run(a) => a.dry_run,
        Cmd::Capacity(c) => c.run.dry_run,
        Cmd::Compare { junit, .. } => junit.is_none(),
        Cmd::List { .. } | Cmd::Plans { .. } | Cmd::Table { .. } => true,
        Cmd::Render { check, .. } => *check,
        _ => false,
    };
    if prints_only {
        crate::util::end_quietly_on_a_closed_pipe();
    }
}

/// `--dry-run`: the plan as it would run, checked as the run checks it before it starts
/// anything (its contenders' manifests too, unless the server is one of the user's), and
/// nothing started.
fn dry_run(
    plan: &crate::plan::Plan,
    root: &Path,
    external: Option<&crate::run::External>,
) -> Result<i32> {
    if external.is_none() {
        crate::run::check_contenders(plan, root)?;
    }
    print!("{}", crate::plan::describe::dry_run(plan));
    Ok(0)
}

pub fn main() -> Result<i32> {
    let cli = Cli::parse();
    crate::util::set_verbose(cli.verbose);
    let root = root();
    end_quietly_if_it_only_prints(&cli.cmd);
    match cli.cmd {
        Cmd::Run(a) => run_cmd(&a, &root),
        Cmd::Capacity(c) => capacity_cmd(&c, &root),
        Cmd::Demo { out } => {
            let plan = PlanFile::load(&root.join("plans/demo.toml"))?.validate()?;
            let out = crate::run::Destination::Under(out);
            let checks = commands::Checks::default();
            commands::run(&plan, &root, out, None, Default::default(), checks, None)
        }
        Cmd::Verify {
            contenders,
            fuzz,
            seed,
            db_url,
            allow_remote,
            kafka_bootstrap,
            address,
            downstream_timeout,
        } => verify::verify_cmd(
            &root,
            contenders,
            (fuzz, seed),
            (address, downstream_timeout),
            &ServiceChoice {
                url: db_url,
                allow_remote,
                kafka_bootstrap,
            },
        ),
        Cmd::List { builds: false, .. } => commands::list(&root),
        Cmd::List { builds: true, plan } => commands::list_builds(&root, plan.as_deref()),
        Cmd::Plans { rounds } => crate::pages::plan_times::print(&root, rounds),
        Cmd::Table {
            path,
            markdown,
            export,
        } => commands::table_cmd(&path, markdown, export),
        Cmd::Report { path, rejudge } => commands::report_cmd(&path, rejudge),
        Cmd::Render { pages, check } => commands::render_pages(&root, &pages, check),
        Cmd::Compare {
            a,
            b,
            fail_if,
            junit,
        } => commands::compare_cmd(&a, &b, &fail_if, junit.as_deref()),
        Cmd::Bench {
            what:
                BenchCmd::Driver {
                    connections,
                    duration,
                    repeats,
                    path,
                    json,
                },
        } => commands::bench_driver(connections, &duration, repeats, &path, json),
        Cmd::Serve(a) => commands::serve_cmd(&a),
        Cmd::Load { load, driver_cpus } => commands::load_cmd(&load, driver_cpus.as_deref()),
        Cmd::Hosts {
            what: HostsCmd::Check { file },
        } => commands::hosts_check(&file, &root),
        Cmd::Agent { what } => agent::run(what),
        Cmd::Downstream(a) => commands::downstream_cmd(&a),
    }
}
