//! The longer help texts of the command line: what `iobound --help` and the subcommands'
//! `--help` teach beyond the flags.

pub const ABOUT: &str = "Compare server concurrency models (thread-per-request, event loop, virtual threads) on I/O-bound work, side by side, on this machine.";

pub const LONG_ABOUT: &str = "\
Compare server concurrency models (thread-per-request, event loop, virtual threads) on
I/O-bound work, side by side, on this machine.

Each contender is started pinned to its own CPUs, checked against the contract, warmed up and
then measured under the same load; the driver records every response into HdrHistograms and
the sampler reads the contender's threads, memory, CPU and sockets from /proc.

Exit status: 0 all runs measured; 1 error before or while running; 2 bad usage;
3 some contender failed (start-up, contract, crash; the rest was measured); 4 a threshold
(`run --threshold`, a plan's [thresholds]) or a regression gate (`compare --fail-if`) broke;
130 interrupted (what was measured is kept, marked incomplete).";

pub const RUN_HELP: &str = "\
Durations are written 500ms, 10s, 2m. Without --users or --rate a run is closed with 64 users
for 10s; warm-up is 5s (0s with --url); the contender runs on CPU 0 and the driver on CPU 1.
Results go to <out>/<timestamp>-<plan>/: results.json, summary.txt (the table), report.html,
report.md, metrics.csv, intervals.csv, resources.csv, charts/*.png and histograms/*.hlog.

Examples:
  iobound run -c spring-mvc,spring-webflux --path '/delay?ms=100' --users 1000 --duration 20s
  iobound run -c spring-mvc --path '/delay?ms=100' --users 250 --step-users 250 --steps 3 --step-duration 10s
  iobound run -c spring-webflux --path '/delay?ms=100' --rate 10 --ramp-to 3000 --duration 60s
  iobound run -c spring-mvc --set spring-mvc.threads=500 --path '/delay?ms=100' --users 1000
  iobound run --plan plans/demo.toml --runs 4
  iobound run --url http://127.0.0.1:8080/plaintext --users 64 --duration 10s";

pub const COMPARE_HELP: &str = "\
A gate fails only on a change that is both beyond its limit and significant, so run both sides
with --runs 4 or more: with fewer a change is \"not tested\" and does not fail the gate.

Example (a CI step):
  iobound run --plan plans/demo.toml --runs 4 --out after
  iobound compare baseline/20261123-101500-demo after/* --fail-if 'p99 > +10%' --fail-if 'throughput < -5%' --junit gates.xml";

pub const HOSTS_HELP: &str = "\
An inventory names each host, its SSH destination and its roles: `contender` (the server
under test), `load` (runs a share of the load with iobound's own driver) and `services`
(PostgreSQL, Kafka and the downstream service of iobound's own contenders). Write it as hosts.toml:

  [[host]]
  name = \"app\"
  address = \"10.0.0.2\"
  user = \"bench\"
  roles = [\"contender\"]

  [[host]]
  name = \"lg1\"
  address = \"10.0.0.3\"
  user = \"bench\"
  roles = [\"load\"]
  cpus = \"0-3\"

or keep your Ansible inventory (INI or YAML): groups named contender, services and load give
their hosts those roles; ansible_host, ansible_user, ansible_port and
ansible_ssh_private_key_file are read, iobound_cpus sets the CPUs. SSH uses keys or an agent
only (BatchMode), never a password.

Examples:
  iobound hosts check hosts.toml
  iobound run --hosts hosts.toml --plan plans/enrich.toml -c go,vertx
  iobound run --hosts hosts.toml --url http://10.0.0.2:8080/plaintext --users 256 --duration 30s";

pub const CAPACITY_HELP: &str = "\
Each probe is an open-model run at one rate for --duration (default 20s; the first one after
the warm-up), judged against every --slo. The rate starts at --rate (default 100) and grows by
--growth until the SLO breaks, then the search bisects between the last passing and the first
failing rate to --precision, then probes both final rates until each has --repeats probes. A
probe whose p99 stays above 10x the latency objective for 3 s stops early; one where the driver
fell behind is not counted as the server's limit. Every probe is kept (results.json, report,
Ctrl-C included); the report draws latency against offered load for all contenders.

One search is one capacity per contender. With --runs N (or auto) every contender is searched
again in each round, in a fresh process, and the verdicts rank the capacities: a pair is
\"different\" by the rank test over searches, \"equivalent\" only within the search's
precision (or the margin, if wider), and not ordered at all when both reached a bound
(--max-rate, or the driver's limit). A search whose warm-up did not settle enters no verdict.

Examples:
  iobound capacity -c spring-mvc,spring-webflux --path '/delay?ms=100' --slo 'p99<=200ms' --slo 'errors<=0.1%'
  iobound capacity -c spring-mvc,spring-webflux --path '/delay?ms=100' --slo 'p99<=200ms' --rate 500 --runs auto --budget 30m
  iobound capacity --plan plans/capacity.toml
  iobound capacity --url http://127.0.0.1:8080/ --slo 'p99<=50ms' --rate 500 --duration 10s";
