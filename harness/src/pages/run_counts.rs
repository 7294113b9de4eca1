//! What the figure queries count over a scenario's runs (pages/quote.rs): the runs that
//! ended, failed, did not settle or had the driver saturated, and the writes their checks
//! acknowledged or found lost.

use crate::results::record::{Results, Run, RunStatus};
use crate::results::steady::unsettled;
use anyhow::{bail, Result};

/// Runs of `scenario` (`*`: every scenario) and of `contender` where given, whatever their
/// status.
fn of_pair<'a>(
    results: &'a Results,
    scenario: &'a str,
    contender: Option<&'a &str>,
) -> impl Iterator<Item = &'a Run> {
    results.runs.iter().filter(move |r| {
        (scenario == "*" || r.scenario == scenario) && contender.is_none_or(|c| r.contender == *c)
    })
}

/// The runs of `of_pair` that ended (ok or incomplete).
pub(super) fn runs_of<'a>(
    results: &'a Results,
    scenario: &'a str,
    contender: Option<&'a &str>,
) -> impl Iterator<Item = &'a Run> {
    of_pair(results, scenario, contender).filter(|r| r.status != RunStatus::Failed)
}

/// How many runs of `scenario` (of `contender`, where given) are `kind`: `runs` that ended,
/// `failed` (the contender crashed or ran out of memory), `unsettled` (ended, not at steady
/// state) or `saturated` (ended with the driver's CPUs saturated: their throughput and latency
/// are a bound set by the load, not the server's).
pub(super) fn run_count(
    results: &Results,
    kind: &str,
    scenario: &str,
    contender: Option<&&str>,
) -> Result<usize> {
    let ended = || runs_of(results, scenario, contender);
    Ok(match kind {
        "runs" => ended().count(),
        "failed" => of_pair(results, scenario, contender)
            .filter(|r| r.status == RunStatus::Failed)
            .count(),
        "unsettled" => ended().filter(|r| unsettled(results, r)).count(),
        "saturated" => ended().filter(|r| r.driver.saturated).count(),
        _ => bail!("runs are counted as runs, failed, unsettled or saturated, not `{kind}`"),
    })
}

/// The writes of the runs that ended, from each run's write check: `acknowledged` (creates,
/// updates and deletes a response acknowledged) or `lost` (acknowledged, and not in the
/// database afterwards).
pub(super) fn writes(
    results: &Results,
    scenario: &str,
    contender: Option<&&str>,
    which: &str,
) -> Result<u64> {
    let checks: Vec<_> = runs_of(results, scenario, contender)
        .filter_map(|r| r.details.writes())
        .collect();
    if checks.is_empty() {
        bail!("no run of `{scenario}` has a write check (a scenario that writes to /messages)");
    }
    Ok(match which {
        "acknowledged" => checks
            .iter()
            .map(|w| w.creates_acknowledged + w.updates_acknowledged + w.deletes_acknowledged)
            .sum(),
        "lost" => checks.iter().map(|w| w.lost).sum(),
        _ => bail!("`writes` counts `acknowledged` or `lost`, not `{which}`"),
    })
}

/// "1 of 5": the runs of `contender` on `scenario` not at steady state, of those that ended.
pub(super) fn unsettled_of(results: &Results, scenario: &str, contender: &str) -> Result<String> {
    let c = Some(&contender);
    Ok(format!(
        "{} of {}",
        run_count(results, "unsettled", scenario, c)?,
        run_count(results, "runs", scenario, c)?
    ))
}
