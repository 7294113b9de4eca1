//! Which runs stand for what: the scenarios of a result set, a cell's runs merged into one
//! histogram, the run charts over time show, and the figures a cell reads from each run.

use crate::driver::record::new_histogram;
use crate::driver::summary::decode_histogram;
use crate::results::record::{Results, Run, RunStatus};
use hdrhistogram::Histogram;

/// Scenario names in the order they were first run (capacity probes left out).
pub fn scenarios(results: &Results) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // A capacity search's probes each hold a rate of their own: they are shown by the
    // capacity table and chart, not as scenarios.
    for r in results.runs.iter().filter(|r| r.details.probe().is_none()) {
        if !out.contains(&r.scenario) {
            out.push(r.scenario.clone());
        }
    }
    out
}

/// Capacity scenarios in the order they were first searched.
pub fn capacity_scenarios(results: &Results) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in &results.capacity {
        if !out.contains(&c.scenario) {
            out.push(c.scenario.clone());
        }
    }
    out
}

/// The latency histogram of every measured run of a cell, merged.
pub fn merged_histogram(
    results: &Results,
    scenario: &str,
    contender: &str,
) -> Option<Histogram<u64>> {
    let mut acc = new_histogram();
    for r in results.runs.iter().filter(|r| {
        r.scenario == scenario && r.contender == contender && r.status != RunStatus::Failed
    }) {
        if let Some(h) = r
            .histogram
            .as_deref()
            .and_then(|s| decode_histogram(s).ok())
        {
            acc.add(&h).ok()?;
        }
    }
    (!acc.is_empty()).then_some(acc)
}

/// The run whose figures stand for a contender in charts over time: of its measured runs, the
/// one with the median throughput.
pub fn representative<'a>(
    results: &'a Results,
    scenario: &str,
    contender: &str,
) -> Option<&'a Run> {
    let all: Vec<&Run> = results
        .runs
        .iter()
        .filter(|r| r.scenario == scenario && r.contender == contender)
        .collect();
    let mut ok: Vec<&Run> = all
        .iter()
        .copied()
        .filter(|r| r.status != RunStatus::Failed)
        .collect();
    ok.sort_by(|a, b| a.summary.rps.total_cmp(&b.summary.rps));
    ok.get(ok.len() / 2)
        .copied()
        .or_else(|| all.first().copied())
}

/// How many runs a cell of `contender` in `scenario` is made of (`Cell::runs`), without
/// computing the cell: a table decides from it whether it prints runs or medians over runs.
pub fn cell_runs(results: &Results, scenario: &str, contender: &str) -> usize {
    runs_of(results, scenario, contender, |_| true).map_or(0, |(runs, ..)| runs.len())
}

/// The runs a cell is made of: its finished runs, or, when none finished, its incomplete
/// ones (the cell is then partial); with the number that failed. None when there is no run.
pub(super) fn runs_of<'a>(
    results: &'a Results,
    scenario: &str,
    contender: &str,
    keep: impl Fn(&Run) -> bool,
) -> Option<(Vec<&'a Run>, usize, bool)> {
    let of_pair: Vec<&Run> = results
        .runs
        .iter()
        .filter(|r| r.scenario == scenario && r.contender == contender && keep(r))
        .collect();
    let failed = of_pair
        .iter()
        .filter(|r| r.status == RunStatus::Failed)
        .count();
    let with = |status: RunStatus| -> Vec<&Run> {
        of_pair
            .iter()
            .copied()
            .filter(|r| r.status == status)
            .collect()
    };
    let finished = with(RunStatus::Ok);
    let partial = finished.is_empty();
    let runs = if partial {
        with(RunStatus::Incomplete)
    } else {
        finished
    };
    (!runs.is_empty()).then_some((runs, failed, partial))
}
