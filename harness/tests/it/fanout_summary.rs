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

/// The cells of the summary, by contender, as the page prints them.
fn cells(table: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    table
        .lines()
        .skip(2)
        .map(|l| {
            let c: Vec<String> = l
                .trim_matches('|')
                .split('|')
                .map(|x| x.trim().to_string())
                .collect();
            (c[0].trim_matches('`').to_string(), c)
        })
        .collect()
}

#[test]
fn the_summary_prose_says_what_the_table_holds() {
    let root = common::repo_root();
    let page = std::fs::read_to_string(root.join("docs/findings/fanout.md")).unwrap();
    let page = page.split_whitespace().collect::<Vec<_>>().join(" ");
    let t = cells(&summary(&root));
    // Columns: 3 p50 at 50 users, 4 req/s at 500, 5 errors %, 6 502s a second, 7 p99 all,
    // 8 cancelled / req, 9 served / req.
    let f = |c: &str, col: usize| t[c][col].clone();
    let num = |c: &str, col: usize| f(c, col).replace(',', "").parse::<f64>().unwrap();
    let extreme = |set: &[&str], col: usize, most: bool| {
        let mut v: Vec<&str> = set.to_vec();
        v.sort_by(|a, b| num(a, col).total_cmp(&num(b, col)));
        let c = if most { v[v.len() - 1] } else { v[0] };
        (c.to_string(), f(c, col))
    };
    let unpooled = [
        "go",
        "rust-axum",
        "node",
        "node-cluster",
        "spring-mvc-virtual",
        "jetty-virtual",
        "spring-webflux",
        "vertx",
        "helidon",
        "quarkus-reactive",
        "quarkus-virtual",
    ];
    assert_eq!(
        extreme(&unpooled, 3, false),
        ("vertx".into(), "51.7".into())
    );
    assert_eq!(
        extreme(&unpooled, 3, true),
        ("node-cluster".into(), "54.4".into())
    );
    assert_eq!(f("ktor", 3), "76.4");
    let pools = ["spring-mvc", "jetty", "quarkus-worker", "python-threads"];
    assert_eq!(extreme(&pools, 3, false).1, "159.1");
    assert_eq!(extreme(&pools, 3, true).1, "162.5");
    assert_eq!(extreme(&pools, 4, false).1, "305");
    assert_eq!(extreme(&pools, 4, true).1, "310");
    assert!(page.contains("answered in 51.7 (Vert.x) to 54.4 ms (node-cluster), the time of one call; Ktor took 76.4."));
    assert!(page.contains("took 159.1 to 162.5 ms and stayed at 305 to 310 req/s at 500 users"));
    let at_500: Vec<String> = [
        "rust-axum",
        "go",
        "vertx",
        "helidon",
        "node",
        "node-cluster",
    ]
    .iter()
    .map(|c| f(c, 4))
    .collect();
    assert_eq!(
        at_500,
        ["7,863", "5,700", "4,658", "3,763", "1,947", "1,829"]
    );
    let jvm = [
        "spring-mvc-virtual",
        "jetty-virtual",
        "spring-webflux",
        "quarkus-reactive",
        "quarkus-virtual",
    ];
    assert_eq!(
        (extreme(&jvm, 4, false).1, extreme(&jvm, 4, true).1),
        ("1,636".into(), "2,394".into())
    );
    assert!(page.contains("rust-axum answered 7,863 req/s, Go 5,700 (first batch: not tested against each other), Vert.x 4,658 and Helidon 3,763; the other virtual-thread and reactive JVM contenders 1,636 to 2,394, Node 1,947 and node-cluster 1,829."));
    // python-asyncio, and the CPU of the other event loops of the second batch.
    let (py, one) = (&f("python-asyncio", 3), &f("python-asyncio", 4));
    assert_eq!((py.as_str(), one.as_str()), ("1,140.7", "9"));
    let cpu = |batch: &str, c: &str| {
        let dir = root.join("docs/results").join(batch);
        let r = Results::load(&dir.join("results.json")).unwrap();
        let v = iobound::stats::cell(
            iobound::results::dir::ResultsDir::new(&r, &dir),
            "fanout-4x50ms",
            c,
        )
        .unwrap()
        .of("cpu")
        .value;
        one_decimal(v)
    };
    assert_eq!(cpu(BATCHES[2], "python-asyncio"), "29,035.4");
    let loops: Vec<String> = ["rust-axum", "vertx", "quarkus-reactive", "node-cluster"]
        .iter()
        .map(|c| cpu(BATCHES[1], c))
        .collect();
    assert_eq!(loops, ["127.5", "129.1", "174.6", "524.2"]);
    assert!(page.contains("1,140.7 ms at 50 users and 9 req/s at 500: it spent 29,035.4 ms of CPU per 1,000 answers (its table below), where the other event loops of these batches spent 127.5 (rust-axum) to 524.2 (node-cluster)."));
    assert_eq!(
        (f("python-asyncio", 8), f("python-asyncio", 9)),
        ("0.54".into(), "1.95".into())
    );
    assert!(page.contains("0.54 calls cancelled and 1.95 served per request"));
    // One call failing.
    let cancelling: Vec<&str> = t
        .keys()
        .map(String::as_str)
        .filter(|c| t[*c][2] == "yes" && *c != "python-asyncio")
        .collect();
    assert_eq!(
        extreme(&cancelling, 6, false),
        ("ktor".into(), "748".into())
    );
    assert_eq!(
        extreme(&cancelling, 6, true),
        ("rust-axum".into(), "4,320".into())
    );
    assert!(page.contains(
        "The constructs that cancel answered 748 (Ktor) to 4,320 (rust-axum) 502s a second"
    ));
    for c in ["spring-mvc", "jetty", "quarkus-worker"] {
        assert_eq!(f(c, 6), "50", "{c}");
    }
    for c in [
        "spring-mvc",
        "jetty",
        "quarkus-worker",
        "python-threads",
        "vertx",
        "quarkus-virtual",
    ] {
        assert_eq!(f(c, 8), "0.00", "{c}");
        assert!(num(c, 9) > 3.5, "{c}: about 4 calls served a request");
    }
    assert_eq!(
        [
            f("python-threads", 6),
            f("vertx", 6),
            f("quarkus-virtual", 6)
        ],
        ["57", "671", "337"]
    );
    let vertx = Results::load(
        &root
            .join("docs/results")
            .join(BATCHES[1])
            .join("results.json"),
    )
    .unwrap();
    let peak = measured(&vertx, "vertx", "one-of-4-fails")
        .iter()
        .map(|x| x.resources.peak_downstream_conns)
        .max();
    assert_eq!(peak, Some(1077));
    assert!(page.contains("Quarkus worker pool (50 502s a second each) and python-threads (57); a connection in Vert.x (671 a second;"));
    assert!(page.contains("peaked at 1,077) and quarkus-virtual (337:"));
    assert_eq!(
        [f("helidon", 8), f("helidon", 9), f("helidon", 6)],
        ["2.61", "1.40", "2,918"]
    );
    assert!(page.contains("Helidon cancels most of them (2.61 cancelled, 1.40 served per request) and answered 2,918 a second."));
    // Sixteen calls at 1,000 users.
    let sixteen = |c: &str| {
        let dir = root.join("docs/results").join(BATCHES[1]);
        let r = Results::load(&dir.join("results.json")).unwrap();
        let x = iobound::stats::cell(
            iobound::results::dir::ResultsDir::new(&r, &dir),
            "fanout-16-at-1000",
            c,
        )
        .unwrap();
        (
            whole(x.of("throughput").value),
            format!("{:.2}", x.of("errors").value),
        )
    };
    assert_eq!(sixteen("rust-axum"), ("2,167".into(), "0.31".into()));
    assert_eq!(sixteen("vertx"), ("1,191".into(), "0.00".into()));
    assert_eq!(sixteen("helidon"), ("935".into(), "0.00".into()));
    assert_eq!(sixteen("jetty-virtual").1, "41.42");
    assert_eq!(sixteen("node-cluster").1, "44.36");
    assert!(page.contains("rust-axum answered 2,167 req/s with 0.31% errors, Vert.x 1,191 and Helidon 935 without errors; jetty-virtual (41.42%) and node-cluster (44.36%)"));
    let py3 = Results::load(
        &root
            .join("docs/results")
            .join(BATCHES[2])
            .join("results.json"),
    )
    .unwrap();
    assert!(measured(&py3, "python-asyncio", "fanout-16-at-1000")
        .iter()
        .all(|x| x.summary.ok + x.summary.drained == 0));
    // all-models.md's summary points here without figures: most runs did not settle.
    assert_eq!(f("quarkus-worker", 6), f("jetty", 6));
    // Minutes of runs, as the page says.
    let minutes: Vec<f64> = BATCHES
        .iter()
        .map(|b| {
            let r = Results::load(&root.join("docs/results").join(b).join("results.json")).unwrap();
            common::minutes_of_runs(&r).round()
        })
        .collect();
    assert_eq!(minutes, [57.0, 101.0, 12.0]);
    assert!(
        page.contains("(57 minutes of runs,")
            && page.contains("(101 minutes,")
            && page.contains("(12 minutes,")
    );
}
