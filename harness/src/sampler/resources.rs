//! What a run's samples add up to: the contender's peaks, and its CPU and context switches
//! over the measured phase, overall and per load level.

use super::Sample;
use crate::driver::summary::Level;
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
        let cpu_s =
            (last.cpu_user_s + last.cpu_sys_s - first.cpu_user_s - first.cpu_sys_s).max(0.0);
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
            samples,
        }
    }
}
