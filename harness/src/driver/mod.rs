//! The load driver: offers load as a closed model (users waiting for their own responses) or
//! an open model (arrivals on a schedule, latency from the intended send time), on dedicated
//! single-threaded runtimes pinned to the driver CPUs, and reports what it cost.
//!
//! Holds: `closed` and `open` (the two load models), `record` (per-second histograms and error
//! counts as responses arrive; `errors`, how a request failed), `outcome` (what a load leaves),
//! `summary` (a run's figures from the recorder), `assess` (the driver's report on itself),
//! `target` (the requests sent), `cpu_busy` (the driver CPUs' busy share per second), `remote`
//! (load from other hosts over SSH), `window` (the measured window cut out of a load that began
//! with the warm-up).
//! Uses: util, plan.

pub mod assess;
mod closed;
pub mod cpu_busy;
pub mod errors;
pub mod histogram_header;
mod open;
mod outcome;
pub mod record;
pub mod remote;
pub mod summary;
mod target;
mod window;

use crate::plan::{Load, Profile};
use crate::util::http1::{Conn, HttpError};
use anyhow::{bail, Context, Result};
use cpu_busy::CpuBusy;
use errors::ErrorKind;
pub use outcome::{DriverConfig, EntryCount, Outcome};
use record::{Live, Recorder};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use target::write_digits;
pub use target::{Slot, Target, TOKEN_DIGITS};

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
    /// When the load stops sending: the profile's end, or where the loop beside the load
    /// moved it (`Live::end_at`).
    pub fn end(&self) -> Instant {
        self.start
            + self
                .live
                .end()
                .unwrap_or_else(|| self.load.profile.duration())
    }

    /// Waits for `tasks` until they end or the drain window after the load's end closes (the
    /// end may move while waiting).
    pub async fn drain<T>(&self, tasks: Vec<tokio::task::JoinHandle<T>>) {
        let all = async {
            for t in tasks {
                let _ = t.await;
            }
        };
        let window = drain_window(&self.load);
        let closed = async {
            loop {
                let deadline = self.end() + window;
                let now = Instant::now();
                if now >= deadline {
                    return;
                }
                tokio::time::sleep((deadline - now).min(Duration::from_millis(100))).await;
            }
        };
        tokio::select! {
            _ = all => {}
            _ = closed => {}
        }
    }

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
                Ok(Err(_)) => return self.failed(ErrorKind::Connect, since),
                Err(_) => return self.failed(ErrorKind::Timeout, since),
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
        let (request, token) = self.request(i, slot);
        if let Some(s) = slot {
            self.entries.borrow_mut()[s.entry as usize].sent += 1;
        }
        let result = tokio::time::timeout_at(deadline, c.send(&request, false)).await;
        match result {
            Ok(Ok(resp)) if (200..300).contains(&resp.status) => {
                let now = Instant::now();
                let latency = now.saturating_duration_since(since);
                self.rec.borrow_mut().ok(now, latency, &self.live);
                if let Some(s) = slot {
                    self.entries.borrow_mut()[s.entry as usize].ok += 1;
                    if s.write {
                        self.acks.borrow_mut().push((i as u32, token));
                    }
                }
                !resp.close && !self.load.connection_close
            }
            Ok(Ok(resp)) => {
                self.failed(ErrorKind::Status(resp.status), since);
                !resp.close && !self.load.connection_close
            }
            Ok(Err(HttpError::Io(_) | HttpError::Closed | HttpError::Malformed(_))) => {
                self.failed(ErrorKind::Io, since)
            }
            Err(_) => self.failed(ErrorKind::Timeout, since),
        }
    }

    /// Records a failed request sent at `since`; false: the connection is not reused.
    fn failed(&self, kind: ErrorKind, since: Instant) -> bool {
        let now = Instant::now();
        self.rec
            .borrow_mut()
            .error(now, kind, now.saturating_duration_since(since), &self.live);
        false
    }

    /// Request `i` of the template, with a fresh token written into it where the mix needs one
    /// (a create whose row the write check looks up afterwards); the token (0 if none).
    fn request(&self, i: usize, slot: Option<Slot>) -> (std::borrow::Cow<'_, [u8]>, u64) {
        match slot {
            Some(s) if s.token_at > 0 => {
                let token = self.target.counter.fetch_add(1, Ordering::Relaxed);
                let mut r = self.target.requests[i].clone();
                let at = s.token_at as usize;
                write_digits(&mut r[at..at + TOKEN_DIGITS], token);
                (std::borrow::Cow::Owned(r), token)
            }
            _ => (std::borrow::Cow::Borrowed(&self.target.requests[i]), 0),
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

/// What one driver thread hands back.
struct ThreadOutcome {
    recorder: Recorder,
    cpu: Duration,
    due: u64,
    pool_waits: u64,
    entries: Vec<EntryCount>,
    acks: Vec<(u32, u64)>,
}

/// One driver thread's share of the load: thread `index` of `threads`, from `start`.
struct ThreadShare {
    target: Target,
    load: Load,
    live: Arc<Live>,
    cancel: Arc<AtomicBool>,
    cpus: Vec<usize>,
    index: usize,
    threads: usize,
    start: Instant,
}

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
        let share = ThreadShare {
            target: target.clone(),
            load: load.clone(),
            live: live.clone(),
            cancel: cancel.clone(),
            cpus: cfg.cpus.clone(),
            index,
            threads: cfg.threads,
            start,
        };
        let h = std::thread::Builder::new()
            .name(format!("iobound-driver-{index}"))
            .spawn(move || drive_thread(share))?;
        handles.push(h);
    }
    let busy = CpuBusy::watch(cfg.cpus.clone());
    let mut recorder = Recorder::new(start);
    let (mut cpu, mut due, mut pool_waits) = (Duration::ZERO, 0, 0);
    let mut entries = vec![EntryCount::default(); target.entries.len()];
    let mut acks = Vec::new();
    for h in handles {
        let t = h
            .join()
            .map_err(|_| anyhow::anyhow!("a driver thread panicked"))??;
        recorder.merge(t.recorder);
        cpu += t.cpu;
        due += t.due;
        pool_waits += t.pool_waits;
        for (sum, x) in entries.iter_mut().zip(t.entries) {
            sum.sent += x.sent;
            sum.ok += x.ok;
        }
        acks.extend(t.acks);
    }
    let wall = start.elapsed();
    let length = live.end().unwrap_or_else(|| load.profile.duration());
    Ok(Outcome {
        recorder,
        duration: length.min(wall),
        wall,
        cpu,
        threads: cfg.threads,
        cancelled: cancel.load(Ordering::SeqCst),
        due,
        pool_waits,
        cpu_busy_pct: busy.stop(),
        entries,
        acks,
    })
}

/// One driver thread: pinned, its own single-threaded runtime, its share of the load until
/// the end or `cancel`; then everything still queued or in flight is given up.
fn drive_thread(share: ThreadShare) -> Result<ThreadOutcome> {
    if !share.cpus.is_empty() {
        crate::util::cpus::pin_current_thread(&share.cpus).context("pinning the driver thread")?;
    }
    let cpu0 = crate::util::cpus::thread_cpu_time();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (index, threads, cancel) = (share.index, share.threads, share.cancel);
    let target_len = share.target.requests.len().max(1);
    let entry_count = share.target.entries.len();
    let ctx = Rc::new(Ctx {
        target: share.target,
        load: share.load,
        rec: RefCell::new(Recorder::new(share.start)),
        live: share.live,
        start: share.start,
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
    local.block_on(&rt, async {
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
    drop(c2);
    let stopped = cancel.load(Ordering::SeqCst) && !ctx.live.is_server_gone();
    ctx.give_up_the_rest(stopped);
    let cpu = crate::util::cpus::thread_cpu_time().saturating_sub(cpu0);
    let ctx =
        Rc::try_unwrap(ctx).map_err(|_| anyhow::anyhow!("driver tasks outlived their runtime"))?;
    Ok(ThreadOutcome {
        recorder: ctx.rec.into_inner(),
        cpu,
        due: ctx.due.get(),
        pool_waits: ctx.pool_waits.get(),
        entries: ctx.entries.into_inner(),
        acks: ctx.acks.into_inner(),
    })
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
