//! Warnings a measured run's own figures give: its accounting (a warm-up backlog, requests cut
//! or left unanswered, counts that disagree) and its load hosts (saturated, lost).

use crate::driver;
use crate::plan::Scenario;
use crate::results::record::Run;

/// What the run's accounting says: a warm-up backlog, requests cut by a stop or left
/// unanswered, and a driver whose counts disagree with the summary's.
pub(super) fn accounting_warnings(
    r: &mut Run,
    outcome: &driver::Outcome,
    s: &Scenario,
    warm_left: Option<u64>,
) {
    if let Some(n) = warm_left {
        r.driver.warnings.push(format!("the warm-up left {n} requests unanswered: the server may still have been busy with them when measurement began"));
    }
    // summarize() already merged every interval's errors into the summary.
    let cut = r.summary.errors.cut;
    if cut > 0 {
        r.driver.warnings.push(format!(
            "stopped before its end: {cut} requests still queued or in flight were cut by \
             the stop, before they had their time; counted apart (ok + errors + cut = due), \
             neither errors of the server nor latencies"
        ));
    }
    let unanswered = r.summary.errors.unanswered;
    if unanswered > 0 {
        r.driver.warnings.push(format!(
            "{unanswered} requests were still unanswered {}s after the run: counted as errors (unanswered), in the all-requests latency at the time they were given up",
            driver::drain_window(&s.load).as_secs()
        ));
    }
    if r.summary.due != outcome.due {
        r.driver.warnings.push(format!("accounting: the driver had {} requests due but {} ended (ok, drained or errors); please report this", outcome.due, r.summary.due));
    }
}

/// Warnings from the load hosts: a driver that could not keep its schedule, a host lost.
pub(super) fn load_host_warnings(r: &mut Run) {
    let saturated = crate::driver::remote::saturation_warnings(&r.load_hosts);
    r.driver.saturated |= !saturated.is_empty();
    r.driver.warnings.extend(saturated);
    for h in r.load_hosts.iter().filter(|h| h.lost.is_some()) {
        r.driver.warnings.push(format!(
            "load host {} lost {:.1} s after the start ({}): what it measured until then is kept; its {} requests due whose outcome never arrived are counted as cut",
            h.host,
            h.lost_at_s.unwrap_or(0.0),
            h.lost.as_deref().unwrap_or(""),
            h.due.saturating_sub(h.ok + h.errors)
        ));
    }
}
