//! Hostile inputs for the contract's endpoints: huge and negative numbers, non-ASCII, encoded
//! and raw path traversal, oversized values. Every one must get a 4xx (never a 5xx, never a
//! 2xx that accepted garbage, never a hang), and the contender must keep serving afterwards.

use super::hostile::{
    bad_body, bad_id, bad_key, bad_message_id, bad_ms, bad_path, good_key, text, Rng,
};
use crate::conformance::CaseResult;
use crate::util::http1;
use std::net::SocketAddr;
use std::time::Duration;

pub struct FuzzCase {
    pub method: &'static str,
    pub path: String,
    /// A JSON request body (POST).
    pub body: Option<String>,
    /// Some(body) when the input is valid and must be answered 200 with that body.
    pub valid: Option<String>,
    /// When not empty: the input is valid and one of these statuses is the right answer
    /// (201 for a create; 200 or 404 for an id that may or may not exist).
    pub accept: &'static [u16],
    /// `valid` is JSON, compared as JSON (servers space it differently).
    pub json: bool,
}

impl FuzzCase {
    fn get(path: String, valid: Option<String>) -> FuzzCase {
        FuzzCase {
            method: "GET",
            path,
            body: None,
            valid,
            accept: &[],
            json: false,
        }
    }
}

/// An /aggregate input: valid (1 to 4 keys answered at once: a JSON array of their values),
/// or invalid: a bad key among good ones, 17 or more keys, an empty key, no keys at all.
fn aggregate_case(rng: &mut Rng, valid: bool) -> FuzzCase {
    // `min` keys and fewer than `spread` more.
    let good = |rng: &mut Rng, min: usize, spread: usize| {
        let n = min + rng.below(spread);
        (0..n).map(|_| good_key(rng)).collect::<Vec<_>>()
    };
    if valid {
        let keys = good(rng, 1, 4);
        let values: Vec<String> = keys.iter().map(|k| format!("value-{k}")).collect();
        return FuzzCase {
            json: true,
            ..FuzzCase::get(
                format!("/aggregate?keys={}", keys.join(",")),
                Some(serde_json::to_string(&values).expect("strings serialise")),
            )
        };
    }
    let keys = match rng.below(5) {
        0 => {
            let mut keys = good(rng, 0, 8);
            let at = rng.below(keys.len() + 1);
            keys.insert(at, bad_key(rng));
            keys.join(",")
        }
        1 => good(rng, 17, 40).join(","),
        2 => {
            let keys = good(rng, 1, 3).join(",");
            match rng.below(3) {
                0 => format!("{keys},"),
                1 => format!(",{keys}"),
                _ => format!("{},,{keys}", good_key(rng)),
            }
        }
        3 => {
            let path = rng.pick(&["/aggregate", "/aggregate?key=fast-a", "/aggregate?keys"]);
            return FuzzCase::get(path.into(), None);
        }
        // No ';': Netty's query decoder (Vert.x, Quarkus) still splits parameters at it, as
        // HTML 4 once advised, so "keys=a;b" is "keys=a" there and "a;b" elsewhere; the
        // contract does not judge the query syntax itself.
        _ => rng
            .pick(&["", ",", ",,", "%20", "a%20b", "a.b", "a/b"])
            .to_string(),
    };
    FuzzCase::get(format!("/aggregate?keys={keys}"), None)
}

/// For each endpoint (/delay, /hash, /enrich, GET /messages/{id}, POST /messages, and with
/// `fanout` /aggregate) `n` cases, nine in ten invalid (plus as many paths that are not
/// endpoints); the valid tenth must be answered as the contract says.
/// `vectors[i]` is the SHA-512 of corpus file i.
pub fn cases(n: usize, seed: u64, vectors: &[String], fanout: bool) -> Vec<FuzzCase> {
    let mut rng = Rng(seed.max(1));
    let files = vectors.len() as u32;
    let mut out = Vec::with_capacity(7 * n);
    for i in 0..n {
        let valid = i % 10 == 0;
        out.push(if valid {
            let ms = rng.below(4);
            FuzzCase::get(format!("/delay?ms={ms}"), Some(ms.to_string()))
        } else {
            FuzzCase::get(format!("/delay?ms={}", bad_ms(&mut rng)), None)
        });
        out.push(if valid && files > 0 {
            let id = rng.below(files as usize);
            FuzzCase::get(format!("/hash?id={id}"), Some(vectors[id].clone()))
        } else if i % 7 == 0 {
            FuzzCase::get(
                format!(
                    "/hash?id={}&delayMs={}",
                    rng.below(files.max(1) as usize),
                    bad_ms(&mut rng)
                ),
                None,
            )
        } else {
            FuzzCase::get(format!("/hash?id={}", bad_id(&mut rng, files)), None)
        });
        out.push(if valid {
            let key = good_key(&mut rng);
            FuzzCase::get(
                format!("/enrich?key={key}"),
                Some(format!("{key}=value-{key}")),
            )
        } else {
            FuzzCase::get(format!("/enrich?key={}", bad_key(&mut rng)), None)
        });
        out.push(if valid {
            FuzzCase {
                accept: &[200, 404],
                ..FuzzCase::get(
                    format!(
                        "/messages/{}",
                        1 + rng.below(crate::services::db_config::SEED_ROWS as usize)
                    ),
                    None,
                )
            }
        } else {
            FuzzCase::get(format!("/messages/{}", bad_message_id(&mut rng)), None)
        });
        let body = if valid {
            let len = 1 + rng.below(crate::services::db_config::MAX_TEXT);
            serde_json::json!({ "text": text(&mut rng, len) }).to_string()
        } else {
            bad_body(&mut rng)
        };
        out.push(FuzzCase {
            method: "POST",
            path: "/messages".into(),
            body: Some(body),
            valid: None,
            accept: if valid { &[201] } else { &[] },
            json: false,
        });
        if fanout {
            out.push(aggregate_case(&mut rng, valid));
        }
        out.push(FuzzCase::get(bad_path(&mut rng), None));
    }
    out
}

/// Judges one answer; `Err` says what was wrong.
pub fn judge(case: &FuzzCase, status: u16, body: &[u8]) -> Result<(), String> {
    let what = || match &case.body {
        Some(b) => format!("{} {} {:.60?}", case.method, case.path, b),
        None => format!("{} {}", case.method, case.path),
    };
    let same_json = |want: &str| {
        let parsed = |b: &[u8]| serde_json::from_slice::<serde_json::Value>(b).ok();
        case.json && parsed(body).is_some_and(|got| Some(got) == parsed(want.as_bytes()))
    };
    match &case.valid {
        Some(want) if status == 200 && (body == want.as_bytes() || same_json(want)) => Ok(()),
        Some(want) => Err(format!("{} -> {status} (want 200 {want:?})", what())),
        None if !case.accept.is_empty() && case.accept.contains(&status) => Ok(()),
        None if !case.accept.is_empty() => {
            Err(format!("{} -> {status} (want {:?})", what(), case.accept))
        }
        None if (400..500).contains(&status) => Ok(()),
        None => Err(format!("{} -> {status} (want 4xx)", what())),
    }
}

/// Whether the server still answers /plaintext with 200 within 5 s.
async fn serving(addr: SocketAddr) -> bool {
    let probe = http1::fetch(addr, "GET", "/plaintext", None);
    matches!(
        tokio::time::timeout(Duration::from_secs(5), probe).await,
        Ok(Ok(ref r)) if r.status == 200
    )
}

pub async fn run(
    addr: SocketAddr,
    n: usize,
    seed: u64,
    vectors: &[String],
    fanout: bool,
) -> CaseResult {
    let all = cases(n, seed, vectors, fanout);
    let mut failures = Vec::new();
    let mut sent = 0;
    for chunk in all.chunks(16) {
        let handles: Vec<_> = chunk
            .iter()
            .map(|c| {
                let (method, path, body) = (c.method, c.path.clone(), c.body.clone());
                tokio::spawn(async move {
                    let body = body.as_deref().map(|b| ("application/json", b.as_bytes()));
                    tokio::time::timeout(
                        Duration::from_secs(10),
                        http1::fetch(addr, method, &path, body),
                    )
                    .await
                })
            })
            .collect();
        let mut timed_out = false;
        for (c, h) in chunk.iter().zip(handles) {
            match h.await {
                Ok(Ok(Ok(r))) => {
                    if let Err(e) = judge(c, r.status, &r.body) {
                        failures.push(e);
                    }
                }
                // A server may refuse a request line it cannot parse by closing: that is not an
                // answer, but it is not a 5xx or a leak either; it still must keep serving.
                Ok(Ok(Err(http1::HttpError::Closed))) => {}
                Ok(Ok(Err(e))) => failures.push(format!("{}: {e}", c.path)),
                Ok(Err(_)) => {
                    timed_out = true;
                    failures.push(format!("{}: no answer within 10 s", c.path));
                }
                Err(e) => failures.push(format!("{}: {e}", c.path)),
            }
        }
        sent += chunk.len();
        // A server that stopped serving would cost 10 s per chunk for the rest of the cases
        // (an hour for a full fuzz): stop at the first chunk that timed out if it is down.
        if timed_out && !serving(addr).await {
            failures.insert(0, format!(
                "stopped serving during the fuzz: no answer on /plaintext within 5 s after {sent} of {} cases; the rest were not sent",
                all.len()
            ));
            return verdict(n, seed, &all, &failures);
        }
    }
    if !serving(addr).await {
        failures.push("stopped serving /plaintext after the fuzz cases".into());
    }
    verdict(n, seed, &all, &failures)
}

fn verdict(n: usize, seed: u64, all: &[FuzzCase], failures: &[String]) -> CaseResult {
    let shown: Vec<String> = failures.iter().take(5).cloned().collect();
    let fanout = all.iter().any(|c| c.path.starts_with("/aggregate"));
    let endpoints = format!(
        "/delay, /hash, /enrich, GET /messages/{{id}}, POST /messages, {}non-endpoints",
        if fanout { "/aggregate, " } else { "" }
    );
    CaseResult {
        name: format!(
            "fuzz: {n} generated inputs per endpoint (seed {seed}) get 4xx, valid ones 200"
        ),
        passed: failures.is_empty(),
        detail: if failures.is_empty() {
            format!(
                "{} cases ({endpoints}), all answered as the contract says; still serving",
                all.len()
            )
        } else {
            format!(
                "{} of {} wrong, e.g. {}",
                failures.len(),
                all.len(),
                shown.join(" | ")
            )
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that accepts connections and never answers stops the fuzz after its first
    /// chunk (10 s for the chunk, 5 s for the /plaintext probe), not after every case has
    /// timed out (1,200 cases in chunks of 16: over 12 minutes).
    #[tokio::test]
    async fn a_server_that_stopped_serving_ends_the_fuzz_early() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket); // read nothing, answer nothing
            }
        });
        let started = std::time::Instant::now();
        let r = run(addr, 200, 1, &[], false).await;
        let took = started.elapsed();
        assert!(!r.passed);
        assert!(took < Duration::from_secs(40), "took {took:?}");
        assert!(
            r.detail.contains("stopped serving during the fuzz")
                && r.detail.contains("after 16 of"),
            "{}",
            r.detail
        );
    }

    #[test]
    fn cases_are_deterministic_and_varied() {
        let vectors: Vec<String> = (0..50).map(|i| format!("h{i}")).collect();
        let a = cases(1000, 7, &vectors, true);
        let b = cases(1000, 7, &vectors, true);
        assert_eq!(
            a.iter().map(|c| &c.path).collect::<Vec<_>>(),
            b.iter().map(|c| &c.path).collect::<Vec<_>>()
        );
        for route in ["/delay?", "/hash?", "/enrich?", "/messages/", "/aggregate"] {
            let of: Vec<&FuzzCase> = a.iter().filter(|c| c.path.starts_with(route)).collect();
            assert_eq!(of.len(), 1000, "{route}");
            assert_eq!(
                of.iter()
                    .filter(|c| c.valid.is_some() || !c.accept.is_empty())
                    .count(),
                100,
                "{route}"
            );
        }
        assert!(a.iter().any(|c| c.path.contains("etc")));
        assert!(a.iter().any(|c| c.path.contains("ms=-")));
        assert!(a.iter().any(|c| c.path.len() > 1000));
        assert!(a
            .iter()
            .any(|c| c.path.contains("%EF%BC%95") || c.path.contains('\u{00e9}')));
        assert!(a
            .iter()
            .any(|c| c.path.starts_with("/hash?id=") && c.path.ends_with(".bin")));
        let posts: Vec<&FuzzCase> = a.iter().filter(|c| c.method == "POST").collect();
        assert_eq!(
            (
                posts.len(),
                posts.iter().filter(|c| c.accept == [201]).count()
            ),
            (1000, 100)
        );
        let bodies: Vec<&str> = posts.iter().map(|c| c.body.as_deref().unwrap()).collect();
        assert!(
            bodies.iter().any(|b| b.len() > 64 * 1024),
            "oversized bodies"
        );
        assert!(
            bodies.iter().any(|b| b.contains("\\u0000")),
            "NUL characters"
        );
        assert!(
            bodies.iter().any(|b| b.starts_with("{\"text\":[[[[")),
            "deep nesting"
        );
        assert!(
            bodies
                .iter()
                .any(|b| serde_json::from_str::<serde_json::Value>(b).is_err()),
            "invalid JSON"
        );
        for c in &posts {
            let parsed: Option<serde_json::Value> =
                serde_json::from_str(c.body.as_deref().unwrap()).ok();
            let text = parsed
                .as_ref()
                .and_then(|v| v.get("text"))
                .and_then(|t| t.as_str());
            let valid = text
                .is_some_and(|t| (1..=1000).contains(&t.chars().count()) && !t.contains('\u{0}'));
            assert_eq!(
                valid,
                c.accept == [201],
                "{:.80}",
                c.body.as_deref().unwrap()
            );
        }
        for c in a
            .iter()
            .filter(|c| c.path.starts_with("/messages/") && c.accept.is_empty())
        {
            let id = &c.path["/messages/".len()..];
            let ok = !id.is_empty()
                && id.len() <= 19
                && id.bytes().all(|b| b.is_ascii_digit())
                && id.parse::<i64>().is_ok_and(|n| n >= 1);
            assert!(!ok, "{id}");
        }
        let h = a
            .iter()
            .find(|c| c.path.starts_with("/hash?id=") && c.valid.is_some())
            .unwrap();
        let id: usize = h.path["/hash?id=".len()..].parse().unwrap();
        assert_eq!(h.valid.as_deref(), Some(vectors[id].as_str()));
        // No invalid case is accidentally valid.
        for c in a.iter().filter(|c| c.valid.is_none()) {
            if let Some(v) = c.path.strip_prefix("/delay?ms=") {
                assert!(
                    !(v.chars().all(|ch| ch.is_ascii_digit())
                        && !v.is_empty()
                        && v.len() <= 6
                        && v.parse::<u32>().unwrap() <= 60_000),
                    "{v}"
                );
            }
            if let Some(v) = c.path.strip_prefix("/hash?id=") {
                let digits = !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
                assert!(
                    !digits || v.len() > 10 || v.parse::<u64>().unwrap() >= 50,
                    "{v}"
                );
            }
            if let Some(keys) = c.path.strip_prefix("/aggregate?keys=") {
                let keys: Vec<&str> = keys.split(',').collect();
                let ok = keys.len() <= 16 && keys.iter().all(|k| valid_key(k));
                assert!(!ok, "{}", c.path);
            }
            if let Some(k) = c.path.strip_prefix("/enrich?key=") {
                assert!(!valid_key(k), "{k}");
            }
        }
    }

    /// The contract's rule for a key of /enrich and /aggregate.
    fn valid_key(k: &str) -> bool {
        !k.is_empty()
            && k.len() <= 64
            && k.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    }

    #[test]
    fn aggregate_cases_only_for_the_fan_out_and_valid_ones_expect_the_values() {
        let without = cases(200, 3, &[], false);
        assert!(without.iter().all(|c| !c.path.starts_with("/aggregate")));
        let with = cases(200, 3, &[], true);
        let valid: Vec<&FuzzCase> = with
            .iter()
            .filter(|c| c.path.starts_with("/aggregate") && c.valid.is_some())
            .collect();
        assert_eq!(valid.len(), 20);
        for c in valid {
            let keys: Vec<&str> = c.path["/aggregate?keys=".len()..].split(',').collect();
            assert!((1..=4).contains(&keys.len()) && keys.iter().all(|k| valid_key(k)));
            let want: Vec<String> = keys.iter().map(|k| format!("value-{k}")).collect();
            let spaced = want.join("\", \"");
            assert!(c.json && judge(c, 200, format!("[\"{spaced}\"]").as_bytes()).is_ok());
            let reversed: Vec<&String> = want.iter().rev().collect();
            let reversed = serde_json::to_vec(&reversed).unwrap();
            assert_eq!(
                judge(c, 200, &reversed).is_ok(),
                keys.len() == 1 || keys.windows(2).all(|w| w[0] == w[1])
            );
            assert!(judge(c, 502, b"").is_err());
        }
        // Every kind of invalid input is there.
        let invalid: Vec<&str> = with
            .iter()
            .filter(|c| c.path.starts_with("/aggregate") && c.valid.is_none())
            .map(|c| c.path.as_str())
            .collect();
        assert!(invalid.iter().any(|p| p.split(',').count() > 16));
        assert!(invalid.iter().any(|p| p.contains(",,") || p.ends_with(',')));
        assert!(invalid.iter().any(|p| !p.contains("keys=")));
    }

    #[test]
    fn judging() {
        let bad = FuzzCase::get("/delay?ms=-1".into(), None);
        assert!(judge(&bad, 400, b"").is_ok());
        assert!(judge(&bad, 500, b"").unwrap_err().contains("want 4xx"));
        assert!(judge(&bad, 200, b"-1").is_err());
        let good = FuzzCase::get("/delay?ms=2".into(), Some("2".into()));
        assert!(judge(&good, 200, b"2").is_ok());
        assert!(judge(&good, 400, b"").is_err());
        let create = FuzzCase {
            method: "POST",
            path: "/messages".into(),
            body: Some("{\"text\":\"a\"}".into()),
            valid: None,
            accept: &[201],
            json: false,
        };
        assert!(judge(&create, 201, b"{}").is_ok());
        assert!(judge(&create, 400, b"").unwrap_err().contains("want [201]"));
    }
}
