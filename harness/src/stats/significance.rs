//! When a difference between two contenders (or two result sets) is called significant: a
//! two-sided Mann-Whitney (Wilcoxon rank-sum) test over the runs' values, exact (every split of
//! the pooled ranks, ties at their mid-rank) up to 184,756 splits and a seeded Monte Carlo
//! permutation test beyond. Its false-positive rate is at most ALPHA when both sides come from
//! one distribution. With fewer than MIN_RUNS runs on a side no split can reach ALPHA (3 vs 3:
//! the smallest p is 0.1), so the difference is "not tested" rather than "not significant".

use crate::util::SplitMix64;

/// The false-positive rate a "significant" may have at most.
pub const ALPHA: f64 = 0.05;
/// Runs each side needs before a difference is tested (4 vs 4: the smallest p is 0.029).
pub const MIN_RUNS: usize = 4;
/// Splits enumerated exactly; beyond, this many random permutations.
const EXACT_LIMIT: u64 = 184_756;
const PERMUTATIONS: usize = 20_000;

/// What a test said of two sets of per-run values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// Fewer than MIN_RUNS values on a side (or a single within-run estimate).
    NotTested,
    /// Two-sided p-value of the Mann-Whitney test.
    Tested { p: f64 },
}

impl Verdict {
    pub fn significant(&self) -> Option<bool> {
        match self {
            Verdict::NotTested => None,
            Verdict::Tested { p } => Some(*p <= ALPHA),
        }
    }
}

/// Tests whether `a` and `b` (one value per run) come from distributions that differ.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Verdict {
    if a.len() < MIN_RUNS || b.len() < MIN_RUNS || a.iter().chain(b).any(|v| !v.is_finite()) {
        return Verdict::NotTested;
    }
    let ranks = mid_ranks(a.iter().chain(b).copied().collect());
    let (n, total) = (a.len(), ranks.len());
    let expected = n as f64 * (total as f64 + 1.0) / 2.0;
    let observed: f64 = ranks[..n].iter().sum();
    let extreme = (observed - expected).abs() - 1e-9;
    if extreme <= 0.0 {
        return Verdict::Tested { p: 1.0 };
    }
    let as_extreme = |sum: f64| (sum - expected).abs() >= extreme;
    if binomial(total as u64, n as u64) <= EXACT_LIMIT {
        let (mut hits, mut all) = (0u64, 0u64);
        each_subset(total, n, &mut |pick| {
            all += 1;
            hits += u64::from(as_extreme(pick.iter().map(|&i| ranks[i]).sum()));
        });
        return Verdict::Tested {
            p: hits as f64 / all as f64,
        };
    }
    // Seeded by the data, so the same runs give the same verdict.
    let seed = ranks
        .iter()
        .fold(0x9e37_79b9_u64, |h, r| h.rotate_left(7) ^ r.to_bits());
    let mut rng = SplitMix64::new(seed);
    let mut pool = ranks.clone();
    let mut hits = 1; // the observed split counts, so p is never 0 (a valid permutation p-value)
    for _ in 0..PERMUTATIONS {
        for i in 0..n {
            let j = i + rng.below(total - i);
            pool.swap(i, j);
        }
        hits += usize::from(as_extreme(pool[..n].iter().sum()));
    }
    Verdict::Tested {
        p: hits as f64 / (PERMUTATIONS + 1) as f64,
    }
}

/// Ranks 1..=n of `values` in their order, ties sharing the mean of their ranks.
fn mid_ranks(values: Vec<f64>) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&x, &y| values[x].total_cmp(&values[y]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let mid = (i + j) as f64 / 2.0 + 1.0;
        for k in i..=j {
            ranks[order[k]] = mid;
        }
        i = j + 1;
    }
    ranks
}

fn binomial(n: u64, k: u64) -> u64 {
    (0..k.min(n - k)).fold(1u64, |acc, i| acc.saturating_mul(n - i) / (i + 1))
}

/// Calls `f` with every subset of 0..n of size k (ascending indices).
fn each_subset(n: usize, k: usize, f: &mut dyn FnMut(&[usize])) {
    fn rec(start: usize, n: usize, k: usize, cur: &mut Vec<usize>, f: &mut dyn FnMut(&[usize])) {
        if cur.len() == k {
            return f(cur);
        }
        for i in start..=n - (k - cur.len()) {
            cur.push(i);
            rec(i + 1, n, k, cur, f);
            cur.pop();
        }
    }
    rec(0, n, k, &mut Vec::with_capacity(k), f);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run's throughput: `mean` with run-to-run noise of `cv` (normal, Box-Muller).
    fn runs(rng: &mut SplitMix64, n: usize, mean: f64, cv: f64) -> Vec<f64> {
        (0..n)
            .map(|_| {
                let (u1, u2) = (rng.unit().max(1e-12), rng.unit());
                mean * (1.0
                    + cv * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos())
            })
            .collect()
    }

    #[test]
    fn exact_p_values_match_the_tables() {
        // 4 vs 4, complete separation: 2 of the 70 splits are as extreme.
        let p = |a: &[f64], b: &[f64]| match mann_whitney(a, b) {
            Verdict::Tested { p } => p,
            Verdict::NotTested => panic!("not tested"),
        };
        assert!((p(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]) - 2.0 / 70.0).abs() < 1e-12);
        // 5 vs 5 separated: 2 / 252.
        assert!(
            (p(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]) - 2.0 / 252.0).abs()
                < 1e-12
        );
        // Identical samples: nothing to see.
        assert_eq!(p(&[5.0; 4], &[5.0; 4]), 1.0);
        assert!(p(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]) > 0.5);
        assert_eq!(
            mid_ranks(vec![10.0, 20.0, 10.0, 30.0]),
            vec![1.5, 3.0, 1.5, 4.0]
        );
    }

    #[test]
    fn three_runs_are_not_tested() {
        assert_eq!(
            mann_whitney(&[1.0, 2.0, 3.0], &[10.0, 11.0, 12.0]),
            Verdict::NotTested
        );
        assert_eq!(Verdict::NotTested.significant(), None);
    }

    #[test]
    fn false_positive_rate_is_at_most_five_percent() {
        // 2,000 pairs of 5 runs each from one distribution (throughput 1,000 req/s, 5% CV).
        let mut rng = SplitMix64::new(42);
        let called = (0..2000)
            .filter(|_| {
                mann_whitney(
                    &runs(&mut rng, 5, 1000.0, 0.05),
                    &runs(&mut rng, 5, 1000.0, 0.05),
                )
                .significant()
                    == Some(true)
            })
            .count();
        assert!(
            called as f64 / 2000.0 <= ALPHA,
            "{called} of 2,000 identical pairs called significant"
        );
        // Also with the permutation path (12 vs 12 runs) and with heavy ties.
        let called = (0..300)
            .filter(|_| {
                mann_whitney(
                    &runs(&mut rng, 12, 1000.0, 0.05),
                    &runs(&mut rng, 12, 1000.0, 0.05),
                )
                .significant()
                    == Some(true)
            })
            .count();
        assert!(
            called as f64 / 300.0 <= 0.08,
            "{called} of 300 identical 12-run pairs called significant"
        );
        let rounded = |v: Vec<f64>| {
            v.into_iter()
                .map(|x| (x / 50.0).round() * 50.0)
                .collect::<Vec<_>>()
        };
        let called = (0..1000)
            .filter(|_| {
                mann_whitney(
                    &rounded(runs(&mut rng, 5, 1000.0, 0.05)),
                    &rounded(runs(&mut rng, 5, 1000.0, 0.05)),
                )
                .significant()
                    == Some(true)
            })
            .count();
        assert!(
            called as f64 / 1000.0 <= ALPHA,
            "{called} of 1,000 tied pairs called significant"
        );
    }

    #[test]
    fn power_finds_a_twenty_percent_difference_at_five_runs() {
        // 5 runs each, 5% run-to-run CV, one side 20% faster.
        let mut rng = SplitMix64::new(7);
        let found = (0..2000)
            .filter(|_| {
                mann_whitney(
                    &runs(&mut rng, 5, 1000.0, 0.05),
                    &runs(&mut rng, 5, 1200.0, 0.05),
                )
                .significant()
                    == Some(true)
            })
            .count();
        assert!(found as f64 / 2000.0 >= 0.80, "found {found} of 2,000");
    }
}
