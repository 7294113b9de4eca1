//! Warm-up measured, not guessed: a warm-up goes on until the contender has settled (the
//! rules of results/warmup.rs, judged once a second beside the load), at least the plan's
//! minimum and at most its maximum (the scenario's `warmup`). How long it took is recorded with
//! every run, with the warm-up's throughput second by second; a warm-up that reached its maximum
//! without settling is flagged ("not at steady state").

use crate::observe::settle_rule::{compiler_idle, jit_curve_ms, relative_drift, steady};
use crate::observe::steady_rule::{planned_seconds, LEAD_S};
use crate::results::warmup::SETTLE_WINDOW_S;
use std::time::Duration;

/// CPU seconds per second below which CPU per request is not judged.
pub const MIN_CPU_S: f64 = 0.2;

/// A warm-up's totals so far, read once a second by the loop beside the load.
#[derive(Debug, Clone, Copy, Default)]
pub struct Totals {
    /// Requests answered, ok or not: a scenario whose right answer is an error (a fan-out's
    /// 502 when one call fails) settles on those.
    pub answers: u64,
    pub ok: u64,
    /// The ok answers' latency, summed (µs): their mean over any stretch.
    pub ok_latency_us: u64,
    /// The contender's CPU seconds (None when not sampled).
    pub cpu_s: Option<f64>,
    /// Its JIT compiler threads' CPU seconds (None where the runtime has none to see).
    pub jit_cpu_s: Option<f64>,
}

/// The settling watch of one warm-up, fed once a second by the loop beside the load.
pub struct Settle {
    pub min: Duration,
    /// The warm-up's end: a second after it (the warm-up load still draining, as at C10K when
    /// answers take longer than the warm-up) cannot settle it.
    pub max: Duration,
    pub band: f64,
    seconds: Vec<(f64, f64, f64)>,
    /// The JIT compiler threads' CPU seconds in each second (NaN where not seen).
    jit: Vec<f64>,
    last: Option<Totals>,
    pub settled_at: Option<Duration>,
    /// Set when the warm-up leads into the measured window without a break.
    pub lead: Option<Lead>,
}

/// A warm-up that leads into the measured window of the same load: once settled (or at its
/// maximum) the window opens at the next whole second of the load and lasts `length`, or
/// longer where `stretch` and the warm-up's noise need it.
#[derive(Debug, Clone, Default)]
pub struct Lead {
    pub length: Duration,
    /// Whether the window may be lengthened to what the noise of the warm-up's last seconds
    /// needs for the steady-state rule to judge it (steady_rule::planned_seconds), at most
    /// steady_rule::MAX_WINDOW_S, where the plan says `window = "auto"`; not for a profiled
    /// run, whose profiler records `length`.
    pub stretch: bool,
    /// When the warm-up ended (settled or at its maximum): the window is decided then, or once
    /// the run's profiler has started.
    pub due_at: Option<Duration>,
    /// The whole second of the load the measured window opens at, once decided.
    pub from: Option<u64>,
    /// Whether the window's opening has been seen by the loop beside the load (the
    /// downstream's counts reset and the steal read then).
    pub opened: bool,
    /// Whether the downstream service's counts are kept for this scenario.
    pub count_downstream: bool,
    /// Whether the downstream's counts were reset when the window opened.
    pub counted: bool,
    /// /proc/stat steal when the window opened.
    pub steal_at_open: Option<(u64, u64)>,
}

impl Lead {
    /// Opens the window at the next whole second after `elapsed` (a second boundary of the
    /// load's per-second histograms), as long as the warm-up's `curve` (answers a second) needs
    /// where it may stretch; returns where the load now ends.
    pub fn decide(&mut self, elapsed: Duration, curve: &[f64]) -> Duration {
        let from = elapsed.as_secs() + 1;
        self.from = Some(from);
        if self.stretch {
            let lead = &curve[curve.len().saturating_sub(LEAD_S)..];
            let plan_s = self.length.as_secs().max(1) as usize;
            let planned = planned_seconds(lead, plan_s);
            if planned > plan_s {
                eprintln!(
                    "  window: {planned} s instead of {plan_s} s, for the noise of the warm-up's \
                     last {} s (a 20% move must stand out)",
                    lead.len()
                );
                self.length = Duration::from_secs(planned as u64);
            }
        }
        Duration::from_secs(from) + self.length
    }

    /// Whether the window has just opened at `elapsed` (true once).
    pub fn opening(&mut self, elapsed: Duration) -> bool {
        let due = self.from.is_some_and(|f| elapsed >= Duration::from_secs(f));
        if due && !self.opened {
            self.opened = true;
            return true;
        }
        false
    }
}

impl Settle {
    /// Answers per second so far (the warm-up curve).
    pub fn curve(&self) -> Vec<f64> {
        self.seconds.iter().map(|s| s.0).collect()
    }

    /// The JIT compiler threads' CPU per second so far (ms, one decimal); empty where the
    /// runtime has no compiler threads to see.
    pub fn jit_curve(&self) -> Vec<f64> {
        jit_curve_ms(&self.jit)
    }

    /// How far each figure (answers, mean latency, CPU per answer) drifts over the last
    /// window so far (%, one decimal); None where it cannot be judged.
    pub fn drifts(&self) -> Vec<Option<f64>> {
        let figure = |f: fn(&(f64, f64, f64)) -> f64| {
            let v: Vec<f64> = self.window().iter().map(f).collect();
            relative_drift(&v)
                .filter(|d| d.is_finite())
                .map(|d| (d * 1000.0).round() / 10.0)
        };
        vec![figure(|s| s.0), figure(|s| s.1), figure(|s| s.2)]
    }

    /// The last SETTLE_WINDOW_S seconds (or steps) so far, each its answers, their mean
    /// latency and the CPU per answer (NaN where not judged): what settling is judged on.
    pub fn window(&self) -> &[(f64, f64, f64)] {
        &self.seconds[self.seconds.len().saturating_sub(SETTLE_WINDOW_S)..]
    }

    pub fn new(min: Duration, max: Duration, band: f64) -> Settle {
        Settle {
            min,
            max,
            band,
            seconds: Vec::new(),
            jit: Vec::new(),
            last: None,
            settled_at: None,
            lead: None,
        }
    }

    /// One second more, from the totals so far: the second's answers, the mean latency of
    /// its ok answers (not judged in seconds without any) and the CPU per answer. True once
    /// settled.
    pub fn second(&mut self, elapsed: Duration, now: Totals) -> bool {
        if let Some(last) = self.last {
            let answers = now.answers.saturating_sub(last.answers);
            let ok = now.ok.saturating_sub(last.ok);
            let mean_ms = if ok > 0 {
                now.ok_latency_us.saturating_sub(last.ok_latency_us) as f64 / ok as f64 / 1000.0
            } else {
                f64::NAN
            };
            // CPU time is read in 10 ms ticks: below a fifth of a core a second's reading is too
            // coarse to tell settling from rounding, and is left out.
            let cpu_per_answer = match (now.cpu_s, last.cpu_s) {
                (Some(c), Some(c0)) if answers > 0 && c - c0 >= MIN_CPU_S => {
                    (c - c0) / answers as f64
                }
                _ => f64::NAN,
            };
            self.seconds.push((answers as f64, mean_ms, cpu_per_answer));
            self.jit.push(match (now.jit_cpu_s, last.jit_cpu_s) {
                (Some(j), Some(j0)) => (j - j0).max(0.0),
                _ => f64::NAN,
            });
        }
        self.last = Some(now);
        let from = self.seconds.len().saturating_sub(SETTLE_WINDOW_S);
        let window = &self.seconds[from..];
        if self.settled_at.is_none()
            && elapsed >= self.min
            && elapsed <= self.max
            && steady(window, self.band)
            && compiler_idle(&self.jit[from..])
        {
            self.settled_at = Some(elapsed);
        }
        self.settled_at.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::settle_rule::judge_window;
    use crate::results::warmup::WarmupRecord;

    #[test]
    fn settling_waits_for_the_minimum_and_reads_seconds_from_totals() {
        let mut s = Settle::new(Duration::from_secs(15), Duration::from_secs(60), 0.05);
        let (mut ok, mut lat, mut cpu) = (0u64, 0u64, 0.0);
        let mut at = None;
        for t in 0..30u64 {
            // 1,000 answers a second of 5 ms each, 1 ms of CPU each, from the start.
            let now = Totals {
                answers: ok,
                ok,
                ok_latency_us: lat,
                cpu_s: Some(cpu),
                jit_cpu_s: None,
            };
            if s.second(Duration::from_secs(t), now) {
                at = at.or(Some(t));
            }
            ok += 1000;
            lat += 1000 * 5000;
            cpu += 1.0;
        }
        assert_eq!(
            at,
            Some(15),
            "steady from the start, but not before the minimum"
        );
        assert_eq!(s.curve().len(), 29);
        assert!(s.curve().iter().all(|&v| v == 1000.0));
    }

    #[test]
    fn seconds_after_the_warm_up_ended_do_not_settle_it() {
        // A 10 s warm-up whose answers only begin to flow steadily at 12 s (its load draining).
        let mut s = Settle::new(Duration::from_secs(5), Duration::from_secs(10), 0.05);
        let (mut ok, mut lat) = (0u64, 0u64);
        for t in 0..40u64 {
            let now = Totals {
                answers: ok,
                ok,
                ok_latency_us: lat,
                cpu_s: None,
                jit_cpu_s: None,
            };
            s.second(Duration::from_secs(t), now);
            if t >= 12 {
                ok += 1000;
                lat += 1000 * 5000;
            }
        }
        assert_eq!(
            s.settled_at, None,
            "steady only after its end: not settled within the warm-up"
        );
    }

    #[test]
    fn a_scenario_answered_only_with_errors_settles_on_them() {
        // One call of a fan-out failing: every answer is the 502 the contract asks for, 2 ms of
        // CPU each, 500 more a second until 2,000 a second from 3 s on. No ok answer ever comes.
        let mut s = Settle::new(Duration::from_secs(5), Duration::from_secs(30), 0.05);
        let (mut errors, mut cpu) = (0u64, 0.0);
        let mut at = None;
        for t in 0..30u64 {
            let now = Totals {
                answers: errors,
                cpu_s: Some(cpu),
                ..Totals::default()
            };
            if s.second(Duration::from_secs(t), now) {
                at = at.or(Some(t));
            }
            let rate = if t < 3 { 500 * (t + 1) } else { 2000 };
            errors += rate;
            cpu += rate as f64 * 0.002;
        }
        // At 11 s the window holds two rising seconds and eight flat ones: no trend (the
        // median pairwise slope is 0), as for a contender answering ok.
        assert_eq!(at, Some(11));
        assert_eq!(s.curve()[5], 2000.0, "the curve counts the error answers");
        // The same seconds with nothing answered at all never settle.
        let mut silent = Settle::new(Duration::from_secs(5), Duration::from_secs(30), 0.05);
        let settled = (0..30u64).any(|t| silent.second(Duration::from_secs(t), Totals::default()));
        assert!(!settled, "a second without answers is not a steady state");
    }

    #[test]
    fn the_spring_mvc_run_measured_on_a_plateau_is_not_at_steady_state() {
        // spring-mvc's fifth /plaintext run of a fresh demo (2026-11-25), as its results
        // recorded it: a JIT climb to a flat stretch of about 9,600 answers a second for ten
        // seconds, called settled after 24 s, then measured while it climbed again from 11,400
        // to 20,000 a second (14,724 for the run). CPU per answer fell as throughput rose.
        let mut warm: Vec<f64> = (0..14).map(|t| 2000.0 + 540.0 * t as f64).collect();
        warm.extend([
            9610.0, 9540.0, 9655.0, 9580.0, 9630.0, 9575.0, 9690.0, 9600.0, 9560.0, 9650.0,
        ]);
        let window = [
            11400.0, 12000.0, 12700.0, 13500.0, 14500.0, 15900.0, 17800.0, 20000.0,
        ];
        let mean_rps = window.iter().sum::<f64>() / window.len() as f64;
        assert!((mean_rps - 14_724.0).abs() < 5.0, "{mean_rps}");
        // The warm-up's own rule takes the plateau for steady state: it cannot tell them apart.
        let mut s = Settle::new(Duration::from_secs(10), Duration::from_secs(120), 0.05);
        let (mut answers, mut lat, mut cpu) = (0u64, 0u64, 0.0);
        let mut settled = None;
        for (t, rps) in std::iter::once(&0.0).chain(&warm).enumerate() {
            answers += *rps as u64;
            lat += 64_000_000; // 64 users, each always waiting: 64 s of latency a second
            cpu += 0.9;
            let now = Totals {
                answers,
                ok: answers,
                ok_latency_us: lat,
                cpu_s: Some(cpu),
                jit_cpu_s: None,
            };
            if s.second(Duration::from_secs(t as u64), now) && settled.is_none() {
                settled = Some(t);
            }
        }
        assert!(
            settled.is_some_and(|t| (20..=24).contains(&t)),
            "the plateau passed the warm-up's check: {settled:?}"
        );
        // The measured window, judged after the run, does not pass.
        let seconds: Vec<(f64, f64, f64)> =
            window.iter().map(|r| (*r, 64_000.0 / r, 0.9 / r)).collect();
        let check = judge_window(&seconds, 0.05).expect("8 seconds are judged");
        assert!(!check.steady, "{check:?}");
        assert!(check.drift_pct[0].unwrap() > 40.0, "{check:?}");
        let record = WarmupRecord {
            seconds: 24.0,
            settled: true,
            min_s: 10.0,
            max_s: 120.0,
            band_pct: 5.0,
            rule: "trend".into(),
            curve: warm,
            drift_pct: s.drifts(),
            window: Some(check),
            jit_curve: Vec::new(),
            end_check: None,
            steps: Vec::new(),
        };
        assert!(record.unsettled(), "kept, shown, and out of every verdict");
        let why = record.unsettled_reason().unwrap();
        assert!(
            why.contains("the measured window itself still trended (throughput drifted"),
            "{why}"
        );
    }

    #[test]
    fn a_busy_compiler_holds_settling_back_until_it_is_nearly_idle() {
        // Flat throughput from the start (a plateau), but the JIT compiles 150 ms a second
        // until 20 s, then 5 ms a second: settled only once the window holds an idle compiler.
        let mut s = Settle::new(Duration::from_secs(10), Duration::from_secs(60), 0.05);
        let (mut n, mut jit) = (0u64, 0.0);
        let mut at = None;
        for t in 0..40u64 {
            let now = Totals {
                answers: n,
                ok: n,
                ok_latency_us: n * 1000,
                cpu_s: Some(n as f64 * 0.0005),
                jit_cpu_s: Some(jit),
            };
            if s.second(Duration::from_secs(t), now) && at.is_none() {
                at = Some(t);
            }
            n += 2000;
            jit += if t < 20 { 0.150 } else { 0.005 };
        }
        // The window of 10 s must average <= 20 ms a second: 1 busy second of 10 is 19.5 ms.
        assert_eq!(at, Some(29), "{:?}", s.jit_curve());
        assert_eq!(s.jit_curve()[0], 150.0);
        assert!(
            compiler_idle(&[f64::NAN; 10]),
            "no compiler seen: not held back"
        );
    }
}
