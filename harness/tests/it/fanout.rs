//! The fan-out contract (/aggregate) and its cancellation check, against the built-in test
//! server in its two modes: one that cancels the calls still running when one fails, one that
//! leaves them running. The check must tell them apart from the downstream's own counts.

use crate::common;

use crate::common::{add_fake_contender, exe, free_port, load_results, results_dir, Guard};
use iobound::conformance::aggregate;
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::Duration;

fn start(args: &[&str], env: &[(&str, String)]) -> (Guard, SocketAddr) {
    let port = free_port();
    let mut child = Command::new(exe())
        .args(args)
        .args(["--port", &port.to_string()])
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    // Until it listens, however long a slow machine takes to start it, or it has exited.
    while TcpStream::connect(addr).is_err() {
        let exited = child.try_wait().unwrap();
        assert!(
            exited.is_none(),
            "{args:?} exited before it listened: {exited:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    (Guard(child), addr)
}

/// The token the tests' downstream asks for on its control endpoints.
const TOKEN: &str = "0123456789abcdef";

fn with_token() -> [(&'static str, String); 1] {
    [("IOBOUND_CONTROL_TOKEN", TOKEN.to_string())]
}

/// The downstream, and the test server calling it (cancelling siblings or not).
fn servers(cancel: bool) -> (Guard, Guard, SocketAddr, SocketAddr) {
    let (d, downstream) = start(&["downstream"], &with_token());
    let env = [
        ("IOBOUND_DOWNSTREAM_URL", format!("http://{downstream}")),
        ("IOBOUND_DOWNSTREAM_TIMEOUT_MS", "1000".into()),
        (
            "IOBOUND_AGGREGATE_CANCEL",
            if cancel { "1" } else { "0" }.into(),
        ),
    ];
    let (s, addr) = start(&["serve"], &env);
    (d, s, addr, downstream)
}

fn verify(
    addr: SocketAddr,
    downstream: SocketAddr,
    expect_cancel: bool,
) -> Vec<iobound::conformance::CaseResult> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let control = iobound::services::downstream::Control {
        addr: downstream,
        token: TOKEN.into(),
    };
    rt.block_on(iobound::conformance::verify_fanout(
        addr,
        &control,
        Duration::from_millis(1000),
        expect_cancel,
    ))
    .unwrap()
}

/// The cancellation check's result (the case that follows the timeout runs after it).
fn cancellation(results: &[iobound::conformance::CaseResult]) -> iobound::conformance::CaseResult {
    results
        .iter()
        .find(|r| r.name.starts_with("aggregate cancels") || r.name.starts_with("aggregate leaves"))
        .cloned()
        .unwrap_or_else(|| panic!("no cancellation check in {results:#?}"))
}

#[test]
fn a_fan_out_that_cancels_passes_every_case() {
    let (_d, _s, addr, downstream) = servers(true);
    let results = verify(addr, downstream, true);
    let failed: Vec<_> = results.iter().filter(|r| !r.passed).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(results.len(), aggregate::cases().unwrap().len() + 1);
    let cancel = cancellation(&results);
    assert!(
        cancel.detail.contains("3 of 3 sibling calls cancelled"),
        "{cancel:?}"
    );
}

#[test]
fn a_fan_out_that_leaves_its_siblings_running_fails_only_the_cancellation_check() {
    let (_d, _s, addr, downstream) = servers(false);
    let results = verify(addr, downstream, true);
    let failed: Vec<&str> = results
        .iter()
        .filter(|r| !r.passed)
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(
        failed,
        ["aggregate cancels the calls still running when one fails"],
        "{results:#?}"
    );
    let detail = &cancellation(&results).detail;
    assert!(
        detail.starts_with("0 of 3 sibling calls cancelled"),
        "{detail}"
    );
}

#[test]
fn a_manifests_word_on_cancelling_is_checked_both_ways() {
    // Declared as not cancelling, and it does not: passes, saying so.
    let (_d, _s, addr, downstream) = servers(false);
    let results = verify(addr, downstream, false);
    assert!(results.iter().all(|r| r.passed), "{results:#?}");
    let check = cancellation(&results);
    assert!(
        check
            .detail
            .contains("3 of 3 sibling calls served to the end"),
        "{check:?}"
    );
    // Declared as not cancelling, but it does: the manifest is wrong.
    let (_d, _s, addr, downstream) = servers(true);
    let check = cancellation(&verify(addr, downstream, false));
    assert!(!check.passed);
    assert!(check.detail.contains("correct it"), "{check:?}");
}

#[test]
fn the_downstream_counts_calls_served_and_cancelled() {
    let (_d, downstream) = start(&["downstream"], &with_token());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let stats = |q: &str| -> serde_json::Value {
        let r = rt
            .block_on(iobound::util::http1::fetch(downstream, "GET", q, None))
            .unwrap();
        serde_json::from_slice(&r.body).unwrap()
    };
    // Two served; one whose caller gives up after 50 ms of a 2 s wait.
    for key in ["fast-a", "w20-b"] {
        let r = rt
            .block_on(iobound::util::http1::fetch(
                downstream,
                "GET",
                &format!("/value?key={key}"),
                None,
            ))
            .unwrap();
        assert_eq!(r.status, 200);
    }
    let gave_up = rt.block_on(async {
        tokio::time::timeout(
            Duration::from_millis(50),
            iobound::util::http1::fetch(downstream, "GET", "/value?key=w2000-c", None),
        )
        .await
    });
    assert!(gave_up.is_err(), "the call was given up");
    // The downstream counts the call cancelled once it sees the connection closed: looked for
    // until it does, not once after a guessed pause.
    let seen = common::until(
        Duration::from_secs(30),
        || stats(&format!("/_stats?token={TOKEN}")),
        |s| s["cancelled"].as_u64() == Some(1),
    );
    assert_eq!(seen["cancelled"], 1, "{seen}");
    // Without the run's token (or with another) the control endpoints answer nothing.
    for path in [
        "/_stats?reset=1",
        "/_stats?token=guess&reset=1",
        "/_control?latency=fixed:1s",
    ] {
        let r = rt
            .block_on(iobound::util::http1::fetch(downstream, "GET", path, None))
            .unwrap();
        assert_eq!(r.status, 403, "{path}");
    }
    let s = stats(&format!("/_stats?token={TOKEN}&reset=1"));
    assert_eq!(
        (
            s["served"].as_u64(),
            s["cancelled"].as_u64(),
            s["in_flight"].as_u64()
        ),
        (Some(2), Some(1), Some(0)),
        "{s}"
    );
    assert_eq!(s["peak_in_flight"], 1);
    let s = stats(&format!("/_stats?token={TOKEN}"));
    assert_eq!(
        (s["served"].as_u64(), s["cancelled"].as_u64()),
        (Some(0), Some(0)),
        "reset: {s}"
    );
}

/// A fan-out scenario measured on two test servers, one that cancels and one that does not
/// (and says so in its manifest): the downstream's own counts per run tell them apart.
#[test]
fn a_measured_fan_out_counts_the_calls_served_and_cancelled() {
    let home = tempfile::tempdir().unwrap();
    let serve = format!(r#""{}", "serve", "--port", "{{port}}""#, exe());
    let keep = format!(r#""env", "IOBOUND_AGGREGATE_CANCEL=0", {serve}"#);
    for (name, argv, fanout) in [
        (
            "cancels",
            serve.as_str(),
            "fanout = \"spawned calls, aborted on the first failure\"\n",
        ),
        (
            "keeps",
            keep.as_str(),
            "fanout = \"spawned calls, left running\"\nfanout_cancels = false\n",
        ),
    ] {
        add_fake_contender(home.path(), name, argv, "fan-out test double");
        let manifest = home
            .path()
            .join("contenders")
            .join(name)
            .join("contender.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        std::fs::write(&manifest, format!("{text}{fanout}")).unwrap();
    }
    add_fake_contender(home.path(), "plain", &serve, "no fan-out");
    let plan = home.path().join("plan.toml");
    let write_plan = |contenders: &str| {
        std::fs::write(
            &plan,
            format!(
                r#"contenders = [{contenders}]
runs = 1
warmup = "0s"
[[scenario]]
name = "one-fails"
path = "/aggregate?keys=w5-fail-a,w200-b,w200-c,w200-d"
[scenario.load]
model = "closed"
users = 2
duration = "2s"
"#
            ),
        )
        .unwrap()
    };
    let run = |out: &std::path::Path| {
        Command::new(exe())
            .args(["run", "--plan"])
            .arg(&plan)
            .arg("--out")
            .arg(out)
            .env("IOBOUND_HOME", home.path())
            .output()
            .unwrap()
    };

    // A contender that does not serve /aggregate is refused before anything starts.
    write_plan(r#""cancels", "plain""#);
    let out = tempfile::tempdir().unwrap();
    let o = run(out.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("scenario \"one-fails\" calls /aggregate, which plain does not serve yet"),
        "{err}"
    );

    write_plan(r#""cancels", "keeps""#);
    let o = run(out.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("downstream cancelled / req"), "{table}");
    let r = load_results(&results_dir(out.path()));
    let per_request = |name: &str| {
        let run = r["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["contender"] == name)
            .unwrap();
        assert_eq!(run["status"], "ok", "{}", run["failure"]);
        let s = &run["summary"];
        let answered = s["ok"].as_u64().unwrap() + s["errors"]["status"].as_u64().unwrap();
        assert!(answered > 50, "{name}: {answered} answers");
        let calls = &run["downstream_calls"];
        let n = |k: &str| calls[k].as_u64().unwrap() as f64 / answered as f64;
        (n("served"), n("cancelled"))
    };
    // Each request: one call fails after 5 ms, three more would take 200 ms.
    let (served, cancelled) = per_request("cancels");
    assert!(
        (0.9..=1.1).contains(&served),
        "cancels: served {served:.2} per request"
    );
    assert!(
        (2.7..=3.0).contains(&cancelled),
        "cancels: cancelled {cancelled:.2} per request"
    );
    let (served, cancelled) = per_request("keeps");
    // The siblings still running when the run ended are in neither count.
    assert!(
        (3.0..=4.0).contains(&served),
        "keeps: served {served:.2} per request"
    );
    assert_eq!(cancelled, 0.0);
}

/// The contract README's table of fan-out constructs names every HTTP contender, and its
/// "cancels the rest" column says what each manifest's `fanout_cancels` says (which the
/// cancellation check holds each contender to before it is measured).
#[test]
fn the_contract_table_names_every_http_contender_with_its_manifests_word() {
    let root = common::repo_root();
    let readme = std::fs::read_to_string(root.join("contract/README.md")).unwrap();
    let mut listed = std::collections::BTreeMap::new();
    let table = readme
        .lines()
        .skip_while(|l| !l.starts_with("| contender | construct | cancels the rest |"))
        .skip(2)
        .take_while(|l| l.starts_with("| "));
    for row in table {
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        for name in cells[0].split(", ") {
            listed.insert(name.to_string(), cells[2] == "yes");
        }
    }
    let mut http = Vec::new();
    for entry in std::fs::read_dir(root.join("contenders")).unwrap() {
        let path = entry.unwrap().path().join("contender.toml");
        if !path.exists() {
            continue;
        }
        let m = iobound::services::manifest::Manifest::load(&path).unwrap();
        if m.is_pipeline() {
            continue;
        }
        http.push(m.name.clone());
        let Some(cancels) = listed.get(&m.name) else {
            panic!(
                "{} is missing from contract/README.md's fan-out table",
                m.name
            )
        };
        assert!(m.fanout.is_some(), "{} has no `fanout`", m.name);
        assert_eq!(
            m.fanout_cancels.unwrap_or(true),
            *cancels,
            "{}: the table and its manifest disagree on cancelling",
            m.name
        );
    }
    assert_eq!(http.len(), 17, "{http:?}");
    assert_eq!(listed.len(), 17, "{listed:?}");
}
