//! /messages of the test server: the contract's CRUD on PostgreSQL, written plainly (the
//! reference the conformance tests are checked against).

use super::query::{decimal, param};

/// /messages of the test server, on the PostgreSQL named by IOBOUND_DB_* (one connection,
/// opened on first use; tokio-postgres pipelines concurrent queries on it).
#[derive(Default)]
pub(super) struct Messages {
    client: tokio::sync::OnceCell<tokio_postgres::Client>,
}

type Answer = (&'static str, &'static str, String);

fn json_answer(status: &'static str, v: serde_json::Value) -> Answer {
    (status, "application/json", v.to_string())
}

/// A message id: 1..=19 digits, no sign, at least 1, within 64 bits.
fn message_id(v: &str) -> Option<i64> {
    (!v.is_empty() && v.len() <= 19 && v.bytes().all(|b| b.is_ascii_digit()))
        .then(|| v.parse::<i64>().ok())
        .flatten()
        .filter(|id| *id >= 1)
}

/// The text of a create or update body: a JSON object whose "text" is a string of
/// 1..=1000 characters.
fn message_text(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let t = v.as_object()?.get("text")?.as_str()?;
    // PostgreSQL text cannot hold U+0000: refused like any other invalid text.
    ((1..=crate::services::db_config::MAX_TEXT).contains(&t.chars().count())
        && !t.contains('\u{0}'))
    .then(|| t.to_string())
}

impl Messages {
    pub(super) async fn respond(&self, method: &str, path: &str, body: &[u8]) -> Answer {
        let client = match self
            .client
            .get_or_try_init(|| async {
                let env = |k: &str| std::env::var(k).unwrap_or_default();
                let cfg = crate::services::db_config::DbConfig {
                    host: env("IOBOUND_DB_HOST"),
                    port: env("IOBOUND_DB_PORT").parse().unwrap_or(5432),
                    name: env("IOBOUND_DB_NAME"),
                    user: env("IOBOUND_DB_USER"),
                    password: env("IOBOUND_DB_PASSWORD"),
                };
                cfg.connect().await
            })
            .await
        {
            Ok(c) => c,
            Err(e) => {
                return (
                    "503 Service Unavailable",
                    "text/plain",
                    format!("no database: {e:#}"),
                )
            }
        };
        match self.query(client, method, path, body).await {
            Ok(a) => a,
            Err(e) => (
                "500 Internal Server Error",
                "text/plain",
                format!("database error: {e}"),
            ),
        }
    }

    async fn query(
        &self,
        c: &tokio_postgres::Client,
        method: &str,
        path: &str,
        body: &[u8],
    ) -> Result<Answer, tokio_postgres::Error> {
        let (route, query) = path.split_once('?').unwrap_or((path, ""));
        if route == "/messages" {
            return collection(c, method, query, body).await;
        }
        let Some(id) = route.strip_prefix("/messages/").and_then(message_id) else {
            return Ok(bad("id must be a positive integer"));
        };
        one(c, method, id, body).await
    }
}

fn row(r: &tokio_postgres::Row) -> serde_json::Value {
    serde_json::json!({ "id": r.get::<_, i64>(0), "text": r.get::<_, String>(1) })
}

fn bad(why: &str) -> Answer {
    ("400 Bad Request", "text/plain", why.to_string())
}

fn missing() -> Answer {
    ("404 Not Found", "text/plain", "no such message".to_string())
}

/// GET (the newest, `limit` of them) and POST on /messages.
async fn collection(
    c: &tokio_postgres::Client,
    method: &str,
    query: &str,
    body: &[u8],
) -> Result<Answer, tokio_postgres::Error> {
    Ok(match method {
        "GET" => {
            let limit = match param(query, "limit") {
                None => Some(20),
                Some(v) => decimal(v, 100).filter(|n| *n >= 1),
            };
            let Some(limit) = limit else {
                return Ok(bad("limit must be an integer 1..100"));
            };
            let rows = c
                .query(
                    "SELECT id, text FROM messages ORDER BY id DESC LIMIT $1",
                    &[&(limit as i64)],
                )
                .await?;
            json_answer("200 OK", rows.iter().map(row).collect())
        }
        "POST" => match message_text(body) {
            Some(t) => json_answer(
                "201 Created",
                row(&c
                    .query_one(
                        "INSERT INTO messages (text) VALUES ($1) RETURNING id, text",
                        &[&t],
                    )
                    .await?),
            ),
            None => bad("body must be a JSON object with text of 1..1000 characters"),
        },
        _ => (
            "405 Method Not Allowed",
            "text/plain",
            "use GET or POST".into(),
        ),
    })
}

/// GET, PUT and DELETE of /messages/{id}.
async fn one(
    c: &tokio_postgres::Client,
    method: &str,
    id: i64,
    body: &[u8],
) -> Result<Answer, tokio_postgres::Error> {
    let found = |r: Option<tokio_postgres::Row>, status| {
        r.map_or_else(missing, |r| json_answer(status, row(&r)))
    };
    Ok(match method {
        "GET" => found(
            c.query_opt("SELECT id, text FROM messages WHERE id = $1", &[&id])
                .await?,
            "200 OK",
        ),
        "PUT" => match message_text(body) {
            Some(t) => found(
                c.query_opt(
                    "UPDATE messages SET text = $2 WHERE id = $1 RETURNING id, text",
                    &[&id, &t],
                )
                .await?,
                "200 OK",
            ),
            None => bad("body must be a JSON object with text of 1..1000 characters"),
        },
        "DELETE" => match c
            .execute("DELETE FROM messages WHERE id = $1", &[&id])
            .await?
        {
            0 => missing(),
            _ => ("204 No Content", "text/plain", String::new()),
        },
        _ => (
            "405 Method Not Allowed",
            "text/plain",
            "use GET, PUT or DELETE".into(),
        ),
    })
}
