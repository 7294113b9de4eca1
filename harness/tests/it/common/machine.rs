//! How the end-to-end tests share this machine. `./iobound test` runs the `#[ignore]`d tests
//! two at a time, each in a process of its own, and each such test says first what it needs:
//!
//! - `alone()`: the machine to itself. For the tests that drive real load on its two CPUs,
//!   judge timing, a warm-up, a quota or a driver's saturation: a neighbour's load would
//!   saturate their driver's CPU (iobound rightly counts every process) or, ending halfway,
//!   make a trend of its own.
//! - `beside_others(..)`: a neighbour is fine, but not one that needs the machine alone, nor one
//!   using the same `Resource`. For tests that check what happens (a file, a message, what is
//!   left behind), not how fast.
//!
//! The locks are `flock(2)` locks on files under the test target's temporary directory, so
//! they hold across processes (and across threads of one process: each holder opens the file
//! itself). A test waiting to be alone goes through a turnstile first, which a test wanting to
//! share must also pass: a queue of sharing tests cannot starve it.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// What two sharing tests may not use at once (taken in this order, whatever order a test
/// names them in).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Resource {
    /// Network namespaces with their sshd, and the per-run directories (/tmp/iobound-run.*)
    /// that agents make on them: the hosts tests compare these before and after.
    NamespaceHosts,
    /// Both CPUs, for a while: a run with a Kafka broker, a profiler or a JVM contender under
    /// load. Two such runs side by side starved each other's contender past its timeouts (a
    /// pipeline's 100 ms calls given up at 1 s, 270 of 400 records failed; a profiled
    /// contender that answered nothing in its window), though each checks what happens, not
    /// how fast.
    BusyCpus,
}

impl Resource {
    fn file(self) -> &'static str {
        match self {
            Resource::NamespaceHosts => "namespace-hosts.lock",
            Resource::BusyCpus => "busy-cpus.lock",
        }
    }
}

/// Locks held until dropped (closing a file releases its lock).
pub struct Hold {
    _files: Vec<File>,
}

/// The machine to this test alone, once every test sharing it has ended.
pub fn alone() -> Hold {
    alone_in(&locks())
}

/// The machine shared with tests that share it too, and `resources` to this test alone.
pub fn beside_others(resources: &[Resource]) -> Hold {
    beside_in(&locks(), resources)
}

/// Where the locks of this test binary's tests are.
fn locks() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("machine-locks")
}

fn alone_in(dir: &Path) -> Hold {
    let turnstile = lock(dir, "turnstile.lock", libc::LOCK_EX);
    let machine = lock(dir, "machine.lock", libc::LOCK_EX);
    drop(turnstile);
    Hold {
        _files: vec![machine],
    }
}

fn beside_in(dir: &Path, resources: &[Resource]) -> Hold {
    drop(lock(dir, "turnstile.lock", libc::LOCK_EX));
    let mut files = vec![lock(dir, "machine.lock", libc::LOCK_SH)];
    // Always taken after the machine, in one order: no two tests wait on each other.
    let mut resources = resources.to_vec();
    resources.sort();
    files.extend(resources.iter().map(|r| lock(dir, r.file(), libc::LOCK_EX)));
    Hold { _files: files }
}

fn open_lock(dir: &Path, name: &str) -> File {
    std::fs::create_dir_all(dir).expect("make the test lock directory");
    let path = dir.join(name);
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()))
}

fn lock(dir: &Path, name: &str, operation: i32) -> File {
    let file = open_lock(dir, name);
    loop {
        // SAFETY: flock on a descriptor this function owns; it touches no memory.
        if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
            return file;
        }
        let err = std::io::Error::last_os_error();
        assert_eq!(
            err.kind(),
            std::io::ErrorKind::Interrupted,
            "lock {}: {err}",
            dir.join(name).display()
        );
    }
}

/// The first lines a claim may take: the launcher (`claim_of` in ./iobound) reads them to put
/// each test in its lane, and runs any other line alone.
pub const CLAIMS: [&str; 5] = [
    "let _machine = alone();",
    "let _machine = beside_others(&[]);",
    "let _machine = beside_others(&[Resource::BusyCpus]);",
    "let _machine = beside_others(&[Resource::NamespaceHosts]);",
    "let _machine = beside_others(&[Resource::NamespaceHosts, Resource::BusyCpus]);",
];

/// The `#[ignore]`d tests of `source` whose body does not begin with one of the `CLAIMS`: run
/// two at a time, such a test would take whatever neighbour it got, or a lane it did not ask
/// for.
pub fn unclaimed(source: &str) -> Vec<String> {
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !line.starts_with("#[ignore") {
            continue;
        }
        let Some(open) = (i..lines.len()).find(|&j| lines[j].trim_end().ends_with('{')) else {
            continue;
        };
        let name = lines[i..=open]
            .iter()
            .find_map(|l| l.trim().strip_prefix("fn "))
            .and_then(|rest| rest.split('(').next())
            .unwrap_or("?");
        let first = lines.get(open + 1).map_or("", |l| l.trim());
        if !CLAIMS.contains(&first) {
            found.push(name.to_string());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ignored_test_says_first_what_it_needs_of_the_machine() {
        let dir = crate::common::repo_root().join("harness/tests/it");
        let mut unclaimed_tests = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "rs") {
                let source = std::fs::read_to_string(&path).unwrap();
                unclaimed_tests.extend(
                    unclaimed(&source)
                        .into_iter()
                        .map(|n| format!("{}: {n}", path.display())),
                );
            }
        }
        assert_eq!(unclaimed_tests, Vec::<String>::new());
    }

    #[test]
    fn a_test_that_does_not_claim_the_machine_first_is_named() {
        let source = "#[test]\n#[ignore = \"x\"]\nfn claims() {\n    let _machine = alone();\n}\n\n\
                      #[test]\n#[ignore = \"x\"]\nfn shares() {\n    let _machine = beside_others(&[]);\n}\n\n\
                      #[test]\n#[ignore = \"x\"]\nfn late() {\n    let dir = 1;\n    let _machine = alone();\n}\n\n\
                      #[test]\n#[ignore = \"x\"]\nfn unknown() {\n    let _machine = beside_others(&[Resource::Other]);\n}\n\n\
                      #[test]\nfn not_ignored() {\n    let x = 1;\n}\n";
        assert_eq!(
            unclaimed(source),
            vec!["late".to_string(), "unknown".to_string()]
        );
    }

    /// Whether someone holds `name` in `dir` exclusively (a try that does not wait).
    fn held(dir: &Path, name: &str) -> bool {
        let file = open_lock(dir, name);
        // SAFETY: flock on a descriptor this function owns; it touches no memory.
        let got = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        !got // dropping the file releases what was got
    }

    #[test]
    fn a_test_alone_waits_for_its_sharing_neighbour_and_keeps_the_next_one_out() {
        use std::sync::mpsc::channel;
        // Locks of this test's own: no other test passes its turnstile, so what it sees of
        // them is the three threads' doing, ordered by the locks and channels alone.
        let dir = tempfile::tempdir().unwrap();
        let here = dir.path().to_path_buf();
        let sharing = beside_in(&here, &[]);
        let (got_machine, got_machine_rx) = channel();
        let (release, release_rx) = channel::<()>();
        let waiter = std::thread::spawn({
            let here = here.clone();
            move || {
                let _hold = alone_in(&here);
                got_machine.send(()).unwrap();
                release_rx.recv().unwrap();
            }
        });
        // Until the one alone is through the turnstile's door, waiting for the machine.
        while !held(&here, "turnstile.lock") {
            std::thread::yield_now();
        }
        assert!(
            got_machine_rx.try_recv().is_err(),
            "alone() got the machine while a test shared it"
        );
        // A sharer that arrives now waits behind it at the turnstile.
        let (next_in, next_in_rx) = channel();
        let next = std::thread::spawn({
            let here = here.clone();
            move || {
                let _hold = beside_in(&here, &[]);
                next_in.send(()).unwrap();
            }
        });
        drop(sharing);
        got_machine_rx.recv().unwrap();
        assert!(
            next_in_rx.try_recv().is_err(),
            "a sharing test got in while one was alone"
        );
        release.send(()).unwrap();
        waiter.join().unwrap();
        next_in_rx.recv().unwrap();
        next.join().unwrap();
    }
}
