//! An HTTP scenario: the downstream and database set up for it, a warm-up at its starting load
//! (not recorded), then the measured run with the sampler beside the driver; the run gets its
//! summary, per-second rows, histograms, driver report and, for mixes that write, the write check.

use super::printed::print_run;
use super::scenario_load::{scenario_target, warmup_load};
use crate::driver::{self, assess::driver_report, summary, Target};
use crate::observe::warmup::Settle;
use crate::observe::window_check::judge_measured_window;
use crate::plan::Scenario;
use crate::results::record::Run;
use crate::results::warmup::WarmupRecord;
use crate::run::context::{failed_run, new_run, RunCtx};
use crate::run::finish::{finish, runtime_logs, Ended};
use crate::run::warnings::{accounting_warnings, load_host_warnings};
use crate::run::watch::FaultLog;
use crate::sampler::{self, Sampler, Sampling};
use crate::services::contender::Running;
use crate::util::interrupt;
use crate::util::progress::Progress;
use std::net::SocketAddr;
use std::time::{Instant, SystemTime};

impl RunCtx<'_> {
    /// Warm-up then measured run of one scenario; the run is appended to the results.
    pub(in crate::run) fn measure_scenario(
        &mut self,
        name: &str,
        mut proc: Option<&mut Running>,
        addr: SocketAddr,
        s: &Scenario,
        run: u32,
    ) {
        if let Err(why) = self.set_up(s) {
            self.res.runs.push(failed_run(name, s, run, &why));
            return;
        }
        if s.pipeline {
            return self.measure_pipeline(name, proc, s, run);
        }
        if self.leads_in(s) {
            if let Some(mut r) = self.measure_led(name, proc, addr, s, run) {
                judge_measured_window(&mut r, s);
                self.res.runs.push(r);
            }
            return;
        }
        let warm = match self.warm_up(name, proc.as_deref_mut(), addr, s, run) {
            Ok(w) => w,
            Err(why) => {
                self.res.runs.push(failed_run(name, s, run, &why));
                return;
            }
        };
        if interrupt::stopped() {
            return;
        }
        let mut r = self.measured(name, proc, addr, s, run, warm.0);
        r.warmup = warm.1;
        judge_measured_window(&mut r, s);
        self.res.runs.push(r);
    }

    /// The downstream's behaviour for the scenario, and fresh rows when it uses the database.
    fn set_up(&self, s: &Scenario) -> Result<(), String> {
        self.set_downstream(&s.downstream).map_err(|why| {
            format!(
                "could not set the downstream service ({}): {why}",
                s.downstream
            )
        })?;
        let uses_db = !s.mix.is_empty() || s.path.starts_with("/messages");
        if let (Some(db), true) = (self.services.and_then(|sv| sv.database.as_ref()), uses_db) {
            db.reset(self.rt)
                .map_err(|e| format!("could not reset the database: {e:#}"))?;
        }
        Ok(())
    }

    /// The warm-up: at most the scenario's `warmup`, ending once the contender has settled
    /// (and not before the plan's minimum). Returns how many of its requests were left
    /// unanswered, and how long it lasted.
    fn warm_up(
        &self,
        name: &str,
        proc: Option<&mut Running>,
        addr: SocketAddr,
        s: &Scenario,
        run: u32,
    ) -> Result<(Option<u64>, Option<WarmupRecord>), String> {
        if s.warmup.is_zero() {
            return Ok((None, None));
        }
        let warm = warmup_load(&s.load, s.warmup);
        let target = scenario_target(
            addr,
            s,
            warm.connection_close,
            &format!("iobound {name} {} r{run} warm ", s.name),
        );
        let bar = Progress::new(&format!("{name} {} warm-up", s.name), s.warmup);
        let min = self.plan.warmup_min.min(s.warmup);
        let detect = s.warmup > min;
        *self.settle.borrow_mut() =
            detect.then(|| Settle::new(min, s.warmup, self.plan.warmup_band));
        // The contender's CPU per request is one of the figures that must settle.
        let sampler = detect
            .then(|| self.sampler(proc.as_deref(), None))
            .flatten();
        let mut samples = Vec::new();
        let t0 = Instant::now();
        self.warm_started.set(Some(t0));
        let outcome = self.drive(
            &target,
            &warm,
            proc,
            &bar,
            sampler.as_deref().map(|sm| (sm, &mut samples)),
            FaultLog {
                events: &[],
                fired: &mut Vec::new(),
            },
        );
        let settle = self.settle.borrow_mut().take();
        let curve = settle.as_ref().map(|st| st.curve()).unwrap_or_default();
        let drift_pct = settle.as_ref().map(|st| st.drifts()).unwrap_or_default();
        let jit_curve = settle.as_ref().map(|st| st.jit_curve()).unwrap_or_default();
        let settled_at = settle.and_then(|st| st.settled_at);
        bar.finish();
        let record = WarmupRecord {
            seconds: settled_at
                .unwrap_or_else(|| t0.elapsed().min(s.warmup))
                .as_secs_f64(),
            settled: settled_at.is_some(),
            min_s: min.as_secs_f64(),
            max_s: s.warmup.as_secs_f64(),
            band_pct: self.plan.warmup_band * 100.0,
            rule: "trend".into(),
            curve,
            drift_pct,
            window: None,
            jit_curve,
            end_check: None,
            steps: Vec::new(),
        };
        if detect {
            match settled_at {
                Some(t) => eprintln!("[{name}] warm-up: settled after {:.0} s", t.as_secs_f64()),
                None => eprintln!(
                    "[{name}] warm-up: not settled within {:.0} s",
                    s.warmup.as_secs_f64()
                ),
            }
        }
        match outcome {
            Err(e) => Err(format!("warm-up failed: {e:#}")),
            Ok((o, _)) => {
                let left = o.recorder.overall().1.unanswered;
                Ok(((left > 0).then_some(left), Some(record)))
            }
        }
    }

    /// The measured run, sampled and watched.
    fn measured(
        &mut self,
        name: &str,
        mut proc: Option<&mut Running>,
        addr: SocketAddr,
        s: &Scenario,
        run: u32,
        warm_left: Option<u64>,
    ) -> Run {
        let started_at = crate::util::clock::now();
        let wall_start = SystemTime::now();
        let target = scenario_target(
            addr,
            s,
            s.load.connection_close,
            &format!("iobound {name} {} r{run} run ", s.name),
        );
        let bar = Progress::new(&format!("{name} {}", s.name), s.load.profile.duration());
        let downstream_port = self.downstream_port(s);
        let sampler = self.sampler(proc.as_deref(), downstream_port);
        let mut samples = Vec::new();
        let steal_before = sampler::cpu_steal();
        let mut fired = Vec::new();
        let profiling = self.begin_profile(name, proc.as_deref(), s, run);
        // The downstream's counts start from zero with the measured phase.
        let counted = downstream_port.is_some() && self.downstream_stats(true).is_some();
        let outcome = self.drive(
            &target,
            &s.load,
            proc.as_deref_mut(),
            &bar,
            sampler.as_deref().map(|sm| (sm, &mut samples)),
            FaultLog {
                events: &s.events,
                fired: &mut fired,
            },
        );
        bar.finish();
        let mut r = new_run(name, s, run);
        r.started_at = started_at;
        if counted {
            r.downstream_calls = self.downstream_stats(false);
        }
        // Stopped with the load, kept once the run is complete (which writes its driver report).
        let profile = self.end_profile(profiling);
        let window = Window {
            samples,
            steal_before,
            fired,
            wall_start,
            warm_left,
        };
        let mut r = self.complete(r, outcome, window, &target, proc, s);
        super::profiling::keep_profile(&mut r, profile);
        r
    }

    /// The rest of a measured run once its load has ended: summary, per-second rows, driver
    /// report, histograms, checks, resources and the runtime's own logs.
    pub(in crate::run) fn complete(
        &mut self,
        mut r: Run,
        outcome: anyhow::Result<(driver::Outcome, Option<String>)>,
        w: Window,
        target: &Target,
        proc: Option<&mut Running>,
        s: &Scenario,
    ) -> Run {
        let (outcome, crash) = match outcome {
            Ok(v) => v,
            Err(e) => {
                r.failure = Some(format!("driver failed: {e:#}"));
                return r;
            }
        };
        let load_start = outcome.recorder.start;
        let (summary, intervals) =
            summary::summarize(&outcome.recorder, outcome.duration, &s.load.profile);
        let requests = summary.ok + summary.drained;
        r.driver = driver_report(&outcome, &self.plan.driver_cpus, requests);
        r.summary = summary;
        r.intervals = intervals;
        self.record(&mut r, &outcome, target, s, w.warm_left, w.wall_start);
        r.load_hosts = self.host_shares.take();
        load_host_warnings(&mut r);
        let ended = Ended {
            samples: w.samples,
            steal_before: w.steal_before,
            fired: w.fired,
            crash,
            cancelled: outcome.cancelled,
            requests,
            limits: self.cgroup_limits(proc.as_deref()),
        };
        let mut r = finish(r, ended, proc.as_deref());
        // From when the load began: load hosts begin together, a moment after their share is sent.
        // Over the window as measured (a led-in window may have been lengthened for its noise).
        let measured = std::time::Duration::from_secs_f64(r.summary.duration_s.max(0.0));
        let length = if measured.is_zero() {
            s.load.profile.duration()
        } else {
            measured
        };
        let remote = self.remote.as_deref();
        runtime_logs(&mut r, proc.as_deref(), remote, load_start, length);
        print_run(&r);
        r
    }

    /// The downstream service's port where scenario `s` calls it (/enrich, /aggregate, and
    /// every pipeline record): its connections are counted there. Reading /proc/net/tcp costs
    /// the harness's CPU (10,000 lines at C10K, four times a second), so only there.
    pub(in crate::run) fn downstream_port(&self, s: &Scenario) -> Option<u16> {
        let calls = s.pipeline
            || ["/enrich", "/aggregate"]
                .iter()
                .any(|p| s.path == *p || s.path.starts_with(&format!("{p}?")));
        self.services
            .filter(|_| calls)
            .map(|sv| sv.downstream.addr.port())
    }

    /// The sampler of the contender's process (or of the process tree given with --url, or
    /// of the server on the contender host, read there), counting connections to
    /// `downstream_port` where given; None when there is nothing to sample.
    pub(in crate::run) fn sampler(
        &self,
        proc: Option<&Running>,
        downstream_port: Option<u16>,
    ) -> Option<Box<dyn Sampling>> {
        if let Some(r) = &self.remote {
            return Some(Box::new(r.sampler(downstream_port)));
        }
        match (proc, self.sample_tree) {
            (Some(p), _) => Some(Box::new(
                Sampler::new(p.pid, Instant::now(), downstream_port)
                    .in_cgroup(p.cgroup().map(crate::util::cgroup::Cgroup::reader)),
            )),
            (None, Some(pid)) => Some(Box::new(Sampler::of_tree(pid, Instant::now()))),
            (None, None) => None,
        }
    }

    /// Histograms, warnings, per-entry counts and the write check of a measured run.
    fn record(
        &self,
        r: &mut Run,
        outcome: &driver::Outcome,
        target: &Target,
        s: &Scenario,
        warm_left: Option<u64>,
        wall_start: SystemTime,
    ) {
        match (
            summary::encode_histogram(&outcome.recorder.overall().0),
            summary::encode_histogram(&outcome.recorder.overall_all()),
        ) {
            (Ok(h), Ok(all)) => (r.histogram, r.histogram_all) = (Some(h), Some(all)),
            (Err(e), _) | (_, Err(e)) => {
                r.driver.warnings.push(format!("histogram not kept: {e:#}"))
            }
        }
        accounting_warnings(r, outcome, s, warm_left);
        self.mix_and_writes(r, outcome, target);
        let hlog = format!("histograms/{}.{}.run{}.hlog", r.contender, s.name, r.run);
        match summary::write_hlog(
            &outcome.recorder,
            &self.dir.join(&hlog),
            wall_start,
            &format!("{}.{}", r.contender, s.name),
        ) {
            Ok(()) => r.histogram_log = Some(hlog),
            Err(e) => r
                .driver
                .warnings
                .push(format!("histogram log not written: {e:#}")),
        }
    }
}

/// What a measured window leaves besides the driver's outcome.
pub(in crate::run) struct Window {
    pub samples: Vec<crate::sampler::Sample>,
    /// /proc/stat steal when the window opened.
    pub steal_before: Option<(u64, u64)>,
    pub fired: Vec<crate::results::faults::EventRecord>,
    /// Wall time when the window opened (the histogram log's start).
    pub wall_start: SystemTime,
    /// Requests a separate warm-up load left unanswered.
    pub warm_left: Option<u64>,
}
