//! A cgroup of the contender's own, as a container runtime gives it one: a CPU quota (CFS,
//! over the standard 100 ms period) and a hard memory limit without swap, every process the
//! contender forks inside it, and what the limits did, read from the kernel's own accounting
//! (CPU used, periods throttled, memory peak, OOM kills). Made for one run and removed after
//! it, whatever way the run ends (Drop, the interrupt handler, and a sweep of dead runs').
//!
//! Written on the files themselves: cgroups-rs (the maintained crate) picks v1 or v2 by the
//! mount type of /sys/fs/cgroup and brings nix, zbus and a D-Bus client; this machine mounts an
//! empty v2 hierarchy beside v1 cpu and memory, so the choice here is by the controllers each
//! hierarchy lists, and a dozen files are all a run needs.

use super::cgroup_accounting::Reader;
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The CFS period a quota is spent over (Kubernetes' and Docker's default).
pub const PERIOD_US: u64 = 100_000;
/// The folder under each hierarchy's root that holds iobound's cgroups.
pub const PARENT: &str = "iobound";

/// The limits of one contender's runs; None: not limited (the cgroup still accounts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// CPUs of quota per period: 0.5 = 50 ms of CPU every 100 ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<f64>,
    /// Bytes of memory, swap off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
}

impl Limits {
    pub fn any(&self) -> bool {
        self.cpus.is_some() || self.memory_bytes.is_some()
    }

    /// "quota 0.5 CPU, memory 512 MB", for start lines and reports.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(c) = self.cpus {
            parts.push(format!("quota {c} CPU"));
        }
        if let Some(m) = self.memory_bytes {
            parts.push(format!("memory {} MB", m / (1 << 20)));
        }
        parts.join(", ")
    }

    /// ", quota 0.5 CPU, memory 512 MB" to end a start line, or nothing when not limited.
    pub fn start_line_suffix(&self) -> String {
        if self.any() {
            format!(", {}", self.describe())
        } else {
            String::new()
        }
    }
}

/// Where the cpu and memory controllers live.
#[derive(Debug, Clone, PartialEq)]
pub enum Layout {
    /// One unified (v2) hierarchy lists both controllers.
    V2 { root: PathBuf },
    /// v1 hierarchies, each its own mount (or shared: `cpu,cpuacct`).
    V1 {
        cpu: PathBuf,
        cpuacct: PathBuf,
        memory: PathBuf,
    },
}

impl Layout {
    /// This machine's layout, from /proc/self/mountinfo and each v2 mount's
    /// cgroup.controllers.
    pub fn detect() -> Result<Layout> {
        let mounts = fs::read_to_string("/proc/self/mountinfo")
            .context("cannot read /proc/self/mountinfo")?;
        Layout::from_mounts(&mounts, |p| fs::read_to_string(p).ok())
    }

    /// The layout `mountinfo` describes: a v2 hierarchy whose cgroup.controllers (read with
    /// `read`) lists cpu and memory wins; else the v1 mounts of cpu, cpuacct and memory.
    pub fn from_mounts(mountinfo: &str, read: impl Fn(&Path) -> Option<String>) -> Result<Layout> {
        let mut v1: Vec<(PathBuf, Vec<String>)> = Vec::new();
        for line in mountinfo.lines() {
            let Some((left, right)) = line.split_once(" - ") else {
                continue;
            };
            let mount = left.split(' ').nth(4).map(PathBuf::from);
            let mut r = right.split(' ');
            let (fstype, options) = (r.next(), r.nth(1).unwrap_or(""));
            match (fstype, mount) {
                (Some("cgroup2"), Some(m)) => {
                    let listed = read(&m.join("cgroup.controllers")).unwrap_or_default();
                    let has = |c: &str| listed.split_whitespace().any(|x| x == c);
                    if has("cpu") && has("memory") {
                        return Ok(Layout::V2 { root: m });
                    }
                }
                (Some("cgroup"), Some(m)) => {
                    v1.push((m, options.split(',').map(str::to_string).collect()));
                }
                _ => {}
            }
        }
        let find = |c: &str| {
            v1.iter()
                .find(|(_, opts)| opts.iter().any(|o| o == c))
                .map(|(m, _)| m.clone())
        };
        match (find("cpu"), find("cpuacct"), find("memory")) {
            (Some(cpu), Some(cpuacct), Some(memory)) => Ok(Layout::V1 {
                cpu,
                cpuacct,
                memory,
            }),
            _ => bail!(
                "no cgroup hierarchy here holds the cpu and memory controllers (neither a cgroup2 \
                 mount listing both in cgroup.controllers, nor cgroup v1 mounts of cpu, cpuacct \
                 and memory): CPU quotas and memory limits need them"
            ),
        }
    }

    /// The hierarchies' roots, each holding a PARENT folder of iobound's cgroups.
    pub fn roots(&self) -> Vec<PathBuf> {
        match self {
            Layout::V2 { root } => vec![root.clone()],
            Layout::V1 {
                cpu,
                cpuacct,
                memory,
            } => {
                let mut r = vec![cpu.clone(), cpuacct.clone(), memory.clone()];
                r.dedup();
                r
            }
        }
    }
}

/// One contender's cgroup: a directory per hierarchy, removed on drop.
#[derive(Debug)]
pub struct Cgroup {
    pub layout: Layout,
    pub name: String,
    pub limits: Limits,
    dirs: Vec<PathBuf>,
}

impl Cgroup {
    /// Makes `PARENT/name` in every hierarchy and writes the limits. `name` should begin
    /// with the harness's pid (`sweep_stale` removes those of dead harnesses).
    pub fn create(layout: &Layout, name: &str, limits: Limits) -> Result<Cgroup> {
        anyhow::ensure!(
            !name.is_empty() && !name.contains(['/', '\0']) && name != "." && name != "..",
            "cgroup name {name:?} must be one path component"
        );
        let mut cg = Cgroup {
            layout: layout.clone(),
            name: name.to_string(),
            limits,
            dirs: Vec::new(),
        };
        for root in layout.roots() {
            let parent = root.join(PARENT);
            // Another run (or test) may be making it at the same moment.
            match fs::create_dir(&parent) {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                    return Err(e).with_context(|| format!("cannot create {}", parent.display()));
                }
                _ => {}
            }
            if let Layout::V2 { .. } = layout {
                // A child's cpu and memory files exist only once its parent delegates them.
                write(&root.join("cgroup.subtree_control"), "+cpu +memory")?;
                write(&parent.join("cgroup.subtree_control"), "+cpu +memory")?;
            }
            let dir = parent.join(name);
            fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
            cg.dirs.push(dir);
        }
        cg.write_limits()?;
        Ok(cg)
    }

    pub(crate) fn write_limits(&self) -> Result<()> {
        let quota = self
            .limits
            .cpus
            .map(|c| ((c * PERIOD_US as f64).round() as u64).max(1000));
        match &self.layout {
            Layout::V2 { .. } => {
                let dir = &self.v1_dir("cpu");
                let q = quota.map_or("max".to_string(), |q| q.to_string());
                write(&dir.join("cpu.max"), &format!("{q} {PERIOD_US}"))?;
                if let Some(m) = self.limits.memory_bytes {
                    write(&dir.join("memory.max"), &m.to_string())?;
                    write_if_present(&dir.join("memory.swap.max"), "0")?;
                }
            }
            Layout::V1 { .. } => {
                let cpu = self.v1_dir("cpu");
                write(&cpu.join("cpu.cfs_period_us"), &PERIOD_US.to_string())?;
                let q = quota.map_or("-1".to_string(), |q| q.to_string());
                write(&cpu.join("cpu.cfs_quota_us"), &q)?;
                if let Some(m) = self.limits.memory_bytes {
                    let mem = self.v1_dir("memory");
                    write(&mem.join("memory.limit_in_bytes"), &m.to_string())?;
                    // Swap off: memory + swap may not exceed memory (where swap is accounted).
                    write_if_present(&mem.join("memory.memsw.limit_in_bytes"), &m.to_string())?;
                    write_if_present(&mem.join("memory.swappiness"), "0")?;
                }
            }
        }
        Ok(())
    }

    /// The directory of a v1 controller (or the v2 directory).
    fn v1_dir(&self, controller: &str) -> PathBuf {
        match &self.layout {
            Layout::V2 { root } => root.join(PARENT).join(&self.name),
            Layout::V1 {
                cpu,
                cpuacct,
                memory,
            } => {
                let root = match controller {
                    "cpu" => cpu,
                    "cpuacct" => cpuacct,
                    _ => memory,
                };
                root.join(PARENT).join(&self.name)
            }
        }
    }

    /// Its directories, one per hierarchy (empty once removed).
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The cgroup.procs files a process writes "0" to, to join (before it execs).
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.join("cgroup.procs")).collect()
    }

    /// A reader of what the limits did, for the sampler's thread.
    pub fn reader(&self) -> Reader {
        Reader {
            v2: matches!(self.layout, Layout::V2 { .. }),
            cpu: self.v1_dir("cpu"),
            cpuacct: self.v1_dir("cpuacct"),
            memory: self.v1_dir("memory"),
        }
    }

    /// The processes still in it.
    pub fn pids(&self) -> Vec<i32> {
        let mut pids: Vec<i32> = self
            .procs_files()
            .iter()
            .filter_map(|f| fs::read_to_string(f).ok())
            .flat_map(|s| {
                s.lines()
                    .filter_map(|l| l.trim().parse().ok())
                    .collect::<Vec<_>>()
            })
            .collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    /// Kills whatever is left in it (a worker that left the process group included) and
    /// removes its directories.
    pub fn remove(&mut self) -> Result<()> {
        let dirs = std::mem::take(&mut self.dirs);
        remove_dirs(&dirs)
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        if let Err(e) = self.remove() {
            eprintln!("iobound: warning: {e:#}");
        }
    }
}

/// SIGKILL to every process in `dirs`, then rmdir each once it is empty (a killed process
/// leaves its cgroup a moment after the signal).
pub(crate) fn remove_dirs(dirs: &[PathBuf]) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(5);
    for dir in dirs {
        loop {
            let procs = fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
            for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                // SAFETY: a plain signal to a process in the run's own cgroup.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            match fs::remove_dir(dir) {
                Ok(()) => break,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(e) if Instant::now() >= deadline => {
                    return Err(anyhow!("cannot remove the cgroup {}: {e}", dir.display()))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
    Ok(())
}

/// A cgroup of its own for contender `name`, named after this process's pid so that a later
/// run removes it if this one dies before it can. With limits it is required (an error where
/// none can be made). Without, it is made where it can be: it counts the contender's CPU
/// exactly, every process it forks included, and stopping it kills them all; where none can be
/// made (not root, no cpu and memory controllers) the process group does that job and /proc
/// counts.
pub fn own(name: &str, limits: Limits) -> Result<Option<Cgroup>> {
    let make = || -> Result<Cgroup> {
        let layout = Layout::detect()?;
        sweep_stale(&layout);
        let id = format!(
            "{}-{name}-{}",
            std::process::id(),
            crate::util::numbers::random_hex(4)?
        );
        Cgroup::create(&layout, &id, limits)
    };
    if limits.any() {
        make().map(Some)
    } else {
        Ok(make().ok())
    }
}

/// Removes the cgroups of harnesses that are gone (a crash, a SIGKILL): every `PARENT/<pid>-*`
/// whose pid is not a live process. Returns how many it removed.
pub fn sweep_stale(layout: &Layout) -> usize {
    let mut removed = 0;
    for root in layout.roots() {
        let Ok(entries) = fs::read_dir(root.join(PARENT)) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let pid = name.split('-').next().and_then(|p| p.parse::<i32>().ok());
            let alive = pid.is_some_and(|p| Path::new(&format!("/proc/{p}")).exists());
            if pid.is_some() && !alive && remove_dirs(&[e.path()]).is_ok() {
                removed += 1;
            }
        }
    }
    removed
}

/// The cgroup directories the harness with process id `pid` made and still has, in every
/// hierarchy (none once its runs have ended).
pub fn made_by(layout: &Layout, pid: u32) -> Vec<PathBuf> {
    let prefix = format!("{pid}-");
    layout
        .roots()
        .iter()
        .filter_map(|r| fs::read_dir(r.join(PARENT)).ok())
        .flat_map(|entries| entries.flatten().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
        })
        .collect()
}

fn write(path: &Path, value: &str) -> Result<()> {
    fs::write(path, value).with_context(|| format!("cannot write {value:?} to {}", path.display()))
}

fn write_if_present(path: &Path, value: &str) -> Result<()> {
    if path.exists() {
        write(path, value)?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "cgroup_tests.rs"]
mod tests;
