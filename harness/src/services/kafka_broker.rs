//! The broker's own process: where its jars are (and the load tool's), its KRaft cluster id,
//! storage and properties, its argv, and `iobound agent kafka` becoming the broker on a
//! services host.

use crate::services::contender::Running;
use anyhow::{bail, Context, Result};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where `./iobound build` puts the broker's jars, in the repository (and beside iobound in a
/// services host's run directory).
pub const LIBS: &str = ".cache/kafka/libs";

pub(super) fn has_broker(libs: &Path) -> bool {
    libs.join("kafka_2.13-4.4.0.jar").exists()
}

/// The broker's jars `./iobound build` fetched into this checkout; without them, an error
/// saying so, ending with `otherwise` (another way, e.g. ", or give an external cluster").
pub fn built_libs(root: &Path, otherwise: &str) -> Result<PathBuf> {
    let libs = root.join(LIBS);
    if !has_broker(&libs) {
        bail!("Kafka 4.4.0 is not in {}: run './iobound build' (it copies the broker's jars from Maven Central){otherwise}", libs.display());
    }
    Ok(libs)
}

/// The Kafka load tool's jar, built with the Java contenders.
pub fn tool_jar(root: &Path) -> PathBuf {
    root.join("services/kafka-load/target/kafka-load.jar")
}

/// A KRaft cluster id: 16 random bytes, URL-safe base64 without padding (22 characters).
pub(super) fn cluster_id() -> String {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
        ^ u64::from(std::process::id());
    cluster_id_from(&mut crate::util::numbers::SplitMix64::new(seed))
}

/// Never begins with '-': kafka-storage's argument parser takes such an id for an option and
/// fails ("--cluster-id: expected one argument"), one start in 64. Kafka's own Uuid.randomUuid
/// draws again for the same reason.
pub(super) fn cluster_id_from(rng: &mut crate::util::numbers::SplitMix64) -> String {
    use base64::Engine;
    loop {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&rng.next_u64().to_le_bytes());
        bytes[8..].copy_from_slice(&rng.next_u64().to_le_bytes());
        let id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        if !id.starts_with('-') {
            return id;
        }
    }
}

/// The broker's configuration: both listeners on `address` only (loopback here; the services
/// host's own address there).
pub(super) fn server_properties(
    data: &Path,
    address: IpAddr,
    port: u16,
    controller: u16,
) -> String {
    let a = match address {
        IpAddr::V6(v6) => format!("[{v6}]"),
        v4 => v4.to_string(),
    };
    format!(
        "process.roles=broker,controller\n\
         node.id=1\n\
         controller.quorum.voters=1@{a}:{controller}\n\
         listeners=PLAINTEXT://{a}:{port},CONTROLLER://{a}:{controller}\n\
         advertised.listeners=PLAINTEXT://{a}:{port}\n\
         controller.listener.names=CONTROLLER\n\
         listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n\
         inter.broker.listener.name=PLAINTEXT\n\
         log.dirs={}\n\
         offsets.topic.replication.factor=1\n\
         transaction.state.log.replication.factor=1\n\
         transaction.state.log.min.isr=1\n\
         group.initial.rebalance.delay.ms=0\n",
        data.join("logs").display()
    )
}

/// Formats the broker's storage for KRaft mode (what `kafka-storage.sh format` does).
pub(super) fn format_storage(java: &Path, cp: &str, props: &Path) -> Result<()> {
    let out = std::process::Command::new(java)
        .args([
            "-cp",
            cp,
            "kafka.tools.StorageTool",
            "format",
            "-t",
            &cluster_id(),
            "-c",
        ])
        .arg(props)
        .output()
        .context("cannot run Kafka's StorageTool")?;
    if !out.status.success() {
        bail!(
            "formatting Kafka's storage failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

/// The broker's command line: 512 MB of heap, the jars in `cp`, the configuration `props`.
pub(super) fn broker_argv(java: &Path, cp: String, props: &Path) -> Vec<String> {
    vec![
        java.display().to_string(),
        "-Xms512m".into(),
        "-Xmx512m".into(),
        "-cp".into(),
        cp,
        "kafka.Kafka".into(),
        props.display().to_string(),
    ]
}

/// `iobound agent kafka` on a services host: formats a fresh data directory `data`, then
/// becomes the broker (listening on `address`, from the jars in `libs`, on `java`); its
/// supervisor there pins, watches and stops it.
pub fn serve(
    java: &Path,
    libs: &Path,
    address: IpAddr,
    ports: (u16, u16),
    data: &Path,
) -> Result<()> {
    use std::os::unix::process::CommandExt;
    if !has_broker(libs) {
        bail!("Kafka 4.4.0 is not in {} on this host", libs.display());
    }
    std::fs::create_dir_all(data).with_context(|| format!("cannot create {}", data.display()))?;
    let props = data.join("server.properties");
    std::fs::write(&props, server_properties(data, address, ports.0, ports.1))?;
    let cp = format!("{}/*", libs.display());
    format_storage(java, &cp, &props)?;
    let argv = broker_argv(java, cp, &props);
    let err = std::process::Command::new(&argv[0]).args(&argv[1..]).exec();
    bail!("cannot run {}: {err}", argv[0])
}

/// Waits until the broker listens on `port` (60 s at most); stops it when it does not.
pub(super) fn wait_listening(server: &mut Running, port: u16) -> Result<()> {
    server.wait_until(
        "Kafka",
        &format!("listen on 127.0.0.1:{port}"),
        Duration::from_secs(60),
        || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn cluster_ids_are_kraft_shaped() {
        let id = cluster_id();
        assert_eq!(id.len(), 22);
        assert!(
            id.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "{id}"
        );
    }

    #[test]
    fn cluster_ids_never_look_like_an_option() {
        // One draw in 64 begins with '-' (base64url index 62); 4,000 draws meet it ~62 times.
        let mut rng = crate::util::numbers::SplitMix64::new(7);
        for _ in 0..4000 {
            let id = cluster_id_from(&mut rng);
            assert!(!id.starts_with('-'), "{id}");
            assert_eq!(id.len(), 22);
        }
    }

    #[test]
    fn the_broker_listens_on_loopback_only() {
        let p = server_properties(Path::new("/d"), IpAddr::V4(Ipv4Addr::LOCALHOST), 9092, 9093);
        assert!(p.contains("listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093\n"));
        assert!(
            p.contains("log.dirs=/d/logs\n") && p.contains("offsets.topic.replication.factor=1\n")
        );
        assert!(!p.contains("0.0.0.0"));
    }
}
