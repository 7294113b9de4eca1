//! The command line's words: subcommands, flags, their help and the checks clap makes of them.

use super::help::{ABOUT, CAPACITY_HELP, COMPARE_HELP, HOSTS_HELP, LONG_ABOUT, RUN_HELP};
pub use super::load_args::LoadArgs;
pub use super::remote_args::{AgentCmd, HostsCmd};
pub use super::service_args::{duration_arg, DownstreamArgs, ServeArgs};
use crate::plan;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "iobound", version, about = ABOUT, long_about = LONG_ABOUT)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
    /// Print every contract case (PASS and FAIL), not one line per contender
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

#[derive(Subcommand)]
pub enum Cmd {
    /// Run a plan file, or an ad hoc comparison described by flags, and write results
    #[command(after_help = RUN_HELP)]
    Run(RunArgs),
    /// Find each contender's capacity: the highest open-model rate at which an SLO holds
    #[command(after_help = CAPACITY_HELP)]
    Capacity(CapacityArgs),
    /// Run the default comparison (plans/demo.toml) and print the table
    Demo {
        /// Parent directory of the timestamped results directory
        #[arg(long, default_value = "results", value_name = "DIR")]
        out: PathBuf,
    },
    /// Start contenders one by one and check them against the contract (nothing is measured)
    Verify {
        /// Contenders to check (default: all)
        contenders: Vec<String>,
        /// Also send this many generated hostile inputs (huge, negative, non-ASCII, path
        /// traversal, oversized); every one must get a 4xx and the contender must keep serving.
        /// Contenders that run one build (spring-mvc and spring-mvc-virtual) get them once,
        /// the first of them checked
        #[arg(long, value_name = "N", default_value_t = 0)]
        fuzz: usize,
        /// Seed of the generated inputs (the same seed gives the same inputs)
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// PostgreSQL for /messages (default: an embedded one); see `run --db-url`
        #[arg(long, value_name = "URL")]
        db_url: Option<String>,
        /// Allow a --db-url or --kafka-bootstrap that is not on this machine
        #[arg(long)]
        allow_remote: bool,
        /// Kafka for the pipeline contenders (default: an embedded broker); see `run --kafka-bootstrap`
        #[arg(long, value_name = "HOST:PORT")]
        kafka_bootstrap: Option<String>,
        /// Address (of this machine) the contenders listen on, their `{address}`: 127.0.0.2
        /// checks that each listens where told, as on a contender host of its own
        #[arg(long, value_name = "IP", default_value = "127.0.0.1")]
        address: std::net::IpAddr,
        /// The contenders' timeout calling the downstream service, as a plan's `[downstream]
        /// timeout` sets it: the contract's stall cases check that each gives up at it (and
        /// wait it out once per contender, so a short one checks faster)
        #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = downstream_timeout)]
        downstream_timeout: std::time::Duration,
    },
    /// List the contenders with their model, framework and tunables
    List {
        /// Instead: each folder's build for the launcher, a tab-separated line per folder
        /// (toolchain, folder, install, output, inputs, command, test, check, format; "-": none)
        #[arg(long)]
        builds: bool,
        /// With --builds: only what this plan needs built (contenders, their jars' modules, services)
        #[arg(long, value_name = "PLAN", requires = "builds")]
        plan: Option<PathBuf>,
    },
    /// List the plans with their last committed measurement, its cost and the pages quoting it
    Plans {
        /// Also print, per plan, each scenario's last round in the replay and how it ended
        #[arg(long)]
        rounds: bool,
    },
    /// Print the comparison table of an existing results directory or results.json
    Table {
        #[arg(value_name = "RESULTS")]
        path: PathBuf,
        /// Markdown with one row per contender, for READMEs and pull requests
        #[arg(long)]
        markdown: bool,
        /// Instead: the headline figures as JSON for a continuous-benchmarking tool
        #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "markdown")]
        export: Option<crate::report::export::Format>,
    },
    /// Write the tables and figures marked in README and docs from their committed results
    Render {
        /// Pages [default: README.md, CONTRIBUTING.md, docs/**/*.md]
        pages: Vec<PathBuf>,
        /// Change nothing; exit 1 when a page differs
        #[arg(long)]
        check: bool,
    },
    /// Rebuild every output of a results directory from its results.json: summary.txt,
    /// report.html, report.md, metrics.csv, intervals.csv, resources.csv and charts/*.png
    Report {
        #[arg(value_name = "RESULTS_DIR")]
        path: PathBuf,
        /// Judge the stored runs again by today's verdict rules (settled runs only, a
        /// saturated driver said, inside the margin "equivalent") and write the verdicts back
        #[arg(long)]
        rejudge: bool,
    },
    /// Compare two result sets (e.g. before and after a tuning change): medians, labelled
    /// intervals, and whether each change is significant (Mann-Whitney over runs, >= 4 each)
    #[command(after_help = COMPARE_HELP)]
    Compare {
        /// The baseline (a results directory or results.json)
        #[arg(value_name = "BEFORE")]
        a: PathBuf,
        /// The candidate
        #[arg(value_name = "AFTER")]
        b: PathBuf,
        /// Fail (exit status 4) when a metric changes beyond a limit AND the change is
        /// significant: 'p99 > +10%' (a rise of over 10%), 'throughput < -5%' (a fall of over 5%)
        #[arg(long = "fail-if", value_name = "RULE")]
        fail_if: Vec<String>,
        /// Also write the gates as a JUnit XML report (a failure per failed gate, a skip per
        /// change beyond its limit that could not be tested)
        #[arg(long, value_name = "FILE", requires = "fail_if")]
        junit: Option<PathBuf>,
    },
    /// Benchmarks of iobound itself
    Bench {
        #[command(subcommand)]
        what: BenchCmd,
    },
    /// Run the downstream service of /enrich on its own (the harness starts one for every plan)
    Downstream(DownstreamArgs),
    /// Hosts beyond this machine: check an inventory before a run with --hosts
    #[command(after_help = HOSTS_HELP)]
    Hosts {
        #[command(subcommand)]
        what: HostsCmd,
    },
    /// What iobound runs on a remote host, started over SSH by the harness
    #[command(hide = true)]
    Agent {
        #[command(subcommand)]
        what: AgentCmd,
    },
    /// Built-in test server (driver benchmark target; can stall once, like a GC pause)
    #[command(hide = true)]
    Serve(ServeArgs),
    /// Drive one URL and print a JSON summary (used by `bench driver` and tests)
    #[command(hide = true)]
    Load {
        #[command(flatten)]
        load: LoadArgs,
        /// CPUs the driver thread is pinned to (taskset -c syntax); their busy share is
        /// watched per second
        #[arg(long, value_name = "LIST")]
        driver_cpus: Option<String>,
    },
}

#[derive(Subcommand)]
pub enum BenchCmd {
    /// CPU per request of the iobound driver against wrk, same target, connections and CPU
    Driver {
        /// Concurrent connections for both tools
        #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=20_000))]
        connections: u32,
        /// Length of each tool's run
        #[arg(long, default_value = "8s", value_parser = duration_arg)]
        duration: String,
        /// Interleaved repeats (wrk, iobound, wrk, iobound, ...)
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=50))]
        repeats: u32,
        /// Path on the built-in server: /plaintext, or /delay?ms=N
        #[arg(long, default_value = "/plaintext")]
        path: String,
        /// Print the figures as JSON on stdout
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
pub struct RunArgs {
    /// Plan file (TOML) with contenders, scenarios and load; see plans/. Its scenarios set
    /// their own load: the flags that describe one (--path, --users, --rate, --duration,
    /// --timeout, ...) are refused beside it
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Contenders to run, comma separated (with --plan: a subset of the plan's)
    #[arg(
        short = 'c',
        long = "contender",
        value_name = "NAMES",
        value_delimiter = ','
    )]
    pub contenders: Vec<String>,
    /// With --plan: the plan's scenarios to run, comma separated (by name; the others are left
    /// out), e.g. to measure one scenario of a plan beside another plan that has only it
    #[arg(
        short = 's',
        long = "scenario",
        value_name = "NAMES",
        value_delimiter = ',',
        requires = "plan"
    )]
    pub scenarios: Vec<String>,
    /// Path to request (ad hoc runs), e.g. /delay?ms=100
    #[arg(long, value_name = "PATH")]
    pub path: Option<String>,
    #[command(flatten)]
    pub load: LoadArgs,
    /// With --url: the server's process id; it and its children are sampled (threads, RSS, CPU,
    /// sockets) like a built-in contender. With --hosts: a process on the contender host,
    /// sampled there
    #[arg(long, value_name = "PID", requires = "url", conflicts_with = "cmd")]
    pub pid: Option<i32>,
    /// With --url: a shell command that starts the server; iobound starts it on the contender
    /// CPUs, waits for the URL's port, samples it, and stops it after each repeat. With
    /// --hosts it runs on the contender host, pinned to that host's `cpus`, in a private
    /// directory where $IOBOUND_BIN is iobound (e.g. --cmd '"$IOBOUND_BIN" serve --address
    /// 10.0.0.2 --port 8080'), and is sampled there
    #[arg(long, value_name = "COMMAND", requires = "url")]
    pub cmd: Option<String>,
    /// With --url, two or more: variants of your server as arms of one sitting, each NAME a
    /// contender of its own started by its COMMAND (as --cmd starts one) in turn in every
    /// round, A B A B, so that the verdicts compare the variants, not two sittings (e.g.
    /// --arm base='./server --port 8080' --arm cached='./server --port 8080 --cache')
    #[arg(long, value_name = "NAME=COMMAND", requires = "url", conflicts_with_all = ["cmd", "pid"])]
    pub arm: Vec<String>,
    /// Inventory of hosts (hosts.toml, or an Ansible INI or YAML inventory): the load comes
    /// from its `load` hosts over SSH, each driving its share. With --url the server is on
    /// its `contender` host (--cmd starts it there, --pid or --cmd sample it); without, the
    /// built-in contenders are copied there, their services (PostgreSQL, Kafka, downstream)
    /// started on its `services` host, a pipeline's records sent from the load hosts. Check
    /// it first with `iobound hosts check FILE`
    #[arg(long, value_name = "FILE")]
    pub hosts: Option<PathBuf>,
    /// Warm-up before each measured run (not recorded)
    #[arg(long, value_name = "D", value_parser = duration_arg)]
    pub warmup: Option<String>,
    /// Repeats of each contender x scenario, interleaved (A B A B ..., a fresh process each):
    /// a number, or "auto" to repeat until every headline difference (throughput, p99 of all
    /// requests, CPU per request) is decided, different or equivalent, at most 12 runs (see
    /// --budget). Default: the plan's `runs` (4 when a plan does not say), 1 for an ad hoc run.
    /// A number measures a plan written for "auto" that many times, its budget set aside
    #[arg(long, value_name = "N|auto", value_parser = runs_arg)]
    pub runs: Option<String>,
    /// With --runs auto (or a plan's runs = "auto"): stop repeating before another round would
    /// pass this, e.g. 15m
    #[arg(long, value_name = "D", value_parser = duration_arg)]
    pub budget: Option<String>,
    /// Differences whose interval lies within this are called equivalent (default 5%)
    #[arg(long, value_name = "PCT")]
    pub margin: Option<String>,
    /// Heap for every JVM contender (-Xms = -Xmx), e.g. 512m
    #[arg(long, value_name = "SIZE")]
    pub heap: Option<String>,
    /// CPUs the contender is pinned to (taskset -c syntax)
    #[arg(long, value_name = "LIST")]
    pub contender_cpus: Option<String>,
    /// A CPU quota for every contender, as a container's `cpus` limit: N CPUs of time every
    /// 100 ms period (CFS), in a cgroup of its own, on top of its pinning, e.g. 0.5
    #[arg(long, value_name = "N")]
    pub cpus: Option<f64>,
    /// A hard memory limit for every contender (swap off; past it the kernel kills), e.g. 512m
    #[arg(long, value_name = "SIZE")]
    pub memory: Option<String>,
    /// CPUs the driver (and the rest of the harness) is pinned to
    #[arg(long, value_name = "LIST")]
    pub driver_cpus: Option<String>,
    /// CPUs for PostgreSQL, Kafka and the downstream service (default: CPUs of their own when
    /// the machine has >= 4, else the driver's, which they then share)
    #[arg(long, value_name = "LIST")]
    pub services_cpus: Option<String>,
    /// Driver threads (default: one per driver CPU)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub driver_threads: Option<u32>,
    /// Set a contender tunable, e.g. --set spring-mvc.threads=500 (see `iobound list`)
    #[arg(long = "set", value_name = "NAME.KEY=VALUE")]
    pub sets: Vec<String>,
    /// Parent directory of the timestamped results directory
    #[arg(long, default_value = "results", value_name = "DIR")]
    pub out: PathBuf,
    /// Check the plan and flags and say what would run (contenders, scenarios and their load,
    /// runs, and the longest the measurements could take), then stop: nothing is built,
    /// started or written
    #[arg(long)]
    pub dry_run: bool,
    /// Continue the plan whose results are in DIR (interrupted, or stopped by its budget)
    /// instead of starting anew: rounds it finished are kept, a round cut short is measured
    /// again, and `runs = "auto"` goes on deciding from every run kept. Give the same plan and
    /// flags (--budget may change: a budget is per sitting)
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    pub resume: Option<PathBuf>,
    /// A limit every contender must keep in every scenario, e.g. --threshold 'p99<=200ms'
    /// --threshold 'errors<=0.1%' --threshold 'throughput>=5000' (replaces the plan's for that
    /// metric). A run that breaks one exits with status 4 and says which and by how much.
    /// Metrics: throughput, errors, p50, p75, p90, p95, p99, p99_all, p999, max, mean, threads,
    /// rss, cpu, sockets
    #[arg(long = "threshold", value_name = "RULE")]
    pub thresholds: Vec<String>,
    /// A CPU profile of each contender during every measured run, drawn as a flame graph and
    /// linked from the report: JFR for the JVMs, pprof for Go, V8's profiler for Node (sampling
    /// every 10 ms; see the README for what it costs)
    #[arg(long)]
    pub profile: bool,
    /// Also write the threshold checks as a JUnit XML report (one test case per contender,
    /// scenario and threshold), for CI systems that show those
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// With arms (--arm, or a plan's [arms]): fail (exit status 4) when an arm differs from the
    /// contender it is an arm of (with --arm, the first) beyond a limit AND significantly, as
    /// `compare --fail-if` does between two sittings: 'p99 > +10%', 'throughput < -5%'
    #[arg(long = "fail-if", value_name = "RULE")]
    pub fail_if: Vec<String>,
    /// PostgreSQL for /messages, e.g. postgresql://app:secret@127.0.0.1:5432/bench; default:
    /// an embedded server started (and removed) by iobound. The harness drops and recreates a
    /// table named `messages` in it.
    #[arg(long, value_name = "URL")]
    pub db_url: Option<String>,
    /// Kafka for pipeline scenarios, e.g. 127.0.0.1:9092; default: an embedded single-node
    /// broker started (and removed) by iobound. Topics `input` and `output` are created if missing.
    #[arg(long, value_name = "HOST:PORT")]
    pub kafka_bootstrap: Option<String>,
}

#[derive(Args)]
pub struct CapacityArgs {
    /// The objective, as thresholds (repeat the flag): 'p99<=200ms', 'errors<=0.1%'. With
    /// --plan it replaces the SLO of the plan's capacity scenarios
    #[arg(long = "slo", value_name = "RULE")]
    pub slo: Vec<String>,
    /// The search never offers more than this (req/s; default 50000). A plan's capacity
    /// scenarios set it as `max_rate`, like the three below: with --plan they are refused
    #[arg(long, value_name = "R")]
    pub max_rate: Option<f64>,
    /// Each probe's rate is this many times the last until the SLO breaks (default 2)
    #[arg(long, value_name = "X")]
    pub growth: Option<f64>,
    /// Bisection stops when the passing and failing rates are this close (default 5%)
    #[arg(long, value_name = "PCT")]
    pub precision: Option<String>,
    /// Probes at the final passing and at the final failing rate, each (default 3)
    #[arg(long, value_name = "N")]
    pub repeats: Option<i64>,
    #[command(flatten)]
    pub run: RunArgs,
}

fn runs_arg(s: &str) -> std::result::Result<String, String> {
    match s.parse::<u32>() {
        Ok(n) if (1..=plan::MAX_FIXED_RUNS).contains(&n) => Ok(s.to_string()),
        _ if s == "auto" => Ok(s.to_string()),
        _ => Err(format!(
            "{s:?}: give a number of runs from 1 to {}, or \"auto\"",
            plan::MAX_FIXED_RUNS
        )),
    }
}

pub fn dur(s: &str) -> std::time::Duration {
    crate::util::units::parse_duration(s).expect("validated by clap")
}

/// `--downstream-timeout`: a duration in the range a plan's `[downstream] timeout` may take.
fn downstream_timeout(text: &str) -> anyhow::Result<std::time::Duration> {
    let timeout = crate::util::units::parse_duration(text)?;
    crate::plan::validate::downstream_timeout_in_range(timeout)?;
    Ok(timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_flag_values_name_the_flag() {
        for (args, flag) in [
            (vec!["run", "-c", "x", "--users", "-5"], "--users"),
            (vec!["run", "-c", "x", "--duration", "ten"], "--duration"),
            (vec!["run", "-c", "x", "--rate", "0"], "--rate"),
            (
                vec!["run", "-c", "x", "--rate", "5", "--users", "3"],
                "--users",
            ),
            (
                vec!["verify", "--downstream-timeout", "0ms"],
                "--downstream-timeout <DURATION>': must be between 1ms and 60s",
            ),
            (
                vec!["verify", "--downstream-timeout", "2x"],
                "--downstream-timeout <DURATION>': \"2x\" has unknown unit",
            ),
        ] {
            let e = Cli::try_parse_from(std::iter::once("iobound").chain(args))
                .err()
                .expect("must fail")
                .to_string();
            let first = e.lines().next().unwrap_or("");
            assert!(first.contains(flag), "{first}");
        }
    }
}
