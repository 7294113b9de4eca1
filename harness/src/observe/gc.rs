//! Garbage collection during a run, read from what each runtime writes to the contender's log:
//! the JVM's unified logging (plan::JVM_GC_LOG, every JVM contender gets it), Go's
//! `GODEBUG=gctrace=1` and Node's `--trace-gc`. Each line carries the time since the process
//! started, so the collections of a run are those between its start and end.

use crate::results::gc::{GcReport, GcSecond};
use std::time::Duration;

/// The environment every contender gets; only Go reads it.
pub const GO_GC_TRACE: (&str, &str) = ("GODEBUG", "gctrace=1");

/// One collection: when (seconds since the process started), how long the application was
/// paused, and the heap before and after (MB) where the runtime says.
#[derive(Debug, Clone, PartialEq)]
pub struct GcEvent {
    pub at_s: f64,
    pub pause_ms: f64,
    pub before_mb: Option<f64>,
    pub after_mb: Option<f64>,
}

/// "24M" / "512K" / "1G" in MB.
fn size_mb(s: &str) -> Option<f64> {
    let (n, unit) = s.split_at(s.len().checked_sub(1)?);
    let v: f64 = n.parse().ok()?;
    Some(match unit {
        "K" => v / 1024.0,
        "M" => v,
        "G" => v * 1024.0,
        _ => return None,
    })
}

/// `[12.345s] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 24M->5M(512M) 3.456ms`; the
/// concurrent phases ("Concurrent Mark Cycle") are not pauses and are skipped.
pub fn parse_jvm(line: &str) -> Option<GcEvent> {
    let rest = line.strip_prefix('[')?;
    let (uptime, rest) = rest.split_once("s] GC(")?;
    if !rest.contains(" Pause ") {
        return None;
    }
    let pause_ms: f64 = rest.rsplit(' ').next()?.strip_suffix("ms")?.parse().ok()?;
    let sizes = rest.split(' ').find(|w| w.contains("->"));
    let (before, after) = sizes
        .and_then(|s| s.split_once("->"))
        .map_or((None, None), |(b, a)| {
            (size_mb(b), a.split('(').next().and_then(size_mb))
        });
    Some(GcEvent {
        at_s: uptime.parse().ok()?,
        pause_ms,
        before_mb: before,
        after_mb: after,
    })
}

/// `gc 12 @3.456s 1%: 0.012+1.2+0.003 ms clock, ..., 4->4->2 MB, ...`: the pauses are the
/// first and third clock phases (sweep termination, mark termination); heap after is the live
/// heap (the third figure).
pub fn parse_go(line: &str) -> Option<GcEvent> {
    let rest = line.strip_prefix("gc ")?;
    let at: f64 = rest.split_once(" @")?.1.split_once("s ")?.0.parse().ok()?;
    let clock = rest.split_once(": ")?.1.split_once(" ms clock")?.0;
    let phases: Vec<f64> = clock
        .split('+')
        .map(|p| p.parse().ok())
        .collect::<Option<Vec<f64>>>()?;
    let pause_ms = phases.first()? + phases.get(2)?;
    let heap = rest
        .split(", ")
        .find(|p| p.ends_with(" MB") && p.contains("->"))?
        .trim_end_matches(" MB");
    let mb: Vec<f64> = heap.split("->").filter_map(|v| v.parse().ok()).collect();
    Some(GcEvent {
        at_s: at,
        pause_ms,
        before_mb: mb.first().copied(),
        after_mb: mb.last().copied(),
    })
}

/// `[123:0x55d...]     4567 ms: Scavenge (interleaved) 3.9 (4.2) -> 3.5 (5.2) MB, pooled: 0 MB,
/// 0.83 / 0.00 ms ...`: time since the isolate started, heap before and after, and the pause
/// (the first figure of "X / Y ms").
pub fn parse_node(line: &str) -> Option<GcEvent> {
    let rest = line
        .trim_start()
        .strip_prefix('[')?
        .split_once("] ")?
        .1
        .trim_start();
    let (at, rest) = rest.split_once(" ms: ")?;
    if !(rest.starts_with("Scavenge")
        || rest.starts_with("Mark-Compact")
        || rest.starts_with("Mark-Sweep")
        || rest.starts_with("Minor"))
    {
        return None;
    }
    let (sizes, tail) = rest.split_once(" MB, ")?;
    let mut nums = sizes
        .split_whitespace()
        .filter_map(|w| w.parse::<f64>().ok());
    let before = nums.next();
    let after = sizes
        .split_once("-> ")
        .and_then(|(_, a)| a.split_whitespace().next())
        .and_then(|v| v.parse().ok());
    let pause_part = tail.split(" / ").next()?;
    let pause_ms: f64 = pause_part.rsplit(' ').next()?.parse().ok()?;
    Some(GcEvent {
        at_s: at.trim().parse::<f64>().ok()? / 1000.0,
        pause_ms,
        before_mb: before,
        after_mb: after,
    })
}

/// The collections of the run that began `start` after the process and lasted `length`, from
/// the contender's log text; None when it shows no collector's lines at all.
pub fn from_text(text: &str, start: Duration, length: Duration) -> Option<GcReport> {
    type Parser = fn(&str) -> Option<GcEvent>;
    let parsers: [(&str, Parser); 3] = [
        ("JVM -Xlog:gc", parse_jvm),
        ("Go gctrace", parse_go),
        ("Node --trace-gc", parse_node),
    ];
    let (source, events) = parsers
        .iter()
        .map(|(name, p)| (*name, text.lines().filter_map(p).collect::<Vec<_>>()))
        .max_by_key(|(_, e)| e.len())
        .filter(|(_, e)| !e.is_empty())?;
    Some(report(
        source,
        &events,
        start.as_secs_f64(),
        length.as_secs_f64(),
    ))
}

/// Figures over the events inside [start, start + length) seconds since the process started.
pub fn report(source: &str, all: &[GcEvent], start: f64, length: f64) -> GcReport {
    let inside: Vec<(usize, &GcEvent)> = all
        .iter()
        .enumerate()
        .filter(|(_, e)| e.at_s >= start && e.at_s < start + length)
        .collect();
    let seconds = length.ceil().max(0.0) as u32;
    let mut per_second: Vec<GcSecond> = (0..seconds)
        .map(|t| GcSecond {
            t,
            ..GcSecond::default()
        })
        .collect();
    let mut allocated = 0.0;
    let mut allocation_known = source != "Node --trace-gc";
    for (i, e) in &inside {
        let s = &mut per_second[((e.at_s - start) as u32).min(seconds.saturating_sub(1)) as usize];
        s.collections += 1;
        s.pause_ms += e.pause_ms;
        s.max_pause_ms = s.max_pause_ms.max(e.pause_ms);
        if e.after_mb.is_some() {
            s.heap_after_mb = e.after_mb;
        }
        match (e.before_mb, i.checked_sub(1).and_then(|p| all[p].after_mb)) {
            (Some(b), Some(a)) => allocated += (b - a).max(0.0),
            _ => allocation_known = false,
        }
    }
    GcReport {
        source: source.to_string(),
        collections: inside.len() as u64,
        pause_total_ms: inside.iter().fold(0.0, |sum, (_, e)| sum + e.pause_ms),
        pause_max_ms: inside.iter().map(|(_, e)| e.pause_ms).fold(0.0, f64::max),
        heap_after_max_mb: inside
            .iter()
            .filter_map(|(_, e)| e.after_mb)
            .reduce(f64::max),
        allocation_mb_per_s: (allocation_known && !inside.is_empty() && length > 0.0)
            .then(|| allocated / length),
        per_second,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jvm_pauses_are_read_and_concurrent_phases_are_not_pauses() {
        let e = parse_jvm(
            "[12.345s] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 24M->5M(512M) 3.456ms",
        )
        .unwrap();
        assert_eq!(
            e,
            GcEvent {
                at_s: 12.345,
                pause_ms: 3.456,
                before_mb: Some(24.0),
                after_mb: Some(5.0)
            }
        );
        assert_eq!(
            parse_jvm("[13.000s] GC(4) Pause Remark 30M->30M(512M) 1.200ms")
                .unwrap()
                .pause_ms,
            1.2
        );
        assert_eq!(
            parse_jvm("[13.500s] GC(4) Concurrent Mark Cycle 12.345ms"),
            None
        );
        assert_eq!(parse_jvm("[0.005s] Using G1"), None);
        assert_eq!(
            parse_jvm("2026-11-23 INFO Started Application in 2.1 seconds"),
            None
        );
    }

    #[test]
    fn go_pauses_are_the_two_stop_the_world_phases() {
        let e = parse_go("gc 12 @3.456s 1%: 0.012+1.2+0.003 ms clock, 0.012+0.10/0.20/0.30+0.003 ms cpu, 4->5->2 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 1 P").unwrap();
        assert_eq!(e.at_s, 3.456);
        assert!((e.pause_ms - 0.015).abs() < 1e-9, "{}", e.pause_ms);
        assert_eq!((e.before_mb, e.after_mb), (Some(4.0), Some(2.0)));
    }

    #[test]
    fn node_pauses_are_read_from_trace_gc() {
        let e = parse_node("[4242:0x5f1e0b0]     4567 ms: Scavenge (interleaved) 3.9 (4.2) -> 3.5 (5.2) MB, pooled: 0 MB, 0.83 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure;").unwrap();
        assert_eq!(
            e,
            GcEvent {
                at_s: 4.567,
                pause_ms: 0.83,
                before_mb: Some(3.9),
                after_mb: Some(3.5)
            }
        );
        let m = parse_node("[4242:0x5f1e0b0]    10000 ms: Mark-Compact 20.1 (25.3) -> 15.2 (26.0) MB, 5.10 / 0.00 ms  (average mu = 0.9) finalize incremental marking via task GC in old space requested").unwrap();
        assert_eq!((m.pause_ms, m.after_mb), (5.1, Some(15.2)));
        assert_eq!(parse_node("server listening on 8080"), None);
    }

    #[test]
    fn only_the_runs_collections_count_each_in_its_second() {
        let ev = |at_s: f64, pause_ms: f64, before: f64, after: f64| GcEvent {
            at_s,
            pause_ms,
            before_mb: Some(before),
            after_mb: Some(after),
        };
        // Process started 10 s before the run; a 3 s run.
        let all = [
            ev(5.0, 50.0, 100.0, 10.0),
            ev(10.2, 2.0, 60.0, 12.0),
            ev(10.8, 4.0, 70.0, 14.0),
            ev(12.5, 1.0, 40.0, 15.0),
            ev(13.5, 9.0, 50.0, 16.0),
        ];
        let r = report("JVM -Xlog:gc", &all, 10.0, 3.0);
        assert_eq!(
            r.collections, 3,
            "the start-up collection and the one after the run are left out"
        );
        assert_eq!(
            (r.pause_total_ms, r.pause_max_ms, r.heap_after_max_mb),
            (7.0, 4.0, Some(15.0))
        );
        assert_eq!(
            r.per_second
                .iter()
                .map(|s| s.collections)
                .collect::<Vec<_>>(),
            vec![2, 0, 1]
        );
        assert_eq!(r.per_second[0].max_pause_ms, 4.0);
        // A run without collections has a total of 0, not -0 (an empty float sum's identity).
        assert!(report("JVM -Xlog:gc", &all, 20.0, 3.0)
            .pause_total_ms
            .is_sign_positive());
        // Allocated: (60 - 10) + (70 - 12) + (40 - 14) = 134 MB over 3 s.
        assert!((r.allocation_mb_per_s.unwrap() - 134.0 / 3.0).abs() < 1e-9);
    }
}
