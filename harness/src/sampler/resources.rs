//! What a run's samples add up to: the contender's peaks, and its CPU and context switches
//! over the measured phase, overall and per load level.

use super::Sample;
use crate::driver::summary::Level;
use crate::util::cgroup_accounting::Reading;
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
    /// Throttled periods per second of the measured window (%), beside the latency per second
    /// (results written before 2026-11-26 hold one figure per 250 ms sample, drain included).
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
    /// From the phase's readings (`t`: seconds into the measured phase). CFS periods and
    /// throttling count the measured window only, `window_s` long where given (the drain of
    /// requests still in flight after it can last a whole request timeout, a minute of an
    /// idle server that would dilute the window's throttling); memory and OOM kills count
    /// every reading, so that a kill while draining is not missed.
    pub fn over(readings: &[(f64, Reading)], window_s: Option<f64>) -> Option<CgroupReport> {
        let last_of_all = &readings.last()?.1;
        // A sample is taken every 250 ms: the one nearest the window's end closes it.
        let end = window_s.map_or(f64::INFINITY, |w| w + 0.125);
        let window: Vec<&(f64, Reading)> = readings.iter().filter(|(t, _)| *t <= end).collect();
        let ((_, first), (_, last)) = (window.first()?, window.last()?);
        let periods = last.periods.saturating_sub(first.periods);
        let throttled = last
            .throttled_periods
            .saturating_sub(first.throttled_periods);
        let sampled_peak = readings
            .iter()
            .map(|(_, r)| r.memory_mb)
            .fold(0.0, f64::max);
        Some(CgroupReport {
            periods,
            throttled_periods: throttled,
            throttled_pct: share(throttled, periods),
            throttled_s: (last.throttled_s - first.throttled_s).max(0.0),
            memory_peak_mb: last_of_all
                .memory_peak_mb
                .unwrap_or(sampled_peak)
                .max(sampled_peak),
            oom_kills: readings.iter().map(|(_, r)| r.oom_kills).max().unwrap_or(0),
            throttled_pct_per_s: per_second(&window),
            // Set by the run, which knows the cgroup it made (run/finish.rs).
            limits: None,
        })
    }
}

/// `part` of `whole` in per cent (0 of nothing).
fn share(part: u64, whole: u64) -> f64 {
    if whole > 0 {
        part as f64 * 100.0 / whole as f64
    } else {
        0.0
    }
}

/// The throttled share of each whole second of the window: from the last reading at or before
/// the second's start to the last at or before its end (readings come every 250 ms).
fn per_second(window: &[&(f64, Reading)]) -> Vec<f64> {
    let Some((end, _)) = window.last() else {
        return Vec::new();
    };
    let at = |t: f64| {
        window
            .iter()
            .take_while(|(ts, _)| *ts <= t + 1e-9)
            .last()
            .or(window.first())
            .map(|(_, r)| r)
    };
    (0..end.floor() as usize)
        .filter_map(|k| {
            let (a, b) = (at(k as f64)?, at(k as f64 + 1.0)?);
            Some(share(
                b.throttled_periods.saturating_sub(a.throttled_periods),
                b.periods.saturating_sub(a.periods),
            ))
        })
        .collect()
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
    /// The phase's figures from its samples; `window_s`: the measured window's length, which
    /// the cgroup's throttling is counted over (see CgroupReport::over).
    pub fn from_samples(samples: Vec<Sample>, requests: u64, window_s: Option<f64>) -> Resources {
        let peak = |f: fn(&Sample) -> f64| samples.iter().map(f).fold(0.0, f64::max);
        let (first, last) = (
            samples.first().cloned().unwrap_or_default(),
            samples.last().cloned().unwrap_or_default(),
        );
        let readings: Vec<(f64, Reading)> = samples
            .iter()
            .filter_map(|s| Some((s.t, s.cgroup?)))
            .collect();
        let cgroup = CgroupReport::over(&readings, window_s);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Readings every 250 ms for `secs` seconds: 25 periods a second (a 40 ms period for
    /// round figures), the quota running out in `throttled(second)` of each second's periods.
    fn readings(secs: usize, throttled: impl Fn(usize) -> u64) -> Vec<(f64, Reading)> {
        let (mut periods, mut out) = (0u64, Vec::new());
        let mut thr = 0u64;
        for i in 0..=secs * 4 {
            let t = i as f64 * 0.25;
            if i > 0 {
                periods += 25 / 4 + u64::from(i % 4 == 0);
                if i % 4 == 0 {
                    thr += throttled(i / 4 - 1);
                }
            }
            out.push((
                t,
                Reading {
                    periods,
                    throttled_periods: thr,
                    memory_mb: 100.0,
                    ..Reading::default()
                },
            ));
        }
        out
    }

    #[test]
    fn throttling_is_counted_per_whole_second_of_the_measured_window_only() {
        // 10 s measured, throttled in 20 of 25 periods a second, then a 50 s drain of an
        // idle server, never throttled.
        let r = readings(60, |s| if s < 10 { 20 } else { 0 });
        let c = CgroupReport::over(&r, Some(10.0)).unwrap();
        assert_eq!(
            c.throttled_pct_per_s.len(),
            10,
            "{:?}",
            c.throttled_pct_per_s
        );
        assert!(c
            .throttled_pct_per_s
            .iter()
            .all(|p| (*p - 80.0).abs() < 1e-9));
        assert!((c.throttled_pct - 80.0).abs() < 1e-9, "{}", c.throttled_pct);
        assert_eq!(c.periods, 250);
        // Without a window: the drain dilutes it.
        let all = CgroupReport::over(&r, None).unwrap();
        assert!(all.throttled_pct < 20.0, "{}", all.throttled_pct);
    }

    #[test]
    fn an_oom_kill_while_draining_is_not_missed() {
        let mut r = readings(20, |_| 0);
        r.last_mut().unwrap().1.oom_kills = 1;
        r.last_mut().unwrap().1.memory_mb = 512.0;
        let c = CgroupReport::over(&r, Some(10.0)).unwrap();
        assert_eq!(c.oom_kills, 1);
        assert_eq!(c.memory_peak_mb, 512.0);
    }
}
