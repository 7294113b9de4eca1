//! Experiment plans: which contenders, which scenarios, which load. Parsed from TOML (or built
//! from `iobound run` flags) and validated before anything starts, so that a typo costs one
//! clear error instead of a half-finished run.
//!
//! Holds: `file` (the TOML shapes), `validate`, `validate_machine` (CPUs, heap, corpus) and `load`
//! (the checks, per section), `kinds` (faults, overload and capacity settings), `fields` (one
//! field: durations, counts, percentages), `workload` (requests of a scenario: paths, `{seq}`
//! templates, mixes), `downstream` (the downstream service's behaviour), `profile` (a load
//! profile's length, level and words), `metrics` (every metric reported, declared once),
//! `thresholds`, `hosts` (inventories), `describe` (a plan in words, for --dry-run) and, here, the
//! validated model every later stage reads.
//! Uses: util only.

pub mod describe;
pub mod downstream;
mod fields;
pub mod file;
pub mod hosts;
pub(crate) mod kinds;
pub mod limits;
mod load;
pub mod metric_list;
pub mod metrics;
mod profile;
pub mod thresholds;
pub(crate) mod validate;
mod validate_machine;
pub mod workload;

pub use downstream::DownstreamPlan;

pub use file::*;
pub use kinds::OverloadRuns;
pub use load::MAX_RATE;
pub use workload::MixEntry;

use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

pub const DEFAULT_TIMEOUT: &str = "10s";
/// Runs of each contender x scenario when a plan does not say: the fewest with which a
/// difference can be tested (Mann-Whitney, 4 vs 4).
pub const DEFAULT_PLAN_RUNS: u32 = 4;
/// The most runs a side a plan (`runs = N`) or `--runs N` may ask for.
pub const MAX_FIXED_RUNS: u32 = 100;
/// The most runs a side `runs = "auto"` takes before calling a difference undecided.
pub const AUTO_MAX_RUNS: u32 = 12;
/// The longest a warm-up lasts when a plan does not say: long enough for a JVM on one CPU to
/// compile its hot paths (Spring MVC on /plaintext needed ~80 s here); it ends as soon as the
/// contender has settled.
pub const DEFAULT_WARMUP: &str = "120s";
/// How far a settled contender's answers a second, mean latency and CPU per answer may drift
/// over the settling window when a plan does not say (`warmup_band`).
pub const DEFAULT_WARMUP_BAND: &str = "5%";
/// The shortest warm-up: the trend is judged over this many seconds.
pub const DEFAULT_WARMUP_MIN: &str = "10s";
pub const DEFAULT_HEAP: &str = "512m";
/// GC logging every JVM contender gets: one line per collection on its output, with the time
/// since the JVM started (observe/gc.rs reads them back).
pub const JVM_GC_LOG: &str = "-Xlog:gc:stdout:uptime";

/// Connections per contender pool unless the plan says otherwise: HikariCP's default, and the
/// same for every driver so that the pool is not what differs.
pub const DEFAULT_DB_POOL: usize = 10;

/// Longest window the run gives a contender with `window = "auto"`, whatever its noise: 5
/// minutes. A load noisier than that allows is measured for this long, then judged too short and
/// left out (observe::steady_rule).
pub const MAX_WINDOW_S: usize = 300;

/// The most measured windows per start (`windows`): past this the start's own offset (its JIT
/// outcome, its heap layout) is what the mean still carries, and only more starts remove it.
pub const MAX_WINDOWS: u32 = 10;

/// Windows per start `windows = "auto"` measures before two starts have told it where the
/// noise is: enough to see the spread within a start.
pub const FIRST_WINDOWS: u32 = 3;

/// A downstream change at a time of the measured phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    #[serde(with = "secs")]
    pub at: Duration,
    /// The /_control query.
    pub downstream: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overload {
    pub factor: f64,
    #[serde(with = "secs")]
    pub duration: Duration,
    #[serde(with = "secs")]
    pub calm: Duration,
}

/// How load is offered.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(tag = "model", rename_all = "lowercase")]
pub enum Profile {
    /// `users` concurrent users, plus `step_users` more at each of `steps` further levels;
    /// every level lasts `level` (Gatling's incrementConcurrentUsers). With a `stay`, each
    /// user leaves that long after joining, so waves overlap instead of piling up (zero: every
    /// user stays to the end).
    Closed {
        users: u32,
        step_users: u32,
        steps: u32,
        #[serde(with = "secs")]
        level: Duration,
        #[serde(with = "secs")]
        think: Duration,
        #[serde(with = "secs", default, skip_serializing_if = "Duration::is_zero")]
        stay: Duration,
        /// Each level's users join evenly over this span instead of all at once, so that a
        /// fixed wait does not keep them in step (zero: at once).
        #[serde(with = "secs", default, skip_serializing_if = "Duration::is_zero")]
        spread: Duration,
    },
    /// Arrivals per second rising linearly from `rate` to `ramp_to` (constant when equal);
    /// latency counts from each request's intended send time.
    Open {
        rate: f64,
        ramp_to: f64,
        #[serde(with = "secs")]
        duration: Duration,
        max_connections: u32,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Load {
    #[serde(flatten)]
    pub profile: Profile,
    #[serde(with = "secs")]
    pub timeout: Duration,
    pub connection_close: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Scenario {
    pub name: String,
    /// The path, or for a mix a description of it ("mix: 80 GET /messages/{seq:1..10000}, ...").
    pub path: String,
    /// The mix's entries; empty for a single path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<MixEntry>,
    /// Records through Kafka instead of HTTP requests.
    #[serde(default)]
    pub pipeline: bool,
    #[serde(with = "secs")]
    pub warmup: Duration,
    pub load: Load,
    /// The downstream service's settings for this scenario, as its /_control query; sent before
    /// the warm-up, so every scenario starts from a known behaviour.
    pub downstream: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Event>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overload: Option<Overload>,
    /// Limits each contender must keep here: the plan's, with the scenario's own in their place.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<thresholds::Threshold>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Capacity>,
    /// The contender is started afresh before this scenario.
    #[serde(default)]
    pub restart: bool,
}

/// A capacity search: open-model probes from the scenario's rate, `growth` times higher each
/// until the SLO breaks, then bisection to `precision`, then `repeats` probes at the final
/// passing and failing rates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Capacity {
    pub slo: Vec<thresholds::Threshold>,
    pub max_rate: f64,
    pub growth: f64,
    /// A fraction: 0.05 for 5%.
    pub precision: f64,
    pub repeats: u32,
    /// True when the SLO named no errors limit and DEFAULT_ERRORS_LIMIT was added: without
    /// one, a rate at which requests fail could pass on the latency of the rest.
    #[serde(default)]
    pub default_errors: bool,
}

/// The errors limit a capacity SLO gets when it names none.
pub const DEFAULT_ERRORS_LIMIT: &str = "errors<=0.1%";

impl Capacity {
    /// The latency objective a probe is stopped early against (10 times it for 3 s): the
    /// tightest latency limit of the SLO, in ms.
    pub fn latency_objective_ms(&self) -> Option<f64> {
        self.slo
            .iter()
            .filter(|t| t.unit == thresholds::Unit::Millis)
            .map(|t| t.limit)
            .reduce(f64::min)
    }
}

/// How automatic repeats stop: when every headline difference is decided, after MAX_RUNS
/// runs, or once `budget` would be exceeded by another round.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Sequential {
    #[serde(with = "opt_secs")]
    pub budget: Option<Duration>,
    /// The equivalence margin (0.05 = 5%).
    pub margin: f64,
}

mod opt_secs {
    use serde::Serializer;
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub name: String,
    pub description: String,
    pub contenders: Vec<String>,
    /// Arm name -> the contender it starts (`[arms]`); left out of results.json when none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub arms: BTreeMap<String, String>,
    /// Rounds to run (with `sequential`, the most).
    pub runs: u32,
    /// `runs = "auto"`: stop repeating once every headline difference is decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequential: Option<Sequential>,
    /// The equivalence margin (0.05 = 5%) of a fixed number of runs, when the plan sets one
    /// (automatic repeats keep theirs in `sequential`; without either, 5%). Left out of
    /// results.json when unset, so that a plan measured before it existed reads the same on
    /// `--resume`.
    #[serde(rename = "margin", skip_serializing_if = "Option::is_none")]
    pub fixed_margin: Option<f64>,
    /// A warm-up lasts at least this, and at most its scenario's `warmup`, ending when the
    /// contender has settled within `warmup_band` (a fraction).
    #[serde(with = "secs")]
    pub warmup_min: Duration,
    pub warmup_band: f64,
    /// Whether a led-in window is lengthened to what its warm-up's noise needs (`window =
    /// "auto"`). Left out of results.json when unset, so that earlier plans resume unchanged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub window_auto: bool,
    /// Measured windows per start (`windows = k`), 1 when unset; left out of results.json then.
    #[serde(skip_serializing_if = "is_one")]
    pub windows: u32,
    /// `windows = "auto"`: as many as stats::windows finds best for each contender and scenario.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub windows_auto: bool,
    pub jvm_heap: String,
    pub jvm_flags: Vec<String>,
    pub contender_cpus: Vec<usize>,
    pub driver_cpus: Vec<usize>,
    /// Where PostgreSQL, Kafka and the downstream service run.
    pub services_cpus: Vec<usize>,
    pub driver_threads: usize,
    pub tunables: BTreeMap<String, BTreeMap<String, String>>,
    pub scenarios: Vec<Scenario>,
    /// The /hash corpus: the plan's when a scenario requests /hash, else the small
    /// conformance corpus.
    pub corpus: CorpusSpec,
    pub downstream: DownstreamPlan,
    /// Connections in each contender's database pool.
    pub db_pool: usize,
    /// Partitions of the pipeline topics.
    pub kafka_partitions: u32,
    /// A CPU profile of each contender during every measured HTTP run (`--profile`).
    #[serde(default)]
    pub profile: bool,
    /// CPU quotas and memory limits (`[limits]`, `--cpus`, `--memory`): each limited
    /// contender runs in a cgroup of its own.
    #[serde(skip_serializing_if = "is_unlimited")]
    pub limits: limits::PlanLimits,
}

fn is_unlimited(l: &limits::PlanLimits) -> bool {
    !l.any()
}

impl Plan {
    /// The contender (its manifest's name) that plan contender `name` starts: an arm's
    /// contender, or the name itself.
    pub fn contender_of<'a>(&'a self, name: &'a str) -> &'a str {
        self.arms.get(name).map_or(name, String::as_str)
    }

    /// Whether a Kafka broker is needed.
    pub fn has_pipeline(&self) -> bool {
        self.scenarios.iter().any(|s| s.pipeline)
    }

    /// Whether any scenario has a threshold to check.
    pub fn has_thresholds(&self) -> bool {
        self.scenarios.iter().any(|s| !s.thresholds.is_empty())
    }

    /// Whether a scenario calls /messages (and so needs PostgreSQL).
    pub fn uses_database(&self) -> bool {
        self.scenarios.iter().any(|s| {
            s.path.starts_with("/messages") || s.mix.iter().any(|m| m.path.starts_with("/messages"))
        })
    }
}

pub mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom)
    }
}

/// JVM flags every Java contender gets, so that heap and GC never differ between them. A JVM
/// out of memory exits (and the run is reported failed) instead of limping on unanswered.
pub fn default_jvm_flags() -> Vec<String> {
    [
        "-XX:+UseG1GC",
        "-XX:+ExitOnOutOfMemoryError",
        "--enable-native-access=ALL-UNNAMED",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The /hash corpus: `files` files of `size` bytes generated from `seed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CorpusSpec {
    pub files: u32,
    pub size: usize,
    pub seed: u64,
}

impl CorpusSpec {
    /// What the contract's conformance checks use when a plan measures no /hash scenario.
    pub const CONFORMANCE_FILES: u32 = 64;
    pub const DEFAULT_FILES: u32 = 4_000;
    pub const DEFAULT_SIZE: usize = 200 * 1024;
    pub const DEFAULT_SEED: u64 = 1;
}

impl Default for CorpusSpec {
    fn default() -> CorpusSpec {
        CorpusSpec {
            files: Self::DEFAULT_FILES,
            size: Self::DEFAULT_SIZE,
            seed: Self::DEFAULT_SEED,
        }
    }
}

impl Plan {
    /// Heap and flags of every JVM contender: the same for all of them, and every one logs its
    /// collections to its output the same way (read back per run) unless the plan's flags
    /// already log GC.
    pub fn jvm_flags(&self) -> Vec<String> {
        let mut f = vec![
            format!("-Xms{}", self.jvm_heap),
            format!("-Xmx{}", self.jvm_heap),
        ];
        f.extend(self.jvm_flags.iter().cloned());
        if !f.iter().any(|x| x.starts_with("-Xlog:gc")) {
            f.push(JVM_GC_LOG.to_string());
        }
        f
    }
}

#[cfg(test)]
mod tests;

fn is_one(n: &u32) -> bool {
    *n == 1
}
