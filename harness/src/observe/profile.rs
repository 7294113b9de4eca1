//! A CPU profile of the contender during a measured run (`--profile`), with each runtime's own
//! profiler: JFR for the JVMs (`jcmd JFR.start`/`JFR.stop`, execution samples every 10 ms, plus
//! a count of virtual threads started), pprof for Go (the contender's loopback-only
//! `/debug/pprof/profile`, served only when `IOBOUND_PPROF` names an address), V8's CPU
//! profiler for Node (node:inspector in every process, started and stopped by SIGUSR2, sampling
//! every 10 ms). Each becomes folded stacks ("root;...;leaf count" per line, the format
//! flamegraph.pl and speedscope read), which the report draws as a flame graph.

pub use super::profile_place::Place;
use super::stacks::{fold_jfr, fold_pprof_traces, fold_v8, jfr_event_count, PERIOD_MS};
use crate::results::profile::hottest;
use crate::results::profile::ProfileRecord;
use anyhow::{bail, Context, Result};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// JFR's recording of the measured run, and the one that runs through a led-in warm-up before it
/// (`Profiler::prime`), whose data is discarded.
const MEASURED_RECORDING: &str = "iobound";
const WARM_RECORDING: &str = "iobound-warm";

/// Which profiler a contender gets, and where it runs (this machine or its host).
#[derive(Clone)]
pub struct Profiler {
    kind: Kind,
    place: Place,
    /// A folder at that place for the profiler's raw files (JFR's recordings, V8's
    /// .cpuprofile files), removed once the contender has stopped.
    work: PathBuf,
}

#[derive(Debug, Clone)]
enum Kind {
    Jfr { jdk_bin: PathBuf },
    Pprof { addr: SocketAddr },
    V8,
}

/// A profile being taken.
pub struct Session {
    place: Place,
    taking: Taking,
}

enum Taking {
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

/// A profile of one run, not started yet (run/kinds/profiling.rs).
pub struct Start {
    pub profiler: Profiler,
    pub pid: i32,
    pub length: Duration,
    /// Names the profiler's raw files.
    pub file: String,
    /// The profile's folded stacks, without their extension, under the results directory.
    pub stem: String,
    pub contender: String,
    /// Whether `Profiler::prime` started a recording for the warm-up.
    pub primed: bool,
}

/// The profile of a led-in run: due until its warm-up has ended, then starting on a thread of
/// its own.
pub enum Ahead {
    Due(Start),
    Starting(std::thread::JoinHandle<Profiling>),
}

/// A profile being taken, and its folded stacks' stem.
pub type Profiling = Option<(Session, String)>;

impl Start {
    /// Starts the profiler (one that cannot start costs the run nothing but its profile: a
    /// warning says why).
    pub fn begin(self) -> Profiling {
        match self
            .profiler
            .begin(self.pid, self.length, &self.file, self.primed)
        {
            Ok(session) => Some((session, self.stem)),
            Err(e) => {
                eprintln!(
                    "[{}] warning: the profiler did not start: {e:#}",
                    self.contender
                );
                None
            }
        }
    }
}

impl Profiler {
    /// The profiler for a contender whose manifest says `profiler = KIND`, at `place`: `java`
    /// is the JDK that starts the contender there, `work` a folder there for the profiler's raw
    /// files, `pprof_port` a port free on that place's loopback.
    pub fn new(
        kind: &str,
        java: Option<&Path>,
        work: &Path,
        place: Place,
        pprof_port: u16,
    ) -> Result<Profiler> {
        // The profiler's files are named to the contender, whose working directory is its own
        // folder: a relative path (a relative --out) would land there, or nowhere.
        let work = match place {
            Place::Here => std::path::absolute(work)
                .with_context(|| format!("the profiler's folder {}", work.display()))?,
            Place::Host { .. } => work.to_path_buf(),
        };
        place.make_dir(&work)?;
        let kind = match kind {
            "jfr" => {
                let java = java.context("JFR profiles need the JDK that starts the contender")?;
                let jdk_bin = java.parent().map(Path::to_path_buf).unwrap_or_default();
                for tool in ["jcmd", "jfr"] {
                    if !place.executable(&jdk_bin.join(tool)) {
                        bail!(
                            "--profile: {} has no {tool}; a full JDK (not a JRE) is needed",
                            jdk_bin.display()
                        );
                    }
                }
                Kind::Jfr { jdk_bin }
            }
            "pprof" => Kind::Pprof {
                addr: SocketAddr::from(([127, 0, 0, 1], pprof_port)),
            },
            "v8" => Kind::V8,
            other => bail!("profiler {other:?} is unknown; use \"jfr\", \"pprof\" or \"v8\""),
        };
        Ok(Profiler { kind, place, work })
    }

    /// Environment the contender starts with so that it can be profiled later.
    pub fn env(&self) -> Vec<(String, String)> {
        match &self.kind {
            Kind::Jfr { .. } => Vec::new(),
            Kind::Pprof { addr } => vec![("IOBOUND_PPROF".into(), addr.to_string())],
            Kind::V8 => vec![(
                "IOBOUND_V8_PROFILE_DIR".into(),
                self.work.display().to_string(),
            )],
        }
    }

    /// Removes the profiler's own folder once the contender has stopped.
    pub fn clean_up(&self) {
        self.place.remove(&self.work);
    }

    /// Before a led-in run's warm-up: a JFR recording with the measured one's settings, so
    /// that what starting one sets off in the JVM (JFR's event classes instrumented, the
    /// methods they touch compiled again: the JIT threads busy for two or three seconds) is
    /// over before steady state is judged, and the measured recording that follows changes
    /// nothing. Discarded once that one has started (`begin` with `primed`). The other
    /// profilers need none.
    pub fn prime(&self, pid: i32) -> Result<()> {
        let Kind::Jfr { jdk_bin } = &self.kind else {
            return Ok(());
        };
        jfr_start(&self.place, jdk_bin, pid, WARM_RECORDING, None, true)
    }

    /// Starts profiling `pid` for about `length`; `name` names its raw files. `primed`: a
    /// recording was started by `prime`, and is discarded once this one runs.
    pub fn begin(&self, pid: i32, length: Duration, name: &str, primed: bool) -> Result<Session> {
        let place = self.place.clone();
        let file = self.work.join(format!("{name}.jfr"));
        let taking = match &self.kind {
            Kind::Jfr { jdk_bin } => {
                jfr_start(
                    &place,
                    jdk_bin,
                    pid,
                    MEASURED_RECORDING,
                    Some(&file),
                    !primed,
                )?;
                if primed {
                    let stop = format!("name={WARM_RECORDING}");
                    place.run(
                        &jdk_bin.join("jcmd"),
                        &[&pid.to_string(), "JFR.stop", &stop],
                    )?;
                }
                Taking::Jfr {
                    jdk_bin: jdk_bin.clone(),
                    file,
                    pid,
                }
            }
            Kind::Pprof { addr } => {
                let (addr, seconds) = (*addr, pprof_seconds(length));
                let there = place.clone();
                let fetch = std::thread::spawn(move || {
                    there.http_get(
                        addr,
                        &format!("/debug/pprof/profile?seconds={seconds}"),
                        Duration::from_secs(seconds + 20),
                    )
                });
                Taking::Pprof { fetch }
            }
            Kind::V8 => {
                for old in place.list(&self.work, "cpuprofile") {
                    place.remove(&old);
                }
                place.signal_usr2(pid)?;
                Taking::V8 {
                    dir: self.work.clone(),
                    pid,
                }
            }
        };
        Ok(Session { place, taking })
    }
}

impl Session {
    /// Stops the profile and writes its folded stacks to `folded` (on this machine).
    pub fn end(self, folded: &Path) -> Result<ProfileRecord> {
        let place = self.place;
        let (tool, stacks, virtual_threads) = match self.taking {
            Taking::Jfr { jdk_bin, file, pid } => {
                let jfr = jdk_bin.join("jfr");
                let recording = file.display().to_string();
                let stop = format!("name={MEASURED_RECORDING}");
                place.run(
                    &jdk_bin.join("jcmd"),
                    &[&pid.to_string(), "JFR.stop", &stop],
                )?;
                let text = place.run(
                    &jfr,
                    &[
                        "print",
                        "--events",
                        "jdk.ExecutionSample",
                        "--stack-depth",
                        "256",
                        &recording,
                    ],
                )?;
                let summary = place.run(&jfr, &["summary", &recording])?;
                place.remove(&file);
                (
                    "jfr",
                    fold_jfr(&text),
                    Some(jfr_event_count(&summary, "jdk.VirtualThreadStart")),
                )
            }
            Taking::Pprof { fetch } => {
                let body = fetch
                    .join()
                    .map_err(|_| anyhow::anyhow!("the pprof fetch panicked"))??;
                let raw = folded.with_extension("pb.gz");
                std::fs::write(&raw, &body)?;
                let text = Place::Here
                    .run(
                        Path::new("go"),
                        &["tool", "pprof", "-traces", &raw.display().to_string()],
                    )
                    .context("go tool pprof (Go must be on PATH)")?;
                let _ = std::fs::remove_file(&raw);
                ("pprof", fold_pprof_traces(&text), None)
            }
            Taking::V8 { dir, pid } => {
                place.signal_usr2(pid)?;
                ("v8", collect_v8(&place, &dir, pid)?, None)
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
fn collect_v8(place: &Place, dir: &Path, pid: i32) -> Result<HashMap<String, u64>> {
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut stacks = HashMap::new();
    let expected = expected_v8_profiles(place, pid);
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let files = place.list(dir, "cpuprofile");
        if files.len() >= expected || Instant::now() > deadline {
            for f in files {
                let text = place.read(&f)?;
                for (k, v) in fold_v8(&text)? {
                    *stacks.entry(k).or_insert(0) += v;
                }
                place.remove(&f);
            }
            return Ok(stacks);
        }
    }
}

/// A node process profiles itself, or (as a cluster's primary) its workers: one profile per
/// child process when it has any.
fn expected_v8_profiles(place: &Place, pid: i32) -> usize {
    let children = place
        .read(Path::new(&format!("/proc/{pid}/task/{pid}/children")))
        .unwrap_or_default();
    children.split_whitespace().count().max(1)
}

/// Starts JFR recording `name` in `pid` with the profile settings and a count of virtual threads
/// started, written to `file` when it stops (discarded when None); `configure`: the JVM's first
/// recording, whose stack depth is set first.
fn jfr_start(
    place: &Place,
    jdk_bin: &Path,
    pid: i32,
    name: &str,
    file: Option<&Path>,
    configure: bool,
) -> Result<()> {
    let jcmd = jdk_bin.join("jcmd");
    let pid_arg = pid.to_string();
    if configure {
        // Java frames of Spring's stacks run deeper than JFR's default 64.
        place.run(&jcmd, &[&pid_arg, "JFR.configure", "stackdepth=256"])?;
    }
    let name = format!("name={name}");
    let mut args = vec![
        pid_arg.as_str(),
        "JFR.start",
        &name,
        "settings=profile",
        "jdk.VirtualThreadStart#enabled=true",
    ];
    let filename = file.map(|f| format!("filename={}", f.display()));
    args.extend(filename.as_deref());
    place.run(&jcmd, &args)?;
    Ok(())
}

/// How long Go's CPU profile is asked to run (pprof takes whole seconds) for a window of
/// `length`: a led-in run's window opens at the next whole second after the profiler has
/// started, so the profile, begun at the warm-up's end, runs a second more to cover the
/// window's end (it took `length` truncated and ended up to a second before the load did).
/// The extra second is the warm-up's, on the same load at steady state, or, in a run not led
/// in, after the load, when a Go server idles and adds no CPU sample.
fn pprof_seconds(length: Duration) -> u64 {
    length.as_secs_f64().ceil() as u64 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gos_profile_outlasts_the_window_it_was_started_for() {
        let s = |ms: u64| pprof_seconds(Duration::from_millis(ms));
        assert_eq!((s(4_000), s(4_200), s(300), s(0)), (5, 6, 2, 1));
    }

    #[test]
    fn a_relative_folder_is_named_to_the_contender_in_full() {
        let tmp = tempfile::tempdir().unwrap();
        // The same folder, named from the test's working directory.
        let up = std::env::current_dir().unwrap().components().count() - 1;
        let relative: PathBuf = std::iter::repeat_n(Path::new(".."), up)
            .collect::<PathBuf>()
            .join(tmp.path().strip_prefix("/").unwrap())
            .join("profiles");
        assert!(relative.is_relative());
        let p = Profiler::new("v8", None, &relative, Place::Here, 0).unwrap();
        let env = p.env();
        let named = Path::new(&env[0].1);
        assert!(named.is_absolute(), "{env:?}");
        assert!(named.is_dir(), "{env:?}");
        assert_eq!(
            named.canonicalize().unwrap(),
            tmp.path().join("profiles").canonicalize().unwrap()
        );
    }
}
