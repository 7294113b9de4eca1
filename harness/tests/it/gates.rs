//! Thresholds and regression gates end to end: a run that breaks a threshold exits 4 and says
//! which; `compare --fail-if` fails on a seeded regression and passes a rerun of the same
//! configuration; both write JUnit XML.

use crate::common::{alone, exe, free_port, load_results, results_dir, run, serve};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

// The tests here drive real load on the driver's CPU, and iobound rightly calls a probe
// driver-limited when that CPU is saturated (every process counts): each takes `alone()`, so
// that no test's load is another's saturated CPU.

#[test]
#[ignore = "needs the machine to itself; run by ./iobound test"]
fn a_broken_threshold_exits_4_and_says_which_and_by_how_much() {
    let _machine = alone();
    let (_server, port) = serve(&[]);
    let out = tempfile::tempdir().unwrap();
    let junit = out.path().join("thresholds.xml");
    let url = format!("http://127.0.0.1:{port}/delay?ms=20");
    let o = run(&[
        "run",
        "--url",
        &url,
        "--users",
        "4",
        "--duration",
        "2s",
        "--out",
        out.path().join("r").to_str().unwrap(),
        "--threshold",
        "p99<=5s",
        "--threshold",
        "p50<=5ms",
        "--junit",
        junit.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(4),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("thresholds: 2 checked, 1 broken"),
        "{stdout}"
    );
    // Every request waits 20 ms, so p50 is past 5 ms by 300% or more.
    let line = stdout
        .lines()
        .find(|l| l.contains("p50 is"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        line.contains("limit p50 <= 5 ms") && line.contains("% beyond"),
        "{line}"
    );
    let r = load_results(&results_dir(&out.path().join("r")));
    let checks = r["thresholds"].as_array().expect("thresholds recorded");
    assert_eq!(checks.len(), 2);
    let p50 = checks.iter().find(|c| c["metric"] == "p50").unwrap();
    assert_eq!(p50["passed"], false);
    assert!(
        p50["value"].as_f64().unwrap() >= 20.0 && p50["beyond_pct"].as_f64().unwrap() >= 300.0,
        "{p50}"
    );
    assert_eq!(
        checks.iter().find(|c| c["metric"] == "p99").unwrap()["passed"],
        true
    );
    let x = std::fs::read_to_string(&junit).unwrap();
    assert!(x.contains("tests=\"2\" failures=\"1\""), "{x}");
    let md = std::fs::read_to_string(results_dir(&out.path().join("r")).join("report.md")).unwrap();
    assert!(
        md.contains("## Thresholds") && md.contains("**broken**"),
        "{md}"
    );
    // A threshold that does not parse is refused before anything starts.
    let o = run(&[
        "run",
        "--url",
        &url,
        "--threshold",
        "p99<=soon",
        "--out",
        out.path().join("bad").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--threshold \"p99<=soon\""),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!out.path().join("bad").exists(), "nothing started");
}

/// The downstream service as the server under test: its latency is what the "change" alters.
struct Downstream(std::process::Child, u16);

impl Downstream {
    fn start(latency: &str) -> Downstream {
        let port = free_port();
        let child = Command::new(exe())
            .args([
                "downstream",
                "--port",
                &port.to_string(),
                "--latency",
                latency,
            ])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "downstream did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Downstream(child, port)
    }

    /// Four 1 s runs (the fewest a difference can be tested with) into `out`.
    fn measure(&self, out: &std::path::Path) -> std::path::PathBuf {
        let url = format!("http://127.0.0.1:{}/value?key=1", self.1);
        let o = run(&[
            "run",
            "--url",
            &url,
            "--users",
            "4",
            "--duration",
            "1s",
            "--runs",
            "4",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        results_dir(out)
    }
}

impl Drop for Downstream {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
#[ignore = "needs the machine to itself; run by ./iobound test"]
fn compare_fail_if_fails_on_a_seeded_regression_and_passes_a_rerun() {
    let _machine = alone();
    let out = tempfile::tempdir().unwrap();
    let (before, rerun, slower) = {
        let fast = Downstream::start("fixed:5ms");
        let a = fast.measure(&out.path().join("before"));
        let b = fast.measure(&out.path().join("rerun"));
        let slow = Downstream::start("fixed:20ms");
        (a, b, slow.measure(&out.path().join("slower")))
    };
    let junit = out.path().join("gates.xml");
    let gate = |b: &std::path::Path, junit: Option<&std::path::Path>| {
        let mut args = vec![
            "compare".to_string(),
            before.display().to_string(),
            b.display().to_string(),
            "--fail-if".into(),
            "p50 > +10%".into(),
            "--fail-if".into(),
            "throughput < -5%".into(),
        ];
        if let Some(j) = junit {
            args.extend(["--junit".to_string(), j.display().to_string()]);
        }
        run(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let o = gate(&slower, Some(&junit));
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(4), "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("FAIL")
            && l.contains("p50 > +10%")
            && l.contains("significant")),
        "{text}"
    );
    let x = std::fs::read_to_string(&junit).unwrap();
    assert!(
        x.contains("<failure message=") && x.contains("tests=\"2\""),
        "{x}"
    );
    let o = gate(&rerun, None);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "a rerun of the same configuration passes:\n{text}"
    );
    assert!(text.contains("gates: 2 checked, 0 failed"), "{text}");
    let o = run(&[
        "compare",
        before.to_str().unwrap(),
        rerun.to_str().unwrap(),
        "--fail-if",
        "p50 up 10%",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--fail-if 'p99 > +10%'"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A server of known capacity: 4 workers, each request holding one for 50 ms, so at most
/// 4 / 0.05 s = 80 requests per second (Little's law). The search must find it within its
/// precision: the last passing rate within 15% below and 10% above 80, the failing rate above
/// it within the stated 10%. It starts at 60 req/s, below the capacity, so that it steps up
/// once and then bisects: five probes or so, not the eight a start at 20 takes.
#[test]
#[ignore = "needs the machine to itself; run by ./iobound test"]
fn capacity_search_finds_a_known_capacity_within_its_precision() {
    let _machine = alone();
    let (_server, port) = serve(&["--workers", "4"]);
    let out = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/delay?ms=50");
    let o = run(&[
        "capacity",
        "--url",
        &url,
        "--slo",
        "p99<=200ms",
        "--slo",
        "errors<=1%",
        "--rate",
        "60",
        "--duration",
        "4s",
        "--precision",
        "10%",
        "--repeats",
        "1",
        "--max-rate",
        "1000",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r = load_results(&results_dir(out.path()));
    let c = &r["capacity"][0];
    let (lo, hi) = (
        c["capacity_rps"]
            .as_f64()
            .unwrap_or_else(|| panic!("the search found no capacity: {c}")),
        c["failed_rps"]
            .as_f64()
            .unwrap_or_else(|| panic!("the search found no failing rate: {c}")),
    );
    assert!(
        (68.0..=88.0).contains(&lo),
        "capacity {lo} for a true 80 req/s: {c}"
    );
    assert!(hi > lo && (hi - lo) / lo <= 0.10 + 1e-9, "{lo}..{hi}");
    assert_eq!(c["broke_first"], "latency", "{c}");
    // Every probe is kept as a run, and the report draws and tabulates them.
    let probes = r["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["probe"].is_object())
        .count();
    assert_eq!(probes as u64, c["probes"].as_u64().unwrap());
    let dir = results_dir(out.path());
    assert!(
        dir.join("charts/root-capacity.png").exists()
            || std::fs::read_dir(dir.join("charts"))
                .unwrap()
                .flatten()
                .any(|e| e.file_name().to_string_lossy().ends_with("-capacity.png"))
    );
    assert!(stdout.contains("capacity of"), "{stdout}");
}

#[test]
#[ignore = "needs the machine to itself; run by ./iobound test"]
fn a_server_that_never_meets_the_slo_has_no_capacity_number() {
    let _machine = alone();
    let (_server, port) = serve(&[]);
    let out = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/delay?ms=300");
    let o = run(&[
        "capacity",
        "--url",
        &url,
        "--slo",
        "p99<=100ms",
        "--rate",
        "10",
        "--duration",
        "2s",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = load_results(&results_dir(out.path()));
    let c = &r["capacity"][0];
    assert!(c["capacity_rps"].is_null(), "{c}");
    assert!(
        c["verdict"]
            .as_str()
            .unwrap()
            .starts_with("below the lowest rate tried (10 req/s)"),
        "{c}"
    );
    let md = std::fs::read_to_string(results_dir(out.path()).join("report.md")).unwrap();
    assert!(md.contains("| < 10 |"), "{md}");
}
