//! The commands of hosts beyond this machine: `iobound hosts` (for users) and `iobound agent`
//! (what the harness runs on a host over SSH, hidden from --help).

use clap::Subcommand;
use std::net::IpAddr;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum HostsCmd {
    /// Connect to every host of an inventory and report OS, CPUs, memory, clock offset and
    /// the tools its roles need (with how to install what is missing); changes nothing
    Check {
        #[arg(value_name = "INVENTORY")]
        file: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum AgentCmd {
    /// Read a load job on standard input, drive it, stream per-second histograms on standard
    /// output; stops when its input says "stop" or closes
    Drive,
    /// Read a job on standard input, start (or adopt) the server it names, pinned, and answer
    /// one line per command (sample, status, stop); stops the server when its input closes
    Contender,
    /// Print, as one JSON line, free TCP ports of ADDRESS on this host and the JDK (>= 21)
    /// a JVM contender would start with here
    Probe {
        #[arg(value_name = "ADDRESS")]
        address: IpAddr,
        /// How many distinct free ports
        #[arg(long, default_value_t = 1)]
        ports: usize,
    },
    /// Make a fresh PostgreSQL data directory and run the server in the foreground, listening
    /// on ADDRESS:PORT; connections from other hosts need the password in IOBOUND_DB_PASSWORD
    Postgres {
        #[arg(long)]
        address: IpAddr,
        #[arg(long)]
        port: u16,
        /// The data directory, made afresh (anything there is removed first)
        #[arg(long)]
        data: PathBuf,
    },
    /// Format a fresh Kafka data directory and run the broker (KRaft, broker and controller in
    /// one process) in the foreground, listening on ADDRESS:PORT, from the jars in
    /// .cache/kafka/libs beside this binary
    Kafka {
        #[arg(long)]
        address: IpAddr,
        #[arg(long)]
        port: u16,
        /// The KRaft controller's port
        #[arg(long)]
        controller_port: u16,
        /// The data directory, made afresh
        #[arg(long)]
        data: PathBuf,
    },
    /// GET PATH from ADDRESS (a loopback address of this host) and write the body of its 200
    /// answer to standard output (a contender's pprof profile, for --profile)
    Fetch {
        #[arg(value_name = "ADDRESS")]
        address: std::net::SocketAddr,
        #[arg(value_name = "PATH")]
        path: String,
        /// How long to wait for the whole answer
        #[arg(long, default_value_t = 60)]
        timeout_s: u64,
    },
}
