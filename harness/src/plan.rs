//! Experiment plans: which contenders, which scenarios, which load. Parsed from TOML (or built
//! from `iobound run` flags) and validated before anything starts, so that a typo costs one
//! clear error instead of a half-finished run.

use crate::util::{parse_cpu_list, parse_duration};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

pub const DEFAULT_TIMEOUT: &str = "10s";
pub const DEFAULT_PLAN_RUNS: u32 = 3;
pub const DEFAULT_WARMUP: &str = "5s";
pub const DEFAULT_HEAP: &str = "512m";

/// The plan as written in TOML. Unknown keys are rejected so that typos surface.
#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    pub name: Option<String>,
    pub description: Option<String>,
    #[serde(default)]
    pub contenders: Vec<String>,
    pub runs: Option<u32>,
    pub warmup: Option<String>,
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

/// Connections per contender pool unless the plan says otherwise: HikariCP's default, and the
/// same for every driver so that the pool is not what differs.
pub const DEFAULT_DB_POOL: usize = 10;

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

impl DownstreamPlan {
    pub fn behaviour(&self) -> Result<crate::downstream::Behaviour> {
        crate::downstream::Behaviour::new(&self.latency, &self.error_rate.to_string(), &self.stall_prob.to_string(), &self.stall_for)
    }

    /// These settings with the fields `over` sets replaced (a scenario's or an event's changes).
    pub fn with(&self, over: &DownstreamFile) -> DownstreamPlan {
        DownstreamPlan {
            latency: over.latency.clone().unwrap_or_else(|| self.latency.clone()),
            error_rate: over.error_rate.unwrap_or(self.error_rate),
            stall_prob: over.stall_prob.unwrap_or(self.stall_prob),
            stall_for: over.stall_for.clone().unwrap_or_else(|| self.stall_for.clone()),
            timeout: self.timeout,
        }
    }

    /// The settings as a query for the downstream's /_control.
    pub fn control_query(&self) -> String {
        format!("latency={}&error_rate={}&stall_prob={}&stall_for={}", self.latency, self.error_rate, self.stall_prob, self.stall_for)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct DownstreamPlan {
    pub latency: String,
    pub error_rate: f64,
    pub stall_prob: f64,
    pub stall_for: String,
    #[serde(with = "secs")]
    pub timeout: Duration,
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
    pub mix: Option<Vec<crate::driver::MixEntry>>,
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
    pub rate: Option<f64>,
    pub ramp_to: Option<f64>,
    pub max_connections: Option<i64>,
    pub duration: Option<String>,
    pub timeout: Option<String>,
    pub connection_close: Option<bool>,
}

/// How load is offered.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "model", rename_all = "lowercase")]
pub enum Profile {
    /// `users` concurrent users, plus `step_users` more at each of `steps` further levels;
    /// every level lasts `level` (Gatling's incrementConcurrentUsers).
    Closed { users: u32, step_users: u32, steps: u32, #[serde(with = "secs")] level: Duration, #[serde(with = "secs")] think: Duration },
    /// Arrivals per second rising linearly from `rate` to `ramp_to` (constant when equal);
    /// latency counts from each request's intended send time.
    Open { rate: f64, ramp_to: f64, #[serde(with = "secs")] duration: Duration, max_connections: u32 },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
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
    pub mix: Vec<crate::driver::MixEntry>,
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
}

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub name: String,
    pub description: String,
    pub contenders: Vec<String>,
    pub runs: u32,
    pub jvm_heap: String,
    pub jvm_flags: Vec<String>,
    pub contender_cpus: Vec<usize>,
    pub driver_cpus: Vec<usize>,
    pub driver_threads: usize,
    pub tunables: BTreeMap<String, BTreeMap<String, String>>,
    pub scenarios: Vec<Scenario>,
    /// The /hash corpus: the plan's when a scenario requests /hash, else the small
    /// conformance corpus.
    pub corpus: crate::corpus::Spec,
    pub downstream: DownstreamPlan,
    /// Connections in each contender's database pool.
    pub db_pool: usize,
    /// Partitions of the pipeline topics.
    pub kafka_partitions: u32,
}

impl Plan {
    /// Whether a Kafka broker is needed.
    pub fn has_pipeline(&self) -> bool {
        self.scenarios.iter().any(|s| s.pipeline)
    }
}

pub mod secs {
    use serde::Serializer;
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
}

/// JVM flags every Java contender gets, so that heap and GC never differ between them. A JVM
/// out of memory exits (and the run is reported failed) instead of limping on unanswered.
pub fn default_jvm_flags() -> Vec<String> {
    ["-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError", "--enable-native-access=ALL-UNNAMED"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

impl Profile {
    /// Length of the measured phase.
    pub fn duration(&self) -> Duration {
        match self {
            Profile::Closed { steps, level, .. } => *level * (steps + 1),
            Profile::Open { duration, .. } => *duration,
        }
    }

    /// Users (closed) or arrival rate per second (open) at time `t` into the run.
    pub fn target_at(&self, t: Duration) -> f64 {
        match self {
            Profile::Closed { users, step_users, steps, level, .. } => {
                let k = ((t.as_secs_f64() / level.as_secs_f64()) as u32).min(*steps);
                f64::from(users + k * step_users)
            }
            Profile::Open { rate, ramp_to, duration, .. } => {
                let f = (t.as_secs_f64() / duration.as_secs_f64()).min(1.0);
                rate + (ramp_to - rate) * f
            }
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Profile::Closed { users, step_users, steps, level, think } => {
                let mut s = if *steps == 0 {
                    format!("closed, {users} users for {}s", level.as_secs_f64())
                } else {
                    format!(
                        "closed, {users} -> {} users (+{step_users} every {}s)",
                        users + step_users * steps,
                        level.as_secs_f64()
                    )
                };
                if !think.is_zero() {
                    s.push_str(&format!(", think {}ms", think.as_millis()));
                }
                s
            }
            Profile::Open { rate, ramp_to, duration, .. } => {
                if rate == ramp_to {
                    format!("open, {rate} req/s for {}s", duration.as_secs_f64())
                } else {
                    format!("open, {rate} -> {ramp_to} req/s over {}s", duration.as_secs_f64())
                }
            }
        }
    }
}

fn field_duration(what: &str, text: &str) -> Result<Duration> {
    parse_duration(text).with_context(|| format!("{what}: invalid duration"))
}

fn positive_u32(what: &str, v: Option<i64>, default: Option<u32>, fix: &str) -> Result<u32> {
    match (v, default) {
        (None, Some(d)) => Ok(d),
        (None, None) => bail!("{what} is missing; {fix}"),
        (Some(n), _) if n < 0 => bail!("{what} must not be negative (got {n}); {fix}"),
        (Some(n), _) if n > 1_000_000 => bail!("{what} = {n} is beyond 1,000,000; {fix}"),
        (Some(n), _) => Ok(n as u32),
    }
}

impl LoadFile {
    pub fn validate(&self, at: &str) -> Result<Load> {
        let timeout = field_duration(&format!("{at}.timeout"), self.timeout.as_deref().unwrap_or(DEFAULT_TIMEOUT))?;
        if timeout.is_zero() {
            bail!("{at}.timeout must be above zero; e.g. timeout = \"10s\"");
        }
        let profile = match self.model.as_str() {
            "closed" => self.closed(at)?,
            "open" => self.open(at)?,
            "" => bail!("{at}.model is missing; set model = \"closed\" (users) or \"open\" (arrival rate)"),
            other => bail!("{at}.model = {other:?} is unknown; use \"closed\" (users) or \"open\" (arrival rate)"),
        };
        Ok(Load { profile, timeout, connection_close: self.connection_close.unwrap_or(false) })
    }

    fn closed(&self, at: &str) -> Result<Profile> {
        for (set, name) in [(self.rate.is_some(), "rate"), (self.ramp_to.is_some(), "ramp_to"), (self.max_connections.is_some(), "max_connections")] {
            if set {
                bail!("{at}.{name} applies to the open model only; remove it or set model = \"open\"");
            }
        }
        let users = positive_u32(&format!("{at}.users"), self.users, None, "set the number of concurrent users, e.g. users = 64")?;
        let step_users = positive_u32(&format!("{at}.step_users"), self.step_users, Some(0), "users added at each step")?;
        let steps = positive_u32(&format!("{at}.steps"), self.steps, Some(0), "number of steps after the first level")?;
        if users == 0 && step_users == 0 {
            bail!("{at}.users is 0 and no step_users are added: nothing would be sent; set users >= 1");
        }
        let level = match (steps, &self.step_duration, &self.duration) {
            (0, None, Some(d)) | (0, Some(d), None) => field_duration(&format!("{at}.duration"), d)?,
            (0, Some(_), Some(_)) => bail!("{at}: give either duration or step_duration, not both"),
            (_, Some(d), None) => field_duration(&format!("{at}.step_duration"), d)?,
            (_, _, Some(_)) => bail!("{at}.duration conflicts with steps: the run lasts (steps + 1) x step_duration; remove duration"),
            (_, None, None) => bail!("{at}.step_duration is missing; e.g. step_duration = \"10s\""),
        };
        if level.is_zero() {
            bail!("{at}: each level must last more than 0 s");
        }
        let think = field_duration(&format!("{at}.think_time"), self.think_time.as_deref().unwrap_or("0s"))?;
        Ok(Profile::Closed { users, step_users, steps, level, think })
    }

    fn open(&self, at: &str) -> Result<Profile> {
        for (set, name) in [(self.users.is_some(), "users"), (self.step_users.is_some(), "step_users"), (self.steps.is_some(), "steps"), (self.think_time.is_some(), "think_time")] {
            if set {
                bail!("{at}.{name} applies to the closed model only; remove it or set model = \"closed\"");
            }
        }
        let rate = self.rate.with_context(|| format!("{at}.rate is missing; set the arrival rate in requests per second, e.g. rate = 1000"))?;
        if !(rate.is_finite() && rate > 0.0) {
            bail!("{at}.rate must be a positive number of requests per second (got {rate})");
        }
        let ramp_to = self.ramp_to.unwrap_or(rate);
        if !(ramp_to.is_finite() && ramp_to > 0.0) {
            bail!("{at}.ramp_to must be a positive rate (got {ramp_to}); it is the rate reached at the end of the run");
        }
        let duration = field_duration(
            &format!("{at}.duration"),
            self.duration.as_deref().with_context(|| format!("{at}.duration is missing; e.g. duration = \"30s\""))?,
        )?;
        if duration.is_zero() {
            bail!("{at}.duration must be above zero");
        }
        let max_connections = positive_u32(&format!("{at}.max_connections"), self.max_connections, Some(10_000), "connections the driver may open")?;
        if max_connections == 0 {
            bail!("{at}.max_connections must be at least 1");
        }
        Ok(Profile::Open { rate, ramp_to, duration, max_connections })
    }
}

impl PlanFile {
    pub fn load(path: &Path) -> Result<PlanFile> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read plan {}", path.display()))?;
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("plan {}: {}", path.display(), e.to_string().trim_end()))
    }

    pub fn validate(&self) -> Result<Plan> {
        if self.contenders.is_empty() {
            bail!("plan.contenders is empty; list at least one, e.g. contenders = [\"spring-mvc\"] (see `iobound list`)");
        }
        if self.scenarios.is_empty() {
            bail!("the plan has no [[scenario]]; add one with name, path and [scenario.load]");
        }
        // Plans repeat each contender x scenario three times unless they say otherwise; ad hoc
        // runs from flags set one.
        let runs = self.runs.unwrap_or(DEFAULT_PLAN_RUNS);
        if runs == 0 || runs > 100 {
            bail!("plan.runs = {runs} is out of range; use 1..=100");
        }
        let d = &self.downstream;
        let downstream = DownstreamPlan {
            latency: d.latency.clone().unwrap_or_else(|| "fixed:100ms".into()),
            error_rate: d.error_rate.unwrap_or(0.0),
            stall_prob: d.stall_prob.unwrap_or(0.0),
            stall_for: d.stall_for.clone().unwrap_or_else(|| "10s".into()),
            timeout: field_duration("downstream.timeout", d.timeout.as_deref().unwrap_or("2s"))?,
        };
        downstream.behaviour().map_err(|e| anyhow::anyhow!("downstream: {e:#}"))?;
        if downstream.timeout.is_zero() || downstream.timeout > Duration::from_secs(60) {
            bail!("downstream.timeout must be between 1ms and 60s (default 2s)");
        }
        let default_warmup = field_duration("plan.warmup", self.warmup.as_deref().unwrap_or(DEFAULT_WARMUP))?;
        let mut scenarios = Vec::new();
        for (i, s) in self.scenarios.iter().enumerate() {
            let at = format!("scenario[{i}] {:?}", s.name);
            if s.name.trim().is_empty() || !s.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                bail!("{at}: name must be non-empty and use only letters, digits, '-' and '_'");
            }
            if scenarios.iter().any(|x: &Scenario| x.name == s.name) {
                bail!("{at}: duplicate scenario name; give each scenario its own name");
            }
            let (path, mix) = match (&s.path, &s.mix) {
                _ if s.pipeline && (s.path.is_some() || s.mix.is_some()) => bail!("{at}: a pipeline scenario has no path or mix (records go through Kafka)"),
                _ if s.pipeline => ("kafka: input -> enrich -> output".to_string(), Vec::new()),
                (Some(p), None) => {
                    check_path(&format!("{at}.path"), p)?;
                    (p.clone(), Vec::new())
                }
                (None, Some(mix)) => (check_mix(&at, mix)?, mix.clone()),
                (Some(_), Some(_)) => bail!("{at}: give either path or mix, not both"),
                (None, None) => bail!("{at}: no path; add path = \"/delay?ms=100\" (or a mix = [{{ weight, method, path, body }}, ...])"),
            };
            let warmup = match &s.warmup {
                Some(w) => field_duration(&format!("{at}.warmup"), w)?,
                None => default_warmup,
            };
            let load = s.load.validate(&format!("{at}.load"))?;
            if s.pipeline && !matches!(load.profile, Profile::Open { rate, ramp_to, .. } if rate == ramp_to) {
                bail!("{at}.load: a pipeline scenario produces records at a fixed rate: model = \"open\" with rate (and no ramp_to)");
            }
            let over = s.downstream.clone().unwrap_or_default();
            if over.timeout.is_some() {
                bail!("{at}.downstream.timeout: the contenders' timeout is set once, in the plan's [downstream]");
            }
            let merged = downstream.with(&over);
            merged.behaviour().map_err(|e| anyhow::anyhow!("{at}.downstream: {e:#}"))?;
            let mut events = Vec::new();
            for (k, e) in s.events.iter().enumerate() {
                let here = format!("{at}.event[{k}]");
                let when = field_duration(&format!("{here}.at"), &e.at)?;
                if when >= load.profile.duration() {
                    bail!("{here}.at = {:?} is not inside the measured phase ({}s); choose a time before its end", e.at, load.profile.duration().as_secs());
                }
                if events.last().is_some_and(|p: &Event| p.at >= when) {
                    bail!("{here}.at = {:?} must come after the event before it", e.at);
                }
                if e.downstream.timeout.is_some() {
                    bail!("{here}.downstream.timeout: the contenders' timeout is set once, in the plan's [downstream]");
                }
                let changed = merged.with(&e.downstream);
                changed.behaviour().map_err(|e| anyhow::anyhow!("{here}.downstream: {e:#}"))?;
                events.push(Event { at: when, downstream: changed.control_query() });
            }
            let overload = match &s.overload {
                None => None,
                Some(o) => {
                    if !matches!(load.profile, Profile::Closed { step_users: 0, .. }) {
                        bail!("{at}.overload: the scenario's load is the capacity probe and must be a closed model without steps, e.g. model = \"closed\", users = 256, duration = \"10s\"");
                    }
                    let factor = o.factor.unwrap_or(5.0);
                    if !(1.0..=100.0).contains(&factor) {
                        bail!("{at}.overload.factor = {factor} is out of range; use 1..=100 (times the probed capacity, default 5)");
                    }
                    Some(Overload {
                        factor,
                        duration: field_duration(&format!("{at}.overload.duration"), o.duration.as_deref().unwrap_or("20s"))?,
                        calm: field_duration(&format!("{at}.overload.calm"), o.calm.as_deref().unwrap_or("15s"))?,
                    })
                }
            };
            if overload.is_some() && !events.is_empty() {
                bail!("{at}: give either events or overload, not both");
            }
            if s.pipeline && overload.is_some() {
                bail!("{at}.overload: not available for pipeline scenarios");
            }
            scenarios.push(Scenario { name: s.name.clone(), path, mix, pipeline: s.pipeline, warmup, load, downstream: merged.control_query(), events, overload });
        }
        let contender_cpus = parse_cpu_list(self.cpus.contender.as_deref().unwrap_or("0")).context("plan.cpus.contender")?;
        let default_driver = if crate::util::online_cpus() > 1 { "1" } else { "0" };
        let driver_cpus = parse_cpu_list(self.cpus.driver.as_deref().unwrap_or(default_driver)).context("plan.cpus.driver")?;
        let driver_threads = self.driver_threads.unwrap_or(driver_cpus.len());
        if driver_threads == 0 || driver_threads > 64 {
            bail!("plan.driver_threads = {driver_threads} is out of range; use 1..=64 (one per driver CPU is usual)");
        }
        let heap = self.jvm.heap.clone().unwrap_or_else(|| DEFAULT_HEAP.to_string());
        if !heap.trim_end_matches(['m', 'g', 'M', 'G']).parse::<u64>().is_ok_and(|n| n > 0) {
            bail!("plan.jvm.heap = {heap:?} is not a heap size; write e.g. \"512m\" or \"2g\"");
        }
        let mut tunables = BTreeMap::new();
        for (contender, values) in &self.tunables {
            let mut m = BTreeMap::new();
            for (k, v) in values {
                let text = match v {
                    toml::Value::String(s) => s.clone(),
                    toml::Value::Integer(i) => i.to_string(),
                    toml::Value::Float(f) => f.to_string(),
                    toml::Value::Boolean(b) => b.to_string(),
                    _ => bail!("tunables.{contender}.{k} must be a string, number or boolean"),
                };
                m.insert(k.clone(), text);
            }
            tunables.insert(contender.clone(), m);
        }
        let c = &self.corpus;
        let files = c.files.unwrap_or(i64::from(crate::corpus::DEFAULT_FILES));
        if !(1..=1_000_000).contains(&files) {
            bail!("corpus.files = {files} is out of range; use 1..=1000000 (default {})", crate::corpus::DEFAULT_FILES);
        }
        let size_kb = c.size_kb.unwrap_or((crate::corpus::DEFAULT_SIZE / 1024) as i64);
        if !(1..=65_536).contains(&size_kb) {
            bail!("corpus.size_kb = {size_kb} is out of range; use 1..=65536 (default 200)");
        }
        let hashing = self.scenarios.iter().filter_map(|s| s.path.as_deref()).any(|p| p == "/hash" || p.starts_with("/hash?"));
        let db_pool = self.database.pool.unwrap_or(DEFAULT_DB_POOL as i64);
        if !(1..=100).contains(&db_pool) {
            bail!("database.pool = {db_pool} is out of range; use 1..=100 connections per contender (default {DEFAULT_DB_POOL})");
        }
        let corpus = crate::corpus::Spec {
            files: if hashing { files as u32 } else { crate::corpus::CONFORMANCE_FILES },
            size: size_kb as usize * 1024,
            seed: c.seed.unwrap_or(crate::corpus::DEFAULT_SEED),
        };
        let partitions = self.kafka.partitions.unwrap_or(8);
        if !(1..=1000).contains(&partitions) {
            bail!("kafka.partitions = {partitions} is out of range; use 1..=1000 (default 8)");
        }
        Ok(Plan {
            corpus,
            downstream,
            db_pool: db_pool as usize,
            kafka_partitions: partitions as u32,
            name: self.name.clone().unwrap_or_else(|| "adhoc".into()),
            description: self.description.clone().unwrap_or_default(),
            contenders: self.contenders.clone(),
            runs,
            jvm_heap: heap,
            jvm_flags: self.jvm.flags.clone().unwrap_or_else(default_jvm_flags),
            contender_cpus,
            driver_cpus,
            driver_threads,
            tunables,
            scenarios,
        })
    }
}

fn check_path(at: &str, path: &str) -> Result<()> {
    if !path.starts_with('/') || path.contains(char::is_whitespace) {
        bail!("{at} = {path:?} must start with '/' and contain no spaces, e.g. path = \"/delay?ms=100\"");
    }
    crate::driver::expand_path(path).map_err(|e| anyhow::anyhow!("{at}: {e}"))?;
    Ok(())
}

/// Checks a mix and returns its description.
fn check_mix(at: &str, mix: &[crate::driver::MixEntry]) -> Result<String> {
    if mix.is_empty() || mix.len() > 16 {
        bail!("{at}.mix must have 1..=16 entries, e.g. mix = [{{ weight = 80, method = \"GET\", path = \"/messages/{{seq:1..10000}}\" }}]");
    }
    for (k, e) in mix.iter().enumerate() {
        let here = format!("{at}.mix[{k}]");
        if e.weight == 0 || e.weight > 1000 {
            bail!("{here}.weight = {} is out of range; use 1..=1000 (weights are relative)", e.weight);
        }
        if !["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&e.method.as_str()) {
            bail!("{here}.method = {:?}: use one of GET, POST, PUT, PATCH, DELETE (upper case)", e.method);
        }
        check_path(&format!("{here}.path"), &e.path)?;
        if let Some(b) = &e.body {
            if e.method == "GET" || e.method == "DELETE" {
                bail!("{here}: a {} request has no body; remove body", e.method);
            }
            if b.matches("{write}").count() > 1 || b.len() > 65_536 {
                bail!("{here}.body: at most one {{write}} placeholder and 64 KiB");
            }
        }
    }
    Ok(format!("mix: {}", mix.iter().map(|e| format!("{} {} {}", e.weight, e.method, e.path)).collect::<Vec<_>>().join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str) -> Result<Plan> {
        toml::from_str::<PlanFile>(text).map_err(anyhow::Error::from)?.validate()
    }

    const GOOD: &str = r#"
        contenders = ["a"]
        [[scenario]]
        name = "delay"
        path = "/delay?ms=100"
        [scenario.load]
        model = "closed"
        users = 256
        step_users = 256
        steps = 3
        step_duration = "10s"
    "#;

    #[test]
    fn closed_steps_define_duration_and_levels() {
        let p = plan(GOOD).unwrap();
        let prof = &p.scenarios[0].load.profile;
        assert_eq!(prof.duration(), Duration::from_secs(40));
        assert_eq!(prof.target_at(Duration::from_secs(0)), 256.0);
        assert_eq!(prof.target_at(Duration::from_secs(25)), 768.0);
        assert_eq!(prof.target_at(Duration::from_secs(99)), 1024.0);
        assert_eq!(p.scenarios[0].load.timeout, Duration::from_secs(10));
    }

    #[test]
    fn corpus_and_downstream_are_checked() {
        let p = plan(GOOD).unwrap();
        assert_eq!(p.corpus.files, crate::corpus::CONFORMANCE_FILES, "no /hash scenario: the small corpus");
        assert_eq!(p.downstream.timeout, Duration::from_secs(2));
        let hash = GOOD.replace("/delay?ms=100", "/hash?id=1");
        assert_eq!(plan(&hash).unwrap().corpus.files, crate::corpus::DEFAULT_FILES);
        let e = plan(&format!("{GOOD}\n[downstream]\nlatency = \"soon\"")).unwrap_err().to_string();
        assert!(e.starts_with("downstream: latency \"soon\"") && e.contains("fixed:100ms"), "{e}");
        let e = plan(&format!("{GOOD}\n[corpus]\nfiles = 0")).unwrap_err().to_string();
        assert!(e.contains("corpus.files = 0"), "{e}");
        let e = plan(&format!("{GOOD}\n[downstream]\nerror_rate = 1.5")).unwrap_err().to_string();
        assert!(e.contains("error_rate") && e.contains("0..1"), "{e}");
    }

    #[test]
    fn scenarios_may_change_the_downstream() {
        let text = format!("{GOOD}\n[downstream]\nlatency = \"fixed:50ms\"\n[scenario.downstream]\nerror_rate = 0.5");
        let p = plan(&text).unwrap();
        assert_eq!(p.scenarios[0].downstream, "latency=fixed:50ms&error_rate=0.5&stall_prob=0&stall_for=10s");
        assert_eq!(plan(GOOD).unwrap().scenarios[0].downstream, "latency=fixed:100ms&error_rate=0&stall_prob=0&stall_for=10s");
        let e = plan(&format!("{GOOD}\n[scenario.downstream]\nstall_prob = 2.0")).unwrap_err().to_string();
        assert!(e.contains("scenario[0] \"delay\".downstream: stall_prob"), "{e}");
        let e = plan(&format!("{GOOD}\n[scenario.downstream]\ntimeout = \"1s\"")).unwrap_err().to_string();
        assert!(e.contains("set once, in the plan's [downstream]"), "{e}");
    }

    #[test]
    fn events_mixes_and_overload_are_checked() {
        let base = r#"
            contenders = ["a"]
            [[scenario]]
            name = "s"
            path = "/enrich?key=k"
            [scenario.load]
            model = "open"
            rate = 100
            duration = "30s"
        "#;
        let p = plan(&format!("{base}\n[[scenario.event]]\nat = \"10s\"\ndownstream = {{ latency = \"fixed:1500ms\" }}\n[[scenario.event]]\nat = \"20s\"\ndownstream = {{ latency = \"fixed:100ms\" }}")).unwrap();
        let e = &p.scenarios[0].events;
        assert_eq!((e[0].at, e[1].at), (Duration::from_secs(10), Duration::from_secs(20)));
        assert!(e[0].downstream.starts_with("latency=fixed:1500ms&error_rate=0"), "{}", e[0].downstream);
        for (extra, says) in [
            ("[[scenario.event]]\nat = \"40s\"\ndownstream = {}", "not inside the measured phase"),
            ("[[scenario.event]]\nat = \"10s\"\ndownstream = {}\n[[scenario.event]]\nat = \"5s\"\ndownstream = {}", "must come after"),
            ("[[scenario.event]]\nat = \"10s\"\ndownstream = { latency = \"sometimes\" }", "event[0].downstream"),
            ("[scenario.overload]\nfactor = 5", "closed model"),
        ] {
            let e = plan(&format!("{base}\n{extra}")).unwrap_err().to_string();
            assert!(e.contains(says), "{extra}: {e}");
        }
        let over = GOOD.replace("step_users = 256\n        steps = 3\n        step_duration = \"10s\"", "duration = \"10s\"");
        let p = plan(&format!("{over}\n[scenario.overload]\nfactor = 4")).unwrap();
        assert_eq!(p.scenarios[0].overload.as_ref().map(|o| (o.factor, o.duration, o.calm)), Some((4.0, Duration::from_secs(20), Duration::from_secs(15))));
        assert!(plan(&format!("{over}\n[scenario.overload]\nfactor = 0.5")).unwrap_err().to_string().contains("overload.factor"));
        let mix = r#"
            contenders = ["a"]
            [[scenario]]
            name = "m"
            mix = [{ weight = 9, method = "GET", path = "/messages/{seq:1..10}" }, { weight = 1, method = "FETCH", path = "/messages" }]
            [scenario.load]
            model = "closed"
            users = 1
            duration = "1s"
        "#;
        assert!(plan(mix).unwrap_err().to_string().contains("mix[1].method = \"FETCH\""));
        let ok = plan(&mix.replace("FETCH", "POST")).unwrap();
        assert_eq!(ok.scenarios[0].path, "mix: 9 GET /messages/{seq:1..10}, 1 POST /messages");
        assert!(plan(&mix.replace("name = \"m\"", "name = \"m\"\npath = \"/x\"")).unwrap_err().to_string().contains("either path or mix"));
    }

    #[test]
    fn plans_repeat_three_times_unless_they_say() {
        assert_eq!(plan(GOOD).unwrap().runs, 3);
        assert_eq!(plan(&format!("runs = 5\n{GOOD}")).unwrap().runs, 5);
    }

    #[test]
    fn open_ramp_is_linear() {
        let p = plan(r#"
            contenders = ["a"]
            [[scenario]]
            name = "ramp"
            path = "/x"
            [scenario.load]
            model = "open"
            rate = 10
            ramp_to = 300
            duration = "60s"
        "#).unwrap();
        let prof = &p.scenarios[0].load.profile;
        assert_eq!(prof.target_at(Duration::from_secs(30)), 155.0);
        assert_eq!(prof.target_at(Duration::from_secs(60)), 300.0);
    }

    fn err(text: &str) -> String {
        format!("{:#}", plan(text).unwrap_err())
    }

    #[test]
    fn errors_name_the_field_and_the_fix() {
        let e = err(&GOOD.replace("users = 256\n", "users = -5\n"));
        assert!(e.contains("load.users must not be negative"), "{e}");
        let e = err(&GOOD.replace("model = \"closed\"", "model = \"clsoed\""));
        assert!(e.contains("load.model = \"clsoed\" is unknown") && e.contains("\"open\""), "{e}");
        let e = err(&GOOD.replace("step_users = 256", "stepusers = 256"));
        assert!(e.contains("unknown field `stepusers`"), "{e}");
        let e = err(&GOOD.replace("\"/delay?ms=100\"", "\"delay\""));
        assert!(e.contains("path = \"delay\" must start with '/'"), "{e}");
        let e = err(&GOOD.replace("contenders = [\"a\"]", "contenders = []"));
        assert!(e.contains("plan.contenders is empty"), "{e}");
        let e = err(&GOOD.replace("\"10s\"", "\"ten\""));
        assert!(e.contains("step_duration: invalid duration"), "{e}");
        let e = err(&GOOD.replace("step_users = 256", "rate = 5"));
        assert!(e.contains("load.rate applies to the open model only"), "{e}");
        let e = err("contenders = [\"a\"]\n[[scenario]\nname = 1");
        assert!(e.contains("TOML parse error") || e.contains("expected"), "{e}");
    }

    #[test]
    fn open_rate_must_be_positive() {
        let text = r#"
            contenders = ["a"]
            [[scenario]]
            name = "r"
            path = "/x"
            [scenario.load]
            model = "open"
            rate = -3
            duration = "5s"
        "#;
        assert!(err(text).contains("rate must be a positive number"));
        assert!(err(&text.replace("rate = -3", "rate = 5\nramp_to = 0")).contains("ramp_to must be a positive rate"));
        assert!(err(&text.replace("rate = -3", "rate = 5").replace("duration = \"5s\"", "")).contains("duration is missing"));
    }
}
