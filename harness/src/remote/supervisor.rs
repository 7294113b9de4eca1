//! The contender host's side: `iobound agent contender`. It starts the server there (its own
//! process group, pinned to the host's CPUs) or adopts one already running (`--pid`), samples
//! it from that host's /proc when asked, and stops it when asked, when its input ends (the SSH
//! channel closing, for whatever reason) or when the controller falls silent for SILENCE_LIMIT:
//! a controller frozen or cut off by a partition leaves a channel sshd may keep open for hours,
//! so the controller says `status` every HEARTBEAT and the agent takes silence for loss.

pub use super::contender::SILENCE_LIMIT;
use super::contender::{ContenderJob, Reply};
use crate::sampler::Sampler;
use crate::services::contender::{self, Running};
use anyhow::{bail, Result};
use std::io::{BufRead, Write};
use std::net::SocketAddr;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long the server gets between SIGTERM and SIGKILL when the controller goes away.
const GRACE_ON_EOF: Duration = Duration::from_secs(3);

/// How the agent's work ended.
#[derive(Debug, PartialEq)]
pub enum Ended {
    /// The controller asked it to stop the server.
    Asked,
    /// Its input ended: the channel closed.
    InputEnded,
    /// Nothing came for the silence limit: the controller is frozen or cut off.
    Silent,
}

/// What the agent looks after: a process it started, or one it was given to sample.
struct Watched {
    started: Option<Running>,
    pid: i32,
}

impl Watched {
    fn exited(&mut self) -> Option<i32> {
        match self.started.as_mut() {
            Some(p) => p.exited().map(|s| s.into_raw()),
            // A process it did not start: gone when /proc no longer has it.
            None => crate::util::procs::stat_fields(self.pid)
                .is_none()
                .then_some(0),
        }
    }

    /// Whether the process has ended (its raw wait status) and, for one it started, why in
    /// words: what every reply but `stopped` carries.
    fn status(&mut self) -> (Option<i32>, Option<String>) {
        let exited = self.exited();
        let why = match (&self.started, exited) {
            (Some(p), Some(raw)) => Some(p.why_exited(ExitStatus::from_raw(raw))),
            _ => None,
        };
        (exited, why)
    }

    fn sampler(&self, downstream_port: Option<u16>) -> Sampler {
        match &self.started {
            Some(p) => Sampler::new(self.pid, Instant::now(), downstream_port)
                .in_cgroup(p.cgroup().map(crate::util::cgroup::Cgroup::reader)),
            None => Sampler::of_tree(self.pid, Instant::now()),
        }
    }
}

/// Reads the job from the first line of `input`, then one command per line: `begin [PORT]`
/// (a fresh sampler, counting connections to PORT), `sample`, `full`, `status`,
/// `stop GRACE_MS`. Every command gets one line of reply on `out`. The server is stopped when
/// asked, when `input` ends, or when no line comes for `silence`.
pub fn agent(
    mut input: impl BufRead + Send + 'static,
    out: &mut impl Write,
    silence: Duration,
) -> Result<Ended> {
    let mut first = String::new();
    input.read_line(&mut first)?;
    let job: ContenderJob = match serde_json::from_str(&first) {
        Ok(j) => j,
        Err(e) => {
            return refuse(
                out,
                format!(
                "the job is not valid: {e}; controller and agent must be the same iobound version"
            ),
            )
        }
    };
    let mut watched = match watch(&job) {
        Ok(w) => w,
        Err(e) => return refuse(out, format!("{e:#}")),
    };
    reply(
        out,
        &Reply::Started {
            pid: watched.pid,
            net_namespace: std::fs::read_link("/proc/self/ns/net")
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            hostname: std::fs::read_to_string("/proc/sys/kernel/hostname")
                .unwrap_or_default()
                .trim()
                .to_string(),
        },
    )?;
    let mut sampler = watched.sampler(None);
    let lines = read_lines(input);
    loop {
        let line = match lines.recv_timeout(silence) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                eprintln!(
                    "iobound agent: nothing from the controller for {} s; stopping the server",
                    silence.as_secs()
                );
                stop(&mut watched, GRACE_ON_EOF);
                return Ok(Ended::Silent);
            }
        };
        let (answer, stopped) = answer(&line, &mut watched, &mut sampler);
        reply(out, &answer)?;
        if stopped {
            return Ok(Ended::Asked);
        }
    }
    // The controller, or the connection to it, is gone: nothing of the run stays.
    stop(&mut watched, GRACE_ON_EOF);
    Ok(Ended::InputEnded)
}

/// The reply to one command line, and whether it stopped the server.
fn answer(line: &str, watched: &mut Watched, sampler: &mut Sampler) -> (Reply, bool) {
    let mut words = line.split_whitespace();
    let reply = match (words.next(), words.next()) {
        (Some("begin"), port) => {
            *sampler = watched.sampler(port.and_then(|p| p.parse().ok()));
            let (exited, why) = watched.status();
            Reply::Status { exited, why }
        }
        (Some(kind @ ("sample" | "full")), _) => {
            let sample = if kind == "full" {
                sampler.sample_full()
            } else {
                sampler.sample()
            };
            let (exited, why) = watched.status();
            Reply::Sample {
                sample,
                exited,
                why,
            }
        }
        (Some("stop"), grace) => {
            let ms = grace.and_then(|g| g.parse().ok()).unwrap_or(3000);
            let status = stop(watched, Duration::from_millis(ms));
            return (Reply::Stopped { status }, true);
        }
        _ => {
            let (exited, why) = watched.status();
            Reply::Status { exited, why }
        }
    };
    (reply, false)
}

/// The lines of `input`, read on a thread of their own so that the agent can wait for one
/// with a time limit; the channel closes when the input ends or fails.
fn read_lines(mut input: impl BufRead + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        while input.read_line(&mut line).is_ok_and(|n| n > 0) {
            if tx.send(std::mem::take(&mut line)).is_err() {
                return;
            }
        }
    });
    rx
}

/// Removes the per-run directory the agent's binary `exe` lives in, when it is one
/// (/tmp/iobound-run.*): what a lost controller would have removed. True when removed.
pub fn remove_run_dir_of(exe: &Path) -> bool {
    let Some(dir) = exe.parent() else {
        return false;
    };
    let ours = dir.parent() == Some(Path::new("/tmp"))
        && dir
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("iobound-run."));
    ours && std::fs::remove_dir_all(dir).is_ok()
}

/// Starts the job's command, or checks that its process exists.
fn watch(job: &ContenderJob) -> Result<Watched> {
    if !job.argv.is_empty() {
        let mut env = job.env.clone();
        if let Some(spec) = &job.corpus {
            let exe = std::env::current_exe()?;
            let here = exe.parent().unwrap_or(Path::new("."));
            let corpus = crate::services::corpus::Corpus::ensure(&here.join(".cache"), spec)?;
            // Later entries win: the host's corpus, not the controller's.
            env.extend(corpus.env());
        }
        let name = if job.name.is_empty() {
            "server"
        } else {
            &job.name
        };
        let p = contender::start_in(
            &job.argv,
            Path::new(&job.cwd),
            &job.cpus,
            SocketAddr::new(contender::LOOPBACK, 0),
            Path::new(&job.log),
            &env,
            crate::util::cgroup::own(name, job.limits)?,
        )?;
        return Ok(Watched {
            pid: p.pid,
            started: Some(p),
        });
    }
    if job.limits.any() {
        bail!(
            "--cpus and --memory limit a server iobound starts: give --cmd instead of --pid, or run without them"
        );
    }
    match job.pid {
        Some(pid) if crate::util::procs::stat_fields(pid).is_some() => Ok(Watched { started: None, pid }),
        Some(pid) => bail!(
            "--pid {pid}: no such process on host {}; give the id of the server's main process there",
            job.host
        ),
        None => bail!("the job names neither a command nor a process"),
    }
}

/// Stops what the agent started (a process it only samples is left alone) and returns its
/// wait status.
fn stop(w: &mut Watched, grace: Duration) -> Option<i32> {
    w.started.as_mut().map(|p| p.stop(grace).into_raw())
}

fn reply(out: &mut impl Write, r: &Reply) -> Result<()> {
    serde_json::to_writer(&mut *out, r)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

fn refuse(out: &mut impl Write, error: String) -> Result<Ended> {
    reply(
        out,
        &Reply::Failed {
            error: error.clone(),
        },
    )?;
    bail!(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(argv: &[&str], dir: &Path) -> String {
        serde_json::to_string(&ContenderJob {
            host: "here".into(),
            argv: argv.iter().map(|s| s.to_string()).collect(),
            cwd: dir.display().to_string(),
            log: dir.join("server.log").display().to_string(),
            ..ContenderJob::default()
        })
        .unwrap()
    }

    fn replies(out: &[u8]) -> Vec<Reply> {
        String::from_utf8_lossy(out)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn alive(pid: i32) -> bool {
        crate::util::procs::stat_fields(pid).is_some_and(|f| f[0] != "Z")
    }

    #[test]
    fn it_starts_samples_and_stops_the_server_on_request() {
        let dir = tempfile::tempdir().unwrap();
        let first = format!(
            "{}\nbegin\n",
            job(&["sh", "-c", "echo up; exec sleep 30"], dir.path())
        );
        // Sampled once the server has settled: a process read in the middle of its exec has
        // no resident pages yet (CI once sampled it there and read 0 MB).
        let rest = Delayed(Some(b"sample\nstatus\nstop 500\n"));
        let input = std::io::Read::chain(std::io::Cursor::new(first), rest);
        let mut out = Vec::new();
        let ended = agent(std::io::BufReader::new(input), &mut out, SILENCE_LIMIT).unwrap();
        assert_eq!(ended, Ended::Asked);
        let r = replies(&out);
        let Reply::Started {
            pid, net_namespace, ..
        } = &r[0]
        else {
            panic!("{r:?}")
        };
        assert!(net_namespace.starts_with("net:["), "{net_namespace}");
        let Reply::Sample { sample, exited, .. } = &r[2] else {
            panic!("{r:?}")
        };
        assert_eq!((sample.processes, *exited), (1, None), "{sample:?}");
        assert!(sample.rss_mb > 0.0);
        assert!(matches!(r[3], Reply::Status { exited: None, .. }));
        // Stopped by SIGTERM.
        assert!(
            matches!(r[4], Reply::Stopped { status: Some(s) } if ExitStatus::from_raw(s).signal() == Some(15)),
            "{r:?}"
        );
        assert!(!alive(*pid));
        let log = std::fs::read_to_string(dir.path().join("server.log")).unwrap();
        assert_eq!(log.trim(), "up");
    }

    #[test]
    fn the_end_of_its_input_stops_the_server() {
        let dir = tempfile::tempdir().unwrap();
        let input = format!("{}\nsample\n", job(&["sleep", "30"], dir.path()));
        let mut out = Vec::new();
        let ended = agent(std::io::Cursor::new(input), &mut out, SILENCE_LIMIT).unwrap();
        assert_eq!(ended, Ended::InputEnded);
        let Reply::Started { pid, .. } = replies(&out)[0] else {
            panic!()
        };
        assert!(!alive(pid), "the server outlived the connection");
    }

    #[test]
    fn a_server_that_exits_is_reported_with_its_status() {
        let dir = tempfile::tempdir().unwrap();
        let first = format!("{}\n", job(&["sh", "-c", "exit 7"], dir.path()));
        // The status is asked after the process has had time to exit.
        let input = std::io::Read::chain(std::io::Cursor::new(first), Delayed(Some(b"status\n")));
        let mut out = Vec::new();
        agent(std::io::BufReader::new(input), &mut out, SILENCE_LIMIT).unwrap();
        let r = replies(&out);
        assert!(
            matches!(r[1], Reply::Status { exited: Some(s), .. } if ExitStatus::from_raw(s).code() == Some(7)),
            "{r:?}"
        );
    }

    #[test]
    fn a_controller_that_falls_silent_is_taken_for_lost_and_the_server_stopped() {
        // A frozen controller: the channel stays open and nothing comes (before the limit, the
        // agent waited for a line for as long as the pipe stayed open).
        let dir = tempfile::tempdir().unwrap();
        let (mut controller, agent_side) = std::os::unix::net::UnixStream::pair().unwrap();
        writeln!(controller, "{}\nbegin", job(&["sleep", "60"], dir.path())).unwrap();
        let (done_tx, done) = mpsc::channel();
        std::thread::spawn(move || {
            let mut out = Vec::new();
            let input = std::io::BufReader::new(agent_side);
            let ended = agent(input, &mut out, Duration::from_secs(1));
            let _ = done_tx.send((ended.map_err(|e| e.to_string()), out));
        });
        let (ended, out) = done
            .recv_timeout(Duration::from_secs(10))
            .expect("the agent gave up on a silent controller");
        assert_eq!(ended, Ok(Ended::Silent));
        let Reply::Started { pid, .. } = replies(&out)[0] else {
            panic!()
        };
        assert!(!alive(pid), "the server outlived the controller's silence");
        drop(controller);
    }

    #[test]
    fn a_lost_agent_removes_its_run_directory_and_no_other() {
        let run = tempfile::Builder::new()
            .prefix("iobound-run.")
            .tempdir_in("/tmp")
            .unwrap()
            .keep();
        std::fs::write(run.join("iobound"), b"binary").unwrap();
        assert!(remove_run_dir_of(&run.join("iobound")));
        assert!(!run.exists());
        let other = tempfile::Builder::new()
            .prefix("keep.")
            .tempdir_in("/tmp")
            .unwrap();
        assert!(!remove_run_dir_of(&other.path().join("iobound")));
        assert!(other.path().exists());
    }

    /// Input that yields its bytes only after 300 ms.
    struct Delayed(Option<&'static [u8]>);

    impl std::io::Read for Delayed {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let Some(bytes) = self.0.take() else {
                return Ok(0);
            };
            std::thread::sleep(Duration::from_millis(300));
            buf[..bytes.len()].copy_from_slice(bytes);
            Ok(bytes.len())
        }
    }

    #[test]
    fn a_job_it_cannot_run_is_refused_with_the_reason() {
        let mut out = Vec::new();
        let job = serde_json::to_string(&ContenderJob {
            host: "app".into(),
            pid: Some(i32::MAX),
            ..ContenderJob::default()
        })
        .unwrap();
        let input = std::io::Cursor::new(format!("{job}\n"));
        let err = agent(input, &mut out, SILENCE_LIMIT).unwrap_err();
        assert!(
            err.to_string().contains("no such process on host app"),
            "{err}"
        );
        assert!(matches!(&replies(&out)[0], Reply::Failed { error } if error.contains("--pid")));
        let input = std::io::Cursor::new("{not json\n");
        let err = agent(input, &mut Vec::new(), SILENCE_LIMIT).unwrap_err();
        assert!(err.to_string().contains("same iobound version"), "{err}");
    }
}
