//! A CPU profile as a run records it (`--profile`): the profiler, its samples, the folded
//! stacks beside results.json ("root;...;leaf count" per line) and the hottest frames. Taken
//! by run/observe/profile.rs.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The profile of one measured run, as results.json keeps it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ProfileRecord {
    /// "jfr", "pprof" or "v8".
    pub tool: String,
    /// Stack samples taken.
    pub samples: u64,
    pub period_ms: f64,
    /// Folded stacks, relative to the results directory; the report draws the flame graph
    /// beside them (same name, .svg and .png).
    pub folded: String,
    /// The frames with the most samples at the top of the stack (self time), most first.
    pub hottest: Vec<HotFrame>,
    /// JFR only: virtual threads started during the measured run (jdk.VirtualThreadStart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtual_threads_started: Option<u64>,
}

/// A frame and how often it was on top of the stack.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HotFrame {
    pub frame: String,
    /// Share of all samples, in %.
    pub self_pct: f64,
}

/// The frames most often on top of the stack.
pub fn hottest(lines: &[(String, u64)], n: usize) -> Vec<HotFrame> {
    let total: u64 = lines.iter().map(|(_, c)| c).sum();
    let mut by_leaf: HashMap<&str, u64> = HashMap::new();
    for (stack, c) in lines {
        *by_leaf
            .entry(stack.rsplit(';').next().unwrap_or(stack))
            .or_insert(0) += c;
    }
    let mut v: Vec<_> = by_leaf.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v.into_iter()
        .take(n)
        .map(|(f, c)| HotFrame {
            frame: f.to_string(),
            self_pct: 100.0 * c as f64 / total.max(1) as f64,
        })
        .collect()
}

/// Folded stacks parsed: one (stack, samples) pair per line of `stack count` (other lines
/// skipped).
pub fn parse_folded(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter_map(|l| {
            l.rsplit_once(' ')
                .and_then(|(s, n)| n.parse().ok().map(|n| (s.to_string(), n)))
        })
        .collect()
}
