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
use anyhow::{Context, Result};
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
    let results = root.join("docs/results");
    let mut rows = Vec::new();
    for path in results_files(&results)? {
        let r = Results::load(&path)?;
        if r.verdicts.is_empty() {
            continue;
        }
        let dir = path.parent().context("a results file has a folder")?;
        let name = dir.strip_prefix(&results).unwrap_or(dir);
        rows.push(rejudged(r, dir, &name.display().to_string()));
    }
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

/// Every results.json under `dir`, at any depth, sorted.
fn results_files(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let mut found = Vec::new();
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(results_files(&path)?);
        } else if path.file_name().is_some_and(|n| n == "results.json") {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}
