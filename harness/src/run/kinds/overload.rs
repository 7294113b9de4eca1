//! An overload scenario: the scenario's closed load probes capacity C, then open-model phases
//! at C/2, factor x C and C/2 again, and a verdict on whether the contender shed, queued or
//! absorbed the overload, with its recovery.

use crate::plan::{Load, Overload, OverloadRuns, Profile, Scenario};
use crate::results::details::Detail;
use crate::results::faults::verdict;
use crate::results::record::RunStatus;
use crate::run::context::RunCtx;
use crate::services::contender::Running;
use crate::util::interrupt;
use std::net::SocketAddr;
use std::time::Duration;

impl RunCtx<'_> {
    /// An overload scenario: the scenario's closed load probes capacity C, then open-model
    /// phases at C/2, factor x C and C/2 again, each a run of its own ("<name>-probe",
    /// "<name>-calm", "<name>-<factor>x", "<name>-after"); the overload run gets the verdict.
    pub(in crate::run) fn overload_round(
        &mut self,
        name: &str,
        mut proc: Option<&mut Running>,
        addr: SocketAddr,
        s: &Scenario,
        o: &Overload,
        run: u32,
    ) {
        let names = OverloadRuns::of(&s.name, o.factor);
        let probe = Scenario {
            name: names.probe.clone(),
            overload: None,
            ..s.clone()
        };
        self.measure_scenario(name, proc.as_deref_mut(), addr, &probe, run);
        let Some(capacity) = self
            .res
            .runs
            .last()
            .filter(|r| r.scenario == probe.name && r.status == RunStatus::Ok)
            .map(|r| r.summary.rps)
            .filter(|c| *c > 0.0)
        else {
            return;
        };
        let phases = phases(s, o, names, capacity);
        let first = self.res.runs.len();
        for p in &phases {
            if interrupt::stopped() || proc.as_mut().is_some_and(|p| p.exited().is_some()) {
                return;
            }
            self.measure_scenario(name, proc.as_deref_mut(), addr, p, run);
        }
        let runs = &self.res.runs[first..];
        let (Some(calm), Some(over), Some(after)) = (
            runs.iter().find(|r| r.scenario == phases[0].name),
            runs.iter().find(|r| r.scenario == phases[1].name),
            runs.iter().find(|r| r.scenario == phases[2].name),
        ) else {
            return;
        };
        let e = &over.summary.errors;
        let sent = over.summary.ok + over.summary.drained + e.total();
        let v = verdict(
            capacity,
            o.factor,
            sent,
            over.summary.rps,
            e.status + e.connect + e.io,
            e.timeout + e.unanswered,
            calm.summary.latency.p99,
            over.summary.latency.p99,
            &after.intervals,
            after.summary.latency.p99,
        );
        eprintln!("  overload: {} ({})", v.behaviour, v.explanation);
        let over_name = phases[1].name.clone();
        if let Some(r) = self.res.runs[first..]
            .iter_mut()
            .find(|r| r.scenario == over_name)
        {
            r.details.set(Detail::Overload(v));
        }
    }
}

/// The three open-model phases around the closed probe's capacity: calm at half of it, the
/// overload at `factor` times it, and after at half again.
fn phases(s: &Scenario, o: &Overload, names: OverloadRuns, capacity: f64) -> [Scenario; 3] {
    let phase = |name: String, rate: f64, length: Duration| Scenario {
        name,
        warmup: Duration::ZERO,
        load: Load {
            profile: Profile::Open {
                rate,
                ramp_to: rate,
                duration: length,
                max_connections: 10_000,
            },
            ..s.load.clone()
        },
        overload: None,
        ..s.clone()
    };
    [
        phase(names.calm, capacity / 2.0, o.calm),
        phase(names.rush, capacity * o.factor, o.duration),
        phase(names.after, capacity / 2.0, o.calm),
    ]
}
