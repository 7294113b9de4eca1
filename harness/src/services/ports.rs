//! Ports for the services a run starts: free ones found by binding port 0, and a port asked for
//! checked before anything starts on it.

use super::contender::LOOPBACK;
use anyhow::{bail, Context, Result};
use std::net::{IpAddr, TcpListener};

/// A free loopback port, found by binding port 0.
pub fn free_port() -> Result<u16> {
    free_port_on(LOOPBACK)
}

/// How many ports handed out lately this process remembers, so as not to hand one out twice.
const PORTS_REMEMBERED: usize = 1024;

/// A free port on one of this machine's addresses, found by binding port 0 there, and not one
/// this process handed out lately. The listener closes before the caller binds the port, so
/// two calls in a row can be given the same port by the kernel, and two servers started one
/// after the other then fight over it (Kafka's broker and controller were once given one port
/// and the broker refused to start; a Go contender's pprof port is found the same way).
pub fn free_port_on(ip: IpAddr) -> Result<u16> {
    static HANDED_OUT: std::sync::Mutex<std::collections::VecDeque<u16>> =
        std::sync::Mutex::new(std::collections::VecDeque::new());
    // A refused port stays bound here until a fresh one is found, so the kernel cannot offer
    // it again.
    let mut refused = Vec::new();
    loop {
        let listener = TcpListener::bind((ip, 0)).with_context(|| {
            format!(
                "cannot bind a port on {ip}; give an address of this machine (`ip -brief address`)"
            )
        })?;
        let port = listener.local_addr()?.port();
        let mut handed_out = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
        if !handed_out.contains(&port) {
            if handed_out.len() == PORTS_REMEMBERED {
                handed_out.pop_front();
            }
            handed_out.push_back(port);
            return Ok(port);
        }
        refused.push(listener);
    }
}

/// `N` distinct free loopback ports.
pub fn free_ports<const N: usize>() -> Result<[u16; N]> {
    let mut ports = [0; N];
    for port in &mut ports {
        *port = free_port()?;
    }
    Ok(ports)
}

/// Fails with a clear message when something already listens on `port` of `ip`.
pub fn ensure_port_free(ip: IpAddr, port: u16) -> Result<()> {
    match TcpListener::bind((ip, port)) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            bail!("port {port} on {ip} is already in use; stop what listens there (`ss -ltnp 'sport = :{port}'`) or choose another port")
        }
        Err(e) => Err(e).with_context(|| {
            format!(
                "cannot bind {ip}:{port}; give an address of this machine (`ip -brief address`)"
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_in_use_is_named() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let e = ensure_port_free(LOOPBACK, port).unwrap_err().to_string();
        assert!(
            e.contains(&format!("port {port} on 127.0.0.1 is already in use")),
            "{e}"
        );
        drop(l);
        assert!(ensure_port_free(LOOPBACK, port).is_ok());
    }

    #[test]
    fn free_ports_found_one_after_another_are_never_the_same() {
        let ports: Vec<u16> = (0..PORTS_REMEMBERED)
            .map(|_| free_port().unwrap())
            .collect();
        let distinct: std::collections::HashSet<_> = ports.iter().collect();
        assert_eq!(distinct.len(), ports.len(), "{ports:?}");
        for _ in 0..100 {
            let [a, b, c] = free_ports().unwrap();
            assert!(a != b && b != c && a != c, "{a} {b} {c}");
        }
    }
}
