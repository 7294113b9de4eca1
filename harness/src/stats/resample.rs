//! Resampling: the units a bootstrap draws (whole runs, or the one-second intervals of one
//! run), the percentile bootstrap itself (seeded, so the same results give the same report),
//! and latency statistics of merged histogram counts.

use crate::driver::summary::decode_histogram;
use crate::results::dir::ResultsDir;
use crate::results::record::Run;
use hdrhistogram::Histogram;

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

pub(super) fn sparse(h: &Histogram<u64>) -> Vec<(u64, u64)> {
    h.iter_recorded()
        .map(|v| {
            (
                h.highest_equivalent(v.value_iterated_to()),
                v.count_at_value(),
            )
        })
        .collect()
}

/// Length of the blocks a run of `n` seconds is resampled in: neighbouring seconds are not
/// independent (a GC pause, a queue draining), so they are drawn together.
pub(super) fn block_len(n: usize) -> usize {
    (n / 4).clamp(1, 5)
}

/// Percentile interval (2.5%, 97.5%) of `stat` over moving-block bootstrap resamples of `n`
/// units in order (blocks of `block_len(n)`); none below 4 units.
pub(super) fn block_bootstrap(
    n: usize,
    seed: u64,
    stat: &dyn Fn(&[usize]) -> Option<f64>,
) -> (Option<f64>, Option<f64>) {
    if n < 4 {
        return (None, None);
    }
    let block = block_len(n);
    let mut rng = crate::util::numbers::SplitMix64::new(seed);
    let mut pick = Vec::with_capacity(n + block);
    let mut values = Vec::with_capacity(BOOTSTRAP_SAMPLES);
    for _ in 0..BOOTSTRAP_SAMPLES {
        pick.clear();
        while pick.len() < n {
            let start = rng.below(n - block + 1);
            pick.extend(start..start + block);
        }
        pick.truncate(n);
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

/// A distribution-free confidence interval for the median of per-run values: the k-th lowest
/// to the k-th highest, with k the largest whose coverage 1 - 2 P(Binomial(n, 1/2) < k) is at
/// least 95%; with 5 values or fewer none reaches it, and min..max is returned. Returns (lo,
/// hi, coverage).
pub(super) fn median_interval(values: &[f64]) -> (f64, f64, f64) {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let coverage = |k: usize| {
        let below: f64 = (0..k).map(|i| binomial(n, i)).sum::<f64>() / 2f64.powi(n as i32);
        1.0 - 2.0 * below
    };
    let mut k = 1;
    while k < n / 2 && coverage(k + 1) >= 0.95 {
        k += 1;
    }
    (v[k - 1], v[n - k], coverage(k))
}

fn binomial(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// Latency statistics of resampled units, from their merged counts.
pub(super) struct Merger {
    values: Vec<u64>,
    units: Vec<Vec<(usize, u64)>>,
}

impl Merger {
    pub(super) fn new(units: &[Unit]) -> Merger {
        let mut values: Vec<u64> = units
            .iter()
            .flat_map(|u| u.counts.iter().map(|c| c.0))
            .collect();
        values.sort_unstable();
        values.dedup();
        let units = units
            .iter()
            .map(|u| {
                u.counts
                    .iter()
                    .map(|(v, c)| (values.binary_search(v).expect("value collected above"), *c))
                    .collect()
            })
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
        let sum: f64 = acc
            .iter()
            .zip(&self.values)
            .map(|(c, v)| *c as f64 * *v as f64)
            .sum();
        sum / total.max(1) as f64 / 1000.0
    }

    pub(super) fn stdev(&self, acc: &[u64]) -> f64 {
        let total: u64 = acc.iter().sum();
        let mean = self.mean(acc) * 1000.0;
        let var: f64 = acc
            .iter()
            .zip(&self.values)
            .map(|(c, v)| *c as f64 * (*v as f64 - mean).powi(2))
            .sum::<f64>()
            / total.max(1) as f64;
        var.sqrt() / 1000.0
    }
}

/// The per-second histograms of a run's interval log (measured seconds only).
pub(super) fn seconds_of(run: &Run, set: ResultsDir) -> Option<Vec<Unit>> {
    let hists = set.seconds(run)?;
    let measured = run.summary.duration_s.floor() as usize;
    let units: Vec<Unit> = run
        .intervals
        .iter()
        .take(measured)
        .zip(hists)
        .map(|(row, h)| Unit {
            ok: row.ok,
            ko: row.errors,
            secs: 1.0,
            counts: sparse(&h),
        })
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
    a.bytes()
        .chain(b.bytes())
        .fold(0xcbf2_9ce4_8422_2325, |h, c| {
            (h ^ u64::from(c)).wrapping_mul(0x100_0000_01b3)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_intervals_state_their_coverage() {
        // 3 runs: min..max covers the median 75% of the time (1 - 2/8), not 95%.
        let (lo, hi, c) = median_interval(&[2010.0, 1990.0, 2000.0]);
        assert_eq!((lo, hi), (1990.0, 2010.0));
        assert!((c - 0.75).abs() < 1e-12);
        assert!((median_interval(&[1.0; 5]).2 - 0.9375).abs() < 1e-12);
        // 10 runs: the 2nd lowest..2nd highest covers 97.9%; the 3rd would cover only 89%.
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        let (lo, hi, c) = median_interval(&ten);
        assert_eq!((lo, hi), (2.0, 9.0));
        assert!((0.95..0.99).contains(&c), "{c}");
    }

    /// The stated coverage is what the interval delivers: 20,000 simulated sets of runs from
    /// a skewed distribution (log-normal, median 1,000) at each number of runs, the share
    /// whose interval holds the true median within 1.5 points of the stated figure.
    #[test]
    fn median_interval_covers_as_stated_in_simulation() {
        let mut rng = crate::util::numbers::SplitMix64::new(25);
        let mut normal = || {
            let (u, v) = (rng.unit().max(1e-12), rng.unit());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        };
        for n in [3, 5, 8, 12] {
            let (mut covered, sims, mut stated) = (0, 20_000, 0.0);
            for _ in 0..sims {
                let runs: Vec<f64> = (0..n).map(|_| 1000.0 * (0.3 * normal()).exp()).collect();
                let (lo, hi, c) = median_interval(&runs);
                stated = c;
                covered += usize::from(lo <= 1000.0 && 1000.0 <= hi);
            }
            let got = covered as f64 / sims as f64;
            assert!(
                (got - stated).abs() < 0.015,
                "{n} runs: covered {got:.3}, stated {stated:.3}"
            );
        }
    }

    #[test]
    fn block_bootstrap_needs_a_few_seconds_and_keeps_blocks_together() {
        assert_eq!(block_bootstrap(3, 1, &|_| Some(1.0)), (None, None));
        assert_eq!(block_len(20), 5);
        // A run whose first half is slow and second half fast: the interval of the mean stays
        // inside the data's range and around the true mean.
        let v: Vec<f64> = (0..20)
            .map(|i| if i < 10 { 100.0 } else { 200.0 })
            .collect();
        let (lo, hi) = block_bootstrap(20, 3, &|pick| {
            Some(pick.iter().map(|&i| v[i]).sum::<f64>() / pick.len() as f64)
        });
        let (lo, hi) = (lo.unwrap(), hi.unwrap());
        assert!(
            lo >= 100.0 && hi <= 200.0 && lo < 150.0 && hi > 150.0,
            "{lo}..{hi}"
        );
    }
}
