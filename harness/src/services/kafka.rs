//! The Kafka broker behind pipeline scenarios: a real single-node Apache Kafka 4.4.0 in KRaft
//! mode (broker and controller in one process) started from the jars `./iobound build` copies
//! into .cache/kafka/libs, on loopback, pinned to the driver's CPUs, with its data in a
//! temporary directory removed afterwards; or an external cluster given by --kafka-bootstrap.
//! Topics `input` and `output` are created by the harness; the load (produce on a schedule,
//! consume `output`, check every record arrived) is the harness's own Kafka load tool
//! (services/kafka-load, a Java program: Kafka's client is Java).

use crate::services::contender::{self, Running};
use crate::services::kafka_broker::{
    broker_argv, built_libs, format_storage, server_properties, tool_jar, wait_listening,
};
pub use crate::services::kafka_report::{DeliveryCheck, LoadInterval, LoadReport};
use crate::services::ports;
use anyhow::{bail, Context, Result};
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub struct Kafka {
    pub bootstrap: String,
    pub partitions: u32,
    pub description: String,
    java: PathBuf,
    /// The jar of the Kafka load tool (dev.iobound.kafkaload.LoadTool).
    tool: PathBuf,
    server: Option<Running>,
    data: Option<PathBuf>,
}

impl Kafka {
    /// Formats a fresh data directory and starts the broker; then creates the topics.
    pub fn start(
        root: &Path,
        java: &Path,
        cpus: &[usize],
        log: &Path,
        partitions: u32,
    ) -> Result<Kafka> {
        let libs = built_libs(root, ", or give an external cluster with --kafka-bootstrap")?;
        let tool = tool_jar(root);
        if !tool.exists() {
            bail!("{} is missing: run './iobound build'", tool.display());
        }
        let cache = root.join(".cache");
        crate::util::files::sweep_stale(&cache, "kafka-");
        let data = cache.join(format!("kafka-{}", std::process::id()));
        crate::util::interrupt::register_dir(&data);
        let _ = std::fs::remove_dir_all(&data);
        std::fs::create_dir_all(&data)
            .with_context(|| format!("cannot create {}", data.display()))?;
        let [port, controller] = ports::free_ports()?;
        let props = data.join("server.properties");
        let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
        std::fs::write(&props, server_properties(&data, loopback, port, controller))?;
        let cp = format!("{}/*", libs.display());
        if let Err(e) = format_storage(java, &cp, &props) {
            let _ = std::fs::remove_dir_all(&data);
            return Err(e);
        }
        let argv = broker_argv(java, cp, &props);
        let mut server = contender::start(&argv, &data, cpus, port, log, &[])?;
        if let Err(e) = wait_listening(&mut server, port) {
            let _ = std::fs::remove_dir_all(&data);
            return Err(e);
        }
        let description = format!(
            "Apache Kafka 4.4.0, single node in KRaft mode (broker and controller), started by iobound on 127.0.0.1:{port} with a 512 MB heap, pinned to CPU {}; topics input and output with {partitions} partitions, replication 1",
            crate::util::cpus::format_cpus(cpus)
        );
        let k = Kafka {
            bootstrap: format!("127.0.0.1:{port}"),
            partitions,
            description,
            java: java.to_path_buf(),
            tool,
            server: Some(server),
            data: Some(data),
        };
        k.create_topics()?;
        Ok(k)
    }

    /// A cluster someone else runs; the topics are created if missing.
    pub fn external(
        root: &Path,
        java: &Path,
        bootstrap: &str,
        allow_remote: bool,
        partitions: u32,
    ) -> Result<Kafka> {
        let host = bootstrap
            .rsplit_once(':')
            .map(|(h, _)| h)
            .with_context(|| {
                format!(
                    "--kafka-bootstrap {bootstrap:?}: write it as HOST:PORT, e.g. 127.0.0.1:9092"
                )
            })?;
        let loopback = host == "localhost"
            || host
                .trim_matches(['[', ']'])
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        if !loopback && !allow_remote {
            bail!("--kafka-bootstrap {bootstrap:?}: {host} is not a loopback address; pass --allow-remote if that cluster is yours to load");
        }
        let k = Kafka {
            bootstrap: bootstrap.to_string(),
            partitions,
            description: format!("external Kafka at {bootstrap}; topics input and output ({partitions} partitions when created by iobound)"),
            java: java.to_path_buf(),
            tool: tool_jar(root),
            server: None,
            data: None,
        };
        k.create_topics()?;
        Ok(k)
    }

    fn create_topics(&self) -> Result<()> {
        let out = self
            .tool_command()
            .args([
                "--bootstrap",
                &self.bootstrap,
                "--create-topics",
                &self.partitions.to_string(),
            ])
            .output()
            .context("cannot run the pipeline load tool")?;
        if !out.status.success() {
            bail!(
                "creating the topics failed ({}):\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .rev()
                    .take(8)
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
        Ok(())
    }

    /// `java -cp kafka-load.jar dev.iobound.kafkaload.LoadTool`, quiet.
    pub fn tool_command(&self) -> std::process::Command {
        let mut c = std::process::Command::new(&self.java);
        c.args([
            "-Xmx512m",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "-cp",
        ])
        .arg(&self.tool)
        .arg("dev.iobound.kafkaload.LoadTool");
        c
    }

    /// The argv of a load run (for contender::start, which pins and supervises it).
    pub fn load_argv(&self, load: RecordLoad, tag: &str, out: &Path) -> Vec<String> {
        let mut argv = vec![
            self.java.display().to_string(),
            "-Xmx512m".into(),
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn".into(),
            "-cp".into(),
            self.tool.display().to_string(),
            "dev.iobound.kafkaload.LoadTool".into(),
            "--bootstrap".into(),
            self.bootstrap.clone(),
            "--rate".into(),
            load.rate.to_string(),
            "--warmup".into(),
            load.warmup.to_string(),
            "--duration".into(),
            load.seconds.to_string(),
            "--drain".into(),
            load.drain.to_string(),
            "--tag".into(),
            tag.to_string(),
            "--out".into(),
            out.display().to_string(),
        ];
        if let Some(at) = load.start_epoch_ms {
            argv.extend(["--start-epoch-ms".into(), at.to_string()]);
        }
        argv
    }

    pub fn env(&self) -> Vec<(String, String)> {
        vec![("IOBOUND_KAFKA_BOOTSTRAP".into(), self.bootstrap.clone())]
    }

    pub fn stop(&mut self) {
        if let Some(mut s) = self.server.take() {
            // Its data is thrown away: no need to wait long for a controlled shutdown, and none
            // at all after Ctrl-C (everything must be gone within 5 s).
            s.stop(if crate::util::interrupt::stopped() {
                Duration::ZERO
            } else {
                Duration::from_secs(3)
            });
        }
        if let Some(d) = self.data.take() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

impl Drop for Kafka {
    fn drop(&mut self) {
        self.stop();
    }
}

/// How much the Kafka load tool sends: `rate` records/s for `warmup` seconds and then, without
/// a pause, for the `seconds` measured, then up to `drain` seconds for the last records to come
/// through. The schedule begins at `start_epoch_ms` (ms since 1970) when given, else as soon as
/// the tool is ready.
#[derive(Clone, Copy, Debug)]
pub struct RecordLoad {
    pub rate: f64,
    pub warmup: f64,
    pub seconds: f64,
    pub drain: f64,
    pub start_epoch_ms: Option<u64>,
}

/// How far ahead of now a local pipeline load's schedule begins: time for the load tool's JVM
/// to start and reach the broker, so that the harness knows when each second of the schedule
/// (the warm-up's end, the measured phase's events) falls.
pub const LOCAL_START_AHEAD: Duration = Duration::from_secs(6);

/// Runs the load tool (pinned to `cpus`, supervised like any child, killed on Ctrl-C); `tick`
/// is called every 250 ms, from the schedule's start with the time since then (when `load` has
/// one; else from the tool's start), and stops the load when it returns false.
pub fn run_load(
    kafka: &Kafka,
    cpus: &[usize],
    dir: &Path,
    load: RecordLoad,
    tag: &str,
    mut tick: impl FnMut(Duration) -> bool,
) -> Result<LoadReport> {
    // The load tool runs in `dir`: give it absolute paths (results directories may be relative).
    let dir =
        &std::path::absolute(dir).with_context(|| format!("cannot resolve {}", dir.display()))?;
    let out = dir.join(format!("{tag}.json"));
    let log = dir.join(format!("{tag}.log"));
    let argv = kafka.load_argv(load, tag, &out);
    let mut proc = super::contender::start(&argv, dir, cpus, 0, &log, &[])?;
    let t0 = match load.start_epoch_ms {
        Some(at) => {
            let now = crate::util::clock::unix_ms();
            Instant::now() + Duration::from_millis(at.saturating_sub(now))
        }
        None => Instant::now(),
    };
    let status = loop {
        if let Some(s) = proc.exited() {
            break s;
        }
        let going = match Instant::now().checked_duration_since(t0) {
            Some(elapsed) => tick(elapsed),
            None => !crate::util::interrupt::stopped(),
        };
        if !going {
            proc.stop(Duration::from_secs(2));
            bail!("stopped before the load finished");
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    proc.stop(Duration::from_secs(1));
    if !status.success() {
        bail!(
            "the pipeline load tool failed ({}); last log lines:\n{}",
            super::exit_words::describe_exit(status),
            super::exit_words::log_tail(&log, 12)
        );
    }
    let text = std::fs::read_to_string(&out)
        .with_context(|| format!("the load tool wrote no report to {}", out.display()))?;
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(&log);
    serde_json::from_str(&text).context("the load tool's report is not what iobound expects")
}
