//! A CPU profile of the contender during a measured run (`--profile`), with each runtime's own
//! profiler: JFR for the JVMs (`jcmd JFR.start`/`JFR.stop`, execution samples every 10 ms, plus
//! a count of virtual threads started), pprof for Go (the contender's loopback-only
//! `/debug/pprof/profile`, served only when `IOBOUND_PPROF` names an address), V8's CPU
//! profiler for Node (node:inspector in every process, started and stopped by SIGUSR2, sampling
//! every 10 ms). Each becomes folded stacks ("root;...;leaf count" per line, the format
//! flamegraph.pl and speedscope read), which the report draws as a flame graph.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Sampling period of every profiler here (JFR's `profile` settings and Go's default are
/// 10 ms; V8 is set to it).
pub const PERIOD_MS: f64 = 10.0;

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

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HotFrame {
    pub frame: String,
    /// Share of all samples, in %.
    pub self_pct: f64,
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
                // Each process writes its profile when its profiler has stopped.
                let deadline = Instant::now() + Duration::from_secs(15);
                let mut stacks = HashMap::new();
                loop {
                    std::thread::sleep(Duration::from_millis(300));
                    let files = cpuprofiles(&dir);
                    let expected = expected_v8_profiles(pid);
                    if files.len() >= expected || Instant::now() > deadline {
                        for f in files {
                            let text = std::fs::read_to_string(&f)?;
                            for (k, v) in fold_v8(&text)? {
                                *stacks.entry(k).or_insert(0) += v;
                            }
                            let _ = std::fs::remove_file(f);
                        }
                        break;
                    }
                }
                ("v8", stacks, None)
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

/// The frames most often on top of the stack.
pub fn hottest(lines: &[(String, u64)], n: usize) -> Vec<HotFrame> {
    let total: u64 = lines.iter().map(|(_, c)| c).sum();
    let mut by_leaf: HashMap<&str, u64> = HashMap::new();
    for (stack, c) in lines {
        *by_leaf
            .entry(stack.rsplit(';').next().unwrap_or(stack))
            .or_insert(0) += c;
    }
    let mut v: Vec<_> = by_leaf.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v.into_iter()
        .take(n)
        .map(|(f, c)| HotFrame {
            frame: f.to_string(),
            self_pct: 100.0 * c as f64 / total.max(1) as f64,
        })
        .collect()
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

/// `jfr print --events jdk.ExecutionSample` text: each event's `stackTrace = [ ... ]` lists
/// frames leaf first, as "pkg.Class.method(Args) line: N".
pub fn fold_jfr(text: &str) -> HashMap<String, u64> {
    let mut stacks = HashMap::new();
    let mut frames: Option<Vec<String>> = None;
    for line in text.lines() {
        let t = line.trim();
        if t == "stackTrace = [" {
            frames = Some(Vec::new());
        } else if t == "]" {
            if let Some(f) = frames.take().filter(|f| !f.is_empty()) {
                *stacks.entry(join_leaf_first(&f)).or_insert(0) += 1;
            }
        } else if let Some(f) = frames.as_mut() {
            if t != "..." {
                let name = t.split(" line:").next().unwrap_or(t);
                let name = name.split('(').next().unwrap_or(name);
                f.push(clean(name));
            }
        }
    }
    stacks
}

/// The count of one event type in `jfr summary`.
pub fn jfr_event_count(summary: &str, event: &str) -> u64 {
    summary
        .lines()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some(event))
                .then(|| w.next().and_then(|n| n.parse().ok()))
                .flatten()
        })
        .unwrap_or(0)
}

/// `go tool pprof -traces`: blocks separated by dashes, the first line "<value> <leaf>", then
/// callers one per line; the value is CPU time (10ms, 1.20s).
pub fn fold_pprof_traces(text: &str) -> HashMap<String, u64> {
    let mut stacks = HashMap::new();
    for block in text.split("-----------+").skip(1) {
        let mut lines = block.lines().skip(1).filter(|l| !l.trim().is_empty());
        let Some(first) = lines.next() else { continue };
        let mut parts = first.split_whitespace();
        let Some(ms) = parts.next().and_then(pprof_ms) else {
            continue;
        };
        let leaf: String = parts.collect::<Vec<_>>().join(" ");
        let mut frames = vec![clean(leaf.trim_end_matches(" (inline)"))];
        frames.extend(lines.map(|l| clean(l.trim().trim_end_matches(" (inline)"))));
        let samples = (ms / PERIOD_MS).round().max(1.0) as u64;
        *stacks.entry(join_leaf_first(&frames)).or_insert(0) += samples;
    }
    stacks
}

fn pprof_ms(v: &str) -> Option<f64> {
    let (num, scale) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = v.strip_suffix("us").or_else(|| v.strip_suffix("µs")) {
        (n, 0.001)
    } else if let Some(n) = v.strip_suffix("ns") {
        (n, 1e-6)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1000.0)
    } else {
        return None;
    };
    num.parse::<f64>().ok().map(|x| x * scale)
}

/// A V8 .cpuprofile: nodes (id, callFrame, children) and the node id of every sample.
pub fn fold_v8(json: &str) -> Result<HashMap<String, u64>> {
    #[derive(Deserialize)]
    struct Frame {
        #[serde(rename = "functionName")]
        function: String,
        url: String,
    }
    #[derive(Deserialize)]
    struct Node {
        id: u64,
        #[serde(rename = "callFrame")]
        frame: Frame,
        #[serde(default)]
        children: Vec<u64>,
    }
    #[derive(Deserialize)]
    struct Prof {
        nodes: Vec<Node>,
        #[serde(default)]
        samples: Vec<u64>,
    }
    let p: Prof = serde_json::from_str(json).context("not a V8 CPU profile")?;
    let mut parent = HashMap::new();
    let mut name = HashMap::new();
    for n in &p.nodes {
        for c in &n.children {
            parent.insert(*c, n.id);
        }
        let file = n.frame.url.rsplit('/').next().unwrap_or("");
        let f = if n.frame.function.is_empty() {
            "(anonymous)"
        } else {
            &n.frame.function
        };
        name.insert(
            n.id,
            if file.is_empty() {
                clean(f)
            } else {
                clean(&format!("{f} {file}"))
            },
        );
    }
    let mut counts: HashMap<u64, u64> = HashMap::new();
    for s in &p.samples {
        *counts.entry(*s).or_insert(0) += 1;
    }
    let mut stacks = HashMap::new();
    for (id, c) in counts {
        let mut frames = Vec::new();
        let mut at = Some(id);
        while let Some(i) = at {
            let n = &name[&i];
            // V8's synthetic root carries no code.
            if n != "(root)" {
                frames.push(n.clone());
            }
            at = parent.get(&i).copied();
        }
        if !frames.is_empty() {
            *stacks.entry(join_leaf_first(&frames)).or_insert(0) += c;
        }
    }
    Ok(stacks)
}

/// Frames are joined root first with ';', so a frame may contain neither ';' nor a newline.
fn clean(f: &str) -> String {
    f.replace([';', '\n'], ",").trim().to_string()
}

fn join_leaf_first(frames: &[String]) -> String {
    frames.iter().rev().cloned().collect::<Vec<_>>().join(";")
}

/// Reads folded stacks back.
pub fn read_folded(path: &Path) -> Result<Vec<(String, u64)>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(text
        .lines()
        .filter_map(|l| {
            l.rsplit_once(' ')
                .and_then(|(s, n)| n.parse().ok().map(|n| (s.to_string(), n)))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jfr_text_folds_root_first() {
        let text = "jdk.ExecutionSample {\n  stackTrace = [\n    java.security.MessageDigest.digest(byte[]) line: 12\n    app.Hash.handle(Request) line: 40\n    java.lang.Thread.run() line: 1\n  ]\n}\n\njdk.ExecutionSample {\n  stackTrace = [\n    java.security.MessageDigest.digest(byte[]) line: 12\n    app.Hash.handle(Request) line: 41\n    java.lang.Thread.run() line: 1\n    ...\n  ]\n}\n";
        let s = fold_jfr(text);
        assert_eq!(s.len(), 1);
        assert_eq!(
            s["java.lang.Thread.run;app.Hash.handle;java.security.MessageDigest.digest"],
            2
        );
        assert_eq!(
            jfr_event_count(
                " jdk.VirtualThreadStart                   3300         42900\n",
                "jdk.VirtualThreadStart"
            ),
            3300
        );
        assert_eq!(jfr_event_count("nothing\n", "jdk.VirtualThreadStart"), 0);
    }

    #[test]
    fn pprof_traces_fold_with_their_cpu_time() {
        let text = "File: go-server\nType: cpu\n-----------+-------\n      30ms   crypto/sha512.block\n             main.hashHandler (inline)\n             net/http.(*conn).serve\n-----------+-------\n     1.20s   runtime.futex\n-----------+-------\n";
        let s = fold_pprof_traces(text);
        assert_eq!(
            s["net/http.(*conn).serve;main.hashHandler;crypto/sha512.block"],
            3
        );
        assert_eq!(s["runtime.futex"], 120);
    }

    #[test]
    fn v8_profiles_fold_by_parent_links() {
        let json = r#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","url":""},"children":[2]},
            {"id":2,"callFrame":{"functionName":"handle","url":"file:///x/server.js"},"children":[3]},
            {"id":3,"callFrame":{"functionName":"digest","url":"node:crypto"}}],"samples":[3,3,2]}"#;
        let s = fold_v8(json).unwrap();
        assert_eq!(s["handle server.js;digest node:crypto"], 2);
        assert_eq!(s["handle server.js"], 1);
        let hot = hottest(&s.into_iter().collect::<Vec<_>>(), 1);
        assert_eq!(hot[0].frame, "digest node:crypto");
        assert!((hot[0].self_pct - 66.67).abs() < 0.1);
    }

    #[test]
    fn chunked_bodies_are_joined() {
        assert_eq!(
            dechunk(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n").unwrap(),
            b"abcde"
        );
    }
}
