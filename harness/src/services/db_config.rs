//! Where the database of /messages is and how to log in: a `--db-url` parsed (loopback
//! unless allowed), the connection it makes, and the `iobound` database created on a server
//! given from outside; with the seed's size and the longest text a message may have.

use anyhow::{bail, Context, Result};
use std::time::Duration;

/// Where the server is and how to log in.
#[derive(Debug, Clone, PartialEq)]
pub struct DbConfig {
    pub host: String,
    pub port: u16,
    pub name: String,
    pub user: String,
    pub password: String,
}

/// Rows the seed creates: ids 1..=SEED_ROWS, text "seed message <id>".
pub const SEED_ROWS: u32 = 10_000;
/// Longest message text, in characters.
pub const MAX_TEXT: usize = 1000;

impl DbConfig {
    /// Parses `postgresql://user[:password]@host[:port]/database`. The host must be loopback
    /// unless `allow_remote`: contenders put load on it.
    pub fn parse(url: &str, allow_remote: bool) -> Result<DbConfig> {
        let fix = "give it as postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE";
        let rest = url
            .strip_prefix("postgresql://")
            .or_else(|| url.strip_prefix("postgres://"))
            .with_context(|| format!("--db-url {url:?}: not a PostgreSQL URL; {fix}"))?;
        let (auth, hostpart) = rest
            .rsplit_once('@')
            .with_context(|| format!("--db-url {url:?}: no user; {fix}"))?;
        let (user, password) = auth.split_once(':').unwrap_or((auth, ""));
        let (hostport, name) = hostpart
            .split_once('/')
            .with_context(|| format!("--db-url {url:?}: no database name; {fix}"))?;
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || hostport.starts_with('[') => (
                h,
                p.parse::<u16>().with_context(|| {
                    format!("--db-url {url:?}: port {p:?} is not a number in 1..65535")
                })?,
            ),
            _ => (hostport, 5432),
        };
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        if user.is_empty() || name.is_empty() || host.is_empty() || name.contains(['?', '/']) {
            bail!("--db-url {url:?}: user, host and database must all be given, without options; {fix}");
        }
        let loopback = host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .map(|ip| ip.is_loopback())
                .unwrap_or(false);
        if !loopback && !allow_remote {
            bail!("--db-url {url:?}: {host} is not a loopback address; the contenders would put load on it. Pass --allow-remote if that server is yours to load");
        }
        Ok(DbConfig {
            host,
            port,
            name: name.to_string(),
            user: user.to_string(),
            password: password.to_string(),
        })
    }

    fn pg_config(&self) -> tokio_postgres::Config {
        let mut c = tokio_postgres::Config::new();
        c.host(&self.host)
            .port(self.port)
            .dbname(&self.name)
            .user(&self.user)
            .connect_timeout(Duration::from_secs(5));
        if !self.password.is_empty() {
            c.password(&self.password);
        }
        c
    }

    /// Creates the database `iobound` on a fresh server (logged in to this one's) and returns
    /// where it is.
    pub fn create_iobound(&self, rt: &tokio::runtime::Runtime) -> Result<DbConfig> {
        rt.block_on(async {
            let c = self.connect().await?;
            c.batch_execute("CREATE DATABASE iobound")
                .await
                .context("creating the iobound database")
        })?;
        Ok(DbConfig {
            name: "iobound".into(),
            ..self.clone()
        })
    }

    /// A connection; its driver task runs on `rt`.
    pub async fn connect(&self) -> Result<tokio_postgres::Client> {
        let (client, conn) = self
            .pg_config()
            .connect(tokio_postgres::NoTls)
            .await
            .with_context(|| {
                format!(
                    "cannot connect to PostgreSQL at {}:{}",
                    self.host, self.port
                )
            })?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(client)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn db_urls_parse_and_bad_ones_say_how_to_fix_them() {
        let c = DbConfig::parse("postgresql://app:secret@127.0.0.1:5433/shop", false).unwrap();
        assert_eq!(
            c,
            DbConfig {
                host: "127.0.0.1".into(),
                port: 5433,
                name: "shop".into(),
                user: "app".into(),
                password: "secret".into()
            }
        );
        assert_eq!(
            DbConfig::parse("postgres://app@localhost/shop", false)
                .unwrap()
                .port,
            5432
        );
        for (url, says) in [
            ("mysql://a@127.0.0.1/x", "not a PostgreSQL URL"),
            ("postgresql://127.0.0.1/x", "no user"),
            ("postgresql://a@127.0.0.1", "no database"),
            ("postgresql://a@127.0.0.1:http/x", "port \"http\""),
            ("postgresql://a@10.1.2.3/x", "--allow-remote"),
        ] {
            let e = DbConfig::parse(url, false).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("--db-url"), "{url}: {e}");
        }
        assert!(DbConfig::parse("postgresql://a@10.1.2.3/x", true).is_ok());
    }
}
