//! A run across hosts (`--hosts`), the parts a local run does not have: connecting to the
//! inventory's hosts (and saying in the results where everything ran), the services on the
//! services host, and what a contender may not do there yet.

use super::{External, Options};
use crate::plan::Plan;
use crate::remote::deploy::{Fleet, HostReady};
use crate::remote::record_load::RecordLoadHosts;
use crate::remote::services_host::{Needs, ServicesHost};
use crate::results::environment;
use crate::results::record::Results;
use crate::services::Services;
use anyhow::Result;
use std::path::Path;

/// Connects to the inventory's hosts and copies iobound to each (and the Kafka load tool to
/// the load hosts when a pipeline runs there); the results say where the load came from and
/// how it was pinned.
pub(super) fn connect_hosts(
    inv: &crate::plan::hosts::Inventory,
    opts: &Options,
    plan: &Plan,
    dir: &Path,
    res: &mut Results,
) -> Result<(Fleet, Option<RecordLoadHosts>)> {
    eprintln!("iobound: connecting to the load hosts and copying iobound to each");
    // The contender host too when iobound starts (--cmd) or samples (--pid) the server there,
    // or deploys its own contenders there (no --url), which need the services host too.
    let deploying = opts.external.is_none();
    let on_contender = deploying || opts.external.as_ref().is_some_and(External::sampled);
    let fleet = Fleet::connect(inv, on_contender, deploying)?;
    let record_load = if deploying && plan.has_pipeline() {
        eprintln!("iobound: copying the Kafka load tool to the load hosts");
        Some(RecordLoadHosts::prepare(&fleet, &opts.root)?)
    } else {
        None
    };
    res.environment.remote_hosts = remote_hosts(&fleet);
    let drivers: Vec<String> = fleet
        .load
        .iter()
        .map(|h| {
            if h.cpus.is_empty() {
                format!("{} (driver not pinned)", h.ssh.host.name)
            } else {
                format!(
                    "{} (driver pinned to CPU {})",
                    h.ssh.host.name,
                    crate::util::cpus::format_cpus(&h.cpus)
                )
            }
        })
        .collect();
    let server = match (&fleet.contender, opts.external.as_ref().map(External::started)) {
        (Some(h), Some(true)) if !h.cpus.is_empty() => format!(
            "whose server iobound starts there (--cmd) pinned to CPU {} and samples there",
            crate::util::cpus::format_cpus(&h.cpus)
        ),
        (Some(_), Some(true)) => {
            "whose server iobound starts there (--cmd), not pinned (the inventory names no CPUs for it), and samples there".to_string()
        }
        (Some(h), None) => format!(
            "where iobound copies, starts and checks each contender, {}, and samples it there; services on host {}",
            h.pinning(),
            fleet.services.as_ref().map(|s| s.ssh.host.name.as_str()).unwrap_or("-")
        ),
        (Some(_), _) => "whose server iobound did not start or pin, sampled there (--pid)".to_string(),
        _ => "whose server iobound did not start, pin or sample (--url)".to_string(),
    };
    res.environment.pinning = format!(
        "load from {} host(s) over SSH: {}; to the contender host {} ({}), {server}; this machine only coordinates, on CPU {}",
        fleet.load.len(),
        drivers.join(", "),
        fleet.contender_name,
        fleet.contender_address,
        crate::util::cpus::format_cpus(&plan.driver_cpus)
    );
    res.checkpoint(dir);
    eprintln!("iobound: {}", res.environment.pinning);
    Ok((fleet, record_load))
}

/// The services on the services host (built-in contenders with --hosts), recorded in the
/// results.
pub(super) fn start_services_on_host(
    h: &HostReady,
    plan: &Plan,
    opts: &Options,
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    res: &mut Results,
) -> Result<(ServicesHost, Services)> {
    let needs = Needs {
        database: plan.uses_database(),
        kafka: plan.has_pipeline(),
    };
    let settings = crate::services::Settings::of(plan);
    let started = ServicesHost::start(h, &opts.root, &settings, rt, &dir.join("logs"), needs);
    let (host, s) = started.inspect_err(|e| {
        res.incomplete_reason = Some(format!("services did not start: {e:#}"));
        res.checkpoint(dir);
    })?;
    super::record_services(&s, res);
    res.checkpoint(dir);
    Ok((host, s))
}

/// The inventory's hosts as the results record them.
fn remote_hosts(fleet: &Fleet) -> Vec<environment::RemoteHost> {
    let roles = fleet.load.iter().map(|h| (h, "load"));
    roles
        .chain(fleet.contender.iter().map(|h| (h, "contender")))
        .chain(fleet.services.iter().map(|h| (h, "services")))
        .map(|(h, role)| environment::RemoteHost {
            name: h.ssh.host.name.clone(),
            address: h.ssh.host.address.to_string(),
            role: role.into(),
            cpus: h.cpus.clone(),
            clock_offset_ms: (h.clock_offset_s * 1e6).round() / 1e3,
            net_namespace: None,
        })
        .collect()
}
