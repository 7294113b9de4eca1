//! The rule that decides whether a measured window shows a settled contender, judged the way a
//! test is judged: by how often it flags a flat window and how often it misses a move, on
//! series whose truth is known (`steady_corpus`). It answers, per figure, one of three things:
//! the figure moved inside the window, it did not, or the window is too short to tell at the
//! noise it showed (and how long it would have to be).
//!
//! Noise is read from the window itself: the spread of the differences between neighbouring
//! steps (a robust SD, so that one stolen second or one jump does not inflate it), which a
//! slow climb or a single step hardly moves, unlike the spread of the values. Against it two
//! kinds of move are tested, each standardised by the noise: a trend (the Theil-Sen slope over
//! the window) and a step (the difference of the medians on either side of the most telling
//! split, after a running median of three has taken out single-second spikes). The larger of
//! the two is compared with its quantile over flat series of the same length (`critical`, at
//! a third of FALSE_ALARM, as three figures are judged), found by simulation with this
//! machine's kinds of noise, so the false-alarm rate holds by construction and the corpus
//! test checks it.
//!
//! A window is judged only where a move of MOVE_TO_SEE would stand out: at a per-step noise
//! of s, a linear move of MOVE_TO_SEE over n steps is MOVE_TO_SEE / (s * sqrt(12 / n))
//! standard errors. The run lengthens a window until that is Z_PLANNED at the noise its
//! warm-up showed; after the run, a window whose own noise leaves fewer than Z_JUDGED is
//! reported as too short, with the length it needs, and never passed.

use crate::util::numbers::{gaussian, median, SplitMix64};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The move the rule is built to see: a record's term (results/warmup.rs), as a run's warning
/// names it.
pub use crate::results::warmup::MOVE_TO_SEE;

/// How often a flat window may be flagged as moving (the tests' level), shared by the three
/// figures judged (throughput, mean latency, CPU per answer): each is tested at a third of it.
pub const FALSE_ALARM: f64 = 0.05;

/// The level each figure's test is held to.
const PER_FIGURE: f64 = FALSE_ALARM / 3.0;

/// Standard errors a linear move of MOVE_TO_SEE spans in a window as the run sizes it from
/// its warm-up's noise: the critical value (about 3.3), the margin that gives 95% power, and
/// room for that noise being read from ten seconds only.
pub const Z_PLANNED: f64 = 8.5;

/// Standard errors such a move must span, at the noise the window itself showed, for the
/// window to be judged at all (the corpus test checks the power the pair buys).
pub const Z_JUDGED: f64 = 6.0;

/// Fewest steps a window is judged over.
pub const MIN_STEPS: usize = 6;

/// The least noise per step assumed (relative): a figure held exactly flat (a closed load
/// capped by its users) has no spread at all, and a zero would make any wobble infinite.
const NOISE_FLOOR: f64 = 0.0025;

/// Flat series simulated per window length for the critical value.
const TRIALS: usize = 2000;

/// Most steps a figure is judged over: a longer window is judged in longer steps (the same
/// power against a trend; the step's place is known less finely, which does not matter), so
/// that the critical value's simulation stays short.
pub const MAX_STEPS: usize = 60;

/// The warm-up's last seconds whose noise sizes the window, and lends itself to the window's
/// own noise estimate (same process, same load): ten seconds are too few to read noise from.
pub const LEAD_S: usize = 30;

/// Longest window the run gives a contender, whatever its noise (the plan's bound on `window =
/// "auto"`).
pub use crate::plan::MAX_WINDOW_S;

/// The seconds a measured window is given, at least the plan's `plan_s`: enough to see a move
/// of MOVE_TO_SEE at the noise of `lead` (the warm-up's last seconds, one value a second),
/// read over one-second steps or, where that needs less than a quarter of the time (a pool
/// answering in waves; white noise needs the same time either way, and taking the shorter of
/// two noisy readings would cut windows short), over two-second steps; at most MAX_WINDOW_S.
pub fn planned_seconds(lead: &[f64], plan_s: usize) -> usize {
    let at = |k: usize| {
        let grouped = group_sums(lead, k);
        let level = median(grouped.clone());
        (grouped.len() >= 5)
            .then(|| noise_of(&grouped, level))
            .flatten()
            .map(|noise| planned_steps(noise) * k)
    };
    let best = match (at(1), at(2)) {
        (Some(one), Some(two)) if two * 4 < one => Some(two),
        (one, two) => one.or(two),
    };
    best.map_or(plan_s, |s| s.clamp(plan_s, MAX_WINDOW_S.max(plan_s)))
}

/// The last whole groups of `k` values of `values`, each summed, in order.
pub fn group_sums(values: &[f64], k: usize) -> Vec<f64> {
    let whole = values.len() / k * k;
    values[values.len() - whole..]
        .chunks_exact(k)
        .map(|g| g.iter().sum())
        .collect()
}

/// What the rule found for one figure of one window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FigureCheck {
    /// Noise per step, relative to the window's median.
    pub noise: f64,
    /// How far the figure moved over the window, relative to its median: the trend's drift or
    /// the step between the medians of the most telling split, whichever stood out more.
    pub movement: f64,
    /// The move's size in standard errors, and the critical value it was held against.
    pub z: f64,
    pub critical: f64,
    /// Moved: beyond the critical value and beyond the band.
    pub moving: bool,
    /// Long enough, at this noise, to see a move of MOVE_TO_SEE.
    pub judgeable: bool,
}

/// The noise of a series per step, relative to `level`: the robust SD of its first
/// differences (their median absolute size x 1.4826) over sqrt(2). Taken about zero, not
/// about the differences' median: a pool answering in alternate waves has differences of two
/// signs, whose deviations from their median are mostly nil. None with fewer than three values.
pub fn noise_of(values: &[f64], level: f64) -> Option<f64> {
    let diffs: Vec<f64> = values.windows(2).map(|w| w[1] - w[0]).collect();
    if diffs.len() < 2 || level <= 0.0 {
        return None;
    }
    let typical = median(diffs.iter().map(|d| d.abs()).collect());
    Some((1.4826 * typical / std::f64::consts::SQRT_2 / level).max(NOISE_FLOOR))
}

/// The noise of a series per step, relative to `level`, from the plain SD of its first
/// differences over sqrt(2): for sums over many steps (CPU totals), where a collection's burst
/// counts in full, unlike in the robust `noise_of`. None with fewer than three values.
pub fn spread_of(values: &[f64], level: f64) -> Option<f64> {
    let diffs: Vec<f64> = values.windows(2).map(|w| w[1] - w[0]).collect();
    if diffs.len() < 2 || level <= 0.0 {
        return None;
    }
    let mean = diffs.iter().sum::<f64>() / diffs.len() as f64;
    let var = diffs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (diffs.len() - 1) as f64;
    Some((var.sqrt() / std::f64::consts::SQRT_2 / level).max(NOISE_FLOOR))
}

/// Steps a window is given, at per-step `noise` (relative) read before it, to see a move of
/// MOVE_TO_SEE (Z_PLANNED standard errors).
pub fn planned_steps(noise: f64) -> usize {
    steps_for(noise, Z_PLANNED)
}

/// Steps a window must have had, at the per-step `noise` it showed, to be judged.
pub fn needed_steps(noise: f64) -> usize {
    steps_for(noise, Z_JUDGED)
}

fn steps_for(noise: f64, z: f64) -> usize {
    let n = 12.0 * (z * noise / MOVE_TO_SEE).powi(2);
    (n.min(1e6).ceil() as usize).max(MIN_STEPS)
}

/// One figure of a window (`values`, one per step, NaN where not read) judged, its noise read
/// from `lead` (the steps just before the window, same load, where known) and the window
/// together. A figure moves when its standardised move exceeds the critical value for flat
/// windows of its length and its size exceeds `band`. None with fewer than MIN_STEPS numbers,
/// or fewer than two thirds of the steps read.
pub fn judge_figure(lead: &[f64], values: &[f64], band: f64) -> Option<FigureCheck> {
    let x: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let lead: Vec<f64> = lead.iter().copied().filter(|v| v.is_finite()).collect();
    if x.len() < MIN_STEPS || x.len() * 3 < values.len() * 2 {
        return None;
    }
    let level = median(x.clone());
    if level <= 0.0 {
        return None;
    }
    let both: Vec<f64> = lead.iter().chain(&x).copied().collect();
    let noise = noise_of(&both, level)?;
    let (z, movement) = moved(&x, noise * level);
    let critical = critical(x.len(), lead.len());
    Some(FigureCheck {
        noise,
        movement,
        z,
        critical,
        moving: z > critical && movement > band,
        judgeable: x.len() >= needed_steps(noise),
    })
}

/// Fewest steps on either side of a split: a median of three is not moved by one stolen step.
const MIN_SIDE: usize = 3;

/// The standardised size of the largest move in `x` against per-step noise `sigma` (same
/// unit), and its size relative to the median: the larger of the Theil-Sen trend and the
/// step between the medians either side of a split (each side at least MIN_SIDE steps).
fn moved(x: &[f64], sigma: f64) -> (f64, f64) {
    let n = x.len();
    let level = median(x.to_vec());
    let y = running_median3(x);
    let slope = crate::util::trend::theil_sen_slope(&y).unwrap_or(0.0);
    let nf = n as f64;
    let se_trend = sigma * (12.0 / (nf * (nf * nf - 1.0))).sqrt();
    let mut z = slope.abs() / se_trend;
    let mut movement = (slope * (nf - 1.0) / level).abs();
    for k in MIN_SIDE..=n.saturating_sub(MIN_SIDE) {
        let step = median(y[k..].to_vec()) - median(y[..k].to_vec());
        let se = sigma * (1.0 / k as f64 + 1.0 / (n - k) as f64).sqrt();
        let zk = step.abs() / se;
        if zk > z {
            z = zk;
            movement = movement.max((step / level).abs());
        }
    }
    (z, movement)
}

/// Each value replaced by the median of itself and its neighbours, the ends by Tukey's rule
/// (the median of the end, its smoothed neighbour and the line through the next two): a
/// single stolen second, at an end too, no longer reads as a step.
fn running_median3(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    if n < 3 {
        return x.to_vec();
    }
    let mut y = x.to_vec();
    for i in 1..n - 1 {
        y[i] = median(x[i - 1..=i + 1].to_vec());
    }
    y[0] = median(vec![x[0], y[1], 3.0 * y[1] - 2.0 * y[2]]);
    y[n - 1] = median(vec![x[n - 1], y[n - 2], 3.0 * y[n - 2] - 2.0 * y[n - 3]]);
    y
}

/// The CPU per answer of a window judged from totals: CPU seconds over answers in its first
/// and second halves (`cpu_s` and `answers` per step; NaN CPU where not sampled). One-second
/// readings of a process using a fraction of a CPU swing with the 10 ms ticks they are read in
/// and with each collection's burst; the halves' totals swing less. Their difference is held
/// against the differences the same steps give in every other order (a permutation test,
/// exact for exchangeable steps whatever their distribution, and conservative for tick
/// rounding, which one step repays to the next): only a drift that the steps' own scatter
/// cannot explain counts. None where fewer than CPU_STEPS steps were sampled with answers.
pub fn judge_cpu(cpu_s: &[f64], answers: &[f64], band: f64) -> Option<FigureCheck> {
    let (cpu, answered): (Vec<f64>, Vec<f64>) = cpu_s
        .iter()
        .zip(answers)
        .filter(|(c, a)| c.is_finite() && **a > 0.0)
        .map(|(c, a)| (*c, *a))
        .unzip();
    let n = cpu.len();
    if n < CPU_STEPS || n * 3 < cpu_s.len() * 2 {
        return None;
    }
    let total = cpu.iter().sum::<f64>() / answered.iter().sum::<f64>();
    if total.is_nan() || total <= 0.0 {
        return None;
    }
    let order: Vec<usize> = (0..n).collect();
    let change = halves_change(&cpu, &answered, &order) / total;
    let critical = permuted_quantile(&cpu, &answered) / total;
    let each: Vec<f64> = cpu.iter().zip(&answered).map(|(c, a)| c / a).collect();
    Some(FigureCheck {
        noise: spread_of(&each, total).unwrap_or(NOISE_FLOOR),
        movement: change,
        z: change,
        critical,
        moving: change > critical && change > band,
        judgeable: true,
    })
}

/// |CPU per answer of the second half - of the first| with the steps taken in `order`.
fn halves_change(cpu: &[f64], answers: &[f64], order: &[usize]) -> f64 {
    let h = order.len() / 2;
    let per = |idx: &[usize]| {
        idx.iter().map(|&i| cpu[i]).sum::<f64>() / idx.iter().map(|&i| answers[i]).sum::<f64>()
    };
    (per(&order[h..]) - per(&order[..h])).abs()
}

/// Fewest steps CPU per answer is judged over: with fewer, even the most ordered halves are
/// too common among the orders of the steps to fall below PER_FIGURE (2 of the 70 splits of
/// eight steps; 2 of 252 of ten).
pub const CPU_STEPS: usize = 10;

/// Orders of the steps the permutation test draws (seeded by the steps' count).
const PERMUTATIONS: usize = 4000;

/// The 1 - PER_FIGURE quantile of `halves_change` over random orders of the steps.
fn permuted_quantile(cpu: &[f64], answers: &[f64]) -> f64 {
    let n = cpu.len();
    let mut rng = SplitMix64::new(0x00C9_0000 ^ n as u64);
    let mut order: Vec<usize> = (0..n).collect();
    let mut changes: Vec<f64> = (0..PERMUTATIONS)
        .map(|_| {
            for i in (1..n).rev() {
                order.swap(i, rng.below(i + 1));
            }
            halves_change(cpu, answers, &order)
        })
        .collect();
    changes.sort_by(f64::total_cmp);
    changes[((1.0 - PER_FIGURE) * PERMUTATIONS as f64) as usize]
}

/// The 1 - PER_FIGURE quantile of the standardised move over flat windows of `n` steps whose noise
/// is read with `lead` steps before them. Simulated once per length (seeded, so the same on
/// every machine) under two kinds of flat noise this machine shows, the larger kept: normal
/// noise, and quiet noise (1%) with stolen seconds (one step in twenty loses 3% to 40%).
pub fn critical(n: usize, lead: usize) -> f64 {
    let n = simulated_length(n);
    cached(&CRITICAL, (n, lead), || {
        simulated(n, lead, |x, lead_x| {
            let both: Vec<f64> = lead_x.iter().chain(x).copied().collect();
            let level = median(x.to_vec());
            let sigma = noise_of(&both, level).unwrap_or(NOISE_FLOOR) * level;
            moved(x, sigma).0
        })
    })
}

/// The length a critical value is simulated at: `n` itself up to 20 steps, above that the next
/// multiple of 10 (the critical value grows slowly with the length, so the longer one is the
/// safer side), so that windows of many lengths share a few simulations.
fn simulated_length(n: usize) -> usize {
    if n <= 20 {
        n
    } else {
        n.div_ceil(10) * 10
    }
}

type Cache = OnceLock<Mutex<HashMap<(usize, usize), f64>>>;
static CRITICAL: Cache = OnceLock::new();

fn cached(cache: &Cache, key: (usize, usize), make: impl FnOnce() -> f64) -> f64 {
    let map = cache.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(v) = map.lock().map(|m| m.get(&key).copied()).ok().flatten() {
        return v;
    }
    let v = make();
    if let Ok(mut m) = map.lock() {
        m.insert(key, v);
    }
    v
}

/// The 1 - PER_FIGURE quantile of `stat` over flat series of `n` steps (with `lead` steps before
/// them), the larger of its values under the two kinds of noise of `critical`.
fn simulated(n: usize, lead: usize, stat: impl Fn(&[f64], &[f64]) -> f64) -> f64 {
    let mut rng = SplitMix64::new(0x0057_EAD1 ^ ((n as u64) << 16) ^ lead as u64);
    let quantile = |noise: &mut dyn FnMut(&mut SplitMix64) -> f64, rng: &mut SplitMix64| {
        let mut values: Vec<f64> = (0..TRIALS)
            .map(|_| {
                let series: Vec<f64> = (0..n + lead).map(|_| noise(rng)).collect();
                stat(&series[lead..], &series[..lead])
            })
            .collect();
        values.sort_by(f64::total_cmp);
        values[((1.0 - PER_FIGURE) * TRIALS as f64) as usize]
    };
    let normal = quantile(&mut |r| 1.0 + 0.1 * gaussian(r), &mut rng);
    let stolen = quantile(&mut |r| stolen_step(r, 0.01), &mut rng);
    normal.max(stolen)
}

/// A step of a flat series at level 1 with `noise` (relative SD), one in twenty losing 3% to
/// 40% of its value to the hypervisor (the steal spikes seen on this machine).
pub fn stolen_step(rng: &mut SplitMix64, noise: f64) -> f64 {
    let v = 1.0 + noise * gaussian(rng);
    if rng.unit() < 0.05 {
        v * (1.0 - 0.03 - 0.37 * rng.unit())
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_comes_from_neighbours_so_a_step_does_not_inflate_it_and_a_climb_hardly() {
        let flat: Vec<f64> = (0..20).map(|i| 100.0 + [1.0, -1.0][i % 2]).collect();
        let climb: Vec<f64> = flat.iter().enumerate().map(|(i, v)| v + i as f64).collect();
        let mut step = flat.clone();
        step[10..].iter_mut().for_each(|v| *v += 30.0);
        let a = noise_of(&flat, 100.0).unwrap();
        assert!((a - noise_of(&step, 100.0).unwrap()).abs() < 1e-9);
        // A climb of half the noise per step reads as at most half as much noise again.
        let c = noise_of(&climb, 100.0).unwrap();
        assert!(c <= a * 1.5 + 1e-9, "{a} {c}");
        assert_eq!(noise_of(&[1.0, 2.0], 1.0), None);
    }

    #[test]
    fn a_window_too_short_for_its_noise_is_not_judged_and_says_what_it_needs() {
        // 1% a second needs few steps; 12% (a CPU-bound load on two shared cores) needs minutes.
        assert_eq!(needed_steps(0.01), MIN_STEPS);
        let at_12 = needed_steps(0.12);
        assert!((140..=170).contains(&at_12), "{at_12}");
        assert!(planned_steps(0.12) > at_12);
        let mut rng = SplitMix64::new(3);
        let noisy: Vec<f64> = (0..8).map(|_| 1.0 + 0.12 * gaussian(&mut rng)).collect();
        let c = judge_figure(&[], &noisy, 0.05).unwrap();
        assert!(!c.judgeable, "{c:?}");
        assert!(judge_figure(&[], &noisy[..MIN_STEPS - 1], 0.05).is_none());
    }

    #[test]
    fn the_critical_value_is_the_same_on_every_call_and_grows_slowly_with_length() {
        let a = critical(10, 10);
        assert_eq!(a, critical(10, 10));
        assert!((3.0..7.0).contains(&a), "{a}");
        let long = critical(60, 10);
        assert!((3.0..7.0).contains(&long), "{long}");
    }

    #[test]
    fn cpu_per_answer_is_judged_from_halves_of_totals() {
        // 0.15 CPU a second read in 10 ms ticks: single seconds swing by a tenth, the totals
        // do not; a 30% rise in the second half stands out.
        let answers = vec![2000.0; 10];
        let ticks = [0.15, 0.14, 0.16, 0.15, 0.13, 0.17, 0.15, 0.14, 0.16, 0.15];
        let flat = judge_cpu(&ticks, &answers, 0.05).unwrap();
        assert!(!flat.moving, "{flat:?}");
        let rising: Vec<f64> = ticks
            .iter()
            .enumerate()
            .map(|(i, c)| if i >= 5 { c * 1.3 } else { *c })
            .collect();
        assert!(judge_cpu(&rising, &answers, 0.05).unwrap().moving);
    }
}
