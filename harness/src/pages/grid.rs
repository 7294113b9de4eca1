//! A table in one marker, so that a page's source reads as prose:
//!
//! `<!-- iobound grid DIR SCENARIO METRIC,.. CONTENDER,.. [B/A,..] -->` ... `<!-- /iobound grid -->`
//!
//! writes a row per metric (its label) with a column per contender, the median of its runs as
//! the `cell` query writes it, and a column per pair B/A: the ratio and the outcome of the
//! comparison, the stored verdict's for a headline metric and otherwise the rank test over the
//! settled runs by the plan's design (the `verdict` and `tested` queries); a last row counts
//! each contender's runs not at steady state.

use super::quote::figure;
use crate::results::dir::ResultsDir;
use anyhow::{bail, Result};

pub(super) const GRID: &str = "<!-- iobound grid ";
pub(super) const GRID_END: &str = "<!-- /iobound grid -->";

/// The table the grid marker's arguments `args` ask of `set`, as Markdown rows.
pub(super) fn grid(set: ResultsDir, args: &str) -> Result<String> {
    let words: Vec<&str> = args.split_whitespace().collect();
    let (scenario, metrics, contenders, pairs) = match words[..] {
        [s, m, c] => (s, m, c, None),
        [s, m, c, p] => (s, m, c, Some(p)),
        _ => bail!(
            "a grid is `DIR SCENARIO METRIC,.. CONTENDER,.. [B/A,..]`, e.g. `docs/results/demo \
             delay-100ms throughput,p99_all spring-mvc,spring-webflux spring-webflux/spring-mvc`"
        ),
    };
    let contenders: Vec<&str> = contenders.split(',').collect();
    let pairs: Vec<&str> = pairs.map(|p| p.split(',').collect()).unwrap_or_default();
    let mut head = vec!["median of the runs".to_string()];
    head.extend(contenders.iter().map(|c| format!("`{c}`")));
    head.extend(pairs.iter().map(|p| p.replace('/', " vs ")));
    let mut rows = Vec::new();
    for key in metrics.split(',') {
        let m = super::verdict_query::metric_of(key)?;
        let mut cells = vec![m.label.to_string()];
        for c in &contenders {
            cells.push(figure(set, &["cell", scenario, c, key])?);
        }
        for pair in &pairs {
            cells.push(compared(set, scenario, key, pair)?);
        }
        rows.push(cells);
    }
    let mut cells = vec!["runs not at steady state".to_string()];
    for c in &contenders {
        cells.push(unsettled_of_runs(set, scenario, c)?);
    }
    cells.extend(pairs.iter().map(|_| String::new()));
    rows.push(cells);
    Ok(crate::report::md_table::table(&head, 1, &rows))
}

/// "1 of 5": the runs of `contender` on `scenario` not at steady state, of those that ended;
/// the last row or column of every table marker.
pub(super) fn unsettled_of_runs(
    set: ResultsDir,
    scenario: &str,
    contender: &str,
) -> Result<String> {
    figure(set, &["unsettled-of", scenario, contender])
}

/// The median of the runs as the `cell` query writes it, or a dash where there is none: a
/// figure the runs did not measure (throttling without a quota), or no run of `contender`.
pub(super) fn cell_or_dash(set: ResultsDir, scenario: &str, contender: &str, key: &str) -> String {
    figure(set, &["cell", scenario, contender, key]).unwrap_or_else(|_| "-".to_string())
}

/// "4.99x, different": B over A on `metric`, from the stored verdict when it holds that
/// finding (a headline metric), else tested now as the plan's design tests it; where either
/// side has no run at steady state, there is nothing to test, and the cell says so.
fn compared(set: ResultsDir, scenario: &str, metric: &str, pair: &str) -> Result<String> {
    let stored = set.results.verdicts.iter().any(|v| {
        v.scenario == scenario
            && v.findings
                .iter()
                .any(|f| f.metric == metric && format!("{}/{}", f.b, f.a) == pair)
    });
    let settled = |c: &str| -> Result<bool> {
        Ok(figure(set, &["unsettled", scenario, c])? != figure(set, &["runs", scenario, c])?)
    };
    let (b, a) = pair
        .split_once('/')
        .ok_or_else(|| anyhow::anyhow!("`{pair}`: name a pair as B/A, e.g. node/jetty"))?;
    let comparable = stored || (settled(a)? && settled(b)?);
    if !comparable {
        return Ok("no runs at steady state to compare".to_string());
    }
    let field = |field: &str| {
        if stored {
            figure(set, &["verdict", scenario, metric, field, pair])
        } else {
            figure(set, &["tested", scenario, metric, pair, field])
        }
    };
    let outcome = field("outcome")?;
    // A finding not tested (too few runs a side) has an outcome and no ratio.
    Ok(match field("ratio") {
        Ok(ratio) => format!("{ratio}x, {outcome}"),
        Err(_) => outcome,
    })
}
