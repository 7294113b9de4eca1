//! The contenders as docs/contenders.md lists them, written from their manifests
//! (`<!-- iobound contenders -->` ... `<!-- /iobound contenders -->`), so that the page cannot
//! drift from what runs: one row per contender, grouped by model, with its language, framework
//! and tunables at their defaults.

use crate::services::manifest::{self, Manifest};
use anyhow::Result;
use std::path::Path;

/// The table of every contender under `root`/contenders.
pub fn markdown(root: &Path) -> Result<String> {
    let mut all = manifest::discover(root)?;
    all.sort_by(|a, b| (&a.model, &a.name).cmp(&(&b.model, &b.name)));
    let mut s = String::from(
        "| contender | model | language | framework | tunables (default) |\n|---|---|---|---|---|\n",
    );
    for m in &all {
        s.push_str(&row(m));
    }
    Ok(s)
}

fn row(m: &Manifest) -> String {
    let tunables: Vec<String> = m
        .tunables
        .iter()
        .map(|(name, t)| format!("`{name}` ({})", t.default))
        .collect();
    let cell = |text: &str| text.replace('|', "\\|").replace('\n', " ");
    format!(
        "| [`{name}`](../contenders/{name}/contender.toml) | {} | {} | {} | {} |\n",
        cell(&m.model),
        cell(&m.language),
        cell(&m.framework),
        if tunables.is_empty() {
            "-".to_string()
        } else {
            cell(&tunables.join(", "))
        },
        name = m.name,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_contender_is_a_row_grouped_by_model_with_its_tunables() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let table = markdown(root).unwrap();
        let rows: Vec<&str> = table.lines().skip(2).collect();
        assert_eq!(rows.len(), manifest::discover(root).unwrap().len());
        let models: Vec<&str> = rows
            .iter()
            .map(|r| r.split(" | ").nth(1).unwrap())
            .collect();
        let mut sorted = models.clone();
        sorted.sort_unstable();
        assert_eq!(models, sorted, "grouped by model");
        let mvc = rows
            .iter()
            .find(|r| r.starts_with("| [`spring-mvc`]"))
            .unwrap();
        assert!(
            mvc.contains("| thread-per-request | java |") && mvc.contains("`threads` (200)"),
            "{mvc}"
        );
    }
}
