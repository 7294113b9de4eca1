//! Hostile inputs for the contract's endpoints: huge and negative numbers, non-ASCII, encoded
//! and raw path traversal, oversized values. Every one must get a 4xx (never a 5xx, never a
//! 2xx that accepted garbage, never a hang), and the contender must keep serving afterwards.

use crate::http1;
use crate::verify::CaseResult;
use std::net::SocketAddr;
use std::time::Duration;

/// A small deterministic generator (xorshift64*), so a failing case can be reproduced by seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn digits(&mut self, min: usize, max: usize) -> String {
        let len = min + self.below(max - min + 1);
        (0..len).map(|_| char::from(b'0' + self.below(10) as u8)).collect()
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const TRAVERSALS: &[&str] = &[
    "../../etc/passwd",
    "..%2f..%2fetc%2fpasswd",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "%252e%252e%252fetc%252fpasswd",
    "....//....//etc/passwd",
    "/etc/passwd",
    "%00",
    "..\\..\\windows\\win.ini",
];

const ODD: &[&str] = &[
    "1.5", "1e3", "0x10", "+5", " 5", "%205", "5%20", "NaN", "Infinity", "-0", "true", "null", "[]", "{}", "%C3%A9", "%EF%BC%95", "%F0%9F%98%80",
    "\u{00e9}", "%FF%FE", "5%00", "%",
];

/// One invalid value for `ms`.
fn bad_ms(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => rng.digits(7, 40),                                         // too large, up to far beyond 64 bits
        1 => format!("-{}", rng.digits(1, 25)),                         // negative
        2 => format!("{}", 60_001 + rng.below(1_000_000)),              // just above the limit
        3 => rng.pick(ODD).to_string(),                                  // not a decimal integer
        4 => rng.pick(TRAVERSALS).to_string(),                           // path-like
        _ => "9".repeat(1000 + rng.below(4000)),                         // oversized
    }
}

/// A path that is not an endpoint of the contract (traversal, encoded, odd bytes).
fn bad_path(rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => format!("/{}", rng.pick(TRAVERSALS)),
        1 => format!("/plaintext/{}", rng.pick(TRAVERSALS)),
        2 => format!("/hash/{}", rng.pick(TRAVERSALS)),
        _ => format!("/{}", rng.pick(ODD)),
    }
}

pub struct FuzzCase {
    pub path: String,
    /// Some(body) when the input is valid and must be answered 200 with that body.
    pub valid: Option<String>,
}

/// An invalid /hash id for a corpus of `files` files.
fn bad_id(rng: &mut Rng, files: u32) -> String {
    match rng.below(4) {
        0 => (u64::from(files) + rng.below(1_000_000) as u64).to_string(), // past the corpus
        1 => format!("{}.bin", rng.below(files.max(1) as usize)),           // a file name, not an id
        2 => format!("{}/../{}", rng.below(10), rng.pick(TRAVERSALS)),
        _ => bad_ms(rng).replace("60001", "-60001"),
    }
}

/// An invalid /enrich key: outside A-Z a-z 0-9 - _, empty, or longer than 64.
fn bad_key(rng: &mut Rng) -> String {
    match rng.below(5) {
        0 => rng.pick(TRAVERSALS).to_string(),
        1 => format!("{}.", rng.pick(ODD)), // '.' is never part of a key
        2 => "k".repeat(65 + rng.below(5000)),
        3 => format!("ok{}", rng.pick(&["%20", "%2F", ".", "~", "%00", "%C3%A9", "!", "*", "%22"])),
        _ => String::new(),
    }
}

fn good_key(rng: &mut Rng) -> String {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
    let len = 1 + rng.below(40);
    format!("fast-{}", (0..len).map(|_| char::from(CHARS[rng.below(CHARS.len())])).collect::<String>())
}

/// For each endpoint (/delay, /hash, /enrich) `n` cases, nine in ten invalid (plus as many
/// paths that are not endpoints); the valid tenth must be answered 200 with its body.
/// `vectors[i]` is the SHA-512 of corpus file i.
pub fn cases(n: usize, seed: u64, vectors: &[String]) -> Vec<FuzzCase> {
    let mut rng = Rng(seed.max(1));
    let files = vectors.len() as u32;
    let mut out = Vec::with_capacity(4 * n);
    for i in 0..n {
        let valid = i % 10 == 0;
        out.push(if valid {
            let ms = rng.below(4);
            FuzzCase { path: format!("/delay?ms={ms}"), valid: Some(ms.to_string()) }
        } else {
            FuzzCase { path: format!("/delay?ms={}", bad_ms(&mut rng)), valid: None }
        });
        out.push(if valid && files > 0 {
            let id = rng.below(files as usize);
            FuzzCase { path: format!("/hash?id={id}"), valid: Some(vectors[id].clone()) }
        } else if i % 7 == 0 {
            FuzzCase { path: format!("/hash?id={}&delayMs={}", rng.below(files.max(1) as usize), bad_ms(&mut rng)), valid: None }
        } else {
            FuzzCase { path: format!("/hash?id={}", bad_id(&mut rng, files)), valid: None }
        });
        out.push(if valid {
            let key = good_key(&mut rng);
            FuzzCase { valid: Some(format!("{key}=value-{key}")), path: format!("/enrich?key={key}") }
        } else {
            FuzzCase { path: format!("/enrich?key={}", bad_key(&mut rng)), valid: None }
        });
        out.push(FuzzCase { path: bad_path(&mut rng), valid: None });
    }
    out
}

/// Judges one answer; `Err` says what was wrong.
pub fn judge(case: &FuzzCase, status: u16, body: &[u8]) -> Result<(), String> {
    match &case.valid {
        Some(want) if status == 200 && body == want.as_bytes() => Ok(()),
        Some(want) => Err(format!("{} -> {status} (want 200 {want:?})", case.path)),
        None if (400..500).contains(&status) => Ok(()),
        None => Err(format!("{} -> {status} (want 4xx)", case.path)),
    }
}

pub async fn run(addr: SocketAddr, n: usize, seed: u64, vectors: &[String]) -> CaseResult {
    let all = cases(n, seed, vectors);
    let mut failures = Vec::new();
    for chunk in all.chunks(16) {
        let handles: Vec<_> = chunk
            .iter()
            .map(|c| {
                let path = c.path.clone();
                tokio::spawn(async move { tokio::time::timeout(Duration::from_secs(10), http1::fetch(addr, "GET", &path, None)).await })
            })
            .collect();
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
                Ok(Err(_)) => failures.push(format!("{}: no answer within 10 s", c.path)),
                Err(e) => failures.push(format!("{}: {e}", c.path)),
            }
        }
    }
    let alive = matches!(
        tokio::time::timeout(Duration::from_secs(5), http1::fetch(addr, "GET", "/plaintext", None)).await,
        Ok(Ok(ref r)) if r.status == 200
    );
    if !alive {
        failures.push("stopped serving /plaintext after the fuzz cases".into());
    }
    let shown: Vec<String> = failures.iter().take(5).cloned().collect();
    CaseResult {
        name: format!("fuzz: {n} generated inputs per endpoint (seed {seed}) get 4xx, valid ones 200"),
        passed: failures.is_empty(),
        detail: if failures.is_empty() {
            format!("{} cases (/delay, /hash, /enrich, non-endpoints), all answered as the contract says; still serving", all.len())
        } else {
            format!("{} of {} wrong, e.g. {}", failures.len(), all.len(), shown.join(" | "))
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_are_deterministic_and_varied() {
        let vectors: Vec<String> = (0..50).map(|i| format!("h{i}")).collect();
        let a = cases(1000, 7, &vectors);
        let b = cases(1000, 7, &vectors);
        assert_eq!(a.iter().map(|c| &c.path).collect::<Vec<_>>(), b.iter().map(|c| &c.path).collect::<Vec<_>>());
        for route in ["/delay?", "/hash?", "/enrich?"] {
            let of: Vec<&FuzzCase> = a.iter().filter(|c| c.path.starts_with(route)).collect();
            assert_eq!(of.len(), 1000, "{route}");
            assert_eq!(of.iter().filter(|c| c.valid.is_some()).count(), 100, "{route}");
        }
        assert!(a.iter().any(|c| c.path.contains("etc")));
        assert!(a.iter().any(|c| c.path.contains("ms=-")));
        assert!(a.iter().any(|c| c.path.len() > 1000));
        assert!(a.iter().any(|c| c.path.contains("%EF%BC%95") || c.path.contains('\u{00e9}')));
        assert!(a.iter().any(|c| c.path.starts_with("/hash?id=") && c.path.ends_with(".bin")));
        let h = a.iter().find(|c| c.path.starts_with("/hash?id=") && c.valid.is_some()).unwrap();
        let id: usize = h.path["/hash?id=".len()..].parse().unwrap();
        assert_eq!(h.valid.as_deref(), Some(vectors[id].as_str()));
        // No invalid case is accidentally valid.
        for c in a.iter().filter(|c| c.valid.is_none()) {
            if let Some(v) = c.path.strip_prefix("/delay?ms=") {
                assert!(!(v.chars().all(|ch| ch.is_ascii_digit()) && !v.is_empty() && v.len() <= 6 && v.parse::<u32>().unwrap() <= 60_000), "{v}");
            }
            if let Some(v) = c.path.strip_prefix("/hash?id=") {
                let digits = !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
                assert!(!digits || v.len() > 10 || v.parse::<u64>().unwrap() >= 50, "{v}");
            }
            if let Some(k) = c.path.strip_prefix("/enrich?key=") {
                let ok = !k.is_empty() && k.len() <= 64 && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
                assert!(!ok, "{k}");
            }
        }
    }

    #[test]
    fn judging() {
        let bad = FuzzCase { path: "/delay?ms=-1".into(), valid: None };
        assert!(judge(&bad, 400, b"").is_ok());
        assert!(judge(&bad, 500, b"").unwrap_err().contains("want 4xx"));
        assert!(judge(&bad, 200, b"-1").is_err());
        let good = FuzzCase { path: "/delay?ms=2".into(), valid: Some("2".into()) };
        assert!(judge(&good, 200, b"2").is_ok());
        assert!(judge(&good, 400, b"").is_err());
    }
}
