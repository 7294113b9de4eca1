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
use std::path::PathBuf;

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
    let turnstile = lock("turnstile.lock", libc::LOCK_EX);
    let machine = lock("machine.lock", libc::LOCK_EX);
    drop(turnstile);
    Hold {
        _files: vec![machine],
    }
}

/// The machine shared with tests that share it too, and `resources` to this test alone.
pub fn beside_others(resources: &[Resource]) -> Hold {
    drop(lock("turnstile.lock", libc::LOCK_EX));
    let mut files = vec![lock("machine.lock", libc::LOCK_SH)];
    // Always taken after the machine, in one order: no two tests wait on each other.
    let mut resources = resources.to_vec();
    resources.sort();
    files.extend(resources.iter().map(|r| lock(r.file(), libc::LOCK_EX)));
    Hold { _files: files }
}

fn lock(name: &str, operation: i32) -> File {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("machine-locks");
    std::fs::create_dir_all(&dir).expect("make the test lock directory");
    let path = dir.join(name);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
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
            path.display()
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

    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn a_test_alone_waits_for_its_sharing_neighbour_and_keeps_the_next_one_out() {
        let sharing = beside_others(&[]);
        let alone_holds = Arc::new(AtomicBool::new(false));
        let got_in = Arc::new(AtomicBool::new(false));
        let (flag, entered) = (alone_holds.clone(), got_in.clone());
        let waiter = std::thread::spawn(move || {
            let _hold = alone();
            entered.store(true, Ordering::SeqCst);
            flag.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(300));
            flag.store(false, Ordering::SeqCst);
        });
        std::thread::sleep(Duration::from_millis(200));
        assert!(
            !alone_holds.load(Ordering::SeqCst),
            "alone() got the machine while a test shared it"
        );
        drop(sharing);
        // The one alone is through the turnstile (or about to be): a new sharer waits for it.
        std::thread::sleep(Duration::from_millis(100));
        let _next = beside_others(&[]);
        assert!(
            !alone_holds.load(Ordering::SeqCst),
            "a sharing test got in while one was alone"
        );
        waiter.join().unwrap();
        assert!(
            got_in.load(Ordering::SeqCst),
            "alone() never got the machine"
        );
    }
}
