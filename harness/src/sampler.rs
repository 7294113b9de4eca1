//! Reads what a contender costs from /proc, for every process in its group and every thread:
//! threads, RSS, CPU user+sys, context switches, open fds and sockets.

use serde::{Deserialize, Serialize};
use std::fs;
use std::time::Instant;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    /// Seconds since the measured phase began.
    pub t: f64,
    pub processes: u32,
    pub threads: u64,
    pub rss_mb: f64,
    /// Cumulative CPU seconds since the process started.
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    /// Cumulative, summed over live threads.
    pub ctx_voluntary: u64,
    pub ctx_involuntary: u64,
    pub fds: u64,
    pub sockets: u64,
}

/// Live members of process group `pgid`, found by scanning /proc (zombies excluded: they
/// hold no resources and wait only to be reaped).
pub fn group_pids(pgid: i32) -> Vec<i32> {
    let Ok(dir) = fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            stat_fields(*pid).is_some_and(|f| f.first().map(String::as_str) != Some("Z") && f.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid))
        })
        .collect()
}

/// Fields of /proc/<pid>/stat after the command name: index 0 is the state (field 3).
fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 2..];
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// (steal, total) jiffies of the whole machine from /proc/stat.
pub fn cpu_steal() -> Option<(u64, u64)> {
    let text = fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal (guest time is already in user).
    Some((*v.get(7)?, v.iter().take(8).sum()))
}

/// Steal between two readings, as a percentage of all CPU time.
pub fn steal_pct(before: Option<(u64, u64)>, after: Option<(u64, u64)>) -> f64 {
    match (before, after) {
        (Some((s0, t0)), Some((s1, t1))) if t1 > t0 => s1.saturating_sub(s0) as f64 * 100.0 / (t1 - t0) as f64,
        _ => 0.0,
    }
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as u64 } else { 4096 }
}

fn ctx_switches(pid: i32) -> (u64, u64) {
    let (mut vol, mut invol) = (0, 0);
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else { return (0, 0) };
    for t in tasks.flatten() {
        let Ok(status) = fs::read_to_string(t.path().join("status")) else { continue };
        for line in status.lines() {
            if let Some(v) = line.strip_prefix("voluntary_ctxt_switches:") {
                vol += v.trim().parse::<u64>().unwrap_or(0);
            } else if let Some(v) = line.strip_prefix("nonvoluntary_ctxt_switches:") {
                invol += v.trim().parse::<u64>().unwrap_or(0);
            }
        }
    }
    (vol, invol)
}

fn fds(pid: i32) -> (u64, u64) {
    let Ok(dir) = fs::read_dir(format!("/proc/{pid}/fd")) else { return (0, 0) };
    let (mut all, mut sockets) = (0, 0);
    for e in dir.flatten() {
        all += 1;
        if fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:")) {
            sockets += 1;
        }
    }
    (all, sockets)
}

pub struct Sampler {
    pgid: i32,
    start: Instant,
    ticks: f64,
    page: u64,
}

impl Sampler {
    pub fn new(pgid: i32, start: Instant) -> Sampler {
        Sampler { pgid, start, ticks: clock_ticks(), page: page_size() }
    }

    pub fn sample(&self) -> Sample {
        let mut s = Sample { t: self.start.elapsed().as_secs_f64(), ..Sample::default() };
        for pid in group_pids(self.pgid) {
            let Some(f) = stat_fields(pid) else { continue };
            let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            // stat fields 14/15 (utime/stime), 20 (num_threads), 24 (rss pages); index = field - 3.
            s.processes += 1;
            s.cpu_user_s += num(11) as f64 / self.ticks;
            s.cpu_sys_s += num(12) as f64 / self.ticks;
            s.threads += num(17);
            s.rss_mb += (num(21) * self.page) as f64 / 1_048_576.0;
            let (v, i) = ctx_switches(pid);
            s.ctx_voluntary += v;
            s.ctx_involuntary += i;
            let (a, k) = fds(pid);
            s.fds += a;
            s.sockets += k;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_the_own_process() {
        // SAFETY: getpgrp has no preconditions.
        let own = unsafe { libc::getpgrp() };
        let sock = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let s = Sampler::new(own, Instant::now()).sample();
        assert!(s.processes >= 1);
        assert!(s.threads >= 1);
        assert!(s.rss_mb > 1.0);
        assert!(s.fds >= 3);
        assert!(s.sockets >= 1);
        assert!(s.ctx_voluntary + s.ctx_involuntary > 0);
        drop(sock);
    }
}
