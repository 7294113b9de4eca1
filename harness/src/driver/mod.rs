//! The load driver: offers load as a closed model (users waiting for their own responses) or
//! an open model (arrivals on a schedule, latency from the intended send time), on dedicated
//! single-threaded runtimes pinned to the driver CPUs, and reports what it cost.

//!
//! Holds: `closed` and `open` (the two load models), `record` (per-second histograms and
//! error counts as responses arrive), `summary` (a run's figures from the recorder),
//! `assess` (the driver's report on itself).
//! Uses: util, plan.

pub mod assess;
mod closed;
mod open;
pub mod record;
pub mod remote;
pub mod summary;

use crate::plan::workload::{expand_path, MixEntry};
use crate::plan::{Load, Profile};
use crate::util::http1::{Conn, HttpError};
use anyhow::{bail, Context, Result};
use record::{ErrorKind, Live, Recorder};
use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What is requested: pre-serialised requests sent in turn to one address.
#[derive(Clone, Debug)]
pub struct Target {
    pub addr: SocketAddr,
    /// Prebuilt requests, sent in turn: one, one per value of a `{seq:N}` path template, or a
    /// weighted mix of several.
    pub requests: Arc<Vec<Vec<u8>>>,
    /// For mixes (empty otherwise): which entry each request belongs to, and where its write
    /// token goes.
    pub slots: Arc<Vec<Slot>>,
    /// The mix's entries (empty for a single path).
    pub entries: Arc<Vec<MixEntry>>,
    /// Next write token; tokens are unique within a target.
    pub counter: Arc<std::sync::atomic::AtomicU64>,
    /// Text that starts every write token of this target, e.g. "iobound r1s0m ".
    pub tag: String,
    /// The single path requested (empty for a mix): what a load host is told to build.
    pub path: String,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slot {
    pub entry: u16,
    /// POST, PUT, PATCH or DELETE: acknowledged ones are recorded for the write check.
    pub write: bool,
    /// Offset of the token's digits in the request; 0 when it has none.
    pub token_at: u32,
}

/// Digits of a write token's counter.
pub const TOKEN_DIGITS: usize = 12;

/// Requests in a mix's cycle: long enough that every entry's share is close to its weight.
const MIX_CYCLE: usize = 20_000;

impl Target {
    /// `path` has been checked by `expand_path` (plans validate it).
    pub fn new(addr: SocketAddr, path: &str, close: bool) -> Target {
        let paths = expand_path(path).unwrap_or_else(|_| vec![path.to_string()]);
        let requests = paths
            .iter()
            .map(|p| crate::util::http1::build_request("GET", p, &addr.to_string(), None, close))
            .collect();
        Target {
            addr,
            requests: Arc::new(requests),
            slots: Arc::default(),
            entries: Arc::default(),
            counter: Arc::default(),
            tag: String::new(),
            path: path.to_string(),
        }
    }

    /// A weighted mix: a fixed, seeded cycle of requests in which each entry appears in
    /// proportion to its weight; each entry walks its own `{seq}` values. `{write}` in a body
    /// becomes `tag` plus a counter filled in when the request is sent.
    pub fn mix(addr: SocketAddr, entries: &[MixEntry], close: bool, tag: &str) -> Target {
        let total: u64 = entries
            .iter()
            .map(|e| u64::from(e.weight))
            .sum::<u64>()
            .max(1);
        let paths: Vec<Vec<String>> = entries
            .iter()
            .map(|e| expand_path(&e.path).unwrap_or_else(|_| vec![e.path.clone()]))
            .collect();
        let mut next = vec![0usize; entries.len()];
        let mut rng = crate::util::SplitMix64::new(0x0010_b00d);
        let host = addr.to_string();
        let placeholder = format!("{tag}{}", "0".repeat(TOKEN_DIGITS));
        let (mut requests, mut slots) =
            (Vec::with_capacity(MIX_CYCLE), Vec::with_capacity(MIX_CYCLE));
        for _ in 0..MIX_CYCLE {
            let mut pick = rng.next_u64() % total;
            let k = entries.iter().position(|e| {
                let w = u64::from(e.weight);
                if pick < w {
                    true
                } else {
                    pick -= w;
                    false
                }
            });
            let Some(k) = k else { continue };
            let e = &entries[k];
            let path = &paths[k][next[k] % paths[k].len()];
            next[k] += 1;
            let body = e.body.as_ref().map(|b| b.replace("{write}", &placeholder));
            let req = crate::util::http1::build_request(
                &e.method,
                path,
                &host,
                body.as_deref().map(|b| ("application/json", b.as_bytes())),
                close,
            );
            let token_at = match (
                &body,
                e.body.as_ref().is_some_and(|b| b.contains("{write}")),
            ) {
                (Some(b), true) => {
                    let in_body =
                        b.find(&placeholder).expect("placeholder written above") + tag.len();
                    (req.len() - b.len() + in_body) as u32
                }
                _ => 0,
            };
            requests.push(req);
            slots.push(Slot {
                entry: k as u16,
                write: e.is_write(),
                token_at,
            });
        }
        Target {
            addr,
            requests: Arc::new(requests),
            slots: Arc::new(slots),
            entries: Arc::new(entries.to_vec()),
            counter: Arc::new(std::sync::atomic::AtomicU64::new(1)),
            tag: tag.to_string(),
            path: String::new(),
        }
    }

    /// The path a request of the cycle was sent to (for mapping acknowledgements to rows).
    pub fn path_of(&self, i: usize) -> &str {
        let r = &self.requests[i];
        let line = r.split(|b| *b == b'\r').next().unwrap_or_default();
        let line = std::str::from_utf8(line).unwrap_or_default();
        line.split(' ').nth(1).unwrap_or_default()
    }

    /// The write token `n` of this target.
    pub fn token(&self, n: u64) -> String {
        format!("{}{n:0width$}", self.tag, width = TOKEN_DIGITS)
    }
}

/// Requests sent and answered with 2xx, per mix entry.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EntryCount {
    pub sent: u64,
    pub ok: u64,
}

pub struct DriverConfig {
    pub threads: usize,
    pub cpus: Vec<usize>,
    /// When the load starts (a common start agreed with other load hosts); shortly after the
    /// call when None.
    pub start: Option<Instant>,
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
    /// Requests due: open model, arrivals scheduled; closed model, requests started. Each ends
    /// answered, failed, or unanswered at the end (an error too): ok + errors = due.
    pub due: u64,
    /// Open model: requests that had to wait because every allowed connection was busy.
    pub pool_waits: u64,
    /// Per second: the busiest driver CPU's busy share (%), every process counted.
    pub cpu_busy_pct: Vec<f64>,
    /// Per mix entry (empty for a single path).
    pub entries: Vec<EntryCount>,
    /// Writes answered with 2xx: (index of the request in the cycle, its token counter or 0).
    pub acks: Vec<(u32, u64)>,
}

/// Per-thread state shared by the tasks of one driver thread.
pub(crate) struct Ctx {
    pub target: Target,
    pub load: Load,
    pub rec: RefCell<Recorder>,
    pub live: Arc<Live>,
    pub start: Instant,
    /// Send times of the requests in flight, so that those still unanswered at the end count.
    pub inflight: RefCell<InFlight>,
    /// Open model: intended send times of requests due but not yet picked up by a connection.
    pub queue: RefCell<std::collections::VecDeque<Instant>>,
    /// Requests due so far (see Outcome::due).
    pub due: std::cell::Cell<u64>,
    /// Open model: requests that found every allowed connection busy.
    pub pool_waits: std::cell::Cell<u64>,
    /// Which of the target's requests goes next.
    pub next: std::cell::Cell<usize>,
    pub entries: RefCell<Vec<EntryCount>>,
    pub acks: RefCell<Vec<(u32, u64)>>,
}

impl Ctx {
    /// Sends one request on `conn` (connecting first if needed) and records the outcome with
    /// latency counted from `since`. Returns whether the connection may be reused.
    pub async fn exchange(&self, conn: &mut Option<Conn>, since: Instant) -> bool {
        let slot = self.inflight.borrow_mut().insert(since);
        let reusable = self.exchange_inner(conn, since).await;
        self.inflight.borrow_mut().remove(slot);
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
                    self.rec.borrow_mut().error(
                        Instant::now(),
                        ErrorKind::Connect,
                        since.elapsed(),
                        &self.live,
                    );
                    return false;
                }
                Err(_) => {
                    self.rec.borrow_mut().error(
                        Instant::now(),
                        ErrorKind::Timeout,
                        since.elapsed(),
                        &self.live,
                    );
                    return false;
                }
            }
        }
        let c = conn.as_mut().expect("connected above");
        let i = self.next.get();
        self.next.set(if i + 1 >= self.target.requests.len() {
            0
        } else {
            i + 1
        });
        let slot = self.target.slots.get(i).copied();
        let mut token = 0;
        let patched;
        let request: &[u8] = match slot {
            Some(s) if s.token_at > 0 => {
                token = self.target.counter.fetch_add(1, Ordering::Relaxed);
                let mut r = self.target.requests[i].clone();
                let at = s.token_at as usize;
                write_digits(&mut r[at..at + TOKEN_DIGITS], token);
                patched = r;
                &patched
            }
            _ => &self.target.requests[i],
        };
        if let Some(s) = slot {
            self.entries.borrow_mut()[s.entry as usize].sent += 1;
        }
        let result = tokio::time::timeout_at(deadline, c.send(request, false)).await;
        let now = Instant::now();
        let mut rec = self.rec.borrow_mut();
        match result {
            Ok(Ok(resp)) => {
                if (200..300).contains(&resp.status) {
                    rec.ok(now, now.saturating_duration_since(since), &self.live);
                    if let Some(s) = slot {
                        self.entries.borrow_mut()[s.entry as usize].ok += 1;
                        if s.write {
                            self.acks.borrow_mut().push((i as u32, token));
                        }
                    }
                } else {
                    rec.error(
                        now,
                        ErrorKind::Status(resp.status),
                        now.saturating_duration_since(since),
                        &self.live,
                    );
                }
                !resp.close && !self.load.connection_close
            }
            Ok(Err(HttpError::Io(_) | HttpError::Closed | HttpError::Malformed(_))) => {
                rec.error(
                    now,
                    ErrorKind::Io,
                    now.saturating_duration_since(since),
                    &self.live,
                );
                false
            }
            Err(_) => {
                rec.error(
                    now,
                    ErrorKind::Timeout,
                    now.saturating_duration_since(since),
                    &self.live,
                );
                false
            }
        }
    }

    /// Every request still queued or in flight is given up now: an "unanswered" error, with
    /// its latency censored at this moment; or, when the run was stopped, "cut" (not given its
    /// time: counted apart, neither an error nor a latency).
    fn give_up_the_rest(&self, stopped: bool) {
        let kind = if stopped {
            ErrorKind::Cut
        } else {
            ErrorKind::Unanswered
        };
        let now = Instant::now();
        let mut rec = self.rec.borrow_mut();
        let queued: Vec<Instant> = self.queue.borrow_mut().drain(..).collect();
        for since in queued.into_iter().chain(self.inflight.borrow_mut().drain()) {
            rec.error(now, kind, now.saturating_duration_since(since), &self.live);
        }
    }
}

/// The send times of requests in flight: a slab, so that entering and leaving cost O(1) at
/// 10,000 connections.
#[derive(Default)]
pub(crate) struct InFlight {
    slots: Vec<Option<Instant>>,
    free: Vec<usize>,
}

impl InFlight {
    fn insert(&mut self, since: Instant) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(since);
                i
            }
            None => {
                self.slots.push(Some(since));
                self.slots.len() - 1
            }
        }
    }

    fn remove(&mut self, i: usize) {
        self.slots[i] = None;
        self.free.push(i);
    }

    fn drain(&mut self) -> Vec<Instant> {
        self.free.clear();
        self.slots.drain(..).flatten().collect()
    }
}

/// What one driver thread hands back: recorder, CPU time, requests due, pool waits, per-entry
/// counts, acknowledged writes.
type ThreadOutcome = (
    Recorder,
    Duration,
    u64,
    u64,
    Vec<EntryCount>,
    Vec<(u32, u64)>,
);

/// Runs `load` against `target` and returns everything recorded. `cancel` stops it early
/// (Ctrl-C, or the contender died); what was measured until then is kept.
pub fn run(
    target: &Target,
    load: &Load,
    cfg: &DriverConfig,
    live: Arc<Live>,
    cancel: Arc<AtomicBool>,
) -> Result<Outcome> {
    if cfg.threads == 0 {
        bail!("driver threads must be at least 1");
    }
    let start = cfg
        .start
        .unwrap_or_else(|| Instant::now() + Duration::from_millis(20));
    let mut handles = Vec::new();
    for index in 0..cfg.threads {
        let (target, load, live, cancel, cpus) = (
            target.clone(),
            load.clone(),
            live.clone(),
            cancel.clone(),
            cfg.cpus.clone(),
        );
        let threads = cfg.threads;
        let target_len = target.requests.len().max(1);
        let entry_count = target.entries.len();
        let h = std::thread::Builder::new()
            .name(format!("iobound-driver-{index}"))
            .spawn(move || -> Result<ThreadOutcome> {
                if !cpus.is_empty() {
                    crate::util::pin_current_thread(&cpus).context("pinning the driver thread")?;
                }
                let cpu0 = crate::util::thread_cpu_time();
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                let ctx = Rc::new(Ctx {
                    target,
                    load,
                    rec: RefCell::new(Recorder::new(start)),
                    live,
                    start,
                    inflight: RefCell::new(InFlight::default()),
                    queue: RefCell::new(std::collections::VecDeque::new()),
                    due: std::cell::Cell::new(0),
                    pool_waits: std::cell::Cell::new(0),
                    // Threads start at different places of a template's sequence.
                    next: std::cell::Cell::new(index * 7919 % target_len),
                    entries: RefCell::new(vec![EntryCount::default(); entry_count]),
                    acks: RefCell::new(Vec::new()),
                });
                let local = tokio::task::LocalSet::new();
                let c2 = ctx.clone();
                let stop = cancel.clone();
                local.block_on(&rt, async move {
                    let work = async {
                        match c2.load.profile {
                            Profile::Closed { .. } => {
                                closed::drive(c2.clone(), index, threads).await
                            }
                            Profile::Open { .. } => open::drive(c2.clone(), index, threads).await,
                        }
                    };
                    tokio::select! {
                        _ = work => {}
                        _ = wait_flag(&cancel) => {}
                    }
                });
                drop(local);
                let stopped = stop.load(Ordering::SeqCst) && !ctx.live.is_server_gone();
                ctx.give_up_the_rest(stopped);
                let due = ctx.due.get();
                let pool_waits = ctx.pool_waits.get();
                let cpu = crate::util::thread_cpu_time().saturating_sub(cpu0);
                let ctx = Rc::try_unwrap(ctx)
                    .map_err(|_| anyhow::anyhow!("driver tasks outlived their runtime"))?;
                Ok((
                    ctx.rec.into_inner(),
                    cpu,
                    due,
                    pool_waits,
                    ctx.entries.into_inner(),
                    ctx.acks.into_inner(),
                ))
            })?;
        handles.push(h);
    }
    let busy = CpuBusy::watch(cfg.cpus.clone());
    let mut recorder = Recorder::new(start);
    let (mut cpu, mut due, mut pool_waits) = (Duration::ZERO, 0, 0);
    let mut entries = vec![EntryCount::default(); target.entries.len()];
    let mut acks = Vec::new();
    for h in handles {
        let (r, c, a, w, e, k) = h
            .join()
            .map_err(|_| anyhow::anyhow!("a driver thread panicked"))??;
        recorder.merge(r);
        cpu += c;
        due += a;
        pool_waits += w;
        for (sum, x) in entries.iter_mut().zip(e) {
            sum.sent += x.sent;
            sum.ok += x.ok;
        }
        acks.extend(k);
    }
    let wall = start.elapsed();
    let cancelled = cancel.load(Ordering::SeqCst);
    let duration = load.profile.duration().min(wall);
    Ok(Outcome {
        recorder,
        duration,
        wall,
        cpu,
        threads: cfg.threads,
        cancelled,
        due,
        pool_waits,
        cpu_busy_pct: busy.stop(),
        entries,
        acks,
    })
}

/// Busy share of the driver's CPUs per second, read from /proc/stat by a thread of its own
/// while the load runs (every process on those CPUs counts: services share them).
struct CpuBusy {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<Vec<f64>>>,
}

impl CpuBusy {
    fn watch(cpus: Vec<usize>) -> CpuBusy {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = (!cpus.is_empty()).then(|| {
            std::thread::spawn(move || {
                let mut out = Vec::new();
                let mut before = cpu_times(&cpus);
                let mut next = Instant::now() + Duration::from_secs(1);
                while !flag.load(Ordering::Relaxed) {
                    if Instant::now() < next {
                        std::thread::sleep(Duration::from_millis(20));
                        continue;
                    }
                    let now = cpu_times(&cpus);
                    let busiest = before
                        .iter()
                        .zip(&now)
                        .map(|(&(b0, t0), &(b1, t1))| {
                            if t1 > t0 {
                                (b1 - b0) as f64 * 100.0 / (t1 - t0) as f64
                            } else {
                                0.0
                            }
                        })
                        .fold(0.0, f64::max);
                    out.push((busiest * 10.0).round() / 10.0);
                    before = now;
                    next += Duration::from_secs(1);
                }
                out
            })
        });
        CpuBusy { stop, handle }
    }

    fn stop(mut self) -> Vec<f64> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

/// (busy, total) jiffies of each of `cpus` from /proc/stat; busy is everything but idle and
/// iowait.
pub(crate) fn cpu_times(cpus: &[usize]) -> Vec<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    cpus.iter()
        .map(|c| {
            let prefix = format!("cpu{c} ");
            let v: Vec<u64> = text
                .lines()
                .find(|l| l.starts_with(&prefix))
                .map(|l| {
                    l.split_whitespace()
                        .skip(1)
                        .take(8)
                        .filter_map(|x| x.parse().ok())
                        .collect()
                })
                .unwrap_or_default();
            let total: u64 = v.iter().sum();
            let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
            (total.saturating_sub(idle), total)
        })
        .collect()
}

/// Writes `n` as zero-padded decimal digits over `out`.
fn write_digits(out: &mut [u8], mut n: u64) {
    for b in out.iter_mut().rev() {
        *b = b'0' + (n % 10) as u8;
        n /= 10;
    }
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
        assert_eq!(
            expand_path("/hash?id={seq:3}&delayMs=5").unwrap(),
            [
                "/hash?id=0&delayMs=5",
                "/hash?id=1&delayMs=5",
                "/hash?id=2&delayMs=5"
            ]
        );
        assert_eq!(expand_path("/plaintext").unwrap(), ["/plaintext"]);
        assert_eq!(
            expand_path("/m/{seq:9..11}").unwrap(),
            ["/m/9", "/m/10", "/m/11"]
        );
        for bad in [
            "/h?id={seq:0}",
            "/h?id={seq:x}",
            "/h?id={seq:5",
            "/h?a={seq:2}&b={seq:2}",
            "/m/{seq:5..4}",
            "/m/{seq:1..2000000}",
        ] {
            assert!(expand_path(bad).is_err(), "{bad}");
        }
        let t = Target::new("127.0.0.1:1".parse().unwrap(), "/x?id={seq:4000}", false);
        assert_eq!(t.requests.len(), 4000);
        assert!(String::from_utf8_lossy(&t.requests[3999]).starts_with("GET /x?id=3999 HTTP/1.1"));
    }

    #[test]
    fn mixes_keep_their_weights_and_place_write_tokens() {
        let entries = vec![
            MixEntry {
                weight: 80,
                method: "GET".into(),
                path: "/messages/{seq:1..10000}".into(),
                body: None,
            },
            MixEntry {
                weight: 15,
                method: "POST".into(),
                path: "/messages".into(),
                body: Some(r#"{"text":"{write}"}"#.into()),
            },
            MixEntry {
                weight: 5,
                method: "PUT".into(),
                path: "/messages/{seq:1..10000}".into(),
                body: Some(r#"{"text":"{write}"}"#.into()),
            },
        ];
        let t = Target::mix(
            "127.0.0.1:1".parse().unwrap(),
            &entries,
            false,
            "iobound r1s0m ",
        );
        let share =
            |k: u16| t.slots.iter().filter(|s| s.entry == k).count() as f64 / t.slots.len() as f64;
        assert!(
            (share(0) - 0.80).abs() < 0.01
                && (share(1) - 0.15).abs() < 0.01
                && (share(2) - 0.05).abs() < 0.01
        );
        let first_get = t.slots.iter().position(|s| s.entry == 0).unwrap();
        assert_eq!(t.path_of(first_get), "/messages/1");
        assert_eq!(t.slots[first_get].token_at, 0);
        let post = t.slots.iter().position(|s| s.entry == 1).unwrap();
        let mut r = t.requests[post].clone();
        let at = t.slots[post].token_at as usize;
        write_digits(&mut r[at..at + TOKEN_DIGITS], 42);
        let text = String::from_utf8(r).unwrap();
        assert!(text.starts_with("POST /messages HTTP/1.1\r\n"), "{text}");
        assert!(text.contains("Content-Type: application/json\r\n"));
        assert!(
            text.ends_with(&format!(r#"{{"text":"{}"}}"#, t.token(42))),
            "{text}"
        );
        assert_eq!(t.token(42), "iobound r1s0m 000000000042");
    }
}
