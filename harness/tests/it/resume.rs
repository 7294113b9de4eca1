//! A plan measured in two sittings: interrupted after a few rounds, then continued with
//! `run --resume DIR` in the same directory, it keeps every run of the first sitting, measures
//! each (contender, round) once, and its sequential verdict is decided from all of them.

use crate::common::{self, exe, load_results, results_dir};
use std::process::Command;
use std::time::Duration;

#[test]
fn an_interrupted_plan_resumed_keeps_its_runs_and_decides_from_all_of_them() {
    let home = tempfile::tempdir().unwrap();
    // Eight workers at 20 ms a request (enough for the contract's eight calls at once): a
    // quarter of what the other serves to 32 users, and four times its latency, so that every
    // headline difference is decided at the first look (five rounds) even when other tests
    // share the CPUs (at 5 ms and 16 users, a ratio of two, noise kept it open for more rounds:
    // 46 s alone, 73 s beside the other tests).
    common::add_slow_and_fast(home.path());
    let plan = home.path().join("plan.toml");
    // A downstream timeout of 300 ms: every run starts a fresh process and checks it against the
    // contract, whose stall cases wait out that timeout (2 s by default, much of a run's time
    // here); the contract's bounds follow the timeout, so it checks the same things.
    std::fs::write(
        &plan,
        "name = \"two-sittings\"\ncontenders = [\"slow\", \"fast\"]\nruns = \"auto\"\n\
         warmup = \"0s\"\n[downstream]\ntimeout = \"300ms\"\n[[scenario]]\nname = \"wait\"\npath = \"/delay?ms=20\"\n\
         [scenario.load]\nmodel = \"closed\"\nusers = 32\nduration = \"1s\"\n",
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let iobound = |args: &[&str]| {
        let mut c = Command::new(exe());
        c.args(args).env("IOBOUND_HOME", home.path());
        c
    };
    // First sitting: stopped (Ctrl-C) once two rounds are in.
    let mut first = iobound(&["run", "--plan", plan.to_str().unwrap()])
        .args(["--out", out.path().to_str().unwrap()])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Until two rounds are in, however long a slow machine takes, or the run has ended.
    let dir = loop {
        let ended = first.try_wait().unwrap();
        assert!(
            ended.is_none(),
            "the run ended before two rounds were in: {ended:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
        let Ok(entries) = std::fs::read_dir(out.path()) else {
            continue;
        };
        if entries.count() == 0 {
            continue;
        }
        let dir = results_dir(out.path());
        let runs = std::fs::read_to_string(dir.join("results.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .map_or(0, |r| r["runs"].as_array().map_or(0, Vec::len));
        if runs >= 4 {
            break dir;
        }
    };
    // SAFETY: signalling our own child, as a user's Ctrl-C would.
    unsafe { libc::kill(first.id() as i32, libc::SIGINT) };
    assert_eq!(
        first.wait().unwrap().code(),
        Some(130),
        "stopped by the user"
    );
    let interrupted = load_results(&dir);
    assert_eq!(interrupted["complete"], false);
    let kept: Vec<serde_json::Value> = interrupted["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "ok")
        .map(|r| r["started_at"].clone())
        .collect();
    assert!(kept.len() >= 4, "{interrupted}");
    // Second sitting, in the same directory, with a budget of its own (a minute: the first
    // sitting had none).
    let o = iobound(&["run", "--plan", plan.to_str().unwrap(), "--budget", "1m"])
        .args(["--resume", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        1,
        "no new directory"
    );
    let r = load_results(&dir);
    assert_eq!(r["complete"], true, "{}", r["incomplete_reason"]);
    assert_eq!(r["resumed_at"].as_array().unwrap().len(), 1);
    let runs = r["runs"].as_array().unwrap();
    for c in ["slow", "fast"] {
        let mut rounds: Vec<u64> = runs
            .iter()
            .filter(|x| x["contender"] == c)
            .map(|x| x["run"].as_u64().unwrap())
            .collect();
        rounds.sort_unstable();
        let expected: Vec<u64> = (1..=rounds.len() as u64).collect();
        assert_eq!(rounds, expected, "{c}: each round once, none missing");
        assert!(rounds.len() >= 5, "{c}: {rounds:?}");
    }
    for started in &kept {
        assert!(
            runs.iter().any(|x| x["started_at"] == *started),
            "a run of the first sitting was lost: {started}"
        );
    }
    let throughput = common::first_finding(&r, "throughput");
    assert_eq!(throughput["outcome"], "different", "{throughput}");
    assert!(throughput["ratio"].as_f64().unwrap() > 1.5, "{throughput}");
    // The same plan with other settings is refused before anything starts.
    let o = iobound(&[
        "run",
        "--plan",
        plan.to_str().unwrap(),
        "--margin",
        "10%",
        "--budget",
        "1m",
    ])
    .args(["--resume", dir.to_str().unwrap()])
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        stderr.contains("measured with another plan (it differs in:"),
        "{stderr}"
    );
}
