//! Who started a contender's processes, written where every one of them carries it: an
//! environment variable (`IOBOUND_OWNER=<harness pid>.<its start time>.<contender tag>`) that
//! each process the contender forks inherits, in its process group or out of it (`setsid`).
//!
//! A cgroup holds every fork of a contender, so stopping it, or sweeping a dead harness's
//! cgroup, kills them all. Where no cgroup can be made (not root, no cpu and memory
//! controllers), the process group is all the harness has, and a fork that leaves it would
//! outlive an orderly stop and a harness killed outright. The mark finds those in /proc: an
//! orderly stop kills every process with its contender's mark, and each contender start kills
//! the marked processes of harnesses that are gone. The start time (clock ticks since boot,
//! /proc/PID/stat) tells a harness from a later process that reuses its pid.
//!
//! A process that clears its environment, or replaces its initial one, cannot be found this
//! way; /proc/PID/environ is the environment a process was started with.

use std::fs;

/// The variable every contender process carries.
pub const VAR: &str = "IOBOUND_OWNER";

/// The start time of process `pid` in clock ticks since boot, None once it is gone.
fn start_time(pid: i32) -> Option<u64> {
    super::procs::stat_fields(pid)?.get(19)?.parse().ok()
}

/// A new mark for one contender of this harness: `<pid>.<start time>.<tag>`.
pub fn new_mark(tag: &str) -> String {
    let pid = std::process::id() as i32;
    format!("{pid}.{}.{tag}", start_time(pid).unwrap_or(0))
}

/// The harness a mark names, and whether it is still the process that made it.
fn owner_alive(mark: &str) -> bool {
    let mut parts = mark.split('.');
    let (Some(pid), Some(started)) = (
        parts.next().and_then(|p| p.parse::<i32>().ok()),
        parts.next().and_then(|s| s.parse::<u64>().ok()),
    ) else {
        // Not a mark this harness wrote: not ours to judge.
        return true;
    };
    start_time(pid) == Some(started)
}

/// Every process (but this one) whose environment holds a mark, with the mark.
fn marked() -> Vec<(i32, String)> {
    let own = std::process::id() as i32;
    let prefix = format!("{VAR}=");
    super::procs::pids()
        .into_iter()
        .filter(|pid| *pid != own)
        .filter_map(|pid| {
            // Another user's processes are unreadable here: not ours.
            let env = fs::read(format!("/proc/{pid}/environ")).ok()?;
            let mark = env
                .split(|b| *b == 0)
                .find_map(|kv| kv.strip_prefix(prefix.as_bytes()))?;
            Some((pid, String::from_utf8_lossy(mark).into_owned()))
        })
        .collect()
}

fn kill(pids: &[i32]) -> usize {
    for pid in pids {
        // SAFETY: kill(2) on a pid read from /proc; a process gone since is ESRCH.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    pids.len()
}

/// Kills every process carrying `mark` (a contender's forks, wherever they went). Returns
/// how many it signalled.
pub fn kill_marked(mark: &str) -> usize {
    let pids: Vec<i32> = marked()
        .into_iter()
        .filter(|(_, m)| m == mark)
        .map(|(p, _)| p)
        .collect();
    kill(&pids)
}

/// Kills the marked processes of harnesses that are gone (a crash, a SIGKILL). Returns how
/// many it signalled.
pub fn sweep_orphans() -> usize {
    let pids: Vec<i32> = marked()
        .into_iter()
        .filter(|(_, m)| !owner_alive(m))
        .map(|(p, _)| p)
        .collect();
    kill(&pids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    fn spawn_marked(mark: &str) -> std::process::Child {
        Command::new("sleep")
            .arg("600")
            .env(VAR, mark)
            .stdout(Stdio::null())
            .spawn()
            .unwrap()
    }

    /// Waits (bounded by counts of polls, not by the machine's speed) until `child` ends.
    fn ended(child: &mut std::process::Child) -> bool {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(30) {
            if child.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    #[test]
    fn a_mark_names_this_harness_and_outlives_no_reused_pid() {
        let mark = new_mark("t");
        let own = std::process::id();
        assert!(mark.starts_with(&format!("{own}.")) && mark.ends_with(".t"));
        assert!(owner_alive(&mark));
        // The same pid with another start time is a later process, not this harness.
        let started = start_time(own as i32).unwrap();
        assert!(!owner_alive(&format!("{own}.{}.t", started + 1)));
        // A pid that cannot be a process (above the kernel's pid_max of 2^22).
        assert!(!owner_alive("2147483000.1.t"));
        // Not a mark of this format: left alone.
        assert!(owner_alive("someone-else"));
    }

    #[test]
    fn the_sweep_kills_a_dead_harness_s_processes_and_spares_a_live_one_s() {
        let mine = new_mark(&format!(
            "live{}",
            crate::util::numbers::random_hex(4).unwrap()
        ));
        let dead = format!(
            "2147483000.1.dead{}",
            crate::util::numbers::random_hex(4).unwrap()
        );
        let mut kept = spawn_marked(&mine);
        let mut orphan = spawn_marked(&dead);
        assert!(sweep_orphans() >= 1);
        assert!(ended(&mut orphan), "the dead harness's process was swept");
        assert!(
            kept.try_wait().unwrap().is_none(),
            "a live harness's is kept"
        );
        assert_eq!(kill_marked(&mine), 1);
        assert!(ended(&mut kept));
        assert_eq!(kill_marked(&mine), 0);
    }
}
