//! Command line: subcommands, flags and their help, and the translation of flags into a plan.

use crate::plan::{CpusFile, JvmFile, LoadFile, Plan, PlanFile, ScenarioFile};
use crate::{bench, driver, manifest, orchestrate, plan, results, table, util, verify};
use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const ABOUT: &str = "Compare server concurrency models (thread-per-request, event loop, virtual threads) on I/O-bound work, side by side, on this machine.";

const LONG_ABOUT: &str = "\
Compare server concurrency models (thread-per-request, event loop, virtual threads) on
I/O-bound work, side by side, on this machine.

Each contender is started pinned to its own CPUs, checked against the contract, warmed up and
then measured under the same load; the driver records every response into HdrHistograms and
the sampler reads the contender's threads, memory, CPU and sockets from /proc.

Exit status: 0 all runs measured; 1 error before or while running; 2 bad usage;
3 some contender failed (start-up, contract, crash; the rest was measured); 130 interrupted
(what was measured is kept, marked incomplete).";

const RUN_HELP: &str = "\
Durations are written 500ms, 10s, 2m. Without --users or --rate a run is closed with 64 users
for 10s; warm-up is 5s (0s with --url); the contender runs on CPU 0 and the driver on CPU 1.
Results go to <out>/<timestamp>-<plan>/: results.json, summary.txt (the table), report.html,
report.md, intervals.csv, resources.csv, charts/*.png and histograms/*.hlog.

Examples:
  iobound run -c spring-mvc,spring-webflux --path '/delay?ms=100' --users 1000 --duration 20s
  iobound run -c spring-mvc --path '/delay?ms=100' --users 250 --step-users 250 --steps 3 --step-duration 10s
  iobound run -c spring-webflux --path '/delay?ms=100' --rate 10 --ramp-to 3000 --duration 60s
  iobound run -c spring-mvc --set spring-mvc.threads=500 --path '/delay?ms=100' --users 1000
  iobound run --plan plans/demo.toml --runs 3
  iobound run --url http://127.0.0.1:8080/plaintext --users 64 --duration 10s";

#[derive(Parser)]
#[command(name = "iobound", version, about = ABOUT, long_about = LONG_ABOUT)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a plan file, or an ad hoc comparison described by flags, and write results
    #[command(after_help = RUN_HELP)]
    Run(RunArgs),
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
        /// traversal, oversized); every one must get a 4xx and the contender must keep serving
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
    },
    /// List the contenders with their model, framework and tunables
    List,
    /// Print the comparison table of an existing results directory or results.json
    Table {
        #[arg(value_name = "RESULTS")]
        path: PathBuf,
        /// Markdown with one row per contender, for READMEs and pull requests
        #[arg(long)]
        markdown: bool,
    },
    /// Rebuild every output of a results directory from its results.json: summary.txt,
    /// report.html, report.md, intervals.csv, resources.csv and charts/*.png
    Report {
        #[arg(value_name = "RESULTS_DIR")]
        path: PathBuf,
    },
    /// Compare two result sets (e.g. before and after a tuning change): medians, 95% intervals,
    /// and whether each change is significant (intervals apart)
    Compare {
        #[arg(value_name = "A")]
        a: PathBuf,
        #[arg(value_name = "B")]
        b: PathBuf,
    },
    /// Benchmarks of iobound itself
    Bench {
        #[command(subcommand)]
        what: BenchCmd,
    },
    /// Run the downstream service of /enrich on its own (the harness starts one for every plan)
    Downstream(DownstreamArgs),
    /// Built-in test server (driver benchmark target; can stall once, like a GC pause)
    #[command(hide = true)]
    Serve(ServeArgs),
    /// Drive one URL and print a JSON summary (used by `bench driver` and tests)
    #[command(hide = true)]
    Load(LoadArgs),
}

#[derive(Subcommand)]
enum BenchCmd {
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

/// Load shape flags shared by `run` and `load`.
#[derive(Args, Clone, Default)]
struct LoadArgs {
    /// Drive this URL (loopback only unless --allow-remote)
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Closed model: concurrent users (each with its own keep-alive connection)
    #[arg(allow_negative_numbers = true, long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000), conflicts_with = "rate")]
    users: Option<u32>,
    /// Closed model: users added at each step (Gatling's incrementConcurrentUsers)
    #[arg(allow_negative_numbers = true, long, value_name = "N", requires = "steps", conflicts_with = "rate")]
    step_users: Option<u32>,
    /// Closed model: number of steps after the first level
    #[arg(allow_negative_numbers = true, long, value_name = "N", requires = "step_duration", conflicts_with = "rate")]
    steps: Option<u32>,
    /// Closed model: how long each level lasts; the run lasts (steps + 1) x this
    #[arg(long, value_name = "D", value_parser = duration_arg, conflicts_with = "duration")]
    step_duration: Option<String>,
    /// Closed model: pause between a user's response and its next request
    #[arg(long, value_name = "D", value_parser = duration_arg, conflicts_with = "rate")]
    think_time: Option<String>,
    /// Open model: arrivals per second; latency counts from each intended send time
    #[arg(allow_negative_numbers = true, long, value_name = "R", value_parser = rate_arg)]
    rate: Option<f64>,
    /// Open model: ramp the arrival rate linearly from --rate to this over --duration
    #[arg(allow_negative_numbers = true, long, value_name = "R", value_parser = rate_arg, requires = "rate")]
    ramp_to: Option<f64>,
    /// Open model: most connections the driver opens (requests beyond wait, and the wait counts)
    #[arg(allow_negative_numbers = true, long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000), requires = "rate")]
    max_connections: Option<u32>,
    /// Length of the measured phase (closed model without steps, or open model)
    #[arg(long, value_name = "D", value_parser = duration_arg)]
    duration: Option<String>,
    /// Request timeout; a request without a full response by then counts as a timeout error
    #[arg(long, value_name = "D", default_value = plan::DEFAULT_TIMEOUT, value_parser = duration_arg)]
    timeout: String,
    /// Send `Connection: close` and open a new connection for every request
    #[arg(long)]
    connection_close: bool,
    /// Allow a --url that is not on this machine. A load tool pointed at someone else's
    /// server is an attack: only use it against servers you are responsible for.
    #[arg(long)]
    allow_remote: bool,
}

#[derive(Args)]
struct RunArgs {
    /// Plan file (TOML) with contenders, scenarios and load; see plans/
    #[arg(long, value_name = "FILE", conflicts_with_all = ["path", "users", "rate", "url"])]
    plan: Option<PathBuf>,
    /// Contenders to run, comma separated (with --plan: a subset of the plan's)
    #[arg(short = 'c', long = "contender", value_name = "NAMES", value_delimiter = ',')]
    contenders: Vec<String>,
    /// Path to request (ad hoc runs), e.g. /delay?ms=100
    #[arg(long, value_name = "PATH")]
    path: Option<String>,
    #[command(flatten)]
    load: LoadArgs,
    /// Warm-up before each measured run (not recorded)
    #[arg(long, value_name = "D", value_parser = duration_arg)]
    warmup: Option<String>,
    /// Repeats of each contender x scenario, interleaved (A B A B ...); default: the plan's
    /// `runs` (3 when a plan does not say), 1 for an ad hoc run
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    runs: Option<u32>,
    /// Heap for every JVM contender (-Xms = -Xmx), e.g. 512m
    #[arg(long, value_name = "SIZE")]
    heap: Option<String>,
    /// CPUs the contender is pinned to (taskset -c syntax)
    #[arg(long, value_name = "LIST")]
    contender_cpus: Option<String>,
    /// CPUs the driver (and the rest of the harness) is pinned to
    #[arg(long, value_name = "LIST")]
    driver_cpus: Option<String>,
    /// Driver threads (default: one per driver CPU)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    driver_threads: Option<u32>,
    /// Set a contender tunable, e.g. --set spring-mvc.threads=500 (see `iobound list`)
    #[arg(long = "set", value_name = "NAME.KEY=VALUE")]
    sets: Vec<String>,
    /// Parent directory of the timestamped results directory
    #[arg(long, default_value = "results", value_name = "DIR")]
    out: PathBuf,
    /// PostgreSQL for /messages, e.g. postgresql://app:secret@127.0.0.1:5432/bench; default:
    /// an embedded server started (and removed) by iobound. The harness drops and recreates a
    /// table named `messages` in it.
    #[arg(long, value_name = "URL")]
    db_url: Option<String>,
    /// Kafka for pipeline scenarios, e.g. 127.0.0.1:9092; default: an embedded single-node
    /// broker started (and removed) by iobound. Topics `input` and `output` are created if missing.
    #[arg(long, value_name = "HOST:PORT")]
    kafka_bootstrap: Option<String>,
}

#[derive(Args)]
struct DownstreamArgs {
    #[arg(long, default_value_t = 8081)]
    port: u16,
    /// Latency of each answer: fixed:100ms, uniform:50ms..150ms or lognormal:100ms,0.5
    /// (median, sigma)
    #[arg(long, default_value = "fixed:100ms")]
    latency: String,
    /// Share of requests answered 500 (0..1)
    #[arg(long, default_value = "0")]
    error_rate: String,
    /// Share of requests that stall for --stall-for before their answer (0..1)
    #[arg(long, default_value = "0")]
    stall_prob: String,
    #[arg(long, default_value = "10s", value_parser = duration_arg)]
    stall_for: String,
    /// Seed of the latency and fault draws
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Args)]
struct ServeArgs {
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Stall once, this long after the first request
    #[arg(long, value_parser = duration_arg)]
    stall_at: Option<String>,
    /// How long the stall lasts
    #[arg(long, default_value = "1s", value_parser = duration_arg)]
    stall_for: String,
}

fn duration_arg(s: &str) -> std::result::Result<String, String> {
    util::parse_duration(s).map(|_| s.to_string()).map_err(|e| e.to_string())
}

fn rate_arg(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(format!("{s:?} is not a positive rate in requests per second, e.g. 1000")),
    }
}

fn dur(s: &str) -> std::time::Duration {
    util::parse_duration(s).expect("validated by clap")
}

/// The repository root: $IOBOUND_HOME, else the ancestor of the binary holding contenders/.
fn root() -> PathBuf {
    if let Ok(h) = std::env::var("IOBOUND_HOME") {
        return PathBuf::from(h);
    }
    let exe = std::env::current_exe().ok();
    let found = exe.as_deref().and_then(|e| e.ancestors().find(|a| a.join("contenders").is_dir() && a.join("contract").is_dir()));
    found.map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."))
}

/// Resolves a --url to a socket address and path, refusing non-loopback targets unless allowed.
fn parse_url(url: &str, allow_remote: bool) -> Result<(SocketAddr, String)> {
    let rest = url.strip_prefix("http://").with_context(|| format!("--url {url:?}: only http:// URLs are supported"))?;
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].to_string()),
        None => (rest, "/".to_string()),
    };
    let with_port = if hostport.rsplit_once(':').is_some_and(|(_, p)| p.chars().all(|c| c.is_ascii_digit())) && !hostport.ends_with(']') {
        hostport.to_string()
    } else {
        format!("{hostport}:80")
    };
    let addr = with_port
        .to_socket_addrs()
        .with_context(|| format!("--url {url:?}: cannot resolve {hostport}"))?
        .next()
        .with_context(|| format!("--url {url:?}: {hostport} has no address"))?;
    if !addr.ip().is_loopback() && !allow_remote {
        bail!("--url {url:?} is not on this machine ({}); iobound only loads loopback targets unless you pass --allow-remote for a server you are responsible for", addr.ip());
    }
    Ok((addr, path))
}

fn load_file(a: &LoadArgs) -> LoadFile {
    let open = a.rate.is_some();
    LoadFile {
        model: if open { "open" } else { "closed" }.into(),
        users: if open { None } else { Some(i64::from(a.users.unwrap_or(64))) },
        step_users: a.step_users.map(i64::from),
        steps: a.steps.map(i64::from),
        step_duration: a.step_duration.clone(),
        think_time: a.think_time.clone(),
        rate: a.rate,
        ramp_to: a.ramp_to,
        max_connections: a.max_connections.map(i64::from),
        duration: if a.step_duration.is_none() { Some(a.duration.clone().unwrap_or_else(|| "10s".into())) } else { None },
        timeout: Some(a.timeout.clone()),
        connection_close: Some(a.connection_close),
    }
}

fn parse_sets(sets: &[String]) -> Result<BTreeMap<String, BTreeMap<String, toml::Value>>> {
    let mut out: BTreeMap<String, BTreeMap<String, toml::Value>> = BTreeMap::new();
    for s in sets {
        let (lhs, value) = s.split_once('=').with_context(|| format!("--set {s:?}: write NAME.KEY=VALUE, e.g. --set spring-mvc.threads=500"))?;
        let (name, key) = lhs.split_once('.').with_context(|| format!("--set {s:?}: write NAME.KEY=VALUE, e.g. --set spring-mvc.threads=500"))?;
        out.entry(name.to_string()).or_default().insert(key.to_string(), toml::Value::String(value.to_string()));
    }
    Ok(out)
}

fn build_plan(a: &RunArgs, root: &Path) -> Result<(Plan, Option<SocketAddr>)> {
    let mut file = match &a.plan {
        Some(p) => PlanFile::load(&resolve(p, root))?,
        None => {
            let path = a.path.clone().unwrap_or_else(|| "/plaintext".into());
            let name: String = path.trim_start_matches('/').chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
            PlanFile {
                name: Some("adhoc".into()),
                scenarios: vec![ScenarioFile { name: if name.is_empty() { "root".into() } else { name }, path: Some(path), mix: None, pipeline: false, warmup: None, load: load_file(&a.load), downstream: None, events: Vec::new(), overload: None }],
                warmup: Some(if a.load.url.is_some() { "0s".into() } else { plan::DEFAULT_WARMUP.into() }),
                runs: Some(1),
                ..PlanFile::default()
            }
        }
    };
    let mut external = None;
    if let Some(url) = &a.load.url {
        let (addr, path) = parse_url(url, a.load.allow_remote)?;
        external = Some(addr);
        file.scenarios[0].path = Some(path);
        file.contenders = vec!["external".into()];
    } else if a.plan.is_none() {
        if a.contenders.is_empty() {
            bail!("--contender is required for an ad hoc run (e.g. -c spring-mvc,spring-webflux), or give --plan FILE or --url URL");
        }
        file.contenders = a.contenders.clone();
    } else if !a.contenders.is_empty() {
        for c in &a.contenders {
            if !file.contenders.contains(c) {
                bail!("--contender {c}: not in the plan's contenders ({})", file.contenders.join(", "));
            }
        }
        file.contenders = a.contenders.clone();
        file.tunables.retain(|k, _| a.contenders.contains(k));
    }
    if let Some(w) = &a.warmup {
        file.warmup = Some(w.clone());
        for s in &mut file.scenarios {
            s.warmup = None;
        }
    }
    file.runs = a.runs.or(file.runs);
    if a.heap.is_some() {
        file.jvm = JvmFile { heap: a.heap.clone(), flags: file.jvm.flags.clone() };
    }
    file.cpus = CpusFile { contender: a.contender_cpus.clone().or(file.cpus.contender), driver: a.driver_cpus.clone().or(file.cpus.driver) };
    file.driver_threads = a.driver_threads.map(|n| n as usize).or(file.driver_threads);
    for (name, kv) in parse_sets(&a.sets)? {
        file.tunables.entry(name).or_default().extend(kv);
    }
    let plan = file.validate()?;
    let overlap: Vec<_> = plan.contender_cpus.iter().filter(|c| plan.driver_cpus.contains(c)).collect();
    if !overlap.is_empty() && util::online_cpus() > 1 {
        eprintln!("iobound: warning: contender and driver share CPU(s) {overlap:?}: they will compete and figures will mix both costs");
    }
    Ok((plan, external))
}

fn resolve(p: &Path, root: &Path) -> PathBuf {
    if p.exists() || p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    }
}

/// A results directory and its results.json, from either path.
fn results_at(path: &Path) -> Result<(PathBuf, results::Results)> {
    let (dir, file) = if path.is_dir() { (path.to_path_buf(), path.join("results.json")) } else { (path.parent().unwrap_or(Path::new(".")).to_path_buf(), path.to_path_buf()) };
    Ok((dir, results::Results::load(&file)?))
}

/// summary.txt and the reports; returns the terminal table.
fn write_outputs(dir: &Path, res: &results::Results) -> Result<String> {
    let text = table::render(res, dir);
    results::write_atomic(&dir.join("summary.txt"), text.as_bytes())?;
    let files = crate::report::write_all(res, dir)?;
    eprintln!("report: {} ({} files: report.md, CSV, {} PNG charts)", dir.join("report.html").display(), files.len() + 1, files.iter().filter(|f| f.extension().is_some_and(|e| e == "png")).count());
    Ok(text)
}

fn run(plan: &Plan, root: &Path, out: &Path, external: Option<SocketAddr>, choice: crate::services::ServiceChoice) -> Result<i32> {
    let opts = orchestrate::Options { root: root.to_path_buf(), out: out.to_path_buf(), external, services: choice };
    let (dir, res) = orchestrate::run_plan(plan, &opts)?;
    let text = write_outputs(&dir, &res)?;
    println!("{text}");
    eprintln!("results: {}", dir.join("results.json").display());
    Ok(if !res.complete {
        130
    } else if res.runs.iter().any(|r| r.status == results::RunStatus::Failed) {
        3
    } else {
        0
    })
}

fn list(root: &Path) -> Result<i32> {
    for m in manifest::discover(root)? {
        println!("{}  [{}]  {}", m.name, m.model, m.language);
        println!("    {}", m.framework);
        println!("    {}", m.config);
        for (k, t) in &m.tunables {
            println!("    tunable {k} = {} ({})", t.default, t.help);
        }
        let built = if m.artifact_path().exists() { "built" } else { "not built: run ./iobound build" };
        println!("    artifact {} ({built})", m.artifact);
    }
    Ok(0)
}

fn verify_cmd(root: &Path, names: Vec<String>, fuzz: usize, seed: u64, choice: &crate::services::ServiceChoice) -> Result<i32> {
    let all = manifest::discover(root)?;
    let names = if names.is_empty() { all.iter().map(|m| m.name.clone()).collect() } else { names };
    let file = PlanFile {
        name: Some("verify".into()),
        contenders: names.clone(),
        scenarios: vec![ScenarioFile { name: "none".into(), path: Some("/".into()), mix: None, pipeline: false, warmup: None, load: LoadFile { model: "closed".into(), users: Some(1), duration: Some("1s".into()), ..LoadFile::default() }, downstream: None, events: Vec::new(), overload: None }],
        ..PlanFile::default()
    };
    let plan = file.validate()?;
    let java = crate::env::find_java();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    crate::interrupt::install();
    let logs = std::env::temp_dir().join(format!("iobound-verify-{}", std::process::id()));
    std::fs::create_dir_all(&logs)?;
    let mut wanted = Vec::new();
    for name in &names {
        wanted.push(manifest::find(&all, name)?);
    }
    let need_kafka = wanted.iter().any(|m| m.is_pipeline());
    let mut services = crate::services::Services::start(root, &plan, &rt, &logs, choice, need_kafka)?;
    let mut failed = Vec::new();
    for m in &wanted {
        let name = &m.name;
        let ctx = verify::Context { corpus: &services.corpus, downstream_timeout: services.downstream_timeout, database: Some(&services.database) };
        if !m.artifact_path().exists() {
            bail!("{name} is not built ({} is missing); run `./iobound build`", m.artifact_path().display());
        }
        let log = std::env::temp_dir().join(format!("iobound-verify-{name}.log"));
        let orchestrate::Launched { mut proc, startup_timeout, .. } = orchestrate::launch(&m, &m.resolve_tunables(None)?, &plan, java.as_deref(), &log, &services.env())?;
        match proc.wait_ready(&rt, &m.ready, startup_timeout) {
            Ok(_) if m.is_pipeline() => {
                let k = services.kafka.as_ref().context("pipeline contenders need Kafka")?;
                let v = crate::pipeline::verify(k, &plan.driver_cpus, &logs, name);
                verify::print(name, &v);
                if !v.passed {
                    failed.push(name.clone());
                }
            }
            Ok(_) => {
                let mut v = verify::verify(&rt, proc.addr, &ctx)?;
                if fuzz > 0 {
                    let f = rt.block_on(crate::fuzz::run(proc.addr, fuzz, seed, &services.corpus.vectors()?));
                    v.passed &= f.passed;
                    v.cases.push(f);
                }
                verify::print(name, &v);
                if !v.passed {
                    failed.push(name.clone());
                }
            }
            Err(e) => {
                eprintln!("[{name}] FAIL: {e:#}");
                failed.push(name.clone());
            }
        }
        proc.stop(std::time::Duration::from_secs(4));
    }
    services.stop();
    if failed.is_empty() {
        eprintln!("verify: {} contender(s) conform to the contract", names.len());
        Ok(0)
    } else {
        eprintln!("verify: FAILED: {}", failed.join(", "));
        Ok(1)
    }
}

/// `iobound load`: drive one URL, print a JSON summary on stdout.
fn load_cmd(a: &LoadArgs) -> Result<i32> {
    let url = a.url.as_deref().context("--url is required")?;
    let (addr, path) = parse_url(url, a.allow_remote)?;
    let lf = load_file(a);
    let load = lf.validate("load")?;
    crate::contender::raise_nofile();
    let target = driver::Target::new(addr, &path, load.connection_close);
    let cfg = driver::DriverConfig { threads: 1, cpus: Vec::new() };
    let live = Arc::new(driver::record::Live::default());
    crate::interrupt::install();
    let o = driver::run(&target, &load, &cfg, live, crate::interrupt::stop_flag())?;
    let (s, _) = results::summarize(&o.recorder, o.duration, &load.profile);
    let report = orchestrate::driver_report(&o, &[], s.ok + s.drained);
    let v = serde_json::json!({
        "ok": s.ok, "errors": s.errors.total(), "error_kinds": s.errors, "drained": s.drained,
        "abandoned": o.abandoned, "rps": s.rps, "duration_s": s.duration_s, "latency_ms": s.latency,
        "driver_cpu_s": o.cpu.as_secs_f64(), "schedule_lag_ms": report.schedule_lag,
        "saturated": report.saturated, "warnings": report.warnings,
    });
    println!("{}", serde_json::to_string_pretty(&v)?);
    Ok(0)
}

pub fn main() -> Result<i32> {
    let cli = Cli::parse();
    let root = root();
    match cli.cmd {
        Cmd::Run(a) => {
            let (plan, external) = build_plan(&a, &root)?;
            run(&plan, &root, &a.out, external, crate::services::ServiceChoice { url: a.db_url.clone(), allow_remote: a.load.allow_remote, kafka_bootstrap: a.kafka_bootstrap.clone() })
        }
        Cmd::Demo { out } => {
            let plan = PlanFile::load(&root.join("plans/demo.toml"))?.validate()?;
            run(&plan, &root, &out, None, Default::default())
        }
        Cmd::Verify { contenders, fuzz, seed, db_url, allow_remote, kafka_bootstrap } => verify_cmd(&root, contenders, fuzz, seed, &crate::services::ServiceChoice { url: db_url, allow_remote, kafka_bootstrap }),
        Cmd::List => list(&root),
        Cmd::Table { path, markdown } => {
            let (dir, res) = results_at(&path)?;
            println!("{}", if markdown { table::render_markdown(&res) } else { table::render(&res, &dir) });
            Ok(0)
        }
        Cmd::Report { path } => {
            let (dir, res) = results_at(&path)?;
            println!("{}", write_outputs(&dir, &res)?);
            Ok(0)
        }
        Cmd::Compare { a, b } => {
            let (da, ra) = results_at(&a)?;
            let (db, rb) = results_at(&b)?;
            println!("{}", crate::compare::render(&ra, &da, &rb, &db)?);
            Ok(0)
        }
        Cmd::Bench { what: BenchCmd::Driver { connections, duration, repeats, path, json } } => {
            let exe = std::env::current_exe()?;
            let online = util::online_cpus();
            let args = bench::BenchArgs {
                connections,
                duration: dur(&duration),
                repeats,
                path: path.clone(),
                server_cpus: vec![0],
                driver_cpus: vec![if online > 1 { 1 } else { 0 }],
            };
            eprintln!("bench driver: built-in server on CPU 0; wrk -t1 and iobound (1 thread) on CPU {}; {connections} connections, {duration} each, GET {path}", args.driver_cpus[0]);
            let pairs = bench::driver(&exe, &args)?;
            let ratio = crate::stats::median(pairs.iter().map(|(w, i)| i.cpu_s_per_100k / w.cpu_s_per_100k).collect());
            let wrk = crate::stats::median(pairs.iter().map(|(w, _)| w.cpu_s_per_100k).collect());
            let ours = crate::stats::median(pairs.iter().map(|(_, i)| i.cpu_s_per_100k).collect());
            println!("driver CPU per 100k requests (median of {repeats}): wrk {wrk:.3} s, iobound {ours:.3} s, ratio iobound/wrk {ratio:.2}");
            if json {
                println!("{}", serde_json::to_string_pretty(&serde_json::json!({"path": path, "connections": connections, "runs": pairs, "median_ratio": ratio}))?);
            }
            Ok(0)
        }
        Cmd::Serve(a) => {
            crate::contender::ensure_port_free(a.port)?;
            crate::serve::serve(crate::serve::ServeConfig { port: a.port, stall_at: a.stall_at.as_deref().map(dur), stall_for: dur(&a.stall_for) })?;
            Ok(0)
        }
        Cmd::Load(a) => load_cmd(&a),
        Cmd::Downstream(a) => {
            crate::contender::ensure_port_free(a.port)?;
            let b = crate::downstream::Behaviour::new(&a.latency, &a.error_rate, &a.stall_prob, &a.stall_for)?;
            crate::serve::downstream(a.port, b, a.seed)?;
            Ok(0)
        }
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_targets_need_allow_remote() {
        assert!(parse_url("http://127.0.0.1:8080/plaintext", false).is_ok());
        assert_eq!(parse_url("http://127.0.0.1:8080/x?y=1", false).unwrap().1, "/x?y=1");
        assert_eq!(parse_url("http://[::1]:81", false).unwrap().0.port(), 81);
        let e = parse_url("http://192.0.2.1:80/", false).unwrap_err().to_string();
        assert!(e.contains("--allow-remote"), "{e}");
        assert!(parse_url("http://192.0.2.1:80/", true).is_ok());
        assert!(parse_url("https://127.0.0.1/", false).unwrap_err().to_string().contains("only http://"));
    }

    #[test]
    fn bad_flag_values_name_the_flag() {
        for (args, flag) in [
            (vec!["run", "-c", "x", "--users", "-5"], "--users"),
            (vec!["run", "-c", "x", "--duration", "ten"], "--duration"),
            (vec!["run", "-c", "x", "--rate", "0"], "--rate"),
            (vec!["run", "-c", "x", "--rate", "5", "--users", "3"], "--users"),
        ] {
            let e = Cli::try_parse_from(std::iter::once("iobound").chain(args)).err().expect("must fail").to_string();
            let first = e.lines().next().unwrap_or("");
            assert!(first.contains(flag), "{first}");
        }
    }

    #[test]
    fn sets_parse_into_tunables() {
        let t = parse_sets(&["spring-mvc.threads=500".into()]).unwrap();
        assert_eq!(t["spring-mvc"]["threads"], toml::Value::String("500".into()));
        assert!(parse_sets(&["threads=5".into()]).unwrap_err().to_string().contains("NAME.KEY=VALUE"));
    }
}
