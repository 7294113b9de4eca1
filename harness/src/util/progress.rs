//! Progress bars for runs: elapsed against planned time, live throughput, load level, errors.
//! Where stderr is not a terminal (a log file, CI) the bar hides itself and the same line is
//! printed every ten seconds instead, so that a long warm-up in a log still shows it is alive.

use indicatif::{ProgressBar, ProgressStyle};
use std::cell::Cell;
use std::time::Duration;

pub struct Progress {
    bar: ProgressBar,
    prefix: String,
    /// Planned time; a window that opens early or is lengthened moves it (`set_total`).
    total: Cell<Duration>,
    last: Cell<(u64, f64)>,
    rate: Cell<f64>,
    /// When the last plain line was printed (seconds since the start).
    plain_at: Cell<f64>,
}

/// Seconds between plain lines where the bar is hidden.
const PLAIN_EVERY_S: f64 = 10.0;

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
            prefix: prefix.to_string(),
            total: Cell::new(total),
            last: Cell::new((0, 0.0)),
            rate: Cell::new(0.0),
            plain_at: Cell::new(0.0),
        }
    }

    /// The load now ends at `total` from its start: a warm-up that settled early, or a window
    /// lengthened to what its noise needs (`window = "auto"`), once its length is known.
    pub fn set_total(&self, total: Duration) {
        if total != self.total.get() {
            self.total.set(total);
            self.bar.set_length(total.as_millis().max(1) as u64);
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
        let total = self.total.get();
        self.bar.set_position(elapsed.min(total).as_millis() as u64);
        let extra = if elapsed > total {
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
        let message = format!(
            "{:>5.1}s/{:.0}s  {:>8.0} req/s{p99}  load {:>6.0}  {} ok  {} err{threads}{extra}",
            t.min(total.as_secs_f64()),
            total.as_secs_f64(),
            self.rate.get(),
            target,
            ok,
            errors
        );
        if self.bar.is_hidden() {
            if let Some(line) = self.plain_line(t, &message) {
                eprintln!("{line}");
            }
        }
        self.bar.set_message(message);
    }

    /// The line to print in place of the hidden bar at `t` s, once every PLAIN_EVERY_S.
    fn plain_line(&self, t: f64, message: &str) -> Option<String> {
        if t - self.plain_at.get() < PLAIN_EVERY_S {
            return None;
        }
        self.plain_at.set(t);
        Some(format!("{} {}", self.prefix, message.trim_start()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_terminal_the_line_is_printed_every_ten_seconds() {
        let p = Progress::new("[go] warm-up", Duration::from_secs(60));
        let printed: Vec<f64> = (0..=250)
            .map(|i| f64::from(i) * 0.25)
            .filter(|t| p.plain_line(*t, "  1.0s/60s").is_some())
            .collect();
        assert_eq!(printed, [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]);
        let p = Progress::new("[go] warm-up", Duration::from_secs(60));
        assert_eq!(
            p.plain_line(12.0, "  12.0s/60s  100 req/s").as_deref(),
            Some("[go] warm-up 12.0s/60s  100 req/s")
        );
    }
}
