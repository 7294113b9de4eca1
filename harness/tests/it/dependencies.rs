//! The harness's dependencies, checked offline (the advisory database `cargo deny` needs is not
//! reachable from every machine that runs `./iobound test`): every crate under a licence this
//! project can ship with, no crate in two versions beyond the ones listed with the reason, and
//! none of the crates known to be unmaintained. Not checked here: advisories beyond that list
//! (no advisory database offline).

use std::collections::BTreeMap;
use std::process::Command;

/// Licences a dependency may carry (an SPDX expression passes when every part joined by AND,
/// and at least one alternative of each OR, is here).
const LICENCES: &[&str] = &[
    "MIT",
    "MIT-0",
    "Apache-2.0",
    "Apache-2.0 WITH LLVM-exception",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "ISC",
    "Zlib",
    "Unicode-3.0",
    "Unlicense",
    "0BSD",
    "CC0-1.0",
    "MPL-2.0",
    "BSL-1.0",
];

/// Crates in two versions, each pulled in by two dependencies that have not moved to the same
/// one yet; a new duplicate fails until it is listed here with its reason, and a listed one
/// that is gone fails until it is removed.
const DUPLICATES: &[(&str, &str)] = &[
    (
        "base64",
        "0.22 for hdrhistogram, postgres-protocol and ours; 0.23 for usvg (resvg)",
    ),
    (
        "block-buffer",
        "digest 0.10 (our sha2 0.10) and digest 0.11 (postgres-protocol's hmac, md-5, sha2)",
    ),
    (
        "cpufeatures",
        "sha2 0.10 on 0.2; sha2 0.11 and chacha20 (rand) on 0.3",
    ),
    ("crypto-common", "the two digest lines, as block-buffer"),
    (
        "digest",
        "our sha2 0.10 on 0.10; postgres-protocol's hashes on 0.11",
    ),
    (
        "getrandom",
        "0.3 for ahash (boon, the schema validator of the tests); 0.4 for tempfile and rand",
    ),
    (
        "miniz_oxide",
        "png (tiny-skia, resvg) on 0.8; flate2 (hdrhistogram) on 0.9",
    ),
    ("sha2", "ours on 0.10; postgres-protocol on 0.11"),
];

/// Crates RustSec flags as unmaintained, which must not come back in.
const UNMAINTAINED: &[(&str, &str)] = &[("number_prefix", "RUSTSEC-2025-0119")];

/// The platform rustc builds for here (`x86_64-unknown-linux-gnu`).
fn host() -> String {
    let o = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("run rustc -vV");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names its host")
        .to_string()
}

fn metadata() -> serde_json::Value {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let o = Command::new(env!("CARGO"))
        .args(["metadata", "--offline", "--locked", "--format-version", "1"])
        // This machine's platform: the graph it builds (crates for other platforms are not
        // fetched, so an offline machine would not have them).
        .args(["--filter-platform", &host()])
        .args(["--manifest-path", manifest])
        .output()
        .expect("run cargo metadata");
    assert!(
        o.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The packages the harness builds with (its resolved dependency graph, tests included), by
/// name and version.
fn packages(meta: &serde_json::Value) -> Vec<(String, String, Option<String>)> {
    let resolved: std::collections::BTreeSet<&str> = meta["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["id"].as_str())
        .collect();
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            p["name"] != "iobound" && p["id"].as_str().is_some_and(|id| resolved.contains(id))
        })
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["version"].as_str().unwrap().to_string(),
                p["license"].as_str().map(str::to_string),
            )
        })
        .collect()
}

fn acceptable(expression: &str) -> bool {
    let expression = expression.replace(['(', ')'], " ").replace('/', " OR ");
    expression
        .split(" AND ")
        .all(|part| part.split(" OR ").any(|alt| LICENCES.contains(&alt.trim())))
}

#[test]
fn licence_expressions_are_read_as_spdx_joins_them() {
    assert!(acceptable("MIT OR Apache-2.0"));
    assert!(acceptable("(MIT OR Apache-2.0) AND Unicode-3.0"));
    assert!(acceptable("MIT/Apache-2.0"));
    assert!(!acceptable("GPL-3.0-only"));
    assert!(!acceptable("MIT AND GPL-3.0-only"));
}

#[test]
fn every_dependency_has_a_licence_we_can_ship_with() {
    let meta = metadata();
    let all = packages(&meta);
    assert!(all.len() > 100, "{} packages", all.len());
    let bad: Vec<String> = all
        .iter()
        .filter(|(_, _, l)| !l.as_deref().is_some_and(acceptable))
        .map(|(n, v, l)| format!("{n} {v}: {l:?}"))
        .collect();
    assert!(
        bad.is_empty(),
        "licences not on the list:\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_crate_in_two_versions_beyond_the_listed_ones() {
    let meta = metadata();
    let mut versions: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (n, v, _) in packages(&meta) {
        versions.entry(n).or_default().push(v);
    }
    let twice: Vec<&str> = versions
        .iter()
        .filter(|(_, v)| v.len() > 1)
        .map(|(n, _)| n.as_str())
        .collect();
    let listed: Vec<&str> = DUPLICATES.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        twice, listed,
        "crates in two versions (left) against the list with reasons (right): {versions:?}"
    );
    for (name, advisory) in UNMAINTAINED {
        assert!(
            !versions.contains_key(*name),
            "{name} is unmaintained ({advisory}) and is back in the dependency graph"
        );
    }
}
