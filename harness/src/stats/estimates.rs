//! How one cell's estimates and their intervals are made: latency from the runs' histograms
//! merged (never averaged), with an interval from the runs' own values or, for one run, from
//! its seconds; a figure each run has once from the runs' values.

use super::resample::{block_bootstrap, median_interval, sparse, Merger, Unit};
use super::Estimate;
use crate::driver::summary::{decode_histogram, Latency};
use crate::plan::metrics::{Figure, Stat};
use crate::results::figures::{figure, unsampled};
use crate::results::record::Run;
use crate::util::numbers::median;

/// Latency estimates of a cell: the value from every run's histogram merged, the interval
/// from the runs' own values, or from one run's seconds.
pub(super) struct LatencyEstimates {
    merged: Merger,
    merged_all: Option<Vec<u64>>,
    by_second: Merger,
    /// Runs with a histogram; per-run values are used only when every run has one.
    with_histogram: usize,
    all_runs: bool,
    seconds: usize,
    seed: u64,
}

impl LatencyEstimates {
    pub(super) fn new(whole: &[Unit], runs: usize, units: &[Unit], seed: u64) -> LatencyEstimates {
        let merged = Merger::new(whole);
        let merged_all = merged.merge(&(0..whole.len()).collect::<Vec<_>>());
        LatencyEstimates {
            merged,
            merged_all,
            by_second: Merger::new(units),
            with_histogram: whole.len(),
            all_runs: whole.len() == runs,
            seconds: units.len(),
            seed,
        }
    }

    /// A statistic of the merged histogram (the summary's own figure without histograms),
    /// with its interval.
    pub(super) fn of_stat(&self, stat: Stat, old: &Latency) -> Estimate {
        match stat {
            Stat::Quantile(q) => {
                // Results written before iobound kept histograms carry the summary's own
                // percentiles.
                let summary = old.kept_quantile(q);
                self.of(&|m, acc| m.quantile(acc, q), summary, q.to_bits())
            }
            Stat::Mean => self.of(&Merger::mean, old.mean, 3),
            Stat::Stdev => self.of(&Merger::stdev, old.stdev, 4),
        }
    }

    /// `f` of the merged histogram (or `old` without histograms), with its interval.
    fn of(&self, f: &dyn Fn(&Merger, &[u64]) -> f64, old: f64, salt: u64) -> Estimate {
        let value = self
            .merged_all
            .as_ref()
            .map(|acc| f(&self.merged, acc))
            .unwrap_or(old);
        let per_run = if self.all_runs {
            (0..self.with_histogram)
                .filter_map(|i| self.merged.merge(&[i]).map(|acc| f(&self.merged, &acc)))
                .collect()
        } else {
            Vec::new()
        };
        estimate(
            value,
            per_run,
            self.seconds,
            &|pick| {
                self.by_second
                    .merge(pick)
                    .map(|acc| f(&self.by_second, &acc))
            },
            self.seed ^ salt,
        )
    }
}

/// A figure each run has once (a resource peak, GC, warm-up): the median over runs with the
/// runs' interval, or the one run's value.
pub(super) fn per_run_estimate(runs: &[&Run], f: impl Fn(&Run) -> f64) -> Estimate {
    let v: Vec<f64> = runs.iter().map(|r| f(r)).collect();
    if v.len() >= 2 {
        estimate(median(v.clone()), v, 0, &|_| None, 0)
    } else {
        Estimate::point(v[0])
    }
}

/// What the sampler read: nothing when the server was not sampled (an external server without
/// --pid or --cmd), which is no figure rather than zero threads and zero CPU.
pub(super) fn sampled_estimate(runs: &[&Run], f: Figure) -> Estimate {
    if runs.iter().all(|r| unsampled(r)) {
        // (No run at all, too: a cell whose every run's CPU moved.)
        Estimate::point(f64::NAN)
    } else {
        per_run_estimate(runs, |r| figure(r, f))
    }
}

/// An estimate with its interval: over two runs or more, from the runs' values (order
/// statistics, see `median_interval`); for one run, a block bootstrap of `within` over its
/// `seconds` one-second intervals; with neither, no interval.
pub(super) fn estimate(
    value: f64,
    per_run: Vec<f64>,
    seconds: usize,
    within: &dyn Fn(&[usize]) -> Option<f64>,
    seed: u64,
) -> Estimate {
    if per_run.len() >= 2 {
        let (lo, hi, _) = median_interval(&per_run);
        return Estimate {
            value,
            lo: Some(lo),
            hi: Some(hi),
            per_run,
        };
    }
    let (lo, hi) = block_bootstrap(seconds, seed, within);
    Estimate {
        value,
        lo,
        hi,
        per_run,
    }
}

/// p99 of all requests due, from the runs' all-requests histograms merged; per run for the
/// interval and the test. NaN when a run lacks that histogram (results of an older iobound).
pub(super) fn p99_all(runs: &[&Run]) -> Estimate {
    let units: Option<Vec<Unit>> = runs
        .iter()
        .map(|r| {
            Some(Unit {
                counts: sparse(&decode_histogram(r.histogram_all.as_ref()?).ok()?),
                ..Unit::default()
            })
        })
        .collect();
    let Some(units) = units else {
        return Estimate::point(f64::NAN);
    };
    let m = Merger::new(&units);
    let all = m
        .merge(&(0..units.len()).collect::<Vec<_>>())
        .map_or(0.0, |acc| m.quantile(&acc, 0.99));
    let per_run: Vec<f64> = (0..units.len())
        .map(|i| m.merge(&[i]).map_or(0.0, |acc| m.quantile(&acc, 0.99)))
        .collect();
    if per_run.len() >= 2 {
        estimate(all, per_run, 0, &|_| None, 0)
    } else {
        Estimate::point(all)
    }
}
