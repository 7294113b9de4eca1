//! One contender, one repeat: start, verify, every scenario, stop.

use super::context::{failed_run, RunCtx};
use super::launch::{launch, verify_contender, Launched, STOP_GRACE};
use crate::observe::cold_start::PendingStart;
use crate::plan::{Plan, Scenario};
use crate::services::contender::{Running, LOOPBACK};
use crate::services::exit_words::describe_exit;
use crate::services::manifest::Manifest;
use crate::util::interrupt;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;

impl<'a> RunCtx<'a> {
    /// The plan's scenarios measured in round `run`: those with a question still open.
    pub(super) fn round_scenarios(&self, run: u32) -> Vec<&'a Scenario> {
        let plan: &'a Plan = self.plan;
        (plan.scenarios.iter())
            .filter(|s| super::resume::runs_in(self.res, s, run))
            .collect()
    }

    /// The limits of the cgroup the contender runs in: the one made here for a process started
    /// here, or the one its agent made on the contender host; None when it runs in none.
    pub(super) fn cgroup_limits(
        &self,
        proc: Option<&crate::services::contender::Running>,
    ) -> Option<crate::util::cgroup::Limits> {
        match proc.and_then(crate::services::contender::Running::cgroup) {
            Some(cg) => Some(cg.limits),
            None => self.remote.as_ref().map(|r| r.limits),
        }
    }

    pub(super) fn fail_all(&mut self, name: &str, run: u32, why: &str) -> Result<()> {
        for s in self.round_scenarios(run) {
            self.res.runs.push(failed_run(name, s, run, why));
        }
        self.res.checkpoint(self.dir);
        Ok(())
    }

    /// One contender, one repeat: start, verify, every scenario, stop.
    pub fn contender_round(
        &mut self,
        index: usize,
        m: &Manifest,
        tunables: &BTreeMap<String, String>,
        java: Option<&Path>,
        run: u32,
    ) -> Result<()> {
        let most = if self.plan.sequential.is_some() {
            " at most"
        } else {
            ""
        };
        let scenarios = self.round_scenarios(run);
        if scenarios.is_empty() {
            return Ok(()); // every scenario's questions closed: nothing to start it for
        }
        eprintln!("\n[{}] run {run} of{most} {}", m.name, self.plan.runs);
        self.profiler = None;
        self.profiler = self.profiler_for(m, java, run)?;
        if let Err(e) = self.train_jvm_start(m, tunables, java) {
            let why = format!("no JVM archive to start from: {e:#}");
            eprintln!("[{}] {why}", m.name);
            self.res.contenders[index].failure = Some(why.clone());
            return self.fail_all(&m.name, run, &why);
        }
        let Some(mut proc) = self.start_and_verify(index, m, tunables, java, run)? else {
            return Ok(());
        };
        for (si, &s) in scenarios.iter().enumerate() {
            if interrupt::stopped() {
                break;
            }
            // A failed restart, or a contender that has exited, ends the round: the scenarios
            // left are recorded as not run, with the reason.
            let restarted = if s.restart && si > 0 {
                self.restart(m, tunables, java, run, &s.name, &mut proc)
                    .map(|p| proc = p)
            } else {
                Ok(())
            };
            let not_run = restarted.err().or_else(|| {
                proc.exited().map(|status| {
                    format!(
                        "not run: the contender had exited ({})",
                        proc.why_exited(status)
                    )
                })
            });
            if let Some(why) = not_run {
                for rest in &scenarios[si..] {
                    self.res.runs.push(failed_run(&m.name, rest, run, &why));
                }
                break;
            }
            // A restarted contender listens on a port of its own.
            let addr = proc.addr;
            self.warm_started.set(None);
            self.scenario(&m.name, Some(&mut proc), addr, s, run);
            self.attach_cold_start(&m.name, &s.name, run);
            self.res.checkpoint(self.dir);
        }
        let status = proc.stop(STOP_GRACE);
        eprintln!("[{}] stopped ({})", m.name, describe_exit(status));
        if let Some(p) = &self.profiler {
            p.clean_up();
        }
        self.res.checkpoint(self.dir);
        Ok(())
    }

    /// With --profile: the profiler of `m`'s round `run` on this machine.
    fn profiler_for(
        &self,
        m: &Manifest,
        java: Option<&Path>,
        run: u32,
    ) -> Result<Option<crate::observe::profile::Profiler>> {
        if !self.plan.profile {
            return Ok(None);
        }
        Ok(Some(crate::observe::profile::Profiler::new(
            m.profiler_kind().unwrap_or_default(),
            java,
            &self
                .dir
                .join("profiles")
                .join(format!(".{}.run{run}", m.name)),
            crate::observe::profile::Place::Here,
            crate::services::ports::free_port()?,
        )?))
    }

    /// Starts the contender and checks it against the contract. None when the round ends
    /// here (start-up failed, the contract failed, or Ctrl-C): what happened is recorded and
    /// the contender stopped.
    fn start_and_verify(
        &mut self,
        index: usize,
        m: &Manifest,
        tunables: &BTreeMap<String, String>,
        java: Option<&Path>,
        run: u32,
    ) -> Result<Option<Running>> {
        let log = self
            .dir
            .join("logs")
            .join(format!("{}.run{run}.log", m.name));
        let env = self.contender_env()?;
        let Launched {
            mut proc,
            argv,
            startup_timeout,
        } = launch(m, tunables, self.plan, java, LOOPBACK, &log, &env)?;
        self.res.contenders[index].command = argv;
        match proc.wait_ready(self.rt, &m.ready, startup_timeout) {
            Ok(t) => {
                eprintln!(
                    "[{}] ready in {:.1}s (port open after {:.2}s)",
                    m.name,
                    t.first_200.as_secs_f64(),
                    t.port.as_secs_f64()
                );
                self.res.contenders[index].startup_s = Some(t.first_200.as_secs_f64());
                self.pending_start = Some(PendingStart::new(proc.started, t));
                self.res.checkpoint(self.dir);
            }
            Err(_) if interrupt::stopped() => {
                // Cut short by the user, not a failure of the contender: nothing to record.
                eprintln!("[{}] interrupted during start-up", m.name);
                proc.stop(STOP_GRACE);
                self.res.checkpoint(self.dir);
                return Ok(None);
            }
            Err(e) => {
                let why = format!("start-up failed: {e:#}");
                eprintln!("[{}] {why}", m.name);
                self.res.contenders[index].failure = Some(why.clone());
                proc.stop(STOP_GRACE);
                self.fail_all(&m.name, run, &why)?;
                return Ok(None);
            }
        }
        let addr = proc.addr;
        let log = proc.log.clone();
        if !self.contract_gate(index, m, addr, Some(log.as_path()), run, || {
            proc.stop(STOP_GRACE);
        })? {
            return Ok(None);
        }
        if let Some(p) = self.pending_start.as_mut() {
            p.checked();
        }
        Ok(Some(proc))
    }

    /// Gives the run just measured of `contender` on `scenario` the record of the start
    /// before it, if that start has not been recorded yet.
    fn attach_cold_start(&mut self, contender: &str, scenario: &str, run: u32) {
        let Some(last) = self.res.runs.last_mut() else {
            return;
        };
        if last.contender != contender || last.scenario != scenario || last.run != run {
            return;
        }
        let Some(pending) = self.pending_start.take() else {
            return;
        };
        let settled = last
            .warmup
            .as_ref()
            .filter(|w| w.settled)
            .map(|w| w.seconds);
        last.cold_start = Some(pending.finish(self.warm_started.get(), settled));
    }

    /// Checks a started contender (on `addr`, writing `log` when it runs on this machine)
    /// against the contract and records the result, with what its runtime detected; true when
    /// it may be measured. When it may not (it failed the contract, or Ctrl-C), `stop` stops
    /// it, and a failed contract fails the round's runs with the reason.
    pub(super) fn contract_gate(
        &mut self,
        index: usize,
        m: &Manifest,
        addr: SocketAddr,
        log: Option<&Path>,
        run: u32,
        stop: impl FnOnce(),
    ) -> Result<bool> {
        eprintln!("[{}] verifying against the contract", m.name);
        let services = self
            .services
            .context("contenders need the harness's services")?;
        let (v, detected) = verify_contender(
            self.rt,
            addr,
            m,
            services,
            &self.plan.driver_cpus,
            &self.dir.join("logs"),
            log,
            None,
        )?;
        crate::conformance::print(&m.name, &v);
        let passed = v.passed;
        self.res.contenders[index].verification = Some(v);
        self.res.contenders[index].detected = detected;
        self.res.checkpoint(self.dir);
        if interrupt::stopped() {
            // Checks cut short by the user fail without the contender failing: nothing to record.
            stop();
            self.res.checkpoint(self.dir);
            return Ok(false);
        }
        if !passed {
            stop();
            let why = "failed the contract checks (see verification); not measured".to_string();
            self.res.contenders[index].failure = Some(why.clone());
            self.fail_all(&m.name, run, &why)?;
            return Ok(false);
        }
        Ok(true)
    }

    /// What a contender starts with: the services' addresses, and the current profiler's
    /// settings under --profile.
    pub(super) fn contender_env(&self) -> Result<Vec<(String, String)>> {
        let mut env = self
            .services
            .context("contenders need the harness's services")?
            .env();
        env.extend(self.profiler.iter().flat_map(|p| p.env()));
        Ok(env)
    }

    /// Stops the contender and starts it again (a log of its own) for a scenario that asks for
    /// a fresh process; it was verified at the round's start, so it is only waited for.
    fn restart(
        &mut self,
        m: &Manifest,
        tunables: &BTreeMap<String, String>,
        java: Option<&Path>,
        run: u32,
        scenario: &str,
        old: &mut Running,
    ) -> Result<Running, String> {
        let status = old.stop(STOP_GRACE);
        eprintln!(
            "[{}] stopped ({}); restarting for {scenario}",
            m.name,
            describe_exit(status)
        );
        let env = self.contender_env().map_err(|e| format!("{e:#}"))?;
        let log = self
            .dir
            .join("logs")
            .join(format!("{}.run{run}.{scenario}.log", m.name));
        let Launched {
            mut proc,
            startup_timeout,
            ..
        } = launch(m, tunables, self.plan, java, LOOPBACK, &log, &env)
            .map_err(|e| format!("restart failed: {e:#}"))?;
        match proc.wait_ready(self.rt, &m.ready, startup_timeout) {
            Ok(t) => {
                eprintln!(
                    "[{}] ready again in {:.1}s",
                    m.name,
                    t.first_200.as_secs_f64()
                );
                self.pending_start = Some(PendingStart::new(proc.started, t));
                Ok(proc)
            }
            Err(e) => {
                proc.stop(STOP_GRACE);
                Err(format!(
                    "not run: the restart before {scenario} failed: {e:#}"
                ))
            }
        }
    }

    /// One scenario: overload phases, a capacity search, or one measured run.
    pub fn scenario(
        &mut self,
        name: &str,
        proc: Option<&mut Running>,
        addr: SocketAddr,
        s: &Scenario,
        run: u32,
    ) {
        match (&s.overload, &s.capacity) {
            (Some(o), _) => self.overload_round(name, proc, addr, s, o, run),
            (None, Some(c)) => self.capacity_round(name, proc, addr, s, c, run),
            (None, None) => self.measure_scenario(name, proc, addr, s, run),
        }
    }
}
