//! End to end on the real contenders: a short comparison must produce real, non-zero
//! measurements and a valid results.json. Needs the built jars and a JDK >= 21: `./iobound
//! test` runs it.

use crate::common::*;

#[test]
#[ignore = "needs built contenders and a JDK; run by ./iobound test"]
fn short_comparison_writes_real_results() {
    let _machine = beside_others(&[Resource::BusyCpus]);
    let out = tempfile::tempdir().unwrap();
    let o = run(&[
        "run",
        "-c",
        "spring-mvc,spring-webflux",
        "--path",
        "/delay?ms=50",
        "--users",
        "20",
        "--duration",
        "3s",
        "--warmup",
        "1s",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "run failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("throughput (req/s)") && stdout.contains("spring-webflux"),
        "{stdout}"
    );

    let dir = results_dir(out.path());
    let r = load_results(&dir);
    assert_eq!(r["schema_version"], 1);
    assert_eq!(r["complete"], true);
    assert!(r["environment"]["java"]
        .as_str()
        .is_some_and(|j| j.contains("version")));
    assert_eq!(r["environment"]["contender_cpus"], serde_json::json!([0]));
    let runs = r["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for run in runs {
        let name = run["contender"].as_str().unwrap();
        assert_eq!(run["status"], "ok", "{name}: {}", run["failure"]);
        let s = &run["summary"];
        // 20 users on a 50 ms delay: at most 400 req/s by Little's law; each at least 50 ms.
        let rps = s["rps"].as_f64().unwrap();
        assert!((100.0..=410.0).contains(&rps), "{name}: {rps} req/s");
        assert!(s["latency"]["p50"].as_f64().unwrap() >= 50.0, "{name}");
        assert!(s["latency"]["max"].as_f64().unwrap() >= s["latency"]["p99"].as_f64().unwrap());
        assert_eq!(
            s["errors"]["connect"].as_u64().unwrap() + s["errors"]["timeout"].as_u64().unwrap(),
            0,
            "{name}"
        );
        assert!(run["intervals"].as_array().unwrap().len() >= 3, "{name}");
        let res = &run["resources"];
        assert!(
            res["samples"].as_array().unwrap().len() >= 8,
            "{name}: sampled every 250 ms"
        );
        assert!(res["peak_threads"].as_u64().unwrap() >= 10, "{name}");
        assert!(res["peak_rss_mb"].as_f64().unwrap() > 30.0, "{name}");
        assert!(res["cpu_s"].as_f64().unwrap() > 0.0, "{name}");
        assert!(
            res["peak_sockets"].as_u64().unwrap() >= 20,
            "{name}: 20 client connections"
        );
        assert!(run["driver"]["cpu_s"].as_f64().unwrap() > 0.0);
        // Its start, timed from exec: the port opens before the first 200, the contract is
        // checked after it.
        let start = &run["cold_start"];
        let (port, first) = (
            start["port_s"].as_f64().unwrap(),
            start["first_200_s"].as_f64().unwrap(),
        );
        assert!(
            port > 0.0 && port <= first && start["checked_s"].as_f64().unwrap() >= first,
            "{name}: {start}"
        );
        let hlog = dir.join(run["histogram_log"].as_str().unwrap());
        assert!(
            std::fs::metadata(&hlog).unwrap().len() > 100,
            "{}",
            hlog.display()
        );
    }
    for c in r["contenders"].as_array().unwrap() {
        assert_eq!(c["verification"]["passed"], true);
        assert!(
            c["command"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a == "-Xmx512m"),
            "same heap for every JVM"
        );
    }
    // The table can be rebuilt from results.json alone.
    let t = run(&["table", dir.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&t.stdout).contains("latency p99 (ms)"));
}

/// Arms: a contender under settings of its own, beside itself in the same rounds. Node's
/// cluster contender with its default (a worker per CPU it is pinned to: one) and an arm of it
/// with two workers, which its start-up line reports: each arm is started with its own
/// settings, under its own name, in every round.
#[test]
#[ignore = "needs the built Node contenders; run by ./iobound test"]
fn arms_of_one_contender_run_in_the_same_rounds_with_settings_of_their_own() {
    let _machine = beside_others(&[]);
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("arms.toml");
    std::fs::write(
        &plan,
        r#"
name = "arms"
contenders = ["node-cluster", "two-workers"]
runs = 2
warmup = "2s"
warmup_min = "1s"

[arms]
two-workers = "node-cluster"

[tunables.two-workers]
workers = 2

[cpus]
contender = "0"
driver = "1"

[[scenario]]
name = "plaintext"
path = "/plaintext"
[scenario.load]
model = "closed"
users = 4
duration = "2s"
"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = run(&[
        "run",
        "--plan",
        plan.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let r = load_results(&results_dir(&out));
    let contenders = r["contenders"].as_array().unwrap();
    let of = |name: &str| {
        contenders
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {contenders:?}"))
    };
    assert_eq!(of("two-workers")["arm_of"], "node-cluster");
    assert!(of("node-cluster").get("arm_of").is_none());
    assert_eq!(of("two-workers")["tunables"]["workers"], "2");
    assert_eq!(of("two-workers")["detected"]["workers"], 2);
    assert_eq!(of("node-cluster")["detected"]["workers"], 1);
    // The rounds alternate: node-cluster, two-workers, node-cluster, two-workers.
    let order: Vec<(String, u64)> = r["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| {
            assert_eq!(run["status"], "ok", "{run:?}");
            let name = run["contender"].as_str().unwrap().to_string();
            (name, run["run"].as_u64().unwrap())
        })
        .collect();
    let expected: Vec<(String, u64)> = [1, 2]
        .into_iter()
        .flat_map(|n| [("node-cluster".into(), n), ("two-workers".into(), n)])
        .collect();
    assert_eq!(order, expected);
    let report = std::fs::read_to_string(results_dir(&out).join("report.md")).unwrap();
    assert!(
        report.contains("two-workers (arm of node-cluster)"),
        "{report}"
    );
}

/// A JVM contender asked to start from the JDK's AOT cache gets a training start first, which
/// writes the cache as it exits; the measured start then reads it strictly (`-XX:AOTMode=on`:
/// a cache it could not use would have failed the start, not slowed it).
#[test]
#[ignore = "needs built contenders and a JDK 25; run by ./iobound test"]
fn a_jvm_asked_for_its_aot_cache_is_trained_first_and_starts_from_it() {
    let _machine = beside_others(&[Resource::BusyCpus]);
    let argv = start_from_aot_cache("jetty", &[]);
    assert!(argv.contains(&"target/jetty.jar".to_string()), "{argv:?}");
}

/// A Spring Boot contender does the same from its extracted jar, since a JVM archive holds
/// none of a nested jar's classes; spring-mvc-virtual also has no build output of its own,
/// so its cache's folder is made for it. Under a memory limit sized for one JVM, the training
/// start is not held by it: writing the cache forks a second JVM beside the first.
#[test]
#[ignore = "needs built contenders and a JDK 25; run by ./iobound test"]
fn a_spring_boot_jar_is_extracted_for_its_aot_cache() {
    let _machine = beside_others(&[Resource::BusyCpus]);
    let name = "spring-mvc-virtual";
    let argv = start_from_aot_cache(name, &["--memory", "512m", "--heap", "256m"]);
    let extracted = repo_root().join(format!("contenders/{name}/target/{name}-extracted"));
    let jar = extracted.join("spring-mvc.jar");
    assert!(argv.contains(&jar.display().to_string()), "{argv:?}");
    assert!(
        extracted.join("lib").is_dir(),
        "no lib/ in {}",
        extracted.display()
    );
    std::fs::remove_dir_all(extracted).unwrap();
}

/// Runs `name` briefly with `jvm_start = "aot"` (and `extra` arguments) and checks that it was
/// trained, that the cache it wrote is read strictly and that the run measured; returns the
/// measured start's argv.
fn start_from_aot_cache(name: &str, extra: &[&str]) -> Vec<String> {
    let out = tempfile::tempdir().unwrap();
    let cache = repo_root().join(format!("contenders/{name}/target/{name}.aot"));
    let _ = std::fs::remove_file(&cache);
    let set = format!("{name}.jvm_start=aot");
    let mut args = vec!["run", "-c", name, "--set", &set];
    args.extend_from_slice(extra);
    let o = run(&[
        args.as_slice(),
        &[
            "--path",
            "/plaintext",
            "--users",
            "4",
            "--duration",
            "2s",
            "--warmup",
            "1s",
            "--out",
            out.path().to_str().unwrap(),
        ],
    ]
    .concat());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains(&format!("[{name}] training start")), "{err}");
    let meta = std::fs::metadata(&cache).expect("the training start wrote the AOT cache");
    assert!(meta.len() > 1 << 20, "{} bytes", meta.len());
    let r = load_results(&results_dir(out.path()));
    let c = &r["contenders"][0];
    assert_eq!(c["tunables"]["jvm_start"], "aot");
    let argv: Vec<String> = c["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    assert!(
        argv.contains(&format!("-XX:AOTCache={}", cache.display()))
            && argv.contains(&"-XX:AOTMode=on".to_string()),
        "{argv:?}"
    );
    let run = &r["runs"][0];
    assert_eq!(run["status"], "ok", "{}", run["failure"]);
    assert!(run["cold_start"]["first_200_s"].as_f64().unwrap() > 0.0);
    std::fs::remove_file(&cache).unwrap();
    argv
}
