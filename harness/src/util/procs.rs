//! Processes as /proc lists them: every pid, and the fields of a process's stat line, read by
//! the contender's stop, the sampler, the remote supervisor and the owner mark's sweep.

use std::fs;

/// Every process's pid (the numeric entries of /proc); empty where /proc cannot be read.
pub fn pids() -> Vec<i32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .collect()
}

/// Fields of /proc/<pid>/stat after the command name: index 0 is the state (field 3), index 19
/// the start time in clock ticks since boot (field 22). None once the process is gone.
pub fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count after its last ')'.
    let rest = &text[text.rfind(')')? + 2..];
    Some(rest.split_whitespace().map(str::to_string).collect())
}
