//! Warm-up measured, not guessed: a warm-up goes on until the contender has settled, that is
//! until its throughput, mean latency and CPU per request of each of the last few seconds stay
//! within a band of one another, at least the plan's minimum and at most its maximum (the
//! scenario's `warmup`). How long it took is recorded with every run; a warm-up that reached
//! its maximum without settling is flagged.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Seconds in a row that must agree within the band.
pub const SETTLE_WINDOW_S: usize = 5;
/// CPU seconds per second below which CPU per request is not judged.
const MIN_CPU_S: f64 = 0.2;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WarmupRecord {
    /// How long the warm-up lasted.
    pub seconds: f64,
    /// Whether it ended because the contender had settled (false: it reached its maximum, or
    /// was fixed because the maximum was not above the minimum).
    pub settled: bool,
    pub min_s: f64,
    pub max_s: f64,
    /// The band the last SETTLE_WINDOW_S seconds had to stay within (per cent).
    pub band_pct: f64,
}

/// Whether every one of the three figures of `window` (throughput, mean latency, CPU per
/// request; a NaN figure is left out) stays within `band` (0.10 = 10%): largest over
/// smallest at most 1 + band.
pub fn steady(window: &[(f64, f64, f64)], band: f64) -> bool {
    if window.len() < SETTLE_WINDOW_S {
        return false;
    }
    let within = |f: &dyn Fn(&(f64, f64, f64)) -> f64| {
        let v: Vec<f64> = window.iter().map(f).filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return true;
        }
        let (lo, hi) = v.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), x| {
            (lo.min(*x), hi.max(*x))
        });
        lo > 0.0 && hi / lo <= 1.0 + band
    };
    within(&|s| s.0) && within(&|s| s.1) && within(&|s| s.2)
}

/// The settling watch of one warm-up, fed once a second by the loop beside the load.
pub struct Settle {
    pub min: Duration,
    /// The warm-up's end: a second after it (the warm-up load still draining, as at C10K when
    /// answers take longer than the warm-up) cannot settle it.
    pub max: Duration,
    pub band: f64,
    seconds: Vec<(f64, f64, f64)>,
    last: Option<(u64, u64, Option<f64>)>,
    pub settled_at: Option<Duration>,
}

impl Settle {
    pub fn new(min: Duration, max: Duration, band: f64) -> Settle {
        Settle {
            min,
            max,
            band,
            seconds: Vec::new(),
            last: None,
            settled_at: None,
        }
    }

    /// One second more: the totals so far of answers, their latency (µs) and the contender's
    /// CPU seconds (None when not sampled). True once settled.
    pub fn second(
        &mut self,
        elapsed: Duration,
        ok: u64,
        latency_us: u64,
        cpu_s: Option<f64>,
    ) -> bool {
        if let Some((ok0, lat0, cpu0)) = self.last {
            let n = ok.saturating_sub(ok0);
            let mean_ms = if n > 0 {
                latency_us.saturating_sub(lat0) as f64 / n as f64 / 1000.0
            } else {
                f64::NAN
            };
            // CPU time is read in 10 ms ticks: below a fifth of a core a second's reading is too
            // coarse to tell settling from rounding, and is left out.
            let cpu_per_req = match (cpu_s, cpu0) {
                (Some(c), Some(c0)) if n > 0 && c - c0 >= MIN_CPU_S => (c - c0) / n as f64,
                _ => f64::NAN,
            };
            self.seconds.push((n as f64, mean_ms, cpu_per_req));
        }
        self.last = Some((ok, latency_us, cpu_s));
        let window = &self.seconds[self.seconds.len().saturating_sub(SETTLE_WINDOW_S)..];
        if self.settled_at.is_none()
            && elapsed >= self.min
            && elapsed <= self.max
            && steady(window, self.band)
        {
            self.settled_at = Some(elapsed);
        }
        self.settled_at.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_contender_still_warming_up_is_not_settled_and_a_steady_one_is() {
        // Throughput rising 20% a second (a JIT at work), then flat within 3%.
        let warming = [
            (500.0, 10.0, 2.0),
            (600.0, 9.0, 1.8),
            (720.0, 8.0, 1.5),
            (860.0, 7.0, 1.3),
            (1000.0, 6.0, 1.1),
        ];
        assert!(!steady(&warming, 0.10));
        let flat = [
            (1000.0, 6.0, 1.0),
            (1010.0, 6.1, 1.02),
            (990.0, 5.9, 0.99),
            (1020.0, 6.0, 1.01),
            (1000.0, 6.05, 1.0),
        ];
        assert!(steady(&flat, 0.10));
        assert!(
            !steady(&flat[..4], 0.10),
            "fewer than {SETTLE_WINDOW_S} seconds cannot settle"
        );
        // Unsampled CPU (NaN) is left out, not a reason never to settle.
        let no_cpu: Vec<_> = flat.iter().map(|s| (s.0, s.1, f64::NAN)).collect();
        assert!(steady(&no_cpu, 0.10));
    }

    #[test]
    fn settling_waits_for_the_minimum_and_reads_seconds_from_totals() {
        let mut s = Settle::new(Duration::from_secs(8), Duration::from_secs(60), 0.10);
        let (mut ok, mut lat, mut cpu) = (0u64, 0u64, 0.0);
        let mut at = None;
        for t in 0..20u64 {
            // 1,000 answers a second of 5 ms each, 1 ms of CPU each, from the start.
            if s.second(Duration::from_secs(t), ok, lat, Some(cpu)) {
                at = at.or(Some(t));
            }
            ok += 1000;
            lat += 1000 * 5000;
            cpu += 1.0;
        }
        assert_eq!(
            at,
            Some(8),
            "steady from the start, but not before the minimum"
        );
    }

    #[test]
    fn seconds_after_the_warm_up_ended_do_not_settle_it() {
        // A 10 s warm-up whose answers only begin to flow steadily at 12 s (its load draining).
        let mut s = Settle::new(Duration::from_secs(5), Duration::from_secs(10), 0.10);
        let (mut ok, mut lat) = (0u64, 0u64);
        for t in 0..30u64 {
            s.second(Duration::from_secs(t), ok, lat, None);
            if t >= 12 {
                ok += 1000;
                lat += 1000 * 5000;
            }
        }
        assert_eq!(
            s.settled_at, None,
            "steady only after its end: not settled within the warm-up"
        );
    }
}
