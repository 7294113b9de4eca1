//! Contender manifests: `contenders/<name>/contender.toml` says what a contender is (model,
//! language, framework) and how to start it. The harness knows nothing else about it.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

pub const MODELS: &[&str] = &[
    "thread-per-request",
    "event-loop",
    "virtual-threads",
    "goroutines",
    "coroutines",
    "async-await",
];

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    /// One of MODELS.
    pub model: String,
    pub language: String,
    /// Framework, server and version, as a reader of the report should see them.
    pub framework: String,
    /// How it is configured and why (the community-recommended defaults it keeps or changes).
    pub config: String,
    /// "jvm" gets the plan's heap and JVM flags through `{jvm_flags}`.
    #[serde(default)]
    pub runtime: Option<String>,
    /// How to build, test, format-check and format it (services/build_steps.rs), which
    /// `./iobound build`, `test`, `lint` and `format` run.
    pub build: super::build_steps::Build,
    /// Built file that must exist before the contender can start (relative to its folder).
    pub artifact: String,
    /// argv with placeholders: {java}, {jvm_flags}, {port} and {<tunable>}.
    pub start: Vec<String>,
    /// Path that answers 200 once the contender is ready.
    pub ready: String,
    #[serde(default)]
    pub startup_timeout: Option<String>,
    #[serde(default)]
    pub tunables: BTreeMap<String, Tunable>,
    /// "http" (default: serves the contract) or "pipeline" (consumes Kafka `input`, produces
    /// `output`; `ready` is still an HTTP path).
    #[serde(default)]
    pub kind: Option<String>,
    /// argv that prints the runtime's version on its first line (e.g. `["node", "-p",
    /// "'Node.js ' + process.version"]`); JVM contenders name the JDK that starts them instead.
    #[serde(default)]
    pub version: Vec<String>,
    /// The CPU profiler `--profile` uses: "jfr" (the default for JVM contenders), "pprof"
    /// (a Go contender serving /debug/pprof on the address in IOBOUND_PPROF) or "v8" (a Node
    /// contender that profiles itself between two SIGUSR2 into IOBOUND_V8_PROFILE_DIR).
    #[serde(default)]
    pub profiler: Option<String>,
    /// How the contender serves the fan-out, `/aggregate`: the construct, and whether a failure
    /// cancels the calls still running (e.g. "errgroup.WithContext; a failure cancels the
    /// context the other calls run under"). Unset: it does not serve /aggregate yet, which
    /// verification says and does not check.
    #[serde(default)]
    pub fanout: Option<String>,
    /// False for a fan-out that leaves the calls still running when one fails (a blocking call
    /// that cannot be interrupted): verification then checks that they are indeed left running
    /// and the runs show what that costs. Default true: a failure cancels them.
    #[serde(default)]
    pub fanout_cancels: Option<bool>,
    /// What a contender host needs from this checkout to start it (paths relative to its
    /// folder, files or folders, copied there keeping their place in the repository). Default:
    /// the artifact alone (a self-contained binary). Runtimes named by `{java}` are the host's.
    #[serde(default)]
    pub deploy: Vec<String>,
    /// The `-jar` it starts is a Spring Boot executable jar. A JVM reads none of the classes
    /// of its nested jars from a CDS archive or AOT cache, so a `jvm_start` other than the
    /// default starts it extracted, as Spring Boot advises (services/jvm_start.rs).
    #[serde(default)]
    pub boot_jar: bool,
    #[serde(skip)]
    pub dir: PathBuf,
}

impl Manifest {
    pub fn is_pipeline(&self) -> bool {
        self.kind.as_deref() == Some("pipeline")
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Tunable {
    pub default: String,
    pub help: String,
}

/// What the start command's placeholders expand to.
pub struct StartVars<'a> {
    pub java: Option<&'a Path>,
    pub jvm_flags: &'a [String],
    /// Where the contender listens: `{address}` (loopback unless told otherwise).
    pub address: IpAddr,
    pub port: u16,
}

impl Manifest {
    pub fn load(path: &Path) -> Result<Manifest> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let mut m: Manifest = toml::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.to_string().trim_end()))?;
        m.dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        if !crate::util::files::is_plain_name(&m.name) {
            bail!(
                "{}: name = {:?}: use only letters, digits, '-' and '_' (it names results, log \
                 files and directories on hosts), e.g. the contender's directory name",
                path.display(),
                m.name
            );
        }
        m.build.validate(path)?;
        if !MODELS.contains(&m.model.as_str()) {
            bail!(
                "{}: model = {:?} is unknown; use one of {}",
                path.display(),
                m.model,
                MODELS.join(", ")
            );
        }
        if !matches!(m.kind.as_deref(), None | Some("http") | Some("pipeline")) {
            bail!(
                "{}: kind = {:?} is unknown; use \"http\" (the default) or \"pipeline\"",
                path.display(),
                m.kind.as_deref().unwrap_or("")
            );
        }
        if m.start.is_empty() {
            bail!(
                "{}: start is empty; give the argv that starts the server",
                path.display()
            );
        }
        if !matches!(
            m.profiler.as_deref(),
            None | Some("jfr") | Some("pprof") | Some("v8")
        ) {
            bail!("{}: profiler = {:?} is unknown; use \"jfr\" (JVM), \"pprof\" (Go) or \"v8\" (Node)", path.display(), m.profiler.as_deref().unwrap_or(""));
        }
        if !m.ready.starts_with('/') {
            bail!(
                "{}: ready = {:?} must be a path starting with '/'",
                path.display(),
                m.ready
            );
        }
        // How the JVM starts is the harness's to arrange (flags, a training start), so every
        // JVM contender has the tunable without its manifest saying so.
        if m.is_jvm() {
            m.tunables
                .entry(super::jvm_start::TUNABLE.to_string())
                .or_insert_with(|| Tunable {
                    default: "default".into(),
                    help: super::jvm_start::HELP.into(),
                });
        }
        Ok(m)
    }

    pub fn is_jvm(&self) -> bool {
        self.runtime.as_deref() == Some("jvm")
    }

    /// The profiler `--profile` uses for this contender, if it has one.
    pub fn profiler_kind(&self) -> Option<&str> {
        self.profiler.as_deref().or(self.is_jvm().then_some("jfr"))
    }

    pub fn artifact_path(&self) -> PathBuf {
        self.dir.join(&self.artifact)
    }

    /// The program a start or version command names: a bare name is looked up in the
    /// project's `.cache/bin` first (where the launcher puts the runtimes it fetched, such as
    /// Node 24), then on PATH.
    pub fn program(&self, name: &str) -> String {
        if !name.contains('/') {
            if let Some(cached) = self
                .dir
                .parent()
                .and_then(Path::parent)
                .map(|root| root.join(".cache/bin").join(name))
            {
                if cached.is_file() {
                    return cached.display().to_string();
                }
            }
        }
        name.to_string()
    }

    /// The runtime this contender runs on, with its version, as the report names it: the JDK
    /// for JVM contenders, otherwise the first line the manifest's `version` command prints.
    pub fn runtime_version(&self, java: Option<&Path>) -> Option<String> {
        if self.is_jvm() {
            return java
                .and_then(super::jdk::java_version)
                .map(|(_, first)| first);
        }
        let (program, args) = self.version.split_first()?;
        let out = std::process::Command::new(self.program(program))
            .args(args)
            .current_dir(&self.dir)
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(if out.stdout.is_empty() {
            &out.stderr
        } else {
            &out.stdout
        })
        .to_string();
        text.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_string)
            .filter(|_| out.status.success())
    }

    /// Tunable values: defaults overridden by `overrides`; unknown names are an error.
    pub fn resolve_tunables(
        &self,
        overrides: Option<&BTreeMap<String, String>>,
    ) -> Result<BTreeMap<String, String>> {
        let mut values: BTreeMap<String, String> = self
            .tunables
            .iter()
            .map(|(k, t)| (k.clone(), t.default.clone()))
            .collect();
        for (k, v) in overrides.into_iter().flatten() {
            if !self.tunables.contains_key(k) {
                let known: Vec<_> = self.tunables.keys().cloned().collect();
                bail!(
                    "tunables.{}.{k} is not a tunable of {}; known: {}",
                    self.name,
                    self.name,
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                );
            }
            let odd = |c: char| c.is_whitespace() || c.is_control() || c == '{' || c == '}';
            if v.is_empty() || v.chars().any(odd) {
                bail!(
                    "tunables.{}.{k} = {v:?} must be a single word without spaces, control \
                     characters or braces",
                    self.name
                );
            }
            values.insert(k.clone(), v.clone());
        }
        if self.is_jvm() {
            super::jvm_start::JvmStart::of(&self.name, &values)?;
        }
        Ok(values)
    }

    /// The argv to start this contender, placeholders expanded.
    pub fn command(
        &self,
        vars: &StartVars,
        tunables: &BTreeMap<String, String>,
    ) -> Result<Vec<String>> {
        let mut argv = Vec::new();
        for arg in &self.start {
            match arg.as_str() {
                "{java}" => argv.push(
                    vars.java
                        .with_context(|| format!("{} needs a JDK >= 21; set JAVA_HOME (e.g. apt-get install temurin-25-jdk)", self.name))?
                        .display()
                        .to_string(),
                ),
                "{jvm_flags}" => argv.extend(vars.jvm_flags.iter().cloned()),
                _ => argv.push(expand(arg, vars, tunables).with_context(|| format!("{}: start argument {arg:?}", self.name))?),
            }
        }
        argv[0] = self.program(&argv[0]);
        Ok(argv)
    }
}

fn expand(arg: &str, vars: &StartVars, tunables: &BTreeMap<String, String>) -> Result<String> {
    let mut out = String::new();
    let mut rest = arg;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').context("unclosed '{'")? + open;
        let key = &rest[open + 1..close];
        match key {
            "port" => out.push_str(&vars.port.to_string()),
            "address" => out.push_str(&vars.address.to_string()),
            _ => out.push_str(
                tunables
                    .get(key)
                    .with_context(|| format!("unknown placeholder {{{key}}}"))?,
            ),
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Every manifest under `root/contenders`, sorted by name.
pub fn discover(root: &Path) -> Result<Vec<Manifest>> {
    let dir = root.join("contenders");
    let mut out = Vec::new();
    for entry in
        std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?
    {
        let path = entry?.path().join("contender.toml");
        if path.is_file() {
            out.push(Manifest::load(&path)?);
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

pub fn find(all: &[Manifest], name: &str) -> Result<Manifest> {
    all.iter()
        .find(|m| m.name == name)
        .cloned()
        .with_context(|| {
            let names: Vec<_> = all.iter().map(|m| m.name.as_str()).collect();
            format!(
                "unknown contender {name:?}; known: {} (see `iobound list`)",
                names.join(", ")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::contender::LOOPBACK;

    fn manifest(extra: &str) -> Result<Manifest> {
        manifest_named("x", extra)
    }

    fn manifest_named(name: &str, extra: &str) -> Result<Manifest> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("contender.toml");
        std::fs::write(
            &path,
            format!(
                r#"
name = {name:?}
model = "event-loop"
language = "java"
framework = "F 1.0"
config = "defaults"
runtime = "jvm"
build = {{ toolchain = "maven" }}
artifact = "target/x.jar"
start = ["{{java}}", "{{jvm_flags}}", "-jar", "x.jar", "--address={{address}}", "--port={{port}}", "--threads={{threads}}"]
ready = "/plaintext"
[tunables.threads]
default = "200"
help = "worker threads"
{extra}"#
            ),
        )?;
        Manifest::load(&path)
    }

    #[test]
    fn a_name_that_could_leave_a_directory_or_hold_shell_syntax_is_refused_by_field() {
        for bad in ["../x", "a b", "x;id", "$(id)", "it's", ""] {
            let e = manifest_named(bad, "").unwrap_err().to_string();
            assert!(
                e.contains("name = ") && e.contains("letters, digits"),
                "{bad:?}: {e}"
            );
        }
        assert_eq!(
            manifest_named("go-net_http2", "").unwrap().name,
            "go-net_http2"
        );
    }

    #[test]
    fn expands_placeholders_and_tunables() {
        let m = manifest("").unwrap();
        let flags = vec!["-Xmx1g".to_string(), "-XX:+UseG1GC".to_string()];
        let java = PathBuf::from("/jdk/bin/java");
        let vars = StartVars {
            java: Some(&java),
            jvm_flags: &flags,
            address: IpAddr::from([10, 0, 0, 2]),
            port: 8080,
        };
        let mut over = BTreeMap::new();
        over.insert("threads".to_string(), "500".to_string());
        let t = m.resolve_tunables(Some(&over)).unwrap();
        assert_eq!(
            m.command(&vars, &t).unwrap(),
            [
                "/jdk/bin/java",
                "-Xmx1g",
                "-XX:+UseG1GC",
                "-jar",
                "x.jar",
                "--address=10.0.0.2",
                "--port=8080",
                "--threads=500"
            ]
        );
        assert_eq!(m.resolve_tunables(None).unwrap()["threads"], "200");
    }

    #[test]
    fn a_jvm_contender_has_the_jvm_start_tunable_without_its_manifest_saying_so() {
        let m = manifest("").unwrap();
        assert_eq!(m.resolve_tunables(None).unwrap()["jvm_start"], "default");
        let mut not_jvm = manifest("").unwrap();
        not_jvm.runtime = None;
        not_jvm.tunables.remove("jvm_start");
        let over = BTreeMap::from([("jvm_start".to_string(), "aot".to_string())]);
        let e = not_jvm
            .resolve_tunables(Some(&over))
            .unwrap_err()
            .to_string();
        assert!(e.contains("tunables.x.jvm_start is not a tunable"), "{e}");
    }

    #[test]
    fn rejects_unknown_tunables_and_models() {
        let m = manifest("").unwrap();
        let mut over = BTreeMap::new();
        over.insert("thread".to_string(), "5".to_string());
        let e = m.resolve_tunables(Some(&over)).unwrap_err().to_string();
        assert!(
            e.contains("tunables.x.thread is not a tunable")
                && e.contains("known: jvm_start, threads"),
            "{e}"
        );
        let e = manifest("").map(|mut m| {
            m.model = "fibers".into();
            m
        });
        assert!(e.is_ok());
        let bad = manifest("unknown_key = 1").unwrap_err().to_string();
        assert!(bad.contains("unknown field `unknown_key`"), "{bad}");
    }

    #[test]
    fn missing_java_says_what_to_install() {
        let m = manifest("").unwrap();
        let vars = StartVars {
            java: None,
            jvm_flags: &[],
            address: LOOPBACK,
            port: 1,
        };
        let e = format!(
            "{:#}",
            m.command(&vars, &m.resolve_tunables(None).unwrap())
                .unwrap_err()
        );
        assert!(e.contains("JDK >= 21"), "{e}");
    }

    /// Across machines a contender must listen on its host's address, not on loopback: each
    /// of the repository's contenders passes `{address}` on to its server (CI then checks that
    /// each really listens there: `verify --address 127.0.0.2`).
    #[test]
    fn every_contender_is_told_where_to_listen() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let java = PathBuf::from("/jdk/bin/java");
        let vars = StartVars {
            java: Some(&java),
            jvm_flags: &[],
            address: IpAddr::from([10, 9, 8, 7]),
            port: 8080,
        };
        let all = discover(&root).unwrap();
        assert!(all.len() >= 20, "{} manifests", all.len());
        for m in all {
            let argv = m
                .command(&vars, &m.resolve_tunables(None).unwrap())
                .unwrap();
            assert!(
                argv.iter().any(|a| a.contains("10.9.8.7")),
                "{}: its start command does not pass {{address}}: {argv:?}",
                m.name
            );
            assert!(
                !argv.iter().any(|a| a.contains("127.0.0.1")),
                "{}: its start command names loopback itself: {argv:?}",
                m.name
            );
        }
    }

    #[test]
    fn runtimes_fetched_into_the_cache_come_before_path_and_name_their_version() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("contenders/n");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(root.path().join(".cache/bin")).unwrap();
        let node = root.path().join(".cache/bin/node");
        std::fs::write(&node, "#!/bin/sh\necho \"Node.js v24.21.0\"\n").unwrap();
        std::fs::set_permissions(&node, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let text = "name = \"n\"\nmodel = \"event-loop\"\nlanguage = \"javascript\"\nframework = \"F\"\nconfig = \"c\"\nbuild = { toolchain = \"node\" }\nartifact = \"s.js\"\nstart = [\"node\", \"s.js\", \"--port={port}\"]\nversion = [\"node\", \"--version\"]\nready = \"/\"\n";
        std::fs::write(dir.join("contender.toml"), text).unwrap();
        let m = Manifest::load(&dir.join("contender.toml")).unwrap();
        let argv = m
            .command(
                &StartVars {
                    java: None,
                    jvm_flags: &[],
                    address: LOOPBACK,
                    port: 9,
                },
                &BTreeMap::new(),
            )
            .unwrap();
        assert_eq!(
            argv,
            [node.display().to_string(), "s.js".into(), "--port=9".into()]
        );
        assert_eq!(m.runtime_version(None).as_deref(), Some("Node.js v24.21.0"));
        // Without the cached runtime the bare name is left to PATH.
        std::fs::remove_file(&node).unwrap();
        assert_eq!(m.program("node"), "node");
        let mut none = m.clone();
        none.version = vec!["/nonexistent/runtime".into()];
        assert_eq!(
            none.runtime_version(None),
            None,
            "a version command that cannot run names nothing"
        );
    }
}
