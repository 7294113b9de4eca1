//! The headline figures of a results directory (throughput, p99 of all requests, CPU per
//! request, per scenario and contender: the median over runs with its interval) in the JSON the
//! continuous-benchmarking tools a team may already use read, for `iobound table DIR --export`:
//!
//! - Bencher's Metric Format (its `json` adapter): an object of benchmarks, each an object of
//!   measures (slugs of at most 64 characters), each `{value, lower_value, upper_value}`.
//! - github-action-benchmark's custom tools: a list of `{name, unit, value, range, extra}`, one
//!   file per direction (`customBiggerIsBetter`, `customSmallerIsBetter`), since the tool reads
//!   a whole file one way.
//!
//! A figure is a bound where the driver saturated, and a run not at steady state is counted in
//! the cell but left out of verdicts: `extra` says both, Bencher's format has no place for it.

use crate::results::dir::ResultsDir;
use crate::stats::{self, Cell};
use serde_json::{json, Map, Value};

/// Which tool's format (`--export` names them in kebab case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Bencher Metric Format (bencher run --adapter json)
    Bencher,
    /// github-action-benchmark, tool customBiggerIsBetter: throughput
    BenchmarkActionBigger,
    /// github-action-benchmark, tool customSmallerIsBetter: p99 of all requests, CPU
    BenchmarkActionSmaller,
}

/// A headline as exported: its key among the metrics, Bencher measure slug, unit, direction.
struct Headline {
    key: &'static str,
    slug: &'static str,
    unit: &'static str,
    bigger_is_better: bool,
}

const HEADLINES: &[Headline] = &[
    // Bencher's built-in throughput measure counts operations a second: a request is one.
    Headline {
        key: "throughput",
        slug: "throughput",
        unit: "req/s",
        bigger_is_better: true,
    },
    Headline {
        key: "p99_all",
        slug: "p99-all-requests-ms",
        unit: "ms",
        bigger_is_better: false,
    },
    Headline {
        key: "cpu",
        slug: "cpu-ms-per-1k-requests",
        unit: "ms of CPU per 1,000 requests",
        bigger_is_better: false,
    },
];

/// `set`'s headline figures in `format`, as pretty JSON.
pub fn export(set: ResultsDir, format: Format) -> String {
    let mut figures: Vec<(String, &Headline, Cell)> = Vec::new();
    for (scenario, row) in stats::cells(set) {
        for cell in row.into_iter().flatten() {
            let name = format!("{scenario}/{}", cell.contender);
            for h in HEADLINES
                .iter()
                .filter(|h| cell.of(h.key).value.is_finite())
            {
                figures.push((name.clone(), h, cell.clone()));
            }
        }
    }
    let value = match format {
        Format::Bencher => bencher(&figures),
        Format::BenchmarkActionBigger => benchmark_action(&figures, true),
        Format::BenchmarkActionSmaller => benchmark_action(&figures, false),
    };
    serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
}

fn bencher(figures: &[(String, &Headline, Cell)]) -> Value {
    let mut benchmarks = Map::new();
    for (name, h, cell) in figures {
        let e = cell.of(h.key);
        let mut measure = Map::new();
        measure.insert("value".into(), json!(e.value));
        if let (Some(lo), Some(hi)) = (e.lo, e.hi) {
            measure.insert("lower_value".into(), json!(lo));
            measure.insert("upper_value".into(), json!(hi));
        }
        let entry = benchmarks
            .entry(format!("iobound/{name}"))
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(measures) = entry {
            measures.insert(h.slug.into(), Value::Object(measure));
        }
    }
    Value::Object(benchmarks)
}

fn benchmark_action(figures: &[(String, &Headline, Cell)], bigger: bool) -> Value {
    let entries: Vec<Value> = (figures.iter())
        .filter(|(_, h, _)| h.bigger_is_better == bigger)
        .map(|(name, h, cell)| {
            let e = cell.of(h.key);
            let mut entry = json!({
                "name": format!("{name} {}", h.key),
                "unit": h.unit,
                "value": e.value,
                "extra": extra(cell),
            });
            if let (Some(lo), Some(hi)) = (e.lo, e.hi) {
                entry["range"] = json!(format!("{lo:.3}..{hi:.3}"));
            }
            entry
        })
        .collect();
    Value::Array(entries)
}

/// What a reader of the figure must know: how many runs, what the interval is, and what
/// bounds it.
fn extra(cell: &Cell) -> String {
    let mut s = format!("range: {}", cell.method);
    if cell.unsettled_runs > 0 {
        s.push_str(&format!(
            "; {} run(s) not at steady state",
            cell.unsettled_runs
        ));
    }
    if cell.saturated_runs > 0 {
        s.push_str(&format!(
            "; driver saturated in {} run(s): throughput and latency are a bound",
            cell.saturated_runs
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::record::RunStatus;
    use crate::results::test_support::{blank_results, blank_run};
    use std::path::Path;

    fn measured() -> crate::results::record::Results {
        let mut r = blank_results(&["mvc", "flux"]);
        for (name, base) in [("mvc", 1000.0), ("flux", 4000.0)] {
            for k in 0..5u32 {
                let mut run = blank_run(name, "wait", k + 1);
                run.status = RunStatus::Ok;
                run.summary.rps = base + f64::from(k);
                run.summary.ok = 1000;
                run.resources.cpu_ms_per_1k_requests = 100.0 + f64::from(k);
                r.runs.push(run);
            }
        }
        r
    }

    #[test]
    fn bencher_metric_format_has_a_value_and_its_interval_per_measure() {
        let r = measured();
        let out = export(ResultsDir::new(&r, Path::new("/none")), Format::Bencher);
        let v: Value = serde_json::from_str(&out).unwrap();
        // The format's schema: benchmarks -> measures -> {value required, bounds optional},
        // every one a number; measure slugs at most 64 characters.
        let benchmarks = v.as_object().unwrap();
        assert_eq!(benchmarks.len(), 2, "{out}");
        for (name, measures) in benchmarks {
            assert!(name.len() <= 1024);
            for (slug, m) in measures.as_object().unwrap() {
                assert!(slug.len() <= 64 && !slug.is_empty());
                let m = m.as_object().unwrap();
                assert!(m["value"].is_number(), "{out}");
                assert!(m
                    .keys()
                    .all(|k| ["value", "lower_value", "upper_value"].contains(&k.as_str())));
                assert!(m.values().all(Value::is_number));
            }
        }
        let flux = &v["iobound/wait/flux"]["throughput"];
        assert_eq!(flux["value"], 4002.0, "{out}");
        let (lo, hi) = (
            flux["lower_value"].as_f64().unwrap(),
            flux["upper_value"].as_f64().unwrap(),
        );
        assert!(lo <= 4002.0 && 4002.0 <= hi, "{out}");
        assert_eq!(
            v["iobound/wait/mvc"]["cpu-ms-per-1k-requests"]["value"],
            102.0
        );
    }

    #[test]
    fn github_action_benchmark_gets_one_direction_a_file() {
        let r = measured();
        let set = ResultsDir::new(&r, Path::new("/none"));
        for (format, keys) in [
            (Format::BenchmarkActionBigger, vec!["throughput"]),
            (Format::BenchmarkActionSmaller, vec!["cpu"]),
        ] {
            let out = export(set, format);
            let v: Value = serde_json::from_str(&out).unwrap();
            let list = v.as_array().unwrap();
            assert_eq!(list.len(), 2, "{out}");
            for e in list {
                // The custom tools' entry: name, unit and value required; range and extra
                // strings.
                assert!(e["name"].is_string() && e["unit"].is_string() && e["value"].is_number());
                assert!(e["range"].is_string() && e["extra"].is_string(), "{e}");
                let key = e["name"].as_str().unwrap().rsplit(' ').next().unwrap();
                assert!(keys.contains(&key), "{format:?} holds {key}");
                let extra = e["extra"].as_str().unwrap();
                assert!(
                    extra.starts_with("range: ") && extra.contains("5 runs"),
                    "{extra}"
                );
            }
        }
    }
}
