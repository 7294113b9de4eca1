//! The terminal comparison: per scenario, metrics as rows and contenders as columns, with the
//! change of each contender against the first one.

use crate::results::{ContenderInfo, Results, Run, RunStatus};
use crate::stats::relative_change;

struct Metric {
    label: &'static str,
    value: fn(&Run) -> f64,
    decimals: usize,
}

const METRICS: &[Metric] = &[
    Metric { label: "throughput (req/s)", value: |r| r.summary.rps, decimals: 0 },
    Metric { label: "latency p50 (ms)", value: |r| r.summary.latency.p50, decimals: 1 },
    Metric { label: "latency p90 (ms)", value: |r| r.summary.latency.p90, decimals: 1 },
    Metric { label: "latency p99 (ms)", value: |r| r.summary.latency.p99, decimals: 1 },
    Metric { label: "latency p99.9 (ms)", value: |r| r.summary.latency.p999, decimals: 1 },
    Metric { label: "latency max (ms)", value: |r| r.summary.latency.max, decimals: 1 },
    Metric { label: "errors", value: |r| r.summary.errors.total() as f64, decimals: 0 },
    Metric { label: "peak threads", value: |r| r.resources.peak_threads as f64, decimals: 0 },
    Metric { label: "peak RSS (MB)", value: |r| r.resources.peak_rss_mb, decimals: 0 },
    Metric { label: "CPU (ms per 1k req)", value: |r| r.resources.cpu_ms_per_1k_requests, decimals: 1 },
    Metric { label: "peak sockets", value: |r| r.resources.peak_sockets as f64, decimals: 0 },
    Metric { label: "ctx switches / req", value: |r| if r.summary.ok > 0 { (r.resources.ctx_voluntary + r.resources.ctx_involuntary) as f64 / r.summary.ok as f64 } else { 0.0 }, decimals: 2 },
];

fn fmt_num(v: f64, decimals: usize) -> String {
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

/// Throughput spread (max - min over the median) above which a contender's runs are noisy.
const NOISY: f64 = 0.10;

/// Throughput over the successful runs of one contender in one scenario.
struct Spread {
    runs: usize,
    min: f64,
    median: f64,
    max: f64,
}

impl Spread {
    fn relative(&self) -> f64 {
        if self.median > 0.0 { (self.max - self.min) / self.median } else { 0.0 }
    }
}

fn spread(results: &Results, scenario: &str, contender: &str) -> Option<Spread> {
    let rps: Vec<f64> = results
        .runs
        .iter()
        .filter(|r| r.scenario == scenario && r.contender == contender && r.status == RunStatus::Ok)
        .map(|r| r.summary.rps)
        .collect();
    if rps.is_empty() {
        return None;
    }
    let min = rps.iter().copied().fold(f64::INFINITY, f64::min);
    let max = rps.iter().copied().fold(0.0, f64::max);
    Some(Spread { runs: rps.len(), min, median: crate::stats::median(rps), max })
}

/// The run shown for a contender: with several repeats, the one with the median throughput
/// (statistics over repeats are reported separately).
fn representative<'a>(runs: &[&'a Run]) -> Option<&'a Run> {
    let mut ok: Vec<&Run> = runs.iter().copied().filter(|r| r.status != RunStatus::Failed).collect();
    ok.sort_by(|a, b| a.summary.rps.total_cmp(&b.summary.rps));
    ok.get(ok.len() / 2).copied().or_else(|| runs.first().copied())
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

/// Each contender with the run shown for it in `scenario`.
fn columns<'a>(results: &'a Results, scenario: &str) -> Vec<(&'a ContenderInfo, Option<&'a Run>)> {
    results
        .contenders
        .iter()
        .map(|c| {
            let runs: Vec<&Run> = results.runs.iter().filter(|r| r.scenario == scenario && r.contender == c.name).collect();
            (c, representative(&runs))
        })
        .collect()
}

pub fn render(results: &Results) -> String {
    let mut out = String::new();
    for scenario in scenarios(results) {
        let cols: Vec<(&str, Option<&Run>)> = columns(results, scenario).into_iter().map(|(c, r)| (c.name.as_str(), r)).collect();
        let first = results.runs.iter().find(|r| r.scenario == scenario);
        let header = first.map(|r| format!("{} {}: {}", r.scenario, r.path, r.load_description)).unwrap_or_default();
        out.push_str(&format!("\n{header}\n"));
        let spreads: Vec<Option<Spread>> = cols.iter().map(|(n, _)| spread(results, scenario, n)).collect();
        let ranges: Vec<String> = spreads
            .iter()
            .map(|s| s.as_ref().map(|s| format!("{}..{} ({})", fmt_num(s.min, 0), fmt_num(s.max, 0), s.runs)).unwrap_or_else(|| "-".into()))
            .collect();
        let repeated = spreads.iter().flatten().any(|s| s.runs > 1);
        let widest_range = if repeated { ranges.iter().map(String::len).max().unwrap_or(0) } else { 0 };
        let width = cols.iter().map(|(n, _)| n.len()).max().unwrap_or(8).max(12).max(widest_range);
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
        let row = |out: &mut String, label: &str, value: &dyn Fn(&Run) -> Option<f64>, decimals: usize| {
            out.push_str(&format!("{label:<22}"));
            let base = cols.first().and_then(|(_, r)| r.and_then(value));
            for (i, (_, run)) in cols.iter().enumerate() {
                let v = run.filter(|r| r.status != RunStatus::Failed).and_then(value);
                let cell = match (run, v) {
                    (Some(r), _) if r.status == RunStatus::Failed => "FAILED".to_string(),
                    (_, Some(v)) => fmt_num(v, decimals),
                    _ => "-".to_string(),
                };
                out.push_str(&format!(" {cell:>width$}"));
                if show_diff && i > 0 {
                    let d = base.zip(v).and_then(|(a, b)| relative_change(a, b)).map(|d| format!("{d:+.0}%"));
                    out.push_str(&format!(" {:>8}", d.unwrap_or_else(|| "-".into())));
                }
            }
            out.push('\n');
        };
        for m in METRICS {
            row(&mut out, m.label, &|r: &Run| Some((m.value)(r)), m.decimals);
        }
        // Repeated runs: the figures above are the median-throughput run's; say how far the
        // repeats spread, so one lucky run is not mistaken for a difference.
        if repeated {
            out.push_str(&format!("{:<22}", "req/s range (runs)"));
            for (i, cell) in ranges.iter().enumerate() {
                out.push_str(&format!(" {cell:>width$}"));
                if show_diff && i > 0 {
                    out.push_str(&format!(" {:>8}", ""));
                }
            }
            out.push('\n');
        }
        for ((n, _), s) in cols.iter().zip(&spreads) {
            if let Some(s) = s.as_ref().filter(|s| s.runs > 1 && s.relative() > NOISY) {
                out.push_str(&format!(
                    "  noisy ({n}): throughput varies {:.0}% across {} runs; differences smaller than that are not significant\n",
                    s.relative() * 100.0,
                    s.runs
                ));
            }
        }
        // Stepped closed runs: throughput and tail at each level of users.
        if cols.iter().filter_map(|(_, r)| *r).any(stepped) {
            let mut targets: Vec<f64> = Vec::new();
            for (_, r) in &cols {
                for l in r.map(|r| r.summary.levels.as_slice()).unwrap_or(&[]) {
                    if !targets.contains(&l.target) {
                        targets.push(l.target);
                    }
                }
            }
            for t in targets {
                let level = move |r: &Run| r.summary.levels.iter().find(|l| l.target == t).cloned();
                row(&mut out, &format!("req/s @ {t} users"), &|r: &Run| level(r).map(|l| l.rps), 0);
                row(&mut out, &format!("p99 ms @ {t} users"), &|r: &Run| level(r).map(|l| l.latency.p99), 1);
                row(&mut out, &format!("threads @ {t} users"), &|r: &Run| level(r).map(|l| l.peak_threads as f64), 0);
                row(&mut out, &format!("RSS MB @ {t} users"), &|r: &Run| level(r).map(|l| l.peak_rss_mb), 0);
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
    fn repeats_show_their_range_and_the_median_run() {
        let r = results_with(&[("a", 1000.0), ("a", 1300.0), ("a", 1010.0), ("b", 2000.0), ("b", 2010.0), ("b", 1990.0)]);
        let t = render(&r);
        assert!(t.contains("1,000..1,300 (3)") && t.contains("1,990..2,010 (3)"), "{t}");
        // The shown throughput is the median run's, not an average.
        assert!(t.lines().any(|l| l.starts_with("throughput (req/s)") && l.contains("1,010") && l.contains("2,000")), "{t}");
        assert!(t.contains("noisy (a): throughput varies 30% across 3 runs"), "{t}");
        assert!(!t.contains("noisy (b)"), "{t}");
        let single = render(&results_with(&[("a", 1000.0), ("b", 2000.0)]));
        assert!(!single.contains("req/s range"), "{single}");
    }

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(fmt_num(1234567.891, 1), "1,234,567.9");
        assert_eq!(fmt_num(999.0, 0), "999");
        assert_eq!(fmt_num(-12345.0, 0), "-12,345");
        assert_eq!(fmt_num(0.5, 2), "0.50");
    }
}
