//! Capacities compared: a capacity scenario searched once per round gives each contender one
//! capacity per search, and each pair of contenders is judged on them as a headline metric is
//! on its runs (the rank test and the ratio's interval, by the plan's design). Three rules are
//! the capacity's own:
//! - a search whose warm-up did not settle enters no finding (it is counted as left out), nor
//!   does one the user cut short, and a search that found no capacity (the SLO broke at the
//!   first rate) has no value to rank;
//! - the equivalence margin is at least the search's precision: a bisection stops within it, so
//!   two capacities on the same step of the search say no more than that;
//! - a search that stopped before the SLO broke (at its max_rate, or where the driver could not
//!   offer more) gives a lower bound: a difference is still tested by ranks when only one side
//!   has such a search and it is the higher, but two sides that both do cannot be ordered, and
//!   no bound is ever called equivalent.

use super::judge::{judged, Design, ScenarioFindings};
use super::runs::capacity_scenarios;
use crate::results::record::{CapacityResult, Finding, Results};

/// The metric key of capacity findings.
pub const METRIC: &str = "capacity";

/// The findings of every capacity scenario, in the order the scenarios were searched.
pub fn findings(results: &Results, design: Design) -> Vec<ScenarioFindings> {
    capacity_scenarios(results)
        .iter()
        .map(|scenario| scenario_findings(results, scenario, design))
        .collect()
}

/// One contender's searches of a scenario: the capacities that may be ranked, and whether one
/// of them is a lower bound.
struct Searches<'a> {
    contender: &'a str,
    capacities: Vec<f64>,
    bounded: bool,
}

fn scenario_findings(results: &Results, scenario: &str, design: Design) -> ScenarioFindings {
    let of_scenario = || results.capacity.iter().filter(|c| c.scenario == scenario);
    let unsettled_runs = of_scenario().filter(|c| c.warmup_unsettled).count();
    let sides: Vec<Searches> = results
        .contenders
        .iter()
        .filter_map(|c| {
            let counted: Vec<&CapacityResult> = of_scenario()
                .filter(|s| s.contender == c.name && s.ranked())
                .filter(|s| s.capacity_rps.is_some())
                .collect();
            (!counted.is_empty()).then(|| Searches {
                contender: &c.name,
                capacities: counted.iter().filter_map(|s| s.capacity_rps).collect(),
                bounded: counted.iter().any(|s| s.failed_rps.is_none()),
            })
        })
        .collect();
    let design = Design {
        margin: design
            .margin
            .max(precision(results, scenario).unwrap_or(0.0)),
        ..design
    };
    let driver_limited = |contender: &str| {
        of_scenario().any(|s| s.contender == contender && s.driver_limited && s.ranked())
    };
    let mut findings = Vec::new();
    for (i, a) in sides.iter().enumerate() {
        for b in &sides[i + 1..] {
            let mut f = judged(
                METRIC,
                (a.contender, b.contender),
                (&a.capacities, &b.capacities),
                design,
            );
            f.driver_limited = driver_limited(a.contender) || driver_limited(b.contender);
            bound(&mut f, a, b, design.alpha);
            findings.push(f);
        }
    }
    ScenarioFindings {
        scenario: scenario.to_string(),
        findings,
        unsettled_runs,
    }
}

/// A finding where a side's capacity is a lower bound: not tested when both sides are
/// bounded, nor when the bounded side is the lower (its true capacity may be above the other);
/// when it is the higher, its true capacity is higher still, so a difference stands, and an
/// equivalence (computed on the bound) stands only as the difference its rank test found.
fn bound(f: &mut Finding, a: &Searches, b: &Searches, alpha: f64) {
    if !(a.bounded || b.bounded) || f.outcome == "not tested" {
        return;
    }
    f.lower_bound = true;
    let bounded_side_higher = {
        let (bounded, other) = if a.bounded { (a, b) } else { (b, a) };
        median(&bounded.capacities) > median(&other.capacities)
    };
    let untested = (a.bounded && b.bounded)
        || !bounded_side_higher
        || (f.outcome == "equivalent" && !f.p.is_some_and(|p| p <= alpha));
    if untested {
        f.outcome = "not tested".into();
        f.p = None;
        (f.ratio, f.ratio_lo, f.ratio_hi) = (None, None, None);
    } else if f.outcome == "equivalent" {
        f.outcome = "different".into();
    }
}

fn median(v: &[f64]) -> f64 {
    crate::util::numbers::median(v.to_vec())
}

/// The search's precision (the plan's `[scenario.capacity] precision`, a fraction).
fn precision(results: &Results, scenario: &str) -> Option<f64> {
    results
        .plan
        .get("scenarios")?
        .as_array()?
        .iter()
        .find(|s| s.get("name").and_then(|n| n.as_str()) == Some(scenario))?
        .get("capacity")?
        .get("precision")?
        .as_f64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::test_support::{blank_results, blank_search};

    /// One search's answer: the capacity, and the failing rate above it (None: a bound).
    type Found = (f64, Option<f64>);

    /// A plan of one capacity scenario searched to `precision`, and each contender's searches.
    fn searched(precision: f64, searches: &[(&str, &[Found])]) -> Results {
        let names: Vec<&str> = searches.iter().map(|s| s.0).collect();
        let mut r = blank_results(&names);
        r.plan = serde_json::json!({
            "scenarios": [{ "name": "wait", "capacity": { "precision": precision } }]
        });
        for (contender, found) in searches {
            for (i, (capacity, failed)) in found.iter().enumerate() {
                r.capacity.push(blank_search(
                    contender,
                    i as u32 + 1,
                    Some(*capacity),
                    *failed,
                ));
            }
        }
        r
    }

    fn only(r: &Results) -> Finding {
        let all = findings(r, Design::fixed(0.05));
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].findings.len(), 1, "{:?}", all[0].findings);
        all[0].findings[0].clone()
    }

    #[test]
    fn separated_capacities_are_a_tested_difference() {
        let mvc = [(1945.0, Some(2121.0)); 5];
        let flux = [
            (17602.0, Some(20000.0)),
            (16000.0, Some(17602.0)),
            (17602.0, Some(20000.0)),
            (16000.0, Some(17602.0)),
            (17602.0, Some(20000.0)),
        ];
        let f = only(&searched(0.15, &[("mvc", &mvc[..]), ("flux", &flux[..])]));
        assert_eq!(f.outcome, "different", "{f:?}");
        assert_eq!(f.runs, 5);
        assert!(f.p.unwrap() < 0.05, "{f:?}");
        assert!(f.ratio.unwrap() > 8.0, "{f:?}");
        let words = super::super::verdict_words::describe(&f);
        assert!(
            words.starts_with("flux 9.05x mvc's capacity (tested"),
            "{words}"
        );
    }

    #[test]
    fn equal_steps_are_equivalent_only_within_the_search_precision() {
        let same = [(3701.0, Some(4036.0)); 4];
        let f = only(&searched(0.15, &[("a", &same[..]), ("b", &same[..])]));
        assert_eq!(f.outcome, "equivalent", "{f:?}");
        assert_eq!(
            f.margin, 0.15,
            "the margin is the search's precision, not 5%"
        );
        let words = super::super::verdict_words::describe(&f);
        assert!(words.contains("equivalent within 15%"), "{words}");
    }

    #[test]
    fn bounds_on_both_sides_are_not_ordered_and_one_bound_is_never_equivalent() {
        let at_max = [(20000.0, None); 4];
        let f = only(&searched(
            0.15,
            &[("go", &at_max[..]), ("node", &at_max[..])],
        ));
        assert_eq!(f.outcome, "not tested", "{f:?}");
        assert!(f.lower_bound && f.ratio.is_none(), "{f:?}");
        let words = super::super::verdict_words::describe(&f);
        assert!(words.contains("stopped at a bound"), "{words}");

        // Under the max on one side (it broke there), at it on the other: within 15% by the
        // figures, but the bound is a floor, so not equivalent; the ranks still order them.
        let under = [(17602.0, Some(20000.0)); 4];
        let f = only(&searched(
            0.15,
            &[("flux", &under[..]), ("go", &at_max[..])],
        ));
        assert_eq!(f.outcome, "different", "{f:?}");
        assert!(f.lower_bound, "{f:?}");
        // A bound below the other side orders nothing.
        let driver_bound = [(15000.0, None); 4];
        let f = only(&searched(
            0.15,
            &[("flux", &under[..]), ("go", &driver_bound[..])],
        ));
        assert_eq!(f.outcome, "not tested", "{f:?}");

        // Far apart: the bound is above the other side, so the ranks still order them.
        let low = [(1945.0, Some(2121.0)); 4];
        let f = only(&searched(0.15, &[("mvc", &low[..]), ("go", &at_max[..])]));
        assert_eq!(f.outcome, "different", "{f:?}");
        assert!(f.lower_bound);
        let words = super::super::verdict_words::describe(&f);
        assert!(words.contains("lower bound"), "{words}");
    }

    #[test]
    fn unsettled_and_cut_searches_enter_no_finding() {
        let mut r = searched(
            0.15,
            &[
                ("mvc", &[(1945.0, Some(2121.0)); 4][..]),
                ("flux", &[(17602.0, Some(20000.0)); 4][..]),
            ],
        );
        r.capacity[0].warmup_unsettled = true;
        let all = findings(&r, Design::fixed(0.05));
        assert_eq!(all[0].unsettled_runs, 1);
        let f = &all[0].findings[0];
        assert_eq!((f.runs, f.outcome.as_str()), (3, "not tested"), "{f:?}");
        // A search the user cut short is not ranked either (`--resume` searches it again).
        r.capacity[1].cut_short = true;
        let all = findings(&r, Design::fixed(0.05));
        assert_eq!(all[0].findings[0].runs, 2);
    }
}
