//! A run's own figures, as the metric registry (plan/metric_list.rs) names them: read once here
//! for an SLO judging one run and for stats/ estimating a cell of runs.

use super::record::{DownstreamCalls, Run};
use crate::plan::metrics::Figure;

/// `f` of run `r`: NaN where the run has no such figure (no GC log, no limit, a fixed warm-up).
pub fn figure(r: &Run, f: Figure) -> f64 {
    let m = &r.resources;
    match f {
        Figure::PeakThreads => m.peak_threads as f64,
        Figure::PeakRssMb => m.peak_rss_mb,
        Figure::CpuMsPer1k => m.cpu_ms_per_1k_requests,
        Figure::PeakSockets => m.peak_sockets as f64,
        Figure::PeakDownstreamConns => m.peak_downstream_conns as f64,
        Figure::DownstreamServedPerReq => downstream_per_answer(r, |c| c.served),
        Figure::DownstreamCancelledPerReq => downstream_per_answer(r, |c| c.cancelled),
        Figure::CtxSwitchesPerReq => ctx_per_answer(r),
        Figure::GcPauseTotalMs => r.gc.as_ref().map_or(f64::NAN, |g| g.pause_total_ms),
        Figure::GcPauseMaxMs => r.gc.as_ref().map_or(f64::NAN, |g| g.pause_max_ms),
        Figure::GcCollections => r.gc.as_ref().map_or(f64::NAN, |g| g.collections as f64),
        Figure::HeapAfterMaxMb => gc_option(r, |g| g.heap_after_max_mb),
        Figure::AllocationMbPerS => gc_option(r, |g| g.allocation_mb_per_s),
        Figure::ProfileSamples => r.profile.as_ref().map_or(f64::NAN, |p| p.samples as f64),
        Figure::VirtualThreadsStarted => r
            .profile
            .as_ref()
            .and_then(|p| p.virtual_threads_started)
            .map_or(f64::NAN, |n| n as f64),
        Figure::SteadyAfterS => steady_after(r),
        Figure::First200S => r.cold_start.as_ref().map_or(f64::NAN, |c| c.first_200_s),
        Figure::ThrottledPct => limited(r).map_or(f64::NAN, |c| c.throttled_pct),
        Figure::OomKills => limited(r).map_or(f64::NAN, |c| c.oom_kills as f64),
        Figure::RecoveryS => recovery_s(r),
    }
}

/// A figure of the run's GC log that not every runtime's log gives (NaN without it).
fn gc_option(r: &Run, read: fn(&super::gc::GcReport) -> Option<f64>) -> f64 {
    r.gc.as_ref().and_then(read).unwrap_or(f64::NAN)
}

/// Seconds from a mid-run fault clearing until the contender was back at its baseline (NaN
/// where the run had no such fault). A run that never got back counts the rest of its measured
/// window after the fault cleared: a lower bound, longer than any run that got back could
/// take, so the rank test orders it behind every one of them.
fn recovery_s(r: &Run) -> f64 {
    r.details.recovery().map_or(f64::NAN, |rec| {
        rec.recovered_after_s
            .unwrap_or((r.summary.duration_s - rec.cleared_at_s).max(0.0))
    })
}

/// Whether the sampler read nothing for `r`: a server that was not sampled (an external one
/// without --pid or --cmd) has no sampled figure rather than zero threads and zero CPU.
pub fn unsampled(r: &Run) -> bool {
    let m = &r.resources;
    m.samples.is_empty()
        && m.peak_threads == 0
        && m.peak_rss_mb == 0.0
        && m.cpu_s == 0.0
        && m.cpu_ms_per_1k_requests == 0.0
        && m.ctx_voluntary + m.ctx_involuntary == 0
}

/// Context switches per answer, over the same population as CPU per request: every answer of
/// the run, those that came in after the measured phase (drained) included.
fn ctx_per_answer(r: &Run) -> f64 {
    let answered = r.summary.ok + r.summary.drained;
    if answered > 0 {
        (r.resources.ctx_voluntary + r.resources.ctx_involuntary) as f64 / answered as f64
    } else {
        0.0
    }
}

/// The run's cgroup where it held a limit (a cgroup that only counted is not one).
fn limited(r: &Run) -> Option<&crate::sampler::CgroupReport> {
    r.resources.cgroup.as_ref().filter(|c| c.limited())
}

/// Seconds of warm-up until the contender settled (NaN where the warm-up was fixed).
fn steady_after(r: &Run) -> f64 {
    r.warmup
        .as_ref()
        .filter(|w| w.watched())
        .map_or(f64::NAN, |w| w.seconds)
}

/// One of the downstream's counts per request due of a run; NaN without its counts.
fn downstream_per_answer(r: &Run, count: fn(&DownstreamCalls) -> u64) -> f64 {
    let answered = (r.summary.ok + r.summary.drained + r.summary.errors.total()) as f64;
    match &r.downstream_calls {
        Some(c) if answered > 0.0 => count(c) as f64 / answered,
        _ => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::details::Detail;
    use crate::results::faults::Recovery;
    use crate::results::test_support::blank_run;

    fn spike_run(recovered_after_s: Option<f64>) -> Run {
        let mut r = blank_run("go", "spike", 1);
        r.summary.duration_s = 40.0;
        r.details.set(Detail::Faults {
            events: Vec::new(),
            recovery: Some(Recovery {
                fault_at_s: 10.0,
                cleared_at_s: 20.0,
                baseline_p99_ms: 104.0,
                worst_p99_ms: 1511.0,
                errors: 0,
                recovered_after_s,
                limit_ms: 161.0,
            }),
        });
        r
    }

    #[test]
    fn recovery_is_the_seconds_back_and_a_run_that_never_got_back_ranks_behind() {
        assert_eq!(figure(&spike_run(Some(2.0)), Figure::RecoveryS), 2.0);
        // Never back within the 20 s after the fault cleared: at least those 20 s.
        assert_eq!(figure(&spike_run(None), Figure::RecoveryS), 20.0);
        // A run without a fault has no such figure.
        let calm = blank_run("go", "baseline", 1);
        assert!(figure(&calm, Figure::RecoveryS).is_nan());
    }

    #[test]
    fn the_gc_log_and_the_profile_give_their_figures_and_a_run_without_them_none() {
        use crate::results::gc::GcReport;
        use crate::results::profile::ProfileRecord;
        let mut r = blank_run("spring-mvc-virtual", "c10k", 1);
        for f in [
            Figure::GcCollections,
            Figure::HeapAfterMaxMb,
            Figure::AllocationMbPerS,
            Figure::ProfileSamples,
            Figure::VirtualThreadsStarted,
        ] {
            assert!(figure(&r, f).is_nan(), "{f:?} without a GC log or profile");
        }
        r.gc = Some(GcReport {
            source: "JVM -Xlog:gc".into(),
            collections: 36,
            heap_after_max_mb: Some(2047.0),
            allocation_mb_per_s: None,
            ..GcReport::default()
        });
        r.profile = Some(ProfileRecord {
            tool: "jfr".into(),
            samples: 495,
            virtual_threads_started: Some(40_117),
            ..ProfileRecord::default()
        });
        assert_eq!(figure(&r, Figure::GcCollections), 36.0);
        assert_eq!(figure(&r, Figure::HeapAfterMaxMb), 2047.0);
        // A log that cannot tell the allocation (Node's) leaves it unknown, not zero.
        assert!(figure(&r, Figure::AllocationMbPerS).is_nan());
        assert_eq!(figure(&r, Figure::ProfileSamples), 495.0);
        assert_eq!(figure(&r, Figure::VirtualThreadsStarted), 40_117.0);
    }
}
