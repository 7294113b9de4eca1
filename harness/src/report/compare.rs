//! `iobound compare A B`: two result sets (e.g. before and after a tuning change) side by side,
//! with the rules of the reports: medians over runs, merged-histogram percentiles, labelled
//! intervals, and a change called significant only by a Mann-Whitney test over runs (>= 4
//! runs on each side; fewer: "not tested"). With `--fail-if` rules it is a regression gate.

use super::fmt_metric_estimate;
use crate::results::dir::ResultsDir;
use crate::results::record::Results;
use crate::stats::gates::{gate, FailIf, GateResult, Outcome};
use crate::stats::{self, Cell, Difference, METRICS};
use anyhow::{bail, Result};

/// What every comparison of two sittings says first: its changes compare blocks.
pub const BLOCKS: &str = "this compares blocks: A's runs, then B's in another sitting; the \
     machine may drift between them, so a change below is a difference between two blocks, \
     not a verdict (for one, run both as interleaved contenders or arms of one plan)";

/// Pairs of (scenario, contender in A, contender in B) present in both result sets. When the
/// sets share no contender name but each has exactly one, those two are paired.
fn pairs(a: &Results, b: &Results) -> Vec<(String, String, String)> {
    let names_a: Vec<&str> = a.contenders.iter().map(|c| c.name.as_str()).collect();
    let names_b: Vec<&str> = b.contenders.iter().map(|c| c.name.as_str()).collect();
    let mut same: Vec<(String, String)> = names_a
        .iter()
        .filter(|n| names_b.contains(n))
        .map(|n| (n.to_string(), n.to_string()))
        .collect();
    if same.is_empty() && names_a.len() == 1 && names_b.len() == 1 {
        same.push((names_a[0].to_string(), names_b[0].to_string()));
    }
    let sb = stats::scenarios(b);
    let mut out = Vec::new();
    for s in stats::scenarios(a).into_iter().filter(|s| sb.contains(s)) {
        for (ca, cb) in &same {
            out.push((s.clone(), ca.clone(), cb.clone()));
        }
    }
    out
}

pub fn render(set_a: ResultsDir, set_b: ResultsDir) -> Result<String> {
    let (a, b) = (set_a.results, set_b.results);
    let pairs = pairs(a, b);
    if pairs.is_empty() {
        bail!(
            "the two result sets share no scenario with the same contender (A: {} / {}; B: {} / {}); compare runs of the same plan",
            stats::scenarios(a).join(", "),
            a.contenders.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", "),
            stats::scenarios(b).join(", "),
            b.contenders.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
        );
    }
    let mut out = String::new();
    out.push_str(&format!(
        "A: {} ({})\nB: {} ({})\n{BLOCKS}\n",
        set_a.dir.display(),
        a.started_at,
        set_b.dir.display(),
        b.started_at
    ));
    for (scenario, ca, cb) in pairs {
        let (Some(x), Some(y)) = (
            stats::cell(set_a, &scenario, &ca),
            stats::cell(set_b, &scenario, &cb),
        ) else {
            out.push_str(&format!("\n{scenario} / {ca}: not measured in both\n"));
            continue;
        };
        let who = if ca == cb {
            ca.clone()
        } else {
            format!("{ca} -> {cb}")
        };
        out.push_str(&format!("\n{scenario} / {who}\n"));
        out.push_str(&table(&x, &y));
        out.push_str(&format!("  A: {}\n  B: {}\n", x.method, y.method));
        for (tag, c) in [("A", &x), ("B", &y)] {
            if let Some(n) = &c.noisy {
                out.push_str(&format!("  noisy ({tag}): {n}\n"));
            }
        }
    }
    Ok(out)
}

/// Every `--fail-if` rule on every scenario and contender the two sets share (B against A).
pub fn gates(set_a: ResultsDir, set_b: ResultsDir, rules: &[FailIf]) -> Vec<GateResult> {
    let mut out = Vec::new();
    for (scenario, ca, cb) in pairs(set_a.results, set_b.results) {
        if let (Some(x), Some(y)) = (
            stats::cell(set_a, &scenario, &ca),
            stats::cell(set_b, &scenario, &cb),
        ) {
            out.extend(rules.iter().map(|r| gate(r, &x, &y)));
        }
    }
    out
}

/// Every `--fail-if` rule on every arm of one sitting against the contender it is an arm of
/// (`run --fail-if`), in each scenario both were measured in: the same test as between two
/// sittings, on runs that alternated.
pub fn arm_gates(set: ResultsDir, rules: &[FailIf]) -> Vec<GateResult> {
    let mut out = Vec::new();
    for arm in &set.results.contenders {
        let Some(base) = &arm.arm_of else {
            continue;
        };
        for scenario in stats::scenarios(set.results) {
            if let (Some(x), Some(y)) = (
                stats::cell(set, &scenario, base),
                stats::cell(set, &scenario, &arm.name),
            ) {
                out.extend(rules.iter().map(|r| gate(r, &x, &y)));
            }
        }
    }
    out
}

/// A line per gate: "FAIL spring-mvc / wait: p99 > +10%: p99 +23.4% (...), significant".
pub fn describe_gates(gates: &[GateResult]) -> String {
    let mut out = String::new();
    for g in gates {
        let tag = match g.outcome {
            Outcome::Pass => "pass",
            Outcome::Fail => "FAIL",
            Outcome::NotTested => "not tested",
        };
        out.push_str(&format!(
            "{tag:<10} {} / {}: {}: {}\n",
            g.contender, g.scenario, g.rule, g.detail
        ));
    }
    let failed = gates.iter().filter(|g| g.outcome == Outcome::Fail).count();
    let untested = gates
        .iter()
        .filter(|g| g.outcome == Outcome::NotTested)
        .count();
    out.push_str(&format!(
        "gates: {} checked, {failed} failed, {untested} beyond the limit but not tested\n",
        gates.len()
    ));
    out
}

fn table(x: &Cell, y: &Cell) -> String {
    let rows: Vec<(String, String, String, String)> = METRICS
        .iter()
        .filter(|m| stats::shown(m, [x, y].into_iter()))
        .map(|m| {
            let d = Difference::of(m, x, y);
            let verdict = match (d.significant, d.better) {
                (Some(true), Some(true)) => "better",
                (Some(true), Some(false)) => "worse",
                (Some(false), _) => "no significant change",
                (None, _) if d.change_pct.is_some() => {
                    "not tested (a test needs >= 4 runs each at steady state)"
                }
                _ => "",
            };
            (
                m.label.to_string(),
                fmt_metric_estimate(m, x),
                fmt_metric_estimate(m, y),
                format!(
                    "{} {verdict}",
                    d.describe().split(',').next().unwrap_or("-")
                ),
            )
        })
        .collect();
    let w1 = rows.iter().map(|r| r.1.len()).max().unwrap_or(1).max(1);
    let w2 = rows.iter().map(|r| r.2.len()).max().unwrap_or(1).max(1);
    let mut out = format!(
        "{:<22} {:>w1$} {:>w2$}  change B vs A\n",
        "metric", "A", "B"
    );
    for (l, a, b, d) in rows {
        out.push_str(&format!("{l:<22} {a:>w1$} {b:>w2$}  {d}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The comparison of `a` (in directory `da`) and `b` (in `db`).
    fn render(a: &Results, da: &Path, b: &Results, db: &Path) -> Result<String> {
        super::render(ResultsDir::new(a, da), ResultsDir::new(b, db))
    }

    /// The gates of `rules` on `b` (in `db`) against `a` (in `da`).
    fn gates(a: &Results, da: &Path, b: &Results, db: &Path, rules: &[FailIf]) -> Vec<GateResult> {
        super::gates(ResultsDir::new(a, da), ResultsDir::new(b, db), rules)
    }
    use crate::results::record::RunStatus;
    use crate::results::test_support::{blank_results, blank_run};

    fn set(name: &str, rps: &[f64]) -> Results {
        let mut r = blank_results(&[name]);
        for (i, v) in rps.iter().enumerate() {
            let mut run = blank_run(name, "s", i as u32 + 1);
            run.status = RunStatus::Ok;
            run.summary.rps = *v;
            run.summary.ok = (*v * 10.0) as u64;
            run.summary.duration_s = 10.0;
            r.runs.push(run);
        }
        r
    }

    #[test]
    fn a_real_change_is_called_and_noise_is_not() {
        let before = set("spring-mvc", &[1980.0, 1990.0, 2000.0, 1995.0]);
        let after = set("spring-mvc", &[4950.0, 5000.0, 5020.0, 4990.0]);
        let t = render(&before, Path::new("a"), &after, Path::new("b")).unwrap();
        assert!(t.contains("s / spring-mvc"), "{t}");
        // Two sittings are blocks, and the comparison says so before any change.
        assert!(
            t.lines()
                .nth(2)
                .is_some_and(|l| l.starts_with("this compares blocks")),
            "{t}"
        );
        assert!(
            t.lines()
                .any(|l| l.starts_with("throughput (req/s)") && l.contains("better")),
            "{t}"
        );
        let same = set("spring-mvc", &[1985.0, 2005.0, 1995.0, 1990.0]);
        let t = render(&before, Path::new("a"), &same, Path::new("b")).unwrap();
        assert!(t.lines().any(|l| l.starts_with("throughput (req/s)") && l.contains("no significant change")), "{t}");
        // Three runs a side cannot be tested, however large the change.
        let t = render(
            &set("spring-mvc", &[1980.0, 1990.0, 2000.0]),
            Path::new("a"),
            &set("spring-mvc", &[4950.0, 5000.0, 5020.0]),
            Path::new("b"),
        )
        .unwrap();
        assert!(
            t.lines()
                .any(|l| l.starts_with("throughput (req/s)") && l.contains("not tested")),
            "{t}"
        );
    }

    #[test]
    fn a_gate_fails_on_a_significant_regression_and_not_on_a_rerun() {
        let rules = [FailIf::parse("throughput < -5%").unwrap()];
        let before = set("spring-mvc", &[1980.0, 1990.0, 2000.0, 1995.0]);
        let slower = set("spring-mvc", &[1500.0, 1490.0, 1510.0, 1505.0]);
        let rerun = set("spring-mvc", &[1985.0, 2005.0, 1995.0, 1990.0]);
        let g = gates(&before, Path::new("a"), &slower, Path::new("b"), &rules);
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].outcome, Outcome::Fail);
        let text = describe_gates(&g);
        assert!(
            text.starts_with("FAIL") && text.contains("1 failed"),
            "{text}"
        );
        assert!(
            gates(&before, Path::new("a"), &rerun, Path::new("b"), &rules)
                .iter()
                .all(|g| g.outcome == Outcome::Pass)
        );
    }

    #[test]
    fn unrelated_sets_are_refused_with_the_reason() {
        let mut a = set("x", &[1.0]);
        a.runs[0].scenario = "plaintext".into();
        let b = set("y", &[1.0]);
        let e = render(&a, Path::new("a"), &b, Path::new("b"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("share no scenario") && e.contains("plaintext"),
            "{e}"
        );
    }

    #[test]
    fn one_contender_each_is_paired_across_names() {
        let t = render(
            &set("jetty", &[100.0, 101.0]),
            Path::new("a"),
            &set("jetty-virtual", &[200.0, 201.0]),
            Path::new("b"),
        )
        .unwrap();
        assert!(t.contains("s / jetty -> jetty-virtual"), "{t}");
    }
}
