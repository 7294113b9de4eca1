//! Where a results set's noise is (stats/windows.rs): per contender and scenario, how much the
//! windows of one start vary and how much the starts vary beyond that, and the windows per
//! start that spend machine time best, in every format.

use super::chart::esc;
use crate::results::record::Results;
use crate::stats::windows::Components;
use std::fmt::Write;

const HEADER: [&str; 8] = [
    "contender",
    "scenario",
    "starts x windows",
    "window (s)",
    "between windows of a start",
    "between starts, beyond",
    "a start costs (s)",
    "best windows per start",
];

fn rows(results: &Results) -> Vec<Vec<String>> {
    results
        .windows
        .iter()
        .map(|c: &Components| {
            vec![
                c.contender.clone(),
                c.scenario.clone(),
                format!("{} x {}", c.starts, c.windows),
                c.window_s.to_string(),
                format!("{:.1}%", c.within_cv_pct),
                format!("{:.1}%", c.between_cv_pct),
                format!("{:.0}", c.start_cost_s),
                c.best_windows.to_string(),
            ]
        })
        .collect()
}

/// What the sentence under each table says: what the columns are and what follows from them.
const EXPLAINED: &str = "Each start's measured window cut into windows of the scenario's duration (throughput); the spread of those windows within a start, and of the starts beyond what their windows explain, as coefficients of variation. Where starts vary more, more starts buy precision; where windows do and a start is dear, more windows per start (`windows = \"auto\"` measures the best number). Verdicts test one value per start.";

/// The variance components of every contender and scenario with two starts or more.
pub struct Noise;

impl super::section::Section for Noise {
    fn place(&self) -> super::section::Place {
        super::section::Place::Tail
    }

    fn terminal(&self, results: &Results) -> String {
        if results.windows.is_empty() {
            return String::new();
        }
        format!(
            "\nwhere the noise is:\n{}",
            crate::stats::windows::describe(&results.windows)
                .lines()
                .map(|l| format!("  {l}\n"))
                .collect::<String>()
        )
    }

    fn title(&self) -> Option<&'static str> {
        Some("Where the noise is")
    }

    fn markdown(&self, results: &Results) -> String {
        if results.windows.is_empty() {
            return String::new();
        }
        let header: Vec<String> = HEADER.iter().map(|h| h.to_string()).collect();
        format!(
            "{EXPLAINED}\n\n{}\n",
            super::md_table::table(&header, 2, &rows(results))
        )
    }

    fn html(&self, results: &Results) -> String {
        if results.windows.is_empty() {
            return String::new();
        }
        let mut h = format!(
            "<h2 id=\"noise\">Where the noise is</h2><p>{}</p><table><tr>",
            esc(EXPLAINED)
        );
        for c in HEADER {
            let _ = write!(h, "<th>{c}</th>");
        }
        h.push_str("</tr>");
        for r in rows(results) {
            h.push_str("<tr>");
            for (i, cell) in r.iter().enumerate() {
                let class = if i >= 2 { " class=\"n\"" } else { "" };
                let _ = write!(h, "<td{class}>{}</td>", esc(cell));
            }
            h.push_str("</tr>");
        }
        h.push_str("</table>");
        h
    }
}
