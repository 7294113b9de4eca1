//! A validated plan in words, for `iobound run --dry-run`: what would run, where, under which
//! load, and the longest its measurements could take, before anything is built or started.

use super::Plan;
use crate::util::cpus::format_cpus;
use std::time::Duration;

/// The plan as `--dry-run` prints it.
pub fn dry_run(plan: &Plan) -> String {
    let contenders = plan.contenders.len();
    let scenarios = plan.scenarios.len();
    let runs = match plan.sequential {
        Some(_) => format!(
            "up to {} runs each (auto: until every difference is decided)",
            plan.runs
        ),
        None => format!("{} run(s) each", plan.runs),
    };
    let mut out = format!(
        "plan {:?}: {contenders} contender(s) x {scenarios} scenario(s), {runs}\n",
        plan.name
    );
    out.push_str(&format!("  contenders: {}\n", plan.contenders.join(", ")));
    out.push_str(&arms(plan));
    out.push_str(&format!(
        "  contender on CPU(s) {}, driver on CPU(s) {} ({} thread(s)), services on CPU(s) {}\n",
        format_cpus(&plan.contender_cpus),
        format_cpus(&plan.driver_cpus),
        plan.driver_threads,
        format_cpus(&plan.services_cpus)
    ));
    let limited: Vec<String> = plan
        .contenders
        .iter()
        .map(|c| (c, plan.limits.of(c)))
        .filter(|(_, l)| l.any())
        .map(|(c, l)| format!("{c} {}", l.describe()))
        .collect();
    if !limited.is_empty() {
        out.push_str(&format!(
            "  limits, each in a cgroup of its own: {}\n",
            limited.join("; ")
        ));
    }
    out.push_str(&scenarios_and_windows(plan));
    let longest = longest_round(plan) * plan.runs * contenders as u32;
    out.push_str(&format!(
        "  longest the measurements could take: {} (every warm-up to its maximum), plus each \
         contender's start and contract check{}\n",
        hours_minutes(longest),
        if plan.scenarios.iter().any(|s| s.capacity.is_some()) {
            " and the capacity searches' steps"
        } else {
            ""
        }
    ));
    if let Some(budget) = plan.sequential.as_ref().and_then(|s| s.budget) {
        out.push_str(&format!(
            "  budget {}: a round starts only if, at the pace of the longest so far, it ends within it\n",
            hours_minutes(budget)
        ));
    }
    out.push_str("  nothing was built, started or written (--dry-run)\n");
    out
}

/// The cap `window = "auto"` puts on a window.
fn window_cap() -> Duration {
    Duration::from_secs(super::MAX_WINDOW_S as u64)
}

/// A line per scenario, and how many windows a start measures when more than one.
fn scenarios_and_windows(plan: &Plan) -> String {
    let mut out = String::new();
    for s in &plan.scenarios {
        out.push_str(&format!(
            "  scenario {}: {}, {}, timeout {}s; warm-up up to {}s{}\n",
            s.name,
            s.path,
            s.load.profile.describe(),
            s.load.timeout.as_secs_f64(),
            s.warmup.as_secs_f64(),
            if plan.window_auto {
                format!(
                    "; window longer than its duration where the warm-up's noise needs it (window = \"auto\"), up to {} s",
                    window_cap().as_secs()
                )
            } else {
                String::new()
            }
        ));
    }
    if plan.windows_auto {
        out.push_str(&format!(
            "  windows per start: {} until two starts tell where the noise is, then as many as it makes worth their cost (windows = \"auto\", at most {}); each start is one value in every test\n",
            super::FIRST_WINDOWS,
            super::MAX_WINDOWS
        ));
    } else if plan.windows > 1 {
        out.push_str(&format!(
            "  windows per start: {} of each scenario's duration, one after the other in one process; each start is one value in every test\n",
            plan.windows
        ));
    }
    out
}

/// The longest one contender's round of every scenario could take: each warm-up to its maximum,
/// each window to its longest.
fn longest_round(plan: &Plan) -> Duration {
    let per_start = if plan.windows_auto {
        super::MAX_WINDOWS
    } else {
        plan.windows.max(1)
    };
    plan.scenarios
        .iter()
        .map(|s| {
            let window = s.load.profile.duration() * per_start;
            s.warmup
                + if plan.window_auto {
                    window.max(window_cap())
                } else {
                    window
                }
        })
        .sum()
}

/// "1 h 05 min", "12 min", "40 s".
fn hours_minutes(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s % 3600 / 60) {
        (0, 0) => format!("{s} s"),
        (0, m) => format!("{m} min"),
        (h, m) => format!("{h} h {m:02} min"),
    }
}

/// A line per arm: the contender it starts and the settings it starts it with.
fn arms(plan: &Plan) -> String {
    let mut out = String::new();
    for (arm, of) in &plan.arms {
        let set: Vec<String> = plan
            .tunables
            .get(arm)
            .into_iter()
            .flatten()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let set = if set.is_empty() {
            "its defaults".to_string()
        } else {
            set.join(", ")
        };
        let limits = if plan.limits.by_contender.get(arm).is_some_and(|l| l.any()) {
            ", under limits of its own"
        } else {
            ""
        };
        out.push_str(&format!(
            "  arm {arm}: {of} with {set}{limits}, in the same rounds\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::PlanFile;

    #[test]
    fn a_dry_run_says_what_would_run_and_how_long_it_could_take() {
        let toml = r#"
name = "two"
contenders = ["go-goroutines", "node"]
runs = 4
warmup = "45s"
[cpus]
contender = "0"
driver = "1"
[[scenario]]
name = "wait"
path = "/delay?ms=100"
[scenario.load]
model = "closed"
users = 64
duration = "15s"
"#;
        let plan: PlanFile = toml::from_str(toml).unwrap();
        let text = dry_run(&plan.validate().unwrap());
        assert!(
            text.contains("2 contender(s) x 1 scenario(s), 4 run(s) each"),
            "{text}"
        );
        assert!(text.contains("closed, 64 users for 15s"), "{text}");
        // 2 contenders x 4 runs x (45 s + 15 s) = 8 minutes.
        assert!(text.contains("could take: 8 min"), "{text}");
        assert!(text.contains("nothing was built"), "{text}");
        assert!(!text.contains("limits"), "no limits, none said: {text}");
        let limited = format!("{toml}[limits]\ncpus = 0.5\n[limits.node]\nmemory = \"512m\"\n");
        let plan: PlanFile = toml::from_str(&limited).unwrap();
        let text = dry_run(&plan.validate().unwrap());
        assert!(
            text.contains("limits, each in a cgroup of its own: go-goroutines quota 0.5 CPU; node quota 0.5 CPU, memory 512 MB"),
            "{text}"
        );
    }

    #[test]
    fn durations_read_in_hours_and_minutes() {
        assert_eq!(hours_minutes(Duration::from_secs(40)), "40 s");
        assert_eq!(hours_minutes(Duration::from_secs(720)), "12 min");
        assert_eq!(hours_minutes(Duration::from_secs(3900)), "1 h 05 min");
    }
}
