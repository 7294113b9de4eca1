//! Ctrl-C at every phase (start-up, verification, warm-up, a measured run, a pipeline run):
//! the harness stops in time, keeps what it measured, marked incomplete, and leaves no process.

use crate::common::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
#[ignore = "needs built contenders and a JDK; run by ./iobound test"]
fn interrupt_keeps_partial_results_and_leaves_no_process() {
    let _machine = beside_others(&[]);
    let out = tempfile::tempdir().unwrap();
    let mut child = Command::new(exe())
        .args([
            "run",
            "-c",
            "spring-webflux",
            "--path",
            "/delay?ms=20",
            "--users",
            "10",
            "--duration",
            "60s",
            "--warmup",
            "0s",
            "--out",
        ])
        .arg(out.path())
        .env("IOBOUND_HOME", repo_root())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the measured phase has run a few seconds: results.json records the contract
    // verification just before measurement begins.
    let t0 = Instant::now();
    let dir = loop {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "contender never got through verification"
        );
        if let Some(d) = std::fs::read_dir(out.path())
            .ok()
            .and_then(|mut r| r.next())
            .and_then(|e| e.ok())
            .map(|e| e.path())
        {
            let verified = std::fs::read_to_string(d.join("results.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .is_some_and(|r| r["contenders"][0]["verification"]["passed"] == true);
            if verified {
                break d;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    std::thread::sleep(Duration::from_secs(4));
    let port_arg = load_results(&dir)["contenders"][0]["command"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a.as_str())
        .find(|a| a.starts_with("--server.port="))
        .expect("command recorded")
        .to_string();
    assert_eq!(processes_with(&port_arg).len(), 1, "the contender runs");
    let status = interrupt_and_wait(&mut child, Duration::from_secs(6), "measurement");
    assert_eq!(status.code(), Some(130));
    assert!(
        processes_with(&port_arg).is_empty(),
        "contender survived the interrupt"
    );
    let r = load_results(&dir);
    assert_eq!(r["complete"], false);
    assert!(r["incomplete_reason"]
        .as_str()
        .unwrap()
        .contains("interrupted"));
    let run = &r["runs"][0];
    assert_eq!(run["status"], "incomplete");
    assert!(
        run["summary"]["ok"].as_u64().unwrap() > 100,
        "kept what was measured"
    );
    assert!(run["summary"]["duration_s"].as_f64().unwrap() < 30.0);
}

/// Starts `iobound run` on the fake contender, interrupts it `after` the moment `ready` says,
/// and checks that it stops in time, keeps its results and leaves no process.
fn interrupt_at(
    phase: &str,
    start_argv: &str,
    warmup: &str,
    wait_for_ready: bool,
    after: Duration,
) {
    let home = fake_contender_home(start_argv, phase);
    let out = tempfile::tempdir().unwrap();
    let mut child = Command::new(exe())
        .args([
            "run",
            "-c",
            "crasher",
            "--path",
            "/delay?ms=10",
            "--users",
            "4",
            "--duration",
            "30s",
            "--warmup",
            warmup,
            "--out",
        ])
        .arg(out.path())
        .env("IOBOUND_HOME", home.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    if wait_for_ready {
        loop {
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "{phase}: contender never became ready"
            );
            let ready = std::fs::read_dir(out.path())
                .ok()
                .and_then(|mut r| r.next())
                .and_then(|e| std::fs::read_to_string(e.ok()?.path().join("results.json")).ok())
                .is_some_and(|t| {
                    t.contains("\"startup_s\": 0")
                        || t.contains("\"startup_s\": 1")
                        || t.contains("\"startup_s\": 2")
                });
            if ready {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    std::thread::sleep(after);
    let status = interrupt_and_wait(&mut child, Duration::from_secs(5), phase);
    assert_eq!(status.code(), Some(130), "{phase}");
    let survivors = left_after(Duration::from_secs(5), || processes_in(home.path()));
    assert!(
        survivors.is_empty(),
        "{phase}: processes survived: {survivors:?}"
    );
    let r = load_results(&results_dir(out.path()));
    assert_eq!(r["complete"], false, "{phase}");
    assert!(
        r["incomplete_reason"]
            .as_str()
            .unwrap()
            .contains("interrupted"),
        "{phase}"
    );
    // What the interrupt cut short is not a failure of the contender: no run is recorded as
    // failed, and the contender carries no failure.
    for run in r["runs"].as_array().unwrap() {
        assert_ne!(
            run["status"], "failed",
            "{phase}: an interrupted run recorded as failed: {run}"
        );
    }
    assert!(
        r["contenders"][0]["failure"].is_null(),
        "{phase}: {}",
        r["contenders"][0]["failure"]
    );
}

#[test]
fn interrupt_during_start_up_verification_and_warm_up() {
    let serve = format!(r#""{}", "serve", "--port", "{{port}}""#, exe());
    // Start-up: the server only listens after 3 s.
    interrupt_at(
        "start-up",
        &format!(
            r#""sh", "-c", "sleep 3; exec \"$0\" serve --port \"$1\"", "{}", "{{port}}""#,
            exe()
        ),
        "0s",
        false,
        Duration::from_millis(800),
    );
    // Verification runs right after readiness (its cases take over a second).
    interrupt_at(
        "verification",
        &serve,
        "0s",
        true,
        Duration::from_millis(100),
    );
    // Warm-up: 20 s of it, interrupted 3 s after readiness.
    interrupt_at("warm-up", &serve, "20s", true, Duration::from_secs(3));
}

/// Ctrl-C in the middle of a pipeline run: the harness stops within 5 s, keeps what it had,
/// and leaves no Kafka broker, load tool, contender or database behind.
#[test]
#[ignore = "needs the built pipeline jar, Kafka's jars and a JDK; run by ./iobound test"]
fn interrupting_a_pipeline_run_leaves_no_broker_behind() {
    let _machine = beside_others(&[Resource::BusyCpus]);
    let out = tempfile::tempdir().unwrap();
    let plan = pipeline_plan(out.path(), "pipeline-reactive", "0s", "60s");
    let results = out.path().join("results");
    // The harness's stderr goes to a file, shown when the run does not get going.
    let log = out.path().join("harness.stderr");
    let mut child = Command::new(exe())
        .args([
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            results.to_str().unwrap(),
        ])
        .env("IOBOUND_HOME", repo_root())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let harness = child.id();
    let t0 = Instant::now();
    let stderr = || std::fs::read_to_string(&log).unwrap_or_default();
    // Wait until the contender passed its check (the measured load starts right after).
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "the harness exited ({status}) before the pipeline was measured; its stderr:\n{}",
                stderr()
            );
        }
        assert!(
            t0.elapsed() < Duration::from_secs(90),
            "the pipeline run never got going in 90 s; the harness's stderr:\n{}",
            stderr()
        );
        let verified = std::fs::read_dir(&results)
            .ok()
            .and_then(|mut r| r.next())
            .and_then(|e| std::fs::read_to_string(e.ok()?.path().join("results.json")).ok())
            .is_some_and(|t| t.contains("\"verification\": {"));
        if verified {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(3));
    let status = interrupt_and_wait(&mut child, Duration::from_secs(5), "pipeline");
    assert_eq!(status.code(), Some(130));
    let dir = results_dir(&results);
    let r = load_results(&dir);
    assert_eq!(r["complete"], false);
    // This run's processes only (other runs may be going on): the broker's and the database's
    // directories carry the harness's pid, the load tool writes into this results directory,
    // the contender listened on the port in its command line.
    let port = r["contenders"][0]["command"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a.as_str())
        .find(|a| a.starts_with("--port="))
        .unwrap()
        .to_string();
    for needle in [
        format!(".cache/kafka-{harness}"),
        format!(".cache/pgdata-{harness}"),
        dir.display().to_string(),
        port,
    ] {
        let left = left_after(Duration::from_secs(5), || processes_with(&needle));
        assert!(left.is_empty(), "{needle}: processes survived: {left:?}");
    }
}
