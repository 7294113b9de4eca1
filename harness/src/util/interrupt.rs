//! Ctrl-C / SIGTERM handling and the registry of process groups the harness started.
//! First signal: stop gracefully (finish bookkeeping, keep what was measured). Second signal:
//! kill every registered process group now and exit.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

static STOP: LazyLock<Arc<AtomicBool>> = LazyLock::new(|| Arc::new(AtomicBool::new(false)));
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());
/// Directories of this run's services (a database's data, a broker's logs) that a second
/// Ctrl-C, which skips the orderly stop, must still remove.
static DIRS: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());
/// Directories of the contenders' cgroups, removed (what is left in them killed) on a second
/// Ctrl-C as well.
static CGROUPS: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());
/// Commands (argv) that remove what the run made on other hosts (its per-run directories),
/// run on a second Ctrl-C too, by id so that each is dropped once done in order.
static REMOTE: Mutex<Vec<(u64, Vec<std::ffi::OsString>)>> = Mutex::new(Vec::new());
static NEXT_REMOTE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// How long a second Ctrl-C waits for the remote clean-ups, all at once, before it exits.
pub const REMOTE_CLEANUP_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

pub fn stop_flag() -> Arc<AtomicBool> {
    STOP.clone()
}

pub fn stopped() -> bool {
    STOP.load(Ordering::SeqCst)
}

pub fn install() {
    let result = ctrlc::set_handler(|| {
        if STOP.swap(true, Ordering::SeqCst) {
            eprintln!("\niobound: second interrupt, killing everything now");
            kill_all(libc::SIGKILL);
            remove_dirs();
            let cgroups: Vec<_> = CGROUPS
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .drain(..)
                .collect();
            let _ = super::cgroup::remove_dirs(&cgroups);
            run_remote_cleanups(REMOTE_CLEANUP_LIMIT);
            std::process::exit(130);
        }
        eprintln!("\niobound: interrupted; stopping and keeping what was measured (Ctrl-C again to kill now)");
    });
    if let Err(e) = result {
        eprintln!("iobound: warning: cannot install the Ctrl-C handler: {e}");
    }
}

pub fn register(pgid: i32) {
    GROUPS.lock().unwrap_or_else(|p| p.into_inner()).push(pgid);
}

pub fn unregister(pgid: i32) {
    GROUPS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|g| *g != pgid);
}

/// Signals every registered process group.
pub fn kill_all(signal: i32) {
    for g in GROUPS.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        // SAFETY: kill with a negative pid signals a process group we created.
        unsafe { libc::kill(-g, signal) };
    }
}

/// A directory to remove even when the run is killed by a second Ctrl-C.
pub fn register_dir(dir: &std::path::Path) {
    DIRS.lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(dir.to_path_buf());
}

pub fn unregister_dir(dir: &std::path::Path) {
    DIRS.lock()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|d| d != dir);
}

/// A cgroup's directories, removed even when the run is killed by a second Ctrl-C.
pub fn register_cgroup(dirs: &[std::path::PathBuf]) {
    CGROUPS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .extend(dirs.iter().cloned());
}

pub fn unregister_cgroup(dirs: &[std::path::PathBuf]) {
    CGROUPS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|d| !dirs.contains(d));
}

/// A command that undoes what the run made on another host (e.g. `ssh ... rm -rf DIR`), run
/// even when the run is killed by a second Ctrl-C. Returns its id for `unregister_remote`.
pub fn register_remote(command: &std::process::Command) -> u64 {
    let id = NEXT_REMOTE.fetch_add(1, Ordering::SeqCst);
    let argv = std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|a| a.to_os_string())
        .collect();
    REMOTE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((id, argv));
    id
}

pub fn unregister_remote(id: u64) {
    REMOTE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|(i, _)| *i != id);
}

/// Runs every registered remote clean-up at once and waits for them up to `limit` (a host
/// that does not answer does not hold the exit longer); those still running then are killed.
pub fn run_remote_cleanups(limit: std::time::Duration) {
    let commands: Vec<_> = REMOTE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .drain(..)
        .collect();
    let mut children: Vec<std::process::Child> = commands
        .iter()
        .filter_map(|(_, argv)| {
            std::process::Command::new(argv.first()?)
                .args(&argv[1..])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .ok()
        })
        .collect();
    let t0 = std::time::Instant::now();
    while t0.elapsed() < limit {
        children.retain_mut(|c| c.try_wait().ok().flatten().is_none());
        if children.is_empty() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for c in &mut children {
        let _ = c.kill();
        let _ = c.wait();
    }
}

/// Removes every registered directory (their processes have been killed).
pub fn remove_dirs() {
    for d in DIRS.lock().unwrap_or_else(|p| p.into_inner()).drain(..) {
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_cleanups_run_at_once_and_a_hung_one_is_cut_at_the_limit() {
        let base = tempfile::tempdir().unwrap();
        let gone = base.path().join("iobound-run.a");
        std::fs::create_dir_all(gone.join("sub")).unwrap();
        let mut rm = std::process::Command::new("rm");
        rm.arg("-rf").arg("--").arg(&gone);
        register_remote(&rm);
        let mut hung = std::process::Command::new("sleep");
        hung.arg("30");
        register_remote(&hung);
        // An orderly end removed this one itself: not run again.
        let kept = base.path().join("kept");
        std::fs::create_dir_all(&kept).unwrap();
        let mut undone = std::process::Command::new("rm");
        undone.arg("-rf").arg("--").arg(&kept);
        let id = register_remote(&undone);
        unregister_remote(id);
        let t0 = std::time::Instant::now();
        run_remote_cleanups(std::time::Duration::from_millis(500));
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            t0.elapsed()
        );
        assert!(!gone.exists(), "the remote clean-up ran");
        assert!(kept.exists(), "an unregistered clean-up did not");
        assert!(REMOTE.lock().unwrap().is_empty());
    }

    #[test]
    fn registered_directories_are_removed_and_unregistered_ones_kept() {
        let base = tempfile::tempdir().unwrap();
        let (a, b) = (base.path().join("pgdata-1"), base.path().join("kafka-1"));
        for d in [&a, &b] {
            std::fs::create_dir_all(d.join("sub")).unwrap();
            register_dir(d);
        }
        unregister_dir(&b);
        remove_dirs();
        assert!(!a.exists() && b.exists());
    }
}
