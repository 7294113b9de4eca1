//! The settling rule a warm-up is watched by (`steady`: no figure drifts beyond the band over
//! the last seconds, no silence longer than the answers wait; `compiler_idle`: a JIT's
//! compiler threads nearly idle), and the ordered-trend rule older measured windows were judged
//! by (`judge_window`; today's windows are judged by `window_judge`). What they decide is
//! stored in results/warmup.rs's records.
//!
//! A drift is the Theil-Sen slope (the median of the slopes between every pair of seconds,
//! which a few odd seconds do not move) projected over the window, relative to the window's
//! median. A fixed band (largest over smallest second) fails runtimes with no JIT at all on a
//! noisy two-core machine; a trend does not come from noise.

use crate::results::warmup::{WarmupRecord, WindowCheck, RULE_ORDERED_TREND, SETTLE_WINDOW_S};

/// Fewest whole measured seconds the window check judges: with fewer, one odd second is a
/// trend (and `relative_drift` needs at least three).
pub const MIN_WINDOW_S: usize = 5;

/// How ordered a window's drift must be to count: the Mann-Kendall p-value at most this.
pub const WINDOW_TREND_P: f64 = 0.05;

/// The measured window's check: none of the seconds' figures (answers, mean latency, CPU per
/// answer; NaN where not judged) may trend over the whole window, that is drift by more than
/// `band` by the Theil-Sen rule the warm-up uses *and* climb or fall steadily (Mann-Kendall,
/// p <= WINDOW_TREND_P). The warm-up can afford to wait for a drift within the band; the
/// window cannot be measured again, and over 8-10 s the per-second figures of a CPU-bound
/// load on two shared cores wander by a fifth without any trend (every window of a first
/// demo on this machine drifted beyond 5% by Theil-Sen alone). A climb after a plateau is
/// ordered; noise is not. None when the window is too short to judge.
pub fn judge_window(seconds: &[(f64, f64, f64)], band: f64) -> Option<WindowCheck> {
    if seconds.len() < MIN_WINDOW_S {
        return None;
    }
    let figure = |f: fn(&(f64, f64, f64)) -> f64| {
        let v: Vec<f64> = seconds.iter().map(f).collect();
        let ordered = crate::util::trend::mann_kendall_p(&v) <= WINDOW_TREND_P;
        (relative_drift(&v), ordered)
    };
    let judged = [figure(|s| s.0), figure(|s| s.1), figure(|s| s.2)];
    let drifts: Vec<Option<f64>> = judged.iter().map(|j| j.0).collect();
    let trending: Vec<bool> = judged
        .iter()
        .map(|(d, ordered)| *ordered && d.is_some_and(|d| d > band))
        .collect();
    let silent_s = longest_silence(seconds);
    let stalled = stalled(seconds, silent_s);
    let steady = !stalled && !trending.iter().any(|t| *t);
    Some(WindowCheck {
        seconds: seconds.len(),
        trending,
        silent_s,
        stalled,
        drift_pct: drifts
            .iter()
            .map(|d| {
                d.filter(|d| d.is_finite())
                    .map(|d| (d * 1000.0).round() / 10.0)
            })
            .collect(),
        steady,
        rule: RULE_ORDERED_TREND.into(),
        step_s: 0,
        noise_pct: Vec::new(),
        needs_s: None,
    })
}

/// How far `values` drift over their span, relative to their median: the Theil-Sen slope
/// times the span, over the median (0.05 = 5%). NaN values are left out; None when fewer
/// than half the values are numbers (nothing to judge).
pub fn relative_drift(values: &[f64]) -> Option<f64> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() * 2 < values.len() || v.len() < 3 {
        return None;
    }
    let slope = crate::util::trend::theil_sen_slope(&v)?;
    let level = crate::util::numbers::median(v.clone());
    if level <= 0.0 {
        return Some(f64::INFINITY);
    }
    Some((slope * (v.len() - 1) as f64 / level).abs())
}

/// The longest run of seconds without any answer in `seconds`.
pub(super) fn longest_silence(seconds: &[(f64, f64, f64)]) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for s in seconds {
        run = if s.0 <= 0.0 { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

/// Whether `seconds`, whose longest stretch without any answer lasts `silence` seconds
/// (`longest_silence`), fell silent for longer than their answers wait: at least as long as the
/// median of the seconds' mean latencies, and at least a second.
/// A service answering in milliseconds that is silent for a second has stalled; a pool whose
/// requests wait 5 s answers in waves as its threads free up, and a silent second between
/// two waves is its rhythm, not a stall.
pub(super) fn stalled(seconds: &[(f64, f64, f64)], silence: usize) -> bool {
    if silence == 0 {
        return false;
    }
    let waits_ms: Vec<f64> = seconds
        .iter()
        .map(|s| s.1)
        .filter(|m| m.is_finite())
        .collect();
    if waits_ms.is_empty() {
        return true;
    }
    let wait_s = crate::util::numbers::median(waits_ms) / 1000.0;
    silence as f64 >= wait_s.max(1.0)
}

/// Whether none of the three figures of `window` (throughput, mean latency, CPU per request;
/// NaN figures are left out) drifts by more than `drift` (0.05 = 5%) over the window.
pub fn steady(window: &[(f64, f64, f64)], drift: f64) -> bool {
    if window.len() < SETTLE_WINDOW_S {
        return false;
    }
    if stalled(window, longest_silence(window)) {
        return false; // a silence longer than the answers wait is not a steady state
    }
    let flat = |f: &dyn Fn(&(f64, f64, f64)) -> f64| {
        let v: Vec<f64> = window.iter().map(f).collect();
        relative_drift(&v).is_none_or(|d| d <= drift)
    };
    flat(&|s| s.0) && flat(&|s| s.1) && flat(&|s| s.2)
}

/// The most CPU a JIT's compiler threads may use, on average over the settling window, for
/// the contender to count as settled: 2% of one CPU (20 ms a second). A JVM on a plateau of its
/// climb is still compiling; once settled its compilers are nearly idle.
pub const JIT_IDLE_CPU: f64 = 0.02;

/// Whether the compiler threads were nearly idle over `jit` (CPU seconds per second; NaN
/// where not seen: a runtime without them is not held back).
pub fn compiler_idle(jit: &[f64]) -> bool {
    compiler_mean(jit).is_none_or(|mean| mean <= JIT_IDLE_CPU)
}

/// The compiler threads' mean CPU per second over `jit`, in its unit, seconds not seen (NaN)
/// left out; None when none was seen.
pub fn compiler_mean(jit: &[f64]) -> Option<f64> {
    let seen: Vec<f64> = jit.iter().copied().filter(|j| j.is_finite()).collect();
    (!seen.is_empty()).then(|| seen.iter().sum::<f64>() / seen.len() as f64)
}

/// The compiler threads' CPU per second as a warm-up record keeps it (`jit_curve`: ms, one
/// decimal), from CPU seconds; empty where none was seen (no compiler threads to see).
pub fn jit_curve_ms(jit: &[f64]) -> Vec<f64> {
    if jit.iter().all(|j| j.is_nan()) {
        return Vec::new();
    }
    jit.iter().map(|j| (j * 10_000.0).round() / 10.0).collect()
}

/// The first second (from the warm-up's start) at which its throughput alone had stopped
/// drifting over the settling window: when a rule without the compiler signal, judging
/// throughput only, would have called it settled at the earliest (the full rule also judges
/// latency and CPU per answer, which the record keeps only at the end). None when it never
/// did, or the record has no curve.
pub fn throughput_flat_at(w: &WarmupRecord) -> Option<f64> {
    let seconds: Vec<(f64, f64, f64)> = w.curve.iter().map(|a| (*a, f64::NAN, f64::NAN)).collect();
    let band = w.band_pct / 100.0;
    (SETTLE_WINDOW_S..=seconds.len())
        .find(|&end| end as f64 >= w.min_s && steady(&seconds[end - SETTLE_WINDOW_S..end], band))
        .map(|end| end as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` seconds of (throughput, latency, CPU per request) following `f`, with +-4% of
    /// alternating noise, as a noisy machine gives.
    fn series(n: usize, f: impl Fn(f64) -> f64) -> Vec<(f64, f64, f64)> {
        (0..n)
            .map(|i| {
                let noise = if i % 2 == 0 { 1.04 } else { 0.96 };
                let v = f(i as f64) * noise;
                (v, 1000.0 / v, 1.0 / v)
            })
            .collect()
    }

    #[test]
    fn the_throughput_alone_flattens_on_a_plateau_before_the_compiler_is_done() {
        // 12 s climbing, 12 s flat at 5,000 (a plateau), a climb, then flat at 9,000.
        let mut curve: Vec<f64> = (0..12).map(|t| 1000.0 + 330.0 * t as f64).collect();
        curve.extend([5000.0; 12]);
        curve.extend((0..8).map(|t| 5000.0 + 500.0 * t as f64));
        curve.extend([9000.0; 20]);
        let record = WarmupRecord {
            seconds: curve.len() as f64,
            settled: true,
            min_s: 10.0,
            max_s: 180.0,
            band_pct: 5.0,
            rule: "trend".into(),
            curve,
            drift_pct: Vec::new(),
            window: None,
            jit_curve: Vec::new(),
            end_check: None,
            steps: Vec::new(),
        };
        // Flat from second 13 on. The Theil-Sen slope ignores a climbing second or two at a
        // window's start, so the plateau reads flat by seconds 20 to 22, long before 9,000.
        let at = throughput_flat_at(&record).unwrap();
        assert!((20.0..=24.0).contains(&at), "{at}");
        let climbing = WarmupRecord {
            curve: (0..40).map(|t| 1000.0 * (1.0 + 0.05 * t as f64)).collect(),
            ..record
        };
        assert_eq!(throughput_flat_at(&climbing), None);
    }

    #[test]
    fn a_contender_still_warming_up_is_not_settled_and_a_noisy_steady_one_is() {
        // Throughput rising 3% a second (a JIT at work): a trend, whatever the noise.
        assert!(!steady(&series(10, |t| 1000.0 * (1.0 + 0.03 * t)), 0.05));
        // Flat with +-4% noise every second: a 5% band would fail it, the trend rule does not.
        let flat = series(10, |_| 1000.0);
        assert!(steady(&flat, 0.05));
        let ratio = flat.iter().map(|s| s.0).fold(0.0, f64::max)
            / flat.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
        assert!(ratio > 1.05, "the noise exceeds a 5% band: {ratio}");
        assert!(
            !steady(&flat[..9], 0.05),
            "fewer than {SETTLE_WINDOW_S} seconds cannot settle"
        );
        // Unsampled CPU (NaN) is left out, not a reason never to settle.
        let no_cpu: Vec<_> = flat.iter().map(|s| (s.0, s.1, f64::NAN)).collect();
        assert!(steady(&no_cpu, 0.05));
        // CPU per request still falling (the JIT) while throughput is capped: not settled.
        let cpu_falling: Vec<_> = flat
            .iter()
            .enumerate()
            .map(|(i, s)| (s.0, s.1, 1.0 - 0.04 * i as f64))
            .collect();
        assert!(!steady(&cpu_falling, 0.05));
        // One odd second does not make a trend.
        let mut spike = series(10, |_| 1000.0);
        spike[9].0 = 3000.0;
        assert!(steady(&spike, 0.05));
    }

    #[test]
    fn drift_is_the_slope_over_the_span_relative_to_the_median() {
        let drift = relative_drift(&[100.0, 101.0, 102.0, 103.0, 104.0]).unwrap();
        assert!((drift - 0.04 / 1.02).abs() < 1e-9, "{drift}");
    }

    #[test]
    fn a_flat_noisy_window_passes_the_check_and_a_short_one_is_not_judged() {
        // +-3% around a level, as a steady contender gives on this machine: 8, 10 and 20 s.
        for n in [8, 10, 20] {
            let seconds: Vec<(f64, f64, f64)> = (0..n)
                .map(|i| {
                    let noise = [1.03, 0.97, 1.01, 0.99, 1.02, 0.98][i % 6];
                    (1000.0 * noise, 5.0 / noise, 0.001 * noise)
                })
                .collect();
            let check = judge_window(&seconds, 0.05).unwrap();
            assert!(check.steady, "{n} s: {check:?}");
        }
        let short = vec![(1000.0, 5.0, 0.001); MIN_WINDOW_S - 1];
        assert_eq!(judge_window(&short, 0.05), None);
        // A second without any answer (a measured load restarted cold at a 1 s wait).
        let mut silent = vec![(1000.0, 5.0, 0.001); 10];
        silent[0].0 = 0.0;
        let check = judge_window(&silent, 0.05).unwrap();
        assert!(!check.steady);
        assert_eq!(check.silent_s, 1);
        let why = unsettled_window(check).unsettled_reason().unwrap();
        assert!(
            why.contains("no answer for 1 s in a row") && !why.contains("drifted"),
            "{why}"
        );
    }

    #[test]
    fn waves_of_a_pool_that_waits_seconds_are_steady_and_a_longer_silence_is_not() {
        // Jetty's 200 threads under 250 users that each wait 5 s (classics-waiting): answers
        // come in four busy seconds and one silent one, every 5 s, at a median of 6.6 s. The
        // silent second is the pool's rhythm, not a stall.
        let waves: Vec<(f64, f64, f64)> = (0..15)
            .map(|t| match t % 5 {
                1 => (0.0, f64::NAN, f64::NAN),
                _ => (50.0, 6_640.0, f64::NAN),
            })
            .collect();
        let check = judge_window(&waves, 0.05).unwrap();
        assert!(check.steady, "{check:?}");
        assert_eq!(check.silent_s, 1);
        // The same service falling silent for 7 s, longer than its answers wait.
        let mut stall = waves.clone();
        for s in &mut stall[3..10] {
            *s = (0.0, f64::NAN, f64::NAN);
        }
        let check = judge_window(&stall, 0.05).unwrap();
        assert!(!check.steady, "{check:?}");
        assert_eq!(check.silent_s, 7);
    }

    #[test]
    fn the_reason_names_only_the_figures_that_trended() {
        // Throughput climbs steadily by 30%; latency wanders 8% without order.
        let seconds: Vec<(f64, f64, f64)> = (0..12)
            .map(|t| {
                let wander = [1.04, 0.96, 1.0, 1.04, 0.96, 1.0][t % 6];
                (1000.0 + 25.0 * t as f64, 5.0 * wander, f64::NAN)
            })
            .collect();
        let check = judge_window(&seconds, 0.05).unwrap();
        assert!(!check.steady);
        let why = unsettled_window(check).unsettled_reason().unwrap();
        assert!(why.contains("throughput drifted"), "{why}");
        assert!(!why.contains("mean latency"), "{why}");
    }

    /// A settled warm-up whose measured window failed `check`.
    fn unsettled_window(check: WindowCheck) -> WarmupRecord {
        WarmupRecord {
            window: Some(check),
            ..crate::results::test_support::window_trended(0, 0.0)
        }
    }

    #[test]
    fn a_window_that_only_wanders_is_steady_and_a_climb_is_not() {
        // spring-mvc's /plaintext window on this machine (2026-11-25, 8 s): +-20% from second to
        // second, 17.7% of Theil-Sen drift, but no order in it.
        let rps = [
            17008.0, 23695.0, 19196.0, 15607.0, 20111.0, 14986.0, 17564.0, 15021.0,
        ];
        let wander: Vec<(f64, f64, f64)> =
            rps.iter().map(|r| (*r, 64_000.0 / r, 0.5 / r)).collect();
        let check = judge_window(&wander, 0.05).unwrap();
        assert!(check.drift_pct[0].unwrap() > 5.0, "{check:?}");
        assert!(check.steady, "{check:?}");
        // The plateau test's window: a climb, ordered.
        let climb = [
            2571.0, 2494.0, 2937.0, 2899.0, 2996.0, 3062.0, 3514.0, 3921.0, 4483.0, 5195.0,
        ];
        let seconds: Vec<(f64, f64, f64)> =
            climb.iter().map(|r| (*r, 16_000.0 / r, 0.3 / r)).collect();
        assert!(!judge_window(&seconds, 0.05).unwrap().steady);
        // Steady noise of +-20% over 8 s: flagged rarely (each figure at most WINDOW_TREND_P).
        let mut rng = crate::util::numbers::SplitMix64::new(11);
        let trials = 2000;
        let flagged = (0..trials)
            .filter(|_| {
                let w: Vec<(f64, f64, f64)> = (0..8)
                    .map(|_| {
                        let (a, b, c) = (rng.unit(), rng.unit(), rng.unit());
                        (
                            20_000.0 * (0.8 + 0.4 * a),
                            3.0 * (0.8 + 0.4 * b),
                            0.001 * (0.8 + 0.4 * c),
                        )
                    })
                    .collect();
                !judge_window(&w, 0.05).unwrap().steady
            })
            .count();
        let rate = flagged as f64 / trials as f64;
        assert!(rate <= 0.15, "steady windows flagged: {rate}");
    }
}
