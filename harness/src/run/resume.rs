//! A plan measured in several sittings (`run --resume DIR`): the results directory of an
//! interrupted or budget-stopped plan is reopened and its rounds continue where they ended,
//! with the runs it kept. The plan must be the one they were measured with (only the budget,
//! which is per sitting, may differ). A contender's round cut short is measured again whole (a
//! fresh process per round, as always), so every (contender, scenario, round) appears once.
//!
//! The sequential design is unchanged by a break: its looks come after every round, at the
//! same threshold, on the same runs, whether the rounds ran in one sitting or several.

use crate::plan::{Plan, Scenario};
use crate::results::record::{Results, RunStatus};
use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::path::Path;

/// The results in `dir` reopened to continue `plan` there.
pub fn reopen(dir: &Path, plan: &Plan) -> Result<Results> {
    let path = dir.join("results.json");
    let mut res = Results::load(&path).with_context(|| {
        format!(
            "--resume {}: no results to continue there (name the directory a plan wrote, \
             e.g. results/20261125-191200-demo)",
            dir.display()
        )
    })?;
    let differs = differing_fields(&res.plan, &serde_json::to_value(plan)?);
    if !differs.is_empty() {
        bail!(
            "--resume {}: those results were measured with another plan (it differs in: {}); \
             resume with the same plan file and flags (only --budget may change), or start \
             anew without --resume",
            dir.display(),
            differs.join(", ")
        );
    }
    if res
        .runs
        .iter()
        .any(|r| r.details.probe().is_some_and(|p| p.search == 0))
    {
        bail!(
            "--resume {}: its capacity probes were written before iobound kept which search \
             each belongs to, so the searches cut short cannot be told apart; start anew \
             without --resume",
            dir.display()
        );
    }
    let before = res.runs.len();
    let names: Vec<String> = res.contenders.iter().map(|c| c.name.clone()).collect();
    let scenarios = &plan.scenarios;
    // A run cut by the stop, and its contender's round with it, is measured again (a capacity
    // search the stop cut short likewise, with every probe of its round; a probe given up
    // early for breaking its SLO is incomplete too, and is not a cut: the search says which).
    let cut: BTreeSet<(String, u32)> = res
        .runs
        .iter()
        .filter(|r| r.status == RunStatus::Incomplete && r.details.probe().is_none())
        .map(|r| (r.contender.clone(), r.round()))
        .chain(
            res.capacity
                .iter()
                .filter(|c| c.cut_short)
                .map(|c| (c.contender.clone(), c.repeat)),
        )
        .chain(partial_rounds(&res, &names, scenarios))
        .collect();
    res.runs
        .retain(|r| !cut.contains(&(r.contender.clone(), r.round())));
    res.capacity
        .retain(|c| !cut.contains(&(c.contender.clone(), c.repeat)));
    if res.runs.len() < before {
        eprintln!(
            "iobound: --resume: {} run(s) of {} round(s) cut short are measured again",
            before - res.runs.len(),
            cut.len()
        );
    }
    super::ready_for_writing(dir).with_context(|| {
        format!(
            "--resume {}: the directory is not writable; to continue it, copy it where you may \
             write and --resume the copy",
            dir.display()
        )
    })?;
    res.resumed_at.push(crate::util::clock::now());
    res.complete = false;
    res.incomplete_reason = Some("running".into());
    res.finished_at = None;
    Ok(res)
}

/// The plan's fields (dotted) whose values differ, the budget left out.
fn differing_fields(was: &serde_json::Value, now: &serde_json::Value) -> Vec<String> {
    let per_sitting = |v: &serde_json::Value| {
        let mut v = v.clone();
        if let Some(s) = v.get_mut("sequential").and_then(|s| s.as_object_mut()) {
            s.remove("budget");
        }
        v
    };
    let (was, now) = (per_sitting(was), per_sitting(now));
    let (Some(a), Some(b)) = (was.as_object(), now.as_object()) else {
        return vec!["the whole plan".into()];
    };
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| k.to_string())
        .collect()
}

/// Whether `contender` was measured in round `run` on every scenario (a failed run counts:
/// it was measured, and failed; a capacity scenario by its search's answer).
pub fn finished(res: &Results, contender: &str, scenarios: &[Scenario], run: u32) -> bool {
    scenarios.iter().filter(|s| runs_in(res, s, run)).all(|s| {
        if s.capacity.is_some() {
            return res
                .capacity
                .iter()
                .any(|c| c.contender == contender && c.scenario == s.name && c.repeat == run);
        }
        res.runs
            .iter()
            .any(|r| r.contender == contender && r.scenario == s.name && r.run == run)
    })
}

/// Whether scenario `s` is measured in round `run`: not once every question of it was closed
/// in an earlier round (decided, or stopped for futility).
pub fn runs_in(res: &Results, s: &Scenario, run: u32) -> bool {
    res.left_after(&s.name).is_none_or(|left| run <= left)
}

/// Rounds every one of `names` finished, from the first on.
pub fn rounds_done(res: &Results, names: &[String], scenarios: &[Scenario]) -> u32 {
    let mut n = 0;
    while names.iter().all(|c| finished(res, c, scenarios, n + 1)) && !names.is_empty() {
        n += 1;
    }
    n
}

/// (contender, round) pairs with some scenarios measured and others not.
fn partial_rounds(res: &Results, names: &[String], scenarios: &[Scenario]) -> Vec<(String, u32)> {
    let rounds: BTreeSet<(String, u32)> = res
        .runs
        .iter()
        .filter(|r| names.contains(&r.contender))
        .map(|r| (r.contender.clone(), r.round()))
        .collect();
    rounds
        .into_iter()
        .filter(|(c, run)| !finished(res, c, scenarios, *run))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::test_support::{blank_results, blank_run};

    fn plan() -> Plan {
        crate::plan::PlanFile {
            contenders: vec!["a".into(), "b".into()],
            scenarios: ["s1", "s2"]
                .iter()
                .map(|n| crate::plan::ScenarioFile {
                    name: n.to_string(),
                    path: Some("/plaintext".into()),
                    load: crate::plan::LoadFile {
                        model: "closed".into(),
                        users: Some(1),
                        duration: Some("1s".into()),
                        ..Default::default()
                    },
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
        .validate()
        .unwrap()
    }

    /// `plan()`, a directory to save into, and blank results of its contenders recording it.
    fn measured() -> (Plan, tempfile::TempDir, Results) {
        let p = plan();
        let mut res = blank_results(&["a", "b"]);
        res.plan = serde_json::to_value(&p).unwrap();
        (p, tempfile::tempdir().unwrap(), res)
    }

    #[test]
    fn rounds_cut_short_are_measured_again_whole_and_finished_ones_kept() {
        let (p, dir, mut res) = measured();
        for (c, s, run, status) in [
            ("a", "s1", 1, RunStatus::Ok),
            ("a", "s2", 1, RunStatus::Ok),
            ("b", "s1", 1, RunStatus::Failed),
            ("b", "s2", 1, RunStatus::Ok),
            ("a", "s1", 2, RunStatus::Ok),
            ("a", "s2", 2, RunStatus::Incomplete),
            ("b", "s1", 2, RunStatus::Ok),
        ] {
            let mut r = blank_run(c, s, run);
            r.status = status;
            res.runs.push(r);
        }
        res.save(dir.path()).unwrap();
        let back = reopen(dir.path(), &p).unwrap();
        // Round 2 of a was cut (an incomplete run) and b's has s2 missing: both measured again.
        let kept: Vec<(String, String, u32)> = back
            .runs
            .iter()
            .map(|r| (r.contender.clone(), r.scenario.clone(), r.run))
            .collect();
        assert_eq!(kept.len(), 4, "{kept:?}");
        assert!(kept.iter().all(|k| k.2 == 1), "{kept:?}");
        let names = vec!["a".to_string(), "b".to_string()];
        assert_eq!(rounds_done(&back, &names, &p.scenarios), 1);
        assert!(!finished(&back, "a", &p.scenarios, 2));
        assert_eq!(back.resumed_at.len(), 1);
        assert_eq!(back.incomplete_reason.as_deref(), Some("running"));
    }

    #[test]
    fn a_scenario_that_left_the_rounds_is_not_missing_from_later_ones() {
        use crate::results::record::VerdictRecord;
        let (p, dir, mut res) = measured();
        // s1 was closed after round 2; rounds 3 and 4 measured s2 alone.
        for (s, rounds) in [("s1", 1..=2), ("s2", 1..=4)] {
            for run in rounds {
                for c in ["a", "b"] {
                    let mut r = blank_run(c, s, run);
                    r.status = RunStatus::Ok;
                    res.runs.push(r);
                }
            }
        }
        res.verdicts = vec![VerdictRecord {
            scenario: "s1".into(),
            left_after_round: Some(2),
            ..Default::default()
        }];
        let [s1, s2] = [&p.scenarios[0], &p.scenarios[1]];
        assert!(runs_in(&res, s1, 2) && !runs_in(&res, s1, 3));
        assert!(runs_in(&res, s2, 3) && runs_in(&res, s2, 13));
        res.save(dir.path()).unwrap();
        let back = reopen(dir.path(), &p).unwrap();
        assert_eq!(back.runs.len(), 12, "no round was taken for one cut short");
        let names = vec!["a".to_string(), "b".to_string()];
        assert_eq!(rounds_done(&back, &names, &p.scenarios), 4);
        assert!(!finished(&back, "a", &p.scenarios, 5));
    }

    #[test]
    fn a_capacity_search_cut_short_is_searched_again_with_all_its_probes() {
        use crate::results::details::{Detail, Probe};
        use crate::results::record::CapacityResult;
        let p = crate::plan::PlanFile {
            contenders: vec!["a".into()],
            scenarios: vec![crate::plan::ScenarioFile {
                name: "wait".into(),
                path: Some("/delay?ms=100".into()),
                load: crate::plan::LoadFile {
                    model: "open".into(),
                    rate: Some(100.0),
                    duration: Some("3s".into()),
                    ..Default::default()
                },
                capacity: Some(crate::plan::CapacityFile {
                    slo: vec!["p99<=200ms".into()],
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        }
        .validate()
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut res = blank_results(&["a"]);
        res.plan = serde_json::to_value(&p).unwrap();
        // Search 1: three probes and its answer; search 2: two probes, stopped by the user.
        for (k, (search, rate)) in [(1, 100.0), (1, 200.0), (1, 141.0), (2, 100.0), (2, 200.0)]
            .into_iter()
            .enumerate()
        {
            let mut r = blank_run("a", &format!("wait@{rate}"), k as u32 + 1);
            // The probes at 200 broke the SLO so far that they were given up: incomplete.
            r.status = if rate > 150.0 {
                RunStatus::Incomplete
            } else {
                RunStatus::Ok
            };
            r.details.set(Detail::Probe(Probe {
                passed: rate < 150.0,
                stopped_early: rate > 150.0,
                ..crate::results::test_support::blank_probe(rate, search)
            }));
            res.runs.push(r);
        }
        for (repeat, cut_short) in [(1, false), (2, true)] {
            res.capacity.push(CapacityResult {
                cut_short,
                ..crate::results::test_support::blank_search("a", repeat, Some(141.0), Some(200.0))
            });
        }
        res.save(dir.path()).unwrap();
        let back = reopen(dir.path(), &p).unwrap();
        assert_eq!(
            back.runs.len(),
            3,
            "search 2's probes go with it; search 1's given-up probe is not a cut"
        );
        assert_eq!(back.capacity.len(), 1);
        let names = vec!["a".to_string()];
        assert_eq!(rounds_done(&back, &names, &p.scenarios), 1);
        assert!(!finished(&back, "a", &p.scenarios, 2));

        // Probes that do not say their search cannot be resumed safely: refused, not guessed.
        let mut old = back.clone();
        for r in &mut old.runs {
            if let Some(mut probe) = r.details.probe().cloned() {
                probe.search = 0;
                r.details.set(Detail::Probe(probe));
            }
        }
        old.save(dir.path()).unwrap();
        let e = format!("{:#}", reopen(dir.path(), &p).unwrap_err());
        assert!(e.contains("start anew without --resume"), "{e}");
    }

    #[test]
    fn a_committed_directory_without_its_logs_is_resumed_with_them() {
        // Results committed under docs/results keep no logs/ (nor, for a plan whose runs were
        // all cut, histograms/): resuming one failed when the first contender's log was opened.
        let (p, dir, res) = measured();
        res.save(dir.path()).unwrap();
        assert!(!dir.path().join("logs").exists());
        reopen(dir.path(), &p).unwrap();
        assert!(dir.path().join("logs").is_dir(), "logs/ recreated");
        assert!(
            dir.path().join("histograms").is_dir(),
            "histograms/ recreated"
        );
    }

    #[test]
    fn another_plan_is_refused_with_what_differs() {
        let (p, dir, mut res) = measured();
        res.plan["runs"] = serde_json::json!(3);
        res.save(dir.path()).unwrap();
        let e = format!("{:#}", reopen(dir.path(), &p).unwrap_err());
        assert!(e.contains("it differs in: runs"), "{e}");
        let e = format!("{:#}", reopen(Path::new("/nonexistent"), &p).unwrap_err());
        assert!(
            e.contains("--resume /nonexistent: no results to continue there"),
            "{e}"
        );
    }
}
