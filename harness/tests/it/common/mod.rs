//! Helpers shared by the integration tests: the built binary, free ports, child processes.

#![allow(dead_code)]

pub mod machine;
pub mod sources;

pub use machine::{alone, beside_others, Resource};

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_iobound")
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("harness/ has a parent")
        .to_path_buf()
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Kills the child when dropped, so a failing assertion leaves no server behind.
pub struct Guard(pub Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the built-in test server and waits until it accepts connections.
pub fn serve(extra: &[&str]) -> (Guard, u16) {
    let port = free_port();
    let child = Command::new(exe())
        .args(["serve", "--port", &port.to_string()])
        .args(extra)
        .stderr(Stdio::null())
        .spawn()
        .expect("start iobound serve");
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "iobound serve did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    (Guard(child), port)
}

pub fn run(args: &[&str]) -> Output {
    Command::new(exe())
        .args(args)
        .env("IOBOUND_HOME", repo_root())
        .output()
        .expect("run iobound")
}

pub fn json(out: &Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "iobound failed: {}\n{}",
        text,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// Adds contender `name` under `home`/contenders, started as `argv` (TOML array items, with
/// {port}), so that a test can run plans against servers of its own.
pub fn add_fake_contender(home: &std::path::Path, name: &str, argv: &str, what: &str) {
    let dir = home.join("contenders").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(home.join("contract")).unwrap();
    std::fs::write(dir.join("server"), "").unwrap();
    std::fs::write(
        dir.join("contender.toml"),
        format!(
            r#"name = "{name}"
model = "event-loop"
language = "rust"
framework = "iobound serve, {what}"
config = "test double"
build = {{ toolchain = "none" }}
artifact = "server"
start = [{argv}]
ready = "/plaintext"
"#
        ),
    )
    .unwrap();
}

pub fn results_dir(out: &Path) -> PathBuf {
    let dirs: Vec<_> = std::fs::read_dir(out)
        .expect("results parent exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(
        dirs.len(),
        1,
        "one results directory expected in {}",
        out.display()
    );
    dirs[0].clone()
}

pub fn load_results(dir: &Path) -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(dir.join("results.json")).expect("results.json exists"),
    )
    .expect("results.json is JSON")
}

/// The first scenario's stored finding on `metric` (its first pair's), from results.json.
pub fn first_finding(results: &serde_json::Value, metric: &str) -> serde_json::Value {
    results["verdicts"][0]["findings"]
        .as_array()
        .expect("results.json has verdicts")
        .iter()
        .find(|f| f["metric"] == metric)
        .unwrap_or_else(|| panic!("no finding on {metric}"))
        .clone()
}

/// Two contenders of `iobound serve` in `home`: "slow", eight workers (at a 20 ms wait, 400
/// requests a second), and "fast", unbounded.
pub fn add_slow_and_fast(home: &Path) {
    let serve = |extra: &str| format!(r#""{}", "serve", "--port", "{{port}}"{extra}"#, exe());
    add_fake_contender(
        home,
        "slow",
        &serve(r#", "--workers", "8""#),
        "eight workers",
    );
    add_fake_contender(home, "fast", &serve(""), "unbounded");
}

/// Processes whose command line contains `needle` (other than this test).
pub fn processes_with(needle: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                String::from_utf8_lossy(&c)
                    .replace('\0', " ")
                    .contains(needle)
            })
        })
        .collect()
}

/// Sends Ctrl-C (SIGINT) to `child` and waits for it to exit, failing after `limit`.
pub fn interrupt_and_wait(
    child: &mut std::process::Child,
    limit: Duration,
    phase: &str,
) -> std::process::ExitStatus {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(
            t0.elapsed() < limit,
            "{phase}: not stopped within {limit:?} of Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Looks with `look` every 50 ms until what it sees is `done`, or `limit` has passed, and
/// returns what it saw last, for the caller's assertion: what a test waits for (a process
/// reaped, a server listening, a host cleaned up) is looked for until it happens rather than
/// once after a guessed pause.
pub fn until<T>(limit: Duration, mut look: impl FnMut() -> T, done: impl Fn(&T) -> bool) -> T {
    let t0 = Instant::now();
    loop {
        let seen = look();
        if done(&seen) || t0.elapsed() > limit {
            return seen;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What `left` finds once it finds nothing, or after `limit` what it still finds: a stopped
/// run's processes take a moment to be reaped.
pub fn left_after(limit: Duration, left: impl Fn() -> Vec<i32>) -> Vec<i32> {
    until(limit, left, Vec::is_empty)
}

/// Processes whose working directory is inside `dir` (contenders run in their own folder).
pub fn processes_in(dir: &Path) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c.starts_with(dir))
        })
        .collect()
}

/// A contender folder whose server is iobound's own test server, killed by `timeout` after
/// `lifetime` seconds: it passes the contract, then crashes mid-run.
pub fn crashing_contender_home(lifetime: u32) -> tempfile::TempDir {
    fake_contender_home(
        &format!(
            r#""timeout", "{lifetime}", "{}", "serve", "--port", "{{port}}""#,
            exe()
        ),
        &format!("killed after {lifetime} s"),
    )
}

/// A contender folder named "crasher" whose start command is `argv` (TOML array items).
pub fn fake_contender_home(argv: &str, what: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    add_fake_contender(home.path(), "crasher", argv, what);
    home
}

/// A plan of one pipeline scenario at 200 records/s on 2 partitions, written into `dir`.
pub fn pipeline_plan(dir: &Path, contender: &str, warmup: &str, duration: &str) -> PathBuf {
    let plan = dir.join("plan.toml");
    let text = format!(
        "contenders = [\"{contender}\"]\nruns = 1\nwarmup = \"{warmup}\"\n[kafka]\npartitions = 2\n[[scenario]]\nname = \"records\"\npipeline = true\n[scenario.load]\nmodel = \"open\"\nrate = 200\nduration = \"{duration}\"\n"
    );
    std::fs::write(&plan, text).unwrap();
    plan
}

/// A test's prerequisite is missing: under ./iobound test (IOBOUND_STRICT set) that fails the
/// test, so nothing passes unchecked there; under a plain `cargo test` it is printed as
/// SKIPPED with what to install.
pub fn missing_prerequisite(what: &str) {
    assert!(
        std::env::var_os("IOBOUND_STRICT").is_none(),
        "missing prerequisite: {what}"
    );
    eprintln!("SKIPPED: missing prerequisite: {what}");
}

/// Minutes from a results file's start to its end (pages::quote::minutes, which the
/// rendered `minutes` figure uses).
pub fn minutes_of_runs(r: &iobound::results::record::Results) -> f64 {
    iobound::pages::quote::minutes(r).expect("the plan has a start and an end")
}

/// A plan of two scenarios for a server of one's own (`run --plan FILE --url`): a closed
/// `users` waiting 5 ms each, and an open `rate` of /plaintext with a p99 threshold of 200 ms;
/// each `duration` long, after `warmup`, `runs` times.
pub fn two_scenario_plan(runs: u32, warmup: &str, users: u32, rate: u32, duration: &str) -> String {
    format!(
        r#"name = "two"
contenders = ["spring-mvc"]
warmup = "{warmup}"
runs = {runs}

[[scenario]]
name = "wait-5ms"
path = "/delay?ms=5"
[scenario.load]
model = "closed"
users = {users}
duration = "{duration}"

[[scenario]]
name = "plain-open"
path = "/plaintext"
[scenario.load]
model = "open"
rate = {rate}
duration = "{duration}"
[scenario.thresholds]
p99 = "200ms"
"#
    )
}

/// Waits (up to 60 s) until the harness `child` has its server answering on `port` and a
/// process named `worker` running, with `also` holding too; fails if the harness ends first.
pub fn until_server_and_worker_run(
    child: &mut Child,
    port: u16,
    worker: &str,
    also: impl Fn() -> bool,
) {
    let (ready, ended) = until(
        Duration::from_secs(60),
        || {
            let up = TcpStream::connect(("127.0.0.1", port)).is_ok()
                && !processes_with(worker).is_empty()
                && also();
            (up, child.try_wait().unwrap().is_some())
        },
        |(up, ended)| *up || *ended,
    );
    assert!(ready && !ended, "the server and its worker never came up");
}

/// Kills the harness `child` outright (SIGKILL) and checks that its server (`serve --port
/// PORT`) died with it (PDEATHSIG). What else is left is the caller's to check.
pub fn kill_harness_outright(child: &mut Child, port: u16) {
    // SAFETY: a signal to the child the calling test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    let server = format!("serve --port {port}");
    assert!(
        left_after(Duration::from_secs(10), || processes_with(&server)).is_empty(),
        "the server's leader died with the harness"
    );
}
