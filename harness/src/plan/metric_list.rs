//! The list of metrics (METRICS), in the order tables print them: each entry is one metric's
//! key, label, decimals, direction, where a run records it and whether a limit may name it. The
//! kinds an entry is made of (Figure, Source, Limit, ...) are plan/metrics.rs; the lookups by
//! key are here, beside the list they search.

use super::metrics::{Figure, Limit, Metric, Op, Source, Stat, Unit};
use anyhow::{bail, Result};

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
        "gc_collections",
        "GC collections",
        0,
        Figure::GcCollections,
        false,
        None,
    ),
    figure(
        "heap_after_max",
        "heap after GC, highest (MB)",
        0,
        Figure::HeapAfterMaxMb,
        false,
        None,
    ),
    figure(
        "allocation",
        "allocation (MB/s)",
        1,
        Figure::AllocationMbPerS,
        false,
        None,
    ),
    figure(
        "profile_samples",
        "profile samples",
        0,
        Figure::ProfileSamples,
        false,
        None,
    ),
    figure(
        "virtual_threads_started",
        "virtual threads started",
        0,
        Figure::VirtualThreadsStarted,
        false,
        None,
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
