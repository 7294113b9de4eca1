//! A server iobound did not build: given by `--url`, and optionally its process, so it is
//! measured like a built-in contender. `--pid` samples a running process and its children;
//! `--cmd` starts the server itself (its own process group, on the contender CPUs), waits for
//! its port, samples it, and stops it after each repeat.

use super::launch::STOP_GRACE;
use super::results::ContenderInfo;
use super::round::{failed_run, RunCtx};
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
    /// Checks `--pid` before anything starts.
    pub fn check(&self) -> Result<()> {
        if let ExternalProcess::Pid(pid) = self.process {
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
    let argv = vec!["sh".to_string(), "-c".to_string(), format!("exec {cmd}")];
    let cwd = std::env::current_dir()?;
    let mut proc = contender::start(
        &argv,
        &cwd,
        &ctx.plan.contender_cpus,
        addr.port(),
        &log,
        &[],
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
        let mut proc = match &ext.process {
            ExternalProcess::Cmd(cmd) => match start(self, cmd, ext.addr, run) {
                Ok(p) => Some(p),
                Err(e) => {
                    let why = format!("{e:#}");
                    eprintln!("  external: {why}");
                    for s in &self.plan.scenarios {
                        self.res.runs.push(failed_run("external", s, run, &why));
                    }
                    return self.res.save(self.dir);
                }
            },
            _ => None,
        };
        self.sample_tree = match ext.process {
            ExternalProcess::Pid(pid) => Some(pid),
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
        Ok(())
    }
}
