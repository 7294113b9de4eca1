//! The notes under a scenario's table, in every format: how intervals were made, noisy cells,
//! warm-up, load hosts, failures.

use super::{runtime, ScenarioView};
use crate::run::faults::{RECOVERED_FOR, RECOVERY_LIMIT_S};
use crate::run::results::{Results, Run, RunStatus};
use crate::services::database::WriteCheck;

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

/// Notes under a scenario's table: how intervals were made, noisy cells, failures.
pub fn notes(view: &ScenarioView, results: &Results) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(runtime::warmup_note(results, &view.name));
    out.extend(runtime::event_loop_note(results, &view.name));
    out.extend(method_notes(view));
    out.extend(contender_notes(view, results));
    out.extend(write_notes(view, results));
    for r in results.runs.iter().filter(|r| r.scenario == view.name) {
        out.extend(run_notes(r));
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
    if cells().any(|(_, c)| c.p99_all.value.is_finite()) {
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

/// Per contender whose mix writes: the write check over its runs.
fn write_notes(view: &ScenarioView, results: &Results) -> Vec<String> {
    let mut out = Vec::new();
    for (n, _) in &view.cells {
        let checks: Vec<&WriteCheck> = results
            .runs
            .iter()
            .filter(|r| r.scenario == view.name && &r.contender == n)
            .filter_map(|r| r.writes.as_ref())
            .collect();
        if checks.is_empty() {
            continue;
        }
        let sum = |f: fn(&WriteCheck) -> u64| checks.iter().map(|w| f(w)).sum::<u64>();
        let (creates, updates, deletes, lost, unacked) = (
            sum(|w| w.creates_acknowledged),
            sum(|w| w.updates_acknowledged),
            sum(|w| w.deletes_acknowledged),
            sum(|w| w.lost),
            sum(|w| w.creates_unacknowledged),
        );
        let verdict = if lost == 0 {
            "every one found in the database".to_string()
        } else {
            format!("{lost} NOT in the database")
        };
        let extra = if unacked > 0 {
            format!(
                "; {unacked} rows were committed without an answer reaching the driver (timeouts)"
            )
        } else {
            String::new()
        };
        out.push(format!(
            "Writes ({n}, {} run(s)): {creates} creates, {updates} updates and {deletes} deletes acknowledged, {verdict}{extra}.",
            checks.len()
        ));
    }
    out
}

/// One run's delivery check, recovery after a fault and overload verdict, where it has them.
fn run_notes(r: &Run) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(d) = &r.delivery {
        let verdict = if d.lost == 0 {
            "none lost".to_string()
        } else {
            format!("{} LOST (e.g. {:?})", d.lost, d.lost_examples)
        };
        out.push(format!(
            "Delivery ({} run {}): {} records sent, {} arrived in output, {verdict}; {} duplicates (at-least-once), {} failed enrichments; peak lag {} records.",
            r.contender, r.run, d.sent, d.received, d.duplicates, d.failed_enrichments, d.peak_lag
        ));
    }
    if let Some(rc) = &r.recovery {
        let back = match rc.recovered_after_s {
            Some(s) if s <= RECOVERY_LIMIT_S => format!("back {s:.0} s after it cleared"),
            Some(s) => format!(
                "back only {s:.0} s after it cleared (over the {RECOVERY_LIMIT_S:.0} s bar)"
            ),
            None => "not back by the end of the run".into(),
        };
        out.push(format!(
            "Recovery ({} run {}): fault at {:.0} s, cleared at {:.0} s; baseline p99 {:.0} ms, worst {:.0} ms, {} errors; {back} (p99 under {:.0} ms with no errors for {} s in a row).",
            r.contender, r.run, rc.fault_at_s, rc.cleared_at_s, rc.baseline_p99_ms, rc.worst_p99_ms, rc.errors, rc.limit_ms, RECOVERED_FOR
        ));
    }
    if let Some(v) = &r.overload {
        let back = v.recovered_after_s.map_or(
            "not back at baseline within the after phase".to_string(),
            |s| format!("back at baseline {s:.0} s into the after phase"),
        );
        out.push(format!(
            "Overload ({} run {}): capacity {:.0} req/s (closed probe), offered {:.0} req/s ({}x): {} - {}; {:.0} req/s answered OK, {} fast errors, {} timeouts; {back}.",
            r.contender, r.run, v.capacity_rps, v.offered_rps, v.factor, v.behaviour.to_uppercase(), v.explanation, v.ok_rps, v.fast_errors, v.timeouts
        ));
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
