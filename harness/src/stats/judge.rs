//! One difference judged: B against A on one metric from their per-run values, by a design
//! (one look at the end, or a look after every round). The verdicts of runs (`verdict`) and of
//! capacity searches (`capacity`) both judge with it.

use super::sequential::{self, Decision, Ratio};
use super::significance::{ALPHA, MIN_RUNS};
use crate::results::record::Finding;

/// How differences are tested: one look at the end (a fixed number of runs) or a look after
/// every round (`runs = "auto"`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Design {
    /// The p-value threshold of each look.
    pub alpha: f64,
    /// Runs a side before the first look.
    pub min_runs: usize,
    pub margin: f64,
    /// At a look of a plan being run with the sequential design: the rounds it still allows,
    /// for the futility rule (None where no look is to follow: a fixed design, a stored plan).
    pub rounds_left: Option<usize>,
}

impl Design {
    /// A single look after a fixed number of runs: the Mann-Whitney test at ALPHA.
    pub fn fixed(margin: f64) -> Design {
        Design {
            alpha: ALPHA,
            min_runs: MIN_RUNS,
            margin,
            rounds_left: None,
        }
    }

    /// Looks after every round, each at LOOK_ALPHA (overall ALPHA; see `sequential`).
    pub fn sequential(margin: f64) -> Design {
        Design {
            alpha: sequential::LOOK_ALPHA,
            min_runs: sequential::MIN_LOOK,
            margin,
            rounds_left: None,
        }
    }
}

/// One scenario's findings, and how many runs were left out of them for not being at steady
/// state.
#[derive(Debug)]
pub struct ScenarioFindings {
    pub scenario: String,
    pub findings: Vec<Finding>,
    pub unsettled_runs: usize,
}

/// B against A on one metric from their per-run values: the rank test and the ratio's
/// interval by `design`, or "not tested" with fewer runs a side than its first look needs.
pub fn judged(
    metric: &str,
    (a, b): (&str, &str),
    (va, vb): (&[f64], &[f64]),
    design: Design,
) -> Finding {
    let runs = va.len().min(vb.len());
    let mut f = Finding {
        metric: metric.into(),
        a: a.into(),
        b: b.into(),
        outcome: "not tested".into(),
        runs,
        alpha: design.alpha,
        margin: design.margin,
        ..Finding::default()
    };
    if runs < design.min_runs {
        return f;
    }
    let decision = sequential::decide_at(va, vb, design.margin, design.alpha, design.min_runs);
    let (outcome, p) = match &decision {
        Decision::TooFew => ("not tested", None),
        Decision::Different { p, .. } => ("different", Some(*p)),
        Decision::Equivalent { p, .. } => ("equivalent", Some(*p)),
        Decision::Open { p, .. } => ("undecided", Some(*p)),
    };
    f.outcome = outcome.into();
    f.p = p;
    if let Some(Ratio { value, lo, hi }) = decision.ratio() {
        (f.ratio, f.ratio_lo, f.ratio_hi) = (Some(*value), *lo, *hi);
    }
    if let (Decision::Open { .. }, Some(left)) = (&decision, design.rounds_left) {
        f.futility = super::futility::judge(va, vb, design.margin, design.alpha, left);
    }
    f
}
