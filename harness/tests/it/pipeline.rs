//! Pipeline scenarios on the real Kafka broker.

use crate::common::*;

/// A short pipeline run on the real Kafka broker: records go through the virtual-thread
/// pipeline and come back enriched, none lost, latency at least the downstream's 100 ms.
#[test]
#[ignore = "needs the built pipeline jar, Kafka's jars and a JDK; run by ./iobound test"]
fn a_pipeline_run_delivers_every_record_through_real_kafka() {
    let _machine = beside_others(&[Resource::BusyCpus]);
    let out = tempfile::tempdir().unwrap();
    let plan = pipeline_plan(out.path(), "pipeline-virtual", "2s", "4s");
    let results = out.path().join("results");
    let o = run(&[
        "run",
        "--plan",
        plan.to_str().unwrap(),
        "--out",
        results.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = load_results(&results_dir(&results));
    assert!(
        r["environment"]["kafka"]
            .as_str()
            .unwrap()
            .contains("Kafka 4.4.0"),
        "{}",
        r["environment"]["kafka"]
    );
    let v = &r["contenders"][0]["verification"];
    assert_eq!(v["passed"], true, "{v}");
    let run = &r["runs"][0];
    assert_eq!(run["status"], "ok", "{}", run["failure"]);
    let d = &run["delivery"];
    assert_eq!(
        (
            d["sent"].as_u64(),
            d["lost"].as_u64(),
            d["malformed"].as_u64()
        ),
        (Some(800), Some(0), Some(0)),
        "{d}"
    );
    assert!(d["received"].as_u64().unwrap() == 800, "{d}");
    let p50 = run["summary"]["latency"]["p50"].as_f64().unwrap();
    assert!(
        p50 >= 100.0,
        "every record waits for the 100 ms downstream: p50 {p50}"
    );
    assert!(
        run["resources"]["peak_threads"].as_u64().unwrap() > 0,
        "the contender was sampled"
    );
    // The 2 s warm-up ran in the same schedule, just before: its records are not the measured
    // run's (800 sent above are the measured 4 s), its seconds were kept and judged, and two
    // seconds cannot show a steady state, so the run says it was not at one.
    let w = &run["warmup"];
    assert_eq!(
        (
            w["rule"].as_str(),
            w["settled"].as_bool(),
            w["seconds"].as_f64()
        ),
        (Some("ordered-trend-at-end"), Some(false), Some(2.0)),
        "{w}"
    );
    let curve: Vec<f64> = serde_json::from_value(w["curve"].clone()).unwrap();
    assert!(
        curve.len() == 2 && curve.iter().sum::<f64>() > 0.0,
        "records arrived during the warm-up: {curve:?}"
    );
    let warnings = run["driver"]["warnings"].to_string();
    assert!(warnings.contains("not at steady state"), "{warnings}");
    assert!(
        !warnings.contains("was ready"),
        "the load tool started in time: {warnings}"
    );
}
