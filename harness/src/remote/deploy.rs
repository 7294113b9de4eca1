//! The hosts of one run: an SSH connection to each load host (and to the contender host when
//! iobound starts or samples the server there), its clock offset (a run is refused beyond
//! `check::MAX_CLOCK_OFFSET_MS`), a private per-run directory (mktemp, 0700) holding a copy
//! of this iobound binary, removed with the connection when the run ends.

use super::check::MAX_CLOCK_OFFSET_MS;
use super::ssh::{tempfile_dir, Ssh};
use crate::plan::hosts::{Host, Inventory, Role};
use anyhow::{bail, Context, Result};
use std::net::IpAddr;

/// One host, ready: connected, its clock checked, iobound copied there.
pub struct HostReady {
    pub ssh: Ssh,
    /// The per-run directory on the host.
    pub dir: String,
    /// The iobound binary there.
    pub binary: String,
    pub cpus: Vec<usize>,
    /// How far its clock is ahead of ours (s).
    pub clock_offset_s: f64,
    /// The removal of `dir` registered for a second Ctrl-C (util::interrupt::register_remote).
    cleanup: u64,
}

pub struct Fleet {
    pub load: Vec<HostReady>,
    /// The contender host, when iobound runs or samples the server there.
    pub contender: Option<HostReady>,
    /// The services host, when iobound starts the services there (for built-in contenders).
    pub services: Option<HostReady>,
    /// What has been copied to the contender host's run directory so far (repository paths),
    /// so that each contender's files cross once per run.
    pub shipped: std::sync::Mutex<std::collections::BTreeSet<std::path::PathBuf>>,
    /// The only address HTTP load may go to (a pipeline's records go to the broker on the
    /// services host).
    pub contender_address: IpAddr,
    pub contender_name: String,
    /// Dropped last: the master sockets' directory.
    _control: tempfile_dir::Dir,
}

impl Fleet {
    /// Connects to every load host (and to the contender host when `contender_too`, to the
    /// services host when `services_too`),
    /// measures each one's clock offset, and copies this binary into a fresh private directory
    /// there. Nothing is left behind if any step fails.
    pub fn connect(inv: &Inventory, contender_too: bool, services_too: bool) -> Result<Fleet> {
        let contender = inv.contender().context(
            "the inventory has no host with the role \"contender\"; the load needs a target: give one host that role",
        )?;
        let loads = inv.with_role(Role::Load);
        if loads.is_empty() {
            bail!("the inventory has no host with the role \"load\"; give one or more hosts that role");
        }
        let services = inv.with_role(Role::Services);
        if services_too && services.len() != 1 {
            bail!("the inventory has {} hosts with the role \"services\"; the built-in contenders need one (where iobound starts PostgreSQL and the downstream service): give exactly one host that role", services.len());
        }
        let control = tempfile_dir::Dir::new("iobound-ssh")?;
        let mut fleet = Fleet {
            load: Vec::new(),
            contender: None,
            services: None,
            shipped: Default::default(),
            contender_address: contender.address,
            contender_name: contender.name.clone(),
            _control: control,
        };
        for h in loads {
            let ready = fleet.prepare(h, inv, "load")?;
            fleet.load.push(ready);
        }
        if contender_too {
            fleet.contender = Some(fleet.prepare(contender, inv, "contender")?);
        }
        if services_too {
            fleet.services = Some(fleet.prepare(services[0], inv, "services")?);
        }
        Ok(fleet)
    }

    /// Connects to `h`, checks its clock, makes its per-run directory and copies iobound there;
    /// what was made is removed again when a step fails.
    fn prepare(&self, h: &Host, inv: &Inventory, role: &str) -> Result<HostReady> {
        let ssh = Ssh::new(h, inv.known_hosts.as_deref(), self._control.path());
        let (offset, uncertainty, ahead) = ssh.clock_offset()?;
        let offset_s = if ahead {
            offset.as_secs_f64()
        } else {
            -offset.as_secs_f64()
        };
        if offset_s.abs() * 1000.0 > MAX_CLOCK_OFFSET_MS {
            ssh.close();
            bail!(
                "{role} host {}: its clock is {:+.1} ms (+- {:.1}) off this machine's; a run needs <= {MAX_CLOCK_OFFSET_MS} ms so that every host starts together: run chrony or systemd-timesyncd on both",
                h.name,
                offset_s * 1000.0,
                uncertainty.as_secs_f64() * 1000.0
            );
        }
        let dir = ssh
            .output("umask 077 && mktemp -d /tmp/iobound-run.XXXXXX")?
            .trim()
            .to_string();
        let cpus = match &h.cpus {
            Some(c) => crate::util::cpus::parse_cpu_syntax(c)?,
            None => Vec::new(),
        };
        // A second Ctrl-C skips the orderly end: it runs this instead.
        let cleanup = crate::util::interrupt::register_remote(&ssh.shell(&removal(&dir)));
        let ready = HostReady {
            binary: format!("{dir}/iobound"),
            ssh,
            dir,
            cleanup,
            cpus,
            clock_offset_s: offset_s,
        };
        let exe = std::env::current_exe().context("cannot find this iobound binary")?;
        if let Err(e) = ready.ssh.copy(&exe, &ready.binary) {
            ready.remove();
            return Err(e).with_context(|| format!("deploying iobound to {role} host {}", h.name));
        }
        Ok(ready)
    }

    /// Driver threads on a load host: one per CPU it was given, else one.
    pub fn threads(host: &HostReady) -> usize {
        host.cpus.len().max(1)
    }
}

/// The command that removes a per-run directory on its host: the orderly end runs it, and a
/// second Ctrl-C runs it too (registered at deploy).
fn removal(dir: &str) -> String {
    format!("rm -rf -- {}", crate::util::shell::quoted(dir))
}

impl HostReady {
    /// How what iobound starts there is pinned, for messages and the results.
    pub fn pinning(&self) -> String {
        if self.cpus.is_empty() {
            "not pinned (the inventory names no CPUs for it)".to_string()
        } else {
            format!(
                "pinned to CPU {}",
                crate::util::cpus::format_cpus(&self.cpus)
            )
        }
    }

    /// Removes the per-run directory and closes the connection.
    fn remove(&self) {
        if self.dir.starts_with("/tmp/iobound-run.") {
            let _ = self.ssh.run(&removal(&self.dir));
        }
        crate::util::interrupt::unregister_remote(self.cleanup);
        self.ssh.close();
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for h in self
            .load
            .iter()
            .chain(self.contender.iter())
            .chain(self.services.iter())
        {
            h.remove();
        }
    }
}
