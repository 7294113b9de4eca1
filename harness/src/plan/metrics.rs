//! The metrics iobound reports, each declared once: its key (what a threshold, a `--fail-if`
//! rule and a figure marker name), label, decimals, which way is better, where a run records
//! it, whether the terminal table shows it and whether a limit may name it. The terminal
//! table, Markdown, CSV, HTML, comparisons, thresholds and SLOs all read the list, METRICS
//! (plan/metric_list.rs; this file holds what an entry is made of and the lookups); adding a
//! metric is an entry there and the code that measures it.
//!
//! It lives with the plan because a plan names metrics (thresholds, SLOs) before anything
//! runs; the stages that read runs interpret `Source` (results/figures.rs for one run, stats/ for
//! a cell of runs).

use serde::Serialize;

/// How a metric's limit is written and read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Milliseconds: "200ms", "1.5s", "250us", or a bare number of ms.
    Millis,
    /// A percentage: "0.1%" or a bare number of per cent.
    Percent,
    /// A plain number (req/s, threads, MB, ms of CPU per 1k requests, ...).
    Number,
}

/// A comparison of a value with its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Op {
    #[serde(rename = "<=")]
    Le,
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = ">=")]
    Ge,
    #[serde(rename = ">")]
    Gt,
}

impl Op {
    pub fn symbol(self) -> &'static str {
        match self {
            Op::Le => "<=",
            Op::Lt => "<",
            Op::Ge => ">=",
            Op::Gt => ">",
        }
    }

    pub fn holds(self, value: f64, limit: f64) -> bool {
        match self {
            Op::Le => value <= limit,
            Op::Lt => value < limit,
            Op::Ge => value >= limit,
            Op::Gt => value > limit,
        }
    }

    /// The operator a text starts with, and the rest.
    pub fn split(text: &str) -> (Option<Op>, &str) {
        let t = text.trim();
        for (p, op) in [("<=", Op::Le), (">=", Op::Ge), ("<", Op::Lt), (">", Op::Gt)] {
            if let Some(rest) = t.strip_prefix(p) {
                return (Some(op), rest.trim());
            }
        }
        (None, t)
    }
}

/// A metric a limit may name: how its limit is written, the comparison a bare limit means
/// (throughput must stay at or above it, everything else at or below), and what it is in words.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limit {
    pub unit: Unit,
    pub op: Op,
    pub words: &'static str,
}

/// A statistic of a latency histogram.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stat {
    /// 0.0 is the minimum, 1.0 the maximum.
    Quantile(f64),
    Mean,
    Stdev,
}

/// A figure each run records once (results/figures.rs reads it); NaN where a run has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    PeakThreads,
    PeakRssMb,
    /// CPU time of the contender per 1,000 answers.
    CpuMsPer1k,
    PeakSockets,
    PeakDownstreamConns,
    /// Downstream calls served in full, and cancelled by the contender, per request due (NaN
    /// where the downstream's counts were not kept).
    DownstreamServedPerReq,
    DownstreamCancelledPerReq,
    CtxSwitchesPerReq,
    /// Time the runtime paused the application for garbage collection over the run, and its
    /// longest pause (NaN where the runtime's log had none).
    GcPauseTotalMs,
    GcPauseMaxMs,
    /// The runtime's collections over the run, the most heap still live after one (MB), and
    /// what the application allocated (MB per second): NaN where the log had none.
    GcCollections,
    HeapAfterMaxMb,
    AllocationMbPerS,
    /// With `--profile`: the profiler's stack samples, and (JFR) the virtual threads started
    /// in the measured run; NaN on a run that was not profiled.
    ProfileSamples,
    VirtualThreadsStarted,
    /// Seconds of warm-up until the contender settled (NaN where the warm-up was fixed).
    SteadyAfterS,
    /// Seconds from the contender's exec to its first 200, on runs that followed a start.
    First200S,
    /// Under a CPU quota or a memory limit: the share of CFS periods in which the quota ran
    /// out, and the processes the OOM killer killed (NaN without a limit).
    ThrottledPct,
    OomKills,
    /// Seconds from a mid-run fault clearing (a downstream spike's end) until the contender's
    /// p99 was back at its baseline (NaN where the run had no such fault).
    RecoveryS,
}

impl Figure {
    /// Read by the sampler from /proc: an unsampled server (an external one without --pid)
    /// has no figure rather than zero threads and zero CPU.
    pub fn sampled(self) -> bool {
        matches!(
            self,
            Figure::PeakThreads
                | Figure::PeakRssMb
                | Figure::CpuMsPer1k
                | Figure::PeakSockets
                | Figure::PeakDownstreamConns
                | Figure::CtxSwitchesPerReq
        )
    }
}

/// Where a metric's value comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Source {
    /// Requests answered per second of the measured window.
    Throughput,
    /// Failed requests in per cent of every request due.
    Errors,
    /// A statistic of the latency of answered requests, from histograms merged over runs.
    Latency(Stat),
    /// The p99 of every request due, failed and unanswered ones at the time they failed.
    LatencyAll,
    /// A figure of each run (resources, GC, warm-up, start, cgroup).
    Run(Figure),
}

/// A metric of a cell, for tables, comparisons and limits.
#[derive(Debug)]
pub struct Metric {
    /// The name thresholds, SLOs, `--fail-if` rules and figure markers use.
    pub key: &'static str,
    pub label: &'static str,
    pub decimals: usize,
    pub higher_is_better: bool,
    /// Read at the contender's start, before any load (time to first 200): a measured window
    /// that later trended says nothing against it, so comparisons take every run that ended,
    /// not only the settled ones.
    pub at_start: bool,
    /// A row of the terminal table (`iobound table`, and after a run); the reports (HTML,
    /// CSV, report.md) show every metric.
    pub in_terminal: bool,
    /// Taken over the requests answered ok (their latency, the CPU per answer): a cell where
    /// no request was answered ok has no such figure, whose 0 would read as fast or free.
    pub of_ok_answers: bool,
    /// Whether a threshold, an SLO or a `--fail-if` rule may name it, and how.
    pub limit: Option<Limit>,
    pub source: Source,
}

impl Metric {
    /// A latency, judged by an SLO over every request due.
    pub fn is_latency(&self) -> bool {
        matches!(self.source, Source::Latency(_) | Source::LatencyAll)
    }
}
