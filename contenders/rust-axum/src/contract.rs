//! Input rules of the iobound contract (contract/README.md), apart from the server so that
//! they can be unit tested.

pub const PLAINTEXT: &str = "Hello, World!";
pub const MAX_DELAY_MS: u64 = 60_000;
pub const MAX_TEXT: usize = 1000;
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// A decimal integer of at most 10 digits in 0..=max; `name` is for the message.
pub fn decimal(raw: &str, name: &str, max: u64) -> Result<u64, String> {
    let bad = || format!("{name} must be an integer between 0 and {max}");
    if raw.is_empty() || raw.len() > 10 || !raw.bytes().all(|c| c.is_ascii_digit()) {
        return Err(bad());
    }
    raw.parse::<u64>()
        .ok()
        .filter(|v| *v <= max)
        .ok_or_else(bad)
}

/// `ms` of /delay: required.
pub fn delay_ms(raw: Option<&str>) -> Result<u64, String> {
    match raw {
        None | Some("") => Err("query parameter ms is required, e.g. /delay?ms=100".into()),
        Some(v) => decimal(v, "ms", MAX_DELAY_MS),
    }
}

/// `id` of /hash: a corpus file, 0..files-1.
pub fn hash_id(raw: Option<&str>, files: u64) -> Result<u64, String> {
    match raw {
        None | Some("") => Err("query parameter id is required, e.g. /hash?id=42".into()),
        _ if files == 0 => Err("there is no corpus (IOBOUND_CORPUS_FILES is 0)".into()),
        Some(v) => decimal(v, "id", files - 1),
    }
}

/// `delayMs` of /hash: absent means 0.
pub fn hash_delay_ms(raw: Option<&str>) -> Result<u64, String> {
    raw.map_or(Ok(0), |v| decimal(v, "delayMs", MAX_DELAY_MS))
}

/// `key` of /enrich: 1..64 characters of A-Z a-z 0-9 - _.
pub fn enrich_key(raw: Option<&str>) -> Result<&str, String> {
    match raw {
        Some(k)
            if (1..=64).contains(&k.len())
                && k.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_') =>
        {
            Ok(k)
        }
        _ => Err("key must be 1..64 characters of A-Z a-z 0-9 - _".into()),
    }
}

/// `limit` of GET /messages: absent means 20, otherwise 1..100.
pub fn message_limit(raw: Option<&str>) -> Result<i64, String> {
    match raw {
        None => Ok(20),
        Some(v) => decimal(v, "limit", 100)
            .ok()
            .filter(|n| *n >= 1)
            .map(|n| n as i64)
            .ok_or_else(|| "limit must be an integer between 1 and 100".into()),
    }
}

/// The id in /messages/{id}: 1..19 decimal digits, at least 1, within 64 bits.
pub fn message_id(raw: &str) -> Result<i64, String> {
    let ok = !raw.is_empty() && raw.len() <= 19 && raw.bytes().all(|c| c.is_ascii_digit());
    ok.then(|| raw.parse::<i64>().ok())
        .flatten()
        .filter(|v| *v >= 1)
        .ok_or_else(|| "id must be a positive integer".into())
}

/// The text of a create/update body: a JSON object whose "text" is a string of 1..1000
/// characters (code points) without U+0000, which PostgreSQL text cannot hold.
pub fn message_text(body: &[u8]) -> Result<String, String> {
    let bad = || {
        format!("body must be a JSON object whose \"text\" is a string of 1..{MAX_TEXT} characters")
    };
    let v: serde_json::Value = serde_json::from_slice(body).map_err(|_| bad())?;
    match v.get("text") {
        Some(serde_json::Value::String(t))
            if !t.is_empty()
                && t.chars().count() <= MAX_TEXT
                && !t.contains('\0')
                && v.is_object() =>
        {
            Ok(t.clone())
        }
        _ => Err(bad()),
    }
}

/// The first value of each query parameter, percent-decoded; a malformed escape is bad input
/// (form_urlencoded would keep it as it is).
pub fn query(raw: Option<&str>) -> Result<Vec<(String, String)>, String> {
    let raw = raw.unwrap_or("");
    let b = raw.as_bytes();
    for (i, c) in b.iter().enumerate() {
        if *c == b'%'
            && !(b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
        {
            return Err("malformed query string: a % not followed by two hex digits".into());
        }
    }
    Ok(form_urlencoded::parse(b)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect())
}

/// The first value of `name`.
pub fn param<'a>(q: &'a [(String, String)], name: &str) -> Option<&'a str> {
    q.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// A path the contract serves must be clean: no empty, "." or ".." segments.
pub fn clean_path(p: &str) -> bool {
    p.starts_with('/')
        && (p == "/"
            || p[1..]
                .split('/')
                .all(|s| !s.is_empty() && s != "." && s != ".."))
}

/// The most keys one /aggregate may name.
pub const MAX_AGGREGATE_KEYS: usize = 16;

/// The keys of /aggregate: 1..16 comma-separated keys, each as for /enrich.
pub fn aggregate_keys(raw: Option<&str>) -> Result<Vec<&str>, String> {
    let keys: Vec<&str> = raw.unwrap_or("").split(',').collect();
    if keys.len() > MAX_AGGREGATE_KEYS {
        return Err(format!(
            "keys must be 1 to {MAX_AGGREGATE_KEYS} comma-separated keys"
        ));
    }
    keys.into_iter().map(|k| enrich_key(Some(k))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_are_decimal_and_bounded() {
        assert_eq!(delay_ms(Some("300")), Ok(300));
        assert_eq!(delay_ms(Some("60000")), Ok(60000));
        for bad in [
            None,
            Some(""),
            Some("-1"),
            Some("1.5"),
            Some("abc"),
            Some("60001"),
            Some("99999999999999999999999"),
            Some("+1"),
        ] {
            assert!(delay_ms(bad).is_err(), "{bad:?}");
        }
        assert_eq!(hash_delay_ms(None), Ok(0));
        assert!(hash_delay_ms(Some("soon")).is_err());
    }

    #[test]
    fn hash_ids_name_corpus_files_only() {
        assert_eq!(hash_id(Some("63"), 64), Ok(63));
        for bad in [
            Some("64"),
            Some("-1"),
            Some("../../etc/passwd"),
            Some("1.bin"),
            None,
            Some(""),
        ] {
            assert!(hash_id(bad, 64).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn keys_limits_and_ids() {
        assert_eq!(enrich_key(Some("fast-abc_1")), Ok("fast-abc_1"));
        assert!(
            enrich_key(Some("a b")).is_err()
                && enrich_key(Some(&"k".repeat(65))).is_err()
                && enrich_key(Some("été")).is_err()
                && enrich_key(None).is_err()
        );
        assert_eq!(message_limit(None), Ok(20));
        assert!(message_limit(Some("0")).is_err() && message_limit(Some("101")).is_err());
        assert_eq!(message_id("9223372036854775807"), Ok(i64::MAX));
        assert!(
            message_id("9223372036854775808").is_err()
                && message_id("0").is_err()
                && message_id("-1").is_err()
        );
    }

    #[test]
    fn texts_are_checked() {
        assert_eq!(message_text(br#"{"text":"hi","other":1}"#), Ok("hi".into()));
        assert_eq!(
            message_text("{\"text\":\"é\"}".as_bytes()).map(|t| t.chars().count()),
            Ok(1)
        );
        let long = format!("{{\"text\":\"{}\"}}", "é".repeat(1000));
        assert!(message_text(long.as_bytes()).is_ok());
        for bad in [
            &br#"{"text":""}"#[..],
            br#"{"text":5}"#,
            br#"["text"]"#,
            b"nope",
            br#"{"text":"a\u0000b"}"#,
        ] {
            assert!(
                message_text(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        let deep = "[".repeat(10_000);
        assert!(message_text(deep.as_bytes()).is_err());
    }

    #[test]
    fn queries_and_paths() {
        let q = query(Some("a=1&b=%41&a=2")).unwrap();
        assert_eq!(
            (param(&q, "a"), param(&q, "b"), param(&q, "c")),
            (Some("1"), Some("A"), None)
        );
        assert!(query(Some("delayMs=%")).is_err() && query(Some("x=%zz")).is_err());
        assert!(clean_path("/messages/1") && clean_path("/"));
        assert!(
            !clean_path("/a/../b")
                && !clean_path("//x")
                && !clean_path("/a/./b")
                && !clean_path("/a/")
        );
    }

    #[test]
    fn aggregate_keys_are_1_to_16_enrich_keys() {
        assert_eq!(
            aggregate_keys(Some("a,b-1,C_2")),
            Ok(vec!["a", "b-1", "C_2"])
        );
        let seventeen = vec!["k"; 17].join(",");
        for raw in [
            None,
            Some(""),
            Some("a,,b"),
            Some(",a"),
            Some("a,../x"),
            Some(seventeen.as_str()),
        ] {
            assert!(aggregate_keys(raw).is_err(), "{raw:?}");
        }
    }
}
