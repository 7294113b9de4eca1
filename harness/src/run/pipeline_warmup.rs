//! A pipeline's warm-up, judged at its end. The Kafka load tool reports its seconds only when
//! it ends, so a pipeline's warm-up cannot stop once the contender has settled as an HTTP
//! warm-up does; it runs for the scenario's `warmup` and is then judged by the same rule
//! (run/warmup.rs): records per second, their mean latency and the contender's CPU per record
//! must show no trend over its last SETTLE_WINDOW_S seconds. A run after a warm-up still
//! drifting is flagged "not at steady state", as an HTTP run is.

use super::warmup::{Settle, Totals, WarmupRecord, RULE_AT_END};
use crate::driver::summary::decode_histogram;
use crate::services::kafka_report::LoadReport;
use std::time::Duration;

/// The contender's CPU seconds read during a warm-up, each with the wall-clock time it was
/// read at (ms since the epoch), to be lined up with the load tool's seconds.
#[derive(Default)]
pub struct CpuReadings(Vec<(u64, f64)>);

impl CpuReadings {
    /// One reading, taken now.
    pub fn push(&mut self, cpu_s: f64) {
        self.0.push((crate::util::clock::unix_ms(), cpu_s));
    }

    /// The CPU seconds at `at_ms`, interpolated between the readings either side of it; None
    /// outside the readings.
    fn at(&self, at_ms: u64) -> Option<f64> {
        let after = self.0.iter().position(|r| r.0 >= at_ms)?;
        let (t1, c1) = self.0[after];
        if t1 == at_ms {
            return Some(c1);
        }
        let (t0, c0) = *self.0.get(after.checked_sub(1)?)?;
        Some(c0 + (c1 - c0) * (at_ms - t0) as f64 / (t1 - t0) as f64)
    }
}

/// The warm-up record of a pipeline warm-up of `warmup` that ended with `report`: settled
/// when its last SETTLE_WINDOW_S whole seconds were steady within `band` (0.05 = 5%).
pub fn judge(report: &LoadReport, warmup: Duration, cpu: &CpuReadings, band: f64) -> WarmupRecord {
    let whole = Duration::from_secs(warmup.as_secs());
    let mut settle = Settle::new(whole, whole, band);
    let start_ms = report.start_epoch_ms;
    let mut totals = Totals {
        cpu_s: cpu.at(start_ms),
        ..Totals::default()
    };
    settle.second(Duration::ZERO, totals);
    for t in 0..whole.as_secs() {
        if let Some(i) = report.intervals.get(t as usize) {
            totals.answers += i.ok + i.errors;
            // The second's mean latency, from its histogram (every record that arrived in it).
            if let Ok(h) = decode_histogram(&i.histogram) {
                totals.ok += h.len();
                totals.ok_latency_us += (h.mean() * h.len() as f64) as u64;
            }
        }
        totals.cpu_s = cpu.at(start_ms + (t + 1) * 1000);
        settle.second(Duration::from_secs(t + 1), totals);
    }
    WarmupRecord {
        seconds: warmup.as_secs_f64(),
        settled: settle.settled_at.is_some(),
        min_s: warmup.as_secs_f64(),
        max_s: warmup.as_secs_f64(),
        band_pct: band * 100.0,
        rule: RULE_AT_END.into(),
        curve: settle.curve(),
    }
}

/// The warning of a run measured after a pipeline warm-up still drifting at its end.
pub fn unsettled_warning(w: &WarmupRecord) -> String {
    format!(
        "not at steady state: at the end of its warm-up (a fixed {:.0} s) records per second, \
         their mean latency or CPU per record still drifted by more than {:.0}% over {} s; \
         figures may include warm-up",
        w.max_s,
        w.band_pct,
        super::warmup::SETTLE_WINDOW_S
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::summary::encode_histogram;
    use crate::services::kafka_report::LoadInterval;
    use hdrhistogram::Histogram;

    /// A warm-up report whose second `t` has `rate` records of latency `ms(t)` (ms), and CPU
    /// readings every 250 ms of `cpu_per_s(t)` CPU seconds in second `t`.
    fn warm_up(
        seconds: u64,
        rate: u64,
        ms: impl Fn(u64) -> u64,
        cpu_per_s: impl Fn(u64) -> f64,
    ) -> (LoadReport, CpuReadings) {
        let start = 1_800_000_000_000u64;
        let mut report = LoadReport {
            start_epoch_ms: start,
            ..LoadReport::default()
        };
        for t in 0..seconds + 5 {
            let mut h = Histogram::<u64>::new_with_bounds(1, 600_000_000, 3).unwrap();
            h.record_n(ms(t) * 1000, rate).unwrap();
            report.intervals.push(LoadInterval {
                t: t as u32,
                ok: rate,
                histogram: encode_histogram(&h).unwrap(),
                ..LoadInterval::default()
            });
        }
        // Read every 250 ms from half a second before the schedule's start.
        let mut cpu = CpuReadings::default();
        let mut total = 0.0;
        for q in 0..(seconds + 2) * 4 {
            let at = start - 500 + q * 250;
            cpu.0.push((at, total));
            total += cpu_per_s(at.saturating_sub(start) / 1000) / 4.0;
        }
        (report, cpu)
    }

    #[test]
    fn a_pipeline_still_warming_up_is_flagged_and_a_steady_one_is_not() {
        let warmup = Duration::from_secs(20);
        // Steady from second 3 on: 1,000 records/s at 200 ms, half a core.
        let (report, cpu) = warm_up(20, 1000, |t| if t < 3 { 900 } else { 200 }, |_| 0.5);
        let w = judge(&report, warmup, &cpu, 0.05);
        assert!(w.settled && !w.unsettled(), "{w:?}");
        assert_eq!(
            (w.rule.as_str(), w.seconds, w.curve.len()),
            (RULE_AT_END, 20.0, 20)
        );
        // Latency still falling by 10 ms a second over the last 10 s (a queue draining).
        let (report, cpu) = warm_up(20, 1000, |t| 600 - 10 * t, |_| 0.5);
        let w = judge(&report, warmup, &cpu, 0.05);
        assert!(w.unsettled(), "latency drifting: {w:?}");
        // Throughput and latency flat, CPU per record still falling (the JIT): not steady.
        let (report, cpu) = warm_up(20, 1000, |_| 200, |t| 1.2 - 0.04 * t as f64);
        let w = judge(&report, warmup, &cpu, 0.05);
        assert!(w.unsettled(), "CPU per record drifting: {w:?}");
        // The same CPU readings no longer line up when the tool's start is unknown (an older
        // tool): CPU is then not judged, and the flat figures are steady.
        let (mut report, cpu) = warm_up(20, 1000, |_| 200, |t| 1.2 - 0.04 * t as f64);
        report.start_epoch_ms = 0;
        assert!(judge(&report, warmup, &cpu, 0.05).settled);
    }

    #[test]
    fn a_warm_up_shorter_than_the_window_cannot_show_a_steady_state() {
        let (report, cpu) = warm_up(8, 1000, |_| 200, |_| 0.5);
        let w = judge(&report, Duration::from_secs(8), &cpu, 0.05);
        assert!(w.unsettled(), "{w:?}");
        assert!(unsettled_warning(&w).contains("a fixed 8 s"));
    }

    #[test]
    fn cpu_readings_are_interpolated_between_their_times() {
        let cpu = CpuReadings(vec![(1000, 1.0), (2000, 3.0)]);
        assert_eq!(cpu.at(1500), Some(2.0));
        assert_eq!(cpu.at(2000), Some(3.0));
        assert_eq!((cpu.at(500), cpu.at(2500)), (None, None));
    }
}
