//! The one way every run ends, HTTP or pipeline: CPU steal over the run, the contender's
//! resources from its samples (and per load level), the mid-run events and the recovery after
//! them, and the status: failed on a crash or a failed check, incomplete when cut short.

use crate::results::details::Detail;
use crate::results::faults::{self, EventRecord};
use crate::results::record::{Run, RunStatus};
use crate::sampler::{self, Resources, Sample, STEAL_LIMIT_PCT};
use crate::services::contender::Running;
use crate::services::exit_words::log_tail;
use crate::util::cgroup::Limits;

/// What a run's measuring hands over once its load has ended.
pub(super) struct Ended {
    pub samples: Vec<Sample>,
    /// /proc/stat steal before the load began.
    pub steal_before: Option<(u64, u64)>,
    pub fired: Vec<EventRecord>,
    /// How the contender exited, when it did during the run.
    pub crash: Option<String>,
    /// The load stopped early (Ctrl-C).
    pub cancelled: bool,
    /// Requests (or records) the contender's CPU per request is counted over.
    pub requests: u64,
    /// The limits of the cgroup the contender ran in, here or on its host.
    pub limits: Option<Limits>,
}

/// Completes `r` from what the run left; `r.failure` set by a check (lost writes, lost
/// records) makes the run failed.
pub(super) fn finish(mut r: Run, e: Ended, proc: Option<&Running>) -> Run {
    r.driver.cpu_steal_pct = sampler::steal_pct(e.steal_before, sampler::cpu_steal());
    if r.driver.cpu_steal_pct > STEAL_LIMIT_PCT {
        r.driver.warnings.push(format!("the hypervisor stole {:.1}% of this machine's CPU time during the run: figures may be low", r.driver.cpu_steal_pct));
    }
    sampler::level_peaks(&mut r.summary.levels, &e.samples);
    let window = Some(r.summary.duration_s).filter(|d| *d > 0.0);
    r.resources = Resources::from_samples(e.samples, e.requests, window);
    if let Some(report) = r.resources.cgroup.as_mut() {
        report.limits = e.limits;
    }
    r.status = if e.crash.is_some() || r.failure.is_some() {
        RunStatus::Failed
    } else if e.cancelled {
        RunStatus::Incomplete
    } else {
        RunStatus::Ok
    };
    if let Some(why) = &e.crash {
        r.failure = Some(match proc {
            Some(p) => format!(
                "the contender exited during the run ({why}); last log lines:\n{}",
                log_tail(&p.log, 12)
            ),
            // The server on the contender host: its log is copied back when it is stopped.
            None => format!("the server was lost during the run: {why}"),
        });
    }
    finish_events(&mut r, e.fired);
    r
}

/// Keeps a run's mid-run events and, when a fault began and cleared (two events or more), the
/// recovery after it, from the run's per-second rows.
fn finish_events(r: &mut Run, fired: Vec<EventRecord>) {
    let mut recovery = None;
    if let (Some(first), Some(last), true) = (fired.first(), fired.last(), fired.len() >= 2) {
        recovery = faults::recovery(&r.intervals, first.at_s, last.at_s);
        if let Some(rc) = &recovery {
            match rc.recovered_after_s {
                Some(s) => eprintln!("  recovery: back within {:.0} ms p99 {s:.0} s after the fault cleared (worst p99 {:.0} ms, {} errors)", rc.limit_ms, rc.worst_p99_ms, rc.errors),
                None => eprintln!("  recovery: not back within {:.0} ms p99 by the end of the run (worst p99 {:.0} ms, {} errors)", rc.limit_ms, rc.worst_p99_ms, rc.errors),
            }
        }
    }
    if fired.iter().any(|e| !e.applied) {
        r.driver
            .warnings
            .push("the downstream did not accept a mid-run change; see events".into());
    }
    if !fired.is_empty() || recovery.is_some() {
        r.details.set(Detail::Faults {
            events: fired,
            recovery,
        });
    }
}

/// The runtime's own lines in the contender's output (GC, event-loop delay) over the measured
/// run, which began at `began` and lasted `length`: the output of the process started here,
/// or of the server on its own host, read there.
pub(super) fn runtime_logs(
    r: &mut Run,
    local: Option<&Running>,
    remote: Option<&crate::remote::contender::RemoteContender>,
    began: std::time::Instant,
    length: std::time::Duration,
) {
    let (log, since) = match (local, remote) {
        (Some(p), _) => (std::fs::read_to_string(&p.log).ok(), p.started),
        (None, Some(rc)) => (rc.log_text(), rc.since),
        (None, None) => return,
    };
    if let Some(log) = log {
        let start = began.saturating_duration_since(since);
        r.gc = crate::observe::gc::from_text(&log, start, length);
        r.event_loop = crate::observe::event_loop::from_text(&log, start, length);
    }
}
