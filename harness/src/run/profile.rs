//! A CPU profile of the contender during a measured run (`--profile`), with each runtime's own
//! profiler: JFR for the JVMs (`jcmd JFR.start`/`JFR.stop`, execution samples every 10 ms, plus
//! a count of virtual threads started), pprof for Go (the contender's loopback-only
//! `/debug/pprof/profile`, served only when `IOBOUND_PPROF` names an address), V8's CPU
//! profiler for Node (node:inspector in every process, started and stopped by SIGUSR2, sampling
//! every 10 ms). Each becomes folded stacks ("root;...;leaf count" per line, the format
//! flamegraph.pl and speedscope read), which the report draws as a flame graph.

use super::stacks::{
    fold_jfr, fold_pprof_traces, fold_v8, hottest, jfr_event_count, HotFrame, PERIOD_MS,
};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The profile of one measured run, as results.json keeps it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ProfileRecord {
    /// "jfr", "pprof" or "v8".
    pub tool: String,
    /// Stack samples taken.
    pub samples: u64,
    pub period_ms: f64,
    /// Folded stacks, relative to the results directory; the report draws the flame graph
    /// beside them (same name, .svg and .png).
    pub folded: String,
    /// The frames with the most samples at the top of the stack (self time), most first.
    pub hottest: Vec<HotFrame>,
    /// JFR only: virtual threads started during the measured run (jdk.VirtualThreadStart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtual_threads_started: Option<u64>,
}

/// Which profiler a contender gets.
#[derive(Debug, Clone)]
pub enum Profiler {
    Jfr { jdk_bin: PathBuf },
    Pprof { addr: SocketAddr },
    V8 { dir: PathBuf },
}

/// A profile being taken.
pub enum Session {
    Jfr {
        jdk_bin: PathBuf,
        file: PathBuf,
        pid: i32,
    },
    Pprof {
        fetch: std::thread::JoinHandle<Result<Vec<u8>>>,
    },
    V8 {
        dir: PathBuf,
        pid: i32,
    },
}

impl Profiler {
    /// The profiler for a contender whose manifest says `profiler = KIND`; `work` is a folder
    /// for the profiler's raw files.
    pub fn new(kind: &str, java: Option<&Path>, work: &Path) -> Result<Profiler> {
        match kind {
            "jfr" => {
                let java = java.context("JFR profiles need the JDK that starts the contender")?;
                let jdk_bin = java.parent().map(Path::to_path_buf).unwrap_or_default();
                for tool in ["jcmd", "jfr"] {
                    if !jdk_bin.join(tool).exists() {
                        bail!(
                            "--profile: {} has no {tool}; a full JDK (not a JRE) is needed",
                            jdk_bin.display()
                        );
                    }
                }
                Ok(Profiler::Jfr { jdk_bin })
            }
            "pprof" => {
                let port = crate::services::contender::free_port()?;
                Ok(Profiler::Pprof {
                    addr: SocketAddr::from(([127, 0, 0, 1], port)),
                })
            }
            "v8" => {
                std::fs::create_dir_all(work)
                    .with_context(|| format!("cannot create {}", work.display()))?;
                Ok(Profiler::V8 {
                    dir: work.to_path_buf(),
                })
            }
            other => bail!("profiler {other:?} is unknown; use \"jfr\", \"pprof\" or \"v8\""),
        }
    }

    /// Environment the contender starts with so that it can be profiled later.
    pub fn env(&self) -> Vec<(String, String)> {
        match self {
            Profiler::Jfr { .. } => Vec::new(),
            Profiler::Pprof { addr } => vec![("IOBOUND_PPROF".into(), addr.to_string())],
            Profiler::V8 { dir } => {
                vec![("IOBOUND_V8_PROFILE_DIR".into(), dir.display().to_string())]
            }
        }
    }

    /// Removes the profiler's own folder once the contender has stopped.
    pub fn clean_up(&self) {
        if let Profiler::V8 { dir } = self {
            let _ = std::fs::remove_dir(dir);
        }
    }

    /// Starts profiling `pid` for about `length`; `file` is where JFR writes its recording.
    pub fn begin(&self, pid: i32, length: Duration, file: &Path) -> Result<Session> {
        match self {
            Profiler::Jfr { jdk_bin } => {
                let pid = pid.to_string();
                // Java frames of Spring's stacks run deeper than JFR's default 64.
                jcmd(jdk_bin, &[&pid, "JFR.configure", "stackdepth=256"])?;
                let filename = format!("filename={}", file.display());
                jcmd(
                    jdk_bin,
                    &[
                        &pid,
                        "JFR.start",
                        "name=iobound",
                        "settings=profile",
                        "jdk.VirtualThreadStart#enabled=true",
                        &filename,
                    ],
                )?;
                Ok(Session::Jfr {
                    jdk_bin: jdk_bin.clone(),
                    file: file.to_path_buf(),
                    pid: pid.parse().unwrap_or(0),
                })
            }
            Profiler::Pprof { addr } => {
                let (addr, seconds) = (*addr, length.as_secs().max(1));
                let fetch = std::thread::spawn(move || {
                    http_get(
                        addr,
                        &format!("/debug/pprof/profile?seconds={seconds}"),
                        Duration::from_secs(seconds + 20),
                    )
                });
                Ok(Session::Pprof { fetch })
            }
            Profiler::V8 { dir } => {
                for old in cpuprofiles(dir) {
                    let _ = std::fs::remove_file(old);
                }
                signal_usr2(pid)?;
                Ok(Session::V8 {
                    dir: dir.clone(),
                    pid,
                })
            }
        }
    }
}

impl Session {
    /// Stops the profile and writes its folded stacks to `folded`.
    pub fn end(self, folded: &Path) -> Result<ProfileRecord> {
        let (tool, stacks, virtual_threads) = match self {
            Session::Jfr { jdk_bin, file, pid } => {
                jcmd(&jdk_bin, &[&pid.to_string(), "JFR.stop", "name=iobound"])?;
                let text = run_text(
                    &jdk_bin.join("jfr"),
                    &[
                        "print",
                        "--events",
                        "jdk.ExecutionSample",
                        "--stack-depth",
                        "256",
                        &file.display().to_string(),
                    ],
                )?;
                let summary = run_text(
                    &jdk_bin.join("jfr"),
                    &["summary", &file.display().to_string()],
                )?;
                let _ = std::fs::remove_file(&file);
                (
                    "jfr",
                    fold_jfr(&text),
                    Some(jfr_event_count(&summary, "jdk.VirtualThreadStart")),
                )
            }
            Session::Pprof { fetch } => {
                let body = fetch
                    .join()
                    .map_err(|_| anyhow::anyhow!("the pprof fetch panicked"))??;
                let raw = folded.with_extension("pb.gz");
                std::fs::write(&raw, &body)?;
                let text = run_text(
                    Path::new("go"),
                    &["tool", "pprof", "-traces", &raw.display().to_string()],
                )
                .context("go tool pprof (Go must be on PATH)")?;
                let _ = std::fs::remove_file(&raw);
                ("pprof", fold_pprof_traces(&text), None)
            }
            Session::V8 { dir, pid } => {
                signal_usr2(pid)?;
                ("v8", collect_v8(&dir, pid)?, None)
            }
        };
        if stacks.is_empty() {
            bail!("the {tool} profile has no samples");
        }
        let mut lines: Vec<(String, u64)> = stacks.into_iter().collect();
        lines.sort();
        let mut out = String::new();
        for (stack, n) in &lines {
            out.push_str(&format!("{stack} {n}\n"));
        }
        crate::util::files::write_atomic(folded, out.as_bytes())?;
        let samples = lines.iter().map(|(_, n)| n).sum();
        Ok(ProfileRecord {
            tool: tool.into(),
            samples,
            period_ms: PERIOD_MS,
            folded: String::new(),
            hottest: hottest(&lines, 10),
            virtual_threads_started: virtual_threads,
        })
    }
}

/// Every process's .cpuprofile in `dir`, folded together: each process writes its profile
/// when its profiler has stopped (15 s at most).
fn collect_v8(dir: &Path, pid: i32) -> Result<HashMap<String, u64>> {
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut stacks = HashMap::new();
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let files = cpuprofiles(dir);
        if files.len() >= expected_v8_profiles(pid) || Instant::now() > deadline {
            for f in files {
                let text = std::fs::read_to_string(&f)?;
                for (k, v) in fold_v8(&text)? {
                    *stacks.entry(k).or_insert(0) += v;
                }
                let _ = std::fs::remove_file(f);
            }
            return Ok(stacks);
        }
    }
}

fn jcmd(jdk_bin: &Path, args: &[&str]) -> Result<String> {
    run_text(&jdk_bin.join("jcmd"), args)
}

fn run_text(program: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .with_context(|| format!("cannot run {}", program.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    if !out.status.success() {
        bail!(
            "{} {} failed: {}{}",
            program.display(),
            args.join(" "),
            stdout.trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(stdout)
}

fn signal_usr2(pid: i32) -> Result<()> {
    // SAFETY: kill with a valid signal number has no memory effects.
    if unsafe { libc::kill(pid, libc::SIGUSR2) } != 0 {
        bail!(
            "cannot signal the contender (pid {pid}): {}",
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}

fn cpuprofiles(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cpuprofile"))
        .collect();
    v.sort();
    v
}

/// A node process profiles itself, or (as a cluster's primary) its workers: one profile per
/// child process when it has any.
fn expected_v8_profiles(pid: i32) -> usize {
    let children =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    children.split_whitespace().count().max(1)
}

/// A blocking GET on a loopback address; the body of a 200 answer.
fn http_get(addr: SocketAddr, path: &str, timeout: Duration) -> Result<Vec<u8>> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .with_context(|| format!("cannot reach the contender's profiling endpoint at {addr}"))?;
    s.set_read_timeout(Some(timeout))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf)?;
    let split = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .context("the profiling endpoint sent no HTTP answer")?;
    let head = String::from_utf8_lossy(&buf[..split]).to_string();
    if !head.starts_with("HTTP/1.1 200") && !head.starts_with("HTTP/1.0 200") {
        bail!(
            "the profiling endpoint answered {}",
            head.lines().next().unwrap_or("")
        );
    }
    let body = buf[split + 4..].to_vec();
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return dechunk(&body);
    }
    Ok(body)
}

fn dechunk(mut b: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = b
            .windows(2)
            .position(|w| w == b"\r\n")
            .context("a malformed chunk")?;
        let size = usize::from_str_radix(
            std::str::from_utf8(&b[..eol])?
                .split(';')
                .next()
                .unwrap_or("")
                .trim(),
            16,
        )?;
        b = &b[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        out.extend_from_slice(b.get(..size).context("a truncated chunk")?);
        b = b.get(size + 2..).unwrap_or(&[]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_bodies_are_joined() {
        assert_eq!(
            dechunk(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n").unwrap(),
            b"abcde"
        );
    }
}
