//! From flags to a plan: `iobound run` flags become a PlanFile (or change the one given with
//! --plan), validated like any plan; --url is checked to be on this machine.

use super::args::{LoadArgs, RunArgs};
use super::own_server;
use crate::plan::hosts::{Inventory, Role};
use crate::plan::thresholds::{merged, Threshold};
use crate::plan::{self, CpusFile, JvmFile, LoadFile, Plan, PlanFile, RunsFile, ScenarioFile};
use crate::run::External;
use crate::stats::gates::FailIf;
use crate::util;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A start from a CDS archive or an AOT cache (`jvm_start`) needs a training start and an
/// extracted jar on the contender host, which its agent does not make: across hosts it is
/// refused by name before anything starts, rather than measured as a default start.
pub fn refuse_trained_starts_across_hosts(
    tunables: &BTreeMap<String, BTreeMap<String, String>>,
) -> Result<()> {
    let tunable = crate::services::jvm_start::TUNABLE;
    for (name, values) in tunables {
        if let Some(v) = values.get(tunable).filter(|v| v.as_str() != "default") {
            bail!(
                "tunables.{name}.{tunable} = {v:?}: with --hosts a contender starts on its host \
                 without a training start, so only \"default\" is measured there; drop the \
                 setting, or run without --hosts to measure it on this machine"
            );
        }
    }
    Ok(())
}

pub fn load_file(a: &LoadArgs) -> LoadFile {
    let open = a.rate.is_some();
    LoadFile {
        model: if open { "open" } else { "closed" }.into(),
        users: if open {
            None
        } else {
            Some(i64::from(a.users.unwrap_or(64)))
        },
        step_users: a.step_users.map(i64::from),
        steps: a.steps.map(i64::from),
        step_duration: a.step_duration.clone(),
        think_time: a.think_time.clone(),
        stay: a.stay.clone(),
        spread: a.spread.clone(),
        rate: a.rate,
        ramp_to: a.ramp_to,
        max_connections: a.max_connections.map(i64::from),
        duration: if a.step_duration.is_none() {
            Some(a.duration.clone().unwrap_or_else(|| "10s".into()))
        } else {
            None
        },
        timeout: a.timeout.clone(),
        connection_close: Some(a.connection_close),
    }
}

pub fn parse_sets(sets: &[String]) -> Result<BTreeMap<String, BTreeMap<String, toml::Value>>> {
    let mut out: BTreeMap<String, BTreeMap<String, toml::Value>> = BTreeMap::new();
    for s in sets {
        let (lhs, value) = s.split_once('=').with_context(|| {
            format!("--set {s:?}: write NAME.KEY=VALUE, e.g. --set spring-mvc.threads=500")
        })?;
        let (name, key) = lhs.split_once('.').with_context(|| {
            format!("--set {s:?}: write NAME.KEY=VALUE, e.g. --set spring-mvc.threads=500")
        })?;
        out.entry(name.to_string())
            .or_default()
            .insert(key.to_string(), toml::Value::String(value.to_string()));
    }
    Ok(out)
}

/// The inventory of `--hosts`, checked before anything starts: the URL must be on its
/// contender host, so that load only goes where the inventory says; without a URL the
/// built-in contenders go to the contender host, and their services to a services host.
pub fn hosts_for_run(a: &RunArgs, external: Option<&External>) -> Result<Option<Inventory>> {
    let Some(file) = &a.hosts else {
        return Ok(None);
    };
    let inv = Inventory::load(file)?;
    let contender = inv.contender().with_context(|| {
        format!(
            "--hosts {}: no host has the role \"contender\"; give the host of --url that role",
            file.display()
        )
    })?;
    if inv.with_role(Role::Load).is_empty() {
        bail!(
            "--hosts {}: no host has the role \"load\"; give one or more hosts that role",
            file.display()
        );
    }
    let Some(addr) = external.map(|e| e.addr) else {
        let services = inv.with_role(Role::Services).len();
        if services != 1 {
            bail!(
                "--hosts {}: {services} hosts have the role \"services\"; the built-in contenders need exactly one (iobound starts PostgreSQL and the downstream service there), or give --url to measure a server of your own",
                file.display()
            );
        }
        return Ok(Some(inv));
    };
    if addr.ip() != contender.address {
        bail!(
            "--url's address {} is not the contender host's ({}, {}); with --hosts, load goes only to the inventory's contender host",
            addr.ip(),
            contender.name,
            contender.address
        );
    }
    Ok(Some(inv))
}

/// The plan of a run described by flags alone: one scenario on `--path` (or the URL's path),
/// one run.
fn adhoc_plan(a: &RunArgs) -> PlanFile {
    // A server of one's own is named after its URL's path.
    let url_path = a
        .load
        .url
        .as_deref()
        .and_then(|u| own_server::parse_url(u, true).ok())
        .map(|(_, p)| p);
    let path = a
        .path
        .clone()
        .or(url_path)
        .unwrap_or_else(|| "/plaintext".into());
    let name: String = path
        .trim_start_matches('/')
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    PlanFile {
        name: Some("adhoc".into()),
        scenarios: vec![ScenarioFile {
            name: if name.is_empty() { "root".into() } else { name },
            path: Some(path),
            mix: None,
            pipeline: false,
            warmup: None,
            load: load_file(&a.load),
            downstream: None,
            events: Vec::new(),
            overload: None,
            thresholds: Default::default(),
            capacity: None,
            restart: None,
        }],
        warmup: Some(if a.load.url.is_some() {
            "0s".into()
        } else {
            plan::DEFAULT_WARMUP.into()
        }),
        runs: Some(RunsFile::Count(1)),
        ..PlanFile::default()
    }
}

pub fn build_plan(a: &RunArgs, root: &Path) -> Result<(Plan, Option<External>)> {
    let mut file = match &a.plan {
        Some(p) => {
            refuse_load_flags_beside_a_plan(a)?;
            PlanFile::load(&resolve(p, root))?
        }
        None => adhoc_plan(a),
    };
    let external = choose_contenders(a, &mut file)?;
    choose_scenarios(&a.scenarios, &mut file)?;
    apply_overrides(a, &mut file)?;
    // Thresholds are checked before anything starts, like every other flag.
    let flag_thresholds = a
        .thresholds
        .iter()
        .map(|t| Threshold::parse_flag(t))
        .collect::<Result<Vec<_>>>()?;
    let mut plan = file.validate()?;
    for s in &mut plan.scenarios {
        s.thresholds = merged(&s.thresholds, &flag_thresholds);
    }
    let overlap: Vec<_> = plan
        .contender_cpus
        .iter()
        .filter(|c| plan.driver_cpus.contains(c))
        .collect();
    if !overlap.is_empty() && util::cpus::online_cpus() > 1 {
        eprintln!("iobound: warning: contender and driver share CPU(s) {overlap:?}: they will compete and figures will mix both costs");
    }
    Ok((plan, external))
}

/// The flags that describe an ad hoc load, refused beside --plan: the plan's scenarios set
/// their own load, and a flag left unused would let the user believe it changed the run.
fn refuse_load_flags_beside_a_plan(a: &RunArgs) -> Result<()> {
    let l = &a.load;
    let given = flags_given(&[
        ("--path", a.path.is_some()),
        ("--users", l.users.is_some()),
        ("--step-users", l.step_users.is_some()),
        ("--steps", l.steps.is_some()),
        ("--step-duration", l.step_duration.is_some()),
        ("--stay", l.stay.is_some()),
        ("--spread", l.spread.is_some()),
        ("--think-time", l.think_time.is_some()),
        ("--rate", l.rate.is_some()),
        ("--ramp-to", l.ramp_to.is_some()),
        ("--max-connections", l.max_connections.is_some()),
        ("--duration", l.duration.is_some()),
        ("--timeout", l.timeout.is_some()),
        ("--connection-close", l.connection_close),
    ]);
    if given.is_empty() {
        return Ok(());
    }
    bail!(
        "{} with --plan: the plan's scenarios set their own load ([scenario.load]: users or \
         rate, duration, timeout, ...), so {} would change nothing; write it in the plan (or a \
         copy of it), or drop --plan and describe the load with flags",
        given.join(", "),
        if given.len() == 1 { "it" } else { "they" }
    )
}

/// The names of the flags given, of (name, whether given) pairs.
pub(super) fn flags_given(flags: &[(&'static str, bool)]) -> Vec<&'static str> {
    flags
        .iter()
        .filter_map(|&(flag, set)| set.then_some(flag))
        .collect()
}

/// --scenario: keep the plan's scenarios it names, in the plan's order; a name the plan does
/// not have is refused with the names it has.
fn choose_scenarios(names: &[String], file: &mut PlanFile) -> Result<()> {
    if names.is_empty() {
        return Ok(());
    }
    let known: Vec<&str> = file.scenarios.iter().map(|s| s.name.as_str()).collect();
    if let Some(unknown) = names.iter().find(|n| !known.contains(&n.as_str())) {
        bail!(
            "--scenario {unknown}: not in the plan's scenarios ({}); name one of them",
            known.join(", ")
        );
    }
    file.scenarios.retain(|s| names.contains(&s.name));
    Ok(())
}

/// The plan's contenders from the flags: the server behind --url (returned), --contender for
/// an ad hoc run, or a subset of the plan's.
fn choose_contenders(a: &RunArgs, file: &mut PlanFile) -> Result<Option<External>> {
    if let Some(url) = &a.load.url {
        return own_server::the_server_behind_url(url, a, file).map(Some);
    }
    if a.plan.is_none() {
        if a.contenders.is_empty() {
            bail!("--contender is required for an ad hoc run (e.g. -c spring-mvc,spring-webflux), or give --plan FILE or --url URL");
        }
        file.contenders = a.contenders.clone();
    } else if !a.contenders.is_empty() {
        for c in &a.contenders {
            if !file.contenders.contains(c) {
                bail!(
                    "--contender {c}: not in the plan's contenders ({})",
                    file.contenders.join(", ")
                );
            }
        }
        file.contenders = a.contenders.clone();
        file.tunables.retain(|k, _| a.contenders.contains(k));
        file.arms.retain(|k, _| a.contenders.contains(k));
    }
    Ok(None)
}

/// `--fail-if` rules, parsed, where the run has arms to gate: a plan's `[arms]` or `--arm`.
pub fn arm_gate_rules(
    a: &RunArgs,
    plan: &Plan,
    external: Option<&External>,
) -> Result<Vec<FailIf>> {
    let rules = a
        .fail_if
        .iter()
        .map(|r| FailIf::parse(r))
        .collect::<Result<Vec<_>>>()?;
    let arms = !plan.arms.is_empty() || external.is_some_and(|e| !e.arms.is_empty());
    if !rules.is_empty() && !arms {
        bail!("--fail-if compares each arm of a run with the contender it is an arm of, and this run has none: give --arm (two or more) or a plan with [arms], or compare two sittings with `iobound compare BEFORE AFTER --fail-if`");
    }
    Ok(rules)
}

/// --budget, and the plan's `budget` under --runs. A budget bounds automatic repeats only: a
/// fixed --runs N sets the plan's aside (so that a plan written for `runs = "auto"` can be
/// measured N times as it stands), and --budget beside a fixed number of runs is refused by
/// its flag.
fn apply_budget(a: &RunArgs, file: &mut PlanFile) -> Result<()> {
    let fixed = !file.runs.as_ref().is_some_and(RunsFile::is_auto);
    match (&a.budget, &a.runs) {
        (Some(b), runs) if fixed => bail!(
            "--budget {b} bounds automatic repeats, but the runs are a fixed number ({}): \
             add --runs auto, or drop --budget",
            runs.as_ref()
                .map_or("the plan's `runs`".into(), |r| format!("--runs {r}"))
        ),
        (Some(b), _) => file.budget = Some(b.clone()),
        (None, Some(r)) if fixed => {
            if let Some(b) = file.budget.take() {
                eprintln!(
                    "iobound: --runs {r} is a fixed number: the plan's budget ({b}) bounds \
                     automatic repeats only and is set aside"
                );
            }
        }
        (None, _) => {}
    }
    Ok(())
}

/// Flags that override the plan file: warm-up, runs, budget, margin, profile, heap, CPUs,
/// limits, driver threads, tunables.
fn apply_overrides(a: &RunArgs, file: &mut PlanFile) -> Result<()> {
    if let Some(w) = &a.warmup {
        file.warmup = Some(w.clone());
        for s in &mut file.scenarios {
            s.warmup = None;
        }
    }
    if let Some(r) = &a.runs {
        file.runs = Some(match r.parse::<i64>() {
            Ok(n) => RunsFile::Count(n),
            Err(_) => RunsFile::Word(r.clone()),
        });
    }
    apply_budget(a, file)?;
    file.margin = a.margin.clone().or(file.margin.take());
    if a.profile {
        if a.load.url.is_some() {
            bail!("--profile profiles the built-in contenders; with --url, profile your server with its own tools (iobound still samples it with --pid or --cmd)");
        }
        file.profile = Some(true);
    }
    if a.heap.is_some() {
        file.jvm = JvmFile {
            heap: a.heap.clone(),
            flags: file.jvm.flags.clone(),
        };
    }
    // Checked here so that a bad list is named by its flag, not by the plan field it fills.
    for (flag, list) in [
        ("--contender-cpus", &a.contender_cpus),
        ("--driver-cpus", &a.driver_cpus),
        ("--services-cpus", &a.services_cpus),
    ] {
        if let Some(list) = list {
            util::cpus::parse_cpu_syntax(list).with_context(|| format!("{flag} {list:?}"))?;
        }
    }
    file.cpus = CpusFile {
        contender: a.contender_cpus.clone().or(file.cpus.contender.take()),
        driver: a.driver_cpus.clone().or(file.cpus.driver.take()),
        services: a.services_cpus.clone().or(file.cpus.services.take()),
    };
    file.driver_threads = a.driver_threads.map(|n| n as usize).or(file.driver_threads);
    // --cpus and --memory set the plan-wide limits ([limits.NAME] still sets its contender's).
    if let Some(c) = a.cpus {
        file.limits.insert("cpus".into(), toml::Value::Float(c));
    }
    if let Some(m) = &a.memory {
        file.limits
            .insert("memory".into(), toml::Value::String(m.clone()));
    }
    for (name, kv) in parse_sets(&a.sets)? {
        file.tunables.entry(name).or_default().extend(kv);
    }
    Ok(())
}

pub fn resolve(p: &Path, root: &Path) -> PathBuf {
    if p.exists() || p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    }
}

#[cfg(test)]
mod tests {
    use super::super::capacity_plan::build_capacity_plan;
    use super::*;

    #[test]
    fn a_trained_start_is_refused_across_hosts_by_name() {
        let mut tunables = BTreeMap::from([(
            "spring-mvc".to_string(),
            BTreeMap::from([("jvm_start".to_string(), "aot".to_string())]),
        )]);
        let e = refuse_trained_starts_across_hosts(&tunables)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("tunables.spring-mvc.jvm_start = \"aot\"") && e.contains("--hosts"),
            "{e}"
        );
        assert!(refuse_trained_starts_across_hosts(&BTreeMap::new()).is_ok());
        let values = tunables.get_mut("spring-mvc").unwrap();
        values.insert("jvm_start".into(), "default".into());
        values.insert("threads".into(), "400".into());
        assert!(refuse_trained_starts_across_hosts(&tunables).is_ok());
    }

    #[test]
    fn scenario_picks_the_plans_scenarios_by_name_or_names_the_known_ones() {
        let scenario = |name: &str| crate::plan::file::ScenarioFile {
            name: name.into(),
            ..Default::default()
        };
        let mut file = PlanFile {
            scenarios: vec![
                scenario("delay-100ms"),
                scenario("c10k"),
                scenario("static"),
            ],
            ..PlanFile::default()
        };
        choose_scenarios(&[], &mut file).unwrap();
        assert_eq!(file.scenarios.len(), 3, "no --scenario keeps them all");
        choose_scenarios(&["static".into(), "delay-100ms".into()], &mut file).unwrap();
        let kept: Vec<&str> = file.scenarios.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(kept, ["delay-100ms", "static"], "the plan's order");
        let e = choose_scenarios(&["c10k".into()], &mut file)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--scenario c10k") && e.contains("delay-100ms, static"),
            "{e}"
        );
    }

    #[test]
    fn a_fixed_runs_flag_sets_a_plans_budget_aside_and_budget_needs_auto() {
        use std::time::Duration;
        let auto_plan = "contenders = [\"a\", \"b\"]\nruns = \"auto\"\nbudget = \"30m\"\n\
                         [[scenario]]\nname = \"wait\"\npath = \"/delay?ms=100\"\n\
                         [scenario.load]\nmodel = \"closed\"\nusers = 8\nduration = \"10s\"\n";
        let plan_of = |flags: &[&str]| plan_from(auto_plan, &["run"], flags);
        let auto = plan_of(&[]).unwrap();
        assert_eq!(
            auto.sequential.and_then(|s| s.budget),
            Some(Duration::from_secs(1800))
        );
        let five = plan_of(&["--runs", "5"]).unwrap();
        assert_eq!(
            (five.runs, five.sequential),
            (5, None),
            "measured 5 times as it stands"
        );
        let longer = plan_of(&["--budget", "45m"]).unwrap();
        assert_eq!(
            longer.sequential.and_then(|s| s.budget),
            Some(Duration::from_secs(2700))
        );
        let e = plan_of(&["--runs", "5", "--budget", "10m"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--budget 10m") && e.contains("--runs 5") && e.contains("--runs auto"),
            "{e}"
        );
        // A plan whose runs are fixed: --budget is refused by its flag, not by the plan's field.
        let fixed_plan = auto_plan.replace("runs = \"auto\"\nbudget = \"30m\"\n", "runs = 3\n");
        assert_ne!(fixed_plan, auto_plan, "the plan's runs were made fixed");
        let e = plan_from(&fixed_plan, &["run"], &["--budget", "10m"])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--budget 10m") && e.contains("the plan's `runs`"),
            "{e}"
        );
    }

    #[test]
    fn sets_parse_into_tunables() {
        let t = parse_sets(&["spring-mvc.threads=500".into()]).unwrap();
        assert_eq!(
            t["spring-mvc"]["threads"],
            toml::Value::String("500".into())
        );
        assert!(parse_sets(&["threads=5".into()])
            .unwrap_err()
            .to_string()
            .contains("NAME.KEY=VALUE"));
    }

    /// A plan and the `iobound ARGS --plan PLAN FLAGS` built from it, or why not.
    fn plan_from(plan_text: &str, args: &[&str], flags: &[&str]) -> Result<crate::plan::Plan> {
        use crate::cli::args::{Cli, Cmd};
        use clap::Parser;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.toml");
        std::fs::write(&path, plan_text).unwrap();
        let plan_flag = ["--plan", path.to_str().unwrap()];
        let words = ["iobound"]
            .iter()
            .chain(args)
            .chain(&plan_flag)
            .chain(flags);
        let cli = Cli::try_parse_from(words).unwrap();
        match cli.cmd {
            Cmd::Run(a) => build_plan(&a, dir.path()).map(|(plan, _)| plan),
            Cmd::Capacity(c) => build_capacity_plan(&c, dir.path()).map(|(plan, _)| plan),
            _ => unreachable!("run or capacity"),
        }
    }

    #[test]
    fn load_flags_beside_a_plan_are_refused_by_name_not_ignored() {
        let plan = "contenders = [\"a\"]\n[[scenario]]\nname = \"wait\"\n\
                    path = \"/delay?ms=100\"\n[scenario.load]\nmodel = \"closed\"\n\
                    users = 8\nduration = \"10s\"\n";
        let e = plan_from(plan, &["run"], &["--duration", "30s"])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--duration with --plan") && e.contains("write it in the plan"),
            "{e}"
        );
        let e = plan_from(plan, &["run"], &["--users", "50", "--timeout", "2s"])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--users, --timeout with --plan"), "{e}");
        let e = plan_from(plan, &["run"], &["--connection-close"])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--connection-close with --plan"), "{e}");
        // What a plan leaves to flags still applies: the plan's load, the flag's warm-up.
        let p = plan_from(plan, &["run"], &["--warmup", "30s"]).unwrap();
        assert_eq!(
            p.scenarios[0].load.profile.duration(),
            std::time::Duration::from_secs(10)
        );
        assert_eq!(p.scenarios[0].warmup, std::time::Duration::from_secs(30));
    }

    #[test]
    fn a_capacity_plan_keeps_its_search_and_its_flags_are_refused_beside_it() {
        let plan = "contenders = [\"a\"]\n[[scenario]]\nname = \"wait\"\n\
                    path = \"/delay?ms=100\"\n[scenario.load]\nmodel = \"open\"\n\
                    rate = 100\nduration = \"3s\"\n[scenario.capacity]\n\
                    slo = [\"p99<=200ms\"]\nmax_rate = 2000\nprecision = \"15%\"\n";
        let e = plan_from(
            plan,
            &["capacity"],
            &["--max-rate", "40000", "--repeats", "2"],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("--max-rate, --repeats with --plan") && e.contains("[scenario.capacity]"),
            "{e}"
        );
        let p = plan_from(plan, &["capacity"], &["--slo", "p99<=100ms"]).unwrap();
        let c = p.scenarios[0].capacity.as_ref().unwrap();
        assert_eq!((c.max_rate, c.precision, c.repeats), (2000.0, 0.15, 3));
        assert_eq!(
            (c.slo[0].metric.as_str(), c.slo[0].limit),
            ("p99", 100.0),
            "--slo replaces the plan's"
        );
    }

    #[test]
    fn an_ad_hoc_search_takes_its_flags_or_the_documented_defaults() {
        use crate::cli::args::{Cli, Cmd};
        use clap::Parser;
        let search = |flags: &[&str]| {
            let words = [
                "iobound",
                "capacity",
                "-c",
                "a",
                "--path",
                "/",
                "--slo",
                "p99<=200ms",
            ];
            let cli = Cli::try_parse_from(words.iter().chain(flags)).unwrap();
            let Cmd::Capacity(c) = cli.cmd else {
                unreachable!("a capacity command")
            };
            let (plan, _) = build_capacity_plan(&c, std::path::Path::new(".")).unwrap();
            let c = plan.scenarios[0].capacity.clone().unwrap();
            (c.max_rate, c.growth, c.precision, c.repeats)
        };
        assert_eq!(search(&[]), (50_000.0, 2.0, 0.05, 3));
        assert_eq!(
            search(&[
                "--max-rate",
                "900",
                "--growth",
                "1.5",
                "--precision",
                "10%",
                "--repeats",
                "2"
            ]),
            (900.0, 1.5, 0.1, 2)
        );
    }
}
