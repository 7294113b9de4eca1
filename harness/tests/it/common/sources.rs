//! The harness's own sources, as the tests that read them (its shape, how it builds remote
//! commands) walk them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every .rs file under src/ with its module path ("report::markdown"; "" for lib.rs).
pub fn modules() -> BTreeMap<String, PathBuf> {
    let src = super::repo_root().join("harness/src");
    let mut out = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.insert(module_of(&src, &p), p);
            }
        }
    }
    out
}

fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts.join("::")
}

/// The file's lines without its unit-test module (`#[cfg(test)] mod tests` to the end).
pub fn code(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let end = (0..lines.len())
        .find(|&i| {
            lines[i] == "#[cfg(test)]"
                && lines.get(i + 1).is_some_and(|l| l.starts_with("mod tests"))
        })
        .unwrap_or(lines.len());
    lines[..end].iter().map(|l| l.to_string()).collect()
}
