//! A server iobound did not build, given by --url, measured like a contender: --cmd starts and
//! stops it, --pid samples a running one with its children; --cpus and --memory hold it in a
//! cgroup of its own, as a container would.
//!
//! The tests that put load on the contender CPU take the machine alone: a neighbour's load on
//! the same CPU would starve the server a quota test wants busy. Those that check only a
//! cgroup's making and removal share it.

use crate::common;

use crate::common::{
    alone, beside_others, exe, free_port, load_results, processes_with, results_dir, run, serve,
};
use std::time::Duration;

fn peak(results: &serde_json::Value, key: &str) -> f64 {
    results["runs"][0]["resources"][key].as_f64().unwrap_or(0.0)
}

#[test]
#[ignore = "needs the machine to itself; run by ./iobound test"]
fn a_server_started_with_cmd_is_sampled_and_stopped() {
    let _machine = alone();
    let out = tempfile::tempdir().unwrap();
    let port = free_port();
    let cmd = format!("{} serve --port {port}", exe());
    let args = cmd_run_args(&cmd, port, "4", "2s", out.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run(&args);
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
    let needle = format!("serve --port {port}");
    assert!(
        common::left_after(Duration::from_secs(5), || processes_with(&needle)).is_empty(),
        "the --cmd server was stopped"
    );
}

#[test]
#[ignore = "needs the machine to itself; run by ./iobound test"]
fn a_running_server_given_by_pid_is_sampled() {
    let _machine = alone();
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
#[ignore = "needs the machine to itself; run by ./iobound test"]
fn a_plan_runs_its_scenarios_against_a_server_given_by_url() {
    let _machine = alone();
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

/// Runs iobound with `args`, returning its process id (to find the cgroups it made) and how
/// it ended.
fn run_as_child(args: &[String]) -> (u32, std::process::Output) {
    let child = std::process::Command::new(exe())
        .args(args)
        .env("IOBOUND_HOME", common::repo_root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    (pid, child.wait_with_output().unwrap())
}

/// `run` against `iobound serve SERVE`, started by --cmd on a free port: `users` on
/// /plaintext, a `warmup`, then `duration`, held by `limit` (e.g. `["--cpus", "0.5"]`), results
/// under `out`.
fn limited_run_args(
    serve: &str,
    users: &str,
    warmup: &str,
    duration: &str,
    limit: [&str; 2],
    out: &std::path::Path,
) -> Vec<String> {
    let port = free_port();
    let cmd = format!("{} serve --port {port} {serve}", exe());
    let mut words = cmd_run_args(&cmd, port, users, duration, out);
    words.extend(["--warmup", warmup, limit[0], limit[1]].map(String::from));
    words
}

/// `run` against the server `cmd` starts on `port`: `users` on /plaintext for `duration`.
fn cmd_run_args(
    cmd: &str,
    port: u16,
    users: &str,
    duration: &str,
    out: &std::path::Path,
) -> Vec<String> {
    let words = [
        "run",
        "--url",
        &format!("http://127.0.0.1:{port}/plaintext"),
        "--cmd",
        cmd,
        "--users",
        users,
        "--duration",
        duration,
        "--out",
        out.to_str().unwrap(),
    ];
    words.iter().map(|w| w.to_string()).collect()
}

fn cgroups_left_by(pid: u32) -> Vec<std::path::PathBuf> {
    let layout = iobound::util::cgroup::Layout::detect()
        .expect("limits need the cpu and memory controllers (./iobound test runs as root)");
    iobound::util::cgroup::made_by(&layout, pid)
}

/// A busy server (every request burns CPU) under `--cpus 0.5`: its cgroup's own count says it
/// used at most about half a CPU, throttling is reported, and no cgroup is left.
#[test]
#[ignore = "needs the machine to itself; run by ./iobound test"]
fn a_cpu_quota_holds_a_busy_server_to_it_and_its_throttling_is_reported() {
    let _machine = alone();
    let out = tempfile::tempdir().unwrap();
    let (pid, o) = run_as_child(&limited_run_args(
        "--jit-warmup 600s",
        "16",
        "3s",
        "4s",
        ["--cpus", "0.5"],
        out.path(),
    ));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = load_results(&results_dir(out.path()));
    let run = &r["runs"][0];
    assert_eq!(run["status"], "ok", "{run}");
    assert_eq!(r["plan"]["limits"]["all"]["cpus"], 0.5, "{}", r["plan"]);
    let cg = &run["resources"]["cgroup"];
    assert!(cg["throttled_periods"].as_u64().unwrap() > 0, "{cg}");
    assert!(cg["throttled_pct"].as_f64().unwrap() > 10.0, "{cg}");
    let t: Vec<f64> = run["resources"]["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s.get("cgroup").is_some())
        .map(|s| s["t"].as_f64().unwrap())
        .collect();
    let span = t.last().unwrap() - t.first().unwrap();
    let share = peak(&r, "cpu_s") / span;
    let charts: Vec<String> = std::fs::read_dir(results_dir(out.path()).join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(
        charts.iter().any(|c| c.ends_with("-throttled.png")),
        "no throttling chart beside the latency one: {charts:?}"
    );
    assert!(
        (0.25..=0.55).contains(&share),
        "{share:.2} of a CPU over {span:.1} s"
    );
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("in a cgroup of its own: run 1: throttled in"),
        "{table}"
    );
    let row = table
        .lines()
        .find(|l| l.starts_with("throttled (% of periods)"))
        .unwrap_or_else(|| panic!("no throttled row: {table}"));
    let pct: f64 = row.split_whitespace().last().unwrap().parse().unwrap();
    assert!(pct > 10.0, "{row}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("OOM kills") && l.split_whitespace().last() == Some("0")),
        "{table}"
    );
    assert_eq!(cgroups_left_by(pid), Vec::<std::path::PathBuf>::new());
}

/// A server that leaks under `--memory 64m` is killed by the kernel: the run is a failed run
/// that says so (not a hang or a connection error), and no cgroup is left.
#[test]
#[ignore = "makes cgroups, as root; run by ./iobound test"]
fn a_server_past_its_memory_limit_is_a_failed_run_that_says_oom_killed() {
    let _machine = beside_others(&[]);
    let out = tempfile::tempdir().unwrap();
    let (pid, o) = run_as_child(&limited_run_args(
        "--leak-kb 512",
        "8",
        "3s",
        "4s",
        ["--memory", "64m"],
        out.path(),
    ));
    let r = load_results(&results_dir(out.path()));
    let run = &r["runs"][0];
    assert_eq!(run["status"], "failed", "{run}");
    let why = run["failure"].as_str().unwrap_or_default();
    assert!(
        why.contains("OOM-killed: its memory reached the limit of 64 MB"),
        "{why}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(cgroups_left_by(pid), Vec::<std::path::PathBuf>::new());
}

/// Ctrl-C during a limited run: what was measured is kept, and the cgroup goes with the
/// contender.
#[test]
#[ignore = "makes cgroups, as root; run by ./iobound test"]
fn an_interrupted_limited_run_leaves_no_cgroup() {
    let _machine = beside_others(&[]);
    let out = tempfile::tempdir().unwrap();
    let child = std::process::Command::new(exe())
        .args(limited_run_args(
            "",
            "4",
            "2s",
            "60s",
            ["--cpus", "1"],
            out.path(),
        ))
        .env("IOBOUND_HOME", common::repo_root())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let t0 = std::time::Instant::now();
    while cgroups_left_by(pid).is_empty() {
        assert!(t0.elapsed() < Duration::from_secs(20), "no cgroup made");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(4));
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(40), "{o:?}");
    assert_eq!(cgroups_left_by(pid), Vec::<std::path::PathBuf>::new());
}

/// Without limits the contender still runs in a cgroup of its own where one can be made: its
/// CPU is the cgroup's exact count, no limits note is printed, and a process it forked into a
/// session of its own (out of reach of a process-group kill) is gone when the run ends.
#[test]
#[ignore = "makes cgroups, as root; run by ./iobound test"]
fn an_unlimited_server_runs_in_a_cgroup_that_takes_its_forks_with_it() {
    let _machine = beside_others(&[]);
    let out = tempfile::tempdir().unwrap();
    let port = free_port();
    let marker = format!("sleep 86{port}");
    let cmd = format!("setsid {marker} & exec {} serve --port {port}", exe());
    let args = cmd_run_args(&cmd, port, "4", "2s", out.path());
    let (pid, o) = run_as_child(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = load_results(&results_dir(out.path()));
    let run = &r["runs"][0];
    assert_eq!(run["status"], "ok", "{run}");
    let cg = &run["resources"]["cgroup"];
    assert_eq!(cg["limits"], serde_json::json!({}), "{cg}");
    assert_eq!(cg["throttled_periods"], 0, "{cg}");
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(!table.contains("in a cgroup of its own"), "{table}");
    assert!(!table.contains("throttled (% of periods)"), "{table}");
    assert_eq!(
        common::left_after(Duration::from_secs(5), || processes_with(&marker)),
        Vec::<i32>::new(),
        "the forked {marker} was left"
    );
    assert_eq!(cgroups_left_by(pid), Vec::<std::path::PathBuf>::new());
}

/// The guide's own-server example, two variants of one server as arms (`--arm`), run as the
/// guide writes it, with iobound's test server as `./server` on a free port: the variants
/// alternate in every round, each is a contender of its own, and `--runs auto` goes on until
/// the verdict is decided; the guide's gate fails on it. Eight workers at 20 ms a request
/// serve 400 a second to 32 users, the unbounded server about four times that.
#[test]
fn variants_of_ones_own_server_as_arms_reach_a_verdict() {
    let guide = std::fs::read_to_string(common::repo_root().join("docs/guide.md")).unwrap();
    let example = guide
        .split("```sh\n")
        .filter_map(|block| block.split("```").next())
        .find(|block| block.contains("--arm "))
        .expect("docs/guide.md has an example with --arm")
        .replace("\\\n", " ");
    let port = free_port();
    let out = tempfile::tempdir().unwrap();
    let line = example
        .trim()
        .replace("./iobound", &format!("'{}'", exe()))
        .replace("./server", &format!("{} serve", exe()))
        .replace("8080", &port.to_string());
    // A second gate, on a change it does not reach: passed.
    let script = format!(
        "{line} --fail-if 'p99 > +1000%' --warmup 0s --duration 1s --out '{}'",
        out.path().display()
    );
    let o = std::process::Command::new("sh")
        .args(["-c", &script])
        .env("IOBOUND_HOME", common::repo_root())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    let said = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(4), "{script}\n{err}\n{said}");
    let gate = |tag: &str, rule: &str| {
        said.lines().any(|l| {
            l.starts_with(tag) && l.contains("unbounded -> eight-workers") && l.contains(rule)
        })
    };
    assert!(gate("FAIL", "throughput < -5%"), "{said}");
    assert!(gate("pass", "p99 > +1000%"), "{said}");
    let r = load_results(&results_dir(out.path()));
    let names: Vec<&str> = r["contenders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["unbounded", "eight-workers"]);
    let order: Vec<&str> = r["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["contender"].as_str().unwrap())
        .collect();
    assert!(order.len() >= 4, "{order:?}");
    for (i, name) in order.iter().enumerate() {
        assert_eq!(*name, names[i % 2], "alternating in every round: {order:?}");
    }
    let throughput = common::first_finding(&r, "throughput");
    assert_eq!(throughput["outcome"], "different", "{throughput}");
    assert!(throughput["ratio"].as_f64().unwrap() < 0.5, "{throughput}");
    assert!(
        processes_with(&format!("serve --port {port}")).is_empty(),
        "every variant was stopped"
    );
}

/// `--arm` is checked before anything starts: one arm alone, two of one name, a name that is
/// not plain, and beside `--cmd`.
#[test]
fn arms_of_ones_own_server_are_checked_before_anything_starts() {
    let out = tempfile::tempdir().unwrap();
    let o_ = out.path().to_str().unwrap();
    let url = "http://127.0.0.1:9/";
    for (args, says) in [
        (
            vec!["--arm", "a=./s"],
            "one arm has nothing to be compared with",
        ),
        (
            vec!["--arm", "a=./s", "--arm", "a=./t"],
            "two arms have this name",
        ),
        (
            vec!["--arm", "a b=./s", "--arm", "c=./t"],
            "an arm's name uses only",
        ),
        (vec!["--arm", "a", "--arm", "c=./t"], "give NAME=COMMAND"),
        (
            vec!["--arm", "a=./s", "--arm", "external=./t"],
            "is not \"external\"",
        ),
        (
            vec!["--arm", "a=./s", "--arm", "b= "],
            "the command is empty",
        ),
        (
            vec!["--arm", "a=./s", "--cmd", "./t"],
            "cannot be used with",
        ),
        (
            vec!["--cmd", "./s", "--fail-if", "p99 > +10%"],
            "this run has none",
        ),
        (
            vec!["--arm", "a=./s", "--arm", "b=./t", "--fail-if", "p99 > 10"],
            "--fail-if \"p99 > 10\"",
        ),
    ] {
        let mut all = vec!["run", "--url", url, "--out", o_];
        all.extend(args.iter().copied());
        let o = run(&all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
}

/// The harness killed outright (SIGKILL) while its server has forked a worker that left its
/// process group: the server's leader dies with the harness (PDEATHSIG), the worker stays in the
/// run's cgroup, and the next run that makes a cgroup kills it and removes the dead harness's
/// cgroup (security.md says so).
#[test]
#[ignore = "makes cgroups, as root; run by ./iobound test"]
fn a_killed_harness_leaves_its_forked_worker_to_the_next_run_which_sweeps_it() {
    let _machine = beside_others(&[]);
    let out = tempfile::tempdir().unwrap();
    let port = free_port();
    // A worker in a session of its own (out of the server's process group), named so that it
    // can be found: sleep's argument is this port.
    let worker = format!("sleep 7{port}");
    let cmd = format!("setsid {worker} & exec {} serve --port {port}", exe());
    let mut args = cmd_run_args(&cmd, port, "4", "60s", out.path());
    args.extend(["--memory", "256m"].map(String::from));
    let mut child = std::process::Command::new(exe())
        .args(&args)
        .env("IOBOUND_HOME", common::repo_root())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Until the server answers, its worker runs and its cgroup is made, however long that
    // takes here; then SIGKILL.
    common::until_server_and_worker_run(&mut child, port, &worker, || {
        !cgroups_left_by(pid).is_empty()
    });
    common::kill_harness_outright(&mut child, port);
    assert!(
        !processes_with(&worker).is_empty(),
        "a worker out of the process group outlives a harness killed outright"
    );
    assert!(!cgroups_left_by(pid).is_empty(), "its cgroup is left too");
    // The next run that makes a cgroup sweeps what the dead harness left.
    let next = tempfile::tempdir().unwrap();
    let port2 = free_port();
    let cmd2 = format!("{} serve --port {port2}", exe());
    let o = run(&cmd_run_args(&cmd2, port2, "2", "1s", next.path())
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        common::left_after(Duration::from_secs(10), || processes_with(&worker)).is_empty(),
        "the next run killed the worker"
    );
    assert_eq!(cgroups_left_by(pid), Vec::<std::path::PathBuf>::new());
}
