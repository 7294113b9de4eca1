//! The loop beside a run's load: every 250 ms it samples the contender, updates the progress
//! bar, fires the scenario's due downstream events, and watches for Ctrl-C and a crashed
//! contender (either cancels the load).

use super::context::RunCtx;
use crate::driver::remote::{HostShare, Job};
use crate::driver::{self, record::Live, DriverConfig, Target};
use crate::plan::{Event, Load};
use crate::remote::deploy::Fleet;
use crate::remote::load_hosts::{self, LoadHost};
use crate::results::faults::EventRecord;
use crate::sampler::{Sample, Sampling};
use crate::services::contender::Running;
use crate::util::interrupt;
use crate::util::progress::Progress;
use anyhow::Result;

/// The plan's fault events for a run and where the ones that fired are recorded.
pub(super) struct FaultLog<'a> {
    pub events: &'a [Event],
    pub fired: &'a mut Vec<EventRecord>,
}
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

impl RunCtx<'_> {
    /// Sends a /_control query to the downstream service (none when driving an external server).
    pub(super) fn set_downstream(&self, query: &str) -> std::result::Result<(), String> {
        let Some(sv) = self.services else {
            return Ok(());
        };
        match self.rt.block_on(sv.downstream.control().set(query)) {
            Ok(r) if r.status == 200 => Ok(()),
            Ok(r) => Err(format!(
                "status {}: {}",
                r.status,
                String::from_utf8_lossy(&r.body)
            )),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The downstream service's counts of the calls made since they were last reset (and resets
    /// them when `reset`); None without the service or when it does not answer.
    pub(super) fn downstream_stats(
        &self,
        reset: bool,
    ) -> Option<crate::results::record::DownstreamCalls> {
        let sv = self.services?;
        let c = self
            .rt
            .block_on(sv.downstream.control().counts(reset))
            .ok()?;
        Some(crate::results::record::DownstreamCalls {
            served: c.served,
            cancelled: c.cancelled,
        })
    }

    /// Applies the next of a scenario's mid-run events once its time has come (called every
    /// 250 ms while a run goes on) and records it in `fired`.
    pub(super) fn fire_due_event(
        &self,
        events: &[Event],
        fired: &mut Vec<EventRecord>,
        elapsed: Duration,
    ) {
        if let (Some(e), Some(_)) = (events.get(fired.len()), self.services) {
            if elapsed >= e.at {
                let applied = self.set_downstream(&e.downstream).is_ok();
                fired.push(EventRecord {
                    at_s: elapsed.as_secs_f64(),
                    downstream: e.downstream.clone(),
                    applied,
                });
            }
        }
    }

    /// Why the contender is gone, once it is: its exit, or on the contender host its exit or
    /// the host lost.
    pub(super) fn server_gone(&self, proc: Option<&mut Running>) -> Option<String> {
        match proc {
            Some(p) => p.exited().map(|status| p.why_exited(status)),
            None => self.remote.as_ref().and_then(|r| r.exited()),
        }
    }

    /// Runs the driver in its own thread while this thread samples the contender every
    /// 250 ms, updates the progress bar and watches for Ctrl-C and crashes.
    pub(super) fn drive(
        &self,
        target: &Target,
        load: &Load,
        mut proc: Option<&mut Running>,
        bar: &Progress,
        mut sampling: Option<(&dyn Sampling, &mut Vec<Sample>)>,
        faults: FaultLog<'_>,
    ) -> Result<(driver::Outcome, Option<String>)> {
        let FaultLog { events, fired } = faults;
        let live = Arc::new(Live::default());
        let cancel = Arc::new(AtomicBool::new(false));
        // The loop's clock is the load's: a warm-up that leads into the measured window opens
        // it on a whole second of the load's per-second histograms.
        let cfg = self.driver_config();
        let t0 = cfg.start.unwrap_or_else(Instant::now);
        let (t, l, lv, c) = (target.clone(), load.clone(), live.clone(), cancel.clone());
        let fleet = self.fleet;
        std::thread::scope(|scope| {
            let handle = scope.spawn(move || match fleet {
                None => driver::run(&t, &l, &cfg, lv, c).map(|o| (o, Vec::new())),
                Some(f) => drive_from_hosts(f, &t, &l, lv, c),
            });
            let (mut crash, mut tick) = (None, 0u32);
            let mut sec = Seconds {
                start: live.snapshot(),
                p99: None,
                over: 0,
            };
            loop {
                // A sample every tick; the live line shows its thread count.
                let threads = sampling.as_mut().map(|(sampler, samples)| {
                    samples.push(sampler.sample());
                    samples.last().map_or(0, |s| s.threads)
                });
                if tick % 4 == 3 {
                    let cpu = sampling
                        .as_ref()
                        .and_then(|(_, samples)| samples.last())
                        .map(|s| (s.cpu_user_s + s.cpu_sys_s, s.jit_cpu_s));
                    self.each_second(&mut sec, &live, cpu, t0.elapsed(), &cancel);
                }
                bar.update(
                    live.ok.load(Ordering::Relaxed),
                    live.errors.load(Ordering::Relaxed),
                    load.profile.target_at(t0.elapsed()),
                    t0.elapsed(),
                    sec.p99,
                    threads,
                );
                self.fire_due_event(events, fired, t0.elapsed());
                self.open_window(t0.elapsed(), bar);
                if interrupt::stopped() {
                    cancel.store(true, Ordering::SeqCst);
                }
                if let Some(why) = self.server_gone(proc.as_deref_mut()) {
                    crash.get_or_insert(why);
                    live.server_gone();
                    cancel.store(true, Ordering::SeqCst);
                }
                if handle.is_finished() {
                    break;
                }
                tick += 1;
                sleep_until(t0 + crate::sampler::SAMPLE_EVERY * tick, || {
                    handle.is_finished()
                });
            }
            // The last sample renews every reading, so counts over the run end where the run ended.
            if let Some((sampler, samples)) = sampling.as_mut() {
                samples.push(sampler.sample_full());
            }
            let (outcome, shares) = handle
                .join()
                .map_err(|_| anyhow::anyhow!("the driver thread panicked"))??;
            *self.host_shares.borrow_mut() = shares;
            Ok((outcome, crash))
        })
    }
}

/// Sleeps until `next`, in steps of at most 10 ms, or until `done`.
fn sleep_until(next: Instant, done: impl Fn() -> bool) {
    while Instant::now() < next && !done() {
        std::thread::sleep(
            Duration::from_millis(10).min(next.saturating_duration_since(Instant::now())),
        );
    }
}

/// What the watch keeps from one second to the next.
struct Seconds {
    /// The live counts when this second began: the live line shows the p99 of the last
    /// second's answers.
    start: Vec<u64>,
    p99: Option<Duration>,
    /// Seconds in a row the p99 stayed above a capacity probe's give-up level.
    over: u32,
}

impl RunCtx<'_> {
    /// Once a second: the live p99, the warm-up's settle check (it may end the warm-up), and
    /// a capacity probe's give-up rule (it may cancel the run).
    fn each_second(
        &self,
        sec: &mut Seconds,
        live: &Live,
        cpu: Option<(f64, Option<f64>)>,
        elapsed: Duration,
        cancel: &AtomicBool,
    ) {
        sec.p99 = live.p99_since(&sec.start);
        sec.start = live.snapshot();
        // Once a measured window is decided, the warm-up's curve and drifts end there.
        let watching = self
            .settle
            .borrow()
            .as_ref()
            .is_some_and(|st| st.lead.as_ref().is_none_or(|l| l.from.is_none()));
        if let Some(settle) = self.settle.borrow_mut().as_mut().filter(|_| watching) {
            let ok = live.ok.load(Ordering::Relaxed);
            let now = crate::observe::warmup::Totals {
                answers: ok + live.errors.load(Ordering::Relaxed),
                ok,
                ok_latency_us: live.latency_us.load(Ordering::Relaxed),
                cpu_s: cpu.map(|c| c.0),
                jit_cpu_s: cpu.and_then(|c| c.1),
            };
            let settled = settle.second(elapsed, now);
            let max = settle.max;
            let curve = settle.curve();
            match settle.lead.as_mut() {
                None if settled => live.finish_early(),
                Some(lead) if lead.from.is_none() && (settled || elapsed >= max) => {
                    let due_at = *lead.due_at.get_or_insert(elapsed);
                    if self.profile_ready(elapsed.saturating_sub(due_at)) {
                        live.end_at(lead.decide(elapsed, &curve));
                    }
                }
                _ => {}
            }
        }
        self.capacity_give_up(sec, cancel);
    }

    /// A capacity probe's give-up rule: the live p99 above its level too long cancels the run.
    fn capacity_give_up(&self, sec: &mut Seconds, cancel: &AtomicBool) {
        if let Some(limit) = self.abort_p99_ms {
            let above = sec.p99.is_some_and(|p| p.as_secs_f64() * 1000.0 > limit);
            sec.over = if above { sec.over + 1 } else { 0 };
            if sec.over >= super::kinds::capacity::ABORT_AFTER_S {
                self.gave_up.set(true);
                cancel.store(true, Ordering::SeqCst);
            }
        }
    }
}

impl RunCtx<'_> {
    /// The driver's threads and CPUs, and a start 20 ms from now that the loop beside the
    /// load keeps its clock by.
    fn driver_config(&self) -> DriverConfig {
        DriverConfig {
            threads: self.plan.driver_threads,
            cpus: self.plan.driver_cpus.clone(),
            start: Some(Instant::now() + Duration::from_millis(20)),
        }
    }

    /// When a warm-up leads into the measured window and the window opens now: the
    /// downstream's counts start from zero and the machine's steal is read, as a separate
    /// measured load would do at its start. Once the window's second and length are known, the
    /// progress bar ends where the load does.
    fn open_window(&self, elapsed: Duration, bar: &Progress) {
        let mut settle = self.settle.borrow_mut();
        let Some(lead) = settle.as_mut().and_then(|s| s.lead.as_mut()) else {
            return;
        };
        if let Some(from) = lead.from {
            bar.set_total(Duration::from_secs(from) + lead.length);
        }
        if lead.opening(elapsed) {
            lead.steal_at_open = crate::sampler::cpu_steal();
            lead.counted = lead.count_downstream && self.downstream_stats(true).is_some();
        }
    }
}

/// The load driven from the inventory's load hosts, each with its share, merged.
fn drive_from_hosts(
    fleet: &Fleet,
    target: &Target,
    load: &Load,
    live: Arc<Live>,
    cancel: Arc<AtomicBool>,
) -> Result<(driver::Outcome, Vec<HostShare>)> {
    let hosts: Vec<LoadHost<'_>> = fleet
        .load
        .iter()
        .map(|h| LoadHost {
            ssh: &h.ssh,
            binary: h.binary.clone(),
            cpus: h.cpus.clone(),
            threads: Fleet::threads(h),
            clock_offset_s: h.clock_offset_s,
        })
        .collect();
    let job = Job {
        host: String::new(),
        addr: target.addr,
        path: target.path.clone(),
        mix: target.entries.to_vec(),
        close: load.connection_close,
        tag: target.tag.clone(),
        load: load.clone(),
        threads: 0,
        cpus: Vec::new(),
        start_unix: 0.0,
    };
    load_hosts::run(&hosts, &job, live, cancel)
}
