//! A figure in prose, read from a results directory: what a marker `<!-- = DIR QUERY -->`
//! in README or docs stands for (pages/render.rs finds the markers and writes the values).
//! The queries are few on purpose: each names one thing a results.json holds, so a sentence
//! quoting it cannot drift from the runs it quotes.
//!
//! - `verdict SCENARIO METRIC FIELD [B/A]`: a stored finding (the first pair, or B over A).
//!   FIELD: `ratio` (B over A, "4.43"), `change` ("-74%"), `lo` and `hi` (the interval of the
//!   ratio), `p` ("p < 0.001"), `runs` (each side's), `outcome` ("different", "equivalent",
//!   "undecided").
//! - `verdict SCENARIO sentence`: the stored verdict's sentence, as the run printed it.
//! - `tested SCENARIO METRIC B/A FIELD`: B against A on any METRIC (peak threads, peak RSS,
//!   ...), judged from their settled runs at render time by the test the plan's verdicts use;
//!   FIELD as for `verdict`.
//! - `cell SCENARIO CONTENDER METRIC [lo|hi|min|max]`: the median over runs, as the tables
//!   print it (METRIC is a key of stats::metrics::METRICS: throughput, p99_all, cpu, rss, ...),
//!   or its interval's bounds, or the lowest or highest single run.
//! - `capacity SCENARIO CONTENDER min|max|median`: the capacities (req/s) its searches found
//!   after a settled warm-up, those a capacity verdict ranks.
//! - `settle SCENARIO CONTENDER min|max|median`: seconds from the warm-up's start to settled.
//! - `flat SCENARIO CONTENDER min|max|median`: the second the warm-up's throughput alone had
//!   stopped drifting (observe::settle_rule::throughput_flat_at), runs where it did.
//! - `start SCENARIO CONTENDER port|first_200|checked|steady min|max|median`: seconds from the
//!   contender's exec to its port accepting, its first 200, its contract checked, its first
//!   warm-up settled (results::cold_start), over the starts before SCENARIO.
//! - `versus OTHER SCENARIO CONTENDER METRIC FIELD`: the contender here against itself in the
//!   results directory OTHER (relative to DIR, e.g. `../pinned`), judged from the settled runs
//!   of both by this plan's test; FIELD as for `verdict`, the ratio here over OTHER. Two
//!   directories are two sittings, so a decided outcome reads "different as blocks":
//!   a tested verdict comes from one sitting's arms.
//! - `across B/A CONTENDER METRIC FIELD`: the contender in scenario B against itself in
//!   scenario A of the same plan (a fault against the baseline before it), judged from the
//!   settled runs of each by this plan's test; FIELD as for `verdict`, the ratio B over A.
//! - `detected CONTENDER`: what its runtime detected at start, in words ("1 CPU; 200 Tomcat
//!   worker threads (max); heap 256 MB"), from the contract's start-up line.
//! - `unsettled SCENARIO [CONTENDER]`: runs whose warm-up or measured window did not settle.
//! - `runs SCENARIO [CONTENDER]`: runs that ended (ok or incomplete).
//! - `failed SCENARIO [CONTENDER]`: runs that failed (the contender crashed or ran out of memory).
//! - `saturated SCENARIO [CONTENDER]`: runs that ended with the driver's CPUs saturated.
//! - `unsettled-of SCENARIO CONTENDER`: "1 of 5", the runs not at steady state of those that
//!   ended, as the last row of every table marker says it.
//! - `writes SCENARIO [CONTENDER] acknowledged|lost`: writes a response acknowledged, or those
//!   of them missing from the database afterwards, summed over the runs that ended.
//!
//! - `recovery SCENARIO CONTENDER min|max|median|never`: after an overload phase (SCENARIO, e.g.
//!   `overload-5x`), the seconds into the calm phase after it until p99 was back at the
//!   baseline, over the runs that got back, or `never`: the runs that did not within it.
//! - `stacks SCENARIO CONTENDER FRAME min|max|median`: the share (%) of a CPU profile's
//!   samples with a frame containing FRAME on the stack, over the profiled runs that ended.
//! - `rule NAME`: one of the harness's rules of measurement (pages/rules.rs lists them: the
//!   settling window, the test's alpha, the most runs a side, ...), the same for every DIR.
//!
//! SCENARIO `*` stands for every scenario of the plan.
//! - `minutes`: the plan's runs from start to end, whole minutes.
//! - `machine`: the machine time of its sittings, pauses between them left out
//!   (figures::machine_minutes), whole minutes.
//! - `pause`: the minutes between its sittings (`minutes` less `machine`), whole minutes.
//! - `plan PATH`: a setting of the plan as results.json keeps it (`scenarios.NAME.load.users`:
//!   objects by key, lists by an element's name or by index).
//! - `ceiling SCENARIO`: Little's law for a closed load on /delay: users / wait, req/s.
//!
//! A numeric value may end the query with `.N` to give N decimals instead of the default.

use super::run_counts::{run_count, runs_of, unsettled_of, writes};
use super::verdict_query::{across, finding, metric_of, tested, verdict_field, verdict_of, versus};
use crate::report::fmt_num;
use crate::results::dir::ResultsDir;
use crate::results::record::Results;
use crate::util::clock::parse_rfc3339;
use anyhow::{anyhow, bail, Context, Result};

/// What QUERY (its words) reads from a result set, formatted for prose (its directory holds the
/// histogram logs a cell may need).
pub fn figure(set: ResultsDir, query: &[&str]) -> Result<String> {
    let results = set.results;
    let (query, decimals) = split_decimals(query)?;
    let Some((&kind, args)) = query.split_first() else {
        bail!("an empty figure marker: give a query, e.g. `verdict SCENARIO throughput ratio`");
    };
    let num = |v: f64, default: usize| fmt_num(v, decimals.unwrap_or(default));
    match (kind, args) {
        ("verdict", [scenario, "sentence"]) => Ok(verdict_of(results, scenario)?.sentence.clone()),
        ("verdict", [scenario, metric, field, pair @ ..]) => {
            let f = finding(results, scenario, metric, pair.first().copied())?;
            verdict_field(&f, field, decimals)
        }
        ("tested", [scenario, metric, pair, field]) => {
            let f = tested(set, scenario, metric, pair)?;
            verdict_field(&f, field, decimals)
        }
        ("cell", [scenario, contender, metric, which @ ..]) if which.len() <= 1 => {
            let (v, decimals) = cell_value(set, scenario, contender, metric, which)?;
            Ok(num(v, decimals))
        }
        ("settle" | "flat", [scenario, contender, which]) => Ok(num(
            pick(&warmup_seconds(results, kind, scenario, contender)?, which)?,
            0,
        )),
        ("capacity", [scenario, contender, which]) => Ok(num(
            pick(&capacities(results, scenario, contender)?, which)?,
            0,
        )),
        ("start", [scenario, contender, moment, which]) => Ok(num(
            pick(&start_moments(results, scenario, contender, moment)?, which)?,
            1,
        )),
        ("across", [pair, contender, metric, field]) => {
            let f = across(set, pair, contender, metric)?;
            verdict_field(&f, field, decimals)
        }
        ("detected", [contender]) => detected(results, contender),
        ("stacks", [scenario, contender, frame, which]) => Ok(num(
            pick(
                &super::stacks::shares(set, scenario, contender, frame)?,
                which,
            )?,
            0,
        )),
        ("rule", [name]) => super::rules::rule(name, decimals),
        ("recovery", [scenario, contender, which]) => {
            recovery(results, scenario, contender, which, decimals)
        }
        ("versus", [other, scenario, contender, metric, field]) => {
            let f = versus(set, other, scenario, contender, metric)?;
            verdict_field(&f, field, decimals)
        }
        ("unsettled" | "runs" | "failed" | "saturated", [scenario, contender @ ..])
            if contender.len() <= 1 =>
        {
            Ok(run_count(results, kind, scenario, contender.first())?.to_string())
        }
        ("unsettled-of", [scenario, contender]) => unsettled_of(results, scenario, contender),
        ("writes", [scenario, contender @ .., which]) if contender.len() <= 1 => Ok(num(
            writes(results, scenario, contender.first(), which)? as f64,
            0,
        )),
        ("minutes", []) => Ok(num(minutes(results)?, 0)),
        ("machine", []) => Ok(num(
            machine_minutes(results).ok_or_else(|| anyhow!("no run has a readable start time"))?,
            0,
        )),
        ("pause", []) => Ok(num(pause_minutes(results)?, 0)),
        ("plan", [path]) => setting(&results.plan, path),
        ("ceiling", [scenario]) => Ok(num(ceiling(results, scenario)?, 0)),
        _ => bail!(
            "unknown figure query `{}`: one of verdict, tested, cell, settle, flat, start, versus, \
             across, detected, stacks, rule, recovery, unsettled, runs, failed, saturated, writes, \
             capacity, minutes, machine, pause, plan, ceiling, with the words pages/quote.rs lists",
            query.join(" ")
        ),
    }
}

/// Seconds from each warm-up's start of `contender` on `scenario` to settled (`settle`), or to
/// its throughput alone flat (`flat`, the warm-ups where it was).
fn warmup_seconds(
    results: &Results,
    kind: &str,
    scenario: &str,
    contender: &str,
) -> Result<Vec<f64>> {
    let s: Vec<f64> = runs_of(results, scenario, Some(&contender))
        .filter_map(|r| r.warmup.as_ref())
        .filter_map(|w| {
            if kind == "flat" {
                crate::observe::settle_rule::throughput_flat_at(w)
            } else {
                Some(w.seconds)
            }
        })
        .collect();
    anyhow::ensure!(!s.is_empty(), "no warm-up of {contender} on {scenario}");
    Ok(s)
}

/// The capacities `contender`'s searches of `scenario` found, those after a warm-up that
/// settled and not cut short by the user (the ones a capacity verdict ranks).
fn capacities(results: &Results, scenario: &str, contender: &str) -> Result<Vec<f64>> {
    let found: Vec<f64> = results
        .capacity
        .iter()
        .filter(|c| c.scenario == scenario && c.contender == contender && c.ranked())
        .filter_map(|c| c.capacity_rps)
        .collect();
    anyhow::ensure!(
        !found.is_empty(),
        "no capacity of {contender} on {scenario} after a settled warm-up"
    );
    Ok(found)
}

/// Seconds from exec to `moment` (port, first_200, checked, steady) of each start of
/// `contender` before `scenario` that reached it.
fn start_moments(
    results: &Results,
    scenario: &str,
    contender: &str,
    moment: &str,
) -> Result<Vec<f64>> {
    anyhow::ensure!(
        ["port", "first_200", "checked", "steady"].contains(&moment),
        "a start is read at port, first_200, checked or steady, not `{moment}`"
    );
    let s: Vec<f64> = runs_of(results, scenario, Some(&contender))
        .filter_map(|r| r.cold_start.as_ref())
        .filter_map(|c| match moment {
            "port" => Some(c.port_s),
            "first_200" => Some(c.first_200_s),
            "checked" => c.checked_s,
            _ => c.steady_s,
        })
        .collect();
    anyhow::ensure!(
        !s.is_empty(),
        "no start of {contender} before {scenario} reached {moment}"
    );
    Ok(s)
}

/// What `contender`'s runtime detected at start, in words.
fn detected(results: &Results, contender: &str) -> Result<String> {
    results
        .contenders
        .iter()
        .find(|c| c.name == contender)
        .and_then(|c| c.detected.as_ref())
        .map(|d| d.describe())
        .ok_or_else(|| anyhow!("{contender} said nothing of what its runtime detected here"))
}

/// A cell's median over runs, an interval bound or a single run's extreme (`which`), with the
/// metric's usual decimals.
fn cell_value(
    set: ResultsDir,
    scenario: &str,
    contender: &str,
    metric: &str,
    which: &[&str],
) -> Result<(f64, usize)> {
    let m = metric_of(metric)?;
    let cell = crate::stats::cell(set, scenario, contender)
        .ok_or_else(|| anyhow!("no runs of {contender} on {scenario}"))?;
    let e = cell.get(m);
    let runs = || e.per_run.iter().copied();
    let v = match which.first().copied() {
        None => Some(e.value),
        Some("lo") => e.lo,
        Some("hi") => e.hi,
        Some("min") => runs().reduce(f64::min),
        Some("max") => runs().reduce(f64::max),
        Some(other) => bail!("a cell is read as lo, hi, min or max, not `{other}`"),
    };
    let v = v.ok_or_else(|| anyhow!("{contender} on {scenario} has no {which:?} of {metric}"))?;
    Ok((v, m.decimals))
}

/// The lowest, highest or median of `values`.
fn pick(values: &[f64], which: &str) -> Result<f64> {
    match which {
        "min" => Ok(values.iter().copied().fold(f64::MAX, f64::min)),
        "max" => Ok(values.iter().copied().fold(f64::MIN, f64::max)),
        "median" => Ok(crate::util::numbers::median(values.to_vec())),
        other => bail!("take min, max or median, not `{other}`"),
    }
}

/// `[.., ".1"]` -> (the rest, Some(1)).
fn split_decimals<'a, 'b>(query: &'a [&'b str]) -> Result<(&'a [&'b str], Option<usize>)> {
    match query.split_last() {
        Some((last, rest)) if last.starts_with('.') => {
            let d = last[1..]
                .parse()
                .with_context(|| format!("`{last}`: decimals are `.` and a number, e.g. `.1`"))?;
            Ok((rest, Some(d)))
        }
        _ => Ok((query, None)),
    }
}

/// After the overload phase `scenario`, the seconds until `contender`'s p99 was back at the
/// baseline (`which` of the runs that got back), or `never`: the runs that did not.
fn recovery(
    results: &Results,
    scenario: &str,
    contender: &str,
    which: &str,
    decimals: Option<usize>,
) -> Result<String> {
    let back: Vec<Option<f64>> = runs_of(results, scenario, Some(&contender))
        .filter_map(|r| r.details.overload())
        .map(|o| o.recovered_after_s)
        .collect();
    anyhow::ensure!(
        !back.is_empty(),
        "no overload phase of {contender} in {scenario}"
    );
    if which == "never" {
        return Ok(back.iter().filter(|b| b.is_none()).count().to_string());
    }
    let got_back: Vec<f64> = back.into_iter().flatten().collect();
    anyhow::ensure!(
        !got_back.is_empty(),
        "{contender} never got back after {scenario}"
    );
    Ok(fmt_num(pick(&got_back, which)?, decimals.unwrap_or(0)))
}

/// Minutes from the plan's start to its end, from the times of day results.json keeps.
pub fn minutes(results: &Results) -> Result<f64> {
    let end = results
        .finished_at
        .as_deref()
        .ok_or_else(|| anyhow!("the plan has no end time (interrupted?)"))?;
    let at = |t: &str| parse_rfc3339(t).ok_or_else(|| anyhow!("`{t}` is not a time"));
    Ok((at(end)? - at(&results.started_at)?) as f64 / 60.0)
}

/// Minutes the plan's sittings kept the machine busy: each sitting from its start (the first
/// start, then each `--resume`) to the measured end of its last run (its start, warm-up and
/// measured phase), the last sitting to the plan's end where it has one. Pauses between
/// sittings are not counted.
pub fn machine_minutes(r: &Results) -> Option<f64> {
    let starts = r.sitting_starts();
    let mut ends: Vec<Option<f64>> = vec![None; starts.len()];
    for (t0, end) in r.runs.iter().filter_map(crate::results::record::Run::span) {
        let Some(k) = starts.iter().rposition(|s| *s as f64 <= t0) else {
            continue;
        };
        ends[k] = Some(ends[k].map_or(end, |e: f64| e.max(end)));
    }
    if let (Some(end), Some(last)) = (
        r.finished_at.as_deref().and_then(parse_rfc3339),
        ends.last_mut(),
    ) {
        *last = Some(last.map_or(end as f64, |e| e.max(end as f64)));
    }
    let seconds: f64 = starts
        .iter()
        .zip(&ends)
        .filter_map(|(s, e)| e.map(|e| (e - *s as f64).max(0.0)))
        .sum();
    (seconds > 0.0).then_some(seconds / 60.0)
}

/// Minutes between the plan's sittings: from its first start to its end, less the minutes
/// its sittings kept the machine busy.
fn pause_minutes(results: &Results) -> Result<f64> {
    let busy =
        machine_minutes(results).ok_or_else(|| anyhow!("no run has a readable start time"))?;
    Ok((minutes(results)? - busy).max(0.0))
}

/// A value of the plan by its path; numbers as prose writes them.
fn setting(plan: &serde_json::Value, path: &str) -> Result<String> {
    let mut v = plan;
    for key in path.split('.') {
        v = match v {
            serde_json::Value::Array(items) => items
                .iter()
                .find(|i| i.get("name").and_then(|n| n.as_str()) == Some(key))
                .or_else(|| key.parse::<usize>().ok().and_then(|i| items.get(i))),
            other => other.get(key),
        }
        .ok_or_else(|| anyhow!("the plan has no `{path}` (at `{key}`)"))?;
    }
    Ok(match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            fmt_num(x, if x.fract() == 0.0 { 0 } else { 2 })
        }
        other => other.to_string(),
    })
}

/// Users over the wait of a closed load on /delay?ms=N.
fn ceiling(results: &Results, scenario: &str) -> Result<f64> {
    let s = results
        .plan
        .get("scenarios")
        .and_then(|s| s.as_array())
        .and_then(|s| s.iter().find(|x| x["name"] == scenario))
        .ok_or_else(|| anyhow!("the plan has no scenario `{scenario}`"))?;
    let users = s["load"]["users"]
        .as_f64()
        .filter(|u| *u > 0.0 && s["load"]["model"] == "closed")
        .ok_or_else(|| anyhow!("`{scenario}` is not a closed load with users"))?;
    let ms: f64 = s["path"]
        .as_str()
        .and_then(|p| p.strip_prefix("/delay?ms="))
        .and_then(|m| m.parse().ok())
        .filter(|m| *m > 0.0)
        .ok_or_else(|| anyhow!("`{scenario}` is not a wait on /delay?ms=N"))?;
    Ok(users * 1000.0 / ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::record::{Finding, VerdictRecord};
    use std::path::Path;

    fn results() -> Results {
        let mut r = crate::results::test_support::blank_results(&["mvc", "flux"]);
        r.started_at = "2026-11-25T23:50:00Z".into();
        r.finished_at = Some("2026-11-26T00:29:10Z".into());
        r.plan = serde_json::json!({"budget": "40m", "scenarios": [{"name": "wait",
            "path": "/delay?ms=100", "load": {"model": "closed", "users": 1000}}]});
        r.verdicts = vec![VerdictRecord {
            scenario: "wait".into(),
            findings: vec![
                Finding {
                    metric: "throughput".into(),
                    a: "mvc".into(),
                    b: "flux".into(),
                    outcome: "different".into(),
                    ratio: Some(4.4321),
                    ratio_lo: Some(4.1),
                    ratio_hi: Some(4.9),
                    p: Some(0.0004),
                    runs: 8,
                    ..Finding::default()
                },
                Finding {
                    metric: "p99_all".into(),
                    a: "mvc".into(),
                    b: "flux".into(),
                    ratio: Some(0.2588),
                    p: Some(0.0123),
                    ..Finding::default()
                },
            ],
            ..VerdictRecord::default()
        }];
        r
    }

    /// The figure a marker with query `q` stands for.
    fn ask(r: &Results, dir: &Path, q: &str) -> Result<String> {
        let words: Vec<&str> = q.split_whitespace().collect();
        figure(ResultsDir::new(r, dir), &words)
    }

    fn fig(q: &str) -> Result<String> {
        ask(&results(), Path::new("/nonexistent"), q)
    }

    #[test]
    fn verdict_fields_read_the_stored_finding() {
        assert_eq!(fig("verdict wait throughput ratio").unwrap(), "4.43");
        assert_eq!(fig("verdict wait throughput ratio .1").unwrap(), "4.4");
        assert_eq!(fig("verdict wait throughput lo").unwrap(), "4.10");
        assert_eq!(fig("verdict wait throughput p").unwrap(), "p < 0.001");
        assert_eq!(fig("verdict wait throughput runs flux/mvc").unwrap(), "8");
        assert_eq!(fig("verdict wait p99_all change").unwrap(), "-74%");
        assert_eq!(fig("verdict wait throughput change").unwrap(), "+343%");
        assert_eq!(fig("verdict wait p99_all p").unwrap(), "p = 0.012");
    }

    #[test]
    fn any_metric_is_tested_between_two_contenders_by_the_plans_design() {
        let mut r = results();
        four_runs(&mut r, "mvc", [212, 214, 211, 213]);
        four_runs(&mut r, "flux", [21, 22, 21, 21]);
        let q = |q: &str| ask(&r, Path::new("/nonexistent"), q);
        // Four runs a side, one look: the smallest two-sided p of the rank test is 2/70.
        assert_eq!(
            q("tested wait threads flux/mvc outcome").unwrap(),
            "different"
        );
        assert_eq!(q("tested wait threads flux/mvc p").unwrap(), "p = 0.029");
        assert_eq!(q("tested wait threads flux/mvc runs").unwrap(), "4");
        assert_eq!(
            q("tested wait threads mvc/flux outcome").unwrap(),
            "different"
        );
        let e = format!("{:#}", q("tested wait threads flux outcome").unwrap_err());
        assert!(e.contains("name the pair as B/A"), "{e}");
        let e = format!("{:#}", q("tested wait threads go/mvc outcome").unwrap_err());
        assert!(e.contains("no settled runs of mvc and go"), "{e}");
    }

    /// Four ok runs of `name` on "wait" with these peak threads, and a start before each.
    fn four_runs(r: &mut Results, name: &str, threads: [u64; 4]) {
        four_runs_on(r, name, "wait", threads);
    }

    /// The same on `scenario`.
    fn four_runs_on(r: &mut Results, name: &str, scenario: &str, threads: [u64; 4]) {
        use crate::results::record::RunStatus;
        for (i, t) in threads.into_iter().enumerate() {
            let mut run = crate::results::test_support::blank_run(name, scenario, i as u32 + 1);
            run.status = RunStatus::Ok;
            (run.summary.ok, run.summary.rps) = (1000, 100.0);
            run.resources.peak_threads = t;
            run.cold_start = Some(crate::results::cold_start::ColdStart {
                port_s: 1.0 + i as f64,
                first_200_s: 2.0 + i as f64,
                checked_s: None,
                steady_s: (i != 3).then_some(40.0 + i as f64),
            });
            r.runs.push(run);
        }
    }

    #[test]
    fn stacks_read_the_profiles_of_the_runs_that_ended() {
        use crate::results::profile::ProfileRecord;
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("profiles")).unwrap();
        let mut r = results();
        four_runs(&mut r, "mvc", [30; 4]);
        // Dispatch under 1, 2, 3 of 4 samples; the fourth run (all of them) failed.
        for (i, run) in r.runs.iter_mut().enumerate() {
            let folded = format!("profiles/mvc.wait.run{}.folded", i + 1);
            let under = i + 1;
            let text = format!(
                "T.run;D.dispatch;H.get {under}\nT.run;Poller.run {}\n",
                4 - under
            );
            std::fs::write(tmp.path().join(&folded), text).unwrap();
            run.profile = Some(ProfileRecord {
                folded,
                ..ProfileRecord::default()
            });
        }
        r.runs[3].status = crate::results::record::RunStatus::Failed;
        let q = |q: &str| ask(&r, tmp.path(), q);
        assert_eq!(q("stacks wait mvc D.dispatch median").unwrap(), "50");
        assert_eq!(q("stacks wait mvc D.dispatch max").unwrap(), "75");
        assert_eq!(q("stacks wait mvc D.dispatch min .1").unwrap(), "25.0");
        assert_eq!(q("stacks wait mvc Vertx max").unwrap(), "0");
        let e = format!("{:#}", q("stacks wait flux D.dispatch max").unwrap_err());
        assert!(
            e.contains("no profiled run of flux on wait that ended"),
            "{e}"
        );
    }

    #[test]
    fn recovery_after_an_overload_reads_the_runs_that_got_back_and_counts_those_that_did_not() {
        use crate::results::details::Detail;
        use crate::results::faults::OverloadVerdict;
        let mut r = results();
        for (i, back) in [Some(4.0), None, Some(11.0), Some(5.0)]
            .into_iter()
            .enumerate()
        {
            let mut run = crate::results::test_support::blank_run("mvc", "over", i as u32 + 1);
            run.status = crate::results::record::RunStatus::Ok;
            run.details.set(Detail::Overload(OverloadVerdict {
                capacity_rps: 1000.0,
                factor: 5.0,
                offered_rps: 5000.0,
                ok_rps: 1000.0,
                fast_errors: 0,
                timeouts: 10,
                baseline_p99_ms: 100.0,
                overload_p99_ms: 20000.0,
                after_p99_ms: 900.0,
                after_errors: 0,
                behaviour: "queues".into(),
                explanation: String::new(),
                recovered_after_s: back,
            }));
            r.runs.push(run);
        }
        let dir = Path::new("/nonexistent");
        assert_eq!(ask(&r, dir, "recovery over mvc median").unwrap(), "5");
        assert_eq!(ask(&r, dir, "recovery over mvc max").unwrap(), "11");
        assert_eq!(ask(&r, dir, "recovery over mvc never").unwrap(), "1");
        assert!(ask(&r, dir, "recovery over flux median").is_err());
    }

    #[test]
    fn capacities_are_read_from_the_searches_after_a_settled_warm_up() {
        use crate::results::record::CapacityResult;
        let mut r = results();
        for (i, (found, unsettled)) in [
            (Some(1945.0), false),
            (Some(2121.0), false),
            (Some(9999.0), true),
            (None, false),
            (Some(1800.0), false),
        ]
        .into_iter()
        .enumerate()
        {
            r.capacity.push(CapacityResult {
                warmup_unsettled: unsettled,
                ..crate::results::test_support::blank_search(
                    "mvc",
                    i as u32 + 1,
                    found,
                    found.map(|c| c * 1.1),
                )
            });
        }
        let dir = Path::new("/nonexistent");
        assert_eq!(ask(&r, dir, "capacity wait mvc median").unwrap(), "1,945");
        assert_eq!(ask(&r, dir, "capacity wait mvc max").unwrap(), "2,121");
        assert_eq!(ask(&r, dir, "capacity wait mvc min").unwrap(), "1,800");
        assert!(ask(&r, dir, "capacity wait flux median").is_err());
    }

    #[test]
    fn failed_runs_are_counted_apart_from_those_that_ended() {
        let mut r = results();
        four_runs(&mut r, "mvc", [212, 214, 211, 213]);
        r.runs[1].status = crate::results::record::RunStatus::Failed;
        let dir = Path::new("/nonexistent");
        assert_eq!(ask(&r, dir, "failed wait mvc").unwrap(), "1");
        assert_eq!(ask(&r, dir, "runs wait mvc").unwrap(), "3");
        assert_eq!(ask(&r, dir, "failed * flux").unwrap(), "0");
        // A saturated driver is counted over the runs that ended: the failed one is not.
        r.runs[0].driver.saturated = true;
        r.runs[1].driver.saturated = true;
        assert_eq!(ask(&r, dir, "saturated wait mvc").unwrap(), "1");
        assert_eq!(ask(&r, dir, "saturated wait flux").unwrap(), "0");
    }

    #[test]
    fn writes_are_summed_over_the_runs_that_ended() {
        use crate::results::details::Detail;
        use crate::services::write_check::WriteCheck;
        let mut r = results();
        for (i, (creates, lost)) in [(100, 0), (200, 2), (400, 0)].into_iter().enumerate() {
            let mut run = crate::results::test_support::blank_run("mvc", "crud", i as u32 + 1);
            run.status = crate::results::record::RunStatus::Ok;
            run.details.set(Detail::Writes(WriteCheck {
                creates_acknowledged: creates,
                updates_acknowledged: 10,
                deletes_acknowledged: 1,
                lost,
                ..WriteCheck::default()
            }));
            r.runs.push(run);
        }
        r.runs[2].status = crate::results::record::RunStatus::Failed;
        let dir = Path::new("/nonexistent");
        assert_eq!(ask(&r, dir, "writes crud mvc acknowledged").unwrap(), "322");
        assert_eq!(ask(&r, dir, "writes * lost").unwrap(), "2");
        assert!(ask(&r, dir, "writes crud mvc deleted").is_err());
        assert!(
            ask(&r, dir, "writes wait acknowledged").is_err(),
            "no write check"
        );
    }

    #[test]
    fn a_contender_is_tested_against_itself_in_a_results_directory_beside() {
        let tmp = tempfile::tempdir().unwrap();
        let (pinned, quota) = (tmp.path().join("pinned"), tmp.path().join("quota"));
        for d in [&pinned, &quota] {
            std::fs::create_dir(d).unwrap();
        }
        let mut before = results();
        four_runs(&mut before, "mvc", [212, 214, 211, 213]);
        before.save(&pinned).unwrap();
        let mut after = results();
        four_runs(&mut after, "mvc", [21, 22, 21, 21]);
        after.save(&quota).unwrap();
        let q = |q: &str| ask(&after, &quota, q);
        assert_eq!(
            q("versus ../pinned wait mvc threads outcome").unwrap(),
            "different as blocks"
        );
        assert_eq!(
            q("versus ../pinned wait mvc threads change").unwrap(),
            "-90%"
        );
        assert_eq!(q("versus ../pinned wait mvc threads runs").unwrap(), "4");
        let e = format!(
            "{:#}",
            q("versus ../pinned wait flux threads outcome").unwrap_err()
        );
        assert!(
            e.contains("no settled runs of flux on wait on both sides"),
            "{e}"
        );
        let e = format!(
            "{:#}",
            q("versus ../elsewhere wait mvc threads outcome").unwrap_err()
        );
        assert!(e.contains("`versus ../elsewhere`: no results there"), "{e}");
    }

    #[test]
    fn a_contender_is_tested_against_itself_in_another_scenario_of_the_plan() {
        let mut r = results();
        four_runs_on(&mut r, "mvc", "wait", [212, 214, 211, 213]);
        four_runs_on(&mut r, "mvc", "fault", [21, 22, 21, 21]);
        four_runs_on(&mut r, "mvc", "after", [213, 211, 212, 214]);
        let dir = Path::new("/nonexistent");
        let q = |q: &str| ask(&r, dir, q);
        assert_eq!(
            q("across fault/wait mvc threads outcome").unwrap(),
            "different"
        );
        assert_eq!(q("across fault/wait mvc threads change").unwrap(), "-90%");
        assert_eq!(q("across wait/fault mvc threads change").unwrap(), "+910%");
        assert_eq!(
            q("across after/wait mvc threads outcome").unwrap(),
            "equivalent"
        );
        let e = format!(
            "{:#}",
            q("across after/wait flux threads runs").unwrap_err()
        );
        assert!(
            e.contains("no settled runs of flux on both wait and after"),
            "{e}"
        );
        let e = format!("{:#}", q("across after mvc threads runs").unwrap_err());
        assert!(e.contains("name the scenarios as B/A"), "{e}");
    }

    /// A run whose measured window trended leaves the steady figures untested, three runs
    /// against four, but not the time to its first 200, which came before any load.
    #[test]
    fn a_start_is_tested_on_every_run_and_a_steady_figure_on_settled_runs_only() {
        let tmp = tempfile::tempdir().unwrap();
        let (pinned, quota) = (tmp.path().join("pinned"), tmp.path().join("quota"));
        for d in [&pinned, &quota] {
            std::fs::create_dir(d).unwrap();
        }
        let mut before = results();
        four_runs(&mut before, "mvc", [212, 214, 211, 213]);
        before.save(&pinned).unwrap();
        let mut after = results();
        four_runs(&mut after, "mvc", [21, 22, 21, 21]);
        for r in after.runs.iter_mut() {
            if let Some(c) = r.cold_start.as_mut() {
                c.first_200_s += 10.0;
            }
        }
        after.runs[0].warmup = Some(crate::results::test_support::window_trended(10, 20.0));
        after.save(&quota).unwrap();
        let q = |q: &str| ask(&after, &quota, q);
        assert_eq!(
            q("versus ../pinned wait mvc threads outcome").unwrap(),
            "not tested"
        );
        assert_eq!(
            q("versus ../pinned wait mvc first_200_s outcome").unwrap(),
            "different as blocks"
        );
        assert_eq!(
            q("versus ../pinned wait mvc first_200_s runs").unwrap(),
            "4"
        );
    }

    #[test]
    fn two_contenders_starts_are_tested_on_every_run_of_one_sitting() {
        let mut r = results();
        four_runs(&mut r, "mvc", [212, 214, 211, 213]);
        four_runs(&mut r, "flux", [21, 22, 21, 21]);
        for run in r.runs.iter_mut().filter(|x| x.contender == "flux") {
            if let Some(c) = run.cold_start.as_mut() {
                c.first_200_s += 10.0;
            }
        }
        // One window of each moved: its steady figures leave, its start stays.
        for c in ["mvc", "flux"] {
            let run = r.runs.iter_mut().find(|x| x.contender == c).unwrap();
            run.warmup = Some(crate::results::test_support::window_trended(10, 20.0));
        }
        let q = |q: &str| ask(&r, Path::new("/nonexistent"), q);
        assert_eq!(q("tested wait first_200_s flux/mvc runs").unwrap(), "4");
        assert_eq!(
            q("tested wait first_200_s flux/mvc outcome").unwrap(),
            "different"
        );
        assert_eq!(q("tested wait threads flux/mvc runs").unwrap(), "3");
    }

    #[test]
    fn what_a_runtime_detected_is_quoted_in_its_own_words() {
        let mut r = results();
        r.contenders[0].detected = Some(crate::services::detected::Detected {
            cpus: 1,
            workers: 200,
            workers_of: "Tomcat worker threads (max)".into(),
            heap_max_mb: Some(256),
            more: Default::default(),
        });
        let q = |q: &str| ask(&r, Path::new("/nonexistent"), q);
        assert_eq!(
            q("detected mvc").unwrap(),
            "1 CPU; 200 Tomcat worker threads (max); heap 256 MB"
        );
        let e = format!("{:#}", q("detected flux").unwrap_err());
        assert!(
            e.contains("flux said nothing of what its runtime detected"),
            "{e}"
        );
    }

    #[test]
    fn a_start_is_read_from_exec_over_the_starts_before_a_scenario() {
        let mut r = results();
        four_runs(&mut r, "mvc", [1, 1, 1, 1]);
        let q = |q: &str| ask(&r, Path::new("/nonexistent"), q);
        assert_eq!(q("start wait mvc port min").unwrap(), "1.0");
        assert_eq!(q("start wait mvc first_200 median").unwrap(), "3.5");
        assert_eq!(q("start wait mvc steady max .0").unwrap(), "42");
        let e = format!("{:#}", q("start wait mvc checked median").unwrap_err());
        assert!(
            e.contains("no start of mvc before wait reached checked"),
            "{e}"
        );
        let e = format!("{:#}", q("start wait mvc boot median").unwrap_err());
        assert!(
            e.contains("port, first_200, checked or steady, not `boot`"),
            "{e}"
        );
        let e = format!("{:#}", q("start wait mvc port mean").unwrap_err());
        assert!(e.contains("min, max or median, not `mean`"), "{e}");
    }

    #[test]
    fn settings_minutes_and_the_ceiling_come_from_the_plan() {
        assert_eq!(fig("plan budget").unwrap(), "40m");
        assert_eq!(fig("plan scenarios.wait.load.users").unwrap(), "1,000");
        assert_eq!(fig("plan scenarios.0.path").unwrap(), "/delay?ms=100");
        assert_eq!(fig("ceiling wait").unwrap(), "10,000");
        // 23:50:00 to 00:29:10 the next day.
        assert_eq!(fig("minutes").unwrap(), "39");
    }

    #[test]
    fn a_query_it_cannot_answer_says_what_it_can() {
        let e = |q: &str| format!("{:#}", fig(q).unwrap_err());
        assert!(e("verdict nope throughput ratio").contains("no verdict on scenario `nope`"));
        assert!(e("verdict wait throughput ratio a/b").contains("no finding on throughput"));
        assert!(e("verdict wait p99_all hi").contains("has no hi"));
        assert!(e("cell wait mvc speed").contains("unknown metric `speed`: one of throughput"));
        assert!(e("frobnicate").contains("unknown figure query `frobnicate`"));
        assert!(e("plan budget.x").contains("the plan has no `budget.x`"));
        assert!(e("verdict wait throughput ratio .x").contains("decimals are"));
        assert!(e("").contains("an empty figure marker"));
    }
}
