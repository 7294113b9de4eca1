//! The summary table of docs/findings/fanout.md, one row per HTTP contender, recomputed here
//! from the committed results of plans/fanout.toml (measured in three batches of the same plan,
//! each contender four times in one of them), so that the page cannot drift from them. On a
//! mismatch the test prints the table the results give.

use crate::common;

use iobound::results::record::{Results, Run, RunStatus};
use iobound::services::manifest;
use iobound::util::numbers::median;
use iobound::util::units::thousands;
use std::path::Path;

/// The batches, in the order they were measured.
const BATCHES: [&str; 3] = [
    "fanout-2026-11-24",
    "fanout-2026-11-24-batch2",
    "fanout-2026-11-24-batch3",
];
const SCENARIOS: [&str; 3] = ["fanout-4x50ms", "one-of-4-fails", "fanout-16-at-1000"];

/// A contender's runs of a scenario that were measured (not those that failed to start).
fn measured<'a>(r: &'a Results, contender: &str, scenario: &str) -> Vec<&'a Run> {
    r.runs
        .iter()
        .filter(|x| x.scenario == scenario && x.contender == contender)
        .filter(|x| x.status == RunStatus::Ok)
        .collect()
}

/// Whether `r` measured `contender` four times in every scenario.
fn four_times(r: &Results, contender: &str) -> bool {
    SCENARIOS
        .iter()
        .all(|s| measured(r, contender, s).len() == 4)
}
const BEGIN: &str = "<!-- fan-out summary: checked by harness/tests/it/fanout_summary.rs -->";
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
    // The median over the runs of a figure of each run.
    let over = |scenario: &str, f: &dyn Fn(&Run) -> f64| {
        median(measured(r, &m.name, scenario).into_iter().map(f).collect())
    };
    let cell = |scenario: &str| {
        iobound::stats::cell(
            iobound::results::dir::ResultsDir::new(r, dir),
            scenario,
            &m.name,
        )
        .unwrap()
    };
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
        format!("{:.2}", a.of("errors").value),
        whole(over(failing, &|x| answered(x) / x.summary.duration_s)),
        one_decimal(b.of("p99_all").value),
        format!("{:.2}", b.of("downstream_cancelled").value),
        format!("{:.2}", b.of("downstream_served").value),
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
        let batch: Vec<usize> = (0..batches.len())
            .filter(|&i| four_times(&batches[i].0, name))
            .collect();
        assert_eq!(batch.len(), 1, "{name} is measured four times in one batch");
        let (r, dir) = &batches[batch[0]];
        lines.push(row(r, dir, &m, batch[0]));
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
fn every_http_contender_of_the_plan_was_measured_four_times_in_one_batch() {
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
    assert_eq!(
        planned, http,
        "plans/fanout.toml lists every HTTP contender"
    );
    let mut four = Vec::new();
    for name in BATCHES {
        let r = Results::load(&root.join("docs/results").join(name).join("results.json")).unwrap();
        assert!(r.complete, "{name} ran to its end");
        four.extend(
            r.contenders
                .iter()
                .filter(|c| four_times(&r, &c.name))
                .map(|c| c.name.clone()),
        );
    }
    four.sort();
    assert_eq!(four, http);
}
