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
