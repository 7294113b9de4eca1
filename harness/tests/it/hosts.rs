//! Beyond one machine, on one machine: network namespaces as hosts, each with an sshd of its
//! own and a key made for the test. A contender namespace runs the built-in server; two load
//! namespaces drive it over SSH. Load goes only to the contender namespace's address, for a
//! few seconds.

use crate::common;
use crate::common::Resource;

use crate::common::{alone, beside_others, exe, load_results, missing_prerequisite, results_dir};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

fn sh(cmd: &str) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .output()
        .expect("run sh")
}

fn must(cmd: &str) -> String {
    let out = sh(cmd);
    assert!(
        out.status.success(),
        "`{cmd}` failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Labs made by this process so far: each gets its own prefix and subnet.
static LABS: AtomicU32 = AtomicU32::new(0);

// A test that judges load (a capacity search, a quota) takes the machine alone: iobound
// (rightly) calls a driver CPU saturated by any process, and a capacity search stops at a
// probe its driver could not offer. The others share the machine, but their namespace hosts
// with no other test (`Resource::NamespaceHosts`): what is left behind is judged by every
// per-run directory in /tmp and each lab's number comes from its process id.

/// Namespaces named `{prefix}-{name}` on a bridge, each with an sshd (scripts/netns-lab);
/// all removed on drop.
struct Lab {
    prefix: String,
    subnet: String,
    names: Vec<&'static str>,
    dir: tempfile::TempDir,
}

fn lab_script() -> String {
    common::repo_root()
        .join("scripts/netns-lab")
        .display()
        .to_string()
}

impl Lab {
    fn address(&self, i: usize) -> String {
        format!("{}.{}", self.subnet, 10 + i)
    }

    fn ns(&self, name: &str) -> String {
        format!("{}-{name}", self.prefix)
    }

    /// Sets up the namespaces, or None (after saying why) when this machine cannot.
    fn new(names: Vec<&'static str>) -> Option<Lab> {
        Lab::with_options(names, "")
    }

    /// The same, with scripts/netns-lab's options (e.g. "--contender-cpus 0").
    fn with_options(names: Vec<&'static str>, options: &str) -> Option<Lab> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            missing_prerequisite("root, to create network namespaces");
            return None;
        }
        for tool in ["ip", "nsenter", "ssh", "ssh-keygen", "/usr/sbin/sshd"] {
            if !sh(&format!("command -v {tool}")).status.success() {
                missing_prerequisite(&format!(
                    "{tool} (apt-get install iproute2 openssh-client openssh-server)"
                ));
                return None;
            }
        }
        // Distinct per lab of this process (and, likely, of other test processes).
        let id = (std::process::id() + 101 * LABS.fetch_add(1, Ordering::SeqCst)) % 200;
        let lab = Lab {
            prefix: format!("iobt{id}"),
            subnet: format!("10.231.{id}"),
            names,
            dir: tempfile::tempdir().unwrap(),
        };
        // A test process killed with SIGKILL never drops its lab: the next one takes such labs
        // down, and ties its own to this process so that the one after it can.
        must(&format!("{} prune", lab_script()));
        must(&format!(
            "{} up {} {} {} {} --owner {} {options}",
            lab_script(),
            lab.dir.path().display(),
            lab.prefix,
            lab.subnet,
            lab.names.join(" "),
            std::process::id()
        ));
        Some(lab)
    }

    fn inventory(&self) -> PathBuf {
        self.dir.path().join("hosts.toml")
    }

    /// No process of a run is left on a load host, and no per-run directory.
    fn assert_nothing_left(&self, dirs_before: &[PathBuf]) {
        self.assert_nothing_left_on(&self.names[1..], dirs_before);
    }

    /// No process of a run is left on the hosts `names`, and no per-run directory, once the
    /// controller has exited: the last SSH sessions close a moment after it, so the hosts are
    /// looked at until they are clean or 10 s have passed, not once after a guessed pause.
    fn assert_nothing_left_on(&self, names: &[&str], dirs_before: &[PathBuf]) {
        let look = || {
            let strays: Vec<(&str, Vec<String>)> = names
                .iter()
                .map(|n| (*n, self.strays(n)))
                .filter(|(_, s)| !s.is_empty())
                .collect();
            (strays, remote_dirs())
        };
        let (strays, dirs) = common::until(Duration::from_secs(10), look, |(s, d)| {
            s.is_empty() && d == dirs_before
        });
        assert!(strays.is_empty(), "left after 10 s: {strays:?}");
        assert_eq!(dirs, dirs_before, "the per-run directories are removed");
    }

    /// Processes in namespace `name` other than its sshd.
    fn strays(&self, name: &str) -> Vec<String> {
        let pids = sh(&format!("ip netns pids {}", self.ns(name)));
        String::from_utf8_lossy(&pids.stdout)
            .split_whitespace()
            .filter_map(|pid| {
                let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
                let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
                (!cmd.contains("sshd")).then(|| format!("{pid}: {cmd}"))
            })
            .collect()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        sh(&format!(
            "{} down {} {}",
            lab_script(),
            self.prefix,
            self.names.join(" ")
        ));
    }
}

/// The built-in server in the contender namespace, killed on drop.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server(lab: &Lab) -> (Server, String) {
    let child = Command::new("ip")
        .args([
            "netns",
            "exec",
            &lab.ns(lab.names[0]),
            exe(),
            "serve",
            "--port",
            "8080",
            "--address",
            &lab.address(0),
        ])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://{}:8080", lab.address(0));
    let listening = || {
        sh(&format!(
            "ip netns exec {} bash -c '</dev/tcp/{}/8080' 2>/dev/null",
            lab.ns(lab.names[1]),
            lab.address(0)
        ))
        .status
        .success()
    };
    assert!(
        common::until(Duration::from_secs(10), listening, |up| *up),
        "the server did not start"
    );
    (Server(child), url)
}

fn remote_dirs() -> Vec<PathBuf> {
    std::fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("iobound-run."))
        })
        .collect()
}

fn run_args(inv: &Path, url: &str, out: &Path, duration: &str) -> Vec<String> {
    [
        "run",
        "--hosts",
        &inv.display().to_string(),
        "--url",
        &format!("{url}/delay?ms=5"),
        "--users",
        "9",
        "--duration",
        duration,
        "--out",
        &out.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn counts(run: &serde_json::Value) -> (u64, u64, u64, u64) {
    let s = &run["summary"];
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    (
        n(&s["ok"]) + n(&s["drained"]),
        n(&s["errors"]["connect"])
            + n(&s["errors"]["timeout"])
            + n(&s["errors"]["status"])
            + n(&s["errors"]["io"])
            + n(&s["errors"]["unanswered"]),
        n(&s["errors"]["cut"]),
        n(&s["due"]),
    )
}

#[test]
#[ignore = "needs root, iproute2 and openssh-server; run by ./iobound test"]
fn load_from_two_namespace_hosts_is_merged_accounted_and_cleaned_up() {
    let _machine = beside_others(&[Resource::NamespaceHosts]);
    let Some(lab) = Lab::new(vec!["app", "lg1", "lg2"]) else {
        return;
    };
    let inv = lab.inventory();
    let before = remote_dirs();

    // hosts check: every host reachable, its clock within a fraction of a millisecond.
    let check = Command::new(exe())
        .args(["hosts", "check", &inv.display().to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(
        check.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert!(text.contains("3 of 3 hosts ready"), "{text}");
    assert!(text.contains("lg2 (root@"), "{text}");
    assert!(text.contains("clock: "), "{text}");
    // The contender host has the interpreter the Python contenders' environment links to
    // (the namespaces share this machine's files): the check finds it at that path.
    let venv = iobound::remote::check::VenvPython::read(&common::repo_root().join(".cache/python"))
        .expect("./iobound test builds the Python environment first");
    assert!(
        text.contains(&format!(
            "python venv: {} (Python {})",
            venv.path, venv.version
        )),
        "{text}"
    );

    // A URL that is not the contender host's is refused before anything starts.
    let out = tempfile::tempdir().unwrap();
    let wrong = Command::new(exe())
        .args(run_args(
            &inv,
            &format!("http://{}:8080", lab.address(1)),
            out.path(),
            "2s",
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&wrong.stderr);
    assert!(!wrong.status.success());
    assert!(err.contains("is not the contender host's (app,"), "{err}");

    let (_server, url) = start_server(&lab);

    // A run: 9 users split 5 + 4 over the two load hosts, merged.
    let out = tempfile::tempdir().unwrap();
    let run = Command::new(exe())
        .args(run_args(&inv, &url, out.path(), "3s"))
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let res = load_results(&results_dir(out.path()));
    let r = &res["runs"][0];
    let hosts = r["load_hosts"].as_array().expect("load_hosts recorded");
    assert_eq!(hosts.len(), 2, "{hosts:?}");
    assert_eq!(hosts[0]["load"], "5 users");
    assert_eq!(hosts[1]["load"], "4 users");
    let (ok, errors, cut, due) = counts(r);
    assert!(
        ok > 500,
        "at 5 ms a request, 9 users answer > 500 in 3 s: {ok}"
    );
    assert_eq!(ok + errors + cut, due, "ok + errors + cut = due");
    let host_due: u64 = hosts.iter().map(|h| h["due"].as_u64().unwrap()).sum();
    let host_ok: u64 = hosts.iter().map(|h| h["ok"].as_u64().unwrap()).sum();
    assert_eq!(host_due, due, "the run's due is the sum of the hosts'");
    assert_eq!(host_ok, ok, "the merged answers are the sum of the hosts'");
    assert!(hosts.iter().all(|h| h["due"].as_u64().unwrap() > 100));
    assert_eq!(
        res["environment"]["remote_hosts"].as_array().unwrap().len(),
        2
    );
    lab.assert_nothing_left(&before);

    // A load host killed mid-run: what it measured is kept, the rest of its share is cut, the
    // run ends on time.
    let out = tempfile::tempdir().unwrap();
    let mut child = Command::new(exe())
        .args(run_args(&inv, &url, out.path(), "6s"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let agent = common::until(
        Duration::from_secs(20),
        || {
            lab.strays("lg2")
                .into_iter()
                .find(|p| p.contains("agent drive"))
        },
        Option::is_some,
    )
    .expect("no agent started on lg2");
    let agent = agent.split(':').next().unwrap().to_string();
    std::thread::sleep(Duration::from_secs(4)); // 2 s to the common start, then 2 s of load
    must(&format!("kill -9 {agent}"));
    let status = common::until(
        Duration::from_secs(40),
        || child.try_wait().unwrap(),
        Option::is_some,
    )
    .expect("the run hung after losing a host");
    assert!(status.success(), "{status:?}");
    let res = load_results(&results_dir(out.path()));
    let r = &res["runs"][0];
    let lost = &r["load_hosts"][1];
    assert_eq!(lost["host"], "lg2");
    let at = lost["lost_at_s"].as_f64().expect("lg2 is reported lost");
    assert!((1.0..5.0).contains(&at), "lost at {at} s");
    assert!(r["load_hosts"][0]["lost"].is_null());
    let (ok, errors, cut, due) = counts(r);
    assert_eq!(
        ok + errors + cut,
        due,
        "ok + errors + cut = due with a lost host"
    );
    let warnings = r["driver"]["warnings"].to_string();
    assert!(warnings.contains("load host lg2 lost"), "{warnings}");

    // Ctrl-C: the command ends within seconds and nothing of the run remains on any host.
    let out = tempfile::tempdir().unwrap();
    let mut child = Command::new(exe())
        .args(run_args(&inv, &url, out.path(), "30s"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let both_started = || !lab.strays("lg1").is_empty() && !lab.strays("lg2").is_empty();
    assert!(
        common::until(Duration::from_secs(20), both_started, |b| *b),
        "no agents started"
    );
    std::thread::sleep(Duration::from_secs(3));
    let status = common::interrupt_and_wait(&mut child, Duration::from_secs(15), "remote run");
    assert_eq!(status.code(), Some(130));
    lab.assert_nothing_left(&before);
    let res = load_results(&results_dir(out.path()));
    assert_eq!(res["complete"], false);
}

/// A run whose server iobound starts on the contender host with --cmd.
fn cmd_run(lab: &Lab, out: &Path, duration: &str) -> Command {
    let url = format!("http://{}:8080", lab.address(0));
    let mut args = run_args(&lab.inventory(), &url, out, duration);
    args.push("--cmd".into());
    args.push(format!(
        "\"$IOBOUND_BIN\" serve --address {} --port 8080",
        lab.address(0)
    ));
    let mut c = Command::new(exe());
    c.args(args).stdout(Stdio::null()).stderr(Stdio::piped());
    c
}

/// Waits until a process whose command line holds `what` runs in namespace `name`.
fn wait_for_process(lab: &Lab, name: &str, what: &str) {
    wait_for_process_within(lab, name, what, Duration::from_secs(20));
}

/// The same, waiting up to `limit`.
fn wait_for_process_within(lab: &Lab, name: &str, what: &str, limit: Duration) {
    let started = || lab.strays(name).iter().any(|p| p.contains(what));
    assert!(
        common::until(limit, started, |s| *s),
        "no `{what}` started on {name}"
    );
}

#[test]
#[ignore = "needs root, iproute2 and openssh-server; run by ./iobound test"]
fn a_server_started_on_the_contender_host_is_sampled_there_and_stopped() {
    let _machine = beside_others(&[Resource::NamespaceHosts]);
    let Some(lab) = Lab::with_options(vec!["app", "lg1"], "--contender-cpus 0 --load-cpus 1")
    else {
        return;
    };
    let before = remote_dirs();

    // A run: the server starts in the app namespace, pinned there, and is sampled there.
    let out = tempfile::tempdir().unwrap();
    let run = cmd_run(&lab, out.path(), "3s").output().unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    assert!(
        err.contains("starts there (--cmd) pinned to CPU 0"),
        "{err}"
    );
    let res = load_results(&results_dir(out.path()));
    let r = &res["runs"][0];
    assert_eq!(r["status"], "ok", "{}", r["failure"]);
    let (ok, errors, cut, due) = counts(r);
    assert!(ok > 500, "9 users at 5 ms answer > 500 in 3 s: {ok}");
    assert_eq!(ok + errors + cut, due);
    // The sampler ran in the contender's namespace, not this machine's.
    let app_ns = must(&format!(
        "ip netns exec {} readlink /proc/self/ns/net",
        lab.ns("app")
    ));
    let here = std::fs::read_link("/proc/self/ns/net").unwrap();
    let hosts = res["environment"]["remote_hosts"].as_array().unwrap();
    let contender = hosts
        .iter()
        .find(|h| h["role"] == "contender")
        .expect("the contender host is recorded");
    assert_eq!(contender["net_namespace"], app_ns.trim());
    assert_ne!(app_ns.trim(), here.display().to_string());
    assert_eq!(contender["cpus"], serde_json::json!([0]));
    // Its figures are the server's: the 9 users' connections open at the peak, and its
    // listener.
    let resources = &r["resources"];
    assert!(
        resources["peak_rss_mb"].as_f64().unwrap() > 0.0,
        "{resources}"
    );
    assert!(resources["peak_threads"].as_u64().unwrap() >= 1);
    assert!(
        resources["peak_sockets"].as_u64().unwrap() >= 10,
        "{}",
        resources["peak_sockets"]
    );
    let log = results_dir(out.path()).join("logs/external-run1.log");
    let log = std::fs::read_to_string(&log).expect("the server's log is copied back");
    assert!(log.contains("listening on"), "{log}");
    lab.assert_nothing_left_on(&["app", "lg1"], &before);

    // The server dies mid-run: the run says so and ends without waiting out its duration.
    let out = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let mut child = cmd_run(&lab, out.path(), "20s").spawn().unwrap();
    wait_for_process(&lab, "app", " serve --address");
    std::thread::sleep(Duration::from_secs(4)); // 2 s to the common start, then 2 s of load
    let server = lab
        .strays("app")
        .into_iter()
        .find(|p| p.contains(" serve --address"))
        .expect("the server runs on app");
    must(&format!("kill -9 {}", server.split(':').next().unwrap()));
    let status = child.wait().unwrap();
    assert!(
        t0.elapsed() < Duration::from_secs(18),
        "the run waited out its duration after the server died"
    );
    assert_eq!(status.code(), Some(3), "exit status 3: a contender failed");
    let res = load_results(&results_dir(out.path()));
    let r = &res["runs"][0];
    assert_eq!(r["status"], "failed");
    let failure = r["failure"].as_str().unwrap_or_default();
    assert!(
        failure.contains("the server was lost during the run: killed by signal 9"),
        "{failure}"
    );
    let (ok, errors, cut, due) = counts(r);
    assert_eq!(ok + errors + cut, due, "every request accounted for");
    lab.assert_nothing_left_on(&["app", "lg1"], &before);

    // Ctrl-C: the command ends within seconds and the server is gone from its host.
    let out = tempfile::tempdir().unwrap();
    let mut child = cmd_run(&lab, out.path(), "30s").spawn().unwrap();
    wait_for_process(&lab, "app", " serve --address");
    wait_for_process(&lab, "lg1", "agent drive");
    std::thread::sleep(Duration::from_secs(3));
    let status = common::interrupt_and_wait(&mut child, Duration::from_secs(15), "remote run");
    assert_eq!(status.code(), Some(130));
    lab.assert_nothing_left_on(&["app", "lg1"], &before);
    assert_eq!(load_results(&results_dir(out.path()))["complete"], false);
}

/// A controller that freezes (SIGSTOP: its SSH channels stay open, but nothing more is said
/// or read) leaves nothing on its hosts: the contender host's agent, asked nothing for 30 s,
/// stops the server and removes its directory; the load host's driver, its load over and its
/// input never closed, gives up 30 s after the load's end and removes its own.
#[test]
#[ignore = "needs root, iproute2 and openssh-server; run by ./iobound test"]
fn a_frozen_controller_leaves_nothing_on_its_hosts() {
    let _machine = beside_others(&[Resource::NamespaceHosts]);
    let Some(gone) = controller_signalled(libc::SIGSTOP, "3s") else {
        return;
    };
    // Not the run's own end: the controller never got to say anything.
    assert!(
        gone >= Duration::from_secs(25),
        "gone {gone:?} after the freeze, before any silence limit"
    );
}

/// A controller killed mid-load (SIGKILL: its SSH clients see their input close, and the
/// channels end without a word) leaves nothing on its hosts either, and at once: the agents,
/// their input ended without "stop", stop what they run and remove their directories.
#[test]
#[ignore = "needs root, iproute2 and openssh-server; run by ./iobound test"]
fn a_killed_controller_leaves_nothing_on_its_hosts() {
    let _machine = beside_others(&[Resource::NamespaceHosts]);
    let Some(gone) = controller_signalled(libc::SIGKILL, "60s") else {
        return;
    };
    assert!(
        gone < Duration::from_secs(20),
        "the hosts were clean only {gone:?} after the kill: waited for a silence limit"
    );
}

/// Starts a run from a contender host to a load host, sends the controller `signal` once the
/// load is on, and returns how long it took until nothing of the run was left on either host
/// (failing after 90 s); None where the lab cannot be made (a missing prerequisite, which
/// fails under IOBOUND_STRICT). The controller is killed and its SSH control directory removed.
fn controller_signalled(signal: i32, duration: &str) -> Option<Duration> {
    let lab = Lab::with_options(vec!["app", "lg1"], "--contender-cpus 0 --load-cpus 1")?;
    let before = remote_dirs();
    let out = tempfile::tempdir().unwrap();
    let mut child = cmd_run(&lab, out.path(), duration).spawn().unwrap();
    wait_for_process(&lab, "app", " serve --address");
    wait_for_process(&lab, "lg1", "agent drive");
    std::thread::sleep(Duration::from_secs(1));
    // SAFETY: signals the controller this test started, and nothing else.
    unsafe { libc::kill(child.id() as i32, signal) };
    let signalled = Instant::now();
    let left = || -> Vec<String> {
        let mut left: Vec<String> = ["app", "lg1"].iter().flat_map(|n| lab.strays(n)).collect();
        if remote_dirs() != before {
            left.push(format!("per-run directories {:?}", remote_dirs()));
        }
        left
    };
    let still = common::until(Duration::from_secs(90), left, Vec::is_empty);
    assert!(
        still.is_empty(),
        "still on the hosts {:?} after the controller got signal {signal}: {still:?}",
        signalled.elapsed()
    );
    let gone = signalled.elapsed();
    // SAFETY: as above.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    // What only the controller could remove, killed: its SSH control directory (the next
    // harness to start would sweep it).
    let control = format!("iobound-ssh-{}.", child.id());
    for e in std::fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
        if e.file_name().to_string_lossy().starts_with(&control) {
            std::fs::remove_dir_all(e.path()).unwrap();
        }
    }
    Some(gone)
}

#[test]
#[ignore = "needs root; run by ./iobound test"]
fn a_lab_directory_that_is_not_roots_alone_is_refused() {
    let _machine = beside_others(&[Resource::NamespaceHosts]);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        missing_prerequisite("root, to give a directory to another user");
        return;
    }
    for tool in ["ip", "ssh-keygen", "/usr/sbin/sshd"] {
        if !sh(&format!("command -v {tool}")).status.success() {
            missing_prerequisite(&format!("{tool} (apt-get install iproute2 openssh-server)"));
            return;
        }
    }
    // The lab writes a key that logs in as root into its directory: one another user owns, or
    // anyone can write, would let them swap it.
    let dir = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    for (owner, mode, says) in [
        (65534, 0o700, "belongs to another user"),
        (0, 0o777, "is writable by others"),
    ] {
        std::os::unix::fs::chown(dir.path(), Some(owner), None).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        let out = sh(&format!(
            "{} up {} iobtx 10.231.249 app lg1",
            lab_script(),
            dir.path().display()
        ));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(
            !dir.path().join("client_key").exists(),
            "no key was written"
        );
    }
    std::os::unix::fs::chown(dir.path(), Some(0), None).unwrap();
}

/// The network namespaces on this machine.
fn namespaces() -> String {
    String::from_utf8_lossy(&sh("ip netns list").stdout).into_owned()
}

#[test]
#[ignore = "needs root; run by ./iobound test"]
fn a_lab_whose_owner_was_killed_is_taken_down_by_the_next_prune() {
    let _machine = beside_others(&[Resource::NamespaceHosts]);
    // A lab owned by this test process: pruning leaves it, its owner is alive.
    let Some(alive) = Lab::new(vec!["app"]) else {
        return;
    };
    // A lab owned by a process that is then killed, as a test process killed with SIGKILL
    // (a timeout, the end of a session) leaves its lab with a key that logs in as root.
    let mut owner = Command::new("sleep").arg("600").spawn().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (prefix, subnet) = ("iobtk", "10.231.248");
    must(&format!(
        "{} up {} {prefix} {subnet} app lg1 --owner {}",
        lab_script(),
        dir.path().join("lab").display(),
        owner.id()
    ));
    let keys = PathBuf::from(format!("/run/iobound-netns-{prefix}"));
    assert!(namespaces().contains("iobtk-lg1") && keys.exists());
    owner.kill().unwrap();
    owner.wait().unwrap();
    must(&format!("{} prune", lab_script()));
    let left = namespaces();
    assert!(!left.contains("iobtk-"), "the killed owner's lab: {left}");
    assert!(!keys.exists(), "its authorized key is removed");
    let bridge = sh(&format!("ip link show {prefix}br"));
    assert!(!bridge.status.success(), "its bridge is removed");
    assert!(
        left.contains(&alive.ns("app")),
        "the live owner's lab stays: {left}"
    );
    // A lab cannot be tied to a process that is not running.
    let out = sh(&format!(
        "{} up {} iobtk {subnet} app --owner {}",
        lab_script(),
        dir.path().join("again").display(),
        owner.id()
    ));
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no such process is running"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!namespaces().contains("iobtk-"));
}

#[test]
#[ignore = "needs root; run by ./iobound test"]
fn a_lab_comes_up_again_while_its_last_namespace_is_still_held() {
    let _machine = beside_others(&[Resource::NamespaceHosts]);
    // `ip netns del` removes a namespace's name, but the namespace lives on while anything
    // holds it (a process still on its way out, an open handle) and keeps this side's end of
    // its link: the next lab of that prefix could not make its link again ("RTNETLINK
    // answers: File exists", which failed CI once). A handle held by a process outside the
    // namespace stands for them here: `down` cannot kill it, as it cannot hurry a dying one.
    let Some(lab) = Lab::new(vec!["app", "lg1"]) else {
        return;
    };
    let mut holder = Command::new("sleep")
        .arg("600")
        .stdin(std::fs::File::open(format!("/run/netns/{}", lab.ns("app"))).unwrap())
        .spawn()
        .unwrap();
    let (prefix, subnet) = (lab.prefix.clone(), lab.subnet.clone());
    drop(lab);
    let dir = tempfile::tempdir().unwrap();
    let again = sh(&format!(
        "{} up {} {prefix} {subnet} app lg1",
        lab_script(),
        dir.path().join("again").display()
    ));
    let _ = holder.kill();
    let _ = holder.wait();
    sh(&format!("{} down {prefix} app lg1", lab_script()));
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

#[test]
fn an_inventory_problem_is_reported_before_anything_connects() {
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("hosts");
    std::fs::write(
        &inv,
        "[contender]\napp ansible_host=10.231.250.10\n[load]\nlg1 ansible_host=load-1.example\n",
    )
    .unwrap();
    let out = Command::new(exe())
        .args(["hosts", "check", &inv.display().to_string()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("host lg1: ansible_host \"load-1.example\" is not an IP address"),
        "{err}"
    );
}

/// A run whose server iobound starts on the contender host with --cmd, as `iobound serve
/// SERVE` there, held by `limit` (e.g. `["--cpus", "0.5"]`).
fn limited_cmd_run(lab: &Lab, out: &Path, serve: &str, limit: [&str; 2]) -> Command {
    let url = format!("http://{}:8080", lab.address(0));
    let mut args = run_args(&lab.inventory(), &url, out, "3s");
    args.push("--cmd".into());
    args.push(format!(
        "\"$IOBOUND_BIN\" serve --address {} --port 8080 {serve}",
        lab.address(0)
    ));
    args.extend(["--warmup", "2s", limit[0], limit[1]].map(String::from));
    let mut c = Command::new(exe());
    c.args(args).stdout(Stdio::null()).stderr(Stdio::piped());
    c
}

/// Every cgroup under iobound's folder on this machine, whose namespace hosts share its
/// cgroup hierarchies.
fn iobound_cgroups() -> Vec<PathBuf> {
    let layout = iobound::util::cgroup::Layout::detect()
        .expect("limits need the cpu and memory controllers (./iobound test runs as root)");
    let mut dirs: Vec<PathBuf> = layout
        .roots()
        .iter()
        .filter_map(|r| std::fs::read_dir(r.join(iobound::util::cgroup::PARENT)).ok())
        .flat_map(|entries| entries.flatten().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Limits across hosts: the agent on the contender host holds the server it starts in a
/// cgroup of its own there, under the quota, reads its throttling there and removes the
/// cgroup when the server stops; a server past its memory limit there is a failed run that
/// says it was OOM-killed. A server adopted with --pid cannot be limited: refused at once.
#[test]
#[ignore = "needs root, iproute2 and openssh-server; run by ./iobound test"]
fn limits_hold_a_server_on_the_contender_host_in_a_cgroup_there() {
    let _machine = alone();
    let Some(lab) = Lab::with_options(vec!["app", "lg1"], "--contender-cpus 0 --load-cpus 1")
    else {
        return;
    };
    let before = remote_dirs();
    let cgroups_before = iobound_cgroups();

    let out = tempfile::tempdir().unwrap();
    let run = limited_cmd_run(&lab, out.path(), "--jit-warmup 600s", ["--cpus", "0.5"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    let res = load_results(&results_dir(out.path()));
    let r = &res["runs"][0];
    assert_eq!(r["status"], "ok", "{}", r["failure"]);
    let cg = &r["resources"]["cgroup"];
    assert_eq!(cg["limits"]["cpus"], 0.5, "{cg}");
    assert!(cg["throttled_periods"].as_u64().unwrap() > 0, "{cg}");
    lab.assert_nothing_left_on(&["app", "lg1"], &before);
    assert_eq!(
        iobound_cgroups(),
        cgroups_before,
        "the host's cgroup is removed"
    );

    let out = tempfile::tempdir().unwrap();
    let run = limited_cmd_run(&lab, out.path(), "--leak-kb 512", ["--memory", "64m"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(3), "{err}");
    let res = load_results(&results_dir(out.path()));
    let failure = res["runs"][0]["failure"].as_str().unwrap_or_default();
    assert!(
        failure.contains("OOM-killed: its memory reached the limit of 64 MB"),
        "{failure}\n{err}"
    );
    lab.assert_nothing_left_on(&["app", "lg1"], &before);
    assert_eq!(
        iobound_cgroups(),
        cgroups_before,
        "the host's cgroup is removed"
    );

    let url = format!("http://{}:8080/plaintext", lab.address(0));
    let out = Command::new(exe())
        .args(["run", "--hosts", &lab.inventory().display().to_string()])
        .args(["--url", &url, "--pid", "1", "--users", "1"])
        .args(["--duration", "1s", "--cpus", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("--pid names one already running; give --cmd"),
        "{err}"
    );
}

#[test]
#[ignore = "needs root, iproute2 and openssh-server; run by ./iobound test"]
fn a_plan_and_a_capacity_search_run_across_namespace_hosts() {
    let _machine = alone();
    let Some(lab) = Lab::with_options(
        vec!["app", "lg1", "lg2"],
        "--contender-cpus 0 --load-cpus 1",
    ) else {
        return;
    };
    let before = remote_dirs();
    let inv = lab.inventory().display().to_string();
    let base = format!("http://{}:8080", lab.address(0));
    let server = |extra: &str| {
        format!(
            "\"$IOBOUND_BIN\" serve --address {} --port 8080 {extra}",
            lab.address(0)
        )
    };

    // A plan: each scenario's load split over both hosts, merged, accounted, judged.
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("across.toml");
    std::fs::write(&plan, common::two_scenario_plan(1, "1s", 8, 400, "2s")).unwrap();
    let out = dir.path().join("plan");
    let o = Command::new(exe())
        .args(["run", "--hosts", &inv, "--plan"])
        .arg(&plan)
        .args(["--url", &base, "--cmd", &server(""), "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(table.contains("thresholds: 1 checked, 0 broken"), "{table}");
    let res = load_results(&results_dir(&out));
    let runs = res["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for (r, load) in runs
        .iter()
        .zip([["4 users", "4 users"], ["200.0 req/s", "200.0 req/s"]])
    {
        assert_eq!(r["status"], "ok", "{}", r["failure"]);
        let hosts = r["load_hosts"].as_array().unwrap();
        let shares: Vec<&str> = hosts.iter().map(|h| h["load"].as_str().unwrap()).collect();
        assert_eq!(shares, load);
        let (ok, errors, cut, due) = counts(r);
        let host_due: u64 = hosts.iter().map(|h| h["due"].as_u64().unwrap()).sum();
        assert_eq!(
            (ok + errors + cut, host_due),
            (due, due),
            "{}",
            r["scenario"]
        );
        assert!(r["resources"]["peak_rss_mb"].as_f64().unwrap() > 0.0);
    }
    lab.assert_nothing_left_on(&["app", "lg1", "lg2"], &before);

    // A capacity search: 4 workers each holding a request 50 ms serve at most 80 req/s (from
    // 60 req/s: a step up, then the bisection).
    let out = dir.path().join("capacity");
    let o = Command::new(exe())
        .args(["capacity", "--hosts", &inv, "--url"])
        .arg(format!("{base}/delay?ms=50"))
        .args(["--cmd", &server("--workers 4")])
        .args(["--slo", "p99<=200ms", "--slo", "errors<=1%", "--rate", "60"])
        .args(["--duration", "4s", "--precision", "10%", "--repeats", "1"])
        .args(["--max-rate", "1000", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let res = load_results(&results_dir(&out));
    let c = &res["capacity"][0];
    let lo = c["capacity_rps"].as_f64().unwrap_or_else(|| panic!("{c}"));
    let hi = c["failed_rps"].as_f64().unwrap_or_else(|| panic!("{c}"));
    assert!(
        (68.0..=88.0).contains(&lo),
        "capacity {lo} for a true 80 req/s: {c}"
    );
    assert!(hi > lo && (hi - lo) / lo <= 0.10 + 1e-9, "{lo}..{hi}");
    for probe in res["runs"].as_array().unwrap() {
        let (ok, errors, cut, due) = counts(probe);
        assert_eq!(ok + errors + cut, due);
        assert_eq!(probe["load_hosts"].as_array().unwrap().len(), 2);
    }
    lab.assert_nothing_left_on(&["app", "lg1", "lg2"], &before);
}

/// A plan of iobound's own contenders across hosts: one scenario calling the downstream
/// service, one the database, each `seconds` long after a second of warm-up.
fn deployed_plan(dir: &Path, seconds: u32) -> PathBuf {
    let plan = dir.join("deployed.toml");
    let text = format!(
        r#"name = "deployed"
contenders = ["go"]
runs = 1
warmup = "1s"

# The contract check at each start waits this out once (its stall cases); nothing here
# measures the downstream's timeout.
[downstream]
timeout = "300ms"

[[scenario]]
name = "enrich"
path = "/enrich?key=k{{seq:100}}"
[scenario.load]
model = "closed"
users = 8
duration = "{seconds}s"

[[scenario]]
name = "crud"
mix = [
  {{ weight = 80, method = "GET", path = "/messages/{{seq:1..10000}}" }},
  {{ weight = 20, method = "POST", path = "/messages", body = '{{"text":"{{write}}"}}' }},
]
[scenario.load]
model = "closed"
users = 8
duration = "{seconds}s"
"#
    );
    std::fs::write(&plan, text).unwrap();
    plan
}

/// `iobound run --hosts INV --plan PLAN --out OUT`: iobound's own contenders across hosts.
fn deployed_run(inv: &Path, plan: &Path, out: &Path) -> Command {
    let mut c = Command::new(exe());
    c.arg("run")
        .arg("--hosts")
        .arg(inv)
        .arg("--plan")
        .arg(plan)
        .arg("--out")
        .arg(out);
    c
}

/// iobound's own contender (Go, a self-contained binary) copied to the contender host,
/// started and checked against the contract there; the downstream service and PostgreSQL
/// started on the services host; load from two hosts. The contender's figures come from its
/// namespace, the downstream's counts from the services host, every request is accounted for,
/// every write acknowledged to a load host is found in the database, and nothing of the run
/// stays on any host, after a run and after Ctrl-C.
#[test]
#[ignore = "needs root, iproute2, openssh-server and the built Go contender; run by ./iobound test"]
fn a_built_in_contender_runs_on_its_host_with_its_services_on_another() {
    let _machine = alone();
    if !built(&["contenders/go/target/go-server"]) {
        return;
    }
    let Some(lab) = Lab::with_options(
        vec!["app", "db", "lg1", "lg2"],
        "--contender-cpus 0 --load-cpus 1 --services db",
    ) else {
        return;
    };
    let before = remote_dirs();
    let all = ["app", "db", "lg1", "lg2"];
    let dir = tempfile::tempdir().unwrap();
    let plan = deployed_plan(dir.path(), 2);
    let inv = lab.inventory();
    let out = dir.path().join("out");
    let o = deployed_run(&inv, &plan, &out).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let res = load_results(&results_dir(&out));
    let go = &res["contenders"][0];
    assert_eq!(go["verification"]["passed"], true, "{}", go["verification"]);
    let command = go["command"].as_array().unwrap();
    assert!(
        command.contains(&serde_json::json!(format!("--address={}", lab.address(0)))),
        "it listens on the contender host's address: {command:?}"
    );
    let hosts = res["environment"]["remote_hosts"].as_array().unwrap();
    let role = |r: &str| hosts.iter().find(|h| h["role"] == r).unwrap().clone();
    let app_ns = must(&format!(
        "ip netns exec {} readlink /proc/self/ns/net",
        lab.ns("app")
    ));
    assert_eq!(role("contender")["net_namespace"], app_ns.trim());
    assert_eq!(role("services")["name"], "db");
    let database = res["environment"]["database"].as_str().unwrap();
    assert!(
        database.contains(&format!("{}:", lab.address(1)))
            && database.contains("started by iobound on services host db"),
        "{database}"
    );
    let runs = res["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        assert_eq!(r["status"], "ok", "{}: {}", r["scenario"], r["failure"]);
        let (ok, errors, cut, due) = counts(r);
        let host_due: u64 = r["load_hosts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["due"].as_u64().unwrap())
            .sum();
        assert_eq!(
            (ok + errors + cut, host_due),
            (due, due),
            "{}",
            r["scenario"]
        );
        assert_eq!(errors, 0, "{}", r["summary"]["errors"]);
        assert!(ok > 0, "{}", r["scenario"]);
        assert!(r["resources"]["peak_rss_mb"].as_f64().unwrap() > 0.0);
    }
    // Each /enrich called the downstream service on db once; its counts are read there.
    let enrich = &runs[0];
    let served = enrich["downstream_calls"]["served"].as_u64().unwrap();
    let (ok, _, _, _) = counts(enrich);
    assert!(
        served >= ok && served <= enrich["summary"]["due"].as_u64().unwrap() + 8,
        "downstream served {served} for {ok} answers"
    );
    assert!(
        enrich["resources"]["peak_downstream_conns"]
            .as_u64()
            .unwrap()
            >= 1
    );
    // Every write a load host had answered is in the database on db: each host wrote under a
    // tag of its own and sent back which of its writes were acknowledged.
    let w = &runs[1]["writes"];
    assert!(w["creates_acknowledged"].as_u64().unwrap() > 100, "{w}");
    assert_eq!(w["creates_found"], w["creates_acknowledged"], "{w}");
    assert_eq!(w["lost"], 0, "{w}");
    // Go's collections, read from its output on its host (GODEBUG=gctrace=1): thousands of
    // answers a second collect many times a second (the slow /enrich may not collect at all).
    for r in runs {
        assert_eq!(r["gc"]["source"], "Go gctrace", "{}", r["scenario"]);
    }
    let gc = &runs[1]["gc"];
    assert!(gc["collections"].as_u64().unwrap() > 10, "{gc}");
    let log = std::fs::read_to_string(results_dir(&out).join("logs/go.run1.log")).unwrap();
    assert!(!log.is_empty(), "the contender's log is copied back");
    assert!(results_dir(&out).join("logs/postgres.log").is_file());
    lab.assert_nothing_left_on(&all, &before);

    // A capacity search of the same contender on its host: every probe's load from both load
    // hosts; Go keeps a 50 ms wait's p99 within 200 ms up to the search's maximum. A warm-up of
    // 2 s, not the wait for a steady state (at least 10 s): the search, not the warm-up, is what
    // runs across hosts here.
    let out = dir.path().join("capacity");
    let o = Command::new(exe())
        .args(["capacity", "--hosts"])
        .arg(&inv)
        .args(["-c", "go", "--path", "/delay?ms=50", "--slo", "p99<=200ms"])
        .args(["--rate", "100", "--max-rate", "400", "--duration", "2s"])
        .args(["--warmup", "2s", "--repeats", "1", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let res = load_results(&results_dir(&out));
    assert_eq!(res["contenders"][0]["verification"]["passed"], true);
    let c = &res["capacity"][0];
    assert_eq!(
        (c["capacity_rps"].as_f64(), c["failed_rps"].as_f64()),
        (Some(400.0), None),
        "{c}"
    );
    let probes = res["runs"].as_array().unwrap();
    assert!(probes.len() >= 2, "{c}");
    for probe in probes {
        let (ok, errors, cut, due) = counts(probe);
        assert_eq!(ok + errors + cut, due);
        assert_eq!(probe["load_hosts"].as_array().unwrap().len(), 2);
    }
    lab.assert_nothing_left_on(&all, &before);

    // Ctrl-C while it is measured: every host is left clean within seconds.
    let plan = deployed_plan(dir.path(), 30);
    let out = dir.path().join("interrupted");
    let mut child = deployed_run(&inv, &plan, &out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Services, copying, start-up and the contract first.
    wait_for_process_within(&lab, "lg1", "agent drive", Duration::from_secs(90));
    std::thread::sleep(Duration::from_secs(3));
    assert!(lab.strays("db").iter().any(|p| p.contains("postgres")));
    assert!(lab.strays("app").iter().any(|p| p.contains("go-server")));
    let status = common::interrupt_and_wait(&mut child, Duration::from_secs(20), "deployed run");
    assert_eq!(status.code(), Some(130));
    lab.assert_nothing_left_on(&all, &before);
    assert_eq!(load_results(&results_dir(&out))["complete"], false);
}

/// Whether every one of `paths` (in the repository) has been built; the first missing one is
/// reported as a missing prerequisite.
fn built(paths: &[&str]) -> bool {
    let root = common::repo_root();
    match paths.iter().find(|p| !root.join(p).exists()) {
        Some(p) => {
            missing_prerequisite(&format!("{p} (./iobound build)"));
            false
        }
        None => true,
    }
}

/// A pipeline plan: `rate` records/s for a 2 s warm-up and then for `seconds`.
fn pipeline_plan(dir: &Path, rate: u32, seconds: u32) -> PathBuf {
    let plan = dir.join("pipeline.toml");
    let text = format!(
        r#"name = "pipeline-hosts"
contenders = ["pipeline-virtual"]
runs = 1
warmup = "2s"

[kafka]
partitions = 4

[[scenario]]
name = "records"
pipeline = true
[scenario.load]
model = "open"
rate = {rate}
duration = "{seconds}s"
timeout = "10s"
"#
    );
    std::fs::write(&plan, text).unwrap();
    plan
}

/// A Kafka pipeline across hosts: the broker and the downstream service on the services host,
/// the pipeline (copied there) on the contender host, the records from two load hosts, each
/// with half the rate, its own tag and one common start. Every record sent by either host is
/// looked for in `output`; the run's counts are the sum of the hosts'; nothing of the run stays
/// on any host.
#[test]
#[ignore = "needs root, iproute2, openssh-server, a JDK and the built pipelines; run by ./iobound test"]
fn a_pipeline_runs_with_kafka_on_the_services_host_and_records_from_two_load_hosts() {
    let _machine = beside_others(&[Resource::NamespaceHosts, Resource::BusyCpus]);
    if !built(&[
        "contenders/pipeline/target/pipeline.jar",
        "services/kafka-load/target/kafka-load.jar",
        ".cache/kafka/libs/kafka_2.13-4.4.0.jar",
    ]) {
        return;
    }
    let Some(lab) = Lab::with_options(
        vec!["app", "db", "lg1", "lg2"],
        "--contender-cpus 0 --load-cpus 1 --services db",
    ) else {
        return;
    };
    let before = remote_dirs();
    let dir = tempfile::tempdir().unwrap();
    let plan = pipeline_plan(dir.path(), 200, 4);
    let out = dir.path().join("out");
    let o = deployed_run(&lab.inventory(), &plan, &out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let res = load_results(&results_dir(&out));
    let c = &res["contenders"][0];
    assert_eq!(c["verification"]["passed"], true, "{}", c["verification"]);
    let kafka = res["environment"]["kafka"].as_str().unwrap();
    assert!(
        kafka.contains(&format!("{}:", lab.address(1)))
            && kafka.contains("started by iobound on services host db"),
        "{kafka}"
    );
    let r = &res["runs"][0];
    assert_eq!(r["status"], "ok", "{}", r["failure"]);
    let delivery = &r["delivery"];
    assert_eq!(delivery["sent"], 800, "{delivery}");
    assert_eq!(delivery["lost"], 0, "{delivery}");
    assert_eq!(delivery["received"], 800, "{delivery}");
    // Each load host sent half, under its own name; together they are the run.
    let hosts = r["load_hosts"].as_array().unwrap();
    let names: Vec<&str> = hosts.iter().map(|h| h["host"].as_str().unwrap()).collect();
    assert_eq!(names, ["lg1", "lg2"]);
    for h in hosts {
        assert_eq!(
            (h["due"].as_u64(), h["errors"].as_u64()),
            (Some(400), Some(0)),
            "{h}"
        );
        assert_eq!(h["load"], "100 records/s");
    }
    let ok: u64 = hosts.iter().map(|h| h["ok"].as_u64().unwrap()).sum();
    // The warm-up ran on both hosts in the same schedule just before (its 400 records are not
    // among the 800 above); their seconds were added and judged (too short to be steady).
    let w = &r["warmup"];
    assert_eq!(
        (w["rule"].as_str(), w["settled"].as_bool()),
        (Some("ordered-trend-at-end"), Some(false)),
        "{w}"
    );
    let curve: Vec<f64> = serde_json::from_value(w["curve"].clone()).unwrap();
    let arrived: f64 = curve.iter().sum();
    assert!(
        curve.len() == 2 && arrived > 0.0 && arrived <= 400.0,
        "{curve:?}"
    );
    let s = &r["summary"];
    assert_eq!(
        s["ok"].as_u64().unwrap() + s["drained"].as_u64().unwrap(),
        ok,
        "{s}"
    );
    // Latencies from the hosts' histograms added (the sum is unit-tested in kafka_report): a
    // record's way through Kafka and the downstream takes at least a millisecond.
    assert!(s["latency"]["p50"].as_f64().unwrap() >= 1.0, "{s}");
    assert!(
        s["latency"]["p99"].as_f64() >= s["latency"]["p50"].as_f64(),
        "{s}"
    );
    let app_ns = must(&format!(
        "ip netns exec {} readlink /proc/self/ns/net",
        lab.ns("app")
    ));
    let hosts = res["environment"]["remote_hosts"].as_array().unwrap();
    let contender = hosts.iter().find(|h| h["role"] == "contender").unwrap();
    assert_eq!(contender["net_namespace"], app_ns.trim());
    assert!(r["resources"]["peak_threads"].as_u64().unwrap() > 1);
    assert!(results_dir(&out).join("logs/kafka.log").is_file());
    lab.assert_nothing_left_on(&["app", "db", "lg1", "lg2"], &before);
}

/// `--profile` with the contenders on their own host: each runtime's profiler runs there (JFR
/// through the JDK there, Go's pprof fetched from that host's loopback, V8's files read there),
/// the folded stacks and flame graphs land here, and nothing of the profilers stays there.
#[test]
#[ignore = "needs root, iproute2, openssh-server, Go and the built contenders; run by ./iobound test"]
fn profiles_are_taken_on_the_contender_host() {
    let _machine = beside_others(&[Resource::NamespaceHosts, Resource::BusyCpus]);
    if !built(&[
        "contenders/go/target/go-server",
        "contenders/node/node_modules",
        "contenders/spring-mvc/target/spring-mvc.jar",
    ]) {
        return;
    }
    let Some(lab) = Lab::with_options(
        vec!["app", "db", "lg1"],
        "--contender-cpus 0 --load-cpus 1 --services db",
    ) else {
        return;
    };
    let before = remote_dirs();
    let out = tempfile::tempdir().unwrap();
    let o = Command::new(exe())
        .args(["run", "--hosts"])
        .arg(lab.inventory())
        .args([
            "-c",
            "go,node,spring-mvc-virtual",
            "--path",
            "/hash?id=1",
            "--rate",
            "300",
            "--duration",
            "4s",
            "--warmup",
            "2s",
            "--profile",
            "--out",
        ])
        .arg(out.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let dir = results_dir(out.path());
    let res = load_results(&dir);
    for (name, tool, frame) in [
        ("go", "pprof", "main.hash"),
        ("node", "v8", "server.js"),
        ("spring-mvc-virtual", "jfr", "dev.iobound."),
    ] {
        let run = res["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["contender"] == name)
            .unwrap_or_else(|| panic!("no run of {name}"));
        assert_eq!(run["status"], "ok", "{name}: {}", run["failure"]);
        let p = &run["profile"];
        assert_eq!(
            p["tool"], tool,
            "{name}: warnings {}",
            run["driver"]["warnings"]
        );
        // How many samples a 4 s window holds depends on the machine's speed (go used 0.18
        // CPU-seconds in it once, 18 samples); what the profile must show is the contender's
        // own code.
        assert!(p["samples"].as_u64().unwrap() > 0, "{name}: {p}");
        let folded = std::fs::read_to_string(dir.join(p["folded"].as_str().unwrap())).unwrap();
        assert!(
            folded.contains(frame),
            "{name}: no frame of its own code ({frame})"
        );
        let svg = dir.join(p["folded"].as_str().unwrap().replace(".folded", ".svg"));
        assert!(svg.is_file(), "{}", svg.display());
    }
    lab.assert_nothing_left_on(&["app", "db", "lg1"], &before);
}
