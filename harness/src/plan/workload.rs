//! What a scenario requests: one path, a `{seq:N}` path template that walks a corpus or the
//! seeded rows, or a weighted mix of methods and paths with `{write}` tokens; and the checks a
//! plan's paths and mixes must pass.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// One kind of request in a mix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MixEntry {
    pub weight: u32,
    pub method: String,
    pub path: String,
    /// JSON body; `{write}` becomes a token unique to the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

impl MixEntry {
    pub fn is_write(&self) -> bool {
        matches!(self.method.as_str(), "POST" | "PUT" | "PATCH" | "DELETE")
    }
}

/// Most values a `{seq:N}` template may take.
pub const MAX_SEQ: usize = 1_000_000;

/// The paths of a path template: `/hash?id={seq:4000}` gives /hash?id=0 .. /hash?id=3999 and
/// `/messages/{seq:1..10000}` gives /messages/1 .. /messages/10000, sent in turn (so every file
/// of a corpus, every seeded row, is used); a path without a template is itself.
pub fn expand_path(path: &str) -> Result<Vec<String>, String> {
    let Some(at) = path.find("{seq:") else {
        return Ok(vec![path.to_string()]);
    };
    let rest = &path[at + 5..];
    let end = rest
        .find('}')
        .ok_or_else(|| format!("{path:?}: unclosed {{seq:N}}"))?;
    let spec = &rest[..end];
    let (from, to) = match spec.split_once("..") {
        Some((a, b)) => (a.parse::<u64>().ok(), b.parse::<u64>().ok()),
        None => (
            Some(0),
            spec.parse::<u64>().ok().filter(|n| *n >= 1).map(|n| n - 1),
        ),
    };
    let (from, to) = match (from, to) {
        (Some(a), Some(b)) if a <= b && b - a < MAX_SEQ as u64 => (a, b),
        _ => return Err(format!("{path:?}: write {{seq:N}} with N in 1..={MAX_SEQ}, or {{seq:A..B}} with A <= B and at most {MAX_SEQ} values")),
    };
    let (head, tail) = (&path[..at], &rest[end + 1..]);
    if tail.contains("{seq:") {
        return Err(format!("{path:?}: only one {{seq:N}} per path"));
    }
    Ok((from..=to).map(|i| format!("{head}{i}{tail}")).collect())
}

pub(super) fn check_path(at: &str, path: &str) -> Result<()> {
    if !path.starts_with('/') || path.contains(char::is_whitespace) {
        bail!("{at} = {path:?} must start with '/' and contain no spaces, e.g. path = \"/delay?ms=100\"");
    }
    expand_path(path).map_err(|e| anyhow::anyhow!("{at}: {e}"))?;
    Ok(())
}

/// Checks a mix and returns its description.
pub(super) fn check_mix(at: &str, mix: &[MixEntry]) -> Result<String> {
    if mix.is_empty() || mix.len() > 16 {
        bail!("{at}.mix must have 1..=16 entries, e.g. mix = [{{ weight = 80, method = \"GET\", path = \"/messages/{{seq:1..10000}}\" }}]");
    }
    for (k, e) in mix.iter().enumerate() {
        let here = format!("{at}.mix[{k}]");
        if e.weight == 0 || e.weight > 1000 {
            bail!(
                "{here}.weight = {} is out of range; use 1..=1000 (weights are relative)",
                e.weight
            );
        }
        if !["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&e.method.as_str()) {
            bail!(
                "{here}.method = {:?}: use one of GET, POST, PUT, PATCH, DELETE (upper case)",
                e.method
            );
        }
        check_path(&format!("{here}.path"), &e.path)?;
        if let Some(b) = &e.body {
            if e.method == "GET" || e.method == "DELETE" {
                bail!("{here}: a {} request has no body; remove body", e.method);
            }
            if b.matches("{write}").count() > 1 || b.len() > 65_536 {
                bail!("{here}.body: at most one {{write}} placeholder and 64 KiB");
            }
        }
    }
    Ok(format!(
        "mix: {}",
        mix.iter()
            .map(|e| format!("{} {} {}", e.weight, e.method, e.path))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}
