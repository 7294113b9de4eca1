//! How long each answer takes here: every plan in plans/, the last measurement of it committed
//! under docs/results/, the machine time that measurement took and the pages that quote it, so
//! that a set of findings can be re-measured across sittings (`run --resume`) with the time
//! each one needs known beforehand.

use anyhow::{Context, Result};
use std::path::Path;

/// One plan and its last committed measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanTime {
    /// The plan file, relative to the repository (`plans/c10k.toml`).
    pub plan: String,
    /// The last results directory of it under docs/results/ (by its start), if any.
    pub results: Option<String>,
    /// The day that measurement started (`2026-11-25`).
    pub measured_on: Option<String>,
    /// Machine time of its sittings, in minutes (None when no run has a readable time).
    pub machine_minutes: Option<f64>,
    /// Sittings: the first start and every `--resume`.
    pub sittings: usize,
    /// Runs that ended (ok, incomplete or failed).
    pub runs: usize,
    /// Pages (README.md, docs/...) that link or quote the results directory.
    pub pages: Vec<String>,
    /// Its runs replayed through today's stopping rules (None: nothing to replay).
    pub replay: Option<super::replay::Replay>,
}

/// Every plan under `root`/plans with its last measurement under `root`/docs/results.
pub fn plan_times(root: &Path) -> Result<Vec<PlanTime>> {
    let measured = super::committed::committed_results(root)?;
    let pages: Vec<(String, String)> = super::render::reader_pages(root)?
        .into_iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            let rel = p.strip_prefix(root).unwrap_or(&p).display().to_string();
            Some((rel, text))
        })
        .collect();
    let mut plans: Vec<_> = std::fs::read_dir(root.join("plans"))
        .context("cannot list plans/")?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    plans.sort();
    let mut out = Vec::new();
    for path in plans {
        let text = std::fs::read_to_string(&path)?;
        let name = toml::from_str::<toml::Value>(&text)
            .ok()
            .and_then(|v| v.get("name")?.as_str().map(str::to_string))
            .unwrap_or_default();
        let last = measured
            .iter()
            .filter(|(_, r)| r.plan["name"].as_str() == Some(name.as_str()))
            .max_by(|a, b| a.1.started_at.cmp(&b.1.started_at));
        let plan = format!("plans/{}", path.file_name().unwrap().to_string_lossy());
        out.push(match last {
            None => PlanTime {
                plan,
                results: None,
                measured_on: None,
                machine_minutes: None,
                sittings: 0,
                runs: 0,
                pages: Vec::new(),
                replay: None,
            },
            Some((dir, r)) => PlanTime {
                plan,
                results: Some(dir.clone()),
                measured_on: r.started_at.get(..10).map(str::to_string),
                machine_minutes: super::quote::machine_minutes(r),
                sittings: 1 + r.resumed_at.len(),
                runs: r.runs.len(),
                pages: pages
                    .iter()
                    .filter(|(_, text)| text.contains(&format!("results/{dir}")))
                    .map(|(p, _)| p.clone())
                    .collect(),
                replay: super::replay::replay(r, &root.join("docs/results").join(dir)),
            },
        });
    }
    Ok(out)
}

/// `iobound plans`: the list, and with `rounds` each replayed scenario's last round.
pub fn print(root: &Path, rounds: bool) -> Result<i32> {
    let times = plan_times(root)?;
    print!("{}", format(&times));
    if rounds {
        print!("\n{}", format_rounds(&times));
    }
    Ok(0)
}

/// The list as `iobound plans` prints it: one line a plan, the never-measured ones last, with
/// the minutes and rounds its runs would have taken under today's stopping rules.
pub fn format(times: &[PlanTime]) -> String {
    use std::fmt::Write;
    let mut rows: Vec<&PlanTime> = times.iter().collect();
    rows.sort_by_key(|t| t.results.is_none());
    let mut s = format!(
        "{:<40} {:<11} {:>7} {:>8} {:>7} {:>8} {:>5}  {}\n",
        "plan",
        "measured",
        "minutes",
        "replayed",
        "rounds",
        "sittings",
        "runs",
        "results, and the pages quoting them"
    );
    let (mut total, mut replayed_total) = (0.0, 0.0);
    let (mut reversed, mut lost) = (0, 0);
    for t in rows {
        let minutes = t.machine_minutes.map_or("-".into(), |m| format!("{m:.0}"));
        total += t.machine_minutes.unwrap_or(0.0);
        let replayed = t
            .machine_minutes
            .map(|m| m * t.replay.as_ref().map_or(1.0, |r| r.time_share));
        replayed_total += replayed.unwrap_or(0.0);
        let rounds = t.replay.as_ref().map_or("-".into(), |r| {
            format!("{}->{}", r.rounds, r.rounds_replayed)
        });
        reversed += t.replay.as_ref().map_or(0, |r| r.reversed.len());
        lost += t.replay.as_ref().map_or(0, |r| r.lost.len());
        let quoted = match (&t.results, t.pages.is_empty()) {
            (None, _) => "never measured here".to_string(),
            (Some(dir), true) => format!("docs/results/{dir} (quoted by no page)"),
            (Some(dir), false) => format!("docs/results/{dir}: {}", t.pages.join(", ")),
        };
        let _ = writeln!(
            s,
            "{:<40} {:<11} {:>7} {:>8} {:>7} {:>8} {:>5}  {quoted}",
            t.plan,
            t.measured_on.as_deref().unwrap_or("-"),
            minutes,
            replayed.map_or("-".into(), |m| format!("{m:.0}")),
            rounds,
            if t.results.is_some() {
                t.sittings.to_string()
            } else {
                "-".into()
            },
            t.runs,
        );
    }
    let _ = writeln!(
        s,
        "\nminutes: machine time of the last measurement, each sitting from its start to the \
         end of its last run (pauses between sittings left out); {total:.0} in all. Measure in \
         pieces with `iobound run --plan PLAN --resume DIR`.\n\
         replayed: the runs of a plan that repeats until decided (runs = \"auto\"), in the \
         order measured, through today's stopping rules (a scenario leaves the rounds once its \
         questions are decided or stopped for futility; rounds: measured->replayed); a plan of \
         a fixed number of runs is counted as it ran. {replayed_total:.0} minutes in all, \
         {reversed} stored answer(s) reversed, {lost} stored answer(s) not reached (stopped \
         earlier). Per question: `iobound plans --rounds`."
    );
    s
}

/// Per plan replayed: each scenario's last round under today's rules and how it ended, and
/// the stored answers the replay reversed or did not reach.
pub fn format_rounds(times: &[PlanTime]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for t in times {
        let Some(r) = &t.replay else {
            continue;
        };
        let _ = writeln!(
            s,
            "{} ({} rounds measured, {} replayed; {:.0}% of the machine time):",
            t.plan,
            r.rounds,
            r.rounds_replayed,
            r.time_share * 100.0
        );
        for (scenario, round, how) in &r.scenarios {
            let _ = writeln!(s, "  {scenario}: round {round}, {how}");
        }
        for q in &r.reversed {
            let _ = writeln!(s, "  reversed: {q}");
        }
        for q in &r.lost {
            let _ = writeln!(s, "  not reached: {q}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::super::quote::machine_minutes;
    use crate::results::test_support::{blank_results, blank_run};

    #[test]
    fn sittings_count_to_their_last_run_and_pauses_do_not_count() {
        let mut r = blank_results(&["a"]);
        r.started_at = "2026-11-25T23:50:00Z".into();
        r.resumed_at = vec!["2026-11-26T01:00:00Z".into()];
        r.finished_at = Some("2026-11-26T01:20:00Z".into());
        for (at, warm, measured) in [
            ("2026-11-25T23:50:30Z", 60.0, 30.0),
            // The first sitting's last run: it ends at 00:10:00.
            ("2026-11-26T00:08:00Z", 90.0, 30.0),
            ("2026-11-26T01:01:00Z", 60.0, 30.0),
        ] {
            let mut run = blank_run("a", "s", 1);
            run.started_at = at.into();
            run.summary.duration_s = measured;
            run.warmup = Some(crate::results::warmup::WarmupRecord {
                seconds: warm,
                settled: true,
                min_s: 20.0,
                max_s: 120.0,
                band_pct: 5.0,
                rule: "trend".into(),
                ..Default::default()
            });
            r.runs.push(run);
        }
        // 20 minutes to 00:10:00, then 20 to the end at 01:20:00; not the 90 between.
        assert_eq!(machine_minutes(&r), Some(40.0));
        r.resumed_at.clear();
        r.finished_at = None;
        // One sitting, no end: to the last run's end, 01:02:30.
        assert_eq!(machine_minutes(&r), Some(72.5));
        r.runs.clear();
        assert_eq!(machine_minutes(&r), None);
    }
}
