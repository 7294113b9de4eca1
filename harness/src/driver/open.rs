//! Open model: requests arrive on a schedule that does not care how the server is doing.
//! Each request's latency runs from its intended send time, so a stalled server shows up in
//! every request that should have been sent during the stall (no coordinated omission).
//! Connections are opened on demand up to `max_connections`; beyond that, requests wait in
//! the driver's queue and that wait counts as latency too.

use super::Ctx;
use crate::plan::Profile;
use crate::util::http1::Conn;
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use tokio::time::Instant as TokioInstant;

/// Intended send offset of arrival `i` (0-based) for a rate rising linearly from `a` to `b`
/// over `d`: the inverse of the cumulative arrivals N(t) = a t + (b - a) t^2 / (2 d).
pub(crate) fn arrival_offset(i: u64, a: f64, b: f64, d: Duration) -> f64 {
    let n = i as f64;
    let d = d.as_secs_f64();
    let slope = (b - a) / d;
    if slope.abs() < 1e-12 {
        n / a
    } else {
        (-a + (a * a + 2.0 * slope * n).max(0.0).sqrt()) / slope
    }
}

struct Pool {
    /// Connection tasks parked waiting for work, not yet claimed by the scheduler.
    idle: Cell<u32>,
    conns: Cell<u32>,
    done: Cell<bool>,
    notify: Notify,
}

pub(crate) async fn drive(ctx: Rc<Ctx>, index: usize, threads: usize) {
    let Profile::Open {
        rate,
        ramp_to,
        duration,
        max_connections,
    } = ctx.load.profile
    else {
        unreachable!("open::drive is only called for open profiles")
    };
    let max_conns = (max_connections / threads as u32).max(1);
    let pool = Rc::new(Pool {
        idle: Cell::new(0),
        conns: Cell::new(0),
        done: Cell::new(false),
        notify: Notify::new(),
    });
    let mut workers = Vec::new();
    let mut i = index as u64;
    loop {
        let offset = arrival_offset(i, rate, ramp_to, duration);
        // NaN (a broken schedule) ends the run as surely as an offset past its end. The end
        // may have moved (a measured window opened inside the warm-up's load).
        let end = ctx.end().saturating_duration_since(ctx.start).as_secs_f64();
        let past_end = offset.partial_cmp(&end) != Some(std::cmp::Ordering::Less);
        if past_end || ctx.live.finishing() {
            break;
        }
        let intended = ctx.start + Duration::from_secs_f64(offset);
        if intended > Instant::now() {
            tokio::time::sleep_until(TokioInstant::from_std(intended)).await;
        }
        // The scheduler's own lateness: only this says the driver fell behind.
        ctx.rec
            .borrow_mut()
            .lag(Instant::now().saturating_duration_since(intended));
        ctx.queue.borrow_mut().push_back(intended);
        ctx.due.set(ctx.due.get() + 1);
        ctx.live
            .due
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if pool.idle.get() > 0 {
            pool.idle.set(pool.idle.get() - 1);
            pool.notify.notify_one();
        } else if pool.conns.get() < max_conns {
            pool.conns.set(pool.conns.get() + 1);
            workers.push(tokio::task::spawn_local(worker(ctx.clone(), pool.clone())));
        } else {
            ctx.pool_waits.set(ctx.pool_waits.get() + 1);
        }
        i += threads as u64;
    }
    pool.done.set(true);
    pool.notify.notify_waiters();
    ctx.drain(workers).await;
}

async fn worker(ctx: Rc<Ctx>, pool: Rc<Pool>) {
    let mut conn: Option<Conn> = None;
    loop {
        let next = ctx.queue.borrow_mut().pop_front();
        match next {
            Some(intended) => {
                // Time in the queue waiting for a free connection (plus the scheduler's
                // lateness, recorded apart). Latency still counts from `intended`.
                ctx.rec
                    .borrow_mut()
                    .conn_wait(Instant::now().saturating_duration_since(intended));
                ctx.exchange(&mut conn, intended).await;
            }
            None if pool.done.get() => return,
            None => {
                pool.idle.set(pool.idle.get() + 1);
                pool.notify.notified().await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_rate_spaces_arrivals_evenly() {
        let d = Duration::from_secs(10);
        assert_eq!(arrival_offset(0, 1000.0, 1000.0, d), 0.0);
        assert!((arrival_offset(500, 1000.0, 1000.0, d) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn ramp_delivers_the_area_under_the_rate() {
        // 10 -> 300 req/s over 60 s is (10 + 300) / 2 * 60 = 9,300 arrivals.
        let d = Duration::from_secs(60);
        let inside = (0..20_000u64)
            .take_while(|i| arrival_offset(*i, 10.0, 300.0, d) < 60.0)
            .count();
        assert!((9_299..=9_301).contains(&inside), "{inside}");
        // Halfway through, the cumulative count is 10*30 + 290*900/120 = 2,475.
        assert!((arrival_offset(2_475, 10.0, 300.0, d) - 30.0).abs() < 0.01);
    }

    #[test]
    fn falling_ramp_is_supported() {
        let d = Duration::from_secs(10);
        let n = (0..10_000u64)
            .take_while(|i| arrival_offset(*i, 100.0, 10.0, d) < 10.0)
            .count();
        assert!((549..=551).contains(&n), "{n}");
    }
}
