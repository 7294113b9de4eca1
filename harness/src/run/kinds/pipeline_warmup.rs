//! A pipeline's warm-up, judged at its end. The Kafka load tool reports its seconds only when
//! it ends, so a pipeline's warm-up cannot stop once the contender has settled as an HTTP
//! warm-up does; it runs for the scenario's `warmup` and is then judged by the same rule
//! (observe/warmup.rs), over 5-second steps instead of single seconds: records per second, their
//! mean latency and the contender's CPU per record must show no trend over its last 50 seconds,
//! and its JIT compiler threads must have been nearly idle over them (a JVM still compiling is
//! on a plateau of its climb, as an HTTP contender's can be). A trend there is what the
//! measured window's check calls one, a drift beyond the band that is also ordered: the warm-up
//! cannot be extended, and a pipeline's batches and collections swing its CPU per record from
//! step to step by more than the band. A run after a warm-up still trending or compiling is
//! flagged "not at steady state", as an HTTP run is.

use crate::driver::summary::decode_histogram;
use crate::observe::settle_rule::{
    compiler_idle, compiler_mean, jit_curve_ms, judge_window, JIT_IDLE_CPU, WINDOW_TREND_P,
};
use crate::observe::warmup::{Settle, Totals};
use crate::results::warmup::{
    WarmupRecord, PIPELINE_JUDGED_S, PIPELINE_STEP_S, RULE_ORDERED_AT_END, SETTLE_WINDOW_S,
};
use crate::services::kafka_report::LoadReport;
use std::time::Duration;

/// CPU seconds read during a warm-up (the contender's, or its JIT compiler threads'), each with
/// the wall-clock time it was read at (ms since the epoch), to be lined up with the load tool's
/// seconds.
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

/// What was read beside a pipeline's warm-up: the contender's CPU, and its JIT compiler
/// threads' CPU (no readings where the runtime has no compiler threads to see).
#[derive(Default)]
pub struct WarmupReadings {
    pub cpu: CpuReadings,
    pub jit: CpuReadings,
}

/// The warm-up record of a pipeline warm-up of `warmup` that ended with `report`: settled
/// when its last PIPELINE_JUDGED_S seconds, in steps of PIPELINE_STEP_S, were steady within
/// `band` (0.05 = 5%) and its JIT compilers nearly idle over them. The curves are its records
/// per second and its compilers' CPU per second (ms), second by second.
pub fn judge(
    report: &LoadReport,
    warmup: Duration,
    read: &WarmupReadings,
    band: f64,
) -> WarmupRecord {
    let cpu = &read.cpu;
    let whole = warmup.as_secs();
    let start_ms = report.start_epoch_ms;
    // The totals at each whole second of the warm-up, from its start.
    let mut totals = vec![Totals {
        cpu_s: cpu.at(start_ms),
        ..Totals::default()
    }];
    let mut curve = Vec::new();
    for t in 0..whole {
        let mut now = totals[t as usize];
        if let Some(i) = report.intervals.get(t as usize) {
            now.answers += i.ok + i.errors;
            // The second's latency, from its histogram (every record that arrived in it).
            if let Ok(h) = decode_histogram(&i.histogram) {
                now.ok += h.len();
                now.ok_latency_us += (h.mean() * h.len() as f64) as u64;
            }
        }
        curve.push((now.answers - totals[t as usize].answers) as f64);
        now.cpu_s = cpu.at(start_ms + (t + 1) * 1000);
        totals.push(now);
    }
    // Judged in steps that end where the warm-up ends: the last SETTLE_WINDOW_S of them, by
    // the measured window's rule (a drift beyond the band that is also ordered).
    let end = Duration::from_secs(whole);
    let mut settle = Settle::new(end, end, band);
    for at in (whole % PIPELINE_STEP_S..=whole).step_by(PIPELINE_STEP_S as usize) {
        settle.second(Duration::from_secs(at), totals[at as usize]);
    }
    let steps = settle.window();
    let end_check = (steps.len() == SETTLE_WINDOW_S)
        .then(|| judge_window(steps, band))
        .flatten();
    // The compilers' CPU in each second (CPU seconds; NaN where not read), judged over the
    // same last seconds as the figures.
    let jit_totals: Vec<Option<f64>> = (0..=whole)
        .map(|t| read.jit.at(start_ms + t * 1000))
        .collect();
    let jit: Vec<f64> = jit_totals
        .windows(2)
        .map(|w| match (w[0], w[1]) {
            (Some(j0), Some(j1)) => (j1 - j0).max(0.0),
            _ => f64::NAN,
        })
        .collect();
    let judged = &jit[jit.len().saturating_sub(PIPELINE_JUDGED_S as usize)..];
    WarmupRecord {
        seconds: warmup.as_secs_f64(),
        settled: end_check.as_ref().is_some_and(|c| c.steady) && compiler_idle(judged),
        min_s: warmup.as_secs_f64(),
        max_s: warmup.as_secs_f64(),
        band_pct: band * 100.0,
        rule: RULE_ORDERED_AT_END.into(),
        curve,
        drift_pct: settle.drifts(),
        window: None,
        jit_curve: jit_curve_ms(&jit),
        steps: steps.iter().map(step_figures).collect(),
        end_check,
    }
}

/// One judged step as the record keeps it: records, mean latency (ms), CPU per record (ms);
/// None for a figure not judged in that step.
fn step_figures(step: &(f64, f64, f64)) -> [Option<f64>; 3] {
    let kept = |v: f64, scale: f64| v.is_finite().then(|| (v * scale * 1000.0).round() / 1000.0);
    [kept(step.0, 1.0), kept(step.1, 1.0), kept(step.2, 1000.0)]
}

/// The JIT compilers' mean CPU over the judged end of a pipeline warm-up (ms a second), when
/// above what a settled runtime uses.
fn compilers_busy_ms(w: &WarmupRecord) -> Option<f64> {
    let judged = &w.jit_curve[w.jit_curve.len().saturating_sub(PIPELINE_JUDGED_S as usize)..];
    compiler_mean(judged).filter(|ms| *ms > JIT_IDLE_CPU * 1000.0)
}

/// The warning of a run measured after a pipeline warm-up still drifting at its end, naming
/// the figures that drifted and by how much.
pub fn unsettled_warning(w: &WarmupRecord) -> String {
    let names = ["records per second", "their mean latency", "CPU per record"];
    // A figure drifted when it trended by the record's rule: ordered beyond the band, or (a
    // record judged before the order counted) beyond the band alone.
    let trended = |i: usize, d: f64| match &w.end_check {
        Some(c) => c.trending.get(i).copied().unwrap_or(false),
        // At least the band: drifts are kept rounded, one just over it may read as equal.
        None => d >= w.band_pct,
    };
    let drifted: Vec<String> = names
        .iter()
        .zip(&w.drift_pct)
        .enumerate()
        .filter_map(|(i, (name, d))| {
            d.filter(|d| trended(i, *d))
                .map(|d| format!("{name} by {d:.1}%"))
        })
        .collect();
    let compiling = compilers_busy_ms(w).map(|ms| {
        format!(
            "its JIT compilers still used {ms:.0} ms of CPU a second (a settled runtime's use at most {:.0})",
            JIT_IDLE_CPU * 1000.0
        )
    });
    let how = if w.end_check.is_some() {
        format!(
            "more than {:.0}%, step after step: Mann-Kendall p <= {WINDOW_TREND_P}",
            w.band_pct
        )
    } else {
        format!("more than {:.0}%", w.band_pct)
    };
    let why = if (w.curve.len() as u64) < PIPELINE_JUDGED_S {
        format!(
            "its warm-up (a fixed {:.0} s) was too short to judge",
            w.max_s
        )
    } else if drifted.is_empty() && compiling.is_some() {
        format!(
            "at the end of its warm-up (a fixed {:.0} s) {}",
            w.max_s,
            compiling.unwrap_or_default()
        )
    } else if drifted.is_empty() {
        format!("a {PIPELINE_STEP_S} s step of its warm-up had no records")
    } else {
        format!(
            "at the end of its warm-up (a fixed {:.0} s) {} still drifted ({how}){}",
            w.max_s,
            drifted.join(", "),
            compiling.map(|c| format!(" and {c}")).unwrap_or_default()
        )
    };
    format!(
        "not at steady state: {why}, judged over its last {PIPELINE_JUDGED_S} s in {PIPELINE_STEP_S} s steps; \
         figures may include warm-up"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::summary::encode_histogram;
    use crate::services::kafka_report::LoadInterval;
    use hdrhistogram::Histogram;

    /// A warm-up report of `seconds` at `rate` records/s, latency `ms(t)` (ms) and
    /// `cpu_per_s(t)` CPU seconds in second `t`, each second off by up to 15% as a pipeline's
    /// batches make it (the bursts even out over five seconds); CPU read every 250 ms.
    fn warm_up(
        seconds: u64,
        rate: u64,
        ms: impl Fn(u64) -> u64,
        cpu_per_s: impl Fn(u64) -> f64,
    ) -> (LoadReport, WarmupReadings) {
        bursty(11, seconds, rate, ms, cpu_per_s)
    }

    /// `warm_up` with the bursts drawn from `seed`, each second also off by up to 1%.
    fn bursty(
        seed: u64,
        seconds: u64,
        rate: u64,
        ms: impl Fn(u64) -> u64,
        cpu_per_s: impl Fn(u64) -> f64,
    ) -> (LoadReport, WarmupReadings) {
        // Each five seconds hold these bursts in a shuffled order (records, latency and CPU
        // each their own order).
        let mut rng = crate::util::numbers::SplitMix64::new(seed);
        let mut shuffled = || {
            let mut bursts = Vec::new();
            for _ in 0..seconds / 5 + 3 {
                let mut five = [1.15, 0.85, 1.1, 0.9, 1.0];
                for i in (1..5).rev() {
                    five.swap(i, rng.below(i + 1));
                }
                bursts.extend(five.iter().map(|b| b * (0.995 + 0.01 * rng.unit())));
            }
            bursts
        };
        let (records, latency, cpu_bursts) = (shuffled(), shuffled(), shuffled());
        let start = 1_800_000_000_000u64;
        let mut report = LoadReport {
            start_epoch_ms: start,
            ..LoadReport::default()
        };
        for t in 0..seconds + 5 {
            let n = (rate as f64 * records[t as usize]) as u64;
            let mut h = Histogram::<u64>::new_with_bounds(1, 600_000_000, 3).unwrap();
            h.record_n((ms(t) as f64 * latency[t as usize] * 1000.0) as u64, n)
                .unwrap();
            report.intervals.push(LoadInterval {
                t: t as u32,
                ok: n,
                histogram: encode_histogram(&h).unwrap(),
                ..LoadInterval::default()
            });
        }
        // Read every 250 ms from half a second before the schedule's start.
        let mut read = WarmupReadings::default();
        let mut total = 0.0;
        for q in 0..(seconds + 2) * 4 {
            let at = start - 500 + q * 250;
            read.cpu.0.push((at, total));
            let t = at.saturating_sub(start) / 1000;
            total += cpu_per_s(t) * cpu_bursts[t as usize] / 4.0;
        }
        (report, read)
    }

    #[test]
    fn a_pipeline_still_warming_up_is_flagged_and_a_bursty_steady_one_is_not() {
        let warmup = Duration::from_secs(90);
        // Steady from second 20 on: 4,000 records/s at 300 ms, half a core, in bursts.
        let (report, read) = warm_up(90, 4000, |t| if t < 20 { 900 } else { 300 }, |_| 0.5);
        let w = judge(&report, warmup, &read, 0.05);
        assert!(w.settled && !w.unsettled(), "{w:?}");
        assert_eq!(
            (w.rule.as_str(), w.seconds, w.curve.len()),
            (RULE_ORDERED_AT_END, 90.0, 90)
        );
        let first: f64 = w.curve[..5].iter().sum();
        assert!(
            (first - 20_000.0).abs() < 200.0,
            "records per second, in bursts: {:?}",
            w.curve
        );
        // Latency still falling by 4 ms a second over the last 50 s (a backlog draining).
        let (report, read) = warm_up(90, 4000, |t| 600 - 4 * t, |_| 0.5);
        let w = judge(&report, warmup, &read, 0.05);
        assert!(w.unsettled(), "latency drifting: {w:?}");
        let text = unsettled_warning(&w);
        assert!(
            text.contains("(a fixed 90 s) their mean latency by ")
                && text.contains(
                    "still drifted (more than 5%, step after step: Mann-Kendall p <= 0.05), \
                     judged over its last 50 s"
                ),
            "{text}"
        );
        // Records and latency flat, CPU per record still falling (the JIT): not steady.
        let (report, read) = warm_up(90, 4000, |_| 300, |t| 1.2 - 0.01 * t as f64);
        let w = judge(&report, warmup, &read, 0.05);
        assert!(w.unsettled(), "CPU per record drifting: {w:?}");
        assert!(
            unsettled_warning(&w).contains("(a fixed 90 s) CPU per record by "),
            "{}",
            unsettled_warning(&w)
        );
        // The same CPU readings no longer line up when the tool's start is unknown (an older
        // tool): CPU is then not judged, and the flat figures are steady.
        let (mut report, read) = warm_up(90, 4000, |_| 300, |t| 1.2 - 0.01 * t as f64);
        report.start_epoch_ms = 0;
        assert!(judge(&report, warmup, &read, 0.05).settled);
    }

    #[test]
    fn single_seconds_would_call_the_bursts_a_trend_and_five_second_steps_do_not() {
        // Forty steady, bursty pipelines: judged second by second (their last ten seconds'
        // records), many would seem to drift by more than 5%; judged in five-second steps,
        // none does.
        let (mut by_second, mut by_steps) = (0, 0);
        for seed in 0..40 {
            let (report, read) = bursty(seed, 90, 4000, |_| 300, |_| 0.5);
            let last: Vec<f64> = report.intervals[80..90]
                .iter()
                .map(|i| i.ok as f64)
                .collect();
            by_second +=
                usize::from(crate::observe::settle_rule::relative_drift(&last).unwrap() > 0.05);
            let w = judge(&report, Duration::from_secs(90), &read, 0.05);
            by_steps += usize::from(w.unsettled());
        }
        assert!(
            by_second >= 10,
            "{by_second} of 40 flagged second by second"
        );
        assert_eq!(
            by_steps, 0,
            "flagged in steps ({by_second} second by second)"
        );
    }

    #[test]
    fn steps_that_swing_in_no_order_settle_and_a_climb_through_them_does_not() {
        // Forty steady pipelines whose CPU per record swings from one 5 s step to the next by
        // up to a fifth (a collection in one, a larger batch in another), in no order: the
        // slope alone reads most as drifting, the ordered rule few.
        let swings = |seed: u64, by: f64| {
            let mut rng = crate::util::numbers::SplitMix64::new(1000 + seed);
            (0..20)
                .map(|_| 1.0 - by + 2.0 * by * rng.unit())
                .collect::<Vec<f64>>()
        };
        let (mut by_drift, mut by_order) = (0, 0);
        for seed in 0..40 {
            let swing = swings(seed, 0.2);
            let (report, read) = bursty(seed, 90, 4000, |_| 300, |t| 0.5 * swing[t as usize / 5]);
            let w = judge(&report, Duration::from_secs(90), &read, 0.05);
            assert_eq!(w.steps.len(), 10, "{w:?}");
            by_drift += usize::from(w.drift_pct[2].is_some_and(|d| d > 5.0));
            by_order += usize::from(w.unsettled());
        }
        assert!(by_drift >= 15, "{by_drift} of 40 beyond 5% by the slope");
        assert!(
            by_order <= 4,
            "{by_order} of 40 flagged, {by_drift} by the slope"
        );
        // CPU per record climbing 2% a step (18% over the ten judged) through swings of 5%.
        let swing = swings(7, 0.05);
        let climb = |t: u64| 0.5 * (1.0 + 0.02 * (t / 5) as f64) * swing[t as usize / 5];
        let (report, read) = bursty(7, 90, 4000, |_| 300, climb);
        let w = judge(&report, Duration::from_secs(90), &read, 0.05);
        assert!(w.unsettled(), "{w:?}");
        let check = w.end_check.as_ref().unwrap();
        assert_eq!(check.trending, [false, false, true], "{check:?}");
        let text = unsettled_warning(&w);
        assert!(
            text.contains("CPU per record by ") && !text.contains("records per second by"),
            "{text}"
        );
        // The judged steps are kept: the last one's CPU per record, in ms, near 0.5 s a second
        // times 1.34 over 4,000 records.
        let last = w.steps[9][2].unwrap();
        assert!((last - 0.5 * 1.34 / 4.0).abs() < 0.02, "{:?}", w.steps);
    }

    #[test]
    fn a_warm_up_shorter_than_what_is_judged_cannot_show_a_steady_state() {
        let (report, read) = warm_up(40, 4000, |_| 300, |_| 0.5);
        let w = judge(&report, Duration::from_secs(40), &read, 0.05);
        assert!(w.unsettled(), "{w:?}");
        let text = unsettled_warning(&w);
        assert!(
            text.contains("its warm-up (a fixed 40 s) was too short to judge")
                && text.contains("over its last 50 s in 5 s steps"),
            "{text}"
        );
    }

    #[test]
    fn a_pipeline_whose_compilers_are_still_busy_is_not_settled_however_flat_its_figures() {
        let warmup = Duration::from_secs(90);
        // Flat records, latency and CPU; the JIT compilers' CPU read every 250 ms, at `ms(t)`
        // ms of CPU a second in second t.
        let with_compilers = |ms: fn(u64) -> f64| {
            let (report, mut read) = warm_up(90, 4000, |_| 300, |_| 0.5);
            let mut total = 0.0;
            for q in 0..92 * 4 {
                let at = report.start_epoch_ms - 500 + q * 250;
                read.jit.0.push((at, total));
                total += ms(at.saturating_sub(report.start_epoch_ms) / 1000) / 4000.0;
            }
            judge(&report, warmup, &read, 0.05)
        };
        // Compiling at 60 ms a second to the end: a plateau, not a steady state.
        let w = with_compilers(|_| 60.0);
        assert!(w.unsettled(), "{w:?}");
        assert_eq!(w.jit_curve.len(), 90);
        assert!(
            w.jit_curve.iter().all(|ms| (ms - 60.0).abs() < 0.5),
            "{:?}",
            w.jit_curve
        );
        let text = unsettled_warning(&w);
        assert!(
            text.contains("(a fixed 90 s) its JIT compilers still used 60 ms of CPU a second")
                && !text.contains("drifted"),
            "{text}"
        );
        // Busy for the first 30 s, then nearly idle: settled.
        let w = with_compilers(|t| if t < 30 { 300.0 } else { 5.0 });
        assert!(w.settled && !w.unsettled(), "{w:?}");
        assert!(
            w.jit_curve[0] > 250.0 && w.jit_curve[89] < 10.0,
            "{:?}",
            w.jit_curve
        );
    }

    #[test]
    fn cpu_readings_are_interpolated_between_their_times() {
        let cpu = CpuReadings(vec![(1000, 1.0), (2000, 3.0)]);
        assert_eq!(cpu.at(1500), Some(2.0));
        assert_eq!(cpu.at(2000), Some(3.0));
        assert_eq!((cpu.at(500), cpu.at(2500)), (None, None));
    }
}
