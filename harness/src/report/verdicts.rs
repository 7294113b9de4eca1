//! The verdicts at the top of every output: one sentence per scenario, built from tested or
//! equivalence statements only, with why repeating stopped. Results written before verdicts
//! existed have none, and their reports are unchanged.

use super::chart::esc;
use crate::results::record::Results;
use crate::stats::verdict_words::runs_needed;
use std::fmt::Write;

fn stopped(results: &Results) -> Option<&str> {
    results.verdicts.first().map(|v| v.stopped.as_str())
}

/// When no difference could be tested at all (too few runs everywhere), one line says so
/// instead of a "not tested" sentence for every pair and metric.
fn none_tested(results: &Results) -> Option<String> {
    let mut findings = results.verdicts.iter().flat_map(|v| &v.findings).peekable();
    findings.peek()?;
    let (mut fewest, mut most, mut needed) = (usize::MAX, 0, 0);
    for f in findings {
        if f.outcome != "not tested" {
            return None;
        }
        fewest = fewest.min(f.runs);
        most = most.max(f.runs);
        needed = needed.max(runs_needed(f));
    }
    let runs = if fewest == most {
        format!("{fewest}")
    } else {
        format!("{fewest} to {most}")
    };
    Some(format!(
        "none tested: {runs} run(s) at steady state each, and a verdict needs {needed} or more a side at steady \
         state (more --runs, or --runs auto, which goes on until each difference is decided); every \
         difference below is untested"
    ))
}

/// The verdicts, first in every output.
pub struct Verdicts;

impl super::section::Section for Verdicts {
    /// Lines for the terminal, before the tables.
    fn terminal(&self, results: &Results) -> String {
        let Some(why) = stopped(results) else {
            return String::new();
        };
        if let Some(line) = none_tested(results) {
            return format!("\nVerdicts: {line}\n");
        }
        let mut out =
            String::from("\nVerdicts (tested, or equivalent within the margin; else undecided):\n");
        for v in &results.verdicts {
            let _ = writeln!(out, "  [{}] {}", v.mark(), v.sentence);
        }
        let _ = writeln!(out, "  repeats: {why}");
        if results.plan.get("sequential").is_some() {
            let _ = writeln!(
                out,
                "  (a verdict accounts for every look, p <= {} each; the diff column below is one \
                 test at p <= 0.05 and may mark what is still undecided here)",
                crate::stats::sequential::LOOK_ALPHA
            );
        }
        out
    }

    fn markdown(&self, results: &Results) -> String {
        let Some(why) = stopped(results) else {
            return String::new();
        };
        if let Some(line) = none_tested(results) {
            return format!("Verdicts: {line}.\n\n");
        }
        let mut md = String::from("## Verdicts\n\n");
        for v in &results.verdicts {
            let mark = match v.mark() {
                "decided" => "",
                "stopped" => " (stopped: not all decided)",
                _ => " (not all decided)",
            };
            let _ = writeln!(md, "- {}{mark}", v.sentence);
        }
        let _ = writeln!(
            md,
            "\nRepeats: {why}. A difference is \"tested\" by a two-sided rank test whose \
             false-positive rate, over every look taken, is at most 5%; \"equivalent\" means the \
             interval of the ratio lies within the margin; anything else is undecided.\n"
        );
        md
    }

    fn html(&self, results: &Results) -> String {
        let Some(why) = stopped(results) else {
            return String::new();
        };
        if let Some(line) = none_tested(results) {
            return format!(
                "<section id=\"verdicts\"><h2>Verdicts</h2><p>{}.</p></section>",
                esc(&line)
            );
        }
        let mut h = String::from("<section id=\"verdicts\"><h2>Verdicts</h2><ul>");
        for v in &results.verdicts {
            let _ = write!(h, "<li class=\"{}\">{}</li>", v.mark(), esc(&v.sentence));
        }
        let _ = write!(h, "</ul><p>Repeats: {}.</p></section>", esc(why));
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::section::Section;
    use crate::results::record::VerdictRecord;
    use crate::results::test_support::blank_results;

    #[test]
    fn verdicts_lead_every_output_and_old_results_have_none() {
        let mut r = blank_results(&["a", "b"]);
        assert_eq!(Verdicts.terminal(&r), "");
        assert_eq!(Verdicts.markdown(&r), "");
        assert_eq!(Verdicts.html(&r), "");
        r.verdicts.push(VerdictRecord {
            scenario: "plaintext".into(),
            sentence: "plaintext: b 1.20x a's throughput (tested: p = 0.008, 5 runs each)".into(),
            decided: true,
            stopped: "every headline difference decided after 5 runs each".into(),
            findings: Vec::new(),
            left_after_round: None,
        });
        assert!(Verdicts
            .terminal(&r)
            .contains("[decided] plaintext: b 1.20x a's throughput"));
        assert!(Verdicts
            .markdown(&r)
            .starts_with("## Verdicts\n\n- plaintext: b 1.20x"));
        assert!(
            Verdicts
                .html(&r)
                .contains("<li class=\"decided\">plaintext: b 1.20x a&#39;s")
                || Verdicts
                    .html(&r)
                    .contains("<li class=\"decided\">plaintext: b 1.20x a's")
        );
    }

    #[test]
    fn results_with_nothing_tested_say_so_once() {
        let finding = |runs: usize, outcome: &str| crate::results::record::Finding {
            metric: "throughput".into(),
            a: "a".into(),
            b: "b".into(),
            outcome: outcome.into(),
            ratio: Some(1.1),
            ratio_lo: None,
            ratio_hi: None,
            p: None,
            runs,
            alpha: 0.05,
            margin: 0.05,
            driver_limited: false,
            lower_bound: false,
            futility: None,
        };
        let mut r = blank_results(&["a", "b"]);
        r.verdicts.push(VerdictRecord {
            scenario: "plaintext".into(),
            sentence: "plaintext: throughput b vs a not tested (1 run(s) each; ...)".into(),
            decided: false,
            stopped: "a fixed number of runs (1), tested once at the end".into(),
            findings: vec![finding(1, "not tested"), finding(1, "not tested")],
            left_after_round: None,
        });
        let line = "none tested: 1 run(s) at steady state each, and a verdict needs 4 or more a side at steady state";
        assert!(Verdicts.terminal(&r).contains(line) && !Verdicts.terminal(&r).contains("[open]"));
        assert!(Verdicts
            .markdown(&r)
            .starts_with("Verdicts: none tested: 1 run(s) at steady state each"));
        assert!(Verdicts.html(&r).contains(line));
        // One tested finding anywhere: the sentences as before.
        r.verdicts[0].findings.push(finding(5, "different"));
        assert!(Verdicts.terminal(&r).contains("[open] plaintext"));
        assert!(Verdicts.markdown(&r).starts_with("## Verdicts"));
        // Every question closed, the undecided ones by the futility rule: stopped, not open.
        let stop = crate::results::record::Futility {
            chance: 0.0,
            rounds_left: 0,
            runs_max: 4,
            spread: 0.07,
            smallest: None,
        };
        for f in r.verdicts[0].findings.iter_mut().filter(|f| !f.decided()) {
            f.futility = Some(stop.clone());
        }
        assert_eq!(r.verdicts[0].mark(), "stopped");
        assert!(Verdicts.terminal(&r).contains("[stopped] plaintext"));
        assert!(Verdicts.markdown(&r).contains("(stopped: not all decided)"));
        assert!(Verdicts.html(&r).contains("<li class=\"stopped\">"));
    }
}
