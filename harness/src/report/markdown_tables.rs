//! The tables of `iobound table --markdown`: one row per contender and scenario, the medians
//! over runs with their intervals where a contender ran several times, that run's figures where
//! it ran once (with per-level rows where its users stepped).

use super::markdown::{columns, stepped, verdicts};
use super::md_table::table;
use super::{counted, fmt_num};
use super::{section::Place, sections_at};
use crate::results::dir::ResultsDir;
use crate::results::record::{ContenderInfo, Results, Run, RunStatus};
use crate::stats::{self, scenarios, Cell, Estimate};
use std::fmt::Write;

/// Markdown, one row per contender (for many contenders, and for READMEs and pull requests).
/// With several runs of a contender, the rows are the medians over runs with their intervals,
/// as the terminal table prints them; with one run each, that run's figures.
pub fn render_markdown(set: ResultsDir) -> String {
    let results = set.results;
    let mut out: String = sections_at(Place::Head)
        .map(|s| s.markdown(results))
        .collect();
    for scenario in scenarios(results) {
        // A scenario run once per contender prints the runs themselves: its cells (and the
        // histogram logs they would read) are not needed.
        let repeated = results
            .contenders
            .iter()
            .any(|c| stats::cell_runs(results, &scenario, &c.name) >= 2);
        if !repeated {
            out.push_str(&single_runs_table(results, &scenario));
            continue;
        }
        let cells: Vec<(&ContenderInfo, Cell)> = results
            .contenders
            .iter()
            .filter_map(|c| Some((c, stats::cell(set, &scenario, &c.name)?)))
            .collect();
        out.push_str(&repeats_table(results, &scenario, &cells));
    }
    out
}

/// A scenario measured once per contender: that run's figures, one row per contender, each
/// kind's line for it, and per-level rows where the users stepped.
fn single_runs_table(results: &Results, scenario: &str) -> String {
    let picked = columns(results, scenario);
    let Some(first) = picked.iter().find_map(|(_, r)| *r) else {
        return String::new();
    };
    let mut out = format!(
        "\n**{}** `{}`: {}\n\n",
        first.scenario,
        first.path,
        counted(&first.path, &first.load_description)
    );
    let mut header = [
        "contender",
        "model",
        "req/s",
        "p50 ms",
        "p99 ms",
        "max ms",
        "errors",
        "peak threads",
        "peak RSS MB",
        "CPU ms / 1k req",
    ]
    .map(|label| counted(&first.path, label))
    .to_vec();
    // Where the scenario calls the downstream service: the outbound pool's size.
    let downstream = picked
        .iter()
        .filter_map(|(_, r)| *r)
        .any(|r| r.resources.peak_downstream_conns > 0);
    if downstream {
        header.push("peak downstream conns".into());
    }
    let rows: Vec<Vec<String>> = picked
        .iter()
        .filter_map(|(c, run)| Some(run_row(c, (*run)?, header.len(), downstream)))
        .collect();
    out.push_str(&table(&header, 2, &rows));
    out.push_str(&verdicts(&picked));
    if picked.iter().filter_map(|(_, r)| *r).any(stepped) {
        out.push('\n');
        out.push_str(&level_table(&picked));
    }
    out
}

/// One contender's row: its figures, or why the run failed.
fn run_row(c: &ContenderInfo, r: &Run, width: usize, downstream: bool) -> Vec<String> {
    if r.status == RunStatus::Failed {
        let why = r
            .failure
            .as_deref()
            .unwrap_or("")
            .lines()
            .next()
            .unwrap_or("");
        let mut row = vec![c.name.clone(), c.model.clone(), format!("failed: {why}")];
        row.resize(width, String::new());
        return row;
    }
    let s = &r.summary;
    // Figures of the ok answers: none where every answer was an error.
    let of_ok = |v: f64| {
        if s.ok + s.drained > 0 {
            fmt_num(v, 1)
        } else {
            "-".to_string()
        }
    };
    let mut row = vec![
        c.name.clone(),
        c.model.clone(),
        fmt_num(s.rps, 0),
        of_ok(s.latency.p50),
        of_ok(s.latency.p99),
        of_ok(s.latency.max),
        fmt_num(s.errors.total() as f64, 0),
        r.resources.peak_threads.to_string(),
        fmt_num(r.resources.peak_rss_mb, 0),
        of_ok(r.resources.cpu_ms_per_1k_requests),
    ];
    if downstream {
        row.push(r.resources.peak_downstream_conns.to_string());
    }
    row
}

/// Per contender and level of users: throughput, p99, threads and RSS.
fn level_table(picked: &[(&ContenderInfo, Option<&Run>)]) -> String {
    let mut rows = Vec::new();
    for (c, run) in picked {
        for l in run.map(|r| r.summary.levels.as_slice()).unwrap_or(&[]) {
            rows.push(vec![
                c.name.clone(),
                l.target.to_string(),
                fmt_num(l.rps, 0),
                fmt_num(l.latency.p99, 1),
                l.peak_threads.to_string(),
                fmt_num(l.peak_rss_mb, 0),
            ]);
        }
    }
    table(
        &["contender", "users", "req/s", "p99 ms", "threads", "RSS MB"].map(String::from),
        1,
        &rows,
    )
}

/// A scenario measured several times: per contender the median over runs of each figure
/// (percentiles from the merged histograms), throughput with its interval, the runs counted
/// (failed ones too), and the flags the terminal table shows.
/// The columns of `repeats_table`, counted as the scenario counts (requests or records).
fn repeats_header(path: &str, limited: bool) -> Vec<String> {
    let mut header: Vec<String> = [
        "contender",
        "model",
        "runs",
        "req/s",
        "interval",
        "p50 ms",
        "p99 ms",
        "p99 all ms",
        "errors %",
        "peak threads",
        "peak RSS MB",
        "CPU ms / 1k req",
    ]
    .iter()
    .map(|label| counted(path, label))
    .collect();
    if limited {
        header.extend([
            "CPUs seen / workers".to_string(),
            "throttled %".to_string(),
            "OOM kills".to_string(),
        ]);
    }
    header.extend(["steady after s", "flags"].iter().map(|l| counted(path, l)));
    header
}

fn repeats_table(results: &Results, scenario: &str, cells: &[(&ContenderInfo, Cell)]) -> String {
    let Some(first) = results.runs.iter().find(|r| r.scenario == scenario) else {
        return String::new();
    };
    let mut out = format!(
        "\n**{}** `{}`: {}\n\n",
        first.scenario,
        first.path,
        counted(&first.path, &first.load_description)
    );
    // Under a CPU quota or a memory limit, what it did: two more columns.
    let limited = ["throttled", "oom_kills"]
        .iter()
        .filter_map(|k| stats::Metric::by_key(k))
        .any(|m| stats::shown(m, cells.iter().map(|(_, c)| c)));
    let header = repeats_header(&first.path, limited);
    let interval = |e: &Estimate| match (e.lo, e.hi) {
        (Some(lo), Some(hi)) => format!("{}..{}", fmt_num(lo, 0), fmt_num(hi, 0)),
        _ => "-".into(),
    };
    let rows: Vec<Vec<String>> = cells
        .iter()
        .map(|(info, c)| {
            let mut flags = Vec::new();
            if c.noisy.is_some() {
                flags.push("noisy".to_string());
            }
            if c.unsettled_runs > 0 {
                flags.push(format!(
                    "not at steady state ({} of {})",
                    c.unsettled_runs, c.runs
                ));
            }
            // Each figure as the metric prints it ("-" for a latency of no ok answer).
            let fig = |key: &str| super::fmt_metric(stats::Metric::named(key), c);
            let mut row = vec![
                info.name.clone(),
                info.model.clone(),
                super::runs_label(c),
                fig("throughput"),
                interval(c.of("throughput")),
                fig("p50"),
                fig("p99"),
                fig("p99_all"),
                fig("errors"),
                fig("threads"),
                fig("rss"),
                fig("cpu"),
            ];
            if limited {
                // What the runtime believed it had, beside what the limit did to it.
                let seen = info
                    .detected
                    .as_ref()
                    .map_or_else(|| "-".into(), |d| format!("{} / {}", d.cpus, d.workers));
                row.extend([seen, fig("throttled"), fig("oom_kills")]);
            }
            row.extend([fig("steady_s"), flags.join(", ")]);
            row
        })
        .collect();
    out.push_str(&table(&header, 2, &rows));
    if let Some((_, c)) = cells.first() {
        let _ = writeln!(out, "\nIntervals: {}.", c.method);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::markdown::contenders_table;
    use super::*;
    use std::path::Path;

    #[test]
    fn several_runs_print_medians_intervals_and_flags_as_the_terminal_does() {
        use crate::results::test_support::{blank_results, blank_run};
        let mut r = blank_results(&["a", "b"]);
        for (c, values) in [
            ("a", [1000.0, 1100.0, 900.0]),
            ("b", [2000.0, 2100.0, 1900.0]),
        ] {
            for (i, v) in values.iter().enumerate() {
                let mut run = blank_run(c, "s", i as u32 + 1);
                run.status = RunStatus::Ok;
                run.summary.rps = *v;
                r.runs.push(run);
            }
        }
        let md = render_markdown(ResultsDir::new(&r, Path::new("")));
        assert!(
            md.contains("| a | event-loop | 3 | 1,000 | 900..1,100 |"),
            "{md}"
        );
        assert!(
            md.contains("| b | event-loop | 3 | 2,000 | 1,900..2,100 |"),
            "{md}"
        );
        assert!(md.contains("Intervals: median of 3 runs"), "{md}");
        let terminal = super::super::table::render(ResultsDir::new(&r, Path::new("")));
        assert!(
            terminal.contains("900..1,100") && terminal.contains("1,900..2,100"),
            "{terminal}"
        );
    }

    #[test]
    fn what_the_runtime_detected_stands_beside_the_limit_and_in_the_contenders() {
        use crate::results::test_support::{blank_results, blank_run};
        let mut r = blank_results(&["a"]);
        r.contenders[0].detected = Some(
            serde_json::from_str(
                r#"{"cpus":2,"workers":200,"workers_of":"Tomcat worker threads (max)","heap_max_mb":1024}"#,
            )
            .unwrap(),
        );
        for i in 1..=2 {
            let mut run = blank_run("a", "s", i);
            run.status = RunStatus::Ok;
            run.summary.rps = 1000.0;
            run.resources.cgroup = Some(crate::sampler::CgroupReport {
                throttled_pct: 40.0,
                ..Default::default()
            });
            r.runs.push(run);
        }
        let md = render_markdown(ResultsDir::new(&r, Path::new("")));
        assert!(
            md.contains("| CPUs seen / workers | throttled % | OOM kills |"),
            "{md}"
        );
        assert!(md.contains("| 2 / 200 | 40.0 | 0 |"), "{md}");
        let contenders = contenders_table(&r);
        assert!(
            contenders.contains("| 2 CPUs; 200 Tomcat worker threads (max); heap 1024 MB |"),
            "{contenders}"
        );
    }

    #[test]
    fn a_pipelines_tables_count_records_and_other_scenarios_requests() {
        use crate::plan::validate::PIPELINE_PATH;
        use crate::results::test_support::blank_results;
        let mut r = blank_results(&["a"]);
        for (scenario, path) in [("pipe", PIPELINE_PATH), ("http", "/plaintext")] {
            for i in 1..=2 {
                let mut run = Run::new(
                    "a",
                    scenario,
                    i,
                    path,
                    serde_json::Value::Null,
                    "open, 4000 req/s for 30s",
                );
                run.status = RunStatus::Ok;
                run.summary.rps = 3900.0 + i as f64;
                run.resources.cpu_ms_per_1k_requests = 60.0;
                r.runs.push(run);
            }
        }
        let md = render_markdown(ResultsDir::new(&r, Path::new("")));
        let (pipe, http) = md.split_once("**http**").expect("both scenarios");
        assert!(pipe.contains("open, 4000 records/s for 30s"), "{pipe}");
        assert!(
            pipe.contains("| records/s |") && pipe.contains("| CPU ms / 1k records |"),
            "{pipe}"
        );
        assert!(!pipe.contains("req"), "{pipe}");
        assert!(
            http.contains("open, 4000 req/s for 30s") && http.contains("| req/s |"),
            "{http}"
        );
        let terminal = super::super::table::render(ResultsDir::new(&r, Path::new("")));
        let (pipe, http) = terminal
            .split_once("http /plaintext")
            .expect("both scenarios");
        assert!(
            pipe.contains("throughput (records/s)") && pipe.contains("CPU (ms per 1k records)"),
            "{pipe}"
        );
        assert!(http.contains("throughput (req/s)"), "{http}");
    }
}
