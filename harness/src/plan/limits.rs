//! `[limits]` and `--cpus`/`--memory`: a CPU quota and a memory limit for the contenders, as a
//! container gives them (`cpus = 1`, `memory = "512m"`), with `[limits.NAME]` for one
//! contender. Checked here, before anything starts; applied by util/cgroup.rs.

use crate::util::cgroup::Limits;
use anyhow::{bail, Result};
use std::collections::BTreeMap;

/// The most CPUs of quota a run may ask for (a quota above the machine's CPUs never binds).
pub const MAX_CPUS: f64 = 1024.0;
/// The least memory a limit may give: below it no runtime here starts.
pub const MIN_MEMORY_MB: u64 = 16;

/// The plan's limits: for every contender, and per contender where `[limits.NAME]` says.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct PlanLimits {
    #[serde(skip_serializing_if = "is_unlimited")]
    pub all: Limits,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub by_contender: BTreeMap<String, Limits>,
}

fn is_unlimited(l: &Limits) -> bool {
    !l.any()
}

impl PlanLimits {
    /// The limits of `contender`: its own settings over the plan's.
    pub fn of(&self, contender: &str) -> Limits {
        let own = self
            .by_contender
            .get(contender)
            .copied()
            .unwrap_or_default();
        Limits {
            cpus: own.cpus.or(self.all.cpus),
            memory_bytes: own.memory_bytes.or(self.all.memory_bytes),
        }
    }

    /// Whether any contender runs limited.
    pub fn any(&self) -> bool {
        self.all.any() || self.by_contender.values().any(Limits::any)
    }
}

/// `[limits]` parsed, and where it limits anything, this machine's cgroups checked for the
/// controllers it needs: before anything starts, not at the first contender.
pub fn checked(table: &BTreeMap<String, toml::Value>, contenders: &[String]) -> Result<PlanLimits> {
    let limits = parse(table, contenders)?;
    if limits.any() {
        crate::util::cgroup::Layout::detect().map_err(|e| {
            anyhow::anyhow!("--cpus, --memory and [limits] cannot be applied here: {e:#}")
        })?;
    }
    Ok(limits)
}

/// `[limits]` as written: `cpus` and `memory`, and tables named after contenders.
pub fn parse(table: &BTreeMap<String, toml::Value>, contenders: &[String]) -> Result<PlanLimits> {
    let mut out = PlanLimits::default();
    for (key, value) in table {
        match (key.as_str(), value) {
            ("cpus" | "memory", _) => one(&mut out.all, "limits", key, value)?,
            (name, toml::Value::Table(t)) => {
                if !contenders.iter().any(|c| c == name) {
                    bail!(
                        "limits.{name}: {name:?} is not a contender of this plan ({}); \
                         [limits.NAME] sets one contender's limits",
                        contenders.join(", ")
                    );
                }
                let mut l = Limits::default();
                for (k, v) in t {
                    if k != "cpus" && k != "memory" {
                        bail!("limits.{name}.{k}: unknown; a limit is `cpus` or `memory`");
                    }
                    one(&mut l, &format!("limits.{name}"), k, v)?;
                }
                out.by_contender.insert(name.to_string(), l);
            }
            (other, _) => bail!(
                "limits.{other}: unknown; write `cpus = 1` and `memory = \"512m\"`, or a table \
                 [limits.CONTENDER] with those"
            ),
        }
    }
    Ok(out)
}

fn one(l: &mut Limits, at: &str, key: &str, value: &toml::Value) -> Result<()> {
    if key == "cpus" {
        let cpus = match value {
            toml::Value::Float(f) => *f,
            toml::Value::Integer(i) => *i as f64,
            toml::Value::String(s) => s.parse().unwrap_or(f64::NAN),
            _ => f64::NAN,
        };
        l.cpus = Some(cpus_checked(&format!("{at}.cpus"), cpus)?);
    } else {
        let Some(text) = value.as_str() else {
            bail!("{at}.memory: write a size in quotes, e.g. \"512m\" or \"2g\"");
        };
        l.memory_bytes = Some(memory_checked(&format!("{at}.memory"), text)?);
    }
    Ok(())
}

/// A CPU quota in CPUs: above 0 (at least a hundredth), at most MAX_CPUS.
pub fn cpus_checked(at: &str, cpus: f64) -> Result<f64> {
    if !(0.01..=MAX_CPUS).contains(&cpus) {
        bail!("{at} = {cpus}: a CPU quota is between 0.01 and {MAX_CPUS} CPUs, e.g. 0.5 or 2");
    }
    Ok(cpus)
}

/// "512m", "2g", "1536M" -> bytes; at least MIN_MEMORY_MB.
pub fn memory_checked(at: &str, text: &str) -> Result<u64> {
    let t = text.trim();
    let (digits, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let mb = match (digits.parse::<u64>(), unit.to_ascii_lowercase().as_str()) {
        (Ok(n), "m" | "mb" | "mi" | "mib") => Some(n),
        (Ok(n), "g" | "gb" | "gi" | "gib") => n.checked_mul(1024),
        _ => None,
    };
    match mb {
        Some(mb) if (MIN_MEMORY_MB..=(1 << 30)).contains(&mb) => Ok(mb << 20),
        Some(mb) => bail!("{at} = {text:?}: {mb} MB is outside {MIN_MEMORY_MB} MB..1 PB"),
        None => bail!("{at} = {text:?} is not a memory size; write e.g. \"512m\" or \"2g\""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> BTreeMap<String, toml::Value> {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn plan_limits_and_a_contenders_own_are_read_and_merged() {
        let names = ["go".to_string(), "node".to_string()];
        let l = parse(
            &table("cpus = 1\nmemory = \"512m\"\n[go]\ncpus = 0.5\n"),
            &names,
        )
        .unwrap();
        assert_eq!(
            l.of("go"),
            Limits {
                cpus: Some(0.5),
                memory_bytes: Some(512 << 20)
            }
        );
        assert_eq!(l.of("node").cpus, Some(1.0));
        assert!(l.any() && !PlanLimits::default().any());
    }

    #[test]
    fn bad_limits_name_the_field_and_the_fix() {
        let names = ["go".to_string()];
        let e = |text: &str| format!("{:#}", parse(&table(text), &names).unwrap_err());
        assert!(e("cpus = 0").contains("limits.cpus = 0: a CPU quota is between 0.01"));
        assert!(e("cpus = -1").contains("limits.cpus = -1"));
        assert!(e("memory = \"lots\"").contains("limits.memory = \"lots\" is not a memory size"));
        assert!(e("memory = 512").contains("write a size in quotes"));
        assert!(e("memory = \"1m\"").contains("outside 16 MB"));
        assert!(e("cpu = 1").contains("limits.cpu: unknown"));
        assert!(e("[rust]\ncpus = 1").contains("\"rust\" is not a contender of this plan (go)"));
        assert!(e("[go]\nswap = 1").contains("limits.go.swap: unknown"));
        assert_eq!(memory_checked("m", "2g").unwrap(), 2 << 30);
        assert_eq!(memory_checked("m", "64Mi").unwrap(), 64 << 20);
    }
}
