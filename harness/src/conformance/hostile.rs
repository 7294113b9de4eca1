//! The raw material of the fuzz's hostile inputs: a seeded generator, so that a failing case
//! can be reproduced from its seed, the odd values every endpoint's generator draws from, and
//! each parameter's generator of bad (and, for keys, good) values.

/// A small deterministic generator (xorshift64*), so a failing case can be reproduced by seed.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub(super) fn digits(&mut self, min: usize, max: usize) -> String {
        let len = min + self.below(max - min + 1);
        (0..len)
            .map(|_| char::from(b'0' + self.below(10) as u8))
            .collect()
    }

    pub(super) fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

pub(super) const TRAVERSALS: &[&str] = &[
    "../../etc/passwd",
    "..%2f..%2fetc%2fpasswd",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "%252e%252e%252fetc%252fpasswd",
    "....//....//etc/passwd",
    "/etc/passwd",
    "%00",
    "..\\..\\windows\\win.ini",
];

pub(super) const ODD: &[&str] = &[
    "1.5",
    "1e3",
    "0x10",
    "+5",
    " 5",
    "%205",
    "5%20",
    "NaN",
    "Infinity",
    "-0",
    "true",
    "null",
    "[]",
    "{}",
    "%C3%A9",
    "%EF%BC%95",
    "%F0%9F%98%80",
    "\u{00e9}",
    "%FF%FE",
    "5%00",
    "%",
];

/// One invalid value for `ms`.
pub(super) fn bad_ms(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => rng.digits(7, 40),                 // too large, up to far beyond 64 bits
        1 => format!("-{}", rng.digits(1, 25)), // negative
        2 => format!("{}", 60_001 + rng.below(1_000_000)), // just above the limit
        3 => rng.pick(ODD).to_string(),         // not a decimal integer
        4 => rng.pick(TRAVERSALS).to_string(),  // path-like
        _ => "9".repeat(1000 + rng.below(4000)), // oversized
    }
}

/// A path that is not an endpoint of the contract (traversal, encoded, odd bytes).
pub(super) fn bad_path(rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => format!("/{}", rng.pick(TRAVERSALS)),
        1 => format!("/plaintext/{}", rng.pick(TRAVERSALS)),
        2 => format!("/hash/{}", rng.pick(TRAVERSALS)),
        _ => format!("/{}", rng.pick(ODD)),
    }
}

/// An invalid /messages id: zero, negative, beyond 64 bits, not a decimal, path-like.
pub(super) fn bad_message_id(rng: &mut Rng) -> String {
    match rng.below(5) {
        0 => format!(
            "{}{}",
            9_223_372_036_854_775_808u64 + rng.below(1000) as u64,
            rng.digits(0, 20)
        ),
        1 => format!("-{}", rng.digits(1, 20)),
        2 => "0".repeat(1 + rng.below(19)),
        3 => rng.pick(ODD).to_string(),
        _ => rng.pick(TRAVERSALS).to_string(),
    }
}

/// Characters valid texts are made of: ASCII, JSON escapes, accents, CJK, emoji.
const TEXT_CHARS: &[char] = &[
    'a',
    'Z',
    '7',
    ' ',
    '"',
    '\\',
    '/',
    '\n',
    '\t',
    '\u{e9}',
    '\u{df}',
    '\u{65e5}',
    '\u{672c}',
    '\u{1f600}',
    '\u{2713}',
    '<',
    '&',
    '\'',
];

pub(super) fn text(rng: &mut Rng, len: usize) -> String {
    (0..len)
        .map(|_| TEXT_CHARS[rng.below(TEXT_CHARS.len())])
        .collect()
}

/// An invalid create body: not JSON, not an object, text missing, of the wrong type, empty,
/// too long, holding U+0000 (PostgreSQL text cannot), deeply nested, or over 64 KiB.
pub(super) fn bad_body(rng: &mut Rng) -> String {
    let quoted = |t: &str| serde_json::Value::String(t.to_string()).to_string();
    match rng.below(10) {
        0 => rng
            .pick(&[
                "",
                "{",
                "}",
                "{\"text\":",
                "{\"text\":\"a",
                "{text:\"a\"}",
                "{'text':'a'}",
                "nul",
                "{\"text\":\"a\",}",
                "{\"text\" \"a\"}",
            ])
            .to_string(),
        1 => rng
            .pick(&[
                "[]",
                "[\"text\"]",
                "\"text\"",
                "42",
                "null",
                "true",
                "[{\"text\":\"a\"}]",
            ])
            .to_string(),
        2 => format!(
            "{{\"{}\":{}}}",
            rng.pick(&["Text", "message", "body", "txt", ""]),
            quoted("hello")
        ),
        3 => format!(
            "{{\"text\":{}}}",
            rng.pick(&["42", "null", "true", "[\"a\"]", "{\"a\":1}", "1e400", "-0"])
        ),
        4 => "{\"text\":\"\"}".to_string(),
        5 => {
            let len = 1001 + rng.below(3000);
            format!("{{\"text\":{}}}", quoted(&text(rng, len)))
        }
        6 => format!(
            "{{\"text\":{}}}",
            quoted(&format!("a{}b", "\u{0}".repeat(1 + rng.below(3))))
        ),
        7 => {
            let depth = 2000 + rng.below(8000);
            format!("{{\"text\":{}{}}}", "[".repeat(depth), "]".repeat(depth))
        }
        8 => format!(
            "{{\"text\":{}}}",
            quoted(&"x".repeat(70_000 + rng.below(200_000)))
        ),
        _ => format!("{{\"text\":{},\"text\":{}}}", quoted(""), quoted("")),
    }
}

/// An invalid /hash id for a corpus of `files` files.
pub(super) fn bad_id(rng: &mut Rng, files: u32) -> String {
    match rng.below(4) {
        0 => (u64::from(files) + rng.below(1_000_000) as u64).to_string(), // past the corpus
        1 => format!("{}.bin", rng.below(files.max(1) as usize)),          // a file name, not an id
        2 => format!("{}/../{}", rng.below(10), rng.pick(TRAVERSALS)),
        _ => bad_ms(rng).replace("60001", "-60001"),
    }
}

/// An invalid /enrich key: outside A-Z a-z 0-9 - _, empty, or longer than 64.
pub(super) fn bad_key(rng: &mut Rng) -> String {
    match rng.below(5) {
        0 => rng.pick(TRAVERSALS).to_string(),
        1 => format!("{}.", rng.pick(ODD)), // '.' is never part of a key
        2 => "k".repeat(65 + rng.below(5000)),
        3 => format!(
            "ok{}",
            rng.pick(&["%20", "%2F", ".", "~", "%00", "%C3%A9", "!", "*", "%22"])
        ),
        _ => String::new(),
    }
}

pub(super) fn good_key(rng: &mut Rng) -> String {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
    let len = 1 + rng.below(40);
    format!(
        "fast-{}",
        (0..len)
            .map(|_| char::from(CHARS[rng.below(CHARS.len())]))
            .collect::<String>()
    )
}
