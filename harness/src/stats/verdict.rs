//! A verdict per scenario, built only from tested or equivalence statements: for each pair of
//! contenders (the plan's first of the pair as baseline) and each headline metric (throughput,
//! p99 of all requests, CPU per request), whether they differ (the rank test), are equivalent
//! within the margin (the ratio's interval inside 1 +- margin), or are still undecided, and
//! after how many runs. Everything else is "undecided" or "not tested", with what would decide
//! it.

use super::judge::judged;
pub use super::judge::{Design, Left, ScenarioFindings};
use super::repeats::settled_cell;
use super::sequential;
use super::verdict_words::{sentence, Headline, HEADLINES};
use super::{scenarios, Cell};
use crate::results::dir::ResultsDir;
use crate::results::record::{Finding, Results, VerdictRecord};
use crate::results::steady::unsettled;
use std::collections::BTreeMap;

/// Every finding of every scenario: per pair of contenders with results, per headline metric
/// (each contender's cell computed once per scenario), then those of capacity searches. Only
/// runs at steady state enter a finding: the others are counted, shown in the tables, and left
/// out here (so the sequential design runs another in their place).
pub fn findings(set: ResultsDir, design: Design) -> Vec<ScenarioFindings> {
    let results = set.results;
    scenarios(results)
        .into_iter()
        .map(|scenario| {
            let cells: Vec<Cell> = results
                .contenders
                .iter()
                .filter_map(|c| settled_cell(set, &scenario, &c.name))
                .collect();
            let unsettled_runs = results
                .runs
                .iter()
                .filter(|r| r.scenario == scenario && unsettled(results, r))
                .count();
            let mut out = Vec::new();
            for (i, a) in cells.iter().enumerate() {
                for b in &cells[i + 1..] {
                    for h in HEADLINES {
                        if let Some(f) = finding(h, a, b, design) {
                            out.push(f);
                        }
                    }
                }
            }
            ScenarioFindings {
                scenario,
                findings: out,
                unsettled_runs,
            }
        })
        .chain(super::capacity::findings(results, design))
        .collect()
}

/// The design a stored plan was judged with: sequential where it repeated until decided
/// (`runs = "auto"` keeps its margin in `sequential`), a single look after a fixed number of
/// runs otherwise (at the plan's `margin` when it set one).
pub fn design_of(plan: &serde_json::Value) -> Design {
    design(
        plan["sequential"]["margin"].as_f64(),
        plan["margin"].as_f64(),
    )
}

/// The design of a plan that repeats until decided at `sequential_margin` (`runs = "auto"`),
/// or else takes a single look after a fixed number of runs, at `fixed_margin` when the plan
/// set one: the one rule for a plan being run and for one stored.
pub fn design(sequential_margin: Option<f64>, fixed_margin: Option<f64>) -> Design {
    match sequential_margin {
        Some(m) => Design::sequential(m),
        None => Design::fixed(fixed_margin.unwrap_or(sequential::DEFAULT_MARGIN)),
    }
}

/// B against A on any metric of METRICS (peak threads, peak RSS, ...), judged from their
/// settled runs as the headlines are (a figure of the start from every run), by the plan's
/// design: for prose that quotes a tested difference the stored verdicts do not hold. None
/// when either has no such run.
pub fn finding_on(
    set: ResultsDir,
    scenario: &str,
    metric: &super::Metric,
    (b, a): (&str, &str),
) -> Option<Finding> {
    let cell_of = cells_for(metric);
    let ca = cell_of(set, scenario, a)?;
    let cb = cell_of(set, scenario, b)?;
    finding(&headline(metric), &ca, &cb, design_of(&set.results.plan))
}

/// Which runs a metric is judged over: a figure of the start (time to first 200, to steady
/// state) over every run that ended, since a start happens whether or not its window settles;
/// any other over the runs at steady state.
fn cells_for(metric: &super::Metric) -> fn(ResultsDir, &str, &str) -> Option<Cell> {
    if metric.at_start {
        super::repeats::cell
    } else {
        settled_cell
    }
}

/// A metric of METRICS judged as a headline is.
fn headline(metric: &super::Metric) -> Headline {
    Headline {
        key: metric.key,
        words: metric.label,
        // Only the contender's own CPU per request cannot be bounded by a saturated driver.
        load_bound: metric.key != "cpu",
    }
}

/// One contender against itself in two places, each a result set and a scenario of it (`before`
/// = A, `after` = B): a limit, a tuning or a release in two sets, or two scenarios of one plan
/// (a fault and the baseline before it). Judged from the settled runs of each by `after`'s
/// plan's design (from every run that ended for a metric of its start).
pub fn finding_between(
    (before, before_scenario): (ResultsDir, &str),
    (after, after_scenario): (ResultsDir, &str),
    contender: &str,
    metric: &super::Metric,
) -> Option<Finding> {
    let cell_of = cells_for(metric);
    let ca = cell_of(before, before_scenario, contender)?;
    let cb = cell_of(after, after_scenario, contender)?;
    finding(&headline(metric), &ca, &cb, design_of(&after.results.plan))
}

fn finding(h: &Headline, a: &Cell, b: &Cell, design: Design) -> Option<Finding> {
    let (va, vb) = (a.of(h.key), b.of(h.key));
    if !va.value.is_finite() || !vb.value.is_finite() {
        return None; // not measured (older results, or no CPU figures)
    }
    // No run of either side answered a request ok (a fan-out whose one call fails answers
    // only the 502 its contract asks for): both throughputs are zero in every run, nothing
    // tells them apart, and a question no run could decide would keep `runs = "auto"` going
    // to its budget. Their p99 of all requests still says how fast each failed.
    if h.key == "throughput" && va.per_run.iter().chain(&vb.per_run).all(|v| *v == 0.0) {
        return None;
    }
    // Nor is a figure of ok answers (CPU per request) a question where a side answered none.
    let metric = super::Metric::named(h.key);
    if !super::metrics::measured(metric, a) || !super::metrics::measured(metric, b) {
        return None;
    }
    let mut f = judged(
        h.key,
        (&a.contender, &b.contender),
        (&va.per_run, &vb.per_run),
        design,
    );
    f.driver_limited = h.load_bound && (a.saturated_runs > 0 || b.saturated_runs > 0);
    Some(f)
}

/// Whether every finding is decided (different or equivalent); false with no findings.
pub fn all_decided(all: &[ScenarioFindings]) -> bool {
    let mut fs = all.iter().flat_map(|s| &s.findings).peekable();
    fs.peek().is_some() && fs.all(Finding::decided)
}

/// Whether every finding is closed (decided, or stopped for futility); false with none.
pub fn all_closed(all: &[ScenarioFindings]) -> bool {
    let mut fs = all.iter().flat_map(|s| &s.findings).peekable();
    fs.peek().is_some() && fs.all(Finding::closed)
}

/// The verdict records of `all` findings: a sentence per scenario that has any, with the round
/// after which it `left` the rounds where it did.
pub fn records(
    all: &[ScenarioFindings],
    stopped: &str,
    left: &BTreeMap<String, u32>,
) -> Vec<VerdictRecord> {
    all.iter()
        .filter(|s| !s.findings.is_empty())
        .map(|s| {
            let left_after_round = left.get(&s.scenario).copied();
            let mut sentence = sentence(&s.scenario, &s.findings, s.unsettled_runs);
            if let Some(round) = left_after_round {
                sentence.push_str(&format!(
                    " [every question closed after round {round}: not run again]"
                ));
            }
            VerdictRecord {
                sentence,
                decided: s.findings.iter().all(Finding::decided),
                scenario: s.scenario.clone(),
                stopped: stopped.into(),
                findings: s.findings.clone(),
                left_after_round,
            }
        })
        .collect()
}

/// The stored runs judged again by today's rules, at the plan's last look (as its last round
/// would judge them now), why repeating stopped kept; `rejudged_at` says when. Each measured
/// window that was judged is judged again first, by today's steady-state rule, so that the
/// runs a verdict may use are today's too.
pub fn rejudge(res: &mut Results, dir: &std::path::Path) {
    res.runs
        .iter_mut()
        .for_each(crate::observe::window_judge::rejudge_window);
    let design = design_of(&res.plan);
    let stopped = res
        .verdicts
        .first()
        .map_or_else(|| "fixed number of runs".to_string(), |v| v.stopped.clone());
    // What only the looks of the sitting knew is kept: when a scenario left the rounds, and
    // why an undecided question stopped (the rounds its budget still allowed then).
    let left: BTreeMap<String, u32> = (res.verdicts.iter())
        .filter_map(|v| Some((v.scenario.clone(), v.left_after_round?)))
        .collect();
    let futile: Vec<Finding> = (res.verdicts.iter())
        .flat_map(|v| &v.findings)
        .filter(|f| f.futility.is_some())
        .cloned()
        .collect();
    let mut all = findings(ResultsDir::new(res, dir), design);
    for f in all.iter_mut().flat_map(|s| &mut s.findings) {
        if let Some(was) = futile.iter().find(|w| {
            (&w.metric, &w.a, &w.b, w.runs) == (&f.metric, &f.a, &f.b, f.runs) && !f.decided()
        }) {
            f.futility.clone_from(&was.futility);
        }
    }
    res.verdicts = records(&all, &stopped, &left);
    res.windows = super::windows::all(res);
    res.rejudged_at = Some(crate::util::clock::now());
}

#[cfg(test)]
mod tests {
    use super::super::significance::ALPHA;
    use super::super::verdict_words::{describe, p_words};
    use super::*;
    use crate::results::test_support::{blank_results, ok_runs};

    #[test]
    fn too_few_runs_say_what_would_test_them_by_the_design_they_ran_under() {
        let short = |alpha: f64| Finding {
            metric: "throughput".into(),
            a: "x".into(),
            b: "y".into(),
            outcome: "not tested".into(),
            runs: 3,
            alpha,
            ..Finding::default()
        };
        // A fixed number of runs: more of them, or runs = "auto".
        let fixed = describe(&short(ALPHA));
        assert!(
            fixed.contains("a verdict needs 4 or more: use --runs auto"),
            "{fixed}"
        );
        // Runs = "auto" stopped short (its budget, or Ctrl-C): more rounds, not --runs auto.
        let auto = describe(&short(sequential::LOOK_ALPHA));
        assert!(
            auto.contains("a verdict needs 5 or more: more rounds would decide it")
                && !auto.contains("--runs auto"),
            "{auto}"
        );
    }
    use std::path::Path;

    fn results(a: &[f64], b: &[f64]) -> Results {
        let mut r = blank_results(&["mvc", "flux"]);
        ok_runs(&mut r, "mvc", "plaintext", a);
        ok_runs(&mut r, "flux", "plaintext", b);
        r
    }

    #[test]
    fn tiny_p_values_read_as_below_a_thousandth() {
        assert_eq!(p_words(Some(0.000155)), "p < 0.001");
        assert_eq!(p_words(Some(0.0005)), "p = 0.001");
        assert_eq!(p_words(Some(0.008)), "p = 0.008");
        assert_eq!(p_words(None), "p unknown");
    }

    #[test]
    fn a_clear_difference_is_a_tested_verdict_and_a_tie_is_equivalent() {
        let r = results(
            &[1000.0, 1010.0, 990.0, 1005.0, 995.0],
            &[3100.0, 3050.0, 3120.0, 3080.0, 3090.0],
        );
        let dir = Path::new("/nonexistent");
        let v = records(
            &findings(ResultsDir::new(&r, dir), Design::sequential(0.05)),
            "every headline decided",
            &BTreeMap::new(),
        );
        assert_eq!(v.len(), 1);
        let s = &v[0].sentence;
        assert!(
            s.starts_with(
                "plaintext: flux 3.09x mvc's throughput (tested: p = 0.008, 5 runs each)"
            ),
            "{s}"
        );
        assert!(
            s.contains("CPU per request mvc and flux equivalent within 5%"),
            "{s}"
        );
        assert!(v[0].decided, "{v:?}");
        assert!(all_decided(&findings(
            ResultsDir::new(&r, dir),
            Design::sequential(0.05)
        )));
    }

    #[test]
    fn a_fixed_number_of_runs_is_judged_at_the_plans_margin() {
        // flux answers 7% more, run after run: different at the default 5%, equivalent
        // within a margin of 10% that the plan set for its fixed number of runs.
        let mut r = results(
            &[1000.0, 1002.0, 998.0, 1001.0, 999.0],
            &[1070.0, 1072.0, 1068.0, 1071.0, 1069.0],
        );
        let sentence = |r: &Results| {
            let all = findings(
                ResultsDir::new(r, Path::new("/nonexistent")),
                design_of(&r.plan),
            );
            records(&all, "5 runs", &BTreeMap::new())[0]
                .sentence
                .clone()
        };
        r.plan = serde_json::json!({"runs": 5});
        let s = sentence(&r);
        assert!(s.contains("throughput flux +7% vs mvc (tested"), "{s}");
        r.plan = serde_json::json!({"runs": 5, "margin": 0.10});
        let s = sentence(&r);
        assert!(
            s.contains("throughput mvc and flux equivalent within 10%"),
            "{s}"
        );
        // Automatic repeats keep their margin in `sequential`, and it is that one that counts.
        r.plan = serde_json::json!({"runs": 12, "sequential": {"margin": 0.05}, "margin": 0.10});
        assert_eq!(design_of(&r.plan).margin, 0.05);
    }

    #[test]
    fn a_metric_at_zero_is_not_tested_for_that_reason_not_for_too_few_runs() {
        // One run of one side answered nothing ok: its throughput is 0, no ratio to test.
        let r = results(&[0.0, 900.0, 910.0, 905.0], &[950.0, 940.0, 960.0, 955.0]);
        let v = records(
            &findings(
                ResultsDir::new(&r, Path::new("/nonexistent")),
                Design::fixed(0.05),
            ),
            "4 runs",
            &BTreeMap::new(),
        );
        let s = &v[0].sentence;
        assert!(
            s.contains("throughput flux vs mvc not tested (zero in a run of 4 runs each"),
            "{s}"
        );
        assert!(!s.contains("a verdict needs"), "{s}");
    }

    #[test]
    fn where_no_run_of_either_side_answered_ok_throughput_is_no_question() {
        // Every answer an expected error (a fan-out whose first call fails): throughput 0 in
        // every run of both. No throughput finding, so it cannot hold runs = "auto" open; the
        // scenario's other headlines are judged as ever.
        let mut r = results(&[0.0; 5], &[0.0; 5]);
        let all = findings(
            ResultsDir::new(&r, Path::new("/nonexistent")),
            Design::sequential(0.05),
        );
        let metrics: Vec<&str> = all[0].findings.iter().map(|f| f.metric.as_str()).collect();
        assert_eq!(metrics, ["cpu"], "{all:?}");
        assert!(all_decided(&all), "{all:?}");
        // With no request answered ok at all, CPU per ok answer is no question either.
        for run in &mut r.runs {
            (run.summary.ok, run.summary.errors.status) = (0, 1000);
        }
        let all = findings(
            ResultsDir::new(&r, Path::new("/nonexistent")),
            Design::sequential(0.05),
        );
        assert!(all[0].findings.is_empty(), "{all:?}");
    }

    #[test]
    fn too_few_runs_are_not_tested_and_an_open_question_is_undecided() {
        let dir = Path::new("/nonexistent");
        let r = results(&[1000.0, 1010.0], &[3100.0, 3050.0]);
        let v = records(
            &findings(ResultsDir::new(&r, dir), Design::sequential(0.05)),
            "budget spent",
            &BTreeMap::new(),
        );
        assert!(
            v[0].sentence.contains("not tested (2 run(s) each"),
            "{}",
            v[0].sentence
        );
        assert!(!v[0].decided);
        // Overlapping and 10% noisy: neither different nor equivalent within 5%.
        let r = results(
            &[1000.0, 1100.0, 900.0, 1050.0, 950.0],
            &[1020.0, 1120.0, 930.0, 1060.0, 980.0],
        );
        let f = findings(ResultsDir::new(&r, dir), Design::sequential(0.05));
        let thr = f[0]
            .findings
            .iter()
            .find(|f| f.metric == "throughput")
            .unwrap();
        assert_eq!(thr.outcome, "undecided", "{thr:?}");
        assert!(describe(thr).contains("undecided after 5 runs each"));
        assert!(!all_decided(&f));
    }

    #[test]
    fn unsettled_runs_enter_no_verdict_and_a_saturated_driver_is_named() {
        let dir = Path::new("/nonexistent");
        let mut r = results(
            &[1000.0, 1010.0, 990.0, 1005.0, 995.0],
            &[3100.0, 3050.0, 3120.0, 3080.0, 3090.0],
        );
        // One mvc run measured on a plateau of its climb: left out, so 4 runs a side remain
        // and the sequential design (first look at 5) cannot test yet.
        r.runs[4].warmup = Some(crate::results::test_support::window_trended(8, 55.0));
        let all = findings(ResultsDir::new(&r, dir), Design::sequential(0.05));
        assert_eq!(all[0].unsettled_runs, 1);
        let f = &all[0].findings[0];
        assert_eq!((f.runs, f.outcome.as_str()), (4, "not tested"));
        let v = records(&all, "budget spent", &BTreeMap::new());
        assert!(
            v[0].sentence
                .ends_with("[1 run(s) not at steady state, left out of this verdict]"),
            "{}",
            v[0].sentence
        );
        // Settled again, but one flux run's driver saturated: throughput and p99 say they are a
        // bound; CPU per request (the contender's own) does not.
        r.runs[4].warmup = None;
        r.runs[7].driver.saturated = true;
        let v = records(
            &findings(ResultsDir::new(&r, dir), Design::sequential(0.05)),
            "decided",
            &BTreeMap::new(),
        );
        let s = &v[0].sentence;
        assert!(
            s.contains("flux 3.09x mvc's throughput (tested: p = 0.008, 5 runs each; driver-limited: a bound, not the server's figure)"),
            "{s}"
        );
        assert!(
            s.contains("CPU per request mvc and flux equivalent within 5% (ratio"),
            "{s}"
        );
        assert_eq!(s.matches("driver-limited").count(), 1, "{s}");
    }
}
