//! A warm-up that leads into the measured window without a break: one load (the same users on
//! the same connections, or one unbroken arrival schedule) runs until the contender has
//! settled (or the warm-up's maximum), and the measured window is the next `duration` seconds
//! of that same load, from a whole second on. A separate measured load would open new
//! connections and start its users from nothing, so its first second would be short (and at
//! a 1 s wait, empty). Used for every flat local load, profiled or not (the window opens
//! once the profiler has started); stepped and ramped loads, load hosts and capacity probes keep a
//! warm-up load of their own (run/kinds/http.rs).

use super::http::Window;
use super::scenario_load::{scenario_target, warmup_load};
use crate::observe::steady_rule::MAX_WINDOW_S;
use crate::observe::warmup::{Lead, Settle};
use crate::observe::window_check::constant_load;
use crate::plan::Scenario;
use crate::results::record::Run;
use crate::results::warmup::WarmupRecord;
use crate::run::context::{failed_run, new_run, RunCtx};
use crate::run::watch::FaultLog;
use crate::sampler::Sample;
use crate::services::contender::Running;
use crate::util::progress::Progress;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

/// Slack past the warm-up's maximum and the window: the window opens at the whole second
/// after the contender settled, so the load's first end must leave room for it.
const SLACK: Duration = Duration::from_secs(2);

impl RunCtx<'_> {
    /// Whether scenario `s` is measured as a slice of its warm-up's load: a flat load, driven
    /// from here, with a warm-up that watches for steady state, and not a capacity probe
    /// (whose give-up rule may end its load during the warm-up).
    pub(in crate::run) fn leads_in(&self, s: &Scenario) -> bool {
        let detect = !s.warmup.is_zero() && s.warmup > self.plan.warmup_min.min(s.warmup);
        detect && constant_load(s) && self.fleet.is_none() && self.abort_p99_ms.is_none()
    }

    /// Measured windows per start for `name` in `s`: the plan's `windows`, or with "auto" the
    /// number the starts so far make best (stats/windows.rs), FIRST_WINDOWS until they tell.
    fn windows_for(&self, name: &str, s: &Scenario) -> u32 {
        use crate::stats::windows::FIRST_WINDOWS;
        if !self.plan.windows_auto {
            return self.plan.windows.max(1);
        }
        self.res
            .windows
            .iter()
            .find(|c| c.contender == name && c.scenario == s.name)
            .map_or(FIRST_WINDOWS, |c| c.best_windows)
    }

    /// Warm-up and measured window of one flat load; None when stopped (Ctrl-C) before the
    /// window opened.
    pub(in crate::run) fn measure_led(
        &mut self,
        name: &str,
        mut proc: Option<&mut Running>,
        addr: SocketAddr,
        s: &Scenario,
        run: u32,
    ) -> Option<Run> {
        // `windows = k`: k windows of the scenario's duration in this one start.
        let length = s.load.profile.duration() * self.windows_for(name, s);
        // A profiled run's window may wait for its profiler to start.
        let wait = match self.profiler {
            Some(_) => super::profiling::PROFILER_WAIT + Duration::from_secs(1),
            None => Duration::ZERO,
        };
        // The load runs long enough for the longest window the warm-up's noise may ask for; it
        // ends once the window has (Lead::decide).
        let stretch = self.plan.window_auto && self.profiler.is_none();
        let longest = if stretch {
            length.max(Duration::from_secs(MAX_WINDOW_S as u64))
        } else {
            length
        };
        let load = warmup_load(&s.load, s.warmup + longest + SLACK + wait);
        let target = scenario_target(
            addr,
            s,
            s.load.connection_close,
            &format!("iobound {name} {} r{run} ", s.name),
        );
        let bar = Progress::new(
            &format!("{name} {} warm-up, then measured", s.name),
            s.warmup + length,
        );
        let downstream_port = self.downstream_port(s);
        let mut settle = Settle::new(
            self.plan.warmup_min.min(s.warmup),
            s.warmup,
            self.plan.warmup_band,
        );
        settle.lead = Some(Lead {
            length,
            stretch,
            count_downstream: downstream_port.is_some(),
            ..Lead::default()
        });
        *self.settle.borrow_mut() = Some(settle);
        let sampler = self.sampler(proc.as_deref(), downstream_port);
        self.profile_ahead(name, proc.as_deref(), s, run);
        let mut samples = Vec::new();
        let wall_at_start = SystemTime::now();
        // The load's clock starts 20 ms after the drive is called (RunCtx::drive).
        self.warm_started
            .set(Some(std::time::Instant::now() + Duration::from_millis(20)));
        let outcome = self.drive(
            &target,
            &load,
            proc.as_deref_mut(),
            &bar,
            sampler.as_deref().map(|sm| (sm, &mut samples)),
            FaultLog {
                events: &[],
                fired: &mut Vec::new(),
            },
        );
        bar.finish();
        // Stopped with the load (its profiler started before the window, if the warm-up ended).
        let profile = self.end_profile(self.profile_started_ahead());
        let settle = self.settle.borrow_mut().take()?;
        let lead = settle.lead.clone().unwrap_or_default();
        let Some(from) = lead.from.filter(|_| lead.opened) else {
            return self.never_opened(name, s, run, outcome);
        };
        let warm = warmup_record(&settle, from, self.plan.warmup_band);
        eprintln!("[{name}] {}", warm_words(&warm));
        // The load's clock starts 20 ms after the drive is called (RunCtx::drive).
        let wall_start = wall_at_start + Duration::from_millis(20) + Duration::from_secs(from);
        let outcome = outcome.map(|(o, crash)| (o.from_second(from as usize), crash));
        let mut r = new_run(name, s, run);
        r.started_at = crate::util::clock::rfc3339(wall_start);
        if lead.counted {
            r.downstream_calls = self.downstream_stats(false);
        }
        let window = Window {
            samples: window_samples(samples, from as f64),
            steal_before: lead.steal_at_open,
            fired: Vec::new(),
            wall_start,
            warm_left: None,
        };
        let mut r = self.complete(r, outcome, window, &target, proc, s);
        super::profiling::keep_profile(&mut r, profile);
        r.warmup = Some(warm);
        Some(r)
    }

    /// The load ended before its measured window opened: stopped (nothing to keep), or the
    /// contender or the driver failed during the warm-up.
    fn never_opened(
        &self,
        name: &str,
        s: &Scenario,
        run: u32,
        outcome: anyhow::Result<(crate::driver::Outcome, Option<String>)>,
    ) -> Option<Run> {
        let why = match outcome {
            Err(e) => format!("warm-up failed: {e:#}"),
            Ok((_, Some(crash))) => format!("the contender exited during the warm-up ({crash})"),
            Ok(_) if crate::util::interrupt::stopped() => return None,
            Ok(_) => "the load ended before its measured window opened".to_string(),
        };
        Some(failed_run(name, s, run, &why))
    }
}

/// The warm-up's record: it lasted until the window opened.
fn warmup_record(settle: &Settle, from: u64, band: f64) -> WarmupRecord {
    WarmupRecord {
        seconds: from as f64,
        settled: settle.settled_at.is_some(),
        min_s: settle.min.as_secs_f64(),
        max_s: settle.max.as_secs_f64(),
        band_pct: band * 100.0,
        rule: "trend".into(),
        curve: settle.curve(),
        drift_pct: settle.drifts(),
        window: None,
        jit_curve: settle.jit_curve(),
        end_check: None,
        steps: Vec::new(),
    }
}

fn warm_words(w: &WarmupRecord) -> String {
    if w.settled {
        format!(
            "warm-up: settled; measured from {:.0} s of the same load",
            w.seconds
        )
    } else {
        format!(
            "warm-up: not settled within {:.0} s; measured from {:.0} s of the same load",
            w.max_s, w.seconds
        )
    }
}

/// The samples of the measured window, with times from its opening at `from` s: the sample
/// nearest the opening (the loop samples on the load's quarter seconds) becomes its first, so
/// that CPU and context switches are counted from there.
fn window_samples(samples: Vec<Sample>, from: f64) -> Vec<Sample> {
    let first = samples
        .iter()
        .rposition(|s| s.t <= from + 0.125)
        .unwrap_or(0);
    samples
        .into_iter()
        .skip(first)
        .map(|mut s| {
            s.t = (s.t - from).max(0.0);
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_windows_samples_start_at_its_opening() {
        let samples: Vec<Sample> = (0..20)
            .map(|i| Sample {
                t: i as f64 * 0.25 + 0.003,
                cpu_user_s: i as f64 * 0.1,
                ..Sample::default()
            })
            .collect();
        let w = window_samples(samples, 3.0);
        assert_eq!(w.len(), 8);
        assert!((w[0].t - 0.003).abs() < 1e-9, "{}", w[0].t);
        assert!((w[0].cpu_user_s - 1.2).abs() < 1e-9);
    }
}
