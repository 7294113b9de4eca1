//! A built-in contender on the contender host (`run --hosts` without `--url`): its built files
//! are copied there once per run, it starts there under `iobound agent contender` (pinned to
//! the host's CPUs, listening on the host's address and a port free there, on the JDK found
//! there), is checked against the contract from this machine as locally, then measured and
//! sampled there like any server on that host, and stopped after the repeat.

use super::context::RunCtx;
use super::launch::STOP_GRACE;
use crate::observe::profile::{Place, Profiler};
use crate::remote::contender::{ContenderJob, RemoteContender};
use crate::remote::deploy::{Fleet, HostReady};
use crate::remote::ship::{self, Probe};
use crate::services::manifest::{Manifest, StartVars};
use crate::util::interrupt;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A contender started on its host.
struct Started {
    name: String,
    remote: Arc<RemoteContender>,
    addr: SocketAddr,
    argv: Vec<String>,
    startup_s: f64,
    /// Where its log is copied when it stops.
    log: PathBuf,
}

impl RunCtx<'_> {
    /// One contender, one repeat, on the contender host: start, verify, every scenario, stop.
    pub(super) fn deployed_round(
        &mut self,
        index: usize,
        m: &Manifest,
        tunables: &BTreeMap<String, String>,
        run: u32,
    ) -> Result<()> {
        let fleet = self.fleet.context("a deployed contender needs --hosts")?;
        let host = fleet
            .contender
            .as_ref()
            .context("the contender host is not connected")?;
        if self.round_scenarios(run).is_empty() {
            return Ok(()); // every scenario's questions closed: nothing to start it for
        }
        eprintln!(
            "\n[{}] run {run} of {} on contender host {}",
            m.name, self.plan.runs, host.ssh.host.name
        );
        self.profiler = self
            .plan
            .profile
            .then(|| profiler_there(host, m, run))
            .transpose()?;
        let started = match self.start_deployed(fleet, host, m, tunables, &format!("run{run}")) {
            Ok(s) => s,
            Err(_) if interrupt::stopped() => {
                // Cut short by the user, not a failure of the contender: nothing to record.
                eprintln!("[{}] interrupted during start-up", m.name);
                self.res.checkpoint(self.dir);
                return Ok(());
            }
            Err(e) => {
                let why = format!("start-up failed: {e:#}");
                eprintln!("[{}] {why}", m.name);
                self.res.contenders[index].failure = Some(why.clone());
                return self.fail_all(&m.name, run, &why);
            }
        };
        self.note_namespace(&started.remote.net_namespace);
        self.res.contenders[index].command = started.argv.clone();
        self.res.contenders[index].startup_s = Some(started.startup_s);
        let (remote, log) = (started.remote.clone(), started.log.clone());
        // Its log is on its host: what its runtime detected is not read from there yet.
        if !self.contract_gate(index, m, started.addr, None, run, || {
            remote.stop(STOP_GRACE, &log);
        })? {
            return Ok(());
        }
        let mut current = started;
        let scenarios = self.round_scenarios(run);
        for (si, &s) in scenarios.iter().enumerate() {
            if interrupt::stopped() {
                break;
            }
            let restart = (s.restart && si > 0).then_some((s.name.as_str(), run));
            if let Err(why) = self.ready_for(&mut current, (fleet, host), m, tunables, restart) {
                for rest in &scenarios[si..] {
                    self.res
                        .runs
                        .push(super::context::failed_run(&m.name, rest, run, &why));
                }
                break;
            }
            self.remote = Some(current.remote.clone());
            self.scenario(&m.name, None, current.addr, s, run);
            self.res.checkpoint(self.dir);
        }
        self.stop_deployed(&current, &host.ssh.host.name);
        self.res.checkpoint(self.dir);
        Ok(())
    }

    /// Whether the contender can take the next scenario: not if it has exited; restarted first
    /// when `restart` names the scenario (and the repeat). Err says why it is not run.
    fn ready_for(
        &mut self,
        current: &mut Started,
        (fleet, host): (&Fleet, &HostReady),
        m: &Manifest,
        tunables: &BTreeMap<String, String>,
        restart: Option<(&str, u32)>,
    ) -> std::result::Result<(), String> {
        if let Some(why) = current.remote.exited() {
            return Err(format!("not run: the contender had exited ({why})"));
        }
        if let Some((scenario, run)) = restart {
            current.remote.stop(STOP_GRACE, &current.log);
            eprintln!("[{}] stopped; restarting for {scenario}", m.name);
            let tag = format!("run{run}.{scenario}");
            *current = self
                .start_deployed(fleet, host, m, tunables, &tag)
                .map_err(|e| format!("not run: the restart before {scenario} failed: {e:#}"))?;
        }
        Ok(())
    }

    /// Stops the contender on its host (its log copied back) and removes its profiler's files.
    fn stop_deployed(&mut self, current: &Started, host: &str) {
        self.remote = None;
        current.remote.stop(STOP_GRACE, &current.log);
        eprintln!("[{}] stopped on host {host}", current.name);
        if let Some(p) = self.profiler.take() {
            p.clean_up();
        }
    }

    /// Copies what `m` needs (once per run), starts it on `host` and waits until it answers
    /// its ready path; `tag` names its log ("run1", "run1.SCENARIO").
    fn start_deployed(
        &self,
        fleet: &Fleet,
        host: &HostReady,
        m: &Manifest,
        tunables: &BTreeMap<String, String>,
        tag: &str,
    ) -> Result<Started> {
        let root = ship::repo_root(m)?;
        let remote_root = format!("{}/repo", host.dir);
        copy_files(fleet, host, m, &root, &remote_root)?;
        let address = fleet.contender_address;
        let probe = Probe::of(host, address, 1)?;
        let argv = self.command_there(host, m, tunables, &probe, address)?;
        let argv = ship::on_host(argv, &root, &remote_root);
        let dir = std::fs::canonicalize(&m.dir)?;
        let rel = dir.strip_prefix(&root).unwrap_or(Path::new("."));
        let mut env = self.contender_env()?;
        env.push((
            crate::observe::gc::GO_GC_TRACE.0.to_string(),
            crate::observe::gc::GO_GC_TRACE.1.to_string(),
        ));
        let job = ContenderJob {
            host: host.ssh.host.name.clone(),
            argv: argv.clone(),
            cwd: format!("{remote_root}/{}", rel.display()),
            cpus: host.cpus.clone(),
            env,
            log: format!("{}/{}.{tag}.log", host.dir, m.name),
            corpus: self.services.map(|s| s.corpus.spec.clone()),
            limits: self.plan.limits.of(&m.name),
            name: m.name.clone(),
            ..ContenderJob::default()
        };
        eprintln!(
            "[{}] starting on host {} at {address}:{}, {}{}",
            m.name,
            host.ssh.host.name,
            probe.ports[0],
            host.pinning(),
            job.limits.start_line_suffix()
        );
        let remote = RemoteContender::start(&host.ssh, &host.binary, &job)?;
        let addr = SocketAddr::new(address, probe.ports[0]);
        let log = self.dir.join("logs").join(format!("{}.{tag}.log", m.name));
        let timeout =
            crate::util::units::parse_duration(m.startup_timeout.as_deref().unwrap_or("120s"))?;
        let ready = &m.ready;
        let waited = remote.wait_until(
            &m.name,
            &format!("answer GET {ready} with 200 on {addr}"),
            timeout,
            &log,
            || crate::util::http1::answers_200(self.rt, addr, ready),
        )?;
        eprintln!(
            "[{}] ready in {:.1}s on host {} (process {})",
            m.name,
            waited.as_secs_f64(),
            host.ssh.host.name,
            remote.pid
        );
        Ok(Started {
            name: m.name.clone(),
            remote,
            addr,
            argv,
            startup_s: waited.as_secs_f64(),
            log,
        })
    }

    /// The start command of `m` on `host`, on the JDK found there for a JVM contender.
    fn command_there(
        &self,
        host: &HostReady,
        m: &Manifest,
        tunables: &BTreeMap<String, String>,
        probe: &Probe,
        address: std::net::IpAddr,
    ) -> Result<Vec<String>> {
        let java = match (m.is_jvm(), &probe.java) {
            (false, _) => None,
            (true, Some(j)) => Some(PathBuf::from(j)),
            (true, None) => bail!(
                "contender host {} has no JDK >= 21 (looked at $JAVA_HOME and /usr/lib/jvm/* there); install one there, e.g. `apt-get install temurin-25-jdk` or `openjdk-21-jdk`",
                host.ssh.host.name
            ),
        };
        let flags = self.plan.jvm_flags();
        m.command(
            &StartVars {
                java: java.as_deref(),
                jvm_flags: &flags,
                address,
                port: probe.ports[0],
            },
            tunables,
        )
    }
}

/// With --profile: `m`'s profiler on the contender host (the JDK found there for JFR, a port
/// free on its loopback for pprof, a folder in the run's directory there for raw files).
fn profiler_there(host: &HostReady, m: &Manifest, run: u32) -> Result<Profiler> {
    let probe = Probe::of(host, IpAddr::V4(Ipv4Addr::LOCALHOST), 1)?;
    let place = Place::Host {
        ssh: Box::new(host.ssh.clone()),
        binary: host.binary.clone(),
    };
    let work = PathBuf::from(format!("{}/profiles/.{}.run{run}", host.dir, m.name));
    let java = probe.java.as_deref().map(Path::new);
    let kind = m.profiler_kind().unwrap_or_default();
    Profiler::new(kind, java, &work, place, probe.ports[0])
        .with_context(|| format!("--profile for {} on host {}", m.name, host.ssh.host.name))
}

/// Copies what `m` needs and the host does not have yet from this run.
fn copy_files(
    fleet: &Fleet,
    host: &HostReady,
    m: &Manifest,
    root: &Path,
    remote_root: &str,
) -> Result<()> {
    let files: Vec<PathBuf> = {
        let shipped = fleet.shipped.lock().unwrap_or_else(|e| e.into_inner());
        ship::files_of(m)?
            .into_iter()
            .filter(|f| !shipped.contains(f))
            .collect()
    };
    if !files.is_empty() {
        eprintln!(
            "[{}] copying its files to host {}",
            m.name, host.ssh.host.name
        );
        ship::ship(host, root, &files, remote_root)?;
        let mut shipped = fleet.shipped.lock().unwrap_or_else(|e| e.into_inner());
        shipped.extend(files);
    }
    Ok(())
}
