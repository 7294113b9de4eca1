//! How a contender is built, tested, format-checked and formatted: its manifest's `[build]`
//! table. The launcher (`./iobound`) knows no contender and no language by name: it reads these
//! tables through `iobound list --builds`, prepares each toolchain once, and runs each folder's
//! steps there. A contender in a new language is a folder and a manifest.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Toolchains the launcher prepares itself, beyond a command found on PATH: "maven" (a JDK 21
/// or later and Maven; the Maven reactor, contenders/pom.xml, builds and tests every such
/// contender at once, and google-java-format and ktfmt check its sources), "python" (the
/// virtual environment .cache/python with the pinned packages) and "node" (Node.js 24, fetched
/// where the system's is older, and npm); "none" needs nothing (a test double, a script). Any
/// other name is a command that must be on PATH.
pub const PREPARED_TOOLCHAINS: &[&str] = &["maven", "python", "node", "none"];

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Build {
    /// One of PREPARED_TOOLCHAINS, or the command the steps need on PATH (e.g. "go").
    pub toolchain: String,
    /// How to install the toolchain, said when it is missing.
    #[serde(default)]
    pub install: Option<String>,
    /// Where the steps run, relative to the manifest's folder (default "."). Contenders that
    /// share code name its folder; one of them declares the steps, the others only `dir`.
    #[serde(default)]
    pub dir: Option<String>,
    /// Shell text that builds `output` from `inputs` (run by bash in `dir`).
    #[serde(default)]
    pub command: Option<String>,
    /// Files, folders or globs (relative to `dir`): the build runs again when one is newer
    /// than `output`.
    #[serde(default)]
    pub inputs: Vec<String>,
    /// What `command` makes (relative to `dir`); touched after each build.
    #[serde(default)]
    pub output: Option<String>,
    /// Shell text that runs the contender's unit tests (`./iobound test`, phase 2).
    #[serde(default)]
    pub test: Option<String>,
    /// Shell text that fails when a source is not in its formatter's style or a linter
    /// objects (`./iobound lint`, and the first phase of `./iobound test`).
    #[serde(default)]
    pub check: Option<String>,
    /// Shell text that rewrites the sources in that style (`./iobound format`).
    #[serde(default)]
    pub format: Option<String>,
}

impl Build {
    fn steps(&self) -> [(&'static str, Option<&str>); 4] {
        [
            ("command", self.command.as_deref()),
            ("test", self.test.as_deref()),
            ("check", self.check.as_deref()),
            ("format", self.format.as_deref()),
        ]
    }

    pub fn declares_steps(&self) -> bool {
        self.steps().iter().any(|(_, s)| s.is_some())
            || !self.inputs.is_empty()
            || self.output.is_some()
    }

    /// Checks one manifest's table on its own (the fields, not the folder it shares).
    pub fn validate(&self, manifest: &Path) -> Result<()> {
        let at = |field: &str| format!("{}: build.{field}", manifest.display());
        if !crate::util::files::is_plain_name(&self.toolchain) {
            bail!(
                "{} = {:?}: name one of {} or a command on PATH (letters, digits, '-', '_')",
                at("toolchain"),
                self.toolchain,
                PREPARED_TOOLCHAINS.join(", ")
            );
        }
        if self.toolchain == "maven" && self.declares_steps() {
            bail!(
                "{}: a \"maven\" contender is built, tested and checked by the Maven reactor \
                 (contenders/pom.xml); make it a module there and leave command, inputs, output, \
                 test, check and format out",
                at("toolchain")
            );
        }
        if self.command.is_some() != self.output.is_some() {
            bail!(
                "{}: give command and output together (the launcher builds again when an input \
                 is newer than the output)",
                at("command")
            );
        }
        for (field, step) in self.steps() {
            if step.is_some_and(|s| s.trim().is_empty() || s.contains(['\t', '\n'])) {
                bail!(
                    "{}: write one line of shell text, or leave the field out",
                    at(field)
                );
            }
        }
        let paths = self.dir.iter().chain(&self.output).chain(&self.inputs);
        if let Some(bad) = paths.into_iter().find(|p| p.is_empty() || p.contains('\t')) {
            bail!(
                "{}: {bad:?} is not a path (name a file or folder relative to the manifest's)",
                at("dir, inputs or output")
            );
        }
        Ok(())
    }
}
