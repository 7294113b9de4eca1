//! The queries of a page that quote a verdict: a stored finding and
//! its fields (`verdict`), and the comparisons judged at render time from the settled runs by
//! the test the plan's verdicts use (`tested`, `across` two scenarios, `versus` a results
//! directory beside this one). pages/quote.rs reads the queries and calls these.

use crate::report::fmt_num;
use crate::results::dir::ResultsDir;
use crate::results::record::{Finding, Results, VerdictRecord};
use crate::stats::metrics::METRICS;
use anyhow::{anyhow, bail, Context, Result};

/// One contender here against itself in `other` (a results directory beside this one, e.g.
/// `../pinned`), on any metric, judged now from the settled runs of both: "B/A" is this
/// directory over `other`.
pub(super) fn versus(
    set: ResultsDir,
    other: &str,
    scenario: &str,
    contender: &str,
    metric: &str,
) -> Result<Finding> {
    let m = metric_of(metric)?;
    let other_dir = set.dir.join(other);
    let base = Results::load(&other_dir.join("results.json")).with_context(|| {
        format!(
            "`versus {other}`: no results there (relative to {})",
            set.dir.display()
        )
    })?;
    let mut f = crate::stats::verdict::finding_between(
        (ResultsDir::new(&base, &other_dir), scenario),
        (set, scenario),
        contender,
        m,
    )
    .ok_or_else(|| anyhow!("no settled runs of {contender} on {scenario} on both sides"))?;
    // Two results directories are two sittings: whatever the machine did between them falls
    // on one side only, so a decided outcome is one between blocks, said so wherever it is
    // quoted, never a tested verdict.
    if f.decided() {
        f.outcome = format!("{} {AS_BLOCKS}", f.outcome);
    }
    Ok(f)
}

/// What the outcome of a `versus` query adds: it compares two sittings.
const AS_BLOCKS: &str = "as blocks";

/// The contender in scenario B against itself in scenario A (`pair` = "B/A") of this plan.
pub(super) fn across(
    set: ResultsDir,
    pair: &str,
    contender: &str,
    metric: &str,
) -> Result<Finding> {
    let m = metric_of(metric)?;
    let (b, a) = b_over_a(pair, "the scenarios", "recovered/baseline")?;
    crate::stats::verdict::finding_between((set, a), (set, b), contender, m)
        .ok_or_else(|| anyhow!("no settled runs of {contender} on both {a} and {b}"))
}

/// B against A (`pair` = "B/A") on any metric, judged now from their settled runs.
pub(super) fn tested(set: ResultsDir, scenario: &str, metric: &str, pair: &str) -> Result<Finding> {
    let m = metric_of(metric)?;
    let (b, a) = b_over_a(pair, "the pair", "node/jetty")?;
    crate::stats::verdict::finding_on(set, scenario, m, (b, a))
        .ok_or_else(|| anyhow!("no settled runs of {a} and {b} on {scenario}"))
}

/// "B/A" -> (B, A); otherwise an error that says how to name `what`, e.g. `example`.
fn b_over_a<'p>(pair: &'p str, what: &str, example: &str) -> Result<(&'p str, &'p str)> {
    pair.split_once('/')
        .ok_or_else(|| anyhow!("`{pair}`: name {what} as B/A, e.g. {example}"))
}

/// The stored verdict on `scenario`.
pub(super) fn verdict_of<'r>(results: &'r Results, scenario: &str) -> Result<&'r VerdictRecord> {
    results
        .verdicts
        .iter()
        .find(|v| v.scenario == scenario)
        .ok_or_else(|| anyhow!("no verdict on scenario `{scenario}`"))
}

pub(super) fn finding(
    results: &Results,
    scenario: &str,
    metric: &str,
    pair: Option<&str>,
) -> Result<Finding> {
    let v = verdict_of(results, scenario)?;
    let wanted = |f: &&Finding| match pair.and_then(|p| p.split_once('/')) {
        Some((b, a)) => f.a == a && f.b == b,
        None => true,
    };
    v.findings
        .iter()
        .filter(|f| f.metric == metric)
        .find(wanted)
        .cloned()
        .ok_or_else(|| anyhow!("no finding on {metric} in the verdict on `{scenario}`"))
}

pub(super) fn verdict_field(f: &Finding, field: &str, decimals: Option<usize>) -> Result<String> {
    let need =
        |v: Option<f64>| v.ok_or_else(|| anyhow!("the finding on {} has no {field}", f.metric));
    let two = |v: f64| fmt_num(v, decimals.unwrap_or(2));
    Ok(match field {
        "ratio" => two(need(f.ratio)?),
        "lo" => two(need(f.ratio_lo)?),
        "hi" => two(need(f.ratio_hi)?),
        "change" => {
            let pct = (need(f.ratio)? - 1.0) * 100.0;
            let s = fmt_num(pct, decimals.unwrap_or(0));
            if s.starts_with('-') {
                format!("{s}%")
            } else {
                format!("+{s}%")
            }
        }
        "p" => match need(f.p)? {
            p if p < 0.001 => "p < 0.001".to_string(),
            p => format!("p = {}", fmt_num(p, decimals.unwrap_or(3))),
        },
        "runs" => f.runs.to_string(),
        "outcome" => f.outcome.clone(),
        other => {
            bail!("a verdict's field is ratio, change, lo, hi, p, runs or outcome, not `{other}`")
        }
    })
}

/// The metric a query names by its registry key.
pub(super) fn metric_of(key: &str) -> Result<&'static crate::stats::Metric> {
    crate::stats::Metric::by_key(key).ok_or_else(|| {
        let keys: Vec<_> = METRICS.iter().map(|m| m.key).collect();
        anyhow!("unknown metric `{key}`: one of {}", keys.join(", "))
    })
}
