//! The settings of each kind of scenario beyond its load: mid-run downstream changes (faults),
//! overload phases (and the names of the runs they are measured as) and capacity searches.

use super::fields::{field_duration, percent};
use super::file::{CapacityFile, ScenarioFile};
use super::thresholds::Threshold;
use super::{Capacity, DownstreamPlan, Event, Overload, Profile};
use anyhow::{bail, Result};
use std::time::Duration;

/// The runs an overload scenario is measured as, by name: its closed probe, then the phases at
/// half its capacity, at `factor` times it, and at half again. The run stage names them so;
/// the results stage reads a phase's probe back by them.
pub struct OverloadRuns {
    pub probe: String,
    pub calm: String,
    pub rush: String,
    pub after: String,
}

impl OverloadRuns {
    pub fn of(scenario: &str, factor: f64) -> OverloadRuns {
        OverloadRuns {
            probe: format!("{scenario}-probe"),
            calm: format!("{scenario}-calm"),
            rush: format!("{scenario}-{factor}x"),
            after: format!("{scenario}-after"),
        }
    }

    /// Whether `name` is one of the phases measured after the probe.
    pub fn is_phase(&self, name: &str) -> bool {
        [&self.calm, &self.rush, &self.after]
            .iter()
            .any(|n| *n == name)
    }
}

/// `[[scenario.event]]`: downstream changes at increasing times inside the measured phase.
pub(super) fn events(
    at: &str,
    s: &ScenarioFile,
    merged: &DownstreamPlan,
    measured: Duration,
) -> Result<Vec<Event>> {
    let mut events: Vec<Event> = Vec::new();
    for (k, e) in s.events.iter().enumerate() {
        let here = format!("{at}.event[{k}]");
        let when = field_duration(&format!("{here}.at"), &e.at)?;
        if when >= measured {
            bail!("{here}.at = {:?} is not inside the measured phase ({}s); choose a time before its end", e.at, measured.as_secs());
        }
        if events.last().is_some_and(|p| p.at >= when) {
            bail!("{here}.at = {:?} must come after the event before it", e.at);
        }
        if e.downstream.timeout.is_some() {
            bail!("{here}.downstream.timeout: the contenders' timeout is set once, in the plan's [downstream]");
        }
        let changed = merged.with(&e.downstream);
        changed
            .behaviour()
            .map_err(|e| anyhow::anyhow!("{here}.downstream: {e:#}"))?;
        events.push(Event {
            at: when,
            downstream: changed.control_query(),
        });
    }
    Ok(events)
}

/// `[scenario.overload]`: the scenario's load must be a closed probe without steps.
pub(super) fn overload(at: &str, s: &ScenarioFile, profile: &Profile) -> Result<Option<Overload>> {
    let Some(o) = &s.overload else {
        return Ok(None);
    };
    if !matches!(profile, Profile::Closed { step_users: 0, .. }) {
        bail!("{at}.overload: the scenario's load is the capacity probe and must be a closed model without steps, e.g. model = \"closed\", users = 256, duration = \"10s\"");
    }
    let factor = o.factor.unwrap_or(5.0);
    if !(1.0..=100.0).contains(&factor) {
        bail!("{at}.overload.factor = {factor} is out of range; use 1..=100 (times the probed capacity, default 5)");
    }
    Ok(Some(Overload {
        factor,
        duration: field_duration(
            &format!("{at}.overload.duration"),
            o.duration.as_deref().unwrap_or("20s"),
        )?,
        calm: field_duration(
            &format!("{at}.overload.calm"),
            o.calm.as_deref().unwrap_or("15s"),
        )?,
    }))
}

/// `[scenario.capacity]`: the SLO and the search's bounds; the load must be an open model at a
/// constant rate (the first probe).
pub(super) fn capacity(at: &str, s: &ScenarioFile, profile: &Profile) -> Result<Option<Capacity>> {
    s.capacity
        .as_ref()
        .map(|c| capacity_of(&format!("{at}.capacity"), c, profile))
        .transpose()
}

/// A capacity search's settings (`at` names them in errors: "scenario[0] \"x\".capacity").
pub fn capacity_of(at: &str, c: &CapacityFile, profile: &Profile) -> Result<Capacity> {
    let Profile::Open { rate, ramp_to, .. } = profile else {
        bail!("{at}: the search probes open-model rates; set load.model = \"open\", rate = the first probe's rate (e.g. 100) and duration = each probe's length (e.g. \"20s\")");
    };
    if rate != ramp_to {
        bail!("{at}: each probe holds one rate; remove load.ramp_to");
    }
    if c.slo.is_empty() {
        bail!(
            "{at}.slo is empty; give the objective, e.g. slo = [\"p99<=200ms\", \"errors<=0.1%\"]"
        );
    }
    let mut slo = c
        .slo
        .iter()
        .map(|t| Threshold::parse_flag(t).map_err(|e| anyhow::anyhow!("{at}.slo: {e:#}")))
        .collect::<Result<Vec<_>>>()?;
    let default_errors = !slo.iter().any(|t| t.metric == "errors");
    if default_errors {
        slo.push(Threshold::parse_flag(super::DEFAULT_ERRORS_LIMIT)?);
    }
    let max_rate = c.max_rate.unwrap_or(50_000.0);
    if !(max_rate.is_finite() && max_rate > *rate) {
        bail!("{at}.max_rate = {max_rate} must be above the first probe's rate ({rate}); e.g. max_rate = 20000");
    }
    super::load::within_max_rate(&format!("{at}.max_rate"), max_rate)?;
    let growth = c.growth.unwrap_or(2.0);
    if !(1.1..=10.0).contains(&growth) {
        bail!("{at}.growth = {growth} is out of range; use 1.1..=10 (default 2: each probe doubles the rate)");
    }
    let precision = percent(
        &format!("{at}.precision"),
        c.precision.as_deref().unwrap_or("5%"),
        0.5..=50.0,
        "e.g. \"5%\"",
    )?;
    let repeats = c.repeats.unwrap_or(3);
    if !(1..=10).contains(&repeats) {
        bail!("{at}.repeats = {repeats} is out of range; use 1..=10 (default 3)");
    }
    Ok(Capacity {
        slo,
        max_rate,
        growth,
        precision,
        repeats: repeats as u32,
        default_errors,
    })
}
