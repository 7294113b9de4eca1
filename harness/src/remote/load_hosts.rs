//! Load from other hosts, the controller's side: one load agent (driver::remote) per load host
//! over SSH, their seconds added into one recorder, their counts summed, a lost host accounted
//! for.

use crate::driver::record::{Interval, Live, Recorder};
use crate::driver::remote::{host_tag, share, unix_now, HostShare, Job, Line};
use crate::driver::summary::decode_histogram;
use crate::driver::{EntryCount, Outcome};
use crate::plan::{Load, Profile};
use crate::remote::ssh::Ssh;
use anyhow::{bail, Context, Result};
use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// How long every host's agent has to read its job and say it is ready; one that has not by
/// then is left out of the load (its input is closed, and it counts as lost).
const READY_LIMIT: Duration = Duration::from_secs(30);

/// Bounds of the time between the controller sending the common start and the start itself.
/// Within them it is twice the slowest host's time from its job to its ready line, which
/// bounds a line's way there and the error of the clock offset measured before.
const START_MARGIN: (Duration, Duration) = (Duration::from_millis(300), Duration::from_secs(10));

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

/// What the controller knows of one host while the load runs.
#[derive(Default)]
struct HostState {
    /// Its last live counters: ok, errors, latency sum (µs), due, latency buckets.
    pub live: (u64, u64, u64, u64, Vec<u64>),
    /// Requests accounted for by the seconds received.
    pub streamed: u64,
    pub ok: u64,
    pub errors: u64,
    pub end: Option<Line>,
    /// When (s after the start) and why it was lost.
    pub lost: Option<(f64, String)>,
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

/// The agents started on the load hosts: their processes, their stdins (None once closed) and
/// the load each was given, in words.
struct Agents {
    children: Vec<std::process::Child>,
    inputs: Vec<Option<std::process::ChildStdin>>,
    shares: Vec<String>,
}

/// Starts `iobound agent drive` on every host with its share of the load and no start yet (it
/// says `ready`, and waits to be told), and a thread per host that turns its output into events.
fn start_agents(hosts: &[LoadHost<'_>], job: &Job, tx: &mpsc::Sender<Event>) -> Result<Agents> {
    let n = hosts.len();
    let mut agents = Agents {
        children: Vec::new(),
        inputs: Vec::new(),
        shares: Vec::new(),
    };
    for (i, h) in hosts.iter().enumerate() {
        let mut j = job.clone();
        j.host = h.ssh.host.name.clone();
        j.load = share(&job.load, i, n);
        j.threads = h.threads;
        j.cpus = h.cpus.clone();
        j.start_unix = 0.0;
        j.tag = host_tag(&job.tag, i);
        agents.shares.push(load_words(&j.load));
        let mut child = h
            .ssh
            .spawn(&crate::util::shell::exec(&[&h.binary, "agent", "drive"]))
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
                // A line that is not ours (a login banner) is ignored.
                if let Ok(l) = serde_json::from_str::<Line>(&line) {
                    let _ = tx.send(Event::Line(i, l));
                }
            }
            let mut why = String::new();
            let _ = std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut why);
            let _ = tx.send(Event::Closed(i, why.trim().to_string()));
        });
        agents.inputs.push(Some(stdin));
        agents.children.push(child);
    }
    Ok(agents)
}

impl Agents {
    /// Sends `command` to every agent whose input is still open.
    fn tell(&mut self, command: &str) {
        for input in self.inputs.iter_mut().flatten() {
            let _ = writeln!(input, "{command}");
        }
    }

    /// Waits until every agent has said `ready` or ended (at most READY_LIMIT), and returns
    /// which were ready, the slowest's time, and the other events that came meanwhile.
    fn wait_ready(&mut self, rx: &mpsc::Receiver<Event>) -> (Vec<bool>, Duration, Vec<Event>) {
        let n = self.inputs.len();
        let sent = Instant::now();
        let (mut ready, mut ended) = (vec![false; n], vec![false; n]);
        let (mut slowest, mut early) = (Duration::ZERO, Vec::new());
        while (0..n).any(|i| !ready[i] && !ended[i]) {
            let Some(left) = READY_LIMIT.checked_sub(sent.elapsed()) else {
                break;
            };
            match rx.recv_timeout(left) {
                Ok(Event::Line(i, Line::Ready)) => {
                    ready[i] = true;
                    slowest = slowest.max(sent.elapsed());
                }
                Ok(e) => {
                    if let Event::Closed(i, _) = &e {
                        ended[*i] = true;
                    }
                    early.push(e);
                }
                Err(_) => break,
            }
        }
        (ready, slowest, early)
    }

    /// Tells each ready agent the common start, in its host's clock; an agent that never said
    /// it was ready has its input closed, which ends it.
    fn start(&mut self, hosts: &[LoadHost<'_>], ready: &[bool], start_unix: f64) {
        for ((input, h), &r) in self.inputs.iter_mut().zip(hosts).zip(ready) {
            let told = r
                && input.as_mut().is_some_and(|i| {
                    writeln!(i, "start {:.6}", start_unix + h.clock_offset_s).is_ok()
                });
            if !told {
                *input = None;
            }
        }
    }

    /// One event into the merge. Its end is in, or it is gone: its input closes, which lets
    /// a finished agent exit (it waits for that, so that one whose controller froze cleans up
    /// after itself).
    fn take(&mut self, event: Event, m: &mut Merge, start: Instant, live: &Live) -> Result<()> {
        if let Event::Closed(i, _) | Event::Line(i, Line::End { .. }) = &event {
            self.inputs[*i] = None;
        }
        m.take(event, start, live)
    }
}

/// What the hosts have sent so far, merged: their seconds added into one recorder, the
/// driver's lateness and connection waits added, each host's counts and end kept.
struct Merge {
    state: Vec<HostState>,
    merged: Recorder,
    lag: hdrhistogram::Histogram<u64>,
    conn_wait: hdrhistogram::Histogram<u64>,
    /// Hosts whose output has ended.
    closed: usize,
}

impl Merge {
    fn new(hosts: usize, start: Instant) -> Merge {
        Merge {
            state: (0..hosts).map(|_| HostState::default()).collect(),
            merged: Recorder::new(start),
            lag: crate::driver::record::new_histogram(),
            conn_wait: crate::driver::record::new_histogram(),
            closed: 0,
        }
    }

    /// Takes one event of host `i`'s stream.
    fn take(&mut self, event: Event, start: Instant, live: &Live) -> Result<()> {
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
                let st = &mut self.state[i];
                st.streamed += iv.requests();
                st.ok += iv.hist.len();
                st.errors += iv.errors.total();
                self.merged.add_second(sec, &iv);
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
                self.state[i].live = (ok, errors, latency_us, due, buckets);
                publish(live, &self.state);
            }
            // Said before the start, and taken then.
            Event::Line(_, Line::Ready) => {}
            Event::Line(i, Line::Failed { error }) => {
                self.state[i].lost.get_or_insert((elapsed_s(start), error));
            }
            Event::Line(i, end @ Line::End { .. }) => {
                if let Line::End { lag, conn_wait, .. } = &end {
                    self.lag.add(decode_histogram(lag)?).ok();
                    self.conn_wait.add(decode_histogram(conn_wait)?).ok();
                }
                self.state[i].end = Some(end);
            }
            Event::Closed(i, why) => {
                self.closed += 1;
                let st = &mut self.state[i];
                if st.end.is_none() && st.lost.is_none() {
                    let why = if why.is_empty() {
                        "its connection closed before the load ended".to_string()
                    } else {
                        why
                    };
                    st.lost = Some((elapsed_s(start), why));
                }
            }
        }
        Ok(())
    }
}

/// Drives `load` from `hosts` (each with its share) against the target described by `job`
/// (its load and host are filled in per host) and returns the merged outcome with each host's
/// share. The common start is sent once every host's agent is ready. `cancel` stops every
/// host; `live` shows the sums as they come.
pub fn run(
    hosts: &[LoadHost<'_>],
    job: &Job,
    live: Arc<Live>,
    cancel: Arc<AtomicBool>,
) -> Result<(Outcome, Vec<HostShare>)> {
    if hosts.is_empty() {
        bail!("no load host; give at least one host the role \"load\"");
    }
    let (tx, rx) = mpsc::channel();
    let mut agents = start_agents(hosts, job, &tx)?;
    drop(tx);
    let (ready, slowest, early) = agents.wait_ready(&rx);
    let margin = (slowest * 2).clamp(START_MARGIN.0, START_MARGIN.1);
    let start_unix = unix_now() + margin.as_secs_f64();
    let start = Instant::now() + margin;
    agents.start(hosts, &ready, start_unix);
    let mut m = Merge::new(hosts.len(), start);
    for event in early {
        agents.take(event, &mut m, start, &live)?;
    }
    let (mut stop_sent, mut finish_sent) = (false, false);
    while m.closed < hosts.len() {
        if cancel.load(Ordering::SeqCst) && !stop_sent {
            stop_sent = true;
            agents.tell("stop");
        }
        // A warm-up that has settled ends on every host, as it does here.
        if live.finishing() && !finish_sent {
            finish_sent = true;
            agents.tell("finish");
        }
        let event = match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(e) => e,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        agents.take(event, &mut m, start, &live)?;
    }
    for mut c in agents.children {
        let _ = c.wait();
        crate::util::interrupt::unregister(c.id() as i32);
    }
    if m.state.iter().all(|s| s.end.is_none()) {
        let why: Vec<String> = hosts
            .iter()
            .zip(&m.state)
            .filter_map(|(h, s)| {
                s.lost
                    .as_ref()
                    .map(|(_, w)| format!("{}: {w}", h.ssh.host.name))
            })
            .collect();
        bail!("no load host finished: {}", why.join("; "));
    }
    m.merged.lag = m.lag;
    m.merged.conn_wait = m.conn_wait;
    Ok(finish(
        hosts,
        m.state,
        agents.shares,
        m.merged,
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
            Some(end @ Line::End { .. }) => add_end(&mut o, &mut share, end),
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

/// Adds a host's end line to the run's outcome and to its share.
fn add_end(o: &mut Outcome, share: &mut HostShare, end: Line) {
    let Line::End {
        due,
        pool_waits,
        cpu_s,
        threads,
        duration_s,
        cancelled,
        cpu_busy_pct,
        lag,
        entries,
        acks,
        ..
    } = end
    else {
        return;
    };
    share.due = due;
    share.acks = acks;
    o.due += due;
    o.pool_waits += pool_waits;
    o.cpu += Duration::from_secs_f64(cpu_s);
    o.threads += threads;
    o.duration = o.duration.max(Duration::from_secs_f64(duration_s));
    o.cancelled |= cancelled;
    // Kept per host (see `saturation_warnings`): this machine's driver CPUs carried none of
    // the load.
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

#[cfg(test)]
mod tests {
    use super::*;

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
