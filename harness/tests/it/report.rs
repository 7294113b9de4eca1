//! Reports from a real (short) plan on two instances of the built-in server: every output is
//! written, rebuilt identically from results.json, compared, and checked in headless Chromium
//! when it is installed (required when IOBOUND_REQUIRE_CHROMIUM=1, as in CI).

use crate::common;

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const PLAN: &str = r#"name = "report-test"
description = "two built-in servers, two runs, two levels of users"
contenders = ["one", "two"]
runs = 2
warmup = "0s"
# Each run's contract check waits out this timeout in its stall cases (2 s by default).
[downstream]
timeout = "300ms"
[[scenario]]
name = "steps"
path = "/delay?ms=5"
[scenario.load]
model = "closed"
users = 4
step_users = 4
steps = 1
step_duration = "2s"
"#;

/// Runs the plan once for the whole file; returns the results directory. It is kept under the
/// build's own temporary directory, made afresh by each test process: a static is never
/// dropped, so a temporary directory held by one would stay in /tmp after every test run.
fn measured() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let home = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-test");
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(&home).unwrap();
        let argv = format!(r#""{}", "serve", "--port", "{{port}}""#, exe());
        add_fake_contender(&home, "one", &argv, "first");
        add_fake_contender(&home, "two", &argv, "second");
        let plan = home.join("plan.toml");
        std::fs::write(&plan, PLAN).unwrap();
        let out = home.join("results");
        let o = Command::new(exe())
            .args([
                "run",
                "--plan",
                plan.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ])
            .env("IOBOUND_HOME", &home)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "run failed:\n{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        std::fs::read_dir(&out)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path()
    })
}

fn read(dir: &Path, f: &str) -> String {
    std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"))
}

#[test]
fn a_plan_writes_every_output_and_report_rebuilds_them() {
    let dir = measured();
    let md = read(dir, "report.md");
    assert!(md.contains("# iobound report: report-test"), "{md}");
    let tput = md
        .lines()
        .find(|l| l.starts_with("| throughput (req/s) |"))
        .unwrap_or_else(|| panic!("{md}"));
    // Two runs each: a median with the runs' range, and a difference against "one".
    assert!(
        tput.matches('[').count() == 2 && tput.contains("%"),
        "{tput}"
    );
    assert!(md.contains("median of 2 runs; interval: the runs' min..max, a 50% confidence interval for the median; differences not tested"), "{md}");
    // Gatling's OK/KO counts, over both runs.
    let ok = md
        .lines()
        .find(|l| l.starts_with("| OK (all runs) |"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        ok.split('|')
            .filter_map(|c| c.trim().replace(',', "").parse::<u64>().ok())
            .all(|n| n > 1000),
        "{ok}"
    );
    assert!(md.contains("| KO (all runs) | 0 | 0 |"), "{md}");
    assert!(
        md.contains("![steps-throughput.png](charts/steps-throughput.png)"),
        "{md}"
    );
    for png in [
        "throughput",
        "latency",
        "percentiles",
        "scaling",
        "threads",
        "rss",
    ] {
        let bytes = std::fs::read(dir.join(format!("charts/steps-{png}.png")))
            .unwrap_or_else(|e| panic!("{png}: {e}"));
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{png}");
    }
    let csv = read(dir, "intervals.csv");
    assert!(csv.starts_with("scenario,contender,run,status,t_s,target,ok,errors,p50_ms"));
    // 2 contenders x 2 runs x 4 measured seconds, plus drain seconds.
    assert!(
        csv.lines()
            .filter(|l| l.starts_with("steps,one,") || l.starts_with("steps,two,"))
            .count()
            >= 16,
        "{csv}"
    );
    assert!(
        csv.lines().any(|l| l.starts_with("steps,two,2,Ok,3,8,")),
        "target 8 users in second 3 of run 2: {csv}"
    );
    let res = read(dir, "resources.csv");
    assert!(
        res.lines().count() > 20 && res.lines().nth(1).unwrap().starts_with("steps,one,1,"),
        "{res}"
    );
    let html = read(dir, "report.html");
    assert!(html.len() < 400_000, "report.html is {} bytes", html.len());
    assert!(
        !html.contains("src=\"http") && !html.contains("href=\"http"),
        "self-contained: nothing loaded from the network"
    );
    for id in [
        "steps-throughput",
        "steps-latency",
        "steps-percentiles",
        "steps-load",
        "steps-errors",
        "steps-scaling",
        "steps-threads",
        "steps-rss",
        "steps-cpu",
        "steps-ctx",
        "steps-sockets",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "chart {id} missing");
    }
    assert!(
        html.contains("Little&#39;s law") || html.contains("Little's law"),
        "the scaling chart has the Little's law line"
    );

    // `iobound report` rebuilds the same outputs from results.json (and the interval logs it
    // names), here in a copy holding nothing else.
    let copy = tempfile::tempdir().unwrap();
    std::fs::copy(dir.join("results.json"), copy.path().join("results.json")).unwrap();
    std::fs::create_dir(copy.path().join("histograms")).unwrap();
    for e in std::fs::read_dir(dir.join("histograms")).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(
            &p,
            copy.path().join("histograms").join(p.file_name().unwrap()),
        )
        .unwrap();
    }
    let o = Command::new(exe())
        .args(["report", copy.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("throughput (req/s)"));
    for f in [
        "report.md",
        "intervals.csv",
        "resources.csv",
        "report.html",
        "summary.txt",
        "charts/steps-throughput.png",
        "charts/steps-rss.png",
    ] {
        assert!(
            std::fs::read(dir.join(f)).unwrap() == std::fs::read(copy.path().join(f)).unwrap(),
            "{f} differs when rebuilt"
        );
    }
}

#[test]
fn compare_calls_a_set_against_itself_the_same() {
    let dir = measured();
    let o = Command::new(exe())
        .args([
            "compare",
            dir.to_str().unwrap(),
            dir.join("results.json").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("steps / one") && out.contains("steps / two"),
        "{out}"
    );
    let tput: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("throughput (req/s)"))
        .collect();
    assert_eq!(tput.len(), 2, "{out}");
    // Two runs a side: the change is not tested (let alone called "same").
    assert!(tput.iter().all(|l| l.contains("+0.0% not tested")), "{out}");
}

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

const HEADLESS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--hide-scrollbars",
];

#[test]
fn report_renders_in_headless_chromium() {
    let Some(browser) = chromium() else {
        assert!(std::env::var("IOBOUND_REQUIRE_CHROMIUM").is_err(), "IOBOUND_REQUIRE_CHROMIUM is set but no chromium is installed (apt-get install chromium)");
        common::missing_prerequisite("chromium, to render report.html (apt-get install chromium)");
        return;
    };
    let dir = measured();
    let url = format!("file://{}", dir.join("report.html").display());
    let profile = tempfile::tempdir().unwrap();
    let user_dir = format!("--user-data-dir={}", profile.path().display());
    let o = Command::new(browser)
        .args(HEADLESS)
        .args([
            &user_dir,
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=3000",
            "--dump-dom",
            &url,
        ])
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&o.stdout);
    let log = String::from_utf8_lossy(&o.stderr);
    let attr = |name: &str| -> Option<usize> {
        let at = dom.find(&format!("{name}=\""))? + name.len() + 2;
        dom[at..].split('"').next()?.parse().ok()
    };
    let (charts, drawn, errors) = (
        attr("data-charts"),
        attr("data-charts-drawn"),
        attr("data-errors"),
    );
    assert!(
        charts.is_some_and(|c| c >= 11),
        "charts {charts:?}; the page script did not run?\n{log}"
    );
    assert_eq!(drawn, charts, "every chart has a non-empty drawing");
    assert_eq!(errors, Some(0), "script errors on the page");
    let console_errors: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("CONSOLE") && (l.contains("Uncaught") || l.contains("Error")))
        .collect();
    assert!(console_errors.is_empty(), "{console_errors:?}");

    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-screenshot.png");
    let _ = std::fs::remove_file(&shot);
    let o = Command::new(browser)
        .args(HEADLESS)
        .args([
            &user_dir,
            "--window-size=1400,2200",
            &format!("--screenshot={}", shot.display()),
            &url,
        ])
        .output()
        .unwrap();
    let png = std::fs::read(&shot).unwrap_or_else(|e| {
        panic!(
            "no screenshot ({e}): {}",
            String::from_utf8_lossy(&o.stderr)
        )
    });
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(
        png.len() > 20_000,
        "a screenshot of a rendered page, not a blank one ({} bytes)",
        png.len()
    );
    eprintln!("screenshot: {}", shot.display());
}
