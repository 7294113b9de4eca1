//! The JDK the JVM contenders, the Kafka broker and its load tool run on: a `java` >= 21, found
//! the same way the launcher finds it.

use std::path::{Path, PathBuf};
use std::process::Command;

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
        let mut found: Vec<_> = dir
            .flatten()
            .map(|e| e.path().join("bin/java"))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        found.reverse();
        candidates.extend(found);
    }
    let mut best: Option<(u32, PathBuf)> = None;
    for c in candidates {
        if let Some((major, _)) = java_version(&c) {
            if major >= 21 {
                // Explicit choices win; otherwise the newest.
                if std::env::var("IOBOUND_JAVA").is_ok()
                    || std::env::var("JAVA_HOME").is_ok_and(|h| c.starts_with(h))
                {
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
