//! A capacity search: the highest open-model arrival rate at which a contender keeps its SLO.
//! Probes step the rate up geometrically until the SLO breaks, bisect between the last passing
//! and the first failing rate to the stated precision, then repeat both final rates so the
//! answer comes with how often each held. Every probe is a run of its own ("<name>@<rate>").

use super::capacity_search::{next_rate, Tally};
use crate::plan::{Capacity, Load, Profile, Scenario};
use crate::results::details::{Detail, Probe};
use crate::results::record::{CapacityResult, Run, RunStatus};
use crate::results::steady::unsettled;
use crate::run::context::RunCtx;
use crate::run::slo::{judge, servers_failure, slo_words};
use crate::services::contender::Running;
use crate::util::interrupt;
use std::net::SocketAddr;
use std::time::Duration;

/// A probe stopped early once its p99 stayed above this many times the latency objective...
pub const ABORT_FACTOR: f64 = 10.0;
/// ...for this many seconds in a row.
pub const ABORT_AFTER_S: u32 = 3;
/// Probes in which the driver fell behind that a search probes again before it stops.
const DRIVER_RETRIES: u32 = 2;
/// Pause after a probe that broke the SLO, so that the backlog it left in the server does not
/// start the next one: the probe's length, 2 s to 10 s (a probe over capacity by x% leaves
/// about x% of its length in queued work).
fn cool_down(probe: Duration) -> Duration {
    probe.clamp(Duration::from_secs(2), Duration::from_secs(10))
}

/// One search in progress: what it probes and what the probes showed.
struct Search<'a> {
    name: &'a str,
    s: &'a Scenario,
    c: &'a Capacity,
    addr: SocketAddr,
    tally: Tally,
    /// Indices of the probe runs in `res.runs`.
    probes: Vec<usize>,
    /// The lowest failing rate and what broke there.
    first_failure: Option<(f64, Option<String>)>,
    /// A probe's driver fell behind (again): higher rates would say nothing of the server.
    driver_stop: bool,
    /// Probes the driver fell behind in, probed again.
    driver_retries: u32,
    /// Which search of the scenario this is (the plan's round).
    repeat: u32,
}

impl RunCtx<'_> {
    /// One contender's capacity search in scenario `s`; probes are appended as runs and the
    /// answer to `res.capacity`.
    pub(in crate::run) fn capacity_round(
        &mut self,
        name: &str,
        mut proc: Option<&mut Running>,
        addr: SocketAddr,
        s: &Scenario,
        c: &Capacity,
        repeat: u32,
    ) {
        let Profile::Open { rate: start, .. } = s.load.profile else {
            return;
        };
        let mut st = Search {
            name,
            s,
            c,
            addr,
            tally: Tally::default(),
            probes: Vec::new(),
            first_failure: None,
            driver_stop: false,
            driver_retries: 0,
            repeat,
        };
        // Step up, then bisect.
        let mut warm = true;
        while !st.driver_stop {
            let (lo, hi) = st.tally.bounds();
            let Some(rate) = next_rate(c, start, lo, hi) else {
                break;
            };
            if self
                .probe(&mut st, proc.as_deref_mut(), rate, warm)
                .is_none()
            {
                break;
            }
            warm = false;
        }
        // Repeat the final passing and failing rates, alternating, until each has `repeats` probes.
        let (lo, hi) = st.tally.bounds();
        'repeats: for _ in 1..c.repeats {
            for rate in [lo, hi].into_iter().flatten() {
                if st.driver_stop || st.tally.of(rate).1 >= c.repeats {
                    continue;
                }
                if self
                    .probe(&mut st, proc.as_deref_mut(), rate, false)
                    .is_none()
                {
                    break 'repeats;
                }
            }
        }
        let result = self.capacity_result(&st);
        eprintln!("[{name}] capacity: {}", result.verdict);
        self.res.capacity.push(result);
        self.res.checkpoint(self.dir);
    }

    /// One probe at `rate`: a measured open-model run of the scenario's duration, judged
    /// against the SLO. None when the search cannot go on (Ctrl-C, a crash).
    fn probe(
        &mut self,
        st: &mut Search,
        proc: Option<&mut Running>,
        rate: f64,
        warm: bool,
    ) -> Option<bool> {
        if interrupt::stopped() {
            return None;
        }
        let (name, s, c) = (st.name, st.s, st.c);
        let Profile::Open { duration, .. } = s.load.profile else {
            return None;
        };
        let k = self
            .res
            .runs
            .iter()
            .filter(|r| r.contender == name && r.details.probe().is_some_and(|p| p.of == s.name))
            .count() as u32
            + 1;
        let p = probe_scenario(s, rate, warm);
        eprintln!(
            "[{name}] capacity probe {k}: {rate:.0} req/s for {}s",
            duration.as_secs()
        );
        self.abort_p99_ms = c.latency_objective_ms().map(|o| o * ABORT_FACTOR);
        self.gave_up.set(false);
        let before = self.res.runs.len();
        self.measure_scenario(name, proc, st.addr, &p, k);
        self.abort_p99_ms = None;
        let stopped_early = self.gave_up.get();
        let run = self.res.runs.get_mut(before)?;
        let retries_left = st.driver_retries < DRIVER_RETRIES;
        let Assessed {
            probe,
            retry,
            inherited,
        } = assess(run, c, &s.name, rate, stopped_early, retries_left);
        let probe = Probe {
            search: st.repeat,
            ..probe
        };
        let (passed, driver_limited, broke) =
            (probe.passed, probe.driver_limited, probe.broke.clone());
        eprintln!(
            "  {}",
            if passed {
                "SLO holds".to_string()
            } else {
                format!("SLO broken: {}", broke.join("; "))
            }
        );
        let failed_run = run.status == RunStatus::Failed;
        run.details.set(Detail::Probe(probe));
        st.probes.push(before);
        self.res.checkpoint(self.dir);
        if interrupt::stopped() || failed_run {
            return None;
        }
        if inherited || retry {
            st.driver_retries += u32::from(retry);
            std::thread::sleep(cool_down(duration));
            return Some(false);
        }
        if driver_limited {
            st.driver_stop = true;
            st.first_failure
                .get_or_insert((rate, Some("driver".into())));
            return Some(false);
        }
        st.tally.add(rate, passed);
        if !passed && st.first_failure.as_ref().is_none_or(|(r, _)| rate < *r) {
            st.first_failure = Some((rate, broke.first().map(|b| kind_of(b))));
        }
        if !passed {
            std::thread::sleep(cool_down(duration));
        }
        Some(passed)
    }

    fn capacity_result(&self, st: &Search) -> CapacityResult {
        let (tally, c) = (&st.tally, st.c);
        let (lo, hi) = tally.bounds();
        let count = |rate: Option<f64>| rate.map(|r| tally.of(r)).unwrap_or((0, 0));
        let ((lp, ln), (hp, hn)) = (count(lo), count(hi));
        let lowest = tally.lowest();
        let fmt = |v: f64| crate::util::units::thousands(v.round() as u64);
        let verdict = match (lo, hi) {
            (None, _) if st.driver_stop => format!("not found: the driver could not offer {} req/s on its CPU, so nothing was learned of the server", st.first_failure.as_ref().map_or("-".into(), |f| fmt(f.0))),
            (None, _) => format!("below the lowest rate tried ({} req/s): the SLO did not hold in {} of {hn} probes there", lowest.map_or("-".into(), fmt), hn - hp),
            (Some(l), _) if st.driver_stop => format!("at least {} req/s: the driver could not offer more on its CPU, so the server's limit was not reached", fmt(l)),
            (Some(l), None) if l >= c.max_rate => format!("at least {} req/s (the search's max_rate)", fmt(l)),
            (Some(l), None) => format!("at least {} req/s (the search was cut short)", fmt(l)),
            (Some(l), Some(h)) => format!("{} req/s: the SLO held in {lp} of {ln} probes there and broke in {} of {hn} at {} req/s", fmt(l), hn - hp, fmt(h)),
        };
        // Efficiency at the capacity: over the passing probes at that rate.
        let at_capacity: Vec<&Run> = st
            .probes
            .iter()
            .filter_map(|&i| self.res.runs.get(i))
            .filter(|r| {
                r.details
                    .probe()
                    .is_some_and(|p| Some(p.rate) == lo && p.passed)
            })
            .collect();
        let cpu_s: f64 = at_capacity.iter().map(|r| r.resources.cpu_s).sum();
        let answered: f64 = at_capacity.iter().map(|r| r.summary.ok as f64).sum();
        let rss = at_capacity
            .iter()
            .map(|r| r.resources.peak_rss_mb)
            .fold(0.0, f64::max);
        CapacityResult {
            contender: st.name.to_string(),
            scenario: st.s.name.clone(),
            repeat: st.repeat,
            slo: c
                .slo
                .iter()
                .map(|t| slo_words(t, c.default_errors))
                .collect(),
            capacity_rps: lo,
            failed_rps: hi,
            verdict,
            broke_first: st.first_failure.as_ref().and_then(|f| f.1.clone()),
            per_cpu_second: (cpu_s > 0.0).then(|| answered / cpu_s),
            per_gb_rss: lo.filter(|_| rss > 0.0).map(|l| l / (rss / 1024.0)),
            probes: st.probes.len(),
            driver_limited: st.driver_stop,
            warmup_unsettled: st
                .probes
                .first()
                .and_then(|&i| self.res.runs.get(i))
                .is_some_and(|r| unsettled(self.res, r)),
            cut_short: interrupt::stopped(),
        }
    }
}

/// "latency", "errors", or the metric's name, from a `judge` line.
fn kind_of(broke: &str) -> String {
    let metric = broke.split_whitespace().next().unwrap_or("");
    match metric {
        "errors" => "errors".into(),
        m if m.starts_with('p') || m == "max" || m == "mean" => "latency".into(),
        "stopped" => "latency".into(),
        m => m.to_string(),
    }
}

/// The probe's scenario: the capacity scenario at `rate` for its duration, its warm-up only
/// before the first probe of a search.
fn probe_scenario(s: &Scenario, rate: f64, warm: bool) -> Scenario {
    let Profile::Open {
        duration,
        max_connections,
        ..
    } = s.load.profile
    else {
        return s.clone();
    };
    Scenario {
        name: format!("{}@{rate:.0}", s.name),
        warmup: if warm { s.warmup } else { Duration::ZERO },
        load: Load {
            profile: Profile::Open {
                rate,
                ramp_to: rate,
                duration,
                max_connections,
            },
            ..s.load.clone()
        },
        capacity: None,
        ..s.clone()
    }
}

/// What a probe's run says about its rate.
struct Assessed {
    probe: Probe,
    /// The driver could not offer the rate and may try again.
    retry: bool,
    /// It began with the warm-up's backlog: it judged the warm-up, not its rate.
    inherited: bool,
}

/// Judges a probe's run against the SLO, and says when it judges nothing (driver-limited,
/// inherited backlog) or was given up early.
fn assess(
    run: &Run,
    c: &Capacity,
    of: &str,
    rate: f64,
    stopped_early: bool,
    retries_left: bool,
) -> Assessed {
    // A probe given up stays Incomplete (it was stopped): it fails the SLO, and what it
    // left in flight is counted as cut, not as errors of the server.
    // A warm-up that left requests unanswered hands the first probe its backlog: that probe
    // measures the warm-up, not its rate, and is not counted (the rate is probed again).
    let inherited = run
        .driver
        .warnings
        .iter()
        .any(|w| w.starts_with("the warm-up left"));
    let (mut passed, breaches) = judge(run, &c.slo);
    let mut broke: Vec<String> = breaches.iter().map(|b| b.text.clone()).collect();
    // A pass the driver could not offer says nothing; a failure beyond what its lateness
    // explains is still the server's (see `servers_failure`).
    let lag_p99 = run.driver.schedule_lag.as_ref().map_or(0.0, |l| l.p99);
    let servers_failure = !passed && servers_failure(&breaches, lag_p99);
    let driver_limited = run.driver.saturated && !servers_failure;
    // An inconclusive probe is probed again (a passing spell of CPU steal), and after
    // DRIVER_RETRIES the search stops there.
    let retry = driver_limited && retries_left;
    if inherited {
        passed = false;
        broke.push("not counted: it began with the warm-up's unanswered requests".into());
    } else if retry {
        passed = false;
        broke.push("not counted: probed again".into());
    }
    if stopped_early {
        passed = false;
        broke.push(format!(
            "stopped early: p99 above {ABORT_FACTOR}x the objective for {ABORT_AFTER_S} s"
        ));
    }
    Assessed {
        probe: Probe {
            of: of.to_string(),
            rate,
            passed,
            broke,
            driver_limited,
            stopped_early,
            counted: !inherited && !driver_limited,
            search: 0, // the caller knows which search it belongs to
        },
        retry,
        inherited,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::thresholds::Threshold;
    use crate::run::slo::Breach;

    fn cap() -> Capacity {
        Capacity {
            slo: vec![Threshold::parse_flag("p99<=200ms").unwrap()],
            max_rate: 10_000.0,
            growth: 2.0,
            precision: 0.05,
            repeats: 3,
            default_errors: false,
        }
    }

    fn breach(metric: &str, value: f64, limit: f64) -> Breach {
        Breach {
            metric: metric.into(),
            value,
            limit,
            text: String::new(),
        }
    }

    #[test]
    fn recorded_probes_are_the_servers_or_the_drivers_by_one_rule() {
        let driver = breach("driver", f64::NAN, f64::NAN);
        // docs/results/capacity-2026-11-23, CRUD at 16,000 req/s, SLO p99 <= 50 ms: vertx
        // p99 1,211 ms with 37 ms of driver lag, node 1,924 ms / 27 ms, go 1,146 ms / 26 ms.
        // Far beyond what the lag explains: the server's (they were called driver-limited).
        for (p99, lag) in [
            (1211.4, 37.2),
            (1924.1, 26.6),
            (1145.9, 25.7),
            (872.4, 58.3),
        ] {
            let broke = [
                breach("p99", p99, 50.0),
                breach("errors", 16.3, 0.1),
                driver.clone(),
            ];
            assert!(
                servers_failure(&broke, lag),
                "p99 {p99} ms with {lag} ms of lag"
            );
            assert!(servers_failure(&broke[..1], lag), "latency alone, {p99} ms");
        }
        // node at 8,000 req/s: only the driver fell behind (p99 41 ms held): the driver's.
        assert!(!servers_failure(std::slice::from_ref(&driver), 4.4));
        // A p99 just over the limit by less than the driver's own lateness: the driver's.
        assert!(!servers_failure(
            &[breach("p99", 60.0, 50.0), driver.clone()],
            20.0
        ));
        // Errors are the server's whatever the lag.
        assert!(servers_failure(
            &[breach("errors", 0.5, 0.1), driver],
            500.0
        ));
    }

    #[test]
    fn the_slo_judges_every_request_not_only_the_answered_ones() {
        use crate::results::test_support::blank_run;
        let mut r = blank_run("c", "s@1000", 1);
        r.status = RunStatus::Ok;
        r.summary.ok = 9_000;
        r.summary.errors.timeout = 1_000;
        // The answered requests were fast, the timed-out ones took 2 s.
        r.summary.latency.p99 = 12.0;
        r.summary.latency_all.p99 = 2_000.0;
        let slo = [Threshold::parse_flag("p99<=20ms").unwrap()];
        let (passed, broke) = judge(&r, &slo);
        assert!(!passed, "a tenth of the requests timed out");
        assert_eq!(broke[0].metric, "p99");
        assert_eq!(broke[0].value, 2_000.0);
        // And an SLO without an errors limit gets the default one.
        let plan = toml::from_str::<crate::plan::PlanFile>(
            "contenders = [\"x\"]\n[[scenario]]\nname = \"s\"\npath = \"/plaintext\"\n\
             [scenario.load]\nmodel = \"open\"\nrate = 100\nduration = \"5s\"\n\
             [scenario.capacity]\nslo = [\"p99<=20ms\"]\n",
        )
        .unwrap()
        .validate()
        .unwrap();
        let c = plan.scenarios[0].capacity.as_ref().unwrap();
        assert!(c.default_errors);
        let words: Vec<String> = c
            .slo
            .iter()
            .map(|t| slo_words(t, c.default_errors))
            .collect();
        assert_eq!(
            words,
            ["p99 <= 20 ms (all requests)", "errors <= 0.1% (default)"]
        );
        let (passed, _) = judge(&r, &c.slo);
        assert!(!passed);
    }

    /// The search against a server that keeps the SLO up to `true_capacity`.
    fn search(true_capacity: f64, start: f64) -> (Option<f64>, Option<f64>, usize) {
        let c = cap();
        let mut t = Tally::default();
        let mut n = 0;
        while let Some(r) = {
            let (lo, hi) = t.bounds();
            next_rate(&c, start, lo, hi)
        } {
            t.add(r, r <= true_capacity);
            n += 1;
            assert!(n < 40, "the search ends");
        }
        let (lo, hi) = t.bounds();
        (lo, hi, n)
    }

    #[test]
    fn the_search_brackets_the_capacity_within_its_precision() {
        let (lo, hi, n) = search(1234.0, 100.0);
        let (lo, hi) = (lo.unwrap(), hi.unwrap());
        assert!(lo <= 1234.0 && hi > 1234.0, "{lo}..{hi}");
        assert!((hi - lo) / lo <= 0.05, "{lo}..{hi}");
        assert!(n <= 12, "{n} probes");
        // Beyond max_rate: "at least max_rate", no failing rate.
        assert_eq!(search(1e9, 100.0).0, Some(10_000.0));
        assert_eq!(search(1e9, 100.0).1, None);
        // Never met: nothing passes.
        assert_eq!(search(50.0, 100.0).0, None);
    }

    #[test]
    fn a_rate_that_fails_once_in_its_repeats_is_not_the_capacity() {
        let mut t = Tally::default();
        for (r, ok) in [
            (100.0, true),
            (200.0, true),
            (400.0, false),
            (283.0, true),
            (283.0, false),
            (283.0, true),
        ] {
            t.add(r, ok);
        }
        assert_eq!(t.bounds(), (Some(200.0), Some(283.0)));
        assert_eq!(t.of(283.0), (2, 3));
    }

    #[test]
    fn what_broke_is_named() {
        assert_eq!(kind_of("p99 412 ms > 200 ms"), "latency");
        assert_eq!(kind_of("errors 3% > 0.1%"), "errors");
        assert_eq!(kind_of("stopped early: p99 above"), "latency");
    }
}
