//! Hosts beyond this machine, reached with the system's OpenSSH client: `ssh` (one multiplexed
//! connection per host, keys only), `check` (what `iobound hosts check` reports: OS, CPUs, memory,
//! clock offset, toolchains), `deploy` (the per-run directory on each host and the iobound binary
//! copied into it through the SSH channel, removed afterwards), and the server on the contender
//! host: `contender` (the controller's handle on it) and `supervisor` (`iobound agent contender`
//! there: start or adopt it, sample it from that host's /proc, stop it), `ship` (a built-in
//! contender's files and PostgreSQL's binaries copied to a host), `services_host` (the downstream
//! service, PostgreSQL and Kafka started on the services host) `load_hosts` (the HTTP driver's
//! agents on the load hosts, driven; their seconds merged by `load_merge`) and `record_load` (the
//! pipelines' Kafka load tool run from the load hosts). No daemon of ours stays on any host: every
//! remote process is a child of an `iobound agent` whose input is the SSH channel, and ends when
//! that channel closes.
//! Uses: util, plan, driver (a load host's job, share and seconds), services (starting a
//! process, on the contender host), sampler.

pub mod check;
pub mod contender;
pub mod deploy;
pub mod load_hosts;
mod load_merge;
pub mod record_load;
pub mod services_host;
pub mod ship;
pub mod ssh;
pub mod supervisor;
