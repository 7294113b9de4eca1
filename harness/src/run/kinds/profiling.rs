//! A CPU profile of the measured run (`--profile`): the contender's profiler started with the
//! measured load and stopped with it, its outcome kept for the run (run/kinds/http.rs). A run
//! led into by its warm-up (run/kinds/lead_in.rs) starts its profiler once the measured window
//! is decided, less than a second before it opens: jcmd takes about half a second (mostly
//! before the window, then), on a thread of its own, as the loop beside the load (run/watch.rs)
//! cannot spare it from its quarter-second samples.

use crate::plan::Scenario;
use crate::results::profile::ProfileRecord;
use crate::results::record::Run;
use crate::run::observe::profile::{Ahead, Profiling, Start};
use crate::run::round::RunCtx;
use crate::services::contender::Running;

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

    /// With --profile: the profile of a led-in run, to start once its window is decided.
    pub(super) fn profile_ahead(&self, name: &str, proc: Option<&Running>, s: &Scenario, run: u32) {
        *self.profile_ahead.borrow_mut() = self.profile_start(name, proc, s, run).map(Ahead::Due);
    }

    /// The measured window is decided now: a profile due then starts, on its own thread.
    pub(in crate::run) fn start_profile_ahead(&self) {
        let mut ahead = self.profile_ahead.borrow_mut();
        if let Some(Ahead::Due(start)) = ahead.take() {
            *ahead = Some(Ahead::Starting(std::thread::spawn(move || start.begin())));
        }
    }

    /// The profile of a led-in run once its load has ended: None when its window was never
    /// decided (the profiler never started) or the profiler did not start.
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
