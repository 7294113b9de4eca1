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

/// How long past the end of its load (its length, and the request timeout that drains it) the
/// agent may still be running before it takes itself for stuck. A controller that froze, or a
/// network that dropped without closing the connection, stops reading: the agent's next write
/// then blocks for ever, and neither "stop" nor the end of input ever comes.
pub const OVERRUN_GRACE: Duration = Duration::from_secs(30);

/// The latest common start an agent accepts, in seconds from when it reads it: later is a
/// clock far off, or a controller confused.
const LATEST_START_S: f64 = 60.0;

/// How the agent's work ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The controller had the end line, or asked it to stop: the controller cleans up.
    Closed,
    /// Its input ended before the end line was written, without a "stop": the controller was
    /// killed or its connection dropped, and nobody else will remove what the run left here.
    ControllerLost,
}

/// The agent: reads a job from the first line of `input`, drives it, and writes lines to
/// `out` until the load ends, then waits for the controller to close `input`. Later input:
/// "finish" ends the load early as a settled warm-up does (nothing more is sent, what is in
/// flight is waited for); "stop", or the end of input when the connection to the controller
/// goes, stops it; and should neither come (a controller frozen, or one it cannot write to),
/// `overran` is called `grace` (OVERRUN_GRACE) after the load's end, for the process to clean
/// up and exit: nothing of it outlives the controller.
pub fn agent(
    mut input: impl BufRead + Send + 'static,
    out: &mut impl Write,
    grace: Duration,
    overran: impl FnOnce() + Send + 'static,
) -> Result<Ending> {
    let mut first = String::new();
    input.read_line(&mut first)?;
    const SAME_VERSION: &str = "controller and agent must be the same iobound version";
    let job: Job = match serde_json::from_str(&first) {
        Ok(j) => j,
        Err(e) => return refuse(out, format!("the job is not valid: {e}; {SAME_VERSION}")),
    };
    // Until the start is known, the latest it could be: an armed agent whose controller froze
    // before sending it must not wait for ever either.
    let watch = Watchdog::start(
        Instant::now() + Duration::from_secs_f64(LATEST_START_S) + grace,
        overran,
    );
    let start = match start_of(&job, &mut input, out)? {
        Ok(start) => start,
        Err(ending) => return Ok(ending),
    };
    watch.until(start + job.load.profile.duration() + job.load.timeout + grace);
    let target = if job.mix.is_empty() {
        Target::new(job.addr, &job.path, job.close)
    } else {
        Target::mix(job.addr, &job.mix, job.close, &job.tag)
    };
    let live = Arc::new(Live::mirrored(start));
    let cancel = Arc::new(AtomicBool::new(false));
    let input_ended = Arc::new(AtomicBool::new(false));
    stop_on_request(input, cancel.clone(), input_ended.clone(), live.clone());
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
    // Read before the end line goes out: an input that ended after it is the orderly close.
    let lost = input_ended.load(Ordering::SeqCst);
    if lost {
        return Ok(Ending::ControllerLost);
    }
    for (i, iv) in live.take_seconds(usize::MAX) {
        write_line(out, &second_line(i, &iv)?)?;
    }
    write_line(out, &live_line(&live))?;
    write_line(out, &end_line(&o)?)?;
    // The controller closes the input once it has the end. Until it does, the per-run
    // directory is still in use; a controller that never does (frozen, or cut off without the
    // channel closing) is left to the watchdog, which cleans up.
    while !cancel.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(Ending::Closed)
}

/// Calls its action at a deadline unless dropped first (the agent returned). The deadline can
/// move (`until`): an armed agent's first is the latest start it would accept.
struct Watchdog {
    done: Arc<AtomicBool>,
    deadline: Arc<std::sync::Mutex<Instant>>,
}

impl Watchdog {
    fn start(deadline: Instant, action: impl FnOnce() + Send + 'static) -> Watchdog {
        let done = Arc::new(AtomicBool::new(false));
        let deadline = Arc::new(std::sync::Mutex::new(deadline));
        let (seen, due) = (done.clone(), deadline.clone());
        std::thread::spawn(move || {
            while Instant::now() < *due.lock().unwrap_or_else(|e| e.into_inner()) {
                if seen.load(Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            if !seen.load(Ordering::SeqCst) {
                action();
            }
        });
        Watchdog { done, deadline }
    }

    fn until(&self, deadline: Instant) {
        *self.deadline.lock().unwrap_or_else(|e| e.into_inner()) = deadline;
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
    }
}

/// Finishes the load early on "finish"; sets `cancel` on "stop", or at the end of input (the
/// controller or its connection went away), and then also `ended`.
fn stop_on_request(
    mut input: impl BufRead + Send + 'static,
    cancel: Arc<AtomicBool>,
    ended: Arc<AtomicBool>,
    live: Arc<Live>,
) {
    std::thread::spawn(move || {
        let mut line = String::new();
        let asked = loop {
            if !input.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
                break false;
            }
            match line.trim() {
                "stop" => break true,
                "finish" => live.finish_early(),
                _ => {}
            }
            line.clear();
        };
        ended.store(!asked, Ordering::SeqCst);
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

/// When the load starts here: the job's start, or, for a job sent without one (armed), the
/// common start the controller sends once every host has said it is ready. A start in the past
/// or over LATEST_START_S ahead is refused; told to stop, or left, before it: how it ended.
fn start_of(
    job: &Job,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> Result<std::result::Result<Instant, Ending>> {
    let start_unix = if job.start_unix > 0.0 {
        job.start_unix
    } else {
        write_line(out, &Line::Ready)?;
        match read_start(input)? {
            Told::Start(at) => at,
            Told::Stop => return Ok(Err(Ending::Closed)),
            Told::Gone => return Ok(Err(Ending::ControllerLost)),
        }
    };
    let wait = start_unix - unix_now();
    if !(0.0..=LATEST_START_S).contains(&wait) {
        refuse(
            out,
            format!(
                "the common start is {wait:.3} s from now on host {}: its clock is off, or the job came late",
                job.host
            ),
        )?;
    }
    Ok(Ok(Instant::now() + Duration::from_secs_f64(wait)))
}

/// What an armed agent is told before its start.
enum Told {
    Start(f64),
    Stop,
    /// The input ended: the controller was killed or its connection dropped.
    Gone,
}

/// Reads the line that follows `ready`: `start UNIX_SECONDS`, or `stop`; anything else is
/// refused as another version's.
fn read_start(input: &mut impl BufRead) -> Result<Told> {
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Ok(Told::Gone);
    }
    let line = line.trim();
    if line == "stop" {
        return Ok(Told::Stop);
    }
    match line.strip_prefix("start ").map(str::parse::<f64>) {
        Some(Ok(at)) if at > 0.0 => Ok(Told::Start(at)),
        _ => bail!("expected `start UNIX_SECONDS` after ready, got {line:?}; controller and agent must be the same iobound version"),
    }
}

/// Tells the controller why the job cannot run, and fails with the same reason.
fn refuse(out: &mut impl Write, error: String) -> Result<Ending> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::Load;
    use crate::plan::Profile;
    use std::io::Read;
    use std::net::TcpListener;

    /// A keep-alive HTTP server answering every request with 200 "ok".
    fn answering_server() -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                std::thread::spawn(move || {
                    let mut conn = conn;
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    while let Ok(n) = conn.read(&mut chunk) {
                        if n == 0 {
                            break;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            buf.drain(..end + 4);
                            let answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                            if conn.write_all(answer).is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        addr
    }

    /// A closed load of `users` for `length` on a local server, starting 0.2 s from now.
    fn closed_job(users: u32, length: Duration, timeout: Duration) -> Job {
        Job {
            host: "here".into(),
            addr: answering_server(),
            path: "/".into(),
            mix: Vec::new(),
            close: false,
            tag: String::new(),
            load: Load {
                profile: Profile::Closed {
                    users,
                    step_users: 0,
                    steps: 0,
                    level: length,
                    think: Duration::from_millis(5),
                    stay: Duration::ZERO,
                    spread: Duration::ZERO,
                },
                timeout,
                connection_close: false,
            },
            threads: 1,
            cpus: Vec::new(),
            start_unix: unix_now() + 0.2,
        }
    }

    /// The controller's side of a test channel: keeps what the agent writes, and closes the
    /// agent's input once the end line is in, as the controller does.
    struct Controller {
        seen: Vec<u8>,
        input: Arc<std::sync::Mutex<Option<std::io::PipeWriter>>>,
    }

    impl Write for Controller {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.seen.extend_from_slice(buf);
            if self.seen.windows(7).any(|w| w == b"{\"end\":") {
                self.input.lock().unwrap().take();
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn finish_ends_a_hosts_load_early_and_keeps_what_it_measured() {
        let job = closed_job(2, Duration::from_secs(30), Duration::from_secs(5));
        let (reader, mut writer) = std::io::pipe().unwrap();
        writeln!(writer, "{}", serde_json::to_string(&job).unwrap()).unwrap();
        let input = Arc::new(std::sync::Mutex::new(Some(writer)));
        let mut out = Controller {
            seen: Vec::new(),
            input: input.clone(),
        };
        let t0 = Instant::now();
        let ran = std::thread::spawn(move || {
            agent(
                std::io::BufReader::new(reader),
                &mut out,
                OVERRUN_GRACE,
                || panic!("overran"),
            )
            .map(|ending| (ending, out.seen))
        });
        std::thread::sleep(Duration::from_millis(1500));
        writeln!(input.lock().unwrap().as_mut().unwrap(), "finish").unwrap();
        let (ending, out) = ran.join().unwrap().unwrap();
        assert_eq!(ending, Ending::Closed, "the controller had the end");
        // A 30 s load that ends within seconds of "finish", its input closed only once its
        // end was in.
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
        assert!(input.lock().unwrap().is_none());
        let text = String::from_utf8(out).unwrap();
        let end = text.lines().last().unwrap();
        let Line::End { due, cancelled, .. } = serde_json::from_str::<Line>(end).unwrap() else {
            panic!("the last line is not the end: {end}");
        };
        // Finished, not cancelled: what was sent was answered and counted.
        assert!(due > 10 && !cancelled, "{end}");
    }

    /// An armed agent (a job without a start) as the controller drives one: `lines` sent after
    /// the job, its input then held open until the end line is in, or closed at once unless
    /// `hold`; returns the outcome and what it wrote.
    fn armed(lines: &[String], hold: bool) -> (Result<Ending>, String) {
        let job = Job {
            start_unix: 0.0,
            ..closed_job(2, Duration::from_secs(1), Duration::from_secs(1))
        };
        let (reader, mut writer) = std::io::pipe().unwrap();
        writeln!(writer, "{}", serde_json::to_string(&job).unwrap()).unwrap();
        for l in lines {
            writeln!(writer, "{l}").unwrap();
        }
        let mut out = Controller {
            seen: Vec::new(),
            input: Arc::new(std::sync::Mutex::new(hold.then_some(writer))),
        };
        let ending = agent(
            std::io::BufReader::new(reader),
            &mut out,
            OVERRUN_GRACE,
            || panic!("overran"),
        );
        (ending, String::from_utf8(out.seen).unwrap())
    }

    #[test]
    fn an_agent_without_a_start_says_ready_and_starts_when_told() {
        let at = unix_now() + 0.3;
        let (ending, text) = armed(&[format!("start {at:.6}")], true);
        assert_eq!(ending.unwrap(), Ending::Closed);
        assert_eq!(text.lines().next(), Some("\"ready\""), "{text}");
        let end = text.lines().last().unwrap();
        let Line::End { due, .. } = serde_json::from_str::<Line>(end).unwrap() else {
            panic!("the last line is not the end: {end}");
        };
        assert!(due > 0, "{end}");
        assert!(
            unix_now() >= at + 1.0,
            "a 1 s load from the start it was told"
        );
    }

    #[test]
    fn an_agent_stopped_or_left_before_its_start_runs_nothing() {
        let (ending, text) = armed(&["stop".to_string()], true);
        assert_eq!(
            (ending.unwrap(), text.as_str()),
            (Ending::Closed, "\"ready\"\n")
        );
        // A start in the past (a line that came late) is refused, as a late job is.
        let (ending, _) = armed(&[format!("start {:.6}", unix_now() - 1.0)], true);
        let err = ending.unwrap_err().to_string();
        assert!(err.contains("came late"), "{err}");
        // Its input ended before the start: the controller is gone.
        let (ending, _) = armed(&[], false);
        assert_eq!(ending.unwrap(), Ending::ControllerLost);
    }

    #[test]
    fn an_input_that_ends_mid_load_is_a_lost_controller() {
        // A killed controller's channel closes without a word: the load stops at once, no end
        // is written (nobody reads it), and the agent says its controller is gone so that what
        // the run left on its host is removed.
        let job = closed_job(2, Duration::from_secs(30), Duration::from_secs(5));
        let (reader, mut writer) = std::io::pipe().unwrap();
        writeln!(writer, "{}", serde_json::to_string(&job).unwrap()).unwrap();
        let t0 = Instant::now();
        let ran = std::thread::spawn(move || {
            let mut seen = Vec::new();
            agent(
                std::io::BufReader::new(reader),
                &mut seen,
                OVERRUN_GRACE,
                || panic!("overran"),
            )
            .map(|ending| (ending, seen))
        });
        std::thread::sleep(Duration::from_millis(1500));
        drop(writer);
        let (ending, seen) = ran.join().unwrap().unwrap();
        assert_eq!(ending, Ending::ControllerLost);
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
        let text = String::from_utf8(seen).unwrap();
        assert!(!text.contains("{\"end\":"), "{text}");
    }

    /// Runs a 1 s job (1 s timeout, 1 s grace) writing to `out` with its input held open, as a
    /// frozen controller's channel is; returns how long after the job `overran` was called
    /// (due 0.2 s to the start + 1 s of load + 1 s of timeout + 1 s of grace), the input, and
    /// the agent's thread.
    fn overrun_after(
        mut out: impl Write + Send + 'static,
    ) -> (
        Duration,
        std::io::PipeWriter,
        std::thread::JoinHandle<Result<Ending>>,
    ) {
        let job = closed_job(1, Duration::from_secs(1), Duration::from_secs(1));
        let (reader, mut writer) = std::io::pipe().unwrap();
        writeln!(writer, "{}", serde_json::to_string(&job).unwrap()).unwrap();
        let (overran, told) = std::sync::mpsc::channel();
        let t0 = Instant::now();
        let ran = std::thread::spawn(move || {
            agent(
                std::io::BufReader::new(reader),
                &mut out,
                Duration::from_secs(1),
                move || overran.send(Instant::now()).unwrap(),
            )
        });
        let at = told
            .recv_timeout(Duration::from_secs(20))
            .expect("the agent gave up on its controller");
        (at.duration_since(t0), writer, ran)
    }

    #[test]
    fn a_finished_agent_whose_controller_froze_gives_up_after_its_grace() {
        // The end is written (the controller's pipe takes it) but the input never closes.
        let (after, writer, ran) = overrun_after(Vec::new());
        assert!(
            after >= Duration::from_millis(3200) && after < Duration::from_secs(10),
            "{after:?}"
        );
        // The channel closes late: the agent, told it may go, returns.
        drop(writer);
        assert!(ran.join().unwrap().is_ok());
    }

    /// A controller that stopped reading without closing: every write blocks until released.
    struct Unread(Arc<AtomicBool>);

    impl Write for Unread {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            while !self.0.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(std::io::Error::other(format!(
                "released ({} bytes unwritten)",
                buf.len()
            )))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn an_agent_whose_controller_stopped_reading_gives_up_after_its_load_and_grace() {
        let release = Arc::new(AtomicBool::new(false));
        let (after, writer, ran) = overrun_after(Unread(release.clone()));
        assert!(
            after >= Duration::from_millis(3200) && after < Duration::from_secs(10),
            "{after:?}"
        );
        release.store(true, Ordering::SeqCst);
        assert!(ran.join().unwrap().is_err());
        drop(writer);
    }
}
