//! Where every request ends: one HdrHistogram per 1-second interval (by completion time) of
//! successful responses, one of failed requests (at the time they failed, or were given up as
//! unanswered at the end), plus error counts by kind (driver/errors.rs). Overall figures are
//! derived later by merging intervals, never by averaging their percentiles.

use super::errors::{ErrorKind, Errors};
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Latencies are recorded in microseconds, from 1 µs to one hour, 3 significant digits.
pub const HIST_MAX_US: u64 = 3_600_000_000;
pub const HIST_SIGFIG: u8 = 3;

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_US, HIST_SIGFIG)
        .expect("static histogram bounds are valid")
}

pub struct Interval {
    /// Latency of successful responses completed in this second.
    pub hist: Histogram<u64>,
    /// Latency of requests that failed in this second, at the time they failed (censored).
    pub failed: Histogram<u64>,
    pub errors: Errors,
}

impl Interval {
    pub fn new() -> Interval {
        Interval {
            hist: new_histogram(),
            failed: new_histogram(),
            errors: Errors::default(),
        }
    }

    fn is_empty(&self) -> bool {
        self.hist.is_empty() && self.failed.is_empty() && self.errors == Errors::default()
    }

    /// Requests this interval accounts for: answered, failed and cut.
    pub fn requests(&self) -> u64 {
        self.hist.len() + self.errors.total() + self.errors.cut
    }

    /// Adds another interval's records (the same second from another thread or host).
    pub fn add(&mut self, o: &Interval) {
        self.hist.add(&o.hist).expect("same histogram bounds");
        self.failed.add(&o.failed).expect("same histogram bounds");
        self.errors.merge(&o.errors);
    }
}

impl Default for Interval {
    fn default() -> Interval {
        Interval::new()
    }
}

/// Counters the orchestrator reads while the driver runs, for the progress bar: answers,
/// errors, and a coarse latency histogram of the answers (quarter octaves, ~19% wide) from
/// which the live line shows the last second's p99. The recorded figures come from the
/// HdrHistograms, never from this.
#[derive(Debug)]
pub struct Live {
    pub ok: AtomicU64,
    pub errors: AtomicU64,
    /// Latency of the answers counted in `ok`, summed (µs): their mean over any stretch.
    pub latency_us: AtomicU64,
    /// Set by the loop beside the load to end it early and gracefully: no new requests are
    /// sent, the ones in flight are waited for as at the end of a run (a warm-up that settled).
    finish: std::sync::atomic::AtomicBool,
    /// Set when the load is cancelled because the server died: what it left in flight is then
    /// the server's failure (unanswered), not cut by a stop of ours.
    server_gone: std::sync::atomic::AtomicBool,
    buckets: [AtomicU64; LIVE_BUCKETS],
    /// Requests due so far (see Outcome::due), for a controller that must account for a
    /// load host it lost.
    pub due: AtomicU64,
    /// Where the load ends, in ms after its start, once the loop beside it has decided (a
    /// warm-up led into the measured window without a break: see `measure_from`); u64::MAX
    /// until then, when the profile's own duration holds.
    end_ms: AtomicU64,
    /// On a load host (`iobound agent drive`): a second copy of every record, handed out per
    /// completed second and streamed to the controller, so that what a lost host measured
    /// before it was lost is kept.
    mirror: Option<Mirror>,
}

/// The agent's copy of every record (see `Live::mirrored`).
struct Mirror(std::sync::Mutex<Recorder>);

impl std::fmt::Debug for Mirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Mirror")
    }
}

const LIVE_BUCKETS: usize = 128;

impl Default for Live {
    fn default() -> Live {
        Live {
            ok: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            latency_us: AtomicU64::new(0),
            finish: Default::default(),
            server_gone: Default::default(),
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            due: AtomicU64::new(0),
            end_ms: AtomicU64::new(u64::MAX),
            mirror: None,
        }
    }
}

/// The bucket of a latency in µs: four per power of two.
fn live_bucket(us: u64) -> usize {
    let us = us.max(4);
    let octave = 63 - us.leading_zeros() as usize;
    let quarter = ((us >> (octave - 2)) & 3) as usize;
    (octave * 4 + quarter).min(LIVE_BUCKETS - 1)
}

/// The largest latency (µs) bucket `i` holds.
fn live_bucket_top(i: usize) -> u64 {
    let (octave, quarter) = (i / 4, (i % 4) as u64);
    ((5 + quarter) << (octave - 2)) - 1
}

impl Live {
    /// Counters that also keep a copy of every record from `start` on (see `take_seconds`).
    pub fn mirrored(start: Instant) -> Live {
        Live {
            mirror: Some(Mirror(std::sync::Mutex::new(Recorder::new(start)))),
            ..Live::default()
        }
    }

    /// The mirrored records of every second before `before` not handed out yet, as
    /// (second, records) pairs; a second that gets records after it was handed out (a request
    /// given up at the end) is handed out again with just those, so the pieces add up.
    pub fn take_seconds(&self, before: usize) -> Vec<(usize, Interval)> {
        let Some(m) = &self.mirror else {
            return Vec::new();
        };
        let mut rec = m.0.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::new();
        for (i, iv) in rec.intervals.iter_mut().enumerate().take(before) {
            if !iv.is_empty() {
                out.push((i, std::mem::take(iv)));
            }
        }
        out
    }

    /// Sets the counters to the sums of several hosts' (the controller's view of remote load).
    pub fn set_totals(&self, ok: u64, errors: u64, latency_us: u64, due: u64, buckets: &[u64]) {
        self.ok.store(ok, Ordering::Relaxed);
        self.errors.store(errors, Ordering::Relaxed);
        self.latency_us.store(latency_us, Ordering::Relaxed);
        self.due.store(due, Ordering::Relaxed);
        for (b, n) in self.buckets.iter().zip(buckets) {
            b.store(*n, Ordering::Relaxed);
        }
    }

    fn mirror(&self, f: impl FnOnce(&mut Recorder)) {
        if let Some(m) = &self.mirror {
            f(&mut m.0.lock().unwrap_or_else(|p| p.into_inner()));
        }
    }

    /// The server exited: requests left in flight when the load is cancelled are its failure.
    pub fn server_gone(&self) {
        self.server_gone.store(true, Ordering::SeqCst);
    }

    pub fn is_server_gone(&self) -> bool {
        self.server_gone.load(Ordering::SeqCst)
    }
    /// Ends the load early: nothing more is sent, what is in flight is waited for.
    pub fn finish_early(&self) {
        self.finish.store(true, Ordering::SeqCst);
    }

    pub fn finishing(&self) -> bool {
        self.finish.load(Ordering::Relaxed)
    }

    /// Moves the load's end to `end` after its start: the same users, connections and
    /// schedule go on until then (a measured window opened inside the warm-up's load).
    pub fn end_at(&self, end: Duration) {
        let ms = u64::try_from(end.as_millis()).unwrap_or(u64::MAX - 1);
        self.end_ms.store(ms, Ordering::SeqCst);
    }

    /// The end set by `end_at`, if any.
    pub fn end(&self) -> Option<Duration> {
        match self.end_ms.load(Ordering::SeqCst) {
            u64::MAX => None,
            ms => Some(Duration::from_millis(ms)),
        }
    }

    /// The bucket counts now (to diff against a later snapshot).
    pub fn snapshot(&self) -> Vec<u64> {
        self.buckets
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect()
    }

    /// The p99 (an upper bound, within the bucket's width) of the answers recorded since
    /// `before` was taken; None when there were none.
    pub fn p99_since(&self, before: &[u64]) -> Option<Duration> {
        let diff: Vec<u64> = self
            .snapshot()
            .iter()
            .zip(before.iter().chain(std::iter::repeat(&0)))
            .map(|(a, b)| a.saturating_sub(*b))
            .collect();
        let total: u64 = diff.iter().sum();
        let rank = (total * 99).div_ceil(100);
        let mut seen = 0;
        for (i, n) in diff.iter().enumerate() {
            seen += n;
            if total > 0 && seen >= rank {
                return Some(Duration::from_micros(live_bucket_top(i)));
            }
        }
        None
    }
}

pub struct Recorder {
    pub start: Instant,
    pub intervals: Vec<Interval>,
    /// How late the open-model scheduler put requests in the queue against their intended send
    /// time (µs): the driver's own lateness. Empty for closed runs.
    pub lag: Histogram<u64>,
    /// How long due requests then waited for a free connection (µs): the server being slow
    /// to give connections back, not the driver falling behind.
    pub conn_wait: Histogram<u64>,
}

impl Recorder {
    pub fn new(start: Instant) -> Recorder {
        Recorder {
            start,
            intervals: Vec::new(),
            lag: new_histogram(),
            conn_wait: new_histogram(),
        }
    }

    fn slot(&mut self, at: Instant) -> &mut Interval {
        let i = at.saturating_duration_since(self.start).as_secs() as usize;
        while self.intervals.len() <= i {
            self.intervals.push(Interval::new());
        }
        &mut self.intervals[i]
    }

    pub fn ok(&mut self, at: Instant, latency: Duration, live: &Live) {
        let us = (latency.as_micros() as u64).max(1);
        self.slot(at).hist.saturating_record(us);
        live.mirror(|m| m.slot(at).hist.saturating_record(us));
        live.ok.fetch_add(1, Ordering::Relaxed);
        live.latency_us.fetch_add(us, Ordering::Relaxed);
        live.buckets[live_bucket(us)].fetch_add(1, Ordering::Relaxed);
    }

    /// A request that failed at `at`, `latency` after its (intended) send time.
    pub fn error(&mut self, at: Instant, kind: ErrorKind, latency: Duration, live: &Live) {
        self.record_error(at, kind, latency);
        live.mirror(|m| m.record_error(at, kind, latency));
        if kind != ErrorKind::Cut {
            live.errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn record_error(&mut self, at: Instant, kind: ErrorKind, latency: Duration) {
        let slot = self.slot(at);
        slot.errors.add(kind);
        if kind == ErrorKind::Cut {
            return; // not given its time: no latency, and not the server's error
        }
        slot.failed
            .saturating_record((latency.as_micros() as u64).max(1));
    }

    /// Adds a second's records from elsewhere (a load host) at its index.
    pub fn add_second(&mut self, i: usize, iv: &Interval) {
        while self.intervals.len() <= i {
            self.intervals.push(Interval::new());
        }
        self.intervals[i].add(iv);
    }

    /// Records `n` requests cut at `at` (a lost load host's share whose outcome is unknown).
    pub fn cut(&mut self, at: Instant, n: u64) {
        self.slot(at).errors.cut += n;
    }

    pub fn lag(&mut self, late: Duration) {
        self.lag.saturating_record((late.as_micros() as u64).max(1));
    }

    pub fn conn_wait(&mut self, wait: Duration) {
        self.conn_wait
            .saturating_record((wait.as_micros() as u64).max(1));
    }

    /// Folds another thread's recorder into this one (same start instant).
    pub fn merge(&mut self, other: Recorder) {
        for (i, iv) in other.intervals.into_iter().enumerate() {
            while self.intervals.len() <= i {
                self.intervals.push(Interval::new());
            }
            self.intervals[i].add(&iv);
        }
        self.lag.add(&other.lag).expect("same histogram bounds");
        self.conn_wait
            .add(&other.conn_wait)
            .expect("same histogram bounds");
    }

    /// Latency of every request, successful or not (failed ones at the time they failed).
    pub fn overall_all(&self) -> Histogram<u64> {
        let mut h = new_histogram();
        for iv in &self.intervals {
            h.add(&iv.hist).expect("same histogram bounds");
            h.add(&iv.failed).expect("same histogram bounds");
        }
        h
    }

    pub fn overall(&self) -> (Histogram<u64>, Errors) {
        let mut h = new_histogram();
        let mut e = Errors::default();
        for iv in &self.intervals {
            h.add(&iv.hist).expect("same histogram bounds");
            e.merge(&iv.errors);
        }
        (h, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_live_p99_bounds_the_last_seconds_answers_within_a_bucket() {
        let live = Live::default();
        let mut r = Recorder::new(Instant::now());
        for ms in 1..=100u64 {
            r.ok(Instant::now(), Duration::from_millis(ms), &live);
        }
        let p99 = live.p99_since(&[]).unwrap();
        assert!(
            p99 >= Duration::from_millis(99) && p99 <= Duration::from_millis(99 * 5 / 4),
            "{p99:?}"
        );
        let before = live.snapshot();
        assert_eq!(live.p99_since(&before), None, "nothing since");
        for _ in 0..100 {
            r.ok(Instant::now(), Duration::from_micros(300), &live);
        }
        let p = live.p99_since(&before).unwrap();
        assert!(
            p >= Duration::from_micros(300) && p < Duration::from_micros(380),
            "only the answers since the snapshot: {p:?}"
        );
        for us in [4u64, 5, 7, 8, 1_000, 1 << 40] {
            assert!(
                live_bucket_top(live_bucket(us)) >= us.min(live_bucket_top(LIVE_BUCKETS - 1)),
                "{us}"
            );
        }
    }

    #[test]
    fn intervals_follow_completion_time_and_merge_exactly() {
        let start = Instant::now();
        let live = Live::default();
        let mut a = Recorder::new(start);
        let mut b = Recorder::new(start);
        for ms in 1..=100u64 {
            a.ok(
                start + Duration::from_millis(10 * ms),
                Duration::from_millis(ms),
                &live,
            );
        }
        b.ok(
            start + Duration::from_millis(2500),
            Duration::from_secs(2),
            &live,
        );
        b.error(
            start + Duration::from_millis(2600),
            ErrorKind::Status(503),
            Duration::from_millis(3),
            &live,
        );
        b.error(start, ErrorKind::Timeout, Duration::from_secs(2), &live);
        a.merge(b);
        assert_eq!(a.intervals.len(), 3);
        assert_eq!(a.intervals[0].hist.len(), 99);
        assert_eq!(a.intervals[1].hist.len(), 1);
        assert_eq!(a.intervals[2].hist.len(), 1);
        let (h, e) = a.overall();
        assert_eq!(h.len(), 101);
        assert_eq!(e.total(), 2);
        assert_eq!(e.by_status.get(&503), Some(&1));
        // The merged p99 sees the 2 s outlier's neighbourhood, not an average of per-interval p99s.
        assert!(h.value_at_quantile(1.0) >= 1_990_000);
        // All requests: the failed ones count at the time they failed.
        assert_eq!(a.overall_all().len(), 103);
        assert_eq!(live.ok.load(Ordering::Relaxed), 101);
        assert_eq!(live.errors.load(Ordering::Relaxed), 2);
    }
}
