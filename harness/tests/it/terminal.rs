//! What iobound prints of a name it was given (a path, a plan's field) cannot steer the
//! terminal it prints to: a control character in it (an escape sequence that recolours, moves
//! the cursor or retitles the window) is written as its escape, `\u{1b}`, not as itself.

use crate::common::run;

#[test]
fn an_error_naming_a_hostile_path_prints_its_control_characters_escaped() {
    let dir = tempfile::tempdir().unwrap();
    // A results directory named with an escape sequence that would clear the screen, and a
    // carriage return that would let the rest of the line overwrite its start.
    let hostile = dir.path().join("run\u{1b}[2J\rfake");
    let o = run(&["table", hostile.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        !err.contains('\u{1b}') && !err.contains('\r'),
        "printed raw: {err:?}"
    );
    assert!(err.contains("run\\u{1b}[2J\\u{d}fake"), "{err}");
}

#[test]
fn a_results_directory_from_elsewhere_cannot_steer_the_terminal_its_table_is_printed_to() {
    // The committed demo's results, its contender renamed with an escape sequence that would
    // clear the screen: `iobound table` prints the name escaped.
    let demo = crate::common::repo_root().join("docs/results/demo-2026-11-25/results.json");
    let text = std::fs::read_to_string(demo).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("results.json"),
        text.replace("\"spring-webflux\"", "\"webflux\\u001b[2J\""),
    )
    .unwrap();
    let o = run(&["table", dir.path().to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!out.contains('\u{1b}'), "printed raw: {out:?}");
    assert!(out.contains("webflux\\u{1b}[2J"), "{out}");
}
