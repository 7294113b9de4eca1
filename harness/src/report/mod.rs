//! Every output of a results directory, built from results.json (and the interval logs it
//! names): report.html, report.md, intervals.csv, resources.csv and charts/*.png.
//!
//! Holds: `section` (the one trait every kind of result brings its part of a report through; the
//! list of sections is here), `table` (the terminal table), `markdown` (report.md),
//! `markdown_tables` (`table --markdown`), `csv` (metrics.csv, intervals.csv, resources.csv),
//! `html` (report.html), `chart` (every chart, drawn once as SVG; its PNG for READMEs rendered from
//! that SVG by `chart_png`), `compare` (two result sets), `gates` (thresholds and regression gates
//! in every output, JUnit XML), `capacity` (capacity searches: tables and the latency-load chart),
//! `runtime` (GC charts, warm-up notes), `flamegraph` (CPU profiles taken with --profile),
//! `details` (the sections of faults, overload, delivery and write checks), `scenario_charts` and
//! `scenario_notes` (the charts and the notes of one scenario, every format), `md_table` (the one
//! Markdown table writer), `noise` (where a set's noise is) and `verdicts`. The docs pages'
//! markers, which quote many results directories, are pages/.
//! Uses: util, plan (a plan's settings quoted), driver (summaries), services (the contenders'
//! manifests), sampler (samples), results (the record of runs), observe (the rules' constants
//! a runtime note names), stats.

pub mod capacity;
pub mod chart;
mod chart_png;
pub mod compare;
mod csv;
mod details;
pub mod export;
pub mod flamegraph;
pub mod gates;
mod html;
pub mod markdown;
pub mod markdown_tables;
pub(crate) mod md_table;
#[cfg(test)]
mod metric_formats_tests;
mod noise;
mod runtime;
mod scenario_charts;
mod scenario_notes;
mod section;
pub mod table;
mod verdicts;

use crate::results::dir::ResultsDir;
use crate::results::record::Run;
use crate::stats::{self, Cell, Difference, METRICS};
use anyhow::Result;
use chart::{Chart, PALETTE};
use section::{Place, Section};
use std::fmt::Write;
use std::path::PathBuf;

/// Every section (section.rs), in the order each format shows them.
pub(crate) const SECTIONS: [&dyn Section; 9] = [
    &verdicts::Verdicts,
    &gates::Gates,
    &capacity::Capacity,
    &details::Writes,
    &details::Delivery,
    &details::Recovery,
    &details::Overload,
    &flamegraph::Profiles,
    &noise::Noise,
];

/// The sections shown at `place`.
fn sections_at(place: Place) -> impl Iterator<Item = &'static dyn Section> {
    SECTIONS.into_iter().filter(move |s| s.place() == place)
}

/// Everything a report shows for one scenario.
pub struct ScenarioView {
    pub name: String,
    pub path: String,
    pub load: String,
    pub cells: Vec<(String, Option<Cell>)>,
    pub charts: Vec<Chart>,
}

pub fn views(set: ResultsDir) -> Vec<ScenarioView> {
    let results = set.results;
    stats::cells(set)
        .into_iter()
        .map(|(scenario, cells)| {
            let first = results.runs.iter().find(|r| r.scenario == scenario);
            ScenarioView {
                path: first.map(|r| r.path.clone()).unwrap_or_default(),
                load: first
                    .map(|r| r.load_description.clone())
                    .unwrap_or_default(),
                charts: scenario_charts::charts(results, &scenario),
                cells: results
                    .contenders
                    .iter()
                    .map(|c| c.name.clone())
                    .zip(cells)
                    .collect(),
                name: scenario,
            }
        })
        .collect()
}

/// File-name-safe form of a scenario name.
pub fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

fn color(i: usize) -> String {
    PALETTE[i % PALETTE.len()].to_string()
}

fn is_open(run: &Run) -> bool {
    run.load.get("model").and_then(|m| m.as_str()) == Some("open")
}

/// "1,020 [990-1,100]" with the metric's decimals.
/// A metric of a cell as the tables print it: "-" where the cell has no such figure (a
/// latency where no request was answered ok: `Metric::measured`).
pub fn fmt_metric(m: &stats::Metric, c: &Cell) -> String {
    if stats::measured(m, c) {
        fmt_num(c.get(m).value, m.decimals)
    } else {
        "-".into()
    }
}

/// As `fmt_metric`, with the interval where there is one.
pub fn fmt_metric_estimate(m: &stats::Metric, c: &Cell) -> String {
    if stats::measured(m, c) {
        fmt_estimate(c.get(m), m.decimals)
    } else {
        "-".into()
    }
}

pub fn fmt_estimate(e: &stats::Estimate, decimals: usize) -> String {
    let v = fmt_num(e.value, decimals);
    match (e.lo, e.hi) {
        (Some(lo), Some(hi)) => {
            format!("{v} [{}-{}]", fmt_num(lo, decimals), fmt_num(hi, decimals))
        }
        _ => v,
    }
}

/// Rows of a scenario's summary table: metric label, then per contender its value (with the
/// interval) and, after the first, the difference against the first.
pub fn summary_rows(view: &ScenarioView) -> Vec<(String, Vec<String>)> {
    let base = view.cells.first().and_then(|(_, c)| c.as_ref());
    let count = |f: fn(&Cell) -> u64| {
        view.cells
            .iter()
            .map(|(_, c)| {
                c.as_ref()
                    .map(|c| fmt_num(f(c) as f64, 0))
                    .unwrap_or_else(|| "-".into())
            })
            .collect()
    };
    let mut rows = vec![
        (
            "runs".to_string(),
            view.cells
                .iter()
                .map(|(_, c)| {
                    c.as_ref()
                        .map(runs_label)
                        .unwrap_or_else(|| "failed".into())
                })
                .collect(),
        ),
        ("OK (all runs)".to_string(), count(|c| c.ok)),
        ("KO (all runs)".to_string(), count(|c| c.ko)),
    ];
    for m in METRICS
        .iter()
        .filter(|m| stats::shown(m, view.cells.iter().filter_map(|(_, c)| c.as_ref())))
    {
        let cells = view
            .cells
            .iter()
            .enumerate()
            .map(|(i, (_, c))| match c {
                None => "-".to_string(),
                Some(c) => {
                    let v = fmt_metric_estimate(m, c);
                    match base {
                        Some(b) if i > 0 => format!("{v} ({})", Difference::of(m, b, c).describe()),
                        _ => v,
                    }
                }
            })
            .collect();
        rows.push((m.label.to_string(), cells));
    }
    rows
}

/// "5", "4 (+1 failed)", "2 incomplete": every run counted, the failed ones too.
pub(super) fn runs_label(c: &Cell) -> String {
    let mut s = c.runs.to_string();
    if c.failed_runs > 0 {
        let _ = write!(s, " (+{} failed)", c.failed_runs);
    }
    if c.partial {
        s.push_str(" incomplete");
    }
    s
}

/// Charts worth a PNG for a README: throughput, latency, scaling, threads, memory, and the
/// throttling under a CPU quota (to set beside latency per second).
const PNG_CHARTS: &[&str] = &[
    "throughput",
    "runs",
    "warmup",
    "latency",
    "percentiles",
    "scaling",
    "threads",
    "rss",
    "gc",
    "throttled",
];

/// Every output of a results directory: summary.txt (the terminal table, returned) and the
/// reports of `write_all`.
pub fn write_outputs(set: ResultsDir) -> Result<String> {
    let dir = set.dir;
    let text = table::render(set);
    crate::util::files::write_atomic(&dir.join("summary.txt"), text.as_bytes())?;
    let files = write_all(set)?;
    eprintln!(
        "report: {} ({} files: report.md, CSV, {} PNG charts)",
        dir.join("report.html").display(),
        files.len() + 1,
        files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "png"))
            .count()
    );
    Ok(text)
}

/// Writes every output into the results directory; returns the files written.
pub fn write_all(set: ResultsDir) -> Result<Vec<PathBuf>> {
    let (results, dir) = (set.results, set.dir);
    let views = views(set);
    let charts_dir = dir.join("charts");
    crate::util::files::own_dir(&charts_dir)?;
    let mut written = Vec::new();
    let mut pngs = Vec::new();
    for v in &views {
        for c in v.charts.iter().filter(|c| c.has_data()) {
            let kind = c.id.rsplit('-').next().unwrap_or("");
            if PNG_CHARTS.contains(&kind) {
                let p = charts_dir.join(format!("{}.png", c.id));
                crate::util::files::write_atomic(&p, &chart_png::png(c)?)?;
                pngs.push(p);
            }
        }
    }
    for c in SECTIONS.iter().flat_map(|s| s.charts(results)) {
        let p = charts_dir.join(format!("{}.png", c.id));
        crate::util::files::write_atomic(&p, &chart_png::png(&c)?)?;
        pngs.push(p);
    }
    let files: [(&str, String); 5] = [
        ("report.html", html::page(results, &views)),
        ("report.md", markdown::report(results, &views, &pngs)),
        ("metrics.csv", csv::metrics_csv(&views)),
        ("intervals.csv", csv::intervals_csv(results)),
        ("resources.csv", csv::resources_csv(results)),
    ];
    for (name, text) in files {
        let p = dir.join(name);
        crate::util::files::write_atomic(&p, text.as_bytes())?;
        written.push(p);
    }
    written.extend(pngs);
    for section in SECTIONS {
        written.extend(section.files(set)?);
    }
    Ok(written)
}

/// A table's label or load description for a scenario at `path`: a pipeline's runs count
/// records (produced to `input`, read back from `output`), not requests, so "req" reads
/// "records" there; other scenarios' labels are kept as they are.
pub fn counted(path: &str, label: &str) -> String {
    if path != crate::plan::validate::PIPELINE_PATH {
        return label.to_string();
    }
    label
        .replace("req/s", "records/s")
        .replace("1k req", "1k records")
}

pub fn fmt_num(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return "-".into(); // not measured (e.g. a server that was not sampled)
    }
    let s = format!("{v:.decimals$}");
    let (int, frac) = s
        .split_once('.')
        .map(|(a, b)| (a.to_string(), format!(".{b}")))
        .unwrap_or((s.clone(), String::new()));
    let (sign, digits) = int
        .strip_prefix('-')
        .map(|d| ("-", d.to_string()))
        .unwrap_or(("", int.clone()));
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{sign}{grouped}{frac}")
}
