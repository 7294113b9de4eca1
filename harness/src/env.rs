//! The environment a run happened in, recorded with its results, and the tools it needs
//! (a JDK >= 21), found the same way the launcher finds them.

use crate::results::Environment;
use std::path::{Path, PathBuf};
use std::process::Command;

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default().trim().to_string()
}

fn cpu_model() -> String {
    read("/proc/cpuinfo")
        .lines()
        .find_map(|l| l.strip_prefix("model name").map(|v| v.trim_start_matches([' ', '\t', ':']).to_string()))
        .unwrap_or_else(|| "unknown".into())
}

fn memory_gib() -> f64 {
    read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:").and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok()))
        .map(|kb| (kb / 1_048_576.0 * 10.0).round() / 10.0)
        .unwrap_or(0.0)
}

fn os_name() -> String {
    read("/etc/os-release")
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME=").map(|v| v.trim_matches('"').to_string()))
        .unwrap_or_else(|| "unknown".into())
}

fn git_commit(root: &Path) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(root).args(["rev-parse", "--short", "HEAD"]).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Major version of a `java` binary, from `java -version`.
pub fn java_version(java: &Path) -> Option<(u32, String)> {
    let out = Command::new(java).arg("-version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stderr).to_string();
    let first = text.lines().next()?.to_string();
    let quoted = first.split('"').nth(1)?;
    let major = quoted.split(['.', '-', '+']).next()?.parse().ok()?;
    Some((major, first))
}

/// A `java` of version >= 21: $IOBOUND_JAVA, $JAVA_HOME, then the newest under /usr/lib/jvm.
pub fn find_java() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Ok(j) = std::env::var("IOBOUND_JAVA") {
        candidates.push(PathBuf::from(j));
    }
    if let Ok(h) = std::env::var("JAVA_HOME") {
        candidates.push(Path::new(&h).join("bin/java"));
    }
    if let Ok(dir) = std::fs::read_dir("/usr/lib/jvm") {
        let mut found: Vec<_> = dir.flatten().map(|e| e.path().join("bin/java")).filter(|p| p.is_file()).collect();
        found.sort();
        found.reverse();
        candidates.extend(found);
    }
    let mut best: Option<(u32, PathBuf)> = None;
    for c in candidates {
        if let Some((major, _)) = java_version(&c) {
            if major >= 21 {
                // Explicit choices win; otherwise the newest.
                if std::env::var("IOBOUND_JAVA").is_ok() || std::env::var("JAVA_HOME").is_ok_and(|h| c.starts_with(h)) {
                    return Some(c);
                }
                if best.as_ref().is_none_or(|(m, _)| major > *m) {
                    best = Some((major, c));
                }
            }
        }
    }
    best.map(|(_, p)| p)
}

pub fn collect(root: &Path, java: Option<&Path>, plan: &crate::plan::Plan) -> Environment {
    let hostname = read("/proc/sys/kernel/hostname");
    Environment {
        hostname,
        os: os_name(),
        kernel: read("/proc/sys/kernel/osrelease"),
        cpu_model: cpu_model(),
        cpus_online: crate::util::online_cpus(),
        memory_gib: memory_gib(),
        java: java.and_then(java_version).map(|(_, s)| s),
        harness_version: env!("CARGO_PKG_VERSION").to_string(),
        git_commit: git_commit(root),
        contender_cpus: plan.contender_cpus.clone(),
        driver_cpus: plan.driver_cpus.clone(),
        driver_threads: plan.driver_threads,
        jvm_flags: crate::orchestrate::jvm_flags(plan),
        pinning: format!(
            "contender on CPU {} and the driver ({} thread(s)) on CPU {}, set with sched_setaffinity (as taskset -c)",
            crate::util::format_cpus(&plan.contender_cpus),
            plan.driver_threads,
            crate::util::format_cpus(&plan.driver_cpus)
        ),
        database: String::new(),
        kafka: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_this_machine() {
        assert!(cpu_model().len() > 2);
        assert!(memory_gib() > 0.1);
        assert!(!os_name().is_empty());
    }
}
