//! How a JVM contender starts: as it is, from a class-data-sharing archive (CDS), or from the
//! JDK 25 ahead-of-time cache (classes loaded and linked, and method profiles, from a training
//! start; JEPs 483, 514, 515). The two remedies a team tries for cold starts, as a tunable every
//! JVM manifest has (`jvm_start`), so that a plan or `--set` picks one as it picks a pool size.
//! The harness makes the archive with a training start of its own before the contender's first
//! measured start (run/jvm_train.rs); this file says which flags each start gets.

use super::manifest::{Manifest, Tunable};
use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The tunable's name.
pub const TUNABLE: &str = "jvm_start";

/// An archive a training start writes and later starts read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Archive {
    /// A dynamic CDS archive (`-XX:ArchiveClassesAtExit`, then `-XX:SharedArchiveFile`).
    Cds,
    /// The AOT cache (`-XX:AOTCacheOutput`, then `-XX:AOTCache`).
    Aot,
}

/// What the tunable asks of one start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JvmStart {
    /// No archive: the JDK's own default CDS archive only.
    Default,
    /// Start from the archive a training start wrote; fail rather than start without it.
    From(Archive),
    /// The training start: run as usual and write the archive when the JVM exits.
    Training(Archive),
}

impl Archive {
    /// The archive file, beside the contender's build output (rebuilt, it is trained again).
    pub fn path(self, m: &Manifest) -> PathBuf {
        let ext = match self {
            Archive::Cds => "jsa",
            Archive::Aot => "aot",
        };
        m.dir.join("target").join(format!("{}.{ext}", m.name))
    }

    /// The tunable's value for this archive's training start.
    pub fn training_value(self) -> &'static str {
        match self {
            Archive::Cds => "cds-training",
            Archive::Aot => "aot-training",
        }
    }
}

impl JvmStart {
    /// What `tunables` ask of a start of `name` (Default when the tunable is absent).
    pub fn of(name: &str, tunables: &BTreeMap<String, String>) -> Result<JvmStart> {
        Ok(match tunables.get(TUNABLE).map(String::as_str) {
            None | Some("default") => JvmStart::Default,
            Some("cds") => JvmStart::From(Archive::Cds),
            Some("aot") => JvmStart::From(Archive::Aot),
            Some("cds-training") => JvmStart::Training(Archive::Cds),
            Some("aot-training") => JvmStart::Training(Archive::Aot),
            Some(other) => bail!(
                "tunables.{name}.{TUNABLE} = {other:?} is not a way to start a JVM; use \"default\", \"cds\" or \"aot\""
            ),
        })
    }

    /// The archive a measured start needs trained first, if any.
    pub fn needs_training(self) -> Option<Archive> {
        match self {
            JvmStart::From(a) => Some(a),
            _ => None,
        }
    }

    /// The JVM flags of this start of `m`. A start from an archive is strict
    /// (`-Xshare:on`, `-XX:AOTMode=on`): a JVM that cannot map it fails to start instead of
    /// starting cold and being measured as if it had not.
    pub fn flags(self, m: &Manifest) -> Vec<String> {
        let at = |a: Archive| a.path(m).display().to_string();
        match self {
            JvmStart::Default => Vec::new(),
            JvmStart::From(a @ Archive::Cds) => {
                vec![
                    format!("-XX:SharedArchiveFile={}", at(a)),
                    "-Xshare:on".into(),
                ]
            }
            JvmStart::From(a @ Archive::Aot) => {
                vec![format!("-XX:AOTCache={}", at(a)), "-XX:AOTMode=on".into()]
            }
            JvmStart::Training(a @ Archive::Cds) => {
                vec![format!("-XX:ArchiveClassesAtExit={}", at(a))]
            }
            JvmStart::Training(a @ Archive::Aot) => {
                vec![format!("-XX:AOTCacheOutput={}", at(a))]
            }
        }
    }
}

/// The tunable as every JVM manifest gets it.
pub fn tunable() -> Tunable {
    Tunable {
        default: "default".into(),
        help: "how the JVM starts: default; cds (a dynamic CDS archive of the classes a training \
               start loaded); aot (the JDK 25 AOT cache: classes loaded and linked, and method \
               profiles, from a training start). iobound makes the archive with a training start \
               (start-up and the contract's requests) before the first measured start"
            .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jvm() -> Manifest {
        let mut m: Manifest = toml::from_str(
            r#"
name = "jetty"
model = "thread-per-request"
language = "java"
framework = "Jetty"
config = "defaults"
runtime = "jvm"
build = "mvn package"
artifact = "target/jetty.jar"
start = ["{java}", "{jvm_flags}", "-jar", "target/jetty.jar"]
ready = "/plaintext"
"#,
        )
        .unwrap();
        m.dir = PathBuf::from("/repo/contenders/jetty");
        m
    }

    fn set(v: &str) -> BTreeMap<String, String> {
        BTreeMap::from([(TUNABLE.to_string(), v.to_string())])
    }

    #[test]
    fn each_start_gets_its_flags_and_reads_strictly_what_training_wrote() {
        let m = jvm();
        assert!(JvmStart::of("jetty", &BTreeMap::new())
            .unwrap()
            .flags(&m)
            .is_empty());
        let aot = JvmStart::of("jetty", &set("aot")).unwrap();
        assert_eq!(aot.needs_training(), Some(Archive::Aot));
        assert_eq!(
            aot.flags(&m),
            [
                "-XX:AOTCache=/repo/contenders/jetty/target/jetty.aot",
                "-XX:AOTMode=on"
            ]
        );
        let train = JvmStart::of("jetty", &set(Archive::Aot.training_value())).unwrap();
        assert_eq!(train.needs_training(), None);
        assert_eq!(
            train.flags(&m),
            ["-XX:AOTCacheOutput=/repo/contenders/jetty/target/jetty.aot"]
        );
        let cds = JvmStart::of("jetty", &set("cds")).unwrap();
        assert_eq!(
            cds.flags(&m),
            [
                "-XX:SharedArchiveFile=/repo/contenders/jetty/target/jetty.jsa",
                "-Xshare:on"
            ]
        );
        assert_eq!(
            JvmStart::of("jetty", &set("cds-training"))
                .unwrap()
                .flags(&m),
            ["-XX:ArchiveClassesAtExit=/repo/contenders/jetty/target/jetty.jsa"]
        );
    }

    #[test]
    fn an_unknown_way_to_start_names_the_field_and_the_choices() {
        let e = JvmStart::of("jetty", &set("graal"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("tunables.jetty.jvm_start = \"graal\"")
                && e.contains("\"default\", \"cds\" or \"aot\""),
            "{e}"
        );
    }
}
