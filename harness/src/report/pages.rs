//! README and docs pages rendered from committed results. Three markers:
//! - `<!-- iobound table DIR -->` then a fenced code block: what `iobound table DIR` prints;
//! - `<!-- iobound table --markdown DIR -->` ... `<!-- /iobound table -->`: what
//!   `iobound table --markdown DIR` prints;
//! - `<!-- = DIR QUERY -->VALUE<!-- /= -->`: one figure in prose (report/figures.rs);
//! - `<!-- iobound contenders -->` ... `<!-- /iobound contenders -->`: the contenders' table,
//!   from their manifests (report/contender_table.rs).
//!
//! `iobound render` writes what they print; `./iobound test` renders every page and fails on
//! any difference, and finds measured figures written outside a marker (`unmarked_figures`).

use super::figures::figure;
use crate::results::dir::ResultsDir;
use crate::results::record::Results;
use anyhow::{anyhow, bail, Context, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const TABLE: &str = "<!-- iobound table ";
const TABLE_END: &str = "<!-- /iobound table -->";
const FIGURE: &str = "<!-- = ";
const FIGURE_END: &str = "<!-- /= -->";
const CONTENDERS: &str = "<!-- iobound contenders -->";
const CONTENDERS_END: &str = "<!-- /iobound contenders -->";

/// The pages a reader meets: README.md, CONTRIBUTING.md and every page under docs/ (results
/// directories excepted), sorted.
pub fn reader_pages(root: &Path) -> Result<Vec<PathBuf>> {
    let mut out = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(d) = dirs.pop() {
        let entries =
            std::fs::read_dir(&d).with_context(|| format!("cannot read {}", d.display()))?;
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() && p.file_name().is_some_and(|n| n != "results") {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Results directories read once per page.
struct Loaded<'a> {
    root: &'a Path,
    by_dir: HashMap<String, (PathBuf, Results)>,
}

impl Loaded<'_> {
    fn get(&mut self, dir: &str) -> Result<ResultsDir<'_>> {
        if !self.by_dir.contains_key(dir) {
            let path = self.root.join(dir);
            let r = Results::load(&path.join("results.json"))?;
            self.by_dir.insert(dir.to_string(), (path, r));
        }
        let (path, results) = &self.by_dir[dir];
        Ok(ResultsDir::new(results, path))
    }
}

/// The page with every marker's content written from its results (`root`: the repository,
/// which marker paths are relative to). An error names the line of the marker.
pub fn render(page: &str, root: &Path) -> Result<String> {
    let mut loaded = Loaded {
        root,
        by_dir: HashMap::new(),
    };
    let mut out = String::with_capacity(page.len());
    let mut rest = page;
    loop {
        let next = [TABLE, FIGURE, CONTENDERS]
            .iter()
            .filter_map(|m| rest.find(m).map(|at| (at, *m)))
            .min();
        let Some((at, marker)) = next else {
            out.push_str(rest);
            return Ok(out);
        };
        // A marker quoted in inline code (`<!-- = ... -->`) is an example, not a marker.
        if rest[..at].ends_with('`') {
            out.push_str(&rest[..at + marker.len()]);
            rest = &rest[at + marker.len()..];
            continue;
        }
        let line = page[..page.len() - rest.len() + at].matches('\n').count() + 1;
        out.push_str(&rest[..at]);
        let (written, after) = match marker {
            TABLE => table(&rest[at..], &mut loaded),
            CONTENDERS => contenders(&rest[at..], root),
            _ => prose_figure(&rest[at..], &mut loaded),
        }
        .with_context(|| format!("the marker on line {line}"))?;
        out.push_str(&written);
        rest = after;
    }
}

/// A table marker and its block, written again; returns it and what follows.
fn table<'p>(from: &'p str, loaded: &mut Loaded) -> Result<(String, &'p str)> {
    let (args, body) = from[TABLE.len()..]
        .split_once(" -->")
        .ok_or_else(|| anyhow!("a table marker without its closing ` -->`"))?;
    let args = args.trim();
    let (markdown, dir) = match args.strip_prefix("--markdown ") {
        Some(d) => (true, d.trim()),
        None => (false, args),
    };
    let (open, close) = if markdown {
        ("", TABLE_END)
    } else {
        ("```\n", "\n```")
    };
    let start = body
        .find(open)
        .filter(|at| markdown || body[..*at].trim().is_empty())
        .ok_or_else(|| anyhow!("no code block after the table marker for {dir}"))?
        + open.len();
    let len = body[start..]
        .find(close)
        .ok_or_else(|| anyhow!("the block of the table of {dir} has no end `{close}`"))?;
    let block = &body[start..start + len];
    let set = loaded.get(dir)?;
    let printed = if markdown {
        super::markdown::render_markdown(set)
    } else {
        super::table::render(set)
    };
    // The block keeps its own blank lines around what is printed.
    let lead = &block[..block.len() - block.trim_start_matches('\n').len()];
    let trail = &block[block.trim_end_matches('\n').len()..];
    let head = &from[..TABLE.len() + args_len(from) + start];
    let written = format!("{head}{lead}{}{trail}", printed.trim_matches('\n'));
    Ok((written, &body[start + len..]))
}

/// The contenders' block, written again from the manifests; returns it and what follows.
fn contenders<'p>(from: &'p str, root: &Path) -> Result<(String, &'p str)> {
    let body = &from[CONTENDERS.len()..];
    let end = body
        .find(CONTENDERS_END)
        .ok_or_else(|| anyhow!("the contenders' block has no end `{CONTENDERS_END}`"))?;
    let table = super::contender_table::markdown(root)?;
    Ok((
        format!(
            "{CONTENDERS}
{table}{CONTENDERS_END}"
        ),
        &body[end + CONTENDERS_END.len()..],
    ))
}

/// Length from the end of `<!-- iobound table ` to the end of its ` -->`.
fn args_len(from: &str) -> usize {
    from[TABLE.len()..]
        .find(" -->")
        .map_or(0, |at| at + " -->".len())
}

/// A figure marker and its value, written again; returns it and what follows.
fn prose_figure<'p>(from: &'p str, loaded: &mut Loaded) -> Result<(String, &'p str)> {
    let (query, after) = from[FIGURE.len()..]
        .split_once("-->")
        .ok_or_else(|| anyhow!("a figure marker without its closing `-->`"))?;
    let (old, rest) = after.split_once(FIGURE_END).ok_or_else(|| {
        anyhow!(
            "the figure `{}` has no `{FIGURE_END}` after its value",
            query.trim()
        )
    })?;
    if old.contains('\n') || old.contains("<!--") {
        bail!(
            "the figure `{}` has no `{FIGURE_END}` on its line",
            query.trim()
        );
    }
    let words: Vec<&str> = query.split_whitespace().collect();
    let Some((dir, words)) = words.split_first() else {
        bail!("an empty figure marker: `<!-- = DIR QUERY -->`");
    };
    let value = figure(loaded.get(dir)?, words).with_context(|| format!("`{}`", query.trim()))?;
    Ok((format!("{FIGURE}{query}-->{value}{FIGURE_END}"), rest))
}

/// Measured figures written outside a marker, with their line numbers: a number followed by
/// `%`, `x`, `times`, `req/s` or `records/s`, a number of MB or GB, or a decimal number of ms
/// or s. Not counted: fenced code, table rows and marked blocks, inline code, link targets,
/// HTML comments, a result after `=` (arithmetic the sentence shows), and `allowed` phrases
/// (the method's own constants).
pub fn unmarked_figures(page: &str, allowed: &[&str]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let (mut fenced, mut in_table) = (false, false);
    for (i, line) in page.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if line.contains(TABLE) && line.contains("--markdown") {
            in_table = true;
        }
        if line.contains(TABLE_END) {
            in_table = false;
            continue;
        }
        if fenced || in_table || line.trim_start().starts_with('|') {
            continue;
        }
        let mut text = strip(line);
        for phrase in allowed {
            text = text.replace(phrase, " ");
        }
        for figure in measured(&text) {
            found.push((i + 1, figure));
        }
    }
    found
}

/// The line without markers and their values, HTML comments, inline code and link targets.
fn strip(line: &str) -> String {
    let mut s = line.to_string();
    while let Some(at) = s.find(FIGURE) {
        let end = s[at..]
            .find(FIGURE_END)
            .map_or(s.len(), |e| at + e + FIGURE_END.len());
        s.replace_range(at..end, " ");
    }
    for (open, close) in [("<!--", "-->"), ("`", "`"), ("](", ")")] {
        while let Some(at) = s.find(open) {
            let end = s[at + open.len()..]
                .find(close)
                .map_or(s.len(), |e| at + open.len() + e + close.len());
            s.replace_range(at..end, " ");
        }
    }
    s
}

/// Numbers with a measured unit after them.
fn measured(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() || (i > 0 && is_word(chars[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len()
            && (chars[i].is_ascii_digit()
                || matches!(chars[i], ',' | '.')
                    && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            i += 1;
        }
        let number: String = chars[start..i].iter().collect();
        let before: String = chars[..start].iter().collect();
        let after: String = chars[i..].iter().collect();
        let Some((unit, len)) = unit(&after, number.contains('.')) else {
            continue;
        };
        // "200 / 0.1 s = 2,000 req/s": arithmetic on a setting, shown in the sentence.
        let arithmetic =
            before.trim_end().ends_with(['=', '/']) || after[len..].trim_start().starts_with('=');
        if !arithmetic {
            out.push(format!("{number}{unit}"));
        }
    }
    out
}

/// A letter, digit or `_` before a number makes it part of a word ("p99", "x86_64").
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The measured unit `after` starts with, if any, and how many bytes of `after` it takes.
fn unit(after: &str, decimal: bool) -> Option<(String, usize)> {
    let word_ends = |s: &str, n: usize| !s[n..].chars().next().is_some_and(char::is_alphanumeric);
    if after.starts_with('%') {
        return Some(("%".into(), 1));
    }
    if after.starts_with('x') && word_ends(after, 1) {
        return Some(("x".into(), 1));
    }
    let space = usize::from(after.starts_with(' '));
    let spaced = &after[space..];
    let mut units = vec!["times", "req/s", "records/s", "MB", "GB"];
    if decimal {
        units.extend(["ms", "s"]);
    }
    units
        .into_iter()
        .find(|u| spaced.starts_with(u) && word_ends(spaced, u.len()))
        .map(|u| (format!(" {u}"), space + u.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_figures_outside_markers_are_found() {
        let page = "WebFlux served 4.4 times MVC's throughput, p99 -74%, at 9,082 req/s.\n\
                    It used 339 MB and waited 1.5 s; the ratio was 0.83x.\n";
        let found: Vec<String> = unmarked_figures(page, &[])
            .into_iter()
            .map(|f| f.1)
            .collect();
        assert_eq!(
            found,
            [
                "4.4 times",
                "74%",
                "9,082 req/s",
                "339 MB",
                "1.5 s",
                "0.83x"
            ]
        );
    }

    #[test]
    fn figures_in_markers_code_tables_and_settings_are_not() {
        let page = "Served <!-- = d verdict s throughput ratio -->4.43<!-- /= -->x, `50%` and \
                    [a](docs/x-5%.md); 200 / 0.1 s = 2,000 req/s.\n\
                    | a | 5% |\n```\n12 req/s\n```\n\
                    <!-- iobound table --markdown d -->\n**s** 10,000 req/s\n<!-- /iobound table -->\n\
                    A 100 ms wait, 1,000 users, 8 s, a 512m heap, equivalent within 5%.\n";
        assert_eq!(unmarked_figures(page, &["within 5%"]), vec![]);
        assert_eq!(unmarked_figures(page, &[]), vec![(9, "5%".to_string())]);
    }

    fn results_dir(root: &Path) {
        let dir = root.join("r");
        std::fs::create_dir_all(&dir).unwrap();
        let mut r = crate::results::test_support::blank_results(&["a"]);
        r.plan = serde_json::json!({"budget": "40m", "scenarios": [{"name": "wait",
            "path": "/delay?ms=100", "load": {"model": "closed", "users": 1000}}]});
        std::fs::write(dir.join("results.json"), serde_json::to_string(&r).unwrap()).unwrap();
    }

    #[test]
    fn figures_are_written_from_their_results_and_the_rest_is_kept() {
        let root = tempfile::tempdir().unwrap();
        results_dir(root.path());
        let page = "A budget of <!-- = r plan budget -->1h<!-- /= --> and a ceiling of\n\
                    <!-- = r ceiling wait -->9<!-- /= --> req/s. Done.\n";
        let want = page
            .replace("-->1h<", "-->40m<")
            .replace("-->9<", "-->10,000<");
        assert_eq!(render(page, root.path()).unwrap(), want);
        assert_eq!(render(&want, root.path()).unwrap(), want);
        let quoted = "Write `<!-- = docs/results/NAME QUERY -->VALUE<!-- /= -->`.";
        assert_eq!(render(quoted, root.path()).unwrap(), quoted);
    }

    #[test]
    fn a_broken_marker_names_its_line() {
        let root = tempfile::tempdir().unwrap();
        results_dir(root.path());
        let e = |p: &str| format!("{:#}", render(p, root.path()).unwrap_err());
        assert!(e("x\ny <!-- = r plan nope -->1<!-- /= -->").contains("line 2"));
        assert!(
            e("x <!-- = r plan budget -->1\n<!-- /= -->").contains("no `<!-- /= -->` on its line")
        );
        assert!(e("<!-- = missing plan budget -->1<!-- /= -->").contains("cannot read"));
        assert!(e("<!-- iobound table r -->\nno block").contains("no code block"));
    }
}
