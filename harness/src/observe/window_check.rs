//! The measured window judged again once the run is over, by the steady-state rule of
//! observe/window_judge.rs (throughput, mean latency, CPU per answer), so that a run measured
//! on a plateau of a JIT's climb, or over a window too short for its noise, is not called
//! steady.

use crate::observe::window_judge::check_run;
use crate::plan::{Profile, Scenario};
use crate::results::record::Run;
use crate::results::warmup::{WindowCheck, PIPELINE_STEP_S};

/// The measured window judged too, once the run is over: only a window that is itself flat
/// shows the contender had settled (a warm-up can stop on a plateau of its climb). A run that
/// is not at steady state says why in its warnings.
pub fn judge_measured_window(r: &mut Run, s: &Scenario) {
    let Some(w) = r.warmup.as_ref() else {
        return;
    };
    let window = (w.watched() && constant_load(s)).then(|| check_run(r, 1));
    // An HTTP run's unsettled warm-up is told nowhere else, so any reason is told here.
    keep_window(r, window, true);
}

/// Whether the scenario's measured load is meant to be flat (one level, no ramp, no mid-run
/// event), so that a trend in its seconds can only be the contender's.
pub fn constant_load(s: &Scenario) -> bool {
    let flat = match s.load.profile {
        Profile::Closed {
            step_users, steps, ..
        } => steps == 0 || step_users == 0,
        Profile::Open { rate, ramp_to, .. } => rate == ramp_to,
    };
    flat && s.events.is_empty()
}

/// A pipeline's measured window judged in steps of PIPELINE_STEP_S (a pipeline delivers a
/// polled batch at a time, so single seconds swing by a fifth): records, their mean latency
/// and CPU per record. Not judged where the scenario's load is not flat, or the run has no
/// warm-up record.
pub fn judge_pipeline_window(r: &mut Run, s: &Scenario) {
    if constant_load(s) && r.warmup.is_some() {
        let window = check_run(r, PIPELINE_STEP_S as u32);
        keep_window(r, Some(window), false);
    }
}

/// `window` kept in the run's warm-up record; where the run is not at steady state its
/// warnings say why: for any reason when `warm_up_too`, else only for a window that was not
/// steady.
fn keep_window(r: &mut Run, window: Option<WindowCheck>, warm_up_too: bool) {
    let Some(w) = r.warmup.as_mut() else {
        return;
    };
    w.window = window;
    let window_unsteady = w.window.as_ref().is_some_and(|c| !c.steady);
    let why = if warm_up_too || window_unsteady {
        w.unsettled_reason()
    } else {
        None
    };
    if let Some(why) = why.or_else(|| w.cpu_moved_note()) {
        eprintln!("  warning: {why}");
        r.driver.warnings.push(why);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::summary::{IntervalRow, Latency};
    use crate::observe::window_judge::window_steps;
    use crate::results::test_support::blank_run;
    use crate::results::warmup::{WarmupRecord, RULE_ORDERED_AT_END};
    use crate::sampler::Sample;

    /// The pipeline's window judged in steps of `step` seconds, as judge_pipeline_window does.
    fn judge_in_steps(r: &mut Run, step: u32) {
        let window = check_run(r, step);
        keep_window(r, Some(window), false);
    }

    /// A pipeline's 60 s measured window: 4,000 records a second in bursts (each five seconds
    /// hold the same five swings, so a step's sum is flat), 300 ms each, and the contender's
    /// CPU sampled every 250 ms at `cpu_per_s(t)` CPU seconds in second t; its warm-up settled.
    fn pipeline_window(cpu_per_s: impl Fn(u32) -> f64) -> Run {
        let mut r = blank_run("pipeline-reactive", "rate-4000", 1);
        r.summary.duration_s = 60.0;
        let swings = [1.15, 0.85, 1.1, 0.9, 1.0];
        r.intervals = (0..63)
            .map(|t| IntervalRow {
                t,
                ok: (4000.0 * swings[t as usize % 5]) as u64,
                latency: Latency {
                    mean: 300.0,
                    ..Latency::default()
                },
                drain: t >= 60,
                ..IntervalRow::default()
            })
            .collect();
        let mut cpu = 0.0;
        for q in 0..=61 * 4 {
            let t = q as f64 / 4.0;
            r.resources.samples.push(Sample {
                t,
                cpu_user_s: cpu,
                ..Sample::default()
            });
            cpu += cpu_per_s(t as u32) * swings[t as usize % 5] / 4.0;
        }
        r.warmup = Some(WarmupRecord {
            seconds: 150.0,
            settled: true,
            min_s: 150.0,
            max_s: 150.0,
            band_pct: 5.0,
            rule: RULE_ORDERED_AT_END.into(),
            ..WarmupRecord::default()
        });
        r
    }

    #[test]
    fn a_pipeline_window_is_judged_in_steps_and_a_climb_in_it_is_not_steady() {
        // Bursty seconds, flat steps: steady, judged over twelve steps of 5 s (60 s).
        let mut flat = pipeline_window(|_| 0.5);
        let steps = window_steps(&flat, 5);
        assert_eq!(steps.len(), 12, "{steps:?}");
        assert!(
            steps
                .iter()
                .all(|s| s.answers == 20_000.0 && s.mean_ms == 300.0),
            "{steps:?}"
        );
        judge_in_steps(&mut flat, 5);
        let w = flat.warmup.as_ref().unwrap();
        let check = w.window.as_ref().unwrap();
        assert!(check.steady && !w.unsettled(), "{check:?}");
        assert_eq!(check.seconds, 60);
        assert!(
            flat.driver.warnings.is_empty(),
            "{:?}",
            flat.driver.warnings
        );
        // CPU per record climbing 3% a step (a third over the window) while records and their
        // latency stay flat: the run is at steady state, its CPU per record out of the verdicts.
        let mut climbing = pipeline_window(|t| 0.5 * (1.0 + 0.03 * f64::from(t / 5)));
        judge_in_steps(&mut climbing, 5);
        let w = climbing.warmup.as_ref().unwrap();
        assert!(!w.unsettled() && w.cpu_moved(), "{w:?}");
        assert_eq!(w.window.as_ref().unwrap().trending, [false, false, true]);
        let warning = climbing.driver.warnings.join(" ");
        assert!(
            warning.starts_with("CPU per request moved")
                && warning.contains("(60 s;")
                && warning.contains("enters no verdict"),
            "{warning}"
        );
    }

    /// An HTTP run's 12 s window at 1,000 answers a second of 100 ms, its CPU 0.2 s a second
    /// (second `gap` missing from the rows, where given), after a warm-up watched second by
    /// second that `settled` or reached its cap.
    fn http_window(settled: bool, gap: Option<u32>) -> Run {
        let mut r = blank_run("go", "delay", 1);
        r.summary.duration_s = 12.0;
        r.intervals = (0..13)
            .filter(|t| Some(*t) != gap)
            .map(|t| IntervalRow {
                t,
                ok: 1000,
                latency: Latency {
                    mean: 100.0,
                    ..Latency::default()
                },
                drain: t >= 12,
                ..IntervalRow::default()
            })
            .collect();
        r.resources.samples = (0..=52)
            .map(|q| Sample {
                t: q as f64 / 4.0,
                cpu_user_s: 0.05 * q as f64,
                ..Sample::default()
            })
            .collect();
        r.warmup = Some(WarmupRecord {
            seconds: if settled { 30.0 } else { 120.0 },
            settled,
            min_s: 10.0,
            max_s: 120.0,
            band_pct: 5.0,
            rule: "trend".into(),
            ..WarmupRecord::default()
        });
        r
    }

    #[test]
    fn an_http_window_is_judged_second_by_second_and_its_unsettled_warm_up_is_told_once() {
        let mut r = http_window(true, None);
        let seconds = window_steps(&r, 1);
        assert_eq!(seconds.len(), 12);
        assert!(
            seconds
                .iter()
                .all(|s| s.answers == 1000.0 && s.mean_ms == 100.0),
            "{seconds:?}"
        );
        assert!((seconds[0].cpu_s - 0.2).abs() < 1e-9, "{seconds:?}");
        let check = check_run(&r, 1);
        assert!(check.steady && check.seconds == 12, "{check:?}");
        keep_window(&mut r, Some(check.clone()), true);
        assert!(r.driver.warnings.is_empty(), "{:?}", r.driver.warnings);

        // A warm-up that reached its cap is told by the HTTP check even when its window is
        // flat; the pipeline check leaves that warning to the pipeline's warm-up.
        let mut capped = http_window(false, None);
        keep_window(&mut capped, Some(check.clone()), true);
        assert_eq!(
            capped.driver.warnings.len(),
            1,
            "{:?}",
            capped.driver.warnings
        );
        let mut capped_pipeline = http_window(false, None);
        keep_window(&mut capped_pipeline, Some(check), false);
        assert!(capped_pipeline.driver.warnings.is_empty());

        // A second the driver has no row for answered nothing: it is judged as silent, not
        // skipped (skipping it would hide a stall).
        let gap = window_steps(&http_window(true, Some(5)), 1);
        assert_eq!(gap.len(), 12);
        assert_eq!(gap[5].answers, 0.0);
        assert!(gap[5].mean_ms.is_nan(), "{:?}", gap[5]);
    }
}
