//! What a run's samples add up to: the contender's peaks, and its CPU and context switches
//! over the measured phase, overall and per load level.

use super::Sample;
use crate::driver::summary::Level;
use crate::util::cgroup::Reading;
use serde::{Deserialize, Serialize};

/// What the contender cost over a run: peaks, and CPU and context switches over the phase.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Resources {
    pub samples: Vec<Sample>,
    pub peak_threads: u64,
    pub peak_rss_mb: f64,
    pub peak_fds: u64,
    pub peak_sockets: u64,
    /// Most connections the contender held to the downstream service at once.
    #[serde(default)]
    pub peak_downstream_conns: u64,
    /// Contender CPU seconds (user + sys) during the measured phase.
    pub cpu_s: f64,
    pub cpu_ms_per_1k_requests: f64,
    pub ctx_voluntary: u64,
    pub ctx_involuntary: u64,
    /// What sampling the contender cost the harness, as a share of one CPU (%).
    #[serde(default)]
    pub sampler_cpu_pct: f64,
    /// What `peak_rss_mb` measures when it is not one process's RSS: "PSS of N processes"
    /// (several processes share pages, counted once by their proportional set size).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub memory_measure: String,
    /// What the contender's cgroup accounted over the phase, where it ran in one (a run with
    /// limits); its CPU is then `cpu_s`, exact (every process and thread, nothing missed
    /// between samples).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<CgroupReport>,
}

/// A cgroup's accounting over a run's phase.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CgroupReport {
    /// CFS periods in which it ran, and in how many of them its quota ran out (%).
    pub periods: u64,
    pub throttled_periods: u64,
    pub throttled_pct: f64,
    /// Time its processes waited for the next period (seconds).
    pub throttled_s: f64,
    /// The most memory it used (MB), where the kernel keeps a peak; else the most sampled.
    pub memory_peak_mb: f64,
    /// Processes the OOM killer killed in it, from its start.
    pub oom_kills: u64,
    /// Throttled periods per second of the phase (%), beside the latency per second.
    pub throttled_pct_per_s: Vec<f64>,
    /// The limits the cgroup held (none: a cgroup only to count and to clean up). Results
    /// written before unlimited cgroups were made held limits, so a missing field reads as
    /// "limited" for the notes (see `limited`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<crate::util::cgroup::Limits>,
}

impl CgroupReport {
    /// Whether a limit applied (a quota or a memory limit), so that its effect is worth a note.
    pub fn limited(&self) -> bool {
        self.limits.as_ref().is_none_or(|l| l.any())
    }
}

impl CgroupReport {
    /// From the phase's first and last readings and every reading between.
    pub fn over(readings: &[(f64, Reading)]) -> Option<CgroupReport> {
        let ((_, first), (_, last)) = (readings.first()?, readings.last()?);
        let periods = last.periods.saturating_sub(first.periods);
        let throttled = last
            .throttled_periods
            .saturating_sub(first.throttled_periods);
        let pct = |t: u64, p: u64| {
            if p > 0 {
                t as f64 * 100.0 / p as f64
            } else {
                0.0
            }
        };
        let per_s = readings
            .windows(2)
            .map(|w| {
                let (a, b) = (&w[0].1, &w[1].1);
                pct(
                    b.throttled_periods.saturating_sub(a.throttled_periods),
                    b.periods.saturating_sub(a.periods),
                )
            })
            .collect();
        let sampled_peak = readings
            .iter()
            .map(|(_, r)| r.memory_mb)
            .fold(0.0, f64::max);
        Some(CgroupReport {
            periods,
            throttled_periods: throttled,
            throttled_pct: pct(throttled, periods),
            throttled_s: (last.throttled_s - first.throttled_s).max(0.0),
            memory_peak_mb: last
                .memory_peak_mb
                .unwrap_or(sampled_peak)
                .max(sampled_peak),
            oom_kills: last.oom_kills,
            throttled_pct_per_s: per_s,
            // Set by the run, which knows the cgroup it made (run/finish.rs).
            limits: None,
        })
    }
}

/// Fills each level's resource peaks from the samples taken during it.
pub fn level_peaks(levels: &mut [Level], samples: &[Sample]) {
    for l in levels {
        let during = samples
            .iter()
            .filter(|s| s.t >= f64::from(l.from_s) && s.t < f64::from(l.to_s));
        for s in during {
            l.peak_threads = l.peak_threads.max(s.threads);
            l.peak_rss_mb = l.peak_rss_mb.max(s.rss_mb);
        }
    }
}

impl Resources {
    pub fn from_samples(samples: Vec<Sample>, requests: u64) -> Resources {
        let peak = |f: fn(&Sample) -> f64| samples.iter().map(f).fold(0.0, f64::max);
        let (first, last) = (
            samples.first().cloned().unwrap_or_default(),
            samples.last().cloned().unwrap_or_default(),
        );
        let readings: Vec<(f64, Reading)> = samples
            .iter()
            .filter_map(|s| Some((s.t, s.cgroup?)))
            .collect();
        let cgroup = CgroupReport::over(&readings);
        // The cgroup's own count where there is one: every process and thread, exactly.
        let cpu_s = match (readings.first(), readings.last()) {
            (Some((_, a)), Some((_, b))) if readings.len() > 1 => (b.usage_s - a.usage_s).max(0.0),
            _ => (last.cpu_user_s + last.cpu_sys_s - first.cpu_user_s - first.cpu_sys_s).max(0.0),
        };
        Resources {
            peak_threads: peak(|s| s.threads as f64) as u64,
            peak_rss_mb: peak(|s| s.rss_mb),
            peak_fds: peak(|s| s.fds as f64) as u64,
            // Read at censuses; between them sockets are an estimate from the fd count, so the
            // peak comes from censuses where there are any (results before this: every sample).
            peak_sockets: if samples.iter().any(|s| s.census) {
                samples
                    .iter()
                    .filter(|s| s.census)
                    .map(|s| s.sockets)
                    .max()
                    .unwrap_or(0)
            } else {
                peak(|s| s.sockets as f64) as u64
            },
            peak_downstream_conns: peak(|s| s.downstream_conns as f64) as u64,
            cpu_s,
            cpu_ms_per_1k_requests: if requests > 0 {
                cpu_s * 1e6 / requests as f64
            } else {
                0.0
            },
            ctx_voluntary: last.ctx_voluntary.saturating_sub(first.ctx_voluntary),
            ctx_involuntary: last.ctx_involuntary.saturating_sub(first.ctx_involuntary),
            sampler_cpu_pct: if last.t > first.t {
                (last.sampler_cpu_s - first.sampler_cpu_s) * 100.0 / (last.t - first.t)
            } else {
                0.0
            },
            memory_measure: match samples.iter().map(|s| s.processes).max() {
                Some(n) if n > 1 => format!("PSS of {n} processes"),
                _ => String::new(),
            },
            cgroup,
            samples,
        }
    }
}
