//! Every table in README.md, CONTRIBUTING.md and docs/ (findings, method, guide) marked `<!-- iobound table docs/results/NAME -->` (a code block follows:
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

/// The Markdown pages a reader meets: README.md, CONTRIBUTING.md and every page under docs/.
pub fn pages(root: &Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() && p.file_name().is_some_and(|n| n != "results") {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn readme_and_docs_tables_are_printed_by_their_committed_results() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut checked = 0;
    for page in pages(root) {
        checked += check_page(root, &page);
    }
    assert!(
        checked >= 10,
        "only {checked} tables in README and docs are marked with their results"
    );
}

/// Checks every marked table of one page; returns how many there were.
fn check_page(root: &Path, page: &Path) -> usize {
    let readme = std::fs::read_to_string(page).unwrap();
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
            panic!("{}: table of {dir} differs from what its results print, first at line {}:\n  README:  {:?}\n  printed: {:?}\nrun `{cmd}` and paste its output", page.display(), line + 1, block.lines().nth(line), printed.lines().nth(line));
        }
        checked += 1;
    }
    checked
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

/// The figures the README's prose gives for the demo, checked against its committed results
/// (the table above them is re-rendered by the test before).
#[test]
fn demo_prose_figures_match_the_committed_results() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let dir = root.join("docs/results/demo-2026-11-24");
    let r = iobound::run::results::Results::load(&dir.join("results.json")).unwrap();
    let runs = |c: &str, s: &str| -> Vec<&iobound::run::results::Run> {
        r.runs
            .iter()
            .filter(|x| x.contender == c && x.scenario == s)
            .collect()
    };
    // "WebFlux answered more in every one of the five rounds" (plaintext).
    let (mvc, flux) = (
        runs("spring-mvc", "plaintext"),
        runs("spring-webflux", "plaintext"),
    );
    assert_eq!((mvc.len(), flux.len()), (5, 5));
    assert!(mvc
        .iter()
        .zip(&flux)
        .all(|(m, f)| m.run == f.run && f.summary.rps > m.summary.rps));
    assert!(readme.contains("WebFlux answered more in every one of the five rounds"));
    // "both JVMs need 24 to 38 s on one CPU" (plaintext warm-ups).
    let settle: Vec<f64> = mvc
        .iter()
        .chain(&flux)
        .map(|x| x.warmup.as_ref().unwrap().seconds)
        .collect();
    let (lo, hi) = settle
        .iter()
        .fold((f64::MAX, 0.0f64), |(l, h), s| (l.min(*s), h.max(*s)));
    assert_eq!((lo.round(), hi.round()), (24.0, 38.0), "{settle:?}");
    assert!(readme.contains("need 24 to 38 s on one CPU"));
    // "4.9 times Spring MVC's throughput", "200 / 0.1 s = 2,000 req/s at most".
    let delay = r
        .verdicts
        .iter()
        .find(|v| v.scenario == "delay-100ms")
        .unwrap();
    let thr = delay
        .findings
        .iter()
        .find(|f| f.metric == "throughput")
        .unwrap();
    assert_eq!(format!("{:.1}", thr.ratio.unwrap()), "4.9");
    assert!(readme.contains("4.9 times Spring MVC's"));
    assert!(runs("spring-mvc", "delay-100ms")
        .iter()
        .all(|x| x.summary.rps <= 2000.0));
    // "the runs took 13 minutes after the build": from the plan's start to its end.
    let minutes = |t: &str| -> f64 {
        let hms = &t[11..19];
        let p: Vec<f64> = hms.split(':').map(|x| x.parse().unwrap()).collect();
        p[0] * 60.0 + p[1] + p[2] / 60.0
    };
    let took = minutes(r.finished_at.as_deref().unwrap()) - minutes(&r.started_at);
    assert_eq!(took.floor(), 13.0, "{took}");
    assert!(readme.contains("runs took 13 minutes after the build"));
}

/// "A second ./iobound demo ... agreed with the first on every verdict both decided": the two
/// committed demo results, finding by finding.
#[test]
fn two_demo_runs_agree_on_every_verdict_both_decided() {
    use iobound::run::results::Results;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let first = Results::load(&root.join("docs/results/demo-2026-11-24/results.json")).unwrap();
    let second =
        Results::load(&root.join("docs/results/demo-2026-11-24-rerun/results.json")).unwrap();
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
    // The rerun's plaintext throughput lies inside the first run's undecided interval.
    let open = first.verdicts[0]
        .findings
        .iter()
        .find(|f| f.metric == "throughput")
        .unwrap();
    let rerun = second.verdicts[0]
        .findings
        .iter()
        .find(|f| f.metric == "throughput")
        .unwrap();
    let r = rerun.ratio.unwrap();
    assert!(open.ratio_lo.unwrap() <= r && r <= open.ratio_hi.unwrap());
    assert_eq!(format!("{r:.2}"), "1.17");
    let took = |r: &Results| {
        let m = |t: &str| -> f64 {
            let p: Vec<f64> = t[11..19].split(':').map(|x| x.parse().unwrap()).collect();
            p[0] * 60.0 + p[1] + p[2] / 60.0
        };
        m(r.finished_at.as_deref().unwrap()) - m(&r.started_at)
    };
    assert_eq!(took(&second).floor(), 12.0);
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains("12 minutes of\nruns)") && readme.contains("1.17x"));
}

/// "with one loop ... WebFlux's plaintext p99 of all requests fell from 12.5 ms to 1.9 ms, its
/// throughput not significantly changed": the two committed tuning results.
#[test]
fn the_webflux_event_loop_figures_match_their_results() {
    use iobound::run::results::Results;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let cell = |loops: u32| {
        let dir = root.join(format!(
            "docs/results/tuning-webflux-2026-11-24/loops-{loops}"
        ));
        let r = Results::load(&dir.join("results.json")).unwrap();
        iobound::stats::cell(&r, &dir, "plaintext", "spring-webflux").unwrap()
    };
    let (four, one) = (cell(4), cell(1));
    assert_eq!((four.runs, one.runs), (5, 5));
    assert_eq!(
        format!("{:.1} {:.1}", four.p99_all.value, one.p99_all.value),
        "12.5 1.9"
    );
    let p99 = iobound::stats::METRICS
        .iter()
        .find(|m| m.key == "p99_all")
        .unwrap();
    let thr = iobound::stats::METRICS
        .iter()
        .find(|m| m.key == "throughput")
        .unwrap();
    assert_eq!(
        iobound::stats::Difference::of(p99, &four, &one).significant,
        Some(true)
    );
    assert_eq!(
        iobound::stats::Difference::of(thr, &four, &one).significant,
        Some(false)
    );
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains("fell from 12.5 ms to 1.9 ms"));
}
