//! The contract's rules for a query's parameters, shared by every route of the test server.

/// A decimal integer of at most 10 digits, no sign, no more than `max` (the contract's rule).
pub(super) fn decimal(v: &str, max: u64) -> Option<u64> {
    (!v.is_empty() && v.len() <= 10 && v.bytes().all(|b| b.is_ascii_digit()))
        .then(|| v.parse().ok())
        .flatten()
        .filter(|n| *n <= max)
}

/// The value of query parameter `name` (the first one given), undecoded.
pub(super) fn param<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix(name).and_then(|r| r.strip_prefix('=')))
}

/// The status of an answer to a request the contract refuses.
pub(super) const BAD: &str = "400 Bad Request";
