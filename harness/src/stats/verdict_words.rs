//! A verdict's words: a scenario's sentence, each finding's clause (tested, equivalent,
//! undecided or not tested, and what would decide it), its p-value as a reader should see it,
//! and why a question stopped (futility, or no round left).

use super::sequential;
use super::significance::{ALPHA, MIN_RUNS};
use crate::results::record::Finding;

/// The metrics a verdict is about, with how to read each from a cell.
pub(super) struct Headline {
    pub key: &'static str,
    pub words: &'static str,
    /// Whether a saturated driver can bound it (throughput and latency can; the contender's
    /// own CPU per request cannot).
    pub load_bound: bool,
}

pub(super) const HEADLINES: &[Headline] = &[
    Headline {
        key: "throughput",
        words: "throughput",
        load_bound: true,
    },
    Headline {
        key: "p99_all",
        words: "p99 of all requests",
        load_bound: true,
    },
    Headline {
        key: "cpu",
        words: "CPU per request",
        load_bound: false,
    },
];

/// "delay-100ms: spring-webflux 3.10x spring-mvc's throughput, p99 of all requests -81%
/// (tested, 5 runs each); CPU per request equivalent within 5%; ...".
pub fn sentence(scenario: &str, findings: &[Finding], unsettled_runs: usize) -> String {
    let parts: Vec<String> = findings.iter().map(describe).collect();
    let mut s = format!("{scenario}: {}", parts.join("; "));
    if unsettled_runs > 0 {
        s.push_str(&format!(
            " [{unsettled_runs} run(s) not at steady state, left out of this verdict]"
        ));
    }
    s
}

/// What a finding from a saturated driver must say beside its words.
const DRIVER_LIMITED: &str = "; driver-limited: a bound, not the server's figure";

/// What a capacity finding must say when a search on one side stopped at a bound (its max_rate,
/// or the driver's limit) before the SLO broke.
const LOWER_BOUND: &str =
    "; one side's capacity is a lower bound: a search stopped before the SLO broke";

/// Why an undecided question stopped, in one clause: the rounds left and their chance, and the
/// smallest difference the runs it could have had would tell apart at the spread it showed.
fn futility_words(f: &crate::results::record::Futility) -> String {
    let stopped = if f.rounds_left == 0 {
        "no round left".to_string()
    } else {
        format!(
            "stopped for futility: the {} round(s) left had a {:.0}% chance to decide it",
            f.rounds_left,
            f.chance * 100.0
        )
    };
    let smallest = match f.smallest {
        Some(d) if d.is_finite() => format!(
            "{} runs a side would tell apart a difference of {:.0}% or more",
            f.runs_max,
            d * 100.0
        ),
        Some(_) => format!("{} runs a side would not tell apart even 2x", f.runs_max),
        None => format!(
            "{} runs a side are fewer than the {} a first look needs",
            f.runs_max,
            super::sequential::MIN_LOOK
        ),
    };
    format!(
        "{stopped}; at this spread ({:.0}% a run) {smallest}",
        f.spread * 100.0
    )
}

/// A p-value as a reader should see it: three decimals, and "p < 0.001" rather than a
/// "p = 0.000" that reads as impossible.
pub(super) fn p_words(p: Option<f64>) -> String {
    match p {
        Some(p) if p < 0.0005 => "p < 0.001".into(),
        Some(p) => format!("p = {p:.3}"),
        None => "p unknown".into(),
    }
}

/// Runs a side the finding's test needs before it can decide: the sequential design's first
/// look, or the single test's minimum.
pub fn runs_needed(f: &Finding) -> usize {
    if f.alpha < ALPHA {
        sequential::MIN_LOOK
    } else {
        MIN_RUNS
    }
}

/// One finding in words.
pub fn describe(f: &Finding) -> String {
    let mut words = describe_outcome(f);
    if f.outcome != "not tested" {
        // Inside the finding's closing parenthesis, so it cannot be read as the next one's.
        let at = words.rfind(')').unwrap_or(words.len());
        if f.lower_bound {
            words.insert_str(at, LOWER_BOUND);
        }
        if f.driver_limited {
            words.insert_str(at, DRIVER_LIMITED);
        }
    }
    words
}

fn describe_outcome(f: &Finding) -> String {
    let words = HEADLINES
        .iter()
        .find(|h| h.key == f.metric)
        .map_or(f.metric.as_str(), |h| h.words);
    let ratio = f.ratio.unwrap_or(f64::NAN);
    let interval = match (f.ratio_lo, f.ratio_hi) {
        (Some(lo), Some(hi)) => format!("{lo:.2}..{hi:.2}"),
        _ => "unbounded".into(),
    };
    let level = (1.0 - f.alpha) * 100.0;
    match f.outcome.as_str() {
        "different"
            if (f.metric == "throughput" || f.metric == super::capacity::METRIC)
                && !(0.9..=1.1).contains(&ratio) =>
        {
            format!(
                "{} {ratio:.2}x {}'s {words} (tested: {}, {} runs each)",
                f.b,
                f.a,
                p_words(f.p),
                f.runs
            )
        }
        "different" => format!(
            "{words} {} {:+.0}% vs {} (tested: {}, {} runs each)",
            f.b,
            (ratio - 1.0) * 100.0,
            f.a,
            p_words(f.p),
            f.runs
        ),
        "equivalent" => format!(
            "{words} {} and {} equivalent within {:.0}% (ratio {interval} at {level:.1}%, {} \
             runs each)",
            f.a,
            f.b,
            f.margin * 100.0,
            f.runs
        ),
        "undecided" => format!(
            "{words} {} vs {} undecided after {} runs each ({} / {} = {ratio:.2}, interval \
             {interval}; {})",
            f.b,
            f.a,
            f.runs,
            f.b,
            f.a,
            f.futility.as_ref().map_or_else(
                || "more runs or a quieter machine would decide it".into(),
                futility_words
            )
        ),
        _ => not_tested_words(f, words),
    }
}

/// Why a finding was not tested, and what would test it.
fn not_tested_words(f: &Finding, words: &str) -> String {
    if let Some(why) = &f.futility {
        // Stopped before a first look: the rounds left could not bring it there.
        format!(
            "{words} {} vs {} not tested ({} run(s) each; {})",
            f.b,
            f.a,
            f.runs,
            futility_words(why)
        )
    } else if f.lower_bound {
        format!(
            "{words} {} vs {} not tested (a search stopped at a bound, its max_rate or the \
             driver's limit, before the SLO broke: such a capacity is only a lower bound, so \
             these searches neither order the two nor make them equal; a higher max_rate, or a \
             driver with more CPU, would decide it)",
            f.b, f.a
        )
    } else if f.runs >= runs_needed(f) {
        // Enough runs, yet not tested: the test compares ratios of positive values, and a run
        // with no request answered ok has a throughput (and a CPU per ok answer) of zero.
        format!(
            "{words} {} vs {} not tested (zero in a run of {} runs each: no request answered \
             ok there, so there is no ratio to test)",
            f.b, f.a, f.runs
        )
    } else if f.alpha < ALPHA {
        // A sequential design (runs = "auto") that stopped short: its budget, or Ctrl-C.
        format!(
            "{words} {} vs {} not tested ({} run(s) each; a verdict needs {} or more: more \
             rounds would decide it, a longer --budget or `run --resume` with this directory)",
            f.b,
            f.a,
            f.runs,
            runs_needed(f)
        )
    } else {
        format!(
            "{words} {} vs {} not tested ({} run(s) each; a verdict needs {} or more: use \
             --runs auto)",
            f.b,
            f.a,
            f.runs,
            runs_needed(f)
        )
    }
}
