//! Plans: what validates, and what is rejected with which message.

use super::*;
use anyhow::Result;
use std::time::Duration;

fn plan(text: &str) -> Result<Plan> {
    toml::from_str::<PlanFile>(text)
        .map_err(anyhow::Error::from)?
        .validate()
}

const GOOD: &str = r#"
    contenders = ["a"]
    [[scenario]]
    name = "delay"
    path = "/delay?ms=100"
    [scenario.load]
    model = "closed"
    users = 256
    step_users = 256
    steps = 3
    step_duration = "10s"
"#;

#[test]
fn closed_steps_define_duration_and_levels() {
    let p = plan(GOOD).unwrap();
    let prof = &p.scenarios[0].load.profile;
    assert_eq!(prof.duration(), Duration::from_secs(40));
    assert_eq!(prof.target_at(Duration::from_secs(0)), 256.0);
    assert_eq!(prof.target_at(Duration::from_secs(25)), 768.0);
    assert_eq!(prof.target_at(Duration::from_secs(99)), 1024.0);
    assert_eq!(p.scenarios[0].load.timeout, Duration::from_secs(10));
}

#[test]
fn users_who_stay_a_while_overlap_in_waves() {
    // 256 users join every 10 s, 8 times, each for 20 s: 256, then 512 while two waves
    // overlap, and 256 again while the last wave finishes its 20 s.
    let p = plan(&GOOD.replace("steps = 3", "steps = 7\nstay = \"20s\"")).unwrap();
    let prof = &p.scenarios[0].load.profile;
    assert_eq!(prof.duration(), Duration::from_secs(90));
    let at = |s: u64| prof.target_at(Duration::from_secs(s));
    assert_eq!(
        (at(0), at(9), at(10), at(45), at(79)),
        (256.0, 256.0, 512.0, 512.0, 512.0)
    );
    assert_eq!((at(80), at(89), at(90)), (256.0, 256.0, 0.0));
    assert!(
        prof.describe().contains("each staying 20s"),
        "{}",
        prof.describe()
    );
    let e = err(&GOOD.replace("steps = 3", "steps = 0\nstay = \"20s\""));
    assert!(
        e.contains("load.stay applies to users joining in steps"),
        "{e}"
    );
    let e = err(&GOOD.replace("steps = 3", "steps = 3\nstay = \"0s\""));
    assert!(e.contains("load.stay must be above zero"), "{e}");
    let p = plan(&GOOD.replace("steps = 3", "steps = 3\nspread = \"5s\"")).unwrap();
    let prof = &p.scenarios[0].load.profile;
    assert!(
        prof.describe().ends_with("joining over 5s"),
        "{}",
        prof.describe()
    );
    let e = err(&GOOD.replace("steps = 3", "steps = 3\nspread = \"11s\""));
    assert!(e.contains("load.spread is longer than a level"), "{e}");
}

#[test]
fn corpus_and_downstream_are_checked() {
    let p = plan(GOOD).unwrap();
    assert_eq!(
        p.corpus.files,
        CorpusSpec::CONFORMANCE_FILES,
        "no /hash scenario: the small corpus"
    );
    assert_eq!(p.downstream.timeout, Duration::from_secs(2));
    let hash = GOOD.replace("/delay?ms=100", "/hash?id=1");
    assert_eq!(plan(&hash).unwrap().corpus.files, CorpusSpec::DEFAULT_FILES);
    let e = plan(&format!("{GOOD}\n[downstream]\nlatency = \"soon\""))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("downstream: latency \"soon\"") && e.contains("fixed:100ms"),
        "{e}"
    );
    let e = plan(&format!("{GOOD}\n[corpus]\nfiles = 0"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("corpus.files = 0"), "{e}");
    // The contract reads files 0 to 2: a smaller corpus stopped a run after its start.
    let e = plan(&format!("{GOOD}\n[corpus]\nfiles = 2"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("corpus.files = 2 is out of range; use 3..=1000000")
            && e.contains("files 0, 1 and 2"),
        "{e}"
    );
    // Each field in range, the product not: a million files of 64 MB.
    let e = plan(&format!(
        "{GOOD}\n[corpus]\nfiles = 1000000\nsize_kb = 65536"
    ))
    .unwrap_err()
    .to_string();
    assert!(
        e.contains(
            "corpus.files x corpus.size_kb = 1000000 x 65536 KB = 62500 GiB, above the 16 GiB"
        ),
        "{e}"
    );
    assert!(plan(&format!("{GOOD}\n[corpus]\nfiles = 256\nsize_kb = 65536")).is_ok());
    let e = plan(&format!("{GOOD}\n[downstream]\nerror_rate = 1.5"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("error_rate") && e.contains("0..1"), "{e}");
}

#[test]
fn scenarios_may_change_the_downstream() {
    let text = format!(
        "{GOOD}\n[downstream]\nlatency = \"fixed:50ms\"\n[scenario.downstream]\nerror_rate = 0.5"
    );
    let p = plan(&text).unwrap();
    assert_eq!(
        p.scenarios[0].downstream,
        "latency=fixed:50ms&error_rate=0.5&stall_prob=0&stall_for=10s"
    );
    assert_eq!(
        plan(GOOD).unwrap().scenarios[0].downstream,
        "latency=fixed:100ms&error_rate=0&stall_prob=0&stall_for=10s"
    );
    let e = plan(&format!("{GOOD}\n[scenario.downstream]\nstall_prob = 2.0"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("scenario[0] \"delay\".downstream: stall_prob"),
        "{e}"
    );
    let e = plan(&format!("{GOOD}\n[scenario.downstream]\ntimeout = \"1s\""))
        .unwrap_err()
        .to_string();
    assert!(e.contains("set once, in the plan's [downstream]"), "{e}");
}

#[test]
fn events_mixes_and_overload_are_checked() {
    let base = r#"
        contenders = ["a"]
        [[scenario]]
        name = "s"
        path = "/enrich?key=k"
        [scenario.load]
        model = "open"
        rate = 100
        duration = "30s"
    "#;
    let p = plan(&format!("{base}\n[[scenario.event]]\nat = \"10s\"\ndownstream = {{ latency = \"fixed:1500ms\" }}\n[[scenario.event]]\nat = \"20s\"\ndownstream = {{ latency = \"fixed:100ms\" }}")).unwrap();
    let e = &p.scenarios[0].events;
    assert_eq!(
        (e[0].at, e[1].at),
        (Duration::from_secs(10), Duration::from_secs(20))
    );
    assert!(
        e[0].downstream
            .starts_with("latency=fixed:1500ms&error_rate=0"),
        "{}",
        e[0].downstream
    );
    for (extra, says) in [
        ("[[scenario.event]]\nat = \"40s\"\ndownstream = {}", "not inside the measured phase"),
        ("[[scenario.event]]\nat = \"10s\"\ndownstream = {}\n[[scenario.event]]\nat = \"5s\"\ndownstream = {}", "must come after"),
        ("[[scenario.event]]\nat = \"10s\"\ndownstream = { latency = \"sometimes\" }", "event[0].downstream"),
        ("[scenario.overload]\nfactor = 5", "closed model"),
    ] {
        let e = plan(&format!("{base}\n{extra}")).unwrap_err().to_string();
        assert!(e.contains(says), "{extra}: {e}");
    }
    let over = GOOD.replace(
        "step_users = 256\n    steps = 3\n    step_duration = \"10s\"",
        "duration = \"10s\"",
    );
    let p = plan(&format!("{over}\n[scenario.overload]\nfactor = 4")).unwrap();
    assert_eq!(
        p.scenarios[0]
            .overload
            .as_ref()
            .map(|o| (o.factor, o.duration, o.calm)),
        Some((4.0, Duration::from_secs(20), Duration::from_secs(15)))
    );
    assert!(plan(&format!("{over}\n[scenario.overload]\nfactor = 0.5"))
        .unwrap_err()
        .to_string()
        .contains("overload.factor"));
    let mix = r#"
        contenders = ["a"]
        [[scenario]]
        name = "m"
        mix = [{ weight = 9, method = "GET", path = "/messages/{seq:1..10}" }, { weight = 1, method = "FETCH", path = "/messages" }]
        [scenario.load]
        model = "closed"
        users = 1
        duration = "1s"
    "#;
    assert!(plan(mix)
        .unwrap_err()
        .to_string()
        .contains("mix[1].method = \"FETCH\""));
    let ok = plan(&mix.replace("FETCH", "POST")).unwrap();
    assert_eq!(
        ok.scenarios[0].path,
        "mix: 9 GET /messages/{seq:1..10}, 1 POST /messages"
    );
    assert!(
        plan(&mix.replace("name = \"m\"", "name = \"m\"\npath = \"/x\""))
            .unwrap_err()
            .to_string()
            .contains("either path or mix")
    );
}

#[test]
fn plans_repeat_four_times_unless_they_say() {
    assert_eq!(plan(GOOD).unwrap().runs, 4);
    assert_eq!(plan(&format!("runs = 5\n{GOOD}")).unwrap().runs, 5);
}

#[test]
fn a_margin_holds_for_fixed_runs_as_for_automatic_ones() {
    let fixed = plan(&format!("runs = 5\nmargin = \"10%\"\n{GOOD}")).unwrap();
    assert_eq!(fixed.fixed_margin, Some(0.10));
    assert!(fixed.sequential.is_none());
    let recorded = serde_json::to_value(&fixed).unwrap();
    assert_eq!(recorded["margin"], 0.10, "results.json keeps it");
    let auto = plan(&format!("runs = \"auto\"\nmargin = \"10%\"\n{GOOD}")).unwrap();
    assert_eq!(auto.sequential.map(|s| s.margin), Some(0.10));
    assert_eq!(auto.fixed_margin, None, "one place for it");
    // A plan that does not set one records none: plans measured before it existed resume.
    let unset = plan(GOOD).unwrap();
    assert_eq!(unset.fixed_margin, None);
    assert!(serde_json::to_value(&unset)
        .unwrap()
        .get("margin")
        .is_none());
    let e = err(&format!("runs = 5\nmargin = \"60%\"\n{GOOD}"));
    assert!(e.contains("plan.margin"), "{e}");
}

#[test]
fn open_ramp_is_linear() {
    let p = plan(
        r#"
        contenders = ["a"]
        [[scenario]]
        name = "ramp"
        path = "/x"
        [scenario.load]
        model = "open"
        rate = 10
        ramp_to = 300
        duration = "60s"
    "#,
    )
    .unwrap();
    let prof = &p.scenarios[0].load.profile;
    assert_eq!(prof.target_at(Duration::from_secs(30)), 155.0);
    assert_eq!(prof.target_at(Duration::from_secs(60)), 300.0);
}

fn err(text: &str) -> String {
    format!("{:#}", plan(text).unwrap_err())
}

#[test]
fn errors_name_the_field_and_the_fix() {
    let e = err(&GOOD.replace("users = 256\n", "users = -5\n"));
    assert!(e.contains("load.users must not be negative"), "{e}");
    let e = err(&GOOD.replace("model = \"closed\"", "model = \"clsoed\""));
    assert!(
        e.contains("load.model = \"clsoed\" is unknown") && e.contains("\"open\""),
        "{e}"
    );
    let e = err(&GOOD.replace("step_users = 256", "stepusers = 256"));
    assert!(e.contains("unknown field `stepusers`"), "{e}");
    let e = err(&GOOD.replace("\"/delay?ms=100\"", "\"delay\""));
    assert!(e.contains("path = \"delay\" must start with '/'"), "{e}");
    let e = err(&GOOD.replace("contenders = [\"a\"]", "contenders = []"));
    assert!(e.contains("plan.contenders is empty"), "{e}");
    let e = err(&GOOD.replace("\"10s\"", "\"ten\""));
    assert!(e.contains("step_duration: invalid duration"), "{e}");
    let e = err(&GOOD.replace("step_users = 256", "rate = 5"));
    assert!(
        e.contains("load.rate applies to the open model only"),
        "{e}"
    );
    let e = err("contenders = [\"a\"]\n[[scenario]\nname = 1");
    assert!(
        e.contains("TOML parse error") || e.contains("expected"),
        "{e}"
    );
}

#[test]
fn open_rate_must_be_positive() {
    let text = r#"
        contenders = ["a"]
        [[scenario]]
        name = "r"
        path = "/x"
        [scenario.load]
        model = "open"
        rate = -3
        duration = "5s"
    "#;
    assert!(err(text).contains("rate must be a positive number"));
    // A finite rate is not yet a sendable one: 1e300 scheduled requests a zeptosecond apart.
    let e = err(&text.replace("rate = -3", "rate = 1e300"));
    assert!(
        e.contains("load.rate = 1e300 is above 10000000 requests per second"),
        "{e}"
    );
    assert!(plan(&text.replace("rate = -3", "rate = 10000000")).is_ok());
    let e = err(&text.replace("rate = -3", "rate = 5\nramp_to = 2e7"));
    assert!(e.contains("load.ramp_to = 20000000 is above"), "{e}");
    assert!(err(&text.replace("rate = -3", "rate = 5\nramp_to = 0"))
        .contains("ramp_to must be a positive rate"));
    assert!(err(&text
        .replace("rate = -3", "rate = 5")
        .replace("duration = \"5s\"", ""))
    .contains("duration is missing"));
}

#[test]
fn every_plan_in_plans_is_accepted() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../plans");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            PlanFile::load(&p)
                .and_then(|f| f.validate())
                .unwrap_or_else(|e| panic!("{}: {e:#}", p.display()));
            seen += 1;
        }
    }
    assert!(seen >= 10, "only {seen} plans in {}", dir.display());
}

#[test]
fn services_get_cpus_of_their_own_on_four_or_more() {
    use super::validate_machine::services_cpus;
    assert_eq!(
        services_cpus(None, &[0], &[1], 2).unwrap(),
        [1],
        "two CPUs: the services share the driver's"
    );
    assert_eq!(services_cpus(None, &[0], &[1], 4).unwrap(), [2, 3]);
    assert_eq!(
        services_cpus(None, &[0, 1], &[2, 3], 4).unwrap(),
        [2, 3],
        "no CPU left: the driver's"
    );
    assert_eq!(
        services_cpus(Some("1"), &[0], &[1], 4).unwrap(),
        [1],
        "as given (CPUs that exist here)"
    );
    let e = services_cpus(Some("0"), &[0], &[1], 2)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the contender's") && e.contains("--services-cpus 1"),
        "{e}"
    );
}

#[test]
fn a_plan_name_cannot_leave_the_results_directory() {
    for bad in ["../../../x", "a/b", "", "demo run"] {
        let e = err(&format!("name = {bad:?}\n{GOOD}"));
        assert!(
            e.contains(&format!("plan.name = {bad:?}: use only letters, digits")),
            "{bad}: {e}"
        );
    }
    assert_eq!(
        plan(&format!("name = \"demo-rerun_2\"\n{GOOD}"))
            .unwrap()
            .name,
        "demo-rerun_2"
    );
    // Durations far beyond any run: an error naming the field, not a panic.
    let e = err(&GOOD.replace("\"10s\"", "\"100000000000000000000s\""));
    assert!(
        e.contains("step_duration") && e.contains("longer than iobound measures"),
        "{e}"
    );
}

#[test]
fn totals_over_the_steps_are_bounded_not_wrapped() {
    // Each field within its own bound, their product not: 1,000,000 users joining 1,000,000
    // times printed "1000000 -> 3568587328 users" (u32 wrapped in release builds).
    let many = GOOD
        .replace("users = 256\n", "users = 1000000\n")
        .replace("step_users = 256", "step_users = 1000000")
        .replace("steps = 3", "steps = 1000000");
    let e = err(&many);
    assert!(
        e.contains("users + step_users x steps") && e.contains("1,000,000"),
        "{e}"
    );
    // A run of (steps + 1) x step_duration beyond a week, each field within one.
    let long = GOOD
        .replace("steps = 3", "steps = 1000000")
        .replace("step_users = 256", "step_users = 0");
    let e = err(&long.replace("step_duration = \"10s\"", "step_duration = \"1h\""));
    assert!(e.contains("(steps + 1) x step_duration"), "{e}");
}

#[test]
fn an_arm_names_a_contender_under_settings_of_its_own() {
    let with_arms = |arms: &str| {
        GOOD.replace(
            "contenders = [\"a\"]",
            &format!("contenders = [\"a\", \"a-big\"]\n{arms}\n[tunables.a-big]\nthreads = 1000"),
        )
    };
    let p = plan(&with_arms("arms = { a-big = \"a\" }")).unwrap();
    assert_eq!(p.contender_of("a-big"), "a");
    assert_eq!(p.contender_of("a"), "a");
    assert_eq!(p.tunables["a-big"]["threads"], "1000");
    // An arm starts a contender, not another arm; its name names it in every table.
    let e = err(&with_arms("arms = { a-big = \"a\", a-huge = \"a-big\" }")
        .replace("\"a-big\"]", "\"a-big\", \"a-huge\"]"));
    assert!(
        e.contains("arms.a-huge = \"a-big\": \"a-big\" is an arm itself"),
        "{e}"
    );
    let e =
        err(&with_arms("arms = { \"a big\" = \"a\" }")
            .replace("\"a-big\"]", "\"a-big\", \"a big\"]"));
    assert!(e.contains("an arm's name uses only letters"), "{e}");
}
