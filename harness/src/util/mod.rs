//! Shared utilities, usable by every stage, one concern per file: `units` (durations,
//! latencies, counts), `cpus` (CPU lists, pinning, thread CPU time), `clock` (timestamps),
//! `numbers` (the one median, the seeded generator), `printable` (text a terminal may be
//! given: control characters escaped), `trend` (the Mann-Kendall test of a series of seconds),
//! `files` (atomic writes), `cgroup` (a contender's limits) and `cgroup_accounting` (what they
//! did), `owner` (the mark that finds a contender's forks without a cgroup), `procs` (pids and
//! stat lines from /proc); and the process-wide pieces every stage touches: Ctrl-C
//! (`interrupt`), the small HTTP/1.1 client and request builder (`http1`), terminal progress
//! bars (`progress`), words for a remote shell (`shell`) and `--verbose` (here).
//! Uses no stage.

pub mod cgroup;
pub mod cgroup_accounting;
pub mod clock;
pub mod cpus;
pub mod files;
#[cfg(test)]
pub mod generate;
pub mod http1;
pub mod interrupt;
pub mod numbers;
pub mod owner;
pub mod printable;
pub mod procs;
pub mod progress;
pub mod shell;
pub mod trend;
pub mod units;

static VERBOSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// For a command that only prints (it has started nothing a signal would leave behind): a
/// write to a pipe whose reader has gone (`| head -1`) ends the process by SIGPIPE, quietly
/// and with the status a Unix tool gives (141 in a shell), where Rust's default (SIGPIPE
/// ignored) makes the next print panic. Commands that start processes keep the default and
/// clean up on their way out.
pub fn end_quietly_on_a_closed_pipe() {
    // SAFETY: restoring a signal's default disposition has no preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// `--verbose`: print detail that is otherwise summarised (every contract case).
pub fn set_verbose(on: bool) {
    VERBOSE.store(on, std::sync::atomic::Ordering::Relaxed);
}

pub fn verbose() -> bool {
    VERBOSE.load(std::sync::atomic::Ordering::Relaxed)
}

/// Writes `text` and a newline to standard output. A reader that stopped reading
/// (`iobound table DIR | head -1`) is not an error: what it wanted it has, so the rest is
/// dropped quietly instead of the panic `println!` gives on a closed pipe.
pub fn emit(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}
