//! Where no cgroup can be made, a contender has its process group and the mark in its
//! processes' environment (util/owner.rs). The harness runs here in a mount namespace of its
//! own with every cgroup hierarchy unmounted, as on a machine without the cpu and memory
//! controllers, and its server forks a worker into a session of its own (out of the group).

use crate::common::{self, beside_others, exe, free_port, processes_with};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The command line that runs `iobound ARGS` with no cgroup hierarchy mounted: a private
/// mount namespace (unshare execs, so the harness keeps the pid of the process spawned) in
/// which every cgroup and cgroup2 mount is unmounted first.
fn without_cgroups(args: &[String]) -> Command {
    let script = "for m in $(grep -E ' - cgroup2? ' /proc/self/mountinfo | cut -d' ' -f5); do \
                  umount -l \"$m\" || exit 97; done; exec \"$@\"";
    let mut c = Command::new("unshare");
    c.args([
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        script,
        "sh",
    ])
    .arg(exe())
    .args(args)
    .env("IOBOUND_HOME", common::repo_root());
    c
}

/// `run --cmd` of a server that first forks `setsid {worker}`, `users` users for `duration`.
fn run_with_worker(worker: &str, port: u16, duration: &str, out: &std::path::Path) -> Vec<String> {
    let cmd = format!("setsid {worker} & exec {} serve --port {port}", exe());
    [
        "run",
        "--url",
        &format!("http://127.0.0.1:{port}/plaintext"),
        "--cmd",
        &cmd,
        "--users",
        "2",
        "--duration",
        duration,
        "--out",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|w| w.to_string())
    .collect()
}

/// An orderly run: when it stops its server, the worker that left the process group goes too,
/// found by its mark, and no cgroup was made.
#[test]
#[ignore = "unmounts cgroups in a namespace of its own, as root; run by ./iobound test"]
fn without_a_cgroup_an_orderly_stop_kills_the_forks_that_left_the_process_group() {
    let _machine = beside_others(&[]);
    let out = tempfile::tempdir().unwrap();
    let port = free_port();
    let worker = format!("sleep 8{port}");
    let o = without_cgroups(&run_with_worker(&worker, port, "1s", out.path()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let results = common::load_results(&common::results_dir(out.path()));
    assert!(
        results["runs"][0]["resources"]["cgroup"].is_null(),
        "the run had no cgroup: {}",
        results["runs"][0]["resources"]
    );
    assert_eq!(
        common::left_after(Duration::from_secs(10), || processes_with(&worker)),
        Vec::<i32>::new(),
        "the worker outside the process group was stopped with its server"
    );
}

/// The harness killed outright (SIGKILL) with no cgroup: the server's leader dies with it
/// (PDEATHSIG), the worker out of its group is left, and the next run's contender start
/// kills it by its mark.
#[test]
#[ignore = "unmounts cgroups in a namespace of its own, as root; run by ./iobound test"]
fn without_a_cgroup_a_killed_harness_s_forked_worker_is_swept_by_the_next_run() {
    let _machine = beside_others(&[]);
    let out = tempfile::tempdir().unwrap();
    let port = free_port();
    let worker = format!("sleep 9{port}");
    let mut child = without_cgroups(&run_with_worker(&worker, port, "60s", out.path()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    common::until_server_and_worker_run(&mut child, port, &worker, || true);
    let layout = iobound::util::cgroup::Layout::detect().expect("this machine has cgroups");
    assert_eq!(
        iobound::util::cgroup::made_by(&layout, pid),
        Vec::<std::path::PathBuf>::new(),
        "the harness in the namespace made no cgroup"
    );
    common::kill_harness_outright(&mut child, port);
    assert!(
        !processes_with(&worker).is_empty(),
        "what is left without a cgroup: the worker out of the process group"
    );
    let next = tempfile::tempdir().unwrap();
    let port2 = free_port();
    let o = without_cgroups(&run_with_worker("true", port2, "1s", next.path()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        common::left_after(Duration::from_secs(10), || processes_with(&worker)),
        Vec::<i32>::new(),
        "the next run's contender start killed the dead harness's worker"
    );
}
