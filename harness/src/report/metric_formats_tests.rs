//! Every metric of the registry reaches every output: a metric added to plan/metric_list.rs shows
//! in the terminal table (where it says so), report.md, report.html and metrics.csv with no
//! other change, and a limit may name it where the registry allows one.

use super::{csv, html, markdown, table, ScenarioView};
use crate::plan::metric_list::METRICS;
use crate::plan::thresholds::Threshold;
use crate::stats::{Cell, Estimate};

/// A cell of two runs with a distinct value for every metric of the registry.
fn cell_with_every_metric() -> Cell {
    let mut c = Cell {
        contender: "a".into(),
        scenario: "s".into(),
        runs: 2,
        ok: 1000,
        settled: vec![true, true],
        ..Cell::default()
    };
    for (i, m) in METRICS.iter().enumerate() {
        let v = 1000.0 + 7.0 * i as f64;
        c.set(
            m.key,
            Estimate {
                value: v,
                lo: Some(v - 1.0),
                hi: Some(v + 1.0),
                per_run: vec![v - 1.0, v + 1.0],
            },
        );
    }
    c
}

fn views() -> Vec<ScenarioView> {
    vec![ScenarioView {
        name: "s".into(),
        path: "/delay?ms=1".into(),
        load: "closed, 10 users for 10s".into(),
        cells: vec![("a".into(), Some(cell_with_every_metric()))],
        charts: Vec::new(),
    }]
}

#[test]
fn every_metric_of_the_registry_is_in_every_format() {
    let results = crate::results::test_support::blank_results(&["a"]);
    let views = views();
    let page = html::page(&results, &views);
    let md = markdown::report(&results, &views, &[]);
    let metrics_csv = csv::metrics_csv(&views);
    let (header, row) = metrics_csv.split_once('\n').unwrap();
    let header: Vec<&str> = header.split(',').collect();
    let row: Vec<&str> = row.trim_end().split(',').collect();
    let terminal = table::metric_rows_of(&[views[0].cells[0].1.clone()]);
    for (i, m) in METRICS.iter().enumerate() {
        let label = super::chart::esc(m.label);
        assert!(
            page.contains(&format!("<th>{label}</th>")),
            "HTML lacks {}",
            m.key
        );
        assert!(
            md.contains(&format!("| {} |", m.label)),
            "report.md lacks {}",
            m.key
        );
        let at = header.iter().position(|h| *h == m.key);
        let at = at.unwrap_or_else(|| panic!("metrics.csv has no column {}", m.key));
        let v = 1000.0 + 7.0 * i as f64;
        assert_eq!(row[at], v.to_string(), "metrics.csv's {}", m.key);
        assert_eq!(header[at + 1], format!("{}_lo", m.key));
        assert_eq!(row[at + 2], (v + 1.0).to_string(), "{}_hi", m.key);
        let in_terminal = terminal.lines().any(|l| l.starts_with(m.label));
        assert_eq!(in_terminal, m.in_terminal, "terminal row of {}", m.key);
        if m.limit.is_some() {
            let t = Threshold::parse("thresholds", m.key, "1").unwrap();
            assert_eq!(t.metric, m.key);
        } else {
            assert!(
                Threshold::parse("thresholds", m.key, "1").is_err(),
                "{}",
                m.key
            );
        }
    }
}
