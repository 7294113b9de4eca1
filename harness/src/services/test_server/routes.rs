//! The contract's routes other than /messages, as the test server answers them.

use super::calls::{aggregate, call_downstream};
use super::query::{decimal, param, BAD};
use std::time::Duration;

/// The test server serves the whole contract, so that tests can run plans on it: /hash reads
/// the corpus named by the environment, /enrich calls the downstream named by it.
pub(super) async fn respond(path: &str) -> (&'static str, String) {
    let (route, query) = path.split_once('?').unwrap_or((path, ""));
    match route {
        "/plaintext" => ("200 OK", "Hello, World!".into()),
        "/delay" => match param(query, "ms").and_then(|v| decimal(v, 60_000)) {
            Some(ms) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                ("200 OK", ms.to_string())
            }
            None => (BAD, "ms must be an integer between 0 and 60000".into()),
        },
        "/hash" => {
            let files: u64 = std::env::var("IOBOUND_CORPUS_FILES")
                .ok()
                .and_then(|f| f.parse().ok())
                .unwrap_or(0);
            let id = param(query, "id")
                .and_then(|v| decimal(v, files.saturating_sub(1)).filter(|_| files > 0));
            let wait = match param(query, "delayMs") {
                None => Some(0),
                Some(v) => decimal(v, 60_000),
            };
            let (Some(id), Some(wait)) = (id, wait) else {
                return (BAD, "id must name a corpus file; delayMs 0..60000".into());
            };
            tokio::time::sleep(Duration::from_millis(wait)).await;
            let file =
                std::path::Path::new(&std::env::var("IOBOUND_CORPUS_DIR").unwrap_or_default())
                    .join(format!("{id}.bin"));
            match std::fs::read(&file) {
                Ok(bytes) => ("200 OK", crate::services::corpus::sha512_hex(&bytes)),
                Err(_) => (
                    "500 Internal Server Error",
                    format!("cannot read file {id}"),
                ),
            }
        }
        "/enrich" => {
            let key = param(query, "key").unwrap_or("");
            if !crate::services::downstream::valid_key(key) {
                return (
                    BAD,
                    "key must be 1..64 characters of A-Z a-z 0-9 - _".into(),
                );
            }
            match call_downstream(key).await {
                Ok(value) => ("200 OK", format!("{key}={value}")),
                Err(failed) => failed,
            }
        }
        "/aggregate" => aggregate(query).await,
        _ => ("404 Not Found", "not found".into()),
    }
}
