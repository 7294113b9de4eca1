//! iobound: runs the same I/O-bound service work on each concurrency model, side by side,
//! under the same load, and reports what each one delivers and costs.
//!
//! One folder per stage, in the order data flows; a stage uses the stages above it (and
//! `util`), never one below:
//!
//! ```text
//! util         shared: durations, CPUs, clocks, median, atomic writes, Ctrl-C, HTTP/1.1, progress
//! plan         the experiment: TOML shapes -> validated model (scenarios, load, workload)
//! driver       load (closed, open), recording, the run's summary, the driver's self-report
//! services     what contenders need and are: corpus, downstream, PostgreSQL, Kafka, JDK,
//!              contender processes and manifests, the built-in test server
//! sampler      the contender's threads, memory, CPU, sockets from /proc
//! conformance  the contract: cases, fuzzing, the pipeline's delivery check
//! remote       hosts beyond this machine over OpenSSH: connections, `hosts check`, the
//!              per-run directory and binary on each load host
//! results      the record of a run (results.json) and its parts: details, environment,
//!              warm-up and window checks, GC, profiles, cold starts, faults; read by all below
//! observe      what is watched of a running contender and how it is judged: settling, the
//!              measured window (the steady-state rule and its error rates), GC, event-loop
//!              delay, CPU profiles, start times
//! stats        estimates over repeats, intervals, differences, verdicts
//! run          one contender round after another, measured and written as results, judged
//!              after every round
//! report       one results directory's outputs: terminal table, Markdown, CSV, HTML, charts,
//!              compare
//! pages        README and docs pages rendered from committed results: markers, figures,
//!              tables, the page lint, each plan's machine time
//! cli          the command line: arguments -> plan -> run -> report (uses every stage)
//! ```

pub mod cli;
pub mod conformance;
pub mod driver;
pub mod observe;
pub mod pages;
pub mod plan;
pub mod remote;
pub mod report;
pub mod results;
pub mod run;
pub mod sampler;
pub mod services;
pub mod stats;
pub mod util;
