//! What the kernel accounted for a contender's cgroup (util/cgroup.rs): CPU used, CFS periods
//! throttled, memory and its peak, OOM kills, read from the v1 or v2 files of the cgroup.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::PathBuf;

/// What the kernel accounted for the cgroup so far (cumulative since it was made).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    /// CPU time of every process and thread in it (seconds).
    pub usage_s: f64,
    /// CFS periods with runnable work, and those in which the quota ran out.
    pub periods: u64,
    pub throttled_periods: u64,
    pub throttled_s: f64,
    pub memory_mb: f64,
    /// The most memory it used (None where the kernel does not keep it: v2 before 5.19).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_peak_mb: Option<f64>,
    /// Processes the kernel's OOM killer killed in it.
    pub oom_kills: u64,
}

/// Reads a cgroup's accounting; Clone + Send for the sampler's thread.
#[derive(Debug, Clone)]
pub struct Reader {
    pub(super) v2: bool,
    pub(super) cpu: PathBuf,
    pub(super) cpuacct: PathBuf,
    pub(super) memory: PathBuf,
}

const MB: f64 = (1u64 << 20) as f64;

impl Reader {
    pub fn read(&self) -> Result<Reading> {
        let get = |p: PathBuf| {
            fs::read_to_string(&p).with_context(|| format!("cannot read {}", p.display()))
        };
        let number = |p: PathBuf| -> Result<f64> {
            let s = get(p.clone())?;
            s.trim()
                .parse()
                .with_context(|| format!("{}: not a number: {s:?}", p.display()))
        };
        let cpu_stat = parse_keyed(&get(self.cpu.join("cpu.stat"))?);
        let key = |k: &str| cpu_stat.iter().find(|(n, _)| n == k).map_or(0, |(_, v)| *v);
        if self.v2 {
            let events = parse_keyed(&get(self.memory.join("memory.events"))?);
            Ok(Reading {
                usage_s: key("usage_usec") as f64 / 1e6,
                periods: key("nr_periods"),
                throttled_periods: key("nr_throttled"),
                throttled_s: key("throttled_usec") as f64 / 1e6,
                memory_mb: number(self.memory.join("memory.current"))? / MB,
                memory_peak_mb: number(self.memory.join("memory.peak")).ok().map(|b| b / MB),
                oom_kills: events
                    .iter()
                    .find(|(n, _)| n == "oom_kill")
                    .map_or(0, |e| e.1),
            })
        } else {
            let oom = parse_keyed(&get(self.memory.join("memory.oom_control"))?);
            Ok(Reading {
                usage_s: number(self.cpuacct.join("cpuacct.usage"))? / 1e9,
                periods: key("nr_periods"),
                throttled_periods: key("nr_throttled"),
                throttled_s: key("throttled_time") as f64 / 1e9,
                memory_mb: number(self.memory.join("memory.usage_in_bytes"))? / MB,
                memory_peak_mb: number(self.memory.join("memory.max_usage_in_bytes"))
                    .ok()
                    .map(|b| b / MB),
                oom_kills: oom.iter().find(|(n, _)| n == "oom_kill").map_or(0, |e| e.1),
            })
        }
    }
}

/// "key value" lines (cpu.stat, memory.events, memory.oom_control).
fn parse_keyed(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}
