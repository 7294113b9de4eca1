//! What today's stopping rules would have spent on a committed measurement: its runs replayed
//! in the order they were measured, round by round, through the sequential design with its
//! futility rule (a scenario leaves the rounds once every question of it is closed; repeating
//! stops once every scenario has left), and the machine time of the rounds that would have run
//! beside the time they took. `iobound plans` prints it per plan; `--rounds` per question.
//!
//! The time a replay saves is estimated from the runs' own clocks: the sitting is cut into one
//! stretch per contender and round (from the end of the stretch before it to the end of its
//! last run); a stretch whose every scenario was skipped is saved whole, otherwise its
//! skipped runs' warm-ups and windows are.

use crate::results::dir::ResultsDir;
use crate::results::record::{Finding, Results, Run};
use crate::stats::sequential::MAX_RUNS;
use crate::stats::verdict::{self, Design, Left, ScenarioFindings};
use std::path::Path;

/// One measurement replayed.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// Rounds measured, and the last round the replay would have measured.
    pub rounds: u32,
    pub rounds_replayed: u32,
    /// Each scenario's last round in the replay, and how its questions ended there.
    pub scenarios: Vec<(String, u32, String)>,
    /// The share of the measurement's machine time the replayed rounds take (0..=1).
    pub time_share: f64,
    /// Questions the stored verdict decided one way and the replay the other way.
    pub reversed: Vec<String>,
    /// Questions the stored verdict decided that the replay left undecided (stopped early).
    pub lost: Vec<String>,
}

/// The replay of `res` (its files in `dir`); None when it has nothing to replay: a plan of a
/// fixed number of runs (one look at its end: no rule of stopping applies), or no question
/// between two contenders.
pub fn replay(res: &Results, dir: &Path) -> Option<Replay> {
    if res.plan["sequential"].is_null() {
        return None;
    }
    let rounds = res.runs.iter().map(Run::round).max()?;
    let margin = verdict::design_of(&res.plan).margin;
    let most = MAX_RUNS.max(rounds as usize);
    let mut left = Left::default();
    let mut last = Vec::new();
    let mut replayed = rounds;
    for round in 1..=rounds {
        let design = Design {
            rounds_left: Some(most - round as usize),
            ..Design::sequential(margin)
        };
        let seen = as_of(res, round, &left);
        let mut all = verdict::findings(ResultsDir::new(&seen, dir), design);
        left.apply(&mut all);
        left.take_closed(&all, round);
        last = all;
        if !last.iter().all(|s| s.findings.is_empty()) && verdict::all_closed(&last) {
            replayed = round;
            break;
        }
    }
    if last.iter().all(|s| s.findings.is_empty()) {
        return None;
    }
    let scenarios = ending(&last, &left, replayed);
    let (reversed, lost) = against_stored(res, &last);
    Some(Replay {
        rounds,
        rounds_replayed: replayed,
        scenarios,
        time_share: time_share(res, replayed, &left),
        reversed,
        lost,
    })
}

/// `res` as it stood after `round`: the runs of the rounds so far, without those of scenarios
/// that had left the rounds before them.
fn as_of(res: &Results, round: u32, left: &Left) -> Results {
    let kept = |scenario: &str, r: u32| r <= round && r <= left_round(left, scenario);
    Results {
        runs: (res.runs.iter())
            .filter(|r| kept(&r.scenario, r.round()))
            .cloned()
            .collect(),
        capacity: (res.capacity.iter())
            .filter(|c| kept(&c.scenario, c.repeat))
            .cloned()
            .collect(),
        verdicts: Vec::new(),
        windows: Vec::new(),
        ..res.clone()
    }
}

/// The round after which `scenario` (a probe's or phase's name: before its '@') left, or
/// u32::MAX.
fn left_round(left: &Left, scenario: &str) -> u32 {
    let base = scenario.split('@').next().unwrap_or(scenario);
    left.round(base).unwrap_or(u32::MAX)
}

/// Each scenario's last round and how its questions ended: "decided", "futility" (some
/// stopped for it) or "open".
fn ending(all: &[ScenarioFindings], left: &Left, replayed: u32) -> Vec<(String, u32, String)> {
    all.iter()
        .filter(|s| !s.findings.is_empty())
        .map(|s| {
            let round = left.round(&s.scenario).unwrap_or(replayed);
            let how = if s.findings.iter().all(Finding::decided) {
                "decided"
            } else if s.findings.iter().any(|f| f.futility.is_some()) {
                "futility"
            } else {
                "open"
            };
            (s.scenario.clone(), round, how.to_string())
        })
        .collect()
}

/// Questions whose replayed answer contradicts the stored one, and stored answers the replay
/// does not reach.
fn against_stored(res: &Results, replayed: &[ScenarioFindings]) -> (Vec<String>, Vec<String>) {
    let (mut reversed, mut lost) = (Vec::new(), Vec::new());
    for v in &res.verdicts {
        for was in v.findings.iter().filter(|f| f.decided()) {
            let now = (replayed.iter())
                .filter(|s| s.scenario == v.scenario)
                .flat_map(|s| &s.findings)
                .find(|f| (&f.metric, &f.a, &f.b) == (&was.metric, &was.a, &was.b));
            let name = format!("{}: {} {} vs {}", v.scenario, was.metric, was.b, was.a);
            match now {
                Some(now) if now.decided() => {
                    let side = |f: &Finding| f.ratio.map(|r| r > 1.0);
                    let other_way = now.outcome != was.outcome
                        || (now.outcome == "different" && side(now) != side(was));
                    if other_way {
                        reversed.push(name);
                    }
                }
                _ => lost.push(name),
            }
        }
    }
    (reversed, lost)
}

/// The share of the measurement's machine time the replayed rounds would have taken.
fn time_share(res: &Results, replayed: u32, left: &Left) -> f64 {
    let sittings = res.sitting_starts();
    // (start, end, run) of every run with a readable clock.
    let mut runs: Vec<(f64, f64, &Run)> = (res.runs.iter())
        .filter_map(|r| r.span().map(|(t0, end)| (t0, end, r)))
        .collect();
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut spent, mut kept) = (0.0, 0.0);
    let mut i = 0;
    let mut previous_end = f64::NEG_INFINITY;
    while i < runs.len() {
        // One stretch: the consecutive runs of one contender in one round.
        let (who, round) = (&runs[i].2.contender, runs[i].2.round());
        let mut j = i;
        while j < runs.len() && runs[j].2.contender == *who && runs[j].2.round() == round {
            j += 1;
        }
        let first = runs[i].0;
        let sitting = sittings
            .iter()
            .filter(|s| **s as f64 <= first)
            .fold(f64::NEG_INFINITY, |a, s| a.max(*s as f64));
        let start = previous_end.max(sitting);
        let start = if start.is_finite() { start } else { first };
        let end = runs[i..j].iter().map(|r| r.1).fold(first, f64::max);
        let stretch = (end - start).max(0.0);
        let own = |r: &(f64, f64, &Run)| (r.1 - r.0).max(0.0);
        let skipped: f64 = (runs[i..j].iter())
            .filter(|r| round > replayed || r.2.round() > left_round(left, &r.2.scenario))
            .map(own)
            .sum();
        let all_skipped = (runs[i..j].iter())
            .all(|r| round > replayed || r.2.round() > left_round(left, &r.2.scenario));
        spent += stretch;
        kept += if all_skipped { 0.0 } else { stretch - skipped };
        previous_end = end;
        i = j;
    }
    if spent > 0.0 {
        (kept / spent).clamp(0.0, 1.0)
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::record::{RunStatus, VerdictRecord};
    use crate::results::test_support::{blank_results, blank_run};

    /// Two scenarios over `rounds` rounds, a minute a run from 10:00, a then b each round:
    /// "clear" twice apart every run, "close" within a per cent or two.
    fn measured(rounds: u32) -> Results {
        let mut r = blank_results(&["a", "b"]);
        r.started_at = "2026-12-01T10:00:00Z".into();
        r.plan = serde_json::json!({"runs": 12, "sequential": {"margin": 0.05}});
        let mut minute = 0;
        for round in 1..=rounds {
            for c in ["a", "b"] {
                for s in ["clear", "close"] {
                    let mut run = blank_run(c, s, round);
                    run.status = RunStatus::Ok;
                    run.started_at =
                        format!("2026-12-01T{:02}:{:02}:00Z", 10 + minute / 60, minute % 60);
                    run.summary.duration_s = 60.0;
                    run.summary.ok = 1000;
                    let wobble = [1.0, 1.03, 0.98, 1.01, 0.97, 1.02][round as usize % 6];
                    run.summary.rps = match (c, s) {
                        ("b", "clear") => 200.0 * wobble,
                        ("b", "close") => 101.0 * wobble,
                        _ => 100.0 * wobble,
                    };
                    // CPU per request the same on both sides: equivalent at the first look.
                    run.resources.cpu_ms_per_1k_requests = 100.0 + 0.1 * round as f64;
                    r.runs.push(run);
                    minute += 1;
                }
            }
        }
        r
    }

    /// What the plan stored for "clear": b against a's throughput, `outcome` at `ratio`.
    fn stored_on_clear(outcome: &str, ratio: f64) -> Vec<VerdictRecord> {
        vec![VerdictRecord {
            scenario: "clear".into(),
            findings: vec![Finding {
                metric: "throughput".into(),
                a: "a".into(),
                b: "b".into(),
                outcome: outcome.into(),
                ratio: Some(ratio),
                ..Finding::default()
            }],
            ..VerdictRecord::default()
        }]
    }

    #[test]
    fn a_decided_scenario_stops_at_its_first_look_and_its_time_is_saved() {
        let mut r = measured(12);
        // What the plan stored: clear decided (b 2x), close undecided.
        r.verdicts = stored_on_clear("different", 2.0);
        let rp = replay(&r, Path::new("/none")).expect("two contenders, two scenarios");
        assert_eq!(rp.rounds, 12);
        let clear = rp.scenarios.iter().find(|s| s.0 == "clear").unwrap();
        assert_eq!((clear.1, clear.2.as_str()), (5, "decided"), "{rp:?}");
        assert!(rp.reversed.is_empty() && rp.lost.is_empty(), "{rp:?}");
        // Every stretch (a contender's round) took two minutes, one a scenario: after round 5
        // only "close" runs, until its last round k, and nothing after.
        let k = rp.scenarios.iter().find(|s| s.0 == "close").unwrap().1;
        assert_eq!(k, rp.rounds_replayed);
        let kept = 5.0 * 2.0 * 2.0 + (k - 5) as f64 * 2.0;
        assert!((rp.time_share - kept / 48.0).abs() < 1e-9, "{rp:?}");
    }

    #[test]
    fn a_stored_answer_the_replay_contradicts_is_named() {
        let mut r = measured(6);
        r.verdicts = stored_on_clear("equivalent", 1.0);
        let rp = replay(&r, Path::new("/none")).unwrap();
        assert_eq!(rp.reversed, ["clear: throughput b vs a"]);
        // One contender: no question to replay; a fixed number of runs: no rule to replay.
        let mut one = measured(6);
        one.runs.retain(|x| x.contender == "a");
        assert_eq!(replay(&one, Path::new("/none")), None);
        r.plan = serde_json::json!({"runs": 6});
        assert_eq!(replay(&r, Path::new("/none")), None);
    }
}
