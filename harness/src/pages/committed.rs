//! The results directories committed under docs/results, read once for the pages that take
//! them all (the plans' last measurements, the sittings judged again).

use crate::results::record::Results;
use anyhow::{Context, Result};
use std::path::Path;

/// The results directories under docs/results, at any depth (a page keeps the plans of one
/// comparison side by side: `tuning-pool-2026-11-24/1000`), each named by its path below
/// docs/results, with its results, in path order.
pub(super) fn committed_results(root: &Path) -> Result<Vec<(String, Results)>> {
    let base = root.join("docs/results");
    let mut dirs = Vec::new();
    let mut pending = subdirs(&base)?;
    while let Some(dir) = pending.pop() {
        pending.extend(subdirs(&dir)?);
        dirs.push(dir);
    }
    dirs.sort();
    let mut out = Vec::new();
    for dir in dirs {
        let file = dir.join("results.json");
        if file.is_file() {
            let name = dir.strip_prefix(&base)?.display().to_string();
            out.push((name, Results::load(&file)?));
        }
    }
    Ok(out)
}

fn subdirs(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    Ok(std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect())
}
