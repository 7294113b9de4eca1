//! Every output of a results directory, built from results.json (and the interval logs it
//! names): report.html, report.md, intervals.csv, resources.csv and charts/*.png.
//!
//! Holds: `table` (the terminal table), `markdown` (report.md and `table --markdown`), `csv`,
//! `html` (report.html), `chart` (every chart, drawn once as SVG, and its PNG rendered from that
//! SVG for READMEs), `compare` (two result sets), `gates` (thresholds and regression gates in every
//! output, JUnit XML), `capacity` (capacity searches: tables and the latency-load chart),
//! `runtime` (GC charts, warm-up notes), `flamegraph` (CPU profiles taken with --profile).
//! Uses: util, driver (summaries), sampler (samples), run (the results model), stats.

pub mod capacity;
pub mod chart;
pub mod compare;
mod csv;
pub mod flamegraph;
pub mod gates;
mod html;
pub mod markdown;
mod runtime;
pub mod table;
mod verdicts;

use crate::run::results::{Results, Run, RunStatus};
use crate::sampler::Sample;
use crate::stats::{self, Cell, Difference, METRICS};
use anyhow::{Context, Result};
use chart::{Chart, Series, GUIDE, PALETTE};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Everything a report shows for one scenario.
pub struct ScenarioView {
    pub name: String,
    pub path: String,
    pub load: String,
    pub cells: Vec<(String, Option<Cell>)>,
    pub charts: Vec<Chart>,
}

pub fn views(results: &Results, dir: &Path) -> Vec<ScenarioView> {
    stats::cells(results, dir)
        .into_iter()
        .map(|(scenario, cells)| {
            let first = results.runs.iter().find(|r| r.scenario == scenario);
            ScenarioView {
                path: first.map(|r| r.path.clone()).unwrap_or_default(),
                load: first
                    .map(|r| r.load_description.clone())
                    .unwrap_or_default(),
                charts: charts(results, &scenario),
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

/// Charts of one scenario, each contender drawn from its representative run.
pub fn charts(results: &Results, scenario: &str) -> Vec<Chart> {
    let reps: Vec<(usize, &str, &Run)> = results
        .contenders
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            stats::representative(results, scenario, &c.name).map(|r| (i, c.name.as_str(), r))
        })
        .filter(|(_, _, r)| r.status != RunStatus::Failed)
        .collect();
    let id = |k: &str| format!("{}-{k}", slug(scenario));
    let measured = |r: &Run| {
        r.intervals
            .iter()
            .filter(|row| !row.drain)
            .cloned()
            .collect::<Vec<_>>()
    };
    let per_second =
        |k: &str, title: &str, y: &str, f: fn(&crate::driver::summary::IntervalRow) -> f64| Chart {
            id: id(k),
            title: title.into(),
            x_label: "seconds into the measured run".into(),
            y_label: y.into(),
            series: reps
                .iter()
                .map(|(i, n, r)| Series {
                    name: n.to_string(),
                    color: color(*i),
                    dashed: false,
                    points: measured(r)
                        .iter()
                        .map(|row| (f64::from(row.t) + 0.5, f(row)))
                        .collect(),
                })
                .collect(),
            ..Chart::default()
        };
    let mut out = vec![per_second(
        "throughput",
        "Throughput over time",
        "req/s",
        |r| r.ok as f64,
    )];
    out.extend(runtime::runs_chart(results, scenario, id("runs")));
    out.extend(runtime::warmup_chart(results, scenario, id("warmup")));
    let mut lat = Chart {
        id: id("latency"),
        title: "Response time over time: p99 (solid), p50 (dashed)".into(),
        x_label: "seconds into the measured run".into(),
        y_label: "ms".into(),
        ..Chart::default()
    };
    for (i, n, r) in &reps {
        let rows: Vec<_> = measured(r).into_iter().filter(|row| row.ok > 0).collect();
        lat.series.push(Series {
            name: format!("{n} p99"),
            color: color(*i),
            dashed: false,
            points: rows
                .iter()
                .map(|row| (f64::from(row.t) + 0.5, row.latency.p99))
                .collect(),
        });
        lat.series.push(Series {
            name: format!("{n} p50"),
            color: color(*i),
            dashed: true,
            points: rows
                .iter()
                .map(|row| (f64::from(row.t) + 0.5, row.latency.p50))
                .collect(),
        });
    }
    out.push(lat);
    if let Some(spectrum) = spectrum(results, scenario, &reps, id("percentiles")) {
        out.push(spectrum);
    }
    let open = reps.first().is_some_and(|(_, _, r)| is_open(r));
    if let Some((_, _, r)) = reps.first() {
        let label = if open {
            "arrival rate (req/s)"
        } else {
            "users"
        };
        out.push(Chart {
            id: id("load"),
            title: format!("Offered load: {label}"),
            x_label: "seconds into the measured run".into(),
            y_label: label.into(),
            series: vec![Series {
                name: label.into(),
                color: GUIDE.into(),
                dashed: false,
                points: measured(r)
                    .iter()
                    .map(|row| (f64::from(row.t) + 0.5, row.target))
                    .collect(),
            }],
            ..Chart::default()
        });
    }
    out.push(per_second("errors", "Errors over time", "errors/s", |r| {
        r.errors as f64
    }));
    if let Some(s) = scaling(&reps, open, id("scaling")) {
        out.push(s);
    }
    out.extend(resource_charts(&reps, &id));
    out.extend(runtime::charts(&reps, &id));
    out
}

/// The contender's threads, memory, CPU, context switches and sockets over time, from the
/// sampler (charts without data are left out).
fn resource_charts(reps: &[(usize, &str, &Run)], id: &dyn Fn(&str) -> String) -> Vec<Chart> {
    let sampled = |k: &str,
                   title: &str,
                   y: &str,
                   f: &dyn Fn(&Sample, Option<&Sample>) -> Option<f64>| Chart {
        id: id(k),
        title: title.into(),
        x_label: "seconds into the measured run".into(),
        y_label: y.into(),
        series: reps
            .iter()
            .filter(|(_, _, r)| !r.resources.samples.is_empty())
            .map(|(i, n, r)| {
                let s = &r.resources.samples;
                let points = s
                    .iter()
                    .enumerate()
                    .filter_map(|(j, cur)| {
                        f(cur, j.checked_sub(1).map(|p| &s[p])).map(|v| (cur.t, v))
                    })
                    .collect();
                Series {
                    name: n.to_string(),
                    color: color(*i),
                    dashed: false,
                    points,
                }
            })
            .collect(),
        ..Chart::default()
    };
    let rate = |cur: &Sample, prev: Option<&Sample>, f: fn(&Sample) -> f64| {
        let p = prev?;
        let dt = cur.t - p.t;
        (dt > 0.0).then(|| ((f(cur) - f(p)) / dt).max(0.0))
    };
    let mut out = Vec::new();
    for c in [
        sampled("threads", "Threads", "threads", &|s, _| {
            Some(s.threads as f64)
        }),
        sampled("rss", "Resident memory (RSS)", "MB", &|s, _| Some(s.rss_mb)),
        sampled("cpu", "CPU (100% = one core)", "%", &|s, p| {
            rate(s, p, |x| (x.cpu_user_s + x.cpu_sys_s) * 100.0)
        }),
        sampled("ctx", "Context switches", "per second", &|s, p| {
            rate(s, p, |x| (x.ctx_voluntary + x.ctx_involuntary) as f64)
        }),
        sampled("sockets", "Open sockets", "sockets", &|s, _| {
            Some(s.sockets as f64)
        }),
        sampled(
            "downstream",
            "Connections to the downstream service",
            "connections",
            &|s, _| Some(s.downstream_conns as f64),
        ),
    ] {
        // The downstream chart only where there were downstream connections.
        let all_zero = c.id.ends_with("-downstream")
            && c.series.iter().all(|s| s.points.iter().all(|p| p.1 == 0.0));
        if c.has_data() && !all_zero {
            out.push(c);
        }
    }
    out
}

/// Latency by percentile (HdrHistogram's percentile spectrum), from every run merged.
fn spectrum(
    results: &Results,
    scenario: &str,
    reps: &[(usize, &str, &Run)],
    id: String,
) -> Option<Chart> {
    let mut series = Vec::new();
    for (i, n, _) in reps {
        let h = stats::merged_histogram(results, scenario, n)?;
        // x = log10(1 / (1 - q)): 1 = 90%, 2 = 99%, 3 = 99.9%.
        let points = (0..=40)
            .map(|k| {
                let x = f64::from(k) / 10.0;
                let q = 1.0 - 10f64.powf(-x);
                (x, h.value_at_quantile(q) as f64 / 1000.0)
            })
            .chain(std::iter::once((4.3, h.max() as f64 / 1000.0)))
            .collect();
        series.push(Series {
            name: n.to_string(),
            color: color(*i),
            dashed: false,
            points,
        });
    }
    let ticks = [
        (0.0, "0%"),
        (0.301, "50%"),
        (1.0, "90%"),
        (2.0, "99%"),
        (3.0, "99.9%"),
        (4.0, "99.99%"),
        (4.3, "max"),
    ];
    Some(Chart {
        id,
        title: "Response time by percentile (all runs merged)".into(),
        x_label: "percentile".into(),
        y_label: "ms".into(),
        series,
        x_ticks: Some(ticks.iter().map(|(x, l)| (*x, l.to_string())).collect()),
        markers: false,
    })
}

/// Throughput against offered load, one point per load level, with the ceiling the load
/// allows: Little's law (users / response time at the lowest level) or the offered rate.
fn scaling(reps: &[(usize, &str, &Run)], open: bool, id: String) -> Option<Chart> {
    if reps.iter().all(|(_, _, r)| r.summary.levels.len() < 2) {
        return None;
    }
    let mut series: Vec<Series> = reps
        .iter()
        .map(|(i, n, r)| Series {
            name: n.to_string(),
            color: color(*i),
            dashed: false,
            points: r.summary.levels.iter().map(|l| (l.target, l.rps)).collect(),
        })
        .collect();
    let max_x = reps
        .iter()
        .flat_map(|(_, _, r)| r.summary.levels.iter().map(|l| l.target))
        .fold(0.0, f64::max);
    if open {
        series.push(Series {
            name: "offered rate".into(),
            color: GUIDE.into(),
            dashed: true,
            points: vec![(0.0, 0.0), (max_x, max_x)],
        });
    } else {
        // The uncontended response time: the best median at the lowest level of users.
        let r0 = reps
            .iter()
            .filter_map(|(_, _, r)| r.summary.levels.first().map(|l| l.latency.p50))
            .filter(|m| *m > 0.0)
            .fold(f64::INFINITY, f64::min);
        if r0.is_finite() {
            // Drawn only as far as 1.5 x the best measured throughput, so that a ceiling far
            // above the data (a CPU-bound scenario) does not flatten the chart.
            let best = reps
                .iter()
                .flat_map(|(_, _, r)| r.summary.levels.iter().map(|l| l.rps))
                .fold(0.0, f64::max);
            let end = max_x.min(1.5 * best * r0 / 1000.0).max(1.0);
            series.push(Series {
                name: format!(
                    "Little's law: users / {} ms (best p50 at the first level)",
                    chart::short((r0 * 10.0).round() / 10.0)
                ),
                color: GUIDE.into(),
                dashed: true,
                points: vec![(0.0, 0.0), (end, end / (r0 / 1000.0))],
            });
        }
    }
    Some(Chart {
        id,
        title: if open {
            "Throughput vs arrival rate"
        } else {
            "Throughput vs concurrency"
        }
        .into(),
        x_label: if open {
            "arrival rate (req/s)"
        } else {
            "concurrent users"
        }
        .into(),
        y_label: "req/s".into(),
        series,
        x_ticks: None,
        markers: true,
    })
}

/// "1,020 [990-1,100]" with the metric's decimals.
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
        .filter(|m| m.shown(view.cells.iter().filter_map(|(_, c)| c.as_ref())))
    {
        let cells = view
            .cells
            .iter()
            .enumerate()
            .map(|(i, (_, c))| match c {
                None => "-".to_string(),
                Some(c) => {
                    let v = fmt_estimate((m.get)(c), m.decimals);
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

/// Notes under a scenario's table: how intervals were made, noisy cells, failures.
/// Where the load of `runs` came from when it came from other hosts (`run --hosts`): each
/// host's share and the requests due on it over the runs.
pub fn load_hosts_note(runs: &[&Run]) -> Option<String> {
    let mut hosts: Vec<(String, String, u64)> = Vec::new();
    for h in runs.iter().flat_map(|r| &r.load_hosts) {
        match hosts.iter_mut().find(|(n, _, _)| *n == h.host) {
            Some(x) => x.2 += h.due,
            None => hosts.push((h.host.clone(), h.load.clone(), h.due)),
        }
    }
    if hosts.is_empty() {
        return None;
    }
    let list: Vec<String> = hosts
        .iter()
        .map(|(n, load, due)| format!("{n} {load} ({} due)", crate::util::thousands(*due)))
        .collect();
    Some(format!(
        "load from {} hosts over SSH, their per-second histograms added: {} over {} run(s)",
        hosts.len(),
        list.join(", "),
        runs.len()
    ))
}

pub fn notes(view: &ScenarioView, results: &Results) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(runtime::warmup_note(results, &view.name));
    out.extend(runtime::event_loop_note(results, &view.name));
    if view
        .cells
        .iter()
        .filter_map(|(_, c)| c.as_ref())
        .any(|c| c.p99_all.value.is_finite())
    {
        out.push("Latency rows count successful responses; \"p99 all requests\" counts every request due, failed ones at the time they failed and unanswered ones at the time they were given up (censored). OK + KO = requests due.".to_string());
    }
    let methods: Vec<&str> = view
        .cells
        .iter()
        .filter_map(|(_, c)| c.as_ref().map(|c| c.method.as_str()))
        .collect();
    if let Some(m) = methods.first() {
        if methods.iter().all(|x| x == m) {
            out.push(format!("Intervals: {m}. Latency percentiles from the histograms of all runs merged. A difference is called significant only by a two-sided Mann-Whitney test over runs (p <= 0.05, both sides with >= 4 runs); otherwise it is marked not significant, or not tested."));
        } else {
            for (n, c) in view
                .cells
                .iter()
                .filter_map(|(n, c)| c.as_ref().map(|c| (n, c)))
            {
                out.push(format!("{n}: {}", c.method));
            }
        }
    }
    for (n, c) in view
        .cells
        .iter()
        .filter_map(|(n, c)| c.as_ref().map(|c| (n, c)))
    {
        if let Some(why) = &c.noisy {
            out.push(format!("Noisy ({n}): {why}."));
        }
        let runs: Vec<&Run> = results
            .runs
            .iter()
            .filter(|r| r.scenario == view.name && &r.contender == n)
            .collect();
        if let Some(note) = load_hosts_note(&runs) {
            out.push(format!("Load ({n}): {note}."));
        }
        if let Some(m) = runs
            .iter()
            .map(|r| &r.resources.memory_measure)
            .find(|m| !m.is_empty())
        {
            out.push(format!(
                "Memory ({n}): peak RSS is the {m} (shared pages counted once), not one RSS."
            ));
        }
        if c.unsettled_runs > 0 {
            out.push(format!(
                "Not at steady state ({n}): {} of {} run(s) measured before the contender had \
                 settled; their figures include warm-up, and no verdict rests on them silently.",
                c.unsettled_runs, c.runs
            ));
        }
    }
    for (n, _) in &view.cells {
        let runs: Vec<&Run> = results
            .runs
            .iter()
            .filter(|r| r.scenario == view.name && &r.contender == n && r.writes.is_some())
            .collect();
        if runs.is_empty() {
            continue;
        }
        let sum = |f: fn(&crate::services::database::WriteCheck) -> u64| {
            runs.iter()
                .filter_map(|r| r.writes.as_ref())
                .map(f)
                .sum::<u64>()
        };
        let (creates, updates, deletes, lost, unacked) = (
            sum(|w| w.creates_acknowledged),
            sum(|w| w.updates_acknowledged),
            sum(|w| w.deletes_acknowledged),
            sum(|w| w.lost),
            sum(|w| w.creates_unacknowledged),
        );
        let verdict = if lost == 0 {
            "every one found in the database".to_string()
        } else {
            format!("{lost} NOT in the database")
        };
        let extra = if unacked > 0 {
            format!(
                "; {unacked} rows were committed without an answer reaching the driver (timeouts)"
            )
        } else {
            String::new()
        };
        out.push(format!(
            "Writes ({n}, {} run(s)): {creates} creates, {updates} updates and {deletes} deletes acknowledged, {verdict}{extra}.",
            runs.len()
        ));
    }
    for r in results.runs.iter().filter(|r| r.scenario == view.name) {
        if let Some(d) = &r.delivery {
            let verdict = if d.lost == 0 {
                "none lost".to_string()
            } else {
                format!("{} LOST (e.g. {:?})", d.lost, d.lost_examples)
            };
            out.push(format!(
                "Delivery ({} run {}): {} records sent, {} arrived in output, {verdict}; {} duplicates (at-least-once), {} failed enrichments; peak lag {} records.",
                r.contender, r.run, d.sent, d.received, d.duplicates, d.failed_enrichments, d.peak_lag
            ));
        }
        if let Some(rc) = &r.recovery {
            let back = match rc.recovered_after_s {
                Some(s) if s <= crate::run::faults::RECOVERY_LIMIT_S => {
                    format!("back {s:.0} s after it cleared")
                }
                Some(s) => format!(
                    "back only {s:.0} s after it cleared (over the {:.0} s bar)",
                    crate::run::faults::RECOVERY_LIMIT_S
                ),
                None => "not back by the end of the run".into(),
            };
            out.push(format!(
                "Recovery ({} run {}): fault at {:.0} s, cleared at {:.0} s; baseline p99 {:.0} ms, worst {:.0} ms, {} errors; {back} (p99 under {:.0} ms with no errors for {} s in a row).",
                r.contender, r.run, rc.fault_at_s, rc.cleared_at_s, rc.baseline_p99_ms, rc.worst_p99_ms, rc.errors, rc.limit_ms, crate::run::faults::RECOVERED_FOR
            ));
        }
        if let Some(v) = &r.overload {
            let back = v.recovered_after_s.map_or(
                "not back at baseline within the after phase".to_string(),
                |s| format!("back at baseline {s:.0} s into the after phase"),
            );
            out.push(format!(
                "Overload ({} run {}): capacity {:.0} req/s (closed probe), offered {:.0} req/s ({}x): {} - {}; {:.0} req/s answered OK, {} fast errors, {} timeouts; {back}.",
                r.contender, r.run, v.capacity_rps, v.offered_rps, v.factor, v.behaviour.to_uppercase(), v.explanation, v.ok_rps, v.fast_errors, v.timeouts
            ));
        }
    }
    for r in results
        .runs
        .iter()
        .filter(|r| r.scenario == view.name && r.status != RunStatus::Ok)
    {
        let what = if r.status == RunStatus::Failed {
            "failed"
        } else {
            "incomplete"
        };
        let why = r
            .failure
            .as_deref()
            .unwrap_or("interrupted")
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        out.push(format!("{} run {} {what}: {why}", r.contender, r.run));
    }
    out
}

/// Charts worth a PNG for a README: throughput, latency, scaling, threads, memory.
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
];

/// Every output of a results directory: summary.txt (the terminal table, returned) and the
/// reports of `write_all`.
pub fn write_outputs(dir: &Path, res: &Results) -> Result<String> {
    let text = table::render(res, dir);
    crate::util::write_atomic(&dir.join("summary.txt"), text.as_bytes())?;
    let files = write_all(res, dir)?;
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

/// Writes every output into `dir`; returns the files written.
pub fn write_all(results: &Results, dir: &Path) -> Result<Vec<PathBuf>> {
    let views = views(results, dir);
    let charts_dir = dir.join("charts");
    std::fs::create_dir_all(&charts_dir)
        .with_context(|| format!("cannot create {}", charts_dir.display()))?;
    let mut written = Vec::new();
    let mut pngs = Vec::new();
    for v in &views {
        for c in v.charts.iter().filter(|c| c.has_data()) {
            let kind = c.id.rsplit('-').next().unwrap_or("");
            if PNG_CHARTS.contains(&kind) {
                let p = charts_dir.join(format!("{}.png", c.id));
                crate::util::write_atomic(&p, &chart::png(c)?)?;
                pngs.push(p);
            }
        }
    }
    for c in capacity::charts(results) {
        let p = charts_dir.join(format!("{}.png", c.id));
        crate::util::write_atomic(&p, &chart::png(&c)?)?;
        pngs.push(p);
    }
    let files: [(&str, String); 4] = [
        ("report.html", html::page(results, &views)),
        ("report.md", markdown::report(results, &views, &pngs)),
        ("intervals.csv", csv::intervals_csv(results)),
        ("resources.csv", csv::resources_csv(results)),
    ];
    for (name, text) in files {
        let p = dir.join(name);
        crate::util::write_atomic(&p, text.as_bytes())?;
        written.push(p);
    }
    written.extend(pngs);
    written.extend(flamegraph::write(results, dir)?);
    Ok(written)
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
