//! The terminal comparison: per scenario, metrics as rows and contenders as columns, with the
//! change of each contender against the first one.

use super::markdown::{columns, stepped};
use super::SECTIONS;
use super::{counted, fmt_metric, fmt_num};
use crate::results::dir::ResultsDir;
use crate::results::record::{Results, Run, RunStatus};
use crate::stats::{self, relative_change, scenarios, Cell, Difference, METRICS};

/// The comparison for the terminal: per scenario, each metric's median over runs (latency
/// from merged histograms) per contender, the change against the first contender ("~" when
/// a test over runs finds no significant difference, "?" when there were too few runs to test),
/// then per-level rows of the median run.
pub fn render(set: ResultsDir) -> String {
    let results = set.results;
    let mut out: String = SECTIONS.iter().map(|s| s.terminal(results)).collect();
    for scenario in scenarios(results) {
        let cols: Vec<(&str, Option<&Run>)> = columns(results, &scenario)
            .into_iter()
            .map(|(c, r)| (c.name.as_str(), r))
            .collect();
        let cells: Vec<Option<Cell>> = cols
            .iter()
            .map(|(n, _)| stats::cell(set, &scenario, n))
            .collect();
        let first = results.runs.iter().find(|r| r.scenario == scenario);
        let path = first.map(|r| r.path.as_str()).unwrap_or_default();
        let header = first
            .map(|r| {
                format!(
                    "{} {path}: {}",
                    r.scenario,
                    counted(path, &r.load_description)
                )
            })
            .unwrap_or_default();
        out.push_str(&format!("\n{header}\n"));
        let intervals: Vec<String> = cells
            .iter()
            .map(|c| c.as_ref().map(|c| c.of("throughput")))
            .map(|e| match e.map(|e| (e.lo, e.hi)) {
                Some((Some(lo), Some(hi))) => format!("{}..{}", fmt_num(lo, 0), fmt_num(hi, 0)),
                _ => "-".into(),
            })
            .collect();
        let width = cols
            .iter()
            .map(|(n, _)| n.len())
            .chain(intervals.iter().map(String::len))
            .max()
            .unwrap_or(8)
            .max(12);
        let grid = Grid {
            cols: &cols,
            path,
            width,
            show_diff: cols.len() >= 2,
        };
        grid.header(&mut out);
        grid.metric_rows(&mut out, &cells, &intervals);
        if cols.iter().filter_map(|(_, r)| *r).any(stepped) {
            grid.level_rows(&mut out);
        }
        grid.run_notes(&mut out, results, &scenario);
    }
    if !results.complete {
        out.push_str(&format!(
            "\nresults are INCOMPLETE: {}\n",
            results
                .incomplete_reason
                .as_deref()
                .unwrap_or("the plan did not finish")
        ));
    }
    out
}

/// The metric rows the terminal shows for `cells`, one column each (no runs behind them).
#[cfg(test)]
pub(super) fn metric_rows_of(cells: &[Option<Cell>]) -> String {
    let cols: Vec<(&str, Option<&Run>)> = cells.iter().map(|_| ("contender", None)).collect();
    let grid = Grid {
        cols: &cols,
        path: "/",
        width: 12,
        show_diff: cols.len() >= 2,
    };
    let mut out = String::new();
    grid.metric_rows(&mut out, cells, &vec!["-".to_string(); cells.len()]);
    out
}

/// One scenario's table: its columns (contender, run shown) and their width.
struct Grid<'a> {
    cols: &'a [(&'a str, Option<&'a Run>)],
    /// The scenario's path: a pipeline's labels count records.
    path: &'a str,
    width: usize,
    show_diff: bool,
}

impl Grid<'_> {
    fn row(&self, out: &mut String, label: &str, values: &[String], diffs: &[String]) {
        push_row(out, label, values, diffs, self.width, self.show_diff);
    }

    fn header(&self, out: &mut String) {
        out.push_str(&format!("{:<22}", "metric"));
        for (i, (n, _)) in self.cols.iter().enumerate() {
            out.push_str(&format!(" {:>width$}", n, width = self.width));
            if self.show_diff && i > 0 {
                out.push_str(&format!(" {:>8}", "diff"));
            }
        }
        out.push('\n');
        let n = self.cols.len();
        out.push_str(
            &"-".repeat(22 + n * (self.width + 1) + if self.show_diff { 9 * (n - 1) } else { 0 }),
        );
        out.push('\n');
    }

    /// Runs, then every shown metric with its change against the first contender.
    fn metric_rows(&self, out: &mut String, cells: &[Option<Cell>], intervals: &[String]) {
        let blank = vec![String::new(); self.cols.len()];
        let runs_row: Vec<String> = self
            .cols
            .iter()
            .zip(cells)
            .map(|((_, r), c)| match (r, c) {
                (Some(r), None) if r.status == RunStatus::Failed => "FAILED".into(),
                (_, Some(c)) => super::runs_label(c),
                _ => "-".into(),
            })
            .collect();
        self.row(out, "runs", &runs_row, &blank);
        for m in METRICS
            .iter()
            .filter(|m| m.in_terminal && stats::shown(m, cells.iter().flatten()))
        {
            let values: Vec<String> = cells
                .iter()
                .zip(&runs_row)
                .map(|(c, r)| {
                    c.as_ref()
                        .map(|c| fmt_metric(m, c))
                        .unwrap_or_else(|| r.clone())
                })
                .collect();
            let diffs: Vec<String> = cells
                .iter()
                .map(|c| match (cells[0].as_ref(), c.as_ref()) {
                    (Some(a), Some(b)) => short_diff(&Difference::of(m, a, b)),
                    _ => "-".into(),
                })
                .collect();
            self.row(out, &counted(self.path, m.label), &values, &diffs);
            if m.label == "throughput (req/s)" && intervals.iter().any(|i| i != "-") {
                self.row(out, "  interval", intervals, &blank);
            }
        }
        if cells.iter().flatten().any(|c| c.unsettled_runs > 0) {
            let steady: Vec<String> = cells
                .iter()
                .map(|c| match c {
                    Some(c) if c.unsettled_runs > 0 => {
                        format!("NO {} of {}", c.unsettled_runs, c.runs)
                    }
                    Some(_) => "yes".into(),
                    None => "-".into(),
                })
                .collect();
            self.row(out, "at steady state", &steady, &blank);
        }
        if let Some(method) = cells.iter().flatten().map(|c| c.method.as_str()).next() {
            let least = crate::stats::significance::MIN_RUNS;
            out.push_str(&format!("  {method}\n  diff: ~ = not significant (Mann-Whitney over runs, p > 0.05), ? = not tested (fewer than {least} runs a side at steady state)\n"));
        }
        for (n, c) in self.cols.iter().zip(cells) {
            if let Some(why) = c.as_ref().and_then(|c| c.noisy.as_ref()) {
                out.push_str(&format!("  noisy ({}): {why}\n", n.0));
            }
        }
    }

    /// Stepped closed runs: throughput, tail and resources at each level of users (median run).
    fn level_rows(&self, out: &mut String) {
        let mut targets: Vec<f64> = Vec::new();
        for (_, r) in self.cols {
            for l in r.map(|r| r.summary.levels.as_slice()).unwrap_or(&[]) {
                if !targets.contains(&l.target) {
                    targets.push(l.target);
                }
            }
        }
        let level_row = |out: &mut String,
                         label: &str,
                         value: &dyn Fn(&Run) -> Option<f64>,
                         decimals: usize| {
            let base = self.cols.first().and_then(|(_, r)| r.and_then(value));
            let vals: Vec<Option<f64>> = self
                .cols
                .iter()
                .map(|(_, r)| r.filter(|r| r.status != RunStatus::Failed).and_then(value))
                .collect();
            let values: Vec<String> = vals
                .iter()
                .map(|v| {
                    v.map(|v| fmt_num(v, decimals))
                        .unwrap_or_else(|| "-".into())
                })
                .collect();
            let diffs: Vec<String> = vals
                .iter()
                .map(|v| {
                    base.zip(*v)
                        .and_then(|(a, b)| relative_change(a, b))
                        .map(|d| format!("{d:+.0}%"))
                        .unwrap_or_else(|| "-".into())
                })
                .collect();
            self.row(out, label, &values, &diffs);
        };
        for t in targets {
            let level = move |r: &Run| r.summary.levels.iter().find(|l| l.target == t).cloned();
            level_row(
                out,
                &format!("req/s @ {t} users"),
                &|r: &Run| level(r).map(|l| l.rps),
                0,
            );
            level_row(
                out,
                &format!("p99 ms @ {t} users"),
                &|r: &Run| level(r).map(|l| l.latency.p99),
                1,
            );
            level_row(
                out,
                &format!("threads @ {t} users"),
                &|r: &Run| level(r).map(|l| l.peak_threads as f64),
                0,
            );
            level_row(
                out,
                &format!("RSS MB @ {t} users"),
                &|r: &Run| level(r).map(|l| l.peak_rss_mb),
                0,
            );
        }
    }

    /// Failures, warnings and interruptions of every run of the scenario (not only the one
    /// whose levels are shown), each text once per contender with the runs it came from.
    fn run_notes(&self, out: &mut String, results: &Results, scenario: &str) {
        for (n, _) in self.cols {
            let runs = results
                .runs
                .iter()
                .filter(|r| r.scenario == scenario && r.contender == *n);
            let runs: Vec<&Run> = runs.collect();
            for (note, repeats) in grouped_notes(runs.iter().copied()) {
                out.push_str(&format!("  {n} ({}): {note}\n", runs_list(&repeats)));
            }
            if let Some(note) = super::scenario_notes::load_hosts_note(&runs) {
                out.push_str(&format!("  {n}: {note}\n"));
            }
            if let Some(note) = super::scenario_notes::limits_note(&runs) {
                out.push_str(&format!("  {n}: {note}\n"));
            }
            if let Some(m) = runs
                .iter()
                .map(|r| &r.resources.memory_measure)
                .find(|m| !m.is_empty())
            {
                out.push_str(&format!(
                    "  {n}: peak RSS is the {m} (shared pages counted once), not one RSS\n"
                ));
            }
        }
    }
}

/// Each distinct failure, warning or interruption of `runs` with the repeats it came from, in
/// the order first seen.
pub(super) fn grouped_notes<'a>(runs: impl Iterator<Item = &'a Run>) -> Vec<(String, Vec<u32>)> {
    let mut notes: Vec<(String, Vec<u32>)> = Vec::new();
    let mut add = |text: String, run: u32| match notes.iter_mut().find(|(t, _)| *t == text) {
        Some((_, rs)) => rs.push(run),
        None => notes.push((text, vec![run])),
    };
    for r in runs {
        if let Some(f) = &r.failure {
            add(format!("FAILED: {f}"), r.run);
        }
        for w in &r.driver.warnings {
            add(format!("warning: {w}"), r.run);
        }
        if r.status == RunStatus::Incomplete {
            add(
                format!(
                    "INCOMPLETE (interrupted), figures cover {:.1}s",
                    r.summary.duration_s
                ),
                r.run,
            );
        }
    }
    notes
}

/// "run 2", "runs 1, 3".
fn runs_list(repeats: &[u32]) -> String {
    let list: Vec<String> = repeats.iter().map(u32::to_string).collect();
    if list.len() == 1 {
        format!("run {}", list[0])
    } else {
        format!("runs {}", list.join(", "))
    }
}

/// "+12%" (significant), "+3%~" (tested, not significant) or "+3%?" (not tested).
fn short_diff(d: &Difference) -> String {
    let mark = match d.significant {
        Some(true) => "",
        Some(false) => "~",
        None => "?",
    };
    d.change_pct
        .map_or_else(|| "-".into(), |p| format!("{p:+.0}%{mark}"))
}

fn push_row(
    out: &mut String,
    label: &str,
    values: &[String],
    diffs: &[String],
    width: usize,
    show_diff: bool,
) {
    out.push_str(&format!("{label:<22}"));
    for (i, v) in values.iter().enumerate() {
        out.push_str(&format!(" {v:>width$}"));
        if show_diff && i > 0 {
            out.push_str(&format!(" {:>8}", diffs[i]));
        }
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The table of `r` read from `dir`.
    fn render(r: &Results, dir: &Path) -> String {
        super::render(ResultsDir::new(r, dir))
    }

    fn results_with(rps: &[(&str, f64)]) -> Results {
        let mut names: Vec<&str> = rps.iter().map(|(c, _)| *c).collect();
        names.dedup();
        let mut res = crate::results::test_support::blank_results(&names);
        for (c, r) in rps {
            let mut run = crate::results::test_support::blank_run(c, "s", 1);
            run.status = RunStatus::Ok;
            run.load = serde_json::json!({"model": "closed", "steps": 0});
            run.summary.rps = *r;
            res.runs.push(run);
        }
        res
    }

    #[test]
    fn failed_runs_and_every_runs_warnings_are_shown() {
        let mut r = results_with(&[("a", 1000.0), ("a", 1010.0), ("a", 0.0)]);
        r.runs
            .extend(results_with(&[("b", 900.0), ("b", 910.0), ("b", 905.0)]).runs);
        r.contenders.extend(results_with(&[("b", 1.0)]).contenders);
        for (i, run) in r.runs.iter_mut().enumerate() {
            run.run = (i % 3) as u32 + 1;
        }
        r.runs[1].driver.warnings.push("driver saturated".into());
        r.runs[2].status = RunStatus::Failed;
        r.runs[2].failure = Some("contender exited".into());
        r.runs[3].driver.warnings.push("steal 12%".into());
        r.runs[5].driver.warnings.push("steal 12%".into());
        let t = render(&r, Path::new("/nonexistent"));
        assert!(
            t.lines()
                .any(|l| l.starts_with("runs") && l.contains("2 (+1 failed)")),
            "{t}"
        );
        assert!(t.contains("  a (run 2): warning: driver saturated"), "{t}");
        assert!(t.contains("  a (run 3): FAILED: contender exited"), "{t}");
        assert!(t.contains("  b (runs 1, 3): warning: steal 12%"), "{t}");
    }

    #[test]
    fn repeats_show_the_median_its_interval_and_significance() {
        // Three runs each: a median and the runs' range, labelled as the 75% interval it is;
        // however far apart, the difference is not tested.
        let r = results_with(&[
            ("a", 1000.0),
            ("a", 1300.0),
            ("a", 1010.0),
            ("b", 2000.0),
            ("b", 2010.0),
            ("b", 1990.0),
        ]);
        let t = render(&r, Path::new("/nonexistent"));
        assert!(
            t.lines().any(|l| l.starts_with("throughput (req/s)")
                && l.contains("1,010")
                && l.contains("2,000")
                && l.contains("+98%?")),
            "{t}"
        );
        assert!(
            t.lines()
                .any(|l| l.starts_with("  interval") && l.contains("1,990..2,010")),
            "{t}"
        );
        assert!(
            t.contains(
                "min..max, a 75% confidence interval for the median; differences not tested"
            ),
            "{t}"
        );
        assert!(t.contains("noisy (a): throughput varies"), "{t}");
        assert!(!t.contains("noisy (b)"), "{t}");
        // Four runs each: tested. Far apart: significant (no mark); close: "~".
        let far = render(
            &results_with(&[
                ("a", 1000.0),
                ("a", 1020.0),
                ("a", 990.0),
                ("a", 1005.0),
                ("b", 2000.0),
                ("b", 2010.0),
                ("b", 1990.0),
                ("b", 2005.0),
            ]),
            Path::new("/x"),
        );
        assert!(
            far.lines()
                .any(|l| l.starts_with("throughput (req/s)") && l.trim_end().ends_with("+100%")),
            "{far}"
        );
        let close = render(
            &results_with(&[
                ("a", 1000.0),
                ("a", 1020.0),
                ("a", 990.0),
                ("a", 1005.0),
                ("b", 1010.0),
                ("b", 995.0),
                ("b", 1025.0),
                ("b", 1000.0),
            ]),
            Path::new("/x"),
        );
        assert!(
            close
                .lines()
                .any(|l| l.starts_with("throughput (req/s)") && l.contains("%~")),
            "{close}"
        );
    }

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(fmt_num(1234567.891, 1), "1,234,567.9");
        assert_eq!(fmt_num(999.0, 0), "999");
        assert_eq!(fmt_num(-12345.0, 0), "-12,345");
        assert_eq!(fmt_num(0.5, 2), "0.50");
    }
}
