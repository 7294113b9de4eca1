//! The load driver: offers load as a closed model (users waiting for their own responses) or
//! an open model (arrivals on a schedule, latency from the intended send time), on dedicated
//! single-threaded runtimes pinned to the driver CPUs, and reports what it cost.

mod closed;
mod open;
pub mod record;

use crate::http1::{Conn, HttpError};
use crate::plan::{Load, Profile};
use anyhow::{bail, Context, Result};
use record::{ErrorKind, Live, Recorder};
use std::net::SocketAddr;
use std::rc::Rc;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What is requested: one pre-serialised request sent to one address.
#[derive(Clone, Debug)]
pub struct Target {
    pub addr: SocketAddr,
    /// Prebuilt requests, sent in turn: one, or one per value of a `{seq:N}` path template.
    pub requests: Arc<Vec<Vec<u8>>>,
}

/// Most values a `{seq:N}` template may take.
pub const MAX_SEQ: usize = 1_000_000;

/// The paths of a path template: `/hash?id={seq:4000}` gives /hash?id=0 .. /hash?id=3999, sent
/// in turn (so every file of a corpus is read); a path without a template is itself.
pub fn expand_path(path: &str) -> Result<Vec<String>, String> {
    let Some(at) = path.find("{seq:") else { return Ok(vec![path.to_string()]) };
    let rest = &path[at + 5..];
    let end = rest.find('}').ok_or_else(|| format!("{path:?}: unclosed {{seq:N}}"))?;
    let n: usize = rest[..end].parse().ok().filter(|n| (1..=MAX_SEQ).contains(n)).ok_or_else(|| format!("{path:?}: {{seq:N}} needs N in 1..={MAX_SEQ}"))?;
    let (head, tail) = (&path[..at], &rest[end + 1..]);
    if tail.contains("{seq:") {
        return Err(format!("{path:?}: only one {{seq:N}} per path"));
    }
    Ok((0..n).map(|i| format!("{head}{i}{tail}")).collect())
}

impl Target {
    /// `path` has been checked by `expand_path` (plans validate it).
    pub fn new(addr: SocketAddr, path: &str, close: bool) -> Target {
        let paths = expand_path(path).unwrap_or_else(|_| vec![path.to_string()]);
        let requests = paths.iter().map(|p| crate::http1::build_request("GET", p, &addr.to_string(), None, close)).collect();
        Target { addr, requests: Arc::new(requests) }
    }
}

pub struct DriverConfig {
    pub threads: usize,
    pub cpus: Vec<usize>,
}

pub struct Outcome {
    pub recorder: Recorder,
    /// Measured phase length (the profile's duration, or less when cancelled).
    pub duration: Duration,
    /// Wall time including the drain of in-flight requests.
    pub wall: Duration,
    /// CPU time of the driver threads.
    pub cpu: Duration,
    pub threads: usize,
    pub cancelled: bool,
    /// Requests still in flight or queued when the drain window closed (not counted anywhere else).
    pub abandoned: u64,
    /// Open model: requests that had to wait because every allowed connection was busy.
    pub pool_waits: u64,
}

/// Per-thread state shared by the tasks of one driver thread.
pub(crate) struct Ctx {
    pub target: Target,
    pub load: Load,
    pub rec: RefCell<Recorder>,
    pub live: Arc<Live>,
    pub start: Instant,
    pub inflight: std::cell::Cell<u64>,
    /// Open model: requests due but not yet picked up by a connection.
    pub queued: std::cell::Cell<u64>,
    /// Open model: requests that found every allowed connection busy.
    pub pool_waits: std::cell::Cell<u64>,
    /// Which of the target's requests goes next.
    pub next: std::cell::Cell<usize>,
}

impl Ctx {
    /// Sends one request on `conn` (connecting first if needed) and records the outcome with
    /// latency counted from `since`. Returns whether the connection may be reused.
    pub async fn exchange(&self, conn: &mut Option<Conn>, since: Instant) -> bool {
        self.inflight.set(self.inflight.get() + 1);
        let reusable = self.exchange_inner(conn, since).await;
        self.inflight.set(self.inflight.get() - 1);
        if !reusable {
            *conn = None;
        }
        reusable
    }

    async fn exchange_inner(&self, conn: &mut Option<Conn>, since: Instant) -> bool {
        let deadline = tokio::time::Instant::now() + self.load.timeout;
        if conn.is_none() {
            match tokio::time::timeout_at(deadline, Conn::connect(self.target.addr)).await {
                Ok(Ok(c)) => *conn = Some(c),
                Ok(Err(_)) => {
                    self.rec.borrow_mut().error(Instant::now(), ErrorKind::Connect, &self.live);
                    return false;
                }
                Err(_) => {
                    self.rec.borrow_mut().error(Instant::now(), ErrorKind::Timeout, &self.live);
                    return false;
                }
            }
        }
        let c = conn.as_mut().expect("connected above");
        let i = self.next.get();
        self.next.set(if i + 1 >= self.target.requests.len() { 0 } else { i + 1 });
        let result = tokio::time::timeout_at(deadline, c.send(&self.target.requests[i], false)).await;
        let now = Instant::now();
        let mut rec = self.rec.borrow_mut();
        match result {
            Ok(Ok(resp)) => {
                if (200..300).contains(&resp.status) {
                    rec.ok(now, now.saturating_duration_since(since), &self.live);
                } else {
                    rec.error(now, ErrorKind::Status(resp.status), &self.live);
                }
                !resp.close && !self.load.connection_close
            }
            Ok(Err(HttpError::Io(_) | HttpError::Closed | HttpError::Malformed(_))) => {
                rec.error(now, ErrorKind::Io, &self.live);
                false
            }
            Err(_) => {
                rec.error(now, ErrorKind::Timeout, &self.live);
                false
            }
        }
    }
}

/// Runs `load` against `target` and returns everything recorded. `cancel` stops it early
/// (Ctrl-C, or the contender died); what was measured until then is kept.
pub fn run(target: &Target, load: &Load, cfg: &DriverConfig, live: Arc<Live>, cancel: Arc<AtomicBool>) -> Result<Outcome> {
    if cfg.threads == 0 {
        bail!("driver threads must be at least 1");
    }
    let start = Instant::now() + Duration::from_millis(20);
    let mut handles = Vec::new();
    for index in 0..cfg.threads {
        let (target, load, live, cancel, cpus) = (target.clone(), load.clone(), live.clone(), cancel.clone(), cfg.cpus.clone());
        let threads = cfg.threads;
        let target_len = target.requests.len().max(1);
        let h = std::thread::Builder::new()
            .name(format!("iobound-driver-{index}"))
            .spawn(move || -> Result<(Recorder, Duration, u64, u64)> {
                if !cpus.is_empty() {
                    crate::util::pin_current_thread(&cpus).context("pinning the driver thread")?;
                }
                let cpu0 = crate::util::thread_cpu_time();
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
                let ctx = Rc::new(Ctx {
                    target,
                    load,
                    rec: RefCell::new(Recorder::new(start)),
                    live,
                    start,
                    inflight: std::cell::Cell::new(0),
                    queued: std::cell::Cell::new(0),
                    pool_waits: std::cell::Cell::new(0),
                    // Threads start at different places of a template's sequence.
                    next: std::cell::Cell::new(index * 7919 % target_len),
                });
                let local = tokio::task::LocalSet::new();
                let c2 = ctx.clone();
                local.block_on(&rt, async move {
                    let work = async {
                        match c2.load.profile {
                            Profile::Closed { .. } => closed::drive(c2.clone(), index, threads).await,
                            Profile::Open { .. } => open::drive(c2.clone(), index, threads).await,
                        }
                    };
                    tokio::select! {
                        _ = work => {}
                        _ = wait_flag(&cancel) => {}
                    }
                });
                drop(local);
                let abandoned = ctx.inflight.get() + ctx.queued.get();
                let pool_waits = ctx.pool_waits.get();
                let cpu = crate::util::thread_cpu_time().saturating_sub(cpu0);
                let ctx = Rc::try_unwrap(ctx).map_err(|_| anyhow::anyhow!("driver tasks outlived their runtime"))?;
                Ok((ctx.rec.into_inner(), cpu, abandoned, pool_waits))
            })?;
        handles.push(h);
    }
    let mut recorder = Recorder::new(start);
    let (mut cpu, mut abandoned, mut pool_waits) = (Duration::ZERO, 0, 0);
    for h in handles {
        let (r, c, a, w) = h.join().map_err(|_| anyhow::anyhow!("a driver thread panicked"))??;
        recorder.merge(r);
        cpu += c;
        abandoned += a;
        pool_waits += w;
    }
    let wall = start.elapsed();
    let cancelled = cancel.load(Ordering::SeqCst);
    let duration = load.profile.duration().min(wall);
    Ok(Outcome { recorder, duration, wall, cpu, threads: cfg.threads, cancelled, abandoned, pool_waits })
}

async fn wait_flag(flag: &AtomicBool) {
    while !flag.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// How long to wait for in-flight requests after the measured phase ends: they were sent
/// inside it, and dropping the slowest would flatter the tail.
pub(crate) fn drain_window(load: &Load) -> Duration {
    load.timeout + Duration::from_millis(500)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seq_templates_expand_in_order() {
        assert_eq!(expand_path("/hash?id={seq:3}&delayMs=5").unwrap(), ["/hash?id=0&delayMs=5", "/hash?id=1&delayMs=5", "/hash?id=2&delayMs=5"]);
        assert_eq!(expand_path("/plaintext").unwrap(), ["/plaintext"]);
        for bad in ["/h?id={seq:0}", "/h?id={seq:x}", "/h?id={seq:5", "/h?a={seq:2}&b={seq:2}"] {
            assert!(expand_path(bad).is_err(), "{bad}");
        }
        let t = Target::new("127.0.0.1:1".parse().unwrap(), "/x?id={seq:4000}", false);
        assert_eq!(t.requests.len(), 4000);
        assert!(String::from_utf8_lossy(&t.requests[3999]).starts_with("GET /x?id=3999 HTTP/1.1"));
    }
}
