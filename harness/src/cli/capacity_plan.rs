//! From `iobound capacity` flags to a plan: a plan's capacity scenarios (their SLO replaced by
//! --slo), or an ad hoc search described by flags.

use super::args::CapacityArgs;
use super::flags::{build_plan, flags_given};
use crate::plan::{self, kinds, Capacity, CapacityFile, Plan};
use crate::run::External;
use crate::util;
use anyhow::{bail, Context, Result};
use std::path::Path;

/// `iobound capacity`: the plan's capacity scenarios (their SLO replaced by --slo when given),
/// or an ad hoc one from the flags: open-model probes from --rate (default 100 req/s), each
/// --duration long (default 20 s).
pub fn build_capacity_plan(c: &CapacityArgs, root: &Path) -> Result<(Plan, Option<External>)> {
    let a = &c.run;
    if a.load.users.is_some() || a.load.step_users.is_some() || a.load.ramp_to.is_some() {
        bail!("iobound capacity probes open-model rates: remove --users/--step-users/--ramp-to; --rate sets the first probe's rate (default 100)");
    }
    let file = CapacityFile {
        slo: c.slo.clone(),
        max_rate: c.max_rate,
        growth: c.growth,
        precision: c.precision.clone(),
        repeats: c.repeats,
    };
    let (mut plan, external) = build_plan(a, root)?;
    if a.plan.is_some() {
        let search_flags = flags_given(&[
            ("--max-rate", file.max_rate.is_some()),
            ("--growth", file.growth.is_some()),
            ("--precision", file.precision.is_some()),
            ("--repeats", file.repeats.is_some()),
        ]);
        if !search_flags.is_empty() {
            bail!(
                "{} with --plan: the plan's [scenario.capacity] sets the search (max_rate, \
                 growth, precision, repeats); write it there (or in a copy of the plan), or drop \
                 --plan (--slo alone replaces the plan's SLO)",
                search_flags.join(", ")
            );
        }
        if !plan.scenarios.iter().any(|s| s.capacity.is_some()) {
            bail!("the plan has no scenario with [scenario.capacity]; add one (see plans/capacity.toml), or use `iobound run` for this plan");
        }
        if !c.slo.is_empty() {
            for (i, s) in plan
                .scenarios
                .iter_mut()
                .filter(|s| s.capacity.is_some())
                .enumerate()
            {
                let keep = s.capacity.clone().unwrap();
                let slo = kinds::capacity_of(
                    &format!("--slo (scenario[{i}] {:?})", s.name),
                    &CapacityFile {
                        slo: c.slo.clone(),
                        ..CapacityFile::default()
                    },
                    &s.load.profile,
                )?
                .slo;
                s.capacity = Some(Capacity { slo, ..keep });
            }
        }
        return Ok((plan, external));
    }
    if c.slo.is_empty() {
        bail!("--slo is required: the objective each probe is judged against, e.g. --slo 'p99<=200ms' --slo 'errors<=0.1%'");
    }
    let duration = a
        .load
        .duration
        .as_deref()
        .map(util::units::parse_duration)
        .transpose()
        .context("--duration")?
        .unwrap_or(std::time::Duration::from_secs(20));
    for s in &mut plan.scenarios {
        s.load.profile = plan::Profile::Open {
            rate: a.load.rate.unwrap_or(100.0),
            ramp_to: a.load.rate.unwrap_or(100.0),
            duration,
            max_connections: a.load.max_connections.unwrap_or(10_000),
        };
        s.capacity = Some(kinds::capacity_of("capacity", &file, &s.load.profile)?);
    }
    Ok((plan, external))
}
