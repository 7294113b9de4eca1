//! What a results.json says was decided: a scenario's verdict, its findings (one metric, one
//! pair of contenders), why a question stopped for futility, and each threshold checked. Part
//! of the results model (record.rs, which re-exports them).

use serde::{Deserialize, Serialize};

/// A scenario's answer: one sentence, and per headline metric and pair of contenders what the
/// test said and after how many runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct VerdictRecord {
    pub scenario: String,
    pub sentence: String,
    /// True when every headline difference of the scenario was decided.
    pub decided: bool,
    /// Why repeating stopped (or "fixed number of runs").
    pub stopped: String,
    pub findings: Vec<Finding>,
    /// The round after which the scenario was run no more: every question of it decided or
    /// stopped for futility before the plan's last round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_after_round: Option<u32>,
}

impl VerdictRecord {
    /// "decided" (every question decided), "stopped" (every question closed, some by the
    /// futility rule: asked no more, though undecided) or "open" (a question the rounds left
    /// unanswered): the mark a report gives the scenario's verdict.
    pub fn mark(&self) -> &'static str {
        if self.decided {
            "decided"
        } else if !self.findings.is_empty() && self.findings.iter().all(Finding::closed) {
            "stopped"
        } else {
            "open"
        }
    }
}

impl Finding {
    /// Decided: tested different, or equivalent within the margin.
    pub fn decided(&self) -> bool {
        self.outcome == "different" || self.outcome == "equivalent"
    }
}

/// One metric, one pair: "different", "equivalent", "undecided" or "not tested".
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Finding {
    pub metric: String,
    /// The baseline (the plan's first contender of the pair) and the other.
    pub a: String,
    pub b: String,
    pub outcome: String,
    /// b over a: the Hodges-Lehmann estimate and its interval (at the design's level).
    pub ratio: Option<f64>,
    pub ratio_lo: Option<f64>,
    pub ratio_hi: Option<f64>,
    pub p: Option<f64>,
    /// Runs each side had when this was decided (or when repeating stopped).
    pub runs: usize,
    /// The p-value threshold each look used and the equivalence margin.
    pub alpha: f64,
    pub margin: f64,
    /// A throughput or latency finding from runs of which at least one had its driver (or a
    /// CPU the driver shares) saturated: a bound set by the load, not the server's figure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub driver_limited: bool,
    /// A capacity finding where a search stopped before the SLO broke (at its max_rate, or
    /// where the driver could not offer more): that side's figure is a lower bound.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lower_bound: bool,
    /// An undecided question the rounds left could hardly decide, stopped for futility (the
    /// sequential design only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub futility: Option<Futility>,
}

impl Finding {
    /// Asked no more: decided, or stopped for futility.
    pub fn closed(&self) -> bool {
        self.decided() || self.futility.is_some()
    }
}

/// Why an undecided question stopped before the plan's last round.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Futility {
    /// The simulated chance that the rounds left would have decided it.
    pub chance: f64,
    /// Rounds the plan still allowed at that look (0 when none was left).
    pub rounds_left: usize,
    /// The runs a side it could have reached, and the pooled standard deviation of their log
    /// values (about the run-to-run spread as a fraction).
    pub runs_max: usize,
    pub spread: f64,
    /// The smallest ratio away from 1 (as a fraction: 0.21 for 21%) that runs_max runs a side
    /// would tell apart with 80% power at that spread; None when runs_max is below the design's
    /// first look.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smallest: Option<f64>,
}

/// One threshold, one contender, one scenario: the measured value against the limit.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ThresholdCheck {
    pub contender: String,
    pub scenario: String,
    pub metric: String,
    /// The threshold as written back: "p99 <= 200 ms".
    pub rule: String,
    /// The measured value in the metric's unit (median over runs; percentiles from the merged
    /// histogram).
    pub value: f64,
    pub limit: f64,
    pub passed: bool,
    /// How far the value is past the limit, in per cent of the limit (absent when it passed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beyond_pct: Option<f64>,
}
