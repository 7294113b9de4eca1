//! Capacity searches in every output: a table per capacity scenario (capacity, its probes,
//! efficiency, what broke first) and the "hockey stick": p50 and p99 against offered load for
//! every contender in one chart, each capacity marked.

use super::chart::{Chart, Series};
use super::{color, fmt_num, slug};
use crate::results::record::{Results, Run};
use crate::stats::runs::capacity_scenarios;
use std::fmt::Write;

/// Capacity searches: a table and a chart per capacity scenario.
pub struct Capacity;

impl super::section::Section for Capacity {
    fn terminal(&self, results: &Results) -> String {
        terminal(results)
    }
    fn title(&self) -> Option<&'static str> {
        Some("Capacity")
    }
    fn markdown(&self, results: &Results) -> String {
        markdown(results)
    }
    fn html(&self, results: &Results) -> String {
        html(results)
    }
    fn charts(&self, results: &Results) -> Vec<Chart> {
        charts(results)
    }
}

const HEADER: [&str; 7] = [
    "contender",
    "capacity req/s",
    "req per CPU-second",
    "req/s per GB RSS",
    "broke first",
    "probes",
    "verdict",
];

/// One row per contender (and repeat) of a capacity scenario, in the plan's order of
/// contenders and each one's searches in turn (a resumed plan appends them out of order).
fn rows(results: &Results, scenario: &str) -> Vec<Vec<String>> {
    let place = |name: &str| results.contenders.iter().position(|c| c.name == name);
    let mut searches: Vec<_> = results
        .capacity
        .iter()
        .filter(|c| c.scenario == scenario)
        .collect();
    searches.sort_by_key(|c| (place(&c.contender), c.repeat));
    searches
        .into_iter()
        .map(|c| {
            let name = if results.capacity.iter().any(|o| {
                o.scenario == scenario && o.contender == c.contender && o.repeat != c.repeat
            }) {
                format!("{} (run {})", c.contender, c.repeat)
            } else {
                c.contender.clone()
            };
            let capacity = match (c.capacity_rps, c.failed_rps) {
                (None, _) if c.driver_limited => "? (driver)".to_string(),
                (Some(l), None) if c.driver_limited => format!(">= {} (driver)", fmt_num(l, 0)),
                (None, _) => format!(
                    "< {}",
                    fmt_num(
                        first_rate(results, &c.contender, scenario).unwrap_or(0.0),
                        0
                    )
                ),
                (Some(l), None) => format!(">= {}", fmt_num(l, 0)),
                (Some(l), Some(_)) => fmt_num(l, 0),
            };
            vec![
                name,
                capacity,
                c.per_cpu_second.map_or("-".into(), |v| fmt_num(v, 0)),
                c.per_gb_rss.map_or("-".into(), |v| fmt_num(v, 0)),
                c.broke_first.clone().unwrap_or_else(|| "-".into()),
                c.probes.to_string(),
                if c.warmup_unsettled {
                    format!(
                        "{} (warm-up unsettled: left out of the verdicts)",
                        c.verdict
                    )
                } else {
                    c.verdict.clone()
                },
            ]
        })
        .collect()
}

fn first_rate(results: &Results, contender: &str, scenario: &str) -> Option<f64> {
    probes(results, contender, scenario)
        .first()
        .and_then(|r| r.details.probe())
        .map(|p| p.rate)
}

/// The probes that judged their rate (not one that began with the warm-up's backlog).
fn probes<'a>(results: &'a Results, contender: &str, scenario: &str) -> Vec<&'a Run> {
    results
        .runs
        .iter()
        .filter(|r| {
            r.contender == contender
                && r.details
                    .probe()
                    .is_some_and(|p| p.of == scenario && p.counted)
        })
        .collect()
}

fn heading(results: &Results, scenario: &str) -> String {
    let slo = results
        .capacity
        .iter()
        .find(|c| c.scenario == scenario)
        .map(|c| c.slo.join(", "))
        .unwrap_or_default();
    let path = results
        .runs
        .iter()
        .find(|r| r.details.probe().is_some_and(|p| p.of == scenario))
        .map(|r| r.path.clone())
        .unwrap_or_default();
    format!("capacity of {scenario} `{path}` within {slo}")
}

/// The Markdown tables of every capacity scenario (for report.md and `table --markdown`).
pub fn markdown(results: &Results) -> String {
    let mut out = String::new();
    let header: Vec<String> = HEADER.iter().map(|h| h.to_string()).collect();
    for s in capacity_scenarios(results) {
        let _ = write!(
            out,
            "\n**{}**\n\n{}",
            heading(results, &s),
            super::md_table::table(&header, 1, &rows(results, &s))
        );
    }
    out
}

/// The same for the terminal.
pub fn terminal(results: &Results) -> String {
    let mut out = String::new();
    for s in capacity_scenarios(results) {
        let _ = writeln!(out, "\n{}", heading(results, &s).replace('`', ""));
        for r in rows(results, &s) {
            let _ = writeln!(out, "  {:<22} {:>12}  {}", r[0], r[1], r[6]);
        }
    }
    out
}

/// The HTML section: tables and charts.
pub fn html(results: &Results) -> String {
    let mut h = String::new();
    for s in capacity_scenarios(results) {
        let _ = write!(
            h,
            "<h2 id=\"{}\">{}</h2><table><tr>",
            super::chart::esc(&slug(&format!("capacity-{s}"))),
            super::chart::esc(&heading(results, &s))
        );
        for c in HEADER {
            let _ = write!(h, "<th>{c}</th>");
        }
        h.push_str("</tr>");
        for r in rows(results, &s) {
            h.push_str("<tr>");
            for (i, v) in r.iter().enumerate() {
                let class = if (1..=5).contains(&i) {
                    " class=\"n\""
                } else {
                    ""
                };
                let _ = write!(h, "<td{class}>{}</td>", super::chart::esc(v));
            }
            h.push_str("</tr>");
        }
        h.push_str("</table><div class=\"grid\">");
        if let Some(c) = chart(results, &s) {
            h.push_str(&super::chart::svg(&c));
        }
        h.push_str("</div>");
    }
    h
}

/// Latency against offered load, every contender: p99 solid with a marker per rate probed (the
/// worst of its probes), p50 dashed, a dashed vertical line at each capacity and the objective
/// as a grey line. Latency is clipped at 4 times the
/// objective, where the stick has long turned.
pub fn chart(results: &Results, scenario: &str) -> Option<Chart> {
    let objective = objective_ms(results, scenario);
    let clip = objective.map_or(f64::INFINITY, |o| o * 4.0);
    let mut series = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for c in results.capacity.iter().filter(|c| c.scenario == scenario) {
        if !names.contains(&c.contender.as_str()) {
            names.push(&c.contender);
        }
    }
    for (i, name) in names.iter().enumerate() {
        series.extend(contender_series(
            results, scenario, name, i, clip, objective,
        ));
    }
    if let (Some(o), Some(x1)) = (
        objective,
        series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .reduce(f64::max),
    ) {
        let x0 = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .fold(x1, f64::min);
        series.push(Series {
            name: format!("objective: p99 <= {} ms", fmt_num(o, 0)),
            color: super::chart::GUIDE.into(),
            dashed: true,
            points: vec![(x0, o), (x1, o)],
        });
    }
    let clipped = if clip.is_finite() {
        format!(" (clipped at {} ms, 4x the objective)", fmt_num(clip, 0))
    } else {
        String::new()
    };
    let c = Chart {
        id: format!("{}-capacity", slug(scenario)),
        title: format!("{scenario}: latency against offered load{clipped}"),
        x_label: "offered load (req/s)".into(),
        y_label: "ms".into(),
        series,
        markers: true,
        ..Chart::default()
    };
    c.has_data().then_some(c)
}

/// The p99 objective of a capacity scenario's SLO, in ms (None without probes or a p99 rule).
fn objective_ms(results: &Results, scenario: &str) -> Option<f64> {
    results
        .runs
        .iter()
        .find(|r| r.details.probe().is_some_and(|p| p.of == scenario))?;
    results
        .capacity
        .iter()
        .find(|c| c.scenario == scenario)?
        .slo
        .iter()
        .find_map(|s| {
            s.strip_prefix("p99 <= ")
                .and_then(|v| v.strip_suffix(" ms"))
                .and_then(|v| v.parse::<f64>().ok())
        })
}

/// One contender's lines: p99 and p50 per rate probed (the worst of its probes at a rate,
/// clipped at `clip`), and a vertical line at its capacity.
fn contender_series(
    results: &Results,
    scenario: &str,
    name: &str,
    i: usize,
    clip: f64,
    objective: Option<f64>,
) -> Vec<Series> {
    let mut pts: Vec<(f64, f64, f64)> = Vec::new();
    for r in probes(results, name, scenario) {
        let (rate, p99, p50) = (
            r.details.probe().map_or(0.0, |p| p.rate),
            r.summary.latency.p99.min(clip),
            r.summary.latency.p50.min(clip),
        );
        match pts.iter_mut().find(|p| p.0 == rate) {
            Some(p) => (p.1, p.2) = (p.1.max(p99), p.2.max(p50)),
            None => pts.push((rate, p99, p50)),
        }
    }
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = vec![
        Series {
            name: format!("{name} p99"),
            color: color(i),
            dashed: false,
            points: pts.iter().map(|p| (p.0, p.1)).collect(),
        },
        Series {
            name: format!("{name} p50"),
            color: color(i),
            dashed: true,
            points: pts.iter().map(|p| (p.0, p.2)).collect(),
        },
    ];
    if let Some(cap) = results
        .capacity
        .iter()
        .find(|c| c.scenario == scenario && c.contender == name)
        .and_then(|c| c.capacity_rps)
    {
        let top = objective.unwrap_or_else(|| pts.iter().map(|p| p.1).fold(0.0, f64::max));
        out.push(Series {
            name: format!("{name} capacity"),
            color: color(i),
            dashed: true,
            points: vec![(cap, 0.0), (cap, top)],
        });
    }
    out
}

/// Every capacity chart (for the PNG files).
pub fn charts(results: &Results) -> Vec<Chart> {
    capacity_scenarios(results)
        .iter()
        .filter_map(|s| chart(results, s))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::details::{Detail, Probe};
    use crate::results::record::CapacityResult;
    use crate::results::test_support::{blank_results, blank_run};

    fn searched() -> Results {
        let mut r = blank_results(&["spring-mvc", "vertx"]);
        for (name, rates) in [
            (
                "spring-mvc",
                vec![(100.0, 110.0, true), (200.0, 900.0, false)],
            ),
            ("vertx", vec![(100.0, 105.0, true), (200.0, 120.0, true)]),
        ] {
            for (k, (rate, p99, passed)) in rates.into_iter().enumerate() {
                let mut run = blank_run(name, &format!("wait@{rate}"), k as u32 + 1);
                run.summary.latency.p99 = p99;
                run.summary.latency.p50 = 101.0;
                run.details.set(Detail::Probe(Probe {
                    of: "wait".into(),
                    rate,
                    passed,
                    broke: vec![],
                    driver_limited: false,
                    stopped_early: false,
                    counted: true,
                    search: 1,
                }));
                r.runs.push(run);
            }
        }
        let result = |contender: &str, cap: Option<f64>, failed: Option<f64>| CapacityResult {
            contender: contender.into(),
            scenario: "wait".into(),
            repeat: 1,
            slo: vec!["p99 <= 200 ms".into()],
            capacity_rps: cap,
            failed_rps: failed,
            verdict: "v".into(),
            broke_first: failed.map(|_| "latency".into()),
            per_cpu_second: Some(1234.0),
            per_gb_rss: None,
            probes: 2,
            driver_limited: false,
            warmup_unsettled: false,
            cut_short: false,
        };
        r.capacity = vec![
            result("spring-mvc", Some(100.0), Some(200.0)),
            result("vertx", Some(200.0), None),
        ];
        r
    }

    #[test]
    fn the_table_says_what_kind_of_number_each_capacity_is() {
        let md = markdown(&searched());
        assert!(
            md.contains("capacity of wait `/plaintext` within p99 <= 200 ms"),
            "{md}"
        );
        assert!(
            md.contains("| spring-mvc | 100 | 1,234 | - | latency | 2 | v |"),
            "{md}"
        );
        assert!(
            md.contains("| vertx | >= 200 |"),
            "a search that never failed gives a lower bound: {md}"
        );
        let mut none = searched();
        none.capacity[0].capacity_rps = None;
        assert!(
            markdown(&none).contains("| spring-mvc | < 100 |"),
            "never met: below the lowest rate tried"
        );
    }

    #[test]
    fn the_hockey_stick_has_both_percentiles_and_the_capacities_clipped_at_four_times_the_objective(
    ) {
        let c = chart(&searched(), "wait").unwrap();
        let names: Vec<&str> = c.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "spring-mvc p99",
                "spring-mvc p50",
                "spring-mvc capacity",
                "vertx p99",
                "vertx p50",
                "vertx capacity",
                "objective: p99 <= 200 ms"
            ]
        );
        assert_eq!(
            c.series[0].points,
            vec![(100.0, 110.0), (200.0, 800.0)],
            "900 ms clipped at 800"
        );
        assert_eq!(c.series[2].points, vec![(100.0, 0.0), (100.0, 200.0)]);
        assert!(c.title.contains("clipped at 800 ms"));
        assert!(
            crate::stats::scenarios(&searched()).is_empty(),
            "probes are not scenarios of the tables"
        );
    }
}
