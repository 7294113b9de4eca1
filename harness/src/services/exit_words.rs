//! How a process's end reads in a message: its exit status, the last lines of its log, and a
//! runtime's own out-of-memory line among them.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;

/// "exit status 1", "killed by signal 9": how a process ended.
pub fn describe_exit(s: ExitStatus) -> String {
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => "unknown exit".into(),
    }
}

/// The last `n` lines of a log file, for error messages.
pub fn log_tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| format!("  | {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a runtime prints when it runs out of memory of its own accord (its heap limit, not the
/// kernel's), as it appears in `tail`: the last such line.
pub fn runtime_out_of_memory(tail: &str) -> Option<String> {
    const SAID: [&str; 3] = [
        "java.lang.OutOfMemoryError",
        "JavaScript heap out of memory",
        "runtime: out of memory",
    ];
    tail.lines()
        .rev()
        .find(|l| SAID.iter().any(|s| l.contains(s)))
        .map(|l| l.trim().trim_start_matches('|').trim().to_string())
}
