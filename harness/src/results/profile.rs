//! A CPU profile as a run records it (`--profile`): the profiler, its samples, the folded
//! stacks beside results.json ("root;...;leaf count" per line) and the hottest frames. Taken
//! by observe/profile.rs.

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

/// The share of all samples, in %, whose stack holds a frame containing `frame` (a class,
/// a method, a package: "DispatcherServlet", "org.springframework."), counted once per
/// stack however often the frame recurs in it.
pub fn share_under(lines: &[(String, u64)], frame: &str) -> f64 {
    let total: u64 = lines.iter().map(|(_, c)| c).sum();
    let under: u64 = lines
        .iter()
        .filter(|(stack, _)| stack.split(';').any(|f| f.contains(frame)))
        .map(|(_, c)| c)
        .sum();
    100.0 * under as f64 / total.max(1) as f64
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_counts_the_samples_of_every_stack_it_is_on_once() {
        let lines = parse_folded(
            "Thread.run;Dispatcher.doDispatch;Dispatcher.doDispatch;Handler.get 3\n\
             Thread.run;Poller.run 1\n\
             not a folded line\n",
        );
        assert_eq!(lines.len(), 2);
        assert_eq!(share_under(&lines, "Dispatcher."), 75.0);
        assert_eq!(share_under(&lines, "Thread.run"), 100.0);
        assert_eq!(share_under(&lines, "Vertx"), 0.0);
        assert_eq!(share_under(&[], "Thread.run"), 0.0);
    }
}
