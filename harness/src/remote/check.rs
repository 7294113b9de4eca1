//! `iobound hosts check`: connects to every host of an inventory and reports what a run
//! needs to know before it starts: OS and architecture, CPUs, memory, the clock's offset to
//! this machine, and the tools present for the host's roles, with the command that installs
//! what is missing. It changes nothing on any host.

use super::ssh::Ssh;
use crate::plan::hosts::{Host, Inventory, Role};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The largest clock offset a run accepts: per-second histograms of different hosts are added
/// by their second since the common start, so the start must agree to well within a second,
/// and lateness is judged in milliseconds.
pub const MAX_CLOCK_OFFSET_MS: f64 = 10.0;

/// A tool a role uses, how to see its version, and how to install it on Debian or Ubuntu.
struct Tool {
    name: &'static str,
    version: &'static str,
    install: &'static str,
    roles: &'static [Role],
    why: &'static str,
}

const TOOLS: &[Tool] = &[
    Tool {
        name: "taskset",
        version: "taskset --version",
        install: "apt-get install util-linux",
        roles: &[Role::Contender, Role::Services, Role::Load],
        why: "pins processes to the host's CPUs",
    },
    Tool {
        name: "java",
        // The newest of $JAVA_HOME's and /usr/lib/jvm's, as the contenders pick one there.
        version: "for j in ${JAVA_HOME:+$JAVA_HOME/bin/java} /usr/lib/jvm/*/bin/java; do [ -x \"$j\" ] && \"$j\" -version 2>&1 | head -1; done | sort -t'\"' -k2,2V | tail -1",
        install: "apt-get install temurin-25-jdk (Adoptium's repository) or openjdk-21-jdk-headless",
        roles: &[Role::Contender, Role::Services, Role::Load],
        why: "a JDK >= 21: the JVM contenders there, Kafka's broker on the services host, the pipelines' load tool on a load host",
    },
    Tool {
        name: "python3",
        version: "python3 --version",
        install: "apt-get install python3 python3-venv",
        roles: &[Role::Contender],
        why: "the Python contenders: the CPython their virtual environment was made with, at the same path",
    },
    Tool {
        name: "tar",
        version: "tar --version | head -1",
        install: "apt-get install tar",
        roles: &[Role::Contender, Role::Services, Role::Load],
        why: "receives the contenders' files, PostgreSQL's binaries, Kafka's jars and its load tool",
    },
];

/// The CPython the Python contenders' virtual environment runs. The environment (.cache/python)
/// is shipped to the contender host as it is, and its `bin/python3` is a link to the
/// interpreter it was made with, so that host needs the same CPython at the same path.
#[derive(Clone, Debug, PartialEq)]
pub struct VenvPython {
    /// The interpreter the environment links to.
    pub path: String,
    /// The CPython version it was made with, e.g. "3.11.7".
    pub version: String,
}

impl VenvPython {
    /// From the environment's pyvenv.cfg (`home` and `version`, or `version_info` as newer
    /// CPythons write it); None where the environment is not built.
    pub fn read(venv: &std::path::Path) -> Option<VenvPython> {
        let cfg = std::fs::read_to_string(venv.join("pyvenv.cfg")).ok()?;
        let value = |key: &str| {
            cfg.lines().find_map(|l| {
                let (k, v) = l.split_once('=')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
        };
        Some(VenvPython {
            path: format!("{}/python3", value("home")?.trim_end_matches('/')),
            version: value("version").or_else(|| value("version_info"))?,
        })
    }

    /// What `hosts check` says of it on a contender host, from what the probe found there.
    fn line(&self, found: Option<&String>) -> String {
        let want = format!("Python {}", self.version);
        match found {
            Some(v) if v.starts_with(&want) => format!("  python venv: {} ({v})", self.path),
            Some(v) => format!(
                "  python venv: {} is {v}, the Python contenders' environment was made with {}; \
                 its compiled packages may not load: install CPython {} there, or rebuild \
                 .cache/python here with the CPython that host has",
                self.path, self.version, self.version
            ),
            None => format!(
                "  python venv: missing (the Python contenders' environment, shipped from \
                 .cache/python, runs {}); install CPython {} at that path, or rebuild \
                 .cache/python here with an interpreter at a path both machines have",
                self.path, self.version
            ),
        }
    }
}

pub struct HostReport {
    pub host: Host,
    /// The Python contenders' interpreter, on a contender host when this machine has their
    /// environment built.
    pub venv: Option<VenvPython>,
    /// Why the host could not be checked, if it could not.
    pub unreachable: Option<String>,
    pub facts: BTreeMap<String, String>,
    /// How far its clock is ahead of ours (ms, negative when behind) and the uncertainty.
    pub clock_offset_ms: Option<(f64, f64)>,
}

impl HostReport {
    /// Problems that would stop a run on this host.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(why) = &self.unreachable {
            out.push(why.clone());
            return out;
        }
        if let Some((off, _)) = self.clock_offset_ms {
            if off.abs() > MAX_CLOCK_OFFSET_MS {
                out.push(format!(
                    "its clock is {off:+.1} ms off this machine's (a run needs <= {MAX_CLOCK_OFFSET_MS} ms): run chrony or systemd-timesyncd on both"
                ));
            }
        }
        let cpus: Option<usize> = self.facts.get("cpus").and_then(|c| c.parse().ok());
        let wanted = self
            .host
            .cpus
            .as_deref()
            .and_then(|c| crate::util::cpus::parse_cpu_syntax(c).ok());
        if let (Some(n), Some(w)) = (cpus, wanted) {
            if let Some(c) = w.iter().find(|c| **c >= n) {
                out.push(format!(
                    "cpus = {:?}: it has no CPU {c} (CPUs 0-{}); give CPUs it has",
                    self.host.cpus.as_deref().unwrap_or(""),
                    n.saturating_sub(1)
                ));
            }
        }
        let arch = self.facts.get("arch").map(String::as_str).unwrap_or("?");
        if self.host.has(Role::Load) && arch != std::env::consts::ARCH {
            out.push(format!(
                "it is {arch}, this iobound is {}: a load host runs a copy of this binary",
                std::env::consts::ARCH
            ));
        }
        out
    }
}

const PROBE: &str = r#"
. /etc/os-release 2>/dev/null; echo "os=${PRETTY_NAME:-unknown}"
echo "arch=$(uname -m)"
echo "kernel=$(uname -r)"
echo "cpus=$(nproc)"
awk '/MemTotal/ {print "mem_kb=" $2}' /proc/meminfo
"#;

/// Connects to every host (one after another) and reads what `hosts check` reports; `venv`
/// is the Python contenders' interpreter, looked for on contender hosts.
pub fn check(
    inv: &Inventory,
    control_dir: &std::path::Path,
    venv: Option<&VenvPython>,
) -> Vec<HostReport> {
    inv.hosts
        .iter()
        .map(|h| {
            let ssh = Ssh::new(h, inv.known_hosts.as_deref(), control_dir);
            let venv = venv.filter(|_| h.has(Role::Contender));
            let report = check_host(&ssh, venv);
            ssh.close();
            report
        })
        .collect()
}

fn check_host(ssh: &Ssh, venv: Option<&VenvPython>) -> HostReport {
    let mut report = HostReport {
        host: ssh.host.clone(),
        venv: venv.cloned(),
        unreachable: None,
        facts: BTreeMap::new(),
        clock_offset_ms: None,
    };
    let mut script = PROBE.to_string();
    for t in TOOLS {
        let _ = writeln!(
            script,
            "if command -v {n} >/dev/null 2>&1; then echo \"tool_{n}=$({v} 2>&1 | head -1)\"; fi",
            n = t.name,
            v = t.version
        );
    }
    if let Some(v) = venv {
        let p = crate::util::shell::quoted(&v.path);
        let _ = writeln!(
            script,
            "if [ -x {p} ]; then echo \"venv_python=$({p} --version 2>&1 | head -1)\"; fi"
        );
    }
    match ssh.output(&script) {
        Err(e) => {
            report.unreachable = Some(format!("{e:#}"));
            return report;
        }
        Ok(text) => {
            for line in text.lines() {
                if let Some((k, v)) = line.split_once('=') {
                    report.facts.insert(k.to_string(), v.trim().to_string());
                }
            }
        }
    }
    match ssh.clock_offset() {
        Ok((offset, uncertainty, ahead)) => {
            let ms = offset.as_secs_f64() * 1000.0;
            report.clock_offset_ms = Some((
                if ahead { ms } else { -ms },
                uncertainty.as_secs_f64() * 1000.0,
            ));
        }
        Err(e) => report.unreachable = Some(format!("{e:#}")),
    }
    report
}

/// The report as text: one block per host, what is missing with how to install it, and the
/// problems that would stop a run.
pub fn render(reports: &[HostReport]) -> String {
    let mut s = String::new();
    for r in reports {
        let h = &r.host;
        let roles: Vec<&str> = h.roles.iter().map(|r| r.name()).collect();
        let _ = writeln!(
            s,
            "{} ({}, port {}): {}",
            h.name,
            h.destination(),
            h.port,
            roles.join(", ")
        );
        if r.unreachable.is_none() {
            let f = |k: &str| r.facts.get(k).cloned().unwrap_or_else(|| "?".into());
            let mem_gib = f("mem_kb").parse::<f64>().unwrap_or(0.0) / 1024.0 / 1024.0;
            let _ = writeln!(
                s,
                "  {} {} (kernel {}), {} CPUs{}, {:.1} GiB",
                f("os"),
                f("arch"),
                f("kernel"),
                f("cpus"),
                h.cpus
                    .as_deref()
                    .map(|c| format!(" (using {c})"))
                    .unwrap_or_default(),
                mem_gib
            );
            if let Some((off, unc)) = r.clock_offset_ms {
                let _ = writeln!(s, "  clock: {off:+.2} ms against this machine (+- {unc:.2} ms, half the shortest of 7 round trips)");
            }
            for t in TOOLS.iter().filter(|t| t.roles.iter().any(|x| h.has(*x))) {
                match r.facts.get(&format!("tool_{}", t.name)) {
                    Some(v) => {
                        let _ = writeln!(s, "  {}: {v}", t.name);
                    }
                    None => {
                        let _ = writeln!(
                            s,
                            "  {}: missing ({}); install: {}",
                            t.name, t.why, t.install
                        );
                    }
                }
            }
            if let Some(v) = &r.venv {
                let _ = writeln!(s, "{}", v.line(r.facts.get("venv_python")));
            }
        }
        for p in r.problems() {
            let _ = writeln!(s, "  PROBLEM: {p}");
        }
    }
    let bad = reports.iter().filter(|r| !r.problems().is_empty()).count();
    let _ = writeln!(
        s,
        "{} of {} hosts ready{}",
        reports.len() - bad,
        reports.len(),
        if bad > 0 {
            "; fix the problems above before a run"
        } else {
            ""
        }
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(roles: Vec<Role>, facts: &[(&str, &str)], offset: f64) -> HostReport {
        HostReport {
            host: Host {
                name: "h1".into(),
                address: "10.0.0.2".parse().unwrap(),
                user: Some("root".into()),
                port: 22,
                identity: None,
                roles,
                cpus: Some("0-1".into()),
            },
            venv: None,
            unreachable: None,
            facts: facts
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            clock_offset_ms: Some((offset, 0.1)),
        }
    }

    #[test]
    fn missing_tools_come_with_their_install_command_and_problems_stop_a_run() {
        let arch = std::env::consts::ARCH;
        let r = report(
            vec![Role::Contender],
            &[
                ("arch", arch),
                ("cpus", "4"),
                ("mem_kb", "8388608"),
                ("tool_java", "openjdk version \"17\""),
            ],
            0.4,
        );
        let text = render(&[r]);
        assert!(text.contains("4 CPUs (using 0-1), 8.0 GiB"), "{text}");
        assert!(text.contains("java: openjdk version \"17\""), "{text}");
        assert!(
            text.contains("tar: missing (receives the contenders' files, PostgreSQL's binaries, Kafka's jars and its load tool); install: apt-get install tar"),
            "{text}"
        );
        assert!(text.contains("1 of 1 hosts ready"), "{text}");
        let off = report(
            vec![Role::Load],
            &[("arch", "aarch64"), ("cpus", "1")],
            -25.0,
        );
        let problems = off.problems();
        assert_eq!(
            problems.len(),
            if arch == "aarch64" { 2 } else { 3 },
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("it has no CPU 1 (CPUs 0-0)")),
            "{problems:?}"
        );
        assert!(problems[0].contains("-25.0 ms off"), "{problems:?}");
        assert!(render(&[off]).contains("0 of 1 hosts ready; fix the problems above"));
    }

    #[test]
    fn a_contender_host_is_checked_for_the_interpreter_the_python_environment_links_to() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            VenvPython::read(dir.path()),
            None,
            "not built: nothing to check"
        );
        std::fs::write(
            dir.path().join("pyvenv.cfg"),
            "home = /opt/py/bin/\ninclude-system-site-packages = false\nversion = 3.11.7\n",
        )
        .unwrap();
        let venv = VenvPython::read(dir.path()).expect("pyvenv.cfg read");
        assert_eq!(venv.path, "/opt/py/bin/python3");
        assert_eq!(venv.version, "3.11.7");
        let text = |found: Option<&str>| {
            let mut r = report(vec![Role::Contender], &[], 0.0);
            r.venv = Some(venv.clone());
            if let Some(v) = found {
                r.facts.insert("venv_python".into(), v.into());
            }
            render(&[r])
        };
        assert!(
            text(Some("Python 3.11.7"))
                .contains("python venv: /opt/py/bin/python3 (Python 3.11.7)"),
            "{}",
            text(Some("Python 3.11.7"))
        );
        let other = text(Some("Python 3.13.1"));
        assert!(
            other.contains("/opt/py/bin/python3 is Python 3.13.1, the Python contenders' environment was made with 3.11.7"),
            "{other}"
        );
        let missing = text(None);
        assert!(
            missing.contains("python venv: missing (")
                && missing.contains("install CPython 3.11.7 at that path"),
            "{missing}"
        );
    }
}
