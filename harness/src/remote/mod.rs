//! Hosts beyond this machine, reached with the system's OpenSSH client: `ssh` (one
//! multiplexed connection per host, keys only), `check` (what `iobound hosts check` reports:
//! OS, CPUs, memory, clock offset, toolchains) and `deploy` (the per-run directory on each host
//! and the iobound binary copied into it through the SSH channel, removed afterwards). No daemon of ours stays on any
//! host: every remote process is a child of an `iobound agent` whose input is the SSH channel,
//! and ends when that channel closes.
//! Uses: util, plan.

pub mod check;
pub mod deploy;
pub mod ssh;
