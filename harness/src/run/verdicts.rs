//! After every round of a plan: the verdicts so far, each printed as soon as it is decided
//! (Ctrl-C keeps the ones decided), and for `runs = "auto"` whether to stop repeating: every
//! headline difference decided, or the budget would be passed by another round.

use crate::plan::{Plan, Sequential};
use crate::results::dir::ResultsDir;
use crate::results::record::{Results, RunStatus};
use crate::stats::sequential::MAX_RUNS;
use crate::stats::verdict::{self, Design, ScenarioFindings};
use crate::util::interrupt;
use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

pub(super) struct VerdictWatch {
    design: Design,
    sequential: Option<Sequential>,
    started: Instant,
    round_started: Instant,
    longest_round: Duration,
    /// Findings already printed as decided: (scenario, metric, a, b).
    printed: HashSet<(String, String, String, String)>,
    /// Why repeating stopped, once it has.
    stopped: Option<String>,
}

impl VerdictWatch {
    pub(super) fn new(plan: &Plan) -> VerdictWatch {
        VerdictWatch {
            design: verdict::design(plan.sequential.map(|s| s.margin), plan.fixed_margin),
            sequential: plan.sequential,
            started: Instant::now(),
            round_started: Instant::now(),
            longest_round: Duration::ZERO,
            printed: HashSet::new(),
            stopped: None,
        }
    }

    /// Called after each round: records the verdicts so far; true to stop repeating.
    pub(super) fn after_round(&mut self, res: &mut Results, dir: &Path, round: u32) -> bool {
        self.longest_round = self.longest_round.max(self.round_started.elapsed());
        self.round_started = Instant::now();
        let findings = verdict::findings(ResultsDir::new(res, dir), self.design);
        self.print_new(&findings);
        let stop = self
            .sequential
            .and_then(|s| self.stop_reason(res, &findings, s, round));
        let stopping = stop.is_some();
        if let Some(why) = stop {
            eprintln!("iobound: repeats stop after round {round}: {why}");
            self.stopped = Some(why);
        }
        res.verdicts = verdict::records(&findings, &self.reason(round));
        stopping
    }

    /// The verdicts of the finished (or interrupted) plan.
    pub(super) fn finish(&mut self, res: &mut Results, dir: &Path) {
        let rounds = rounds_measured(res);
        if self.stopped.is_none() && interrupt::stopped() {
            self.stopped = Some(format!("interrupted by the user after {rounds} round(s)"));
        }
        let findings = verdict::findings(ResultsDir::new(res, dir), self.design);
        res.verdicts = verdict::records(&findings, &self.reason(rounds));
    }

    fn stop_reason(
        &self,
        res: &Results,
        findings: &[ScenarioFindings],
        s: Sequential,
        round: u32,
    ) -> Option<String> {
        // A run that did not settle enters no finding: while two contenders have runs, the
        // next round may give the pair it lacks (the most runs and the budget still bound it).
        let waiting = findings.iter().any(|s| s.unsettled_runs > 0) && with_runs(res) >= 2;
        if findings.iter().all(|s| s.findings.is_empty()) && !waiting {
            return Some("nothing to compare: fewer than two contenders with results".into());
        }
        if verdict::all_decided(findings) {
            return Some(format!(
                "every headline difference decided after {round} runs each"
            ));
        }
        if round as usize >= MAX_RUNS {
            return Some(format!(
                "{MAX_RUNS} runs each reached; what is open stays undecided"
            ));
        }
        let budget = s.budget?;
        let next_end = self.started.elapsed() + self.longest_round;
        (next_end > budget).then(|| {
            format!(
                "the budget of {} would be passed by another round (the longest took {} s); \
                 what is open stays undecided",
                fmt_minutes(budget),
                self.longest_round.as_secs()
            )
        })
    }

    fn reason(&self, rounds: u32) -> String {
        match (&self.stopped, self.sequential) {
            (Some(why), _) => why.clone(),
            (None, Some(_)) => format!("still repeating after {rounds} round(s)"),
            (None, None) => format!("a fixed number of runs ({rounds}), tested once at the end"),
        }
    }

    fn print_new(&mut self, findings: &[ScenarioFindings]) {
        for ScenarioFindings {
            scenario,
            findings: fs,
            ..
        } in findings
        {
            for f in fs.iter().filter(|f| f.decided()) {
                let key = (scenario.clone(), f.metric.clone(), f.a.clone(), f.b.clone());
                if self.printed.insert(key) {
                    eprintln!("verdict: {scenario}: {}", verdict::describe(f));
                }
            }
        }
    }
}

/// The rounds measured so far: the highest run number, where a capacity probe's number
/// counts probes and its search's number is the round.
fn rounds_measured(res: &Results) -> u32 {
    (res.runs.iter())
        .filter(|r| r.details.probe().is_none())
        .map(|r| r.run)
        .chain(res.capacity.iter().map(|c| c.repeat))
        .max()
        .unwrap_or(0)
}

/// How many contenders have a run that ended (settled or not).
fn with_runs(res: &Results) -> usize {
    (res.runs.iter())
        .filter(|r| r.status != RunStatus::Failed)
        .map(|r| r.contender.as_str())
        .collect::<HashSet<_>>()
        .len()
}

/// "15 min", "90 s".
fn fmt_minutes(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 120 && s.is_multiple_of(60) {
        format!("{} min", s / 60)
    } else {
        format!("{s} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::details::Detail;
    use crate::results::test_support::{blank_probe, blank_results, blank_run};

    #[test]
    fn a_round_whose_runs_did_not_settle_does_not_end_a_comparison() {
        use crate::results::test_support::window_trended;
        let sequential = Sequential {
            budget: None,
            margin: 0.05,
        };
        let watch = VerdictWatch {
            design: Design::sequential(sequential.margin),
            sequential: Some(sequential),
            started: Instant::now(),
            round_started: Instant::now(),
            longest_round: Duration::ZERO,
            printed: HashSet::new(),
            stopped: None,
        };
        let reason = |r: &Results| {
            let findings = verdict::findings(ResultsDir::new(r, Path::new("/none")), watch.design);
            watch.stop_reason(r, &findings, sequential, 1)
        };
        // Two contenders, one of whose first run trended: no pair yet, but the next may give one.
        let mut two = blank_results(&["a", "b"]);
        let ended = |name: &str| {
            let mut r = blank_run(name, "wait", 1);
            r.status = RunStatus::Ok;
            r
        };
        let mut trended = ended("b");
        trended.warmup = Some(window_trended(10, 25.0));
        two.runs = vec![ended("a"), trended.clone()];
        assert_eq!(reason(&two), None);
        // One contender: no round can give a pair.
        let mut one = blank_results(&["b"]);
        one.runs = vec![trended];
        let why = reason(&one).expect("one contender has nothing to compare");
        assert!(why.contains("nothing to compare"), "{why}");
        // Two contenders whose runs all failed: nothing to compare either.
        for r in &mut two.runs {
            r.status = RunStatus::Failed;
        }
        assert!(reason(&two).is_some());
    }

    #[test]
    fn rounds_are_counted_by_searches_not_by_probes() {
        let mut r = blank_results(&["a"]);
        for k in 1..=9 {
            let mut run = blank_run("a", "wait@100", k);
            run.details
                .set(Detail::Probe(blank_probe(100.0, 1 + (k - 1) / 3)));
            r.runs.push(run);
        }
        assert_eq!(rounds_measured(&r), 0, "no search has ended yet");
        r.capacity = (1..=3)
            .map(|repeat| {
                crate::results::test_support::blank_search("a", repeat, Some(100.0), None)
            })
            .collect();
        assert_eq!(rounds_measured(&r), 3);
        r.runs.push(blank_run("a", "plaintext", 4));
        assert_eq!(rounds_measured(&r), 4);
    }
}
