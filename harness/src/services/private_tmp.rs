//! A temporary directory of its own for every process the harness starts, removed when the
//! process stops. Servers write to the temporary directory without asking: Spring Boot's
//! embedded Tomcat makes /tmp/tomcat.<port>.* and /tmp/tomcat-docbase.* at every start and
//! never removes them (66 of them had piled up here after a day of runs), Vert.x keeps
//! /tmp/vertx-cache. Given TMPDIR (and, for a JVM, which ignores TMPDIR, java.io.tmpdir)
//! pointing here, they write inside it, and nothing is left in /tmp however the run ends: an
//! orderly stop removes it, a second Ctrl-C removes it with the other registered directories,
//! and the next start removes those of a harness that was killed.

use crate::util::{files, interrupt};
use anyhow::Result;
use std::path::Path;

/// Names start with this, then the harness's pid and a dot, so that a later harness can tell
/// a dead one's (util::files::sweep_stale).
const PREFIX: &str = "iobound-tmp-";

/// The directory, removed when dropped.
#[derive(Debug)]
pub struct PrivateTmp {
    dir: tempfile::TempDir,
}

impl PrivateTmp {
    /// A new directory under the system's temporary directory, readable by its owner only,
    /// after removing those of harnesses that no longer run.
    pub fn create() -> Result<PrivateTmp> {
        files::sweep_stale(&std::env::temp_dir(), PREFIX);
        let dir = files::private_temp_dir(&format!("{PREFIX}{}.", std::process::id()))?;
        interrupt::register_dir(dir.path());
        Ok(PrivateTmp { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        interrupt::unregister_dir(self.dir.path());
    }
}

/// `argv` told to use `dir` as its temporary directory where TMPDIR is not enough: a JVM
/// (`java` as the program) takes java.io.tmpdir, given first so that the program's own
/// options and its main class or jar stay where they were.
pub fn with_tmpdir(argv: &[String], dir: &Path) -> Vec<String> {
    let mut out = argv.to_vec();
    let is_java = argv
        .first()
        .and_then(|p| Path::new(p).file_name())
        .is_some_and(|n| n == "java");
    if is_java {
        out.insert(1, format!("-Djava.io.tmpdir={}", dir.display()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jvm_is_given_the_directory_first_and_other_programs_keep_their_argv() {
        let dir = Path::new("/tmp/iobound-tmp-1.ab");
        let java: Vec<String> = ["/usr/lib/jvm/x/bin/java", "-Xmx1g", "-jar", "app.jar"]
            .map(String::from)
            .into();
        assert_eq!(
            with_tmpdir(&java, dir),
            [
                "/usr/lib/jvm/x/bin/java",
                "-Djava.io.tmpdir=/tmp/iobound-tmp-1.ab",
                "-Xmx1g",
                "-jar",
                "app.jar"
            ]
        );
        let node: Vec<String> = ["node", "server.js", "--java"].map(String::from).into();
        assert_eq!(with_tmpdir(&node, dir), node);
        let javascript: Vec<String> = ["./javascript"].map(String::from).into();
        assert_eq!(with_tmpdir(&javascript, dir), javascript);
    }

    #[test]
    fn the_directory_goes_when_dropped_and_a_dead_harness_s_at_the_next_start() {
        // A pid above Linux's largest (2^22) never runs: its harness is gone.
        let dead = std::env::temp_dir().join(format!("{PREFIX}2147483000.left"));
        std::fs::create_dir_all(dead.join("tomcat.8080.1/work")).unwrap();
        let tmp = PrivateTmp::create().unwrap();
        assert!(!dead.exists(), "a killed harness's directory is swept");
        let path = tmp.path().to_path_buf();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        assert!(
            name.starts_with(&format!("{PREFIX}{}.", std::process::id())),
            "{name}"
        );
        std::fs::create_dir_all(path.join("tomcat.8080.1/work")).unwrap();
        let other = PrivateTmp::create().unwrap();
        assert!(path.exists(), "a live harness's directory is kept");
        drop(tmp);
        assert!(!path.exists());
        drop(other);
    }
}
