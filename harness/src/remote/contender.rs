//! The contender on its own host, as the controller sees it: `iobound agent contender` started
//! there over SSH (remote::supervisor) runs or adopts the server and answers one line per
//! command. Its samples come from that host's /proc; its exit, or the loss of the connection,
//! shows as the server gone.

use super::ssh::Ssh;
use crate::sampler::{Sample, Sampling};
use crate::util::shell::command_line;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, ChildStdin, ExitStatus};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// How long one command may wait for its reply before the host counts as lost.
const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// How often the controller asks for the server's status when it asks nothing else.
pub const HEARTBEAT: Duration = Duration::from_secs(5);

/// How long the agent waits for a line before taking the controller for lost: six heartbeats.
pub const SILENCE_LIMIT: Duration = Duration::from_secs(30);

/// What the agent on the contender host is asked to look after.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ContenderJob {
    pub host: String,
    /// The command to start (in `cwd`, output to `log`, pinned to `cpus` when any)...
    #[serde(default)]
    pub argv: Vec<String>,
    #[serde(default)]
    pub cwd: String,
    #[serde(default)]
    pub cpus: Vec<usize>,
    #[serde(default)]
    pub env: Vec<(String, String)>,
    #[serde(default)]
    pub log: String,
    /// ...or a running process to sample with its descendants (never stopped by iobound).
    #[serde(default)]
    pub pid: Option<i32>,
    /// The /hash corpus the command reads: made on the host from this spec (beside the agent)
    /// before the command starts, which is told where it is (IOBOUND_CORPUS_*).
    #[serde(default)]
    pub corpus: Option<crate::plan::CorpusSpec>,
    /// The CPU quota and memory limit a command it starts runs under: in a cgroup of its own
    /// on the host, made by the agent there and removed when the command stops.
    #[serde(default)]
    pub limits: crate::util::cgroup::Limits,
    /// What the cgroup is named after on the host (the contender's name).
    #[serde(default)]
    pub name: String,
}

/// One line the agent writes.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reply {
    /// The server is running (started or adopted); where the agent runs.
    Started {
        pid: i32,
        /// `/proc/self/ns/net` of the agent, e.g. "net:[4026532301]".
        net_namespace: String,
        hostname: String,
    },
    Sample {
        sample: Sample,
        /// The server's wait status once it has ended.
        exited: Option<i32>,
        /// Why it ended, in words, once it has: read on the host, where its cgroup and its
        /// log are (an OOM kill, or its runtime's own out-of-memory line).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        why: Option<String>,
    },
    Status {
        exited: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        why: Option<String>,
    },
    Stopped {
        status: Option<i32>,
    },
    Failed {
        error: String,
    },
}

struct Channel {
    child: Child,
    stdin: Option<ChildStdin>,
    replies: mpsc::Receiver<String>,
    /// Why the server counts as gone: its exit, or the host lost.
    gone: Option<String>,
}

/// A server on the contender host, started or adopted there by the agent.
pub struct RemoteContender {
    pub host: String,
    pub pid: i32,
    pub net_namespace: String,
    pub hostname: String,
    /// Whether iobound started it (and so stops it).
    pub started: bool,
    /// The limits it runs under on its host (in a cgroup there when it was started).
    pub limits: crate::util::cgroup::Limits,
    /// When the agent said it had started it (this machine's clock): what the runtime's own
    /// log times are counted from, give or take a round trip.
    pub since: Instant,
    log: String,
    ssh: Ssh,
    channel: Mutex<Channel>,
}

fn describe(raw: i32) -> String {
    crate::services::exit_words::describe_exit(ExitStatus::from_raw(raw))
}

impl RemoteContender {
    /// Starts the agent (`binary` on the host) with `job` and waits for it to say the server is
    /// running. Readiness (the server accepting connections) is the caller's next step.
    pub fn start(ssh: &Ssh, binary: &str, job: &ContenderJob) -> Result<Arc<RemoteContender>> {
        let mut child = ssh
            .spawn(&crate::util::shell::exec(&[binary, "agent", "contender"]))
            .with_context(|| format!("starting the server on contender host {}", job.host))?;
        let mut stdin = child.stdin.take().expect("piped");
        writeln!(stdin, "{}", serde_json::to_string(job)?)
            .with_context(|| format!("sending the job to contender host {}", job.host))?;
        let (tx, replies) = mpsc::channel();
        let stdout = child.stdout.take().expect("piped");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut channel = Channel {
            child,
            stdin: Some(stdin),
            replies,
            gone: None,
        };
        let first = next_reply(&mut channel, &job.host);
        let Some(Reply::Started {
            pid,
            net_namespace,
            hostname,
        }) = first
        else {
            let why = match first {
                Some(Reply::Failed { error }) => error,
                _ => channel.gone.clone().unwrap_or_default(),
            };
            close(&mut channel);
            bail!("contender host {}: {why}", job.host);
        };
        let contender = Arc::new(RemoteContender {
            host: job.host.clone(),
            pid,
            net_namespace,
            hostname,
            started: !job.argv.is_empty(),
            limits: job.limits,
            since: Instant::now(),
            log: job.log.clone(),
            ssh: ssh.clone(),
            channel: Mutex::new(channel),
        });
        heartbeat(Arc::downgrade(&contender));
        Ok(contender)
    }

    /// Sends one command and returns its reply; None once the server is gone.
    fn ask(&self, command: &str) -> Option<Reply> {
        let mut ch = self.channel.lock().unwrap_or_else(|e| e.into_inner());
        if ch.gone.is_some() {
            return None;
        }
        let sent = ch
            .stdin
            .as_mut()
            .is_some_and(|s| writeln!(s, "{command}").and_then(|_| s.flush()).is_ok());
        if !sent {
            ch.gone = Some(format!(
                "the connection to contender host {} closed",
                self.host
            ));
            return None;
        }
        let reply = next_reply(&mut ch, &self.host);
        if let Some(Reply::Sample {
            exited: Some(raw),
            why,
            ..
        })
        | Some(Reply::Status {
            exited: Some(raw),
            why,
        }) = &reply
        {
            ch.gone = Some(why.clone().unwrap_or_else(|| describe(*raw)));
        }
        reply
    }

    /// Why the server is gone (its exit status, or the host lost), once it is.
    pub fn exited(&self) -> Option<String> {
        self.ask("status");
        let ch = self.channel.lock().unwrap_or_else(|e| e.into_inner());
        ch.gone.clone()
    }

    /// Waits until `ready()` (e.g. its port accepts connections); when the process exits
    /// first, takes longer than `timeout`, or the user interrupts, stops it (its log copied to
    /// `local_log`) and says why, with the log's last lines. `what` and `until` name the
    /// process and the condition in that message.
    pub fn wait_until(
        &self,
        what: &str,
        until: &str,
        timeout: Duration,
        local_log: &Path,
        mut ready: impl FnMut() -> bool,
    ) -> Result<Duration> {
        let t0 = Instant::now();
        while !ready() {
            let gone = self.exited();
            let interrupted = crate::util::interrupt::stopped();
            if gone.is_some() || t0.elapsed() > timeout || interrupted {
                self.stop(Duration::from_secs(4), local_log);
                let why = match gone {
                    Some(g) => g,
                    None if interrupted => "interrupted by the user".into(),
                    None => format!("not within {} s", timeout.as_secs()),
                };
                bail!(
                    "{what} on host {} did not {until} ({why}); last log lines:\n{}",
                    self.host,
                    crate::services::exit_words::log_tail(local_log, 15)
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(t0.elapsed())
    }

    /// A sampler reading the server on its host, counting connections to `downstream_port`.
    pub fn sampler(self: &Arc<Self>, downstream_port: Option<u16>) -> RemoteSampler {
        match downstream_port {
            Some(p) => self.ask(&format!("begin {p}")),
            None => self.ask("begin"),
        };
        RemoteSampler {
            contender: self.clone(),
            start: Instant::now(),
            last: Default::default(),
        }
    }

    /// The output of a server iobound started, so far, read on its host.
    pub fn log_text(&self) -> Option<String> {
        self.started
            .then(|| {
                self.ssh
                    .output(&command_line(&["cat", "--", &self.log]))
                    .ok()
            })
            .flatten()
    }

    /// Sends signal `name` (e.g. "INT") to the process on its host, through the connection.
    pub fn signal(&self, name: &str) {
        let _ = self.ssh.run(&command_line(&[
            "kill",
            &format!("-{name}"),
            &self.pid.to_string(),
        ]));
    }

    /// Stops the server (SIGTERM to its group, SIGKILL after `grace`) if iobound started it,
    /// ends the agent, and copies the server's log to `local_log`.
    pub fn stop(&self, grace: Duration, local_log: &Path) {
        self.ask(&format!("stop {}", grace.as_millis()));
        {
            let mut ch = self.channel.lock().unwrap_or_else(|e| e.into_inner());
            close(&mut ch);
        }
        if self.started {
            if let Ok(text) = self.ssh.output(&command_line(&["cat", "--", &self.log])) {
                let _ = std::fs::write(local_log, text);
            }
        }
    }
}

impl Drop for RemoteContender {
    /// Let go without `stop` (an error path): the agent is still told to stop, so that it
    /// knows this side is alive and leaves the run's directory to it. Only an agent whose
    /// input ends without a word (a killed controller, a dropped connection) removes it.
    fn drop(&mut self) {
        let ch = self.channel.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(stdin) = ch.stdin.as_mut() {
            let _ = writeln!(stdin, "stop {}", DROP_GRACE.as_millis()).and_then(|_| stdin.flush());
        }
        close(ch);
    }
}

/// The grace a contender let go of without `stop` gets between SIGTERM and SIGKILL.
const DROP_GRACE: Duration = Duration::from_secs(3);

/// Asks the agent for the server's status every HEARTBEAT while the contender is held, so that
/// an agent hearing nothing for its SILENCE_LIMIT knows this side is lost, not just quiet
/// (between runs nothing else is asked for minutes). Ends with the contender or its channel.
fn heartbeat(contender: std::sync::Weak<RemoteContender>) {
    std::thread::spawn(move || loop {
        std::thread::sleep(HEARTBEAT);
        let Some(c) = contender.upgrade() else {
            return;
        };
        if c.ask("status").is_none() {
            return;
        }
    });
}

/// The next line that is a reply (a login banner is skipped); None, with the reason kept,
/// when the channel ends or stays silent for REPLY_TIMEOUT.
fn next_reply(ch: &mut Channel, host: &str) -> Option<Reply> {
    loop {
        match ch.replies.recv_timeout(REPLY_TIMEOUT) {
            Ok(line) => {
                if let Ok(r) = serde_json::from_str::<Reply>(&line) {
                    return Some(r);
                }
            }
            Err(e) => {
                let why = match e {
                    mpsc::RecvTimeoutError::Timeout => "stopped answering",
                    mpsc::RecvTimeoutError::Disconnected => "closed the connection",
                };
                ch.gone = Some(format!("contender host {host} {why}"));
                return None;
            }
        }
    }
}

/// Closes the agent's input (it stops the server it started) and reaps the ssh client.
fn close(ch: &mut Channel) {
    ch.stdin = None;
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(10) {
        if ch.child.try_wait().ok().flatten().is_some() {
            crate::util::interrupt::unregister(ch.child.id() as i32);
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = ch.child.kill();
    let _ = ch.child.wait();
    crate::util::interrupt::unregister(ch.child.id() as i32);
}

/// Samples of the server on its host, timed by this machine's clock from the sampler's start.
pub struct RemoteSampler {
    contender: Arc<RemoteContender>,
    start: Instant,
    /// The last sample received, repeated once the server is gone.
    last: std::cell::RefCell<Sample>,
}

impl RemoteSampler {
    fn read(&self, command: &str) -> Sample {
        let t = self.start.elapsed().as_secs_f64();
        if let Some(Reply::Sample { sample, .. }) = self.contender.ask(command) {
            *self.last.borrow_mut() = sample;
        }
        Sample {
            t,
            ..self.last.borrow().clone()
        }
    }
}

impl Sampling for RemoteSampler {
    fn sample(&self) -> Sample {
        self.read("sample")
    }

    fn sample_full(&self) -> Sample {
        self.read("full")
    }
}
