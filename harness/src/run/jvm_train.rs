//! The training start a JVM contender with `jvm_start = "cds"` or `"aot"` gets before its first
//! measured start: it starts as usual with the flags that write the archive at exit, answers
//! the contract's requests (every endpoint, as a team's training run exercises its service),
//! and stops; the JVM writes the archive as it exits, which the measured starts then read.

use super::context::RunCtx;
use super::launch::{launch, verify_contender, Launched};
use crate::plan::{limits::PlanLimits, Plan};
use crate::services::contender::LOOPBACK;
use crate::services::exit_words::{describe_exit, log_tail};
use crate::services::jvm_start::{self, Archive, JvmStart};
use crate::services::manifest::{Manifest, StartVars};
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
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
        let file = fresh_archive(m, archive, tunables, java)?;
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
        // Trained as a team trains it, in a build step, not in the container it will run in:
        // writing the AOT cache forks a second JVM of the same heap beside the first, which a
        // memory limit sized for one kills.
        let unlimited = Plan {
            limits: PlanLimits::default(),
            ..self.plan.clone()
        };
        let Launched {
            mut proc,
            startup_timeout,
            ..
        } = launch(m, &training, &unlimited, java, LOOPBACK, &log, &env)?;
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

/// Where `m`'s archive goes, with none there yet: an archive from an earlier build or JDK
/// would fail the strict start, or worse, fit. A Spring Boot jar is extracted first.
fn fresh_archive(
    m: &Manifest,
    archive: Archive,
    tunables: &BTreeMap<String, String>,
    java: Option<&Path>,
) -> Result<PathBuf> {
    let file = archive.path(&m.dir, &m.name);
    let _ = std::fs::remove_file(&file);
    // A contender that starts another's jar (spring-mvc-virtual) has no build output of its own.
    std::fs::create_dir_all(file.parent().context("an archive has a folder")?)?;
    if m.boot_jar {
        extract_boot_jar(m, tunables, java)?;
    }
    Ok(file)
}

/// Extracts `m`'s Spring Boot jar afresh (a rebuilt jar is extracted again) where its starts
/// from an archive run it: the training start, which writes the archive from the extracted
/// classes, and the measured starts, which read it.
fn extract_boot_jar(
    m: &Manifest,
    tunables: &BTreeMap<String, String>,
    java: Option<&Path>,
) -> Result<()> {
    let argv = m.command(
        &StartVars {
            java,
            jvm_flags: &[],
            address: LOOPBACK,
            port: 0,
        },
        tunables,
    )?;
    let extracted = jvm_start::extracted_dir(&m.dir, &m.name);
    if extracted.exists() {
        std::fs::remove_dir_all(&extracted)
            .with_context(|| format!("removing the earlier {}", extracted.display()))?;
    }
    let jar = jvm_start::started_jar(&argv)?;
    let out = Command::new(&argv[0])
        .args(jvm_start::extract_args(jar, &extracted))
        .current_dir(&m.dir)
        .output()
        .with_context(|| format!("running {}", argv[0]))?;
    if !out.status.success() {
        bail!(
            "[{}] extracting {jar} for its archive failed ({}): {}",
            m.name,
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    eprintln!("[{}] extracted {jar} into {}", m.name, extracted.display());
    Ok(())
}
