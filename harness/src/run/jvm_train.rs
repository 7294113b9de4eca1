//! The training start a JVM contender with `jvm_start = "cds"` or `"aot"` gets before its first
//! measured start: it starts as usual with the flags that write the archive at exit, answers
//! the contract's requests (every endpoint, as a team's training run exercises its service),
//! and stops; the JVM writes the archive as it exits, which the measured starts then read.

use super::launch::{launch, verify_contender, Launched};
use super::round::RunCtx;
use crate::services::contender::{describe_exit, log_tail, LOOPBACK};
use crate::services::jvm_start::{self, JvmStart};
use crate::services::manifest::Manifest;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a training JVM gets to exit after SIGTERM: it writes its archive on the way out
/// (the AOT cache takes seconds on one CPU, more under a quota).
const TRAINING_EXIT: Duration = Duration::from_secs(180);

impl RunCtx<'_> {
    /// Trains `m`'s archive once per harness run (again at its next round if it failed), before its first measured start, when its
    /// tunables ask for one; a no-op otherwise. An error says why the archive was not made.
    pub(super) fn train_jvm_start(
        &mut self,
        m: &Manifest,
        tunables: &BTreeMap<String, String>,
        java: Option<&Path>,
    ) -> Result<()> {
        let Some(archive) = JvmStart::of(&m.name, tunables)?.needs_training() else {
            return Ok(());
        };
        if self.trained.contains(&m.name) {
            return Ok(());
        }
        let file = archive.path(&m.dir, &m.name);
        // An archive from an earlier build or JDK would fail the strict start, or worse, fit.
        let _ = std::fs::remove_file(&file);
        let mut training = tunables.clone();
        training.insert(
            jvm_start::TUNABLE.to_string(),
            archive.training_value().to_string(),
        );
        let log = self
            .dir
            .join("logs")
            .join(format!("{}.training.log", m.name));
        let env = self.contender_env()?;
        eprintln!(
            "[{}] training start: writes {} at exit",
            m.name,
            file.display()
        );
        let t0 = Instant::now();
        let Launched {
            mut proc,
            startup_timeout,
            ..
        } = launch(m, &training, self.plan, java, LOOPBACK, &log, &env)?;
        let trained = proc
            .wait_ready(self.rt, &m.ready, startup_timeout)
            .and_then(|_| {
                let services = self
                    .services
                    .context("contenders need the harness's services")?;
                verify_contender(
                    self.rt,
                    proc.addr,
                    m,
                    services,
                    &self.plan.driver_cpus,
                    &self.dir.join("logs"),
                    Some(log.as_path()),
                    None,
                )
            });
        let status = proc.stop(TRAINING_EXIT);
        trained.context("the training start failed")?;
        if !file.is_file() {
            bail!(
                "the training start ({}) wrote no {}; last log lines:\n{}",
                describe_exit(status),
                file.display(),
                log_tail(&log, 15)
            );
        }
        let mb = std::fs::metadata(&file).map_or(0, |f| f.len()) >> 20;
        eprintln!(
            "[{}] trained in {:.0} s: {} ({mb} MB)",
            m.name,
            t0.elapsed().as_secs_f64(),
            file.display()
        );
        self.trained.insert(m.name.clone());
        Ok(())
    }
}
