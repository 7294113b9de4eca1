//! A reader that goes away (`| head -1`, `| true`) ends a command that only prints the way it
//! ends a Unix tool: quietly, by SIGPIPE, never with a panic ("failed printing to stdout",
//! exit 101, as `plans`, `list --builds`, `run --dry-run` and `compare` did). The pipe's
//! reading end is closed before the command starts, so its first write meets it every time.

use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use crate::common;

/// A pipe whose reading end is already closed: the first write to the other end fails.
fn closed_pipe() -> OwnedFd {
    let mut fds = [0; 2];
    // SAFETY: pipe fills the two descriptors given; each is owned once below.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    unsafe {
        drop(OwnedFd::from_raw_fd(fds[0]));
        OwnedFd::from_raw_fd(fds[1])
    }
}

#[test]
fn a_closed_pipe_ends_every_printing_command_quietly() {
    let root = common::repo_root();
    let results = |name: &str| root.join("docs/results").join(name).display().to_string();
    let commands: [Vec<String>; 6] = [
        vec!["plans".into()],
        vec!["list".into()],
        vec!["list".into(), "--builds".into()],
        vec![
            "run".into(),
            "--plan".into(),
            root.join("plans/demo.toml").display().to_string(),
            "--dry-run".into(),
        ],
        vec![
            "compare".into(),
            results("all-models-2026-11-23"),
            results("all-models-2026-11-27"),
        ],
        vec!["table".into(), results("all-models-2026-11-27")],
    ];
    for args in commands {
        let out = Command::new(common::exe())
            .args(&args)
            .env("IOBOUND_HOME", &root)
            .stdout(Stdio::from(closed_pipe()))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGPIPE),
            "{args:?}: {:?} {err}",
            out.status
        );
    }
}
