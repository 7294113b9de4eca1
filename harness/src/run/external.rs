//! A server iobound did not build: given by `--url`, and optionally its process, so it is
//! measured like a built-in contender. `--pid` samples a running process and its children;
//! `--cmd` starts the server itself (its own process group, on the contender CPUs), waits for
//! its port, samples it, and stops it after each repeat.

use super::launch::STOP_GRACE;
use super::round::{failed_run, RunCtx};
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
}

impl External {
    /// Checks `--pid` before anything starts (on the contender host, `on_host`, the agent
    /// there checks it).
    pub fn check(&self, on_host: bool) -> Result<()> {
        if let (ExternalProcess::Pid(pid), false) = (&self.process, on_host) {
            let pid = *pid;
            if crate::services::contender::stat_fields(pid).is_none() {
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

    /// The report's description of the server.
    pub fn info(&self) -> ContenderInfo {
        let (framework, command) = match &self.process {
            ExternalProcess::None => ("an already running server (not started, verified or sampled by iobound; give --pid or --cmd to sample it)".to_string(), Vec::new()),
            ExternalProcess::Pid(pid) => (format!("an already running server, process {pid} and its children sampled (not started or verified by iobound)"), Vec::new()),
            ExternalProcess::Cmd(cmd) => ("a server started by iobound with --cmd, sampled as its process group (not verified against the contract)".to_string(), vec![cmd.clone()]),
        };
        let mut info = ContenderInfo::external();
        info.framework = framework;
        info.command = command;
        info
    }
}

/// Starts a `--cmd` server and waits until its port accepts connections.
fn start(ctx: &RunCtx, cmd: &str, addr: SocketAddr, run: u32) -> Result<Running> {
    let log = ctx.dir.join("logs").join(format!("external-run{run}.log"));
    let argv = vec![
        "sh".to_string(),
        "-c".to_string(),
        crate::util::shell::exec_users_script(cmd),
    ];
    let cwd = std::env::current_dir()?;
    // --cpus and --memory hold a --cmd server as they hold a built-in contender.
    let cgroup = crate::util::cgroup::own("external", ctx.plan.limits.of("external"))?;
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
    /// Every scenario of one repeat against the external server.
    pub(super) fn external_round(&mut self, ext: &External, run: u32) -> Result<()> {
        let on_host = self.fleet.and_then(|f| f.contender.as_ref());
        let started = match (&ext.process, on_host) {
            (ExternalProcess::None, _) => Ok(None),
            (_, Some(h)) => self.start_on_host(ext, h, run).map(|()| None),
            (ExternalProcess::Cmd(cmd), None) => start(self, cmd, ext.addr, run).map(Some),
            (ExternalProcess::Pid(_), None) => Ok(None),
        };
        let mut proc = match started {
            Ok(p) => p,
            Err(e) => {
                let why = format!("{e:#}");
                eprintln!("  external: {why}");
                for s in &self.plan.scenarios {
                    self.res.runs.push(failed_run("external", s, run, &why));
                }
                self.res.checkpoint(self.dir);
                return Ok(());
            }
        };
        self.sample_tree = match (&ext.process, &self.remote) {
            (ExternalProcess::Pid(pid), None) => Some(*pid),
            _ => None,
        };
        for s in &self.plan.scenarios {
            if interrupt::stopped() {
                break;
            }
            self.scenario("external", proc.as_mut(), ext.addr, s, run);
        }
        if let Some(p) = proc.as_mut() {
            p.stop(STOP_GRACE);
        }
        if let Some(r) = self.remote.take() {
            let log = self.dir.join("logs").join(format!("external-run{run}.log"));
            r.stop(STOP_GRACE, &log);
        }
        Ok(())
    }

    /// The server on the contender host: `--cmd` started there (pinned to the host's CPUs,
    /// `$IOBOUND_BIN` naming the iobound copied there) and waited for until `ext.addr` accepts
    /// connections, or `--pid` adopted there; either way sampled there from now on.
    fn start_on_host(&mut self, ext: &External, h: &HostReady, run: u32) -> Result<()> {
        let mut job = ContenderJob {
            host: h.ssh.host.name.clone(),
            ..ContenderJob::default()
        };
        match &ext.process {
            ExternalProcess::Cmd(cmd) => {
                job.argv = vec![
                    "sh".into(),
                    "-c".into(),
                    crate::util::shell::exec_users_script(cmd),
                ];
                job.cwd = h.dir.clone();
                job.cpus = h.cpus.clone();
                job.env = vec![("IOBOUND_BIN".into(), h.binary.clone())];
                job.log = format!("{}/external-run{run}.log", h.dir);
                job.limits = self.plan.limits.of("external");
                job.name = "external".into();
            }
            ExternalProcess::Pid(pid) => job.pid = Some(*pid),
            ExternalProcess::None => return Ok(()),
        }
        let remote = RemoteContender::start(&h.ssh, &h.binary, &job)?;
        self.note_namespace(&remote.net_namespace);
        if remote.started {
            let log = self.dir.join("logs").join(format!("external-run{run}.log"));
            let addr = ext.addr;
            remote.wait_until(
                "--cmd",
                &format!("accept connections on {addr}"),
                START_TIMEOUT,
                &log,
                || TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok(),
            )?;
        }
        eprintln!(
            "  external: server {} on host {} (process {}), sampled there",
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
