//! What today's steady-state rule would make of every committed sitting, in one marker:
//!
//! `<!-- iobound rejudged -->` ... `<!-- /iobound rejudged -->`
//!
//! writes a row per results directory under docs/results that stores verdicts: its runs that
//! ended, how many were left out of the verdicts when it was measured and how many today's rule
//! leaves out (`iobound report DIR --rejudge` judges their measured windows again), its stored
//! findings (one per scenario, metric and pair) and how many of those today's rule would decide
//! otherwise, or leave without runs to compare. A page quoting a sitting measured under an
//! older rule points here, so that a reader sees what its verdicts rest on.

use crate::results::record::{Finding, Results, RunStatus};
use crate::results::steady::unsettled;
use anyhow::Result;
use std::path::Path;

pub(super) const REJUDGED: &str = "<!-- iobound rejudged -->";
pub(super) const REJUDGED_END: &str = "<!-- /iobound rejudged -->";

/// One sitting as measured and as today's rule judges it.
struct Rejudged {
    dir: String,
    runs: usize,
    left_out_then: usize,
    left_out_now: usize,
    findings: usize,
    changed: usize,
}

/// The rows of every results directory under `root`/docs/results that stores verdicts, at any
/// depth, in path order.
pub(super) fn table(root: &Path) -> Result<String> {
    let base = root.join("docs/results");
    let rows: Vec<Rejudged> = super::committed::committed_results(root)?
        .into_iter()
        .filter(|(_, r)| !r.verdicts.is_empty())
        .map(|(name, r)| rejudged(r, &base.join(&name), &name))
        .collect();
    let head: Vec<String> = [
        "results directory",
        "runs",
        "left out when measured",
        "left out by today's rule",
        "findings",
        "decided otherwise today",
    ]
    .map(String::from)
    .to_vec();
    let cells: Vec<Vec<String>> = (rows.iter())
        .map(|r| {
            vec![
                format!("`{}`", r.dir),
                r.runs.to_string(),
                r.left_out_then.to_string(),
                r.left_out_now.to_string(),
                r.findings.to_string(),
                r.changed.to_string(),
            ]
        })
        .collect();
    Ok(crate::report::md_table::table(&head, 1, &cells))
}

/// `then` counted as stored and again after today's rules judged it.
fn rejudged(then: Results, dir: &Path, name: &str) -> Rejudged {
    let ended = |r: &Results| {
        (r.runs.iter())
            .filter(|x| x.status == RunStatus::Ok)
            .count()
    };
    let left_out = |r: &Results| {
        (r.runs.iter())
            .filter(|x| x.status == RunStatus::Ok && unsettled(r, x))
            .count()
    };
    let mut now = then.clone();
    crate::stats::verdict::rejudge(&mut now, dir);
    let stored = findings(&then);
    let today = findings(&now);
    let changed = (stored.iter())
        .filter(|f| {
            let same = |g: &&Finding| (&g.metric, &g.a, &g.b) == (&f.metric, &f.a, &f.b);
            today
                .iter()
                .find(same)
                .is_none_or(|g| g.outcome != f.outcome)
        })
        .count();
    Rejudged {
        dir: name.to_string(),
        runs: ended(&then),
        left_out_then: left_out(&then),
        left_out_now: left_out(&now),
        findings: stored.len(),
        changed,
    }
}

/// Every finding of `r`, each with its scenario folded into its metric so that findings of
/// two scenarios are told apart.
fn findings(r: &Results) -> Vec<Finding> {
    (r.verdicts.iter())
        .flat_map(|v| {
            v.findings.iter().map(|f| Finding {
                metric: format!("{}/{}", v.scenario, f.metric),
                ..f.clone()
            })
        })
        .collect()
}
