//! Starting a contender and checking it, the path a plan's round and `iobound verify` share:
//! launch on a free port (of loopback, or the address given), pinned, with the plan's JVM flags -> ready -> the contract
//! (HTTP cases and optional fuzzing, or the pipeline's delivery check).

use crate::conformance::{self, CaseResult, Verification};
use crate::plan::Plan;
use crate::services::contender::{self, Running};
use crate::services::detected::{self, Detected};
use crate::services::jvm_start::{self, JvmStart};
use crate::services::manifest::{Manifest, StartVars};
use crate::services::ports;
use crate::services::Services;
use crate::util::cgroup;
use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::Duration;

/// How long a contender gets to stop after SIGTERM.
pub const STOP_GRACE: Duration = Duration::from_secs(4);

/// A contender process just started, with the argv that started it.
pub struct Launched {
    pub proc: Running,
    pub argv: Vec<String>,
    pub startup_timeout: Duration,
}

/// Starts `m` on a free port of `address` (its `{address}`: loopback for a plan's rounds),
/// pinned to the plan's contender CPUs, with the plan's JVM flags; readiness is the caller's
/// next step.
pub fn launch(
    m: &Manifest,
    tunables: &BTreeMap<String, String>,
    plan: &Plan,
    java: Option<&Path>,
    address: IpAddr,
    log: &Path,
    env: &[(String, String)],
) -> Result<Launched> {
    let port = ports::free_port_on(address)?;
    let mut flags = plan.jvm_flags();
    let start = if m.is_jvm() {
        JvmStart::of(&m.name, tunables)?
    } else {
        JvmStart::Default
    };
    flags.extend(start.flags(&m.dir, &m.name));
    let mut argv = m.command(
        &StartVars {
            java,
            jvm_flags: &flags,
            address,
            port,
        },
        tunables,
    )?;
    if m.boot_jar && start != JvmStart::Default {
        jvm_start::start_extracted(&mut argv, &jvm_start::extracted_dir(&m.dir, &m.name))?;
    }
    let mut env = env.to_vec();
    env.push((
        crate::observe::gc::GO_GC_TRACE.0.to_string(),
        crate::observe::gc::GO_GC_TRACE.1.to_string(),
    ));
    let env = &env[..];
    let limits = plan.limits.of(&m.name);
    let cgroup = cgroup::own(&m.name, limits)?;
    eprintln!(
        "[{}] starting on {address}:{port}, CPU {}{}",
        m.name,
        crate::util::cpus::format_cpus(&plan.contender_cpus),
        limits.start_line_suffix()
    );
    let addr = SocketAddr::new(address, port);
    let proc = contender::start_in(&argv, &m.dir, &plan.contender_cpus, addr, log, env, cgroup)?;
    let startup_timeout =
        crate::util::units::parse_duration(m.startup_timeout.as_deref().unwrap_or("120s"))?;
    Ok(Launched {
        proc,
        argv,
        startup_timeout,
    })
}

/// Checks a ready contender against the contract: the HTTP cases (plus `fuzz` = (count, seed)
/// generated hostile inputs), or for a pipeline the delivery check through Kafka, and, when its
/// `log` is on this machine, its start-up line (what its runtime detected, returned beside the
/// verification when the line holds). A check that fails is a Verification that did not pass;
/// an error means the check itself could not run.
#[allow(clippy::too_many_arguments)]
pub fn verify_contender(
    rt: &tokio::runtime::Runtime,
    addr: SocketAddr,
    m: &Manifest,
    services: &Services,
    cpus: &[usize],
    logs: &Path,
    log: Option<&Path>,
    fuzz: Option<(usize, u64)>,
) -> Result<(Verification, Option<Detected>)> {
    let mut v = contract_cases(rt, addr, m, services, cpus, logs, fuzz)?;
    let mut seen = None;
    match log {
        Some(log) => {
            let (case, d) = detected_case(log);
            v.passed &= case.passed;
            v.cases.push(case);
            seen = d;
        }
        None => v.not_checked.push(format!(
            "the `{}{{json}}` start-up line (the contender's log is on its host)",
            detected::PREFIX
        )),
    }
    Ok((v, seen))
}

/// The contract's start-up line as a case: passed with what the runtime detected, or failed
/// with what is missing; and the line itself when it holds.
fn detected_case(log: &Path) -> (CaseResult, Option<Detected>) {
    let (passed, detail, seen) = match detected::read(log) {
        Ok(d) => (true, d.describe(), Some(d)),
        Err(why) => (false, why, None),
    };
    let case = CaseResult {
        name: "start-up line: what the runtime detected".into(),
        passed,
        detail,
    };
    (case, seen)
}

fn contract_cases(
    rt: &tokio::runtime::Runtime,
    addr: SocketAddr,
    m: &Manifest,
    services: &Services,
    cpus: &[usize],
    logs: &Path,
    fuzz: Option<(usize, u64)>,
) -> Result<Verification> {
    if m.is_pipeline() {
        let Some(k) = &services.kafka else {
            bail!("pipeline contenders need Kafka")
        };
        return Ok(conformance::pipeline::verify(k, cpus, logs, &m.name));
    }
    let control = services.downstream.control();
    let ctx = conformance::Context {
        corpus: &services.corpus,
        downstream_timeout: services.downstream_timeout,
        database: services.database.as_ref(),
        fanout: m.fanout.is_some().then(|| conformance::Fanout {
            downstream: &control,
            expect_cancel: m.fanout_cancels.unwrap_or(true),
        }),
    };
    let mut v = conformance::verify(rt, addr, &ctx)?;
    if m.fanout.is_none() {
        v.not_checked
            .push("/aggregate (this contender does not serve the fan-out yet)".into());
    }
    if let Some((count, seed)) = fuzz.filter(|(n, _)| *n > 0) {
        let f = rt.block_on(conformance::fuzz::run(
            addr,
            count,
            seed,
            &services.corpus.vectors()?,
            m.fanout.is_some(),
        ));
        v.passed &= f.passed;
        v.cases.push(f);
    }
    Ok(v)
}
