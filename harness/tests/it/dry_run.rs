//! `--dry-run` refuses what the run would refuse before it starts anything: a plan it passes
//! is not stopped at the run's start by its contenders' names, settings or the JVM's heap.

use crate::common::{repo_root, run};

/// The demo plan with `from` replaced by `to`, written to a file of its own in `dir`.
fn demo_with(dir: &std::path::Path, from: &str, to: &str) -> String {
    let demo = std::fs::read_to_string(repo_root().join("plans/demo.toml")).unwrap();
    assert!(demo.contains(from), "the demo plan has {from:?}");
    let written = std::fs::read_dir(dir).unwrap().count();
    let path = dir.join(format!("plan-{written}.toml"));
    std::fs::write(&path, demo.replacen(from, to, 1)).unwrap();
    path.display().to_string()
}

/// The demo plan with its contenders replaced by `contenders` and the tables `arms` (`[arms]`,
/// `[tunables.ARM]`) added before its `[jvm]`, where they hold no top-level key of the plan.
fn demo_with_arms(dir: &std::path::Path, contenders: &str, arms: &str) -> String {
    let path = demo_with(
        dir,
        r#"contenders = ["spring-mvc", "spring-webflux"]"#,
        contenders,
    );
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replacen("[jvm]", &format!("{arms}\n\n[jvm]"), 1),
    )
    .unwrap();
    path
}

/// `run --plan PLAN --dry-run`: its exit code and what it said on stderr.
fn dry_run(plan: &str) -> (Option<i32>, String) {
    let o = run(&["run", "--plan", plan, "--dry-run"]);
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into())
}

#[test]
fn a_dry_run_refuses_what_the_run_would_refuse_at_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let contenders = r#"contenders = ["spring-mvc", "spring-webflux"]"#;
    let refused = [
        // A name that climbs out of contenders/ is no contender.
        (
            demo_with(
                dir.path(),
                contenders,
                r#"contenders = ["spring-mvc", "../../etc"]"#,
            ),
            r#"unknown contender "../../etc""#,
        ),
        // A setting the contender does not have, and one that would split its command line.
        (
            demo_with(
                dir.path(),
                "[jvm]",
                "[tunables.spring-mvc]\nthreeds = \"400\"\n\n[jvm]",
            ),
            "tunables.spring-mvc.threeds is not a tunable of spring-mvc",
        ),
        (
            demo_with(
                dir.path(),
                "[jvm]",
                "[tunables.spring-mvc]\nthreads = \"400\\u0000\"\n\n[jvm]",
            ),
            "tunables.spring-mvc.threads = \"400\\0\" must be a single word",
        ),
        (
            demo_with(
                dir.path(),
                "[jvm]",
                "[tunables.spring-mvc]\nthreads = \"4\\n00\"\n\n[jvm]",
            ),
            "must be a single word without spaces, control characters or braces",
        ),
        // A heap no JVM reserves (the JVM refused it only after the builds and the services).
        (
            demo_with(
                dir.path(),
                r#"heap = "512m""#,
                r#"heap = "18446744073709551615g""#,
            ),
            "plan.jvm.heap = \"18446744073709551615g\" is not a heap size",
        ),
        (
            demo_with(dir.path(), r#"heap = "512m""#, r#"heap = "5000g""#),
            "plan.jvm.heap = \"5000g\" is above 4096 GB",
        ),
        // An arm of a contender that does not exist, one named as a contender is (its runs
        // would be told from that contender's by nothing), one the rounds do not list, and
        // its setting checked as its contender's would be.
        (
            demo_with_arms(
                dir.path(),
                r#"contenders = ["spring-mvc", "mvc-big"]"#,
                "[arms]\nmvc-big = \"spring-mvcc\"",
            ),
            "arms.mvc-big: unknown contender \"spring-mvcc\"",
        ),
        (
            demo_with_arms(
                dir.path(),
                contenders,
                "[arms]\nspring-webflux = \"spring-mvc\"",
            ),
            "arms.spring-webflux: \"spring-webflux\" is a contender's own name",
        ),
        (
            demo_with_arms(
                dir.path(),
                r#"contenders = ["spring-mvc"]"#,
                "[arms]\nmvc-big = \"spring-mvc\"",
            ),
            "arms.mvc-big: \"mvc-big\" is not in contenders (spring-mvc)",
        ),
        (
            demo_with_arms(
                dir.path(),
                r#"contenders = ["spring-mvc", "mvc-big"]"#,
                "[arms]\nmvc-big = \"spring-mvc\"\n[tunables.mvc-big]\nthreeds = 1000",
            ),
            "tunables.mvc-big.threeds is not a tunable of mvc-big",
        ),
    ];
    for (plan, says) in refused {
        let text = std::fs::read_to_string(&plan).unwrap();
        let (code, err) = dry_run(&plan);
        assert_eq!(code, Some(1), "{text}\n{err}");
        assert!(err.contains(says), "expected {says:?}:\n{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // The plan itself passes, and says what would run.
    let o = run(&[
        "run",
        "--plan",
        repo_root().join("plans/demo.toml").to_str().unwrap(),
        "--dry-run",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("contenders: spring-mvc, spring-webflux"),
        "{out}"
    );
    // Its rounds stop at its budget, well before every warm-up to its maximum would.
    assert!(
        out.contains("budget 30 min: a round starts only if"),
        "{out}"
    );
    // An arm: the same contender under a setting of its own, in the same rounds.
    let arms = demo_with_arms(
        dir.path(),
        r#"contenders = ["spring-mvc", "mvc-big"]"#,
        "[arms]\nmvc-big = \"spring-mvc\"\n[tunables.mvc-big]\nthreads = 1000",
    );
    let o = run(&["run", "--plan", &arms, "--dry-run"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("arm mvc-big: spring-mvc with threads=1000, in the same rounds"),
        "{out}"
    );
    // An arm under limits of its own; the demo's windows are as long as their noise needs.
    let limited = demo_with_arms(
        dir.path(),
        r#"contenders = ["spring-mvc", "mvc-quota"]"#,
        "[arms]\nmvc-quota = \"spring-mvc\"\n[limits.mvc-quota]\ncpus = 0.5",
    );
    let o = run(&["run", "--plan", &limited, "--dry-run"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("arm mvc-quota: spring-mvc with its defaults, under limits of its own"),
        "{out}"
    );
    assert!(
        out.contains("where the warm-up's noise needs it (window = \"auto\"), up to 300 s"),
        "{out}"
    );
}
