//! Starting and stopping a contender: its own process group (so that stopping it stops every
//! process it forked) and a mark in its environment (for the forks that leave the group where
//! no cgroup holds them: util/owner.rs), pinned to the contender CPUs, killed if the harness dies, file limit
//! raised for C10K runs, output captured to a log file.

use super::exit_words::{describe_exit, log_tail, runtime_out_of_memory};
use super::private_tmp::{self, PrivateTmp};
use crate::util::cgroup::Cgroup;
use crate::util::{interrupt, owner};
use anyhow::{bail, Context, Result};
use std::fs::File;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

pub struct Running {
    child: Child,
    pub pid: i32,
    pub addr: SocketAddr,
    pub log: PathBuf,
    /// When it was started: runtimes time their log lines from about then.
    pub started: Instant,
    exited: Option<ExitStatus>,
    /// The cgroup it runs in, with its limits: removed once it has stopped.
    cgroup: Option<Cgroup>,
    /// Its temporary directory (TMPDIR, java.io.tmpdir): removed once it has stopped.
    tmp: Option<PrivateTmp>,
    /// The mark in the environment of each of its processes (util/owner.rs): what finds the
    /// forks that left its process group where it has no cgroup.
    mark: String,
}

/// Where a contender on this machine listens unless told otherwise.
pub const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// How often a starting contender is asked whether it is up: often enough to time a server
/// that starts in milliseconds, seldom enough to cost nothing beside a starting JVM.
const READY_POLL: Duration = Duration::from_millis(10);

/// When a started contender was up, counted from its exec: its port accepting a connection,
/// then its ready path answering 200.
#[derive(Debug, Clone, Copy)]
pub struct Ready {
    pub port: Duration,
    pub first_200: Duration,
}

/// Whether something accepts a TCP connection on `addr` (within 200 ms).
fn accepts(addr: SocketAddr) -> bool {
    std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
}

pub fn start(
    argv: &[String],
    dir: &Path,
    cpus: &[usize],
    port: u16,
    log: &Path,
    env: &[(String, String)],
) -> Result<Running> {
    let addr = SocketAddr::new(LOOPBACK, port);
    start_at(argv, dir, cpus, addr, log, env)
}

/// As `start`, for a server told to listen on `addr` (readiness and load go there).
pub fn start_at(
    argv: &[String],
    dir: &Path,
    cpus: &[usize],
    addr: SocketAddr,
    log: &Path,
    env: &[(String, String)],
) -> Result<Running> {
    start_in(argv, dir, cpus, addr, log, env, None)
}

/// As `start_at`, inside `cgroup` (with every process it forks): the process joins it before
/// it execs, and the cgroup is removed when the contender stops.
pub fn start_in(
    argv: &[String],
    dir: &Path,
    cpus: &[usize],
    addr: SocketAddr,
    log: &Path,
    env: &[(String, String)],
    cgroup: Option<Cgroup>,
) -> Result<Running> {
    // Made before the fork: between fork and exec only async-signal-safe calls may run.
    let join: Vec<std::ffi::CString> = cgroup
        .iter()
        .flat_map(|c| c.procs_files())
        .map(|f| std::ffi::CString::new(f.into_os_string().into_encoded_bytes()))
        .collect::<Result<_, _>>()
        .context("a cgroup path holds a NUL byte")?;
    let out = File::create(log).with_context(|| format!("cannot create log {}", log.display()))?;
    let err = out.try_clone()?;
    let cpus = cpus.to_vec();
    let tmp = PrivateTmp::create()?;
    let argv = private_tmp::with_tmpdir(argv, tmp.path());
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    cmd.env("TMPDIR", tmp.path());
    // Forks of a dead harness's contenders that left their group, found by their mark.
    owner::sweep_orphans();
    let mark = owner::new_mark(&crate::util::numbers::random_hex(4)?);
    cmd.env(owner::VAR, &mark);
    cmd.envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Dies with the harness even on SIGKILL: no orphans holding ports.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            // No CPUs given (a host whose inventory entry names none): not pinned.
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for c in &cpus {
                libc::CPU_SET(*c, &mut set);
            }
            if !cpus.is_empty()
                && libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            raise_nofile();
            for procs in &join {
                join_cgroup(procs)?;
            }
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot start {:?} in {}", argv[0], dir.display()))?;
    let pid = child.id() as i32;
    interrupt::register(pid);
    // A second Ctrl-C, which skips the orderly stop, still removes the cgroup.
    if let Some(cg) = &cgroup {
        interrupt::register_cgroup(cg.dirs());
    }
    Ok(Running {
        child,
        pid,
        addr,
        log: log.to_path_buf(),
        started: Instant::now(),
        exited: None,
        cgroup,
        tmp: Some(tmp),
        mark,
    })
}

/// Moves the calling process into the cgroup whose cgroup.procs is `procs` ("0" is the
/// writer). Only open, write and close: it runs between fork and exec.
fn join_cgroup(procs: &std::ffi::CStr) -> std::io::Result<()> {
    // SAFETY: async-signal-safe calls on a path made before the fork.
    unsafe {
        let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let written = libc::write(fd, b"0".as_ptr().cast(), 1);
        let err = std::io::Error::last_os_error();
        libc::close(fd);
        if written != 1 {
            return Err(err);
        }
    }
    Ok(())
}

/// Raises the soft open-files limit to the hard limit (C10K needs more than the usual 1024).
pub fn raise_nofile() {
    // SAFETY: getrlimit/setrlimit on a stack value.
    unsafe {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

impl Running {
    /// The exit status once the process has ended.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        if self.exited.is_none() {
            self.exited = self.child.try_wait().ok().flatten();
        }
        self.exited
    }

    /// Polls `ready` every 100 ms until it holds. Fails, with the last lines of the
    /// process's log, when the process exits first ("{what} exited during start-up") or
    /// `limit` passes or the user interrupts ("{what} did not {waiting_for} within N s"); the
    /// process is stopped then. The services and a `--cmd` server start through it.
    pub fn wait_until(
        &mut self,
        what: &str,
        waiting_for: &str,
        limit: Duration,
        mut ready: impl FnMut() -> bool,
    ) -> Result<()> {
        let t0 = Instant::now();
        loop {
            if let Some(st) = self.exited() {
                bail!(
                    "{what} exited during start-up ({}); last log lines:\n{}",
                    describe_exit(st),
                    log_tail(&self.log, 15)
                );
            }
            if ready() {
                return Ok(());
            }
            if t0.elapsed() > limit || interrupt::stopped() {
                self.stop(Duration::from_secs(2));
                bail!(
                    "{what} did not {waiting_for} within {} s; last log lines:\n{}",
                    limit.as_secs(),
                    log_tail(&self.log, 15)
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Polls until its port accepts a connection and then until `path` answers 200, every
    /// 10 ms (a Go or Rust server is up in a few), failing when the process dies, the timeout
    /// passes or the user interrupts. Returns when each happened, counted from its start.
    pub fn wait_ready(
        &mut self,
        rt: &tokio::runtime::Runtime,
        path: &str,
        timeout: Duration,
    ) -> Result<Ready> {
        let mut port = None;
        loop {
            if let Some(status) = self.exited() {
                bail!(
                    "exited during start-up ({}); last log lines:\n{}",
                    describe_exit(status),
                    log_tail(&self.log, 15)
                );
            }
            if interrupt::stopped() {
                bail!("interrupted during start-up");
            }
            if port.is_none() && accepts(self.addr) {
                port = Some(self.started.elapsed());
            }
            if port.is_some() && crate::util::http1::answers_200(rt, self.addr, path) {
                let first_200 = self.started.elapsed();
                return Ok(Ready {
                    port: port.unwrap_or(first_200),
                    first_200,
                });
            }
            if self.started.elapsed() > timeout {
                bail!(
                    "not ready after {}s (GET {path} on {}); last log lines:\n{}",
                    timeout.as_secs(),
                    self.addr,
                    log_tail(&self.log, 15)
                );
            }
            std::thread::sleep(READY_POLL);
        }
    }

    /// What its cgroup accounted (None when it runs without one).
    pub fn cgroup(&self) -> Option<&Cgroup> {
        self.cgroup.as_ref()
    }

    /// Why it ended, in words: "OOM-killed: ..." where its cgroup's OOM killer killed in it
    /// (a memory limit reached is the reason, not a crash); else how it exited, with the line
    /// of its log where its runtime said it ran out of memory itself (a JVM's heap, V8's, Go's).
    pub fn why_exited(&self, status: ExitStatus) -> String {
        let cg = self.cgroup.as_ref();
        let kills = cg
            .and_then(|c| c.reader().read().ok())
            .map_or(0, |r| r.oom_kills);
        match cg.and_then(|c| c.limits.memory_bytes) {
            Some(limit) if kills > 0 => format!(
                "OOM-killed: its memory reached the limit of {} MB and the kernel killed {kills} \
                 process(es) in it ({})",
                limit >> 20,
                describe_exit(status)
            ),
            _ => match runtime_out_of_memory(&log_tail(&self.log, 40)) {
                Some(line) => format!("{}: {line}", describe_exit(status)),
                None => describe_exit(status),
            },
        }
    }

    /// SIGTERM to the whole group, SIGKILL after `grace`; waits until the leader is reaped,
    /// then removes its cgroup (killing anything left in it, in or out of the group) and kills
    /// what is left with its mark (forks out of the group where it had no cgroup).
    pub fn stop(&mut self, grace: Duration) -> ExitStatus {
        let status = self.stop_group(grace);
        owner::kill_marked(&self.mark);
        if let Some(mut cg) = self.cgroup.take() {
            interrupt::unregister_cgroup(cg.dirs());
            if let Err(e) = cg.remove() {
                eprintln!("iobound: warning: {e:#}");
            }
        }
        self.tmp.take();
        status
    }

    fn stop_group(&mut self, grace: Duration) -> ExitStatus {
        if let Some(s) = self.exited() {
            self.kill_group(libc::SIGKILL);
            interrupt::unregister(self.pid);
            return s;
        }
        self.kill_group(libc::SIGTERM);
        let t0 = Instant::now();
        while t0.elapsed() < grace {
            if let Some(s) = self.exited() {
                // Children the leader left behind go too.
                self.kill_group(libc::SIGKILL);
                interrupt::unregister(self.pid);
                return s;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        self.kill_group(libc::SIGKILL);
        let status = self
            .child
            .wait()
            .unwrap_or_else(|_| ExitStatus::from_raw(libc::SIGKILL));
        interrupt::unregister(self.pid);
        self.exited = Some(status);
        status
    }

    fn kill_group(&self, signal: i32) {
        // SAFETY: signals the process group this harness created for the contender.
        unsafe { libc::kill(-self.pid, signal) };
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.exited.is_none() {
            self.stop(Duration::from_secs(3));
        } else {
            // The leader has ended; forks out of its group may not have.
            owner::kill_marked(&self.mark);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::procs::{group_pids, tree_pids};
    use std::fs;

    #[test]
    fn a_runtime_that_ran_out_of_its_own_memory_is_named_from_its_log() {
        let jvm = "[41.2s][info][gc] GC(88) Pause Full 255M->255M(256M) 812.4ms\n\
                   Terminating due to java.lang.OutOfMemoryError: Java heap space\n";
        assert_eq!(
            runtime_out_of_memory(jvm).as_deref(),
            Some("Terminating due to java.lang.OutOfMemoryError: Java heap space")
        );
        let node = "<--- Last few GCs --->\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n";
        assert!(runtime_out_of_memory(node).is_some_and(|l| l.starts_with("FATAL ERROR")));
        assert_eq!(runtime_out_of_memory("listening on 127.0.0.1:8080\n"), None);
        // As log_tail quotes a log.
        assert_eq!(
            runtime_out_of_memory("  | fatal error: runtime: out of memory").as_deref(),
            Some("fatal error: runtime: out of memory")
        );
    }

    #[test]
    fn stop_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        // The shell forks a grandchild; stopping must take both.
        let argv: Vec<String> = ["sh", "-c", "sleep 300 & echo started; wait"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut r = start(&argv, dir.path(), &[0], 1, &log, &[]).unwrap();
        // Waits for the event, not for a time: a loaded machine forks late.
        let until = |done: &dyn Fn() -> bool| {
            let t0 = Instant::now();
            while !done() && t0.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(10));
            }
        };
        until(&|| log_tail(&log, 5).contains("started"));
        assert_eq!(group_pids(r.pid).len(), 2);
        let t0 = Instant::now();
        r.stop(Duration::from_secs(2));
        assert!(t0.elapsed() < Duration::from_secs(4));
        // The killed grandchild is reaped by init, a moment after the group's leader.
        until(&|| group_pids(r.pid).is_empty());
        assert_eq!(group_pids(r.pid).len(), 0);
    }

    #[test]
    fn a_process_writes_its_temporary_files_in_a_directory_removed_when_it_stops() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let seen = dir.path().join("seen");
        // As Tomcat does at every start: a directory of its own in $TMPDIR, never removed.
        let script = format!(
            "mkdir -p \"$TMPDIR/tomcat.8080.1/work\" && echo \"$TMPDIR\" > {}.part && mv {0}.part {0}; exec sleep 300",
            seen.display()
        );
        let argv: Vec<String> = ["sh", "-c", &script].map(String::from).into();
        let mut r = start(&argv, dir.path(), &[0], 1, &log, &[]).unwrap();
        let t0 = Instant::now();
        while !seen.exists() && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let tmp = PathBuf::from(fs::read_to_string(&seen).unwrap().trim());
        assert!(
            tmp.starts_with(std::env::temp_dir()) && tmp != std::env::temp_dir(),
            "TMPDIR was {tmp:?}"
        );
        assert!(tmp.join("tomcat.8080.1/work").is_dir());
        r.stop(Duration::from_secs(2));
        assert!(!tmp.exists(), "{tmp:?} is left after the stop");
    }

    #[test]
    fn a_process_tree_includes_children_in_other_groups() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        // A child that moves to a process group of its own, as daemons' workers may.
        let argv: Vec<String> = [
            "sh",
            "-c",
            "setsid sleep 300 & sleep 300 & echo started; wait",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut r = start(&argv, dir.path(), &[0], 1, &log, &[]).unwrap();
        // Wait for both forks and for the first child's setsid(2): between its fork and that
        // call it is still in the group (CI saw the group at 3 once).
        let t0 = std::time::Instant::now();
        while (tree_pids(r.pid).len() < 3 || group_pids(r.pid).len() != 2)
            && t0.elapsed() < Duration::from_secs(5)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        let tree = tree_pids(r.pid);
        assert_eq!(tree.len(), 3, "the shell and both sleeps: {tree:?}");
        assert_eq!(tree[0], r.pid);
        assert_eq!(
            group_pids(r.pid).len(),
            2,
            "the setsid child left the group"
        );
        let escaped: Vec<i32> = tree
            .iter()
            .copied()
            .filter(|p| !group_pids(r.pid).contains(p))
            .collect();
        r.stop(Duration::from_secs(1));
        for p in escaped {
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
    }
}
