//! The fan-out contract, `GET /aggregate?keys=..`: its cases (contract/aggregate.toml, run with
//! the contract's own) and the check that a failure cancels the calls still running, judged by
//! the downstream's own counts (`GET /_stats` there: calls served, and calls whose caller closed
//! the connection first).

use super::{Case, CaseFile, CaseResult};
use crate::services::downstream::{Control, Counts};
use crate::util::http1;
use anyhow::{Context as _, Result};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

const CASES: &str = include_str!("../../../contract/aggregate.toml");

/// How long the siblings of a failed call may take to be cancelled after the 502.
const CANCEL_WITHIN: Duration = Duration::from_millis(500);

/// How long the siblings of the cancellation check would take: well inside the contender's
/// downstream timeout (half of it, at most a second), so that a contender that leaves them
/// running sees them served, not given up at its timeout (which closes them too and would
/// read as a cancellation).
fn sibling_wait(downstream_timeout: Duration) -> Duration {
    (downstream_timeout / 2).clamp(Duration::from_millis(50), Duration::from_secs(1))
}

pub fn cases() -> Result<Vec<Case>> {
    Ok(toml::from_str::<CaseFile>(CASES)
        .context("contract/aggregate.toml")?
        .case)
}

/// One call fails after 5 ms while three others would take `sibling_wait`: the answer is a
/// 502 at once, and the three are cancelled (the downstream sees their connections close)
/// within CANCEL_WITHIN, not served to the end. A contender whose manifest says it does not
/// cancel (`expect_cancel` false) must leave all three to be served instead, as it says.
pub async fn cancels_siblings(
    addr: SocketAddr,
    downstream: &Control,
    downstream_timeout: Duration,
    expect_cancel: bool,
) -> CaseResult {
    let name = if expect_cancel {
        "aggregate cancels the calls still running when one fails"
    } else {
        "aggregate leaves the calls running when one fails, as its manifest says"
    }
    .to_string();
    let fail = |detail: String| CaseResult {
        name: name.clone(),
        passed: false,
        detail,
    };
    if let Err(e) = quiet_then_reset(downstream, downstream_timeout).await {
        return fail(format!("cannot read the downstream's counts: {e:#}"));
    }
    let ms = sibling_wait(downstream_timeout).as_millis();
    let path = format!("/aggregate?keys=w5-fail-s0,w{ms}-s1,w{ms}-s2,w{ms}-s3");
    let t0 = Instant::now();
    match http1::fetch(addr, "GET", &path, None).await {
        Ok(r) if r.status == 502 => {}
        Ok(r) => return fail(format!("status {} (want 502)", r.status)),
        Err(e) => return fail(format!("request failed: {e}")),
    }
    let answered = t0.elapsed().as_secs_f64() * 1000.0;
    // Left running, the siblings end `sibling_wait` after they began.
    let wait = if expect_cancel {
        CANCEL_WITHIN
    } else {
        sibling_wait(downstream_timeout) + Duration::from_millis(1000)
    };
    let deadline = Instant::now() + wait;
    loop {
        let Counts {
            served,
            cancelled,
            in_flight,
        } = match downstream.counts(false).await {
            Ok(c) => c,
            Err(e) => return fail(format!("cannot read the downstream's counts: {e:#}")),
        };
        // served counts the failed call too.
        let siblings_served = served.saturating_sub(1);
        let decided = if expect_cancel {
            cancelled >= 3
        } else {
            siblings_served >= 3 || cancelled > 0
        };
        if decided || Instant::now() > deadline {
            // A sibling cancelled before its request went out never reaches the downstream:
            // none served and none still running at the deadline is a cancellation too.
            let passed = if expect_cancel {
                cancelled >= 3 || (siblings_served == 0 && in_flight == 0)
            } else {
                siblings_served >= 3 && cancelled == 0
            };
            let detail = match (passed, expect_cancel) {
                (true, true) => format!("502 after {answered:.0} ms; {cancelled} of 3 sibling calls cancelled at the downstream, none served or still running"),
                (true, false) => format!("502 after {answered:.0} ms; {siblings_served} of 3 sibling calls served to the end (not cancelled)"),
                (false, true) => format!(
                    "{cancelled} of 3 sibling calls cancelled within {} ms of the 502 (downstream: {siblings_served} served, {in_flight} still running); the calls still running must be cancelled when one fails, or the manifest must say fanout_cancels = false",
                    CANCEL_WITHIN.as_millis()
                ),
                (false, false) => format!(
                    "{cancelled} of 3 sibling calls cancelled, {siblings_served} served: the manifest says fanout_cancels = false; correct it"
                ),
            };
            return CaseResult {
                name,
                passed,
                detail,
            };
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until the downstream has no call in flight, then sets its counts to zero. Calls an
/// earlier case left running (the 502 case's siblings, where a contender cancels late or not at
/// all) would otherwise count as the check's own; none lasts past the timeout, so the wait
/// ends a second after it at the latest.
async fn quiet_then_reset(downstream: &Control, downstream_timeout: Duration) -> Result<()> {
    let until = Instant::now() + downstream_timeout + Duration::from_secs(1);
    while downstream.counts(false).await?.in_flight > 0 && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    downstream.counts(true).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_siblings_end_well_inside_the_downstream_timeout() {
        let ms = |t: u64| sibling_wait(Duration::from_millis(t)).as_millis();
        assert_eq!((ms(2000), ms(1000), ms(300), ms(40)), (1000, 500, 150, 50));
    }
}
