//! The pipelines' record load from the load hosts: the Kafka load tool (a Java program) copied
//! to each, started there under `iobound agent contender` (pinned to the host's CPUs) with its
//! share of the rate, a tag of its own and the common start, and its report read back when it
//! ends. The reports are added (services::kafka_report::merge): every record sent by any host is
//! looked for in `output`, and the latencies are those of all of them.

use super::contender::{ContenderJob, RemoteContender};
use super::deploy::{Fleet, HostReady};
use super::ship::{self, Probe};
use crate::services::kafka::{Kafka, LoadReport, RecordLoad};
use crate::services::kafka_broker::tool_jar;
use crate::services::kafka_report::merge;
use crate::util::shell::command_line;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How far ahead the common start is set: time for every host's JVM to start, connect to the
/// broker and find the end of `output` (a tool ready later says so in its report).
const START_AHEAD: Duration = Duration::from_secs(6);

/// The load tool, ready on every load host: its jar copied there, the JDK found there (one
/// per load host, in the fleet's order).
pub struct RecordLoadHosts {
    java: Vec<String>,
    /// The jar's path in the repository (the same under each host's copy).
    jar: PathBuf,
}

impl RecordLoadHosts {
    /// Copies the load tool to every load host and finds each one's JDK; refuses a host
    /// without one, naming it.
    pub fn prepare(fleet: &Fleet, root: &Path) -> Result<RecordLoadHosts> {
        let jar = tool_jar(root);
        if !jar.exists() {
            bail!("{} is missing: run './iobound build'", jar.display());
        }
        let rel = jar.strip_prefix(root).unwrap_or(&jar).to_path_buf();
        let mut java = Vec::new();
        for h in &fleet.load {
            let probe = Probe::of(h, h.ssh.host.address, 1)?;
            let Some(j) = probe.java else {
                bail!(
                    "load host {} has no JDK >= 21 for the Kafka load tool of the pipelines (looked at $JAVA_HOME and /usr/lib/jvm/* there); install one there, e.g. `apt-get install openjdk-21-jdk-headless`",
                    h.ssh.host.name
                );
            };
            ship::ship(h, root, std::slice::from_ref(&rel), &remote_root(h)).with_context(
                || {
                    format!(
                        "copying the Kafka load tool to load host {}",
                        h.ssh.host.name
                    )
                },
            )?;
            java.push(j);
        }
        Ok(RecordLoadHosts { java, jar: rel })
    }

    /// `load` split evenly over the load hosts (rate/N each, one common start), run to its
    /// end; `tick` is called every 250 ms from the common start with the time since then and
    /// stops every host's load when it returns false. A host that fails or is lost fails the
    /// load, naming it, with its log's last lines (copied into `logs`).
    pub fn run(
        &self,
        fleet: &Fleet,
        kafka: &Kafka,
        logs: &Path,
        load: RecordLoad,
        tag: &str,
        mut tick: impl FnMut(Duration) -> bool,
    ) -> Result<LoadReport> {
        let start_unix = SystemTime::now().duration_since(UNIX_EPOCH)? + START_AHEAD;
        let start = Instant::now() + START_AHEAD;
        let rate = load.rate / fleet.load.len() as f64;
        let mut tools = Vec::new();
        for (i, h) in fleet.load.iter().enumerate() {
            let at_ms = (start_unix.as_secs_f64() + h.clock_offset_s) * 1000.0;
            let share = RecordLoad {
                rate,
                start_epoch_ms: Some(at_ms as u64),
                ..load
            };
            let name = format!("{tag}-h{i}");
            let tool = self.start(h, &self.java[i], kafka, share, &name)?;
            tools.push((h, tool, name));
        }
        let limit =
            START_AHEAD + Duration::from_secs_f64(load.warmup + load.seconds + load.drain + 30.0);
        let t0 = Instant::now();
        while !tools.iter().all(|(_, t, _)| t.exited().is_some()) {
            let going = match Instant::now().checked_duration_since(start) {
                Some(elapsed) => tick(elapsed),
                None => !crate::util::interrupt::stopped(),
            };
            if !going || t0.elapsed() > limit {
                for (_, t, name) in &tools {
                    t.stop(Duration::from_secs(1), &logs.join(format!("{name}.log")));
                }
                if going {
                    bail!(
                        "the load hosts' Kafka load tools did not end within {} s",
                        limit.as_secs()
                    );
                }
                bail!("stopped before the load finished");
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        let (reports, shares) = reports(&tools, logs, rate)?;
        let mut sum = merge(&reports)?;
        sum.hosts = shares;
        // The hosts' seconds count from the common start (the warm-up's) and from the measured
        // phase's start after it, in this machine's clock.
        let start_ms = start_unix.as_millis() as u64;
        sum.start_epoch_ms = start_ms + (load.warmup * 1000.0) as u64;
        if let Some(w) = sum.warmup.as_mut() {
            w.start_epoch_ms = start_ms;
        }
        Ok(sum)
    }

    /// Starts the load tool on `h` with `load` (its start by the host's clock), tagged `name`.
    fn start(
        &self,
        h: &HostReady,
        java: &str,
        kafka: &Kafka,
        load: RecordLoad,
        name: &str,
    ) -> Result<Arc<RemoteContender>> {
        let out = PathBuf::from(format!("{}/{name}.json", h.dir));
        let mut argv = kafka.load_argv(load, name, &out);
        // The same command as here, on the host's JDK and its copy of the jar.
        argv[0] = java.to_string();
        if let Some(cp) = argv.iter().position(|a| a == "-cp") {
            argv[cp + 1] = format!("{}/{}", remote_root(h), self.jar.display());
        }
        let job = ContenderJob {
            host: h.ssh.host.name.clone(),
            argv,
            cwd: h.dir.clone(),
            cpus: h.cpus.clone(),
            log: format!("{}/{name}.log", h.dir),
            ..ContenderJob::default()
        };
        RemoteContender::start(&h.ssh, &h.binary, &job).with_context(|| {
            format!(
                "starting the Kafka load tool on load host {}",
                h.ssh.host.name
            )
        })
    }
}

/// Each load host's report, read from it once its tool has ended, and its share as the results
/// keep it; a host without a readable report fails the load, naming it.
fn reports(
    tools: &[(&HostReady, Arc<RemoteContender>, String)],
    logs: &Path,
    rate: f64,
) -> Result<(Vec<LoadReport>, Vec<crate::driver::remote::HostShare>)> {
    let (mut reports, mut shares) = (Vec::new(), Vec::new());
    for (h, t, name) in tools {
        let out = format!("{}/{name}.json", h.dir);
        let text = h.ssh.output(&command_line(&["cat", "--", &out]));
        let log = logs.join(format!("{name}.log"));
        t.stop(Duration::from_secs(1), &log);
        let Ok(text) = text else {
            bail!(
                "the Kafka load tool on load host {} ended without a report ({}); last log lines:\n{}",
                h.ssh.host.name,
                t.exited().unwrap_or_default(),
                crate::services::exit_words::log_tail(&log, 12)
            );
        };
        let _ = std::fs::remove_file(&log);
        let report: LoadReport = serde_json::from_str(&text).with_context(|| {
            format!(
                "the load tool's report from load host {} is not what iobound expects",
                h.ssh.host.name
            )
        })?;
        shares.push(report.share(&h.ssh.host.name, rate));
        reports.push(report);
    }
    Ok((reports, shares))
}

/// Where this checkout's files go on a host.
fn remote_root(h: &HostReady) -> String {
    format!("{}/repo", h.dir)
}
