//! A CPU profile of the measured run (`--profile`): the contender's profiler started with the
//! measured load and stopped with it, its outcome kept for the run (run/kinds/http.rs).

use crate::plan::Scenario;
use crate::results::profile::ProfileRecord;
use crate::run::observe::profile::Session;
use crate::run::round::RunCtx;
use crate::services::contender::Running;

impl RunCtx<'_> {
    /// With --profile: the contender's profiler started for the measured run (a profiler that
    /// cannot start costs the run nothing but its profile: a warning says why).
    pub(super) fn begin_profile(
        &self,
        name: &str,
        proc: Option<&Running>,
        s: &Scenario,
        run: u32,
    ) -> Option<(Session, String)> {
        let p = self.profiler.as_ref()?;
        // The contender here, or on its host.
        let pid = proc
            .map(|p| p.pid)
            .or_else(|| self.remote.as_ref().map(|r| r.pid))?;
        let file = format!("{name}.{}.run{run}", s.name);
        let stem = format!("profiles/{file}");
        let _ = std::fs::create_dir_all(self.dir.join("profiles"));
        match p.begin(pid, s.load.profile.duration(), &file) {
            Ok(session) => Some((session, stem)),
            Err(e) => {
                eprintln!("[{name}] warning: the profiler did not start: {e:#}");
                None
            }
        }
    }

    /// The profile of the measured run, stopped now: None when the run was not profiled, the
    /// warning its run will carry when the profiler did not start or its profile was lost.
    pub(super) fn end_profile(
        &self,
        profiling: Option<(Session, String)>,
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
