//! How a JVM contender starts: as it is, from a class-data-sharing archive (CDS), or from the
//! JDK 25 ahead-of-time cache (classes loaded and linked, and method profiles, from a training
//! start; JEPs 483, 514, 515). The two remedies a team tries for cold starts, as a tunable every
//! JVM manifest has (`jvm_start`), so that a plan or `--set` picks one as it picks a pool size.
//! The harness makes the archive with a training start of its own before the contender's first
//! measured start (run/jvm_train.rs); this file says which flags each start gets.

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
    /// The archive file of contender `name` (its folder `dir`), beside its build output
    /// (rebuilt, it is trained again).
    pub fn path(self, dir: &Path, name: &str) -> PathBuf {
        let ext = match self {
            Archive::Cds => "jsa",
            Archive::Aot => "aot",
        };
        dir.join("target").join(format!("{name}.{ext}"))
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

    /// The JVM flags of this start of contender `name` (its folder `dir`). A start from an
    /// archive is strict
    /// (`-Xshare:on`, `-XX:AOTMode=on`): a JVM that cannot map it fails to start instead of
    /// starting cold and being measured as if it had not.
    pub fn flags(self, dir: &Path, name: &str) -> Vec<String> {
        let at = |a: Archive| a.path(dir, name).display().to_string();
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

/// Where the Spring Boot jar of contender `name` (its folder `dir`) is extracted for starts
/// from an archive, beside the archive: the jar of the same name with its libraries in `lib/`,
/// which the JVM loads from the class path, where an archive holds them.
pub fn extracted_dir(dir: &Path, name: &str) -> PathBuf {
    dir.join("target").join(format!("{name}-extracted"))
}

/// The position in `argv` of the jar it starts (`-jar JAR`).
fn jar_position(argv: &[String]) -> Result<usize> {
    match argv.iter().position(|a| a == "-jar") {
        Some(i) if i + 1 < argv.len() => Ok(i + 1),
        _ => bail!("the start command names no jar after -jar: {argv:?}"),
    }
}

/// The jar `argv` starts, as its manifest names it (relative to the contender's folder).
pub fn started_jar(argv: &[String]) -> Result<&str> {
    Ok(&argv[jar_position(argv)?])
}

/// Points `argv` at the extracted form, in `extracted`, of the Spring Boot jar it starts.
pub fn start_extracted(argv: &mut [String], extracted: &Path) -> Result<()> {
    let at = jar_position(argv)?;
    let file = Path::new(&argv[at])
        .file_name()
        .with_context(|| format!("{:?} is not a jar file", argv[at]))?;
    argv[at] = extracted.join(file).display().to_string();
    Ok(())
}

/// The arguments after `java` that extract Spring Boot jar `jar` into `extracted` (its jar
/// mode `tools`, which Spring Boot 3.3 and later put in every executable jar).
pub fn extract_args(jar: &str, extracted: &Path) -> Vec<String> {
    vec![
        "-Djarmode=tools".into(),
        "-jar".into(),
        jar.into(),
        "extract".into(),
        "--destination".into(),
        extracted.display().to_string(),
    ]
}

/// What the tunable says in `iobound list` (services/manifest.rs adds it to every JVM
/// manifest).
pub const HELP: &str = "how the JVM starts: default; cds (a dynamic CDS archive of the classes \
    a training start loaded); aot (the JDK 25 AOT cache: classes loaded and linked, and method \
    profiles, from a training start). iobound makes the archive with a training start (start-up \
    and the contract's requests) before the first measured start";

#[cfg(test)]
mod tests {
    use super::*;

    fn jetty() -> (PathBuf, &'static str) {
        (PathBuf::from("/repo/contenders/jetty"), "jetty")
    }

    fn set(v: &str) -> BTreeMap<String, String> {
        BTreeMap::from([(TUNABLE.to_string(), v.to_string())])
    }

    #[test]
    fn each_start_gets_its_flags_and_reads_strictly_what_training_wrote() {
        let (dir, name) = jetty();
        assert!(JvmStart::of("jetty", &BTreeMap::new())
            .unwrap()
            .flags(&dir, name)
            .is_empty());
        let aot = JvmStart::of("jetty", &set("aot")).unwrap();
        assert_eq!(aot.needs_training(), Some(Archive::Aot));
        assert_eq!(
            aot.flags(&dir, name),
            [
                "-XX:AOTCache=/repo/contenders/jetty/target/jetty.aot",
                "-XX:AOTMode=on"
            ]
        );
        let train = JvmStart::of("jetty", &set(Archive::Aot.training_value())).unwrap();
        assert_eq!(train.needs_training(), None);
        assert_eq!(
            train.flags(&dir, name),
            ["-XX:AOTCacheOutput=/repo/contenders/jetty/target/jetty.aot"]
        );
        let cds = JvmStart::of("jetty", &set("cds")).unwrap();
        assert_eq!(
            cds.flags(&dir, name),
            [
                "-XX:SharedArchiveFile=/repo/contenders/jetty/target/jetty.jsa",
                "-Xshare:on"
            ]
        );
        assert_eq!(
            JvmStart::of("jetty", &set("cds-training"))
                .unwrap()
                .flags(&dir, name),
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
    #[test]
    fn a_boot_jar_starts_from_its_extracted_form_beside_the_archive() {
        let dir = PathBuf::from("/repo/contenders/spring-mvc-virtual");
        let extracted = extracted_dir(&dir, "spring-mvc-virtual");
        let mut argv: Vec<String> = [
            "java",
            "-Xmx256m",
            "-jar",
            "../spring-mvc/target/spring-mvc.jar",
            "--server.port=1",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            started_jar(&argv).unwrap(),
            "../spring-mvc/target/spring-mvc.jar"
        );
        assert_eq!(
            extract_args(started_jar(&argv).unwrap(), &extracted),
            [
                "-Djarmode=tools",
                "-jar",
                "../spring-mvc/target/spring-mvc.jar",
                "extract",
                "--destination",
                "/repo/contenders/spring-mvc-virtual/target/spring-mvc-virtual-extracted"
            ]
        );
        start_extracted(&mut argv, &extracted).unwrap();
        assert_eq!(
            argv,
            [
                "java",
                "-Xmx256m",
                "-jar",
                "/repo/contenders/spring-mvc-virtual/target/spring-mvc-virtual-extracted/spring-mvc.jar",
                "--server.port=1"
            ]
        );
        let mut no_jar: Vec<String> = ["java", "-cp", "x", "Main", "-jar"]
            .map(String::from)
            .to_vec();
        let e = start_extracted(&mut no_jar, &extracted)
            .unwrap_err()
            .to_string();
        assert!(e.contains("names no jar after -jar"), "{e}");
    }
}
