//! The report sections of the kinds of run with a detail of their own (results/details.rs): a
//! mix's write check, a pipeline's delivery check, the recovery after a fault, and an overload
//! verdict. Each is notes under its scenario's table; recovery and overload also give a line
//! under the table of `table --markdown`.

use super::fmt_num;
use super::section::Section;
use crate::results::faults::{RECOVERED_FOR, RECOVERY_LIMIT_S};
use crate::results::record::Run;
use crate::services::write_check::WriteCheck;

pub struct Writes;
pub struct Delivery;
pub struct Recovery;
pub struct Overload;

impl Section for Writes {
    /// Per contender whose mix writes: the write check over its runs.
    fn notes(&self, runs: &[&Run]) -> Vec<String> {
        let mut contenders: Vec<&str> = Vec::new();
        for r in runs {
            if !contenders.contains(&r.contender.as_str()) {
                contenders.push(&r.contender);
            }
        }
        contenders
            .into_iter()
            .filter_map(|n| {
                let checks: Vec<&WriteCheck> = runs
                    .iter()
                    .filter(|r| r.contender == n)
                    .filter_map(|r| r.details.writes())
                    .collect();
                (!checks.is_empty()).then(|| write_note(n, &checks))
            })
            .collect()
    }
}

fn write_note(contender: &str, checks: &[&WriteCheck]) -> String {
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
        format!("; {unacked} rows were committed without an answer reaching the driver (timeouts)")
    } else {
        String::new()
    };
    format!(
        "Writes ({contender}, {} run(s)): {creates} creates, {updates} updates and {deletes} \
         deletes acknowledged, {verdict}{extra}.",
        checks.len()
    )
}

impl Section for Delivery {
    /// Each pipeline run's delivery check.
    fn notes(&self, runs: &[&Run]) -> Vec<String> {
        runs.iter()
            .filter_map(|r| Some((r, r.details.delivery()?)))
            .map(|(r, d)| {
                let verdict = if d.lost == 0 {
                    "none lost".to_string()
                } else {
                    format!("{} LOST (e.g. {:?})", d.lost, d.lost_examples)
                };
                format!(
                    "Delivery ({} run {}): {} records sent, {} arrived in output, {verdict}; {} \
                     duplicates (at-least-once), {} failed enrichments; peak lag {} records.",
                    r.contender,
                    r.run,
                    d.sent,
                    d.received,
                    d.duplicates,
                    d.failed_enrichments,
                    d.peak_lag
                )
            })
            .collect()
    }
}

impl Section for Recovery {
    /// Each run's recovery after its mid-run fault.
    fn notes(&self, runs: &[&Run]) -> Vec<String> {
        runs.iter()
            .filter_map(|r| Some((r, r.details.recovery()?)))
            .map(|(r, rc)| {
                let back = match rc.recovered_after_s {
                    Some(s) if s <= RECOVERY_LIMIT_S => format!("back {s:.0} s after it cleared"),
                    Some(s) => format!(
                        "back only {s:.0} s after it cleared (over the {RECOVERY_LIMIT_S:.0} s bar)"
                    ),
                    None => "not back by the end of the run".into(),
                };
                format!(
                    "Recovery ({} run {}): fault at {:.0} s, cleared at {:.0} s; baseline p99 \
                     {:.0} ms, worst {:.0} ms, {} errors; {back} (p99 under {:.0} ms with no \
                     errors for {} s in a row).",
                    r.contender,
                    r.run,
                    rc.fault_at_s,
                    rc.cleared_at_s,
                    rc.baseline_p99_ms,
                    rc.worst_p99_ms,
                    rc.errors,
                    rc.limit_ms,
                    RECOVERED_FOR
                )
            })
            .collect()
    }

    fn verdict(&self, contender: &str, run: &Run) -> Option<String> {
        let rc = run.details.recovery()?;
        let limit = fmt_num(rc.limit_ms, 0);
        let back = match rc.recovered_after_s {
            Some(s) => format!("back within {limit} ms {s:.0} s after the fault cleared"),
            None => format!("not back within {limit} ms by the end of the run"),
        };
        Some(format!(
            "{contender}: p99 {} ms before the fault, worst {} ms, {back}; {} errors",
            fmt_num(rc.baseline_p99_ms, 0),
            fmt_num(rc.worst_p99_ms, 0),
            rc.errors
        ))
    }
}

impl Section for Overload {
    /// Each overload run's verdict.
    fn notes(&self, runs: &[&Run]) -> Vec<String> {
        runs.iter()
            .filter_map(|r| Some((r, r.details.overload()?)))
            .map(|(r, v)| {
                let back = v.recovered_after_s.map_or(
                    "not back at baseline within the after phase".to_string(),
                    |s| format!("back at baseline {s:.0} s into the after phase"),
                );
                format!(
                    "Overload ({} run {}): capacity {:.0} req/s (closed probe), offered {:.0} \
                     req/s ({}x): {} - {}; {:.0} req/s answered OK, {} fast errors, {} timeouts; \
                     {back}.",
                    r.contender,
                    r.run,
                    v.capacity_rps,
                    v.offered_rps,
                    v.factor,
                    v.behaviour.to_uppercase(),
                    v.explanation,
                    v.ok_rps,
                    v.fast_errors,
                    v.timeouts
                )
            })
            .collect()
    }

    fn verdict(&self, contender: &str, run: &Run) -> Option<String> {
        let o = run.details.overload()?;
        Some(format!("{contender}: {} ({})", o.behaviour, o.explanation))
    }
}
