//! Load from several hosts: each load host runs iobound's own driver (`iobound agent drive`,
//! started over SSH) with its share of the load, from a start time common to all hosts. Every
//! second it streams the second's records (HdrHistograms, errors) back; the controller
//! (remote::load_hosts, which reaches the hosts over SSH) adds them second by second into one
//! recorder, so percentiles and counts are those of the whole
//! load, never averages of the hosts'. A host lost mid-run keeps what it streamed; the
//! requests it had due whose outcome never arrived are counted as cut, and the host's share
//! says when and why it was lost.
mod agent;
#[cfg(test)]
mod tests;

pub use agent::{agent, Ending, OVERRUN_GRACE};

use super::errors::Errors;
use super::record::Interval;
use super::summary::encode_histogram;
use crate::plan::{Load, MixEntry, Profile};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::net::SocketAddr;

/// What one load host is asked to do.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    pub host: String,
    pub addr: SocketAddr,
    /// The path requested (a single path), or empty for a mix.
    pub path: String,
    #[serde(default)]
    pub mix: Vec<MixEntry>,
    pub close: bool,
    pub tag: String,
    /// This host's share of the load.
    pub load: Load,
    pub threads: usize,
    pub cpus: Vec<usize>,
    /// When the load starts, in the host's own clock (Unix seconds); 0 when the controller
    /// sends it later: the agent says `ready` and waits for a line `start UNIX_SECONDS`.
    pub start_unix: f64,
}

/// One line of an agent's output.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Line {
    /// The counters so far (cumulative), for the live line and for a lost host's accounting.
    Live {
        ok: u64,
        errors: u64,
        latency_us: u64,
        due: u64,
        buckets: Vec<u64>,
    },
    /// Records of one second since the start (a second may come again with later records).
    Second {
        i: usize,
        ok: String,
        failed: String,
        errors: Errors,
    },
    /// The load ended.
    End {
        due: u64,
        pool_waits: u64,
        cpu_s: f64,
        threads: usize,
        duration_s: f64,
        cancelled: bool,
        cpu_busy_pct: Vec<f64>,
        lag: String,
        conn_wait: String,
        entries: Vec<(u64, u64)>,
        /// Writes answered with 2xx (see `Outcome::acks`), for the write check.
        #[serde(default)]
        acks: Vec<(u32, u64)>,
    },
    /// The agent could not run the job.
    Failed { error: String },
    /// The job is read and the agent waits for its start (a job sent without one).
    Ready,
}

/// The share of `load` that host `i` of `n` drives: users or rates split as evenly as whole
/// numbers allow (the first hosts take one user more), the same schedule shape everywhere.
pub fn share(load: &Load, i: usize, n: usize) -> Load {
    let part = |total: u32| -> u32 {
        let (n32, i32) = (n as u32, i as u32);
        total / n32 + u32::from(i32 < total % n32)
    };
    let profile = match load.profile.clone() {
        Profile::Closed {
            users,
            step_users,
            steps,
            level,
            think,
            stay,
            spread,
        } => Profile::Closed {
            users: part(users),
            step_users: part(step_users),
            steps,
            level,
            think,
            stay,
            spread,
        },
        Profile::Open {
            rate,
            ramp_to,
            duration,
            max_connections,
        } => Profile::Open {
            rate: rate / n as f64,
            ramp_to: ramp_to / n as f64,
            duration,
            max_connections: part(max_connections).max(1),
        },
    };
    Load {
        profile,
        ..load.clone()
    }
}

pub fn unix_now() -> f64 {
    crate::util::clock::unix_seconds()
}

pub(super) fn second_line(i: usize, iv: &Interval) -> Result<Line> {
    Ok(Line::Second {
        i,
        ok: encode_histogram(&iv.hist)?,
        failed: encode_histogram(&iv.failed)?,
        errors: iv.errors.clone(),
    })
}

pub(super) fn write_line(out: &mut impl Write, line: &Line) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, line)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// The load hosts whose driver CPUs were saturated, as warnings: figures of those seconds may
/// be that host's limit, not the server's (the same rule as for a local driver).
pub fn saturation_warnings(hosts: &[HostShare]) -> Vec<String> {
    let limit = super::assess::CPU_BUSY_LIMIT_PCT;
    hosts
        .iter()
        .filter_map(|h| {
            let busy = h.cpu_busy_pct.iter().filter(|b| **b >= limit).count();
            (busy > 0).then(|| {
                format!(
                    "driver CPUs saturated on load host {}: its busiest driver CPU was >= {limit:.0}% busy in {busy} of {} seconds (every process on that host counts): figures of those seconds may be that host's limit, not the server's",
                    h.host,
                    h.cpu_busy_pct.len()
                )
            })
        })
        .collect()
}

/// What one load host did in a run, kept with the run's results.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostShare {
    pub host: String,
    /// Requests due on this host (those of a lost host whose outcome never came are cut).
    pub due: u64,
    pub ok: u64,
    pub errors: u64,
    /// Its share of the load, e.g. "32 users" or "500 req/s".
    pub load: String,
    /// The busiest of its driver CPUs, per second (%).
    pub cpu_busy_pct: Vec<f64>,
    /// How late its scheduler sent requests (open model), p99 in ms.
    pub lag_p99_ms: Option<f64>,
    /// When (s after the start) and why the host was lost, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_at_s: Option<f64>,
    /// Its writes answered with 2xx, their tokens under `host_tag` (for the write check; not
    /// kept in the results).
    #[serde(skip)]
    pub acks: Vec<(u32, u64)>,
}

/// The write tag of host `i`'s share: the run's, and the host, so that two hosts' writes never
/// carry the same text and each host's acknowledgements name its own rows.
pub fn host_tag(tag: &str, i: usize) -> String {
    if tag.is_empty() {
        String::new()
    } else {
        format!("{tag}h{i} ")
    }
}
