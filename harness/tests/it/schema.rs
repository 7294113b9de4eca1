//! docs/results.schema.json, the published format of results.json, matches what iobound
//! writes: the committed reference results and a results.json written now.

use crate::common;

use crate::common::{load_results, results_dir, run, serve};

fn validator() -> (boon::Schemas, boon::SchemaIndex) {
    let path = common::repo_root().join("docs/results.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).expect("the schema is JSON");
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler
        .add_resource("results.schema.json", schema)
        .unwrap();
    let index = compiler
        .compile("results.schema.json", &mut schemas)
        .unwrap_or_else(|e| panic!("the schema compiles: {e}"));
    (schemas, index)
}

fn check(results: &serde_json::Value, what: &str) {
    let (schemas, index) = validator();
    if let Err(e) = schemas.validate(results, index) {
        panic!("{what} does not match docs/results.schema.json: {e:#}");
    }
}

#[test]
fn the_reference_results_match_the_published_schema() {
    let dir = common::repo_root().join("docs/results");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path().join("results.json");
        if p.is_file() {
            check(&load_results(p.parent().unwrap()), &p.display().to_string());
            seen += 1;
        }
    }
    assert!(seen >= 1, "no reference results in {}", dir.display());
}

#[test]
fn a_results_file_written_now_matches_the_schema_and_a_broken_one_does_not() {
    let (server, port) = serve(&[]);
    let out = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/plaintext");
    let o = run(&[
        "run",
        "--url",
        &url,
        "--pid",
        &server.0.id().to_string(),
        "--users",
        "2",
        "--duration",
        "1s",
        "--threshold",
        "errors<=100%",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut r = load_results(&results_dir(out.path()));
    assert_eq!(
        r["thresholds"].as_array().map(Vec::len),
        Some(1),
        "the threshold check is part of what is validated"
    );
    check(&r, "a fresh results.json");
    // The schema is not a check that cannot fail: a wrong status or a missing count is caught.
    r["runs"][0]["status"] = "fine".into();
    let (schemas, index) = validator();
    assert!(
        schemas.validate(&r, index).is_err(),
        "an unknown status is rejected"
    );
    r["runs"][0]["status"] = "ok".into();
    r["runs"][0]["summary"]
        .as_object_mut()
        .unwrap()
        .remove("due");
    assert!(
        schemas.validate(&r, index).is_err(),
        "a summary without `due` is rejected"
    );
}

/// The metric a threshold names is published as a list in the schema: it is the registry's
/// (plan/metric_list.rs, every entry a limit may name), so that a metric added to or removed
/// from the registry without the schema fails here rather than in a reader's validator.
#[test]
fn the_schema_lists_exactly_the_metrics_a_threshold_may_name() {
    use iobound::plan::metric_list::METRICS;
    use std::collections::BTreeSet;
    let path = common::repo_root().join("docs/results.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).expect("the schema is JSON");
    let listed: BTreeSet<&str> = schema["properties"]["thresholds"]["items"]["properties"]
        ["metric"]["enum"]
        .as_array()
        .expect("the thresholds' metric is an enum")
        .iter()
        .map(|v| v.as_str().expect("a metric key is a string"))
        .collect();
    let may_limit: BTreeSet<&str> = METRICS
        .iter()
        .filter(|m| m.limit.is_some())
        .map(|m| m.key)
        .collect();
    assert_eq!(
        listed, may_limit,
        "docs/results.schema.json (thresholds' metric) against plan/metric_list.rs"
    );
}
