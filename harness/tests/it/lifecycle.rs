//! A contender's life in a plan: one that crashes mid-run is reported failed with its log,
//! and the plan goes on.

use crate::common::*;
use std::process::Command;

#[test]
fn a_contender_that_crashes_mid_run_is_reported_and_the_plan_goes_on() {
    // Long enough to pass the contract check (a few seconds: its stalled /enrich cases wait
    // out the 2 s downstream timeout), and well inside the first scenario, which lasts longer
    // than the crasher lives, so that the crash falls in it however long the check takes.
    let home = crashing_contender_home(12);
    let out = tempfile::tempdir().unwrap();
    let plan = home.path().join("plan.toml");
    std::fs::write(
        &plan,
        r#"contenders = ["crasher"]
runs = 1
warmup = "0s"
[[scenario]]
name = "first"
path = "/delay?ms=10"
[scenario.load]
model = "closed"
users = 4
duration = "30s"
timeout = "1s"
[[scenario]]
name = "second"
path = "/plaintext"
[scenario.load]
model = "closed"
users = 1
duration = "1s"
"#,
    )
    .unwrap();
    let o = Command::new(exe())
        .args([
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.path().to_str().unwrap(),
        ])
        .env("IOBOUND_HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(3),
        "exit 3 = some contender failed\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r = load_results(&results_dir(out.path()));
    assert_eq!(r["complete"], true, "the plan itself finished");
    let runs = r["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["status"], "failed");
    let why = runs[0]["failure"].as_str().unwrap();
    assert!(
        why.contains("exited during the run") && why.contains("exit status 124"),
        "{why}"
    );
    assert!(
        why.contains("listening on"),
        "the log tail is included: {why}"
    );
    // What was measured before the crash is kept (however few a slow machine answered).
    assert!(runs[0]["summary"]["ok"].as_u64().unwrap() > 0);
    assert_eq!(runs[1]["status"], "failed");
    assert!(runs[1]["failure"].as_str().unwrap().contains("not run"));
    assert!(
        processes_in(home.path()).is_empty(),
        "no server left behind"
    );
}

#[test]
fn the_embedded_database_asks_every_tcp_client_for_the_runs_password() {
    // It was initialised with `-A trust`: any local user could connect as its superuser and
    // run commands as root through it.
    let root = repo_root();
    if iobound::services::database::find_binaries(&root).is_err() {
        missing_prerequisite("PostgreSQL's binaries (./iobound build fetches them)");
        return;
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let logs = tempfile::tempdir().unwrap();
    let db = iobound::services::database::Database::start_embedded(
        &root,
        &[0],
        &logs.path().join("postgres.log"),
        &rt,
        2,
    )
    .unwrap();
    assert_eq!(db.cfg.password.len(), 32, "16 random bytes, as hex");
    let mut anyone = db.cfg.clone();
    for guess in ["", "iobound", "postgres"] {
        anyone.password = guess.into();
        let e = rt.block_on(anyone.connect()).unwrap_err();
        assert!(format!("{e:#}").contains("password"), "{guess:?}: {e:#}");
    }
    rt.block_on(db.cfg.connect())
        .expect("the run's own password works");
}

#[test]
fn verify_writes_its_logs_where_no_one_else_could_have_put_a_link() {
    // `verify` wrote /tmp/iobound-verify-{name}.log with File::create: a link put there by
    // another user made root truncate and write whatever file it pointed to.
    let serve = format!(r#""{}", "serve", "--port", "{{port}}""#, exe());
    let home = tempfile::tempdir().unwrap();
    add_fake_contender(home.path(), "linkvictim", &serve, "test server");
    let victim_dir = tempfile::tempdir().unwrap();
    let victim = victim_dir.path().join("precious");
    std::fs::write(&victim, "keep me").unwrap();
    let trap = std::env::temp_dir().join("iobound-verify-linkvictim.log");
    let _ = std::fs::remove_file(&trap);
    std::os::unix::fs::symlink(&victim, &trap).unwrap();
    let o = Command::new(exe())
        .args(["verify", "linkvictim"])
        .env("IOBOUND_HOME", home.path())
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&trap);
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "keep me",
        "verify wrote through the link: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn verify_fails_a_contender_that_does_not_say_what_its_runtime_detected() {
    let home = tempfile::tempdir().unwrap();
    let serve = format!(r#""{}", "serve", "--port", "{{port}}""#, exe());
    add_fake_contender(home.path(), "says", &serve, "test server");
    // The same server, its start-up line filtered out of what reaches its log.
    let quiet = format!(
        r#""sh", "-c", "\"$1\" serve --port \"$0\" | grep --line-buffered -v '^iobound-runtime'", "{{port}}", "{}""#,
        exe()
    );
    add_fake_contender(
        home.path(),
        "quiet",
        &quiet,
        "test server, start-up line removed",
    );
    let o = Command::new(exe())
        .args(["verify", "says", "quiet"])
        .env("IOBOUND_HOME", home.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    let line = |name: &str| {
        err.lines()
            .find(|l| l.trim_start().starts_with(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("no summary line for {name}:\n{err}"))
            .to_string()
    };
    assert!(line("says").contains("contract cases pass"), "{err}");
    assert!(
        line("quiet").contains("1 of ") && line("quiet").contains("FAIL"),
        "{err}"
    );
    assert!(
        err.contains("no line starting with `iobound-runtime {json}`"),
        "the failure says what the contract asks: {err}"
    );
    // verify keeps the logs of what failed, for the reader; this test is its own reader.
    let kept = err
        .lines()
        .find_map(|l| l.strip_prefix("verify: logs in "))
        .expect("verify says where the logs are");
    std::fs::remove_dir_all(kept.trim()).unwrap();
}
