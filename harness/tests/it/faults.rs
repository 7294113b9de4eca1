//! A CRUD mix with its write check on the real embedded PostgreSQL, and a mid-run downstream
//! spike with its recovery, against the built-in test server. In a file of its own: the
//! recovery is timed, and tests of the same file run at once on this machine's two CPUs.

use crate::common::*;
use std::process::Command;

/// A CRUD mix on the real embedded PostgreSQL, and a mid-run downstream spike, against the
/// built-in test server: every acknowledged write is found, the spike is applied at its time
/// and the recovery after it is measured. The spike is offered at 400 req/s: recovery waits
/// for three good seconds in a row, and at 100 req/s a second's p99 is its second-slowest
/// request, so one request a scheduler hiccup delayed (79 ms once, against a limit of 44)
/// could hold it back; at 400 it takes five such requests in one second.
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
rate = 400
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
    let o = Command::new(exe())
        .args(["run", "--plan"])
        .arg(&plan)
        .arg("--out")
        .arg(out.path())
        .env("IOBOUND_HOME", home.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = load_results(&results_dir(out.path()));
    assert!(
        r["environment"]["database"]
            .as_str()
            .unwrap()
            .contains("PostgreSQL"),
        "{}",
        r["environment"]["database"]
    );
    let runs = r["runs"].as_array().unwrap();
    let crud = &runs[0];
    assert_eq!(crud["status"], "ok", "{}", crud["failure"]);
    let w = &crud["writes"];
    // However many this machine's 3 s held: every acknowledged one is looked up.
    assert!(
        w["creates_acknowledged"].as_u64().unwrap() > 0
            && w["updates_acknowledged"].as_u64().unwrap() > 0,
        "{w}"
    );
    assert_eq!(w["creates_found"], w["creates_acknowledged"], "{w}");
    assert_eq!(w["lost"], 0, "{w}");
    let entries = crud["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 3);
    let sent: Vec<u64> = entries
        .iter()
        .map(|e| e["sent"].as_u64().unwrap())
        .collect();
    let total: u64 = sent.iter().sum();
    assert!(
        (sent[1] as f64 / total as f64 - 0.3).abs() < 0.05,
        "creates are 30% of the mix: {sent:?}"
    );
    let spike = &runs[1];
    let events = spike["events"].as_array().unwrap();
    assert_eq!(events.len(), 2);
    assert!(events.iter().all(|e| e["applied"] == true), "{events:?}");
    // Applied when planned, never before, and within the run (how late is the machine's).
    let at = |i: usize| events[i]["at_s"].as_f64().unwrap();
    assert!(
        at(0) >= 2.99 && at(0) < at(1) && at(1) >= 4.99 && at(1) < 10.0,
        "{events:?}"
    );
    let rc = &spike["recovery"];
    // Every call in the spike waits 700 ms downstream, whatever the machine: its p99 shows it,
    // well above the baseline's.
    let worst = rc["worst_p99_ms"].as_f64().unwrap();
    assert!(worst >= 650.0, "the 700 ms spike shows: {rc}");
    assert!(
        rc["baseline_p99_ms"].as_f64().unwrap() * 2.0 < worst,
        "{rc}"
    );
    let back = rc["recovered_after_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("recovered within the run: {rc}\n{}", spike["intervals"]));
    assert!(
        back <= 2.0,
        "a server that does nothing but wait is back at once: {rc}"
    );
    assert!(
        processes_in(home.path()).is_empty(),
        "no server or database left behind"
    );
}
