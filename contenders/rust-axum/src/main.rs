//! The iobound contract on axum 0.8 and tokio (multi-threaded scheduler, one worker per CPU the
//! process may run on): every handler is an `async fn`; waiting is `tokio::time::sleep`, file
//! reads go through `tokio::fs` (tokio's blocking pool), the downstream call through reqwest's
//! pooled client and the database through tokio-postgres with deadpool's pool, statements
//! prepared once per connection.

mod aggregate;
mod contract;
mod runtime_report;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use contract::*;
use sha2::{Digest, Sha512};
use std::sync::Arc;
use std::time::Duration;

struct App {
    corpus_dir: String,
    corpus_files: u64,
    downstream: String,
    timeout_ms: u64,
    client: reqwest::Client,
    db: deadpool_postgres::Pool,
}

type Shared = State<Arc<App>>;

fn text(status: StatusCode, body: impl Into<String>) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body.into(),
    )
        .into_response()
}

fn bad(why: String) -> Response {
    text(StatusCode::BAD_REQUEST, why)
}

fn json(status: StatusCode, v: &impl serde::Serialize) -> Response {
    match serde_json::to_vec(v) {
        Ok(b) => (status, [(header::CONTENT_TYPE, "application/json")], b).into_response(),
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

fn env_or(name: &str, fallback: &str) -> String {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| fallback.to_string())
}

async fn plaintext() -> Response {
    text(StatusCode::OK, PLAINTEXT)
}

async fn delay(uri: Uri) -> Response {
    let ms = match query(uri.query()).and_then(|q| delay_ms(param(&q, "ms"))) {
        Ok(ms) => ms,
        Err(why) => return bad(why),
    };
    tokio::time::sleep(Duration::from_millis(ms)).await;
    text(StatusCode::OK, ms.to_string())
}

async fn hash(State(app): Shared, uri: Uri) -> Response {
    let parsed = query(uri.query()).and_then(|q| {
        Ok((
            hash_id(param(&q, "id"), app.corpus_files)?,
            hash_delay_ms(param(&q, "delayMs"))?,
        ))
    });
    let (id, wait) = match parsed {
        Ok(v) => v,
        Err(why) => return bad(why),
    };
    tokio::time::sleep(Duration::from_millis(wait)).await;
    // The file name comes from the parsed number, never from the input.
    match tokio::fs::read(format!("{}/{id}.bin", app.corpus_dir)).await {
        Ok(bytes) => text(StatusCode::OK, hex::encode(Sha512::digest(&bytes))),
        Err(_) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot read file {id}"),
        ),
    }
}

async fn enrich(State(app): Shared, uri: Uri) -> Response {
    let q = match query(uri.query()) {
        Ok(q) => q,
        Err(why) => return bad(why),
    };
    let key = match enrich_key(param(&q, "key")) {
        Ok(k) => k,
        Err(why) => return bad(why),
    };
    match aggregate::call(&app, key).await {
        Ok(value) => text(StatusCode::OK, format!("{key}={value}")),
        Err(failed) => failed,
    }
}

#[derive(serde::Serialize)]
struct Message {
    id: i64,
    text: String,
}

const SQL_LIST: &str = "SELECT id, text FROM messages ORDER BY id DESC LIMIT $1";
const SQL_GET: &str = "SELECT id, text FROM messages WHERE id = $1";
const SQL_CREATE: &str = "INSERT INTO messages (text) VALUES ($1) RETURNING id, text";
const SQL_UPDATE: &str = "UPDATE messages SET text = $1 WHERE id = $2 RETURNING id, text";
const SQL_DELETE: &str = "DELETE FROM messages WHERE id = $1";

/// Runs a statement (prepared once per pooled connection) returning messages.
async fn rows(
    app: &App,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<Vec<Message>, Response> {
    let err = |e: String| text(StatusCode::INTERNAL_SERVER_ERROR, e);
    let client = app.db.get().await.map_err(|e| err(e.to_string()))?;
    let stmt = client
        .prepare_cached(sql)
        .await
        .map_err(|e| err(e.to_string()))?;
    let rows = client
        .query(&stmt, params)
        .await
        .map_err(|e| err(e.to_string()))?;
    Ok(rows
        .iter()
        .map(|r| Message {
            id: r.get(0),
            text: r.get(1),
        })
        .collect())
}

fn one(status: StatusCode, found: Result<Vec<Message>, Response>) -> Response {
    match found {
        Err(r) => r,
        Ok(v) => match v.first() {
            Some(m) => json(status, m),
            None => text(StatusCode::NOT_FOUND, "no such message"),
        },
    }
}

async fn list(State(app): Shared, uri: Uri) -> Response {
    let limit = match query(uri.query()).and_then(|q| message_limit(param(&q, "limit"))) {
        Ok(n) => n,
        Err(why) => return bad(why),
    };
    match rows(&app, SQL_LIST, &[&limit]).await {
        Ok(v) => json(StatusCode::OK, &v),
        Err(r) => r,
    }
}

async fn create(State(app): Shared, body: Bytes) -> Response {
    match message_text(&body) {
        Ok(t) => one(StatusCode::CREATED, rows(&app, SQL_CREATE, &[&t]).await),
        Err(why) => bad(why),
    }
}

async fn read(State(app): Shared, Path(raw): Path<String>) -> Response {
    match message_id(&raw) {
        Ok(id) => one(StatusCode::OK, rows(&app, SQL_GET, &[&id]).await),
        Err(why) => bad(why),
    }
}

async fn update(State(app): Shared, Path(raw): Path<String>, body: Bytes) -> Response {
    let id = match message_id(&raw) {
        Ok(id) => id,
        Err(why) => return bad(why),
    };
    match message_text(&body) {
        Ok(t) => one(StatusCode::OK, rows(&app, SQL_UPDATE, &[&t, &id]).await),
        Err(why) => bad(why),
    }
}

async fn delete(State(app): Shared, Path(raw): Path<String>) -> Response {
    let id = match message_id(&raw) {
        Ok(id) => id,
        Err(why) => return bad(why),
    };
    let done = async {
        let client = app.db.get().await.map_err(|e| e.to_string())?;
        let stmt = client
            .prepare_cached(SQL_DELETE)
            .await
            .map_err(|e| e.to_string())?;
        client
            .execute(&stmt, &[&id])
            .await
            .map_err(|e| e.to_string())
    };
    match done.await {
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, e),
        Ok(0) => text(StatusCode::NOT_FOUND, "no such message"),
        Ok(_) => StatusCode::NO_CONTENT.into_response(),
    }
}

/// Unclean paths ("/a/../b", "//x") are bad input, before routing.
async fn clean_paths_only(req: Request, next: axum::middleware::Next) -> Response {
    if clean_path(req.uri().path()) {
        next.run(req).await
    } else {
        bad("path must be clean: no '.', '..' or empty segments".into())
    }
}

fn database() -> Result<deadpool_postgres::Pool, String> {
    let mut cfg = deadpool_postgres::Config::new();
    cfg.host = Some(env_or("IOBOUND_DB_HOST", "127.0.0.1"));
    cfg.port = env_or("IOBOUND_DB_PORT", "5432").parse().ok();
    cfg.dbname = Some(env_or("IOBOUND_DB_NAME", "iobound"));
    cfg.user = Some(env_or("IOBOUND_DB_USER", "iobound"));
    cfg.password = std::env::var("IOBOUND_DB_PASSWORD").ok();
    let size: usize = env_or("IOBOUND_DB_POOL", "10")
        .parse()
        .map_err(|_| "IOBOUND_DB_POOL is not a pool size".to_string())?;
    cfg.pool = Some(deadpool_postgres::PoolConfig::new(size));
    // Connections open on first use: the server starts without a database, as the others do.
    cfg.create_pool(
        Some(deadpool_postgres::Runtime::Tokio1),
        tokio_postgres::NoTls,
    )
    .map_err(|e| e.to_string())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--version") {
        // The versions Cargo.toml pins.
        println!(
            "Rust {} (tokio 1.54.1, axum 0.8.9)",
            env!("IOBOUND_RUSTC_VERSION")
        );
        return;
    }
    let port: u16 = args
        .iter()
        .find_map(|a| a.strip_prefix("--port="))
        .and_then(|p| p.parse().ok())
        .unwrap_or(8080);
    let address: std::net::Ipv4Addr = args
        .iter()
        .find_map(|a| a.strip_prefix("--address="))
        .unwrap_or("127.0.0.1")
        .parse()
        .expect("--address=A.B.C.D: an IPv4 address");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(serve(address, port));
}

async fn serve(address: std::net::Ipv4Addr, port: u16) {
    let timeout_ms: u64 = env_or("IOBOUND_DOWNSTREAM_TIMEOUT_MS", "2000")
        .parse()
        .unwrap_or(2000);
    let app = Arc::new(App {
        corpus_dir: env_or("IOBOUND_CORPUS_DIR", "."),
        corpus_files: env_or("IOBOUND_CORPUS_FILES", "0").parse().unwrap_or(0),
        downstream: env_or("IOBOUND_DOWNSTREAM_URL", "http://127.0.0.1:8081"),
        timeout_ms,
        client: reqwest::Client::builder()
            .timeout(Duration::from_millis(timeout_ms))
            .build()
            .expect("HTTP client"),
        db: database().unwrap_or_else(|e| panic!("database pool: {e}")),
    });
    let router = Router::new()
        .route("/plaintext", get(plaintext))
        .route("/delay", get(delay))
        .route("/hash", get(hash))
        .route("/enrich", get(enrich))
        .route("/aggregate", get(aggregate::aggregate))
        .route("/messages", get(list).post(create))
        .route("/messages/{id}", get(read).put(update).delete(delete))
        .fallback(|| async { text(StatusCode::NOT_FOUND, "not found") })
        .method_not_allowed_fallback(|| async { text(StatusCode::NOT_FOUND, "not found") })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(clean_paths_only))
        .with_state(app);
    // The listen backlog every contender uses (tokio's TcpListener::bind would take 1,024).
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_reuseaddr(true).expect("SO_REUSEADDR");
    socket
        .bind((address, port).into())
        .unwrap_or_else(|e| panic!("bind {address}:{port}: {e}"));
    let listener = socket.listen(4096).expect("listen");
    println!(
        "rust-axum on {address}:{port}, {} tokio worker(s)",
        tokio::runtime::Handle::current().metrics().num_workers()
    );
    println!(
        "{}",
        runtime_report::runtime_line(tokio::runtime::Handle::current().metrics().num_workers())
    );
    axum::serve(listener, router.into_make_service())
        .await
        .expect("server");
}
