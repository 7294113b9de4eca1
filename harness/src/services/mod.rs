//! What contenders depend on, set up by the harness before the first contender starts: the
//! /hash corpus, the downstream service of /enrich and the PostgreSQL of /messages (both pinned to
//! the driver's CPUs, so that the contender's CPUs are its own). Contenders learn where they are
//! from environment variables.
//!
//! Holds: `corpus`, `downstream`, `database` (its where-and-how in `db_config`), `kafka` (the broker as a service, and the Kafka
//! load tool), `kafka_broker` (the broker's own process: jars, storage, argv), `kafka_report`
//! (what the load tool reports, several hosts' reports added), `jdk`, `contender` (starting,
//! supervising and stopping processes), `exit_words` (how a process's end reads), `detected`
//! (what a contender said its runtime detected at start), `private_tmp` (each process's
//! temporary directory), `manifest` (contender.toml), `test_server` (the built-in server used
//! by tests and benchmarks), `write_check` (judging a run's acknowledged writes against the
//! rows found).
//! Uses: util, plan, driver (kafka_report: histograms, a load host's share).

pub mod build_steps;
pub mod contender;
pub mod corpus;
pub mod database;
pub mod db_config;
pub mod detected;
pub mod downstream;
pub mod exit_words;
pub mod folder_builds;
pub mod jdk;
pub mod jvm_start;
pub mod kafka;
pub mod kafka_broker;
pub mod kafka_report;
pub mod manifest;
pub mod ports;
pub mod private_tmp;
pub mod test_server;
pub mod write_check;

use crate::plan::{CorpusSpec, DownstreamPlan, Plan};
use anyhow::{Context, Result};
use contender::Running;
use corpus::Corpus;
use database::Database;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// What the services take from a plan, made once from it (`Settings::of`): the corpus to
/// generate, the downstream service's latency and faults, the pool every contender gets,
/// Kafka's partitions and the CPUs the services run on.
#[derive(Debug, Clone)]
pub struct Settings {
    pub corpus: CorpusSpec,
    pub downstream: DownstreamPlan,
    pub db_pool: usize,
    pub kafka_partitions: u32,
    pub cpus: Vec<usize>,
}

impl Settings {
    pub fn of(plan: &Plan) -> Settings {
        Settings {
            corpus: plan.corpus.clone(),
            downstream: plan.downstream.clone(),
            db_pool: plan.db_pool,
            kafka_partitions: plan.kafka_partitions,
            cpus: plan.services_cpus.clone(),
        }
    }
}

pub struct Services {
    pub corpus: Corpus,
    pub downstream: Downstream,
    pub downstream_timeout: Duration,
    pub database: Option<Database>,
    /// Started only when a scenario or contender needs it.
    pub kafka: Option<crate::services::kafka::Kafka>,
}

/// The downstream service of /enrich and /aggregate: started here, or on a services host (the
/// caller looks after that process; only its address is here).
pub struct Downstream {
    pub addr: SocketAddr,
    /// The token its control endpoints ask for, made for this run.
    pub token: String,
    local: Option<Running>,
}

impl Downstream {
    /// Its control endpoints, with the run's token.
    pub fn control(&self) -> downstream::Control {
        downstream::Control {
            addr: self.addr,
            token: self.token.clone(),
        }
    }
}

/// External services given on the command line instead of the embedded ones.
#[derive(Debug, Clone, Default)]
pub struct ServiceChoice {
    /// The PostgreSQL at this URL instead of an embedded one.
    pub url: Option<String>,
    /// Whether those may be off this machine.
    pub allow_remote: bool,
    /// An external Kafka cluster instead of the embedded broker.
    pub kafka_bootstrap: Option<String>,
}

impl Services {
    /// Starts what a plan needs, by its `settings`, logging into `logs`: always the corpus
    /// (generated under `<root>/.cache`, or reused) and the downstream service, PostgreSQL (or
    /// a connection to the given one) when `need_database` (a scenario calls /messages, or
    /// `iobound verify`), Kafka when `need_kafka`.
    pub fn start(
        root: &Path,
        settings: &Settings,
        rt: &tokio::runtime::Runtime,
        logs: &Path,
        choice: &ServiceChoice,
        need_database: bool,
        need_kafka: bool,
    ) -> Result<Services> {
        let corpus = Corpus::ensure(&root.join(".cache"), &settings.corpus)?;
        let database = if need_database || choice.url.is_some() {
            Some(start_database(root, settings, rt, logs, choice)?)
        } else {
            None
        };
        let kafka = if need_kafka {
            Some(start_kafka(root, settings, logs, choice)?)
        } else {
            None
        };
        let token = crate::util::numbers::random_hex(16)?;
        let downstream = start_downstream(root, settings, rt, logs, &token)?;
        eprintln!(
            "iobound: corpus {} ({} files of {} KB)",
            corpus.dir.display(),
            corpus.spec.files,
            corpus.spec.size / 1024
        );
        Ok(Services {
            corpus,
            downstream: Downstream {
                addr: downstream.addr,
                token,
                local: Some(downstream),
            },
            downstream_timeout: settings.downstream.timeout,
            database,
            kafka,
        })
    }

    /// Services started elsewhere (on a services host): the corpus is this machine's copy of
    /// what the contender host generates from the same spec, for the checks.
    pub fn elsewhere(
        corpus: Corpus,
        downstream: downstream::Control,
        settings: &Settings,
        database: Option<Database>,
    ) -> Services {
        Services {
            corpus,
            downstream: Downstream {
                addr: downstream.addr,
                token: downstream.token,
                local: None,
            },
            downstream_timeout: settings.downstream.timeout,
            database,
            kafka: None,
        }
    }

    /// The environment every contender is started with.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut e = self.corpus.env();
        e.push((
            "IOBOUND_DOWNSTREAM_URL".into(),
            format!("http://{}", self.downstream.addr),
        ));
        e.push((
            "IOBOUND_DOWNSTREAM_TIMEOUT_MS".into(),
            self.downstream_timeout.as_millis().to_string(),
        ));
        if let Some(db) = &self.database {
            e.extend(db.env());
        }
        if let Some(k) = &self.kafka {
            e.extend(k.env());
        }
        e
    }

    pub fn stop(&mut self) {
        if let Some(d) = self.downstream.local.as_mut() {
            d.stop(Duration::from_secs(2));
        }
        if let Some(db) = self.database.as_mut() {
            db.stop();
        }
        if let Some(k) = self.kafka.as_mut() {
            k.stop();
        }
    }
}
/// PostgreSQL: the one at --db-url, or an embedded one pinned to the services' CPUs.
fn start_database(
    root: &Path,
    settings: &Settings,
    rt: &tokio::runtime::Runtime,
    logs: &Path,
    choice: &ServiceChoice,
) -> Result<Database> {
    let db = match &choice.url {
        Some(url) => Database::external(url, choice.allow_remote, rt, settings.db_pool)?,
        None => Database::start_embedded(
            root,
            &settings.cpus,
            &logs.join("postgres.log"),
            rt,
            settings.db_pool,
        )
        .context("the embedded PostgreSQL did not start")?,
    };
    eprintln!(
        "iobound: database {}; pool of {} connections per contender",
        db.description, db.pool
    );
    Ok(db)
}

/// Kafka: the broker at --kafka-bootstrap, or an embedded one pinned to the services' CPUs.
fn start_kafka(
    root: &Path,
    settings: &Settings,
    logs: &Path,
    choice: &ServiceChoice,
) -> Result<kafka::Kafka> {
    let java = jdk::find_java()
        .context("the Kafka broker and the pipeline load need a JDK >= 21 (set JAVA_HOME)")?;
    let k = match &choice.kafka_bootstrap {
        Some(b) => kafka::Kafka::external(
            root,
            &java,
            b,
            choice.allow_remote,
            settings.kafka_partitions,
        )?,
        None => kafka::Kafka::start(
            root,
            &java,
            &settings.cpus,
            &logs.join("kafka.log"),
            settings.kafka_partitions,
        )
        .context("the embedded Kafka broker did not start")?,
    };
    eprintln!("iobound: kafka {}", k.description);
    Ok(k)
}

/// The downstream service (`iobound downstream`), with the plan's latency and faults, pinned
/// to the services' CPUs.
fn start_downstream(
    root: &Path,
    settings: &Settings,
    rt: &tokio::runtime::Runtime,
    logs: &Path,
    token: &str,
) -> Result<Running> {
    let exe = std::env::current_exe().context("cannot find the iobound binary")?;
    let port = ports::free_port()?;
    let d = &settings.downstream;
    let mut argv = vec![exe.display().to_string()];
    argv.extend(downstream_args(settings, contender::LOOPBACK, port));
    let log = logs.join("downstream.log");
    let env = [(downstream::TOKEN_ENV.to_string(), token.to_string())];
    let mut downstream = contender::start(&argv, root, &settings.cpus, port, &log, &env)?;
    downstream
        .wait_ready(rt, "/plaintext", Duration::from_secs(10))
        .context("the downstream service did not start")?;
    eprintln!(
        "iobound: downstream service on {} (latency {}, error rate {}, stall probability {}), CPU {}",
        downstream.addr,
        d.latency,
        d.error_rate,
        d.stall_prob,
        crate::util::cpus::format_cpus(&settings.cpus),
    );
    Ok(downstream)
}

/// `iobound downstream`'s arguments for the plan's latency and faults, listening on
/// `address:port`.
pub fn downstream_args(settings: &Settings, address: std::net::IpAddr, port: u16) -> Vec<String> {
    let d = &settings.downstream;
    [
        "downstream",
        "--address",
        &address.to_string(),
        "--port",
        &port.to_string(),
        "--latency",
        &d.latency,
        "--error-rate",
        &d.error_rate.to_string(),
        "--stall-prob",
        &d.stall_prob.to_string(),
        "--stall-for",
        &d.stall_for,
    ]
    .map(String::from)
    .to_vec()
}
