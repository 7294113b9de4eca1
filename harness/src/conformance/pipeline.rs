//! The pipeline contract: records sent to `input` must all arrive in `output`, each enriched
//! with its key's downstream value, before a pipeline contender is measured.

use super::{CaseResult, Verification};
use crate::services::kafka::{run_load, Kafka, RecordLoad};
use crate::services::kafka_report::LoadReport;
use std::path::Path;

/// How long records flow before those judged: a cold pipeline's first calls (its HTTP client's
/// first connections, code not yet compiled) took up to about half a second on an idle machine
/// and past the 1 s downstream timeout `./iobound test` gives on a busy one, and a call given up
/// at the timeout is the pipeline doing as it should, not a contract failure.
const WARMUP_S: f64 = 2.0;

/// The pipeline contract: after a warm-up, 200 records at 100/s must all arrive in `output`,
/// each enriched with its key's downstream value. A load that cannot run is a failed check, not
/// an error.
pub fn verify(kafka: &Kafka, cpus: &[usize], dir: &Path, name: &str) -> Verification {
    let tag = format!("verify-{name}-{}", std::process::id());
    let r = match run_load(
        kafka,
        cpus,
        dir,
        RecordLoad {
            rate: 100.0,
            warmup: WARMUP_S,
            seconds: 2.0,
            drain: 20.0,
            start_epoch_ms: None,
        },
        &tag,
        |_| !crate::util::interrupt::stopped(),
    ) {
        Ok(r) => r,
        Err(e) => {
            let detail = format!("{e:#}");
            return Verification {
                passed: false,
                cases: vec![CaseResult {
                    name: "pipeline: records flow from input to output".into(),
                    passed: false,
                    detail,
                }],
                not_checked: Vec::new(),
            };
        }
    };
    let cases = judged(&r);
    Verification {
        passed: cases.iter().all(|c| c.passed),
        cases,
        not_checked: Vec::new(),
    }
}

/// The contract's cases on a load's report: every record arrives, the warm-up's too, and none
/// is malformed; enrichments are judged on the records after the warm-up.
fn judged(r: &LoadReport) -> Vec<CaseResult> {
    let none = LoadReport::default();
    let w = r.warmup.as_deref().unwrap_or(&none);
    vec![
        CaseResult {
            name: "pipeline: every record sent to input arrives in output".into(),
            passed: r.lost == 0 && w.lost == 0 && r.sent > 0,
            detail: format!(
                "{} sent, {} arrived, {} duplicates, {} lost {:?} (warm-up: {} sent, {} lost {:?})",
                r.sent,
                r.received,
                r.duplicates,
                r.lost,
                r.lost_examples,
                w.sent,
                w.lost,
                w.lost_examples
            ),
        },
        CaseResult {
            name: "pipeline: each record is its input plus the downstream's value for its key"
                .into(),
            passed: r.malformed == 0 && w.malformed == 0 && r.failed == 0,
            detail: format!(
                "{} malformed, {} with a failed enrichment (warm-up: {} malformed, {} failed \
                 enrichments, not judged)",
                r.malformed, r.failed, w.malformed, w.failed
            ),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(sent: u64, lost: u64, failed: u64, malformed: u64) -> LoadReport {
        LoadReport {
            sent,
            received: sent - lost,
            lost,
            failed,
            malformed,
            ..Default::default()
        }
    }

    fn passed(r: &LoadReport) -> Vec<bool> {
        judged(r).iter().map(|c| c.passed).collect()
    }

    #[test]
    fn enrichments_given_up_while_warming_up_are_not_judged_but_losses_are() {
        let mut r = report(200, 0, 0, 0);
        r.warmup = Some(Box::new(report(200, 0, 27, 0)));
        assert_eq!(passed(&r), [true, true], "a cold pipeline's timeouts");
        r.warmup = Some(Box::new(report(200, 1, 0, 0)));
        assert_eq!(passed(&r), [false, true], "a record lost while warming up");
        r.warmup = Some(Box::new(report(200, 0, 0, 1)));
        assert_eq!(
            passed(&r),
            [true, false],
            "a malformed record while warming up"
        );
        let mut r = report(200, 0, 1, 0);
        r.warmup = Some(Box::new(report(200, 0, 0, 0)));
        assert_eq!(passed(&r), [true, false], "a failed enrichment once warm");
        assert_eq!(passed(&report(0, 0, 0, 0)), [false, true], "nothing sent");
    }
}
