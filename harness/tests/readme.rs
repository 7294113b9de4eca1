//! Every README table marked `<!-- iobound table docs/results/NAME -->` (a code block follows:
//! what `iobound table DIR` prints) or `<!-- iobound table --markdown docs/results/NAME -->`
//! (Markdown up to `<!-- /iobound table -->`: what `iobound table --markdown DIR` prints) is
//! re-rendered in-process from its committed results and must match character for character: a
//! figure in the README that its results no longer print fails here.

use std::path::Path;

/// The README's block after a marker: a fenced code block, or Markdown up to the end marker.
fn block<'a>(rest: &'a str, markdown: bool, dir: &str) -> &'a str {
    let found = if markdown {
        rest.split_once("-->")
            .and_then(|(_, b)| b.split_once("<!-- /iobound table -->"))
            .map(|(b, _)| b)
    } else {
        rest.split_once("```\n")
            .map(|(_, b)| b)
            .and_then(|b| b.split_once("\n```"))
            .map(|(b, _)| b)
    };
    found.unwrap_or_else(|| panic!("no table block after the marker for {dir}"))
}

#[test]
fn readme_tables_are_printed_by_their_committed_results() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let marker = "<!-- iobound table ";
    let mut checked = 0;
    for (at, _) in readme.match_indices(marker) {
        let rest = &readme[at + marker.len()..];
        let args = rest.split(" -->").next().unwrap().trim();
        let (markdown, dir) = match args.strip_prefix("--markdown ") {
            Some(d) => (true, d.trim()),
            None => (false, args),
        };
        let block = block(rest, markdown, dir);
        let results = iobound::run::results::Results::load(&root.join(dir).join("results.json"))
            .unwrap_or_else(|e| panic!("{dir}: {e:#}"));
        let printed = if markdown {
            iobound::report::markdown::render_markdown(&results)
        } else {
            iobound::report::table::render(&results, &root.join(dir))
        };
        let (printed, block) = (printed.trim_matches('\n'), block.trim_matches('\n'));
        if printed != block {
            let line = printed
                .lines()
                .zip(block.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(printed.lines().count().min(block.lines().count()));
            let cmd = if markdown {
                format!("./iobound table --markdown {dir}")
            } else {
                format!("./iobound table {dir}")
            };
            panic!("README table of {dir} differs from what its results print, first at line {}:\n  README:  {:?}\n  printed: {:?}\nrun `{cmd}` and paste its output", line + 1, block.lines().nth(line), printed.lines().nth(line));
        }
        checked += 1;
    }
    assert!(
        checked >= 2,
        "only {checked} README tables are marked with their results"
    );
}
