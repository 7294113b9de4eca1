//! Event-loop delay of the Node contenders during a run: every Node process measures it with
//! `perf_hooks.monitorEventLoopDelay` (sampling every 10 ms) and writes one line a second to
//! its log, `[12.345s] event-loop delay p50=0.52ms p99=4.10ms max=12.30ms`, stamped with the
//! process's uptime; the run keeps the lines inside its measured phase. With several processes
//! (node-cluster) each second keeps the worst process's figures.

use crate::results::event_loop::{EventLoopReport, LoopSecond};
use std::time::Duration;

/// (uptime s, p50, p99, max) of one log line.
pub fn parse(line: &str) -> Option<(f64, f64, f64, f64)> {
    let rest = line.strip_prefix('[')?;
    let (uptime, rest) = rest.split_once("s] event-loop delay ")?;
    let mut figures = rest.split_whitespace().map(|kv| {
        kv.split_once('=')
            .and_then(|(_, v)| v.strip_suffix("ms"))
            .and_then(|v| v.parse::<f64>().ok())
    });
    Some((
        uptime.parse().ok()?,
        figures.next()??,
        figures.next()??,
        figures.next()??,
    ))
}

/// The run's event-loop delay, from the contender's log text: the lines whose second ends inside [start, start + length)
/// seconds since the process started; None when the log has none (not a Node contender).
pub fn from_text(text: &str, start: Duration, length: Duration) -> Option<EventLoopReport> {
    report(
        text.lines().filter_map(parse),
        start.as_secs_f64(),
        length.as_secs_f64(),
    )
}

pub fn report(
    lines: impl Iterator<Item = (f64, f64, f64, f64)>,
    start: f64,
    length: f64,
) -> Option<EventLoopReport> {
    let seconds = length.ceil().max(1.0) as u32;
    let mut per_second: Vec<Option<LoopSecond>> = vec![None; seconds as usize];
    for (at, p50, p99, max) in lines {
        // A line sums up the second before it.
        let end = at - start;
        if end <= 0.5 || end > length + 0.5 {
            continue;
        }
        let t = ((end - 0.5).floor() as u32).min(seconds - 1);
        let s = per_second[t as usize].get_or_insert(LoopSecond {
            t,
            ..LoopSecond::default()
        });
        s.p50_ms = s.p50_ms.max(p50);
        s.p99_ms = s.p99_ms.max(p99);
        s.max_ms = s.max_ms.max(max);
    }
    let per_second: Vec<LoopSecond> = per_second.into_iter().flatten().collect();
    if per_second.is_empty() {
        return None;
    }
    Some(EventLoopReport {
        source: "Node perf_hooks.monitorEventLoopDelay".into(),
        worst_p99_ms: per_second.iter().map(|s| s.p99_ms).fold(0.0, f64::max),
        max_ms: per_second.iter().map(|s| s.max_ms).fold(0.0, f64::max),
        per_second,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_inside_the_run_make_its_seconds_and_the_worst_process_counts() {
        assert_eq!(
            parse("[12.345s] event-loop delay p50=0.52ms p99=4.10ms max=12.30ms"),
            Some((12.345, 0.52, 4.1, 12.3))
        );
        assert_eq!(parse("Scavenge 5.7 (6.5) -> 5.2 (7.5) MB"), None);
        // Run from 10 s to 13 s of the process's life; two processes report at 12.0.
        let lines = vec![
            (9.9, 1.0, 50.0, 60.0),
            (11.0, 0.5, 2.0, 3.0),
            (12.0, 0.5, 4.0, 9.0),
            (12.02, 0.7, 6.0, 8.0),
            (13.0, 0.5, 1.0, 2.0),
            (14.5, 9.0, 90.0, 99.0),
        ];
        let r = report(lines.into_iter(), 10.0, 3.0).unwrap();
        assert_eq!(
            r.per_second.iter().map(|s| s.t).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        assert_eq!(r.per_second[1].p99_ms, 6.0);
        assert_eq!(r.per_second[1].max_ms, 9.0);
        assert_eq!((r.worst_p99_ms, r.max_ms), (6.0, 9.0));
        assert!(report(std::iter::empty(), 0.0, 3.0).is_none());
    }
}
