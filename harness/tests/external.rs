//! A server iobound did not build, given by --url, measured like a contender: --cmd starts and
//! stops it, --pid samples a running one with its children.

mod common;

use common::{exe, free_port, load_results, processes_with, results_dir, run, serve};
use std::time::Duration;

fn peak(results: &serde_json::Value, key: &str) -> f64 {
    results["runs"][0]["resources"][key].as_f64().unwrap_or(0.0)
}

#[test]
fn a_server_started_with_cmd_is_sampled_and_stopped() {
    let out = tempfile::tempdir().unwrap();
    let port = free_port();
    let cmd = format!("{} serve --port {port}", exe());
    let url = format!("http://127.0.0.1:{port}/plaintext");
    let o = run(&[
        "run",
        "--url",
        &url,
        "--cmd",
        &cmd,
        "--users",
        "4",
        "--duration",
        "2s",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = load_results(&results_dir(out.path()));
    assert_eq!(r["runs"][0]["status"], "ok", "{}", r["runs"][0]);
    assert!(
        peak(&r, "peak_threads") >= 1.0 && peak(&r, "peak_rss_mb") > 1.0,
        "the server's process was sampled: {}",
        r["runs"][0]["resources"]
    );
    assert!(
        peak(&r, "peak_sockets") >= 4.0,
        "its sockets were counted: {}",
        r["runs"][0]["resources"]
    );
    assert!(peak(&r, "cpu_s") > 0.0);
    let external = r["contenders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "external")
        .unwrap();
    assert_eq!(external["command"][0], cmd.as_str());
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        processes_with(&format!("serve --port {port}")).is_empty(),
        "the --cmd server was stopped"
    );
}

#[test]
fn a_running_server_given_by_pid_is_sampled() {
    let (server, port) = serve(&[]);
    let out = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/plaintext");
    let pid = server.0.id().to_string();
    let o = run(&[
        "run",
        "--url",
        &url,
        "--pid",
        &pid,
        "--users",
        "4",
        "--duration",
        "2s",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = load_results(&results_dir(out.path()));
    assert!(
        peak(&r, "peak_threads") >= 1.0 && peak(&r, "peak_sockets") >= 4.0,
        "{}",
        r["runs"][0]["resources"]
    );
    let external = r["contenders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "external")
        .unwrap();
    assert!(
        external["framework"]
            .as_str()
            .unwrap()
            .contains(&format!("process {pid}")),
        "{external}"
    );
    assert_eq!(
        processes_with(&format!("serve --port {port}")).len(),
        1,
        "a server iobound did not start is left running"
    );
}

#[test]
fn a_pid_that_does_not_exist_is_refused_before_anything_starts() {
    let out = tempfile::tempdir().unwrap();
    let o = run(&[
        "run",
        "--url",
        "http://127.0.0.1:9/plaintext",
        "--pid",
        "999999999",
        "--duration",
        "1s",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("--pid 999999999: no such process") && err.contains("--cmd"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        0,
        "no results directory"
    );
    let o = run(&["run", "--pid", "1", "--duration", "1s"]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--url"),
        "--pid needs --url: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_plan_runs_its_scenarios_against_a_server_given_by_url() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("two.toml");
    let two = common::two_scenario_plan(2, "0s", 4, 300, "1s");
    std::fs::write(&plan, &two).unwrap();
    let port = free_port();
    let cmd = format!("{} serve --port {port}", exe());
    let url = format!("http://127.0.0.1:{port}");
    let out = dir.path().join("out");
    let args = |url: &str| {
        vec![
            "run".to_string(),
            "--plan".into(),
            plan.display().to_string(),
            "--url".into(),
            url.to_string(),
            "--cmd".into(),
            cmd.clone(),
            "--out".into(),
            out.display().to_string(),
        ]
    };
    let a = args(&url);
    let o = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("thresholds: 1 checked, 0 broken"), "{table}");
    let r = load_results(&results_dir(&out));
    let runs = r["runs"].as_array().unwrap();
    let cells: Vec<(String, String, u64)> = runs
        .iter()
        .map(|x| {
            (
                x["contender"].as_str().unwrap().to_string(),
                x["scenario"].as_str().unwrap().to_string(),
                x["run"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = |s: &str, n| ("external".to_string(), s.to_string(), n);
    assert_eq!(
        cells,
        vec![
            want("wait-5ms", 1),
            want("plain-open", 1),
            want("wait-5ms", 2),
            want("plain-open", 2)
        ]
    );
    assert!(runs.iter().all(|x| x["status"] == "ok"));
    assert_eq!(runs[1]["path"], "/plaintext");

    // The URL gives only the address: a path is refused before anything starts.
    let a = args(&format!("{url}/plaintext"));
    let o = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("give only where the server listens"), "{err}");

    // A scenario that needs iobound's own services is refused, by name.
    std::fs::write(
        &plan,
        format!(
            "{two}\n[[scenario.event]]\nat = \"1s\"\ndownstream = {{ latency = \"fixed:1s\" }}\n"
        ),
    )
    .unwrap();
    let a = args(&url);
    let o = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("scenario \"plain-open\" needs iobound's downstream service"),
        "{err}"
    );
    assert!(processes_with(&format!("serve --port {port}")).is_empty());
}
