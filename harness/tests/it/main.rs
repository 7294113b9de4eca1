//! The harness's integration tests, one binary with a module per feature: linking the whole
//! library once instead of once per file is most of what building the tests cost. Tests that
//! need the machine, or what only `./iobound test` installs, are `#[ignore]`d and run in its
//! last phase, two at a time: each says first whether it takes the machine alone or shares it
//! (common/machine.rs). By hand: `cargo test --release -- --ignored --test-threads=2`.

mod closed_pipe;
mod common;
mod dependencies;
mod driver;
mod dry_run;
mod external;
mod fanout;
mod fanout_summary;
mod faults;
mod fixture;
mod gates;
mod hosts;
mod independent_trend;
mod interrupt;
mod launcher;
mod lifecycle;
mod no_cgroup;
mod pipeline;
mod profile;
mod readme;
mod real_contenders;
mod remote_commands;
mod report;
mod restart;
mod resume;
mod schema;
mod stopped;
mod structure;
mod terminal;
mod tuning;
mod warmup;
mod windows;
