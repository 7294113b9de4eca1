//! The `stacks` figure query: how much of a contender's CPU profile ran under a frame, read
//! from the folded stacks of its runs that ended (as a `cell` reads every run, the tables'
//! flags saying which did not settle), one share per run, so that prose naming where a
//! model's CPU goes quotes the profiles it read.

use crate::results::dir::ResultsDir;
use crate::results::profile::share_under;
use anyhow::{ensure, Context, Result};

/// The share, in % of its samples, of each profiled run of `contender` on `scenario` that
/// ended whose stacks hold a frame containing `frame`.
pub(super) fn shares(
    set: ResultsDir,
    scenario: &str,
    contender: &str,
    frame: &str,
) -> Result<Vec<f64>> {
    let mut out = Vec::new();
    for r in super::run_counts::runs_of(set.results, scenario, Some(&contender)) {
        let Some(profile) = &r.profile else { continue };
        let lines = set
            .folded(&profile.folded)
            .with_context(|| format!("the profile of {contender} on {scenario}, run {}", r.run))?;
        out.push(share_under(&lines, frame));
    }
    ensure!(
        !out.is_empty(),
        "no profiled run of {contender} on {scenario} that ended: `stacks` reads the profiles \
         --profile (or `profile = true` in a plan) takes"
    );
    Ok(out)
}
