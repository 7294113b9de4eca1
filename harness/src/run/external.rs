//! A server iobound did not build: given by `--url`, and optionally its process, so it is
//! measured like a built-in contender. `--pid` samples a running process and its children;
//! `--cmd` starts the server itself (its own process group, on the contender CPUs), waits for
//! its port, samples it, and stops it after each repeat.

use super::context::{failed_run, RunCtx};
use super::launch::STOP_GRACE;
use crate::remote::contender::{ContenderJob, RemoteContender};
use crate::remote::deploy::HostReady;
use crate::results::record::ContenderInfo;
use crate::services::contender::{self, Running};
use crate::util::interrupt;
use anyhow::{bail, Result};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// How long a `--cmd` server may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, PartialEq)]
pub enum ExternalProcess {
    /// Nothing of the server is sampled.
    None,
    /// A running process, sampled with its descendants.
    Pid(i32),
    /// A shell command iobound starts and stops.
    Cmd(String),
}

#[derive(Debug, Clone)]
pub struct External {
    pub addr: SocketAddr,
    pub process: ExternalProcess,
    /// `--arm NAME=COMMAND`, two or more: variants of the server, each a contender of its own
    /// named NAME, started by its COMMAND in turn in every round (`process` is then None: the
    /// servers of a round are `servers()`).
    pub arms: Vec<ExternalArm>,
}

/// One variant of the user's server (`--arm NAME=COMMAND`).
#[derive(Debug, Clone, PartialEq)]
pub struct ExternalArm {
    pub name: String,
    pub cmd: String,
}

impl ExternalArm {
    /// Reads `NAME=COMMAND`: NAME a plain name other than "external", COMMAND not empty.
    pub fn parse(flag: &str) -> Result<ExternalArm> {
        let Some((name, cmd)) = flag.split_once('=') else {
            bail!("--arm {flag:?}: give NAME=COMMAND, e.g. --arm cached='./server --port 8080 --cache'");
        };
        if !crate::util::files::is_plain_name(name) || name == "external" {
            bail!("--arm {name:?}: an arm's name uses only letters, digits, '-' and '_' and is not \"external\" (it names the arm in every table), e.g. --arm cached='./server --cache'");
        }
        if cmd.trim().is_empty() {
            bail!("--arm {name}: the command is empty; give the shell command that starts this variant of the server");
        }
        Ok(ExternalArm {
            name: name.to_string(),
            cmd: cmd.to_string(),
        })
    }
}

impl External {
    /// Checks `--pid` before anything starts (on the contender host, `on_host`, the agent
    /// there checks it).
    pub fn check(&self, on_host: bool) -> Result<()> {
        if let (ExternalProcess::Pid(pid), false) = (&self.process, on_host) {
            let pid = *pid;
            if crate::util::procs::stat_fields(pid).is_none() {
                bail!("--pid {pid}: no such process; give the id of the server's main process (e.g. `pgrep -o nginx`), or start it with --cmd");
            }
        }
        if let ExternalProcess::Cmd(cmd) = &self.process {
            if cmd.trim().is_empty() {
                bail!("--cmd is empty; give the shell command that starts the server, e.g. --cmd 'nginx -c $PWD/nginx.conf -g \"daemon off;\"'");
            }
        }
        Ok(())
    }

    /// The servers of one round, each with the name it has in the results: "external", or
    /// each arm.
    pub fn servers(&self) -> Vec<(String, ExternalProcess)> {
        if self.arms.is_empty() {
            return vec![("external".into(), self.process.clone())];
        }
        self.arms
            .iter()
            .map(|a| (a.name.clone(), ExternalProcess::Cmd(a.cmd.clone())))
            .collect()
    }

    /// Whether iobound starts every server of a round (`--cmd`, or `--arm`'s commands).
    pub fn started(&self) -> bool {
        self.servers()
            .iter()
            .all(|(_, p)| matches!(p, ExternalProcess::Cmd(_)))
    }

    /// Whether iobound samples the servers (it starts them, or was given a process id).
    pub fn sampled(&self) -> bool {
        self.servers()
            .iter()
            .all(|(_, p)| *p != ExternalProcess::None)
    }

    /// The names the servers have in the results.
    pub fn names(&self) -> Vec<String> {
        self.servers().into_iter().map(|(name, _)| name).collect()
    }

    /// The report's description of each server; every arm but the first is an arm of the
    /// first, which `run --fail-if` gates it against.
    pub fn infos(&self) -> Vec<ContenderInfo> {
        let first = self.arms.first().map(|a| a.name.clone());
        self.servers()
            .into_iter()
            .map(|(name, process)| {
                let arm_of = first.clone().filter(|f| *f != name);
                let (framework, command) = match process {
                    ExternalProcess::None => ("an already running server (not started, verified or sampled by iobound; give --pid or --cmd to sample it)".to_string(), Vec::new()),
                    ExternalProcess::Pid(pid) => (format!("an already running server, process {pid} and its children sampled (not started or verified by iobound)"), Vec::new()),
                    ExternalProcess::Cmd(cmd) => ("a server started by iobound with --cmd or --arm, sampled as its process group (not verified against the contract)".to_string(), vec![cmd]),
                };
                let mut info = ContenderInfo::external();
                info.name = name;
                info.arm_of = arm_of;
                info.framework = framework;
                info.command = command;
                info
            })
            .collect()
    }
}

/// Starts a `--cmd` server and waits until its port accepts connections.
fn start(ctx: &RunCtx, name: &str, cmd: &str, addr: SocketAddr, run: u32) -> Result<Running> {
    let log = ctx.dir.join("logs").join(format!("{name}-run{run}.log"));
    let argv = vec![
        "sh".to_string(),
        "-c".to_string(),
        crate::util::shell::exec_users_script(cmd),
    ];
    let cwd = std::env::current_dir()?;
    // --cpus and --memory hold a --cmd server as they hold a built-in contender.
    let cgroup = crate::util::cgroup::own(name, ctx.plan.limits.of(name))?;
    let mut proc = contender::start_in(
        &argv,
        &cwd,
        &ctx.plan.contender_cpus,
        SocketAddr::new(contender::LOOPBACK, addr.port()),
        &log,
        &[],
        cgroup,
    )?;
    proc.wait_until(
        "--cmd",
        &format!("accept connections on {addr}"),
        START_TIMEOUT,
        || TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok(),
    )?;
    Ok(proc)
}

impl RunCtx<'_> {
    /// One repeat against the external server: each of its servers (one, or each `--arm`) in
    /// turn, one not yet measured in this repeat (`--resume`).
    pub(super) fn external_round(&mut self, ext: &External, run: u32) -> Result<()> {
        for (name, process) in ext.servers() {
            if interrupt::stopped() {
                break;
            }
            if super::resume::finished(self.res, &name, &self.plan.scenarios, run) {
                continue;
            }
            self.external_server(&name, &process, ext.addr, run)?;
        }
        Ok(())
    }

    /// Every scenario still asked (`runs_in`) of one repeat against one server.
    fn external_server(
        &mut self,
        name: &str,
        process: &ExternalProcess,
        addr: SocketAddr,
        run: u32,
    ) -> Result<()> {
        let on_host = self.fleet.and_then(|f| f.contender.as_ref());
        let started = match (process, on_host) {
            (ExternalProcess::None, _) => Ok(None),
            (_, Some(h)) => self
                .start_on_host(name, process, addr, h, run)
                .map(|()| None),
            (ExternalProcess::Cmd(cmd), None) => start(self, name, cmd, addr, run).map(Some),
            (ExternalProcess::Pid(_), None) => Ok(None),
        };
        let mut proc = match started {
            Ok(p) => p,
            Err(e) => {
                let why = format!("{e:#}");
                eprintln!("  {name}: {why}");
                for s in &self.plan.scenarios {
                    self.res.runs.push(failed_run(name, s, run, &why));
                }
                self.res.checkpoint(self.dir);
                return Ok(());
            }
        };
        self.sample_tree = match (process, &self.remote) {
            (ExternalProcess::Pid(pid), None) => Some(*pid),
            _ => None,
        };
        let plan = self.plan;
        let asked: Vec<_> = plan
            .scenarios
            .iter()
            .filter(|s| super::resume::runs_in(self.res, s, run))
            .collect();
        for s in asked {
            if interrupt::stopped() {
                break;
            }
            self.scenario(name, proc.as_mut(), addr, s, run);
        }
        if let Some(p) = proc.as_mut() {
            p.stop(STOP_GRACE);
        }
        if let Some(r) = self.remote.take() {
            let log = self.dir.join("logs").join(format!("{name}-run{run}.log"));
            r.stop(STOP_GRACE, &log);
        }
        Ok(())
    }

    /// The server on the contender host: `--cmd` (or an `--arm`'s command) started there
    /// (pinned to the host's CPUs, `$IOBOUND_BIN` naming the iobound copied there) and waited
    /// for until `addr` accepts connections, or `--pid` adopted there; either way sampled there
    /// from now on.
    fn start_on_host(
        &mut self,
        name: &str,
        process: &ExternalProcess,
        addr: SocketAddr,
        h: &HostReady,
        run: u32,
    ) -> Result<()> {
        let mut job = ContenderJob {
            host: h.ssh.host.name.clone(),
            ..ContenderJob::default()
        };
        match process {
            ExternalProcess::Cmd(cmd) => {
                job.argv = vec![
                    "sh".into(),
                    "-c".into(),
                    crate::util::shell::exec_users_script(cmd),
                ];
                job.cwd = h.dir.clone();
                job.cpus = h.cpus.clone();
                job.env = vec![("IOBOUND_BIN".into(), h.binary.clone())];
                job.log = format!("{}/{name}-run{run}.log", h.dir);
                job.limits = self.plan.limits.of(name);
                job.name = name.into();
            }
            ExternalProcess::Pid(pid) => job.pid = Some(*pid),
            ExternalProcess::None => return Ok(()),
        }
        let remote = RemoteContender::start(&h.ssh, &h.binary, &job)?;
        self.note_namespace(&remote.net_namespace);
        if remote.started {
            let log = self.dir.join("logs").join(format!("{name}-run{run}.log"));
            remote.wait_until(
                "--cmd",
                &format!("accept connections on {addr}"),
                START_TIMEOUT,
                &log,
                || TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok(),
            )?;
        }
        eprintln!(
            "  {name}: server {} on host {} (process {}), sampled there",
            if remote.started { "started" } else { "adopted" },
            job.host,
            remote.pid
        );
        self.remote = Some(remote);
        Ok(())
    }

    /// Records the network namespace the server on the contender host runs in (what shows
    /// that its figures were read there).
    pub(super) fn note_namespace(&mut self, namespace: &str) {
        if let Some(entry) = self
            .res
            .environment
            .remote_hosts
            .iter_mut()
            .find(|e| e.role == "contender")
        {
            entry.net_namespace = Some(namespace.to_string());
        }
    }
}
