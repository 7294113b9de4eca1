//! Progress bars for runs: elapsed against planned time, live throughput, load level, errors.
//! Hidden automatically when stderr is not a terminal.

use indicatif::{ProgressBar, ProgressStyle};
use std::cell::Cell;
use std::time::Duration;

pub struct Progress {
    bar: ProgressBar,
    total: Duration,
    last: Cell<(u64, f64)>,
    rate: Cell<f64>,
}

impl Progress {
    pub fn new(prefix: &str, total: Duration) -> Progress {
        let bar = ProgressBar::new(total.as_millis().max(1) as u64);
        bar.set_style(
            ProgressStyle::with_template("{prefix:<28} [{bar:24}] {msg}")
                .expect("static template")
                .progress_chars("=> "),
        );
        bar.set_prefix(prefix.to_string());
        Progress {
            bar,
            total,
            last: Cell::new((0, 0.0)),
            rate: Cell::new(0.0),
        }
    }

    /// `ok` and `errors` so far, the load level now, the time since the start, and the live
    /// line's last-second p99 and contender threads where known.
    pub fn update(
        &self,
        ok: u64,
        errors: u64,
        target: f64,
        elapsed: Duration,
        p99: Option<Duration>,
        threads: Option<u64>,
    ) {
        let t = elapsed.as_secs_f64();
        let (last_ok, last_t) = self.last.get();
        if t - last_t >= 1.0 {
            self.rate.set((ok - last_ok) as f64 / (t - last_t));
            self.last.set((ok, t));
        }
        self.bar
            .set_position(elapsed.min(self.total).as_millis() as u64);
        let extra = if elapsed > self.total {
            " (draining in-flight requests)"
        } else {
            ""
        };
        let p99 = p99
            .map(|d| format!("  p99 {}", crate::util::units::format_latency(d)))
            .unwrap_or_default();
        let threads = threads
            .map(|n| format!("  {n} threads"))
            .unwrap_or_default();
        self.bar.set_message(format!(
            "{:>5.1}s/{:.0}s  {:>8.0} req/s{p99}  load {:>6.0}  {} ok  {} err{threads}{extra}",
            t.min(self.total.as_secs_f64()),
            self.total.as_secs_f64(),
            self.rate.get(),
            target,
            ok,
            errors
        ));
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// A bar counting `total` items of long preparatory work (e.g. generating files).
pub fn counter(prefix: &str, total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{prefix} [{bar:24}] {pos}/{len} {eta}")
            .expect("static template")
            .progress_chars("=> "),
    );
    bar.set_prefix(prefix.to_string());
    bar
}
