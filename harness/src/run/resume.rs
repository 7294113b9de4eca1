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
    let before = res.runs.len();
    let names: Vec<String> = res.contenders.iter().map(|c| c.name.clone()).collect();
    let scenarios = &plan.scenarios;
    // A run cut by the stop, and its contender's round with it, is measured again.
    let cut: BTreeSet<(String, u32)> = res
        .runs
        .iter()
        .filter(|r| r.status == RunStatus::Incomplete)
        .map(|r| (r.contender.clone(), r.run))
        .chain(partial_rounds(&res, &names, scenarios))
        .collect();
    res.runs
        .retain(|r| !cut.contains(&(r.contender.clone(), r.run)));
    if res.runs.len() < before {
        eprintln!(
            "iobound: --resume: {} run(s) of {} round(s) cut short are measured again",
            before - res.runs.len(),
            cut.len()
        );
    }
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
/// it was measured, and failed).
pub fn finished(res: &Results, contender: &str, scenarios: &[Scenario], run: u32) -> bool {
    scenarios.iter().all(|s| {
        res.runs
            .iter()
            .any(|r| r.contender == contender && r.scenario == s.name && r.run == run)
    })
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
        .map(|r| (r.contender.clone(), r.run))
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

    #[test]
    fn rounds_cut_short_are_measured_again_whole_and_finished_ones_kept() {
        let p = plan();
        let dir = tempfile::tempdir().unwrap();
        let mut res = blank_results(&["a", "b"]);
        res.plan = serde_json::to_value(&p).unwrap();
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
    fn another_plan_is_refused_with_what_differs() {
        let p = plan();
        let dir = tempfile::tempdir().unwrap();
        let mut res = blank_results(&["a", "b"]);
        let mut other = serde_json::to_value(&p).unwrap();
        other["runs"] = serde_json::json!(3);
        res.plan = other;
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
