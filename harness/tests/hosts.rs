//! Beyond one machine, on one machine: network namespaces as hosts, each with an sshd of its
//! own and a key made for the test. A contender namespace runs the built-in server; two load
//! namespaces drive it over SSH. Load goes only to the contender namespace's address, for a
//! few seconds.

mod common;

use common::{exe, load_results, missing_prerequisite, results_dir};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
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
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            missing_prerequisite("root, to create network namespaces");
            return None;
        }
        for tool in ["ip", "ssh", "ssh-keygen", "/usr/sbin/sshd"] {
            if !sh(&format!("command -v {tool}")).status.success() {
                missing_prerequisite(&format!(
                    "{tool} (apt-get install iproute2 openssh-client openssh-server)"
                ));
                return None;
            }
        }
        let id = std::process::id() % 200;
        let lab = Lab {
            prefix: format!("iobt{id}"),
            subnet: format!("10.231.{id}"),
            names,
            dir: tempfile::tempdir().unwrap(),
        };
        must(&format!(
            "{} up {} {} {} {}",
            lab_script(),
            lab.dir.path().display(),
            lab.prefix,
            lab.subnet,
            lab.names.join(" ")
        ));
        Some(lab)
    }

    fn inventory(&self) -> PathBuf {
        self.dir.path().join("hosts.toml")
    }

    /// No process of a run is left on a load host, and no per-run directory.
    fn assert_nothing_left(&self, dirs_before: &[PathBuf]) {
        for name in &self.names[1..] {
            let strays = self.strays(name);
            assert!(strays.is_empty(), "{name}: {strays:?}");
        }
        assert_eq!(
            remote_dirs(),
            dirs_before,
            "the per-run directories are removed"
        );
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
    let t0 = Instant::now();
    while !sh(&format!(
        "ip netns exec {} bash -c '</dev/tcp/{}/8080' 2>/dev/null",
        lab.ns(lab.names[1]),
        lab.address(0)
    ))
    .status
    .success()
    {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the server did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
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
    let t0 = Instant::now();
    let agent = loop {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "no agent started on lg2"
        );
        let found: Vec<String> = lab
            .strays("lg2")
            .into_iter()
            .filter(|p| p.contains("agent drive"))
            .collect();
        if let Some(p) = found.first() {
            break p.split(':').next().unwrap().to_string();
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_secs(4)); // 2 s to the common start, then 2 s of load
    must(&format!("kill -9 {agent}"));
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(40),
            "the run hung after losing a host"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
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
    let t0 = Instant::now();
    while lab.strays("lg1").is_empty() || lab.strays("lg2").is_empty() {
        assert!(t0.elapsed() < Duration::from_secs(20), "no agents started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(3));
    let status = common::interrupt_and_wait(&mut child, Duration::from_secs(15), "remote run");
    assert_eq!(status.code(), Some(130));
    std::thread::sleep(Duration::from_millis(500));
    lab.assert_nothing_left(&before);
    let res = load_results(&results_dir(out.path()));
    assert_eq!(res["complete"], false);
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
        err.contains("host lg1: address \"load-1.example\" is not an IP address"),
        "{err}"
    );
}
