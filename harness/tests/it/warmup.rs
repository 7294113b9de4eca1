//! Warm-up measured, not guessed: a server that is steady from the start is called settled
//! after the minimum and its warm-up ends there, gracefully (nothing left unanswered); a server
//! whose CPU cost per request falls over its first seconds (a JIT's stand-in) is measured only
//! after the fall has ended.
//!
//! A climb with a flat stretch in it (a plateau) is not measured as steady state: the
//! measured window is judged again after the run. The measured window is a slice of the
//! warm-up's own load, so its first second is answered like the others, even at a 1 s wait.
//!
//! Each test judges a warm-up on this machine, so each takes the machine alone: a neighbour's
//! load ending halfway makes a trend of its own.

use crate::common::{alone, load_results, results_dir, run, serve};

#[test]
#[ignore = "needs the machine to itself; run by ./iobound test"]
fn a_steady_server_settles_after_the_minimum_not_the_maximum() {
    let _machine = alone();
    let (server, port) = serve(&[]);
    let out = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/delay?ms=5");
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
    let r = load_results(&results_dir(out.path()));
    let run = &r["runs"][0];
    let w = &run["warmup"];
    assert_eq!(w["settled"], true, "{w}");
    let secs = w["seconds"].as_f64().unwrap();
    // Settled at or after the minimum and before the maximum, by the record's own clock (the
    // run's wall time adds start-up, which depends on the machine's speed).
    assert!(
        (10.0..40.0).contains(&secs),
        "settled after {secs} s (minimum 10 s, maximum 40 s): {w}"
    );
    assert_eq!(
        (w["min_s"].as_f64(), w["max_s"].as_f64()),
        (Some(10.0), Some(40.0))
    );
    assert_eq!(w["rule"], "trend");
    let warnings = run["driver"]["warnings"].to_string();
    assert!(
        !warnings.contains("warm-up left"),
        "a settled warm-up ends gracefully: {warnings}"
    );
    let md = std::fs::read_to_string(results_dir(out.path()).join("report.md")).unwrap();
    assert!(
        md.contains("Time to steady state (warm-up until throughput, mean latency and CPU"),
        "{md}"
    );
}

#[test]
#[ignore = "needs the machine to itself; run by ./iobound test"]
fn measurement_starts_only_after_a_jit_like_fall_in_cpu_cost_has_ended() {
    let _machine = alone();
    // CPU per request falls from 400 µs to nothing over the server's first 20 s: a 1 ms wait
    // behind it caps the load once the cost is small, so the steady part is not CPU-bound.
    // (CPU-bound, its throughput on this shared virtual machine wandered by a fifth over tens
    // of seconds, and settling took anywhere from 12 to 38 s after the fall.)
    let (server, port) = serve(&["--jit-warmup", "20s"]);
    let out = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/delay?ms=1");
    let o = run(&[
        "run",
        "--url",
        &url,
        "--pid",
        &server.0.id().to_string(),
        "--users",
        "16",
        "--warmup",
        "60s",
        "--duration",
        "20s",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = load_results(&results_dir(out.path()));
    let run = &r["runs"][0];
    let w = &run["warmup"];
    assert_eq!(w["settled"], true, "settles once the fall is over: {w}");
    let secs = w["seconds"].as_f64().unwrap();
    assert!(
        (20.0..45.0).contains(&secs),
        "settled after {secs} s, but the cost fell until 20 s: {w}"
    );
    // The warm-up curve shows the climb: its first seconds well below its last.
    let curve: Vec<f64> = w["curve"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let last = curve[curve.len() - 3..].iter().sum::<f64>() / 3.0;
    assert!(
        curve[1] < 0.6 * last,
        "no climb in the warm-up curve: {curve:?}"
    );
    // Twenty seconds, not three: at this load's few percent of noise a second, a window much
    // shorter is too short to be judged, and is flagged as such. It is long enough here.
    let window = &w["window"];
    assert_eq!(window["needs_s"], serde_json::Value::Null, "{window}");
    // Opened after the fall, the window holds no move of the size the rule is built to see.
    // (Whether it is flagged is not asserted: the rule also flags smaller moves that stand out
    // from the noise, and this shared machine alone moves a flat server's mean latency by 5%
    // over 20 s in some runs.)
    assert_no_move_the_rule_must_see(window);
}

/// The measured window's throughput and mean latency each moved by less than the rule's
/// MOVE_TO_SEE (20%): what a window opened before a climb had ended would show.
fn assert_no_move_the_rule_must_see(window: &serde_json::Value) {
    for (i, figure) in ["throughput", "mean latency"].iter().enumerate() {
        let drift = window["drift_pct"][i]
            .as_f64()
            .unwrap_or_else(|| panic!("{figure} judged: {window}"));
        assert!(drift < 20.0, "{figure} moved {drift}%: {window}");
    }
}

#[test]
#[ignore = "needs the machine to itself; run by ./iobound test"]
fn a_warm_up_that_ends_before_the_fall_is_flagged_not_at_steady_state() {
    let _machine = alone();
    let (server, port) = serve(&["--jit-warmup", "60s"]);
    let out = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/plaintext");
    let o = run(&[
        "run",
        "--url",
        &url,
        "--pid",
        &server.0.id().to_string(),
        "--users",
        "8",
        "--warmup",
        "15s",
        "--duration",
        "2s",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = results_dir(out.path());
    let r = load_results(&dir);
    assert_eq!(r["runs"][0]["warmup"]["settled"], false);
    let warnings = r["runs"][0]["driver"]["warnings"].to_string();
    assert!(warnings.contains("not at steady state"), "{warnings}");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        md.contains("Not at steady state (external): 1 of 1 run(s)"),
        "{md}"
    );
    let table = run(&["table", dir.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&table.stdout).to_string();
    assert!(text.contains("not at steady state"), "{text}");
}

#[test]
#[ignore = "needs the machine to itself; run by ./iobound test"]
fn no_run_is_measured_on_a_plateau_of_the_climb_and_called_steady() {
    let _machine = alone();
    // Cost per request: 400 -> 300 µs over 3 s, flat for 14 s (3..17 s), then falling to
    // nothing by 27 s. The warm-up's rule can settle on the flat stretch (10 s of it); the
    // 12 s window after it then climbs.
    let (server, port) = serve(&["--jit-plateau", "14s"]);
    let out = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/delay?ms=1");
    let o = run(&[
        "run",
        "--url",
        &url,
        "--pid",
        &server.0.id().to_string(),
        "--users",
        "16",
        "--warmup",
        "60s",
        "--duration",
        "12s",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = load_results(&results_dir(out.path()));
    let run = &r["runs"][0];
    let w = &run["warmup"];
    let (settled, secs) = (w["settled"] == true, w["seconds"].as_f64().unwrap());
    let window_steady = w["window"]["steady"]
        .as_bool()
        .expect("the window is judged");
    let warnings = run["driver"]["warnings"].to_string();
    // The window opened before the second fall had ended (27 s): it must not be called steady.
    if secs < 27.0 {
        assert!(
            !window_steady,
            "measured on the plateau and called steady: {w}"
        );
        assert!(
            warnings.contains("the measured window itself still trended"),
            "{warnings}"
        );
    } else {
        assert!(settled, "{w}");
        assert_no_move_the_rule_must_see(&w["window"]);
    }
    // The warm-up's curve ends where the window opened.
    let curve = w["curve"].as_array().unwrap().len() as f64;
    assert!((secs - 2.0..=secs).contains(&curve), "{w}");
}

#[test]
#[ignore = "needs the machine to itself; run by ./iobound test"]
fn the_first_measured_second_is_answered_like_the_others_at_a_one_second_wait() {
    let _machine = alone();
    // 200 users each waiting 1 s: a measured load started afresh would answer nothing in its
    // first second; a window opened inside the warm-up's load answers ~200 in every second.
    let (server, port) = serve(&[]);
    let out = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/delay?ms=1000");
    let o = run(&[
        "run",
        "--url",
        &url,
        "--pid",
        &server.0.id().to_string(),
        "--users",
        "200",
        "--warmup",
        "30s",
        "--duration",
        "5s",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = load_results(&results_dir(out.path()));
    let run = &r["runs"][0];
    assert_eq!(run["warmup"]["settled"], true, "{}", run["warmup"]);
    let ok: Vec<u64> = run["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["drain"] == false)
        .map(|i| i["ok"].as_u64().unwrap())
        .collect();
    assert_eq!(ok.len(), 5, "{ok:?}");
    for (t, n) in ok.iter().enumerate() {
        assert!((180..=220).contains(n), "second {t} answered {n}: {ok:?}");
    }
    let s = &run["summary"];
    let due = s["due"].as_u64().unwrap();
    let ended = s["ok"].as_u64().unwrap() + s["drained"].as_u64().unwrap();
    assert_eq!(due, ended, "every request accounted, none failed: {s}");
    let warnings = run["driver"]["warnings"].to_string();
    assert!(!warnings.contains("accounting"), "{warnings}");
}
