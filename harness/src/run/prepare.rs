//! Everything a plan asks that can be checked before a process starts: its contenders exist
//! and serve its scenarios with settings of their own (what `--dry-run` checks too), their
//! artifacts are built, a JDK is there, the profilers' tools are.

use super::Options;
use crate::observe;
use crate::plan::Plan;
use crate::services::manifest::{self, Manifest};
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A contender of the plan, checked: its manifest and its settings' values. An arm's manifest
/// is its contender's under the arm's name.
pub(super) struct Prepared {
    pub(super) manifest: Manifest,
    pub(super) tunables: BTreeMap<String, String>,
    /// The contender an arm starts.
    pub(super) arm_of: Option<String>,
}

/// Everything that can be checked before a process starts: contenders exist, tunables are
/// known, artifacts are built, a JDK is there, the results directory is writable.
pub(super) fn prepare(plan: &Plan, opts: &Options) -> Result<(Vec<Prepared>, Option<PathBuf>)> {
    if let Some(ext) = &opts.external {
        ext.check(opts.hosts.is_some())?;
        return Ok((Vec::new(), None));
    }
    let out = contenders_checked(plan, &opts.root)?;
    for p in &out {
        crate::services::folder_builds::ensure_built(&p.manifest)?;
    }
    let java = if out.iter().any(|p| p.manifest.is_jvm()) {
        Some(crate::services::jdk::find_java().context(
            "no JDK >= 21 found (looked at $JAVA_HOME and /usr/lib/jvm/*); install one, e.g. `apt-get install temurin-25-jdk` or `openjdk-21-jdk`, or set JAVA_HOME",
        )?)
    } else {
        None
    };
    if plan.profile {
        check_profilers(&out, java.as_deref(), opts.hosts.is_some())?;
    }
    Ok((out, java))
}

/// What `plan` asks of its contenders, checked from their manifests alone (nothing built,
/// found or started): each exists, its settings are ones it has, with values it takes, and
/// it serves every scenario (kind, fan-out, profiler). `run --dry-run` checks the same, so
/// a plan it passes is not refused by these at the run's start.
pub fn check_contenders(plan: &Plan, root: &Path) -> Result<()> {
    contenders_checked(plan, root).map(|_| ())
}

fn contenders_checked(plan: &Plan, root: &Path) -> Result<Vec<Prepared>> {
    let all = manifest::discover(root)?;
    let mut out = Vec::new();
    for name in &plan.contenders {
        let (m, arm_of) = manifest_of(&all, plan, name)?;
        let tunables = m.resolve_tunables(plan.tunables.get(name))?;
        for s in &plan.scenarios {
            if s.pipeline != m.is_pipeline() {
                let (what, fits) = if m.is_pipeline() {
                    ("a Kafka pipeline", "pipeline = true scenarios")
                } else {
                    ("an HTTP server", "HTTP scenarios (path or mix)")
                };
                bail!("scenario {:?} cannot run on {name}: it is {what} and runs only {fits}; split the plan or pick other contenders (`iobound list`)", s.name);
            }
        }
        let fans_out = |p: &str| p == "/aggregate" || p.starts_with("/aggregate?");
        for s in plan.scenarios.iter().filter(|s| fans_out(&s.path)) {
            if m.fanout.is_none() {
                bail!("scenario {:?} calls /aggregate, which {name} does not serve yet (its manifest names no `fanout`); leave {name} out with -c, or the scenario out of the plan", s.name);
            }
        }
        if plan.profile && m.profiler_kind().is_none() {
            bail!("--profile: {name} has no profiler (its manifest sets no `profiler`); leave it out with -c, or run without --profile");
        }
        out.push(Prepared {
            manifest: m,
            tunables,
            arm_of,
        });
    }
    for key in plan.tunables.keys() {
        if !plan.contenders.contains(key) {
            bail!(
                "tunables.{key}: {key} is not among the plan's contenders ({})",
                plan.contenders.join(", ")
            );
        }
    }
    Ok(out)
}

/// The manifest plan contender `name` starts, and the contender's name when `name` is an arm:
/// its contender's manifest under the arm's name, which no contender may have already (the
/// arm's runs would be told from that contender's by nothing).
fn manifest_of(all: &[Manifest], plan: &Plan, name: &str) -> Result<(Manifest, Option<String>)> {
    let Some(of) = plan.arms.get(name) else {
        return Ok((manifest::find(all, name)?, None));
    };
    if all.iter().any(|m| m.name == name) {
        bail!("arms.{name}: {name:?} is a contender's own name; give the arm another, e.g. \"{name}-arm\"");
    }
    let mut m = manifest::find(all, of).with_context(|| format!("arms.{name}"))?;
    m.name = name.to_string();
    Ok((m, Some(of.clone())))
}

/// The profilers' own tools, checked before anything starts: the JDK's jcmd and jfr here
/// (with --hosts the JDK is the contender host's, checked there at its start), and `go` here
/// for reading pprof profiles.
fn check_profilers(prepared: &[Prepared], java: Option<&Path>, on_hosts: bool) -> Result<()> {
    for p in prepared {
        let kind = p.manifest.profiler_kind().unwrap_or_default();
        if !on_hosts {
            let work = crate::util::files::private_temp_dir("iobound-profile-")?;
            let checked = observe::profile::Profiler::new(
                kind,
                java,
                work.path(),
                observe::profile::Place::Here,
                0,
            );
            checked.with_context(|| format!("--profile for {}", p.manifest.name))?;
        }
        if kind == "pprof"
            && std::process::Command::new("go")
                .arg("version")
                .output()
                .map(|o| !o.status.success())
                .unwrap_or(true)
        {
            bail!("--profile for {}: reading a pprof profile needs Go's `go tool pprof`, and `go` is not on PATH; install Go or leave {} out with -c", p.manifest.name, p.manifest.name);
        }
    }
    Ok(())
}
