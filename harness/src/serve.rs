//! A small built-in HTTP server: the reference target for the driver benchmark (it costs
//! little CPU, so the driver's own cost shows) and for the coordinated-omission test (it can
//! stall once, like a GC pause, to show which tools see the stall).

use anyhow::{Context, Result};
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Clone, Debug, Default)]
pub struct ServeConfig {
    pub port: u16,
    /// Stall once, this long after the first request...
    pub stall_at: Option<Duration>,
    /// ...for this long: requests that arrive meanwhile are answered when it ends.
    pub stall_for: Duration,
}

struct Stall {
    first: Cell<Option<Instant>>,
    cfg: ServeConfig,
}

impl Stall {
    /// When the stall ends, if a request arriving now falls inside it.
    fn hold_until(&self) -> Option<Instant> {
        let now = Instant::now();
        let first = *self.first.get().get_or_insert(now);
        self.first.set(Some(first));
        let at = first + self.cfg.stall_at?;
        let end = at + self.cfg.stall_for;
        (now >= at && now < end).then_some(end)
    }
}

/// What a server built here answers.
enum App {
    /// The built-in test server (/plaintext, /delay), optionally stalling once.
    Test(Stall),
    /// The downstream service of /enrich.
    Downstream(crate::downstream::Downstream),
}

pub fn serve(cfg: ServeConfig) -> Result<()> {
    let port = cfg.port;
    run(port, App::Test(Stall { first: Cell::new(None), cfg }), "iobound serve")
}

pub fn downstream(port: u16, behaviour: crate::downstream::Behaviour, seed: u64) -> Result<()> {
    eprintln!("iobound downstream: {behaviour:?}");
    run(port, App::Downstream(crate::downstream::Downstream::new(behaviour, seed)), "iobound downstream")
}

fn run(port: u16, app: App, what: &str) -> Result<()> {
    crate::contender::raise_nofile();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        let listener = bind(port)?;
        eprintln!("{what}: listening on {}", listener.local_addr()?);
        let app = Rc::new(app);
        loop {
            let (sock, _) = listener.accept().await?;
            let _ = sock.set_nodelay(true);
            tokio::task::spawn_local(connection(sock, app.clone()));
        }
    })
}

fn bind(port: u16) -> Result<TcpListener> {
    let sock = tokio::net::TcpSocket::new_v4()?;
    sock.set_reuseaddr(true)?;
    sock.bind(([127, 0, 0, 1], port).into()).with_context(|| format!("cannot listen on 127.0.0.1:{port}"))?;
    // An explicit backlog: C10K connects faster than a default backlog drains.
    Ok(sock.listen(4096)?)
}

async fn connection(mut sock: TcpStream, app: Rc<App>) {
    let mut buf = vec![0u8; 8192];
    let mut end = 0;
    let mut out = Vec::with_capacity(256);
    loop {
        let (head_len, path, close) = loop {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut req = httparse::Request::new(&mut headers);
            match req.parse(&buf[..end]) {
                Ok(httparse::Status::Complete(n)) => {
                    let close = req.headers.iter().any(|h| h.name.eq_ignore_ascii_case("connection") && h.value.eq_ignore_ascii_case(b"close"));
                    break (n, req.path.unwrap_or("/").to_string(), close);
                }
                Ok(httparse::Status::Partial) if end < buf.len() => match sock.read(&mut buf[end..]).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => end += n,
                },
                _ => return,
            }
        };
        buf.copy_within(head_len..end, 0);
        end -= head_len;
        let (status, body) = match &*app {
            App::Test(stall) => {
                if let Some(until) = stall.hold_until() {
                    tokio::time::sleep_until(until.into()).await;
                }
                respond(&path).await
            }
            App::Downstream(d) => {
                let a = d.answer(&path);
                if !a.wait.is_zero() {
                    tokio::time::sleep(a.wait).await;
                }
                (a.status, a.body)
            }
        };
        out.clear();
        out.extend_from_slice(
            format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n{}\r\n",
                body.len(),
                if close { "Connection: close\r\n" } else { "" }
            )
            .as_bytes(),
        );
        out.extend_from_slice(body.as_bytes());
        if sock.write_all(&out).await.is_err() || close {
            return;
        }
    }
}

async fn respond(path: &str) -> (&'static str, String) {
    let (route, query) = path.split_once('?').unwrap_or((path, ""));
    match route {
        "/plaintext" => ("200 OK", "Hello, World!".into()),
        "/delay" => {
            let ms = query.split('&').find_map(|kv| kv.strip_prefix("ms=")).and_then(|v| v.parse::<u64>().ok());
            match ms {
                Some(ms) if ms <= 60_000 => {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    ("200 OK", ms.to_string())
                }
                _ => ("400 Bad Request", "ms must be an integer between 0 and 60000".into()),
            }
        }
        _ => ("404 Not Found", "not found".into()),
    }
}
