//! The raw material of the fuzz's hostile inputs: a seeded generator, so that a failing case
//! can be reproduced from its seed, and the odd values every endpoint's generator draws from.

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
