//! The metrics iobound reports, each declared once: its key (what a threshold, a `--fail-if`
//! rule and a figure marker name), label, decimals, which way is better, where a run records
//! it, whether the terminal table shows it and whether a limit may name it. The terminal
//! table, Markdown, CSV, HTML, comparisons, thresholds and SLOs all read this list; adding a
//! metric is an entry here and the code that measures it.
//!
//! It lives with the plan because a plan names metrics (thresholds, SLOs) before anything
//! runs; the stages that read runs interpret `Source` (results/figures.rs for one run, stats/ for
//! a cell of runs).

use anyhow::{bail, Result};
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

const fn latency(
    key: &'static str,
    label: &'static str,
    stat: Stat,
    in_terminal: bool,
    words: Option<&'static str>,
) -> Metric {
    Metric {
        key,
        label,
        decimals: 1,
        higher_is_better: false,
        at_start: false,
        in_terminal,
        of_ok_answers: true,
        limit: match words {
            Some(words) => Some(Limit {
                unit: Unit::Millis,
                op: Op::Le,
                words,
            }),
            None => None,
        },
        source: Source::Latency(stat),
    }
}

/// A figure of each run where less is better.
const fn figure(
    key: &'static str,
    label: &'static str,
    decimals: usize,
    figure: Figure,
    in_terminal: bool,
    limit: Option<Limit>,
) -> Metric {
    Metric {
        key,
        label,
        decimals,
        higher_is_better: false,
        at_start: false,
        in_terminal,
        of_ok_answers: false,
        limit,
        source: Source::Run(figure),
    }
}

const fn at_most(unit: Unit, words: &'static str) -> Option<Limit> {
    Some(Limit {
        unit,
        op: Op::Le,
        words,
    })
}

pub const METRICS: &[Metric] = &[
    Metric {
        key: "throughput",
        label: "throughput (req/s)",
        decimals: 0,
        higher_is_better: true,
        at_start: false,
        in_terminal: true,
        of_ok_answers: false,
        limit: Some(Limit {
            unit: Unit::Number,
            op: Op::Ge,
            words: "req/s",
        }),
        source: Source::Throughput,
    },
    Metric {
        key: "errors",
        label: "errors (%)",
        decimals: 2,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        of_ok_answers: false,
        limit: at_most(Unit::Percent, "% of requests failed"),
        source: Source::Errors,
    },
    latency("min", "latency min (ms)", Stat::Quantile(0.0), false, None),
    latency(
        "p50",
        "latency p50 (ms)",
        Stat::Quantile(0.50),
        true,
        Some("latency p50"),
    ),
    latency(
        "p75",
        "latency p75 (ms)",
        Stat::Quantile(0.75),
        false,
        Some("latency p75"),
    ),
    latency(
        "p90",
        "latency p90 (ms)",
        Stat::Quantile(0.90),
        true,
        Some("latency p90"),
    ),
    latency(
        "p95",
        "latency p95 (ms)",
        Stat::Quantile(0.95),
        false,
        Some("latency p95"),
    ),
    latency(
        "p99",
        "latency p99 (ms)",
        Stat::Quantile(0.99),
        true,
        Some("latency p99 of answered requests"),
    ),
    Metric {
        key: "p99_all",
        label: "p99 all requests (ms)",
        decimals: 1,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        of_ok_answers: false,
        limit: at_most(
            Unit::Millis,
            "latency p99 of every request due, failed ones included",
        ),
        source: Source::LatencyAll,
    },
    latency(
        "p999",
        "latency p99.9 (ms)",
        Stat::Quantile(0.999),
        true,
        Some("latency p99.9"),
    ),
    latency(
        "max",
        "latency max (ms)",
        Stat::Quantile(1.0),
        true,
        Some("latency max"),
    ),
    latency(
        "mean",
        "latency mean (ms)",
        Stat::Mean,
        false,
        Some("latency mean"),
    ),
    latency("stdev", "latency stdev (ms)", Stat::Stdev, false, None),
    figure(
        "threads",
        "peak threads",
        0,
        Figure::PeakThreads,
        true,
        at_most(Unit::Number, "peak threads"),
    ),
    figure(
        "rss",
        "peak RSS (MB)",
        0,
        Figure::PeakRssMb,
        true,
        at_most(Unit::Number, "peak RSS in MB"),
    ),
    Metric {
        of_ok_answers: true,
        ..figure(
            "cpu",
            "CPU (ms per 1k req)",
            1,
            Figure::CpuMsPer1k,
            true,
            at_most(Unit::Number, "CPU ms per 1,000 requests"),
        )
    },
    figure(
        "sockets",
        "peak sockets",
        0,
        Figure::PeakSockets,
        true,
        at_most(Unit::Number, "peak sockets"),
    ),
    figure(
        "downstream_conns",
        "peak downstream conns",
        0,
        Figure::PeakDownstreamConns,
        true,
        None,
    ),
    figure(
        "downstream_served",
        "downstream served / req",
        2,
        Figure::DownstreamServedPerReq,
        true,
        None,
    ),
    Metric {
        higher_is_better: true,
        ..figure(
            "downstream_cancelled",
            "downstream cancelled / req",
            2,
            Figure::DownstreamCancelledPerReq,
            true,
            None,
        )
    },
    figure(
        "ctx_per_req",
        "ctx switches / req",
        2,
        Figure::CtxSwitchesPerReq,
        true,
        None,
    ),
    figure(
        "gc_pause_total",
        "GC pause total (ms)",
        1,
        Figure::GcPauseTotalMs,
        false,
        at_most(
            Unit::Millis,
            "time paused for garbage collection over the run",
        ),
    ),
    figure(
        "gc_pause_max",
        "max GC pause (ms)",
        1,
        Figure::GcPauseMaxMs,
        false,
        at_most(Unit::Millis, "the longest garbage-collection pause"),
    ),
    figure(
        "steady_s",
        "time to steady state (s)",
        0,
        Figure::SteadyAfterS,
        true,
        None,
    ),
    Metric {
        at_start: true,
        ..figure(
            "first_200_s",
            "start to first 200 (s)",
            2,
            Figure::First200S,
            false,
            None,
        )
    },
    figure(
        "throttled",
        "throttled (% of periods)",
        1,
        Figure::ThrottledPct,
        true,
        None,
    ),
    figure("oom_kills", "OOM kills", 0, Figure::OomKills, true, None),
    figure(
        "recovery_s",
        "back after the fault (s)",
        0,
        Figure::RecoveryS,
        false,
        None,
    ),
];

impl Metric {
    /// The metric named `key` (e.g. "throughput"); None for a key the registry does not have.
    pub fn by_key(key: &str) -> Option<&'static Metric> {
        METRICS.iter().find(|m| m.key == key)
    }

    /// The metric named `key`, which the caller knows is one of METRICS (a key written in
    /// the code, or one a parsed threshold holds): any other is a bug, and panics.
    pub fn named(key: &str) -> &'static Metric {
        Metric::by_key(key).unwrap_or_else(|| panic!("{key} is not a metric of METRICS"))
    }

    /// Its place in METRICS, where a cell keeps its estimate.
    pub fn index(&self) -> usize {
        METRICS
            .iter()
            .position(|m| m.key == self.key)
            .expect("a metric of METRICS")
    }

    /// The metric a limit names, with how its limit is written; `at` says where the name was
    /// written. The error lists the metrics a limit may name.
    pub fn limited(at: &str, key: &str) -> Result<(&'static Metric, Limit)> {
        match Metric::by_key(key).and_then(|m| Some((m, m.limit?))) {
            Some(found) => Ok(found),
            None => {
                let keys: Vec<_> = METRICS
                    .iter()
                    .filter(|m| m.limit.is_some())
                    .map(|m| m.key)
                    .collect();
                bail!(
                    "{at}: unknown metric {key:?}; use one of {}",
                    keys.join(", ")
                )
            }
        }
    }

    /// A latency, judged by an SLO over every request due.
    pub fn is_latency(&self) -> bool {
        matches!(self.source, Source::Latency(_) | Source::LatencyAll)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_each_limit_keeps_its_direction() {
        for (i, m) in METRICS.iter().enumerate() {
            assert_eq!(m.index(), i, "{} is declared twice", m.key);
            if let Some(l) = m.limit {
                let upward = matches!(l.op, Op::Ge | Op::Gt);
                assert_eq!(upward, m.higher_is_better, "{}", m.key);
            }
        }
    }

    #[test]
    fn an_unknown_or_unlimited_metric_is_refused_with_the_names_that_are_allowed() {
        let e = Metric::limited("thresholds.p98", "p98")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("thresholds.p98: unknown metric \"p98\""),
            "{e}"
        );
        assert!(e.contains("p99_all") && e.contains("gc_pause_max"), "{e}");
        // stdev is reported, but no limit may name it.
        let e = Metric::limited("x", "stdev").unwrap_err().to_string();
        assert!(
            !e.contains("use one of stdev") && !e.contains(" stdev,"),
            "{e}"
        );
        let (m, l) = Metric::limited("x", "throughput").unwrap();
        assert_eq!((m.key, l.op, l.unit), ("throughput", Op::Ge, Unit::Number));
    }
}
