//! A results directory written by an earlier iobound (tests/fixtures/layout-2026-11-23: two
//! built-in servers, two runs, a stepped closed scenario and an open one) must still be read,
//! and `iobound report` must rebuild its text outputs byte for byte: a refactoring that changes
//! a figure, a label or a column fails here.

use std::path::Path;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

#[test]
fn report_rebuilds_an_earlier_results_directory_byte_for_byte() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/layout-2026-11-23");
    let work = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture.join("results.json"),
        work.path().join("results.json"),
    )
    .unwrap();
    copy_dir(&fixture.join("histograms"), &work.path().join("histograms"));
    // In-process, through the library: what `iobound report DIR` does.
    let results = iobound::results::record::Results::load(&work.path().join("results.json"))
        .expect("an earlier results.json still loads");
    iobound::report::write_outputs(iobound::results::dir::ResultsDir::new(
        &results,
        work.path(),
    ))
    .expect("outputs written");
    for f in ["summary.txt", "report.md", "intervals.csv"] {
        let expected = std::fs::read_to_string(fixture.join("expected").join(f)).unwrap();
        let got = std::fs::read_to_string(work.path().join(f))
            .unwrap_or_else(|e| panic!("{f} not written: {e}"));
        if got != expected {
            let line = expected
                .lines()
                .zip(got.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(expected.lines().count().min(got.lines().count()));
            panic!(
                "{f} differs from the one written before, first at line {}:\n  before: {:?}\n  now:    {:?}",
                line + 1,
                expected.lines().nth(line),
                got.lines().nth(line)
            );
        }
    }
}
