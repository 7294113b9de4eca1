//! Every command iobound sends to another host is built one way, by `util::shell`
//! (`command_line`, `exec`, `quoted`): each word quoted whole. A value put between quotes by
//! hand breaks on a path holding a quote, and one left bare after `exec` on a path holding a
//! space; either way a name from a plan or an inventory could become shell syntax on the host.

use crate::common::sources::{code, modules};

/// Whether `line` quotes an interpolated value by hand (`'{x}'`, `'{}'`) or execs one bare
/// (`exec {x}`), the two ways commands were built before `util::shell` did it for all.
fn builds_a_command_by_hand(line: &str) -> bool {
    let bytes = line.as_bytes();
    let interpolation_at = |i: usize| -> Option<usize> {
        if bytes.get(i) != Some(&b'{') || bytes.get(i + 1) == Some(&b'{') {
            return None;
        }
        let len = line[i + 1..].find('}')?;
        let inside = &line[i + 1..i + 1 + len];
        inside
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.:".contains(c))
            .then_some(i + 1 + len)
    };
    (0..bytes.len()).any(|i| {
        let quoted_by_hand = bytes[i] == b'\''
            && interpolation_at(i + 1).is_some_and(|end| bytes.get(end + 1) == Some(&b'\''));
        let bare_exec = bytes[i..].starts_with(b"exec ") && interpolation_at(i + 5).is_some();
        quoted_by_hand || bare_exec
    })
}

/// The lines of the harness's sources (unit tests and comments left out) that build a command
/// by hand, as "file:line: text".
fn commands_built_by_hand() -> Vec<String> {
    let mut found = Vec::new();
    // util/shell.rs is where commands are built: the one place allowed to.
    for path in modules().values().filter(|p| !p.ends_with("util/shell.rs")) {
        for (n, line) in code(path).iter().enumerate() {
            if !line.trim_start().starts_with("//") && builds_a_command_by_hand(line) {
                found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn the_reader_finds_a_value_quoted_by_hand_and_a_bare_exec_and_nothing_else() {
    assert!(builds_a_command_by_hand(r#"format!("cat -- '{out}'")"#));
    assert!(builds_a_command_by_hand(
        r#"format!("'{}' agent probe", b)"#
    ));
    assert!(builds_a_command_by_hand(
        r#"format!("exec {binary} agent contender")"#
    ));
    assert!(builds_a_command_by_hand(
        r#"format!("exec {} agent drive", h.binary)"#
    ));
    assert!(!builds_a_command_by_hand(
        r#"shell::exec(&[binary, "agent"])"#
    ));
    assert!(!builds_a_command_by_hand(
        r#"awk '/MemTotal/ {print "mem_kb=" $2}' /proc/meminfo"#
    ));
    assert!(!builds_a_command_by_hand(
        r#"format!("cat > {r}", r = quoted(remote))"#
    ));
    assert!(!builds_a_command_by_hand(r#"format!("'{{' and '}}'")"#));
}

#[test]
fn every_command_for_a_host_is_built_by_util_shell() {
    let found = commands_built_by_hand();
    assert!(
        found.is_empty(),
        "build these with util::shell::{{command_line, exec, quoted}}:\n{}",
        found.join("\n")
    );
}
