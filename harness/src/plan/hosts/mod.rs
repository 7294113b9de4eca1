//! The inventory of hosts a run may use beyond this machine: each host's SSH destination, its
//! roles (`contender`, `services`, `load`) and the CPUs to use there. Read from iobound's own
//! `hosts.toml`, or from an Ansible inventory (INI or YAML, groups named after the roles) so
//! that a team keeps its hosts in one place. Checked before anything connects: every error
//! names the host and the field, and says how to fix it.

mod ansible;
#[cfg(test)]
mod tests;

use ansible::{from_ansible_ini, from_ansible_yaml};
use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// What a host is used for. A host may have several roles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Runs the contender under test (and the sampler beside it).
    Contender,
    /// Runs PostgreSQL, Kafka and the downstream service.
    Services,
    /// Runs a share of the load (iobound's own driver).
    Load,
}

impl Role {
    pub(super) fn parse(s: &str) -> Option<Role> {
        match s {
            "contender" => Some(Role::Contender),
            "services" => Some(Role::Services),
            "load" => Some(Role::Load),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Role::Contender => "contender",
            Role::Services => "services",
            Role::Load => "load",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Host {
    pub name: String,
    /// Where SSH connects and where traffic for this host goes: an IP address (a name is
    /// refused so that load can only go where the inventory says).
    pub address: IpAddr,
    pub user: Option<String>,
    pub port: u16,
    /// Private key for this host; without one, ssh uses the agent or its usual keys.
    pub identity: Option<PathBuf>,
    pub roles: Vec<Role>,
    /// CPUs to pin to on this host (taskset -c syntax); all of them when not given.
    pub cpus: Option<String>,
}

impl Host {
    /// `user@address` (or the address alone) for ssh.
    pub fn destination(&self) -> String {
        match &self.user {
            Some(u) => format!("{u}@{}", self.address),
            None => self.address.to_string(),
        }
    }

    pub fn has(&self, role: Role) -> bool {
        self.roles.contains(&role)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Inventory {
    pub hosts: Vec<Host>,
    /// A known_hosts file to check host keys against (instead of the user's own).
    pub known_hosts: Option<PathBuf>,
}

impl Inventory {
    /// Reads an inventory: `.toml` is iobound's format, `.yml`/`.yaml` an Ansible YAML
    /// inventory, anything else an Ansible INI inventory.
    pub fn load(path: &Path) -> Result<Inventory> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the inventory {}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let raw = match ext {
            "toml" => from_toml(&text),
            "yml" | "yaml" => from_ansible_yaml(&text),
            _ => from_ansible_ini(&text),
        }
        .with_context(|| format!("inventory {}", path.display()))?;
        raw.validate(base)
            .with_context(|| format!("inventory {}", path.display()))
    }

    pub fn with_role(&self, role: Role) -> Vec<&Host> {
        self.hosts.iter().filter(|h| h.has(role)).collect()
    }

    pub fn contender(&self) -> Option<&Host> {
        self.hosts.iter().find(|h| h.has(Role::Contender))
    }
}

/// A host as read, before its fields are checked.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct RawHost {
    pub name: String,
    pub vars: BTreeMap<String, String>,
    pub roles: Vec<String>,
}

#[derive(Debug, Default, PartialEq)]
pub(super) struct RawInventory {
    pub hosts: Vec<RawHost>,
    pub known_hosts: Option<String>,
}

impl RawInventory {
    /// The host called `name`, added if new (a host may be listed in several groups).
    pub(super) fn host(&mut self, name: &str) -> &mut RawHost {
        if let Some(i) = self.hosts.iter().position(|h| h.name == name) {
            return &mut self.hosts[i];
        }
        self.hosts.push(RawHost {
            name: name.to_string(),
            ..RawHost::default()
        });
        self.hosts.last_mut().expect("just pushed")
    }

    fn validate(self, base: &Path) -> Result<Inventory> {
        if self.hosts.is_empty() {
            bail!("no hosts; list at least a contender host and a load host (see docs/hosts.md)");
        }
        let resolve = |p: &str| {
            let p = expand_home(p);
            if p.is_absolute() {
                p
            } else {
                base.join(p)
            }
        };
        let mut hosts = Vec::new();
        for raw in &self.hosts {
            hosts.push(raw.validate(&resolve)?);
        }
        let contenders = hosts.iter().filter(|h| h.has(Role::Contender)).count();
        if contenders > 1 {
            bail!("{contenders} hosts have the role \"contender\"; a run measures one contender host, keep the role on one");
        }
        let known_hosts = self.known_hosts.as_deref().map(resolve);
        if let Some(k) = &known_hosts {
            if !k.exists() {
                bail!(
                    "known_hosts (iobound_known_hosts in an Ansible inventory) = {:?}: no such file; give the file of host keys to check, or remove the field to use ~/.ssh/known_hosts",
                    k.display()
                );
            }
        }
        Ok(Inventory { hosts, known_hosts })
    }
}

impl RawHost {
    fn validate(&self, resolve: &dyn Fn(&str) -> PathBuf) -> Result<Host> {
        let name = &self.name;
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            bail!("host name {name:?}: use letters, digits, '-', '_' or '.'");
        }
        let known = [
            "address",
            "user",
            "port",
            "identity",
            "cpus",
            "ansible_host",
            "ansible_user",
            "ansible_port",
            "ansible_ssh_private_key_file",
            "iobound_cpus",
        ];
        for (key, value) in &self.vars {
            if known.contains(&key.as_str()) || harmless_ansible(key, value) {
                continue;
            }
            if key.starts_with("ansible_") {
                // Ignoring it would connect otherwise than the inventory says (a ProxyJump in
                // ansible_ssh_common_args, a password, become): refused by name instead.
                bail!("host {name}: {key} is an Ansible setting iobound does not honour (it connects with OpenSSH, keys only, from ansible_host, ansible_user, ansible_port and ansible_ssh_private_key_file); remove it for iobound, or put what it does in ~/.ssh/config");
            }
            bail!("host {name}: unknown field {key:?}; the fields are address, user, port, identity, cpus (or Ansible's ansible_host, ansible_user, ansible_port, ansible_ssh_private_key_file, iobound_cpus)");
        }
        // A field as the inventory spells it (iobound's name or Ansible's), with its value:
        // messages name the one the user wrote.
        let var = |a: &'static str, b: &'static str| {
            self.vars
                .get(a)
                .map(|v| (a, v.clone()))
                .or_else(|| self.vars.get(b).map(|v| (b, v.clone())))
        };
        // Ansible's host name is its address when ansible_host is not set.
        let (address_key, address_text) =
            var("address", "ansible_host").unwrap_or(("address (the host's name)", name.clone()));
        let address: IpAddr = address_text.parse().map_err(|_| {
            anyhow::anyhow!("host {name}: {address_key} {address_text:?} is not an IP address; give the address traffic should go to (e.g. address = \"10.0.0.2\"): a name is not resolved, so that load only goes where the inventory says")
        })?;
        let port = match var("port", "ansible_port") {
            None => 22,
            Some((key, p)) => p.parse::<u16>().ok().filter(|p| *p > 0).with_context(|| {
                format!("host {name}: {key} {p:?} is not a TCP port; give 1-65535 (22 is ssh's)")
            })?,
        };
        let identity = var("identity", "ansible_ssh_private_key_file");
        if let Some((key, p)) = &identity {
            if !resolve(p).exists() {
                bail!(
                    "host {name}: {key} {:?}: no such file; give the private key ssh should use, or remove it to use the agent",
                    resolve(p).display()
                );
            }
        }
        let identity = identity.map(|(_, p)| resolve(&p));
        let cpus = var("cpus", "iobound_cpus");
        if let Some((key, c)) = &cpus {
            crate::util::cpus::parse_cpu_syntax(c).with_context(|| {
                format!("host {name}: {key} {c:?}; use taskset -c syntax, e.g. \"0-3\" or \"0,2\"")
            })?;
        }
        let cpus = cpus.map(|(_, c)| c);
        let mut roles = Vec::new();
        for r in &self.roles {
            match Role::parse(r) {
                Some(role) if !roles.contains(&role) => roles.push(role),
                Some(_) => {}
                None => bail!(
                    "host {name}: role {r:?} is unknown; roles are contender, services and load"
                ),
            }
        }
        if roles.is_empty() {
            bail!("host {name} has no role: give it roles, one or more of contender, services, load (in Ansible, groups of those names)");
        }
        roles.sort();
        let user = var("user", "ansible_user");
        if let Some((key, u)) = user.as_ref().filter(|(_, u)| !valid_user(u)) {
            bail!(
                "host {name}: {key} {u:?} is not a user name; use letters, digits, '.', '_' and \
                 '-' (not first), e.g. user = \"root\""
            );
        }
        let user = user.map(|(_, u)| u);
        Ok(Host {
            name: name.clone(),
            address,
            user,
            port,
            identity,
            roles,
            cpus,
        })
    }
}

/// Ansible settings that change nothing about how iobound reaches a host: the Python Ansible
/// would run there, and a connection that is ssh anyway.
fn harmless_ansible(key: &str, value: &str) -> bool {
    key == "ansible_python_interpreter" || (key == "ansible_connection" && value == "ssh")
}

/// A login name ssh can be given: what POSIX calls portable, at most 32 characters, never
/// starting with '-' (which ssh would read as an option).
fn valid_user(u: &str) -> bool {
    !u.is_empty()
        && u.len() <= 32
        && !u.starts_with('-')
        && u.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn expand_home(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(p),
    }
}

// ---- iobound's TOML --------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlFile {
    #[serde(default)]
    known_hosts: Option<String>,
    #[serde(default, rename = "host")]
    hosts: Vec<TomlHost>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlHost {
    name: String,
    address: String,
    user: Option<String>,
    port: Option<u16>,
    identity: Option<String>,
    roles: Vec<String>,
    cpus: Option<String>,
}

fn from_toml(text: &str) -> Result<RawInventory> {
    let file: TomlFile = toml::from_str(text).context(
        "not a valid hosts file; each host is a [[host]] table with name, address and roles",
    )?;
    let mut inv = RawInventory {
        known_hosts: file.known_hosts,
        ..RawInventory::default()
    };
    for h in file.hosts {
        if inv.hosts.iter().any(|x| x.name == h.name) {
            bail!(
                "host {} is listed twice; give each [[host]] its own name",
                h.name
            );
        }
        let raw = inv.host(&h.name);
        raw.vars.insert("address".into(), h.address);
        let optional = [
            ("user", h.user),
            ("port", h.port.map(|p| p.to_string())),
            ("identity", h.identity),
            ("cpus", h.cpus),
        ];
        for (k, v) in optional {
            if let Some(v) = v {
                raw.vars.insert(k.into(), v);
            }
        }
        raw.roles = h.roles;
    }
    Ok(inv)
}
