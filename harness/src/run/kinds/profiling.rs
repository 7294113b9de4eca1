//! A CPU profile of the measured run (`--profile`): the contender's profiler started with the
//! measured load and stopped with it, its outcome kept for the run (run/kinds/http.rs). A run
//! led into by its warm-up (run/kinds/lead_in.rs) primes its profiler before the warm-up (so that
//! what starting JFR sets off is over before steady state is judged), starts it once the
//! warm-up has ended and opens its measured window only when it has started.

use crate::observe::profile::{Ahead, Profiling, Start};
use crate::plan::Scenario;
use crate::results::profile::ProfileRecord;
use crate::results::record::Run;
use crate::run::context::RunCtx;
use crate::services::contender::Running;
use std::time::Duration;

/// How long a led-in run's window waits after its warm-up for its profiler to start (JFR's jcmd
/// calls take a second or two on a busy machine); past it the window opens anyway, the profile
/// missing its first moments.
pub(in crate::run) const PROFILER_WAIT: Duration = Duration::from_secs(5);

impl RunCtx<'_> {
    /// With --profile: the profile of run `run` of scenario `s`, ready to start.
    fn profile_start(
        &self,
        name: &str,
        proc: Option<&Running>,
        s: &Scenario,
        run: u32,
    ) -> Option<Start> {
        let profiler = self.profiler.clone()?;
        // The contender here, or on its host.
        let pid = proc
            .map(|p| p.pid)
            .or_else(|| self.remote.as_ref().map(|r| r.pid))?;
        let file = format!("{name}.{}.run{run}", s.name);
        let _ = std::fs::create_dir_all(self.dir.join("profiles"));
        Some(Start {
            profiler,
            pid,
            length: s.load.profile.duration(),
            stem: format!("profiles/{file}"),
            file,
            contender: name.to_string(),
            primed: false,
        })
    }

    /// With --profile: the contender's profiler started now, for the measured run.
    pub(super) fn begin_profile(
        &self,
        name: &str,
        proc: Option<&Running>,
        s: &Scenario,
        run: u32,
    ) -> Profiling {
        self.profile_start(name, proc, s, run)?.begin()
    }

    /// With --profile: the profile of a led-in run, primed now (before its warm-up) and
    /// started once its warm-up has ended, before its window is decided (`profile_ready`).
    pub(super) fn profile_ahead(&self, name: &str, proc: Option<&Running>, s: &Scenario, run: u32) {
        let due = self.profile_start(name, proc, s, run).map(|mut start| {
            match start.profiler.prime(start.pid) {
                Ok(()) => start.primed = true,
                Err(e) => eprintln!("[{name}] warning: the profiler was not primed: {e:#}"),
            }
            Ahead::Due(start)
        });
        *self.profile_ahead.borrow_mut() = due;
    }

    /// Whether a led-in run's measured window may be decided now, `waited` after its warm-up
    /// ended: once its profiler has started (its jcmd calls, a JVM each, then over, so that
    /// none runs inside the window), or PROFILER_WAIT after the warm-up whatever the profiler
    /// does; at once for a run without a profile. A profile still due starts now, on a thread
    /// of its own on the services' CPUs (jcmd takes a second or so, which the loop beside the
    /// load cannot spare, and is kept off the contender's CPU).
    pub(in crate::run) fn profile_ready(&self, waited: Duration) -> bool {
        let mut ahead = self.profile_ahead.borrow_mut();
        match ahead.take() {
            None => true,
            Some(Ahead::Due(start)) => {
                let cpus = self.plan.services_cpus.clone();
                *ahead = Some(Ahead::Starting(std::thread::spawn(move || {
                    // Unpinned, it would only share the contender's CPU at times: no reason
                    // to go without the profile.
                    let _ = crate::util::cpus::pin_current_thread(&cpus);
                    start.begin()
                })));
                false
            }
            Some(Ahead::Starting(starting)) => {
                let ready = starting.is_finished() || waited >= PROFILER_WAIT;
                *ahead = Some(Ahead::Starting(starting));
                ready
            }
        }
    }

    /// The profile of a led-in run once its load has ended: None when its warm-up never ended
    /// (the profiler never started) or the profiler did not start.
    pub(super) fn profile_started_ahead(&self) -> Profiling {
        match self.profile_ahead.borrow_mut().take()? {
            Ahead::Due(_) => None,
            Ahead::Starting(starting) => starting.join().ok().flatten(),
        }
    }

    /// The profile of the measured run, stopped now: None when the run was not profiled, the
    /// warning its run will carry when the profiler did not start or its profile was lost.
    pub(super) fn end_profile(
        &self,
        profiling: Profiling,
    ) -> Option<std::result::Result<ProfileRecord, String>> {
        let Some((session, stem)) = profiling else {
            return self
                .profiler
                .is_some()
                .then(|| Err("no CPU profile: the profiler did not start".into()));
        };
        let folded = format!("{stem}.folded");
        Some(match session.end(&self.dir.join(&folded)) {
            Ok(p) => {
                eprintln!(
                    "  profile ({}): {} samples, hottest {}",
                    p.tool,
                    p.samples,
                    p.hottest
                        .first()
                        .map(|h| format!("{} ({:.0}%)", h.frame, h.self_pct))
                        .unwrap_or_default()
                );
                Ok(ProfileRecord { folded, ..p })
            }
            Err(e) => {
                let why = format!("no CPU profile: {e:#}");
                eprintln!("  warning: {why}");
                Err(why)
            }
        })
    }
}

/// Keeps a run's profile, or the warning that says why it has none. Applied once the run is
/// complete, which writes its driver report and would drop a warning added before.
pub(super) fn keep_profile(r: &mut Run, profile: Option<Result<ProfileRecord, String>>) {
    match profile {
        Some(Ok(p)) => r.profile = Some(p),
        Some(Err(why)) => r.driver.warnings.push(why),
        None => {}
    }
}
