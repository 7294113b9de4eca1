//! The runtime's side of a run, drawn beside latency over time: garbage-collection pauses per
//! second and the heap left after each collection (JVM, Go and Node contenders; others have no
//! such chart).

use super::chart::{Chart, Series};
use super::color;
use crate::results::record::{Results, Run};
use crate::results::warmup::{WarmupRecord, RULE_AT_END, RULE_ORDERED_AT_END};

/// The GC charts of one scenario, each contender from its representative run (none when no
/// run carries GC figures).
pub fn charts(reps: &[(usize, &str, &Run)], id: &dyn Fn(&str) -> String) -> Vec<Chart> {
    let with_gc: Vec<_> = reps
        .iter()
        .filter_map(|(i, n, r)| r.gc.as_ref().map(|g| (*i, *n, g)))
        .collect();
    if with_gc.is_empty() {
        return Vec::new();
    }
    let sources: Vec<&str> = with_gc
        .iter()
        .map(|(_, _, g)| g.source.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let pauses = Chart {
        id: id("gc"),
        title: format!(
            "Time paused for garbage collection, per second ({})",
            sources.join(", ")
        ),
        x_label: "seconds into the measured run".into(),
        y_label: "ms paused".into(),
        series: with_gc
            .iter()
            .map(|(i, n, g)| Series {
                name: n.to_string(),
                color: color(*i),
                dashed: false,
                points: g
                    .per_second
                    .iter()
                    .map(|s| (f64::from(s.t) + 0.5, s.pause_ms))
                    .collect(),
            })
            .collect(),
        ..Chart::default()
    };
    let heap = Chart {
        id: id("heap"),
        title: "Heap after each second's last collection".into(),
        x_label: "seconds into the measured run".into(),
        y_label: "MB".into(),
        series: with_gc
            .iter()
            .map(|(i, n, g)| Series {
                name: n.to_string(),
                color: color(*i),
                dashed: false,
                points: g
                    .per_second
                    .iter()
                    .filter_map(|s| s.heap_after_mb.map(|h| (f64::from(s.t) + 0.5, h)))
                    .collect(),
            })
            .collect(),
        markers: true,
        ..Chart::default()
    };
    [pauses, heap].into_iter().filter(Chart::has_data).collect()
}

/// "Event-loop delay (Node's perf_hooks, sampled every 10 ms; worst second's p99 / longest):
/// node 4.1 / 12.3 ms, node-cluster 2.0 / 8.0 ms", over every run of the scenario.
pub fn event_loop_note(results: &Results, scenario: &str) -> Option<String> {
    let mut parts = Vec::new();
    for c in &results.contenders {
        let all: Vec<_> = results
            .runs
            .iter()
            .filter(|r| r.scenario == scenario && r.contender == c.name)
            .filter_map(|r| r.event_loop.as_ref())
            .collect();
        if all.is_empty() {
            continue;
        }
        let p99 = all.iter().map(|e| e.worst_p99_ms).fold(0.0, f64::max);
        let max = all.iter().map(|e| e.max_ms).fold(0.0, f64::max);
        parts.push(format!("{} {p99:.1} / {max:.1} ms", c.name));
    }
    (!parts.is_empty()).then(|| format!("Event-loop delay (Node's perf_hooks, sampled every 10 ms; worst second's p99 / longest, over the runs): {}.", parts.join(", ")))
}

/// The warm-up curves of a scenario: answers per second from a fresh process to steady state,
/// every run of every contender (a line each, coloured by contender). None for results whose
/// warm-ups carry no curve (written before the trend rule).
pub fn warmup_chart(results: &Results, scenario: &str, id: String) -> Option<Chart> {
    let mut series = Vec::new();
    for (i, c) in results.contenders.iter().enumerate() {
        let runs = results
            .runs
            .iter()
            .filter(|r| r.scenario == scenario && r.contender == c.name);
        for (k, r) in runs.enumerate() {
            let Some(w) = r.warmup.as_ref().filter(|w| !w.curve.is_empty()) else {
                continue;
            };
            series.push(Series {
                name: if k == 0 {
                    c.name.clone()
                } else {
                    String::new()
                },
                color: color(i),
                dashed: !w.settled,
                points: w
                    .curve
                    .iter()
                    .enumerate()
                    .map(|(t, v)| (t as f64 + 1.5, *v))
                    .collect(),
            });
        }
    }
    (!series.is_empty()).then(|| Chart {
        id,
        title:
            "Time to steady state: throughput during the warm-up, every run (dashed: not settled)"
                .into(),
        x_label: "seconds after the warm-up began".into(),
        y_label: "req/s".into(),
        series,
        ..Chart::default()
    })
}

/// The runs behind a verdict: each run's throughput, per contender, in the order measured.
/// Only for results with verdicts (repeated runs, tested).
pub fn runs_chart(results: &Results, scenario: &str, id: String) -> Option<Chart> {
    if results.verdicts.is_empty() {
        return None;
    }
    let series: Vec<Series> = results
        .contenders
        .iter()
        .enumerate()
        .map(|(i, c)| Series {
            name: c.name.clone(),
            color: color(i),
            dashed: false,
            points: results
                .runs
                .iter()
                .filter(|r| r.scenario == scenario && r.contender == c.name)
                .map(|r| (f64::from(r.run), r.summary.rps))
                .collect(),
        })
        .filter(|s| s.points.len() >= 2)
        .collect();
    let last = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0 as u32))
        .max()
        .unwrap_or(1);
    (!series.is_empty()).then(|| Chart {
        id,
        title: "Throughput of every run (a fresh process each, runs interleaved)".into(),
        x_label: "run".into(),
        y_label: "req/s".into(),
        series,
        markers: true,
        x_ticks: Some((1..=last).map(|r| (f64::from(r), r.to_string())).collect()),
    })
}

/// "Warm-up (until throughput, mean latency and CPU per request settled within 10% for 5 s;
/// 5 s to 30 s): spring-mvc 14 s, vertx 6 s, node not settled in 30 s".
pub fn warmup_note(results: &Results, scenario: &str) -> Option<String> {
    let mut parts = Vec::new();
    let mut bounds = None;
    for c in &results.contenders {
        let w: Vec<&WarmupRecord> = results
            .runs
            .iter()
            .filter(|r| r.scenario == scenario && r.contender == c.name)
            .filter_map(|r| r.warmup.as_ref())
            .collect();
        let Some(first) = w.first() else { continue };
        bounds = Some((first.band_pct, first.min_s, first.max_s, first.rule.clone()));
        let (lo, hi) = w.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), x| {
            (lo.min(x.seconds), hi.max(x.seconds))
        });
        let secs = if hi - lo < 0.5 {
            format!("{lo:.0} s")
        } else {
            format!("{lo:.0}-{hi:.0} s")
        };
        let unsettled = w.iter().filter(|x| !x.settled).count();
        parts.push(match (unsettled, first.judged_at_end()) {
            (0, true) => format!("{} steady", c.name),
            (0, false) => format!("{} {secs}", c.name),
            (n, true) if n == w.len() => format!("{} not steady", c.name),
            (n, true) => format!("{} not steady in {n} of {} runs", c.name, w.len()),
            (n, false) if n == w.len() => {
                format!("{} not settled in {:.0} s", c.name, first.max_s)
            }
            (n, false) => format!("{} {secs} ({n} of {} runs not settled)", c.name, w.len()),
        });
    }
    let (band, min, max, rule) = bounds?;
    let judged = crate::results::warmup::PIPELINE_JUDGED_S;
    let step = crate::results::warmup::PIPELINE_STEP_S;
    // Both fixed warm-ups judged at their end share the frame; only the steadiness test differs.
    let at_end = |how: String| {
        format!(
            "Warm-up: a fixed {max:.0} s, judged at its end (steady when {how}): {}.",
            parts.join(", ")
        )
    };
    if rule == RULE_ORDERED_AT_END {
        return Some(at_end(format!(
            "none of records per second, their mean latency and CPU per record trended over its \
             last {judged} s in {step} s steps: a drift of more than {band:.0}% by the Theil-Sen \
             slope that is also ordered, Mann-Kendall p <= {}",
            crate::observe::settle_rule::WINDOW_TREND_P
        )));
    }
    if rule == RULE_AT_END {
        return Some(at_end(format!(
            "records per second, their mean latency and CPU per record drifted by at most \
             {band:.0}% over its last {judged} s in {step} s steps, Theil-Sen slope"
        )));
    }
    if max <= min {
        return Some(format!("Warm-up: a fixed {max:.0} s (the plan's maximum is not above its minimum, so settling was not watched)."));
    }
    if rule == "trend" {
        return Some(format!(
            "Time to steady state (warm-up until throughput, mean latency and CPU per request \
             drifted by at most {band:.0}% over the last {} s, Theil-Sen slope; {min:.0} s at \
             least, {max:.0} s at most): {}.",
            crate::results::warmup::SETTLE_WINDOW_S,
            parts.join(", ")
        ));
    }
    // Results written before the trend rule: a band over the last 5 seconds.
    Some(format!(
        "Warm-up, until throughput, mean latency and CPU per request stayed within {band:.0}% \
         for 5 s ({min:.0} s at least, {max:.0} s at most): {}.",
        parts.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::gc::{GcReport, GcSecond};
    use crate::results::test_support::blank_run;

    #[test]
    fn the_warm_up_note_says_how_long_each_contender_took() {
        let mut r = crate::results::test_support::blank_results(&["spring-mvc", "vertx"]);
        for (c, secs, settled) in [("spring-mvc", 14.0, true), ("vertx", 30.0, false)] {
            let mut run = blank_run(c, "s", 1);
            run.warmup = Some(WarmupRecord {
                seconds: secs,
                settled,
                min_s: 5.0,
                max_s: 30.0,
                band_pct: 10.0,
                rule: "band".into(),
                ..Default::default()
            });
            r.runs.push(run);
        }
        let n = warmup_note(&r, "s").unwrap();
        assert!(n.contains("within 10% for 5 s (5 s at least, 30 s at most): spring-mvc 14 s, vertx not settled in 30 s"), "{n}");
        assert_eq!(warmup_note(&r, "other"), None);
        for run in &mut r.runs {
            let w = run.warmup.as_mut().unwrap();
            (w.rule, w.band_pct) = ("trend".into(), 5.0);
        }
        let n = warmup_note(&r, "s").unwrap();
        assert!(n.starts_with("Time to steady state"), "{n}");
        assert!(n.contains("at most 5% over the last 10 s"), "{n}");
        // A pipeline's fixed warm-up, judged at its end: steady or not, never a time.
        for run in &mut r.runs {
            let w = run.warmup.as_mut().unwrap();
            (w.rule, w.min_s, w.seconds) = (RULE_AT_END.into(), 30.0, 30.0);
        }
        let n = warmup_note(&r, "s").unwrap();
        assert!(
            n.starts_with("Warm-up: a fixed 30 s, judged at its end")
                && n.ends_with(": spring-mvc steady, vertx not steady."),
            "{n}"
        );
        // Judged by the ordered rule: the note says a trend must be ordered too.
        for run in &mut r.runs {
            run.warmup.as_mut().unwrap().rule = RULE_ORDERED_AT_END.into();
        }
        let n = warmup_note(&r, "s").unwrap();
        assert!(
            n.contains("that is also ordered, Mann-Kendall p <= 0.05)")
                && n.ends_with(": spring-mvc steady, vertx not steady."),
            "{n}"
        );
    }

    #[test]
    fn gc_charts_only_for_runs_with_gc_figures() {
        let mut jvm = blank_run("spring-mvc", "s", 1);
        jvm.gc = Some(GcReport {
            source: "JVM -Xlog:gc".into(),
            collections: 2,
            per_second: vec![
                GcSecond {
                    t: 0,
                    collections: 2,
                    pause_ms: 7.5,
                    max_pause_ms: 5.0,
                    heap_after_mb: Some(40.0),
                },
                GcSecond {
                    t: 1,
                    ..GcSecond::default()
                },
            ],
            ..GcReport::default()
        });
        let other = blank_run("rust", "s", 1);
        let id = |k: &str| format!("s-{k}");
        let c = charts(&[(0, "spring-mvc", &jvm), (1, "rust", &other)], &id);
        assert_eq!(
            c.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
            ["s-gc", "s-heap"]
        );
        assert_eq!(c[0].series.len(), 1, "only the contender with GC figures");
        assert_eq!(c[0].series[0].points, vec![(0.5, 7.5), (1.5, 0.0)]);
        assert!(c[0].title.contains("JVM -Xlog:gc"));
        assert!(charts(&[(1, "rust", &other)], &id).is_empty());
    }
}
