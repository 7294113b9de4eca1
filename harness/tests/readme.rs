//! Every README table marked `<!-- iobound table docs/results/NAME -->` is re-rendered from
//! its committed results (in-process, as `iobound table` prints it) and must match the block
//! that follows the marker character for character: a figure in the README that its results
//! no longer print fails here.

use std::path::Path;

#[test]
fn readme_tables_are_printed_by_their_committed_results() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let marker = "<!-- iobound table ";
    let mut checked = 0;
    for (at, _) in readme.match_indices(marker) {
        let rest = &readme[at + marker.len()..];
        let dir = rest.split(" -->").next().unwrap().trim();
        let block = rest.split_once("```\n").map(|(_, b)| b).and_then(|b| b.split_once("\n```")).map(|(b, _)| b).unwrap_or_else(|| panic!("no code block after the marker for {dir}"));
        let results = iobound::run::results::Results::load(&root.join(dir).join("results.json")).unwrap_or_else(|e| panic!("{dir}: {e:#}"));
        let printed = iobound::report::table::render(&results, &root.join(dir));
        let (printed, block) = (printed.trim_matches('\n'), block.trim_matches('\n'));
        if printed != block {
            let line = printed.lines().zip(block.lines()).position(|(a, b)| a != b).unwrap_or(printed.lines().count().min(block.lines().count()));
            panic!("README table of {dir} differs from what its results print, first at line {}:\n  README:  {:?}\n  printed: {:?}\nrun `./iobound table {dir}` and paste its output", line + 1, block.lines().nth(line), printed.lines().nth(line));
        }
        checked += 1;
    }
    assert!(checked >= 1, "no README table is marked with its results");
}
