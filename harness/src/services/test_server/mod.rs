//! A small built-in HTTP server: the reference target for the driver benchmark (it costs
//! little CPU, so the driver's own cost shows) and for the coordinated-omission test (it can
//! stall once, like a GC pause, to show which tools see the stall).

mod calls;
mod head;
mod messages;
mod query;
mod routes;

use anyhow::{Context, Result};
use calls::{peer_closed, CallCounts};
use head::{read_head, Head};
use messages::Messages;
use routes::respond;
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Clone, Debug, Default)]
pub struct ServeConfig {
    pub port: u16,
    /// The address to listen on; loopback when None (another is for a server on a host of
    /// its own, e.g. a network namespace driven by `run --hosts`).
    pub address: Option<std::net::Ipv4Addr>,
    /// Stall once, this long after the first request...
    pub stall_at: Option<Duration>,
    /// ...for this long: requests that arrive meanwhile are answered when it ends.
    pub stall_for: Duration,
    /// Serve at most this many requests at once, the rest waiting their turn (a server of
    /// known capacity: workers / service time, by Little's law).
    pub workers: Option<usize>,
    /// Burn CPU per request, JIT_FIRST_COST at the first request falling linearly to nothing
    /// over this long (a stand-in for a JIT compiler: throughput climbs, then settles).
    pub jit_warmup: Option<Duration>,
    /// A JIT climb with a plateau in it: the cost falls from JIT_FIRST_COST to
    /// PLATEAU_COST over PLATEAU_FIRST_FALL, stays there this long, then falls to nothing over
    /// PLATEAU_SECOND_FALL (a warm-up can take the flat stretch for steady state).
    pub jit_plateau: Option<Duration>,
    /// Keep this many KB per request, touched, never freed: a leak, for memory limits.
    pub leak_kb: Option<usize>,
}

/// The CPU a request costs at the first request under `jit_warmup` or `jit_plateau`.
pub const JIT_FIRST_COST: Duration = Duration::from_micros(400);
/// The cost on the plateau of `jit_plateau`, and how long the falls before and after it take.
pub const PLATEAU_COST: Duration = Duration::from_micros(300);
pub const PLATEAU_FIRST_FALL: Duration = Duration::from_secs(3);
pub const PLATEAU_SECOND_FALL: Duration = Duration::from_secs(10);

/// The cost of a request `t` after the first under `jit_plateau` = `plateau`.
pub fn plateau_cost(t: Duration, plateau: Duration) -> Duration {
    let fall = |from: Duration, to: Duration, into: Duration, over: Duration| {
        let done = (into.as_secs_f64() / over.as_secs_f64()).min(1.0);
        from.mul_f64(1.0 - done) + to.mul_f64(done)
    };
    if t < PLATEAU_FIRST_FALL {
        fall(JIT_FIRST_COST, PLATEAU_COST, t, PLATEAU_FIRST_FALL)
    } else if t < PLATEAU_FIRST_FALL + plateau {
        PLATEAU_COST
    } else {
        let into = t - PLATEAU_FIRST_FALL - plateau;
        fall(PLATEAU_COST, Duration::ZERO, into, PLATEAU_SECOND_FALL)
    }
}

struct Stall {
    first: Cell<Option<Instant>>,
    cfg: ServeConfig,
    /// The `workers` bound, when there is one.
    workers: Option<tokio::sync::Semaphore>,
    /// What `leak_kb` has kept so far.
    leaked: std::cell::RefCell<Vec<Vec<u8>>>,
}

impl Stall {
    /// The CPU this request must burn under `jit_warmup` (zero once it is over).
    fn jit_cost(&self) -> Duration {
        if let (Some(plateau), Some(first)) = (self.cfg.jit_plateau, self.first.get()) {
            return plateau_cost(first.elapsed(), plateau);
        }
        let (Some(span), Some(first)) = (self.cfg.jit_warmup, self.first.get()) else {
            return Duration::ZERO;
        };
        let left = 1.0 - first.elapsed().as_secs_f64() / span.as_secs_f64().max(1e-9);
        JIT_FIRST_COST.mul_f64(left.max(0.0))
    }

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
    /// The built-in test server (the whole contract), optionally stalling once.
    Test(Stall, Box<Messages>),
    /// The downstream service of /enrich and /aggregate, counting its calls; its control
    /// endpoints need the token when it has one.
    Downstream(
        crate::services::downstream::Downstream,
        CallCounts,
        Option<String>,
    ),
}

pub fn serve(cfg: ServeConfig) -> Result<()> {
    let (port, address) = (
        cfg.port,
        cfg.address.unwrap_or(std::net::Ipv4Addr::LOCALHOST),
    );
    // The contract's start-up line: one event loop, or as many request slots as --workers.
    let (slots, of) = match cfg.workers {
        Some(n) => (n, "request slots (--workers: a pool of threads, simulated)"),
        None => (1, "event loop (a current-thread tokio runtime)"),
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "{}{}",
        super::detected::PREFIX,
        serde_json::json!({"language": "rust", "cpus": cpus, "workers": slots, "workers_of": of})
    );
    let workers = cfg.workers.map(tokio::sync::Semaphore::new);
    run(
        address,
        port,
        App::Test(
            Stall {
                first: Cell::new(None),
                cfg,
                workers,
                leaked: Default::default(),
            },
            Box::default(),
        ),
        "iobound serve",
    )
}

pub fn downstream(
    address: std::net::Ipv4Addr,
    port: u16,
    behaviour: crate::plan::downstream::Behaviour,
    seed: u64,
) -> Result<()> {
    eprintln!("iobound downstream: {behaviour:?}");
    run(
        address,
        port,
        App::Downstream(
            crate::services::downstream::Downstream::new(behaviour, seed),
            CallCounts::default(),
            std::env::var(crate::services::downstream::TOKEN_ENV)
                .ok()
                .filter(|t| !t.is_empty()),
        ),
        "iobound downstream",
    )
}

fn run(address: std::net::Ipv4Addr, port: u16, app: App, what: &str) -> Result<()> {
    crate::services::contender::raise_nofile();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        let listener = bind(address, port)?;
        eprintln!("{what}: listening on {}", listener.local_addr()?);
        let app = Rc::new(app);
        loop {
            let (sock, _) = listener.accept().await?;
            let _ = sock.set_nodelay(true);
            tokio::task::spawn_local(connection(sock, app.clone()));
        }
    })
}

fn bind(address: std::net::Ipv4Addr, port: u16) -> Result<TcpListener> {
    let sock = tokio::net::TcpSocket::new_v4()?;
    sock.set_reuseaddr(true)?;
    sock.bind((address, port).into())
        .with_context(|| format!("cannot listen on {address}:{port}"))?;
    // An explicit backlog: C10K connects faster than a default backlog drains.
    Ok(sock.listen(4096)?)
}

async fn connection(mut sock: TcpStream, app: Rc<App>) {
    let mut buf = vec![0u8; 8192];
    let mut end = 0;
    let mut out = Vec::with_capacity(256);
    loop {
        let Some(Head {
            len: head_len,
            method,
            path,
            close,
            length,
        }) = read_head(&mut sock, &mut buf, &mut end).await
        else {
            return;
        };
        buf.copy_within(head_len..end, 0);
        end -= head_len;
        // The body: kept up to MAX_BODY, read and dropped beyond (so the client sees the 413).
        let mut body = Vec::new();
        let mut left = length;
        while left > 0 {
            if end == 0 {
                match sock.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => end = n,
                }
            }
            let take = left.min(end);
            if length <= MAX_BODY {
                body.extend_from_slice(&buf[..take]);
            }
            buf.copy_within(take..end, 0);
            end -= take;
            left -= take;
        }
        let reply = answer(&app, &method, &path, &body, length);
        let (status, content_type, body) = match &*app {
            // A call whose caller goes away before the answer is counted as cancelled.
            App::Downstream(_, counts, _) if path.starts_with("/value") => {
                counts.begin();
                tokio::select! {
                    r = reply => {
                        counts.end(true);
                        r
                    }
                    _ = peer_closed(&sock) => {
                        counts.end(false);
                        return;
                    }
                }
            }
            _ => reply.await,
        };
        out.clear();
        out.extend_from_slice(
            format!(
                "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{}\r\n",
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

/// What the test server or the downstream service answers to one request.
async fn answer(
    app: &App,
    method: &str,
    path: &str,
    body: &[u8],
    length: usize,
) -> (&'static str, &'static str, String) {
    match app {
        App::Test(stall, messages) => {
            if let Some(until) = stall.hold_until() {
                tokio::time::sleep_until(until.into()).await;
            }
            if let Some(kb) = stall.cfg.leak_kb {
                // Written, so that the pages are really taken, not only promised.
                stall.leaked.borrow_mut().push(vec![1u8; kb * 1024]);
            }
            let burn = stall.jit_cost();
            if !burn.is_zero() {
                // Busy, not asleep: the cost must show as CPU per request, as a JIT's does.
                let t0 = Instant::now();
                while t0.elapsed() < burn {
                    std::hint::spin_loop();
                }
            }
            // Held until the answer is ready: a worker busy for the whole request.
            let _worker = match &stall.workers {
                Some(w) => w.acquire().await.ok(),
                None => None,
            };
            if path == "/messages"
                || path.starts_with("/messages?")
                || path.starts_with("/messages/")
            {
                if length > MAX_BODY {
                    (
                        "413 Payload Too Large",
                        "text/plain",
                        "body over 64 KiB".to_string(),
                    )
                } else {
                    messages.respond(method, path, body).await
                }
            } else {
                let (s, b) = respond(path).await;
                let json = path.starts_with("/aggregate?") && s == "200 OK";
                (
                    s,
                    if json {
                        "application/json"
                    } else {
                        "text/plain"
                    },
                    b,
                )
            }
        }
        App::Downstream(d, counts, token) => {
            downstream_answer(d, counts, token.as_deref(), path).await
        }
    }
}

/// The downstream's answer: its control endpoints only with the run's token (when it has one),
/// its calls after their wait.
async fn downstream_answer(
    d: &crate::services::downstream::Downstream,
    counts: &CallCounts,
    token: Option<&str>,
    path: &str,
) -> (&'static str, &'static str, String) {
    let (endpoint, query) = path.split_once('?').unwrap_or((path, ""));
    let control = endpoint == "/_control" || endpoint == "/_stats";
    let query = if control {
        match crate::services::downstream::authorized(token, query) {
            Some(q) => q,
            None => {
                return (
                    "403 Forbidden",
                    "text/plain",
                    "this run's control token is required".into(),
                )
            }
        }
    } else {
        query.to_string()
    };
    if endpoint == "/_stats" {
        return ("200 OK", "application/json", counts.report(&query));
    }
    let path = if control {
        format!("{endpoint}?{query}")
    } else {
        path.to_string()
    };
    let a = d.answer(&path);
    if !a.wait.is_zero() {
        tokio::time::sleep(a.wait).await;
    }
    (a.status, "text/plain", a.body)
}

/// Largest request body the test server reads.
const MAX_BODY: usize = 64 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plateau_cost_falls_in_two_steps_with_a_flat_stretch_between() {
        let p = Duration::from_secs(14);
        let at = |s: f64| plateau_cost(Duration::from_secs_f64(s), p).as_micros();
        assert_eq!(at(0.0), 400);
        assert_eq!(at(1.5), 350);
        assert_eq!((at(3.0), at(10.0), at(16.9)), (300, 300, 300));
        assert_eq!(at(22.0), 150);
        assert_eq!((at(27.0), at(60.0)), (0, 0));
    }
}
