//! `iobound agent ...`: what the controller runs on a host over SSH (hidden from --help). Each
//! lives as long as its SSH channel; none stays after the run.

use super::remote_args::AgentCmd;
use anyhow::{bail, Context, Result};
use std::path::Path;

/// Runs one agent command.
pub fn run(what: AgentCmd) -> Result<i32> {
    match what {
        AgentCmd::Drive => drive(),
        AgentCmd::Contender => contender(),
        AgentCmd::Probe { address, ports } => probe(address, ports),
        AgentCmd::Postgres {
            address,
            port,
            data,
        } => {
            crate::remote::ship::serve_postgres(address, port, &data)?;
            Ok(0)
        }
        AgentCmd::Kafka {
            address,
            port,
            controller_port,
            data,
        } => kafka(address, (port, controller_port), &data),
        AgentCmd::Fetch {
            address,
            path,
            timeout_s,
        } => fetch(address, &path, timeout_s),
    }
}

/// What `iobound agent drive` exits with when its controller stopped reading.
const EXIT_STUCK: i32 = 3;

/// `iobound agent drive`: a load host's driver, taking its share on stdin and streaming its
/// intervals on stdout. Still running OVERRUN_GRACE after its load's end (its controller froze
/// or was cut off without the channel closing), it removes its per-run directory and exits.
fn drive() -> Result<i32> {
    use crate::driver::remote::{agent, Ending, OVERRUN_GRACE};
    let stdin = std::io::BufReader::new(std::io::stdin());
    let ending = agent(stdin, &mut std::io::stdout().lock(), OVERRUN_GRACE, || {
        eprintln!(
            "iobound agent drive: still running {} s after its load's end: the controller stopped reading; exiting",
            OVERRUN_GRACE.as_secs()
        );
        if let Ok(exe) = std::env::current_exe() {
            crate::remote::supervisor::remove_run_dir_of(&exe);
        }
        std::process::exit(EXIT_STUCK)
    })?;
    if ending == Ending::ControllerLost {
        eprintln!(
            "iobound agent drive: the controller went away mid-load; removing the run's directory"
        );
        if let Ok(exe) = std::env::current_exe() {
            crate::remote::supervisor::remove_run_dir_of(&exe);
        }
    }
    Ok(0)
}

/// `iobound agent contender`: the supervisor and sampler of a process on its host. Left by its
/// controller without being asked to stop (silent, killed, or cut off), it also removes the
/// per-run directory it was copied into: the controller always says "stop" before it lets go.
fn contender() -> Result<i32> {
    use crate::remote::supervisor::{agent, remove_run_dir_of, Ended, SILENCE_LIMIT};
    let stdin = std::io::BufReader::new(std::io::stdin());
    let ended = agent(stdin, &mut std::io::stdout().lock(), SILENCE_LIMIT)?;
    if ended != Ended::Asked {
        if let Ok(exe) = std::env::current_exe() {
            remove_run_dir_of(&exe);
        }
    }
    Ok(0)
}

/// `iobound agent probe ADDRESS`: free ports there and this host's JDK, as one JSON line.
fn probe(address: std::net::IpAddr, ports: usize) -> Result<i32> {
    let probe = crate::remote::ship::Probe::here(address, ports)?;
    println!("{}", serde_json::to_string(&probe)?);
    Ok(0)
}

/// `iobound agent fetch ADDRESS PATH`: a GET on this host's loopback, the body to stdout.
fn fetch(address: std::net::SocketAddr, path: &str, timeout_s: u64) -> Result<i32> {
    if !address.ip().is_loopback() {
        bail!("{address}: agent fetch reads this host's loopback only");
    }
    let timeout = std::time::Duration::from_secs(timeout_s);
    let body = crate::observe::profile_place::http_get(address, path, timeout)?;
    std::io::Write::write_all(&mut std::io::stdout().lock(), &body)?;
    Ok(0)
}

/// `iobound agent kafka`: the Kafka broker on a services host, in the foreground, from the
/// jars copied beside this binary and the host's JDK.
fn kafka(address: std::net::IpAddr, ports: (u16, u16), data: &Path) -> Result<i32> {
    let java = crate::services::jdk::find_java().context(
        "this host has no JDK >= 21 for the Kafka broker (looked at $JAVA_HOME and /usr/lib/jvm)",
    )?;
    let exe = std::env::current_exe()?;
    let libs = exe
        .parent()
        .unwrap_or(Path::new("."))
        .join(crate::services::kafka_broker::LIBS);
    crate::services::kafka_broker::serve(&java, &libs, address, ports, data)?;
    Ok(0)
}
