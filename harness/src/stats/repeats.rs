//! Statistics over repeats: for each contender x scenario, the median over runs of every metric
//! with a 95% bootstrap interval, latency percentiles from histograms merged across runs, and
//! the rules that say when a difference is real (intervals apart) and when runs are noisy.
//!
//! With several runs the bootstrap resamples runs; with one run it resamples that run's
//! one-second intervals (throughput, errors and latency; resource peaks then get no interval).

use super::estimates::{estimate, p99_all, per_run_estimate, sampled_estimate, LatencyEstimates};
use super::resample::{block_len, median_interval, run_unit, seconds_of, seed_of, Unit};
use super::runs::{runs_of, scenarios};
use super::significance::MIN_RUNS;
use super::Estimate;
use crate::plan::metric_list::METRICS;
use crate::plan::metrics::{Metric, Source};
use crate::results::dir::ResultsDir;
use crate::results::figures::figure;
use crate::results::record::Run;
use crate::results::steady::unsettled;
use crate::sampler::STEAL_LIMIT_PCT;
use crate::util::numbers::median;
use serde::Serialize;

/// Coefficient of variation of throughput over runs above which a cell is flagged noisy.
pub const NOISY_CV: f64 = 0.10;

/// Everything measured for one contender in one scenario, over its runs.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Cell {
    pub contender: String,
    pub scenario: String,
    /// Runs the figures come from.
    pub runs: usize,
    pub failed_runs: usize,
    /// True when only incomplete (interrupted) runs were available.
    pub partial: bool,
    /// How the intervals were obtained, in words.
    pub method: String,
    pub ok: u64,
    pub ko: u64,
    /// Every metric of plan::metric_list::METRICS, in its order: read with `get` or `of`.
    pub estimates: Vec<Estimate>,
    /// Runs measured before the contender had settled ("not at steady state").
    pub unsettled_runs: usize,
    /// Runs whose driver CPUs (or a CPU they share) were saturated: their throughput and
    /// latency may be the driver's limit.
    pub saturated_runs: usize,
    /// Coefficient of variation of throughput over runs (two runs or more).
    pub rps_cv: Option<f64>,
    /// Why these figures should be read with care, when they should.
    pub noisy: Option<String>,
    /// For each run, in the order of every estimate's `per_run`: whether it was measured at
    /// steady state.
    #[serde(skip)]
    pub settled: Vec<bool>,
}

/// What a cell without a metric's estimate reads: no value.
static NO_ESTIMATE: Estimate = Estimate {
    value: f64::NAN,
    lo: None,
    hi: None,
    per_run: Vec::new(),
};

impl Cell {
    /// The cell's estimate of `m` (no value where it has none, as a cell built by hand).
    pub fn get(&self, m: &Metric) -> &Estimate {
        self.estimates.get(m.index()).unwrap_or(&NO_ESTIMATE)
    }

    /// Sets the estimate of the metric named `key` (a cell built by hand, as in a test).
    pub fn set(&mut self, key: &str, e: Estimate) {
        let i = Metric::named(key).index();
        self.estimates.resize(METRICS.len(), NO_ESTIMATE.clone());
        self.estimates[i] = e;
    }

    /// The estimate of the metric named `key`, which must be one of METRICS.
    pub fn of(&self, key: &str) -> &Estimate {
        self.get(Metric::named(key))
    }

    /// `e`'s per-run values that a difference is tested on: every run's where all settled,
    /// else the settled runs' alone (a run not at steady state enters no test, as in the
    /// verdicts). A run's value does not depend on the other runs, so these are the values
    /// a cell of the settled runs would hold; an estimate without a value per run gives none.
    pub fn tested_values(&self, e: &Estimate) -> Vec<f64> {
        if self.unsettled_runs == 0 {
            return e.per_run.clone();
        }
        if e.per_run.len() != self.settled.len() {
            return Vec::new();
        }
        e.per_run
            .iter()
            .zip(&self.settled)
            .filter_map(|(v, settled)| settled.then_some(*v))
            .collect()
    }
}

pub fn cell(set: ResultsDir, scenario: &str, contender: &str) -> Option<Cell> {
    cell_of(set, scenario, contender, false)
}

/// The cell a verdict may rest on: only runs measured at steady state (a run whose warm-up
/// or measured window still trended is shown in the tables, never tested).
pub fn settled_cell(set: ResultsDir, scenario: &str, contender: &str) -> Option<Cell> {
    cell_of(set, scenario, contender, true)
}

fn cell_of(set: ResultsDir, scenario: &str, contender: &str, settled_only: bool) -> Option<Cell> {
    let keep = |r: &Run| !settled_only || !unsettled(set.results, r);
    let (runs, failed_runs, partial) = runs_of(set.results, scenario, contender, keep)?;
    let seed = seed_of(scenario, contender);
    // Point estimates merge whole runs; intervals come from the runs' values, or from one
    // run's seconds.
    let whole: Vec<Unit> = runs.iter().filter_map(|r| run_unit(r)).collect();
    // A within-run interval resamples the run's seconds as if they were alike: over a stepped
    // load they are not (each level has its own throughput and latency), so a run of several
    // levels gets no whole-run interval; its per-level rows are the comparison.
    let levels = runs[0].summary.levels.len();
    let seconds = if runs.len() >= 2 || levels > 1 {
        None
    } else {
        seconds_of(runs[0], set)
    };
    let units = seconds.as_deref().unwrap_or(&[]);
    let method = method_of(runs.len(), levels, seconds.as_ref().map(Vec::len));
    let latency = LatencyEstimates::new(&whole, runs.len(), units, seed);
    // Point estimates: percentiles of the histogram merged over all runs (the summary's own
    // figures when a results file carries no histograms); per run, each run's own.
    let fallback = &runs[runs.len() / 2].summary.latency;
    // OK and KO count the same population: every request due (answered after the measured
    // phase too), so that OK + KO = due.
    let ok: u64 = runs.iter().map(|r| r.summary.ok + r.summary.drained).sum();
    let ko: u64 = runs.iter().map(|r| r.summary.errors.total()).sum();
    let rps_values: Vec<f64> = runs.iter().map(|r| r.summary.rps).collect();
    // A verdict's CPU per request leaves out the runs whose window's CPU alone moved.
    let cpu_runs: Vec<&Run> = runs
        .iter()
        .copied()
        .filter(|r| !settled_only || !r.warmup.as_ref().is_some_and(|w| w.cpu_moved()))
        .collect();
    let rps_cv = coefficient_of_variation(&rps_values);
    Some(Cell {
        contender: contender.to_string(),
        scenario: scenario.to_string(),
        runs: runs.len(),
        failed_runs,
        partial,
        method,
        ok,
        ko,
        estimates: METRICS
            .iter()
            .map(|m| match m.source {
                Source::Throughput => throughput(&rps_values, units, seed),
                Source::Errors => errors(&runs, units, ok, ko, seed),
                Source::Latency(stat) => latency.of_stat(stat, fallback),
                Source::LatencyAll => p99_all(&runs),
                Source::Run(f) if m.key == "cpu" => sampled_estimate(&cpu_runs, f),
                Source::Run(f) if f.sampled() => sampled_estimate(&runs, f),
                Source::Run(f) => per_run_estimate(&runs, |r| figure(r, f)),
            })
            .collect(),
        unsettled_runs: runs.iter().filter(|r| unsettled(set.results, r)).count(),
        saturated_runs: runs.iter().filter(|r| r.driver.saturated).count(),
        noisy: noise(&runs, rps_cv),
        rps_cv,
        settled: runs.iter().map(|r| !unsettled(set.results, r)).collect(),
    })
}

/// How a cell's intervals were made, in words.
fn method_of(runs: usize, levels: usize, seconds: Option<usize>) -> String {
    if runs == 1 && levels > 1 {
        format!(
            "one run over {levels} load levels; no whole-run interval (resampling its seconds \
             would mix the levels): compare the per-level rows; differences not tested"
        )
    } else {
        method(runs, seconds)
    }
}

/// How often the interval over `runs` runs' values covers the true median (0..1): the label
/// the report prints beside it.
pub fn median_coverage(runs: usize) -> f64 {
    median_interval(&vec![0.0; runs]).2
}

/// How a cell's intervals were obtained, in words: over `runs` runs, or over the one run's
/// `seconds` one-second intervals; and how its differences are judged.
fn method(runs: usize, seconds: Option<usize>) -> String {
    match (runs, seconds) {
        (2.., _) => {
            let coverage = median_coverage(runs);
            let test = if runs >= MIN_RUNS { "differences by Mann-Whitney over runs (p <= 0.05)".to_string() } else { format!("differences not tested (a test needs >= {MIN_RUNS} runs each)") };
            format!("median of {runs} runs; interval: the runs' {}, a {:.0}% confidence interval for the median; {test}", if coverage < 0.95 { "min..max" } else { "order statistics" }, coverage * 100.0)
        }
        (_, Some(n)) => format!("one run; within-run 95% interval by block bootstrap over its {n} one-second intervals (blocks of {}s): it describes this run's seconds and does not predict a rerun (run-to-run variation not measured); differences not tested", block_len(n)),
        _ => "one run; no interval; differences not tested".to_string(),
    }
}

/// Standard deviation over mean of two values or more.
fn coefficient_of_variation(values: &[f64]) -> Option<f64> {
    (values.len() >= 2).then(|| {
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let var =
            values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (values.len() - 1) as f64;
        if mean > 0.0 {
            var.sqrt() / mean
        } else {
            0.0
        }
    })
}

/// Throughput: the median over runs, or one run's with its seconds resampled.
fn throughput(rps_values: &[f64], units: &[Unit], seed: u64) -> Estimate {
    let value = if rps_values.len() >= 2 {
        median(rps_values.to_vec())
    } else {
        rps_values[0]
    };
    estimate(
        value,
        rps_values.to_vec(),
        units.len(),
        &|pick| {
            let secs: f64 = pick.iter().map(|&i| units[i].secs).sum();
            (secs > 0.0).then(|| pick.iter().map(|&i| units[i].ok).sum::<u64>() as f64 / secs)
        },
        seed ^ 1,
    )
}

/// The share of requests that failed, over all runs; per run for the interval and the test.
fn errors(runs: &[&Run], units: &[Unit], ok: u64, ko: u64, seed: u64) -> Estimate {
    let pct = |ok: u64, ko: u64| {
        if ok + ko > 0 {
            ko as f64 * 100.0 / (ok + ko) as f64
        } else {
            0.0
        }
    };
    let per_run = runs
        .iter()
        .map(|r| pct(r.summary.ok + r.summary.drained, r.summary.errors.total()))
        .collect();
    estimate(
        pct(ok, ko),
        per_run,
        units.len(),
        &|pick| {
            Some(pct(
                pick.iter().map(|&i| units[i].ok).sum(),
                pick.iter().map(|&i| units[i].ko).sum(),
            ))
        },
        seed ^ 2,
    )
}

/// Why a cell's runs may not be trusted at face value: spread over runs and its known causes.
fn noise(runs: &[&Run], cv: Option<f64>) -> Option<String> {
    let mut causes = Vec::new();
    for r in runs {
        if r.driver.saturated {
            causes.push(format!("run {}: the driver was saturated", r.run));
        }
        if r.driver.cpu_steal_pct > STEAL_LIMIT_PCT {
            causes.push(format!(
                "run {}: {:.1}% CPU steal",
                r.run, r.driver.cpu_steal_pct
            ));
        }
    }
    let spread = cv.filter(|c| *c > NOISY_CV);
    if spread.is_none() && causes.is_empty() {
        return None;
    }
    let mut out = match spread {
        Some(c) => format!(
            "throughput varies {:.0}% between runs (CV above {:.0}%)",
            c * 100.0,
            NOISY_CV * 100.0
        ),
        None => "suspect measurement".to_string(),
    };
    if causes.is_empty() {
        out.push_str("; no recorded cause (machine drift, JIT or GC differences between runs)");
    } else {
        out.push_str(": ");
        out.push_str(&causes.join("; "));
    }
    Some(out)
}

/// Every cell of a result set, scenario by scenario, contenders in plan order.
pub fn cells(set: ResultsDir) -> Vec<(String, Vec<Option<Cell>>)> {
    scenarios(set.results)
        .into_iter()
        .map(|s| {
            let row = set
                .results
                .contenders
                .iter()
                .map(|c| cell(set, &s, &c.name))
                .collect();
            (s, row)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::record::new_histogram;
    use crate::driver::summary::{encode_histogram, Latency, Summary};
    use crate::results::record::{Results, RunStatus};
    use crate::stats::metrics::{Difference, METRICS};
    use std::path::Path;

    fn run_with(contender: &str, n: u32, rps: f64, latencies_ms: &[u64]) -> Run {
        let mut h = new_histogram();
        for ms in latencies_ms {
            h.record(ms * 1000).unwrap();
        }
        let mut r = crate::results::test_support::blank_run(contender, "s", n);
        r.status = RunStatus::Ok;
        r.summary = Summary {
            duration_s: 10.0,
            ok: (rps * 10.0) as u64,
            rps,
            latency: Latency::from_histogram(&h),
            ..Summary::default()
        };
        r.histogram = Some(encode_histogram(&h).unwrap());
        r
    }

    fn results(runs: Vec<Run>) -> Results {
        let mut r = crate::results::test_support::blank_results(&["a", "b"]);
        r.runs = runs;
        r
    }

    #[test]
    fn percentiles_come_from_merged_histograms_not_averages() {
        // Run 1: all 10 ms. Run 2: 95 x 10 ms and 5 x 1000 ms. Averaging the runs' p99s would
        // give (10 + 1000) / 2 = 505 ms; the merged 200 responses have p99 = 1000 ms (5 of 200
        // are slow) and p95 = 10 ms.
        let fast = vec![10; 100];
        let mut slow = vec![10; 95];
        slow.extend([1000; 5]);
        let res = results(vec![
            run_with("a", 1, 100.0, &fast),
            run_with("a", 2, 100.0, &slow),
        ]);
        let c = cell(ResultsDir::new(&res, Path::new("/nonexistent")), "s", "a").unwrap();
        assert!(
            (c.of("p99").value - 1000.0).abs() < 1.0,
            "{:?}",
            c.of("p99")
        );
        assert!((c.of("p95").value - 10.0).abs() < 0.1, "{:?}", c.of("p95"));
        assert_eq!(c.runs, 2);
        assert_eq!(c.ok, 2000);
    }

    #[test]
    fn context_switches_and_cpu_per_request_count_the_same_answers() {
        // 900 answers inside the measured phase, 100 drained after it; 2,000 context switches
        // and 1 s of CPU over the run: both per request over all 1,000 answers.
        let mut r = run_with("a", 1, 90.0, &[10; 10]);
        r.summary.drained = 100;
        r.resources.ctx_voluntary = 1500;
        r.resources.ctx_involuntary = 500;
        r.resources.cpu_ms_per_1k_requests = 1000.0;
        let c = cell(
            ResultsDir::new(&results(vec![r]), Path::new("/nonexistent")),
            "s",
            "a",
        )
        .unwrap();
        assert_eq!(
            c.of("ctx_per_req").value,
            2.0,
            "2,000 switches over 1,000 answers"
        );
        assert_eq!(c.of("cpu").value, 1000.0);
    }

    #[test]
    fn median_and_interval_over_runs() {
        let lat = vec![5; 50];
        let res = results(vec![
            run_with("a", 1, 1000.0, &lat),
            run_with("a", 2, 1100.0, &lat),
            run_with("a", 3, 1050.0, &lat),
            run_with("a", 4, 990.0, &lat),
            run_with("a", 5, 1020.0, &lat),
        ]);
        let c = cell(ResultsDir::new(&res, Path::new("/x")), "s", "a").unwrap();
        assert_eq!(c.of("throughput").value, 1020.0);
        let (lo, hi) = (
            c.of("throughput").lo.unwrap(),
            c.of("throughput").hi.unwrap(),
        );
        // Five runs: min..max, which covers the median 94% of the time, and says so.
        assert_eq!((lo, hi), (990.0, 1100.0));
        assert!(
            c.method.contains(
                "min..max, a 94% confidence interval for the median; differences by Mann-Whitney"
            ),
            "{}",
            c.method
        );
        assert!(c.noisy.is_none(), "{:?}", c.noisy);
        // Deterministic: the same results give the same interval.
        assert_eq!(
            cell(ResultsDir::new(&res, Path::new("/x")), "s", "a")
                .unwrap()
                .of("throughput"),
            c.of("throughput")
        );
    }

    #[test]
    fn differences_are_tested_over_runs() {
        let lat = vec![5; 20];
        let a: Vec<Run> = [1000.0, 1010.0, 990.0, 1003.0]
            .iter()
            .enumerate()
            .map(|(i, v)| run_with("a", i as u32 + 1, *v, &lat))
            .collect();
        let close: Vec<Run> = [1005.0, 995.0, 1012.0, 998.0]
            .iter()
            .enumerate()
            .map(|(i, v)| run_with("b", i as u32 + 1, *v, &lat))
            .collect();
        let res = results(a.iter().cloned().chain(close).collect());
        let (ca, cb) = (
            cell(ResultsDir::new(&res, Path::new("/x")), "s", "a").unwrap(),
            cell(ResultsDir::new(&res, Path::new("/x")), "s", "b").unwrap(),
        );
        let d = Difference::of(&METRICS[0], &ca, &cb);
        assert_eq!(d.significant, Some(false));
        assert!(
            d.describe().ends_with("%, not significant"),
            "{}",
            d.describe()
        );
        let far: Vec<Run> = [2000.0, 2010.0, 1990.0, 2006.0]
            .iter()
            .enumerate()
            .map(|(i, v)| run_with("b", i as u32 + 1, *v, &lat))
            .collect();
        let res = results(a.clone().into_iter().chain(far.clone()).collect());
        let cb = cell(ResultsDir::new(&res, Path::new("/x")), "s", "b").unwrap();
        let d = Difference::of(&METRICS[0], &ca, &cb);
        assert_eq!((d.significant, d.better), (Some(true), Some(true)));
        assert_eq!(d.describe(), "+100.0%");
        // Three runs of each, however far apart: not tested (no split of 3 vs 3 reaches p 0.05).
        let res = results(
            a[..3]
                .iter()
                .cloned()
                .chain(far[..3].iter().cloned())
                .collect(),
        );
        let (ca, cb) = (
            cell(ResultsDir::new(&res, Path::new("/x")), "s", "a").unwrap(),
            cell(ResultsDir::new(&res, Path::new("/x")), "s", "b").unwrap(),
        );
        let d = Difference::of(&METRICS[0], &ca, &cb);
        assert_eq!(d.significant, None);
        assert!(d.describe().ends_with(", not tested"), "{}", d.describe());
        // Four runs of each, far apart, but one measured before it settled: shown, not tested.
        let mut runs: Vec<Run> = a.iter().cloned().chain(far.iter().cloned()).collect();
        runs[7].warmup = Some(crate::results::test_support::window_trended(8, 55.0));
        let res = results(runs);
        let (ca, cb) = (
            cell(ResultsDir::new(&res, Path::new("/x")), "s", "a").unwrap(),
            cell(ResultsDir::new(&res, Path::new("/x")), "s", "b").unwrap(),
        );
        assert_eq!((ca.unsettled_runs, cb.unsettled_runs), (0, 1));
        let d = Difference::of(&METRICS[0], &ca, &cb);
        assert_eq!(d.significant, None);
        assert_eq!(d.describe(), "+100.0%, not tested");
        // A fifth run of b: four settled a side again, tested on those four.
        let mut fifth = far[0].clone();
        fifth.run = 5;
        let res = results(res.runs.iter().cloned().chain([fifth]).collect());
        let cb = cell(ResultsDir::new(&res, Path::new("/x")), "s", "b").unwrap();
        assert_eq!(
            (
                cb.runs,
                cb.unsettled_runs,
                cb.tested_values(cb.of("throughput")).len()
            ),
            (5, 1, 4)
        );
        let d = Difference::of(&METRICS[0], &ca, &cb);
        assert_eq!(d.significant, Some(true));
    }

    #[test]
    fn noisy_runs_are_flagged_with_their_cause() {
        let lat = vec![5; 20];
        let mut runs: Vec<Run> = [1000.0, 1500.0, 700.0]
            .iter()
            .enumerate()
            .map(|(i, v)| run_with("a", i as u32 + 1, *v, &lat))
            .collect();
        let res = results(runs.clone());
        let why = cell(ResultsDir::new(&res, Path::new("/x")), "s", "a")
            .unwrap()
            .noisy
            .unwrap();
        assert!(
            why.contains("varies") && why.contains("no recorded cause"),
            "{why}"
        );
        runs[2].driver.saturated = true;
        runs[1].driver.cpu_steal_pct = 9.0;
        let why = cell(ResultsDir::new(&results(runs), Path::new("/x")), "s", "a")
            .unwrap()
            .noisy
            .unwrap();
        assert!(
            why.contains("run 3: the driver was saturated")
                && why.contains("run 2: 9.0% CPU steal"),
            "{why}"
        );
    }

    #[test]
    fn single_run_resamples_its_seconds() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("histograms")).unwrap();
        let start = std::time::Instant::now();
        let live = crate::driver::record::Live::default();
        let mut rec = crate::driver::record::Recorder::new(start);
        for s in 0..6u64 {
            for i in 0..(100 + s * 10) {
                rec.ok(
                    start + std::time::Duration::from_millis(s * 1000 + i % 900),
                    std::time::Duration::from_millis(2 + s),
                    &live,
                );
            }
        }
        let path = "histograms/a.s.run1.hlog";
        crate::driver::summary::write_hlog(
            &rec,
            &dir.path().join(path),
            std::time::SystemTime::now(),
            "a.s",
        )
        .unwrap();
        let profile = crate::plan::Profile::Closed {
            users: 1,
            step_users: 0,
            steps: 0,
            level: std::time::Duration::from_secs(6),
            think: std::time::Duration::ZERO,
            stay: std::time::Duration::ZERO,
            spread: std::time::Duration::ZERO,
        };
        let (summary, intervals) =
            crate::driver::summary::summarize(&rec, std::time::Duration::from_secs(6), &profile);
        let mut r = crate::results::test_support::blank_run("a", "s", 1);
        r.status = RunStatus::Ok;
        r.histogram = Some(encode_histogram(&rec.overall().0).unwrap());
        r.histogram_log = Some(path.into());
        r.summary = summary;
        r.intervals = intervals;
        let c = cell(ResultsDir::new(&results(vec![r]), dir.path()), "s", "a").unwrap();
        assert!(c.method.contains("6 one-second intervals"), "{}", c.method);
        let (lo, hi) = (
            c.of("throughput").lo.unwrap(),
            c.of("throughput").hi.unwrap(),
        );
        assert!(
            lo < c.of("throughput").value
                && c.of("throughput").value < hi
                && lo >= 100.0
                && hi <= 150.0,
            "{lo} {} {hi}",
            c.of("throughput").value
        );
        let (plo, phi) = (c.of("p50").lo.unwrap(), c.of("p50").hi.unwrap());
        assert!(plo >= 2.0 && phi <= 7.1 && plo < phi, "{plo}..{phi}");
        assert_eq!(
            c.of("threads").lo,
            None,
            "no interval for a single run's peaks"
        );
        // The same seconds as two load levels (3 s at 1 user, 3 s at 2): no whole-run
        // interval, which would mix the levels.
        let stepped = crate::plan::Profile::Closed {
            users: 1,
            step_users: 1,
            steps: 1,
            level: std::time::Duration::from_secs(3),
            think: std::time::Duration::ZERO,
            stay: std::time::Duration::ZERO,
            spread: std::time::Duration::ZERO,
        };
        let (summary, intervals) =
            crate::driver::summary::summarize(&rec, std::time::Duration::from_secs(6), &stepped);
        assert_eq!(summary.levels.len(), 2);
        let mut r = crate::results::test_support::blank_run("a", "s", 1);
        r.status = RunStatus::Ok;
        r.histogram = Some(encode_histogram(&rec.overall().0).unwrap());
        r.histogram_log = Some(path.into());
        r.summary = summary;
        r.intervals = intervals;
        let c = cell(ResultsDir::new(&results(vec![r]), dir.path()), "s", "a").unwrap();
        assert_eq!(
            (c.of("throughput").lo, c.of("p50").lo),
            (None, None),
            "{}",
            c.method
        );
        assert!(c.method.contains("over 2 load levels"), "{}", c.method);
    }

    #[test]
    fn a_run_whose_cpu_alone_moved_is_tested_on_throughput_and_not_on_cpu() {
        let lat = [10, 11, 12];
        let mut runs: Vec<Run> = [1000.0, 1010.0, 990.0, 1005.0]
            .iter()
            .enumerate()
            .map(|(i, v)| run_with("a", i as u32 + 1, *v, &lat))
            .collect();
        for (i, r) in runs.iter_mut().enumerate() {
            r.resources.cpu_ms_per_1k_requests = 100.0 + i as f64;
            r.resources.cpu_s = 1.0;
        }
        // Run 4's window: throughput and latency flat, CPU per answer moved (a doubled figure).
        let mut w = crate::results::test_support::window_trended(10, 40.0);
        let check = w.window.as_mut().unwrap();
        check.trending = vec![false, false, true];
        check.steady = true;
        runs[3].warmup = Some(w);
        runs[3].resources.cpu_ms_per_1k_requests = 200.0;
        let res = results(runs);
        let set = ResultsDir::new(&res, Path::new("/x"));
        let settled = settled_cell(set, "s", "a").unwrap();
        assert_eq!((settled.runs, settled.unsettled_runs), (4, 0));
        assert_eq!(settled.tested_values(settled.of("throughput")).len(), 4);
        let cpu = settled.tested_values(settled.of("cpu"));
        assert_eq!(cpu, vec![100.0, 101.0, 102.0]);
        // The table's cell still shows every run's CPU.
        let shown = cell(set, "s", "a").unwrap();
        assert_eq!(shown.of("cpu").per_run.len(), 4);
        // Every run's CPU moved: no CPU figure to test, and no panic.
        let mut all = res.clone();
        for r in &mut all.runs {
            r.warmup = res.runs[3].warmup.clone();
        }
        let none = settled_cell(ResultsDir::new(&all, Path::new("/x")), "s", "a").unwrap();
        assert!(none.of("cpu").value.is_nan());
    }
}
