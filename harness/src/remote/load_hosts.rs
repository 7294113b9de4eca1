//! Load from other hosts, the controller's side: one load agent (driver::remote) per load host
//! over SSH, their seconds added into one recorder, their counts summed, a lost host accounted
//! for.

use super::load_merge::{finish, Event, Merge};
use crate::driver::record::Live;
use crate::driver::remote::{host_tag, share, unix_now, HostShare, Job, Line};
use crate::driver::Outcome;
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
    let names: Vec<String> = hosts.iter().map(|h| h.ssh.host.name.clone()).collect();
    Ok(finish(
        &names,
        m.state,
        agents.shares,
        m.merged,
        start,
        cancel.load(Ordering::SeqCst),
    ))
}
