//! Faults inside a run and what they did: downstream changes at set times (a latency spike that
//! starts and clears mid-run) with the time the contender took to get back to its baseline, and
//! overload (an open-model rate of several times the contender's measured capacity) with whether
//! it shed load, queued it, or absorbed it.

use crate::driver::summary::IntervalRow;
use crate::util::numbers::median;
use serde::{Deserialize, Serialize};

/// A change of the downstream service at `at_s` seconds into the measured phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    pub at_s: f64,
    /// The /_control query sent.
    pub downstream: String,
    /// False when the downstream did not accept it.
    pub applied: bool,
}

/// How a contender came back after a mid-run fault cleared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recovery {
    pub fault_at_s: f64,
    pub cleared_at_s: f64,
    /// Median of the per-second p99 before the fault.
    pub baseline_p99_ms: f64,
    /// Worst per-second p99 from the fault until recovery.
    pub worst_p99_ms: f64,
    /// Errors from the fault until recovery (or the end).
    pub errors: u64,
    /// Seconds from the fault clearing until p99 stayed within `limit_ms` with no errors for
    /// RECOVERED_FOR seconds; None when that never happened inside the run.
    pub recovered_after_s: Option<f64>,
    pub limit_ms: f64,
}

/// Seconds in a row that must be back at baseline to call it recovered.
pub const RECOVERED_FOR: usize = 3;
/// The bar: back within 5 s after the fault clears.
pub const RECOVERY_LIMIT_S: f64 = 5.0;

/// The bound a recovered second's p99 must stay under: 1.5 x the baseline plus 5 ms.
pub fn recovered_limit(baseline_p99_ms: f64) -> f64 {
    baseline_p99_ms * 1.5 + 5.0
}

/// Index of the first of RECOVERED_FOR seconds in a row that each answered with no errors and a
/// p99 under `limit_ms`.
fn first_recovered(rows: &[&IntervalRow], limit_ms: f64) -> Option<usize> {
    let good = |r: &IntervalRow| r.ok > 0 && r.errors == 0 && r.latency.p99 <= limit_ms;
    (0..rows.len()).find(|&i| {
        rows.len() - i >= RECOVERED_FOR && rows[i..i + RECOVERED_FOR].iter().all(|r| good(r))
    })
}

/// Recovery from the per-second rows of a run whose fault began at `fault_at` and cleared at
/// `cleared_at` (seconds into the measured phase). None when there is no second before the
/// fault to take a baseline from.
pub fn recovery(rows: &[IntervalRow], fault_at: f64, cleared_at: f64) -> Option<Recovery> {
    let measured: Vec<&IntervalRow> = rows.iter().filter(|r| !r.drain).collect();
    let before: Vec<f64> = measured
        .iter()
        .filter(|r| f64::from(r.t) + 1.0 <= fault_at && r.ok > 0)
        .map(|r| r.latency.p99)
        .collect();
    let baseline = (!before.is_empty()).then(|| median(before))?;
    let limit = recovered_limit(baseline);
    let after: Vec<&IntervalRow> = measured
        .iter()
        .copied()
        .filter(|r| f64::from(r.t) >= cleared_at.ceil())
        .collect();
    let back = first_recovered(&after, limit);
    let recovered_after_s = back.map(|i| (f64::from(after[i].t) - cleared_at).max(0.0));
    let until = back.map_or(f64::INFINITY, |i| f64::from(after[i].t));
    let during: Vec<&&IntervalRow> = measured
        .iter()
        .filter(|r| f64::from(r.t) + 1.0 > fault_at && f64::from(r.t) < until)
        .collect();
    Some(Recovery {
        fault_at_s: fault_at,
        cleared_at_s: cleared_at,
        baseline_p99_ms: baseline,
        worst_p99_ms: during.iter().map(|r| r.latency.p99).fold(0.0, f64::max),
        errors: during.iter().map(|r| r.errors).sum(),
        recovered_after_s,
        limit_ms: limit,
    })
}

/// What an overload phase showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverloadVerdict {
    /// Throughput of the closed-model probe (req/s).
    pub capacity_rps: f64,
    pub factor: f64,
    pub offered_rps: f64,
    pub ok_rps: f64,
    /// Refused or failed fast: error statuses, refused and reset connections.
    pub fast_errors: u64,
    /// Not answered within the driver's timeout.
    pub timeouts: u64,
    pub baseline_p99_ms: f64,
    pub overload_p99_ms: f64,
    pub after_p99_ms: f64,
    pub after_errors: u64,
    /// "queues", "sheds" or "absorbs".
    pub behaviour: String,
    pub explanation: String,
    /// Seconds into the after phase until it was back at baseline (see `recovery`).
    pub recovered_after_s: Option<f64>,
}

/// Classifies an overload phase against its baseline: queueing shows as latency (p99 over 10x
/// the baseline) or timeouts on more than 1% of requests; shedding as fast errors on more than
/// 1% while accepted requests stay fast.
#[allow(clippy::too_many_arguments)]
pub fn verdict(
    capacity: f64,
    factor: f64,
    sent: u64,
    ok_rps: f64,
    fast_errors: u64,
    timeouts: u64,
    baseline_p99: f64,
    overload_p99: f64,
    after: &[IntervalRow],
    after_p99: f64,
) -> OverloadVerdict {
    let share = |n: u64| {
        if sent == 0 {
            0.0
        } else {
            n as f64 / sent as f64
        }
    };
    let slow = overload_p99 > baseline_p99 * 10.0;
    let (behaviour, explanation) = if slow || share(timeouts) > 0.01 {
        ("queues", format!("accepted everything and made it wait: p99 {:.0} ms against {:.0} ms at half capacity, {:.1}% timed out", overload_p99, baseline_p99, share(timeouts) * 100.0))
    } else if share(fast_errors) > 0.01 {
        (
            "sheds",
            format!(
                "refused {:.1}% at once and kept the rest fast (p99 {:.0} ms)",
                share(fast_errors) * 100.0,
                overload_p99
            ),
        )
    } else {
        ("absorbs", format!("answered everything within 10x its half-capacity p99 ({:.0} ms against {:.0} ms): the probe underestimated its capacity", overload_p99, baseline_p99))
    };
    let rows: Vec<&IntervalRow> = after.iter().filter(|r| !r.drain).collect();
    let recovered_after_s =
        first_recovered(&rows, recovered_limit(baseline_p99)).map(|i| f64::from(rows[i].t));
    OverloadVerdict {
        capacity_rps: capacity,
        factor,
        offered_rps: capacity * factor,
        ok_rps,
        fast_errors,
        timeouts,
        baseline_p99_ms: baseline_p99,
        overload_p99_ms: overload_p99,
        after_p99_ms: after_p99,
        after_errors: after.iter().map(|r| r.errors).sum(),
        behaviour: behaviour.into(),
        explanation,
        recovered_after_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::summary::Latency;

    fn row(t: u32, p99: f64, errors: u64) -> IntervalRow {
        IntervalRow {
            t,
            target: 300.0,
            ok: 300,
            errors,
            latency: Latency {
                p99,
                ..Latency::default()
            },
            drain: false,
        }
    }

    #[test]
    fn recovery_is_timed_from_the_fault_clearing_to_three_good_seconds() {
        // 100 ms before, a spike from 10 s to 20 s, a queue that drains by 24 s.
        let mut rows: Vec<IntervalRow> = (0..10)
            .map(|t| row(t, 100.0 + f64::from(t % 3), 0))
            .collect();
        rows.extend((10..20).map(|t| row(t, 1600.0, if t == 15 { 4 } else { 0 })));
        rows.extend([
            row(20, 1400.0, 0),
            row(21, 900.0, 0),
            row(22, 300.0, 0),
            row(23, 140.0, 1),
            row(24, 120.0, 0),
            row(25, 104.0, 0),
            row(26, 103.0, 0),
            row(27, 101.0, 0),
        ]);
        let r = recovery(&rows, 10.0, 20.0).unwrap();
        assert_eq!(r.baseline_p99_ms, 101.0);
        assert_eq!(r.limit_ms, 156.5);
        assert_eq!(
            r.recovered_after_s,
            Some(4.0),
            "second 23 had an error; 24, 25, 26 are good"
        );
        assert_eq!(r.worst_p99_ms, 1600.0);
        assert_eq!(r.errors, 5);
        // Never back: the run ends in the queue.
        let stuck = recovery(&rows[..23], 10.0, 20.0).unwrap();
        assert_eq!(stuck.recovered_after_s, None);
        assert!(
            recovery(&rows[10..], 10.0, 20.0).is_none(),
            "no baseline before the fault"
        );
    }

    #[test]
    fn overload_verdicts() {
        let after: Vec<IntervalRow> = vec![
            row(0, 900.0, 0),
            row(1, 120.0, 0),
            row(2, 110.0, 0),
            row(3, 105.0, 0),
        ];
        let q = verdict(
            200.0, 5.0, 20_000, 200.0, 0, 3_000, 100.0, 9_000.0, &after, 400.0,
        );
        assert_eq!(q.behaviour, "queues");
        assert_eq!(q.offered_rps, 1000.0);
        assert_eq!(q.recovered_after_s, Some(1.0));
        let s = verdict(
            200.0, 5.0, 20_000, 200.0, 15_000, 0, 100.0, 130.0, &after, 110.0,
        );
        assert_eq!(s.behaviour, "sheds");
        let a = verdict(
            200.0, 5.0, 20_000, 1000.0, 10, 0, 100.0, 400.0, &after, 110.0,
        );
        assert_eq!(a.behaviour, "absorbs");
        assert_eq!(
            verdict(
                200.0,
                5.0,
                20_000,
                200.0,
                0,
                0,
                100.0,
                100.0,
                &after[..2],
                110.0
            )
            .recovered_after_s,
            None
        );
    }
}
