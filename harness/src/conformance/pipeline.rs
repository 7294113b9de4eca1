//! The pipeline contract: records sent to `input` must all arrive in `output`, each enriched
//! with its key's downstream value, before a pipeline contender is measured.

use super::{CaseResult, Verification};
use crate::services::kafka::{run_load, Kafka, RecordLoad};
use std::path::Path;

/// The pipeline contract: 200 records at 100/s must all arrive in `output`, each enriched with
/// its key's downstream value. A load that cannot run is a failed check, not an error.
pub fn verify(kafka: &Kafka, cpus: &[usize], dir: &Path, name: &str) -> Verification {
    let tag = format!("verify-{name}-{}", std::process::id());
    let r = match run_load(
        kafka,
        cpus,
        dir,
        RecordLoad {
            rate: 100.0,
            warmup: 0.0,
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
    let cases = vec![
        CaseResult {
            name: "pipeline: every record sent to input arrives in output".into(),
            passed: r.lost == 0 && r.sent > 0,
            detail: format!(
                "{} sent, {} arrived, {} duplicates, {} lost {:?}",
                r.sent, r.received, r.duplicates, r.lost, r.lost_examples
            ),
        },
        CaseResult {
            name: "pipeline: each record is its input plus the downstream's value for its key"
                .into(),
            passed: r.malformed == 0 && r.failed == 0,
            detail: format!(
                "{} malformed, {} with a failed enrichment",
                r.malformed, r.failed
            ),
        },
    ];
    Verification {
        passed: cases.iter().all(|c| c.passed),
        cases,
        not_checked: Vec::new(),
    }
}
