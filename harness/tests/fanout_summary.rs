//! The summary table of docs/findings/fanout.md, one row per HTTP contender, recomputed here
//! from the committed results of plans/fanout.toml (measured in two batches of the same plan),
//! so that the page cannot drift from them. On a mismatch the test prints the table the
//! results give.

mod common;

use iobound::run::results::{Results, Run};
use iobound::services::manifest;
use iobound::util::numbers::median;
use iobound::util::units::thousands;
use std::path::Path;

/// The two batches, in the order they were measured.
const BATCHES: [&str; 2] = ["fanout-2026-11-24", "fanout-2026-11-24-batch2"];
const BEGIN: &str = "<!-- fan-out summary: checked by harness/tests/fanout_summary.rs -->";
const END: &str = "<!-- /fan-out summary -->";

/// A figure with one decimal and grouped thousands: 2,492.4.
fn one_decimal(v: f64) -> String {
    let s = format!("{v:.1}");
    let (whole, tenth) = s.split_once('.').unwrap();
    format!("{}.{tenth}", thousands(whole.parse().unwrap()))
}

fn whole(v: f64) -> String {
    thousands(v.round() as u64)
}

/// One contender's row from the batch that measured it.
fn row(r: &Results, dir: &Path, m: &manifest::Manifest, batch: usize) -> String {
    let (shape, failing) = ("fanout-4x50ms", "one-of-4-fails");
    let runs = |scenario: &str| -> Vec<&Run> {
        let v: Vec<&Run> = r
            .runs
            .iter()
            .filter(|x| x.scenario == scenario && x.contender == m.name)
            .collect();
        assert_eq!(v.len(), 4, "{scenario} {}: runs", m.name);
        v
    };
    // The median over the runs of a figure of each run.
    let over = |scenario: &str, f: &dyn Fn(&Run) -> f64| {
        median(runs(scenario).into_iter().map(f).collect())
    };
    let cell = |scenario: &str| iobound::stats::cell(r, dir, scenario, &m.name).unwrap();
    let answered = |x: &Run| (x.summary.ok + x.summary.drained + x.summary.errors.total()) as f64;
    let (a, b) = (cell(shape), cell(failing));
    let cells = [
        format!("`{}`", m.name),
        m.model.clone(),
        if m.fanout_cancels.unwrap_or(true) {
            "yes"
        } else {
            "no"
        }
        .to_string(),
        one_decimal(over(shape, &|x| x.summary.levels[0].latency.p50)),
        whole(over(shape, &|x| x.summary.levels[1].rps)),
        format!("{:.2}", a.error_pct.value),
        whole(over(failing, &|x| answered(x) / x.summary.duration_s)),
        one_decimal(b.p99_all.value),
        format!("{:.2}", b.downstream_cancelled_per_req.value),
        format!("{:.2}", b.downstream_served_per_req.value),
        (batch + 1).to_string(),
    ];
    format!("| {} |", cells.join(" | "))
}

/// The table the committed results give, in the plan's order of contenders.
fn summary(root: &Path) -> String {
    let plan = iobound::plan::PlanFile::load(&root.join("plans/fanout.toml")).unwrap();
    let all = manifest::discover(root).unwrap();
    let batches: Vec<(Results, std::path::PathBuf)> = BATCHES
        .iter()
        .map(|name| {
            let dir = root.join("docs/results").join(name);
            (Results::load(&dir.join("results.json")).unwrap(), dir)
        })
        .collect();
    let mut lines = vec![
        "| contender | model | cancels the rest | p50 ms, 50 users | req/s, 500 users | errors % | 502s a second | p99 all ms | cancelled / req | served / req | batch |".to_string(),
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|".to_string(),
    ];
    for name in &plan.contenders {
        let m = manifest::find(&all, name).unwrap();
        let measured: Vec<usize> = (0..batches.len())
            .filter(|&i| batches[i].0.contenders.iter().any(|c| &c.name == name))
            .collect();
        assert_eq!(measured.len(), 1, "{name} is in exactly one batch");
        let (r, dir) = &batches[measured[0]];
        lines.push(row(r, dir, &m, measured[0]));
    }
    lines.join("\n")
}

#[test]
fn the_fanout_summary_table_is_what_the_results_give() {
    let root = common::repo_root();
    let page = std::fs::read_to_string(root.join("docs/findings/fanout.md")).unwrap();
    let shown = page
        .split_once(BEGIN)
        .and_then(|(_, rest)| rest.split_once(END))
        .map(|(table, _)| table.trim())
        .expect("the page marks its summary table");
    let want = summary(&root);
    assert!(
        shown == want,
        "docs/findings/fanout.md's summary differs from the results; they give:\n{want}"
    );
}

#[test]
fn every_http_contender_of_the_plan_was_measured_in_one_batch() {
    let root = common::repo_root();
    let plan = iobound::plan::PlanFile::load(&root.join("plans/fanout.toml")).unwrap();
    let http: Vec<String> = manifest::discover(&root)
        .unwrap()
        .into_iter()
        .filter(|m| !m.is_pipeline())
        .map(|m| m.name)
        .collect();
    let mut planned = plan.contenders.clone();
    planned.sort();
    assert_eq!(planned, http, "plans/fanout.toml lists every HTTP contender");
    let mut measured = Vec::new();
    for name in BATCHES {
        let r = Results::load(&root.join("docs/results").join(name).join("results.json")).unwrap();
        assert!(r.complete, "{name} ran to its end");
        measured.extend(r.contenders.into_iter().map(|c| c.name));
    }
    measured.sort();
    assert_eq!(measured, http);
}
