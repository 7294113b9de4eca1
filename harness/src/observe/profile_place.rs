//! Where the profiled contender runs, as its profiler reaches it: this machine, or the
//! contender host through its SSH connection. The profilers' steps (run jcmd or jfr, signal a
//! process, list, read and remove files, GET the contender's loopback-only pprof endpoint) go
//! through a `Place`, so that each profiler is written once for both.

use crate::remote::ssh::Ssh;
use anyhow::{bail, Context, Result};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

#[derive(Clone)]
pub enum Place {
    Here,
    /// The contender host: its connection and the iobound binary there (which fetches the
    /// pprof endpoint on that host's loopback).
    Host {
        ssh: Box<Ssh>,
        binary: String,
    },
}

/// `program args` as a command line for the host's shell.
fn command_line(program: &Path, args: &[&str]) -> String {
    let program = program.display().to_string();
    let words: Vec<&str> = std::iter::once(program.as_str())
        .chain(args.iter().copied())
        .collect();
    crate::util::shell::command_line(&words)
}

impl Place {
    /// Runs `program args` there and returns its standard output; a failure says what ran.
    pub fn run(&self, program: &Path, args: &[&str]) -> Result<String> {
        let (ok, stdout, stderr) = match self {
            Place::Here => {
                let out = Command::new(program)
                    .args(args)
                    .output()
                    .with_context(|| format!("cannot run {}", program.display()))?;
                (out.status.success(), out.stdout, out.stderr)
            }
            Place::Host { ssh, .. } => {
                let out = ssh.run(&command_line(program, args))?;
                (out.status.success(), out.stdout, out.stderr)
            }
        };
        let stdout = String::from_utf8_lossy(&stdout).to_string();
        if !ok {
            bail!(
                "{} {} failed: {}{}",
                program.display(),
                args.join(" "),
                stdout.trim(),
                String::from_utf8_lossy(&stderr).trim()
            );
        }
        Ok(stdout)
    }

    /// Whether `path` is an executable file there.
    pub fn executable(&self, path: &Path) -> bool {
        match self {
            Place::Here => path.exists(),
            Place::Host { .. } => self
                .run(Path::new("test"), &["-x", &path.display().to_string()])
                .is_ok(),
        }
    }

    pub fn make_dir(&self, dir: &Path) -> Result<()> {
        match self {
            Place::Here => std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display())),
            Place::Host { .. } => self
                .run(Path::new("mkdir"), &["-p", &dir.display().to_string()])
                .map(|_| ()),
        }
    }

    pub fn read(&self, path: &Path) -> Result<String> {
        match self {
            Place::Here => std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display())),
            Place::Host { .. } => self.run(Path::new("cat"), &["--", &path.display().to_string()]),
        }
    }

    /// Removes a file, or an empty folder; what is not there is no error.
    pub fn remove(&self, path: &Path) {
        match self {
            Place::Here => {
                let _ = std::fs::remove_file(path).or_else(|_| std::fs::remove_dir(path));
            }
            Place::Host { .. } => {
                // -d: a file or an empty folder, in one round trip.
                let p = path.display().to_string();
                let _ = self.run(Path::new("rm"), &["-f", "-d", "--", &p]);
            }
        }
    }

    /// The files in `dir` whose names end in `.{ext}`, sorted.
    pub fn list(&self, dir: &Path, ext: &str) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = match self {
            Place::Here => std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .collect(),
            Place::Host { .. } => self
                .run(Path::new("ls"), &["-1", "--", &dir.display().to_string()])
                .unwrap_or_default()
                .lines()
                .map(|name| dir.join(name))
                .collect(),
        };
        v.retain(|p| p.extension().is_some_and(|x| x == ext));
        v.sort();
        v
    }

    /// Sends SIGUSR2 to `pid` there.
    pub fn signal_usr2(&self, pid: i32) -> Result<()> {
        match self {
            Place::Here => {
                // SAFETY: kill with a valid signal number has no memory effects.
                if unsafe { libc::kill(pid, libc::SIGUSR2) } != 0 {
                    bail!(
                        "cannot signal the contender (pid {pid}): {}",
                        std::io::Error::last_os_error()
                    );
                }
                Ok(())
            }
            Place::Host { .. } => self
                .run(Path::new("kill"), &["-USR2", &pid.to_string()])
                .map(|_| ()),
        }
    }

    /// GET `path` from `addr`, a loopback address there: the body of a 200 answer.
    pub fn http_get(&self, addr: SocketAddr, path: &str, timeout: Duration) -> Result<Vec<u8>> {
        match self {
            Place::Here => http_get(addr, path, timeout),
            Place::Host { ssh, binary } => {
                let (addr, secs) = (addr.to_string(), timeout.as_secs().to_string());
                let script = crate::util::shell::command_line(&[
                    binary,
                    "agent",
                    "fetch",
                    &addr,
                    path,
                    "--timeout-s",
                    &secs,
                ]);
                let out = ssh.run(&script)?;
                if !out.status.success() {
                    bail!(
                        "fetching {path} on the contender host failed: {}",
                        String::from_utf8_lossy(&out.stderr).trim()
                    );
                }
                Ok(out.stdout)
            }
        }
    }
}

/// A blocking GET on a loopback address of this machine; the body of a 200 answer.
pub fn http_get(addr: SocketAddr, path: &str, timeout: Duration) -> Result<Vec<u8>> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .with_context(|| format!("cannot reach the contender's profiling endpoint at {addr}"))?;
    s.set_read_timeout(Some(timeout))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf)?;
    let split = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .context("the profiling endpoint sent no HTTP answer")?;
    let head = String::from_utf8_lossy(&buf[..split]).to_string();
    if !head.starts_with("HTTP/1.1 200") && !head.starts_with("HTTP/1.0 200") {
        bail!(
            "the profiling endpoint answered {}",
            head.lines().next().unwrap_or("")
        );
    }
    let body = buf[split + 4..].to_vec();
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return dechunk(&body);
    }
    Ok(body)
}

fn dechunk(mut b: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = b
            .windows(2)
            .position(|w| w == b"\r\n")
            .context("a malformed chunk")?;
        let size = usize::from_str_radix(
            std::str::from_utf8(&b[..eol])?
                .split(';')
                .next()
                .unwrap_or("")
                .trim(),
            16,
        )?;
        b = &b[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        out.extend_from_slice(b.get(..size).context("a truncated chunk")?);
        b = b.get(size + 2..).unwrap_or(&[]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_bodies_are_joined() {
        assert_eq!(
            dechunk(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n").unwrap(),
            b"abcde"
        );
    }

    #[test]
    fn a_command_for_the_host_keeps_each_argument_whole() {
        let line = command_line(
            Path::new("/opt/jdk 25/bin/jcmd"),
            &["42", "JFR.start", "filename=/tmp/it's.jfr"],
        );
        assert_eq!(
            line,
            r"'/opt/jdk 25/bin/jcmd' '42' 'JFR.start' 'filename=/tmp/it'\''s.jfr'"
        );
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("printf '%s\\n' {}", line))
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "/opt/jdk 25/bin/jcmd\n42\nJFR.start\nfilename=/tmp/it's.jfr\n"
        );
    }

    #[test]
    fn here_lists_reads_and_removes_what_it_finds() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.cpuprofile"), "{}").unwrap();
        std::fs::write(dir.path().join("a.cpuprofile"), "[]").unwrap();
        std::fs::write(dir.path().join("c.txt"), "").unwrap();
        let here = Place::Here;
        let found = here.list(dir.path(), "cpuprofile");
        assert_eq!(
            found,
            [
                dir.path().join("a.cpuprofile"),
                dir.path().join("b.cpuprofile")
            ]
        );
        assert_eq!(here.read(&found[0]).unwrap(), "[]");
        here.remove(&found[0]);
        assert_eq!(here.list(dir.path(), "cpuprofile").len(), 1);
        assert_eq!(here.run(Path::new("echo"), &["a b"]).unwrap(), "a b\n");
        let e = here.run(Path::new("false"), &[]).unwrap_err();
        assert!(format!("{e:#}").contains("false  failed"), "{e:#}");
    }
}
