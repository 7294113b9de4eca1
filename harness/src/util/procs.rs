//! Processes as /proc lists them: every pid, the fields of a process's stat line, and the live
//! members of a process group or tree; read by the contender's stop, the sampler, the remote
//! supervisor and the owner mark's sweep.

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

/// Live members of process group `pgid`, found by scanning /proc (zombies excluded: they
/// hold no resources and wait only to be reaped).
pub fn group_pids(pgid: i32) -> Vec<i32> {
    pids()
        .into_iter()
        .filter(|pid| {
            stat_fields(*pid).is_some_and(|f| {
                f.first().map(String::as_str) != Some("Z")
                    && f.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid)
            })
        })
        .collect()
}

/// Process `root` and its live descendants (zombies excluded), found by scanning /proc: a
/// server iobound did not start, whose workers may sit in another process group.
pub fn tree_pids(root: i32) -> Vec<i32> {
    let parents: Vec<(i32, i32)> = pids()
        .into_iter()
        .filter_map(|pid| {
            let f = stat_fields(pid)?;
            (f.first().map(String::as_str) != Some("Z")).then_some(())?;
            Some((pid, f.get(1)?.parse().ok()?))
        })
        .collect();
    let mut out: Vec<i32> = parents
        .iter()
        .map(|&(p, _)| p)
        .filter(|&p| p == root)
        .collect();
    let mut i = 0;
    while i < out.len() {
        let parent = out[i];
        out.extend(
            parents
                .iter()
                .filter(|&&(_, pp)| pp == parent)
                .map(|&(p, _)| p),
        );
        i += 1;
    }
    out
}
