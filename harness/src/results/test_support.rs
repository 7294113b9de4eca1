//! Blank results and runs for unit tests of the stages that read results (stats, report).

use super::details::Probe;
use super::environment::Environment;
use super::record::{CapacityResult, ContenderInfo, Results, Run, SCHEMA_VERSION};
use super::warmup::{WarmupRecord, WindowCheck};
use crate::util::clock::now;

pub fn blank_run(contender: &str, scenario: &str, run: u32) -> Run {
    Run::new(
        contender,
        scenario,
        run,
        "/plaintext",
        serde_json::Value::Null,
        "closed, 1 user",
    )
}

/// Runs 1, 2, ... of `contender` on `scenario` that ended ok, the k-th with the k-th of
/// `throughputs` and a CPU per request of 100 ms per 1,000 plus 0.1 a run (the same on every
/// contender: equivalent).
pub fn ok_runs(res: &mut Results, contender: &str, scenario: &str, throughputs: &[f64]) {
    for (i, v) in throughputs.iter().enumerate() {
        let mut run = blank_run(contender, scenario, i as u32 + 1);
        run.status = super::record::RunStatus::Ok;
        run.summary.rps = *v;
        run.summary.ok = 1000;
        run.resources.cpu_ms_per_1k_requests = 100.0 + i as f64 * 0.1;
        res.runs.push(run);
    }
}

/// One capacity search of `contender` on the scenario "wait" (its round `repeat`) that found
/// `capacity` and broke at `failed` (None: it stopped at a bound).
pub fn blank_search(
    contender: &str,
    repeat: u32,
    capacity: Option<f64>,
    failed: Option<f64>,
) -> CapacityResult {
    CapacityResult {
        contender: contender.into(),
        scenario: "wait".into(),
        repeat,
        slo: vec!["p99 <= 200 ms".into()],
        capacity_rps: capacity,
        failed_rps: failed,
        verdict: String::new(),
        broke_first: None,
        per_cpu_second: None,
        per_gb_rss: None,
        probes: 6,
        driver_limited: false,
        warmup_unsettled: false,
        cut_short: false,
    }
}

/// A probe of search `search` of the scenario "wait" at `rate` that held its SLO.
pub fn blank_probe(rate: f64, search: u32) -> Probe {
    Probe {
        of: "wait".into(),
        rate,
        passed: true,
        broke: Vec::new(),
        driver_limited: false,
        stopped_early: false,
        counted: true,
        search,
    }
}

pub fn blank_results(contenders: &[&str]) -> Results {
    Results {
        schema_version: SCHEMA_VERSION,
        tool: "iobound test".into(),
        started_at: now(),
        finished_at: None,
        complete: true,
        incomplete_reason: None,
        plan: serde_json::Value::Null,
        environment: Environment::default(),
        contenders: contenders
            .iter()
            .map(|n| ContenderInfo {
                name: n.to_string(),
                model: "event-loop".into(),
                language: "java".into(),
                framework: "test".into(),
                ..ContenderInfo::default()
            })
            .collect(),
        runs: Vec::new(),
        thresholds: Vec::new(),
        capacity: Vec::new(),
        verdicts: Vec::new(),
        windows: Vec::new(),
        resumed_at: Vec::new(),
        rejudged_at: None,
    }
}

/// A warm-up that settled after 20 s by its rule, and whose measured window then trended:
/// throughput drifted `drift_pct` over `seconds`. Such a run is shown and enters no test.
pub fn window_trended(seconds: usize, drift_pct: f64) -> WarmupRecord {
    WarmupRecord {
        seconds: 20.0,
        settled: true,
        min_s: 10.0,
        max_s: 120.0,
        band_pct: 5.0,
        rule: "trend".into(),
        curve: Vec::new(),
        drift_pct: Vec::new(),
        window: Some(WindowCheck {
            seconds,
            drift_pct: vec![Some(drift_pct), None, None],
            trending: vec![true, false, false],
            silent_s: 0,
            stalled: false,
            steady: false,
            rule: crate::results::warmup::RULE_CHANGEPOINT.into(),
            step_s: 1,
            noise_pct: Vec::new(),
            needs_s: None,
        }),
        jit_curve: Vec::new(),
        end_check: None,
        steps: Vec::new(),
    }
}
