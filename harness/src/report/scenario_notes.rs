//! The notes under a scenario's table, in every format: how intervals were made, noisy cells,
//! warm-up, load hosts, each kind's notes (section.rs), failures.

use super::SECTIONS;
use super::{runtime, ScenarioView};
use crate::results::record::{Results, Run, RunStatus};

/// Where the load of `runs` came from when it came from other hosts (`run --hosts`): each
/// host's share and the requests due on it over the runs.
pub fn load_hosts_note(runs: &[&Run]) -> Option<String> {
    let mut hosts: Vec<(String, String, u64)> = Vec::new();
    for h in runs.iter().flat_map(|r| &r.load_hosts) {
        match hosts.iter_mut().find(|(n, _, _)| *n == h.host) {
            Some(x) => x.2 += h.due,
            None => hosts.push((h.host.clone(), h.load.clone(), h.due)),
        }
    }
    if hosts.is_empty() {
        return None;
    }
    let list: Vec<String> = hosts
        .iter()
        .map(|(n, load, due)| format!("{n} {load} ({} due)", crate::util::units::thousands(*due)))
        .collect();
    Some(format!(
        "load from {} hosts over SSH, their per-second histograms added: {} over {} run(s)",
        hosts.len(),
        list.join(", "),
        runs.len()
    ))
}

/// What the limits did to one contender's `runs`, where it ran in a cgroup of its own (a run
/// with `--cpus` or `--memory`): throttled periods, the time waited for the next period, peak
/// memory and OOM kills, per run.
pub fn limits_note(runs: &[&Run]) -> Option<String> {
    let per_run: Vec<String> = runs
        .iter()
        .filter_map(|r| Some((r.run, r.resources.cgroup.as_ref()?)))
        .filter(|(_, c)| c.limited())
        .map(|(run, c)| {
            format!(
                "run {run}: throttled in {:.0}% of {} CFS periods ({:.1} s waited), peak memory {:.0} MB, {} OOM kill(s)",
                c.throttled_pct, c.periods, c.throttled_s, c.memory_peak_mb, c.oom_kills
            )
        })
        .collect();
    (!per_run.is_empty()).then(|| format!("in a cgroup of its own: {}", per_run.join("; ")))
}

/// What each contender's starts before this scenario cost, from exec (the medians over its
/// starts): its port accepting, its first 200, its first warm-up settled.
pub fn cold_start_note(results: &Results, scenario: &str) -> Option<String> {
    let mut parts = Vec::new();
    for c in &results.contenders {
        let starts: Vec<&crate::results::cold_start::ColdStart> = results
            .runs
            .iter()
            .filter(|r| r.scenario == scenario && r.contender == c.name)
            .filter_map(|r| r.cold_start.as_ref())
            .collect();
        if starts.is_empty() {
            continue;
        }
        let median = |v: Vec<f64>| crate::util::numbers::median(v);
        let port = median(starts.iter().map(|s| s.port_s).collect());
        let first = median(starts.iter().map(|s| s.first_200_s).collect());
        let steady: Vec<f64> = starts.iter().filter_map(|s| s.steady_s).collect();
        let steady = match steady.len() {
            0 => "not steady in its warm-up".to_string(),
            n if n == starts.len() => format!("steady {:.0} s", median(steady)),
            n => format!(
                "steady {:.0} s ({n} of {} starts settled)",
                median(steady),
                starts.len()
            ),
        };
        parts.push(format!(
            "{} port {port:.2} s, first 200 {first:.2} s, {steady} ({} start(s))",
            c.name,
            starts.len()
        ));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "Cold start, from exec, medians over starts: {}. Steady counts the contract check and the warm-up to its settling.",
            parts.join("; ")
        )
    })
}

/// Notes under a scenario's table: how intervals were made, noisy cells, failures.
pub fn notes(view: &ScenarioView, results: &Results) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(runtime::warmup_note(results, &view.name));
    out.extend(cold_start_note(results, &view.name));
    out.extend(runtime::event_loop_note(results, &view.name));
    out.extend(method_notes(view));
    out.extend(contender_notes(view, results));
    let runs: Vec<&Run> = results
        .runs
        .iter()
        .filter(|r| r.scenario == view.name)
        .collect();
    for section in SECTIONS {
        out.extend(section.notes(&runs));
    }
    out.extend(failure_notes(view, results));
    out
}

/// What "p99 all requests" counts, and how the intervals were made.
fn method_notes(view: &ScenarioView) -> Vec<String> {
    let mut out = Vec::new();
    let cells = || {
        view.cells
            .iter()
            .filter_map(|(n, c)| c.as_ref().map(|c| (n, c)))
    };
    if cells().any(|(_, c)| c.of("p99_all").value.is_finite()) {
        out.push("Latency rows count successful responses; \"p99 all requests\" counts every request due, failed ones at the time they failed and unanswered ones at the time they were given up (censored). OK + KO = requests due.".to_string());
    }
    let methods: Vec<&str> = cells().map(|(_, c)| c.method.as_str()).collect();
    if let Some(m) = methods.first() {
        if methods.iter().all(|x| x == m) {
            out.push(format!("Intervals: {m}. Latency percentiles from the histograms of all runs merged. A difference is called significant only by a two-sided Mann-Whitney test over runs (p <= 0.05, both sides with >= 4 runs); otherwise it is marked not significant, or not tested."));
        } else {
            out.extend(cells().map(|(n, c)| format!("{n}: {}", c.method)));
        }
    }
    out
}

/// Per contender: noise, where its load came from, what its memory figure is, warm-up.
fn contender_notes(view: &ScenarioView, results: &Results) -> Vec<String> {
    let mut out = Vec::new();
    for (n, c) in view
        .cells
        .iter()
        .filter_map(|(n, c)| c.as_ref().map(|c| (n, c)))
    {
        if let Some(why) = &c.noisy {
            out.push(format!("Noisy ({n}): {why}."));
        }
        let runs: Vec<&Run> = results
            .runs
            .iter()
            .filter(|r| r.scenario == view.name && &r.contender == n)
            .collect();
        if let Some(note) = load_hosts_note(&runs) {
            out.push(format!("Load ({n}): {note}."));
        }
        if let Some(note) = limits_note(&runs) {
            out.push(format!("Limits ({n}): {note}."));
        }
        if let Some(m) = runs
            .iter()
            .map(|r| &r.resources.memory_measure)
            .find(|m| !m.is_empty())
        {
            out.push(format!(
                "Memory ({n}): peak RSS is the {m} (shared pages counted once), not one RSS."
            ));
        }
        if c.unsettled_runs > 0 {
            out.push(format!(
                "Not at steady state ({n}): {} of {} run(s) measured before the contender had \
                 settled; their figures include warm-up, and no verdict rests on them silently.",
                c.unsettled_runs, c.runs
            ));
        }
    }
    out
}

/// Runs of the scenario that failed or did not finish, with the first line of why.
fn failure_notes(view: &ScenarioView, results: &Results) -> Vec<String> {
    results
        .runs
        .iter()
        .filter(|r| r.scenario == view.name && r.status != RunStatus::Ok)
        .map(|r| {
            let what = if r.status == RunStatus::Failed {
                "failed"
            } else {
                "incomplete"
            };
            let why = r
                .failure
                .as_deref()
                .unwrap_or("interrupted")
                .lines()
                .next()
                .unwrap_or("");
            format!("{} run {} {what}: {why}", r.contender, r.run)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::cold_start::ColdStart;
    use crate::results::test_support::{blank_results, blank_run};

    fn started(contender: &str, run: u32, first_200_s: f64, steady_s: Option<f64>) -> Run {
        let mut r = blank_run(contender, "wait", run);
        r.cold_start = Some(ColdStart {
            port_s: first_200_s / 2.0,
            first_200_s,
            checked_s: Some(first_200_s + 2.0),
            steady_s,
        });
        r
    }

    #[test]
    fn the_cold_start_note_gives_medians_and_says_which_starts_never_settled() {
        let mut res = blank_results(&["slow", "quick", "never"]);
        res.runs = vec![
            started("slow", 1, 10.0, Some(50.0)),
            started("slow", 2, 12.0, Some(60.0)),
            started("slow", 3, 11.0, None),
            started("quick", 1, 0.02, Some(12.0)),
            started("never", 1, 3.0, None),
            blank_run("quick", "wait", 2),
        ];
        let note = cold_start_note(&res, "wait").expect("a note");
        assert!(
            note.contains("slow port 5.50 s, first 200 11.00 s, steady 55 s (2 of 3 starts settled) (3 start(s))"),
            "{note}"
        );
        assert!(
            note.contains("quick port 0.01 s, first 200 0.02 s, steady 12 s (1 start(s))"),
            "{note}"
        );
        assert!(
            note.contains("never port 1.50 s, first 200 3.00 s, not steady in its warm-up"),
            "{note}"
        );
        assert_eq!(
            cold_start_note(&res, "other"),
            None,
            "no starts before another scenario"
        );
    }
}
