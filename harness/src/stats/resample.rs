//! Resampling: the units a bootstrap draws (whole runs, or the one-second intervals of one
//! run), the percentile bootstrap itself (seeded, so the same results give the same report),
//! and latency statistics of merged histogram counts.

use super::Estimate;
use crate::driver::summary::decode_histogram;
use crate::run::results::Run;
use crate::util::median;
use hdrhistogram::Histogram;
use std::path::Path;

pub const BOOTSTRAP_SAMPLES: usize = 1000;

/// One resampling unit: a run, or one second of a single run.
#[derive(Debug, Default)]
pub(super) struct Unit {
    pub ok: u64,
    pub ko: u64,
    pub secs: f64,
    /// (highest equivalent value in µs, count), ascending.
    pub counts: Vec<(u64, u64)>,
}

fn sparse(h: &Histogram<u64>) -> Vec<(u64, u64)> {
    h.iter_recorded().map(|v| (h.highest_equivalent(v.value_iterated_to()), v.count_at_value())).collect()
}

/// Percentile interval (2.5%, 97.5%) of `stat` over bootstrap resamples of `n` units.
pub(super) fn bootstrap(n: usize, seed: u64, mut stat: impl FnMut(&[usize]) -> Option<f64>) -> (Option<f64>, Option<f64>) {
    if n < 2 {
        return (None, None);
    }
    let mut rng = crate::util::SplitMix64::new(seed);
    let mut pick = vec![0usize; n];
    let mut values = Vec::with_capacity(BOOTSTRAP_SAMPLES);
    for _ in 0..BOOTSTRAP_SAMPLES {
        for p in pick.iter_mut() {
            *p = rng.below(n);
        }
        if let Some(v) = stat(&pick) {
            values.push(v);
        }
    }
    if values.is_empty() {
        return (None, None);
    }
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
    (Some(at(0.025)), Some(at(0.975)))
}

/// Latency statistics of resampled units, from their merged counts.
pub(super) struct Merger {
    values: Vec<u64>,
    units: Vec<Vec<(usize, u64)>>,
}

impl Merger {
    pub(super) fn new(units: &[Unit]) -> Merger {
        let mut values: Vec<u64> = units.iter().flat_map(|u| u.counts.iter().map(|c| c.0)).collect();
        values.sort_unstable();
        values.dedup();
        let units = units
            .iter()
            .map(|u| u.counts.iter().map(|(v, c)| (values.binary_search(v).expect("value collected above"), *c)).collect())
            .collect();
        Merger { values, units }
    }

    /// Merged counts of the picked units; None when they recorded nothing.
    pub(super) fn merge(&self, pick: &[usize]) -> Option<Vec<u64>> {
        let mut acc = vec![0u64; self.values.len()];
        for &p in pick {
            for &(i, c) in &self.units[p] {
                acc[i] += c;
            }
        }
        acc.iter().any(|c| *c > 0).then_some(acc)
    }

    /// Value (ms) at quantile `q` of merged counts, as HdrHistogram reads it.
    pub(super) fn quantile(&self, acc: &[u64], q: f64) -> f64 {
        let total: u64 = acc.iter().sum();
        let want = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for (i, c) in acc.iter().enumerate() {
            seen += c;
            if seen >= want {
                return self.values[i] as f64 / 1000.0;
            }
        }
        self.values.last().copied().unwrap_or(0) as f64 / 1000.0
    }

    pub(super) fn mean(&self, acc: &[u64]) -> f64 {
        let total: u64 = acc.iter().sum();
        let sum: f64 = acc.iter().zip(&self.values).map(|(c, v)| *c as f64 * *v as f64).sum();
        sum / total.max(1) as f64 / 1000.0
    }

    pub(super) fn stdev(&self, acc: &[u64]) -> f64 {
        let total: u64 = acc.iter().sum();
        let mean = self.mean(acc) * 1000.0;
        let var: f64 = acc.iter().zip(&self.values).map(|(c, v)| *c as f64 * (*v as f64 - mean).powi(2)).sum::<f64>() / total.max(1) as f64;
        var.sqrt() / 1000.0
    }
}



/// The per-second histograms of a run's interval log (measured seconds only).
pub(super) fn seconds_of(run: &Run, dir: &Path) -> Option<Vec<Unit>> {
    let bytes = std::fs::read(dir.join(run.histogram_log.as_ref()?)).ok()?;
    let mut hists: Vec<Histogram<u64>> = Vec::new();
    for entry in hdrhistogram::serialization::interval_log::IntervalLogIterator::new(&bytes) {
        if let Ok(hdrhistogram::serialization::interval_log::LogEntry::Interval(h)) = entry {
            use base64::Engine;
            let raw = base64::engine::general_purpose::STANDARD.decode(h.encoded_histogram()).ok()?;
            hists.push(hdrhistogram::serialization::Deserializer::new().deserialize(&mut raw.as_slice()).ok()?);
        }
    }
    let measured = run.summary.duration_s.floor() as usize;
    let units: Vec<Unit> = run
        .intervals
        .iter()
        .take(measured)
        .zip(hists)
        .map(|(row, h)| Unit { ok: row.ok, ko: row.errors, secs: 1.0, counts: sparse(&h) })
        .collect();
    (units.len() >= 2).then_some(units)
}

pub(super) fn run_unit(run: &Run) -> Option<Unit> {
    let h = decode_histogram(run.histogram.as_ref()?).ok()?;
    Some(Unit {
        ok: run.summary.ok,
        ko: run.summary.errors.total(),
        secs: run.summary.duration_s,
        counts: sparse(&h),
    })
}

pub(super) fn seed_of(a: &str, b: &str) -> u64 {
    a.bytes().chain(b.bytes()).fold(0xcbf2_9ce4_8422_2325, |h, c| (h ^ u64::from(c)).wrapping_mul(0x100_0000_01b3))
}

/// Median over runs with its bootstrap interval (resampling runs).
pub(super) fn over_runs(values: &[f64], seed: u64) -> Estimate {
    let (lo, hi) = bootstrap(values.len(), seed, |pick| Some(median(pick.iter().map(|&i| values[i]).collect())));
    Estimate { value: median(values.to_vec()), lo, hi }
}
