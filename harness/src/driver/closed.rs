//! Closed model: a fixed (stepped) population of users, each with its own keep-alive
//! connection, sending the next request only after the previous response (plus think time).
//! Throughput follows from the server's latency; Little's law ties the two together.

use super::Ctx;
use crate::plan::Profile;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::time::Instant as TokioInstant;

/// When user `j` joins: the first `users` at the start, then `step_users` per further level;
/// each level's users evenly over `spread` from the level's start (all at once when zero).
pub(crate) fn user_start(
    j: u32,
    users: u32,
    step_users: u32,
    level: Duration,
    spread: Duration,
) -> Option<Duration> {
    let (at, i, n) = if j < users {
        (Duration::ZERO, j, users)
    } else {
        let wave = (j - users).checked_div(step_users)?;
        (level * (wave + 1), (j - users) % step_users, step_users)
    };
    Some(at + spread.mul_f64(f64::from(i) / f64::from(n)))
}

pub(crate) async fn drive(ctx: Rc<Ctx>, index: usize, threads: usize) {
    let Profile::Closed {
        users,
        step_users,
        steps,
        level,
        think,
        stay,
        spread,
    } = ctx.load.profile
    else {
        unreachable!("closed::drive is only called for closed profiles")
    };
    let total = users + step_users * steps;
    let mut tasks = Vec::new();
    for j in (index as u32..total).step_by(threads) {
        let Some(offset) = user_start(j, users, step_users, level, spread) else {
            continue;
        };
        let ctx = ctx.clone();
        tasks.push(tokio::task::spawn_local(async move {
            tokio::time::sleep_until(TokioInstant::from_std(ctx.start + offset)).await;
            // Read at every turn: a window opened inside a warm-up's load moves its end.
            let leaves = || {
                if stay.is_zero() {
                    ctx.end()
                } else {
                    ctx.end().min(ctx.start + offset + stay)
                }
            };
            let mut conn = None;
            while Instant::now() < leaves() && !ctx.live.finishing() {
                let since = Instant::now();
                let had_conn = conn.is_some();
                ctx.due.set(ctx.due.get() + 1);
                ctx.live
                    .due
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if !ctx.exchange(&mut conn, since).await && !had_conn {
                    // Connection refused: back off briefly instead of spinning on the error.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                if !think.is_zero() {
                    tokio::time::sleep(think).await;
                }
            }
        }));
    }
    ctx.drain(tasks).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_join_by_level() {
        let l = Duration::from_secs(10);
        assert_eq!(
            user_start(0, 256, 256, l, Duration::ZERO),
            Some(Duration::ZERO)
        );
        assert_eq!(
            user_start(255, 256, 256, l, Duration::ZERO),
            Some(Duration::ZERO)
        );
        assert_eq!(user_start(256, 256, 256, l, Duration::ZERO), Some(l));
        assert_eq!(user_start(511, 256, 256, l, Duration::ZERO), Some(l));
        assert_eq!(user_start(512, 256, 256, l, Duration::ZERO), Some(l * 2));
        assert_eq!(user_start(5, 0, 4, l, Duration::ZERO), Some(l * 2));
        assert_eq!(user_start(3, 2, 0, l, Duration::ZERO), None);
    }
}
