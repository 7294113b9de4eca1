//! One difference judged: B against A on one metric from their per-run values, by a design
//! (one look at the end, or a look after every round). The verdicts of runs (`verdict`) and of
//! capacity searches (`capacity`) both judge with it.

use super::sequential::{self, Decision, Ratio};
use super::significance::{ALPHA, MIN_RUNS};
use crate::results::record::Finding;
use std::collections::BTreeMap;

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

impl ScenarioFindings {
    /// Whether every question of it is closed (decided, or stopped for futility); false with
    /// none.
    pub fn closed(&self) -> bool {
        !self.findings.is_empty() && self.findings.iter().all(Finding::closed)
    }
}

/// The scenarios of a sequential plan that left the rounds: the round after which each did,
/// and its findings at that look (the same runs judged later would lose what only that look
/// knew: the rounds left, on which futility rests). Kept by a plan being run and by its replay.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Left(BTreeMap<String, (u32, Vec<Finding>)>);

impl Left {
    /// The round after which `scenario` left, if it did.
    pub fn round(&self, scenario: &str) -> Option<u32> {
        self.0.get(scenario).map(|(round, _)| *round)
    }

    /// Every scenario that left, with its round.
    pub fn rounds(&self) -> BTreeMap<String, u32> {
        (self.0.iter())
            .map(|(s, (round, _))| (s.clone(), *round))
            .collect()
    }

    /// `scenario` left after `round` with `findings`, unless it is known to have left already.
    pub fn keep(&mut self, scenario: &str, round: u32, findings: &[Finding]) {
        (self.0.entry(scenario.to_string())).or_insert_with(|| (round, findings.to_vec()));
    }

    /// `all` with each scenario that has left judged as it was when it left.
    pub fn apply(&self, all: &mut [ScenarioFindings]) {
        for s in all {
            if let Some((_, was)) = self.0.get(&s.scenario) {
                s.findings.clone_from(was);
            }
        }
    }

    /// The scenarios of `all` closed at this look that had not left: they leave after `round`.
    pub fn take_closed<'a>(
        &mut self,
        all: &'a [ScenarioFindings],
        round: u32,
    ) -> Vec<&'a ScenarioFindings> {
        let leaving: Vec<&ScenarioFindings> = (all.iter())
            .filter(|s| s.closed() && self.round(&s.scenario).is_none())
            .collect();
        for s in &leaving {
            self.keep(&s.scenario, round, &s.findings);
        }
        leaving
    }
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
        // Before the first look: where the rounds left cannot bring both sides to it (runs not
        // at steady state cost a round each), no look can come, so the futility rule's chance
        // is 0 and it stops the question now, with the spread its runs showed. Two runs a side
        // at least: fewer say nothing of the spread.
        let unreachable = |left: &usize| runs >= 2 && runs + left < design.min_runs;
        if let Some(left) = design.rounds_left.filter(unreachable) {
            f.futility = super::futility::judge(va, vb, design.margin, design.alpha, left);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn at_look(rounds_left: Option<usize>) -> Design {
        Design {
            rounds_left,
            ..Design::sequential(0.05)
        }
    }

    #[test]
    fn a_question_the_rounds_left_cannot_bring_to_a_first_look_stops_there() {
        let a = [100.0, 104.0, 98.0];
        let b = [90.0, 97.0, 93.0];
        let judge = |left| judged("cpu", ("a", "b"), (&a, &b), at_look(left));
        // Three runs a side, first look at five: one round left cannot reach it.
        let stopped = judge(Some(1));
        assert_eq!(stopped.outcome, "not tested");
        let why = stopped
            .futility
            .clone()
            .expect("stopped before a first look");
        assert_eq!((why.rounds_left, why.runs_max, why.chance), (1, 4, 0.0));
        assert!(why.smallest.is_none());
        assert!(why.spread > 0.0 && why.spread < 0.1, "{}", why.spread);
        assert!(stopped.closed());
        let said = super::super::verdict_words::sentence("s", std::slice::from_ref(&stopped), 0);
        assert!(
            said.contains("not tested (3 run(s) each; stopped for futility: the 1 round(s) left")
                && said.contains("4 runs a side are fewer than the 5 a first look needs"),
            "{said}"
        );
        // Two rounds left reach it; a stored plan (no look to follow) never stops.
        assert!(judge(Some(2)).futility.is_none());
        assert!(judge(None).futility.is_none());
        // One run a side says nothing of the spread: not stopped on it.
        let one = judged("cpu", ("a", "b"), (&a[..1], &b[..1]), at_look(Some(0)));
        assert!(one.futility.is_none() && !one.closed());
    }
}
