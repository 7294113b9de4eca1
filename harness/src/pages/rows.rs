//! A table of contenders in one marker, a row each, for the pages that set many models side by
//! side on a few figures:
//!
//! `<!-- iobound rows DIR SCENARIO METRIC,.. CONTENDER,.. -->` ... `<!-- /iobound rows -->`
//!
//! writes a row per contender: its name, its model (as its manifest names it, from the results'
//! contenders), the median of its runs for each metric as the `cell` query writes it (a dash
//! where it has none, as a pipeline has no thread count), and how many of its runs were not at
//! steady state. pages/grid.rs is the same figures turned, a column per contender, with the
//! pairs' verdicts beside them.

use super::grid::{cell_or_dash, unsettled_of_runs};
use super::quote::figure;
use crate::results::dir::ResultsDir;
use anyhow::{anyhow, bail, Result};

pub(super) const ROWS: &str = "<!-- iobound rows ";
pub(super) const ROWS_END: &str = "<!-- /iobound rows -->";

/// The table the rows marker's arguments `args` ask of `set`, as Markdown rows.
pub(super) fn rows(set: ResultsDir, args: &str) -> Result<String> {
    let words: Vec<&str> = args.split_whitespace().collect();
    let [scenario, metrics, contenders] = words[..] else {
        bail!(
            "a rows table is `DIR SCENARIO METRIC,.. CONTENDER,..`, e.g. `docs/results/demo \
             delay-100ms throughput,p99_all spring-mvc,spring-webflux`"
        );
    };
    let metrics = (metrics.split(','))
        .map(super::verdict_query::metric_of)
        .collect::<Result<Vec<_>>>()?;
    let mut head = vec![format!("`{scenario}`, median of the runs"), "model".into()];
    head.extend(metrics.iter().map(|m| m.label.to_string()));
    head.push("runs not at steady state".into());
    let mut out = Vec::new();
    for c in contenders.split(',') {
        let info = (set.results.contenders.iter())
            .find(|i| i.name == c)
            .ok_or_else(|| anyhow!("`{c}` is not a contender of {}", set.dir.display()))?;
        let runs = figure(set, &["runs", scenario, c])?;
        if runs == "0" {
            bail!("`{c}` has no run of `{scenario}` in {}", set.dir.display());
        }
        let mut cells = vec![format!("`{c}`"), info.model.clone()];
        for m in &metrics {
            cells.push(cell_or_dash(set, scenario, c, m.key));
        }
        cells.push(unsettled_of_runs(set, scenario, c)?);
        out.push(cells);
    }
    Ok(crate::report::md_table::table(&head, 2, &out))
}
