//! The launcher (`./iobound`) names what is missing and how to install it, before it builds
//! or starts anything.

use crate::common;

use crate::common::{beside_others, repo_root};
use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

/// These tests write scripts and copies of the launcher and then run them. A process another
/// test forks while a file is open for writing keeps that descriptor until its own exec, and an
/// exec of the file meanwhile fails with "Text file busy" (ETXTBSY): one test at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn no_exec_race() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// A PATH holding only the basic tools the launcher needs, none of the toolchains.
fn bare_path(dir: &Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in [
        "bash", "dirname", "find", "sed", "head", "grep", "uname", "mktemp", "rm", "mkdir",
        "touch", "cat", "basename",
    ] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.exists());
        if let Some(p) = found {
            std::os::unix::fs::symlink(p, bin.join(tool)).unwrap();
        }
    }
    bin.display().to_string()
}

/// A copy of the launcher in an empty project under `tmp`, and a PATH of the basic tools with
/// `tools` as stand-ins that write to `tmp/ran` that they ran, then fail: (the project, the PATH).
fn launcher_in_empty_project(tmp: &Path, tools: &[&str]) -> (std::path::PathBuf, String) {
    let root = tmp.join("project");
    std::fs::create_dir_all(root.join("harness")).unwrap();
    std::fs::copy(repo_root().join("iobound"), root.join("iobound")).unwrap();
    let path = bare_path(tmp);
    for tool in tools {
        stand_in(
            tmp,
            tool,
            &format!("echo {tool} ran >> {}/ran; exit 1", tmp.display()),
        );
    }
    (root, path)
}

/// A script `name` in the PATH `bare_path(tmp)` made, running `body`.
fn stand_in(tmp: &Path, name: &str, body: &str) {
    let p = tmp.join("bin").join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

#[test]
#[ignore = "writes and runs copies of the launcher; run by ./iobound test"]
fn a_missing_jdk_is_named_with_where_it_was_looked_for_and_how_to_install_one() {
    let _machine = beside_others(&[]);
    let _exec = no_exec_race();
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new(repo_root().join("iobound"))
        .arg("build")
        .env_remove("JAVA_HOME")
        .env("IOBOUND_JVM_DIRS", tmp.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no JDK >= 21 found") && err.contains(&tmp.path().display().to_string()),
        "{err}"
    );
    assert!(
        err.contains("apt-get install openjdk-21-jdk") && err.contains("JAVA_HOME"),
        "{err}"
    );
}

#[test]
#[ignore = "writes and runs copies of the launcher; run by ./iobound test"]
fn a_missing_rust_toolchain_is_named_with_how_to_install_it() {
    let _machine = beside_others(&[]);
    let _exec = no_exec_race();
    // A copy of the launcher in an empty project: the harness is not built, cargo is not on PATH.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    std::fs::create_dir_all(root.join("harness")).unwrap();
    std::fs::copy(repo_root().join("iobound"), root.join("iobound")).unwrap();
    let jdk = std::env::var("JAVA_HOME")
        .ok()
        .filter(|j| Path::new(j).join("bin/javac").exists())
        .unwrap_or_else(|| "/usr/lib/jvm/temurin-25-jdk-amd64".into());
    if !Path::new(&jdk).join("bin/javac").exists() {
        common::missing_prerequisite(
            "a JDK >= 21 (JAVA_HOME) to get past the launcher's JDK check",
        );
        return;
    }
    let o = Command::new("/bin/bash")
        .arg(root.join("iobound"))
        .arg("build")
        .env("PATH", bare_path(tmp.path()))
        .env("JAVA_HOME", &jdk)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("cargo is not installed") && err.contains("rustup"),
        "{err}"
    );
    assert!(!root.join("harness/target").exists(), "nothing was built");
}

#[test]
#[ignore = "writes and runs copies of the launcher; run by ./iobound test"]
fn missing_test_tools_are_named_with_the_command_to_install_them_before_anything_is_built() {
    let _machine = beside_others(&[]);
    let _exec = no_exec_race();
    // The toolchains are stand-ins (nothing may run them before the check), wrk and Chromium
    // are absent, the user is not root and has no sudo.
    let tmp = tempfile::tempdir().unwrap();
    let (root, path) =
        launcher_in_empty_project(tmp.path(), &["cargo", "mvn", "go", "npm", "python3"]);
    stand_in(tmp.path(), "id", "echo 1000");
    let t0 = std::time::Instant::now();
    let o = Command::new("/bin/bash")
        .arg(root.join("iobound"))
        .arg("test")
        .env("PATH", &path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the tests need wrk chromium")
            && err.contains("sudo apt-get install wrk chromium"),
        "{err}"
    );
    assert!(
        !tmp.path().join("ran").exists(),
        "no toolchain ran before the check"
    );
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(10),
        "checked before anything else"
    );
}

#[test]
#[ignore = "writes and runs copies of the launcher; run by ./iobound test"]
fn a_fetched_file_whose_digest_changed_is_refused_by_name() {
    let _machine = beside_others(&[]);
    let _exec = no_exec_race();
    // A copy of the launcher and its digests in an empty project, with Kafka's jar in .cache.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    std::fs::create_dir_all(root.join(".cache/kafka/libs")).unwrap();
    std::fs::copy(repo_root().join("iobound"), root.join("iobound")).unwrap();
    std::fs::copy(
        repo_root().join("scripts/fetched.sha256"),
        root.join("scripts/fetched.sha256"),
    )
    .unwrap();
    let jar = root.join(".cache/kafka/libs/kafka_2.13-4.4.0.jar");
    // Through bash, not exec'd: the copy was just written, and a process another test forks
    // meanwhile holds the write descriptor until its own exec, which makes an exec of the
    // copy fail with "Text file busy" (ETXTBSY; it failed CI once).
    let digests = || {
        Command::new("/bin/bash")
            .arg(root.join("iobound"))
            .arg("digests")
            .output()
            .unwrap()
    };
    let fetched = repo_root().join(".cache/kafka/libs/kafka_2.13-4.4.0.jar");
    if fetched.exists() {
        std::fs::copy(&fetched, &jar).unwrap();
        let o = digests();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        assert!(err.contains("1 fetched file(s) in .cache match"), "{err}");
    }
    // One byte changed, as a tampered download or a changed mirror would.
    std::fs::write(&jar, b"not the jar that was tested").unwrap();
    let o = digests();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(".cache/kafka/libs/kafka_2.13-4.4.0.jar: kafka_2.13-4.4.0.jar: SHA-256")
            && err.contains("is not the one this repository was tested with"),
        "{err}"
    );
    // A file with no digest at all is refused too.
    std::fs::remove_file(&jar).unwrap();
    std::fs::write(root.join(".cache/kafka/libs/extra-1.0.jar"), b"x").unwrap();
    let err = String::from_utf8_lossy(&digests().stderr).into_owned();
    assert!(
        err.contains("extra-1.0.jar has no digest in scripts/fetched.sha256"),
        "{err}"
    );
}

/// requirements.lock answers for requirements.txt: every pin there is in the lock at the same
/// version, and every package of the lock carries a SHA-256 (pip --require-hashes refuses a
/// file whose digest differs, and a lock with a package without one). A pin changed without
/// running scripts/lock-python again fails here.
#[test]
#[ignore = "writes and runs copies of the launcher; run by ./iobound test"]
fn the_python_packages_are_installed_from_a_lock_of_digests_that_answers_for_the_pins() {
    let _machine = beside_others(&[]);
    let _exec = no_exec_race();
    let dir = repo_root().join("contenders/python");
    let pins = std::fs::read_to_string(dir.join("requirements.txt")).unwrap();
    let lock = std::fs::read_to_string(dir.join("requirements.lock")).unwrap();
    let normal = |name: &str| name.to_lowercase().replace(['_', '.'], "-");
    // One line per package once its continuation lines are joined.
    let entries: Vec<(String, String, usize)> = lock
        .replace(" \\\n", " ")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (req, rest) = l.split_once(' ').unwrap_or((l, ""));
            let (name, version) = req.split_once("==").expect("NAME==VERSION");
            let digests = rest
                .split_whitespace()
                .filter(|h| {
                    h.strip_prefix("--hash=sha256:")
                        .is_some_and(|d| d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit()))
                })
                .count();
            (normal(name), version.to_string(), digests)
        })
        .collect();
    assert!(entries.len() >= 20, "{entries:?}");
    for (name, version, digests) in &entries {
        assert!(
            *digests > 0,
            "{name}=={version} has no sha256 in requirements.lock"
        );
    }
    for pin in pins
        .lines()
        .filter(|l| l.contains("==") && !l.starts_with('#'))
    {
        let (name, version) = pin.split_once("==").unwrap();
        let name = normal(name.split('[').next().unwrap());
        assert!(
            entries.iter().any(|(n, v, _)| *n == name && v == version.trim()),
            "{pin} is pinned in requirements.txt but not locked at that version: run scripts/lock-python"
        );
    }
    let launcher = std::fs::read_to_string(repo_root().join("iobound")).unwrap();
    assert!(
        launcher.contains("--require-hashes -r \"$req\"")
            && launcher.contains("req=\"$ROOT/contenders/python/requirements.lock\""),
        "the launcher installs from the lock with --require-hashes"
    );
}

/// A contender's `[build]` table, as in contenders/NAME/contender.toml.
fn contender_with_build(root: &Path, name: &str, build: &str) {
    let dir = root.join("contenders").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("contender.toml"),
        format!(
            "name = {name:?}\nmodel = \"event-loop\"\nlanguage = \"new\"\nframework = \"F\"\n\
             config = \"c\"\nartifact = \"out.txt\"\nstart = [\"out.txt\"]\nready = \"/\"\n\
             [build]\n{build}\n"
        ),
    )
    .unwrap();
}

fn run_launcher(root: &Path, command: &str) -> std::process::Output {
    Command::new("/bin/bash")
        .arg(root.join("iobound"))
        .arg(command)
        // Set: the launcher fetches no PostgreSQL for this project.
        .env("IOBOUND_PG_BIN", "/nonexistent")
        .output()
        .unwrap()
}

#[test]
#[ignore = "writes and runs copies of the launcher; run by ./iobound test"]
fn a_contender_in_a_new_language_is_built_from_its_manifest_alone() {
    let _machine = beside_others(&[]);
    let _exec = no_exec_race();
    // A copy of the launcher in a project with the harness built (the real one) and Kafka's
    // jars in place, and one contender whose toolchain the launcher has never heard of.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    std::fs::create_dir_all(root.join("harness/target/release")).unwrap();
    std::fs::create_dir_all(root.join(".cache/kafka/libs")).unwrap();
    std::fs::write(root.join(".cache/kafka/libs/kafka_2.13-4.4.0.jar"), "").unwrap();
    std::fs::copy(repo_root().join("iobound"), root.join("iobound")).unwrap();
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_iobound"),
        root.join("harness/target/release/iobound"),
    )
    .unwrap();
    contender_with_build(
        &root,
        "lang-x",
        "toolchain = \"sh\"\ncommand = \"cat src.txt > out.txt; echo built >> builds.txt\"\n\
         inputs = [\"src.txt\"]\noutput = \"out.txt\"",
    );
    let dir = root.join("contenders/lang-x");
    std::fs::write(dir.join("src.txt"), "first").unwrap();
    let builds = || std::fs::read_to_string(dir.join("builds.txt")).unwrap_or_default();

    for _ in 0..2 {
        let o = run_launcher(&root, "build");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(
        builds().lines().count(),
        1,
        "built once: the output is newer than its input"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("out.txt")).unwrap(),
        "first"
    );

    std::fs::write(dir.join("src.txt"), "second").unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    let src = std::fs::File::options()
        .write(true)
        .open(dir.join("src.txt"))
        .unwrap();
    src.set_modified(later).unwrap();
    let o = run_launcher(&root, "build");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        builds().lines().count(),
        2,
        "built again after its input changed"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("out.txt")).unwrap(),
        "second"
    );

    // A toolchain that is not installed is named with the manifest's own install hint.
    contender_with_build(
        &root,
        "lang-y",
        "toolchain = \"iobound-no-such-compiler\"\ninstall = \"get it from example.org\"",
    );
    let o = run_launcher(&root, "build");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("iobound-no-such-compiler is not installed: get it from example.org"),
        "{err}"
    );
}

/// What a plan needs built: the demo's two Java contenders and nothing else (no Go, Rust, Node
/// or Python, no PostgreSQL or Kafka); a contender that runs another's jar names that module;
/// a plan calling /messages or streaming through Kafka names the service.
#[test]
fn a_plan_needs_only_its_own_contenders_and_services_built() {
    let root = repo_root();
    let plan = |text: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.toml"), text).unwrap();
        dir
    };
    let listing = |plan_path: &std::path::Path| {
        let o = Command::new(env!("CARGO_BIN_EXE_iobound"))
            .args(["list", "--builds", "--plan"])
            .arg(plan_path)
            .env("IOBOUND_HOME", &root)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8(o.stdout).unwrap();
        let lines: Vec<(String, String)> = text
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                assert_eq!(f.len(), 9, "{l}");
                (f[0].to_string(), f[1].to_string())
            })
            .collect();
        lines
    };
    let pair = |t: &str, f: &str| (t.to_string(), f.to_string());
    assert_eq!(
        listing(&root.join("plans/demo.toml")),
        [
            pair("maven", "contenders/spring-mvc"),
            pair("maven", "contenders/spring-webflux")
        ]
    );
    let scenario = |path: &str| {
        format!(
            "[[scenario]]\nname = \"s\"\npath = \"{path}\"\n[scenario.load]\nmodel = \"closed\"\n\
             users = 1\nduration = \"1s\"\n"
        )
    };
    let virt = plan(&format!(
        "contenders = [\"spring-mvc-virtual\", \"go\"]\n{}",
        scenario("/messages")
    ));
    let lines = listing(&virt.path().join("p.toml"));
    assert!(
        lines.contains(&pair("maven", "contenders/spring-mvc")),
        "{lines:?}"
    );
    assert!(lines.contains(&pair("go", "contenders/go")), "{lines:?}");
    assert!(lines.contains(&pair("service", "postgres")), "{lines:?}");
    assert_eq!(lines.len(), 3, "{lines:?}");
}

/// Every contender folder holding sources outside the Maven reactor is built, tested and
/// format-checked by a manifest's steps, and the launcher names none of them.
#[test]
fn every_contender_folder_is_built_by_its_manifest_and_the_launcher_names_none() {
    let root = repo_root();
    let o = Command::new(env!("CARGO_BIN_EXE_iobound"))
        .args(["list", "--builds"])
        .env("IOBOUND_HOME", &root)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let listing = String::from_utf8(o.stdout).unwrap();
    let steps: std::collections::BTreeMap<String, Vec<String>> = listing
        .lines()
        .map(|l| {
            let fields: Vec<String> = l.split('\t').map(str::to_string).collect();
            assert_eq!(fields.len(), 9, "{l}");
            (fields[1].clone(), fields)
        })
        .collect();
    let sources = ["go", "rs", "py", "js"];
    for entry in std::fs::read_dir(root.join("contenders")).unwrap() {
        let folder = entry.unwrap().path();
        let has_sources = std::fs::read_dir(&folder).is_ok_and(|files| {
            files.flatten().any(|f| {
                let p = f.path();
                let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
                (sources.contains(&ext) && p.is_file()) || p.join("main.rs").is_file()
            })
        });
        if !has_sources {
            continue;
        }
        let name = format!(
            "contenders/{}",
            folder.file_name().unwrap().to_str().unwrap()
        );
        let fields = steps
            .get(&name)
            .unwrap_or_else(|| panic!("{name} holds sources but no manifest builds it"));
        assert_ne!(fields[6], "-", "{name} has no build.test");
        assert_ne!(fields[7], "-", "{name} has no build.check");
        assert_ne!(fields[8], "-", "{name} has no build.format");
    }
    assert!(steps.contains_key("contenders/go") && steps.contains_key("contenders/python"));
    let launcher = std::fs::read_to_string(root.join("iobound")).unwrap();
    for name in steps.keys().filter(|f| steps[*f][0] != "python") {
        let code = launcher
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'));
        assert!(
            !code
                .clone()
                .any(|l| l.contains(&format!("{name}/")) || l.contains(&format!("{name}\""))),
            "the launcher names {name}: its steps belong in its manifest's [build] table"
        );
    }
}

/// Runs `script` in bash with the launcher's functions loaded (everything before its command
/// dispatch), ROOT and TMPDIR pointed at `dir`.
fn with_launcher_functions(dir: &Path, script: &str) -> std::process::Output {
    let launcher = std::fs::read_to_string(repo_root().join("iobound")).unwrap();
    let functions = &launcher[..launcher
        .find("\ncmd=${1:-}")
        .expect("the launcher's command dispatch")];
    Command::new("bash")
        .arg("-c")
        .arg(format!("{functions}\nROOT={}\n{script}", dir.display()))
        .env("TMPDIR", dir)
        .output()
        .unwrap()
}

/// What a test run leaves in the temporary directory fails it, by name; what was there
/// before it started does not.
#[test]
fn what_the_tests_leave_in_the_temporary_directory_fails_the_run_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join(".tmpOLD")).unwrap();
    let o = with_launcher_functions(
        tmp.path(),
        "before=$(temporary_files); mkdir \"$TMPDIR/.tmpNEW\" \"$TMPDIR/iobound-run.x\" \
         \"$TMPDIR/unrelated\"; left_behind \"$before\"",
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the tests left these behind")
            && err.contains(".tmpNEW")
            && err.contains("iobound-run.x"),
        "{err}"
    );
    assert!(
        !err.contains(".tmpOLD") && !err.contains("unrelated"),
        "{err}"
    );
    let o = with_launcher_functions(
        tmp.path(),
        "before=$(temporary_files); left_behind \"$before\" && echo clean",
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "clean");
}

/// Jobs run side by side each have their time printed, each in a process group of its own,
/// and a failing one's output is shown and fails the whole.
#[test]
fn side_by_side_jobs_show_a_failures_output_and_fail_together() {
    let tmp = tempfile::tempdir().unwrap();
    let o = with_launcher_functions(
        tmp.path(),
        "passes() { echo quiet; }; fails() { echo what went wrong; return 3; }; \
         alone() { [ \"$(ps -o pgid= -p $BASHPID)\" != \"$(ps -o pgid= -p $$)\" ]; }; \
         side_by_side passes fails alone || echo \"rc=$?\"",
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(" s  passes\n") && out.contains(" s  fails FAILED\n"),
        "{out}"
    );
    assert!(out.contains("--- fails\nwhat went wrong\n"), "{out}");
    // Each job runs in a process group other than the launcher's: a test sampling its group
    // finds no other job.
    assert!(out.contains(" s  alone\n"), "{out}");
    assert!(
        !out.contains("quiet") && out.trim_end().ends_with("rc=1"),
        "{out}"
    );
}

#[test]
#[ignore = "writes and runs copies of the launcher; run by ./iobound test"]
fn the_launchers_own_commands_answer_help_and_refuse_unknown_arguments_before_anything_runs() {
    let _machine = beside_others(&[]);
    let _exec = no_exec_race();
    // Every toolchain a stand-in that leaves a mark: `test --help` once ran the whole suite,
    // and `test --fast` ran it too, ignoring the flag.
    let tmp = tempfile::tempdir().unwrap();
    let (root, path) = launcher_in_empty_project(
        tmp.path(),
        &["cargo", "mvn", "go", "npm", "python3", "wrk", "chromium"],
    );
    let launch = |args: &[&str]| {
        Command::new("/bin/bash")
            .arg(root.join("iobound"))
            .args(args)
            .env("PATH", &path)
            .output()
            .unwrap()
    };
    for (command, says) in [
        ("test", "conformance"),
        ("build", "builds"),
        ("lint", "formatting"),
        ("format", "rewrites"),
        ("digests", "scripts/fetched.sha256"),
    ] {
        for help in ["--help", "-h"] {
            let o = launch(&[command, help]);
            let out = String::from_utf8_lossy(&o.stdout);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{command} {help}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(
                out.contains(&format!("./iobound {command}")) && out.contains(says),
                "{command} {help} says what it does: {out}"
            );
        }
        let o = launch(&[command, "--fast"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{command} --fast: {err}");
        assert!(
            err.contains("--fast") && err.contains(&format!("./iobound {command} --help")),
            "{command} names the argument and where the usage is: {err}"
        );
    }
    assert!(
        !tmp.path().join("ran").exists(),
        "nothing ran for help or a refused argument"
    );
}
