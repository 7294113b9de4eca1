//! End to end on the real contenders: a short comparison must produce real, non-zero
//! measurements and a valid results.json; an interrupted run must keep what it measured and
//! leave no process behind. Needs the built jars and a JDK >= 21: `./iobound test` runs it.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn results_dir(out: &Path) -> PathBuf {
    let dirs: Vec<_> = std::fs::read_dir(out).expect("results parent exists").flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    assert_eq!(dirs.len(), 1, "one results directory expected in {}", out.display());
    dirs[0].clone()
}

fn load_results(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).expect("results.json exists")).expect("results.json is JSON")
}

/// Processes whose command line contains `needle` (other than this test).
fn processes_with(needle: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).replace('\0', " ").contains(needle)))
        .collect()
}

/// Sends Ctrl-C (SIGINT) to `child` and waits for it to exit, failing after `limit`.
fn interrupt_and_wait(child: &mut std::process::Child, limit: Duration, phase: &str) -> std::process::ExitStatus {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(t0.elapsed() < limit, "{phase}: not stopped within {limit:?} of Ctrl-C");
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Processes whose working directory is inside `dir` (contenders run in their own folder).
fn processes_in(dir: &Path) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c.starts_with(dir)))
        .collect()
}

#[test]
#[ignore = "needs built contenders and a JDK; run by ./iobound test"]
fn short_comparison_writes_real_results() {
    let out = tempfile::tempdir().unwrap();
    let o = run(&[
        "run", "-c", "spring-mvc,spring-webflux", "--path", "/delay?ms=50", "--users", "20", "--duration", "3s",
        "--warmup", "1s", "--out", out.path().to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "run failed:\n{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("throughput (req/s)") && stdout.contains("spring-webflux"), "{stdout}");

    let dir = results_dir(out.path());
    let r = load_results(&dir);
    assert_eq!(r["schema_version"], 1);
    assert_eq!(r["complete"], true);
    assert!(r["environment"]["java"].as_str().is_some_and(|j| j.contains("version")));
    assert_eq!(r["environment"]["contender_cpus"], serde_json::json!([0]));
    let runs = r["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for run in runs {
        let name = run["contender"].as_str().unwrap();
        assert_eq!(run["status"], "ok", "{name}: {}", run["failure"]);
        let s = &run["summary"];
        // 20 users on a 50 ms delay: at most 400 req/s by Little's law; each at least 50 ms.
        let rps = s["rps"].as_f64().unwrap();
        assert!((100.0..=410.0).contains(&rps), "{name}: {rps} req/s");
        assert!(s["latency"]["p50"].as_f64().unwrap() >= 50.0, "{name}");
        assert!(s["latency"]["max"].as_f64().unwrap() >= s["latency"]["p99"].as_f64().unwrap());
        assert_eq!(s["errors"]["connect"].as_u64().unwrap() + s["errors"]["timeout"].as_u64().unwrap(), 0, "{name}");
        assert!(run["intervals"].as_array().unwrap().len() >= 3, "{name}");
        let res = &run["resources"];
        assert!(res["samples"].as_array().unwrap().len() >= 8, "{name}: sampled every 250 ms");
        assert!(res["peak_threads"].as_u64().unwrap() >= 10, "{name}");
        assert!(res["peak_rss_mb"].as_f64().unwrap() > 30.0, "{name}");
        assert!(res["cpu_s"].as_f64().unwrap() > 0.0, "{name}");
        assert!(res["peak_sockets"].as_u64().unwrap() >= 20, "{name}: 20 client connections");
        assert!(run["driver"]["cpu_s"].as_f64().unwrap() > 0.0);
        let hlog = dir.join(run["histogram_log"].as_str().unwrap());
        assert!(std::fs::metadata(&hlog).unwrap().len() > 100, "{}", hlog.display());
    }
    for c in r["contenders"].as_array().unwrap() {
        assert_eq!(c["verification"]["passed"], true);
        assert!(c["command"].as_array().unwrap().iter().any(|a| a == "-Xmx512m"), "same heap for every JVM");
    }
    // The table can be rebuilt from results.json alone.
    let t = run(&["table", dir.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&t.stdout).contains("latency p99 (ms)"));
}

#[test]
#[ignore = "needs built contenders and a JDK; run by ./iobound test"]
fn interrupt_keeps_partial_results_and_leaves_no_process() {
    let out = tempfile::tempdir().unwrap();
    let mut child = Command::new(exe())
        .args(["run", "-c", "spring-webflux", "--path", "/delay?ms=20", "--users", "10", "--duration", "60s", "--warmup", "0s", "--out"])
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
        assert!(t0.elapsed() < Duration::from_secs(120), "contender never got through verification");
        if let Some(d) = std::fs::read_dir(out.path()).ok().and_then(|mut r| r.next()).and_then(|e| e.ok()).map(|e| e.path()) {
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
    assert!(processes_with(&port_arg).is_empty(), "contender survived the interrupt");
    let r = load_results(&dir);
    assert_eq!(r["complete"], false);
    assert!(r["incomplete_reason"].as_str().unwrap().contains("interrupted"));
    let run = &r["runs"][0];
    assert_eq!(run["status"], "incomplete");
    assert!(run["summary"]["ok"].as_u64().unwrap() > 100, "kept what was measured");
    assert!(run["summary"]["duration_s"].as_f64().unwrap() < 30.0);
}

/// A contender folder whose server is iobound's own test server, killed by `timeout` after
/// `lifetime` seconds: it passes the contract, then crashes mid-run.
fn crashing_contender_home(lifetime: u32) -> tempfile::TempDir {
    fake_contender_home(&format!(r#""timeout", "{lifetime}", "{}", "serve", "--port", "{{port}}""#, exe()), &format!("killed after {lifetime} s"))
}

/// A contender folder named "crasher" whose start command is `argv` (TOML array items).
fn fake_contender_home(argv: &str, what: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    add_fake_contender(home.path(), "crasher", argv, what);
    home
}

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
        .args(["run", "--plan", plan.to_str().unwrap(), "--out", out.path().to_str().unwrap()])
        .env("IOBOUND_HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "exit 3 = some contender failed\n{}", String::from_utf8_lossy(&o.stderr));
    let r = load_results(&results_dir(out.path()));
    assert_eq!(r["complete"], true, "the plan itself finished");
    let runs = r["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["status"], "failed");
    let why = runs[0]["failure"].as_str().unwrap();
    assert!(why.contains("exited during the run") && why.contains("exit status 124"), "{why}");
    assert!(why.contains("listening on"), "the log tail is included: {why}");
    // What was measured before the crash is kept.
    assert!(runs[0]["summary"]["ok"].as_u64().unwrap() > 100);
    assert_eq!(runs[1]["status"], "failed");
    assert!(runs[1]["failure"].as_str().unwrap().contains("not run"));
    assert!(processes_in(home.path()).is_empty(), "no server left behind");
}

/// Starts `iobound run` on the fake contender, interrupts it `after` the moment `ready` says,
/// and checks that it stops in time, keeps its results and leaves no process.
fn interrupt_at(phase: &str, start_argv: &str, warmup: &str, wait_for_ready: bool, after: Duration) {
    let home = fake_contender_home(start_argv, phase);
    let out = tempfile::tempdir().unwrap();
    let mut child = Command::new(exe())
        .args(["run", "-c", "crasher", "--path", "/delay?ms=10", "--users", "4", "--duration", "30s", "--warmup", warmup, "--out"])
        .arg(out.path())
        .env("IOBOUND_HOME", home.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    if wait_for_ready {
        loop {
            assert!(t0.elapsed() < Duration::from_secs(30), "{phase}: contender never became ready");
            let ready = std::fs::read_dir(out.path())
                .ok()
                .and_then(|mut r| r.next())
                .and_then(|e| std::fs::read_to_string(e.ok()?.path().join("results.json")).ok())
                .is_some_and(|t| t.contains("\"startup_s\": 0") || t.contains("\"startup_s\": 1") || t.contains("\"startup_s\": 2"));
            if ready {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    std::thread::sleep(after);
    let status = interrupt_and_wait(&mut child, Duration::from_secs(5), phase);
    assert_eq!(status.code(), Some(130), "{phase}");
    std::thread::sleep(Duration::from_millis(200));
    let survivors = processes_in(home.path());
    assert!(survivors.is_empty(), "{phase}: processes survived: {survivors:?}");
    let r = load_results(&results_dir(out.path()));
    assert_eq!(r["complete"], false, "{phase}");
    assert!(r["incomplete_reason"].as_str().unwrap().contains("interrupted"), "{phase}");
}

#[test]
fn interrupt_during_start_up_verification_and_warm_up() {
    let serve = format!(r#""{}", "serve", "--port", "{{port}}""#, exe());
    // Start-up: the server only listens after 3 s.
    interrupt_at("start-up", &format!(r#""sh", "-c", "sleep 3; exec \"$0\" serve --port \"$1\"", "{}", "{{port}}""#, exe()), "0s", false, Duration::from_millis(800));
    // Verification runs right after readiness (its cases take over a second).
    interrupt_at("verification", &serve, "0s", true, Duration::from_millis(100));
    // Warm-up: 20 s of it, interrupted 3 s after readiness.
    interrupt_at("warm-up", &serve, "20s", true, Duration::from_secs(3));
}

/// A CRUD mix on the real embedded PostgreSQL, and a mid-run downstream spike, against the
/// built-in test server: every acknowledged write is found, the spike is applied at its time
/// and the recovery after it is measured.
#[test]
fn crud_mix_writes_are_checked_and_a_mid_run_spike_is_timed() {
    let serve = format!(r#""{}", "serve", "--port", "{{port}}""#, exe());
    let home = fake_contender_home(&serve, "test server");
    let out = tempfile::tempdir().unwrap();
    let plan = home.path().join("plan.toml");
    std::fs::write(
        &plan,
        r#"contenders = ["crasher"]
runs = 1
warmup = "1s"
[downstream]
latency = "fixed:20ms"
[[scenario]]
name = "crud"
mix = [
  { weight = 6, method = "GET", path = "/messages/{seq:1..10000}" },
  { weight = 3, method = "POST", path = "/messages", body = '{"text":"{write}"}' },
  { weight = 1, method = "PUT", path = "/messages/{seq:1..10000}", body = '{"text":"{write}"}' },
]
[scenario.load]
model = "closed"
users = 8
duration = "3s"
[[scenario]]
name = "spike"
path = "/enrich?key=k{seq:100}"
[scenario.load]
model = "open"
rate = 100
duration = "10s"
[[scenario.event]]
at = "3s"
downstream = { latency = "fixed:700ms" }
[[scenario.event]]
at = "5s"
downstream = { latency = "fixed:20ms" }
"#,
    )
    .unwrap();
    let o = Command::new(exe()).args(["run", "--plan"]).arg(&plan).arg("--out").arg(out.path()).env("IOBOUND_HOME", home.path()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = load_results(&results_dir(out.path()));
    assert!(r["environment"]["database"].as_str().unwrap().contains("PostgreSQL"), "{}", r["environment"]["database"]);
    let runs = r["runs"].as_array().unwrap();
    let crud = &runs[0];
    assert_eq!(crud["status"], "ok", "{}", crud["failure"]);
    let w = &crud["writes"];
    assert!(w["creates_acknowledged"].as_u64().unwrap() > 100 && w["updates_acknowledged"].as_u64().unwrap() > 30, "{w}");
    assert_eq!(w["creates_found"], w["creates_acknowledged"], "{w}");
    assert_eq!(w["lost"], 0, "{w}");
    let entries = crud["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 3);
    let sent: Vec<u64> = entries.iter().map(|e| e["sent"].as_u64().unwrap()).collect();
    let total: u64 = sent.iter().sum();
    assert!((sent[1] as f64 / total as f64 - 0.3).abs() < 0.05, "creates are 30% of the mix: {sent:?}");
    let spike = &runs[1];
    let events = spike["events"].as_array().unwrap();
    assert_eq!(events.len(), 2);
    assert!(events.iter().all(|e| e["applied"] == true), "{events:?}");
    assert!((events[0]["at_s"].as_f64().unwrap() - 3.0).abs() < 0.5, "{events:?}");
    let rc = &spike["recovery"];
    assert!(rc["baseline_p99_ms"].as_f64().unwrap() < 100.0, "{rc}");
    assert!(rc["worst_p99_ms"].as_f64().unwrap() >= 650.0, "the 700 ms spike shows: {rc}");
    let back = rc["recovered_after_s"].as_f64().unwrap_or_else(|| panic!("recovered within the run: {rc}\n{}", spike["intervals"]));
    assert!(back <= 2.0, "a server that does nothing but wait is back at once: {rc}");
    assert!(processes_in(home.path()).is_empty(), "no server or database left behind");
}

/// A plan of one pipeline scenario at 200 records/s on 2 partitions, written into `dir`.
fn pipeline_plan(dir: &Path, contender: &str, warmup: &str, duration: &str) -> PathBuf {
    let plan = dir.join("plan.toml");
    let text = format!(
        "contenders = [\"{contender}\"]\nruns = 1\nwarmup = \"{warmup}\"\n[kafka]\npartitions = 2\n[[scenario]]\nname = \"records\"\npipeline = true\n[scenario.load]\nmodel = \"open\"\nrate = 200\nduration = \"{duration}\"\n"
    );
    std::fs::write(&plan, text).unwrap();
    plan
}

/// A short pipeline run on the real Kafka broker: records go through the virtual-thread
/// pipeline and come back enriched, none lost, latency at least the downstream's 100 ms.
#[test]
#[ignore = "needs the built pipeline jar, Kafka's jars and a JDK; run by ./iobound test"]
fn a_pipeline_run_delivers_every_record_through_real_kafka() {
    let out = tempfile::tempdir().unwrap();
    let plan = pipeline_plan(out.path(), "pipeline-virtual", "2s", "4s");
    let results = out.path().join("results");
    let o = run(&["run", "--plan", plan.to_str().unwrap(), "--out", results.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = load_results(&results_dir(&results));
    assert!(r["environment"]["kafka"].as_str().unwrap().contains("Kafka 4.4.0"), "{}", r["environment"]["kafka"]);
    let v = &r["contenders"][0]["verification"];
    assert_eq!(v["passed"], true, "{v}");
    let run = &r["runs"][0];
    assert_eq!(run["status"], "ok", "{}", run["failure"]);
    let d = &run["delivery"];
    assert_eq!((d["sent"].as_u64(), d["lost"].as_u64(), d["malformed"].as_u64()), (Some(800), Some(0), Some(0)), "{d}");
    assert!(d["received"].as_u64().unwrap() == 800, "{d}");
    let p50 = run["summary"]["latency"]["p50"].as_f64().unwrap();
    assert!(p50 >= 100.0, "every record waits for the 100 ms downstream: p50 {p50}");
    assert!(run["resources"]["peak_threads"].as_u64().unwrap() > 0, "the contender was sampled");
}

/// Ctrl-C in the middle of a pipeline run: the harness stops within 5 s, keeps what it had,
/// and leaves no Kafka broker, load tool, contender or database behind.
#[test]
#[ignore = "needs the built pipeline jar, Kafka's jars and a JDK; run by ./iobound test"]
fn interrupting_a_pipeline_run_leaves_no_broker_behind() {
    let out = tempfile::tempdir().unwrap();
    let plan = pipeline_plan(out.path(), "pipeline-reactive", "0s", "60s");
    let results = out.path().join("results");
    let mut child = Command::new(exe())
        .args(["run", "--plan", plan.to_str().unwrap(), "--out", results.to_str().unwrap()])
        .env("IOBOUND_HOME", repo_root())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let harness = child.id();
    let t0 = Instant::now();
    // Wait until the contender passed its check (the measured load starts right after).
    loop {
        assert!(t0.elapsed() < Duration::from_secs(90), "the pipeline run never got going");
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
    std::thread::sleep(Duration::from_millis(300));
    let dir = results_dir(&results);
    let r = load_results(&dir);
    assert_eq!(r["complete"], false);
    // This run's processes only (other runs may be going on): the broker's and the database's
    // directories carry the harness's pid, the load tool writes into this results directory,
    // the contender listened on the port in its command line.
    let port = r["contenders"][0]["command"].as_array().unwrap().iter().filter_map(|a| a.as_str()).find(|a| a.starts_with("--port=")).unwrap().to_string();
    for needle in [format!(".cache/kafka-{harness}"), format!(".cache/pgdata-{harness}"), dir.display().to_string(), port] {
        let left = processes_with(&needle);
        assert!(left.is_empty(), "{needle}: processes survived: {left:?}");
    }
}
