//! Markdown: report.md (every metric with its interval, notes, charts, contenders), the
//! one-row-per-contender tables of `iobound table --markdown`.

use super::md_table::table;
use super::scenario_notes::notes;
use super::section::Place;
use super::{sections_at, SECTIONS};
use super::{slug, summary_rows, ScenarioView};
use crate::results::record::{ContenderInfo, Results, Run};
use crate::stats::representative;
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
pub(super) fn contenders_table(results: &Results) -> String {
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
pub(super) fn verdicts(picked: &[(&ContenderInfo, Option<&Run>)]) -> String {
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
