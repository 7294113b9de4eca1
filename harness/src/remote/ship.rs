//! What the controller puts on a host for the built-in contenders and services: the files a
//! contender needs from this checkout (its manifest's `deploy`, keeping their place in the
//! repository, under the run's directory there), PostgreSQL's binaries, and what it asks the
//! host first (`iobound agent probe`: a free port of its address, the JDK it has).

use super::deploy::HostReady;
use crate::services::manifest::Manifest;
use crate::util::files::lexical;
use crate::util::shell::{command_line, quoted};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// What `iobound agent probe ADDRESS --ports N` prints: N distinct ports free on ADDRESS
/// there, and the `java` (>= 21) a JVM contender starts with there, if the host has one.
#[derive(Debug, Serialize, Deserialize)]
pub struct Probe {
    pub ports: Vec<u16>,
    pub java: Option<String>,
}

impl Probe {
    /// On this host (the agent's side): the ports are all held at once while they are
    /// picked, so that none is handed out twice.
    pub fn here(address: IpAddr, ports: usize) -> Result<Probe> {
        let held = (0..ports.max(1))
            .map(|_| std::net::TcpListener::bind((address, 0)))
            .collect::<std::io::Result<Vec<_>>>()
            .with_context(|| format!("no free port on {address}"))?;
        Ok(Probe {
            ports: held
                .iter()
                .map(|l| l.local_addr().map(|a| a.port()))
                .collect::<std::io::Result<_>>()?,
            java: crate::services::jdk::find_java().map(|p| p.display().to_string()),
        })
    }

    /// On host `h`, through its connection: `ports` free ports of `address` there.
    pub fn of(h: &HostReady, address: IpAddr, ports: usize) -> Result<Probe> {
        let (address, count) = (address.to_string(), ports.to_string());
        let text = h.ssh.output(&command_line(&[
            &h.binary, "agent", "probe", &address, "--ports", &count,
        ]))?;
        let line = text.lines().last().unwrap_or_default();
        let probe: Probe = serde_json::from_str(line).with_context(|| {
            format!(
                "host {}: `iobound agent probe` answered {text:?}",
                h.ssh.host.name
            )
        })?;
        if probe.ports.len() < ports {
            bail!(
                "host {}: `iobound agent probe` gave {} port(s) where {ports} were asked for",
                h.ssh.host.name,
                probe.ports.len()
            );
        }
        Ok(probe)
    }
}

/// The repository a manifest belongs to (contenders/NAME/contender.toml).
pub fn repo_root(m: &Manifest) -> Result<PathBuf> {
    let root = m.dir.parent().and_then(Path::parent).with_context(|| {
        format!(
            "{}: a contender's folder is contenders/NAME in the repository",
            m.name
        )
    })?;
    Ok(std::fs::canonicalize(root)?)
}

/// The files and folders a contender host needs to start `m`, relative to the repository:
/// its manifest and its `deploy` entries, or its artifact alone. Each must exist here (built)
/// and lie inside the repository.
pub fn files_of(m: &Manifest) -> Result<Vec<PathBuf>> {
    let root = repo_root(m)?;
    let dir = std::fs::canonicalize(&m.dir)?;
    let wanted = if m.deploy.is_empty() {
        std::slice::from_ref(&m.artifact)
    } else {
        &m.deploy[..]
    };
    // The manifest too: its folder is where the contender starts.
    let mut out = vec![dir
        .join("contender.toml")
        .strip_prefix(&root)?
        .to_path_buf()];
    for entry in wanted {
        let full = lexical(&dir.join(entry));
        let Ok(rel) = full.strip_prefix(&root) else {
            bail!("{}: deploy entry {entry:?} is outside the repository; name files of this checkout, relative to {}", m.name, m.dir.display());
        };
        if std::fs::symlink_metadata(&full).is_err() {
            bail!(
                "{}: {} is missing; run `./iobound build` (it runs {})",
                m.name,
                full.display(),
                crate::services::folder_builds::describe(m)
            );
        }
        out.push(rel.to_path_buf());
    }
    Ok(out)
}

/// Copies `files` (relative to `root`) into `remote` on host `h`, keeping their paths: one
/// tar stream through the SSH connection (the host needs tar, nothing else).
pub fn ship(h: &HostReady, root: &Path, files: &[PathBuf], remote: &str) -> Result<()> {
    let mut tar = std::process::Command::new("tar")
        .arg("-C")
        .arg(root)
        .arg("-cf")
        .arg("-")
        .arg("--")
        .args(files)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run tar")?;
    let stream = tar.stdout.take().expect("piped");
    let unpacked = h
        .ssh
        .shell(&format!(
            "mkdir -p {r} && tar -xf - -C {r}",
            r = quoted(remote)
        ))
        .stdin(stream)
        .output()
        .context("cannot run ssh")?;
    let packed = tar.wait_with_output()?;
    if !packed.status.success() || !unpacked.status.success() {
        bail!(
            "copying {} to host {} failed: {}{}",
            files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            h.ssh.host.name,
            String::from_utf8_lossy(&packed.stderr).trim(),
            String::from_utf8_lossy(&unpacked.stderr).trim()
        );
    }
    Ok(())
}

/// A start command built here, for the host that holds the repository's files under
/// `remote_root`: every argument naming this checkout names that copy instead.
pub fn on_host(argv: Vec<String>, root: &Path, remote_root: &str) -> Vec<String> {
    let here = root.display().to_string();
    argv.into_iter()
        .map(|a| match a.strip_prefix(&here) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                format!("{remote_root}{rest}")
            }
            _ => a,
        })
        .collect()
}

/// `iobound agent postgres`: a fresh data directory at `data`, then PostgreSQL in the
/// foreground in place of this process (so that stopping the agent's process group stops it),
/// listening on `address:port`; other hosts log in as iobound with IOBOUND_DB_PASSWORD.
pub fn serve_postgres(address: IpAddr, port: u16, data: &Path) -> Result<()> {
    use crate::services::database;
    use std::os::unix::process::CommandExt;
    let password = std::env::var("IOBOUND_DB_PASSWORD").unwrap_or_default();
    if password.is_empty() {
        bail!("IOBOUND_DB_PASSWORD is empty: a server other hosts reach needs a password");
    }
    let exe = std::env::current_exe()?;
    let bin = database::find_binaries(exe.parent().unwrap_or(Path::new(".")))?;
    database::init_data_dir(&bin, data, &password)?;
    let s = |p: &Path| p.display().to_string();
    let argv = database::as_unprivileged(vec![
        s(&bin.join("postgres")),
        "-D".into(),
        s(data),
        "-p".into(),
        port.to_string(),
        "-k".into(),
        s(data),
        "-c".into(),
        format!("listen_addresses={address}"),
        "-c".into(),
        "max_connections=300".into(),
    ]);
    let err = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .env_remove("IOBOUND_DB_PASSWORD")
        .exec();
    bail!("cannot run {}: {err}", argv[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_built_here_names_the_copy_on_the_host() {
        let argv = [
            "/repo/.cache/bin/node",
            "server.js",
            "/repo",
            "/repository/x",
            "--port=1",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            on_host(argv, Path::new("/repo"), "/tmp/run/repo"),
            [
                "/tmp/run/repo/.cache/bin/node",
                "server.js",
                "/tmp/run/repo",
                "/repository/x",
                "--port=1"
            ]
        );
    }

    /// A contender that starts in its own folder from files elsewhere in the repository (as
    /// the Python ones do) gets its folder there too; a file not built is named with the fix.
    #[test]
    fn what_is_copied_keeps_the_contenders_folder_and_names_what_is_missing() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("contenders/x");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(root.path().join("contenders/app")).unwrap();
        std::fs::write(root.path().join("contenders/app/main.py"), "").unwrap();
        let text = "name = \"x\"\nmodel = \"event-loop\"\nlanguage = \"python\"\nframework = \"F\"\nconfig = \"c\"\nbuild = { toolchain = \"python\", dir = \"../app\" }\nartifact = \"../app/main.py\"\nstart = [\"python\", \"../app/main.py\"]\nready = \"/\"\ndeploy = [\"../app\"]\n";
        std::fs::write(dir.join("contender.toml"), text).unwrap();
        let mut m = Manifest::load(&dir.join("contender.toml")).unwrap();
        assert_eq!(
            files_of(&m).unwrap(),
            [
                PathBuf::from("contenders/x/contender.toml"),
                PathBuf::from("contenders/app")
            ]
        );
        m.deploy = vec!["target/x.bin".into()];
        let e = format!("{:#}", files_of(&m).unwrap_err());
        assert!(
            e.contains(
                "x.bin is missing; run `./iobound build` (it runs the python toolchain's set-up)"
            ),
            "{e}"
        );
        m.deploy = vec!["../../../elsewhere".into()];
        let e = format!("{:#}", files_of(&m).unwrap_err());
        assert!(e.contains("is outside the repository"), "{e}");
    }

    #[test]
    fn every_contender_names_what_its_host_needs_inside_the_repository() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let root = std::fs::canonicalize(root).unwrap();
        for m in crate::services::manifest::discover(&root).unwrap() {
            for entry in m.deploy.iter().chain([&m.artifact]) {
                let full = lexical(&std::fs::canonicalize(&m.dir).unwrap().join(entry));
                assert!(
                    full.starts_with(&root) && full != root,
                    "{}: {entry} is not inside the repository",
                    m.name
                );
            }
            // The artifact is among what is copied, where deploy is given.
            if !m.deploy.is_empty() {
                let artifact = lexical(&m.dir.join(&m.artifact));
                assert!(
                    m.deploy
                        .iter()
                        .any(|d| artifact.starts_with(lexical(&m.dir.join(d)))),
                    "{}: deploy {:?} leaves out the artifact {}",
                    m.name,
                    m.deploy,
                    m.artifact
                );
            }
        }
    }
}
