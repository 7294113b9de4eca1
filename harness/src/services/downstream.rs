//! The downstream service behind `/enrich`: `GET /value?key=K` answers `value-K` after a latency
//! drawn from a distribution (fixed, uniform, lognormal), fails with a configured probability
//! (500) and stalls with another. Keys starting with `fast-` are answered at once, `fail-`
//! always get a 500 and `stall-` hang for a minute: deterministic cases for conformance checks.
//! A key starting `w<N>-` waits N ms first, then follows the rest of its key (`w5-fail-a`
//! fails after 5 ms, `w50-a` answers after 50 ms): the fan-out cases' calls of known length.
//! `GET /_stats` says how many calls were served and how many were cancelled (the caller went
//! away before the answer), for the fan-out's cancellation figures.
//! `GET /_control?latency=..&error_rate=..&stall_prob=..&stall_for=..` changes the behaviour
//! while it runs (fault injection).

#[cfg(test)]
use crate::plan::downstream::Dist;
use crate::plan::downstream::{Behaviour, Rng};
use std::cell::RefCell;
use std::time::Duration;

/// What one request gets: wait this long, then answer with this status and body.
#[derive(Debug, PartialEq)]
pub struct Answer {
    pub wait: Duration,
    pub status: &'static str,
    pub body: String,
}

pub struct Downstream {
    behaviour: RefCell<Behaviour>,
    rng: RefCell<Rng>,
}

/// The contract's rule for /enrich keys (and the downstream's): 1..64 of A-Z a-z 0-9 - _.
pub fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 64
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A `w<N>-` prefix (N ms, at most 60,000): the wait it asks for and the rest of the key.
fn split_wait(key: &str) -> (Duration, &str) {
    let parsed = key.strip_prefix('w').and_then(|r| {
        let (n, rest) = r.split_once('-')?;
        let ms: u64 = (!n.is_empty() && n.len() <= 5 && n.bytes().all(|b| b.is_ascii_digit()))
            .then(|| n.parse().ok())??;
        (ms <= 60_000).then_some((Duration::from_millis(ms), rest))
    });
    parsed.unwrap_or((Duration::ZERO, key))
}

/// The downstream's counts of its `/value` calls since they were last reset: served in full,
/// cancelled (the caller closed the connection first), and still running.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Counts {
    pub served: u64,
    pub cancelled: u64,
    pub in_flight: u64,
}

/// The environment variable that gives `iobound downstream` its control token: set, the
/// control endpoints (`/_control`, `/_stats`) answer only requests that carry it as `token=`;
/// unset (a downstream started by hand), they answer anyone. An environment variable, not an
/// argument, because any user can read another's arguments in /proc.
pub const TOKEN_ENV: &str = "IOBOUND_CONTROL_TOKEN";

/// Where the harness reaches the downstream's control endpoints, with the run's token: on a
/// services host they listen on the lab network, and whoever reached them could change a
/// run's latency or reset its counts.
#[derive(Debug, Clone)]
pub struct Control {
    pub addr: std::net::SocketAddr,
    pub token: String,
}

impl Control {
    /// `endpoint?token=..&query`.
    fn path(&self, endpoint: &str, query: &str) -> String {
        let mut p = format!("{endpoint}?token={}", self.token);
        if !query.is_empty() {
            p.push('&');
            p.push_str(query);
        }
        p
    }

    /// Changes the downstream's behaviour (`GET /_control?...`).
    pub async fn set(&self, query: &str) -> anyhow::Result<crate::util::http1::Response> {
        let path = self.path("/_control", query);
        Ok(crate::util::http1::fetch(self.addr, "GET", &path, None).await?)
    }

    /// Reads the downstream's counts (`GET /_stats`), resetting them when `reset`. The run
    /// records them per run; the fan-out contract's cancellation check reads them.
    pub async fn counts(&self, reset: bool) -> anyhow::Result<Counts> {
        use anyhow::Context;
        let path = self.path("/_stats", if reset { "reset=1" } else { "" });
        let r = crate::util::http1::fetch(self.addr, "GET", &path, None).await?;
        anyhow::ensure!(r.status == 200, "/_stats answered {}", r.status);
        let v: serde_json::Value =
            serde_json::from_slice(&r.body).context("/_stats is not JSON")?;
        let n = |k: &str| {
            v[k].as_u64()
                .with_context(|| format!("/_stats has no count {k:?}"))
        };
        Ok(Counts {
            served: n("served")?,
            cancelled: n("cancelled")?,
            in_flight: n("in_flight")?,
        })
    }
}

/// A control request's query without its token, when the token is the one `required` (or
/// none is); None when it is missing or wrong.
pub fn authorized(required: Option<&str>, query: &str) -> Option<String> {
    let mut given = None;
    let rest: Vec<&str> = query
        .split('&')
        .filter(|kv| match kv.strip_prefix("token=") {
            Some(t) => {
                given = Some(t);
                false
            }
            None => !kv.is_empty(),
        })
        .collect();
    match required {
        Some(t) if given != Some(t) => None,
        _ => Some(rest.join("&")),
    }
}

impl Downstream {
    pub fn new(b: Behaviour, seed: u64) -> Downstream {
        Downstream {
            behaviour: RefCell::new(b),
            rng: RefCell::new(Rng::new(seed)),
        }
    }

    pub fn answer(&self, path: &str) -> Answer {
        let (route, query) = path.split_once('?').unwrap_or((path, ""));
        let now = |status, body: String| Answer {
            wait: Duration::ZERO,
            status,
            body,
        };
        match route {
            "/value" => {
                let key = query
                    .split('&')
                    .find_map(|kv| kv.strip_prefix("key="))
                    .unwrap_or("");
                if !valid_key(key) {
                    return now(
                        "400 Bad Request",
                        "key must be 1..64 of A-Z a-z 0-9 - _".into(),
                    );
                }
                let ok = format!("value-{key}");
                let (first, key) = split_wait(key);
                let after = |status, body: String| Answer {
                    wait: first,
                    status,
                    body,
                };
                if key.starts_with("fast-") {
                    return after("200 OK", ok);
                }
                if key.starts_with("fail-") {
                    return after("500 Internal Server Error", "injected failure".into());
                }
                if key.starts_with("stall-") {
                    return Answer {
                        wait: first + Duration::from_secs(60),
                        status: "200 OK",
                        body: ok,
                    };
                }
                if !first.is_zero() {
                    return after("200 OK", ok);
                }
                let b = self.behaviour.borrow();
                let mut rng = self.rng.borrow_mut();
                let mut wait = b.latency.sample(&mut rng);
                if rng.unit() < b.stall_prob {
                    wait += b.stall_for;
                }
                if rng.unit() < b.error_rate {
                    return Answer {
                        wait,
                        status: "500 Internal Server Error",
                        body: "injected failure".into(),
                    };
                }
                Answer {
                    wait,
                    status: "200 OK",
                    body: ok,
                }
            }
            "/_control" => {
                let updated = self.behaviour.borrow_mut().update(query);
                match updated {
                    Ok(()) => now("200 OK", format!("{:?}", self.behaviour.borrow())),
                    Err(e) => now("400 Bad Request", format!("{e:#}")),
                }
            }
            "/plaintext" => now("200 OK", "Hello, World!".into()),
            _ => now("404 Not Found", "not found".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_requests_need_the_runs_token_when_one_is_set() {
        assert_eq!(
            authorized(Some("abc"), "token=abc&reset=1").as_deref(),
            Some("reset=1")
        );
        assert_eq!(
            authorized(Some("abc"), "reset=1&token=abc").as_deref(),
            Some("reset=1")
        );
        assert_eq!(authorized(Some("abc"), "reset=1"), None);
        assert_eq!(authorized(Some("abc"), "token=abd&latency=fixed:1ms"), None);
        assert_eq!(authorized(Some("abc"), "token="), None);
        assert_eq!(
            authorized(None, "latency=fixed:1ms").as_deref(),
            Some("latency=fixed:1ms")
        );
        assert_eq!(authorized(None, "").as_deref(), Some(""));
    }

    #[test]
    fn distributions_parse_and_sample_in_range() {
        let mut rng = Rng::new(3);
        assert_eq!(
            Dist::parse("fixed:100ms").unwrap().sample(&mut rng),
            Duration::from_millis(100)
        );
        let u = Dist::parse("uniform:50ms..150ms").unwrap();
        let draws: Vec<Duration> = (0..1000).map(|_| u.sample(&mut rng)).collect();
        assert!(draws
            .iter()
            .all(|d| (Duration::from_millis(50)..=Duration::from_millis(150)).contains(d)));
        let ln = Dist::parse("lognormal:100ms,0.5").unwrap();
        let mut v: Vec<f64> = (0..20_000)
            .map(|_| ln.sample(&mut rng).as_secs_f64() * 1000.0)
            .collect();
        v.sort_by(f64::total_cmp);
        let median = v[v.len() / 2];
        assert!((90.0..110.0).contains(&median), "median {median}");
        // exp(0.5 * 2.326) = 3.2: the p99 of lognormal(100 ms, 0.5) is about 320 ms.
        let p99 = v[v.len() * 99 / 100];
        assert!((280.0..360.0).contains(&p99), "p99 {p99}");
        for bad in [
            "100ms",
            "fixed:soon",
            "uniform:2s..1s",
            "lognormal:100ms,x",
            "gamma:1s",
        ] {
            assert!(Dist::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn answers_follow_keys_and_behaviour() {
        let d = Downstream::new(Behaviour::default(), 1);
        assert_eq!(
            d.answer("/value?key=abc"),
            Answer {
                wait: Duration::from_millis(100),
                status: "200 OK",
                body: "value-abc".into()
            }
        );
        assert_eq!(d.answer("/value?key=fast-1").wait, Duration::ZERO);
        assert_eq!(
            d.answer("/value?key=fail-1").status,
            "500 Internal Server Error"
        );
        assert_eq!(d.answer("/value?key=stall-1").wait, Duration::from_secs(60));
        // w<N>-: a wait of N ms, then the rest of the key's rule; the body names the whole key.
        let a = d.answer("/value?key=w50-a");
        assert_eq!(
            (a.wait, a.body.as_str()),
            (Duration::from_millis(50), "value-w50-a")
        );
        let a = d.answer("/value?key=w5-fail-a");
        assert_eq!(
            (a.wait, a.status),
            (Duration::from_millis(5), "500 Internal Server Error")
        );
        assert_eq!(
            d.answer("/value?key=w7-stall-a").wait,
            Duration::from_millis(60_007)
        );
        // Not a wait: no digits, too long, over a minute.
        for k in ["w-a", "wx-a", "w123456-a", "w60001-a", "wait-a"] {
            assert_eq!(
                d.answer(&format!("/value?key={k}")).wait,
                Duration::from_millis(100),
                "{k}"
            );
        }
        assert_eq!(d.answer("/value?key=../x").status, "400 Bad Request");
        assert_eq!(d.answer("/value").status, "400 Bad Request");
        // Half the requests fail once error_rate is set to 0.5 at run time.
        assert_eq!(
            d.answer("/_control?error_rate=0.5&latency=fixed:5ms")
                .status,
            "200 OK"
        );
        let failed = (0..2000)
            .filter(|_| d.answer("/value?key=k").status.starts_with("500"))
            .count();
        assert!((850..1150).contains(&failed), "{failed} of 2000");
        assert_eq!(d.answer("/value?key=k").wait, Duration::from_millis(5));
        assert_eq!(d.answer("/_control?error_rate=2").status, "400 Bad Request");
        assert_eq!(d.answer("/_control?colour=red").status, "400 Bad Request");
        d.answer("/_control?error_rate=0&stall_prob=1&stall_for=3s");
        assert_eq!(d.answer("/value?key=k").wait, Duration::from_millis(3005));
    }
}
