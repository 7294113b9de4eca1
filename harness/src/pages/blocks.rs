//! A table of blocks in one marker: the same contenders measured in two or more sittings, one
//! after the other, set side by side:
//!
//! `<!-- iobound blocks SCENARIO METRIC,.. CONTENDER,.. LABEL=DIR LABEL=DIR.. -->` ...
//! `<!-- /iobound blocks -->`
//!
//! writes a row per contender and metric (`spring-mvc`: throughput (req/s)), then a row per
//! contender counting its runs not at steady state, with a column per sitting (its label), each
//! cell the median of the runs as the `cell` query writes it, or a dash where a sitting has no
//! such figure (throttling where no quota was set) or no run of that contender. The head says what such a table
//! is: blocks, whose differences no test has judged (what the machine did over one sitting
//! falls on one column only); a tested comparison of settings is a plan's arms (pages/grid.rs).

use super::grid::{cell_or_dash, unsettled_of_runs};
use super::quote::figure;
use crate::results::dir::ResultsDir;
use anyhow::{bail, Result};

pub(super) const BLOCKS: &str = "<!-- iobound blocks ";
pub(super) const BLOCKS_END: &str = "<!-- /iobound blocks -->";

/// The head's first cell: what the cells are and why no column is a verdict on another.
const HEAD: &str = "median of the runs (sittings one after the other: blocks, not tested)";

/// What a blocks marker's arguments name: the scenario, metrics and contenders, then each
/// sitting's label and results directory (relative to the repository), in column order.
pub(super) struct BlocksArgs<'a> {
    pub scenario: &'a str,
    pub metrics: Vec<&'a str>,
    pub contenders: Vec<&'a str>,
    pub sittings: Vec<(&'a str, &'a str)>,
}

/// `args` read, or an error that shows how a blocks marker is written.
pub(super) fn parse(args: &str) -> Result<BlocksArgs<'_>> {
    let words: Vec<&str> = args.split_whitespace().collect();
    let usage = "a blocks table is `SCENARIO METRIC,.. CONTENDER,.. LABEL=DIR LABEL=DIR..`, e.g. \
                 `delay-100ms throughput,p99_all spring-mvc,go pinned=docs/results/x/pinned \
                 quota=docs/results/x/quota`";
    let [scenario, metrics, contenders, sittings @ ..] = &words[..] else {
        bail!("{usage}");
    };
    let (scenario, metrics, contenders) = (*scenario, *metrics, *contenders);
    let sittings: Vec<(&str, &str)> = sittings
        .iter()
        .map(|s| s.split_once('='))
        .collect::<Option<_>>()
        .filter(|s: &Vec<_>| s.len() >= 2)
        .ok_or_else(|| anyhow::anyhow!("{usage}: name two sittings or more, each LABEL=DIR"))?;
    Ok(BlocksArgs {
        scenario,
        metrics: metrics.split(',').collect(),
        contenders: contenders.split(',').collect(),
        sittings,
    })
}

/// The table `args` ask of `sets` (one per sitting, in the order `args` names them), as
/// Markdown rows.
pub(super) fn blocks(args: &BlocksArgs, sets: &[ResultsDir]) -> Result<String> {
    let mut head = vec![HEAD.to_string()];
    head.extend(
        args.sittings
            .iter()
            .map(|(label, _)| label.replace('_', " ")),
    );
    for c in &args.contenders {
        let mut runs = 0;
        for set in sets {
            runs += figure(*set, &["runs", args.scenario, c])?.parse::<usize>()?;
        }
        if runs == 0 {
            bail!(
                "`{c}` has no run of `{}` in any of the sittings",
                args.scenario
            );
        }
    }
    let mut rows = Vec::new();
    for c in &args.contenders {
        for key in &args.metrics {
            let m = super::verdict_query::metric_of(key)?;
            let mut cells = vec![format!("`{c}`: {}", m.label)];
            for set in sets {
                cells.push(cell_or_dash(*set, args.scenario, c, key));
            }
            rows.push(cells);
        }
    }
    for c in &args.contenders {
        let mut cells = vec![format!("`{c}`: runs not at steady state")];
        for set in sets {
            cells.push(unsettled_of_runs(*set, args.scenario, c)?);
        }
        rows.push(cells);
    }
    Ok(crate::report::md_table::table(&head, 1, &rows))
}
