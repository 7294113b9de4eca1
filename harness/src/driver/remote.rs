//! Load from several hosts: each load host runs iobound's own driver (`iobound agent drive`,
//! started over SSH) with its share of the load, from a start time common to all hosts. Every
//! second it streams the second's records (HdrHistograms, errors) back; the controller adds
//! them second by second into one recorder, so percentiles and counts are those of the whole
//! load, never averages of the hosts'. A host lost mid-run keeps what it streamed; the
//! requests it had due whose outcome never arrived are counted as cut, and the host's share
//! says when and why it was lost.

use super::record::{Errors, Interval, Live, Recorder};
use super::summary::{decode_histogram, encode_histogram};
use super::{DriverConfig, EntryCount, Outcome, Target};
use crate::plan::{Load, MixEntry, Profile};
use crate::remote::ssh::Ssh;
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Time between the controller sending the jobs and the common start: enough for every host
/// to receive its job over an open SSH connection.
const START_DELAY: Duration = Duration::from_secs(2);

/// What one load host is asked to do.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    pub host: String,
    pub addr: SocketAddr,
    /// The path requested (a single path), or empty for a mix.
    pub path: String,
    #[serde(default)]
    pub mix: Vec<MixEntry>,
    pub close: bool,
    pub tag: String,
    /// This host's share of the load.
    pub load: Load,
    pub threads: usize,
    pub cpus: Vec<usize>,
    /// When the load starts, in the host's own clock (Unix seconds).
    pub start_unix: f64,
}

/// One line of an agent's output.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Line {
    /// The counters so far (cumulative), for the live line and for a lost host's accounting.
    Live {
        ok: u64,
        errors: u64,
        latency_us: u64,
        due: u64,
        buckets: Vec<u64>,
    },
    /// Records of one second since the start (a second may come again with later records).
    Second {
        i: usize,
        ok: String,
        failed: String,
        errors: Errors,
    },
    /// The load ended.
    End {
        due: u64,
        pool_waits: u64,
        cpu_s: f64,
        threads: usize,
        duration_s: f64,
        cancelled: bool,
        cpu_busy_pct: Vec<f64>,
        lag: String,
        conn_wait: String,
        entries: Vec<(u64, u64)>,
    },
    /// The agent could not run the job.
    Failed { error: String },
}

/// The share of `load` that host `i` of `n` drives: users or rates split as evenly as whole
/// numbers allow (the first hosts take one user more), the same schedule shape everywhere.
pub fn share(load: &Load, i: usize, n: usize) -> Load {
    let part = |total: u32| -> u32 {
        let (n32, i32) = (n as u32, i as u32);
        total / n32 + u32::from(i32 < total % n32)
    };
    let profile = match load.profile.clone() {
        Profile::Closed {
            users,
            step_users,
            steps,
            level,
            think,
        } => Profile::Closed {
            users: part(users),
            step_users: part(step_users),
            steps,
            level,
            think,
        },
        Profile::Open {
            rate,
            ramp_to,
            duration,
            max_connections,
        } => Profile::Open {
            rate: rate / n as f64,
            ramp_to: ramp_to / n as f64,
            duration,
            max_connections: part(max_connections).max(1),
        },
    };
    Load {
        profile,
        ..load.clone()
    }
}

fn unix_now() -> f64 {
    crate::util::unix_seconds()
}

fn second_line(i: usize, iv: &Interval) -> Result<Line> {
    Ok(Line::Second {
        i,
        ok: encode_histogram(&iv.hist)?,
        failed: encode_histogram(&iv.failed)?,
        errors: iv.errors.clone(),
    })
}

fn write_line(out: &mut impl Write, line: &Line) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, line)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// The agent: reads a job from the first line of `input`, drives it, and writes lines to
/// `out` until the load ends. Later input ("stop", or its end when the connection to the
/// controller goes) stops the load: nothing of it outlives the controller.
pub fn agent(mut input: impl BufRead + Send + 'static, out: &mut impl Write) -> Result<()> {
    let mut first = String::new();
    input.read_line(&mut first)?;
    let job: Job = match serde_json::from_str(&first) {
        Ok(j) => j,
        Err(e) => return refuse(
            out,
            format!(
                "the job is not valid: {e}; controller and agent must be the same iobound version"
            ),
        ),
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
    let stop = cancel.clone();
    std::thread::spawn(move || {
        let mut line = String::new();
        // "stop", or the end of input (the controller or its connection went away).
        while input.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
            if line.trim() == "stop" {
                break;
            }
            line.clear();
        }
        stop.store(true, Ordering::SeqCst);
    });
    let cfg = DriverConfig {
        threads: job.threads.max(1),
        cpus: job.cpus.clone(),
        start: Some(start),
    };
    let (l, lv, c) = (job.load.clone(), live.clone(), cancel.clone());
    let driver = std::thread::spawn(move || super::run(&target, &l, &cfg, lv, c));
    let mut tick = 0u32;
    while !driver.is_finished() {
        std::thread::sleep(Duration::from_millis(50));
        if Instant::now() < start + Duration::from_millis(250) * tick {
            continue;
        }
        tick += 1;
        let sent = write_line(out, &live_line(&live)).and_then(|_| {
            // A second is complete once the clock is a full second past it.
            let done = Instant::now().saturating_duration_since(start).as_secs() as usize;
            for (i, iv) in live.take_seconds(done.saturating_sub(1)) {
                let line = second_line(i, &iv).map_err(std::io::Error::other)?;
                write_line(out, &line)?;
            }
            Ok(())
        });
        if sent.is_err() {
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
    write_line(
        out,
        &Line::End {
            due: o.due,
            pool_waits: o.pool_waits,
            cpu_s: o.cpu.as_secs_f64(),
            threads: o.threads,
            duration_s: o.duration.as_secs_f64(),
            cancelled: o.cancelled,
            cpu_busy_pct: o.cpu_busy_pct,
            lag: encode_histogram(&o.recorder.lag)?,
            conn_wait: encode_histogram(&o.recorder.conn_wait)?,
            entries: o.entries.iter().map(|e| (e.sent, e.ok)).collect(),
        },
    )?;
    Ok(())
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

fn live_line(live: &Live) -> Line {
    Line::Live {
        ok: live.ok.load(Ordering::Relaxed),
        errors: live.errors.load(Ordering::Relaxed),
        latency_us: live.latency_us.load(Ordering::Relaxed),
        due: live.due.load(Ordering::Relaxed),
        buckets: live.snapshot(),
    }
}

/// A load host as the controller drives it.
pub struct LoadHost<'a> {
    pub ssh: &'a Ssh,
    /// Path of the iobound binary on the host.
    pub binary: String,
    pub cpus: Vec<usize>,
    pub threads: usize,
    /// How far the host's clock is ahead of ours (s; negative when behind).
    pub clock_offset_s: f64,
}

/// What one load host did in a run, kept with the run's results.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostShare {
    pub host: String,
    /// Requests due on this host (those of a lost host whose outcome never came are cut).
    pub due: u64,
    pub ok: u64,
    pub errors: u64,
    /// Its share of the load, e.g. "32 users" or "500 req/s".
    pub load: String,
    /// The busiest of its driver CPUs, per second (%).
    pub cpu_busy_pct: Vec<f64>,
    /// How late its scheduler sent requests (open model), p99 in ms.
    pub lag_p99_ms: Option<f64>,
    /// When (s after the start) and why the host was lost, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_at_s: Option<f64>,
}

/// What the controller knows of one host while the load runs.
#[derive(Default)]
struct HostState {
    live: (u64, u64, u64, u64, Vec<u64>),
    /// Requests accounted for by the seconds received.
    streamed: u64,
    ok: u64,
    errors: u64,
    end: Option<Line>,
    lost: Option<(f64, String)>,
}

enum Event {
    Line(usize, Line),
    Closed(usize, String),
}

fn load_words(load: &Load) -> String {
    match &load.profile {
        Profile::Closed { users, .. } => format!("{users} users"),
        Profile::Open { rate, .. } => format!("{rate:.1} req/s"),
    }
}

/// Drives `load` from `hosts` (each with its share) against the target described by `job`
/// (its load, host and start are filled in per host) and returns the merged outcome with
/// each host's share. `cancel` stops every host; `live` shows the sums as they come.
pub fn run(
    hosts: &[LoadHost<'_>],
    job: &Job,
    live: Arc<Live>,
    cancel: Arc<AtomicBool>,
) -> Result<(Outcome, Vec<HostShare>)> {
    if hosts.is_empty() {
        bail!("no load host; give at least one host the role \"load\"");
    }
    let n = hosts.len();
    let start_unix = unix_now() + START_DELAY.as_secs_f64();
    let start = Instant::now() + START_DELAY;
    let (tx, rx) = mpsc::channel();
    let mut children = Vec::new();
    let mut inputs = Vec::new();
    let mut shares = Vec::new();
    for (i, h) in hosts.iter().enumerate() {
        let mut j = job.clone();
        j.host = h.ssh.host.name.clone();
        j.load = share(&job.load, i, n);
        j.threads = h.threads;
        j.cpus = h.cpus.clone();
        j.start_unix = start_unix + h.clock_offset_s;
        shares.push(load_words(&j.load));
        let mut child = h
            .ssh
            .spawn(&format!("exec {} agent drive", h.binary))
            .with_context(|| format!("starting the driver on load host {}", j.host))?;
        let mut stdin = child.stdin.take().expect("piped");
        writeln!(stdin, "{}", serde_json::to_string(&j)?)
            .with_context(|| format!("sending the job to load host {}", j.host))?;
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                match serde_json::from_str::<Line>(&line) {
                    Ok(l) => {
                        let _ = tx.send(Event::Line(i, l));
                    }
                    Err(_) => continue, // not ours (a login banner): ignored
                }
            }
            let mut why = String::new();
            let _ = std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut why);
            let _ = tx.send(Event::Closed(i, why.trim().to_string()));
        });
        inputs.push(Some(stdin));
        children.push(child);
    }
    drop(tx);
    let mut state: Vec<HostState> = (0..n).map(|_| HostState::default()).collect();
    let mut merged = Recorder::new(start);
    let (mut lag, mut conn_wait) = (
        super::record::new_histogram(),
        super::record::new_histogram(),
    );
    let mut closed = 0;
    let mut stop_sent = false;
    while closed < n {
        if cancel.load(Ordering::SeqCst) && !stop_sent {
            stop_sent = true;
            for input in inputs.iter_mut().flatten() {
                let _ = writeln!(input, "stop");
            }
        }
        let event = match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(e) => e,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        match event {
            Event::Line(
                i,
                Line::Second {
                    i: sec,
                    ok,
                    failed,
                    errors,
                },
            ) => {
                let iv = Interval {
                    hist: decode_histogram(&ok)?,
                    failed: decode_histogram(&failed)?,
                    errors,
                };
                let st = &mut state[i];
                st.streamed += iv.requests();
                st.ok += iv.hist.len();
                st.errors += iv.errors.total();
                merged.add_second(sec, &iv);
            }
            Event::Line(
                i,
                Line::Live {
                    ok,
                    errors,
                    latency_us,
                    due,
                    buckets,
                },
            ) => {
                state[i].live = (ok, errors, latency_us, due, buckets);
                publish(&live, &state);
            }
            Event::Line(i, Line::Failed { error }) => {
                state[i].lost.get_or_insert((elapsed_s(start), error));
            }
            Event::Line(i, end @ Line::End { .. }) => {
                if let Line::End {
                    lag: l,
                    conn_wait: w,
                    ..
                } = &end
                {
                    lag.add(decode_histogram(l)?).ok();
                    conn_wait.add(decode_histogram(w)?).ok();
                }
                state[i].end = Some(end);
            }
            Event::Closed(i, why) => {
                closed += 1;
                inputs[i] = None;
                if state[i].end.is_none() && state[i].lost.is_none() {
                    let why = if why.is_empty() {
                        "its connection closed before the load ended".to_string()
                    } else {
                        why
                    };
                    state[i].lost = Some((elapsed_s(start), why));
                }
            }
        }
    }
    for mut c in children {
        let _ = c.wait();
        crate::util::interrupt::unregister(c.id() as i32);
    }
    if state.iter().all(|s| s.end.is_none()) {
        let why: Vec<String> = hosts
            .iter()
            .zip(&state)
            .filter_map(|(h, s)| {
                s.lost
                    .as_ref()
                    .map(|(_, w)| format!("{}: {w}", h.ssh.host.name))
            })
            .collect();
        bail!("no load host finished: {}", why.join("; "));
    }
    merged.lag = lag;
    merged.conn_wait = conn_wait;
    Ok(finish(
        hosts,
        state,
        shares,
        merged,
        start,
        cancel.load(Ordering::SeqCst),
    ))
}

fn elapsed_s(start: Instant) -> f64 {
    Instant::now()
        .saturating_duration_since(start)
        .as_secs_f64()
}

/// The controller's live counters: the hosts' sums.
fn publish(live: &Live, state: &[HostState]) {
    let (mut ok, mut errors, mut lat, mut due) = (0, 0, 0, 0);
    let mut buckets: Vec<u64> = Vec::new();
    for s in state {
        ok += s.live.0;
        errors += s.live.1;
        lat += s.live.2;
        due += s.live.3;
        if buckets.len() < s.live.4.len() {
            buckets.resize(s.live.4.len(), 0);
        }
        for (b, x) in buckets.iter_mut().zip(&s.live.4) {
            *b += x;
        }
    }
    live.set_totals(ok, errors, lat, due, &buckets);
}

/// The merged outcome: sums of counts, the busiest driver CPU anywhere per second, and a
/// lost host's unaccounted requests cut at the second it was lost.
fn finish(
    hosts: &[LoadHost<'_>],
    state: Vec<HostState>,
    shares: Vec<String>,
    mut merged: Recorder,
    start: Instant,
    cancelled: bool,
) -> (Outcome, Vec<HostShare>) {
    let mut o = Outcome {
        recorder: Recorder::new(start),
        duration: Duration::ZERO,
        wall: start.elapsed(),
        cpu: Duration::ZERO,
        threads: 0,
        cancelled,
        due: 0,
        pool_waits: 0,
        cpu_busy_pct: Vec::new(),
        entries: Vec::new(),
        acks: Vec::new(),
    };
    let mut out = Vec::new();
    for ((h, st), load) in hosts.iter().zip(state).zip(shares) {
        let mut share = HostShare {
            host: h.ssh.host.name.clone(),
            load,
            ok: st.ok,
            errors: st.errors,
            ..HostShare::default()
        };
        match st.end {
            Some(Line::End {
                due,
                pool_waits,
                cpu_s,
                threads,
                duration_s,
                cancelled,
                cpu_busy_pct,
                lag,
                entries,
                ..
            }) => {
                share.due = due;
                o.due += due;
                o.pool_waits += pool_waits;
                o.cpu += Duration::from_secs_f64(cpu_s);
                o.threads += threads;
                o.duration = o.duration.max(Duration::from_secs_f64(duration_s));
                o.cancelled |= cancelled;
                for (k, x) in cpu_busy_pct.iter().enumerate() {
                    if o.cpu_busy_pct.len() <= k {
                        o.cpu_busy_pct.push(0.0);
                    }
                    o.cpu_busy_pct[k] = o.cpu_busy_pct[k].max(*x);
                }
                share.cpu_busy_pct = cpu_busy_pct;
                share.lag_p99_ms = decode_histogram(&lag)
                    .ok()
                    .filter(|h| !h.is_empty())
                    .map(|h| h.value_at_quantile(0.99) as f64 / 1000.0);
                if o.entries.len() < entries.len() {
                    o.entries.resize(entries.len(), EntryCount::default());
                }
                for (sum, (sent, ok)) in o.entries.iter_mut().zip(entries) {
                    sum.sent += sent;
                    sum.ok += ok;
                }
            }
            _ => {
                // Lost: what it streamed stays; requests it had due whose outcome never came
                // (in flight, or answered in its last seconds) are cut.
                let (at, why) = st.lost.clone().unwrap_or((0.0, "no end received".into()));
                let due = st.live.3.max(st.streamed);
                merged.cut(start + Duration::from_secs_f64(at), due - st.streamed);
                share.due = due;
                o.due += due;
                share.lost = Some(why);
                share.lost_at_s = Some((at * 10.0).round() / 10.0);
            }
        }
        out.push(share);
    }
    o.recorder = merged;
    (o, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::record::ErrorKind;

    fn closed(users: u32, step_users: u32) -> Load {
        Load {
            profile: Profile::Closed {
                users,
                step_users,
                steps: 1,
                level: Duration::from_secs(5),
                think: Duration::ZERO,
            },
            timeout: Duration::from_secs(10),
            connection_close: false,
        }
    }

    #[test]
    fn shares_add_up_to_the_whole_load() {
        let users = |l: &Load| match l.profile {
            Profile::Closed {
                users, step_users, ..
            } => (users, step_users),
            _ => unreachable!(),
        };
        let parts: Vec<_> = (0..3)
            .map(|i| users(&share(&closed(10, 5), i, 3)))
            .collect();
        assert_eq!(parts, [(4, 2), (3, 2), (3, 1)]);
        let open = Load {
            profile: Profile::Open {
                rate: 900.0,
                ramp_to: 1800.0,
                duration: Duration::from_secs(10),
                max_connections: 5,
            },
            ..closed(1, 0)
        };
        let (mut rate, mut ramp, mut conns) = (0.0, 0.0, 0);
        for i in 0..2 {
            if let Profile::Open {
                rate: r,
                ramp_to,
                max_connections,
                ..
            } = share(&open, i, 2).profile
            {
                rate += r;
                ramp += ramp_to;
                conns += max_connections;
            }
        }
        assert_eq!((rate, ramp, conns), (900.0, 1800.0, 5));
    }

    /// Records of two hosts, streamed as seconds (with a second handed out twice), add up to
    /// exactly the histogram of all their records: percentiles of the whole load.
    #[test]
    fn streamed_seconds_merge_into_the_sum_of_both_hosts() {
        let start = Instant::now();
        let mut merged = Recorder::new(start);
        let mut whole = crate::driver::record::new_histogram();
        let mut expected_requests = 0;
        for host in 0..2u64 {
            let live = Live::mirrored(start);
            let mut own = Recorder::new(start);
            for k in 0..3000u64 {
                let at = start + Duration::from_millis(k);
                let lat = Duration::from_micros(100 + (k * 37 + host * 1_000) % 50_000);
                if k % 100 == 7 {
                    own.error(at, ErrorKind::Timeout, lat, &live);
                } else {
                    own.ok(at, lat, &live);
                    whole.record(lat.as_micros() as u64).unwrap();
                }
                expected_requests += 1;
                if k == 1500 {
                    for (i, iv) in live.take_seconds(1) {
                        let line = second_line(i, &iv).unwrap();
                        let back: Line =
                            serde_json::from_str(&serde_json::to_string(&line).unwrap()).unwrap();
                        let Line::Second {
                            i,
                            ok,
                            failed,
                            errors,
                        } = back
                        else {
                            panic!()
                        };
                        let iv = Interval {
                            hist: decode_histogram(&ok).unwrap(),
                            failed: decode_histogram(&failed).unwrap(),
                            errors,
                        };
                        merged.add_second(i, &iv);
                    }
                }
            }
            // A request given up at the end lands in a second already handed out.
            own.error(start, ErrorKind::Unanswered, Duration::from_secs(1), &live);
            expected_requests += 1;
            for (i, iv) in live.take_seconds(usize::MAX) {
                merged.add_second(i, &iv);
            }
        }
        let (ok, errors) = merged.overall();
        assert_eq!(ok, whole, "merged answers are exactly both hosts' answers");
        assert_eq!(ok.value_at_quantile(0.99), whole.value_at_quantile(0.99));
        assert_eq!(errors.timeout, 60);
        assert_eq!(errors.unanswered, 2);
        let requests: u64 = merged.intervals.iter().map(Interval::requests).sum();
        assert_eq!(requests, expected_requests);
    }

    #[test]
    fn a_lost_host_keeps_what_it_streamed_and_its_missing_requests_are_cut() {
        let start = Instant::now();
        let mut merged = Recorder::new(start);
        let live = Live::mirrored(start);
        let mut own = Recorder::new(start);
        for k in 0..10u64 {
            own.ok(
                start + Duration::from_millis(k),
                Duration::from_millis(1),
                &live,
            );
        }
        for (i, iv) in live.take_seconds(usize::MAX) {
            merged.add_second(i, &iv);
        }
        let ssh = Ssh::new(
            &crate::plan::hosts::Host {
                name: "lg1".into(),
                address: "10.0.0.9".parse().unwrap(),
                user: None,
                port: 22,
                identity: None,
                roles: vec![crate::plan::hosts::Role::Load],
                cpus: None,
            },
            None,
            std::path::Path::new("/tmp"),
        );
        let host = LoadHost {
            ssh: &ssh,
            binary: "iobound".into(),
            cpus: vec![],
            threads: 1,
            clock_offset_s: 0.0,
        };
        let st = HostState {
            live: (12, 0, 12_000, 15, vec![]),
            streamed: 10,
            ok: 10,
            lost: Some((1.5, "connection reset".into())),
            ..HostState::default()
        };
        let (o, shares) = finish(
            &[host],
            vec![st],
            vec!["4 users".into()],
            merged,
            start,
            false,
        );
        let (ok, errors) = o.recorder.overall();
        assert_eq!((ok.len(), errors.cut, o.due), (10, 5, 15));
        assert!(
            !o.cancelled,
            "the other hosts go on: the run is not stopped"
        );
        assert_eq!(shares[0].lost.as_deref(), Some("connection reset"));
        assert_eq!(shares[0].lost_at_s, Some(1.5));
        assert_eq!(
            ok.len() + errors.total() + errors.cut,
            o.due,
            "ok + errors + cut = due"
        );
    }
}
