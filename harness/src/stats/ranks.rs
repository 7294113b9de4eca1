//! The exact null distribution of the Wilcoxon rank-sum statistic (ties at their mid-rank),
//! counted by dynamic programming: the p-value of the Mann-Whitney test (`significance`,
//! `sequential`) and the order statistics of the ratio interval (`sequential`).

use std::collections::HashMap;
use std::sync::Mutex;

/// Two-sided exact p-value of the rank-sum statistic of `a` among `a` and `b` pooled.
pub fn rank_sum_p(a: &[f64], b: &[f64]) -> f64 {
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    // Mid-ranks are multiples of one half: doubled, they are integers.
    let scores: Vec<usize> = mid_ranks(&pooled)
        .iter()
        .map(|r| (r * 2.0).round() as usize)
        .collect();
    let n = a.len();
    let observed: usize = scores[..n].iter().sum();
    let total: usize = scores.iter().sum();
    // E[sum] = n * total / N, doubled to stay in integers: compare |N*s - n*total|.
    let big_n = scores.len();
    let distance = |s: usize| (big_n * s).abs_diff(n * total);
    let extreme = distance(observed);
    let dist = sum_distribution(&scores, n);
    let all: f64 = dist.iter().sum();
    let hits: f64 = dist
        .iter()
        .enumerate()
        .filter(|(s, _)| distance(*s) >= extreme)
        .map(|(_, c)| c)
        .sum();
    (hits / all).min(1.0)
}

/// Number of ways to pick `n` of `scores` with each possible sum (index = sum). Untied
/// scores (2, 4, .., 2N) are the common case and are cached by (N, n).
pub(crate) fn sum_distribution(scores: &[usize], n: usize) -> Vec<f64> {
    /// Counts by (pooled runs, runs on one side).
    type Counts = HashMap<(usize, usize), Vec<f64>>;
    static CACHE: Mutex<Option<Counts>> = Mutex::new(None);
    let mut sorted = scores.to_vec();
    sorted.sort_unstable();
    let untied = sorted.iter().enumerate().all(|(i, &s)| s == 2 * (i + 1));
    if untied {
        let key = (scores.len(), n);
        let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        let cache = guard.get_or_insert_with(HashMap::new);
        return cache
            .entry(key)
            .or_insert_with(|| count_sums(&sorted, n))
            .clone();
    }
    count_sums(&sorted, n)
}

fn count_sums(scores: &[usize], n: usize) -> Vec<f64> {
    let max: usize = scores.iter().sum();
    // ways[k][s]: subsets of the scores seen so far with k members summing to s.
    let mut ways = vec![vec![0.0f64; max + 1]; n + 1];
    ways[0][0] = 1.0;
    for &score in scores {
        for k in (1..=n).rev() {
            for s in (score..=max).rev() {
                let add = ways[k - 1][s - score];
                if add != 0.0 {
                    ways[k][s] += add;
                }
            }
        }
    }
    ways.swap_remove(n)
}

/// Ranks 1..=N of `values`, ties sharing the mean of their ranks.
pub(crate) fn mid_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&x, &y| values[x].total_cmp(&values[y]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        for &k in &order[i..=j] {
            ranks[k] = (i + j) as f64 / 2.0 + 1.0;
        }
        i = j + 1;
    }
    ranks
}
