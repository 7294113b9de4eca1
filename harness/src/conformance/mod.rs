//! Conformance: checks a running contender against contract/cases.toml before it is measured.
//!
//! Holds: the contract's cases and their checks (here; one answer judged by `case_judge`, a
//! verification printed by `printed`), `order` (the order they run in, and the fan-out's
//! contract on its own), `sequences` (checks of several requests: the messages round
//! trip, keep-alive), `aggregate` (the fan-out's cases and its cancellation check), `fuzz`
//! (generated hostile inputs), `pipeline` (the Kafka pipeline's delivery check).
//! Uses: util, plan, services.

pub mod aggregate;
mod case_judge;
pub mod fuzz;
mod hostile;
mod order;
pub mod pipeline;
mod printed;
mod sequences;

use case_judge::judge;
pub use order::{verify_fanout, Fanout};
pub use printed::{print, summary_line};
pub use sequences::KEEP_ALIVE_REQUESTS;
use sequences::{keep_alive, message_round_trip};

use crate::util::http1;
use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

const CASES: &str = include_str!("../../../contract/cases.toml");

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub name: String,
    pub path: String,
    pub status: u16,
    pub body: Option<String>,
    pub content_type: Option<String>,
    pub min_ms: Option<u64>,
    pub max_ms: Option<u64>,
    pub concurrency: Option<usize>,
    #[serde(default)]
    pub timeout_bounds: bool,
    /// Checks that the contender still answers after its timeouts: run after the cases that
    /// wait them out (see `order`).
    #[serde(default)]
    pub after_timeouts: bool,
    /// Request method (default GET) and body (sent as application/json).
    pub method: Option<String>,
    pub request_body: Option<String>,
    /// Other statuses that also pass (e.g. 413 beside 400 for an oversized body).
    #[serde(default)]
    pub also_status: Vec<u16>,
    /// Expected JSON: every field given must match (objects may have more; arrays must have
    /// the same length).
    pub json: Option<String>,
    /// The response is a JSON array of this many elements.
    pub json_count: Option<usize>,
    /// Tries of a case whose `max_ms` tells calls made at once from calls made one after
    /// another: it passes when one try does. A server that makes them in turn never answers
    /// within the bound, however often it is asked; one that makes them at once but waits out
    /// a CPU quota's period (a JVM still compiling under half a CPU) sometimes misses it.
    #[serde(default)]
    pub attempts: Option<usize>,
}

/// What the run gives the contract's placeholders: the corpus and the downstream timeout.
pub struct Context<'a> {
    pub corpus: &'a crate::services::corpus::Corpus,
    pub downstream_timeout: Duration,
    /// Reset before the cases, so that the /messages cases see the seed rows.
    pub database: Option<&'a crate::services::database::Database>,
    /// For a contender that serves the fan-out: its cases join the contract's, and its
    /// cancellation check runs with them.
    pub fanout: Option<Fanout<'a>>,
}

impl Context<'_> {
    /// A case with its placeholders filled and its timeout bounds set.
    fn resolve(&self, c: &Case) -> Result<Case> {
        let files = self.corpus.spec.files;
        let last = files.saturating_sub(1);
        let mut out = c.clone();
        out.path = c
            .path
            .replace("{files}", &files.to_string())
            .replace("{last}", &last.to_string());
        if let Some(b) = &c.body {
            if let Some(id) = b.strip_prefix("{sha512:").and_then(|r| r.strip_suffix('}')) {
                let id = if id == "last" {
                    last
                } else {
                    id.parse()
                        .with_context(|| format!("case {:?}: bad placeholder {b}", c.name))?
                };
                out.body = Some(self.corpus.vector(id)?);
            }
        }
        if let Some(b) = &c.request_body {
            out.request_body =
                Some(expand_repeats(b).with_context(|| format!("case {:?}", c.name))?);
        }
        with_timeout_bounds(&mut out, self.downstream_timeout);
        Ok(out)
    }
}

/// A `timeout_bounds` case's expected time: the downstream timeout, give or take.
fn with_timeout_bounds(c: &mut Case, downstream_timeout: Duration) {
    if c.timeout_bounds {
        let t = downstream_timeout.as_millis() as u64;
        c.min_ms = Some(t.saturating_sub(100));
        c.max_ms = Some(t + 1500);
    }
}

/// `{repeat:N:TEXT}` in a request body becomes TEXT N times (long and oversized bodies).
fn expand_repeats(body: &str) -> Result<String> {
    let mut out = body.to_string();
    while let Some(at) = out.find("{repeat:") {
        let end = at + out[at..].find('}').context("unclosed {repeat:N:TEXT}")?;
        let (n, text) = out[at + 8..end]
            .split_once(':')
            .context("write {repeat:N:TEXT}")?;
        let n: usize = n.parse().context("{repeat:N:TEXT} needs a number N")?;
        out.replace_range(at..=end, &text.repeat(n));
    }
    Ok(out)
}

#[derive(Deserialize)]
struct CaseFile {
    case: Vec<Case>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CaseResult {
    pub name: String,
    pub passed: bool,
    /// What was wrong, or what was seen when it passed.
    pub detail: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Verification {
    pub passed: bool,
    pub cases: Vec<CaseResult>,
    /// Routes left out because the run does not use them (and so did not start their service).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_checked: Vec<String>,
}

pub fn cases() -> Result<Vec<Case>> {
    Ok(toml::from_str::<CaseFile>(CASES)
        .context("contract/cases.toml")?
        .case)
}

/// One case, tried up to its `attempts` until a try passes (the last try's result otherwise,
/// which says how many it took).
async fn run_case(addr: SocketAddr, case: &Case) -> CaseResult {
    let tries = case.attempts.unwrap_or(1).max(1);
    let mut result = try_case(addr, case).await;
    let mut tried = 1;
    while !result.passed && tried < tries {
        result = try_case(addr, case).await;
        tried += 1;
    }
    if !result.passed && tries > 1 {
        result.detail = format!("{} (each of {tries} tries failed)", result.detail);
    }
    result
}

async fn try_case(addr: SocketAddr, case: &Case) -> CaseResult {
    let n = case.concurrency.unwrap_or(1).max(1);
    let t0 = Instant::now();
    let method = case.method.clone().unwrap_or_else(|| "GET".into());
    let handles: Vec<_> = (0..n)
        .map(|_| {
            let (path, method, body) =
                (case.path.clone(), method.clone(), case.request_body.clone());
            tokio::spawn(async move {
                let body = body.as_deref().map(|b| ("application/json", b.as_bytes()));
                let r = tokio::time::timeout(
                    Duration::from_secs(75),
                    http1::fetch(addr, &method, &path, body),
                )
                .await;
                (r, t0.elapsed())
            })
        })
        .collect();
    let mut failures = Vec::new();
    let mut slowest = Duration::ZERO;
    for h in handles {
        let Ok((r, elapsed)) = h.await else {
            failures.push("check task failed".to_string());
            continue;
        };
        slowest = slowest.max(elapsed);
        match r {
            Ok(Ok(resp)) => {
                if let Err(e) = judge(case, &resp, elapsed) {
                    failures.push(e);
                }
            }
            Ok(Err(e)) => failures.push(format!("request failed: {e}")),
            Err(_) => failures.push("no response within 75 s".into()),
        }
    }
    failures.dedup();
    CaseResult {
        name: case.name.clone(),
        passed: failures.is_empty(),
        detail: if failures.is_empty() {
            format!(
                "{method} {} -> {} in {} ms",
                case.path,
                case.status,
                slowest.as_millis()
            )
        } else {
            format!("{method} {}: {}", case.path, failures.join(" | "))
        },
    }
}

/// `group`'s cases at the same time, their results in the group's order. Dropped (Ctrl-C), it
/// stops them all.
async fn run_together(addr: SocketAddr, group: &[Case]) -> Vec<CaseResult> {
    if let [case] = group {
        return vec![run_case(addr, case).await];
    }
    let mut running = tokio::task::JoinSet::new();
    for (i, case) in group.iter().cloned().enumerate() {
        running.spawn(async move { (i, run_case(addr, &case).await) });
    }
    let mut results: Vec<Option<CaseResult>> = group.iter().map(|_| None).collect();
    while let Some(done) = running.join_next().await {
        if let Ok((i, r)) = done {
            results[i] = Some(r);
        }
    }
    group
        .iter()
        .zip(results)
        .map(|(case, r)| {
            r.unwrap_or_else(|| CaseResult {
                name: case.name.clone(),
                passed: false,
                detail: "check task failed".into(),
            })
        })
        .collect()
}

pub fn verify(
    rt: &tokio::runtime::Runtime,
    addr: SocketAddr,
    ctx: &Context,
) -> Result<Verification> {
    // Without PostgreSQL (a plan that never calls /messages) its cases are left out, and said so.
    let mut all = cases()?;
    if ctx.fanout.is_some() {
        all.extend(aggregate::cases()?);
    }
    let cases = all
        .iter()
        .filter(|c| ctx.database.is_some() || !c.path.starts_with("/messages"))
        .map(|c| ctx.resolve(c))
        .collect::<Result<Vec<_>>>()?;
    if let Some(db) = ctx.database {
        db.reset(rt)?;
    }
    let steps = order::steps(&cases, ctx.fanout.is_some());
    let results: Vec<CaseResult> = rt.block_on(async {
        let mut out =
            order::run_steps(addr, &steps, ctx.fanout.as_ref(), ctx.downstream_timeout).await;
        if !crate::util::interrupt::stopped() {
            if ctx.database.is_some() {
                out.push(message_round_trip(addr).await);
            }
            out.push(keep_alive(addr).await);
        }
        out
    });
    let not_checked = if ctx.database.is_some() {
        Vec::new()
    } else {
        vec!["/messages (no scenario calls it, so PostgreSQL was not started; `iobound verify` checks it)".to_string()]
    };
    Ok(Verification {
        passed: results.iter().all(|r| r.passed),
        cases: results,
        not_checked,
    })
}

/// Prints a verification: one line per contender ("69/69 contract cases pass, 6,000 hostile
/// inputs") unless --verbose; every case when asked, and the failing ones always.
#[cfg(test)]
mod tests {
    use super::case_judge::json_matches;
    use super::*;

    fn resp(status: u16, body: &str, ct: &str) -> http1::Response {
        http1::Response {
            status,
            headers: vec![("Content-Type".into(), ct.into())],
            body: body.as_bytes().to_vec(),
            close: false,
        }
    }

    #[test]
    fn contract_file_parses_and_covers_bad_input() {
        let cs = cases().unwrap();
        assert!(cs.len() >= 10);
        assert!(cs.iter().filter(|c| c.status == 400).count() >= 6);
        assert!(cs.iter().any(|c| c.concurrency.unwrap_or(1) > 1));
        for route in ["/plaintext", "/delay", "/hash", "/enrich", "/messages"] {
            assert!(
                cs.iter()
                    .any(|c| c.path.starts_with(route) && c.status == 200),
                "{route} has a success case"
            );
        }
    }

    #[test]
    fn placeholders_take_the_runs_corpus_and_timeout() {
        let cache = tempfile::tempdir().unwrap();
        let corpus = crate::services::corpus::Corpus::ensure(
            cache.path(),
            &crate::plan::CorpusSpec {
                files: 3,
                size: 100,
                seed: 1,
            },
        )
        .unwrap();
        let ctx = Context {
            corpus: &corpus,
            downstream_timeout: Duration::from_millis(2000),
            database: None,
            fanout: None,
        };
        let all: Vec<Case> = cases()
            .unwrap()
            .iter()
            .map(|c| ctx.resolve(c).unwrap())
            .collect();
        let last = all
            .iter()
            .find(|c| c.name == "hash of the last file is its SHA-512")
            .unwrap();
        assert_eq!(last.path, "/hash?id=2");
        assert_eq!(
            last.body.as_deref(),
            Some(corpus.vector(2).unwrap().as_str())
        );
        assert_eq!(
            all.iter()
                .find(|c| c.name == "hash id past the corpus is rejected")
                .unwrap()
                .path,
            "/hash?id=3"
        );
        let stall = all
            .iter()
            .find(|c| c.name == "enrich gives up at its timeout with 504")
            .unwrap();
        assert_eq!((stall.min_ms, stall.max_ms), (Some(1900), Some(3500)));
        assert!(all
            .iter()
            .all(|c| !c.path.contains('{') && !c.body.as_deref().unwrap_or("").contains('{')));
        let long = all
            .iter()
            .find(|c| c.name == "messages: 1,000 characters (2,000 bytes of UTF-8) are accepted")
            .unwrap();
        assert_eq!(
            long.request_body.as_deref().unwrap().chars().count(),
            1000 + r#"{"text":""}"#.len()
        );
    }

    #[test]
    fn json_expectations_match_fields_not_formatting() {
        let want: serde_json::Value =
            serde_json::from_str(r#"{"id":1,"text":"seed message 1"}"#).unwrap();
        assert!(json_matches(
            &want,
            &serde_json::from_str(r#"{ "text" : "seed message 1", "id": 1.0, "extra": true }"#)
                .unwrap()
        ));
        assert!(!json_matches(
            &want,
            &serde_json::from_str(r#"{"id":"1","text":"seed message 1"}"#).unwrap()
        ));
        assert!(!json_matches(
            &want,
            &serde_json::from_str(r#"{"id":1}"#).unwrap()
        ));
        let list: serde_json::Value = serde_json::from_str(r#"[{"id":2},{"id":1}]"#).unwrap();
        assert!(!json_matches(
            &list,
            &serde_json::from_str(r#"[{"id":2}]"#).unwrap()
        ));
        let c = cases()
            .unwrap()
            .into_iter()
            .find(|c| c.json_count == Some(20))
            .unwrap();
        let twenty = format!("[{}]", vec!["{}"; 20].join(","));
        assert!(judge(&c, &resp(200, &twenty, "application/json"), Duration::ZERO).is_ok());
        assert!(
            judge(&c, &resp(200, "[{}]", "application/json"), Duration::ZERO)
                .unwrap_err()
                .contains("1 elements")
        );
        assert!(
            judge(&c, &resp(200, "[{", "application/json"), Duration::ZERO)
                .unwrap_err()
                .contains("not JSON")
        );
        assert_eq!(
            expand_repeats("{\"t\":\"{repeat:3:ab}\"}").unwrap(),
            "{\"t\":\"ababab\"}"
        );
    }

    #[test]
    fn judge_catches_each_kind_of_difference() {
        let c = cases()
            .unwrap()
            .into_iter()
            .find(|c| c.path == "/delay?ms=300")
            .unwrap();
        let ok = resp(200, "300", "text/plain;charset=UTF-8");
        assert!(judge(&c, &ok, Duration::from_millis(320)).is_ok());
        assert!(judge(&c, &ok, Duration::from_millis(10))
            .unwrap_err()
            .contains("before the 300 ms"));
        // An event loop's timer a little early by the client's clock (its loop's cached time)
        // still waited; 3% early did not.
        assert!(judge(&c, &ok, Duration::from_micros(299_400)).is_ok());
        assert!(judge(&c, &ok, Duration::from_micros(294_100)).is_ok());
        assert!(judge(&c, &ok, Duration::from_millis(291))
            .unwrap_err()
            .contains("answered after 291 ms, before the 300 ms"));
        assert!(judge(
            &c,
            &resp(500, "300", "text/plain"),
            Duration::from_millis(320)
        )
        .unwrap_err()
        .contains("status 500"));
        assert!(judge(
            &c,
            &resp(200, "30", "text/plain"),
            Duration::from_millis(320)
        )
        .unwrap_err()
        .contains("body \"30\""));
        assert!(judge(
            &c,
            &resp(200, "300", "application/json"),
            Duration::from_millis(320)
        )
        .unwrap_err()
        .contains("content-type"));
        assert!(judge(&c, &ok, Duration::from_secs(5))
            .unwrap_err()
            .contains("limit 3000 ms"));
    }

    #[test]
    fn a_verification_prints_as_one_line_unless_something_fails() {
        let case = |name: &str, passed: bool, detail: &str| CaseResult {
            name: name.into(),
            passed,
            detail: detail.into(),
        };
        let ok = Verification {
            passed: true,
            cases: vec![
                case("a", true, ""),
                case("b", true, ""),
                case(
                    "fuzz: 1000 generated inputs",
                    true,
                    "6000 cases (/delay, ...)",
                ),
            ],
            not_checked: vec!["/messages (no scenario calls it)".into()],
        };
        assert_eq!(summary_line("go", &ok), "go: 2/2 contract cases pass, 6,000 hostile inputs; not checked: /messages (no scenario calls it)");
        let bad = Verification {
            passed: false,
            cases: vec![case("a", true, ""), case("b", false, "500")],
            not_checked: Vec::new(),
        };
        assert_eq!(
            summary_line("go", &bad),
            "go: 1 of 2 contract cases FAIL: it will not be measured"
        );
    }

    /// Reads a request's head from `conn`: whether it came whole (the connection may close
    /// first).
    fn read_head(conn: &mut std::net::TcpStream) -> bool {
        use std::io::Read;
        let mut seen = Vec::new();
        let mut buf = [0u8; 1024];
        while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
            match conn.read(&mut buf) {
                Ok(0) | Err(_) => return false,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
        true
    }

    /// A server on loopback whose first `slow` answers take 300 ms and the rest none.
    fn slow_at_first(slow: usize) -> SocketAddr {
        use std::io::Write;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for (i, conn) in listener.incoming().enumerate() {
                let Ok(mut conn) = conn else { return };
                read_head(&mut conn);
                if i < slow {
                    std::thread::sleep(Duration::from_millis(300));
                }
                let _ = conn.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                );
            }
        });
        addr
    }

    /// A server on loopback that answers a request only once another is in flight beside it
    /// (200 "ok"), or with 503 when none came within 3 s: it tells requests sent together from
    /// requests sent in turn by what they get, not by how long they took.
    fn answers_in_pairs() -> SocketAddr {
        use std::io::Write;
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let arrived = Arc::new(AtomicUsize::new(0));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { return };
                let arrived = arrived.clone();
                std::thread::spawn(move || {
                    if !read_head(&mut conn) {
                        return;
                    }
                    let mine = arrived.fetch_add(1, Ordering::SeqCst) / 2;
                    let deadline = Instant::now() + Duration::from_secs(3);
                    // Paired when the other of this pair has arrived too.
                    let paired = || arrived.load(Ordering::SeqCst) >= 2 * (mine + 1);
                    while !paired() && Instant::now() < deadline {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    let answer: &[u8] = if paired() {
                        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
                    } else {
                        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    };
                    let _ = conn.write_all(answer);
                });
            }
        });
        addr
    }

    #[test]
    fn the_stall_cases_run_together_then_the_cancellation_check_then_what_follows_timeouts() {
        let mut all = cases().unwrap();
        all.extend(aggregate::cases().unwrap());
        let steps = order::steps(&all, true);
        let names = |g: &[Case]| g.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        let at = |want: &dyn Fn(&order::Step) -> bool| steps.iter().position(want).unwrap();
        let stalls = at(&|s| matches!(s, order::Step::Together(g) if g.len() > 1));
        let order::Step::Together(group) = &steps[stalls] else {
            unreachable!()
        };
        assert_eq!(
            names(group),
            [
                "enrich gives up at its timeout with 504",
                "enrich times out each of 8 stalled calls at once",
                "aggregate answers 504 when one call passes the timeout"
            ],
            "the three stall cases, and nothing else, go together"
        );
        let cancellation = at(&|s| matches!(s, order::Step::Cancellation));
        assert_eq!(
            cancellation,
            stalls + 1,
            "cancelling is checked right after the stalls"
        );
        let cases_of = |range: &[order::Step]| -> Vec<Case> {
            range
                .iter()
                .flat_map(|s| match s {
                    order::Step::Together(g) => g.clone(),
                    order::Step::Cancellation => Vec::new(),
                })
                .collect()
        };
        let after = cases_of(&steps[cancellation + 1..]);
        assert_eq!(
            names(&after),
            [
                "enrich still answers after timeouts",
                "aggregate still answers after a timeout"
            ]
        );
        let before = cases_of(&steps[..stalls]);
        assert!(before
            .iter()
            .all(|c| !c.timeout_bounds && !c.after_timeouts));
        let others: Vec<Case> = all
            .iter()
            .filter(|c| !c.timeout_bounds && !c.after_timeouts)
            .cloned()
            .collect();
        assert_eq!(
            names(&before),
            names(&others),
            "the rest in the contract's order"
        );
        assert_eq!(
            before.len() + group.len() + after.len(),
            all.len(),
            "every case once"
        );
        // Without the fan-out there is no cancellation step.
        assert!(!order::steps(&cases().unwrap(), false)
            .iter()
            .any(|s| matches!(s, order::Step::Cancellation)));

        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let case = |name: &str| -> Case {
            toml::from_str(&format!(
                "name = '{name}'\npath = '/x'\nstatus = 200\nbody = 'ok'\ntimeout_bounds = true"
            ))
            .unwrap()
        };
        let pair = [case("first"), case("second")];
        let r = rt.block_on(run_together(answers_in_pairs(), &pair));
        assert_eq!(
            names(&pair),
            r.iter().map(|r| r.name.clone()).collect::<Vec<_>>()
        );
        assert!(r.iter().all(|r| r.passed), "sent together: {r:?}");
        // The same server, one case alone: nothing beside it, so it is refused.
        let r = rt.block_on(run_together(answers_in_pairs(), &pair[..1]));
        assert!(!r[0].passed && r[0].detail.contains("503"), "{r:?}");
    }

    #[test]
    fn a_timing_case_passes_on_a_later_try_and_says_when_every_try_failed() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let case: Case = toml::from_str(
            "name = 't'\npath = '/x'\nstatus = 200\nbody = 'ok'\nmax_ms = 150\nattempts = 2",
        )
        .unwrap();
        let once = Case {
            attempts: None,
            ..case.clone()
        };
        let r = rt.block_on(run_case(slow_at_first(1), &once));
        assert!(
            !r.passed && r.detail.contains("limit 150 ms"),
            "{}",
            r.detail
        );
        let r = rt.block_on(run_case(slow_at_first(1), &case));
        assert!(r.passed, "{}", r.detail);
        let r = rt.block_on(run_case(slow_at_first(2), &case));
        assert!(!r.passed, "{}", r.detail);
        assert!(
            r.detail.ends_with("(each of 2 tries failed)"),
            "{}",
            r.detail
        );
    }
}
