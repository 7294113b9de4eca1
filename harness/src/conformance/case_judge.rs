//! One answer judged against one case of the contract: its status, its body (text, JSON by
//! field, a count of JSON items), its content type, and how long it waited.

use super::Case;
use crate::util::http1;
use std::time::Duration;

/// Whether `got` has every field of `want` (recursively; arrays element by element).
pub fn json_matches(want: &serde_json::Value, got: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => w
            .iter()
            .all(|(k, v)| g.get(k).is_some_and(|x| json_matches(v, x))),
        (Value::Array(w), Value::Array(g)) => {
            w.len() == g.len() && w.iter().zip(g).all(|(a, b)| json_matches(a, b))
        }
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        _ => want == got,
    }
}

/// Whether an answer after `elapsed` waited `min_ms`, as the server's runtime counts time. An
/// event loop times a wait from its clock as read at the start of the loop's turn (libuv's
/// `uv_now`, which uvloop and Node use), not from the moment it read the request: with several
/// requests read in one turn a wait can end a few milliseconds early by the client's clock
/// (python-asyncio answered a 500 ms wait after 499 ms). 2% of the wait is allowed for that;
/// a server that does not wait at all is far outside it.
fn waited(elapsed: Duration, min_ms: u64) -> bool {
    let min = Duration::from_millis(min_ms);
    elapsed + min / 50 >= min
}

/// Judges one response against a case; `Err` holds what differs.
pub fn judge(
    case: &Case,
    resp: &http1::Response,
    elapsed: Duration,
) -> std::result::Result<(), String> {
    let mut wrong = Vec::new();
    if resp.status != case.status && !case.also_status.contains(&resp.status) {
        wrong.push(format!("status {} (want {})", resp.status, case.status));
    }
    if case.json.is_some() || case.json_count.is_some() {
        match serde_json::from_slice::<serde_json::Value>(&resp.body) {
            Err(e) => wrong.push(format!("body is not JSON ({e})")),
            Ok(got) => {
                if let Some(want) = &case.json {
                    let want: serde_json::Value =
                        serde_json::from_str(want).unwrap_or(serde_json::Value::Null);
                    if !json_matches(&want, &got) {
                        let shown: String = got.to_string().chars().take(120).collect();
                        wrong.push(format!("JSON {shown} (want {want})"));
                    }
                }
                if let Some(n) = case.json_count {
                    let len = got.as_array().map(Vec::len);
                    if len != Some(n) {
                        wrong.push(format!(
                            "{} elements (want an array of {n})",
                            len.map_or("not an array".into(), |l| l.to_string())
                        ));
                    }
                }
            }
        }
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
        if !got
            .to_ascii_lowercase()
            .starts_with(&ct.to_ascii_lowercase())
        {
            wrong.push(format!("content-type {got:?} (want {ct})"));
        }
    }
    let ms = elapsed.as_millis() as u64;
    if case.min_ms.is_some_and(|min| !waited(elapsed, min)) {
        wrong.push(format!(
            "answered after {ms} ms, before the {} ms it must wait",
            case.min_ms.unwrap_or(0)
        ));
    }
    if case.max_ms.is_some_and(|max| ms > max) {
        wrong.push(format!(
            "took {ms} ms (limit {} ms)",
            case.max_ms.unwrap_or(0)
        ));
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(wrong.join("; "))
    }
}
