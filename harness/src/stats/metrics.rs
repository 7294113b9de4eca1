//! The metrics of a cell as tables and comparisons show them (label, unit, which way is
//! better), and how one cell differs from another on each.

use super::repeats::Cell;
use super::significance::mann_whitney;
use super::{relative_change, Estimate};
use serde::Serialize;

/// A metric of a cell, for tables and comparisons.
pub struct Metric {
    /// The name thresholds and `--fail-if` rules use (plan::thresholds::METRIC_KEYS).
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
    pub get: fn(&Cell) -> &Estimate,
}

pub const METRICS: &[Metric] = &[
    Metric {
        key: "throughput",
        label: "throughput (req/s)",
        decimals: 0,
        higher_is_better: true,
        at_start: false,
        in_terminal: true,
        get: |c| &c.rps,
    },
    Metric {
        key: "errors",
        label: "errors (%)",
        decimals: 2,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        get: |c| &c.error_pct,
    },
    Metric {
        key: "min",
        label: "latency min (ms)",
        decimals: 1,
        higher_is_better: false,
        at_start: false,
        in_terminal: false,
        get: |c| &c.min,
    },
    Metric {
        key: "p50",
        label: "latency p50 (ms)",
        decimals: 1,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        get: |c| &c.p50,
    },
    Metric {
        key: "p75",
        label: "latency p75 (ms)",
        decimals: 1,
        higher_is_better: false,
        at_start: false,
        in_terminal: false,
        get: |c| &c.p75,
    },
    Metric {
        key: "p90",
        label: "latency p90 (ms)",
        decimals: 1,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        get: |c| &c.p90,
    },
    Metric {
        key: "p95",
        label: "latency p95 (ms)",
        decimals: 1,
        higher_is_better: false,
        at_start: false,
        in_terminal: false,
        get: |c| &c.p95,
    },
    Metric {
        key: "p99",
        label: "latency p99 (ms)",
        decimals: 1,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        get: |c| &c.p99,
    },
    Metric {
        key: "p99_all",
        label: "p99 all requests (ms)",
        decimals: 1,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        get: |c| &c.p99_all,
    },
    Metric {
        key: "p999",
        label: "latency p99.9 (ms)",
        decimals: 1,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        get: |c| &c.p999,
    },
    Metric {
        key: "max",
        label: "latency max (ms)",
        decimals: 1,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        get: |c| &c.max,
    },
    Metric {
        key: "mean",
        label: "latency mean (ms)",
        decimals: 1,
        higher_is_better: false,
        at_start: false,
        in_terminal: false,
        get: |c| &c.mean,
    },
    Metric {
        key: "stdev",
        label: "latency stdev (ms)",
        decimals: 1,
        higher_is_better: false,
        at_start: false,
        in_terminal: false,
        get: |c| &c.stdev,
    },
    Metric {
        key: "threads",
        label: "peak threads",
        decimals: 0,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        get: |c| &c.peak_threads,
    },
    Metric {
        key: "rss",
        label: "peak RSS (MB)",
        decimals: 0,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        get: |c| &c.peak_rss_mb,
    },
    Metric {
        key: "cpu",
        label: "CPU (ms per 1k req)",
        decimals: 1,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        get: |c| &c.cpu_ms_per_1k,
    },
    Metric {
        key: "sockets",
        label: "peak sockets",
        decimals: 0,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        get: |c| &c.peak_sockets,
    },
    Metric {
        key: "downstream_conns",
        label: "peak downstream conns",
        decimals: 0,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        get: |c| &c.peak_downstream_conns,
    },
    Metric {
        key: "downstream_served",
        label: "downstream served / req",
        decimals: 2,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        get: |c| &c.downstream_served_per_req,
    },
    Metric {
        key: "downstream_cancelled",
        label: "downstream cancelled / req",
        decimals: 2,
        higher_is_better: true,
        at_start: false,
        in_terminal: true,
        get: |c| &c.downstream_cancelled_per_req,
    },
    Metric {
        key: "ctx_per_req",
        label: "ctx switches / req",
        decimals: 2,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        get: |c| &c.ctx_per_req,
    },
    Metric {
        key: "gc_pause_total",
        label: "GC pause total (ms)",
        decimals: 1,
        higher_is_better: false,
        at_start: false,
        in_terminal: false,
        get: |c| &c.gc_pause_total,
    },
    Metric {
        key: "gc_pause_max",
        label: "max GC pause (ms)",
        decimals: 1,
        higher_is_better: false,
        at_start: false,
        in_terminal: false,
        get: |c| &c.gc_pause_max,
    },
    Metric {
        key: "steady_s",
        label: "time to steady state (s)",
        decimals: 0,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        get: |c| &c.steady_s,
    },
    Metric {
        key: "first_200_s",
        label: "start to first 200 (s)",
        decimals: 2,
        higher_is_better: false,
        at_start: true,
        in_terminal: false,
        get: |c| &c.first_200_s,
    },
    Metric {
        key: "throttled",
        label: "throttled (% of periods)",
        decimals: 1,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        get: |c| &c.throttled_pct,
    },
    Metric {
        key: "oom_kills",
        label: "OOM kills",
        decimals: 0,
        higher_is_better: false,
        at_start: false,
        in_terminal: true,
        get: |c| &c.oom_kills,
    },
];

/// How `b` differs from baseline `a` on one metric.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Difference {
    /// Signed percentage of `b` against `a`; None when `a` is zero.
    pub change_pct: Option<f64>,
    /// Some(true): significant by the Mann-Whitney test over runs; Some(false): tested and not
    /// significant; None: not tested (fewer than MIN_RUNS runs at steady state on a side).
    pub significant: Option<bool>,
    pub better: Option<bool>,
}

impl Difference {
    pub fn of(m: &Metric, a: &Cell, b: &Cell) -> Difference {
        let (ea, eb) = ((m.get)(a), (m.get)(b));
        let change_pct = relative_change(ea.value, eb.value);
        // A run measured before its contender settled is shown, never tested: the test takes
        // the settled runs of each side, as the verdicts do.
        let significant = mann_whitney(&a.tested_values(ea), &b.tested_values(eb)).significant();
        let better = (ea.value != eb.value).then_some((eb.value > ea.value) == m.higher_is_better);
        Difference {
            change_pct,
            significant,
            better,
        }
    }

    /// "+12.3%", "-4.0%, not significant", "+1.0%, not tested".
    pub fn describe(&self) -> String {
        let Some(p) = self.change_pct else {
            return "-".into();
        };
        let base = format!("{p:+.1}%");
        match self.significant {
            Some(true) => base,
            Some(false) => format!("{base}, not significant"),
            None => format!("{base}, not tested"),
        }
    }
}

/// Metrics taken over the requests answered ok (their latency, the CPU per ok answer): a cell
/// where no request was answered ok has none of them.
const OF_OK_ANSWERS: &[&str] = &[
    "min", "p50", "p75", "p90", "p95", "p99", "p999", "max", "mean", "stdev", "cpu",
];

impl Metric {
    /// The metric named `key` in METRICS (e.g. "throughput"); None for a key it does not have.
    pub fn by_key(key: &str) -> Option<&'static Metric> {
        METRICS.iter().find(|m| m.key == key)
    }

    /// Whether `c` has a figure for this metric: not one of ok answers where every answer
    /// was an error (a fan-out whose one call fails answers only 502s), whose 0 would read as
    /// fast or free.
    pub fn measured(&self, c: &Cell) -> bool {
        c.ok > 0 || !OF_OK_ANSWERS.contains(&self.key)
    }

    /// Whether any of `cells` has a value for this metric (not, e.g., for older results).
    pub fn shown<'a>(&self, mut cells: impl Iterator<Item = &'a Cell>) -> bool {
        cells.any(|c| (self.get)(c).value.is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metric(key: &str) -> &'static Metric {
        Metric::by_key(key).unwrap()
    }

    #[test]
    fn figures_of_ok_answers_are_not_measured_where_every_answer_failed() {
        // Every answer a 502 (the right one where a fan-out's call fails): the latency and
        // CPU of ok answers would read 0, as if fast and free.
        let failed = Cell {
            ok: 0,
            ko: 1200,
            ..Cell::default()
        };
        for key in ["p50", "p99", "max", "mean", "cpu"] {
            assert!(!metric(key).measured(&failed), "{key}");
        }
        for key in [
            "p99_all",
            "errors",
            "throughput",
            "threads",
            "downstream_cancelled",
        ] {
            assert!(metric(key).measured(&failed), "{key}");
        }
        let answered = Cell { ok: 1, ..failed };
        assert!(METRICS.iter().all(|m| m.measured(&answered)));
    }
}
