//! Every reader of user input, fed generated bad input (util/generate.rs): plans, the command
//! line, inventories in their three formats, manifests and results files. Each must answer
//! with an error, never a panic, and an error for a value it refused names that value's field.
//! The contract's cases are compiled into the binary and are not read from users. Each test
//! leaves its counts under target/generated-inputs/, which `./iobound test` prints.

use super::args::{Cli, Cmd};
use super::capacity_plan::build_capacity_plan;
use super::flags::build_plan;
use crate::plan::hosts::Inventory;
use crate::plan::PlanFile;
use crate::results::dir::ResultsDir;
use crate::results::record::Results;
use crate::services::manifest::Manifest;
use crate::util::generate::{mutate_json, mutate_lines, Generated, Rng, Tally, HOSTILE};
use clap::{CommandFactory, Parser};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("harness/ is in the repository")
        .to_path_buf()
}

/// Whether an error for a replaced value points at it: by the field's name, or by the line
/// and column a TOML, YAML or INI parser gives.
fn names_the_field(message: &str, key: &str) -> bool {
    let field = key.trim_matches('"').rsplit('.').next().unwrap_or(key);
    message.contains(field)
        || message.contains(&field.replace('_', "-"))
        || message.contains(&field.replace('-', "_"))
        || message.contains("line ")
        || message.contains("column")
}

/// Asserts what every reader's test asserts, after printing its line for the report.
fn judge(reader: &str, t: &Tally, unnamed: &[(String, String)]) {
    eprintln!("{}", t.report(reader));
    assert!(
        t.panics.is_empty(),
        "{reader}: {} inputs panicked, first: {:?}",
        t.panics.len(),
        t.panics.first()
    );
    if let Ok(dump) = std::env::var("IOBOUND_UNNAMED_DUMP") {
        let lines: Vec<String> = unnamed.iter().map(|(i, m)| format!("{i}\n  {m}")).collect();
        let _ = std::fs::write(format!("{dump}.{reader}"), lines.join("\n"));
    }
    assert!(
        unnamed.is_empty(),
        "{reader}: {} errors do not name the field, first: {:?}",
        unnamed.len(),
        unnamed.first()
    );
    assert!(t.refused > 0 && t.accepted > 0, "{reader}: {t:?}");
}

/// Feeds `per_seed` changes of each seed file to `read` (given the changed file's path);
/// returns the tally and the refusals that did not name the field they refused.
fn mutate_files(
    dir: &tempfile::TempDir,
    seeds: &[(String, String)],
    per_seed: usize,
    file_name: impl Fn(&str) -> String,
    read: impl Fn(&Path) -> anyhow::Result<()>,
) -> (Tally, Vec<(String, String)>) {
    let (mut tally, mut unnamed) = (Tally::default(), Vec::new());
    let mut rng = Rng::new(0x010b_007d);
    for (name, seed) in seeds {
        let path = dir.path().join(file_name(name));
        for _ in 0..per_seed {
            let Generated { text, key } = mutate_lines(seed, &mut rng);
            std::fs::write(&path, &text).expect("the generated input is written");
            let refused = tally.read(&text, || read(&path));
            if let (Some(msg), Some(key)) = (refused, key) {
                if !names_the_field(&msg, &key) {
                    unnamed.push((
                        text.lines()
                            .find(|l| l.starts_with(&key))
                            .unwrap_or("")
                            .to_string(),
                        msg,
                    ));
                }
            }
        }
    }
    (tally, unnamed)
}

fn committed(dir: &Path, file: impl Fn(&Path) -> Option<PathBuf>) -> Vec<(String, String)> {
    let mut seeds: Vec<(String, String)> = std::fs::read_dir(dir)
        .expect("the committed directory is there")
        .filter_map(|e| file(&e.ok()?.path()))
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().to_string();
            Some((name, std::fs::read_to_string(&p).ok()?))
        })
        .collect();
    seeds.sort();
    seeds
}

#[test]
fn plans_refuse_generated_bad_input_by_field() {
    let seeds = committed(&root().join("plans"), |p| {
        (p.extension()? == "toml").then(|| p.to_path_buf())
    });
    assert!(seeds.len() >= 20, "the committed plans are the seeds");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (t, unnamed) = mutate_files(
        &dir,
        &seeds,
        60,
        |n| n.to_string(),
        // As `run --dry-run` reads a plan: checked, then described (its totals over steps).
        |p| {
            PlanFile::load(p)?.validate().map(|plan| {
                crate::plan::describe::dry_run(&plan);
            })
        },
    );
    judge("plans", &t, &unnamed);
}

#[test]
fn manifests_refuse_generated_bad_input_by_field() {
    let seeds = committed(&root().join("contenders"), |d| {
        let m = d.join("contender.toml");
        m.exists().then_some(m)
    });
    assert!(seeds.len() >= 17, "every contender's manifest is a seed");
    let seeds: Vec<(String, String)> = seeds
        .into_iter()
        .enumerate()
        .map(|(i, (_, text))| (format!("m{i}"), text))
        .collect();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (t, unnamed) = mutate_files(
        &dir,
        &seeds,
        60,
        |n| format!("{n}.toml"),
        |p| Manifest::load(p).map(|_| ()),
    );
    judge("manifests", &t, &unnamed);
}

const INVENTORY_TOML: &str = r#"known_hosts = "known_hosts"

[[host]]
name = "app"
address = "10.0.0.2"
user = "bench"
identity = "id_ed25519"
roles = ["contender"]
cpus = "0-3"

[[host]]
name = "lg1"
address = "10.0.0.4"
user = "bench"
port = 2222
roles = ["load"]
cpus = "0-7"
"#;

const INVENTORY_INI: &str = "[contender]
app ansible_host=10.0.0.2 iobound_cpus=0-3

[load]
lg1 ansible_host=10.0.0.4 ansible_port=2222 iobound_cpus=0-7

[all:vars]
ansible_user = bench
iobound_known_hosts = known_hosts
";

const INVENTORY_YAML: &str = "all:
  vars:
    ansible_user: bench
  children:
    contender:
      hosts:
        app:
          ansible_host: 10.0.0.2
          iobound_cpus: 0-3
    load:
      hosts:
        lg1:
          ansible_host: 10.0.0.4
          ansible_port: 2222
";

#[test]
fn inventories_refuse_generated_bad_input_by_field() {
    let seeds = [
        ("hosts.toml".to_string(), INVENTORY_TOML.to_string()),
        ("hosts.ini".to_string(), INVENTORY_INI.to_string()),
        ("hosts.yml".to_string(), INVENTORY_YAML.to_string()),
    ];
    // The files the seeds name, beside them, so that a refusal is the changed field's.
    let dir = tempfile::tempdir().expect("a temporary directory");
    for file in ["id_ed25519", "known_hosts"] {
        std::fs::write(dir.path().join(file), "").expect("a file the inventory names");
    }
    let (t, unnamed) = mutate_files(
        &dir,
        &seeds,
        400,
        |n| n.to_string(),
        |p| Inventory::load(p).map(|_| ()),
    );
    judge("inventories", &t, &unnamed);
}

#[test]
fn results_files_refuse_generated_bad_input() {
    let seed_dir = root().join("docs/results/c10k-profile-2026-11-23");
    let dir = tempfile::tempdir().expect("a temporary directory");
    copy_tree(&seed_dir, dir.path());
    let path = dir.path().join("results.json");
    let seed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the seed results"))
            .expect("the seed is JSON");
    let mut t = Tally::default();
    let mut rng = Rng::new(0x4e5);
    for _ in 0..300 {
        let mut v = seed.clone();
        mutate_json(&mut v, &mut rng);
        let text = serde_json::to_string(&v).expect("JSON again");
        std::fs::write(&path, &text).expect("the generated results are written");
        let shown: String = text.chars().take(200).collect();
        t.read(&shown, || {
            let res = Results::load(&path)?;
            let set = ResultsDir::new(&res, dir.path());
            let _ = crate::report::table::render(set);
            let _ = crate::report::markdown_tables::render_markdown(set);
            Ok(())
        });
    }
    judge("results files", &t, &[]);
}

fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from)
        .expect("the seed directory")
        .flatten()
    {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            std::fs::create_dir_all(&target).expect("a copied folder");
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("a copied file");
        }
    }
}

/// Command lines built from a few valid ones, each with one flag given a HOSTILE value
/// (unquoted, as a shell would pass it): every flag of `run` and `capacity` in turn.
fn generated_command_lines(rng: &mut Rng, n: usize) -> Vec<(Vec<String>, String)> {
    let bases: [&[&str]; 3] = [
        &["iobound", "run", "--plan", "plans/demo.toml"],
        &[
            "iobound",
            "run",
            "--url",
            "http://127.0.0.1:9/x",
            "--users",
            "10",
            "--duration",
            "5s",
        ],
        &["iobound", "capacity", "--plan", "plans/capacity.toml"],
    ];
    let cmd = Cli::command();
    (0..n)
        .map(|_| {
            let base = *rng.pick(&bases);
            let sub = cmd
                .find_subcommand(base[1])
                .expect("run and capacity are commands");
            let flags: Vec<String> = sub
                .get_arguments()
                .filter(|a| a.get_action().takes_values())
                .filter_map(|a| a.get_long().map(str::to_string))
                .collect();
            let flag = rng.pick(&flags).clone();
            let value = rng
                .pick(HOSTILE)
                .trim_matches('"')
                .replace("\\u0000", "\u{1}");
            let mut args: Vec<String> = base.iter().map(|s| s.to_string()).collect();
            // `--flag=VALUE`, so that a value starting with `-` is the flag's, not a flag.
            args.push(format!("--{flag}={value}"));
            (args, flag)
        })
        .collect()
}

#[test]
fn the_command_line_refuses_generated_bad_input_by_flag() {
    let root = root();
    let (mut t, mut unnamed) = (Tally::default(), Vec::new());
    let mut rng = Rng::new(0xc11);
    for (args, flag) in generated_command_lines(&mut rng, 1500) {
        let shown = args.join(" ");
        let refused = t.read(&shown, || {
            let cli = Cli::try_parse_from(&args)?;
            match cli.cmd {
                Cmd::Run(a) => build_plan(&a, &root).map(|_| ()),
                Cmd::Capacity(c) => build_capacity_plan(&c, &root).map(|_| ()),
                _ => unreachable!("only run and capacity are generated"),
            }
        });
        if let Some(msg) = refused {
            if !names_the_field(&msg, &flag) {
                unnamed.push((shown, msg));
            }
        }
    }
    judge("command lines", &t, &unnamed);
}
