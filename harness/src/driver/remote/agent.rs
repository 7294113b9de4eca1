//! The load host's side: `iobound agent drive`.

use super::{second_line, unix_now, write_line, Job, Line};
use crate::driver::record::Live;
use crate::driver::summary::encode_histogram;
use crate::driver::{DriverConfig, Target};
use anyhow::{anyhow, bail, Result};
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The agent: reads a job from the first line of `input`, drives it, and writes lines to
/// `out` until the load ends. Later input ("stop", or its end when the connection to the
/// controller goes) stops the load: nothing of it outlives the controller.
pub fn agent(mut input: impl BufRead + Send + 'static, out: &mut impl Write) -> Result<()> {
    let mut first = String::new();
    input.read_line(&mut first)?;
    const SAME_VERSION: &str = "controller and agent must be the same iobound version";
    let job: Job = match serde_json::from_str(&first) {
        Ok(j) => j,
        Err(e) => return refuse(out, format!("the job is not valid: {e}; {SAME_VERSION}")),
    };
    let wait = job.start_unix - unix_now();
    if !(0.0..=60.0).contains(&wait) {
        return refuse(
            out,
            format!(
                "the common start is {wait:.3} s from now on host {}: its clock is off, or the job came late",
                job.host
            ),
        );
    }
    let start = Instant::now() + Duration::from_secs_f64(wait);
    let target = if job.mix.is_empty() {
        Target::new(job.addr, &job.path, job.close)
    } else {
        Target::mix(job.addr, &job.mix, job.close, &job.tag)
    };
    let live = Arc::new(Live::mirrored(start));
    let cancel = Arc::new(AtomicBool::new(false));
    stop_on_request(input, cancel.clone());
    let cfg = DriverConfig {
        threads: job.threads.max(1),
        cpus: job.cpus.clone(),
        start: Some(start),
    };
    let (l, lv, c) = (job.load.clone(), live.clone(), cancel.clone());
    let driver = std::thread::spawn(move || crate::driver::run(&target, &l, &cfg, lv, c));
    let mut tick = 0u32;
    while !driver.is_finished() {
        std::thread::sleep(Duration::from_millis(50));
        if Instant::now() < start + Duration::from_millis(250) * tick {
            continue;
        }
        tick += 1;
        if stream(out, &live, start).is_err() {
            cancel.store(true, Ordering::SeqCst); // the controller is gone
        }
    }
    let o = driver
        .join()
        .map_err(|_| anyhow!("the driver thread panicked"))??;
    for (i, iv) in live.take_seconds(usize::MAX) {
        write_line(out, &second_line(i, &iv)?)?;
    }
    write_line(out, &live_line(&live))?;
    write_line(out, &end_line(&o)?)?;
    Ok(())
}

/// Sets `cancel` on "stop", or at the end of input (the controller or its connection went
/// away).
fn stop_on_request(mut input: impl BufRead + Send + 'static, cancel: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        let mut line = String::new();
        while input.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
            if line.trim() == "stop" {
                break;
            }
            line.clear();
        }
        cancel.store(true, Ordering::SeqCst);
    });
}

/// The live counters, and every second that is complete (the clock a full second past it).
fn stream(out: &mut impl Write, live: &Live, start: Instant) -> std::io::Result<()> {
    write_line(out, &live_line(live))?;
    let done = Instant::now().saturating_duration_since(start).as_secs() as usize;
    for (i, iv) in live.take_seconds(done.saturating_sub(1)) {
        let line = second_line(i, &iv).map_err(std::io::Error::other)?;
        write_line(out, &line)?;
    }
    Ok(())
}

/// The last line: the share's totals and the histograms only the end has.
fn end_line(o: &crate::driver::Outcome) -> Result<Line> {
    Ok(Line::End {
        due: o.due,
        pool_waits: o.pool_waits,
        cpu_s: o.cpu.as_secs_f64(),
        threads: o.threads,
        duration_s: o.duration.as_secs_f64(),
        cancelled: o.cancelled,
        cpu_busy_pct: o.cpu_busy_pct.clone(),
        lag: encode_histogram(&o.recorder.lag)?,
        conn_wait: encode_histogram(&o.recorder.conn_wait)?,
        entries: o.entries.iter().map(|e| (e.sent, e.ok)).collect(),
        acks: o.acks.clone(),
    })
}

/// Tells the controller why the job cannot run, and fails with the same reason.
fn refuse(out: &mut impl Write, error: String) -> Result<()> {
    write_line(
        out,
        &Line::Failed {
            error: error.clone(),
        },
    )?;
    bail!(error)
}

pub(super) fn live_line(live: &Live) -> Line {
    Line::Live {
        ok: live.ok.load(Ordering::Relaxed),
        errors: live.errors.load(Ordering::Relaxed),
        latency_us: live.latency_us.load(Ordering::Relaxed),
        due: live.due.load(Ordering::Relaxed),
        buckets: live.snapshot(),
    }
}
