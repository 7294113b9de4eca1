//! Every page a reader meets (README.md, CONTRIBUTING.md, docs/) is what its committed results
//! print: each table marked `<!-- iobound table docs/results/NAME -->` (a code block follows)
//! or `<!-- iobound table --markdown docs/results/NAME -->` (up to `<!-- /iobound table -->`),
//! and each figure in prose marked `<!-- = docs/results/NAME QUERY -->VALUE<!-- /= -->`, is
//! rendered again in-process and must match character for character; and the pages that no
//! longer carry a first-look banner hold no measured figure outside a marker.

use iobound::pages::lint::{typed_verdict_words, unmarked_figures};
use iobound::pages::render::{reader_pages, render};
use std::path::Path;

use crate::common;

fn pages(root: &Path) -> Vec<std::path::PathBuf> {
    reader_pages(root).unwrap()
}

#[test]
fn readme_and_docs_tables_and_figures_are_printed_by_their_committed_results() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let (mut tables, mut figures) = (0, 0);
    for page in pages(root) {
        let text = std::fs::read_to_string(&page).unwrap();
        tables += text.matches("<!-- iobound table ").count();
        figures += text.matches("<!-- = ").count();
        let written = render(&text, root).unwrap_or_else(|e| panic!("{}: {e:#}", page.display()));
        if written != text {
            let line = written
                .lines()
                .zip(text.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(written.lines().count().min(text.lines().count()));
            panic!(
                "{}: line {} differs from what its results print:\n  page:    {:?}\n  printed: {:?}\nrun `./iobound render`",
                page.display(),
                line + 1,
                text.lines().nth(line),
                written.lines().nth(line)
            );
        }
    }
    assert!(
        tables >= 10,
        "only {tables} tables are marked with their results"
    );
    assert!(
        figures >= 10,
        "only {figures} prose figures are marked with their results"
    );
}

/// The banner a findings page measured before steady state carries until it is re-measured.
const FIRST_LOOK: &str = "> **Measured before steady state.**";

/// Constants of the method and settings, not measurements: the equivalence margin, a few
/// settings written into docs/hosts.md's prose, and what method.md's and guide.md's tests
/// assert.
const NOT_MEASURED: &[&str] = &[
    "within 5%",
    "margin of 5%",
    "5% margin",
    "equivalence margin (5%)",
    // docs/hosts.md: how far ahead a common start is sent, the broker's heap, a search's precision.
    "at least 0.3 s",
    "512 MB heap",
    "its 10% precision",
    // docs/method.md: the inputs and bounds of the unit tests and driver checks it describes,
    // each what a test asserts (stats/sequential.rs, sampler, tests/it/driver.rs).
    "a climb of 2% a step",
    "asserts above 10% in",
    "a 20% throughput difference with 5% run-to-run noise is found in at least 99% of series",
    "with 10% noise in at least 80%",
    "costs under 1% of a",
    "within 10% of wrk's",
    "open model at 1,000 and 10,000 req/s",
    "at least 99% of the requests due",
    "asked for 2,000,000 req/s",
    "between 900 and 1,010 req/s",
    // docs/guide.md: the intervals' level, a unit test's power bound, --fail-if's examples.
    "its 95% interval",
    "within-run 95% interval",
    "finds a 20% throughput difference at 5% run-to-run noise in more than 80% of trials",
    "of p99 by more than 10%",
    "on a fall by more than 5%",
];

/// A measured figure typed into prose drifts from the runs it quotes: on every page a reader
/// meets (README.md, CONTRIBUTING.md, docs/) but those with the first-look banner, each one is
/// a marker rendered from committed results. A new page is checked from its first commit.
#[test]
fn no_measured_figure_is_typed_outside_a_marker() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let (mut checked, mut first_looks) = (Vec::new(), Vec::new());
    let mut typed = Vec::new();
    for page in pages(root) {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(root).unwrap().display().to_string();
        if text.contains(FIRST_LOOK) {
            first_looks.push(name);
            continue;
        }
        for (line, figure) in unmarked_figures(&text, NOT_MEASURED) {
            typed.push(format!("{name}:{line}: {figure}"));
        }
        checked.push(name);
    }
    // Only findings pages may wait for a re-measurement behind the banner.
    assert!(
        first_looks.iter().all(|p| p.starts_with("docs/findings/")),
        "{first_looks:?}"
    );
    for page in [
        "README.md",
        "CONTRIBUTING.md",
        "docs/method.md",
        "docs/guide.md",
    ] {
        assert!(
            checked.iter().any(|p| p == page),
            "{page} not checked: {checked:?}"
        );
    }
    assert!(
        typed.is_empty(),
        "measured figures outside a marker (use `<!-- = docs/results/NAME QUERY -->`):\n{}",
        typed.join("\n")
    );
}

/// A verdict's outcome typed beside its figure says what the results said when it was typed:
/// on every page a reader meets (first looks included: their verdicts are stored too), each
/// "tested", "different", "equivalent" or "undecided" in a sentence with a verdict's figure
/// is the rendered outcome.
#[test]
fn no_verdict_word_is_typed_beside_a_verdicts_figure() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut typed = Vec::new();
    let mut pages_with_verdicts = 0;
    for page in pages(root) {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(root).unwrap().display().to_string();
        pages_with_verdicts += usize::from(text.contains(" verdict "));
        for (line, word) in typed_verdict_words(&text) {
            typed.push(format!("{name}:{line}: {word}"));
        }
    }
    assert!(pages_with_verdicts >= 10, "{pages_with_verdicts}");
    assert!(
        typed.is_empty(),
        "verdict words typed beside a verdict's figure (render the outcome: \
         `<!-- = docs/results/NAME verdict SCENARIO METRIC outcome B/A -->`):\n{}",
        typed.join("\n")
    );
}

/// Every relative link in README and docs points at a file or folder of this repository: a
/// reader who clones it can follow each one (none leads outside it, none is broken).
#[test]
fn every_link_in_the_docs_resolves_inside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let root = root.canonicalize().unwrap();
    let mut bad = Vec::new();
    for page in pages(&root) {
        let text = std::fs::read_to_string(&page).unwrap();
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = rest[..end].split('#').next().unwrap();
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let resolved = page.parent().unwrap().join(target);
            match resolved.canonicalize() {
                Ok(p) if p.starts_with(&root) => {}
                _ => bad.push(format!("{}: {target}", page.display())),
            }
        }
    }
    assert!(
        bad.is_empty(),
        "links that do not resolve inside the repository:\n{}",
        bad.join("\n")
    );
}

/// No file of the repository cites a path outside it (a user cloning it could not follow it).
#[test]
fn no_tracked_file_points_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let files = std::process::Command::new("git")
        .args(["ls-files"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(files.status.success(), "git ls-files failed");
    // Spelled in pieces so that this file does not match itself.
    let needles = [
        format!("../{}/", "shared"),
        format!("{}/DEPENDENCIES", "shared"),
        format!("/work/{}", "shared"),
    ];
    let mut bad = Vec::new();
    for f in String::from_utf8_lossy(&files.stdout).lines() {
        if f.starts_with("docs/results/") || f.ends_with(".png") || f.ends_with(".ttf") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root.join(f)) else {
            continue;
        };
        for needle in &needles {
            if text.contains(needle.as_str()) {
                bad.push(format!("{f}: {needle}"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "paths outside the repository:\n{}",
        bad.join("\n")
    );
}

/// The README's words around the demo's rendered figures: "the event loop wins outright" on
/// the 100 ms wait (throughput higher and p99 lower, both tested), "this sitting answered
/// nothing" on /plaintext (every question stopped before a first look, runs left out for a
/// window that moved). The figures themselves are markers, rendered and checked by the test
/// above.
#[test]
fn demo_prose_says_what_its_verdicts_decided() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let r = iobound::results::record::Results::load(
        &root.join("docs/results/demo-2026-12-07/results.json"),
    )
    .unwrap();
    let verdict = |scenario: &str| r.verdicts.iter().find(|v| v.scenario == scenario).unwrap();
    let finding = |scenario: &str, metric: &str| {
        (verdict(scenario).findings.iter())
            .find(|f| f.metric == metric)
            .unwrap()
            .clone()
    };
    let (thr, p99) = (
        finding("delay-100ms", "throughput"),
        finding("delay-100ms", "p99_all"),
    );
    assert_eq!(
        (thr.outcome.as_str(), p99.outcome.as_str()),
        ("different", "different")
    );
    assert!(thr.ratio.unwrap() > 1.0 && p99.ratio.unwrap() < 1.0);
    assert!(readme.contains("the event loop wins outright"));
    assert!(readme.contains("verdict delay-100ms throughput ratio"));
    // CPU per request: one run short of a first look when the budget ended.
    let cpu = finding("delay-100ms", "cpu");
    assert_eq!(cpu.outcome, "not tested");
    assert_eq!(cpu.futility.as_ref().map(|f| f.rounds_left), Some(0));
    assert!(readme.contains("one short of a first verdict"));
    // /plaintext: every question stopped, and the case left the rounds.
    let plain = verdict("plaintext");
    assert!(plain.left_after_round.is_some());
    assert!(plain
        .findings
        .iter()
        .all(|f| !f.decided() && f.futility.is_some()));
    assert!(readme.contains("this sitting answered nothing"));
    let left_out = r
        .runs
        .iter()
        .filter(|x| x.scenario == "plaintext" && x.warmup.as_ref().unwrap().unsettled())
        .count();
    assert!(left_out > 0 && readme.contains("unsettled plaintext"));
}

/// docs/method.md: "the demo's earlier references ... They agreed on the 100 ms wait (4.91 to
/// 4.92x ...), while on /plaintext they left throughput undecided once and decided the tail in
/// opposite directions twice". Earlier: "the demo ran twice with ... four event loops ... The two agreed on every
/// verdict both decided, and on the 100 ms wait with the run above (4.91 to 4.92x the
/// throughput in all three); but on /plaintext they decided the opposite tail": the three committed demo results.
#[test]
fn two_demo_runs_agree_on_every_verdict_both_decided() {
    use iobound::results::record::Results;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let load =
        |d: &str| Results::load(&root.join(format!("docs/results/{d}/results.json"))).unwrap();
    let (first, second, one_loop) = (
        load("demo-2026-11-24"),
        load("demo-2026-11-24-rerun"),
        load("demo-2026-11-24-one-loop"),
    );
    let decided = |r: &Results| -> Vec<(String, String, String, bool)> {
        r.verdicts
            .iter()
            .flat_map(|v| {
                v.findings
                    .iter()
                    .filter(|f| f.outcome == "different")
                    .map(|f| {
                        (
                            v.scenario.clone(),
                            f.metric.clone(),
                            f.outcome.clone(),
                            f.ratio.unwrap() > 1.0,
                        )
                    })
            })
            .collect()
    };
    let (a, b) = (decided(&first), decided(&second));
    assert_eq!(b.len(), 6, "the rerun decided all six: {b:?}");
    let mut both = 0;
    for x in &a {
        let same = b
            .iter()
            .find(|y| (&y.0, &y.1) == (&x.0, &x.1))
            .expect("decided in both");
        assert_eq!(x, same, "the same answer, the same direction");
        both += 1;
    }
    assert_eq!(both, 4, "the first run decided four of the six");
    // The first left plaintext throughput undecided.
    let open = first.verdicts[0]
        .findings
        .iter()
        .find(|f| f.metric == "throughput")
        .unwrap();
    assert_eq!(open.outcome, "undecided");
    // 4.91 to 4.92x on the 100 ms wait in all three.
    let ratios: Vec<String> = [&first, &second, &one_loop]
        .iter()
        .map(|r| {
            let v = r
                .verdicts
                .iter()
                .find(|v| v.scenario == "delay-100ms")
                .unwrap();
            let thr = v
                .findings
                .iter()
                .find(|f| f.metric == "throughput")
                .unwrap();
            format!("{:.2}", thr.ratio.unwrap())
        })
        .collect();
    assert_eq!(ratios, ["4.92", "4.91", "4.92"]);
    // The opposite plaintext tail: WebFlux higher with four loops, lower with one.
    let tail = |r: &Results| {
        r.verdicts[0]
            .findings
            .iter()
            .find(|f| f.metric == "p99_all")
            .map(|f| (f.outcome.clone(), f.ratio.unwrap() > 1.0))
            .unwrap()
    };
    assert_eq!(tail(&first), ("different".to_string(), true));
    assert_eq!(tail(&second), ("different".to_string(), true));
    assert_eq!(tail(&one_loop), ("different".to_string(), false));
}

/// The prose of the CRUD confirmation in docs/findings/all-models.md, figure by figure, from
/// its committed results (and the screening's figures it contrasts them with).
#[test]
fn the_crud_confirmation_figures_match_their_results() {
    use iobound::results::record::Results;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let page = std::fs::read_to_string(root.join("docs/findings/all-models.md")).unwrap();
    let dir = root.join("docs/results/all-models-confirm-crud-2026-11-24");
    let r = Results::load(&dir.join("results.json")).unwrap();
    let finding = |metric: &str, a: &str, b: &str| finding_of(&r, metric, a, b);
    let (re, wo, vi) = ("quarkus-reactive", "quarkus-worker", "quarkus-virtual");
    // Throughput undecided everywhere, with these ratios; each interval straddles 1.
    for (a, b, ratio) in [(re, wo, "0.93"), (re, vi, "0.94"), (wo, vi, "1.01")] {
        let f = finding("throughput", a, b);
        assert_eq!(f.outcome, "undecided");
        assert_eq!(f.runs, 8);
        assert_eq!(format!("{:.2}", f.ratio.unwrap()), ratio);
        assert!(f.ratio_lo.unwrap() < 1.0 && f.ratio_hi.unwrap() > 1.0);
    }
    // CPU per request and the tail.
    for (metric, a, b, outcome, pct) in [
        ("cpu", re, wo, "different", "+49"),
        ("cpu", re, vi, "different", "+46"),
        ("p99_all", re, wo, "different", "+34"),
        ("p99_all", wo, vi, "different", "-20"),
        ("p99_all", re, vi, "undecided", "+9"),
    ] {
        let f = finding(metric, a, b);
        assert_eq!(f.outcome, outcome, "{metric} {a} {b}");
        assert_eq!(
            format!("{:+.0}", (f.ratio.unwrap() - 1.0) * 100.0),
            pct,
            "{metric} {a} {b}"
        );
    }
    let f = finding("p99_all", re, vi);
    assert_eq!(
        format!(
            "{:.2}, interval {:.2}..{:.2}",
            f.ratio.unwrap(),
            f.ratio_lo.unwrap(),
            f.ratio_hi.unwrap()
        ),
        "1.09, interval 0.97..1.24"
    );
    let cell = |c: &str| {
        iobound::stats::cell(
            iobound::results::dir::ResultsDir::new(&r, &dir),
            "crud-200",
            c,
        )
        .unwrap()
    };
    // The outcomes beside the marked figures are the stored findings', rendered.
    for (metric, pair, outcome) in [
        ("throughput", "quarkus-worker/quarkus-reactive", "undecided"),
        ("cpu", "quarkus-virtual/quarkus-reactive", "different"),
        ("p99_all", "quarkus-virtual/quarkus-reactive", "undecided"),
    ] {
        let marker = format!("crud-200 {metric} outcome {pair} -->{outcome}<!-- /= -->");
        assert!(page.contains(&marker), "{marker}");
    }
    let (cr, cw, cv) = (cell(re), cell(wo), cell(vi));
    assert_eq!(format!("{:.1}", cr.of("cpu").value), "24.3");
    for c in [&cr, &cw, &cv] {
        assert!(
            (27_000.0..30_000.0).contains(&c.of("throughput").value),
            "{}",
            c.of("throughput").value
        );
    }
    // The page quotes the driver's own saturation flag: every run of the three.
    assert!(r.runs.iter().all(|run| run.driver.saturated));
    // "the worker pool needed 40 s to settle (median of its 8 runs), against 20 and 22 s".
    let settle = |c: &str| median_settle_s(&r, c);
    assert_eq!((settle(wo), settle(vi), settle(re)), (40.0, 20.0, 22.0));
    // "23 minutes of runs".
    let took = common::minutes_of_runs(&r);
    assert_eq!(took.round(), 23.0);
    // The screening's figures the prose contrasts them with.
    let rps = |c: &str| screening_crud_rps(root, c).round();
    assert_eq!((rps(re), rps(wo), rps(vi)), (12_319.0, 6_060.0, 14_782.0));
}

/// The prose of the C10K confirmation (docs/findings/all-models.md and its summary at the top),
/// figure by figure, from its committed results.
#[test]
fn the_c10k_confirmation_figures_match_their_results() {
    use iobound::results::record::Results;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let page = std::fs::read_to_string(root.join("docs/findings/all-models.md")).unwrap();
    let dir = root.join("docs/results/all-models-confirm-c10k-2026-11-24");
    let r = Results::load(&dir.join("results.json")).unwrap();
    let finding = |metric: &str, a: &str, b: &str| finding_of(&r, metric, a, b);
    let pct =
        |f: &iobound::results::record::Finding| format!("{:+.0}", (f.ratio.unwrap() - 1.0) * 100.0);
    let (node, go, rust, qv, ktor) = ("node-cluster", "go", "rust-axum", "quarkus-virtual", "ktor");
    assert!(r.verdicts[0].findings.iter().all(|f| f.runs == 8));
    assert_eq!(finding("throughput", node, go).outcome, "equivalent");
    assert_eq!(finding("throughput", node, rust).outcome, "equivalent");
    // Judged again by today's rules (report --rejudge): inside the 5% margin, equivalent.
    assert!(r.rejudged_at.is_some());
    let f = finding("throughput", go, rust);
    assert_eq!((f.outcome.as_str(), pct(&f).as_str()), ("equivalent", "+1"));
    assert!(finding("p99_all", node, rust).driver_limited);
    for b in [node, go, rust] {
        let (a, b) = if b == node { (node, qv) } else { (b, qv) };
        assert_eq!(finding("throughput", a, b).outcome, "undecided", "{a} {b}");
    }
    let f = finding("throughput", node, ktor);
    assert_eq!((f.outcome.as_str(), pct(&f).as_str()), ("different", "-5"));
    for (metric, a, b, want) in [
        ("cpu", node, rust, "-45"),
        ("cpu", go, rust, "-46"),
        ("cpu", node, qv, "+13"),
        ("cpu", node, ktor, "+28"),
        ("p99_all", node, rust, "+13"),
    ] {
        let f = finding(metric, a, b);
        assert_eq!(
            (f.outcome.as_str(), pct(&f).as_str()),
            ("different", want),
            "{metric} {a} {b}"
        );
    }
    let rust_cpu = iobound::stats::cell(
        iobound::results::dir::ResultsDir::new(&r, &dir),
        "c10k-delay-1s",
        rust,
    )
    .unwrap();
    assert_eq!(format!("{:.1}", rust_cpu.of("cpu").value), "13.8");
    // Rust's p99 is stored as tested, but the driver was saturated in every Rust run and in no
    // Node run: the page calls it driver-limited, as the stored finding does.
    let saturated = |c: &str| -> Vec<bool> {
        r.runs
            .iter()
            .filter(|x| x.contender == c)
            .map(|x| x.driver.saturated)
            .collect()
    };
    assert_eq!(saturated(rust), [true; 8]);
    assert_eq!(saturated(node), [false; 8]);
    assert!(page.contains("so the figure is driver-limited"));
    // Rust over Go: its interval lies inside the 5% margin.
    let f = finding("throughput", go, rust);
    assert!(
        f.ratio_lo.unwrap() > 0.95 && f.ratio_hi.unwrap() < 1.05,
        "{f:?}"
    );
    assert!(page.contains(
        "c10k-delay-1s throughput outcome rust-axum/go -->equivalent<!-- /= --> within 5% by today's rule"
    ));
    // "settled within 11 to 19 s (medians)".
    let settle = |c: &str| median_settle_s(&r, c);
    let s: Vec<f64> = [node, go, rust, qv, ktor]
        .iter()
        .map(|c| settle(c))
        .collect();
    let (lo, hi) = s
        .iter()
        .fold((f64::MAX, 0.0f64), |(l, h), x| (l.min(*x), h.max(*x)));
    assert_eq!((lo, hi), (11.0, 19.0), "{s:?}");
    // "29 minutes of runs", in both places.
    let took = common::minutes_of_runs(&r);
    assert_eq!(took.floor(), 29.0, "{took}");
}

/// The measured example of docs/hosts.md: what its prose says without a figure (every request
/// accounted on each host and in the merge, the clocks agreed, the server sampled in its own
/// namespace), from the committed results; its figures are markers.
#[test]
fn the_hosts_example_figures_match_their_results() {
    use iobound::results::record::Results;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let page = std::fs::read_to_string(root.join("docs/hosts.md")).unwrap();
    let dir = root.join("docs/results/hosts-netns-2026-11-24");
    let r = Results::load(&dir.join("results.json")).unwrap();
    assert_eq!(r.runs.len(), 3);
    for run in &r.runs {
        let s = &run.summary;
        assert_eq!(s.ok + s.drained + s.errors.total() + s.errors.cut, s.due);
        assert_eq!(run.load_hosts.len(), 2);
        assert_eq!(run.load_hosts.iter().map(|h| h.due).sum::<u64>(), s.due);
        assert!(run
            .load_hosts
            .iter()
            .all(|h| h.ok + h.errors == h.due && h.load == "32 users"));
    }
    assert!(r
        .environment
        .remote_hosts
        .iter()
        .all(|h| h.clock_offset_ms.abs() <= 0.01));
    assert!(page.contains("their clocks agreed to within a hundredth of a millisecond"));
    // Sampled in the contender's namespace, where iobound started the server.
    let app = r
        .environment
        .remote_hosts
        .iter()
        .find(|h| h.role == "contender")
        .unwrap();
    assert!(app.net_namespace.as_deref().unwrap().starts_with("net:["));
    assert_eq!(app.cpus, vec![0]);
}

/// The first scenario's finding on `metric` between `a` (the baseline) and `b`.
fn finding_of(
    r: &iobound::results::record::Results,
    metric: &str,
    a: &str,
    b: &str,
) -> iobound::results::record::Finding {
    r.verdicts[0]
        .findings
        .iter()
        .find(|f| f.metric == metric && f.a == a && f.b == b)
        .unwrap_or_else(|| panic!("{metric} {a} {b}"))
        .clone()
}

/// A contender's time to steady state over its runs (median, whole seconds).
fn median_settle_s(r: &iobound::results::record::Results, contender: &str) -> f64 {
    let v: Vec<f64> = r
        .runs
        .iter()
        .filter(|x| x.contender == contender)
        .map(|x| x.warmup.as_ref().unwrap().seconds)
        .collect();
    iobound::util::numbers::median(v).round()
}

/// A contender's CRUD throughput in the one-run all-models screening (2026-11-23).
fn screening_crud_rps(root: &Path, contender: &str) -> f64 {
    let screening = iobound::results::record::Results::load(
        &root.join("docs/results/all-models-2026-11-23/results.json"),
    )
    .unwrap();
    screening
        .runs
        .iter()
        .find(|x| x.contender == contender && x.scenario == "crud-200")
        .unwrap()
        .summary
        .rps
}

/// The measured example of the built-in contenders across hosts in docs/hosts.md: what its
/// prose says without a figure (hosts, roles, the contract checked there, every request
/// accounted) and the arithmetic it shows; its figures are markers.
#[test]
fn the_built_in_contenders_across_hosts_figures_match_their_results() {
    use iobound::results::record::Results;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let page = std::fs::read_to_string(root.join("docs/hosts.md"))
        .unwrap()
        .replace('\n', " ");
    let dir = root.join("docs/results/hosts-netns-builtin-2026-11-25");
    let r = Results::load(&dir.join("results.json")).unwrap();
    assert_eq!(r.runs.len(), 6);
    for run in &r.runs {
        let s = &run.summary;
        assert_eq!(s.ok + s.drained + s.errors.total() + s.errors.cut, s.due);
        assert_eq!(run.load_hosts.iter().map(|h| h.due).sum::<u64>(), s.due);
        assert!(run.load_hosts.iter().all(|h| h.load == "100 users"));
    }
    let roles: Vec<(&str, &str)> = r
        .environment
        .remote_hosts
        .iter()
        .map(|h| (h.name.as_str(), h.role.as_str()))
        .collect();
    assert_eq!(
        roles,
        [
            ("lg1", "load"),
            ("lg2", "load"),
            ("app", "contender"),
            ("db", "services")
        ]
    );
    for c in &r.contenders {
        let v = c.verification.as_ref().unwrap();
        assert!(v.passed && v.cases.len() == 51, "{}", c.name);
        assert!(c.command.iter().any(|a| a.contains("10.231.7.10")));
    }
    assert!(page.contains("checked against the contract there (51 cases;"));
    let fig = |c: &str| {
        iobound::stats::cell(
            iobound::results::dir::ResultsDir::new(&r, &dir),
            "enrich-200",
            c,
        )
        .unwrap()
    };
    let p50 = fig("go").of("p50").value;
    assert_eq!(format!("{p50:.1}"), "101.6");
    assert_eq!(((200.0 / (p50 / 1000.0)) / 10.0).round() * 10.0, 1_970.0);
    assert!(page.contains("200 / 0.1016 s is about 1,970 a second"));
}

/// The measured example of the pipelines across hosts in docs/hosts.md: what its prose says
/// without a figure (every record delivered, each host's share, where each part ran); its
/// figures are markers.
#[test]
fn the_pipelines_across_hosts_figures_match_their_results() {
    use iobound::results::record::Results;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let page = std::fs::read_to_string(root.join("docs/hosts.md"))
        .unwrap()
        .replace('\n', " ");
    let dir = root.join("docs/results/hosts-netns-pipeline-2026-11-25");
    let r = Results::load(&dir.join("results.json")).unwrap();
    assert_eq!(r.runs.len(), 9);
    for run in &r.runs {
        let s = &run.summary;
        assert_eq!(s.ok + s.drained + s.errors.total() + s.errors.cut, s.due);
        assert_eq!(s.due, 20_000);
        let d = run.details.delivery().unwrap();
        assert_eq!((d.sent, d.received, d.lost), (20_000, 20_000, 0));
        assert_eq!(run.load_hosts.iter().map(|h| h.due).sum::<u64>(), s.due);
        for h in &run.load_hosts {
            assert_eq!(
                (h.due, h.ok, h.load.as_str()),
                (10_000, 10_000, "500 records/s")
            );
        }
    }
    assert!(page.contains(
        "Every run delivered all of its 20,000 records (none lost; each host's 10,000 found"
    ));
    let hosts: Vec<(&str, &str, Vec<usize>)> = r
        .environment
        .remote_hosts
        .iter()
        .map(|h| (h.name.as_str(), h.role.as_str(), h.cpus.clone()))
        .collect();
    assert_eq!(
        hosts,
        [
            ("lg1", "load", vec![1]),
            ("lg2", "load", vec![1]),
            ("app", "contender", vec![0]),
            ("db", "services", vec![1])
        ]
    );
    assert!(r.environment.kafka.contains("on services host db"));
    for c in &r.contenders {
        let v = c.verification.as_ref().unwrap();
        assert!(v.passed && v.cases.len() == 2, "{}", c.name);
    }
    assert!(page.contains("Three runs are too few to test a difference"));
}

/// `iobound plans` lists every plan with its last committed measurement, the machine time it
/// took and the pages quoting it: what a sitting of re-measurement needs to be planned.
#[test]
fn every_plan_is_listed_with_its_last_measurement_and_its_pages() {
    let out = common::run(&["plans"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let plans = std::fs::read_dir(root.join("plans")).unwrap().count();
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("plans/")).collect();
    assert_eq!(lines.len(), plans, "{text}");
    // C10K: measured in two sittings on 2026-11-25, quoted by its page and all-models.md.
    let c10k = lines
        .iter()
        .find(|l| l.starts_with("plans/c10k.toml "))
        .unwrap();
    let words: Vec<&str> = c10k.split_whitespace().collect();
    assert_eq!(&words[1..2], ["2026-11-25"], "{c10k}");
    let minutes: f64 = words[2].parse().unwrap();
    // 64 minutes from first start to end, a pause of about 17 between the sittings.
    assert!((40.0..=55.0).contains(&minutes), "{c10k}");
    // Replayed through today's stopping rules: never more than it took; rounds measured->kept.
    let replayed: f64 = words[3].parse().unwrap();
    assert!(replayed <= minutes, "{c10k}");
    assert_eq!(words[4], "5->5", "{c10k}");
    assert_eq!(words[5], "2", "{c10k}");
    assert!(
        c10k.contains("docs/results/c10k-2026-11-25: ") && c10k.contains("docs/findings/c10k.md"),
        "{c10k}"
    );
    assert!(text.contains("minutes: machine time"), "{text}");
    // The demo's last sitting ran with today's stopping rules: replayed, it takes what it took,
    // its 5 rounds, and each scenario's last round is listed.
    let demo = lines
        .iter()
        .find(|l| l.starts_with("plans/demo.toml "))
        .unwrap();
    let words: Vec<&str> = demo.split_whitespace().collect();
    let (took, replayed): (f64, f64) = (words[2].parse().unwrap(), words[3].parse().unwrap());
    assert!(replayed <= took && words[4] == "5->5", "{demo}");
    let rounds = common::run(&["plans", "--rounds"]);
    let rounds = String::from_utf8_lossy(&rounds.stdout);
    assert!(rounds.contains("  delay-100ms: round 5, "), "{rounds}");
}

/// The fields of `struct Manifest` in `src` that a manifest may set (`#[serde(skip)]` ones,
/// which the loader fills, left out).
fn manifest_fields(src: &str) -> Vec<String> {
    let body = &src[src.find("pub struct Manifest {").expect("struct Manifest")..];
    let body = &body[..body.find("\n}\n").expect("the struct's end")];
    let mut fields = Vec::new();
    let mut skipped = false;
    for line in body.lines().map(str::trim) {
        if line.starts_with("#[serde(skip)]") {
            skipped = true;
        } else if let Some(rest) = line.strip_prefix("pub ") {
            if let Some((name, _)) = rest.split_once(':') {
                if !skipped {
                    fields.push(name.to_string());
                }
                skipped = false;
            }
        }
    }
    fields
}

#[test]
fn the_field_reader_leaves_out_what_the_loader_fills() {
    let src = "pub struct Manifest {\n    pub name: String,\n    /// doc\n    #[serde(default)]\n    pub kind: Option<String>,\n    #[serde(skip)]\n    pub dir: PathBuf,\n    pub ready: String,\n}\n";
    assert_eq!(manifest_fields(src), ["name", "kind", "ready"]);
}

/// CONTRIBUTING.md's step "add a contender" names every field a manifest may set, so that a
/// field added to the loader cannot go unexplained there.
#[test]
fn contributing_names_every_manifest_field() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let src = std::fs::read_to_string(root.join("harness/src/services/manifest.rs")).unwrap();
    let guide = std::fs::read_to_string(root.join("CONTRIBUTING.md")).unwrap();
    let fields = manifest_fields(&src);
    assert!(fields.len() >= 10, "{fields:?}");
    let missing: Vec<&String> = fields
        .iter()
        .filter(|f| !guide.contains(&format!("`{f}")) && !guide.contains(&format!("`[{f}")))
        .collect();
    assert!(
        missing.is_empty(),
        "CONTRIBUTING.md does not name the manifest field(s) {missing:?}"
    );
}
