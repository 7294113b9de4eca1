//! The plan as written in TOML (or built from `iobound run` flags): every section's shape, with
//! unknown keys rejected so that typos surface. `validate` turns it into the model in mod.rs.

use super::workload::MixEntry;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The plan as written in TOML. Unknown keys are rejected so that typos surface.
#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    pub name: Option<String>,
    pub description: Option<String>,
    #[serde(default)]
    pub contenders: Vec<String>,
    /// Arms: names of their own for a contender under settings of its own, run in the same
    /// rounds as the others, e.g. `[arms] mvc-1000-threads = "spring-mvc"` with
    /// `[tunables.mvc-1000-threads] threads = 1000`. Each arm is listed in `contenders`.
    #[serde(default)]
    pub arms: BTreeMap<String, String>,
    /// Repeats of each contender x scenario: a number, or "auto" (repeat until every headline
    /// difference is decided, at most 12 runs, within `budget`).
    pub runs: Option<RunsFile>,
    /// With `runs = "auto"`: the most the repeats may take, e.g. "15m" (no limit by default
    /// beyond 12 runs).
    pub budget: Option<String>,
    /// The equivalence margin of verdicts (default "5%"): a difference whose interval lies
    /// within it is "equivalent".
    pub margin: Option<String>,
    /// The longest a warm-up may last (a scenario's `warmup` replaces it): it ends earlier once
    /// the contender has settled (see `warmup_min`, `warmup_band`).
    pub warmup: Option<String>,
    /// The shortest warm-up (default 10s): a contender is not called settled before.
    pub warmup_min: Option<String>,
    /// How far throughput, mean latency and CPU per request may still drift over the last
    /// 10 seconds (Theil-Sen slope over the window) to call the contender settled (default
    /// "5%").
    pub warmup_band: Option<String>,
    /// "fixed" (default): each scenario's measured window lasts its `duration`. "auto": a
    /// window led in from its warm-up lasts as long as the noise of the warm-up's last seconds
    /// needs for a 20% move in it to be seen (at least `duration`, at most 5 minutes).
    pub window: Option<String>,
    /// Measured windows per start (default 1): k consecutive windows of `duration` in one
    /// process, as one window k times as long, each start then one value of its windows' mean;
    /// "auto": as many as the noise between starts and between windows makes worth their cost
    /// (stats/windows.rs), 3 until two starts have told. Windows led in from their warm-up only.
    pub windows: Option<RunsFile>,
    #[serde(default)]
    pub jvm: JvmFile,
    #[serde(default)]
    pub cpus: CpusFile,
    pub driver_threads: Option<usize>,
    /// Per contender: tunable name -> value, e.g. `[tunables.spring-mvc] threads = 500`.
    #[serde(default)]
    pub tunables: BTreeMap<String, BTreeMap<String, toml::Value>>,
    #[serde(default, rename = "scenario")]
    pub scenarios: Vec<ScenarioFile>,
    #[serde(default)]
    pub corpus: CorpusFile,
    #[serde(default)]
    pub downstream: DownstreamFile,
    #[serde(default)]
    pub database: DatabaseFile,
    #[serde(default)]
    pub kafka: KafkaFile,
    /// Limits every contender must keep in every scenario, e.g. `p99 = "200ms"`,
    /// `errors = "0.1%"`, `throughput = ">= 5000"` (metrics: see plan/thresholds.rs).
    #[serde(default)]
    pub thresholds: BTreeMap<String, toml::Value>,
    /// A CPU profile of each contender during every measured HTTP run (as `--profile`).
    pub profile: Option<bool>,
    /// A CPU quota and a memory limit, as a container gives: `cpus = 1`, `memory = "512m"`,
    /// and `[limits.NAME]` for one contender (plan/limits.rs).
    #[serde(default)]
    pub limits: BTreeMap<String, toml::Value>,
}

/// `runs = 4` or `runs = "auto"`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum RunsFile {
    Count(i64),
    Word(String),
}

impl RunsFile {
    /// `runs = "auto"`: repeat until every headline difference is decided.
    pub fn is_auto(&self) -> bool {
        matches!(self, RunsFile::Word(w) if w.trim() == "auto")
    }
}

/// `[kafka]`: the broker behind pipeline scenarios.
#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct KafkaFile {
    /// Partitions of `input` and `output` (default 8).
    pub partitions: Option<i64>,
}

/// `[database]`: the PostgreSQL behind /messages.
#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct DatabaseFile {
    /// Connections in each contender's pool (IOBOUND_DB_POOL).
    pub pool: Option<i64>,
}

/// `[corpus]`: the files behind /hash.
#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct CorpusFile {
    pub files: Option<i64>,
    pub size_kb: Option<i64>,
    pub seed: Option<u64>,
}

/// `[downstream]`: the service behind /enrich, and the contenders' timeout calling it.
#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct DownstreamFile {
    pub latency: Option<String>,
    pub error_rate: Option<f64>,
    pub stall_prob: Option<f64>,
    pub stall_for: Option<String>,
    pub timeout: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct JvmFile {
    pub heap: Option<String>,
    pub flags: Option<Vec<String>>,
}

#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct CpusFile {
    pub contender: Option<String>,
    pub driver: Option<String>,
    /// PostgreSQL, Kafka and the downstream service (default: the CPUs neither the contender
    /// nor the driver uses when the machine has >= 4, else the driver's).
    #[serde(default)]
    pub services: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub name: String,
    /// One path, requested with GET...
    #[serde(default)]
    pub path: Option<String>,
    /// ...or a weighted mix of requests: `{ weight, method, path, body }`...
    #[serde(default)]
    pub mix: Option<Vec<MixEntry>>,
    /// ...or, with `pipeline = true`, records through Kafka: `input` -> contender -> `output`.
    #[serde(default)]
    pub pipeline: bool,
    pub warmup: Option<String>,
    pub load: LoadFile,
    /// How the downstream service behaves during this scenario (unset fields: the plan's).
    #[serde(default)]
    pub downstream: Option<DownstreamFile>,
    /// Changes of the downstream service at set times of the measured phase, e.g. a latency
    /// spike and its end: `[[scenario.event]] at = "10s"` with `downstream = { ... }`.
    #[serde(default, rename = "event")]
    pub events: Vec<EventFile>,
    /// Overload: the load above is a closed-model probe of the contender's capacity; then an
    /// open model runs at half of it, at `factor` times it, and at half again.
    #[serde(default)]
    pub overload: Option<OverloadFile>,
    /// Limits for this scenario, replacing the plan's for the metrics it names.
    #[serde(default)]
    pub thresholds: BTreeMap<String, toml::Value>,
    /// Capacity search: the highest open-model rate at which the SLO holds. The scenario's load
    /// (open, `rate` the first probe's, `duration` each probe's length) is where it starts.
    #[serde(default)]
    pub capacity: Option<CapacityFile>,
    /// Start the contender afresh before this scenario (default false: one process serves
    /// every scenario of a round), so that what an earlier scenario left behind (a queue of
    /// abandoned requests, a full heap) cannot weigh on this one.
    pub restart: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct CapacityFile {
    /// The objective, as thresholds: e.g. ["p99<=200ms", "errors<=0.1%"].
    #[serde(default)]
    pub slo: Vec<String>,
    /// The search never offers more (default 50000 req/s).
    pub max_rate: Option<f64>,
    /// Each probe's rate times this until the SLO breaks (default 2).
    pub growth: Option<f64>,
    /// Bisection stops when the passing and failing rates are this close (default "5%").
    pub precision: Option<String>,
    /// Probes at the final passing and failing rates, each (default 3).
    pub repeats: Option<i64>,
}

#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct EventFile {
    pub at: String,
    pub downstream: DownstreamFile,
}

#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct OverloadFile {
    /// Times the probed capacity (default 5).
    pub factor: Option<f64>,
    /// Length of the overload phase (default 20s).
    pub duration: Option<String>,
    /// Length of the half-capacity phases before and after it (default 15s).
    pub calm: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct LoadFile {
    /// "closed" (users) or "open" (arrival rate).
    pub model: String,
    pub users: Option<i64>,
    pub step_users: Option<i64>,
    pub steps: Option<i64>,
    pub step_duration: Option<String>,
    pub think_time: Option<String>,
    /// How long each user of a stepped closed load stays after joining.
    pub stay: Option<String>,
    /// How long each level's users take to join, evenly (closed model).
    pub spread: Option<String>,
    pub rate: Option<f64>,
    pub ramp_to: Option<f64>,
    pub max_connections: Option<i64>,
    pub duration: Option<String>,
    pub timeout: Option<String>,
    pub connection_close: Option<bool>,
}

impl PlanFile {
    pub fn load(path: &Path) -> Result<PlanFile> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read plan {}", path.display()))?;
        toml::from_str(&text)
            .map_err(|e| anyhow::anyhow!("plan {}: {}", path.display(), e.to_string().trim_end()))
    }
}
