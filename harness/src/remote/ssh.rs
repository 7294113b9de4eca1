//! One SSH connection per host, through the system's OpenSSH client: keys or an agent only
//! (BatchMode: never a password prompt), host keys checked, one multiplexed master
//! connection per host (ControlMaster) so that every command after the first costs a round
//! trip, not a handshake.

use crate::plan::hosts::Host;
use crate::util::shell::quoted;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long connecting to a host may take before it counts as unreachable.
const CONNECT_TIMEOUT_S: u32 = 10;

#[derive(Clone)]
pub struct Ssh {
    pub host: Host,
    known_hosts: Option<PathBuf>,
    /// The master connection's socket, in a directory only this user can read.
    control: PathBuf,
}

impl Ssh {
    /// A connection to `host`; its master socket lives in `control_dir` (made 0700 by the
    /// caller, one per run). Nothing connects until the first command.
    pub fn new(host: &Host, known_hosts: Option<&Path>, control_dir: &Path) -> Ssh {
        Ssh {
            host: host.clone(),
            known_hosts: known_hosts.map(Path::to_path_buf),
            control: control_dir.join(format!("{}.sock", host.name)),
        }
    }

    /// Options every ssh and scp call gets.
    /// What to check when ssh to this host fails.
    fn advice(&self) -> String {
        format!(
            "check that the host is up, that `ssh -p {} {}` works with a key or an agent (no \
             password is ever used), and that its host key is known",
            self.host.port,
            self.host.destination()
        )
    }

    fn options(&self) -> Vec<String> {
        let mut o = vec![
            "BatchMode=yes".to_string(),
            "PasswordAuthentication=no".into(),
            "KbdInteractiveAuthentication=no".into(),
            format!("ConnectTimeout={CONNECT_TIMEOUT_S}"),
            "ServerAliveInterval=2".into(),
            "ServerAliveCountMax=3".into(),
            "ControlMaster=auto".into(),
            format!("ControlPath={}", self.control.display()),
            "ControlPersist=120".into(),
            "LogLevel=ERROR".into(),
        ];
        // Host keys are always checked, whatever the user's ssh_config says (`accept-new`
        // would trust a host seen for the first time): against the inventory's known_hosts
        // file where it names one, else the user's own.
        o.push("StrictHostKeyChecking=yes".into());
        if let Some(k) = &self.known_hosts {
            o.push(format!("UserKnownHostsFile={}", k.display()));
        }
        if let Some(id) = &self.host.identity {
            o.push(format!("IdentityFile={}", id.display()));
            o.push("IdentitiesOnly=yes".into());
        }
        o
    }

    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        for o in self.options() {
            c.arg("-o").arg(o);
        }
        c
    }

    /// The port, the user (`-l`, never `user@` where it could read as an option) and, after
    /// `--`, the address: nothing from the inventory can become an ssh option.
    fn target(&self, c: &mut Command) {
        c.arg("-p").arg(self.host.port.to_string());
        if let Some(u) = &self.host.user {
            c.arg("-l").arg(u);
        }
        c.arg("--").arg(self.host.address.to_string());
    }

    /// `ssh -- host script`: the remote shell runs `script`.
    pub fn shell(&self, script: &str) -> Command {
        let mut c = self.command("ssh");
        self.target(&mut c);
        c.arg(script);
        c
    }

    /// Runs `script` on the host and returns its output; an ssh failure (exit 255) is an
    /// error that says how to fix the connection.
    pub fn run(&self, script: &str) -> Result<Output> {
        let out =
            self.shell(script).stdin(Stdio::null()).output().context(
                "cannot run ssh; install OpenSSH's client (apt-get install openssh-client)",
            )?;
        if out.status.code() == Some(255) {
            bail!(
                "host {} ({}): ssh failed: {}; {}",
                self.host.name,
                self.host.destination(),
                String::from_utf8_lossy(&out.stderr).trim(),
                self.advice()
            );
        }
        Ok(out)
    }

    /// Runs `script` and returns its standard output; a non-zero exit is an error.
    pub fn output(&self, script: &str) -> Result<String> {
        let out = self.run(script)?;
        if !out.status.success() {
            bail!(
                "host {}: `{script}` failed ({}): {}",
                self.host.name,
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Starts `script` with its standard input and output piped to this process: the remote
    /// command ends when its input closes (the agent watches it), so dropping the connection
    /// stops it.
    /// The ssh client gets a process group of its own, so that Ctrl-C in the terminal reaches
    /// only the harness, which then stops the remote side in order (a second Ctrl-C kills the
    /// group, closing the channel, which stops the remote side too).
    pub fn spawn(&self, script: &str) -> Result<Child> {
        use std::os::unix::process::CommandExt;
        let child = self
            .shell(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .context("cannot run ssh")?;
        crate::util::interrupt::register(child.id() as i32);
        Ok(child)
    }

    /// Copies a local file to `remote` (a path on the host, made executable and private to
    /// the user) through the master connection: the file is the standard input of `cat` there,
    /// so the host needs neither scp nor an sftp subsystem.
    pub fn copy(&self, local: &Path, remote: &str) -> Result<()> {
        let file = std::fs::File::open(local)
            .with_context(|| format!("cannot read {}", local.display()))?;
        let out = self
            .shell(&format!("cat > {r} && chmod 700 {r}", r = quoted(remote)))
            .stdin(file)
            .output()
            .context("cannot run ssh")?;
        if !out.status.success() {
            bail!(
                "host {}: copying {} to {remote} failed: {}",
                self.host.name,
                local.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(())
    }

    /// This host's clock against ours, NTP-style: over one open channel, the host prints its
    /// time each time it reads a line, and the exchange with the shortest round trip of a few
    /// counts. Returns (offset, uncertainty, whether its clock is ahead): the offset is the
    /// host's time minus the midpoint of that round trip, give or take half of it.
    pub fn clock_offset(&self) -> Result<(Duration, Duration, bool)> {
        use std::io::{BufRead, BufReader, Write};
        // bash reads its clock without starting a process; `date` is the fallback.
        let script = "if command -v bash >/dev/null 2>&1; then exec bash -c 'while read -r _; do echo $EPOCHREALTIME; done'; else while read -r _; do date +%s.%N; done; fi";
        let mut child = self
            .shell(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot run ssh")?;
        let mut stdin = child.stdin.take().expect("piped");
        let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
        let mut best: Option<(f64, f64)> = None;
        let mut failure = None;
        for _ in 0..7 {
            let t0 = crate::util::clock::unix_seconds();
            let sent = Instant::now();
            if writeln!(stdin, "t").and_then(|_| stdin.flush()).is_err() {
                failure = Some("the channel closed".to_string());
                break;
            }
            let Some(Ok(text)) = lines.next() else {
                failure = Some("no answer".to_string());
                break;
            };
            let rtt = sent.elapsed().as_secs_f64();
            // $EPOCHREALTIME may use the locale's decimal separator.
            let Ok(remote) = text.trim().replace(',', ".").parse::<f64>() else {
                failure = Some(format!("it printed {text:?} for its time"));
                break;
            };
            let offset = remote - (t0 + rtt / 2.0);
            if best.is_none_or(|(_, r)| rtt < r) {
                best = Some((offset, rtt));
            }
        }
        drop(stdin);
        let _ = child.kill();
        let out = child.wait_with_output();
        let Some((offset, rtt)) = best else {
            let stderr = out
                .map(|o| String::from_utf8_lossy(&o.stderr).trim().to_string())
                .unwrap_or_default();
            bail!(
                "host {} ({}): cannot read its clock ({}){}; {}",
                self.host.name,
                self.host.destination(),
                failure.unwrap_or_default(),
                if stderr.is_empty() {
                    String::new()
                } else {
                    format!(": {stderr}")
                },
                self.advice()
            );
        };
        Ok((
            Duration::from_secs_f64(offset.abs()),
            Duration::from_secs_f64(rtt / 2.0),
            offset >= 0.0,
        ))
    }

    /// Closes the master connection (processes it started have already been stopped).
    pub fn close(&self) {
        let mut c = self.command("ssh");
        c.arg("-O").arg("exit");
        self.target(&mut c);
        let _ = c
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A private directory for the master sockets of one run (removed when dropped).
pub fn control_dir() -> Result<tempfile_dir::Dir> {
    tempfile_dir::Dir::new("iobound-ssh")
}

/// A directory made 0700 under the system's temporary directory and removed on drop.
pub mod tempfile_dir {
    use anyhow::{Context, Result};
    use std::os::unix::fs::DirBuilderExt;
    use std::path::{Path, PathBuf};

    pub struct Dir(PathBuf);

    impl Dir {
        /// A new directory `{prefix}-{pid}.{n}`, after removing those of harnesses that no
        /// longer run (a killed one cannot remove its own).
        pub fn new(prefix: &str) -> Result<Dir> {
            let base = std::env::temp_dir();
            crate::util::files::sweep_stale(&base, &format!("{prefix}-"));
            // Short: a socket path must stay under ~100 bytes.
            let path = base.join(format!(
                "{prefix}-{}.{}",
                std::process::id(),
                crate::util::clock::unix_seconds() as u64 % 100_000
            ));
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            Ok(Dir(path))
        }

        pub fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::hosts::Role;

    #[test]
    fn a_killed_harness_s_control_directory_goes_at_the_next_start() {
        // A pid above Linux's largest (2^22) never runs: its harness is gone.
        let dead = std::env::temp_dir().join("iobound-ssh-sweeptest-2147483000.1");
        std::fs::create_dir_all(&dead).unwrap();
        let own = tempfile_dir::Dir::new("iobound-ssh-sweeptest").unwrap();
        assert!(!dead.exists());
        let name = own
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        assert!(
            name.starts_with(&format!("iobound-ssh-sweeptest-{}.", std::process::id())),
            "{name}"
        );
        let path = own.path().to_path_buf();
        drop(own);
        assert!(!path.exists());
    }

    fn host(user: Option<&str>) -> Host {
        Host {
            name: "app".into(),
            address: "10.0.0.2".parse().unwrap(),
            user: user.map(str::to_string),
            port: 2222,
            identity: None,
            roles: vec![Role::Contender],
            cpus: None,
        }
    }

    fn argv(c: &Command) -> Vec<String> {
        c.get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn the_user_goes_with_l_the_address_after_dashes_and_host_keys_are_always_checked() {
        let ssh = Ssh::new(&host(Some("deploy")), None, Path::new("/run/x"));
        let a = argv(&ssh.shell("true"));
        let tail = &a[a.len() - 7..];
        assert_eq!(
            tail,
            ["-p", "2222", "-l", "deploy", "--", "10.0.0.2", "true"],
            "{a:?}"
        );
        // No known_hosts file in the inventory: the user's own, still checked strictly.
        assert!(
            a.contains(&"StrictHostKeyChecking=yes".to_string()),
            "{a:?}"
        );
        assert!(!a.iter().any(|x| x.contains('@')), "{a:?}");
        let without = argv(&Ssh::new(&host(None), None, Path::new("/run/x")).shell("true"));
        assert!(!without.contains(&"-l".to_string()), "{without:?}");
    }
}
