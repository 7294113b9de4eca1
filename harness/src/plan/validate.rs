//! `PlanFile::validate`: every section checked in the order it is written (contenders,
//! runs, downstream, scenarios with their events and overload, CPUs, JVM, tunables, corpus,
//! database, Kafka), each error naming the field and the fix.

use super::fields::{field_duration, percent, window_is_auto, windows_checked};
use super::file::{PlanFile, RunsFile, ScenarioFile};
use super::kinds::{capacity, events, overload};
use super::thresholds;
use super::validate_machine::CpusChecked;
use super::workload::{check_mix, check_path, MixEntry};
use super::{
    default_jvm_flags, DownstreamPlan, Plan, Profile, Scenario, DEFAULT_PLAN_RUNS, DEFAULT_WARMUP,
    DEFAULT_WARMUP_MIN,
};
use super::{Sequential, AUTO_MAX_RUNS, MAX_FIXED_RUNS};
use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::time::Duration;

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
}

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
