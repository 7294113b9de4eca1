//! The metrics of a cell (declared once in plan/metric_list.rs): whether a cell has a figure for
//! one, and how one cell differs from another on each.

use super::relative_change;
use super::repeats::Cell;
use super::significance::mann_whitney;
pub use crate::plan::metric_list::METRICS;
pub use crate::plan::metrics::Metric;
use serde::Serialize;

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
        let (ea, eb) = (a.get(m), b.get(m));
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

/// Whether `c` has a figure for `m`: not one of ok answers where every answer was an error
/// (a fan-out whose one call fails answers only 502s), whose 0 would read as fast or free.
pub fn measured(m: &Metric, c: &Cell) -> bool {
    c.ok > 0 || !m.of_ok_answers
}

/// Whether any of `cells` has a value for `m` (not, e.g., for older results).
pub fn shown<'a>(m: &Metric, mut cells: impl Iterator<Item = &'a Cell>) -> bool {
    cells.any(|c| c.get(m).value.is_finite())
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
            assert!(!measured(metric(key), &failed), "{key}");
        }
        for key in [
            "p99_all",
            "errors",
            "throughput",
            "threads",
            "downstream_cancelled",
        ] {
            assert!(measured(metric(key), &failed), "{key}");
        }
        let answered = Cell { ok: 1, ..failed };
        assert!(METRICS.iter().all(|m| measured(m, &answered)));
    }
}
