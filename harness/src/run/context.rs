//! What every kind of scenario shares: the context a contender's round runs in (`RunCtx`), and
//! the runs it appends, blank or failed.

use crate::observe::cold_start::PendingStart;
use crate::plan::{Plan, Scenario};
use crate::results::record::{Results, Run};
use crate::services::Services;
use std::path::Path;

/// The plan, its services and the results being written, with what a round carries from one
/// scenario to the next.
pub(in crate::run) struct RunCtx<'a> {
    pub plan: &'a Plan,
    /// None when driving an external server.
    pub services: Option<&'a Services>,
    pub dir: &'a Path,
    pub rt: &'a tokio::runtime::Runtime,
    pub res: &'a mut Results,
    /// A process (with its descendants) to sample when there is no contender process: a
    /// server given by --url --pid.
    pub sample_tree: Option<i32>,
    /// A capacity probe gives up once the last second's p99 stayed above this (ms) for
    /// capacity::ABORT_AFTER_S seconds in a row...
    pub abort_p99_ms: Option<f64>,
    /// ...and says here that it did.
    pub gave_up: std::cell::Cell<bool>,
    /// During a warm-up that ends once the contender has settled: the watch, fed each second.
    pub settle: std::cell::RefCell<Option<crate::observe::warmup::Settle>>,
    /// With --profile: the current contender's profiler.
    pub profiler: Option<crate::observe::profile::Profiler>,
    /// With --profile, in a run led into by its warm-up: its profile, started once the warm-up
    /// has ended (the measured window opens when it has started).
    pub profile_ahead: std::cell::RefCell<Option<crate::observe::profile::Ahead>>,
    /// With --hosts: the load hosts the driver runs on instead of this machine.
    pub fleet: Option<&'a crate::remote::deploy::Fleet>,
    /// With --hosts and a pipeline: the Kafka load tool on the load hosts.
    pub record_load: Option<&'a crate::remote::record_load::RecordLoadHosts>,
    /// With --hosts and --cmd or --pid: the server on the contender host, sampled there.
    pub remote: Option<std::sync::Arc<crate::remote::contender::RemoteContender>>,
    /// What each load host did in the last load driven (empty for local load).
    pub host_shares: std::cell::RefCell<Vec<crate::driver::remote::HostShare>>,
    /// The contender's last (re)start, until the first run after it takes its record.
    pub pending_start: Option<PendingStart>,
    /// When the last warm-up began (steady state is timed from exec through it).
    pub warm_started: std::cell::Cell<Option<std::time::Instant>>,
    /// JVM contenders whose CDS or AOT archive was trained in this harness run.
    pub trained: std::collections::BTreeSet<String>,
}

/// A run of scenario `s` with nothing measured yet (see Run::new).
pub(in crate::run) fn new_run(name: &str, s: &Scenario, run: u32) -> Run {
    Run::new(
        name,
        &s.name,
        run,
        &s.path,
        serde_json::to_value(&s.load).unwrap_or_default(),
        &s.load.profile.describe(),
    )
}

pub(in crate::run) fn failed_run(name: &str, s: &Scenario, run: u32, why: &str) -> Run {
    Run {
        failure: Some(why.to_string()),
        ..new_run(name, s, run)
    }
}
