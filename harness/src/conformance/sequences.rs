//! Checks that take several requests: a message's round trip through the API, and many
//! requests on one keep-alive connection.

use super::CaseResult;
use crate::util::http1;
use std::net::SocketAddr;
use std::time::Duration;

/// A message's life through the API, checking what each step returns: create (201, new id,
/// the text as sent), read it back, see it first in the list, update, delete, and 404 after.
pub(super) async fn message_round_trip(addr: SocketAddr) -> CaseResult {
    let name = "messages: create, read, list, update, delete round trip".to_string();
    let text = "h\u{e9}llo \u{2713} \u{65e5}\u{672c} \u{1f600} \\ \"quoted\"";
    let detail = match round_trip_steps(addr, text).await {
        Ok(id) => format!("POST, GET, list, PUT, DELETE of id {id} as the contract says (text with non-ASCII, emoji, quotes)"),
        Err(e) => return CaseResult { name, passed: false, detail: e },
    };
    CaseResult {
        name,
        passed: true,
        detail,
    }
}

/// Requests served on one keep-alive connection before the check passes: a server that closes
/// connections after N requests (Tomcat's default is 100) makes its clients reconnect, which
/// the other servers never ask of them.
pub const KEEP_ALIVE_REQUESTS: usize = 1000;

/// KEEP_ALIVE_REQUESTS requests on one connection, each answered 200 without the server
/// closing the connection.
pub(super) async fn keep_alive(addr: SocketAddr) -> CaseResult {
    let name = format!(
        "keep-alive: {KEEP_ALIVE_REQUESTS} requests on one connection, none closed by the server"
    );
    let request = http1::build_request("GET", "/plaintext", &addr.to_string(), None, false);
    let run = async {
        let mut conn = http1::Conn::connect(addr)
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        for i in 1..=KEEP_ALIVE_REQUESTS {
            let r = conn
                .send(&request, false)
                .await
                .map_err(|e| format!("request {i}: the connection failed ({e:?})"))?;
            if r.status != 200 {
                return Err(format!("request {i}: status {}", r.status));
            }
            if r.close && i < KEEP_ALIVE_REQUESTS {
                return Err(format!("the server closed the connection after {i} requests (a per-connection request cap)"));
            }
        }
        Ok(())
    };
    match tokio::time::timeout(Duration::from_secs(30), run).await {
        Ok(Ok(())) => CaseResult {
            name,
            passed: true,
            detail: format!("{KEEP_ALIVE_REQUESTS} x 200 on one connection"),
        },
        Ok(Err(detail)) => CaseResult {
            name,
            passed: false,
            detail,
        },
        Err(_) => CaseResult {
            name,
            passed: false,
            detail: "not done within 30 s".into(),
        },
    }
}

type Step<T> = std::result::Result<T, String>;

/// Requests of the round trip, each answered within 10 s or failed with what was asked.
struct Api {
    addr: SocketAddr,
}

impl Api {
    async fn call(&self, method: &str, path: &str, body: Option<&str>) -> Step<http1::Response> {
        let b = body.map(|b| ("application/json", b.as_bytes()));
        let r = tokio::time::timeout(
            Duration::from_secs(10),
            http1::fetch(self.addr, method, path, b),
        )
        .await;
        match r {
            Ok(Ok(resp)) => Ok(resp),
            Ok(Err(e)) => Err(format!("{method} {path}: {e}")),
            Err(_) => Err(format!("{method} {path}: no answer within 10 s")),
        }
    }

    /// The answer and its body as JSON.
    async fn json(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> Step<(u16, serde_json::Value)> {
        let resp = self.call(method, path, body).await?;
        let v = serde_json::from_slice(&resp.body).map_err(|e| {
            format!(
                "{method} {path}: body is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&resp.body)
            )
        })?;
        Ok((resp.status, v))
    }
}

async fn round_trip_steps(addr: SocketAddr, text: &str) -> Step<i64> {
    let api = Api { addr };
    let id = create(&api, text).await?;
    read_back(&api, id, text).await?;
    update(&api, id).await?;
    delete(&api, id).await?;
    Ok(id)
}

/// POST: 201, a new numeric id, the text as sent.
async fn create(api: &Api, text: &str) -> Step<i64> {
    let body = serde_json::json!({ "text": text }).to_string();
    let created = api.call("POST", "/messages", Some(&body)).await?;
    if created.status != 201 {
        return Err(format!("POST /messages -> {} (want 201)", created.status));
    }
    let c: serde_json::Value = serde_json::from_slice(&created.body).map_err(|e| {
        format!(
            "POST /messages: body is not JSON ({e}): {:?}",
            String::from_utf8_lossy(&created.body)
        )
    })?;
    let id = c["id"]
        .as_i64()
        .filter(|id| *id > i64::from(crate::services::db_config::SEED_ROWS))
        .ok_or_else(|| format!("POST /messages: no new numeric id in {c}"))?;
    if c["text"] != text {
        return Err(format!(
            "POST /messages: text came back as {} (sent {text:?})",
            c["text"]
        ));
    }
    Ok(id)
}

/// GET by id gives it back as created, and the list shows it first.
async fn read_back(api: &Api, id: i64, text: &str) -> Step<()> {
    let (status, g) = api.json("GET", &format!("/messages/{id}"), None).await?;
    if status != 200 || g["id"] != id || g["text"] != text {
        return Err(format!(
            "GET /messages/{id} -> {status} {g} (want 200 with the text as created)"
        ));
    }
    let (status, l) = api.json("GET", "/messages?limit=1", None).await?;
    if status != 200 || l.as_array().map(Vec::len) != Some(1) || l[0]["id"] != id {
        return Err(format!(
            "GET /messages?limit=1 -> {status} {l} (want the new message first)"
        ));
    }
    Ok(())
}

/// PUT changes the text, and a GET after it sees the change.
async fn update(api: &Api, id: i64) -> Step<()> {
    let path = format!("/messages/{id}");
    let (status, p) = api
        .json("PUT", &path, Some(r#"{"text":"changed"}"#))
        .await?;
    if status != 200 || p["id"] != id || p["text"] != "changed" {
        return Err(format!(
            "PUT {path} -> {status} {p} (want 200 with the new text)"
        ));
    }
    if api.json("GET", &path, None).await?.1["text"] != "changed" {
        return Err(format!("GET {path} after PUT still has the old text"));
    }
    Ok(())
}

/// DELETE answers 204, and GET, DELETE and PUT of the id answer 404 after it.
async fn delete(api: &Api, id: i64) -> Step<()> {
    let path = format!("/messages/{id}");
    let del = api.call("DELETE", &path, None).await?;
    if del.status != 204 {
        return Err(format!("DELETE {path} -> {} (want 204)", del.status));
    }
    for (method, body) in [
        ("GET", None),
        ("DELETE", None),
        ("PUT", Some(r#"{"text":"x"}"#)),
    ] {
        let r = api.call(method, &path, body).await?;
        if r.status != 404 {
            return Err(format!(
                "{method} {path} after DELETE -> {} (want 404)",
                r.status
            ));
        }
    }
    Ok(())
}
