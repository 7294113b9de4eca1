//! A contender's life in a plan: one that crashes mid-run is reported failed with its log,
//! and the plan goes on.

mod common;
use common::*;
use std::process::Command;

#[test]
fn a_contender_that_crashes_mid_run_is_reported_and_the_plan_goes_on() {
    // Long enough to pass the contract checks (about 6 s: the stalled /enrich cases wait out
    // the 2 s downstream timeout), short enough to die during the 8 s scenario.
    let home = crashing_contender_home(12);
    let out = tempfile::tempdir().unwrap();
    let plan = home.path().join("plan.toml");
    std::fs::write(
        &plan,
        r#"contenders = ["crasher"]
runs = 1
warmup = "0s"
[[scenario]]
name = "first"
path = "/delay?ms=10"
[scenario.load]
model = "closed"
users = 4
duration = "8s"
timeout = "1s"
[[scenario]]
name = "second"
path = "/plaintext"
[scenario.load]
model = "closed"
users = 1
duration = "1s"
"#,
    )
    .unwrap();
    let o = Command::new(exe())
        .args([
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.path().to_str().unwrap(),
        ])
        .env("IOBOUND_HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(3),
        "exit 3 = some contender failed\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r = load_results(&results_dir(out.path()));
    assert_eq!(r["complete"], true, "the plan itself finished");
    let runs = r["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["status"], "failed");
    let why = runs[0]["failure"].as_str().unwrap();
    assert!(
        why.contains("exited during the run") && why.contains("exit status 124"),
        "{why}"
    );
    assert!(
        why.contains("listening on"),
        "the log tail is included: {why}"
    );
    // What was measured before the crash is kept.
    assert!(runs[0]["summary"]["ok"].as_u64().unwrap() > 100);
    assert_eq!(runs[1]["status"], "failed");
    assert!(runs[1]["failure"].as_str().unwrap().contains("not run"));
    assert!(
        processes_in(home.path()).is_empty(),
        "no server left behind"
    );
}
