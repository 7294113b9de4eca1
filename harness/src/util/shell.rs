//! Words for a POSIX shell: what runs on a remote host goes through its shell. Every command
//! iobound sends to a host is built here, one way: each word quoted whole, whatever it holds, so
//! a path with a space or a quote, or a name chosen by whoever wrote a plan, stays one word and
//! never becomes shell syntax.

/// `s` as one word for a POSIX shell, whatever it holds.
pub fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `words` as one command line for a POSIX shell: each word quoted, joined by spaces.
pub fn command_line(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| quoted(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `words` run in place of the shell (`exec`), so that signals sent to the shell's process
/// reach the program and its exit is the command's.
pub fn exec(words: &[&str]) -> String {
    format!("exec {}", command_line(words))
}

/// A command line the user wrote as shell text (`--cmd`), run by the shell in its place: the
/// one command iobound hands to a shell as syntax, because it is the user's own.
pub fn exec_users_script(script: &str) -> String {
    format!("exec {script}")
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    #[test]
    fn a_word_with_spaces_and_quotes_stays_one_word() {
        assert_eq!(super::quoted("/opt/jdk 25"), "'/opt/jdk 25'");
        assert_eq!(super::quoted("it's"), r"'it'\''s'");
    }

    #[test]
    fn a_command_line_reaches_the_program_word_for_word_whatever_the_words_hold() {
        let words = [
            "/opt/jdk 25/bin/jcmd",
            "it's",
            "$(echo injected)",
            "a;b",
            "`id`",
            "-oProxyCommand=x",
            "",
            "tab\there",
        ];
        let line = super::command_line(&words);
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("printf '%s\\n' {line}"))
            .output()
            .unwrap();
        let expected: String = words.iter().map(|w| format!("{w}\n")).collect();
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
    }
}
