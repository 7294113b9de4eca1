//! `--profile`: each runtime's own profiler during the measured run (JFR, pprof, V8), kept as
//! folded stacks and drawn as a flame graph the report links. Needs the built contenders and a
//! JDK: `./iobound test` runs it.

use crate::common::*;

#[test]
#[ignore = "needs built contenders and a JDK; run by ./iobound test"]
fn profile_draws_a_flame_graph_per_contender_naming_its_own_code() {
    let _machine = beside_others(&[Resource::BusyCpus]);
    let out = tempfile::tempdir().unwrap();
    let o = run(&[
        "run",
        "-c",
        "go,node,spring-mvc-virtual",
        "--path",
        "/hash?id=1",
        "--rate",
        "300",
        "--duration",
        "4s",
        // Above the warm-up's 10 s minimum, so that each run is led into by its warm-up, the
        // window opening once the profiler has started.
        "--warmup",
        "11s",
        "--profile",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert!(
        o.status.success(),
        "run failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let dir = results_dir(out.path());
    let r = load_results(&dir);
    assert_eq!(r["plan"]["profile"], true);
    let stderr = String::from_utf8_lossy(&o.stderr);
    for name in ["go", "node", "spring-mvc-virtual"] {
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with(&format!("[{name}] warm-up: "))
                    && l.ends_with("of the same load")),
            "{name} was not led into its measured window:\n{stderr}"
        );
    }
    // A frame of each contender's own code: Go's package main, the Node server's file, the
    // Java contenders' package.
    let own = [
        ("go", "main.hash"),
        ("node", "server.js"),
        ("spring-mvc-virtual", "dev.iobound."),
    ];
    for (name, frame) in own {
        let run = r["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["contender"] == name)
            .unwrap_or_else(|| panic!("no run of {name}"));
        assert_eq!(run["status"], "ok", "{name}: {}", run["failure"]);
        let p = &run["profile"];
        assert!(
            p.is_object(),
            "{name} has no profile; warnings: {}",
            run["driver"]["warnings"]
        );
        // How many samples 4 s hold depends on how fast this machine hashes; what a profile
        // must show is the contender's own code (the frame checked below), so any will do.
        let samples = p["samples"].as_u64().unwrap();
        assert!(samples > 0, "{name}: {samples} samples");
        let folded = std::fs::read_to_string(dir.join(p["folded"].as_str().unwrap())).unwrap();
        assert!(
            folded.lines().all(|l| l
                .rsplit_once(' ')
                .is_some_and(|(_, n)| n.parse::<u64>().is_ok())),
            "{name}: folded stacks end in a count"
        );
        let svg_path = dir.join(p["folded"].as_str().unwrap().replace(".folded", ".svg"));
        let svg = std::fs::read_to_string(&svg_path)
            .unwrap_or_else(|e| panic!("{}: {e}", svg_path.display()));
        assert!(
            svg.matches("<rect").count() > 10,
            "{name}: the flame graph is empty"
        );
        assert!(
            svg.contains(frame),
            "{name}: no frame of its own code ({frame}) in the flame graph"
        );
        assert!(
            std::fs::metadata(svg_path.with_extension("png"))
                .unwrap()
                .len()
                > 1000
        );
        let tool = p["tool"].as_str().unwrap();
        assert_eq!(
            tool,
            match name {
                "go" => "pprof",
                "node" => "v8",
                _ => "jfr",
            },
            "{name}"
        );
        if name == "node" {
            // Beside the profile, every Node run carries its event-loop delay, second by second.
            let e = &run["event_loop"];
            assert!(
                e["per_second"].as_array().is_some_and(|s| s.len() >= 3),
                "node: no event-loop delay: {e}"
            );
            assert!(e["max_ms"].as_f64().unwrap() >= e["worst_p99_ms"].as_f64().unwrap());
        }
        if name == "spring-mvc-virtual" {
            // A virtual thread per request: as many as the run answered, whatever the
            // machine's speed (the recording starts before the window opens, unless its
            // jcmd took longer than the 5 s the window waits for it: half leaves room).
            let vt = p["virtual_threads_started"].as_u64().unwrap();
            let ok = run["summary"]["ok"].as_u64().unwrap();
            assert!(
                ok > 0 && vt * 2 >= ok,
                "virtual threads started: {vt} for {ok} answers"
            );
        }
    }
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        md.contains("## CPU profiles") && md.contains("profiles/go.hash-id-1.run1.svg"),
        "{md}"
    );
    assert!(
        md.contains("Event-loop delay (Node's perf_hooks") && md.contains("node "),
        "{md}"
    );
    // Nothing of the profilers is left behind (JFR's recording file, pprof's raw profile).
    let left: Vec<_> = std::fs::read_dir(dir.join("profiles"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|f| f.ends_with(".jfr") || f.ends_with(".pb.gz"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn profile_with_a_url_is_refused_before_anything_starts() {
    let o = run(&[
        "run",
        "--url",
        "http://127.0.0.1:9/plaintext",
        "--profile",
        "--duration",
        "1s",
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--profile profiles the built-in contenders")
    );
}
