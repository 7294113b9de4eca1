//! Conformance: checks a running contender against contract/cases.toml before it is measured.

use crate::http1;
use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

const CASES: &str = include_str!("../../contract/cases.toml");

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
}

/// What the run gives the contract's placeholders: the corpus and the downstream timeout.
pub struct Context<'a> {
    pub corpus: &'a crate::corpus::Corpus,
    pub downstream_timeout: Duration,
}

impl Context<'_> {
    /// A case with its placeholders filled and its timeout bounds set.
    fn resolve(&self, c: &Case) -> Result<Case> {
        let files = self.corpus.spec.files;
        let last = files.saturating_sub(1);
        let mut out = c.clone();
        out.path = c.path.replace("{files}", &files.to_string()).replace("{last}", &last.to_string());
        if let Some(b) = &c.body {
            if let Some(id) = b.strip_prefix("{sha512:").and_then(|r| r.strip_suffix('}')) {
                let id = if id == "last" { last } else { id.parse().with_context(|| format!("case {:?}: bad placeholder {b}", c.name))? };
                out.body = Some(self.corpus.vector(id)?);
            }
        }
        if c.timeout_bounds {
            let t = self.downstream_timeout.as_millis() as u64;
            out.min_ms = Some(t.saturating_sub(100));
            out.max_ms = Some(t + 1500);
        }
        Ok(out)
    }
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
}

pub fn cases() -> Result<Vec<Case>> {
    Ok(toml::from_str::<CaseFile>(CASES).context("contract/cases.toml")?.case)
}

/// Judges one response against a case; `Err` holds what differs.
pub fn judge(case: &Case, resp: &http1::Response, elapsed: Duration) -> std::result::Result<(), String> {
    let mut wrong = Vec::new();
    if resp.status != case.status {
        wrong.push(format!("status {} (want {})", resp.status, case.status));
    }
    if let Some(body) = &case.body {
        if resp.body != body.as_bytes() {
            let got = String::from_utf8_lossy(&resp.body);
            let shown: String = got.chars().take(80).collect();
            wrong.push(format!("body {shown:?} (want {body:?})"));
        }
    }
    if let Some(ct) = &case.content_type {
        let got = resp.header("content-type").unwrap_or("");
        if !got.to_ascii_lowercase().starts_with(&ct.to_ascii_lowercase()) {
            wrong.push(format!("content-type {got:?} (want {ct})"));
        }
    }
    let ms = elapsed.as_millis() as u64;
    if case.min_ms.is_some_and(|min| ms < min) {
        wrong.push(format!("answered after {ms} ms, before the {} ms it must wait", case.min_ms.unwrap_or(0)));
    }
    if case.max_ms.is_some_and(|max| ms > max) {
        wrong.push(format!("took {ms} ms (limit {} ms)", case.max_ms.unwrap_or(0)));
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(wrong.join("; "))
    }
}

async fn run_case(addr: SocketAddr, case: &Case) -> CaseResult {
    let n = case.concurrency.unwrap_or(1).max(1);
    let t0 = Instant::now();
    let handles: Vec<_> = (0..n)
        .map(|_| {
            let path = case.path.clone();
            tokio::spawn(async move {
                let r = tokio::time::timeout(Duration::from_secs(75), http1::fetch(addr, "GET", &path, None)).await;
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
            format!("GET {} -> {} in {} ms", case.path, case.status, slowest.as_millis())
        } else {
            format!("GET {}: {}", case.path, failures.join(" | "))
        },
    }
}

pub fn verify(rt: &tokio::runtime::Runtime, addr: SocketAddr, ctx: &Context) -> Result<Verification> {
    let cases = cases()?.iter().map(|c| ctx.resolve(c)).collect::<Result<Vec<_>>>()?;
    let results: Vec<CaseResult> = rt.block_on(async {
        let mut out = Vec::new();
        for c in &cases {
            // Ctrl-C ends verification at once (the stall cases wait seconds each).
            let stopped = async {
                while !crate::interrupt::stopped() {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            };
            tokio::select! {
                r = run_case(addr, c) => out.push(r),
                () = stopped => {
                    out.push(CaseResult { name: c.name.clone(), passed: false, detail: "interrupted".into() });
                    break;
                }
            }
        }
        out
    });
    Ok(Verification { passed: results.iter().all(|r| r.passed), cases: results })
}

pub fn print(name: &str, v: &Verification) {
    for c in &v.cases {
        eprintln!("  {} {:<58} {}", if c.passed { "PASS" } else { "FAIL" }, c.name, c.detail);
    }
    let failed = v.cases.iter().filter(|c| !c.passed).count();
    if v.passed {
        eprintln!("  {name}: all {} contract cases pass", v.cases.len());
    } else {
        eprintln!("  {name}: {failed} of {} contract cases FAIL: it will not be measured", v.cases.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(status: u16, body: &str, ct: &str) -> http1::Response {
        http1::Response { status, headers: vec![("Content-Type".into(), ct.into())], body: body.as_bytes().to_vec(), close: false }
    }

    #[test]
    fn contract_file_parses_and_covers_bad_input() {
        let cs = cases().unwrap();
        assert!(cs.len() >= 10);
        assert!(cs.iter().filter(|c| c.status == 400).count() >= 6);
        assert!(cs.iter().any(|c| c.concurrency.unwrap_or(1) > 1));
        for route in ["/plaintext", "/delay", "/hash", "/enrich"] {
            assert!(cs.iter().any(|c| c.path.starts_with(route) && c.status == 200), "{route} has a success case");
        }
    }

    #[test]
    fn placeholders_take_the_runs_corpus_and_timeout() {
        let cache = tempfile::tempdir().unwrap();
        let corpus = crate::corpus::Corpus::ensure(cache.path(), &crate::corpus::Spec { files: 3, size: 100, seed: 1 }).unwrap();
        let ctx = Context { corpus: &corpus, downstream_timeout: Duration::from_millis(2000) };
        let all: Vec<Case> = cases().unwrap().iter().map(|c| ctx.resolve(c).unwrap()).collect();
        let last = all.iter().find(|c| c.name == "hash of the last file is its SHA-512").unwrap();
        assert_eq!(last.path, "/hash?id=2");
        assert_eq!(last.body.as_deref(), Some(corpus.vector(2).unwrap().as_str()));
        assert_eq!(all.iter().find(|c| c.name == "hash id past the corpus is rejected").unwrap().path, "/hash?id=3");
        let stall = all.iter().find(|c| c.name == "enrich gives up at its timeout with 504").unwrap();
        assert_eq!((stall.min_ms, stall.max_ms), (Some(1900), Some(3500)));
        assert!(all.iter().all(|c| !c.path.contains('{') && !c.body.as_deref().unwrap_or("").contains('{')));
    }

    #[test]
    fn judge_catches_each_kind_of_difference() {
        let c = cases().unwrap().into_iter().find(|c| c.path == "/delay?ms=300").unwrap();
        let ok = resp(200, "300", "text/plain;charset=UTF-8");
        assert!(judge(&c, &ok, Duration::from_millis(320)).is_ok());
        assert!(judge(&c, &ok, Duration::from_millis(10)).unwrap_err().contains("before the 300 ms"));
        assert!(judge(&c, &resp(500, "300", "text/plain"), Duration::from_millis(320)).unwrap_err().contains("status 500"));
        assert!(judge(&c, &resp(200, "30", "text/plain"), Duration::from_millis(320)).unwrap_err().contains("body \"30\""));
        assert!(judge(&c, &resp(200, "300", "application/json"), Duration::from_millis(320)).unwrap_err().contains("content-type"));
        assert!(judge(&c, &ok, Duration::from_secs(5)).unwrap_err().contains("limit 3000 ms"));
    }
}
