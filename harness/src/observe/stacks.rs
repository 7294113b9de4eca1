//! Each profiler's output read into folded stacks ("root;...;leaf count" per line): JFR's
//! printed execution samples, pprof's traces, V8's .cpuprofile (the hottest frames of them are
//! results/profile.rs's).

use anyhow::{Context, Result};
use serde::Deserialize;
use std::collections::HashMap;

/// Sampling period of every profiler here (JFR's `profile` settings and Go's default are
/// 10 ms; V8 is set to it).
pub const PERIOD_MS: f64 = 10.0;

/// `jfr print --events jdk.ExecutionSample` text: each event's `stackTrace = [ ... ]` lists
/// frames leaf first, as "pkg.Class.method(Args) line: N".
pub fn fold_jfr(text: &str) -> HashMap<String, u64> {
    let mut stacks = HashMap::new();
    let mut frames: Option<Vec<String>> = None;
    for line in text.lines() {
        let t = line.trim();
        if t == "stackTrace = [" {
            frames = Some(Vec::new());
        } else if t == "]" {
            if let Some(f) = frames.take().filter(|f| !f.is_empty()) {
                *stacks.entry(join_leaf_first(&f)).or_insert(0) += 1;
            }
        } else if let Some(f) = frames.as_mut() {
            if t != "..." {
                let name = t.split(" line:").next().unwrap_or(t);
                let name = name.split('(').next().unwrap_or(name);
                f.push(clean(name));
            }
        }
    }
    stacks
}

/// The count of one event type in `jfr summary`.
pub fn jfr_event_count(summary: &str, event: &str) -> u64 {
    summary
        .lines()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some(event))
                .then(|| w.next().and_then(|n| n.parse().ok()))
                .flatten()
        })
        .unwrap_or(0)
}

/// `go tool pprof -traces`: blocks separated by dashes, the first line "<value> <leaf>", then
/// callers one per line; the value is CPU time (10ms, 1.20s).
pub fn fold_pprof_traces(text: &str) -> HashMap<String, u64> {
    let mut stacks = HashMap::new();
    for block in text.split("-----------+").skip(1) {
        let mut lines = block.lines().skip(1).filter(|l| !l.trim().is_empty());
        let Some(first) = lines.next() else { continue };
        let mut parts = first.split_whitespace();
        let Some(ms) = parts.next().and_then(pprof_ms) else {
            continue;
        };
        let leaf: String = parts.collect::<Vec<_>>().join(" ");
        let mut frames = vec![clean(leaf.trim_end_matches(" (inline)"))];
        frames.extend(lines.map(|l| clean(l.trim().trim_end_matches(" (inline)"))));
        let samples = (ms / PERIOD_MS).round().max(1.0) as u64;
        *stacks.entry(join_leaf_first(&frames)).or_insert(0) += samples;
    }
    stacks
}

fn pprof_ms(v: &str) -> Option<f64> {
    let (num, scale) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = v.strip_suffix("us").or_else(|| v.strip_suffix("µs")) {
        (n, 0.001)
    } else if let Some(n) = v.strip_suffix("ns") {
        (n, 1e-6)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1000.0)
    } else {
        return None;
    };
    num.parse::<f64>().ok().map(|x| x * scale)
}

/// A V8 .cpuprofile: nodes (id, callFrame, children) and the node id of every sample.
pub fn fold_v8(json: &str) -> Result<HashMap<String, u64>> {
    #[derive(Deserialize)]
    struct Frame {
        #[serde(rename = "functionName")]
        function: String,
        url: String,
    }
    #[derive(Deserialize)]
    struct Node {
        id: u64,
        #[serde(rename = "callFrame")]
        frame: Frame,
        #[serde(default)]
        children: Vec<u64>,
    }
    #[derive(Deserialize)]
    struct Prof {
        nodes: Vec<Node>,
        #[serde(default)]
        samples: Vec<u64>,
    }
    let p: Prof = serde_json::from_str(json).context("not a V8 CPU profile")?;
    let mut parent = HashMap::new();
    let mut name = HashMap::new();
    for n in &p.nodes {
        for c in &n.children {
            parent.insert(*c, n.id);
        }
        let file = n.frame.url.rsplit('/').next().unwrap_or("");
        let f = if n.frame.function.is_empty() {
            "(anonymous)"
        } else {
            &n.frame.function
        };
        name.insert(
            n.id,
            if file.is_empty() {
                clean(f)
            } else {
                clean(&format!("{f} {file}"))
            },
        );
    }
    let mut counts: HashMap<u64, u64> = HashMap::new();
    for s in &p.samples {
        *counts.entry(*s).or_insert(0) += 1;
    }
    let mut stacks = HashMap::new();
    for (id, c) in counts {
        let mut frames = Vec::new();
        let mut at = Some(id);
        while let Some(i) = at {
            let n = &name[&i];
            // V8's synthetic root carries no code.
            if n != "(root)" {
                frames.push(n.clone());
            }
            at = parent.get(&i).copied();
        }
        if !frames.is_empty() {
            *stacks.entry(join_leaf_first(&frames)).or_insert(0) += c;
        }
    }
    Ok(stacks)
}

/// Frames are joined root first with ';', so a frame may contain neither ';' nor a newline.
fn clean(f: &str) -> String {
    f.replace([';', '\n'], ",").trim().to_string()
}

fn join_leaf_first(frames: &[String]) -> String {
    frames.iter().rev().cloned().collect::<Vec<_>>().join(";")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jfr_text_folds_root_first() {
        let text = "jdk.ExecutionSample {\n  stackTrace = [\n    java.security.MessageDigest.digest(byte[]) line: 12\n    app.Hash.handle(Request) line: 40\n    java.lang.Thread.run() line: 1\n  ]\n}\n\njdk.ExecutionSample {\n  stackTrace = [\n    java.security.MessageDigest.digest(byte[]) line: 12\n    app.Hash.handle(Request) line: 41\n    java.lang.Thread.run() line: 1\n    ...\n  ]\n}\n";
        let s = fold_jfr(text);
        assert_eq!(s.len(), 1);
        assert_eq!(
            s["java.lang.Thread.run;app.Hash.handle;java.security.MessageDigest.digest"],
            2
        );
        assert_eq!(
            jfr_event_count(
                " jdk.VirtualThreadStart                   3300         42900\n",
                "jdk.VirtualThreadStart"
            ),
            3300
        );
        assert_eq!(jfr_event_count("nothing\n", "jdk.VirtualThreadStart"), 0);
    }

    #[test]
    fn pprof_traces_fold_with_their_cpu_time() {
        let text = "File: go-server\nType: cpu\n-----------+-------\n      30ms   crypto/sha512.block\n             main.hashHandler (inline)\n             net/http.(*conn).serve\n-----------+-------\n     1.20s   runtime.futex\n-----------+-------\n";
        let s = fold_pprof_traces(text);
        assert_eq!(
            s["net/http.(*conn).serve;main.hashHandler;crypto/sha512.block"],
            3
        );
        assert_eq!(s["runtime.futex"], 120);
    }

    #[test]
    fn v8_profiles_fold_by_parent_links() {
        let json = r#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","url":""},"children":[2]},
            {"id":2,"callFrame":{"functionName":"handle","url":"file:///x/server.js"},"children":[3]},
            {"id":3,"callFrame":{"functionName":"digest","url":"node:crypto"}}],"samples":[3,3,2]}"#;
        let s = fold_v8(json).unwrap();
        assert_eq!(s["handle server.js;digest node:crypto"], 2);
        assert_eq!(s["handle server.js"], 1);
        let hot = crate::results::profile::hottest(&s.into_iter().collect::<Vec<_>>(), 1);
        assert_eq!(hot[0].frame, "digest node:crypto");
        assert!((hot[0].self_pct - 66.67).abs() < 0.1);
    }
}
