//! The services of the built-in contenders on the services host: the downstream service
//! (`iobound downstream` there), when a scenario calls /messages PostgreSQL (`iobound agent
//! postgres` there, from the binaries `./iobound build` fetched here, copied over, or the
//! host's own), and for the pipelines the Kafka broker (`iobound agent kafka` there, from the
//! jars `./iobound build` fetched here, copied over, on the host's JDK). Each is the child of
//! an `iobound agent contender` on an SSH channel of its own, pinned to the host's CPUs, listening on the host's address, and stopped (its log copied
//! back) when the run ends or the channel closes.

use super::contender::{ContenderJob, RemoteContender};
use super::deploy::HostReady;
use super::ship::{self, Probe};
use crate::services::corpus::Corpus;
use crate::services::database::{self, Database};
use crate::services::db_config::DbConfig;
use crate::services::kafka::Kafka;
use crate::services::Services;
use crate::services::Settings;
use anyhow::{Context, Result};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The processes iobound started on the services host.
pub struct ServicesHost {
    pub name: String,
    processes: Vec<Process>,
}

/// One process on the services host: where its log goes here, and the signal that stops it
/// quickly before the SIGTERM every process gets (PostgreSQL's SIGTERM waits for its sessions).
struct Process {
    remote: Arc<RemoteContender>,
    log: PathBuf,
    first_signal: Option<&'static str>,
}

/// What the services host runs besides the downstream service.
#[derive(Debug, Clone, Copy)]
pub struct Needs {
    /// PostgreSQL: a scenario calls /messages.
    pub database: bool,
    /// Kafka: a pipeline contender runs.
    pub kafka: bool,
}

impl ServicesHost {
    /// Starts the downstream service (and what `needs` names) on `h`; the Services the
    /// contenders are given name them there. What started is stopped again when a later step
    /// fails.
    pub fn start(
        h: &HostReady,
        root: &Path,
        settings: &Settings,
        rt: &tokio::runtime::Runtime,
        logs: &Path,
        needs: Needs,
    ) -> Result<(ServicesHost, Services)> {
        let address = h.ssh.host.address;
        let mut host = ServicesHost {
            name: h.ssh.host.name.clone(),
            processes: Vec::new(),
        };
        // Downstream, PostgreSQL, Kafka's broker and its controller.
        let ports = Probe::of(h, address, 4)?.ports;
        let downstream = SocketAddr::new(address, ports[0]);
        let mut argv = vec![h.binary.clone()];
        argv.extend(crate::services::downstream_args(
            settings, address, ports[0],
        ));
        // Its control endpoints listen on the lab network: they answer this run's token only.
        let token = crate::util::numbers::random_hex(16)?;
        let env = vec![(
            crate::services::downstream::TOKEN_ENV.to_string(),
            token.clone(),
        )];
        host.launch(h, "downstream", argv, env, logs, None, || {
            TcpStream::connect_timeout(&downstream, Duration::from_millis(200)).is_ok()
        })?;
        eprintln!(
            "iobound: downstream service on services host {} at {downstream} (latency {}, error rate {}, stall probability {})",
            host.name, settings.downstream.latency, settings.downstream.error_rate, settings.downstream.stall_prob
        );
        let database = if needs.database {
            Some(host.start_database(h, root, settings, rt, logs, ports[1])?)
        } else {
            None
        };
        // The contender host makes its own copy from the spec; this one is for the checks.
        let corpus = Corpus::ensure(&root.join(".cache"), &settings.corpus)?;
        let control = crate::services::downstream::Control {
            addr: downstream,
            token,
        };
        let mut services = Services::elsewhere(corpus, control, settings, database);
        if needs.kafka {
            services.kafka =
                Some(host.start_kafka(h, root, settings, logs, (ports[2], ports[3]))?);
        }
        Ok((host, services))
    }

    /// Starts `argv` on the host under an agent and waits until `ready()`; `first_signal`
    /// as in `Process`.
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &mut self,
        h: &HostReady,
        name: &str,
        argv: Vec<String>,
        env: Vec<(String, String)>,
        logs: &Path,
        first_signal: Option<&'static str>,
        ready: impl FnMut() -> bool,
    ) -> Result<()> {
        let job = ContenderJob {
            host: self.name.clone(),
            argv,
            cwd: h.dir.clone(),
            cpus: h.cpus.clone(),
            env,
            log: format!("{}/{name}.log", h.dir),
            ..ContenderJob::default()
        };
        let process = RemoteContender::start(&h.ssh, &h.binary, &job)
            .with_context(|| format!("starting {name} on services host {}", self.name))?;
        let log = logs.join(format!("{name}.log"));
        let waited = process.wait_until(name, "start", Duration::from_secs(60), &log, ready);
        self.processes.push(Process {
            remote: process,
            log,
            first_signal,
        });
        waited.map(|_| ())
    }

    /// PostgreSQL on the host, listening on its address, with a password made for this run.
    fn start_database(
        &mut self,
        h: &HostReady,
        root: &Path,
        settings: &Settings,
        rt: &tokio::runtime::Runtime,
        logs: &Path,
        port: u16,
    ) -> Result<Database> {
        // The binaries `./iobound build` fetched go along; Debian's are the host's own.
        let bin = database::find_binaries(root)?;
        if bin.starts_with(root) {
            ship::ship(h, root, &[PathBuf::from(".cache/postgres")], &h.dir)?;
        }
        let address = h.ssh.host.address;
        let password = crate::util::numbers::random_hex(16)?;
        let argv = [
            &h.binary,
            "agent",
            "postgres",
            "--address",
            &address.to_string(),
            "--port",
            &port.to_string(),
            "--data",
            &format!("{}/pgdata", h.dir),
        ]
        .map(String::from)
        .to_vec();
        let cfg = DbConfig {
            host: address.to_string(),
            port,
            name: "postgres".into(),
            user: "iobound".into(),
            password: password.clone(),
        };
        let env = vec![("IOBOUND_DB_PASSWORD".to_string(), password.clone())];
        self.launch(h, "postgres", argv, env, logs, Some("INT"), || {
            rt.block_on(cfg.connect()).is_ok()
        })?;
        cfg.create_iobound(rt)?;
        let url = format!("postgresql://iobound:{password}@{address}:{port}/iobound");
        let mut db = Database::external(&url, true, rt, settings.db_pool)?;
        db.description = format!(
            "{}, started by iobound on services host {} ({}, default settings, fsync on)",
            db.description,
            self.name,
            h.pinning()
        );
        eprintln!("iobound: database {}", db.description);
        Ok(db)
    }

    /// The Kafka broker on the host, listening on its address (`ports`: the broker's and its
    /// controller's), with the topics made from here.
    fn start_kafka(
        &mut self,
        h: &HostReady,
        root: &Path,
        settings: &Settings,
        logs: &Path,
        ports: (u16, u16),
    ) -> Result<Kafka> {
        crate::services::kafka_broker::built_libs(root, "")?;
        ship::ship(
            h,
            root,
            &[PathBuf::from(crate::services::kafka_broker::LIBS)],
            &h.dir,
        )?;
        let address = h.ssh.host.address;
        let bootstrap = SocketAddr::new(address, ports.0);
        let argv = [
            &h.binary,
            "agent",
            "kafka",
            "--address",
            &address.to_string(),
            "--port",
            &ports.0.to_string(),
            "--controller-port",
            &ports.1.to_string(),
            "--data",
            &format!("{}/kafka-data", h.dir),
        ]
        .map(String::from)
        .to_vec();
        self.launch(h, "kafka", argv, Vec::new(), logs, None, || {
            TcpStream::connect_timeout(&bootstrap, Duration::from_millis(200)).is_ok()
        })?;
        // The topics are made, and the pipelines checked, from this machine, with its JDK.
        let java = crate::services::jdk::find_java()
            .context("the pipelines' checks need a JDK >= 21 here (set JAVA_HOME)")?;
        let mut k = Kafka::external(
            root,
            &java,
            &bootstrap.to_string(),
            true,
            settings.kafka_partitions,
        )?;
        k.description = format!(
            "Apache Kafka 4.4.0, single node in KRaft mode (broker and controller), started by iobound on services host {} at {bootstrap} with a 512 MB heap, {}; topics input and output with {} partitions, replication 1",
            self.name,
            h.pinning(),
            settings.kafka_partitions
        );
        eprintln!("iobound: kafka {}", k.description);
        Ok(k)
    }

    /// Stops every process started there, copying its log back; each first gets its own
    /// quick-stop signal where it has one.
    pub fn stop(&mut self) {
        for p in self.processes.drain(..).rev() {
            if let Some(signal) = p.first_signal {
                p.remote.signal(signal);
            }
            p.remote.stop(Duration::from_secs(4), p.log.as_path());
        }
    }
}

impl Drop for ServicesHost {
    fn drop(&mut self) {
        self.stop();
    }
}
