//! Where a cell's noise comes from: between process starts, or between the windows of one
//! start. A run's measured window is cut into consecutive windows of the scenario's `duration`;
//! the spread of those windows within a start, and of the starts' means beyond what their
//! windows explain, are the two variance components of Kalibera and Jones ("Rigorous
//! Benchmarking in Reasonable Time", ISMM 2013). With what a start costs (start, contract check,
//! warm-up) and what a window costs (its seconds), they give the number of windows per start
//! that makes the mean most precise for the machine time spent; `windows = "auto"` measures that
//! many in the rounds that follow.
//!
//! The tests stay over starts: a start is one value (the mean of its windows), never several
//! independent runs. Only throughput is split (its per-second counts are in every run); runs
//! not at steady state are left out, as they are of verdicts.

use super::runs::runs_of;
pub use crate::plan::{FIRST_WINDOWS, MAX_WINDOWS};
pub use crate::results::noise::Components;
use crate::results::record::{Results, Run};
use crate::results::steady::unsettled;

/// The arithmetic mean (NaN when empty).
fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The throughput of each whole window of `window_s` seconds in a run's measured window, in
/// order; the seconds left over after the last whole window are not used.
pub fn window_means(run: &Run, window_s: u32) -> Vec<f64> {
    let seconds: Vec<f64> = run
        .intervals
        .iter()
        .filter(|i| !i.drain)
        .map(|i| i.ok as f64)
        .collect();
    let w = window_s.max(1) as usize;
    seconds
        .chunks_exact(w)
        .map(|c| c.iter().sum::<f64>() / w as f64)
        .collect()
}

/// What the window means of several starts tell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Starts with two windows or more, and the windows each was cut to (the fewest any had).
    pub starts: usize,
    pub windows: usize,
    /// The mean over those windows.
    pub mean: f64,
    /// The two components, as coefficients of variation (%).
    pub within_cv_pct: f64,
    pub between_cv_pct: f64,
    pub best_windows: u32,
}

/// The two components from each start's window means (at least two starts with two windows
/// each; every start cut to the fewest windows any had), and the best windows per start for
/// a start that costs `start_cost_s` and a window `window_s`. None when there is too little.
pub fn estimate(starts: &[Vec<f64>], start_cost_s: f64, window_s: u32) -> Option<Spread> {
    let usable: Vec<&Vec<f64>> = starts.iter().filter(|w| w.len() >= 2).collect();
    let r = usable.iter().map(|w| w.len()).min()?;
    let n = usable.len();
    if n < 2 {
        return None;
    }
    let cut: Vec<&[f64]> = usable.iter().map(|w| &w[..r]).collect();
    let start_means: Vec<f64> = cut.iter().map(|w| mean(w)).collect();
    let grand = mean(&start_means);
    if grand <= 0.0 {
        return None;
    }
    // S1: between windows of one start, pooled over starts; S2: between the starts' means.
    let s1 = cut
        .iter()
        .zip(&start_means)
        .map(|(w, m)| w.iter().map(|x| (x - m).powi(2)).sum::<f64>())
        .sum::<f64>()
        / (n * (r - 1)) as f64;
    let s2 = start_means.iter().map(|m| (m - grand).powi(2)).sum::<f64>() / (n - 1) as f64;
    // A start's mean of r windows carries s1 / r of window noise; what it carries beyond that
    // is the starts' own component (never below nothing).
    let between = (s2 - s1 / r as f64).max(0.0);
    let best = best_windows(s1, between, start_cost_s, window_s as f64);
    let cv = |v: f64| v.sqrt() / grand * 100.0;
    Some(Spread {
        starts: n,
        windows: r,
        mean: grand,
        within_cv_pct: cv(s1),
        between_cv_pct: cv(between),
        best_windows: best,
    })
}

/// Kalibera and Jones's optimum: sqrt(start cost x window variance / (window cost x start
/// variance)), rounded up, within 1..=MAX_WINDOWS; MAX_WINDOWS when the starts add nothing.
pub fn best_windows(within: f64, between: f64, start_cost_s: f64, window_s: f64) -> u32 {
    if within <= 0.0 {
        return 1;
    }
    if between <= 0.0 || window_s <= 0.0 {
        return MAX_WINDOWS;
    }
    let r = (start_cost_s.max(0.0) * within / (window_s * between)).sqrt();
    (r.ceil() as u32).clamp(1, MAX_WINDOWS)
}

/// Seconds from a run's process start to its measured window: its start (to the first 200),
/// contract check and warm-up, where recorded.
fn start_cost_s(run: &Run) -> f64 {
    let start = run
        .cold_start
        .as_ref()
        .map_or(0.0, |c| c.checked_s.unwrap_or(c.first_200_s));
    start + run.warmup.as_ref().map_or(0.0, |w| w.seconds)
}

/// The components of one contender and scenario, from its runs at steady state.
pub fn of_cell(
    results: &Results,
    scenario: &str,
    contender: &str,
    window_s: u32,
) -> Option<Components> {
    let (runs, ..) = runs_of(results, scenario, contender, |r| !unsettled(results, r))?;
    let starts: Vec<Vec<f64>> = runs.iter().map(|r| window_means(r, window_s)).collect();
    let cost = mean(&runs.iter().map(|r| start_cost_s(r)).collect::<Vec<_>>());
    let spread = estimate(&starts, cost, window_s)?;
    Some(Components {
        contender: contender.to_string(),
        scenario: scenario.to_string(),
        starts: spread.starts,
        windows: spread.windows,
        window_s,
        mean: spread.mean,
        within_cv_pct: spread.within_cv_pct,
        between_cv_pct: spread.between_cv_pct,
        start_cost_s: cost,
        best_windows: spread.best_windows,
    })
}

/// Every contender and scenario of a results set with enough runs to tell, each scenario's
/// windows as long as its planned `duration` (from the plan in results.json).
pub fn all(results: &Results) -> Vec<Components> {
    let mut out = Vec::new();
    for scenario in super::scenarios(results) {
        let Some(window_s) = planned_window_s(results, &scenario) else {
            continue;
        };
        for c in &results.contenders {
            out.extend(of_cell(results, &scenario, &c.name, window_s));
        }
    }
    out
}

/// A scenario's planned window in whole seconds, as results.json's plan records it: an open
/// load's `duration`, a closed load's `level` (its one level: a stepped load has no window to
/// cut, and gets None).
fn planned_window_s(results: &Results, scenario: &str) -> Option<u32> {
    let s = results.plan["scenarios"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == scenario)?;
    let load = &s["load"];
    let secs = match load["model"].as_str()? {
        "closed" if load["steps"].as_u64().unwrap_or(0) == 0 => load["level"].as_f64()?,
        "open" => load["duration"].as_f64()?,
        _ => return None,
    };
    (secs >= 1.0).then_some(secs as u32)
}

/// "where the noise is" lines for a report: one per contender and scenario.
pub fn describe(all: &[Components]) -> String {
    let mut out = String::new();
    for c in all {
        out.push_str(&format!(
            "{} / {}: {} starts x {} windows of {} s: between windows of a start {:.1}%, between starts beyond that {:.1}%; a start costs {:.0} s, so {} window(s) per start spend the time best\n",
            c.contender,
            c.scenario,
            c.starts,
            c.windows,
            c.window_s,
            c.within_cv_pct,
            c.between_cv_pct,
            c.start_cost_s,
            c.best_windows
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::test_support::blank_run;
    use crate::util::numbers::{gaussian, SplitMix64};

    /// `n` starts of `r` windows around 1,000: each start offset by a normal draw of sd
    /// `between`, each window by one of sd `within`.
    fn simulated(n: usize, r: usize, between: f64, within: f64, seed: u64) -> Vec<Vec<f64>> {
        let mut rng = SplitMix64::new(seed);
        (0..n)
            .map(|_| {
                let offset = gaussian(&mut rng) * between;
                (0..r)
                    .map(|_| 1000.0 + offset + gaussian(&mut rng) * within)
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_components_are_read_back_from_series_whose_truth_is_known() {
        // Averaged over 200 simulated sittings of 12 starts x 6 windows, each variance lands
        // near its truth (the within one is unbiased; the between one only where it is not
        // clamped at nothing, which happens in some sittings when it is small beside
        // within / windows, hence its wider bound).
        for (between, within) in [(120.0, 40.0), (60.0, 60.0), (50.0, 100.0)] {
            let (mut b, mut w) = (Vec::new(), Vec::new());
            for seed in 0..200 {
                let starts = simulated(12, 6, between, within, seed);
                let e = estimate(&starts, 60.0, 10).unwrap();
                w.push((e.within_cv_pct * e.mean / 100.0).powi(2));
                b.push((e.between_cv_pct * e.mean / 100.0).powi(2));
            }
            let (vw, vb) = (mean(&w), mean(&b));
            let (tw, tb) = (within * within, between * between);
            assert!((vw / tw - 1.0).abs() < 0.05, "within {vw:.0} for {tw}");
            assert!((vb / tb - 1.0).abs() < 0.15, "between {vb:.0} for {tb}");
        }
    }

    #[test]
    fn more_windows_where_starts_are_dear_and_alike_more_starts_where_they_differ() {
        // The demo's /plaintext: starts differ by 12-17%, windows by 4-5%: one window a start.
        assert_eq!(best_windows(4.5f64.powi(2), 15f64.powi(2), 60.0, 8.0), 1);
        // A start that costs two minutes, alike starts, noisy windows: many windows.
        assert_eq!(best_windows(10f64.powi(2), 1.0, 120.0, 10.0), MAX_WINDOWS);
        // In between: sqrt(60 x 25 / (10 x 9)) = 4.08, rounded up.
        assert_eq!(best_windows(25.0, 9.0, 60.0, 10.0), 5);
        // Starts that add nothing beyond their windows, and windows with no spread.
        assert_eq!(best_windows(25.0, 0.0, 60.0, 10.0), MAX_WINDOWS);
        assert_eq!(best_windows(0.0, 9.0, 60.0, 10.0), 1);
    }

    #[test]
    fn too_little_to_tell_is_none_and_starts_are_cut_to_the_fewest_windows() {
        assert!(estimate(&[vec![1.0, 2.0, 3.0]], 10.0, 10).is_none());
        assert!(estimate(&[vec![1.0], vec![2.0]], 10.0, 10).is_none());
        // The third start's extra windows are not used: equal starts, equal windows.
        let e = estimate(
            &[vec![9.0, 11.0], vec![9.0, 11.0], vec![9.0, 11.0, 500.0]],
            10.0,
            10,
        )
        .unwrap();
        assert_eq!(e.mean, 10.0);
        assert_eq!((e.starts, e.windows), (3, 2));
        assert!(e.within_cv_pct > 0.0 && e.between_cv_pct == 0.0, "{e:?}");
    }

    #[test]
    fn a_run_is_cut_into_whole_windows_of_its_measured_seconds() {
        let mut run = blank_run("c", "s", 1);
        run.intervals = [10, 12, 14, 16, 18, 20, 22]
            .iter()
            .enumerate()
            .map(|(t, ok)| crate::driver::summary::IntervalRow {
                t: t as u32,
                ok: *ok,
                ..Default::default()
            })
            .collect();
        run.intervals[6].drain = true;
        // Six measured seconds, windows of 2: three; the drained second is not measured.
        assert_eq!(window_means(&run, 2), vec![11.0, 15.0, 19.0]);
        // Windows of 4: one whole window, two seconds left over.
        assert_eq!(window_means(&run, 4), vec![13.0]);
    }
}
