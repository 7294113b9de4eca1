//! The inventory of hosts a run may use beyond this machine: each host's SSH destination, its
//! roles (`contender`, `services`, `load`) and the CPUs to use there. Read from iobound's own
//! `hosts.toml`, or from an Ansible inventory (INI or YAML, groups named after the roles) so
//! that a team keeps its hosts in one place. Checked before anything connects: every error
//! names the host and the field, and says how to fix it.

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
    fn parse(s: &str) -> Option<Role> {
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
struct RawHost {
    name: String,
    vars: BTreeMap<String, String>,
    roles: Vec<String>,
}

#[derive(Debug, Default, PartialEq)]
struct RawInventory {
    hosts: Vec<RawHost>,
    known_hosts: Option<String>,
}

impl RawInventory {
    /// The host called `name`, added if new (a host may be listed in several groups).
    fn host(&mut self, name: &str) -> &mut RawHost {
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
                    "known_hosts = {:?}: no such file; give the file of host keys to check, or remove the field to use ~/.ssh/known_hosts",
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
        for key in self.vars.keys() {
            if !known.contains(&key.as_str()) && !key.starts_with("ansible_") {
                bail!("host {name}: unknown field {key:?}; the fields are address, user, port, identity, cpus (or Ansible's ansible_host, ansible_user, ansible_port, ansible_ssh_private_key_file, iobound_cpus)");
            }
        }
        let var = |a: &str, b: &str| self.vars.get(a).or_else(|| self.vars.get(b)).cloned();
        // Ansible's host name is its address when ansible_host is not set.
        let address_text = var("address", "ansible_host").unwrap_or_else(|| name.clone());
        let address: IpAddr = address_text.parse().map_err(|_| {
            anyhow::anyhow!("host {name}: address {address_text:?} is not an IP address; give the address traffic should go to (e.g. address = \"10.0.0.2\"): a name is not resolved, so that load only goes where the inventory says")
        })?;
        let port = match var("port", "ansible_port") {
            None => 22,
            Some(p) => p.parse::<u16>().ok().filter(|p| *p > 0).with_context(|| {
                format!("host {name}: port {p:?} is not a TCP port; give 1-65535 (22 is ssh's)")
            })?,
        };
        let identity = var("identity", "ansible_ssh_private_key_file").map(|p| resolve(&p));
        if let Some(id) = &identity {
            if !id.exists() {
                bail!(
                    "host {name}: identity {:?}: no such file; give the private key ssh should use, or remove it to use the agent",
                    id.display()
                );
            }
        }
        let cpus = var("cpus", "iobound_cpus");
        if let Some(c) = &cpus {
            crate::util::parse_cpu_syntax(c).with_context(|| {
                format!("host {name}: cpus {c:?}; use taskset -c syntax, e.g. \"0-3\" or \"0,2\"")
            })?;
        }
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
            bail!("host {name} has no role; give it one or more of contender, services, load");
        }
        roles.sort();
        Ok(Host {
            name: name.clone(),
            address,
            user: var("user", "ansible_user"),
            port,
            identity,
            roles,
            cpus,
        })
    }
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

// ---- Ansible INI -----------------------------------------------------------------------

/// Ansible's INI inventory: `[group]` sections of host lines (`name key=value ...`),
/// `[group:vars]` sections of `key=value` lines, `[group:children]` sections naming groups.
/// Groups named contender, services and load give their hosts that role; other groups only
/// carry hosts and variables. `iobound_known_hosts` in `[all:vars]` names a known_hosts file.
fn from_ansible_ini(text: &str) -> Result<RawInventory> {
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    let mut section = ("ungrouped".to_string(), "hosts");
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        let at = n + 1;
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(inner) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = match inner.split_once(':') {
                None => (inner.to_string(), "hosts"),
                Some((g, "vars")) => (g.to_string(), "vars"),
                Some((g, "children")) => (g.to_string(), "children"),
                Some((_, other)) => bail!("line {at}: section [{inner}]: \":{other}\" is not an Ansible section kind; use :vars or :children"),
            };
            groups.entry(section.0.clone()).or_default();
            continue;
        }
        let group = groups.entry(section.0.clone()).or_default();
        match section.1 {
            "hosts" => {
                let words = split_words(line).with_context(|| format!("line {at}"))?;
                let (name, vars) = words.split_first().expect("non-empty line");
                let mut host_vars = BTreeMap::new();
                for kv in vars {
                    let (k, v) = kv.split_once('=').with_context(|| {
                        format!("line {at}: {kv:?} after the host name is not key=value")
                    })?;
                    host_vars.insert(k.to_string(), v.to_string());
                }
                group.hosts.push((name.clone(), host_vars));
            }
            "vars" => {
                let (k, v) = line.split_once('=').with_context(|| {
                    format!("line {at}: {line:?} in a :vars section is not key=value")
                })?;
                group.vars.insert(k.trim().to_string(), unquote(v.trim()));
            }
            _ => group.children.push(line.to_string()),
        }
    }
    resolve_groups(groups)
}

/// Splits a host line into words, honouring single and double quotes.
fn split_words(line: &str) -> Result<Vec<String>> {
    let (mut words, mut word, mut quote, mut any) = (Vec::new(), String::new(), None, false);
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            (None, c) => word.push(c),
        }
    }
    if quote.is_some() {
        bail!("unclosed quote in {line:?}");
    }
    if any || !word.is_empty() {
        words.push(word);
    }
    Ok(words)
}

fn unquote(v: &str) -> String {
    for q in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner.to_string();
        }
    }
    v.to_string()
}

// ---- Ansible YAML ----------------------------------------------------------------------

#[derive(Deserialize, Default)]
struct YamlGroup {
    #[serde(default)]
    hosts: Option<BTreeMap<String, Option<BTreeMap<String, serde_norway::Value>>>>,
    #[serde(default)]
    vars: Option<BTreeMap<String, serde_norway::Value>>,
    #[serde(default)]
    children: Option<BTreeMap<String, Option<YamlGroup>>>,
}

/// Ansible's YAML inventory: groups (at the top or under `all.children`) with `hosts`
/// (name -> variables), `vars` and `children`, read with a YAML parser.
fn from_ansible_yaml(text: &str) -> Result<RawInventory> {
    let top: BTreeMap<String, Option<YamlGroup>> = serde_norway::from_str(text).context(
        "not an Ansible YAML inventory; it maps group names to hosts, vars and children",
    )?;
    let mut groups = BTreeMap::new();
    for (name, g) in top {
        flatten_yaml(&name, g.unwrap_or_default(), &mut groups)?;
    }
    resolve_groups(groups)
}

fn yaml_scalar(group: &str, key: &str, v: &serde_norway::Value) -> Result<String> {
    Ok(match v {
        serde_norway::Value::String(s) => s.clone(),
        serde_norway::Value::Number(n) => n.to_string(),
        serde_norway::Value::Bool(b) => b.to_string(),
        _ => bail!("group {group}: {key} must be a single value (a string or a number)"),
    })
}

fn flatten_yaml(name: &str, g: YamlGroup, out: &mut BTreeMap<String, Group>) -> Result<()> {
    let mut group = Group::default();
    for (host, vars) in g.hosts.unwrap_or_default() {
        let mut hv = BTreeMap::new();
        for (k, v) in vars.unwrap_or_default() {
            hv.insert(k.clone(), yaml_scalar(name, &k, &v)?);
        }
        group.hosts.push((host, hv));
    }
    for (k, v) in g.vars.unwrap_or_default() {
        group.vars.insert(k.clone(), yaml_scalar(name, &k, &v)?);
    }
    for (child, cg) in g.children.unwrap_or_default() {
        group.children.push(child.clone());
        flatten_yaml(&child, cg.unwrap_or_default(), out)?;
    }
    let entry = out.entry(name.to_string()).or_default();
    entry.hosts.extend(group.hosts);
    entry.vars.extend(group.vars);
    entry.children.extend(group.children);
    Ok(())
}

// ---- groups to hosts, as Ansible does ------------------------------------------------------

#[derive(Debug, Default)]
struct Group {
    hosts: Vec<(String, BTreeMap<String, String>)>,
    vars: BTreeMap<String, String>,
    children: Vec<String>,
}

/// Every host of every group, with its variables (all's, then its groups' from the outermost
/// in, then its own: the nearest wins) and a role per role-named group it belongs to, directly
/// or through children.
fn resolve_groups(groups: BTreeMap<String, Group>) -> Result<RawInventory> {
    // Parents first: a group's chain from "all" down.
    let mut parents: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, g) in &groups {
        for c in &g.children {
            if !groups.contains_key(c) {
                bail!("group {name} names child group {c:?}, which is not defined");
            }
            parents.entry(c.as_str()).or_default().push(name.as_str());
        }
    }
    fn ancestors<'a>(
        g: &'a str,
        parents: &BTreeMap<&'a str, Vec<&'a str>>,
        out: &mut Vec<&'a str>,
        depth: usize,
    ) -> Result<()> {
        if depth > 32 {
            bail!("group {g}: its children form a cycle");
        }
        for p in parents.get(g).into_iter().flatten() {
            ancestors(p, parents, out, depth + 1)?;
            if !out.contains(p) {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut inv = RawInventory::default();
    let all_vars = groups
        .get("all")
        .map(|g| g.vars.clone())
        .unwrap_or_default();
    inv.known_hosts = all_vars.get("iobound_known_hosts").cloned();
    for (name, g) in &groups {
        let mut chain = Vec::new();
        ancestors(name, &parents, &mut chain, 0)?;
        chain.push(name.as_str());
        for (host, own) in &g.hosts {
            let raw = inv.host(host);
            // Nearest scope first (the group itself, then its parents outwards, then all),
            // and the first value found is kept; the host's own variables win over all.
            for k in chain.iter().rev().chain(["all"].iter()) {
                if let Some(grp) = groups.get(*k) {
                    for (key, v) in &grp.vars {
                        if key != "iobound_known_hosts" {
                            raw.vars.entry(key.clone()).or_insert_with(|| v.clone());
                        }
                    }
                }
            }
            for (key, v) in own {
                raw.vars.insert(key.clone(), v.clone());
            }
            for k in &chain {
                if Role::parse(k).is_some() && !raw.roles.iter().any(|r| r == k) {
                    raw.roles.push(k.to_string());
                }
            }
        }
    }
    Ok(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(name: &str, text: &str) -> Result<Inventory> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        Inventory::load(&path)
    }

    fn summary(inv: &Inventory) -> Vec<String> {
        inv.hosts
            .iter()
            .map(|h| {
                let roles: Vec<_> = h.roles.iter().map(|r| r.name()).collect();
                format!(
                    "{} {} {} {} [{}] {}",
                    h.name,
                    h.destination(),
                    h.port,
                    h.identity.is_some(),
                    roles.join(","),
                    h.cpus.as_deref().unwrap_or("-")
                )
            })
            .collect()
    }

    const THREE_HOSTS: [&str; 3] = [
        "app root@10.0.0.2 22 false [contender] 0-3",
        "db root@10.0.0.3 22 false [services] -",
        "gen root@10.0.0.4 2222 false [load] -",
    ];

    #[test]
    fn the_three_formats_give_the_same_hosts() {
        let toml = r#"
[[host]]
name = "app"
address = "10.0.0.2"
user = "root"
roles = ["contender"]
cpus = "0-3"

[[host]]
name = "db"
address = "10.0.0.3"
user = "root"
roles = ["services"]

[[host]]
name = "gen"
address = "10.0.0.4"
user = "root"
port = 2222
roles = ["load"]
"#;
        let ini = "
# Ansible INI
[contender]
app ansible_host=10.0.0.2 iobound_cpus=0-3

[services]
db ansible_host=10.0.0.3

[load]
gen ansible_host=10.0.0.4 ansible_port=2222

[all:vars]
ansible_user=root
";
        let yaml = "
all:
  vars:
    ansible_user: root
  children:
    contender:
      hosts:
        app:
          ansible_host: 10.0.0.2
          iobound_cpus: 0-3
    services:
      hosts:
        db: {ansible_host: 10.0.0.3}
    load:
      hosts:
        gen:
          ansible_host: 10.0.0.4
          ansible_port: 2222
";
        for (name, text) in [("h.toml", toml), ("hosts", ini), ("hosts.yml", yaml)] {
            let inv = load_text(name, text).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            let mut got = summary(&inv);
            got.sort();
            assert_eq!(got, THREE_HOSTS, "{name}");
        }
    }

    #[test]
    fn ansible_children_and_several_groups_give_several_roles() {
        let ini = "
[edge]
lg1 ansible_host=10.0.0.5
lg2 ansible_host=10.0.0.6 ansible_user='bench user'

[load:children]
edge

[services]
lg1

[edge:vars]
ansible_user=ops
";
        let inv = load_text("inventory.ini", ini).unwrap();
        let mut got = summary(&inv);
        got.sort();
        assert_eq!(
            got,
            [
                "lg1 ops@10.0.0.5 22 false [services,load] -",
                "lg2 bench user@10.0.0.6 22 false [load] -"
            ]
        );
    }

    #[test]
    fn bad_inventories_name_the_host_the_field_and_the_fix() {
        let cases = [
            ("h.toml", "[[host]]\nname = \"a\"\naddress = \"app.example\"\nroles = [\"load\"]\n", "address \"app.example\" is not an IP address"),
            ("h.toml", "[[host]]\nname = \"a\"\naddress = \"10.0.0.1\"\nroles = [\"db\"]\n", "role \"db\" is unknown; roles are contender, services and load"),
            ("h.toml", "[[host]]\nname = \"a\"\naddress = \"10.0.0.1\"\nroles = []\n", "host a has no role"),
            ("h.toml", "[[host]]\nname = \"a\"\naddress = \"10.0.0.1\"\nroles = [\"load\"]\ncpus = \"x\"\n", "host a: cpus \"x\""),
            ("h.toml", "[[host]]\nname = \"a\"\naddress = \"10.0.0.1\"\nroles = [\"load\"]\nidentity = \"/nonexistent/key\"\n", "identity \"/nonexistent/key\": no such file"),
            ("h.toml", "[[host]]\nname = \"a\"\naddress = \"10.0.0.1\"\nroles = [\"contender\"]\n[[host]]\nname = \"b\"\naddress = \"10.0.0.2\"\nroles = [\"contender\"]\n", "2 hosts have the role \"contender\""),
            ("h.toml", "", "no hosts"),
            ("hosts", "[load]\na ansible_host=10.0.0.1 ansible_port=ssh\n", "port \"ssh\" is not a TCP port"),
            ("hosts", "[load]\na ansible_host=10.0.0.1 colour\n", "\"colour\" after the host name is not key=value"),
            ("hosts", "[load:children]\nnowhere\n", "child group \"nowhere\", which is not defined"),
            ("hosts", "[load]\na ansible_host=10.0.0.1 flavour=x\n", "unknown field \"flavour\""),
            ("hosts.yml", "load: [1, 2]\n", "not an Ansible YAML inventory"),
        ];
        for (name, text, want) in cases {
            let err = format!("{:#}", load_text(name, text).unwrap_err());
            assert!(err.contains(want), "{name} {text:?}: {err}");
        }
    }

    #[test]
    fn quoted_words_stay_whole() {
        assert_eq!(
            split_words("h a='x y' b=\"1 2\" c=3").unwrap(),
            ["h", "a=x y", "b=1 2", "c=3"]
        );
        assert!(split_words("h a='x").is_err());
    }
}
