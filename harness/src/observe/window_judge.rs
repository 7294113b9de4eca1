//! A measured window judged by the steady-state rule (`steady_rule`): its steps (answers,
//! their mean latency, the contender's CPU seconds) read from a run's interval rows and
//! samples, judged at the shortest step length at which the window can be judged at all, and
//! the outcome kept as the run's `WindowCheck`. The run stage calls it once a run is measured;
//! `iobound report --rejudge` calls it again on stored runs, so every committed run is judged
//! by today's rule.

use super::steady_rule::{
    group_sums, judge_cpu, judge_figure, needed_steps, FigureCheck, LEAD_S, MAX_STEPS, MIN_STEPS,
};
use crate::observe::settle_rule::{longest_silence, stalled};
use crate::results::record::Run;
use crate::results::warmup::{WindowCheck, PIPELINE_STEP_S};
use crate::sampler::Sample;

use crate::results::warmup::RULE_CHANGEPOINT;

/// One step of a window: its answers (ok or not), their mean latency (ms; NaN without any
/// ok answer) and the contender's CPU seconds over it (NaN where not sampled).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    pub answers: f64,
    pub mean_ms: f64,
    pub cpu_s: f64,
}

/// The window of `steps` (each `step_s` seconds) judged, its throughput's noise read with
/// `lead` (answers per step just before the window, the same load) too. Where the figures'
/// noise leaves the window too short at this step length, longer steps are tried (a pool that
/// answers in waves is flat over two seconds and wild over one); where none will do, the
/// window is judged at its shortest steps (seconds, or as many summed as keep it within
/// MAX_STEPS), flagged if it moved there and, failing that, says how long it would need to be.
pub fn judge_steps(steps: &[Step], lead: &[f64], step_s: usize, band: f64) -> WindowCheck {
    let seconds: Vec<(f64, f64, f64)> = steps
        .iter()
        .map(|s| (s.answers, s.mean_ms, s.cpu_s))
        .collect();
    let silent_s = longest_silence(&seconds);
    let stalled = stalled(&seconds, silent_s);
    let judgeable = |f: &[Option<FigureCheck>; 3]| {
        f[0].is_some() && f[..2].iter().flatten().all(|c| c.judgeable)
    };
    let shortest = steps.len().div_ceil(MAX_STEPS).max(1);
    let at = |k: usize| figures(&grouped(steps, k), &group_sums(lead, k), band);
    let chosen = (shortest..=(steps.len() / MIN_STEPS).max(shortest))
        .map(|k| (k, at(k)))
        .find(|(_, f)| judgeable(f));
    let (k, figs) = chosen.unwrap_or_else(|| (shortest, at(shortest)));
    let moving: Vec<bool> = figs.iter().map(|f| f.is_some_and(|c| c.moving)).collect();
    // Throughput and mean latency decide whether the window is steady. CPU per answer moving
    // alone is kept in `trending` and takes the run out of the CPU verdicts only
    // (WarmupRecord::cpu_moved): at a small CPU share it moves with the machine's accounting
    // while what the contender serves stays flat.
    let served_moved = moving[..2].iter().any(|m| *m);
    let needs_s = (!judgeable(&figs) && !served_moved).then(|| {
        let steps_needed = figs[..2]
            .iter()
            .flatten()
            .map(|c| needed_steps(c.noise))
            .max()
            .unwrap_or(MIN_STEPS);
        steps_needed.max(MIN_STEPS) * k * step_s
    });
    let pct = |v: f64| Some((v * 1000.0).round() / 10.0).filter(|v| v.is_finite());
    WindowCheck {
        seconds: steps.len() * step_s,
        drift_pct: figs
            .iter()
            .map(|f| f.and_then(|c| pct(c.movement)))
            .collect(),
        trending: moving.clone(),
        silent_s: silent_s * step_s,
        stalled,
        steady: !stalled && !served_moved && needs_s.is_none(),
        rule: RULE_CHANGEPOINT.into(),
        step_s: k * step_s,
        noise_pct: figs.iter().map(|f| f.and_then(|c| pct(c.noise))).collect(),
        needs_s,
    }
}

/// Throughput, mean latency and CPU per answer of `steps` judged.
fn figures(steps: &[Step], lead: &[f64], band: f64) -> [Option<FigureCheck>; 3] {
    let answers: Vec<f64> = steps.iter().map(|s| s.answers).collect();
    let latency: Vec<f64> = steps.iter().map(|s| s.mean_ms).collect();
    let cpu: Vec<f64> = steps.iter().map(|s| s.cpu_s).collect();
    [
        judge_figure(lead, &answers, band),
        judge_figure(&[], &latency, band),
        judge_cpu(&cpu, &answers, band),
    ]
}

/// `steps` in groups of `k` (a last partial group left out): answers and CPU summed, mean
/// latency weighted by the answers of each step that has one.
fn grouped(steps: &[Step], k: usize) -> Vec<Step> {
    if k == 1 {
        return steps.to_vec();
    }
    steps
        .chunks_exact(k)
        .map(|g| {
            let answers = g.iter().map(|s| s.answers).sum();
            let timed: Vec<&Step> = g.iter().filter(|s| s.mean_ms.is_finite()).collect();
            let weight: f64 = timed.iter().map(|s| s.answers).sum();
            let mean_ms = if weight > 0.0 {
                timed.iter().map(|s| s.answers * s.mean_ms).sum::<f64>() / weight
            } else {
                f64::NAN
            };
            Step {
                answers,
                mean_ms,
                cpu_s: g.iter().map(|s| s.cpu_s).sum(),
            }
        })
        .collect()
}

/// The measured window of `r` judged, in steps of `step_s` seconds (1 for an HTTP run, whose
/// warm-up's last seconds lend the throughput's noise; PIPELINE_STEP_S for a pipeline's
/// batches, with no lead).
pub fn check_run(r: &Run, step_s: u32) -> WindowCheck {
    let band = r.warmup.as_ref().map_or(0.05, |w| w.band_pct / 100.0);
    let lead: Vec<f64> = match (&r.warmup, step_s) {
        (Some(w), 1) => w.curve[w.curve.len().saturating_sub(LEAD_S)..].to_vec(),
        _ => Vec::new(),
    };
    judge_steps(&window_steps(r, step_s), &lead, step_s as usize, band)
}

/// A stored run's measured window judged again by today's rule, where it was judged when the
/// run was measured (a window never judged, of a stepped load say, is left as it is).
pub fn rejudge_window(r: &mut Run) {
    if r.warmup.as_ref().is_some_and(|w| w.window.is_some()) && !r.intervals.is_empty() {
        let check = check_run(r, step_of(r));
        let Some(w) = r.warmup.as_mut() else {
            return;
        };
        w.window = Some(check);
        // The run's warning of an unsettled state is today's, not the one it was measured with.
        let why = w.unsettled_reason().or_else(|| w.cpu_moved_note());
        let warnings = &mut r.driver.warnings;
        warnings.retain(|x| !x.starts_with(UNSETTLED) && !x.starts_with(CPU_MOVED));
        warnings.extend(why);
    }
}

/// How every reason a run is not at steady state begins (WarmupRecord::unsettled_reason).
const UNSETTLED: &str = "not at steady state";

/// How the note of a window whose CPU per answer alone moved begins
/// (WarmupRecord::cpu_moved_note).
const CPU_MOVED: &str = "CPU per request moved";

/// The step length a stored run's window is judged in: a pipeline's (warm-up judged at its
/// end) in PIPELINE_STEP_S, an HTTP run's in seconds.
pub fn step_of(r: &Run) -> u32 {
    let at_end = r.warmup.as_ref().is_some_and(|w| w.judged_at_end());
    if at_end {
        PIPELINE_STEP_S as u32
    } else {
        1
    }
}

/// The measured window's whole steps of `step` seconds: each its answers (ok or not; a second
/// without a row counts as silent), their mean latency (weighted by the ok answers of each
/// second; NaN without any) and the contender's CPU seconds over the step (NaN where not
/// sampled).
pub fn window_steps(r: &Run, step: u32) -> Vec<Step> {
    let whole = r.summary.duration_s.floor() as u32;
    let samples = &r.resources.samples;
    (0..whole / step.max(1))
        .map(|k| {
            let (from, to) = (k * step, (k + 1) * step);
            let rows = r
                .intervals
                .iter()
                .filter(|row| !row.drain && (from..to).contains(&row.t));
            let (mut answers, mut ok, mut latency_sum) = (0.0, 0.0, 0.0);
            for row in rows {
                answers += (row.ok + row.errors) as f64;
                if row.ok > 0 && row.latency.mean > 0.0 {
                    ok += row.ok as f64;
                    latency_sum += row.ok as f64 * row.latency.mean;
                }
            }
            let mean_ms = if ok > 0.0 { latency_sum / ok } else { f64::NAN };
            let cpu_s = match (
                cpu_at(samples, f64::from(from)),
                cpu_at(samples, f64::from(to)),
            ) {
                (Some(a), Some(b)) => (b - a).max(0.0),
                _ => f64::NAN,
            };
            Step {
                answers,
                mean_ms,
                cpu_s,
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn steps_of(answers: &[f64]) -> Vec<Step> {
        answers
            .iter()
            .map(|a| Step {
                answers: *a,
                mean_ms: 100.0,
                cpu_s: f64::NAN,
            })
            .collect()
    }

    #[test]
    fn a_pool_answering_in_waves_is_judged_over_longer_steps() {
        // 1,000 users on a 1 s wait answered in alternating waves: wild second to second,
        // flat over two.
        let waves: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 1600.0 } else { 400.0 })
            .collect();
        let c = judge_steps(&steps_of(&waves), &[], 1, 0.05);
        assert!(c.steady, "{c:?}");
        assert_eq!(c.step_s, 2);
    }

    #[test]
    fn a_short_window_at_high_noise_is_too_short_and_says_what_it_needs() {
        let noisy = [
            19574.0, 20260.0, 24016.0, 23448.0, 21324.0, 22088.0, 25227.0, 19684.0,
        ];
        let c = judge_steps(&steps_of(&noisy), &[], 1, 0.05);
        assert!(!c.steady, "{c:?}");
        let needs = c.needs_s.expect("too short");
        assert!(needs > 8, "{c:?}");
        // Fewer steps than the rule judges: too short as well, never passed.
        let c = judge_steps(&steps_of(&[1000.0; 4]), &[], 1, 0.05);
        assert!(!c.steady && c.needs_s == Some(MIN_STEPS), "{c:?}");
    }

    #[test]
    fn cpu_per_answer_moving_alone_is_kept_not_made_unsteady() {
        // Flat answers and latency; the contender's CPU over the window's second half 30% above
        // its first (a small CPU share whose accounting moved with the machine).
        let steps: Vec<Step> = (0..20)
            .map(|i| Step {
                answers: 1000.0 + if i % 2 == 0 { 5.0 } else { -5.0 },
                mean_ms: 100.0,
                cpu_s: if i < 10 { 0.10 } else { 0.13 },
            })
            .collect();
        let c = judge_steps(&steps, &[], 1, 0.05);
        assert!(c.steady, "{c:?}");
        assert_eq!(c.trending, vec![false, false, true], "{c:?}");
        // The same move in the answers themselves is not steady.
        let moved: Vec<Step> = steps
            .iter()
            .enumerate()
            .map(|(i, s)| Step {
                answers: if i < 10 { 1000.0 } else { 1300.0 },
                ..*s
            })
            .collect();
        assert!(!judge_steps(&moved, &[], 1, 0.05).steady);
    }
}
