//! Text a terminal may be given: what iobound prints of a name it did not choose (a path, a
//! field of a results file from elsewhere) with its control characters escaped, so that it
//! cannot recolour, move or retitle the terminal it is printed to.

/// `text` as a terminal may be given it: every control character but a newline and a tab (an
/// escape sequence in a file's name, a carriage return) written as its escape, `\u{1b}`, so that
/// what iobound prints of a name it was given cannot recolour, move or retitle the terminal.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\n' | '\t' => c.to_string(),
            c if c.is_control() => format!("\\u{{{:x}}}", c as u32),
            c => c.to_string(),
        })
        .collect()
}

/// Every string of `value`, keys included, with its control characters escaped
/// (`printable`).
pub fn strings_in(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) if s.chars().any(char::is_control) => *s = printable(s),
        Value::Array(items) => items.iter_mut().for_each(strings_in),
        Value::Object(map) if map.keys().any(|k| k.chars().any(char::is_control)) => {
            let entries = std::mem::take(map);
            for (k, mut v) in entries {
                strings_in(&mut v);
                map.insert(printable(&k), v);
            }
        }
        Value::Object(map) => map.values_mut().for_each(strings_in),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_lines_kept() {
        assert_eq!(printable("a\u{1b}[2J\rb\n\tc"), "a\\u{1b}[2J\\u{d}b\n\tc");
        let mut v = serde_json::json!({"n\u{7}": ["x\u{9b}y", 1, {"k": "ok"}]});
        strings_in(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"n\\u{7}": ["x\\u{9b}y", 1, {"k": "ok"}]})
        );
    }
}
