//! A labelled corpus of measured windows whose truth is known, on which observe/steady_rates.rs
//! measures the steady-state rule's error rates: how often a flat window is thrown away (a false
//! alarm: flagged as moving, or called too short) and how often a window that moved by MOVE_TO_SEE
//! or more is kept (a miss). Series are generated with fixed seeds, with the noise this machine
//! shows (committed runs: about 1% a second on a 100 ms wait, with stolen seconds; 5% for an event
//! loop there; 11-15% on `/plaintext`), each a warm-up's last LEAD_S seconds and a window as long
//! as the run makes it at that noise (`planned_seconds`). Real windows from committed and fresh
//! runs, labelled from their rows, are cases too (`real_cases`). The test prints the rates per kind
//! and asserts the targets; docs/method.md renders them (pages/rules.rs).

use super::steady_rule::{planned_seconds, stolen_step, LEAD_S, MOVE_TO_SEE};
use super::window_judge::Step;
use crate::util::numbers::gaussian;
use crate::util::numbers::SplitMix64;

/// The band a move must also exceed (the plans' default `warmup_band`, 5%).
pub const BAND: f64 = 0.05;

/// Series generated per kind.
pub const PER_KIND: usize = 300;

/// Per-second noise of the three kinds of load (a fraction of the level; see `Noise`).
pub const NOISE_QUIET: f64 = 0.01;
pub const NOISE_LOOP: f64 = 0.05;
pub const NOISE_BUSY: f64 = 0.12;

/// The largest step and slowdown, and the largest climb, of the moving kinds (each at least
/// MOVE_TO_SEE).
pub const STEP_MAX: f64 = 0.5;
pub const CLIMB_MAX: f64 = 1.0;

/// The climbs below what the rule is built to see: reported, not asserted.
pub const SMALL_CLIMB: (f64, f64) = (0.05, 0.15);

/// Whether a series is flat or moves (by MOVE_TO_SEE or more where the kind is asserted).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Truth {
    Flat,
    Moves,
}

/// One series: the warm-up's last seconds (answers a second) and the measured window.
pub struct Case {
    pub lead: Vec<f64>,
    pub window: Vec<Step>,
}

/// Per-second noise of answers a second, as seen on this machine.
#[derive(Clone, Copy)]
enum Noise {
    /// 1% with stolen seconds: a 100 ms wait.
    Quiet,
    /// 5%: an event loop on a 100 ms wait.
    Loop,
    /// 12% with stolen seconds: a CPU-bound load on two shared cores (`/plaintext`).
    Busy,
}

impl Noise {
    fn draw(self, rng: &mut SplitMix64) -> f64 {
        match self {
            Noise::Quiet => stolen_step(rng, NOISE_QUIET),
            Noise::Loop => 1.0 + NOISE_LOOP * gaussian(rng),
            Noise::Busy => stolen_step(rng, NOISE_BUSY),
        }
    }

    fn words(self) -> &'static str {
        match self {
            Noise::Quiet => "1% a second, stolen seconds",
            Noise::Loop => "5% a second",
            Noise::Busy => "12% a second, stolen seconds",
        }
    }
}

/// The level of a window over its steps, as a fraction of where it started.
#[derive(Clone, Copy)]
enum Shape {
    Flat,
    /// A step by 20-50%, up or down, somewhere in the middle half.
    Step,
    /// A climb of 20-100% across the window.
    Climb,
    /// A fall of 20-50% across the window.
    Slowdown,
    /// Flat for 30-60% of the window, then a climb of 20-100% (a JIT's plateau).
    Plateau,
    /// A climb of 5-15%: below what the rule is built to see (reported, not asserted).
    Small,
}

impl Shape {
    /// The level at each of `n` steps.
    fn levels(self, n: usize, rng: &mut SplitMix64) -> Vec<f64> {
        let span = |lo: f64, hi: f64, rng: &mut SplitMix64| lo + (hi - lo) * rng.unit();
        let along = |i: usize| i as f64 / (n - 1).max(1) as f64;
        match self {
            Shape::Flat => vec![1.0; n],
            Shape::Step => {
                let at = n / 4 + rng.below(n / 2 + 1);
                let sign = if rng.unit() < 0.5 { -1.0 } else { 1.0 };
                let d = sign * span(MOVE_TO_SEE, STEP_MAX, rng);
                (0..n).map(|i| if i < at { 1.0 } else { 1.0 + d }).collect()
            }
            Shape::Climb => {
                let d = span(MOVE_TO_SEE, CLIMB_MAX, rng);
                (0..n).map(|i| 1.0 + d * along(i)).collect()
            }
            Shape::Slowdown => {
                let d = span(MOVE_TO_SEE, STEP_MAX, rng);
                (0..n).map(|i| 1.0 - d * along(i)).collect()
            }
            Shape::Plateau => {
                let flat = span(0.3, 0.6, rng);
                let d = span(MOVE_TO_SEE, CLIMB_MAX, rng);
                (0..n)
                    .map(|i| 1.0 + d * ((along(i) - flat) / (1.0 - flat)).max(0.0))
                    .collect()
            }
            Shape::Small => {
                let d = span(SMALL_CLIMB.0, SMALL_CLIMB.1, rng);
                (0..n).map(|i| 1.0 + d * along(i)).collect()
            }
        }
    }
}

/// A kind of series: its name, truth, whether the rule's targets cover it, and its recipe.
pub struct Kind {
    pub name: String,
    pub truth: Truth,
    pub asserted: bool,
    /// Whether the kind is about CPU per answer: its series count as kept when that figure
    /// enters the verdicts (the run steady and its CPU not moved), not when the run does.
    pub cpu: bool,
    make: Box<dyn Fn(&mut SplitMix64) -> Case + Send + Sync>,
}

impl Kind {
    /// One series of this kind, drawn from `rng`.
    pub fn series(&self, rng: &mut SplitMix64) -> Case {
        (self.make)(rng)
    }

    fn new(
        name: String,
        truth: Truth,
        asserted: bool,
        make: impl Fn(&mut SplitMix64) -> Case + Send + Sync + 'static,
    ) -> Kind {
        Kind {
            name,
            truth,
            asserted,
            cpu: false,
            make: Box::new(make),
        }
    }

    /// The kind judged by its CPU per answer (`cpu`).
    fn of_cpu(self) -> Kind {
        Kind { cpu: true, ..self }
    }
}

/// Answers a second at the start of every window.
const LEVEL: f64 = 10_000.0;

/// A case of `shape` at `noise`, its window as long as the run would make it (at least
/// `plan_s`) or exactly `plan_s` when `fixed`, its CPU per answer steady at a fifth of a CPU.
fn throughput_case(
    shape: Shape,
    noise: Noise,
    plan_s: usize,
    fixed: bool,
) -> impl Fn(&mut SplitMix64) -> Case {
    move |rng| {
        let lead: Vec<f64> = (0..LEAD_S).map(|_| LEVEL * noise.draw(rng)).collect();
        let n = if fixed {
            plan_s
        } else {
            planned_seconds(&lead, plan_s)
        };
        let answers: Vec<f64> = shape
            .levels(n, rng)
            .iter()
            .map(|l| LEVEL * l * noise.draw(rng))
            .collect();
        let cpu = sampled_cpu(&answers, &vec![0.2 / LEVEL; n], rng);
        Case {
            lead,
            window: steps(&answers, &cpu),
        }
    }
}

/// The windows' steps: latency as a closed load gives it (users over throughput), CPU as read.
fn steps(answers: &[f64], cpu: &[f64]) -> Vec<Step> {
    answers
        .iter()
        .zip(cpu)
        .map(|(a, c)| Step {
            answers: *a,
            mean_ms: 64_000.0 / a,
            cpu_s: *c,
        })
        .collect()
}

/// CPU seconds per second as the sampler reads them: the process's cumulative CPU in 10 ms
/// ticks, read at each second, so that a second's reading is off by up to a tick either way;
/// one second in ten a collection adds a third to twice its CPU.
fn sampled_cpu(answers: &[f64], per_answer: &[f64], rng: &mut SplitMix64) -> Vec<f64> {
    let mut true_total = rng.unit() * 0.01;
    let mut read = (true_total * 100.0).floor() / 100.0;
    answers
        .iter()
        .zip(per_answer)
        .map(|(a, c)| {
            let gc = if rng.unit() < 0.1 {
                1.33 + 1.67 * rng.unit()
            } else {
                1.0
            };
            true_total += a * c * gc;
            let now = (true_total * 100.0).floor() / 100.0;
            let second = now - read;
            read = now;
            second
        })
        .collect()
}

/// A case whose throughput is flat (1%) and whose CPU per answer, at `share` of a CPU,
/// follows `shape`, read as the sampler reads it, over a window of `n` seconds.
fn cpu_case(shape: Shape, share: (f64, f64), n: usize) -> impl Fn(&mut SplitMix64) -> Case {
    move |rng| {
        let lead: Vec<f64> = (0..LEAD_S)
            .map(|_| LEVEL * Noise::Quiet.draw(rng))
            .collect();
        let answers: Vec<f64> = (0..n).map(|_| LEVEL * Noise::Quiet.draw(rng)).collect();
        let cpu_share = share.0 + (share.1 - share.0) * rng.unit();
        let per_answer: Vec<f64> = shape
            .levels(n, rng)
            .iter()
            .map(|l| cpu_share / LEVEL * l)
            .collect();
        let cpu = sampled_cpu(&answers, &per_answer, rng);
        Case {
            lead,
            window: steps(&answers, &cpu),
        }
    }
}

/// Every kind of the corpus.
pub fn kinds() -> Vec<Kind> {
    let mut kinds = Vec::new();
    for (noise, plan_s) in [(Noise::Quiet, 10), (Noise::Loop, 10), (Noise::Busy, 8)] {
        let at = |what: &str| format!("{what}, {}", noise.words());
        kinds.push(Kind::new(
            at("flat"),
            Truth::Flat,
            true,
            throughput_case(Shape::Flat, noise, plan_s, false),
        ));
        for (shape, what) in [
            (Shape::Step, "a step of 20-50% up or down"),
            (Shape::Climb, "a climb of 20-100%"),
            (Shape::Slowdown, "a slowdown of 20-50%"),
            (Shape::Plateau, "a plateau, then a climb of 20-100% (a JIT)"),
        ] {
            kinds.push(Kind::new(
                at(what),
                Truth::Moves,
                true,
                throughput_case(shape, noise, plan_s, false),
            ));
        }
        kinds.push(Kind::new(
            at("a climb of 5-15% (below the rule's reach)"),
            Truth::Moves,
            false,
            throughput_case(Shape::Small, noise, plan_s, false),
        ));
    }
    kinds.push(Kind::new(
        "flat, 12% a second, in an 8 s window (too short: to be called so)".into(),
        Truth::Flat,
        false,
        throughput_case(Shape::Flat, Noise::Busy, 8, true),
    ));
    kinds.push(
        Kind::new(
            "flat throughput, CPU per answer flat at 0.1-0.3 CPU as sampled".into(),
            Truth::Flat,
            true,
            cpu_case(Shape::Flat, (0.1, 0.3), 10),
        )
        .of_cpu(),
    );
    kinds.push(
        Kind::new(
            "flat throughput, CPU per answer climbing 20-100% at 0.3-0.6 CPU as sampled".into(),
            Truth::Moves,
            false,
            cpu_case(Shape::Climb, (0.3, 0.6), 10),
        )
        .of_cpu(),
    );
    kinds
}
