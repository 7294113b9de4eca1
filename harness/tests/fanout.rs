//! The fan-out contract (/aggregate) and its cancellation check, against the built-in test
//! server in its two modes: one that cancels the calls still running when one fails, one that
//! leaves them running. The check must tell them apart from the downstream's own counts.

mod common;

use common::{exe, free_port, Guard};
use iobound::conformance::aggregate;
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn start(args: &[&str], env: &[(&str, String)]) -> (Guard, SocketAddr) {
    let port = free_port();
    let child = Command::new(exe())
        .args(args)
        .args(["--port", &port.to_string()])
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let t0 = Instant::now();
    while TcpStream::connect(addr).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "{args:?} did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    (Guard(child), addr)
}

/// The downstream, and the test server calling it (cancelling siblings or not).
fn servers(cancel: bool) -> (Guard, Guard, SocketAddr, SocketAddr) {
    let (d, downstream) = start(&["downstream"], &[]);
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

fn verify(addr: SocketAddr, downstream: SocketAddr) -> Vec<iobound::conformance::CaseResult> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(aggregate::verify(
        addr,
        downstream,
        Duration::from_millis(1000),
    ))
    .unwrap()
}

#[test]
fn a_fan_out_that_cancels_passes_every_case() {
    let (_d, _s, addr, downstream) = servers(true);
    let results = verify(addr, downstream);
    let failed: Vec<_> = results.iter().filter(|r| !r.passed).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(results.len(), aggregate::cases().unwrap().len() + 1);
    let cancel = results.last().unwrap();
    assert!(
        cancel.detail.contains("3 of 3 sibling calls cancelled"),
        "{cancel:?}"
    );
}

#[test]
fn a_fan_out_that_leaves_its_siblings_running_fails_only_the_cancellation_check() {
    let (_d, _s, addr, downstream) = servers(false);
    let results = verify(addr, downstream);
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
    let detail = &results.last().unwrap().detail;
    assert!(
        detail.starts_with("0 of 3 sibling calls cancelled"),
        "{detail}"
    );
}

#[test]
fn the_downstream_counts_calls_served_and_cancelled() {
    let (_d, downstream) = start(&["downstream"], &[]);
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
    std::thread::sleep(Duration::from_millis(100));
    let s = stats("/_stats?reset=1");
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
    let s = stats("/_stats");
    assert_eq!(
        (s["served"].as_u64(), s["cancelled"].as_u64()),
        (Some(0), Some(0)),
        "reset: {s}"
    );
}
