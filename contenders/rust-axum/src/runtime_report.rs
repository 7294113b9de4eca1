//! The contract's start-up line, `iobound-runtime {json}`: the CPUs the standard library says
//! this process may use (its affinity and, on Linux, a cgroup's CPU quota) and the tokio
//! workers sized from them.

/// The line for a runtime of `workers` tokio worker threads.
pub fn runtime_line(workers: usize) -> String {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let report = serde_json::json!({
        "language": "rust",
        "cpus": cpus,
        "workers": workers,
        "workers_of": "tokio worker threads (the multi-threaded scheduler)",
    });
    format!("iobound-runtime {report}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_json_after_its_prefix() {
        let line = runtime_line(3);
        let body = line.strip_prefix("iobound-runtime ").expect("prefix");
        let v: serde_json::Value = serde_json::from_str(body).expect("JSON");
        assert_eq!(v["workers"], 3);
        assert_eq!(
            v["cpus"],
            std::thread::available_parallelism().unwrap().get()
        );
        assert!(v["workers_of"].as_str().is_some_and(|s| !s.is_empty()));
    }
}
