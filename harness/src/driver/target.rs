//! What the driver requests: pre-serialised requests (one path, a `{seq:N}` template, or a
//! weighted mix), with the write tokens that let the write check find acknowledged writes.

use crate::plan::workload::{expand_path, MixEntry};
use std::net::SocketAddr;
use std::sync::Arc;

/// What is requested: pre-serialised requests sent in turn to one address.
#[derive(Clone, Debug)]
pub struct Target {
    pub addr: SocketAddr,
    /// Prebuilt requests, sent in turn: one, one per value of a `{seq:N}` path template, or a
    /// weighted mix of several.
    pub requests: Arc<Vec<Vec<u8>>>,
    /// For mixes (empty otherwise): which entry each request belongs to, and where its write
    /// token goes.
    pub slots: Arc<Vec<Slot>>,
    /// The mix's entries (empty for a single path).
    pub entries: Arc<Vec<MixEntry>>,
    /// Next write token; tokens are unique within a target.
    pub counter: Arc<std::sync::atomic::AtomicU64>,
    /// Text that starts every write token of this target, e.g. "iobound r1s0m ".
    pub tag: String,
    /// The single path requested (empty for a mix): what a load host is told to build.
    pub path: String,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slot {
    pub entry: u16,
    /// POST, PUT, PATCH or DELETE: acknowledged ones are recorded for the write check.
    pub write: bool,
    /// Offset of the token's digits in the request; 0 when it has none.
    pub token_at: u32,
}

/// Digits of a write token's counter.
pub const TOKEN_DIGITS: usize = 12;

/// Requests in a mix's cycle: long enough that every entry's share is close to its weight.
const MIX_CYCLE: usize = 20_000;

impl Target {
    /// `path` has been checked by `expand_path` (plans validate it).
    pub fn new(addr: SocketAddr, path: &str, close: bool) -> Target {
        let paths = expand_path(path).unwrap_or_else(|_| vec![path.to_string()]);
        let requests = paths
            .iter()
            .map(|p| crate::util::http1::build_request("GET", p, &addr.to_string(), None, close))
            .collect();
        Target {
            addr,
            requests: Arc::new(requests),
            slots: Arc::default(),
            entries: Arc::default(),
            counter: Arc::default(),
            tag: String::new(),
            path: path.to_string(),
        }
    }

    /// A weighted mix: a fixed, seeded cycle of requests in which each entry appears in
    /// proportion to its weight; each entry walks its own `{seq}` values. `{write}` in a body
    /// becomes `tag` plus a counter filled in when the request is sent.
    pub fn mix(addr: SocketAddr, entries: &[MixEntry], close: bool, tag: &str) -> Target {
        let total: u64 = entries
            .iter()
            .map(|e| u64::from(e.weight))
            .sum::<u64>()
            .max(1);
        let paths: Vec<Vec<String>> = entries
            .iter()
            .map(|e| expand_path(&e.path).unwrap_or_else(|_| vec![e.path.clone()]))
            .collect();
        let mut next = vec![0usize; entries.len()];
        let mut rng = crate::util::numbers::SplitMix64::new(0x0010_b00d);
        let host = addr.to_string();
        let placeholder = format!("{tag}{}", "0".repeat(TOKEN_DIGITS));
        let (mut requests, mut slots) =
            (Vec::with_capacity(MIX_CYCLE), Vec::with_capacity(MIX_CYCLE));
        for _ in 0..MIX_CYCLE {
            let mut pick = rng.next_u64() % total;
            let k = entries.iter().position(|e| {
                let w = u64::from(e.weight);
                if pick < w {
                    true
                } else {
                    pick -= w;
                    false
                }
            });
            let Some(k) = k else { continue };
            let e = &entries[k];
            let path = &paths[k][next[k] % paths[k].len()];
            next[k] += 1;
            let body = e.body.as_ref().map(|b| b.replace("{write}", &placeholder));
            let req = crate::util::http1::build_request(
                &e.method,
                path,
                &host,
                body.as_deref().map(|b| ("application/json", b.as_bytes())),
                close,
            );
            let token_at = match (
                &body,
                e.body.as_ref().is_some_and(|b| b.contains("{write}")),
            ) {
                (Some(b), true) => {
                    let in_body =
                        b.find(&placeholder).expect("placeholder written above") + tag.len();
                    (req.len() - b.len() + in_body) as u32
                }
                _ => 0,
            };
            requests.push(req);
            slots.push(Slot {
                entry: k as u16,
                write: e.is_write(),
                token_at,
            });
        }
        Target {
            addr,
            requests: Arc::new(requests),
            slots: Arc::new(slots),
            entries: Arc::new(entries.to_vec()),
            counter: Arc::new(std::sync::atomic::AtomicU64::new(1)),
            tag: tag.to_string(),
            path: String::new(),
        }
    }

    /// The path a request of the cycle was sent to (for mapping acknowledgements to rows).
    pub fn path_of(&self, i: usize) -> &str {
        let r = &self.requests[i];
        let line = r.split(|b| *b == b'\r').next().unwrap_or_default();
        let line = std::str::from_utf8(line).unwrap_or_default();
        line.split(' ').nth(1).unwrap_or_default()
    }

    /// The write token `n` of this target.
    pub fn token(&self, n: u64) -> String {
        format!("{}{n:0width$}", self.tag, width = TOKEN_DIGITS)
    }
}

/// Writes `n` as zero-padded decimal digits over `out`.
pub(crate) fn write_digits(out: &mut [u8], mut n: u64) {
    for b in out.iter_mut().rev() {
        *b = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::workload::{expand_path, MixEntry};

    #[test]
    fn seq_templates_expand_in_order() {
        assert_eq!(
            expand_path("/hash?id={seq:3}&delayMs=5").unwrap(),
            [
                "/hash?id=0&delayMs=5",
                "/hash?id=1&delayMs=5",
                "/hash?id=2&delayMs=5"
            ]
        );
        assert_eq!(expand_path("/plaintext").unwrap(), ["/plaintext"]);
        assert_eq!(
            expand_path("/m/{seq:9..11}").unwrap(),
            ["/m/9", "/m/10", "/m/11"]
        );
        for bad in [
            "/h?id={seq:0}",
            "/h?id={seq:x}",
            "/h?id={seq:5",
            "/h?a={seq:2}&b={seq:2}",
            "/m/{seq:5..4}",
            "/m/{seq:1..2000000}",
        ] {
            assert!(expand_path(bad).is_err(), "{bad}");
        }
        let t = Target::new("127.0.0.1:1".parse().unwrap(), "/x?id={seq:4000}", false);
        assert_eq!(t.requests.len(), 4000);
        assert!(String::from_utf8_lossy(&t.requests[3999]).starts_with("GET /x?id=3999 HTTP/1.1"));
    }

    #[test]
    fn mixes_keep_their_weights_and_place_write_tokens() {
        let entries = vec![
            MixEntry {
                weight: 80,
                method: "GET".into(),
                path: "/messages/{seq:1..10000}".into(),
                body: None,
            },
            MixEntry {
                weight: 15,
                method: "POST".into(),
                path: "/messages".into(),
                body: Some(r#"{"text":"{write}"}"#.into()),
            },
            MixEntry {
                weight: 5,
                method: "PUT".into(),
                path: "/messages/{seq:1..10000}".into(),
                body: Some(r#"{"text":"{write}"}"#.into()),
            },
        ];
        let t = Target::mix(
            "127.0.0.1:1".parse().unwrap(),
            &entries,
            false,
            "iobound r1s0m ",
        );
        let share =
            |k: u16| t.slots.iter().filter(|s| s.entry == k).count() as f64 / t.slots.len() as f64;
        assert!(
            (share(0) - 0.80).abs() < 0.01
                && (share(1) - 0.15).abs() < 0.01
                && (share(2) - 0.05).abs() < 0.01
        );
        let first_get = t.slots.iter().position(|s| s.entry == 0).unwrap();
        assert_eq!(t.path_of(first_get), "/messages/1");
        assert_eq!(t.slots[first_get].token_at, 0);
        let post = t.slots.iter().position(|s| s.entry == 1).unwrap();
        let mut r = t.requests[post].clone();
        let at = t.slots[post].token_at as usize;
        write_digits(&mut r[at..at + TOKEN_DIGITS], 42);
        let text = String::from_utf8(r).unwrap();
        assert!(text.starts_with("POST /messages HTTP/1.1\r\n"), "{text}");
        assert!(text.contains("Content-Type: application/json\r\n"));
        assert!(
            text.ends_with(&format!(r#"{{"text":"{}"}}"#, t.token(42))),
            "{text}"
        );
        assert_eq!(t.token(42), "iobound r1s0m 000000000042");
    }
}
