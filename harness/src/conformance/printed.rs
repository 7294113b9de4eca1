//! A verification as the terminal shows it: the failed cases (every case with --verbose), and
//! the one line a contender's round prints.

use super::{CaseResult, Verification};

/// The cases of `name`'s verification worth printing, each on a line of its own.
pub fn print(name: &str, v: &Verification) {
    for c in v
        .cases
        .iter()
        .filter(|c| crate::util::verbose() || !c.passed)
    {
        eprintln!(
            "  {} {:<58} {}",
            if c.passed { "PASS" } else { "FAIL" },
            c.name,
            c.detail
        );
    }
    eprintln!("  {}", summary_line(name, v));
}

/// "name: 69/69 contract cases pass, 6,000 hostile inputs; not checked: ..." (or how many FAIL).
pub fn summary_line(name: &str, v: &Verification) -> String {
    let fuzz: Option<&CaseResult> = v.cases.iter().find(|c| c.name.starts_with("fuzz:"));
    let contract: Vec<&CaseResult> = v
        .cases
        .iter()
        .filter(|c| !c.name.starts_with("fuzz:"))
        .collect();
    let passed = contract.iter().filter(|c| c.passed).count();
    let mut line = if v.passed {
        format!("{name}: {passed}/{} contract cases pass", contract.len())
    } else {
        format!(
            "{name}: {} of {} contract cases FAIL: it will not be measured",
            v.cases.iter().filter(|c| !c.passed).count(),
            v.cases.len()
        )
    };
    if let Some(f) = fuzz.filter(|f| f.passed) {
        let inputs = f
            .detail
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .map(crate::util::units::thousands)
            .unwrap_or_default();
        line.push_str(&format!(", {inputs} hostile inputs"));
    }
    if !v.not_checked.is_empty() {
        line.push_str(&format!("; not checked: {}", v.not_checked.join(", ")));
    }
    line
}
