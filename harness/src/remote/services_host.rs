//! The services of the built-in contenders on the services host: the downstream service
//! (`iobound downstream` there) and, when a scenario calls /messages, PostgreSQL (`iobound
//! agent postgres` there, from the binaries `./iobound build` fetched here, copied over, or the
//! host's own). Each is the child of an `iobound agent contender` on an SSH channel of its own,
//! pinned to the host's CPUs, listening on the host's address, and stopped (its log copied
//! back) when the run ends or the channel closes.

use super::contender::{ContenderJob, RemoteContender};
use super::deploy::HostReady;
use super::ship::{self, Probe};
use crate::plan::Plan;
use crate::services::corpus::Corpus;
use crate::services::database::{self, Database, DbConfig};
use crate::services::Services;
use anyhow::{Context, Result};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The processes iobound started on the services host, with where their logs go here.
pub struct ServicesHost {
    pub name: String,
    processes: Vec<(Arc<RemoteContender>, PathBuf)>,
}

impl ServicesHost {
    /// Starts the downstream service (and PostgreSQL when `need_database`) on `h`; the
    /// Services the contenders are given name them there. What started is stopped again when
    /// a later step fails.
    pub fn start(
        h: &HostReady,
        root: &Path,
        plan: &Plan,
        rt: &tokio::runtime::Runtime,
        logs: &Path,
        need_database: bool,
    ) -> Result<(ServicesHost, Services)> {
        let address = h.ssh.host.address;
        let mut host = ServicesHost {
            name: h.ssh.host.name.clone(),
            processes: Vec::new(),
        };
        let port = Probe::of(h, address)?.port;
        let downstream = SocketAddr::new(address, port);
        let mut argv = vec![h.binary.clone()];
        argv.extend(crate::services::downstream_args(plan, address, port));
        host.launch(h, "downstream", argv, Vec::new(), logs, || {
            TcpStream::connect_timeout(&downstream, Duration::from_millis(200)).is_ok()
        })?;
        eprintln!(
            "iobound: downstream service on services host {} at {downstream} (latency {}, error rate {}, stall probability {})",
            host.name, plan.downstream.latency, plan.downstream.error_rate, plan.downstream.stall_prob
        );
        let database = if need_database {
            Some(host.start_database(h, root, plan, rt, logs)?)
        } else {
            None
        };
        // The contender host makes its own copy from the spec; this one is for the checks.
        let corpus = Corpus::ensure(&root.join(".cache"), &plan.corpus)?;
        let services = Services::elsewhere(corpus, downstream, plan, database);
        Ok((host, services))
    }

    /// Starts `argv` on the host under an agent and waits until `ready()`.
    fn launch(
        &mut self,
        h: &HostReady,
        name: &str,
        argv: Vec<String>,
        env: Vec<(String, String)>,
        logs: &Path,
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
        self.processes.push((process, log));
        waited.map(|_| ())
    }

    /// PostgreSQL on the host, listening on its address, with a password made for this run.
    fn start_database(
        &mut self,
        h: &HostReady,
        root: &Path,
        plan: &Plan,
        rt: &tokio::runtime::Runtime,
        logs: &Path,
    ) -> Result<Database> {
        // The binaries `./iobound build` fetched go along; Debian's are the host's own.
        let bin = database::find_binaries(root)?;
        if bin.starts_with(root) {
            ship::ship(h, root, &[PathBuf::from(".cache/postgres")], &h.dir)?;
        }
        let address = h.ssh.host.address;
        let port = Probe::of(h, address)?.port;
        let password = random_hex(16)?;
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
        self.launch(h, "postgres", argv, env, logs, || {
            rt.block_on(cfg.connect()).is_ok()
        })?;
        cfg.create_iobound(rt)?;
        let url = format!("postgresql://iobound:{password}@{address}:{port}/iobound");
        let mut db = Database::external(&url, true, rt, plan.db_pool)?;
        db.description = format!(
            "{}, started by iobound on services host {} ({}, default settings, fsync on)",
            db.description,
            self.name,
            h.pinning()
        );
        eprintln!("iobound: database {}", db.description);
        Ok(db)
    }

    /// Stops every process started there, copying its log back. PostgreSQL first gets SIGINT,
    /// its fast shutdown: the SIGTERM every process gets waits for open sessions to end.
    pub fn stop(&mut self) {
        for (process, log) in self.processes.drain(..).rev() {
            if log.ends_with("postgres.log") {
                process.signal("INT");
            }
            process.stop(Duration::from_secs(4), log.as_path());
        }
    }
}

impl Drop for ServicesHost {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `bytes` random bytes from the kernel, as hex: a password that lives for one run.
fn random_hex(bytes: usize) -> Result<String> {
    use std::io::Read;
    let mut buf = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buf)?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}
