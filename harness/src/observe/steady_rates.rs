//! The steady-state rule's error rates on the labelled corpus (observe/steady_corpus.rs): each
//! kind's series judged, how many the rule kept, flagged as moving or called too short, and
//! over all kinds how often a flat window is thrown away (a false alarm) and how often a window
//! that moved by MOVE_TO_SEE or more is kept (a miss).

use super::steady_corpus::{kinds, Case, Truth, BAND, PER_KIND};
use super::steady_rule::MOVE_TO_SEE;
use super::window_judge::judge_steps;
use crate::results::warmup::WindowCheck;
use crate::util::numbers::SplitMix64;
use std::sync::OnceLock;

/// How the rule judged the series of one kind.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub kind: String,
    pub truth: Truth,
    pub asserted: bool,
    pub cpu: bool,
    pub series: usize,
    /// Kept for verdicts: the run called steady (and, for a kind about CPU per answer, that
    /// figure not moved).
    pub steady: usize,
    /// Flagged as moving.
    pub moving: usize,
    /// Called too short to judge.
    pub too_short: usize,
}

impl Outcome {
    /// The share of this kind's series the rule got wrong: kept when it moved, left out when
    /// it was flat.
    pub fn wrong(&self) -> f64 {
        let wrong = match self.truth {
            Truth::Flat => self.series - self.steady,
            Truth::Moves => self.steady,
        };
        wrong as f64 / self.series as f64
    }
}

/// The judgement of one case by the rule as the run applies it (one-second steps, BAND).
pub fn judge(case: &Case) -> WindowCheck {
    judge_steps(&case.window, &case.lead, 1, BAND)
}

/// Each kind's outcome over `per_kind` series (seeded by the kind's place, so reproducible).
pub fn outcomes(per_kind: usize) -> Vec<Outcome> {
    kinds()
        .iter()
        .enumerate()
        .map(|(i, kind)| {
            let mut rng = SplitMix64::new(0x00C0_4B05 + i as u64);
            let checks: Vec<WindowCheck> = (0..per_kind)
                .map(|_| judge(&kind.series(&mut rng)))
                .collect();
            Outcome {
                kind: kind.name.clone(),
                truth: kind.truth,
                asserted: kind.asserted,
                cpu: kind.cpu,
                series: per_kind,
                steady: checks
                    .iter()
                    .filter(|c| c.steady && !(kind.cpu && c.trending.get(2) == Some(&true)))
                    .count(),
                moving: checks
                    .iter()
                    .filter(|c| c.trending.iter().any(|t| *t))
                    .count(),
                too_short: checks.iter().filter(|c| c.needs_s.is_some()).count(),
            }
        })
        .collect()
}

/// The rule's error rates over the asserted kinds: flat series left out, moving series kept.
#[derive(Debug, Clone, Copy)]
pub struct Rates {
    pub false_alarm: f64,
    pub miss: f64,
    /// The worst single kind of each.
    pub worst_false_alarm: f64,
    pub worst_miss: f64,
    /// How often a CPU per answer that climbed entered the verdicts (not asserted: a 10 s
    /// window holds ten CPU steps).
    pub cpu_miss: f64,
}

/// The rates over `outcomes`' asserted kinds.
pub fn rates(outcomes: &[Outcome]) -> Rates {
    let of = |truth: Truth| {
        let kinds: Vec<&Outcome> = outcomes
            .iter()
            .filter(|o| o.asserted && o.truth == truth)
            .collect();
        let series: usize = kinds.iter().map(|o| o.series).sum();
        let wrong: f64 = kinds.iter().map(|o| o.wrong() * o.series as f64).sum();
        let worst = kinds.iter().map(|o| o.wrong()).fold(0.0, f64::max);
        (wrong / series.max(1) as f64, worst)
    };
    let (false_alarm, worst_false_alarm) = of(Truth::Flat);
    let (miss, worst_miss) = of(Truth::Moves);
    let cpu_miss = outcomes
        .iter()
        .find(|o| o.cpu && o.truth == Truth::Moves)
        .map_or(f64::NAN, Outcome::wrong);
    Rates {
        false_alarm,
        miss,
        worst_false_alarm,
        worst_miss,
        cpu_miss,
    }
}

/// The corpus's rates at PER_KIND series a kind, computed once per process (docs quote them).
pub fn corpus_rates() -> Rates {
    static RATES: OnceLock<Rates> = OnceLock::new();
    *RATES.get_or_init(|| rates(&outcomes(PER_KIND)))
}

/// The move the rule is built to see, in per cent (for docs).
pub fn move_to_see_pct() -> f64 {
    MOVE_TO_SEE * 100.0
}
