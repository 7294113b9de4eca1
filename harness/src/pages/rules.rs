//! The rules of measurement as prose quotes them: `<!-- = DIR rule NAME -->` stands for one of
//! the harness's own constants (the settling window, the JIT's idle CPU, the test's alpha,
//! ...), so that method.md cannot say 5% where the code says 10%. The results directory of
//! the marker is not read: a rule is the code's, the same for every run.

use crate::observe::{settle_rule, steady_corpus, steady_rates, steady_rule};
use crate::results::{dir, warmup};
use crate::stats::{futility, futility_rates, repeats, sequential, significance};
use crate::{driver, plan, sampler};
use anyhow::{bail, Result};

/// A rule: its name in a marker (which ends in the unit prose quotes it in), its value in that
/// unit, and its usual decimals.
struct Rule {
    name: &'static str,
    value: fn() -> f64,
    decimals: usize,
}

/// A rule of RULES: its name, usual decimals and value.
const fn rule_of(name: &'static str, decimals: usize, value: fn() -> f64) -> Rule {
    Rule {
        name,
        value,
        decimals,
    }
}

const RULES: &[Rule] = &[
    rule_of("settle_window_s", 0, || warmup::SETTLE_WINDOW_S as f64),
    rule_of("warmup_band_pct", 0, || {
        percent_in(plan::DEFAULT_WARMUP_BAND)
    }),
    rule_of("warmup_min_s", 0, || seconds_in(plan::DEFAULT_WARMUP_MIN)),
    rule_of("warmup_max_s", 0, || seconds_in(plan::DEFAULT_WARMUP)),
    rule_of("jit_idle_cpu_pct", 0, || settle_rule::JIT_IDLE_CPU * 100.0),
    rule_of("min_window_s", 0, || settle_rule::MIN_WINDOW_S as f64),
    rule_of("window_trend_p", 2, || settle_rule::WINDOW_TREND_P),
    rule_of("move_to_see_pct", 0, || steady_rule::MOVE_TO_SEE * 100.0),
    rule_of("window_false_alarm_pct", 0, || {
        steady_rule::FALSE_ALARM * 100.0
    }),
    rule_of("window_z_planned", 1, || steady_rule::Z_PLANNED),
    rule_of("window_z_judged", 1, || steady_rule::Z_JUDGED),
    rule_of("window_min_steps", 0, || steady_rule::MIN_STEPS as f64),
    rule_of("window_max_steps", 0, || steady_rule::MAX_STEPS as f64),
    rule_of("window_max_s", 0, || steady_rule::MAX_WINDOW_S as f64),
    rule_of("window_lead_s", 0, || steady_rule::LEAD_S as f64),
    rule_of("window_cpu_steps", 0, || steady_rule::CPU_STEPS as f64),
    rule_of("corpus_series_per_kind", 0, || {
        steady_corpus::PER_KIND as f64
    }),
    rule_of("corpus_kinds", 0, || steady_corpus::kinds().len() as f64),
    rule_of("corpus_noise_quiet_pct", 0, || {
        steady_corpus::NOISE_QUIET * 100.0
    }),
    rule_of("corpus_noise_loop_pct", 0, || {
        steady_corpus::NOISE_LOOP * 100.0
    }),
    rule_of("corpus_noise_busy_pct", 0, || {
        steady_corpus::NOISE_BUSY * 100.0
    }),
    rule_of("corpus_step_max_pct", 0, || steady_corpus::STEP_MAX * 100.0),
    rule_of("corpus_climb_max_pct", 0, || {
        steady_corpus::CLIMB_MAX * 100.0
    }),
    rule_of("corpus_small_min_pct", 0, || {
        steady_corpus::SMALL_CLIMB.0 * 100.0
    }),
    rule_of("corpus_small_max_pct", 0, || {
        steady_corpus::SMALL_CLIMB.1 * 100.0
    }),
    rule_of("corpus_false_alarm_pct", 1, || {
        steady_rates::corpus_rates().false_alarm * 100.0
    }),
    rule_of("corpus_worst_false_alarm_pct", 1, || {
        steady_rates::corpus_rates().worst_false_alarm * 100.0
    }),
    rule_of("corpus_miss_pct", 1, || {
        steady_rates::corpus_rates().miss * 100.0
    }),
    rule_of("corpus_worst_miss_pct", 1, || {
        steady_rates::corpus_rates().worst_miss * 100.0
    }),
    rule_of("corpus_cpu_caught_pct", 0, || {
        (1.0 - steady_rates::corpus_rates().cpu_miss) * 100.0
    }),
    rule_of("alpha_pct", 0, || significance::ALPHA * 100.0),
    rule_of("look_confidence_pct", 1, || {
        (1.0 - sequential::LOOK_ALPHA) * 100.0
    }),
    rule_of("alpha", 2, || significance::ALPHA),
    rule_of("min_runs", 0, || significance::MIN_RUNS as f64),
    rule_of("first_look_runs", 0, || sequential::MIN_LOOK as f64),
    rule_of("max_runs", 0, || sequential::MAX_RUNS as f64),
    rule_of("look_alpha", 3, || sequential::LOOK_ALPHA),
    rule_of("margin_pct", 0, || sequential::DEFAULT_MARGIN * 100.0),
    rule_of("futile_below_pct", 0, || futility::FUTILE_BELOW * 100.0),
    rule_of("futility_continuations", 0, || {
        futility::CONTINUATIONS as f64
    }),
    rule_of("futility_power_at_pct", 0, || {
        futility::SMALLEST_AT_POWER * 100.0
    }),
    rule_of("futility_false_positive_pct", 1, || {
        futility_rates::figures().false_positive() * 100.0
    }),
    rule_of("futility_power_kept_pct", 0, || {
        futility_rates::figures().power_kept() * 100.0
    }),
    rule_of("futility_saved_identical_pct", 0, || {
        futility_rates::figures().saved()[0] * 100.0
    }),
    rule_of("futility_saved_near_pct", 0, || {
        futility_rates::figures().saved()[1] * 100.0
    }),
    rule_of("futility_saved_twenty_pct", 0, || {
        futility_rates::figures().saved()[2] * 100.0
    }),
    rule_of("futility_runs_identical", 1, || {
        futility_rates::figures().identical[1].0.runs
    }),
    rule_of("futility_runs_identical_without", 1, || {
        futility_rates::figures().identical[1].1.runs
    }),
    rule_of("noisy_cv_pct", 0, || repeats::NOISY_CV * 100.0),
    rule_of("steal_limit_pct", 0, || sampler::STEAL_LIMIT_PCT),
    rule_of("driver_busy_pct", 0, || driver::assess::CPU_BUSY_LIMIT_PCT),
    rule_of("driver_threads_pct", 0, || {
        driver::assess::DRIVER_SATURATED * 100.0
    }),
    rule_of("lag_limit_ms", 0, || driver::assess::LAG_LIMIT_MS),
    rule_of("sample_every_ms", 0, || {
        sampler::SAMPLE_EVERY.as_secs_f64() * 1000.0
    }),
    rule_of("census_budget_pct", 1, || sampler::CENSUS_BUDGET * 100.0),
    rule_of("timeout_s", 0, || seconds_in(plan::DEFAULT_TIMEOUT)),
    rule_of("max_file_mb", 0, || {
        dir::MAX_FILE_BYTES as f64 / (1u64 << 20) as f64
    }),
];

/// "10s" in seconds; the constants above are valid durations (a unit test reads each).
fn seconds_in(text: &str) -> f64 {
    crate::util::units::parse_duration(text).map_or(f64::NAN, |d| d.as_secs_f64())
}

/// "5%" as 5.
fn percent_in(text: &str) -> f64 {
    text.trim_end_matches('%').parse().unwrap_or(f64::NAN)
}

/// The rule with a number of runs in its name: `median_coverage_N_pct`, how often the interval
/// over N runs covers the true median (the label the report prints beside it).
const COVERAGE: (&str, &str) = ("median_coverage_", "_pct");

/// The numbers of runs the coverage rule takes: one run has no interval, and no side has more
/// runs than a plan may ask for.
const COVERAGE_RUNS: std::ops::RangeInclusive<usize> = 2..=plan::MAX_FIXED_RUNS as usize;

/// The rule named `name`, printed with its usual decimals (or `decimals`).
pub fn rule(name: &str, decimals: Option<usize>) -> Result<String> {
    let runs = name
        .strip_prefix(COVERAGE.0)
        .and_then(|n| n.strip_suffix(COVERAGE.1))
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| COVERAGE_RUNS.contains(n));
    if let Some(n) = runs {
        return Ok(crate::report::fmt_num(
            repeats::median_coverage(n) * 100.0,
            decimals.unwrap_or(0),
        ));
    }
    let Some(r) = RULES.iter().find(|r| r.name == name) else {
        let names: Vec<_> = RULES.iter().map(|r| r.name).collect();
        bail!(
            "unknown rule `{name}`: one of {}, {}N{} (N runs, {} to {})",
            names.join(", "),
            COVERAGE.0,
            COVERAGE.1,
            COVERAGE_RUNS.start(),
            COVERAGE_RUNS.end()
        );
    };
    Ok(crate::report::fmt_num(
        (r.value)(),
        decimals.unwrap_or(r.decimals),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_reads_a_number_and_an_unknown_one_names_the_known() {
        for r in RULES {
            assert!((r.value)().is_finite(), "{}", r.name);
        }
        assert_eq!(rule("min_runs", None).unwrap(), "4");
        assert_eq!(rule("look_alpha", None).unwrap(), "0.015");
        assert_eq!(rule("timeout_s", None).unwrap(), "10");
        // The coverage labels of the interval over runs: 1 - 2 / 2^n with min..max.
        assert_eq!(rule("median_coverage_3_pct", None).unwrap(), "75");
        assert_eq!(rule("median_coverage_5_pct", Some(2)).unwrap(), "93.75");
        assert!(rule("median_coverage_1_pct", None).is_err());
        let e = rule("speed", None).unwrap_err().to_string();
        assert!(
            e.contains("settle_window_s") && e.contains("median_coverage_N_pct"),
            "{e}"
        );
    }
}
