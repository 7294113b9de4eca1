//! Generated bad input for the readers' tests: committed, valid files (plans, manifests,
//! inventories, results) changed one way at a time, with values chosen to break parsers and the
//! arithmetic behind them (overflowing numbers and durations, huge CPU lists, paths that
//! climb out, control characters, wrong types). Deterministic: a seed gives the same inputs,
//! so a failure names the input that caused it and replays.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// xorshift64*: enough spread for choosing lines and values, and no dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Values in TOML (and mostly JSON and INI) spelling that readers have tripped on or could:
/// each one a field's value in turn.
pub const HOSTILE: &[&str] = &[
    "\"\"",
    "\"100000000000000000000s\"",
    "\"18446744073709551615ms\"",
    "\"-1s\"",
    "\"0s\"",
    "\"1.5.5s\"",
    "\"9e99h\"",
    "18446744073709551615",
    "9223372036854775807",
    "-9223372036854775808",
    "-1",
    "0",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "\"0-18446744073709551615\"",
    "\"0-4000000000\"",
    "\"3-1\"",
    "\",,,\"",
    "\"../../../../tmp/x\"",
    "\"/dev/zero\"",
    "\"\\u0000\"",
    "\"-oProxyCommand=touch /tmp/pwned\"",
    "\"a b; rm -rf /\"",
    "\"é€😀\"",
    "[]",
    "[\"\"]",
    "{}",
    "true",
    "\"x\"",
    "\"/messages/{seq:9..1}\"",
    "\"/delay?ms=18446744073709551615\"",
];

/// One generated input: its text, and the key whose value was replaced (None for the changes
/// that are not a value: a line gone, doubled or the text cut).
pub struct Generated {
    pub text: String,
    pub key: Option<String>,
}

/// `seed` changed one way: a `key = value` line's value replaced by a HOSTILE one (most
/// often), a line removed or doubled, the text cut at a random character, or every whole
/// number in it set to one large value.
pub fn mutate_lines(seed: &str, rng: &mut Rng) -> Generated {
    let mut lines: Vec<String> = seed.lines().map(str::to_string).collect();
    let valued: Vec<usize> = (0..lines.len())
        .filter(|&i| value_line(&lines[i]).is_some())
        .collect();
    match rng.below(10) {
        0 if !lines.is_empty() => {
            lines.remove(rng.below(lines.len()));
            Generated {
                text: lines.join("\n"),
                key: None,
            }
        }
        1 if !lines.is_empty() => {
            let i = rng.below(lines.len());
            lines.insert(i, lines[i].clone());
            Generated {
                text: lines.join("\n"),
                key: None,
            }
        }
        2 => {
            let chars: Vec<char> = seed.chars().collect();
            let cut = rng.below(chars.len().max(1));
            Generated {
                text: chars[..cut].iter().collect(),
                key: None,
            }
        }
        3 => {
            // Every whole number at once, each within a field's bounds on its own: the
            // products and sums of several fields are where a count wraps.
            let large = *rng.pick(&["1000000", "4294967295", "65536"]);
            for i in &valued {
                let (key, sep) = value_line(&lines[*i]).expect("a valued line");
                let whole = lines[*i][key.len() + sep.len()..]
                    .trim()
                    .parse::<u64>()
                    .is_ok();
                if whole {
                    lines[*i] = format!("{key}{sep}{large}");
                }
            }
            Generated {
                text: lines.join("\n"),
                key: None,
            }
        }
        _ if !valued.is_empty() => {
            let i = *rng.pick(&valued);
            let (key, sep) = value_line(&lines[i]).expect("chosen among valued lines");
            let (key, sep) = (key.to_string(), sep.to_string());
            lines[i] = format!("{key}{sep}{}", rng.pick(HOSTILE));
            Generated {
                text: lines.join("\n"),
                key: Some(key.trim().to_string()),
            }
        }
        _ => Generated {
            text: seed.to_string(),
            key: None,
        },
    }
}

/// The key and separator of a `key = value` (TOML) or `key: value` (YAML) line; None for
/// other lines (tables, comments, list items).
fn value_line(line: &str) -> Option<(&str, &str)> {
    let t = line.trim_start();
    if t.starts_with('#') || t.starts_with('[') || t.starts_with('-') {
        return None;
    }
    for sep in [" = ", ": "] {
        if let Some(at) = line.find(sep) {
            return Some((&line[..at], sep));
        }
    }
    None
}

/// `value` with one leaf (or object member) replaced by a HOSTILE value read as JSON, or
/// removed: a results file as a hand, a script or a bad disk might leave it.
pub fn mutate_json(value: &mut serde_json::Value, rng: &mut Rng) {
    let mut paths = Vec::new();
    leaves(value, &mut Vec::new(), &mut paths);
    if paths.is_empty() {
        return;
    }
    let path = rng.pick(&paths).clone();
    let chosen: &str = HOSTILE[rng.below(HOSTILE.len())];
    let hostile: serde_json::Value =
        serde_json::from_str(chosen).unwrap_or_else(|_| serde_json::Value::String("nan".into()));
    let remove = rng.below(5) == 0;
    let (last, parents) = path.split_last().expect("a leaf has a path");
    let mut at = &mut *value;
    for step in parents {
        at = step.get_mut(at);
    }
    match (at, last) {
        (serde_json::Value::Object(m), Step::Key(k)) if remove => {
            m.remove(k);
        }
        (parent, step) => *step.get_mut(parent) = hostile,
    }
}

/// One step into a JSON value.
#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

impl Step {
    fn get_mut<'a>(&self, v: &'a mut serde_json::Value) -> &'a mut serde_json::Value {
        match self {
            Step::Key(k) => &mut v[k.as_str()],
            Step::Index(i) => &mut v[*i],
        }
    }
}

/// Every path to a leaf of `v` (arrays sampled: their first three items).
fn leaves(v: &serde_json::Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, item) in m {
                path.push(Step::Key(k.clone()));
                leaves(item, path, out);
                path.pop();
            }
        }
        serde_json::Value::Array(a) if !a.is_empty() => {
            for (i, item) in a.iter().enumerate().take(3) {
                path.push(Step::Index(i));
                leaves(item, path, out);
                path.pop();
            }
        }
        _ => out.push(path.clone()),
    }
}

/// What the readers made of the generated inputs, for the test's assertions and its report.
#[derive(Debug, Default)]
pub struct Tally {
    pub tried: usize,
    pub refused: usize,
    pub accepted: usize,
    /// Inputs that panicked, with the panic's message.
    pub panics: Vec<(String, String)>,
}

impl Tally {
    /// Runs `read` over `input`, counting an error, an acceptance or a panic. Returns the error
    /// message (`{:#}`, with its causes) when `read` refused the input.
    pub fn read(
        &mut self,
        input: &str,
        read: impl FnOnce() -> anyhow::Result<()>,
    ) -> Option<String> {
        self.tried += 1;
        match catch_unwind(AssertUnwindSafe(read)) {
            Ok(Ok(())) => {
                self.accepted += 1;
                None
            }
            Ok(Err(e)) => {
                self.refused += 1;
                Some(format!("{e:#}"))
            }
            Err(p) => {
                let why = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                self.panics.push((input.to_string(), why));
                None
            }
        }
    }

    /// One line for `./iobound test`'s output, kept under target/generated-inputs/READER.txt
    /// (the launcher prints them after the unit tests, whose own output cargo hides).
    pub fn report(&self, reader: &str) -> String {
        let line = format!(
            "{reader}: {} generated inputs, {} refused with an error, {} accepted, {} panics",
            self.tried,
            self.refused,
            self.accepted,
            self.panics.len()
        );
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/generated-inputs");
        if std::fs::create_dir_all(&dir).is_ok() {
            let _ = std::fs::write(dir.join(format!("{reader}.txt")), format!("{line}\n"));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_line_is_replaced_and_named() {
        let mut rng = Rng::new(7);
        let seed = "name = \"x\"\nusers = 10\n[load]\nrate = 5";
        let named: Vec<String> = (0..200)
            .filter_map(|_| mutate_lines(seed, &mut rng).key)
            .collect();
        assert!(named.iter().any(|k| k == "users") && named.iter().any(|k| k == "rate"));
        assert!(named
            .iter()
            .all(|k| ["name", "users", "rate"].contains(&k.as_str())));
    }

    #[test]
    fn a_json_leaf_changes_and_the_rest_stays() {
        let mut rng = Rng::new(3);
        let seed = serde_json::json!({"a": {"b": 1, "c": [1, 2]}, "d": "x"});
        let changed = (0..50)
            .filter(|_| {
                let mut v = seed.clone();
                mutate_json(&mut v, &mut rng);
                v != seed
            })
            .count();
        assert!(changed >= 40, "{changed} of 50 changed");
    }

    #[test]
    fn a_panic_is_counted_with_its_input_not_raised() {
        let mut t = Tally::default();
        assert!(t.read("ok", || Ok(())).is_none());
        assert_eq!(
            t.read("bad", || anyhow::bail!("field x: give y")),
            Some("field x: give y".into())
        );
        t.read("boom", || panic!("overflow"));
        assert_eq!((t.tried, t.accepted, t.refused), (3, 1, 1));
        assert_eq!(t.panics, vec![("boom".to_string(), "overflow".to_string())]);
    }
}
