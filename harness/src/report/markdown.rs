//! Markdown: report.md (every metric with its interval, notes, charts, contenders), the
//! one-row-per-contender tables of `iobound table --markdown`.

use super::md_table::table;
use super::scenario_notes::notes;
use super::section::Place;
use super::{counted, fmt_num, slug, summary_rows, ScenarioView};
use super::{sections_at, SECTIONS};
use crate::results::dir::ResultsDir;
use crate::results::record::{ContenderInfo, Results, Run, RunStatus};
use crate::stats::{self, representative, scenarios, Cell, Estimate};
use std::fmt::Write;
use std::path::PathBuf;

pub fn report(results: &Results, views: &[ScenarioView], png: &[PathBuf]) -> String {
    let mut md = title(results);
    for section in sections_at(Place::Head) {
        let part = section.markdown(results);
        match section.title() {
            Some(t) if !part.is_empty() => {
                let _ = writeln!(md, "## {t}\n{part}");
            }
            _ => md.push_str(&part),
        }
        for c in section.charts(results) {
            let f = format!("{}.png", c.id);
            if png.iter().any(|p| p.file_name().is_some_and(|n| *n == *f)) {
                let _ = writeln!(md, "![{f}](charts/{f})\n");
            }
        }
    }
    for v in views {
        md.push_str(&scenario_section(results, v, png));
    }
    for section in sections_at(Place::Tail) {
        md.push_str(&section.markdown(results));
    }
    md.push_str(&contenders_table(results));
    md
}

/// The title, where and how the plan ran, and whether it finished.
fn title(results: &Results) -> String {
    let mut md = String::new();
    let plan = results
        .plan
        .get("name")
        .and_then(|v| v.as_str())
        .unwrap_or("plan");
    let _ = writeln!(md, "# iobound report: {plan}\n");
    let env = &results.environment;
    let _ = writeln!(
        md,
        "{} on {} ({} CPUs, {:.0} GiB), {}; {}.\n",
        results.started_at, env.cpu_model, env.cpus_online, env.memory_gib, env.kernel, env.pinning
    );
    if !env.database.is_empty() {
        let _ = writeln!(md, "Database: {}.\n", env.database);
    }
    if !results.complete {
        let _ = writeln!(
            md,
            "**Incomplete results**: {}.\n",
            results
                .incomplete_reason
                .as_deref()
                .unwrap_or("the plan did not finish")
        );
    }
    md
}

/// A scenario: its table of every metric, its notes and its charts.
fn scenario_section(results: &Results, v: &ScenarioView, png: &[PathBuf]) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "## {} `{}`\n\n{}\n", v.name, v.path, v.load);
    let mut header = vec!["metric".to_string()];
    header.extend(v.cells.iter().map(|(n, _)| n.clone()));
    let rows: Vec<Vec<String>> = summary_rows(v)
        .into_iter()
        .map(|(label, cells)| std::iter::once(label).chain(cells).collect())
        .collect();
    md.push_str(&table(&header, 1, &rows));
    md.push('\n');
    for n in notes(v, results) {
        let _ = writeln!(md, "- {}", n.replace('\n', " "));
    }
    for p in png.iter().filter(|p| {
        p.file_name()
            .and_then(|f| f.to_str())
            .is_some_and(|f| f.starts_with(&format!("{}-", slug(&v.name))))
    }) {
        let f = p.file_name().unwrap().to_string_lossy();
        let _ = writeln!(md, "\n![{f}](charts/{f})");
    }
    md.push('\n');
    md
}

/// The contenders: model, framework, runtime, configuration and tunables; the JVM flags.
fn contenders_table(results: &Results) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "## Contenders\n");
    let rows: Vec<Vec<String>> = results
        .contenders
        .iter()
        .map(|c| {
            let t: Vec<String> = c.tunables.iter().map(|(k, v)| format!("{k}={v}")).collect();
            vec![
                c.label(),
                c.model.clone(),
                c.framework.clone(),
                c.runtime.clone().unwrap_or_else(|| "-".into()),
                c.detected_words(),
                c.config.replace('\n', " "),
                t.join(", "),
            ]
        })
        .collect();
    md.push_str(&table(
        &[
            "contender",
            "model",
            "framework",
            "runtime",
            "runtime detected",
            "configuration",
            "tunables",
        ]
        .map(String::from),
        7,
        &rows,
    ));
    let _ = writeln!(
        md,
        "\nJVM flags (every Java contender): `{}`",
        results.environment.jvm_flags.join(" ")
    );
    md
}

/// Each contender with the run shown for it in `scenario` (the median-throughput run).
pub(super) fn columns<'a>(
    results: &'a Results,
    scenario: &str,
) -> Vec<(&'a ContenderInfo, Option<&'a Run>)> {
    results
        .contenders
        .iter()
        .map(|c| (c, representative(results, scenario, &c.name)))
        .collect()
}

/// Below a scenario's table: each kind's line for the run shown per contender (the recovery
/// after a mid-run fault, an overload verdict), where the runs have them.
fn verdicts(picked: &[(&ContenderInfo, Option<&Run>)]) -> String {
    let mut out = String::new();
    for (c, r) in picked {
        let Some(r) = r else { continue };
        for section in SECTIONS {
            if let Some(line) = section.verdict(&c.name, r) {
                let _ = writeln!(out, "- {line}");
            }
        }
    }
    if out.is_empty() {
        out
    } else {
        format!("\n{out}")
    }
}

/// A closed-model run with more than one level of users: its per-level rows are worth showing.
pub(super) fn stepped(run: &Run) -> bool {
    run.load["model"] == "closed" && run.summary.levels.len() > 1
}

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
