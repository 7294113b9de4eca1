//! Steady state, as the record states it and every stage reads it: what a warm-up recorded
//! (how long it took, whether it settled, its curve, the drifts when it ended), the measured
//! window's own check after the run, and the terms both are judged in. Settled means that
//! throughput, mean latency and CPU per request show no trend over the last SETTLE_WINDOW_S
//! seconds (the settling rule, observe/settle_rule.rs); a measured window is judged by the
//! changepoint rule (observe/steady_rule.rs and observe/window_judge.rs). The warm-up that
//! applies these rules second by second is observe/warmup.rs.

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

/// The move inside a window (relative to its level) the steady-state rule (observe/) is built
/// to see: a figure that moves by this much is flagged in at least 95% of the windows it
/// judges. Kept with the record because a check's words ("too short to see a 20% move") name it.
pub const MOVE_TO_SEE: f64 = 0.20;

/// The name a check judged by the changepoint rule (observe/window_judge.rs) carries in `rule`,
/// so that older checks, by the ordered-trend rule, are told apart.
pub const RULE_CHANGEPOINT: &str = "changepoint";

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
    /// The rule the window was judged by: RULE_CHANGEPOINT, or (in older
    /// results, and a pipeline warm-up's end check) the ordered-trend rule of observe::settle_rule::judge_window.
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
    /// to see a move of MOVE_TO_SEE. Such a window is not steady.
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
            MOVE_TO_SEE * 100.0,
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
