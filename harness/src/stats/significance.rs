//! When a difference between two contenders (or two result sets) is called significant: a
//! two-sided Mann-Whitney (Wilcoxon rank-sum) test over the runs' values, exact for any number
//! of runs (the permutation distribution of the rank sum, ties at their mid-rank, counted by
//! dynamic programming in `ranks`). Its false-positive rate is at most ALPHA when both
//! sides come from one distribution. With fewer than MIN_RUNS runs on a side no split can reach ALPHA (3 vs 3:
//! the smallest p is 0.1), so the difference is "not tested" rather than "not significant".

use super::ranks::rank_sum_p;

/// The false-positive rate a "significant" may have at most.
pub const ALPHA: f64 = 0.05;
/// Runs each side needs before a difference is tested (4 vs 4: the smallest p is 0.029).
pub const MIN_RUNS: usize = 4;

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
    Verdict::Tested {
        p: rank_sum_p(a, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::numbers::SplitMix64;

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
            super::super::ranks::mid_ranks(&[10.0, 20.0, 10.0, 30.0]),
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
        // Also with 12 vs 12 runs (as many as a sequential series takes) and with heavy ties.
        let called = (0..2000)
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
            called as f64 / 2000.0 <= ALPHA,
            "{called} of 2,000 identical 12-run pairs called significant"
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
