//! After every round of a plan: the verdicts so far, each printed as soon as it is decided
//! (Ctrl-C keeps the ones decided), and for `runs = "auto"` which scenarios leave the rounds
//! (every question of theirs decided, or stopped for futility with the rounds the plan and its
//! budget still allow) and whether to stop repeating: every scenario left, the most runs
//! reached, or the budget would be passed by another round.

use crate::plan::{Plan, Sequential};
use crate::results::dir::ResultsDir;
use crate::results::record::{Results, RunStatus};
use crate::stats::sequential::MAX_RUNS;
use crate::stats::verdict::{self, Design, Left, ScenarioFindings};
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
    /// Scenarios run no more, and their findings when they left.
    left: Left,
}

impl VerdictWatch {
    pub(super) fn new(plan: &Plan) -> VerdictWatch {
        VerdictWatch::new_for(
            verdict::design(plan.sequential.map(|s| s.margin), plan.fixed_margin),
            plan.sequential,
        )
    }

    fn new_for(design: Design, sequential: Option<Sequential>) -> VerdictWatch {
        VerdictWatch {
            design,
            sequential,
            started: Instant::now(),
            round_started: Instant::now(),
            longest_round: Duration::ZERO,
            printed: HashSet::new(),
            stopped: None,
            left: Left::default(),
        }
    }

    /// Called after each round: records the verdicts so far; true to stop repeating.
    pub(super) fn after_round(&mut self, res: &mut Results, dir: &Path, round: u32) -> bool {
        self.longest_round = self.longest_round.max(self.round_started.elapsed());
        self.round_started = Instant::now();
        if let Some(s) = self.sequential {
            self.design.rounds_left = Some(self.rounds_left(s, round));
        }
        let findings = self.look(res, dir);
        if self.design.rounds_left.is_some_and(|left| left > 0) {
            self.leave_closed(&findings, round);
        }
        self.print_new(&findings);
        let stop = self
            .sequential
            .and_then(|s| self.stop_reason(res, &findings, s, round));
        let stopping = stop.is_some();
        if let Some(why) = stop {
            eprintln!("iobound: repeats stop after round {round}: {why}");
            self.stopped = Some(why);
        }
        res.verdicts = verdict::records(&findings, &self.reason(round), &self.left.rounds());
        res.windows = crate::stats::windows::all(res);
        stopping
    }

    /// The findings of the runs so far, those of scenarios that left as they were then.
    fn look(&mut self, res: &Results, dir: &Path) -> Vec<ScenarioFindings> {
        // A resumed plan's scenarios that left in an earlier sitting stay left.
        for v in &res.verdicts {
            if let Some(round) = v.left_after_round {
                self.left.keep(&v.scenario, round, &v.findings);
            }
        }
        let mut findings = verdict::findings(ResultsDir::new(res, dir), self.design);
        self.left.apply(&mut findings);
        findings
    }

    /// Scenarios whose every question is closed leave the rounds after this one.
    fn leave_closed(&mut self, findings: &[ScenarioFindings], round: u32) {
        for s in self.left.take_closed(findings, round) {
            let futile = s.findings.iter().filter(|f| f.futility.is_some()).count();
            eprintln!(
                "iobound: {} is not run again after round {round}: {} question(s) decided, \
                 {futile} stopped for futility",
                s.scenario,
                s.findings.len() - futile
            );
        }
    }

    /// Rounds the plan still allows after `round`: up to its most runs, and as many as the
    /// budget leaves at the pace of the longest round so far.
    fn rounds_left(&self, s: Sequential, round: u32) -> usize {
        let by_runs = MAX_RUNS.saturating_sub(round as usize);
        let Some(budget) = s.budget else {
            return by_runs;
        };
        let remaining = budget.saturating_sub(self.started.elapsed());
        let by_budget = remaining.as_secs_f64() / self.longest_round.as_secs_f64().max(1e-3);
        by_runs.min(by_budget as usize)
    }

    /// The verdicts of the finished (or interrupted) plan.
    pub(super) fn finish(&mut self, res: &mut Results, dir: &Path) {
        let rounds = rounds_measured(res);
        if self.stopped.is_none() && interrupt::stopped() {
            self.stopped = Some(format!("interrupted by the user after {rounds} round(s)"));
        }
        let findings = self.look(res, dir);
        res.verdicts = verdict::records(&findings, &self.reason(rounds), &self.left.rounds());
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
        if verdict::all_closed(findings) && self.design.rounds_left.is_some_and(|l| l > 0) {
            return Some(format!(
                "every headline question decided or stopped for futility after {round} rounds"
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
                    eprintln!(
                        "verdict: {scenario}: {}",
                        crate::stats::verdict_words::describe(f)
                    );
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
    use crate::results::test_support::{blank_probe, blank_results, blank_run, ok_runs};

    #[test]
    fn a_round_whose_runs_did_not_settle_does_not_end_a_comparison() {
        use crate::results::test_support::window_trended;
        let sequential = Sequential {
            budget: None,
            margin: 0.05,
        };
        let watch = VerdictWatch::new_for(Design::sequential(sequential.margin), Some(sequential));
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

    /// Contenders a and b on `scenario`, run k of each side with the k-th of its throughputs
    /// (CPU per request the same on both: equivalent).
    fn runs_of(res: &mut Results, scenario: &str, a: &[f64], b: &[f64]) {
        ok_runs(res, "a", scenario, a);
        ok_runs(res, "b", scenario, b);
    }

    #[test]
    fn a_scenario_whose_questions_are_closed_leaves_the_rounds_and_an_open_one_stays() {
        let sequential = Sequential {
            budget: None,
            margin: 0.05,
        };
        let mut watch = VerdictWatch::new_for(Design::sequential(0.05), Some(sequential));
        let mut res = blank_results(&["a", "b"]);
        // "clear": b twice a's throughput in every run, decided at the first look.
        runs_of(
            &mut res,
            "clear",
            &[100.0, 101.0, 99.0, 102.0, 98.0],
            &[200.0; 5],
        );
        // "close": about 5% apart with overlapping runs: open at five runs, and the seven rounds
        // left are likely to decide it, so it is not stopped for futility either.
        let (a, b) = (
            [100.0, 104.0, 98.0, 102.0, 106.0],
            [105.0, 110.0, 103.0, 99.0, 112.0],
        );
        runs_of(&mut res, "close", &a, &b);
        let dir = Path::new("/none");
        assert!(!watch.after_round(&mut res, dir, 5), "close is still open");
        let of = |res: &Results, s: &str| res.verdicts.iter().find(|v| v.scenario == s).cloned();
        let clear = of(&res, "clear").unwrap();
        assert_eq!(clear.left_after_round, Some(5), "{clear:?}");
        assert!(
            clear.sentence.contains("not run again"),
            "{}",
            clear.sentence
        );
        let close = of(&res, "close").unwrap();
        assert_eq!(close.left_after_round, None, "{close:?}");
        assert!(
            close.findings.iter().all(|f| f.futility.is_none()),
            "{close:?}"
        );
        assert_eq!(res.left_after("clear"), Some(5));
        // Round 6 measures only "close"; "clear" keeps its verdict of five runs each.
        let (a6, b6) = ([&a[..], &[101.0]].concat(), [&b[..], &[108.0]].concat());
        res.runs.retain(|r| r.scenario != "close");
        runs_of(&mut res, "close", &a6, &b6);
        watch.after_round(&mut res, dir, 6);
        let clear = of(&res, "clear").unwrap();
        assert_eq!(clear.left_after_round, Some(5));
        assert!(clear.findings.iter().all(|f| f.runs == 5), "{clear:?}");
        assert!(of(&res, "close")
            .unwrap()
            .findings
            .iter()
            .all(|f| f.runs == 6));
    }

    #[test]
    fn a_question_no_round_can_decide_is_stopped_for_futility_with_its_sentence() {
        let sequential = Sequential {
            budget: None,
            margin: 0.05,
        };
        let mut watch = VerdictWatch::new_for(Design::sequential(0.05), Some(sequential));
        let mut res = blank_results(&["a", "b"]);
        // /plaintext's spread (about 15% a run) with the two sides' medians close together.
        runs_of(
            &mut res,
            "plaintext",
            &[20.1, 24.3, 19.0, 23.9, 17.2, 21.5, 25.8],
            &[21.9, 18.1, 24.0, 17.2, 23.4, 20.3, 25.1],
        );
        let stop = watch.after_round(&mut res, Path::new("/none"), 7);
        assert!(stop, "its only scenario closed: repeating stops");
        let v = &res.verdicts[0];
        assert_eq!(v.left_after_round, Some(7));
        let s = &v.sentence;
        assert!(
            s.contains("stopped for futility: the 5 round(s) left had a 0% chance")
                && s.contains("12 runs a side would tell apart a difference of"),
            "{s}"
        );
        assert!(
            (watch.stopped.as_deref()).is_some_and(|w| w.contains("stopped for futility")),
            "{:?}",
            watch.stopped
        );
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
