//! Whether a series of seconds climbs or falls steadily, or only wanders: the Mann-Kendall
//! test. S counts, over every pair of seconds, +1 where the later is higher and -1 where it is
//! lower; with no trend every order of the values is equally likely, so S's distribution is
//! known exactly (from the number of permutations with each count of inversions) and its
//! two-sided p-value says how often noise alone would look this ordered. Beside it, the
//! Theil-Sen slope, how fast such a series moves.

/// Two-sided p-value of the Mann-Kendall test for a monotone trend in `values` (NaN values
/// left out); 1 with fewer than three values. Exact without ties; with ties, the normal
/// approximation with the tie-corrected variance.
pub fn mann_kendall_p(values: &[f64]) -> f64 {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    let n = v.len();
    if n < 3 {
        return 1.0;
    }
    let mut s: i64 = 0;
    for i in 0..n {
        for j in i + 1..n {
            s += match v[j].partial_cmp(&v[i]) {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
        }
    }
    let mut sorted = v.clone();
    sorted.sort_by(f64::total_cmp);
    let ties: Vec<usize> = sorted
        .chunk_by(|a, b| a == b)
        .map(<[f64]>::len)
        .filter(|&t| t > 1)
        .collect();
    if ties.is_empty() && n <= 60 {
        exact_p(n, s)
    } else {
        normal_p(n, s, &ties)
    }
}

/// P(|S| >= |s|) for n values without ties: S = pairs - 2 * inversions, and the number of
/// permutations of n with k inversions follows the Mahonian recurrence.
fn exact_p(n: usize, s: i64) -> f64 {
    let pairs = n * (n - 1) / 2;
    let mut counts = vec![1.0f64];
    for m in 2..=n {
        let mut next = vec![0.0; counts.len() + m - 1];
        for (k, c) in counts.iter().enumerate() {
            for extra in 0..m {
                next[k + extra] += c;
            }
        }
        counts = next;
    }
    let total: f64 = counts.iter().sum();
    let as_s = |k: usize| pairs as i64 - 2 * k as i64;
    let tail: f64 = (0..=pairs)
        .filter(|&k| as_s(k).abs() >= s.abs())
        .map(|k| counts[k])
        .sum();
    (tail / total).min(1.0)
}

fn normal_p(n: usize, s: i64, ties: &[usize]) -> f64 {
    let var_of = |t: usize| (t * (t - 1) * (2 * t + 5)) as f64;
    let var = (var_of(n) - ties.iter().map(|&t| var_of(t)).sum::<f64>()) / 18.0;
    if var <= 0.0 {
        return 1.0;
    }
    // Continuity correction: S moves in steps of 2.
    let z = (s.abs() as f64 - 1.0).max(0.0) / var.sqrt();
    (2.0 * upper_tail(z)).min(1.0)
}

/// P(Z > z) for a standard normal Z (Abramowitz and Stegun 7.1.26 for erfc; error < 1.5e-7).
fn upper_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.3275911 * x);
    let poly = t
        * (0.254829592
            + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    0.5 * poly * (-x * x).exp()
}

/// The Theil-Sen slope of `values` against their index (per second): the median of the slopes
/// between every pair. None with fewer than two values.
pub fn theil_sen_slope(values: &[f64]) -> Option<f64> {
    let mut slopes = Vec::new();
    for i in 0..values.len() {
        for j in i + 1..values.len() {
            slopes.push((values[j] - values[i]) / (j - i) as f64);
        }
    }
    if slopes.is_empty() {
        return None;
    }
    slopes.sort_by(f64::total_cmp);
    let m = slopes.len();
    Some(if m % 2 == 1 {
        slopes[m / 2]
    } else {
        (slopes[m / 2 - 1] + slopes[m / 2]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::numbers::SplitMix64;

    #[test]
    fn an_ordered_series_is_a_trend_and_exact_values_are_right() {
        // Five values in order: 2 of the 120 orders are as extreme.
        assert!((mann_kendall_p(&[1.0, 2.0, 3.0, 4.0, 5.0]) - 2.0 / 120.0).abs() < 1e-12);
        assert!((mann_kendall_p(&[5.0, 4.0, 3.0, 2.0, 1.0]) - 2.0 / 120.0).abs() < 1e-12);
        // S = 12 of 28 pairs: 7,212 of the 40,320 orders are as extreme (counted by brute force).
        let p = mann_kendall_p(&[3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0]);
        assert!((p - 7212.0 / 40320.0).abs() < 1e-12, "{p}");
        assert_eq!(mann_kendall_p(&[1.0, 2.0]), 1.0);
        // With ties the approximation is close to the exact value of the untied order.
        let tied = mann_kendall_p(&[1.0, 2.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        assert!(tied < 0.001, "{tied}");
    }

    #[test]
    fn noise_is_called_a_trend_at_most_at_the_tests_level() {
        let mut rng = SplitMix64::new(5);
        for n in [8, 12, 30] {
            let trials = 4000;
            let flagged = (0..trials)
                .filter(|_| {
                    let v: Vec<f64> = (0..n).map(|_| rng.unit()).collect();
                    mann_kendall_p(&v) <= 0.05
                })
                .count();
            let rate = flagged as f64 / trials as f64;
            // At most the level (S is discrete: at 8 values the exact test reaches 2.8%).
            assert!((0.02..=0.06).contains(&rate), "n = {n}: {rate}");
        }
    }

    #[test]
    fn theil_sen_ignores_outliers() {
        assert_eq!(theil_sen_slope(&[1.0, 2.0, 3.0, 4.0]), Some(1.0));
        assert_eq!(theil_sen_slope(&[5.0, 5.0, 100.0, 5.0, 5.0]), Some(0.0));
        assert_eq!(theil_sen_slope(&[1.0]), None);
    }
}
