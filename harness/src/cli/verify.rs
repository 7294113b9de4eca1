//! `iobound verify`: every contender started and checked against the contract (the same
//! launch and checks as a plan's round), nothing measured.

use crate::conformance;
use crate::plan::{LoadFile, Plan, PlanFile, ScenarioFile};
use crate::run;
use crate::services::{manifest, ServiceChoice, Services};
use crate::util::interrupt;
use anyhow::Result;
use std::path::Path;

/// `iobound verify`: starts each contender in turn and checks it against the contract (the
/// same launch and checks as a plan's round), nothing measured.
pub fn verify_cmd(
    root: &Path,
    names: Vec<String>,
    fuzz: (usize, u64),
    (address, downstream_timeout): (std::net::IpAddr, std::time::Duration),
    choice: &ServiceChoice,
) -> Result<i32> {
    let all = manifest::discover(root)?;
    let names = if names.is_empty() {
        all.iter().map(|m| m.name.clone()).collect()
    } else {
        names
    };
    let plan = verify_plan(&names, downstream_timeout)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    interrupt::install();
    // A private directory of a name no one can guess (made 0700, exclusively): a fixed path
    // under /tmp could be a link another user put there for root to write through.
    let log_dir = crate::util::files::private_temp_dir("iobound-verify-")?;
    let logs = log_dir.path().to_path_buf();
    let wanted = names
        .iter()
        .map(|name| manifest::find(&all, name))
        .collect::<Result<Vec<_>>>()?;
    // A contender not built is named before anything starts.
    for m in &wanted {
        crate::services::folder_builds::ensure_built(m)?;
    }
    let need_kafka = wanted.iter().any(|m| m.is_pipeline());
    let settings = crate::services::Settings::of(&plan);
    let mut services = Services::start(root, &settings, &rt, &logs, choice, true, need_kafka)?;
    let verifier = Verifier {
        rt: &rt,
        services: &services,
        logs: &logs,
        java: crate::services::jdk::find_java(),
        address,
    };
    let failed = check_all(&verifier, &wanted, &plan, fuzz)?;
    services.stop();
    if !failed.is_empty() {
        // The logs of what failed are kept for the reader.
        eprintln!("verify: logs in {}", log_dir.keep().display());
    }
    if failed.is_empty() {
        eprintln!(
            "verify: {} contender(s) conform to the contract",
            names.len()
        );
        Ok(0)
    } else {
        eprintln!("verify: FAILED: {}", failed.join(", "));
        Ok(1)
    }
}

/// The plan `verify` starts contenders with: theirs, the downstream timeout asked for, and one
/// scenario that is never run.
fn verify_plan(names: &[String], downstream_timeout: std::time::Duration) -> Result<Plan> {
    PlanFile {
        name: Some("verify".into()),
        contenders: names.to_vec(),
        downstream: crate::plan::DownstreamFile {
            timeout: Some(format!("{}ms", downstream_timeout.as_secs_f64() * 1000.0)),
            ..Default::default()
        },
        scenarios: vec![ScenarioFile {
            name: "none".into(),
            path: Some("/".into()),
            load: LoadFile {
                model: "closed".into(),
                users: Some(1),
                duration: Some("1s".into()),
                ..LoadFile::default()
            },
            ..ScenarioFile::default()
        }],
        ..PlanFile::default()
    }
    .validate()
}

/// Checks every contender of `wanted` against the contract, in turn: the names of those that
/// failed.
fn check_all(
    verifier: &Verifier,
    wanted: &[manifest::Manifest],
    plan: &Plan,
    fuzz: (usize, u64),
) -> Result<Vec<String>> {
    let mut failed = Vec::new();
    // Each contender starts while the one before it is checked: a start keeps one CPU busy (a
    // JVM loading classes and compiling), a check mostly waits (its stall cases wait out the
    // downstream timeout). So every other contender runs on the CPUs the plan gives the driver,
    // and the checks of it on the contender's: the one starting never shares the CPU of the one
    // checked. Two pipelines never run at once (they read the same topic).
    let plans = [plan.clone(), swapped_cpus(plan)];
    let mut started: Option<Starting> = None;
    // Contenders of one build (one application in several models) share its parsing code:
    // the hostile inputs go to the first of them; each still answers every contract case.
    let mut fuzzed: Vec<(std::path::PathBuf, &str)> = Vec::new();
    for (i, m) in wanted.iter().enumerate() {
        let plan = &plans[i % 2];
        let current = match started.take() {
            Some(s) => s,
            None => verifier.start(m, plan)?,
        };
        if let Some(next) = wanted.get(i + 1) {
            if !(m.is_pipeline() && next.is_pipeline()) {
                started = Some(verifier.start(next, &plans[(i + 1) % 2])?);
            }
        }
        let artifact = crate::util::files::lexical(&m.artifact_path());
        let fuzz = match fuzzed.iter().find(|(a, _)| *a == artifact) {
            Some((_, first)) => {
                eprintln!(
                    "[{}] hostile inputs: sent to {first}, which runs the same build",
                    m.name
                );
                None
            }
            None => {
                fuzzed.push((artifact, &m.name));
                Some(fuzz)
            }
        };
        if !verifier.check(m, current, plan, fuzz)? {
            failed.push(m.name.clone());
        }
    }
    Ok(failed)
}

/// The verify plan with its contender and driver CPUs swapped.
fn swapped_cpus(plan: &Plan) -> Plan {
    let mut swapped = plan.clone();
    std::mem::swap(&mut swapped.contender_cpus, &mut swapped.driver_cpus);
    swapped
}

/// What verifying a contender needs, the same for each.
struct Verifier<'a> {
    rt: &'a tokio::runtime::Runtime,
    services: &'a Services,
    logs: &'a Path,
    java: Option<std::path::PathBuf>,
    /// Where each contender listens (`verify --address`).
    address: std::net::IpAddr,
}

/// A contender started, its readiness not yet awaited.
struct Starting {
    launched: run::Launched,
    log: std::path::PathBuf,
}

impl Verifier<'_> {
    /// Starts `m` on `plan`'s contender CPUs; the check waits for it to be ready.
    fn start(&self, m: &manifest::Manifest, plan: &Plan) -> Result<Starting> {
        let log = self.logs.join(format!("{}.log", m.name));
        let launched = run::launch(
            m,
            &m.resolve_tunables(None)?,
            plan,
            self.java.as_deref(),
            self.address,
            &log,
            &self.services.env(),
        )?;
        Ok(Starting { launched, log })
    }

    /// Waits for the started `m` to be ready, runs the contract and the generated hostile
    /// inputs (`fuzz`: count and seed) against it (a pipeline's load on `plan`'s driver CPUs),
    /// stops it: true if it passed.
    fn check(
        &self,
        m: &manifest::Manifest,
        started: Starting,
        plan: &Plan,
        fuzz: Option<(usize, u64)>,
    ) -> Result<bool> {
        let name = &m.name;
        let run::Launched {
            mut proc,
            startup_timeout,
            ..
        } = started.launched;
        let passed = match proc.wait_ready(self.rt, &m.ready, startup_timeout) {
            Ok(_) => run::launch::verify_contender(
                self.rt,
                proc.addr,
                m,
                self.services,
                &plan.driver_cpus,
                self.logs,
                Some(started.log.as_path()),
                fuzz,
            )
            .map(|(v, _)| {
                conformance::print(name, &v);
                v.passed
            })?,
            Err(e) => {
                eprintln!("[{name}] FAIL: {e:#}");
                false
            }
        };
        proc.stop(run::STOP_GRACE);
        Ok(passed)
    }
}
