//! The builds of every contender, one per folder, as the launcher runs them: contenders that
//! share a folder build it once, with the steps the one that declares them gives
//! (`iobound list --builds`).

use super::build_steps::Build;
use super::manifest::Manifest;
use crate::util::files::lexical;
use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One folder's build as the launcher runs it: the steps of the one manifest that declares
/// them (or none: the toolchain alone), in the folder they run in, relative to the checkout.
#[derive(Debug, Clone)]
pub struct FolderBuild {
    pub folder: PathBuf,
    pub build: Build,
}

/// The builds of every manifest, one per folder, in folder order. Refuses two manifests that
/// both declare steps for one folder, or name two toolchains for it.
pub fn folder_builds(root: &Path, manifests: &[Manifest]) -> Result<Vec<FolderBuild>> {
    let mut by_folder: BTreeMap<PathBuf, (String, FolderBuild)> = BTreeMap::new();
    for m in manifests {
        let folder = folder_of(root, m)?;
        let Some((first, seen)) = by_folder.get_mut(&folder) else {
            let entry = FolderBuild {
                folder: folder.clone(),
                build: m.build.clone(),
            };
            by_folder.insert(folder, (m.name.clone(), entry));
            continue;
        };
        if seen.build.toolchain != m.build.toolchain {
            bail!(
                "{} and {first} build {} with different toolchains ({:?}, {:?}); name one",
                m.name,
                folder.display(),
                m.build.toolchain,
                seen.build.toolchain
            );
        }
        if m.build.declares_steps() {
            if seen.build.declares_steps() {
                bail!(
                    "{} and {first} both declare the steps for {}: keep them in one manifest \
                     and give the other only build.dir and build.toolchain",
                    m.name,
                    folder.display()
                );
            }
            seen.build = m.build.clone();
            *first = m.name.clone();
        }
    }
    Ok(by_folder.into_values().map(|(_, b)| b).collect())
}

/// The folder `m` builds in, relative to the checkout `root`; an error when it is outside.
fn folder_of(root: &Path, m: &Manifest) -> Result<PathBuf> {
    let folder = lexical(&m.dir.join(m.build.dir.as_deref().unwrap_or(".")));
    match folder.strip_prefix(lexical(root)) {
        Ok(inside) => Ok(inside.to_path_buf()),
        Err(_) => bail!(
            "{}: build.dir = {:?} is outside the checkout; name a folder of it, relative to {}",
            m.name,
            m.build.dir.as_deref().unwrap_or("."),
            m.dir.display()
        ),
    }
}

/// `iobound list --builds`: a line per folder, tab-separated, for the launcher's `read` -
/// toolchain, folder, install hint, output, inputs (space-separated), command, test, check,
/// format - with "-" for a field left out (bash's `read` would merge empty fields).
pub fn builds_listing(builds: &[FolderBuild]) -> String {
    let or_dash = |s: Option<&str>| s.unwrap_or("-").to_string();
    builds
        .iter()
        .map(|f| {
            let b = &f.build;
            let inputs = (!b.inputs.is_empty()).then(|| b.inputs.join(" "));
            [
                b.toolchain.clone(),
                f.folder.display().to_string(),
                or_dash(b.install.as_deref()),
                or_dash(b.output.as_deref()),
                or_dash(inputs.as_deref()),
                or_dash(b.command.as_deref()),
                or_dash(b.test.as_deref()),
                or_dash(b.check.as_deref()),
                or_dash(b.format.as_deref()),
            ]
            .join("\t")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a plan runs needs built, as `iobound list --builds --plan PLAN` prints it for the
/// launcher: the lines of `builds` whose folder one of `contenders` builds in; for a contender
/// built by Maven, a line for the module its jar comes from (`spring-mvc-virtual` runs
/// `spring-mvc`'s); and a line per service the plan needs (toolchain `service`, folder
/// `postgres` or `kafka`, the latter with the Kafka load tool's module).
pub fn plan_listing(
    root: &Path,
    builds: &[FolderBuild],
    contenders: &[&Manifest],
    (database, kafka): (bool, bool),
) -> Result<String> {
    let folders = (contenders.iter())
        .map(|m| folder_of(root, m))
        .collect::<Result<std::collections::BTreeSet<PathBuf>>>()?;
    let root = lexical(root);
    let relative = |p: &Path| {
        let p = lexical(p);
        p.strip_prefix(&root).map_or(p.clone(), Path::to_path_buf)
    };
    let own: Vec<FolderBuild> = (builds.iter())
        .filter(|b| folders.contains(&b.folder) && b.build.toolchain != "maven")
        .cloned()
        .collect();
    let mut lines = vec![builds_listing(&own)];
    let dash = ["-"; 7].join("\t");
    let mut modules: std::collections::BTreeSet<PathBuf> = (contenders.iter())
        .filter(|m| m.build.toolchain == "maven")
        // The jar is <module>/target/<name>.jar.
        .filter_map(|m| {
            relative(&m.artifact_path())
                .parent()?
                .parent()
                .map(Path::to_path_buf)
        })
        .collect();
    if kafka {
        modules.insert(PathBuf::from("services/kafka-load"));
    }
    lines.extend(
        modules
            .iter()
            .map(|m| format!("maven\t{}\t{dash}", m.display())),
    );
    for (needed, service) in [(database, "postgres"), (kafka, "kafka")] {
        if needed {
            lines.push(format!("service\t{service}\t{dash}"));
        }
    }
    lines.retain(|l| !l.is_empty());
    Ok(lines.join("\n"))
}

/// An error naming `m` and what `./iobound build` runs for it, when its artifact is missing.
pub fn ensure_built(m: &Manifest) -> Result<()> {
    if !m.artifact_path().exists() {
        bail!(
            "{} is not built ({} is missing); run `./iobound build` (it runs {})",
            m.name,
            m.artifact_path().display(),
            describe(m)
        );
    }
    Ok(())
}

/// What `./iobound build` runs for a manifest, for the messages that ask for it.
pub fn describe(m: &Manifest) -> String {
    match (&m.build.command, m.build.toolchain.as_str()) {
        (Some(command), _) => format!(
            "`{command}` in {}",
            lexical(&m.dir.join(m.build.dir.as_deref().unwrap_or("."))).display()
        ),
        (None, "maven") => "`mvn -f contenders/pom.xml package`".into(),
        (None, "none") => "nothing: it needs no build".into(),
        (None, toolchain) => format!("the {toolchain} toolchain's set-up"),
    }
}

#[cfg(test)]
#[path = "folder_builds_tests.rs"]
mod tests;
