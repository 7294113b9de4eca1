//! What a measured run prints on the terminal once it ends: its figures, its collections or
//! event-loop delay, its writes, and its warnings.

use crate::results::record::Run;

/// The run's line on the terminal, with its writes and warnings.
pub(super) fn print_run(r: &Run) {
    let (s, res) = (&r.summary, &r.resources);
    eprintln!(
        "  {:.0} req/s, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms, {} errors, peak {} threads, {:.0} MB RSS",
        s.rps, s.latency.p50, s.latency.p99, s.latency.max, s.errors.total(), res.peak_threads, res.peak_rss_mb
    );
    if let Some(g) = &r.gc {
        eprintln!(
            "  GC ({}): {} collections, {:.1} ms paused in all, longest {:.1} ms",
            g.source, g.collections, g.pause_total_ms, g.pause_max_ms
        );
    }
    if let Some(e) = &r.event_loop {
        eprintln!(
            "  event-loop delay: worst second's p99 {:.1} ms, longest {:.1} ms",
            e.worst_p99_ms, e.max_ms
        );
    }
    if let Some(w) = r.details.writes() {
        eprintln!(
            "  writes: {} creates, {} updates, {} deletes acknowledged; {} lost{}",
            w.creates_acknowledged,
            w.updates_acknowledged,
            w.deletes_acknowledged,
            w.lost,
            if w.creates_unacknowledged > 0 {
                format!(
                    " ({} rows committed without an answer)",
                    w.creates_unacknowledged
                )
            } else {
                String::new()
            }
        );
    }
    for w in &r.driver.warnings {
        eprintln!("  warning: {w}");
    }
}
