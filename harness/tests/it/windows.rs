//! Several measured windows per start (`windows = k`): one process measured over k windows of
//! the scenario's duration, one after the other in the same load, is one start in every test,
//! and the results say how much of the noise is between its windows and how much between starts.

use crate::common::{self, exe, load_results, results_dir};
use std::process::Command;

#[test]
fn windows_of_one_start_are_one_value_in_every_test() {
    let home = tempfile::tempdir().unwrap();
    // Eight workers at 20 ms a request against an unbounded server, 32 users.
    common::add_slow_and_fast(home.path());
    let plan = home.path().join("plan.toml");
    // The warm-up leads into the window (it must be longer than warmup_min, and settles over
    // 10 s of history); three windows of 2 s make a 6 s window, long enough for its
    // steady-state check. Two starts each: enough to tell where the noise is.
    std::fs::write(
        &plan,
        "name = \"windows\"\ncontenders = [\"slow\", \"fast\"]\nruns = 2\nwindows = 3\n\
         warmup = \"15s\"\nwarmup_min = \"10s\"\n[downstream]\ntimeout = \"300ms\"\n\
         [[scenario]]\nname = \"wait\"\npath = \"/delay?ms=20\"\n\
         [scenario.load]\nmodel = \"closed\"\nusers = 32\nduration = \"2s\"\n",
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = Command::new(exe())
        .args(["run", "--plan", plan.to_str().unwrap()])
        .args(["--out", out.path().to_str().unwrap()])
        .env("IOBOUND_HOME", home.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let r = load_results(&results_dir(out.path()));
    let runs = r["runs"].as_array().unwrap();
    for c in ["slow", "fast"] {
        let of: Vec<&serde_json::Value> = runs.iter().filter(|x| x["contender"] == c).collect();
        assert_eq!(of.len(), 2, "{c}: one run per start, not one per window");
        for x in &of {
            let d = x["summary"]["duration_s"].as_f64().unwrap();
            assert!(
                (5.5..=6.5).contains(&d),
                "{c}: a window of three 2 s windows: {d}"
            );
        }
    }
    // The verdict counts starts (two at most), not windows (six).
    let throughput = common::first_finding(&r, "throughput");
    assert!(throughput["runs"].as_u64().unwrap() <= 2, "{throughput}");
    // Where the noise is: each contender's starts, three windows of 2 s each.
    let windows = r["windows"].as_array().expect("results.json has windows");
    assert!(!windows.is_empty(), "{err}");
    for w in windows {
        assert_eq!(w["windows"], 3, "{w}");
        assert_eq!(w["window_s"], 2, "{w}");
        assert_eq!(w["starts"], 2, "{w}");
        let best = w["best_windows"].as_u64().unwrap();
        assert!((1..=10).contains(&best), "{w}");
    }
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("where the noise is:"), "{table}");
}
