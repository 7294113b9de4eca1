//! Which runs were measured at steady state, the condition every verdict rests on. A run's
//! own warm-up record says so for most runs. An overload scenario's phases (calm, the rush,
//! after) have no warm-up of their own: they are measured right after the closed probe, on
//! the same process, so they are at steady state only when the probe was; a probe whose
//! window still trended leaves its phases unsettled too.

use super::record::{Results, Run};
use crate::plan::OverloadRuns;

/// Whether `r` was measured before its contender had settled: its warm-up said so, or its
/// measured window still trended, or it is an overload phase whose probe was unsettled.
pub fn unsettled(results: &Results, r: &Run) -> bool {
    let own = |r: &Run| r.warmup.as_ref().is_some_and(|w| w.unsettled());
    own(r) || probe_of(results, r).is_some_and(own)
}

/// The probe run an overload phase was measured right after: the same contender's run of
/// the same number in "<scenario>-probe", where `r`'s scenario is one of that scenario's
/// phases ("<scenario>-calm", "<scenario>-<factor>x", "<scenario>-after") by the plan.
pub fn probe_of<'a>(results: &'a Results, r: &Run) -> Option<&'a Run> {
    let probe = phase_probe(&results.plan, &r.scenario)?;
    results
        .runs
        .iter()
        .find(|p| p.scenario == probe && p.contender == r.contender && p.run == r.run)
}

/// The probe's scenario name for a phase's, read from the plan's overload scenarios by the
/// names the run stage gave them (plan::OverloadRuns).
fn phase_probe(plan: &serde_json::Value, phase: &str) -> Option<String> {
    let scenarios = plan.get("scenarios")?.as_array()?;
    scenarios.iter().find_map(|s| {
        let name = s.get("name")?.as_str()?;
        let factor = s.get("overload")?.get("factor")?.as_f64()?;
        let runs = OverloadRuns::of(name, factor);
        runs.is_phase(phase).then_some(runs.probe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::test_support::{blank_results, blank_run, window_trended};

    /// An overload plan's results: for each of two runs, the probe and its three phases.
    fn overload_results() -> Results {
        let mut r = blank_results(&["mvc"]);
        r.plan = serde_json::json!({"scenarios": [
            {"name": "over", "overload": {"factor": 5.0, "calm": 15.0, "duration": 20.0}},
            {"name": "plain"},
        ]});
        for run in 1..=2 {
            for scenario in ["over-probe", "over-calm", "over-5x", "over-after", "plain"] {
                r.runs.push(blank_run("mvc", scenario, run));
            }
        }
        r
    }

    #[test]
    fn an_overload_phase_is_unsettled_when_its_probe_was() {
        let mut r = overload_results();
        // Run 1's probe window trended; run 2's probe settled.
        r.runs[0].warmup = Some(window_trended(10, 20.0));
        let unsettled_of = |r: &Results, scenario: &str, run: u32| {
            let x = r
                .runs
                .iter()
                .find(|x| x.scenario == scenario && x.run == run)
                .unwrap();
            unsettled(r, x)
        };
        for phase in ["over-probe", "over-calm", "over-5x", "over-after"] {
            assert!(unsettled_of(&r, phase, 1), "{phase} of run 1");
            assert!(!unsettled_of(&r, phase, 2), "{phase} of run 2");
        }
        assert!(
            !unsettled_of(&r, "plain", 1),
            "not a phase: its own record only"
        );
        assert_eq!(probe_of(&r, &r.runs[2]).map(|p| p.run), Some(1));
        assert!(probe_of(&r, &r.runs[4]).is_none());
    }

    #[test]
    fn a_phase_name_counts_only_for_a_scenario_with_an_overload() {
        let plan = serde_json::json!({"scenarios": [
            {"name": "a", "overload": {"factor": 2.5}},
            {"name": "b"},
        ]});
        assert_eq!(phase_probe(&plan, "a-2.5x").as_deref(), Some("a-probe"));
        assert_eq!(phase_probe(&plan, "a-after").as_deref(), Some("a-probe"));
        assert_eq!(phase_probe(&plan, "a-5x"), None);
        assert_eq!(phase_probe(&plan, "b-calm"), None);
        assert_eq!(phase_probe(&serde_json::json!({}), "a-calm"), None);
    }
}
