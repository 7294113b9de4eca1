//! The PostgreSQL server behind /messages: an embedded one started by the harness (zonky's
//! PostgreSQL 18.6 binaries, fetched by `./iobound build`, or a Debian PostgreSQL), or an
//! external one given by `--db-url`. The harness owns the schema and the seed data, resets them
//! before every contender and scenario, and checks after a run that every write a contender
//! acknowledged is in the database.

use crate::services::contender::{self, Running};
use crate::services::db_config::{DbConfig, MAX_TEXT, SEED_ROWS};
use crate::services::ports;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A running (or external) database, ready for contenders.
pub struct Database {
    pub cfg: DbConfig,
    /// Connections each contender's pool may open (IOBOUND_DB_POOL).
    pub pool: usize,
    /// "PostgreSQL 18.6 (embedded, ...)" or "external ...", for the report.
    pub description: String,
    server: Option<Running>,
    data_dir: Option<PathBuf>,
}

/// Server binaries: $IOBOUND_PG_BIN, then the ones `./iobound build` unpacked under
/// .cache/postgres, then Debian's newest.
pub fn find_binaries(root: &Path) -> Result<PathBuf> {
    let has = |d: &Path| d.join("postgres").is_file() && d.join("initdb").is_file();
    if let Ok(dir) = std::env::var("IOBOUND_PG_BIN") {
        let dir = PathBuf::from(dir);
        if has(&dir) {
            return Ok(dir);
        }
        bail!("IOBOUND_PG_BIN={} holds no postgres and initdb; point it at a PostgreSQL bin directory or unset it", dir.display());
    }
    let cached = root.join(".cache/postgres/bin");
    if has(&cached) {
        return Ok(cached);
    }
    let mut debian: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, d)| has(d))
        .collect();
    debian.sort();
    debian.pop().map(|(_, d)| d).context(
        "no PostgreSQL server binaries found: run './iobound build' (it fetches PostgreSQL 18.6 from Maven Central), or 'apt-get install postgresql', or set IOBOUND_PG_BIN, or use an external server with --db-url",
    )
}

fn version_of(bin: &Path) -> String {
    std::process::Command::new(bin.join("postgres"))
        .arg("--version")
        .output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .replace("postgres (PostgreSQL) ", "PostgreSQL ")
        })
        .unwrap_or_else(|| "PostgreSQL (version unknown)".into())
}

/// PostgreSQL refuses to run as root; as root it runs in a user namespace of its own, where
/// it is not root (what zonky's embedded-postgres does too).
pub(crate) fn as_unprivileged(mut argv: Vec<String>) -> Vec<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        argv.splice(0..0, ["unshare".to_string(), "-U".to_string()]);
    }
    argv
}

/// A fresh data directory made by initdb (UTF-8, no locale). Connections over TCP must give
/// `password` (scram-sha-256), from loopback or another host alike; only those through the
/// socket in the data directory (0700, its owner's alone) are trusted.
pub(crate) fn init_data_dir(bin: &Path, data: &Path, password: &str) -> Result<()> {
    let _ = std::fs::remove_dir_all(data);
    std::fs::create_dir_all(data).with_context(|| format!("cannot create {}", data.display()))?;
    let s = |p: &Path| p.display().to_string();
    // Outside the data directory: initdb wants it empty.
    let pwfile = data.with_extension("pw");
    // Its owner's alone (initdb runs as that owner), and removed once initdb has read it.
    crate::util::files::write_private(&pwfile, password.as_bytes())?;
    let mut initdb = vec![s(&bin.join("initdb"))];
    initdb.extend([
        "--auth-local=trust".into(),
        "--auth-host=scram-sha-256".into(),
        format!("--pwfile={}", s(&pwfile)),
    ]);
    initdb.extend(["-U", "iobound", "-D"].map(String::from));
    initdb.push(s(data));
    initdb.extend(["-E", "UTF8", "--no-locale", "--no-sync"].map(String::from));
    let initdb = as_unprivileged(initdb);
    let out = std::process::Command::new(&initdb[0])
        .args(&initdb[1..])
        .output()
        .with_context(|| format!("cannot run {}", initdb.join(" ")));
    let _ = std::fs::remove_file(&pwfile);
    let out = out?;
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(data);
        bail!(
            "initdb failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // initdb's host lines name loopback only; a server on a services host is reached from the
    // others, with the password too.
    let mut hba = std::fs::OpenOptions::new()
        .append(true)
        .open(data.join("pg_hba.conf"))?;
    std::io::Write::write_all(
        &mut hba,
        b"host all iobound 0.0.0.0/0 scram-sha-256\nhost all iobound ::/0 scram-sha-256\n",
    )?;
    Ok(())
}

/// Waits until the server accepts connections (30 s at most); stops it when it does not.
fn wait_accepting(
    server: &mut Running,
    cfg: &DbConfig,
    rt: &tokio::runtime::Runtime,
) -> Result<()> {
    server.wait_until(
        "PostgreSQL",
        "accept connections",
        Duration::from_secs(30),
        || rt.block_on(cfg.connect()).is_ok(),
    )
}

impl Database {
    /// initdb in a fresh directory under `<root>/.cache`, then a server on a free loopback port,
    /// pinned to `cpus`, logging to `log`.
    pub fn start_embedded(
        root: &Path,
        cpus: &[usize],
        log: &Path,
        rt: &tokio::runtime::Runtime,
        pool: usize,
    ) -> Result<Database> {
        let bin = find_binaries(root)?;
        let cache = root.join(".cache");
        crate::util::files::sweep_stale(&cache, "pgdata-");
        let data = cache.join(format!("pgdata-{}", std::process::id()));
        crate::util::interrupt::register_dir(&data);
        // A password made for this run: with trust, any local user could connect as the
        // superuser and reach the machine through it (`COPY ... TO PROGRAM`), as root.
        let password = crate::util::numbers::random_hex(16)?;
        init_data_dir(&bin, &data, &password)?;
        let port = ports::free_port()?;
        let s = |p: &Path| p.display().to_string();
        let argv = as_unprivileged(vec![
            s(&bin.join("postgres")),
            "-D".into(),
            s(&data),
            "-p".into(),
            port.to_string(),
            "-k".into(),
            s(&data),
            "-c".into(),
            "listen_addresses=127.0.0.1".into(),
            // Nine contenders' pools in turn, node-cluster's workers each with a pool.
            "-c".into(),
            "max_connections=300".into(),
        ]);
        let mut server = contender::start(&argv, &data, cpus, port, log, &[])?;
        let cfg = DbConfig {
            host: "127.0.0.1".into(),
            port,
            name: "postgres".into(),
            user: "iobound".into(),
            password,
        };
        if let Err(e) = wait_accepting(&mut server, &cfg, rt) {
            let _ = std::fs::remove_dir_all(&data);
            return Err(e);
        }
        let cfg = cfg.create_iobound(rt)?;
        let description = format!("{} (embedded, started by iobound from {}; default settings, fsync on), pinned to CPU {}", version_of(&bin), bin.display(), crate::util::cpus::format_cpus(cpus));
        let db = Database {
            cfg,
            pool,
            description,
            server: Some(server),
            data_dir: Some(data),
        };
        db.reset(rt)?;
        Ok(db)
    }

    /// A server someone else runs; the harness still owns the `messages` table in it.
    pub fn external(
        url: &str,
        allow_remote: bool,
        rt: &tokio::runtime::Runtime,
        pool: usize,
    ) -> Result<Database> {
        let cfg = DbConfig::parse(url, allow_remote)?;
        let version = rt.block_on(async {
            let c = cfg.connect().await?;
            let row = c.query_one("SHOW server_version", &[]).await?;
            anyhow::Ok(row.get::<_, String>(0))
        })?;
        let description = format!(
            "PostgreSQL {version} (external, {}:{}/{})",
            cfg.host, cfg.port, cfg.name
        );
        let db = Database {
            cfg,
            pool,
            description,
            server: None,
            data_dir: None,
        };
        db.reset(rt)?;
        Ok(db)
    }

    /// Drops and recreates `messages` with the seed rows, so that every contender and every
    /// scenario starts from the same data.
    pub fn reset(&self, rt: &tokio::runtime::Runtime) -> Result<()> {
        rt.block_on(async {
            let c = self.cfg.connect().await?;
            c.batch_execute(&format!(
                "DROP TABLE IF EXISTS messages;
                 CREATE TABLE messages (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, text varchar({MAX_TEXT}) NOT NULL);
                 INSERT INTO messages (id, text) SELECT i, 'seed message ' || i FROM generate_series(1, {SEED_ROWS}) i;
                 SELECT setval(pg_get_serial_sequence('messages', 'id'), {SEED_ROWS});"
            ))
            .await
            .context("creating and seeding the messages table")?;
            c.batch_execute("ANALYZE messages").await?;
            anyhow::Ok(())
        })
    }

    /// What contenders are told (IOBOUND_DB_*).
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("IOBOUND_DB_HOST".into(), self.cfg.host.clone()),
            ("IOBOUND_DB_PORT".into(), self.cfg.port.to_string()),
            ("IOBOUND_DB_NAME".into(), self.cfg.name.clone()),
            ("IOBOUND_DB_USER".into(), self.cfg.user.clone()),
            ("IOBOUND_DB_PASSWORD".into(), self.cfg.password.clone()),
            ("IOBOUND_DB_POOL".into(), self.pool.to_string()),
        ]
    }

    /// Texts of the rows whose text starts with `prefix`.
    pub fn texts_with_prefix(
        &self,
        rt: &tokio::runtime::Runtime,
        prefix: &str,
    ) -> Result<Vec<String>> {
        rt.block_on(async {
            let c = self.cfg.connect().await?;
            let pattern = format!(
                "{}%",
                prefix
                    .replace('\\', "\\\\")
                    .replace('%', "\\%")
                    .replace('_', "\\_")
            );
            let rows = c
                .query("SELECT text FROM messages WHERE text LIKE $1", &[&pattern])
                .await?;
            anyhow::Ok(rows.iter().map(|r| r.get::<_, String>(0)).collect())
        })
    }

    /// The text of each of `ids` that exists.
    pub fn texts_of(
        &self,
        rt: &tokio::runtime::Runtime,
        ids: &[i64],
    ) -> Result<BTreeMap<i64, String>> {
        rt.block_on(async {
            let c = self.cfg.connect().await?;
            let rows = c
                .query("SELECT id, text FROM messages WHERE id = ANY($1)", &[&ids])
                .await?;
            anyhow::Ok(
                rows.iter()
                    .map(|r| (r.get::<_, i64>(0), r.get::<_, String>(1)))
                    .collect(),
            )
        })
    }

    /// Stops the embedded server (fast shutdown: open sessions are ended) and removes its data.
    pub fn stop(&mut self) {
        if let Some(mut s) = self.server.take() {
            // SAFETY: signals the server process this harness started.
            unsafe { libc::kill(s.pid, libc::SIGINT) };
            s.stop(Duration::from_secs(5));
        }
        if let Some(d) = self.data_dir.take() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        self.stop();
    }
}
