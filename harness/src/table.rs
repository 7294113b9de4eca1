//! The terminal comparison: per scenario, metrics as rows and contenders as columns, with the
//! change of each contender against the first one.

use crate::analysis::{self, Cell, Difference, METRICS};
use crate::results::{ContenderInfo, Results, Run, RunStatus};
use crate::stats::relative_change;
use std::path::Path;

/// Metrics of the terminal table (the reports show all of `analysis::METRICS`).
const SHOWN: &[&str] = &[
    "throughput (req/s)",
    "latency p50 (ms)",
    "latency p90 (ms)",
    "latency p99 (ms)",
    "latency p99.9 (ms)",
    "latency max (ms)",
    "errors (%)",
    "peak threads",
    "peak RSS (MB)",
    "CPU (ms per 1k req)",
    "peak sockets",
    "peak downstream conns",
    "ctx switches / req",
];

pub fn fmt_num(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    let (int, frac) = s.split_once('.').map(|(a, b)| (a.to_string(), format!(".{b}"))).unwrap_or((s.clone(), String::new()));
    let (sign, digits) = int.strip_prefix('-').map(|d| ("-", d.to_string())).unwrap_or(("", int.clone()));
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{sign}{grouped}{frac}")
}

/// Scenario names in the order they were first run.
fn scenarios(results: &Results) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for r in &results.runs {
        if !out.contains(&r.scenario.as_str()) {
            out.push(&r.scenario);
        }
    }
    out
}

/// Each contender with the run shown for it in `scenario` (the median-throughput run).
fn columns<'a>(results: &'a Results, scenario: &str) -> Vec<(&'a ContenderInfo, Option<&'a Run>)> {
    results.contenders.iter().map(|c| (c, analysis::representative(results, scenario, &c.name))).collect()
}

/// The comparison for the terminal: per scenario, each metric's median over runs (latency
/// from merged histograms) per contender, the change against the first contender ("~" when
/// the 95% intervals overlap: not significant), then per-level rows of the median run.
pub fn render(results: &Results, dir: &Path) -> String {
    let mut out = String::new();
    for scenario in scenarios(results) {
        let cols: Vec<(&str, Option<&Run>)> = columns(results, scenario).into_iter().map(|(c, r)| (c.name.as_str(), r)).collect();
        let cells: Vec<Option<Cell>> = cols.iter().map(|(n, _)| analysis::cell(results, dir, scenario, n)).collect();
        let first = results.runs.iter().find(|r| r.scenario == scenario);
        let header = first.map(|r| format!("{} {}: {}", r.scenario, r.path, r.load_description)).unwrap_or_default();
        out.push_str(&format!("\n{header}\n"));
        let intervals: Vec<String> = cells
            .iter()
            .map(|c| match c.as_ref().map(|c| (c.rps.lo, c.rps.hi)) {
                Some((Some(lo), Some(hi))) => format!("{}..{}", fmt_num(lo, 0), fmt_num(hi, 0)),
                _ => "-".into(),
            })
            .collect();
        let width = cols.iter().map(|(n, _)| n.len()).chain(intervals.iter().map(String::len)).max().unwrap_or(8).max(12);
        let show_diff = cols.len() >= 2;
        out.push_str(&format!("{:<22}", "metric"));
        for (i, (n, _)) in cols.iter().enumerate() {
            out.push_str(&format!(" {:>width$}", n));
            if show_diff && i > 0 {
                out.push_str(&format!(" {:>8}", "diff"));
            }
        }
        out.push('\n');
        out.push_str(&"-".repeat(22 + cols.len() * (width + 1) + if show_diff { 9 * (cols.len() - 1) } else { 0 }));
        out.push('\n');
        let runs_row: Vec<String> = cols
            .iter()
            .zip(&cells)
            .map(|((_, r), c)| match (r, c) {
                (Some(r), None) if r.status == RunStatus::Failed => "FAILED".into(),
                (_, Some(c)) => format!("{}{}", c.runs, if c.partial { " incomplete" } else { "" }),
                _ => "-".into(),
            })
            .collect();
        push_row(&mut out, "runs", &runs_row, &vec![String::new(); cols.len()], width, show_diff);
        for m in METRICS.iter().filter(|m| SHOWN.contains(&m.label)) {
            let values: Vec<String> = cells.iter().zip(&runs_row).map(|(c, r)| c.as_ref().map(|c| fmt_num((m.get)(c).value, m.decimals)).unwrap_or_else(|| r.clone())).collect();
            let diffs: Vec<String> = cells
                .iter()
                .map(|c| match (cells[0].as_ref(), c.as_ref()) {
                    (Some(a), Some(b)) => short_diff(&Difference::of(m, a, b)),
                    _ => "-".into(),
                })
                .collect();
            push_row(&mut out, m.label, &values, &diffs, width, show_diff);
            if m.label == "throughput (req/s)" && intervals.iter().any(|i| i != "-") {
                push_row(&mut out, "  95% interval", &intervals, &vec![String::new(); cols.len()], width, show_diff);
            }
        }
        if let Some(method) = cells.iter().flatten().map(|c| c.method.as_str()).next() {
            out.push_str(&format!("  {method}; ~ = intervals overlap (not significant)\n"));
        }
        for (n, c) in cols.iter().zip(&cells) {
            if let Some(why) = c.as_ref().and_then(|c| c.noisy.as_ref()) {
                out.push_str(&format!("  noisy ({}): {why}\n", n.0));
            }
        }
        // Stepped closed runs: throughput and tail at each level of users (median run).
        if cols.iter().filter_map(|(_, r)| *r).any(stepped) {
            let mut targets: Vec<f64> = Vec::new();
            for (_, r) in &cols {
                for l in r.map(|r| r.summary.levels.as_slice()).unwrap_or(&[]) {
                    if !targets.contains(&l.target) {
                        targets.push(l.target);
                    }
                }
            }
            let level_row = |out: &mut String, label: &str, value: &dyn Fn(&Run) -> Option<f64>, decimals: usize| {
                let base = cols.first().and_then(|(_, r)| r.and_then(value));
                let vals: Vec<Option<f64>> = cols.iter().map(|(_, r)| r.filter(|r| r.status != RunStatus::Failed).and_then(value)).collect();
                let values: Vec<String> = vals.iter().map(|v| v.map(|v| fmt_num(v, decimals)).unwrap_or_else(|| "-".into())).collect();
                let diffs: Vec<String> = vals.iter().map(|v| base.zip(*v).and_then(|(a, b)| relative_change(a, b)).map(|d| format!("{d:+.0}%")).unwrap_or_else(|| "-".into())).collect();
                push_row(out, label, &values, &diffs, width, show_diff);
            };
            for t in targets {
                let level = move |r: &Run| r.summary.levels.iter().find(|l| l.target == t).cloned();
                level_row(&mut out, &format!("req/s @ {t} users"), &|r: &Run| level(r).map(|l| l.rps), 0);
                level_row(&mut out, &format!("p99 ms @ {t} users"), &|r: &Run| level(r).map(|l| l.latency.p99), 1);
                level_row(&mut out, &format!("threads @ {t} users"), &|r: &Run| level(r).map(|l| l.peak_threads as f64), 0);
                level_row(&mut out, &format!("RSS MB @ {t} users"), &|r: &Run| level(r).map(|l| l.peak_rss_mb), 0);
            }
        }
        for (n, run) in &cols {
            if let Some(r) = run {
                if let Some(f) = &r.failure {
                    out.push_str(&format!("  {n}: {f}\n"));
                }
                for w in &r.driver.warnings {
                    out.push_str(&format!("  warning ({n}): {w}\n"));
                }
                if r.status == RunStatus::Incomplete {
                    out.push_str(&format!("  {n}: INCOMPLETE (interrupted), figures cover {:.1}s\n", r.summary.duration_s));
                }
            }
        }
    }
    if !results.complete {
        out.push_str(&format!("\nresults are INCOMPLETE: {}\n", results.incomplete_reason.as_deref().unwrap_or("the plan did not finish")));
    }
    out
}

/// "+12%", or "+3%~" when the intervals overlap (not significant).
fn short_diff(d: &Difference) -> String {
    match d.change_pct {
        None => "-".into(),
        Some(p) => format!("{p:+.0}%{}", if d.significant == Some(false) { "~" } else { "" }),
    }
}

fn push_row(out: &mut String, label: &str, values: &[String], diffs: &[String], width: usize, show_diff: bool) {
    out.push_str(&format!("{label:<22}"));
    for (i, v) in values.iter().enumerate() {
        out.push_str(&format!(" {v:>width$}"));
        if show_diff && i > 0 {
            out.push_str(&format!(" {:>8}", diffs[i]));
        }
    }
    out.push('\n');
}

/// A closed-model run with more than one level of users: its per-level rows are worth showing.
fn stepped(run: &Run) -> bool {
    run.load["model"] == "closed" && run.summary.levels.len() > 1
}

/// One Markdown table row.
fn md_row(cells: &[String]) -> String {
    format!("| {} |\n", cells.join(" | "))
}

/// Markdown, one row per contender (for many contenders, and for READMEs and pull requests).
pub fn render_markdown(results: &Results) -> String {
    let mut out = String::new();
    for scenario in scenarios(results) {
        let picked = columns(results, scenario);
        let Some(first) = picked.iter().find_map(|(_, r)| *r) else { continue };
        out.push_str(&format!("\n**{}** `{}`: {}\n\n", first.scenario, first.path, first.load_description));
        out.push_str("| contender | model | req/s | p50 ms | p99 ms | max ms | errors | peak threads | peak RSS MB | CPU ms / 1k req |\n");
        out.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (c, run) in &picked {
            match run {
                Some(r) if r.status != RunStatus::Failed => {
                    let s = &r.summary;
                    out.push_str(&md_row(&[
                        c.name.clone(),
                        c.model.clone(),
                        fmt_num(s.rps, 0),
                        fmt_num(s.latency.p50, 1),
                        fmt_num(s.latency.p99, 1),
                        fmt_num(s.latency.max, 1),
                        fmt_num(s.errors.total() as f64, 0),
                        r.resources.peak_threads.to_string(),
                        fmt_num(r.resources.peak_rss_mb, 0),
                        fmt_num(r.resources.cpu_ms_per_1k_requests, 1),
                    ]));
                }
                Some(r) => out.push_str(&format!("| {} | {} | failed: {} |||||||| \n", c.name, c.model, r.failure.as_deref().unwrap_or("").lines().next().unwrap_or(""))),
                None => {}
            }
        }
        if picked.iter().filter_map(|(_, r)| *r).any(stepped) {
            out.push_str("\n| contender | users | req/s | p99 ms | threads | RSS MB |\n|---|---:|---:|---:|---:|---:|\n");
            for (c, run) in &picked {
                for l in run.map(|r| r.summary.levels.as_slice()).unwrap_or(&[]) {
                    out.push_str(&md_row(&[
                        c.name.clone(),
                        l.target.to_string(),
                        fmt_num(l.rps, 0),
                        fmt_num(l.latency.p99, 1),
                        l.peak_threads.to_string(),
                        fmt_num(l.peak_rss_mb, 0),
                    ]));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn repeats_show_the_median_its_interval_and_significance() {
        let r = results_with(&[("a", 1000.0), ("a", 1300.0), ("a", 1010.0), ("b", 2000.0), ("b", 2010.0), ("b", 1990.0)]);
        let t = render(&r, Path::new("/nonexistent"));
        // Median over runs, not an average; b's interval is far from a's: significant.
        assert!(t.lines().any(|l| l.starts_with("throughput (req/s)") && l.contains("1,010") && l.contains("2,000") && l.contains("+98%") && !l.contains("+98%~")), "{t}");
        assert!(t.lines().any(|l| l.starts_with("  95% interval") && l.contains("1,990..2,010")), "{t}");
        assert!(t.contains("bootstrap over runs"), "{t}");
        assert!(t.contains("noisy (a): throughput varies"), "{t}");
        assert!(!t.contains("noisy (b)"), "{t}");
        let close = render(&results_with(&[("a", 1000.0), ("a", 1020.0), ("a", 990.0), ("b", 1010.0), ("b", 995.0), ("b", 1025.0)]), Path::new("/x"));
        assert!(close.lines().any(|l| l.starts_with("throughput (req/s)") && l.contains("%~")), "{close}");
    }

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(fmt_num(1234567.891, 1), "1,234,567.9");
        assert_eq!(fmt_num(999.0, 0), "999");
        assert_eq!(fmt_num(-12345.0, 0), "-12,345");
        assert_eq!(fmt_num(0.5, 2), "0.50");
    }
}
