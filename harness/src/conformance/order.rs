//! The order a contender's cases run in. Most run one at a time, in the contract's order. The
//! cases that wait out the downstream timeout (`timeout_bounds`: the /enrich stalls and the
//! fan-out's) run together near the end, so that a start waits the timeout once, not once per
//! such case (once per case would add 2 s to every start at the default timeout, 4 s with the
//! fan-out's). The
//! fan-out's cancellation check follows them, and the cases that check the contender still
//! answers after its timeouts (`after_timeouts`) come last.
//!
//! Why the cancellation check comes after the stalls: Helidon's fan-out (a virtual thread per
//! call, `shutdownNow` on the first failure) left its three siblings running past the check's
//! 500 ms in 3 of 3 tries when the check came before any call had timed out, and cancelled them
//! in 3 of 3 once the stalled calls had been given up; the contract's order before this one had
//! the check after a stall too. Why Helidon's WebClient behaves so is not known.

use super::aggregate::{self, cancels_siblings};
use super::{run_together, with_timeout_bounds, Case, CaseResult};
use crate::services::downstream::Control;
use std::net::SocketAddr;
use std::time::Duration;

/// One step of a contender's checks.
#[derive(Debug)]
pub(super) enum Step {
    /// Cases sent at the same time (one case, or the stall cases).
    Together(Vec<Case>),
    /// The fan-out's check that a failure cancels the calls still running.
    Cancellation,
}

/// The fan-out's cancellation check, for a contender that serves /aggregate.
pub struct Fanout<'a> {
    pub downstream: &'a Control,
    /// What the manifest says (`fanout_cancels`, default true).
    pub expect_cancel: bool,
}

/// `cases` (in the contract's order) as steps: every other case alone, the stall cases
/// together, the cancellation check when `cancellation`, then the cases that follow timeouts.
pub(super) fn steps(cases: &[Case], cancellation: bool) -> Vec<Step> {
    let alone = |c: &&Case| !c.timeout_bounds && !c.after_timeouts;
    let mut steps: Vec<Step> = cases
        .iter()
        .filter(alone)
        .map(|c| Step::Together(vec![c.clone()]))
        .collect();
    let stalls: Vec<Case> = cases.iter().filter(|c| c.timeout_bounds).cloned().collect();
    if !stalls.is_empty() {
        steps.push(Step::Together(stalls));
    }
    if cancellation {
        steps.push(Step::Cancellation);
    }
    steps.extend(
        cases
            .iter()
            .filter(|c| c.after_timeouts)
            .map(|c| Step::Together(vec![c.clone()])),
    );
    steps
}

/// Runs `steps` one after another, their results in that order. Ctrl-C ends them at once (the
/// stall cases wait seconds), with an "interrupted" result for the step it cut.
pub(super) async fn run_steps(
    addr: SocketAddr,
    steps: &[Step],
    fanout: Option<&Fanout<'_>>,
    downstream_timeout: Duration,
) -> Vec<CaseResult> {
    let mut out = Vec::new();
    for step in steps {
        let stopped = async {
            while !crate::util::interrupt::stopped() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        let run = async {
            match (step, fanout) {
                (Step::Together(group), _) => run_together(addr, group).await,
                (Step::Cancellation, Some(f)) => vec![
                    cancels_siblings(addr, f.downstream, downstream_timeout, f.expect_cancel).await,
                ],
                (Step::Cancellation, None) => Vec::new(),
            }
        };
        tokio::select! {
            r = run => out.extend(r),
            () = stopped => {
                let name = match step {
                    Step::Together(group) => group[0].name.clone(),
                    Step::Cancellation => "fan-out cancellation".into(),
                };
                out.push(CaseResult { name, passed: false, detail: "interrupted".into() });
                break;
            }
        }
    }
    out
}

/// The fan-out contract on its own, in the order a contender's start runs it: the /aggregate
/// cases, the stall case, the cancellation check, and the case that follows the timeout last.
/// A start runs these with the contract's cases (`Context::fanout`); this is for a server
/// checked against the fan-out alone (tests/it/fanout.rs).
pub async fn verify_fanout(
    addr: SocketAddr,
    downstream: &Control,
    downstream_timeout: Duration,
    expect_cancel: bool,
) -> anyhow::Result<Vec<CaseResult>> {
    let mut all = aggregate::cases()?;
    for c in &mut all {
        with_timeout_bounds(c, downstream_timeout);
    }
    let fanout = Fanout {
        downstream,
        expect_cancel,
    };
    Ok(run_steps(addr, &steps(&all, true), Some(&fanout), downstream_timeout).await)
}
