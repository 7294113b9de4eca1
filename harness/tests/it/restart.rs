//! `restart = true` on a scenario: the contender is stopped and started afresh before it, so
//! that what an earlier scenario left behind cannot weigh on it.

use crate::common::*;
use std::process::Command;

#[test]
fn a_scenario_with_restart_gets_a_fresh_process() {
    let serve = format!(r#""{}", "serve", "--port", "{{port}}""#, exe());
    let home = fake_contender_home(&serve, "test server");
    let out = tempfile::tempdir().unwrap();
    let plan = home.path().join("plan.toml");
    let scenario = |name: &str, restart: bool| {
        format!("[[scenario]]\nname = \"{name}\"\npath = \"/plaintext\"\nrestart = {restart}\n[scenario.load]\nmodel = \"closed\"\nusers = 2\nduration = \"1s\"\n")
    };
    std::fs::write(
        &plan,
        format!(
            "contenders = [\"crasher\"]\nruns = 1\nwarmup = \"0s\"\n{}{}{}",
            scenario("a", false),
            scenario("b", false),
            scenario("c", true)
        ),
    )
    .unwrap();
    let o = Command::new(exe())
        .args(["run", "--plan"])
        .arg(&plan)
        .arg("--out")
        .arg(out.path())
        .env("IOBOUND_HOME", home.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(
        stderr.matches("restarting for").count(),
        1,
        "only c asks for a fresh process:\n{stderr}"
    );
    assert!(stderr.contains("restarting for c"), "{stderr}");
    let dir = results_dir(out.path());
    let r = load_results(&dir);
    for run in r["runs"].as_array().unwrap() {
        assert_eq!(run["status"], "ok", "{}", run["failure"]);
        // Served, not refused: the fresh process is driven on its own port.
        let s = &run["summary"];
        assert!(s["ok"].as_u64().unwrap() > 0, "{}: {s}", run["scenario"]);
        assert_eq!(
            s["errors"]["connect"].as_u64().unwrap(),
            0,
            "{}: {s}",
            run["scenario"]
        );
    }
    assert_eq!(r["plan"]["scenarios"][2]["restart"], true);
    // The first process served a and b; the second, with a log of its own, served c.
    assert!(
        dir.join("logs/crasher.run1.log").exists() && dir.join("logs/crasher.run1.c.log").exists()
    );
    assert!(!dir.join("logs/crasher.run1.b.log").exists());
}
