//! The test server's calls to the downstream service (/enrich's one, /aggregate's several at
//! once) and the downstream's own counts of them: served, and cancelled by their caller.

use super::query::{param, BAD};
use std::cell::Cell;
use std::time::Duration;
use tokio::net::TcpStream;

/// The downstream's counts of its `/value` calls since the last reset (`GET /_stats`,
/// `GET /_stats?reset=1`): served, and cancelled (the caller closed the connection before the
/// answer, as a fan-out that cancels its siblings does).
#[derive(Default)]
pub(super) struct CallCounts {
    served: Cell<u64>,
    cancelled: Cell<u64>,
    in_flight: Cell<u64>,
    peak_in_flight: Cell<u64>,
}

impl CallCounts {
    pub(super) fn begin(&self) {
        let n = self.in_flight.get() + 1;
        self.in_flight.set(n);
        self.peak_in_flight.set(self.peak_in_flight.get().max(n));
    }

    pub(super) fn end(&self, served: bool) {
        self.in_flight.set(self.in_flight.get().saturating_sub(1));
        let c = if served {
            &self.served
        } else {
            &self.cancelled
        };
        c.set(c.get() + 1);
    }

    pub(super) fn report(&self, query: &str) -> String {
        let json = serde_json::json!({
            "served": self.served.get(),
            "cancelled": self.cancelled.get(),
            "in_flight": self.in_flight.get(),
            "peak_in_flight": self.peak_in_flight.get(),
        })
        .to_string();
        if query.split('&').any(|kv| kv == "reset=1") {
            self.served.set(0);
            self.cancelled.set(0);
            self.peak_in_flight.set(self.in_flight.get());
        }
        json
    }
}

/// Resolves when the peer has closed the connection (a read would return nothing); never when
/// it sends more (a pipelined request, read after the answer).
pub(super) async fn peer_closed(sock: &TcpStream) {
    let mut b = [0u8; 1];
    match sock.peek(&mut b).await {
        Ok(0) | Err(_) => {}
        Ok(_) => std::future::pending::<()>().await,
    }
}

/// One call to the downstream named by the environment: its answer, or the status and reason
/// the caller answers with (502 on a failure, 504 after the downstream timeout).
pub(super) async fn call_downstream(
    key: &str,
) -> std::result::Result<String, (&'static str, String)> {
    let url = std::env::var("IOBOUND_DOWNSTREAM_URL").unwrap_or_default();
    let timeout: u64 = std::env::var("IOBOUND_DOWNSTREAM_TIMEOUT_MS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(2000);
    let Some(addr) = url.strip_prefix("http://").and_then(|a| a.parse().ok()) else {
        return Err(("502 Bad Gateway", "no downstream configured".into()));
    };
    let value_path = format!("/value?key={key}");
    let call = crate::util::http1::fetch(addr, "GET", &value_path, None);
    match tokio::time::timeout(Duration::from_millis(timeout), call).await {
        Ok(Ok(r)) if (200..300).contains(&r.status) => Ok(String::from_utf8_lossy(&r.body).into()),
        Ok(Ok(r)) => Err((
            "502 Bad Gateway",
            format!("downstream answered {}", r.status),
        )),
        Ok(Err(e)) => Err(("502 Bad Gateway", format!("downstream failed: {e}"))),
        Err(_) => Err((
            "504 Gateway Timeout",
            format!("downstream did not answer within {timeout} ms"),
        )),
    }
}

/// Most keys one /aggregate may name.
pub const MAX_KEYS: usize = 16;

/// `/aggregate?keys=k1,k2,..`: one downstream call per key, all at once, answered as a JSON
/// array of the values in key order; the first failure is the answer (502/504) at once. The
/// calls still running are then cancelled (their connections closed), unless
/// IOBOUND_AGGREGATE_CANCEL=0: a fan-out that leaves its siblings running, for the tests of the
/// cancellation figures.
pub(super) async fn aggregate(query: &str) -> (&'static str, String) {
    let keys: Vec<String> = param(query, "keys")
        .unwrap_or("")
        .split(',')
        .map(str::to_string)
        .collect();
    if keys.len() > MAX_KEYS
        || !keys
            .iter()
            .all(|k| crate::services::downstream::valid_key(k))
    {
        return (
            BAD,
            format!("keys must be 1 to {MAX_KEYS} comma-separated keys, each 1..64 characters of A-Z a-z 0-9 - _"),
        );
    }
    let cancel = std::env::var("IOBOUND_AGGREGATE_CANCEL").map_or(true, |v| v != "0");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let calls: Vec<_> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let (tx, k) = (tx.clone(), k.clone());
            tokio::task::spawn_local(async move {
                let _ = tx.send((i, call_downstream(&k).await));
            })
        })
        .collect();
    drop(tx);
    let mut values: Vec<Option<String>> = vec![None; keys.len()];
    while let Some((i, outcome)) = rx.recv().await {
        match outcome {
            Ok(v) => values[i] = Some(v),
            Err(failed) => {
                if cancel {
                    calls.iter().for_each(|c| c.abort());
                }
                return failed;
            }
        }
    }
    let values: Vec<String> = values.into_iter().map(Option::unwrap_or_default).collect();
    ("200 OK", serde_json::to_string(&values).unwrap_or_default())
}
