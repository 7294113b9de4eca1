//! The measured window judged again once the run is over: its whole seconds (throughput, mean
//! latency, CPU per answer) by the warm-up's rule, so that a run measured on a plateau of a
//! JIT's climb is not called steady (see `warmup::judge_window`).

use super::warmup::MIN_CPU_S;
use crate::plan::{Profile, Scenario};
use crate::results::record::Run;
use crate::results::warmup::judge_window;
use crate::sampler::Sample;

/// The measured window judged too, once the run is over: only a window that is itself flat
/// shows the contender had settled (a warm-up can stop on a plateau of its climb). A run that
/// is not at steady state says why in its warnings.
pub(in crate::run) fn judge_measured_window(r: &mut Run, s: &Scenario) {
    let Some(w) = r.warmup.as_ref() else {
        return;
    };
    let window = (w.watched() && constant_load(s))
        .then(|| judge_window(&window_seconds(r), w.band_pct / 100.0))
        .flatten();
    let Some(w) = r.warmup.as_mut() else {
        return;
    };
    w.window = window;
    if let Some(why) = w.unsettled_reason() {
        eprintln!("  warning: {why}");
        r.driver.warnings.push(why);
    }
}

/// Whether the scenario's measured load is meant to be flat (one level, no ramp, no mid-run
/// event), so that a trend in its seconds can only be the contender's.
pub(in crate::run) fn constant_load(s: &Scenario) -> bool {
    let flat = match s.load.profile {
        Profile::Closed {
            step_users, steps, ..
        } => steps == 0 || step_users == 0,
        Profile::Open { rate, ramp_to, .. } => rate == ramp_to,
    };
    flat && s.events.is_empty()
}

/// The measured window's seconds as the window check reads them: answers (ok or not), the
/// ok answers' mean latency (NaN in a second without any) and the contender's CPU per answer
/// (NaN where not sampled, or below MIN_CPU_S that second), for each whole second of the
/// measured phase (the partial last second and the drain left out).
pub fn window_seconds(r: &Run) -> Vec<(f64, f64, f64)> {
    let whole = r.summary.duration_s.floor() as u32;
    let samples = &r.resources.samples;
    r.intervals
        .iter()
        .filter(|row| !row.drain && row.t < whole)
        .map(|row| {
            let answers = (row.ok + row.errors) as f64;
            let mean_ms = if row.ok > 0 {
                row.latency.mean
            } else {
                f64::NAN
            };
            let t = f64::from(row.t);
            let cpu = match (cpu_at(samples, t), cpu_at(samples, t + 1.0)) {
                (Some(a), Some(b)) if answers > 0.0 && b - a >= MIN_CPU_S => (b - a) / answers,
                _ => f64::NAN,
            };
            (answers, mean_ms, cpu)
        })
        .collect()
}

/// The contender's cumulative CPU seconds at `t` s into the measured phase, interpolated
/// between the samples around it; None outside the samples.
fn cpu_at(samples: &[Sample], t: f64) -> Option<f64> {
    let cpu = |s: &Sample| s.cpu_user_s + s.cpu_sys_s;
    let after = samples.iter().position(|s| s.t >= t)?;
    let b = &samples[after];
    if after == 0 {
        return (b.t - t < 0.05).then(|| cpu(b));
    }
    let a = &samples[after - 1];
    let span = b.t - a.t;
    if span <= 0.0 {
        return Some(cpu(b));
    }
    Some(cpu(a) + (cpu(b) - cpu(a)) * (t - a.t) / span)
}
