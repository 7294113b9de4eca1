//! Flame graphs of the CPU profiles `--profile` took (results/profile.rs keeps them as folded
//! stacks): one SVG per run beside its folded stacks (hover a frame for its samples), a PNG of
//! it for READMEs, and the "CPU profiles" section of report.md and report.html.

use super::chart::esc;
use crate::results::dir::ResultsDir;
use crate::results::record::Results;
use anyhow::Result;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;

/// CPU profiles taken with --profile: a table after the scenarios and a flame graph per run.
pub struct Profiles;

impl super::section::Section for Profiles {
    fn place(&self) -> super::section::Place {
        super::section::Place::Tail
    }
    fn markdown(&self, results: &Results) -> String {
        markdown(results)
    }
    fn html(&self, results: &Results) -> String {
        html(results)
    }
    fn files(&self, set: ResultsDir) -> Result<Vec<PathBuf>> {
        write(set)
    }
}

const WIDTH: f64 = 1200.0;
const FRAME_H: f64 = 16.0;
const TOP: f64 = 44.0;
const CHAR_W: f64 = 6.4;

#[derive(Default)]
struct Node {
    samples: u64,
    children: BTreeMap<String, Node>,
}

impl Node {
    fn add(&mut self, frames: &[&str], n: u64) {
        self.samples += n;
        if let Some((first, rest)) = frames.split_first() {
            self.children
                .entry((*first).to_string())
                .or_default()
                .add(rest, n);
        }
    }

    fn depth(&self) -> usize {
        self.children
            .values()
            .map(|c| 1 + c.depth())
            .max()
            .unwrap_or(0)
    }
}

/// The flame graph of folded stacks (root first): width is the share of samples, the root at
/// the bottom, callees above their callers.
pub fn svg(lines: &[(String, u64)], title: &str) -> String {
    let mut root = Node::default();
    for (stack, n) in lines {
        root.add(&stack.split(';').collect::<Vec<_>>(), *n);
    }
    let depth = root.depth().max(1);
    let height = TOP + FRAME_H * depth as f64 + 24.0;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" font-family=\"DejaVu Sans, sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fdfaf2\"/>\n<text x=\"{}\" y=\"20\" font-size=\"15\" font-weight=\"bold\" text-anchor=\"middle\">{}</text>\n<text x=\"{}\" y=\"36\" font-size=\"11\" fill=\"#555555\" text-anchor=\"middle\">width = share of {} samples; bottom = outermost frame; hover a frame for its samples</text>\n",
        WIDTH / 2.0,
        esc(title),
        WIDTH / 2.0,
        root.samples
    );
    let total = root.samples.max(1) as f64;
    let bottom = height - 24.0 - FRAME_H;
    let mut x = 10.0;
    for (name, child) in &root.children {
        draw(&mut out, name, child, x, 0, total, bottom);
        x += (WIDTH - 20.0) * child.samples as f64 / total;
    }
    out.push_str("</svg>\n");
    out
}

fn draw(out: &mut String, name: &str, node: &Node, x: f64, level: usize, total: f64, bottom: f64) {
    let w = (WIDTH - 20.0) * node.samples as f64 / total;
    if w < 0.4 {
        return;
    }
    let y = bottom - FRAME_H * level as f64;
    let pct = 100.0 * node.samples as f64 / total;
    let _ = write!(
        out,
        "<g><title>{} ({} samples, {pct:.2}%)</title><rect x=\"{x:.2}\" y=\"{y:.1}\" width=\"{:.2}\" height=\"{:.1}\" fill=\"{}\" rx=\"2\"/>",
        esc(name),
        node.samples,
        (w - 0.5).max(0.1),
        FRAME_H - 1.0,
        colour(name)
    );
    let fits = ((w - 6.0) / CHAR_W).floor() as usize;
    if fits >= 3 {
        let chars: Vec<char> = name.chars().collect();
        let label: String = if chars.len() <= fits {
            name.to_string()
        } else {
            chars[..fits - 2].iter().collect::<String>() + ".."
        };
        let _ = write!(
            out,
            "<text x=\"{:.2}\" y=\"{:.1}\" font-size=\"11\" fill=\"#000000\">{}</text>",
            x + 3.0,
            y + FRAME_H - 4.5,
            esc(&label)
        );
    }
    out.push_str("</g>\n");
    let mut cx = x;
    for (n, c) in &node.children {
        draw(out, n, c, cx, level + 1, total, bottom);
        cx += (WIDTH - 20.0) * c.samples as f64 / total;
    }
}

/// Warm colours from the frame's name, so that a frame has the same colour in every graph.
fn colour(name: &str) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
    }
    let f = |shift: u32| ((h >> shift) & 0xff) as f64 / 255.0;
    format!(
        "#{:02x}{:02x}{:02x}",
        (205.0 + 50.0 * f(8)) as u8,
        (80.0 + 150.0 * f(16)) as u8,
        (30.0 + 50.0 * f(24)) as u8
    )
}

/// Draws every profiled run's flame graph (SVG and PNG beside its folded stacks); returns the
/// files written.
pub fn write(set: ResultsDir) -> Result<Vec<PathBuf>> {
    let dir = set.dir;
    let mut written = Vec::new();
    for r in &set.results.runs {
        let Some(p) = &r.profile else { continue };
        // A results directory copied without its profiles still gets its other outputs (and
        // one whose profile path leaves the directory gets no flame graph written there).
        let lines = match set.folded(&p.folded) {
            Ok(lines) => lines,
            Err(e) => {
                eprintln!(
                    "report: no flame graph for {} {} run {}: {e:#}",
                    r.contender, r.scenario, r.run
                );
                continue;
            }
        };
        let title = format!(
            "{} {} run {}: CPU profile ({}, {} samples every {} ms)",
            r.contender, r.scenario, r.run, p.tool, p.samples, p.period_ms
        );
        let image = svg(&lines, &title);
        let svg_path = dir.join(flamegraph_path(&p.folded, "svg"));
        crate::util::files::write_atomic(&svg_path, image.as_bytes())?;
        let png_path = dir.join(flamegraph_path(&p.folded, "png"));
        crate::util::files::write_atomic(
            &png_path,
            &super::chart_png::svg_to_png(&p.folded, &image)?,
        )?;
        written.extend([svg_path, png_path]);
    }
    Ok(written)
}

/// Where a run's flame graph is, relative to the results directory.
pub fn flamegraph_path(folded: &str, ext: &str) -> String {
    format!("{}.{ext}", folded.strip_suffix(".folded").unwrap_or(folded))
}

/// One row of the "CPU profiles" section: the run, its profile, the hottest three frames, the
/// virtual threads started ("-" where not counted) and the flame graph's path.
struct Row<'a> {
    run: &'a crate::results::record::Run,
    profile: &'a crate::results::profile::ProfileRecord,
    hottest: &'a [crate::results::profile::HotFrame],
    virtual_threads: String,
    link: String,
}

fn rows(results: &Results) -> Vec<Row<'_>> {
    results
        .runs
        .iter()
        .filter_map(|run| {
            let p = run.profile.as_ref()?;
            Some(Row {
                run,
                profile: p,
                hottest: &p.hottest[..p.hottest.len().min(3)],
                virtual_threads: p
                    .virtual_threads_started
                    .map(|n| super::fmt_num(n as f64, 0))
                    .unwrap_or_else(|| "-".into()),
                link: flamegraph_path(&p.folded, "svg"),
            })
        })
        .collect()
}

/// The "CPU profiles" section of report.md (empty when no run was profiled).
pub fn markdown(results: &Results) -> String {
    let rows = rows(results);
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from("\n## CPU profiles\n\nTaken during the measured run (`--profile`), sampling every 10 ms: JFR execution samples (Java frames of running threads) for the JVMs, pprof for Go, V8's CPU profiler for Node. \"Hottest\" is self time: the share of samples with that frame on top. The profiler costs throughput (see the README): compare figures from unprofiled runs.\n\n| contender | scenario | run | profiler | samples | virtual threads started | hottest frames (self) | flame graph |\n|---|---|---:|---|---:|---:|---|---|\n");
    for row in rows {
        let (r, p) = (row.run, row.profile);
        let hot: Vec<String> = row
            .hottest
            .iter()
            .map(|h| format!("`{}` {:.1}%", h.frame.replace('|', "\\|"), h.self_pct))
            .collect();
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | [svg]({}) |",
            r.contender,
            r.scenario,
            r.run,
            p.tool,
            super::fmt_num(p.samples as f64, 0),
            row.virtual_threads,
            hot.join("<br>"),
            row.link
        );
    }
    s.push('\n');
    s
}

/// The same section for report.html.
pub fn html(results: &Results) -> String {
    let rows = rows(results);
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from("<h2>CPU profiles</h2>\n<p>Taken during the measured run (<code>--profile</code>), sampling every 10 ms. \"Hottest\" is self time. The profiler costs throughput: compare figures from unprofiled runs.</p>\n<table><tr><th>contender</th><th>scenario</th><th>run</th><th>profiler</th><th>samples</th><th>virtual threads started</th><th>hottest frames (self)</th><th>flame graph</th></tr>\n");
    for row in rows {
        let (r, p) = (row.run, row.profile);
        let hot: Vec<String> = row
            .hottest
            .iter()
            .map(|h| format!("<code>{}</code> {:.1}%", esc(&h.frame), h.self_pct))
            .collect();
        let _ = writeln!(s, "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><a href=\"{}\">flame graph</a></td></tr>", esc(&r.contender), esc(&r.scenario), r.run, p.tool, super::fmt_num(p.samples as f64, 0), row.virtual_threads, hot.join("<br>"), esc(&row.link));
    }
    s.push_str("</table>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_as_wide_as_their_samples_and_callees_sit_on_callers() {
        let lines = vec![
            ("main;handle;digest".to_string(), 3u64),
            ("main;handle;read".to_string(), 1),
            ("main;idle".to_string(), 4),
        ];
        let s = svg(&lines, "t <1>");
        assert!(s.contains("t &lt;1&gt;"));
        assert!(
            s.contains("<title>main (8 samples, 100.00%)</title>"),
            "{s}"
        );
        assert!(s.contains("<title>digest (3 samples, 37.50%)</title>"));
        let rect = |name: &str| {
            let at = s.find(&format!("<title>{name} (")).unwrap();
            let r = &s[at..];
            let num = |k: &str| {
                r[r.find(k).unwrap() + k.len()..]
                    .split('"')
                    .next()
                    .unwrap()
                    .parse::<f64>()
                    .unwrap()
            };
            (num("x=\""), num("y=\""), num("width=\""))
        };
        let (mx, my, mw) = rect("main");
        let (hx, hy, hw) = rect("handle");
        let (_, dy, dw) = rect("digest");
        assert!((mw - 1179.5).abs() < 0.1, "{mw}");
        assert!((hw / mw - 0.5).abs() < 0.01 && (dw / mw - 0.375).abs() < 0.01);
        assert!(
            hx >= mx && hy < my && dy < hy,
            "callees are drawn above their callers"
        );
        assert!(!s.contains("(root)"));
    }

    #[test]
    fn the_flame_graph_renders_to_png() {
        let png =
            super::super::chart_png::svg_to_png("t", &svg(&[("a;b".to_string(), 2)], "t")).unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }
}
