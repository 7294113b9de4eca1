//! The harness's integration tests, one binary with a module per feature: linking the whole
//! library once instead of once per file is most of what building the tests cost. Tests that
//! need the machine to themselves, or what only `./iobound test` installs, are `#[ignore]`d and
//! run one at a time in its last phase (`cargo test --release -- --ignored --test-threads=1`).

mod common;
mod dependencies;
mod driver;
mod external;
mod fanout;
mod fanout_summary;
mod faults;
mod fixture;
mod gates;
mod hosts;
mod interrupt;
mod launcher;
mod lifecycle;
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
mod tuning;
mod warmup;
