//! The environment a run happened in, recorded with its results: the machine, the pinning,
//! the JVM flags, the services.

use crate::services::jdk::java_version;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Command;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Environment {
    pub hostname: String,
    pub os: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpus_online: usize,
    pub memory_gib: f64,
    pub java: Option<String>,
    pub harness_version: String,
    pub git_commit: Option<String>,
    pub contender_cpus: Vec<usize>,
    pub driver_cpus: Vec<usize>,
    /// Where PostgreSQL, Kafka and the downstream service ran.
    #[serde(default)]
    pub services_cpus: Vec<usize>,
    pub driver_threads: usize,
    pub jvm_flags: Vec<String>,
    pub pinning: String,
    /// The PostgreSQL behind /messages, and the pool each contender gets.
    #[serde(default)]
    pub database: String,
    /// The Kafka broker behind pipeline scenarios (empty when none ran).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kafka: String,
    /// With `--hosts`: the hosts the load came from, and the contender host it went to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remote_hosts: Vec<RemoteHost>,
}

/// A host of the inventory a run used.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RemoteHost {
    pub name: String,
    pub address: String,
    pub role: String,
    /// CPUs its driver was pinned to (empty: not pinned).
    #[serde(default)]
    pub cpus: Vec<usize>,
    /// How far its clock was ahead of this machine's when the run began (ms).
    pub clock_offset_ms: f64,
    /// The contender host: the network namespace its sampler ran in (`/proc/self/ns/net`
    /// there), which says the figures were read where the server runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_namespace: Option<String>,
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn cpu_model() -> String {
    read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn memory_gib() -> f64 {
    read("/proc/meminfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("MemTotal:")
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map(|kb| (kb / 1_048_576.0 * 10.0).round() / 10.0)
        .unwrap_or(0.0)
}

fn os_name() -> String {
    read("/etc/os-release")
        .lines()
        .find_map(|l| {
            l.strip_prefix("PRETTY_NAME=")
                .map(|v| v.trim_matches('"').to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn git_commit(root: &Path) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

pub fn collect(root: &Path, java: Option<&Path>, plan: &crate::plan::Plan) -> Environment {
    let hostname = read("/proc/sys/kernel/hostname");
    Environment {
        hostname,
        os: os_name(),
        kernel: read("/proc/sys/kernel/osrelease"),
        cpu_model: cpu_model(),
        cpus_online: crate::util::cpus::online_cpus(),
        memory_gib: memory_gib(),
        java: java.and_then(java_version).map(|(_, s)| s),
        harness_version: env!("CARGO_PKG_VERSION").to_string(),
        git_commit: git_commit(root),
        contender_cpus: plan.contender_cpus.clone(),
        driver_cpus: plan.driver_cpus.clone(),
        services_cpus: plan.services_cpus.clone(),
        driver_threads: plan.driver_threads,
        jvm_flags: plan.jvm_flags(),
        pinning: format!(
            "contender on CPU {}, the driver ({} thread(s)) on CPU {}, the services (PostgreSQL, Kafka, downstream) on CPU {}{}, set with sched_setaffinity (as taskset -c)",
            crate::util::cpus::format_cpus(&plan.contender_cpus),
            plan.driver_threads,
            crate::util::cpus::format_cpus(&plan.driver_cpus),
            crate::util::cpus::format_cpus(&plan.services_cpus),
            if plan.services_cpus == plan.driver_cpus { " (shared with the driver: this machine has fewer than 4 CPUs)" } else { "" }
        ),
        database: String::new(),
        kafka: String::new(),
        remote_hosts: Vec::new(),
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
