//! Helpers shared by the integration tests: the built binary, free ports, child processes.

#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_iobound")
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("harness/ has a parent").to_path_buf()
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Kills the child when dropped, so a failing assertion leaves no server behind.
pub struct Guard(pub Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the built-in test server and waits until it accepts connections.
pub fn serve(extra: &[&str]) -> (Guard, u16) {
    let port = free_port();
    let child = Command::new(exe())
        .args(["serve", "--port", &port.to_string()])
        .args(extra)
        .stderr(Stdio::null())
        .spawn()
        .expect("start iobound serve");
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(t0.elapsed() < Duration::from_secs(10), "iobound serve did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    (Guard(child), port)
}

pub fn run(args: &[&str]) -> Output {
    Command::new(exe()).args(args).env("IOBOUND_HOME", repo_root()).output().expect("run iobound")
}

pub fn json(out: &Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "iobound failed: {}\n{}", text, String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// Adds contender `name` under `home`/contenders, started as `argv` (TOML array items, with
/// {port}), so that a test can run plans against servers of its own.
pub fn add_fake_contender(home: &std::path::Path, name: &str, argv: &str, what: &str) {
    let dir = home.join("contenders").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(home.join("contract")).unwrap();
    std::fs::write(dir.join("server"), "").unwrap();
    std::fs::write(
        dir.join("contender.toml"),
        format!(
            r#"name = "{name}"
model = "event-loop"
language = "rust"
framework = "iobound serve, {what}"
config = "test double"
build = "none"
artifact = "server"
start = [{argv}]
ready = "/plaintext"
"#
        ),
    )
    .unwrap();
}
