//! Ansible inventories as teams keep them: INI (read line by line, as Ansible's own INI
//! format is) and YAML (read with a YAML parser), groups resolved to hosts with Ansible's
//! variable precedence; groups named after iobound's roles give their hosts those roles.

use super::{RawInventory, Role};
use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;

/// Ansible's INI inventory: `[group]` sections of host lines (`name key=value ...`),
/// `[group:vars]` sections of `key=value` lines, `[group:children]` sections naming groups.
/// Groups named contender, services and load give their hosts that role; other groups only
/// carry hosts and variables. `iobound_known_hosts` in `[all:vars]` names a known_hosts file.
pub(super) fn from_ansible_ini(text: &str) -> Result<RawInventory> {
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
pub(super) fn split_words(line: &str) -> Result<Vec<String>> {
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
pub(super) fn from_ansible_yaml(text: &str) -> Result<RawInventory> {
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

/// How deep groups may be nested through children (a deeper chain is refused, by name).
const MAX_GROUP_DEPTH: usize = 32;

/// `g`'s ancestors, outermost first, into `out`; `path` is the walk from the group asked
/// for up to `g`, so that a group met again on it is a cycle, told apart from a chain
/// deeper than MAX_GROUP_DEPTH (which has none).
fn ancestors<'a>(
    g: &'a str,
    parents: &BTreeMap<&'a str, Vec<&'a str>>,
    out: &mut Vec<&'a str>,
    path: &mut Vec<&'a str>,
) -> Result<()> {
    if let Some(at) = path.iter().position(|p| *p == g) {
        let walk: Vec<&str> = path[at..].iter().copied().chain([g]).collect();
        bail!(
            "groups {} form a cycle (each a child of the next); remove one of these \
             children",
            walk.join(" -> ")
        );
    }
    if path.len() > MAX_GROUP_DEPTH {
        bail!(
            "group {}: its groups are nested more than {MAX_GROUP_DEPTH} deep (no cycle); \
             flatten the chain of children",
            path[0]
        );
    }
    path.push(g);
    for p in parents.get(g).into_iter().flatten() {
        // A parent already in the chain came in after its own ancestors: walking them
        // again would make a diamond of groups cost twice per level.
        if out.contains(p) {
            continue;
        }
        ancestors(p, parents, out, path)?;
        out.push(p);
    }
    path.pop();
    Ok(())
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
    let mut inv = RawInventory::default();
    let all_vars = groups
        .get("all")
        .map(|g| g.vars.clone())
        .unwrap_or_default();
    inv.known_hosts = all_vars.get("iobound_known_hosts").cloned();
    for (name, g) in &groups {
        let mut chain = Vec::new();
        ancestors(name, &parents, &mut chain, &mut Vec::new())?;
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
