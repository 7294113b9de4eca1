//! README and docs pages rendered from committed results. The markers:
//! - `<!-- iobound table DIR -->` then a fenced code block: what `iobound table DIR` prints;
//! - `<!-- iobound table --markdown DIR -->` ... `<!-- /iobound table -->`: what
//!   `iobound table --markdown DIR` prints;
//! - `<!-- = DIR QUERY -->VALUE<!-- /= -->`: one figure in prose (pages/quote.rs);
//! - `<!-- iobound grid DIR SCENARIO METRIC,.. CONTENDER,.. [B/A,..] -->` ...
//!   `<!-- /iobound grid -->`: a table of such figures (pages/grid.rs);
//! - `<!-- iobound rows DIR SCENARIO METRIC,.. CONTENDER,.. -->` ... `<!-- /iobound rows -->`:
//!   the same, a row per contender with its model (pages/rows.rs);
//! - `<!-- iobound blocks SCENARIO METRIC,.. CONTENDER,.. LABEL=DIR LABEL=DIR.. -->` ...
//!   `<!-- /iobound blocks -->`: such figures of sittings one after the other, side by side
//!   (pages/blocks.rs);
//! - `<!-- iobound figures` SPEC `-->` ... `<!-- /iobound figures -->`: a table whose cells are
//!   any queries, a column per query and a row per value put in it (pages/figure_table.rs);
//! - `<!-- iobound contenders -->` ... `<!-- /iobound contenders -->`: the contenders' table,
//!   from their manifests (pages/contender_table.rs);
//! - `<!-- iobound rejudged -->` ... `<!-- /iobound rejudged -->`: every committed sitting with
//!   verdicts, as measured and as today's steady-state rule judges it (pages/rejudged.rs).
//!
//! `iobound render` writes what they print; `./iobound test` renders every page and fails on
//! any difference; pages/lint.rs finds what a page types where a marker belongs.

use super::blocks::{BLOCKS, BLOCKS_END};
use super::figure_table::{FIGURES, FIGURES_END};
use super::grid::{grid, GRID, GRID_END};
use super::quote::figure;
use super::rejudged::{REJUDGED, REJUDGED_END};
use super::rows::{rows, ROWS, ROWS_END};
use crate::results::dir::ResultsDir;
use crate::results::record::Results;
use anyhow::{anyhow, bail, Context, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub(super) const TABLE: &str = "<!-- iobound table ";
pub(super) const TABLE_END: &str = "<!-- /iobound table -->";
pub(super) const FIGURE: &str = "<!-- = ";
pub(super) const FIGURE_END: &str = "<!-- /= -->";
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
        self.load(dir)?;
        Ok(self.loaded(dir))
    }

    /// `dir` read, once.
    fn load(&mut self, dir: &str) -> Result<()> {
        if !self.by_dir.contains_key(dir) {
            let path = self.root.join(dir);
            let r = Results::load(&path.join("results.json"))?;
            self.by_dir.insert(dir.to_string(), (path, r));
        }
        Ok(())
    }

    /// `dir`, read before by `load`.
    fn loaded(&self, dir: &str) -> ResultsDir<'_> {
        let (path, results) = &self.by_dir[dir];
        ResultsDir::new(results, path)
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
        let next = [
            TABLE, FIGURE, CONTENDERS, REJUDGED, GRID, ROWS, BLOCKS, FIGURES,
        ]
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
            CONTENDERS => repo_block(
                &rest[at..],
                root,
                (CONTENDERS, CONTENDERS_END),
                super::contender_table::markdown,
            ),
            REJUDGED => repo_block(
                &rest[at..],
                root,
                (REJUDGED, REJUDGED_END),
                super::rejudged::table,
            ),
            GRID => one_dir_table(&rest[at..], &mut loaded, (GRID, GRID_END), grid),
            ROWS => one_dir_table(&rest[at..], &mut loaded, (ROWS, ROWS_END), rows),
            BLOCKS => blocks(&rest[at..], &mut loaded),
            FIGURES => figures(&rest[at..], &mut loaded),
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
        crate::report::markdown_tables::render_markdown(set)
    } else {
        crate::report::table::render(set)
    };
    // The block keeps its own blank lines around what is printed.
    let lead = &block[..block.len() - block.trim_start_matches('\n').len()];
    let trail = &block[block.trim_end_matches('\n').len()..];
    let head = &from[..TABLE.len() + args_len(from) + start];
    let written = format!("{head}{lead}{}{trail}", printed.trim_matches('\n'));
    Ok((written, &body[start + len..]))
}

/// A block written from the whole repository (the contenders' table from their manifests,
/// the committed sittings judged again), whose table `write` makes; written again, with what
/// follows.
fn repo_block<'p>(
    from: &'p str,
    root: &Path,
    (open, close): (&str, &str),
    write: fn(&Path) -> Result<String>,
) -> Result<(String, &'p str)> {
    let body = &from[open.len()..];
    let end = body
        .find(close)
        .ok_or_else(|| anyhow!("the block has no end `{close}`"))?;
    let table = write(root)?;
    Ok((
        format!("{open}\n{table}{close}"),
        &body[end + close.len()..],
    ))
}

/// A marker of a table from one results directory (a grid, or rows), whose table `write`
/// makes from the marker's arguments after the directory; written again, with what follows.
fn one_dir_table<'p>(
    from: &'p str,
    loaded: &mut Loaded,
    (open, close): (&str, &str),
    write: fn(ResultsDir, &str) -> Result<String>,
) -> Result<(String, &'p str)> {
    let (args, after) = marker_args(from, (open, close))?;
    let (dir, args) = args
        .trim()
        .split_once(' ')
        .ok_or_else(|| anyhow!("a table names its results directory, then what it shows"))?;
    let table = write(loaded.get(dir)?, args)?;
    Ok((
        format!("{open}{dir} {} -->\n{table}{close}", args.trim()),
        after,
    ))
}

/// The arguments of a table marker opened by `open` (up to its ` -->`), and what follows the
/// `close` that ends its table.
fn marker_args<'p>(from: &'p str, (open, close): (&str, &str)) -> Result<(&'p str, &'p str)> {
    let (args, body) = from[open.len()..]
        .split_once(" -->")
        .ok_or_else(|| anyhow!("a table marker without its closing ` -->`"))?;
    let end = body
        .find(close)
        .ok_or_else(|| anyhow!("the table has no end `{close}`"))?;
    Ok((args, &body[end + close.len()..]))
}

/// A blocks marker and its table, written again; returns it and what follows.
fn blocks<'p>(from: &'p str, loaded: &mut Loaded) -> Result<(String, &'p str)> {
    let (args, after) = marker_args(from, (BLOCKS, BLOCKS_END))?;
    let parsed = super::blocks::parse(args)?;
    for (_, dir) in &parsed.sittings {
        loaded.load(dir)?;
    }
    let sets: Vec<ResultsDir> = (parsed.sittings.iter())
        .map(|(_, dir)| loaded.loaded(dir))
        .collect();
    let table = super::blocks::blocks(&parsed, &sets)?;
    Ok((
        format!("{BLOCKS}{} -->\n{table}{BLOCKS_END}", args.trim()),
        after,
    ))
}

/// A figures marker, its spec kept as written and its table written again; returns it and what
/// follows.
fn figures<'p>(from: &'p str, loaded: &mut Loaded) -> Result<(String, &'p str)> {
    let (spec, body) = from[FIGURES.len()..]
        .split_once("-->")
        .ok_or_else(|| anyhow!("a figures marker without its closing `-->`"))?;
    let end = body
        .find(FIGURES_END)
        .ok_or_else(|| anyhow!("the table has no end `{FIGURES_END}`"))?;
    let parsed = super::figure_table::parse(spec)?;
    let table =
        super::figure_table::table(&parsed, &mut |dir, words| figure(loaded.get(dir)?, words))?;
    Ok((
        format!("{FIGURES}{spec}-->\n{table}{FIGURES_END}"),
        &body[end + FIGURES_END.len()..],
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_grid_is_a_table_of_figures_in_one_marker() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("g");
        std::fs::create_dir_all(&dir).unwrap();
        let mut r = crate::results::test_support::blank_results(&["a", "b", "c"]);
        r.plan = serde_json::json!({"scenarios": [{"name": "s", "path": "/plaintext"}]});
        let ok_runs = crate::results::test_support::ok_runs;
        ok_runs(&mut r, "a", "s", &[1000.0, 1010.0, 990.0, 1005.0, 995.0]);
        ok_runs(&mut r, "b", "s", &[2000.0, 2020.0, 1980.0, 2010.0, 1990.0]);
        // c's one run trended in its window: shown, and compared with nothing.
        ok_runs(&mut r, "c", "s", &[1500.0]);
        let trended = crate::results::test_support::window_trended(30, 25.0);
        r.runs.last_mut().unwrap().warmup = Some(trended);
        std::fs::write(dir.join("results.json"), serde_json::to_string(&r).unwrap()).unwrap();
        let page = "Before.\n<!-- iobound grid g s throughput a,b b/a -->\nstale\n<!-- /iobound grid -->\nAfter.\n";
        let written = render(page, root.path()).unwrap();
        let want = "Before.\n<!-- iobound grid g s throughput a,b b/a -->\n\
                    | median of the runs | `a` | `b` | b vs a |\n\
                    |---|---:|---:|---:|\n\
                    | throughput (req/s) | 1,000 | 2,000 | 2.00x, different |\n\
                    | runs not at steady state | 0 of 5 | 0 of 5 |  |\n\
                    <!-- /iobound grid -->\nAfter.\n";
        assert_eq!(written, want);
        assert_eq!(render(&written, root.path()).unwrap(), want);
        let page = "<!-- iobound grid g s throughput a,c c/a -->\n<!-- /iobound grid -->\n";
        let written = render(page, root.path()).unwrap();
        assert!(
            written.contains(
                "| throughput (req/s) | 1,000 | 1,500 | no runs at steady state to compare |"
            ) && written.contains("| runs not at steady state | 0 of 5 | 1 of 1 |  |"),
            "{written}"
        );
        // What it cannot show is an error naming the marker's line, not a table of blanks.
        let e = |p: &str| format!("{:#}", render(p, root.path()).unwrap_err());
        let broken = "x\n<!-- iobound grid g s throughputs a,b -->\n<!-- /iobound grid -->";
        assert!(e(broken).contains("line 2") && e(broken).contains("unknown metric"));
        assert!(
            e("<!-- iobound grid g s throughput -->\n<!-- /iobound grid -->").contains("a grid is")
        );
        assert!(e("<!-- iobound grid g s throughput a -->\n").contains("has no end"));
    }

    #[test]
    fn a_rows_table_is_a_row_per_contender_with_its_model() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("g");
        std::fs::create_dir_all(&dir).unwrap();
        let mut r = crate::results::test_support::blank_results(&["a", "b"]);
        r.plan = serde_json::json!({"scenarios": [{"name": "s", "path": "/plaintext"}]});
        crate::results::test_support::ok_runs(&mut r, "a", "s", &[1000.0, 1010.0, 990.0]);
        crate::results::test_support::ok_runs(&mut r, "b", "s", &[2000.0, 2020.0]);
        std::fs::write(dir.join("results.json"), serde_json::to_string(&r).unwrap()).unwrap();
        let page =
            "<!-- iobound rows g s throughput,throttled b,a -->\nstale\n<!-- /iobound rows -->\n";
        let want = "<!-- iobound rows g s throughput,throttled b,a -->\n\
                    | `s`, median of the runs | model | throughput (req/s) \
                    | throttled (% of periods) | runs not at steady state |\n\
                    |---|---|---:|---:|---:|\n\
                    | `b` | event-loop | 2,010 | - | 0 of 2 |\n\
                    | `a` | event-loop | 1,000 | - | 0 of 3 |\n\
                    <!-- /iobound rows -->\n";
        let written = render(page, root.path()).unwrap();
        assert_eq!(written, want);
        assert_eq!(render(&written, root.path()).unwrap(), want);
        let e = |p: &str| format!("{:#}", render(p, root.path()).unwrap_err());
        assert!(
            e("<!-- iobound rows g s throughput zz -->\n<!-- /iobound rows -->")
                .contains("`zz` is not a contender")
        );
        assert!(
            e("<!-- iobound rows g s throughput -->\n<!-- /iobound rows -->")
                .contains("a rows table is")
        );
        assert!(
            e("<!-- iobound rows g s nothing a -->\n<!-- /iobound rows -->")
                .contains("unknown metric")
        );
    }

    #[test]
    fn a_blocks_table_sets_sittings_side_by_side_and_says_they_are_blocks() {
        let root = tempfile::tempdir().unwrap();
        let sitting = |name: &str, a: &[f64], b: &[f64]| {
            let dir = root.path().join(name);
            std::fs::create_dir_all(&dir).unwrap();
            let mut r = crate::results::test_support::blank_results(&["a", "b"]);
            r.plan = serde_json::json!({"scenarios": [{"name": "s", "path": "/plaintext"}]});
            crate::results::test_support::ok_runs(&mut r, "a", "s", a);
            crate::results::test_support::ok_runs(&mut r, "b", "s", b);
            std::fs::write(dir.join("results.json"), serde_json::to_string(&r).unwrap()).unwrap();
        };
        sitting("p", &[1000.0, 1010.0, 990.0], &[2000.0, 2000.0]);
        sitting("q", &[500.0, 510.0, 490.0], &[3000.0, 3000.0]);
        let page = "<!-- iobound blocks s throughput a,b pinned=p under_quota=q -->\nstale\n\
                    <!-- /iobound blocks -->\n";
        let written = render(page, root.path()).unwrap();
        let want = "<!-- iobound blocks s throughput a,b pinned=p under_quota=q -->\n\
                    | median of the runs (sittings one after the other: blocks, not tested) \
                    | pinned | under quota |\n\
                    |---|---:|---:|\n\
                    | `a`: throughput (req/s) | 1,000 | 500 |\n\
                    | `b`: throughput (req/s) | 2,000 | 3,000 |\n\
                    | `a`: runs not at steady state | 0 of 3 | 0 of 3 |\n\
                    | `b`: runs not at steady state | 0 of 2 | 0 of 2 |\n\
                    <!-- /iobound blocks -->\n";
        assert_eq!(written, want);
        assert_eq!(render(&written, root.path()).unwrap(), want);
        let e = |p: &str| format!("{:#}", render(p, root.path()).unwrap_err());
        let one = "x\n<!-- iobound blocks s throughput a pinned=p -->\n<!-- /iobound blocks -->";
        assert!(e(one).contains("line 2") && e(one).contains("two sittings or more"));
        let missing = "<!-- iobound blocks s throughput a pinned=p other=nowhere -->\n\
                       <!-- /iobound blocks -->";
        assert!(e(missing).contains("cannot read"));
        let nobody = "<!-- iobound blocks s throughput zz p=p q=q -->\n<!-- /iobound blocks -->";
        assert!(e(nobody).contains("`zz` has no run of `s`"));
        // Throttling, where neither sitting had a quota: a dash, not an error.
        let unlimited = "<!-- iobound blocks s throttled a p=p q=q -->\n<!-- /iobound blocks -->";
        assert!(render(unlimited, root.path())
            .unwrap()
            .contains("| `a`: throttled (% of periods) | - | - |"));
        assert!(e("<!-- iobound blocks s throughput a pinned=p q=q -->\n").contains("has no end"));
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
