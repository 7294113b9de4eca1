//! What a contender's start cost, counted from its exec: its port accepting, its first 200,
//! the contract checked, and the end of the first warm-up, if it settled. This is what an
//! autoscaler pays for a new instance, and where a JVM's start-up remedies (CDS, the AOT
//! cache) should show. It is recorded on the first run measured after each (re)start.

use crate::results::cold_start::ColdStart;
use crate::services::contender::Ready;
use std::time::Instant;

/// A start not yet attached to a run: when the process was exec'd, and what was timed so far.
#[derive(Debug, Clone)]
pub struct PendingStart {
    pub exec: Instant,
    pub record: ColdStart,
}

impl PendingStart {
    pub fn new(exec: Instant, ready: Ready) -> PendingStart {
        PendingStart {
            exec,
            record: ColdStart {
                port_s: ready.port.as_secs_f64(),
                first_200_s: ready.first_200.as_secs_f64(),
                ..ColdStart::default()
            },
        }
    }

    /// The contract was checked now.
    pub fn checked(&mut self) {
        self.record.checked_s = Some(self.exec.elapsed().as_secs_f64());
    }

    /// The record for the first run after the start; `warm_started`: when that run's warm-up
    /// began, and `settled_after_s`: how long it took to settle, if it did.
    pub fn finish(self, warm_started: Option<Instant>, settled_after_s: Option<f64>) -> ColdStart {
        let steady_s = match (warm_started, settled_after_s) {
            (Some(t), Some(s)) => Some(t.duration_since(self.exec).as_secs_f64() + s),
            _ => None,
        };
        ColdStart {
            steady_s,
            ..self.record
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn started(port_ms: u64, first_ms: u64) -> (Instant, PendingStart) {
        let exec = Instant::now();
        let ready = Ready {
            port: Duration::from_millis(port_ms),
            first_200: Duration::from_millis(first_ms),
        };
        (exec, PendingStart::new(exec, ready))
    }

    #[test]
    fn steady_state_is_counted_from_exec_through_the_settled_warm_up() {
        let (exec, p) = started(1_200, 1_900);
        let warm = exec + Duration::from_millis(4_500);
        let r = p.finish(Some(warm), Some(40.0));
        assert_eq!(r.port_s, 1.2);
        assert_eq!(r.first_200_s, 1.9);
        assert!((r.steady_s.unwrap() - 44.5).abs() < 1e-9, "{r:?}");
    }

    #[test]
    fn a_warm_up_that_did_not_settle_gives_no_steady_state() {
        let (exec, p) = started(10, 15);
        let r = p.finish(Some(exec + Duration::from_secs(1)), None);
        assert_eq!(r.steady_s, None);
        assert_eq!(r.first_200_s, 0.015);
    }

    #[test]
    fn the_contract_check_is_timed_from_exec() {
        let (_, mut p) = started(10, 15);
        p.checked();
        let r = p.finish(None, Some(3.0));
        assert!(r.checked_s.is_some_and(|s| s >= 0.0));
        assert_eq!(r.steady_s, None, "no warm-up start, no steady state");
    }
}
