//! The charts of one scenario (throughput, latency, percentiles, scaling, resources, GC, warm-up),
//! each contender drawn from its representative run; chart.rs draws them.

use super::chart::{self, Chart, Series, GUIDE};
use super::{color, is_open, runtime, slug};
use crate::driver::summary::IntervalRow;
use crate::results::record::{Results, Run, RunStatus};
use crate::sampler::Sample;
use crate::stats;

/// Charts of one scenario, each contender drawn from its representative run.
pub fn charts(results: &Results, scenario: &str) -> Vec<Chart> {
    let reps: Vec<(usize, &str, &Run)> = results
        .contenders
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            stats::representative(results, scenario, &c.name).map(|r| (i, c.name.as_str(), r))
        })
        .filter(|(_, _, r)| r.status != RunStatus::Failed)
        .collect();
    let id = |k: &str| format!("{}-{k}", slug(scenario));
    let mut out = vec![per_second(
        &reps,
        id("throughput"),
        "Throughput over time",
        "req/s",
        |r| r.ok as f64,
    )];
    out.extend(runtime::runs_chart(results, scenario, id("runs")));
    out.extend(runtime::warmup_chart(results, scenario, id("warmup")));
    out.push(latency_chart(&reps, id("latency")));
    out.extend(throttled_chart(&reps, id("throttled")));
    out.extend(spectrum(results, scenario, &reps, id("percentiles")));
    let open = reps.first().is_some_and(|(_, _, r)| is_open(r));
    if let Some((_, _, r)) = reps.first() {
        out.push(load_chart(r, open, id("load")));
    }
    out.push(per_second(
        &reps,
        id("errors"),
        "Errors over time",
        "errors/s",
        |r| r.errors as f64,
    ));
    out.extend(scaling(&reps, open, id("scaling")));
    out.extend(resource_charts(&reps, &id));
    out.extend(runtime::charts(&reps, &id));
    out
}

/// The rows of the measured phase (not the drain after it).
fn measured(r: &Run) -> Vec<IntervalRow> {
    r.intervals
        .iter()
        .filter(|row| !row.drain)
        .cloned()
        .collect()
}

/// One figure per second of the measured run, a line per contender.
fn per_second(
    reps: &[(usize, &str, &Run)],
    id: String,
    title: &str,
    y: &str,
    f: fn(&IntervalRow) -> f64,
) -> Chart {
    Chart {
        id,
        title: title.into(),
        x_label: "seconds into the measured run".into(),
        y_label: y.into(),
        series: reps
            .iter()
            .map(|(i, n, r)| Series {
                name: n.to_string(),
                color: color(*i),
                dashed: false,
                points: measured(r)
                    .iter()
                    .map(|row| (f64::from(row.t) + 0.5, f(row)))
                    .collect(),
            })
            .collect(),
        ..Chart::default()
    }
}

/// p99 (solid) and p50 (dashed) per second, over the seconds with answers.
fn latency_chart(reps: &[(usize, &str, &Run)], id: String) -> Chart {
    let mut lat = Chart {
        id,
        title: "Response time over time: p99 (solid), p50 (dashed)".into(),
        x_label: "seconds into the measured run".into(),
        y_label: "ms".into(),
        ..Chart::default()
    };
    for (i, n, r) in reps {
        let rows: Vec<_> = measured(r).into_iter().filter(|row| row.ok > 0).collect();
        for (name, dashed, pick) in [
            (
                format!("{n} p99"),
                false,
                (|row: &IntervalRow| row.latency.p99) as fn(&IntervalRow) -> f64,
            ),
            (format!("{n} p50"), true, |row: &IntervalRow| {
                row.latency.p50
            }),
        ] {
            lat.series.push(Series {
                name,
                color: color(*i),
                dashed,
                points: rows
                    .iter()
                    .map(|row| (f64::from(row.t) + 0.5, pick(row)))
                    .collect(),
            });
        }
    }
    lat
}

/// Under a CPU quota: the share of each second's CFS periods in which the quota ran out, to
/// read beside the latency over time (a quota spent early in each period shows as tail
/// latency, not as lower throughput). None where no contender ran with a quota.
fn throttled_chart(reps: &[(usize, &str, &Run)], id: String) -> Option<Chart> {
    let chart = Chart {
        id,
        title: "Throttled: CFS periods in which the quota ran out, per second".into(),
        x_label: "seconds into the measured run".into(),
        y_label: "% of periods".into(),
        series: reps
            .iter()
            .filter_map(|(i, n, r)| {
                let c = r.resources.cgroup.as_ref()?;
                let quota = c.limits.as_ref().is_none_or(|l| l.cpus.is_some());
                quota.then(|| Series {
                    name: n.to_string(),
                    color: color(*i),
                    dashed: false,
                    points: c
                        .throttled_pct_per_s
                        .iter()
                        .enumerate()
                        .map(|(t, pct)| (t as f64 + 0.5, *pct))
                        .collect(),
                })
            })
            .collect(),
        ..Chart::default()
    };
    chart.has_data().then_some(chart)
}

/// The load offered each second: users (closed model) or arrival rate (open).
fn load_chart(r: &Run, open: bool, id: String) -> Chart {
    let label = if open {
        "arrival rate (req/s)"
    } else {
        "users"
    };
    Chart {
        id,
        title: format!("Offered load: {label}"),
        x_label: "seconds into the measured run".into(),
        y_label: label.into(),
        series: vec![Series {
            name: label.into(),
            color: GUIDE.into(),
            dashed: false,
            points: measured(r)
                .iter()
                .map(|row| (f64::from(row.t) + 0.5, row.target))
                .collect(),
        }],
        ..Chart::default()
    }
}

/// The contender's threads, memory, CPU, context switches and sockets over time, from the
/// sampler (charts without data are left out).
fn resource_charts(reps: &[(usize, &str, &Run)], id: &dyn Fn(&str) -> String) -> Vec<Chart> {
    let sampled = |k: &str,
                   title: &str,
                   y: &str,
                   f: &dyn Fn(&Sample, Option<&Sample>) -> Option<f64>| Chart {
        id: id(k),
        title: title.into(),
        x_label: "seconds into the measured run".into(),
        y_label: y.into(),
        series: reps
            .iter()
            .filter(|(_, _, r)| !r.resources.samples.is_empty())
            .map(|(i, n, r)| {
                let s = &r.resources.samples;
                let points = s
                    .iter()
                    .enumerate()
                    .filter_map(|(j, cur)| {
                        f(cur, j.checked_sub(1).map(|p| &s[p])).map(|v| (cur.t, v))
                    })
                    .collect();
                Series {
                    name: n.to_string(),
                    color: color(*i),
                    dashed: false,
                    points,
                }
            })
            .collect(),
        ..Chart::default()
    };
    let rate = |cur: &Sample, prev: Option<&Sample>, f: fn(&Sample) -> f64| {
        let p = prev?;
        let dt = cur.t - p.t;
        (dt > 0.0).then(|| ((f(cur) - f(p)) / dt).max(0.0))
    };
    let mut out = Vec::new();
    for c in [
        sampled("threads", "Threads", "threads", &|s, _| {
            Some(s.threads as f64)
        }),
        sampled("rss", "Resident memory (RSS)", "MB", &|s, _| Some(s.rss_mb)),
        sampled("cpu", "CPU (100% = one core)", "%", &|s, p| {
            rate(s, p, |x| (x.cpu_user_s + x.cpu_sys_s) * 100.0)
        }),
        sampled("ctx", "Context switches", "per second", &|s, p| {
            rate(s, p, |x| (x.ctx_voluntary + x.ctx_involuntary) as f64)
        }),
        sampled("sockets", "Open sockets", "sockets", &|s, _| {
            Some(s.sockets as f64)
        }),
        sampled(
            "downstream",
            "Connections to the downstream service",
            "connections",
            &|s, _| Some(s.downstream_conns as f64),
        ),
    ] {
        // The downstream chart only where there were downstream connections.
        let all_zero = c.id.ends_with("-downstream")
            && c.series.iter().all(|s| s.points.iter().all(|p| p.1 == 0.0));
        if c.has_data() && !all_zero {
            out.push(c);
        }
    }
    out
}

/// Latency by percentile (HdrHistogram's percentile spectrum), from every run merged.
fn spectrum(
    results: &Results,
    scenario: &str,
    reps: &[(usize, &str, &Run)],
    id: String,
) -> Option<Chart> {
    let mut series = Vec::new();
    for (i, n, _) in reps {
        let h = stats::merged_histogram(results, scenario, n)?;
        // x = log10(1 / (1 - q)): 1 = 90%, 2 = 99%, 3 = 99.9%.
        let points = (0..=40)
            .map(|k| {
                let x = f64::from(k) / 10.0;
                let q = 1.0 - 10f64.powf(-x);
                (x, h.value_at_quantile(q) as f64 / 1000.0)
            })
            .chain(std::iter::once((4.3, h.max() as f64 / 1000.0)))
            .collect();
        series.push(Series {
            name: n.to_string(),
            color: color(*i),
            dashed: false,
            points,
        });
    }
    let ticks = [
        (0.0, "0%"),
        (0.301, "50%"),
        (1.0, "90%"),
        (2.0, "99%"),
        (3.0, "99.9%"),
        (4.0, "99.99%"),
        (4.3, "max"),
    ];
    Some(Chart {
        id,
        title: "Response time by percentile (all runs merged)".into(),
        x_label: "percentile".into(),
        y_label: "ms".into(),
        series,
        x_ticks: Some(ticks.iter().map(|(x, l)| (*x, l.to_string())).collect()),
        markers: false,
    })
}

/// Throughput against offered load, one point per load level, with the ceiling the load
/// allows: Little's law (users / response time at the lowest level) or the offered rate.
fn scaling(reps: &[(usize, &str, &Run)], open: bool, id: String) -> Option<Chart> {
    if reps.iter().all(|(_, _, r)| r.summary.levels.len() < 2) {
        return None;
    }
    let mut series: Vec<Series> = reps
        .iter()
        .map(|(i, n, r)| Series {
            name: n.to_string(),
            color: color(*i),
            dashed: false,
            points: r.summary.levels.iter().map(|l| (l.target, l.rps)).collect(),
        })
        .collect();
    let max_x = reps
        .iter()
        .flat_map(|(_, _, r)| r.summary.levels.iter().map(|l| l.target))
        .fold(0.0, f64::max);
    if open {
        series.push(Series {
            name: "offered rate".into(),
            color: GUIDE.into(),
            dashed: true,
            points: vec![(0.0, 0.0), (max_x, max_x)],
        });
    } else {
        // The uncontended response time: the best median at the lowest level of users.
        let r0 = reps
            .iter()
            .filter_map(|(_, _, r)| r.summary.levels.first().map(|l| l.latency.p50))
            .filter(|m| *m > 0.0)
            .fold(f64::INFINITY, f64::min);
        if r0.is_finite() {
            // Drawn only as far as 1.5 x the best measured throughput, so that a ceiling far
            // above the data (a CPU-bound scenario) does not flatten the chart.
            let best = reps
                .iter()
                .flat_map(|(_, _, r)| r.summary.levels.iter().map(|l| l.rps))
                .fold(0.0, f64::max);
            let end = max_x.min(1.5 * best * r0 / 1000.0).max(1.0);
            series.push(Series {
                name: format!(
                    "Little's law: users / {} ms (best p50 at the first level)",
                    chart::short((r0 * 10.0).round() / 10.0)
                ),
                color: GUIDE.into(),
                dashed: true,
                points: vec![(0.0, 0.0), (end, end / (r0 / 1000.0))],
            });
        }
    }
    Some(Chart {
        id,
        title: if open {
            "Throughput vs arrival rate"
        } else {
            "Throughput vs concurrency"
        }
        .into(),
        x_label: if open {
            "arrival rate (req/s)"
        } else {
            "concurrent users"
        }
        .into(),
        y_label: "req/s".into(),
        series,
        x_ticks: None,
        markers: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::test_support::blank_run;
    use crate::sampler::CgroupReport;
    use crate::util::cgroup::Limits;

    fn in_cgroup(name: &str, limits: Limits, per_s: &[f64]) -> Run {
        let mut r = blank_run(name, "wait", 1);
        r.resources.cgroup = Some(CgroupReport {
            throttled_pct_per_s: per_s.to_vec(),
            limits: Some(limits),
            ..CgroupReport::default()
        });
        r
    }

    #[test]
    fn throttling_is_charted_per_second_for_the_contenders_under_a_quota_only() {
        let quota = Limits {
            cpus: Some(0.5),
            memory_bytes: None,
        };
        let memory = Limits {
            cpus: None,
            memory_bytes: Some(512 << 20),
        };
        let (a, b, c) = (
            in_cgroup("mvc", quota, &[10.0, 50.0, 40.0]),
            in_cgroup("go", memory, &[0.0, 0.0]),
            blank_run("node", "wait", 1),
        );
        let reps = vec![(0, "mvc", &a), (1, "go", &b), (2, "node", &c)];
        let chart = throttled_chart(&reps, "wait-throttled".into()).expect("a chart");
        assert_eq!(chart.series.len(), 1, "only the contender with a quota");
        assert_eq!(chart.series[0].name, "mvc");
        assert_eq!(
            chart.series[0].points,
            [(0.5, 10.0), (1.5, 50.0), (2.5, 40.0)]
        );
        assert!(
            throttled_chart(&reps[1..], "x".into()).is_none(),
            "no quota, no chart"
        );
    }
}
