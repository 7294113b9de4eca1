//! A server of the user's own as the run's one contender (or its arms): `--url` (where it
//! listens, loopback unless allowed), `--cmd` or `--pid` (what to sample), `--arm` (variants of
//! it compared in one sitting), and what a plan may ask of a server iobound did not build.

use super::args::RunArgs;
use crate::plan::PlanFile;
use crate::run::{External, ExternalArm, ExternalProcess};
use anyhow::{bail, Context, Result};
use std::net::{SocketAddr, ToSocketAddrs};

/// The contender behind `--url`: the plan's contenders, tunables and arms become that server
/// (and its `--arm`s), and its URL gives an ad hoc run's path.
pub fn the_server_behind_url(url: &str, a: &RunArgs, file: &mut PlanFile) -> Result<External> {
    // With --hosts the URL may be on the inventory's contender host (checked later).
    let (addr, path) = parse_url(url, a.load.allow_remote || a.hosts.is_some())?;
    let process = match (a.pid, &a.cmd) {
        (Some(pid), _) => ExternalProcess::Pid(pid),
        (None, Some(cmd)) => ExternalProcess::Cmd(cmd.clone()),
        (None, None) => ExternalProcess::None,
    };
    let arms = external_arms(&a.arm)?;
    if a.plan.is_some() {
        plan_for_a_server(url, &path, a, file)?;
    } else {
        file.scenarios[0].path = Some(path);
    }
    let ext = External {
        addr,
        process,
        arms,
    };
    file.contenders = ext.names();
    file.tunables.clear();
    file.arms.clear();
    Ok(ext)
}

/// Resolves a --url to a socket address and path, refusing non-loopback targets unless allowed.
pub fn parse_url(url: &str, allow_remote: bool) -> Result<(SocketAddr, String)> {
    let rest = url
        .strip_prefix("http://")
        .with_context(|| format!("--url {url:?}: only http:// URLs are supported"))?;
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].to_string()),
        None => (rest, "/".to_string()),
    };
    let with_port = if hostport
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.chars().all(|c| c.is_ascii_digit()))
        && !hostport.ends_with(']')
    {
        hostport.to_string()
    } else {
        format!("{hostport}:80")
    };
    let addr = with_port
        .to_socket_addrs()
        .with_context(|| format!("--url {url:?}: cannot resolve {hostport}"))?
        .next()
        .with_context(|| format!("--url {url:?}: {hostport} has no address"))?;
    if !addr.ip().is_loopback() && !allow_remote {
        bail!("--url {url:?} is not on this machine ({}); iobound only loads loopback targets unless you pass --allow-remote for a server you are responsible for", addr.ip());
    }
    Ok((addr, path))
}

/// `--arm NAME=COMMAND`s: none, or two or more with names of their own.
fn external_arms(flags: &[String]) -> Result<Vec<ExternalArm>> {
    let arms = flags
        .iter()
        .map(|f| ExternalArm::parse(f))
        .collect::<Result<Vec<_>>>()?;
    if arms.len() == 1 {
        bail!("--arm {}: one arm has nothing to be compared with; give two or more (one per variant of the server), or --cmd for one server", arms[0].name);
    }
    for (i, arm) in arms.iter().enumerate() {
        if arms[..i].iter().any(|a| a.name == arm.name) {
            bail!(
                "--arm {}: two arms have this name; give each variant a name of its own",
                arm.name
            );
        }
    }
    Ok(arms)
}

/// A plan's scenarios against the server behind --url: the URL gives only where it listens,
/// the scenarios their paths. What only iobound's own services or contenders can do (Kafka
/// pipelines, downstream settings and mid-run changes, restarts) is refused here, before
/// anything starts.
fn plan_for_a_server(url: &str, path: &str, a: &RunArgs, file: &PlanFile) -> Result<()> {
    if path != "/" {
        bail!("--url {url} with --plan: give only where the server listens (http://HOST:PORT); the plan's scenarios give the paths");
    }
    if !a.contenders.is_empty() {
        bail!("--contender with --url: the server behind --url is the one contender; leave out --contender");
    }
    for s in &file.scenarios {
        let needs = if s.pipeline {
            Some("Kafka and a pipeline contender (pipeline = true)")
        } else if s.downstream.is_some() || !s.events.is_empty() {
            Some("iobound's downstream service, which a server of your own does not call (downstream settings or events)")
        } else if s.restart == Some(true) {
            Some("restarting the contender between scenarios (restart = true)")
        } else {
            None
        };
        if let Some(needs) = needs {
            bail!("scenario {:?} needs {needs}; it cannot run against --url: leave it out of the plan, or drop --url to run the built-in contenders", s.name);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_targets_need_allow_remote() {
        assert!(parse_url("http://127.0.0.1:8080/plaintext", false).is_ok());
        assert_eq!(
            parse_url("http://127.0.0.1:8080/x?y=1", false).unwrap().1,
            "/x?y=1"
        );
        assert_eq!(parse_url("http://[::1]:81", false).unwrap().0.port(), 81);
        let e = parse_url("http://192.0.2.1:80/", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--allow-remote"), "{e}");
        assert!(parse_url("http://192.0.2.1:80/", true).is_ok());
        assert!(parse_url("https://127.0.0.1/", false)
            .unwrap_err()
            .to_string()
            .contains("only http://"));
    }
}
