//! A run stopped before its end (Ctrl-C) counts the requests it cut apart: they were not given
//! their time, so they are neither "unanswered" errors of the server nor latencies, and
//! ok + errors + cut = due still holds.

use crate::common::{exe, serve};
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn requests_cut_by_a_stop_are_counted_apart_not_as_errors() {
    // The server answers for 1.5 s, then holds every request for two minutes.
    let (_server, port) = serve(&["--stall-at", "1500ms", "--stall-for", "120s"]);
    let child = Command::new(exe())
        .args([
            "load",
            "--url",
            &format!("http://127.0.0.1:{port}/plaintext"),
            "--rate",
            "200",
            "--duration",
            "20s",
            "--max-connections",
            "100",
            "--timeout",
            "60s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start iobound load");
    std::thread::sleep(Duration::from_millis(3500));
    // SAFETY: signalling our own child (Ctrl-C, as a user would).
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "iobound load exits cleanly after Ctrl-C"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"));
    assert_eq!(v["stopped"], true, "{v}");
    assert!(
        n("cut") >= 100,
        "the queued and in-flight requests were cut: {v}"
    );
    assert_eq!(
        v["error_kinds"]["unanswered"], 0,
        "a stop is not the server's failure: {v}"
    );
    assert_eq!(n("errors"), 0, "nothing timed out within 60 s: {v}");
    assert_eq!(
        n("ok") + n("drained") + n("errors") + n("cut"),
        n("due"),
        "{v}"
    );
    assert_eq!(n("accounted"), n("due"), "{v}");
}
