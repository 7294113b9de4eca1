//! Steady state, as the record states it and every stage reads it: what a warm-up recorded
//! (how long it took, whether it settled, its curve, the drifts when it ended), the measured
//! window's own check after the run, and the rules both are judged by. Settled means that
//! throughput, mean latency and CPU per request show no trend over the last SETTLE_WINDOW_S
//! seconds: the Theil-Sen slope (the median of the slopes between every pair of seconds, which
//! a few odd seconds do not move) projected over the window stays within the band of the
//! window's median. A fixed band (largest over smallest second) fails runtimes with no JIT at
//! all on a noisy two-core machine; a trend does not come from noise. The warm-up that applies
//! these rules second by second is run/observe/warmup.rs.

use serde::{Deserialize, Serialize};

/// Seconds the trend is judged over.
pub const SETTLE_WINDOW_S: usize = 10;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct WarmupRecord {
    /// How long the warm-up lasted.
    pub seconds: f64,
    /// Whether it ended because the contender had settled (false: it reached its maximum, or
    /// was fixed because the maximum was not above the minimum).
    pub settled: bool,
    pub min_s: f64,
    pub max_s: f64,
    /// The largest drift over the window still called settled (per cent). Results written
    /// before the trend rule hold the band every second had to stay within.
    pub band_pct: f64,
    /// The rule `band_pct` belongs to: "trend" (Theil-Sen drift over SETTLE_WINDOW_S seconds),
    /// a pipeline's RULE_ORDERED_AT_END (or, before the order counted, RULE_AT_END) or, in
    /// results written before the trend rule, "band".
    #[serde(default = "band_rule")]
    pub rule: String,
    /// Answers per second during the warm-up (ok or not), second by second (the warm-up curve).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub curve: Vec<f64>,
    /// How far each judged figure drifted over the last window when the warm-up ended (%):
    /// answers per second, their mean latency, CPU per answer; null where it could not be
    /// judged. Says which figure kept a warm-up from settling.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drift_pct: Vec<Option<f64>>,
    /// The measured window judged again after the run, by the same rule over all its seconds:
    /// how far each figure drifted there (%), and whether it stayed within `band_pct`. A
    /// plateau in a JIT climb can pass the warm-up's check and then climb during the measured
    /// seconds; this says so. Absent in results written before the check, or where the window
    /// was too short to judge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<WindowCheck>,
    /// The JIT compiler threads' CPU per second during the warm-up (ms), where the runtime has
    /// them (a JVM): settled also means they were nearly idle (see JIT_IDLE_CPU). A second
    /// without a reading (a pipeline's first, before its compilers were first read) is written
    /// `null` and read back as NaN.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "nan_for_null"
    )]
    pub jit_curve: Vec<f64>,
    /// A warm-up judged at its end (a pipeline's, rule RULE_ORDERED_AT_END): its judged steps
    /// checked by the measured window's rule, saying which figures trended and whether a step
    /// was silent. Absent for warm-ups watched second by second, and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_check: Option<WindowCheck>,
    /// The steps that check judged, each its records, their mean latency (ms) and the CPU per
    /// record (ms; null where too little CPU was read to judge): what a later rule can judge
    /// again, and what shows whether a drift was bursts or a trend.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<[Option<f64>; 3]>,
}

/// A list of numbers in which `null` (how JSON writes NaN) stands for a second without a value.
fn nan_for_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
    let values: Vec<Option<f64>> = serde::Deserialize::deserialize(d)?;
    Ok(values.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect())
}

/// The measured window's own steady-state check (see `WarmupRecord::window`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WindowCheck {
    /// Seconds judged (whole seconds of the measured phase, the drain left out).
    pub seconds: usize,
    /// Drift of answers per second, mean latency and CPU per answer over them (%); null where
    /// a figure could not be judged.
    pub drift_pct: Vec<Option<f64>>,
    /// Which of the three figures trended (drifted beyond the band in order): the reason the
    /// window is not steady, beside `silent_s`. Empty in results written before it was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trending: Vec<bool>,
    /// The longest stretch of seconds without any answer (0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub silent_s: usize,
    /// Whether that silence was longer than the window's answers wait (see `stalled`): a reason
    /// the window is not steady.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stalled: bool,
    pub steady: bool,
    /// The rule the window was judged by: window_judge::RULE_CHANGEPOINT, or (in older
    /// results, and a pipeline warm-up's end check) the ordered-trend rule of `judge_window`.
    #[serde(default = "ordered_trend_rule")]
    pub rule: String,
    /// Seconds in each step the rule judged (a pool answering in waves is judged over longer
    /// steps than a second); 0 in older results.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub step_s: usize,
    /// The noise of each figure per step (%), as the rule read it from the window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub noise_pct: Vec<Option<f64>>,
    /// Where the window was too short to judge at that noise: the seconds it would have needed
    /// to see a move of steady_rule::MOVE_TO_SEE. Such a window is not steady.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_s: Option<usize>,
}

/// The rule of a window check written before the rule was kept.
pub const RULE_ORDERED_TREND: &str = "ordered-trend";

fn ordered_trend_rule() -> String {
    RULE_ORDERED_TREND.into()
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn band_rule() -> String {
    "band".into()
}

/// The rule of a fixed warm-up judged at its end: steady when none of the three figures
/// drifted by more than `band_pct` over its last SETTLE_WINDOW_S seconds. A pipeline's load
/// tool reports its seconds only when it ends, so its warm-up cannot end early; it is judged
/// instead (run/kinds/pipeline_warmup.rs), over the seconds and steps below.
pub const RULE_AT_END: &str = "trend-at-end";

/// The rule pipelines' warm-ups are judged by now: at the end, as RULE_AT_END, but a figure
/// counts as drifting only when it also climbs or falls in order (Mann-Kendall, p <=
/// WINDOW_TREND_P), the measured window's rule. Over ten 5-second steps a pipeline's CPU per
/// record still swings with its batches and collections by more than the band without any
/// trend (8 of 12 runs of one sitting on 2026-11-29 were flagged by the drift alone, with the
/// compilers idle); a warm-up that cannot be extended, like the window that cannot be measured
/// again, is judged on what is ordered.
pub const RULE_ORDERED_AT_END: &str = "ordered-trend-at-end";

/// Seconds in each step a pipeline's warm-up is judged in. A pipeline delivers its records in
/// bursts (a polled batch is committed as a whole), so a single second's records, latency and
/// CPU per record swing by a tenth to a fifth at a steady 4,000 records/s, and ten such seconds
/// show a "trend" by chance; five-second means do not.
pub const PIPELINE_STEP_S: u64 = 5;

/// How much of a pipeline's warm-up is judged: its last SETTLE_WINDOW_S steps.
pub const PIPELINE_JUDGED_S: u64 = SETTLE_WINDOW_S as u64 * PIPELINE_STEP_S;

impl WarmupRecord {
    /// Whether the warm-up ended when the contender settled, so that `seconds` is its time to
    /// steady state (not a fixed length).
    pub fn watched(&self) -> bool {
        self.rule == "trend" && self.max_s > self.min_s
    }

    /// Whether the warm-up had a fixed length and was judged at its end (a pipeline's), by
    /// either rule.
    pub fn judged_at_end(&self) -> bool {
        self.rule == RULE_AT_END || self.rule == RULE_ORDERED_AT_END
    }

    /// Whether the run after it was measured before the contender had settled: a watched
    /// warm-up that reached its maximum, a fixed one judged still drifting at its end, or a
    /// measured window that itself still trended (whatever the warm-up said).
    pub fn unsettled(&self) -> bool {
        let warmup_unsettled = !self.settled && (self.watched() || self.judged_at_end());
        warmup_unsettled || self.window.as_ref().is_some_and(|w| !w.steady)
    }

    /// The first second (from the warm-up's start) at which its throughput alone had stopped
    /// drifting over the settling window: when a rule without the compiler signal, judging
    /// throughput only, would have called it settled at the earliest (the full rule also judges
    /// latency and CPU per answer, which the record keeps only at the end). None when it never
    /// did, or the record has no curve.
    pub fn throughput_flat_at(&self) -> Option<f64> {
        let seconds: Vec<(f64, f64, f64)> = self
            .curve
            .iter()
            .map(|a| (*a, f64::NAN, f64::NAN))
            .collect();
        let band = self.band_pct / 100.0;
        (SETTLE_WINDOW_S..=seconds.len())
            .find(|&end| {
                end as f64 >= self.min_s && steady(&seconds[end - SETTLE_WINDOW_S..end], band)
            })
            .map(|end| end as f64)
    }

    /// Whether the run is at steady state but its measured window's CPU per answer moved (by
    /// the changepoint rule): its throughput and latency enter verdicts, its CPU per request
    /// does not.
    pub fn cpu_moved(&self) -> bool {
        !self.unsettled()
            && self.window.as_ref().is_some_and(|w| {
                w.rule != RULE_ORDERED_TREND && w.trending.get(2).copied().unwrap_or(false)
            })
    }

    /// The run's note when `cpu_moved`; None otherwise.
    pub fn cpu_moved_note(&self) -> Option<String> {
        let w = self.window.as_ref().filter(|_| self.cpu_moved())?;
        let drift = w.drift_pct.get(2).copied().flatten().unwrap_or(f64::NAN);
        Some(format!(
            "CPU per request moved {drift:.1}% over the measured window ({} s; its halves \
             differ beyond what the sampling explains) while throughput and latency stayed \
             flat: this run's CPU per request enters no verdict",
            w.seconds
        ))
    }

    /// Why the run is not at steady state, for its warning; None when it is.
    pub fn unsettled_reason(&self) -> Option<String> {
        if let Some(w) = self.window.as_ref().filter(|w| !w.steady) {
            return Some(window_reason(w, self.band_pct));
        }
        (!self.settled && (self.watched() || self.judged_at_end())).then(|| {
            format!(
                "not at steady state: the warm-up reached its maximum ({:.0} s) with \
                 throughput, mean latency or CPU per request still drifting by more than \
                 {:.0}% over {SETTLE_WINDOW_S} s; figures include warm-up",
                self.max_s, self.band_pct
            )
        })
    }
}

/// Why a measured window is not steady: the figures that trended, or a silence longer than
/// its answers wait, or both.
fn window_reason(w: &WindowCheck, band_pct: f64) -> String {
    let mut why = Vec::new();
    // Results written before `trending` was kept: every judged drift, as they were shown.
    let trended: Vec<Option<f64>> = if w.trending.is_empty() {
        w.drift_pct.clone()
    } else {
        w.drift_pct
            .iter()
            .zip(&w.trending)
            .map(|(d, t)| d.filter(|_| *t))
            .collect()
    };
    if trended.iter().any(Option::is_some) {
        why.push(format!(
            "the measured window itself still trended ({} over its {} s, more than {band_pct:.0}%)",
            drift_words(&trended),
            w.seconds
        ));
    }
    if w.stalled {
        why.push(format!(
            "the measured window had no answer for {} s in a row, longer than its answers wait",
            w.silent_s
        ));
    }
    if let Some(needs) = w.needs_s {
        let noise = w.noise_pct.first().copied().flatten();
        why.push(format!(
            "the measured window was too short to judge: at {} a step, seeing a move of {:.0}% \
             needs {needs} s, and it had {} s (lengthen `duration`)",
            noise.map_or("its noise".to_string(), |n| format!("{n:.1}% of noise")),
            super::steady_rule::MOVE_TO_SEE * 100.0,
            w.seconds
        ));
    }
    format!(
        "not at steady state: {}: this run is shown but enters no verdict",
        why.join("; ")
    )
}

/// "throughput drifted 42.0%, CPU per request 12.5%": the judged figures' drifts, in words.
fn drift_words(drifts: &[Option<f64>]) -> String {
    let names = ["throughput", "mean latency", "CPU per request"];
    let parts: Vec<String> = names
        .iter()
        .zip(drifts)
        .filter_map(|(n, d)| d.map(|d| format!("{n} drifted {d:.1}%")))
        .collect();
    if parts.is_empty() {
        "no figure could be judged".into()
    } else {
        parts.join(", ")
    }
}

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
        let at = record.throughput_flat_at().unwrap();
        assert!((20.0..=24.0).contains(&at), "{at}");
        let climbing = WarmupRecord {
            curve: (0..40).map(|t| 1000.0 * (1.0 + 0.05 * t as f64)).collect(),
            ..record
        };
        assert_eq!(climbing.throughput_flat_at(), None);
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

    #[test]
    fn a_jit_curve_with_seconds_unread_is_written_and_read_back() {
        let w = WarmupRecord {
            jit_curve: vec![f64::NAN, 12.5, 0.0, f64::NAN],
            ..crate::results::test_support::window_trended(0, 0.0)
        };
        let json = serde_json::to_string(&w).unwrap();
        assert!(
            json.contains("\"jit_curve\":[null,12.5,0.0,null]"),
            "{json}"
        );
        let back: WarmupRecord = serde_json::from_str(&json).unwrap();
        let c = &back.jit_curve;
        assert!(c.len() == 4 && c[0].is_nan() && c[1] == 12.5 && c[2] == 0.0 && c[3].is_nan());
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
