//! Thresholds and regression gates in every output: lines for the terminal, a section of
//! report.md and report.html, and JUnit XML for CI systems (`run --junit`, `compare --junit`).

use super::chart::esc;
use crate::results::record::{Results, ThresholdCheck};
use crate::stats::gates::{describe_check, GateResult, Outcome};
use std::fmt::Write;

fn rows(results: &Results) -> Vec<Vec<String>> {
    results
        .thresholds
        .iter()
        .map(|c| {
            let verdict = match (c.passed, c.beyond_pct) {
                (true, _) => "holds".to_string(),
                (false, Some(p)) => format!("**broken** ({p:.0}% beyond)"),
                (false, None) => "**broken**".to_string(),
            };
            vec![
                c.scenario.clone(),
                c.contender.clone(),
                c.rule.clone(),
                super::fmt_num(c.value, 1),
                verdict,
            ]
        })
        .collect()
}

const HEADER: [&str; 5] = ["scenario", "contender", "threshold", "measured", "verdict"];

/// One JUnit test case.
pub struct Case {
    /// The suite-level grouping: the scenario.
    pub class: String,
    pub name: String,
    pub failure: Option<String>,
    /// Why it was not judged (a change that could not be tested).
    pub skipped: Option<String>,
    pub detail: String,
}

/// Threshold checks as JUnit cases: one per scenario, contender and threshold.
pub fn threshold_cases(results: &Results) -> Vec<Case> {
    results
        .thresholds
        .iter()
        .map(|c| Case {
            class: c.scenario.clone(),
            name: format!("{}: {}", c.contender, c.rule),
            failure: (!c.passed).then(|| describe_check(c)),
            skipped: None,
            detail: describe_check(c),
        })
        .collect()
}

/// Regression gates as JUnit cases: a failure for a significant change beyond its limit, a
/// skip for one that could not be tested.
pub fn gate_cases(gates: &[GateResult]) -> Vec<Case> {
    gates
        .iter()
        .map(|g| Case {
            class: g.scenario.clone(),
            name: format!("{}: {}", g.contender, g.rule),
            failure: (g.outcome == Outcome::Fail).then(|| g.detail.clone()),
            skipped: (g.outcome == Outcome::NotTested).then(|| g.detail.clone()),
            detail: g.detail.clone(),
        })
        .collect()
}

/// A JUnit XML document of one suite.
pub fn junit(suite: &str, cases: &[Case]) -> String {
    let failures = cases.iter().filter(|c| c.failure.is_some()).count();
    let skipped = cases.iter().filter(|c| c.skipped.is_some()).count();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<testsuites name=\"iobound\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\">",
        cases.len()
    );
    let _ = writeln!(x, "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" errors=\"0\">", esc(suite), cases.len());
    for c in cases {
        let _ = write!(
            x,
            "    <testcase classname=\"{}\" name=\"{}\">",
            esc(&c.class),
            esc(&c.name)
        );
        if let Some(f) = &c.failure {
            let _ = write!(x, "<failure message=\"{}\"/>", esc(f));
        }
        if let Some(s) = &c.skipped {
            let _ = write!(x, "<skipped message=\"{}\"/>", esc(s));
        }
        let _ = writeln!(x, "<system-out>{}</system-out></testcase>", esc(&c.detail));
    }
    x.push_str("  </testsuite>\n</testsuites>\n");
    x
}

/// The plan's thresholds, checked.
pub struct Gates;

impl super::section::Section for Gates {
    /// "thresholds: 2 of 12 broken" and a line per broken one; empty when the plan had none.
    fn terminal(&self, results: &Results) -> String {
        let checks = &results.thresholds;
        if checks.is_empty() {
            return String::new();
        }
        let broken: Vec<&ThresholdCheck> = checks.iter().filter(|c| !c.passed).collect();
        let mut out = format!(
            "\nthresholds: {} checked, {} broken\n",
            checks.len(),
            broken.len()
        );
        for c in broken {
            let _ = writeln!(out, "  {}", describe_check(c));
        }
        out
    }

    /// The "Thresholds" section of report.md (empty when the plan had none).
    fn markdown(&self, results: &Results) -> String {
        if results.thresholds.is_empty() {
            return String::new();
        }
        let header: Vec<String> = HEADER.iter().map(|h| h.to_string()).collect();
        let broken = results.thresholds.iter().filter(|c| !c.passed).count();
        format!(
            "## Thresholds\n\n{broken} of {} broken (measured: the median over runs; percentiles from the merged histogram).\n\n{}\n",
            results.thresholds.len(),
            super::md_table::table(&header, 3, &rows(results))
        )
    }

    /// The thresholds table of report.html (empty when the plan had none).
    fn html(&self, results: &Results) -> String {
        if results.thresholds.is_empty() {
            return String::new();
        }
        let broken = results.thresholds.iter().filter(|c| !c.passed).count();
        let mut h = format!(
            "<h2 id=\"thresholds\">Thresholds</h2><p>{broken} of {} broken.</p><table><tr>",
            results.thresholds.len()
        );
        for c in HEADER {
            let _ = write!(h, "<th>{c}</th>");
        }
        h.push_str("</tr>");
        for (c, r) in results.thresholds.iter().zip(rows(results)) {
            let class = if c.passed { "" } else { " class=\"broken\"" };
            let _ = write!(
                h,
                "<tr{class}><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
                esc(&r[0]),
                esc(&r[1]),
                esc(&r[2]),
                esc(&r[3]),
                esc(&r[4].replace("**", ""))
            );
        }
        h.push_str("</table>");
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::section::Section;
    use crate::results::test_support::blank_results;

    fn with_checks() -> Results {
        let mut r = blank_results(&["spring-mvc", "vertx"]);
        let check =
            |contender: &str, value: f64, passed: bool, beyond: Option<f64>| ThresholdCheck {
                contender: contender.into(),
                scenario: "wait".into(),
                metric: "p99".into(),
                rule: "p99 <= 200 ms".into(),
                value,
                limit: 200.0,
                passed,
                beyond_pct: beyond,
            };
        r.thresholds = vec![
            check("spring-mvc", 300.0, false, Some(50.0)),
            check("vertx", 120.0, true, None),
        ];
        r
    }

    #[test]
    fn broken_thresholds_show_in_every_output() {
        let r = with_checks();
        let t = Gates.terminal(&r);
        assert!(
            t.contains("2 checked, 1 broken")
                && t.contains("spring-mvc / wait: p99 is 300 ms")
                && !t.contains("vertx"),
            "{t}"
        );
        let md = Gates.markdown(&r);
        assert!(
            md.contains("1 of 2 broken")
                && md.contains(
                    "| wait | spring-mvc | p99 <= 200 ms | 300.0 | **broken** (50% beyond) |"
                ),
            "{md}"
        );
        let h = Gates.html(&r);
        assert_eq!(h.matches("class=\"broken\"").count(), 1, "{h}");
        assert!(
            Gates.terminal(&blank_results(&["x"])).is_empty()
                && Gates.markdown(&blank_results(&["x"])).is_empty()
        );
    }

    #[test]
    fn junit_has_a_case_per_check_and_escapes_what_it_quotes() {
        let x = junit("iobound run <plan>", &threshold_cases(&with_checks()));
        assert!(
            x.contains("tests=\"2\" failures=\"1\" skipped=\"0\""),
            "{x}"
        );
        assert!(x.contains("name=\"iobound run &lt;plan&gt;\""), "{x}");
        assert_eq!(x.matches("<testcase ").count(), 2);
        assert_eq!(
            x.matches("<failure message=\"spring-mvc / wait: p99 is 300 ms")
                .count(),
            1,
            "{x}"
        );
        assert!(x.contains("name=\"spring-mvc: p99 &lt;= 200 ms\""), "{x}");
    }
}
