//! What a contender's runtime detected when it started and how the server sized itself from it:
//! the contract's `iobound-runtime {json}` line (contract/README.md), read from the contender's
//! log once the contract cases have run, checked as one of them, and kept with the contender.
//! Under `--cpus 1` a JVM that still sees the machine's CPUs sizes its pools for them; this is
//! where that shows.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// What starts the line in the contender's standard output.
pub const PREFIX: &str = "iobound-runtime ";

/// How much of a log is read looking for the line: it is printed at start, and a log that has
/// grown past this (a GC trace of a long run) has it near its beginning.
const MAX_LOG_BYTES: u64 = 16 << 20;

/// The line, parsed. `cpus`, `workers` and `workers_of` every contender prints; the rest is
/// whatever its runtime has (heap limits, further pools) and is kept as printed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Detected {
    /// CPUs the runtime says the process may use (availableProcessors, NumCPU, ...).
    pub cpus: u32,
    /// Threads, event loops or processes that serve requests, as the server sized them.
    pub workers: u32,
    /// What `workers` counts, in words.
    pub workers_of: String,
    /// The heap the runtime may grow to, MB (JVM: -Xmx or its default share of memory; V8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_max_mb: Option<u64>,
    /// Every other figure the contender printed.
    #[serde(flatten)]
    pub more: BTreeMap<String, serde_json::Value>,
}

impl Detected {
    /// One line: "1 CPU; 200 Tomcat worker threads (max); heap 1024 MB".
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} CPU{}; {} {}",
            self.cpus,
            if self.cpus == 1 { "" } else { "s" },
            self.workers,
            self.workers_of
        );
        if let Some(mb) = self.heap_max_mb {
            s.push_str(&format!("; heap {mb} MB"));
        }
        s
    }
}

/// The last `iobound-runtime` line of `log` (a contender of several processes prints one per
/// process), or why there is none that holds the contract's fields.
pub fn read(log: &Path) -> Result<Detected, String> {
    let file =
        std::fs::File::open(log).map_err(|e| format!("cannot read {}: {e}", log.display()))?;
    let mut last = None;
    for line in BufReader::new(file.take(MAX_LOG_BYTES)).split(b'\n') {
        let line = line.map_err(|e| format!("cannot read {}: {e}", log.display()))?;
        if let Some(body) = line.strip_prefix(PREFIX.as_bytes()) {
            last = Some(body.to_vec());
        }
    }
    let body = last.ok_or_else(|| {
        format!("no line starting with `{PREFIX}{{json}}` in its output (the contract asks for one at start: CPUs seen, workers, what they are)")
    })?;
    parse(&body)
}

fn parse(body: &[u8]) -> Result<Detected, String> {
    let d: Detected = serde_json::from_slice(body).map_err(|e| {
        format!(
            "its `{PREFIX}` line is not the contract's JSON ({e}): {}",
            String::from_utf8_lossy(&body[..body.len().min(200)])
        )
    })?;
    if d.cpus == 0 || d.workers == 0 || d.workers_of.trim().is_empty() {
        return Err(format!(
            "its `{PREFIX}` line must give cpus >= 1, workers >= 1 and workers_of (what they are), got cpus {}, workers {}, workers_of {:?}",
            d.cpus, d.workers, d.workers_of
        ));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn log_of(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f
    }

    #[test]
    fn the_last_line_wins_and_extra_figures_are_kept() {
        let log = log_of(concat!(
            "Started in 3 s\n",
            "iobound-runtime {\"cpus\":2,\"workers\":4,\"workers_of\":\"event loops\"}\n",
            "[GC] pause 1 ms\n",
            "iobound-runtime {\"language\":\"java\",\"cpus\":1,\"workers\":200,",
            "\"workers_of\":\"Tomcat worker threads (max)\",\"heap_max_mb\":1024,",
            "\"virtual_thread_parallelism\":1}\n",
        ));
        let d = read(log.path()).unwrap();
        assert_eq!((d.cpus, d.workers, d.heap_max_mb), (1, 200, Some(1024)));
        assert_eq!(d.more["virtual_thread_parallelism"], 1);
        assert_eq!(d.more["language"], "java");
        assert_eq!(
            d.describe(),
            "1 CPU; 200 Tomcat worker threads (max); heap 1024 MB"
        );
        // Written back as it was read: the extra figures flat beside the named ones.
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json["virtual_thread_parallelism"], 1);
        assert_eq!(json["workers_of"], "Tomcat worker threads (max)");
    }

    #[test]
    fn a_log_without_the_line_or_with_a_bad_one_says_what_the_contract_asks() {
        let none = read(log_of("listening on 127.0.0.1:8080\n").path()).unwrap_err();
        assert!(
            none.contains("no line starting with `iobound-runtime {json}`"),
            "{none}"
        );
        let bad = read(log_of("iobound-runtime {cpus: 1}\n").path()).unwrap_err();
        assert!(bad.contains("not the contract's JSON"), "{bad}");
        let missing =
            read(log_of("iobound-runtime {\"cpus\":1,\"workers\":1}\n").path()).unwrap_err();
        assert!(missing.contains("workers_of"), "{missing}");
        let zero = read(
            log_of("iobound-runtime {\"cpus\":0,\"workers\":1,\"workers_of\":\"x\"}\n").path(),
        )
        .unwrap_err();
        assert!(zero.contains("cpus >= 1"), "{zero}");
    }
}
