//! The futility rule's error rates, by simulation: questions with a known truth (identical,
//! equivalent, 20% apart) run through the sequential design with and without the rule, and how
//! often each was called different, how much power the rule keeps and how many runs it saves.
//! method.md renders these figures; the tests assert them.

use super::futility::{chance_to_decide, look, Look, FUTILE_BELOW};
use super::sequential::MIN_LOOK;
use crate::util::numbers::{gaussian, SplitMix64};

/// Runs a side used and whether each question was called different, for a simulated design
/// with or without the futility rule: the figures method.md renders and the tests assert.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcomes {
    pub different: f64,
    pub decided: f64,
    pub stopped_for_futility: f64,
    /// Mean runs a side a question took.
    pub runs: f64,
}

/// `series` simulated questions, b `shift` times a with log-normal run-to-run `noise`, looked
/// at after every round from MIN_LOOK to `max_runs` at `alpha` within `margin`; with
/// `futility`, stopped where the rule says so.
pub fn simulate(
    series: usize,
    (shift, noise): (f64, f64),
    (margin, alpha, max_runs): (f64, f64, usize),
    futility: bool,
    seed: u64,
) -> Outcomes {
    let mut rng = SplitMix64::new(seed);
    let (mut different_n, mut decided_n, mut futile_n, mut runs_n) = (0, 0, 0, 0);
    for _ in 0..series {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for round in 1..=max_runs {
            a.push((noise * gaussian(&mut rng)).exp());
            b.push(shift * (noise * gaussian(&mut rng)).exp());
            let last = round == max_runs;
            if round < MIN_LOOK {
                continue;
            }
            let said = look(&a, &b, margin, alpha);
            if said != Look::Open {
                decided_n += 1;
                different_n += usize::from(said == Look::Different);
                runs_n += round;
                break;
            }
            if last {
                runs_n += round;
            } else if futility
                && chance_to_decide(&a, &b, margin, alpha, max_runs - round) < FUTILE_BELOW
            {
                futile_n += 1;
                runs_n += round;
                break;
            }
        }
    }
    let of = |k: usize| k as f64 / series as f64;
    Outcomes {
        different: of(different_n),
        decided: of(decided_n),
        stopped_for_futility: of(futile_n),
        runs: runs_n as f64 / series as f64,
    }
}

/// The simulated figures of the rule: each design with and without it, 1,000 series each
/// (computed once; the tests assert on them and method.md renders them).
pub struct Figures {
    /// Identical pairs at 5% and 10% run-to-run noise: (with the rule, without).
    pub identical: [(Outcomes, Outcomes); 2],
    /// b 20% above a at 5% and 10% noise.
    pub twenty: [(Outcomes, Outcomes); 2],
    /// b 2% above a (inside the margin) at 10% noise.
    pub near: (Outcomes, Outcomes),
}

/// The noise levels of `Figures`.
pub const SIMULATED_NOISE: [f64; 2] = [0.05, 0.10];

pub fn figures() -> &'static Figures {
    use super::sequential::{DEFAULT_MARGIN, LOOK_ALPHA, MAX_RUNS};
    static FIGURES: std::sync::OnceLock<Figures> = std::sync::OnceLock::new();
    FIGURES.get_or_init(|| {
        let design = (DEFAULT_MARGIN, LOOK_ALPHA, MAX_RUNS);
        let pair = |shift: f64, noise: f64| {
            let seed = 41 ^ (shift * 1000.0) as u64 ^ ((noise * 1000.0) as u64) << 16;
            (
                simulate(1000, (shift, noise), design, true, seed),
                simulate(1000, (shift, noise), design, false, seed),
            )
        };
        Figures {
            identical: SIMULATED_NOISE.map(|n| pair(1.0, n)),
            twenty: SIMULATED_NOISE.map(|n| pair(1.2, n)),
            near: pair(1.02, 0.10),
        }
    })
}

impl Figures {
    /// The highest rate of "different" for identical pairs with the rule.
    pub fn false_positive(&self) -> f64 {
        self.identical
            .iter()
            .map(|(w, _)| w.different)
            .fold(0.0, f64::max)
    }

    /// The lowest share of the power without the rule it keeps for a 20% difference.
    pub fn power_kept(&self) -> f64 {
        (self.twenty.iter())
            .map(|(w, wo)| w.different / wo.different)
            .fold(f64::INFINITY, f64::min)
    }

    /// The share of runs it saves on identical pairs at 10% noise, 2% apart at 10%, and 20%
    /// apart at 10%.
    pub fn saved(&self) -> [f64; 3] {
        let saved = |(w, wo): &(Outcomes, Outcomes)| 1.0 - w.runs / wo.runs;
        [
            saved(&self.identical[1]),
            saved(&self.near),
            saved(&self.twenty[1]),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn futility_keeps_false_positives_and_power_and_saves_runs() {
        let f = figures();
        eprintln!(
            "identical {:?}\ntwenty {:?}\nnear {:?}",
            f.identical, f.twenty, f.near
        );
        // Identical pairs: "different" at most 5% with the rule, and never more than without.
        for (with, without) in &f.identical {
            assert!(with.different <= 0.05, "{with:?}");
            assert!(with.different <= without.different, "{with:?} {without:?}");
        }
        assert!(f.false_positive() <= 0.05);
        // A 20% difference: at least 95% of the power without the rule, at 5% and 10% noise.
        assert!(f.power_kept() >= 0.95, "{}", f.power_kept());
        // Machine time saved where nothing can be decided (identical, or 2% apart, at 10%
        // noise): at least a fifth of the runs.
        let [identical, near, _] = f.saved();
        assert!(identical >= 0.2 && near >= 0.2, "{:?}", f.saved());
    }
}
