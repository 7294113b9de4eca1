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

/// `n` cases: mostly invalid `ms` values and non-endpoints, one in ten a valid tiny delay.
pub fn cases(n: usize, seed: u64) -> Vec<FuzzCase> {
    let mut rng = Rng(seed.max(1));
    (0..n)
        .map(|i| match i % 10 {
            0 => {
                let ms = rng.below(4);
                FuzzCase { path: format!("/delay?ms={ms}"), valid: Some(ms.to_string()) }
            }
            1..=3 => FuzzCase { path: bad_path(&mut rng), valid: None },
            _ => FuzzCase { path: format!("/delay?ms={}", bad_ms(&mut rng)), valid: None },
        })
        .collect()
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

pub async fn run(addr: SocketAddr, n: usize, seed: u64) -> CaseResult {
    let all = cases(n, seed);
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
        name: format!("fuzz: {n} generated inputs (seed {seed}) get 4xx, valid ones 200"),
        passed: failures.is_empty(),
        detail: if failures.is_empty() {
            format!("{n} cases, all answered as the contract says; still serving")
        } else {
            format!("{} of {n} wrong, e.g. {}", failures.len(), shown.join(" | "))
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_are_deterministic_and_varied() {
        let a = cases(1000, 7);
        let b = cases(1000, 7);
        assert_eq!(a.iter().map(|c| &c.path).collect::<Vec<_>>(), b.iter().map(|c| &c.path).collect::<Vec<_>>());
        assert_eq!(a.iter().filter(|c| c.valid.is_some()).count(), 100);
        assert!(a.iter().any(|c| c.path.contains("etc")));
        assert!(a.iter().any(|c| c.path.contains("ms=-")));
        assert!(a.iter().any(|c| c.path.len() > 1000));
        assert!(a.iter().any(|c| c.path.contains("%EF%BC%95") || c.path.contains('\u{00e9}')));
        // No invalid case is accidentally a valid delay.
        for c in a.iter().filter(|c| c.valid.is_none()) {
            if let Some(v) = c.path.strip_prefix("/delay?ms=") {
                assert!(!(v.chars().all(|ch| ch.is_ascii_digit()) && !v.is_empty() && v.len() <= 6 && v.parse::<u32>().unwrap() <= 60_000), "{v}");
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
