//! Warm-up measured, not guessed: a server that is steady from the start is called settled
//! after the minimum and its warm-up ends there, gracefully (nothing left unanswered).

mod common;

use common::{load_results, results_dir, run, serve};

#[test]
fn a_steady_server_settles_after_the_minimum_not_the_maximum() {
    let (server, port) = serve(&[]);
    let out = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/delay?ms=5");
    let t0 = std::time::Instant::now();
    let o = run(&[
        "run",
        "--url",
        &url,
        "--pid",
        &server.0.id().to_string(),
        "--users",
        "8",
        "--warmup",
        "40s",
        "--duration",
        "2s",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        t0.elapsed().as_secs() < 30,
        "the 40 s maximum was not waited out: {:?}",
        t0.elapsed()
    );
    let r = load_results(&results_dir(out.path()));
    let run = &r["runs"][0];
    let w = &run["warmup"];
    assert_eq!(w["settled"], true, "{w}");
    let secs = w["seconds"].as_f64().unwrap();
    assert!(
        (5.0..20.0).contains(&secs),
        "settled after {secs} s (minimum 5 s): {w}"
    );
    assert_eq!(
        (w["min_s"].as_f64(), w["max_s"].as_f64()),
        (Some(5.0), Some(40.0))
    );
    let warnings = run["driver"]["warnings"].to_string();
    assert!(
        !warnings.contains("warm-up left"),
        "a settled warm-up ends gracefully: {warnings}"
    );
    let md = std::fs::read_to_string(results_dir(out.path()).join("report.md")).unwrap();
    assert!(
        md.contains(
            "Warm-up, until throughput, mean latency and CPU per request stayed within 10% for 5 s"
        ),
        "{md}"
    );
}
