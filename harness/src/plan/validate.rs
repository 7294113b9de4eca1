//! `PlanFile::validate`: every section checked in the order it is written (contenders,
//! runs, downstream, scenarios with their events and overload, CPUs, JVM, tunables, corpus,
//! database, Kafka), each error naming the field and the fix.

use super::fields::{field_duration, percent, window_is_auto, windows_checked};
use super::file::{PlanFile, RunsFile, ScenarioFile};
use super::kinds::{capacity, events, overload};
use super::thresholds;
use super::workload::{check_mix, check_path, MixEntry};
use super::{
    default_jvm_flags, CorpusSpec, DownstreamPlan, Plan, Profile, Scenario, DEFAULT_DB_POOL,
    DEFAULT_HEAP, DEFAULT_PLAN_RUNS, DEFAULT_WARMUP, DEFAULT_WARMUP_MIN,
};
use super::{Sequential, AUTO_MAX_RUNS, MAX_FIXED_RUNS};
use crate::util::cpus::parse_cpu_list;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::time::Duration;

/// Where the contender, the driver and the services run, and the driver's threads.
struct CpusChecked {
    contender_cpus: Vec<usize>,
    driver_cpus: Vec<usize>,
    services_cpus: Vec<usize>,
    driver_threads: usize,
}

impl PlanFile {
    pub fn validate(&self) -> Result<Plan> {
        if self.contenders.is_empty() {
            bail!("plan.contenders is empty; list at least one, e.g. contenders = [\"spring-mvc\"] (see `iobound list`)");
        }
        if self.scenarios.is_empty() {
            bail!("the plan has no [[scenario]]; add one with name, path and [scenario.load]");
        }
        // Plans repeat each contender x scenario three times unless they say otherwise; ad hoc
        // runs from flags set one.
        let (runs, sequential) = self.repeats()?;
        let fixed_margin = match (sequential, &self.margin) {
            (None, Some(_)) => Some(self.margin()?),
            _ => None,
        };
        let downstream = self.downstream_plan()?;
        let default_warmup = field_duration(
            "plan.warmup",
            self.warmup.as_deref().unwrap_or(DEFAULT_WARMUP),
        )?;
        let warmup_min = field_duration(
            "plan.warmup_min",
            self.warmup_min.as_deref().unwrap_or(DEFAULT_WARMUP_MIN),
        )?;
        let warmup_band = percent(
            "plan.warmup_band",
            self.warmup_band
                .as_deref()
                .unwrap_or(super::DEFAULT_WARMUP_BAND),
            1.0..=100.0,
            "e.g. \"10%\"",
        )?;
        let window_auto = window_is_auto(self.window.as_deref())?;
        let (windows, windows_auto) = windows_checked(self.windows.as_ref())?;
        let scenarios = self.scenarios_checked(&downstream, default_warmup)?;
        let CpusChecked {
            contender_cpus,
            driver_cpus,
            services_cpus,
            driver_threads,
        } = self.cpus_checked()?;
        let heap = self.heap_checked()?;
        let tunables = self.tunable_texts()?;
        let (corpus, db_pool) = self.corpus_and_pool()?;
        let partitions = self.kafka.partitions.unwrap_or(8);
        if !(1..=1000).contains(&partitions) {
            bail!("kafka.partitions = {partitions} is out of range; use 1..=1000 (default 8)");
        }
        Ok(Plan {
            corpus,
            downstream,
            db_pool,
            kafka_partitions: partitions as u32,
            name: name_checked(self.name.as_deref())?,
            description: self.description.clone().unwrap_or_default(),
            contenders: self.contenders.clone(),
            arms: self.arms_checked()?,
            runs,
            sequential,
            fixed_margin,
            warmup_min,
            warmup_band,
            window_auto,
            windows,
            windows_auto,
            jvm_heap: heap,
            jvm_flags: self.jvm.flags.clone().unwrap_or_else(default_jvm_flags),
            contender_cpus,
            driver_cpus,
            services_cpus,
            driver_threads,
            tunables,
            scenarios,
            profile: self.profile.unwrap_or(false),
            limits: super::limits::checked(&self.limits, &self.contenders)?,
        })
    }

    /// Every `[[scenario]]`, with the plan's thresholds merged into its own.
    fn scenarios_checked(
        &self,
        downstream: &DownstreamPlan,
        default_warmup: Duration,
    ) -> Result<Vec<Scenario>> {
        let plan_thresholds = thresholds::parse_table("thresholds", &self.thresholds)?;
        let mut scenarios: Vec<Scenario> = Vec::new();
        for (i, s) in self.scenarios.iter().enumerate() {
            let at = format!("scenario[{i}] {:?}", s.name);
            if scenarios.iter().any(|x| x.name == s.name)
                && crate::util::files::is_plain_name(&s.name)
            {
                bail!("{at}: duplicate scenario name; give each scenario its own name");
            }
            let mut sc = scenario(&at, s, downstream, default_warmup)?;
            sc.thresholds = thresholds::merged(
                &plan_thresholds,
                &thresholds::parse_table(&format!("{at}.thresholds"), &s.thresholds)?,
            );
            scenarios.push(sc);
        }
        Ok(scenarios)
    }

    /// `[cpus]` and `driver_threads`: the contender's, the driver's and the services' CPUs
    /// (defaults: 0 for the contender, 1 for the driver where there are two), and the driver
    /// threads (one per driver CPU unless set).
    fn cpus_checked(&self) -> Result<CpusChecked> {
        let contender_cpus = parse_cpu_list(self.cpus.contender.as_deref().unwrap_or("0"))
            .context("plan.cpus.contender")?;
        let default_driver = if crate::util::cpus::online_cpus() > 1 {
            "1"
        } else {
            "0"
        };
        let driver_cpus = parse_cpu_list(self.cpus.driver.as_deref().unwrap_or(default_driver))
            .context("plan.cpus.driver")?;
        let services_cpus = services_cpus(
            self.cpus.services.as_deref(),
            &contender_cpus,
            &driver_cpus,
            crate::util::cpus::online_cpus(),
        )?;
        let driver_threads = self.driver_threads.unwrap_or(driver_cpus.len());
        if driver_threads == 0 || driver_threads > 64 {
            bail!("plan.driver_threads = {driver_threads} is out of range; use 1..=64 (one per driver CPU is usual)");
        }
        Ok(CpusChecked {
            contender_cpus,
            driver_cpus,
            services_cpus,
            driver_threads,
        })
    }

    /// `[jvm] heap`: a size such as "512m" or "2g".
    fn heap_checked(&self) -> Result<String> {
        let heap = self
            .jvm
            .heap
            .clone()
            .unwrap_or_else(|| DEFAULT_HEAP.to_string());
        let (digits, unit_mb) = match heap.char_indices().last() {
            Some((at, 'm' | 'M')) => (&heap[..at], 1),
            Some((at, 'g' | 'G')) => (&heap[..at], 1024),
            _ => (heap.as_str(), 0),
        };
        let mb = digits
            .parse::<u64>()
            .ok()
            .filter(|n| *n > 0 && unit_mb > 0)
            .and_then(|n| n.checked_mul(unit_mb));
        match mb {
            None => {
                bail!("plan.jvm.heap = {heap:?} is not a heap size; write e.g. \"512m\" or \"2g\"")
            }
            // The JVM itself refuses a heap beyond its address space, but only once the run
            // has built and started everything before it.
            Some(mb) if mb > MAX_HEAP_MB => bail!(
                "plan.jvm.heap = {heap:?} is above {} GB, more than a JVM here can reserve; \
                 write e.g. \"512m\" or \"2g\"",
                MAX_HEAP_MB / 1024
            ),
            Some(_) => Ok(heap),
        }
    }

    /// `[downstream]`, with the defaults a scenario's changes start from.
    fn downstream_plan(&self) -> Result<DownstreamPlan> {
        let d = &self.downstream;
        let downstream = DownstreamPlan {
            latency: d.latency.clone().unwrap_or_else(|| "fixed:100ms".into()),
            error_rate: d.error_rate.unwrap_or(0.0),
            stall_prob: d.stall_prob.unwrap_or(0.0),
            stall_for: d.stall_for.clone().unwrap_or_else(|| "10s".into()),
            timeout: field_duration("downstream.timeout", d.timeout.as_deref().unwrap_or("2s"))?,
        };
        downstream
            .behaviour()
            .map_err(|e| anyhow::anyhow!("downstream: {e:#}"))?;
        downstream_timeout_in_range(downstream.timeout)
            .map_err(|e| anyhow::anyhow!("downstream.timeout {e}"))?;
        Ok(downstream)
    }

    /// `[arms]`: each arm a plain name listed in `contenders`, starting a contender that is no
    /// arm itself (which contenders exist is checked with their manifests, run::prepare).
    fn arms_checked(&self) -> Result<BTreeMap<String, String>> {
        for (arm, of) in &self.arms {
            if !crate::util::files::is_plain_name(arm) {
                bail!("arms.{arm:?}: an arm's name uses only letters, digits, '-' and '_' (it names the arm in every table), e.g. \"mvc-1000-threads\"");
            }
            if !self.contenders.contains(arm) {
                bail!(
                    "arms.{arm}: {arm:?} is not in contenders ({}); add it there, where it takes its place in each round",
                    self.contenders.join(", ")
                );
            }
            if self.arms.contains_key(of) {
                bail!("arms.{arm} = {of:?}: {of:?} is an arm itself; name the contender it starts (`iobound list`)");
            }
        }
        Ok(self.arms.clone())
    }

    /// `[tunables.NAME]` values as the text the manifests substitute.
    fn tunable_texts(&self) -> Result<BTreeMap<String, BTreeMap<String, String>>> {
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
        Ok(tunables)
    }

    /// `[corpus]` (the plan's when a scenario requests /hash, else the small conformance
    /// corpus) and `[database] pool`.
    fn corpus_and_pool(&self) -> Result<(CorpusSpec, usize)> {
        let c = &self.corpus;
        let files = c.files.unwrap_or(i64::from(CorpusSpec::DEFAULT_FILES));
        if !(3..=1_000_000).contains(&files) {
            bail!(
                "corpus.files = {files} is out of range; use 3..=1000000 (default {}): the \
                 contract checks /hash on files 0, 1 and 2 before anything is measured",
                CorpusSpec::DEFAULT_FILES
            );
        }
        let size_kb = c
            .size_kb
            .unwrap_or((CorpusSpec::DEFAULT_SIZE / 1024) as i64);
        if !(1..=65_536).contains(&size_kb) {
            bail!("corpus.size_kb = {size_kb} is out of range; use 1..=65536 (default 200)");
        }
        // Each field within its range still multiplies to 64 TB: the corpus is written to disk
        // before anything is measured.
        let total_kb = files * size_kb;
        if total_kb > MAX_CORPUS_KB {
            bail!(
                "corpus.files x corpus.size_kb = {files} x {size_kb} KB = {} GiB, above the \
                 {} GiB the corpus may take on disk; use fewer files or smaller ones",
                total_kb / (1024 * 1024),
                MAX_CORPUS_KB / (1024 * 1024)
            );
        }
        let hashing = self
            .scenarios
            .iter()
            .filter_map(|s| s.path.as_deref())
            .any(|p| p == "/hash" || p.starts_with("/hash?"));
        let db_pool = self.database.pool.unwrap_or(DEFAULT_DB_POOL as i64);
        if !(1..=100).contains(&db_pool) {
            bail!("database.pool = {db_pool} is out of range; use 1..=100 connections per contender (default {DEFAULT_DB_POOL})");
        }
        let corpus = CorpusSpec {
            files: if hashing {
                files as u32
            } else {
                CorpusSpec::CONFORMANCE_FILES
            },
            size: size_kb as usize * 1024,
            seed: c.seed.unwrap_or(CorpusSpec::DEFAULT_SEED),
        };
        Ok((corpus, db_pool as usize))
    }
}

/// The largest JVM heap a plan may ask for, in MB (4 TB).
const MAX_HEAP_MB: u64 = 4 * 1024 * 1024;

/// The most the /hash corpus may take on disk, in KB (16 GiB; the default is 800 MB).
const MAX_CORPUS_KB: i64 = 16 * 1024 * 1024;

/// One `[[scenario]]`: what it requests, its warm-up and load, the downstream's behaviour
/// during it, and its events or overload phases.
fn scenario(
    at: &str,
    s: &ScenarioFile,
    downstream: &DownstreamPlan,
    default_warmup: Duration,
) -> Result<Scenario> {
    if !crate::util::files::is_plain_name(&s.name) {
        bail!("{at}: name must be non-empty and use only letters, digits, '-' and '_'");
    }
    let (path, mix) = requests(at, s)?;
    let warmup = match &s.warmup {
        Some(w) => field_duration(&format!("{at}.warmup"), w)?,
        None => default_warmup,
    };
    let load = s.load.validate(&format!("{at}.load"))?;
    if s.pipeline && !matches!(load.profile, Profile::Open { rate, ramp_to, .. } if rate == ramp_to)
    {
        bail!("{at}.load: a pipeline scenario produces records at a fixed rate: model = \"open\" with rate (and no ramp_to)");
    }
    let over = s.downstream.clone().unwrap_or_default();
    if over.timeout.is_some() {
        bail!("{at}.downstream.timeout: the contenders' timeout is set once, in the plan's [downstream]");
    }
    let merged = downstream.with(&over);
    merged
        .behaviour()
        .map_err(|e| anyhow::anyhow!("{at}.downstream: {e:#}"))?;
    let events = events(at, s, &merged, load.profile.duration())?;
    let overload = overload(at, s, &load.profile)?;
    let capacity = capacity(at, s, &load.profile)?;
    if capacity.is_some() && (overload.is_some() || !s.events.is_empty() || s.pipeline) {
        bail!("{at}.capacity: a capacity search is a scenario of its own; remove overload, events or pipeline");
    }
    if overload.is_some() && !events.is_empty() {
        bail!("{at}: give either events or overload, not both");
    }
    if s.pipeline && overload.is_some() {
        bail!("{at}.overload: not available for pipeline scenarios");
    }
    Ok(Scenario {
        name: s.name.clone(),
        path,
        mix,
        pipeline: s.pipeline,
        warmup,
        load,
        downstream: merged.control_query(),
        events,
        overload,
        thresholds: Vec::new(),
        capacity,
        restart: s.restart.unwrap_or(false),
    })
}

/// What a pipeline scenario's runs give as their path: records go through Kafka, not a URL.
pub const PIPELINE_PATH: &str = "kafka: input -> enrich -> output";

/// The scenario's path (or a mix's description) and the mix's entries.
fn requests(at: &str, s: &ScenarioFile) -> Result<(String, Vec<MixEntry>)> {
    Ok(match (&s.path, &s.mix) {
        _ if s.pipeline && (s.path.is_some() || s.mix.is_some()) => bail!("{at}: a pipeline scenario has no path or mix (records go through Kafka)"),
        _ if s.pipeline => (PIPELINE_PATH.to_string(), Vec::new()),
        (Some(p), None) => {
            check_path(&format!("{at}.path"), p)?;
            (p.clone(), Vec::new())
        }
        (None, Some(mix)) => (check_mix(at, mix)?, mix.clone()),
        (Some(_), Some(_)) => bail!("{at}: give either path or mix, not both"),
        (None, None) => bail!("{at}: no path; add path = \"/delay?ms=100\" (or a mix = [{{ weight, method, path, body }}, ...])"),
    })
}

/// The services' CPUs: as given (never the contender's), else on a machine of >= 4 CPUs the ones
/// neither the contender nor the driver uses, else the driver's (which they then share).
pub(super) fn services_cpus(
    given: Option<&str>,
    contender: &[usize],
    driver: &[usize],
    online: usize,
) -> Result<Vec<usize>> {
    if let Some(list) = given {
        let cpus = parse_cpu_list(list).context("plan.cpus.services")?;
        if let Some(c) = cpus.iter().find(|c| contender.contains(c)) {
            bail!("plan.cpus.services includes CPU {c}, the contender's: the services would compete with it; give other CPUs (e.g. --services-cpus {})", crate::util::cpus::format_cpus(driver));
        }
        return Ok(cpus);
    }
    let free: Vec<usize> = (0..online)
        .filter(|c| !contender.contains(c) && !driver.contains(c))
        .collect();
    Ok(if online >= 4 && !free.is_empty() {
        free
    } else {
        driver.to_vec()
    })
}

impl PlanFile {
    /// `margin` as a fraction: differences whose interval lies within it are equivalent.
    fn margin(&self) -> Result<f64> {
        percent(
            "plan.margin",
            self.margin.as_deref().unwrap_or("5%"),
            0.5..=50.0,
            "e.g. \"5%\" (differences within it are called equivalent)",
        )
    }

    /// `runs` (a number, or "auto" with its budget and margin) as the most rounds to run and,
    /// for "auto", how to stop early.
    fn repeats(&self) -> Result<(u32, Option<Sequential>)> {
        let margin = self.margin()?;
        match &self.runs {
            None => {
                if self.budget.is_some() {
                    bail!("plan.budget is set but runs is not \"auto\": a budget limits automatic repeats; set runs = \"auto\" (or remove budget)");
                }
                Ok((DEFAULT_PLAN_RUNS, None))
            }
            Some(RunsFile::Count(n)) => {
                if !(1..=i64::from(MAX_FIXED_RUNS)).contains(n) {
                    bail!("plan.runs = {n} is out of range; use 1..={MAX_FIXED_RUNS}, or \"auto\"");
                }
                if self.budget.is_some() {
                    bail!("plan.budget is set but runs = {n} is fixed: a budget limits automatic repeats; set runs = \"auto\" (or remove budget)");
                }
                Ok((*n as u32, None))
            }
            Some(runs) if runs.is_auto() => {
                let budget = match &self.budget {
                    Some(b) => Some(field_duration("plan.budget", b)?),
                    None => None,
                };
                if budget.is_some_and(|b| b < Duration::from_secs(60)) {
                    bail!("plan.budget = {:?} is too short for even one round; give a minute or more, e.g. \"15m\"", self.budget.as_deref().unwrap_or(""));
                }
                Ok((AUTO_MAX_RUNS, Some(Sequential { budget, margin })))
            }
            Some(RunsFile::Word(w)) => {
                bail!(
                    "plan.runs = {w:?}: write a number of runs (1..={MAX_FIXED_RUNS}) or \"auto\""
                )
            }
        }
    }
}

/// The range a contenders' downstream timeout may take (a plan's `[downstream] timeout`,
/// `verify --downstream-timeout`).
pub fn downstream_timeout_in_range(timeout: Duration) -> Result<()> {
    if timeout.is_zero() || timeout > Duration::from_secs(60) {
        bail!("must be between 1ms and 60s (default 2s)");
    }
    Ok(())
}

/// `name`: it names the results directory, so a plain name ("adhoc" when unset).
fn name_checked(name: Option<&str>) -> Result<String> {
    match name {
        None => Ok("adhoc".into()),
        Some(n) if crate::util::files::is_plain_name(n) => Ok(n.into()),
        Some(n) => bail!(
            "plan.name = {n:?}: use only letters, digits, '-' and '_' (it names the results \
             directory), e.g. \"demo-rerun\""
        ),
    }
}
