//! `iobound bench driver`: what the driver costs per request, against `wrk` on the same target,
//! same connections, same CPU. Both run as child processes pinned to the driver CPU and their
//! CPU time comes from the kernel (wait4 rusage), so neither measures itself.

use crate::services::{contender, ports};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

pub struct BenchArgs {
    pub connections: u32,
    pub duration: Duration,
    pub repeats: u32,
    pub path: String,
    pub server_cpus: Vec<usize>,
    pub driver_cpus: Vec<usize>,
}

#[derive(Debug, Serialize)]
pub struct ToolRun {
    pub tool: String,
    pub requests: u64,
    pub cpu_s: f64,
    pub cpu_s_per_100k: f64,
    pub rps: f64,
}

/// Runs `argv` pinned to `cpus`, waits for it with wait4, returns (stdout, CPU seconds).
fn run_measured(argv: &[String], cpus: &[usize]) -> Result<(String, f64)> {
    let cpus = cpus.to_vec();
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for c in &cpus {
                libc::CPU_SET(*c, &mut set);
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child = cmd.spawn().with_context(|| {
        format!(
            "cannot run {} (is it installed? `apt-get install {}`)",
            argv[0], argv[0]
        )
    })?;
    let mut out = String::new();
    if let Some(mut so) = child.stdout.take() {
        use std::io::Read;
        so.read_to_string(&mut out)?;
    }
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 reaps our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    if unsafe { libc::wait4(pid, &mut status, 0, &mut usage) } != pid {
        bail!("wait4 failed for {}", argv[0]);
    }
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        bail!("{} failed (status {status}); output:\n{out}", argv[0]);
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok((out, tv(usage.ru_utime) + tv(usage.ru_stime)))
}

/// Total requests from wrk's "N requests in Xs" line.
pub fn parse_wrk_requests(out: &str) -> Option<u64> {
    out.lines().find_map(|l| {
        let l = l.trim();
        let (n, rest) = l.split_once(' ')?;
        rest.starts_with("requests in")
            .then(|| n.parse().ok())
            .flatten()
    })
}

fn tool_run(tool: &str, requests: u64, cpu_s: f64, secs: f64) -> ToolRun {
    ToolRun {
        tool: tool.into(),
        requests,
        cpu_s,
        cpu_s_per_100k: if requests > 0 {
            cpu_s * 100_000.0 / requests as f64
        } else {
            f64::NAN
        },
        rps: requests as f64 / secs,
    }
}

pub fn driver(exe: &Path, args: &BenchArgs) -> Result<Vec<(ToolRun, ToolRun)>> {
    let port = ports::free_port()?;
    let dir = tempfile_dir()?;
    let argv: Vec<String> = vec![
        exe.display().to_string(),
        "serve".into(),
        "--port".into(),
        port.to_string(),
    ];
    let mut server = contender::start(
        &argv,
        &dir,
        &args.server_cpus,
        port,
        &dir.join("serve.log"),
        &[],
    )?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    server.wait_ready(&rt, "/plaintext", Duration::from_secs(10))?;
    let url = format!("http://127.0.0.1:{port}{}", args.path);
    let secs = args.duration.as_secs().max(1);
    let mut pairs = Vec::new();
    for rep in 1..=args.repeats {
        let wrk: Vec<String> = [
            "wrk",
            "-t1",
            &format!("-c{}", args.connections),
            &format!("-d{secs}s"),
            &url,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (out, cpu) = run_measured(&wrk, &args.driver_cpus)?;
        let n = parse_wrk_requests(&out)
            .with_context(|| format!("cannot read wrk's request count from:\n{out}"))?;
        let w = tool_run("wrk", n, cpu, secs as f64);
        let ours: Vec<String> = [
            exe.display().to_string(),
            "load".into(),
            "--url".into(),
            url.clone(),
            "--users".into(),
            args.connections.to_string(),
            "--duration".into(),
            format!("{secs}s"),
        ]
        .to_vec();
        let (out, cpu) = run_measured(&ours, &args.driver_cpus)?;
        let v: serde_json::Value = serde_json::from_str(&out)
            .with_context(|| format!("iobound load printed no JSON:\n{out}"))?;
        let requests = v["ok"].as_u64().unwrap_or(0)
            + v["errors"].as_u64().unwrap_or(0)
            + v["drained"].as_u64().unwrap_or(0);
        let i = tool_run("iobound", requests, cpu, secs as f64);
        eprintln!(
            "repeat {rep}: wrk {:.0} req/s, {:.3} CPU-s/100k | iobound {:.0} req/s, {:.3} CPU-s/100k | ratio {:.2}",
            w.rps, w.cpu_s_per_100k, i.rps, i.cpu_s_per_100k, i.cpu_s_per_100k / w.cpu_s_per_100k
        );
        pairs.push((w, i));
    }
    server.stop(Duration::from_secs(2));
    let _ = std::fs::remove_dir_all(&dir);
    Ok(pairs)
}

/// A private working directory (see `util::files::private_temp_dir`), removed by the caller.
fn tempfile_dir() -> Result<std::path::PathBuf> {
    Ok(crate::util::files::private_temp_dir("iobound-bench-")?.keep())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_wrk_output() {
        let out = "Running 8s test @ http://127.0.0.1:1/plaintext\n  1 threads and 64 connections\n  1033021 requests in 8.10s, 119.21MB read\nRequests/sec: 127533.45\n";
        assert_eq!(parse_wrk_requests(out), Some(1_033_021));
        assert_eq!(parse_wrk_requests("nothing"), None);
    }
}
