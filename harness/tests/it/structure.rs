//! The harness's shape, checked over its sources: no import circle between files, each folder
//! using only the folders its mod.rs lists and no loop between folders, no file over 500 lines
//! of code and no function over 80 lines (rustfmt-formatted; unit-test modules not counted). A folder's mod.rs is that folder's interface: its files may use it and it uses
//! them, so arrows between a file and its own folder's mod.rs are not circles.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::common;
use crate::common::sources::{code, modules};

const FILE_LIMIT: usize = 500;
const FUNCTION_LIMIT: usize = 80;

/// Every path a line names after `crate::` or `super::`, braces expanded:
/// "use super::{a::B, c};" gives ["super::a::B", "super::c"].
fn paths_in(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(i) = line[from..].find(start) {
            let at = from + i;
            let before = line[..at].chars().last();
            from = at + start.len();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut rest = line[at..].chars().peekable();
            out.extend(tree(&mut rest, String::new()));
        }
    }
    out
}

/// Parses one path tree (`a::b::{c, d::e}`) from `chars`, each leaf prefixed by `prefix`.
fn tree(chars: &mut std::iter::Peekable<std::str::Chars>, prefix: String) -> Vec<String> {
    let mut path = prefix;
    loop {
        match chars.peek() {
            Some('{') => {
                chars.next();
                let mut leaves = Vec::new();
                loop {
                    while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ',') {
                        chars.next();
                    }
                    if chars.peek().is_none_or(|c| *c == '}') {
                        chars.next();
                        return leaves;
                    }
                    leaves.extend(tree(chars, path.clone()));
                }
            }
            Some(c) if c.is_alphanumeric() || *c == '_' || *c == ':' => {
                path.push(*c);
                chars.next();
            }
            _ => return vec![path],
        }
    }
}

/// The module a path names (the longest known prefix), from module `from`.
fn target(path: &str, from: &str, known: &BTreeMap<String, PathBuf>) -> Option<String> {
    let mut parts: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<&str> = if from.is_empty() {
        vec![]
    } else {
        from.split("::").collect()
    };
    if parts.first() == Some(&"crate") {
        base.clear();
        parts.remove(0);
    }
    // `super` is the parent of the module (a mod.rs is its folder's module).
    while parts.first() == Some(&"super") {
        parts.remove(0);
        base.pop();
    }
    let full: Vec<&str> = base.into_iter().chain(parts).collect();
    (0..=full.len())
        .rev()
        .map(|n| full[..n].join("::"))
        .find(|m| known.contains_key(m))
}

fn is_ancestor(a: &str, b: &str) -> bool {
    a.is_empty() || b.starts_with(&format!("{a}::"))
}

/// Arrows between files: module -> the modules it names, parent/child arrows left out.
fn arrows(known: &BTreeMap<String, PathBuf>) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, p) in known {
        for line in code(p).iter().filter(|l| !l.trim_start().starts_with("//")) {
            for path in paths_in(line) {
                let Some(t) = target(&path, m, known) else {
                    continue;
                };
                if t != *m && !is_ancestor(&t, m) && !is_ancestor(m, &t) {
                    out.entry(m.clone()).or_default().insert(t);
                }
            }
        }
    }
    out
}

/// Groups of modules that reach each other (Tarjan's strongly connected components), of two
/// or more.
fn circles(arrows: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        arrows: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a str) {
        let i = w.index.len();
        w.index.insert(v, i);
        w.low.insert(v, i);
        w.stack.push(v);
        for t in w.arrows.get(v).into_iter().flatten() {
            if !w.index.contains_key(t.as_str()) {
                visit(w, t);
                let l = w.low[t.as_str()].min(w.low[v]);
                w.low.insert(v, l);
            } else if w.stack.contains(&t.as_str()) {
                let l = w.index[t.as_str()].min(w.low[v]);
                w.low.insert(v, l);
            }
        }
        if w.low[v] == w.index[v] {
            let mut group = Vec::new();
            while let Some(x) = w.stack.pop() {
                group.push(x.to_string());
                if x == v {
                    break;
                }
            }
            if group.len() > 1 {
                w.found.push(group);
            }
        }
    }
    let mut w = Walk {
        arrows,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in arrows.keys() {
        if !w.index.contains_key(v.as_str()) {
            visit(&mut w, v);
        }
    }
    w.found
}

#[test]
fn the_path_reader_sees_through_braces_and_super() {
    assert_eq!(
        paths_in("use super::{a::B, c};"),
        ["super::a::B", "super::c"]
    );
    assert_eq!(
        paths_in("    x(crate::util::units::thousands(3), y)"),
        ["crate::util::units::thousands"]
    );
    let known: BTreeMap<String, PathBuf> = ["", "report", "report::chart", "run", "run::details"]
        .iter()
        .map(|m| (m.to_string(), PathBuf::new()))
        .collect();
    assert_eq!(
        target("super::chart::esc", "report::html", &known).as_deref(),
        Some("report::chart")
    );
    assert_eq!(
        target("super::run::details::Detail", "report", &known).as_deref(),
        Some("run::details")
    );
    assert_eq!(
        target("crate::run::results::Run", "report::html", &known).as_deref(),
        Some("run")
    );
}

#[test]
fn a_circle_is_found_and_a_parent_child_pair_is_not_one() {
    let arrows: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    let found = circles(&arrows);
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0].iter().collect::<BTreeSet<_>>(),
        ["a", "b", "c"]
            .iter()
            .map(|s| s.to_string())
            .collect::<BTreeSet<_>>()
            .iter()
            .collect()
    );
    assert!(is_ancestor("report", "report::html") && !is_ancestor("report", "reports::x"));
}

#[test]
fn no_import_circle_between_files_of_the_harness() {
    let known = modules();
    let arrows = arrows(&known);
    assert!(
        arrows.values().map(BTreeSet::len).sum::<usize>() > 50,
        "the reader found too few arrows to mean anything"
    );
    let found = circles(&arrows);
    assert!(
        found.is_empty(),
        "import circles (each group reaches itself): {found:?}"
    );
}

/// The folder (stage) a module belongs to: its first segment ("run" for "run::round"); lib.rs
/// and main.rs belong to none.
fn folder_of(module: &str) -> &str {
    module.split("::").next().unwrap_or("")
}

/// Files compiled for unit tests only (a `tests` module, or a `*_tests.rs` file included under
/// #[cfg(test)]): they may use any stage, as a test of util may start a process.
fn test_only(module: &str) -> bool {
    let last = module.rsplit("::").next().unwrap_or("");
    last == "tests" || last.ends_with("_tests")
}

/// Arrows between folders: folder -> the other folders its files use, each with one file
/// that does (for the message).
fn folder_arrows(known: &BTreeMap<String, PathBuf>) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (from, targets) in arrows(known) {
        if test_only(&from) {
            continue;
        }
        for to in targets {
            let (a, b) = (folder_of(&from), folder_of(&to));
            if !a.is_empty() && !b.is_empty() && a != b && known.contains_key(a) {
                out.entry(a.to_string())
                    .or_default()
                    .entry(b.to_string())
                    .or_insert_with(|| from.clone());
            }
        }
    }
    out
}

/// The folders a folder's mod.rs says it uses: the folder names on its `//! Uses` line.
fn declared_uses(known: &BTreeMap<String, PathBuf>, folder: &str) -> Option<BTreeSet<String>> {
    let text = std::fs::read_to_string(&known[folder]).unwrap();
    let mut lines = text.lines().skip_while(|l| !l.starts_with("//! Uses"));
    let first = lines.next()?;
    // The line may go on over the comment lines after it, up to the end of the doc comment.
    let mut words = first.to_string();
    for l in lines.take_while(|l| l.starts_with("//!") && !l.trim_end().ends_with("//!")) {
        words.push(' ');
        words.push_str(l);
    }
    let folders: BTreeSet<String> = words
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty() && *w != folder && known.contains_key(*w) && !w.contains("::"))
        .filter(|w| known[*w].ends_with("mod.rs"))
        .map(str::to_string)
        .collect();
    Some(folders)
}

/// Each folder's mod.rs names the folders its files use (`//! Uses: ...`), every file keeps to
/// them, and no folder reaches back to itself through others: the stages form one order.
#[test]
fn every_folder_uses_only_what_its_mod_rs_lists_and_no_folder_loops() {
    let known = modules();
    let used = folder_arrows(&known);
    assert!(
        used.values().map(BTreeMap::len).sum::<usize>() > 10,
        "the reader found too few arrows between folders to mean anything: {used:?}"
    );
    let mut wrong = Vec::new();
    for folder in known
        .iter()
        .filter(|(m, p)| !m.contains("::") && p.ends_with("mod.rs"))
        .map(|(m, _)| m.as_str())
    {
        let Some(declared) = declared_uses(&known, folder) else {
            wrong.push(format!("{folder}/mod.rs has no `//! Uses:` line"));
            continue;
        };
        for (to, by) in used.get(folder).into_iter().flatten() {
            if !declared.contains(to) {
                wrong.push(format!(
                    "{by} uses {to}, which {folder}/mod.rs does not list on its Uses line"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let arrows: BTreeMap<String, BTreeSet<String>> = used
        .iter()
        .map(|(f, to)| (f.clone(), to.keys().cloned().collect()))
        .collect();
    let loops = circles(&arrows);
    assert!(
        loops.is_empty(),
        "folders that reach each other (a loop in the stages' order): {loops:?}"
    );
}

#[test]
fn a_folder_loop_and_an_unlisted_use_are_found() {
    let arrows: BTreeMap<String, BTreeSet<String>> = [
        ("driver", &["util", "remote"][..]),
        ("remote", &["driver", "util"][..]),
        ("util", &[][..]),
    ]
    .iter()
    .map(|(f, to)| (f.to_string(), to.iter().map(|t| t.to_string()).collect()))
    .collect();
    let mut found = circles(&arrows);
    found.iter_mut().for_each(|g| g.sort());
    assert_eq!(found, [vec!["driver".to_string(), "remote".to_string()]]);
    assert_eq!(folder_of("run::round"), "run");
    assert!(test_only("util::cgroup_tests") && test_only("driver::remote::tests"));
    assert!(!test_only("run::test_support"));
    let known = modules();
    let run = declared_uses(&known, "run").expect("run/mod.rs has a Uses line");
    assert!(
        run.contains("services") && !run.contains("report"),
        "{run:?}"
    );
}

/// Function lengths: from a line that starts a `fn` to the closing brace at its indentation.
fn long_functions(lines: &[String]) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        let indent = &l[..l.len() - t.len()];
        let starts_fn = [
            "fn ",
            "pub fn ",
            "pub(crate) fn ",
            "pub(super) fn ",
            "async fn ",
            "pub async fn ",
            "const fn ",
            "pub const fn ",
        ]
        .iter()
        .any(|p| t.starts_with(p));
        if !starts_fn || l.trim_end().ends_with(';') {
            continue;
        }
        let close = format!("{indent}}}");
        let Some(end) = lines[i + 1..]
            .iter()
            .position(|x| x.starts_with(&close) && x[indent.len()..].starts_with('}'))
        else {
            continue;
        };
        let len = end + 2;
        if len > FUNCTION_LIMIT {
            let name = t
                .split("fn ")
                .nth(1)
                .unwrap_or("")
                .split(['(', '<'])
                .next()
                .unwrap_or("")
                .to_string();
            out.push((name, len));
        }
    }
    out
}

#[test]
fn the_length_reader_measures_a_function_to_its_closing_brace() {
    let body: Vec<String> = std::iter::once("    pub fn long(x: u32) -> u32 {".to_string())
        .chain((0..FUNCTION_LIMIT).map(|_| "        x += 1;".to_string()))
        .chain(["    }".to_string(), "fn short() {}".to_string()])
        .collect();
    assert_eq!(
        long_functions(&body),
        [("long".to_string(), FUNCTION_LIMIT + 2)]
    );
}

#[test]
fn no_file_over_500_lines_and_no_function_over_80() {
    let mut big = Vec::new();
    let mut long = Vec::new();
    // A file of unit tests (`plan/tests.rs`) is a unit-test module too: not counted.
    for (_, p) in modules().iter().filter(|(m, _)| !test_only(m)) {
        let lines = code(p);
        let name = p
            .strip_prefix(common::repo_root().join("harness/src"))
            .unwrap()
            .display()
            .to_string();
        if lines.len() > FILE_LIMIT {
            big.push(format!("{name} ({} lines)", lines.len()));
        }
        long.extend(
            long_functions(&lines)
                .into_iter()
                .map(|(f, n)| format!("{name}: {f} ({n} lines)")),
        );
    }
    assert!(
        big.is_empty() && long.is_empty(),
        "split these:\n  files: {big:?}\n  functions: {long:?}"
    );
}

/// The stages in the order lib.rs lists them (the first word of each line of its `text`
/// block), and the same order in CONTRIBUTING.md's list (each folder name with a slash).
fn stage_order() -> (Vec<String>, Vec<String>) {
    let root = common::repo_root();
    let lib = std::fs::read_to_string(root.join("harness/src/lib.rs")).unwrap();
    let listed: Vec<String> = lib
        .lines()
        .skip_while(|l| !l.starts_with("//! ```text"))
        .skip(1)
        .take_while(|l| !l.starts_with("//! ```"))
        .filter_map(|l| l.strip_prefix("//! "))
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    let guide = std::fs::read_to_string(root.join("CONTRIBUTING.md")).unwrap();
    let start = guide
        .find("`//! Uses:` line, which folders it may use:")
        .unwrap();
    let contributing: Vec<String> = guide[start..]
        .lines()
        .skip_while(|l| !l.starts_with("```"))
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|w| w.strip_suffix('/').map(str::to_string))
        .collect();
    (listed, contributing)
}

/// lib.rs names every stage in one order, CONTRIBUTING.md lists the same, and every arrow
/// between folders goes to a stage listed earlier: a stage never uses one after it.
#[test]
fn every_stage_uses_only_stages_before_it_in_the_order_lib_rs_names() {
    let known = modules();
    let (order, contributing) = stage_order();
    let folders: BTreeSet<String> = known
        .iter()
        .filter(|(m, p)| !m.contains("::") && p.ends_with("mod.rs"))
        .map(|(m, _)| m.clone())
        .collect();
    assert_eq!(
        order.iter().cloned().collect::<BTreeSet<_>>(),
        folders,
        "lib.rs's list of stages and the folders of harness/src differ"
    );
    assert_eq!(
        contributing, order,
        "CONTRIBUTING.md lists the stages in another order than lib.rs"
    );
    let rank = |f: &str| order.iter().position(|o| o == f).unwrap();
    let mut upward = Vec::new();
    for (from, to) in folder_arrows(&known) {
        for (target, by) in to {
            if rank(&target) > rank(&from) {
                upward.push(format!("{by} uses {target}, a stage after {from}"));
            }
        }
    }
    assert!(upward.is_empty(), "{}", upward.join("\n"));
}
