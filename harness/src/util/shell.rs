//! Words for a POSIX shell: what runs on a remote host goes through its shell.

/// `s` as one word for a POSIX shell, whatever it holds.
pub fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_word_with_spaces_and_quotes_stays_one_word() {
        assert_eq!(super::quoted("/opt/jdk 25"), "'/opt/jdk 25'");
        assert_eq!(super::quoted("it's"), r"'it'\''s'");
    }
}
