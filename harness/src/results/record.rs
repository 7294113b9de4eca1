//! The results model (results.json): the result set, its contenders, its runs and their
//! status. How it is written and read is record_file.rs.

use super::details::Details;
use super::environment::Environment;
use super::gc::GcReport;
use super::warmup::WarmupRecord;
use crate::conformance::Verification;
use crate::driver::assess::DriverReport;
use crate::driver::summary::{IntervalRow, Summary};
use crate::sampler::Resources;
use crate::services::manifest::Manifest;
use crate::util::clock::now;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

pub use super::verdict_record::{Finding, Futility, ThresholdCheck, VerdictRecord};

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    pub schema_version: u32,
    pub tool: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// False until every planned run has ended; stays false when interrupted.
    pub complete: bool,
    pub incomplete_reason: Option<String>,
    pub plan: serde_json::Value,
    pub environment: Environment,
    pub contenders: Vec<ContenderInfo>,
    pub runs: Vec<Run>,
    /// Every threshold of the plan checked against every contender and scenario measured
    /// (written when the run ends; absent when the plan has none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<ThresholdCheck>,
    /// Capacity searches, one per contender x capacity scenario x repeat (their probes are runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capacity: Vec<CapacityResult>,
    /// One verdict per scenario, from tested or equivalence statements only (written after
    /// every round of a plan with `runs = "auto"`, and at the end of any plan).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<VerdictRecord>,
    /// Where the noise is, per contender and scenario (stats/windows.rs): between starts and
    /// between the windows of one start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<super::noise::Components>,
    /// When the plan was continued in a later sitting (`run --resume`), one time each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumed_at: Vec<String>,
    /// When the verdicts were judged again from the stored runs by a later iobound's rules
    /// (`iobound report DIR --rejudge`); the runs themselves are as measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejudged_at: Option<String>,
}

impl CapacityResult {
    /// Whether a verdict ranks this search: its warm-up settled and the user did not cut it
    /// short.
    pub fn ranked(&self) -> bool {
        !self.warmup_unsettled && !self.cut_short
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ContenderInfo {
    pub name: String,
    /// The contender an arm starts (the plan's `[arms]`), when this is an arm: `name` is the
    /// arm's, the rest its contender's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm_of: Option<String>,
    pub model: String,
    pub language: String,
    pub framework: String,
    /// The runtime it ran on, with its version ("openjdk version \"25.0.1\" ...", "Node.js
    /// v24.21.0", "go1.26.8"), when it could be asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    pub config: String,
    pub tunables: BTreeMap<String, String>,
    pub command: Vec<String>,
    pub startup_s: Option<f64>,
    pub verification: Option<Verification>,
    /// What its runtime detected at start and how the server sized itself (the contract's
    /// start-up line), when it ran on this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detected: Option<crate::services::detected::Detected>,
    /// Why the contender was not measured, when it was not.
    pub failure: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Ok,
    /// Stopped before its end (Ctrl-C, or a capacity probe given up once its SLO was clearly
    /// broken); its figures cover only the part that ran.
    Incomplete,
    /// The contender crashed, stopped answering, or failed start-up or verification.
    Failed,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    pub contender: String,
    pub scenario: String,
    /// 1-based repeat index.
    pub run: u32,
    pub status: RunStatus,
    pub failure: Option<String>,
    pub path: String,
    pub load: serde_json::Value,
    pub load_description: String,
    pub started_at: String,
    pub summary: Summary,
    pub driver: DriverReport,
    pub intervals: Vec<IntervalRow>,
    pub resources: Resources,
    /// HdrHistogram interval log of this run, relative to the results directory.
    pub histogram_log: Option<String>,
    /// The run's whole latency histogram (µs; HdrHistogram V2 + deflate, base64), so that
    /// percentiles over repeats come from merged histograms with results.json alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
    /// The same for every request due, failed and unanswered ones at the time they failed or
    /// were given up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram_all: Option<String>,
    /// With load from several hosts (`--hosts`): what each load host did, and which was lost
    /// when. The run's figures are those of all of them, merged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load_hosts: Vec<crate::driver::remote::HostShare>,
    /// What this kind of run has beyond the core: a mix's entries, a write check, faults,
    /// overload, delivery, a capacity probe (details.rs). Flat fields in results.json.
    #[serde(flatten)]
    pub details: Details,
    /// Garbage collection during the run, from the runtime's log (JVM, Go, Node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc: Option<GcReport>,
    /// The warm-up before this run: how long, and whether the contender had settled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<WarmupRecord>,
    /// On the first run after the contender was (re)started: what the start cost, from exec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_start: Option<super::cold_start::ColdStart>,
    /// Scenarios that call the downstream service (/enrich, /aggregate): its own counts of the
    /// calls made during the measured phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub downstream_calls: Option<DownstreamCalls>,
    /// Node contenders: the event loop's delay during the run (perf_hooks), per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_loop: Option<super::event_loop::EventLoopReport>,
    /// With --profile: the CPU profile of the measured run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<super::profile::ProfileRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CapacityResult {
    pub contender: String,
    pub scenario: String,
    pub repeat: u32,
    pub slo: Vec<String>,
    /// The highest rate at which every probe kept the SLO; None when even the first did not.
    pub capacity_rps: Option<f64>,
    /// The lowest rate above it at which a probe broke the SLO (None: --max-rate reached, or
    /// the search was cut short).
    pub failed_rps: Option<f64>,
    /// The capacity in words, with its uncertainty.
    pub verdict: String,
    /// "latency", "errors", another metric, or "driver" (what broke at the first failing rate).
    pub broke_first: Option<String>,
    /// Requests answered per second of the contender's CPU, at the capacity probe(s).
    pub per_cpu_second: Option<f64>,
    /// Capacity per GB of the contender's peak RSS at the capacity probe(s).
    pub per_gb_rss: Option<f64>,
    pub probes: usize,
    /// The search stopped where the driver could not offer the rate.
    #[serde(default)]
    pub driver_limited: bool,
    /// The warm-up before the search's first probe did not settle: the search enters no
    /// verdict (results written before this was kept read as settled).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warmup_unsettled: bool,
    /// The search was stopped by the user before it ended (`--resume` measures it again).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_short: bool,
}

impl Results {
    /// When each sitting began (the first start, then every `--resume`), in seconds since the
    /// epoch, in order; a time that cannot be read is left out.
    pub fn sitting_starts(&self) -> Vec<i64> {
        let mut starts: Vec<i64> = std::iter::once(&self.started_at)
            .chain(&self.resumed_at)
            .filter_map(|t| crate::util::clock::parse_rfc3339(t))
            .collect();
        starts.sort_unstable();
        starts
    }

    /// The round after which `scenario` was run no more, if it left the rounds early.
    pub fn left_after(&self, scenario: &str) -> Option<u32> {
        (self.verdicts.iter())
            .find(|v| v.scenario == scenario)
            .and_then(|v| v.left_after_round)
    }
}

impl ContenderInfo {
    /// What its runtime detected, in words, for the contenders tables ("-" when unknown).
    pub fn detected_words(&self) -> String {
        self.detected
            .as_ref()
            .map_or_else(|| "-".into(), |d| d.describe())
    }

    /// A contender of the plan, before it has started.
    pub fn of(
        m: &Manifest,
        tunables: &BTreeMap<String, String>,
        java: Option<&Path>,
    ) -> ContenderInfo {
        ContenderInfo {
            name: m.name.clone(),
            model: m.model.clone(),
            language: m.language.clone(),
            framework: m.framework.clone(),
            runtime: m.runtime_version(java),
            config: m.config.clone(),
            tunables: tunables.clone(),
            ..ContenderInfo::default()
        }
    }

    /// The name as the contenders' tables show it: an arm's with the contender it starts.
    pub fn label(&self) -> String {
        match &self.arm_of {
            Some(of) => format!("{} (arm of {of})", self.name),
            None => self.name.clone(),
        }
    }

    /// The server behind --url, which iobound neither starts nor verifies.
    pub fn external() -> ContenderInfo {
        ContenderInfo {
            name: "external".into(),
            model: "unknown".into(),
            language: "unknown".into(),
            framework: "an already running server (not started, verified or sampled by iobound)"
                .into(),
            ..ContenderInfo::default()
        }
    }
}

impl Run {
    /// From its start (its warm-up's) to the end of its measured window, in seconds since the
    /// epoch; None when its start cannot be read.
    pub fn span(&self) -> Option<(f64, f64)> {
        let t0 = crate::util::clock::parse_rfc3339(&self.started_at)? as f64;
        let warm = self.warmup.as_ref().map_or(0.0, |w| w.seconds);
        Some((t0, t0 + warm + self.summary.duration_s))
    }

    /// The round it belongs to: its own number, or for a capacity probe (numbered among the
    /// probes of its scenario) the search it was part of.
    pub fn round(&self) -> u32 {
        self.details.probe().map_or(self.run, |p| p.search)
    }

    /// A run with nothing measured yet: status failed until the measurement says otherwise, no
    /// failure given, started now.
    pub fn new(
        contender: &str,
        scenario: &str,
        run: u32,
        path: &str,
        load: serde_json::Value,
        load_description: &str,
    ) -> Run {
        Run {
            contender: contender.into(),
            scenario: scenario.into(),
            run,
            status: RunStatus::Failed,
            failure: None,
            path: path.into(),
            load,
            load_description: load_description.into(),
            started_at: now(),
            summary: Summary::default(),
            driver: DriverReport::default(),
            intervals: Vec::new(),
            resources: Resources::default(),
            histogram_log: None,
            histogram: None,
            histogram_all: None,
            load_hosts: Vec::new(),
            details: Details::default(),
            gc: None,
            warmup: None,
            cold_start: None,
            profile: None,
            event_loop: None,
            downstream_calls: None,
        }
    }
}

/// The downstream service's counts of the calls a contender made during a run: answered in
/// full, and cancelled (the contender closed the connection before the answer, as a fan-out
/// does with the calls still running when one fails). Calls still running when the run
/// ended are in neither.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DownstreamCalls {
    pub served: u64,
    pub cancelled: u64,
}
