// The compiler's version, for `rust-axum --version` (iobound names the runtime of every contender).
fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let version = out
        .split_whitespace()
        .nth(1)
        .unwrap_or("unknown")
        .to_string();
    println!("cargo:rustc-env=IOBOUND_RUSTC_VERSION={version}");
}
