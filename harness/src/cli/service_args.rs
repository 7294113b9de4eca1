//! The flags of the services iobound can run on their own: the downstream service of /enrich
//! (`iobound downstream`) and the built-in test server (`iobound serve`).

use clap::Args;

/// A flag that must be a duration ("10s", "1500ms"), checked as clap reads it.
pub fn duration_arg(s: &str) -> std::result::Result<String, String> {
    crate::util::units::parse_duration(s)
        .map(|_| s.to_string())
        .map_err(|e| e.to_string())
}

#[derive(Args)]
pub struct DownstreamArgs {
    #[arg(long, default_value_t = 8081)]
    pub port: u16,
    /// Address to listen on: a services host's, for a server on another host to call
    #[arg(long, value_name = "IPV4", default_value = "127.0.0.1")]
    pub address: std::net::Ipv4Addr,
    /// Latency of each answer: fixed:100ms, uniform:50ms..150ms or lognormal:100ms,0.5
    /// (median, sigma)
    #[arg(long, default_value = "fixed:100ms")]
    pub latency: String,
    /// Share of requests answered 500 (0..1)
    #[arg(long, default_value = "0")]
    pub error_rate: String,
    /// Share of requests that stall for --stall-for before their answer (0..1)
    #[arg(long, default_value = "0")]
    pub stall_prob: String,
    #[arg(long, default_value = "10s", value_parser = duration_arg)]
    pub stall_for: String,
    /// Seed of the latency and fault draws
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

#[derive(Args)]
pub struct ServeArgs {
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Address to listen on (default 127.0.0.1): another one for a server on a host of its
    /// own, driven by `run --hosts`
    #[arg(long, value_name = "IPV4")]
    pub address: Option<std::net::Ipv4Addr>,
    /// Stall once, this long after the first request
    #[arg(long, value_parser = duration_arg)]
    pub stall_at: Option<String>,
    /// How long the stall lasts
    #[arg(long, default_value = "1s", value_parser = duration_arg)]
    pub stall_for: String,
    /// Serve at most N requests at once (the rest queue): with /delay?ms=D its capacity is
    /// N x 1000 / D requests per second
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub workers: Option<u32>,
    /// A stand-in for a JIT: each request burns CPU, 400 µs at the first request falling
    /// linearly to nothing over this long, so throughput climbs, then settles
    #[arg(long, value_name = "D", value_parser = duration_arg)]
    pub jit_warmup: Option<String>,
    /// A JIT climb with a plateau: 400 µs per request falling to 300 µs over 3 s, flat for
    /// this long, then falling to nothing over 10 s (a flat stretch a warm-up can mistake for
    /// steady state)
    #[arg(long, value_name = "D", value_parser = duration_arg, conflicts_with = "jit_warmup")]
    pub jit_plateau: Option<String>,
    /// Keep this many KB per request, never freed (a leak: what a memory limit does to it)
    #[arg(long, value_name = "KB", value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub leak_kb: Option<u64>,
}
