//! What a page types where a marker belongs: measured figures (`unmarked_figures`) and the
//! words of a verdict's outcome (`typed_verdict_words`) written in prose by hand, where they
//! drift from the results they quote. `./iobound test` runs both over every page a reader
//! meets (tests/it/readme.rs).

use super::blocks::{BLOCKS, BLOCKS_END};
use super::figure_table::{FIGURES, FIGURES_END};
use super::grid::{GRID, GRID_END};
use super::rejudged::{REJUDGED, REJUDGED_END};
use super::render::{FIGURE, FIGURE_END, TABLE, TABLE_END};
use super::rows::{ROWS, ROWS_END};

/// Each line of `page` with its number (from 1): its text where it is prose, None where it is
/// not (fenced code, a table row, a rendered table's block), which also ends a paragraph.
fn prose_lines(page: &str) -> Vec<(usize, Option<&str>)> {
    let (mut fenced, mut in_table) = (false, false);
    let mut out = Vec::new();
    for (i, line) in page.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        fenced ^= fence;
        if line.contains(TABLE) && line.contains("--markdown")
            || line.contains(GRID)
            || line.contains(BLOCKS)
            || line.contains(ROWS)
            || line.contains(REJUDGED)
            || line.contains(FIGURES)
        {
            in_table = true;
        }
        let table_end = [
            TABLE_END,
            GRID_END,
            ROWS_END,
            BLOCKS_END,
            REJUDGED_END,
            FIGURES_END,
        ]
        .iter()
        .any(|end| line.contains(end));
        let row = line.trim_start().starts_with('|');
        let prose = !(fence || fenced || in_table || table_end || row);
        in_table &= !table_end;
        out.push((i + 1, Some(line).filter(|_| prose)));
    }
    out
}

/// Measured figures written outside a marker, with their line numbers: a number followed by
/// `%`, `x`, `times`, `req/s` or `records/s`, a number of MB or GB, of minutes or hours (how
/// long a plan took; a setting's length is written `40-minute` or `40m`), or a decimal number
/// of ms or s. Not counted: fenced code, table rows and marked blocks, inline code, link targets,
/// HTML comments, a result after `=` (arithmetic the sentence shows), and `allowed` phrases
/// (the method's own constants).
pub fn unmarked_figures(page: &str, allowed: &[&str]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (i, line) in prose_lines(page) {
        let Some(line) = line else { continue };
        let mut text = strip(line);
        for phrase in allowed {
            text = text.replace(phrase, " ");
        }
        for figure in measured(&text) {
            found.push((i, figure));
        }
    }
    found
}

/// The line without markers and their values, HTML comments, inline code and link targets.
fn strip(line: &str) -> String {
    let mut s = without_code(line);
    while let Some(at) = s.find(FIGURE) {
        let end = s[at..]
            .find(FIGURE_END)
            .map_or(s.len(), |e| at + e + FIGURE_END.len());
        s.replace_range(at..end, " ");
    }
    for (open, close) in [("<!--", "-->"), ("](", ")")] {
        while let Some(at) = s.find(open) {
            let end = s[at + open.len()..]
                .find(close)
                .map_or(s.len(), |e| at + open.len() + e + close.len());
            s.replace_range(at..end, " ");
        }
    }
    s
}

/// Numbers with a measured unit after them.
fn measured(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() || (i > 0 && is_word(chars[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len()
            && (chars[i].is_ascii_digit()
                || matches!(chars[i], ',' | '.')
                    && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            i += 1;
        }
        let number: String = chars[start..i].iter().collect();
        let before: String = chars[..start].iter().collect();
        let after: String = chars[i..].iter().collect();
        let Some((unit, len)) = unit(&after, number.contains('.')) else {
            continue;
        };
        // "200 / 0.1 s = 2,000 req/s": arithmetic on a setting, shown in the sentence.
        let arithmetic =
            before.trim_end().ends_with(['=', '/']) || after[len..].trim_start().starts_with('=');
        if !arithmetic {
            out.push(format!("{number}{unit}"));
        }
    }
    out
}

/// A letter, digit or `_` before a number makes it part of a word ("p99", "x86_64").
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The measured unit `after` starts with, if any, and how many bytes of `after` it takes.
fn unit(after: &str, decimal: bool) -> Option<(String, usize)> {
    let word_ends = |s: &str, n: usize| !s[n..].chars().next().is_some_and(char::is_alphanumeric);
    if after.starts_with('%') {
        return Some(("%".into(), 1));
    }
    if after.starts_with('x') && word_ends(after, 1) {
        return Some(("x".into(), 1));
    }
    let space = usize::from(after.starts_with(' '));
    let spaced = &after[space..];
    let mut units = vec![
        "times",
        "req/s",
        "records/s",
        "MB",
        "GB",
        "minutes",
        "minute",
        "hours",
    ];
    if decimal {
        units.extend(["ms", "s"]);
    }
    units
        .into_iter()
        .find(|u| spaced.starts_with(u) && word_ends(spaced, u.len()))
        .map(|u| (format!(" {u}"), space + u.len()))
}

/// `line` with each inline code span (`...`) blanked.
fn without_code(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for (i, part) in line.split('`').enumerate() {
        out.push_str(if i % 2 == 0 { part } else { " " });
    }
    out
}

/// The words a verdict's outcome is said in: a stored finding is "different", "equivalent" or
/// "undecided", and a sentence calls it "tested" for the first two.
const VERDICT_WORDS: [&str; 4] = ["tested", "different", "equivalent", "undecided"];

/// Verdict words typed in prose beside a verdict's figure, with their line numbers: in a
/// sentence (up to `.`, `;`, `:`, `!` or `?` and a space, or a paragraph's end) that holds a
/// rendered figure of a verdict (a `verdict` or `tested` query, its outcome excepted), a word
/// of VERDICT_WORDS outside a marker states that verdict's outcome by hand, and drifts from
/// it when the results are measured again. The outcome is rendered instead (`... outcome
/// B/A`). Sentences without a verdict's figure are not judged (a page's own explanation of
/// what the words mean); code, comments and link targets are not prose.
pub fn typed_verdict_words(page: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut sentence = Sentence::default();
    for (number, line) in prose_lines(page) {
        match line {
            Some(line) if !line.trim().is_empty() => sentence.read(number, line, &mut found),
            _ => sentence.end(&mut found),
        }
    }
    sentence.end(&mut found);
    found
}

/// The sentence being read: its verdict words so far, and whether it holds a verdict's figure.
#[derive(Default)]
struct Sentence {
    words: Vec<(usize, String)>,
    has_verdict_figure: bool,
}

impl Sentence {
    fn end(&mut self, found: &mut Vec<(usize, String)>) {
        if self.has_verdict_figure {
            found.append(&mut self.words);
        }
        *self = Sentence::default();
    }

    /// One line of prose: its markers and its text, in order.
    fn read(&mut self, number: usize, line: &str, found: &mut Vec<(usize, String)>) {
        // A marker quoted as code is an example, not a figure.
        let line = without_code(line);
        let mut rest = line.as_str();
        while let Some(at) = rest.find(FIGURE) {
            self.text(number, &rest[..at], found);
            let marker = &rest[at + FIGURE.len()..];
            let (query, after) = marker.split_once("-->").unwrap_or((marker, ""));
            let words: Vec<&str> = query.split_whitespace().collect();
            let of_a_verdict = matches!(words.get(1), Some(&"verdict" | &"tested"));
            self.has_verdict_figure |= of_a_verdict && !words.contains(&"outcome");
            rest = after.split_once(FIGURE_END).map_or("", |(_, r)| r);
        }
        self.text(number, rest, found);
    }

    /// Text outside markers: its verdict words kept, the sentence ended at its boundaries.
    fn text(&mut self, number: usize, text: &str, found: &mut Vec<(usize, String)>) {
        // A space after the text ends its last word (a line's, or the text before a marker).
        let chars: Vec<char> = strip(text).chars().chain([' ']).collect();
        let mut word = String::new();
        for (i, c) in chars.iter().enumerate() {
            if c.is_alphabetic() {
                word.push(*c);
                continue;
            }
            if VERDICT_WORDS.contains(&word.to_lowercase().as_str()) {
                self.words.push((number, std::mem::take(&mut word)));
            }
            word.clear();
            // "... framework.** WebFlux": closing emphasis, quotes or brackets may stand
            // between the sentence's last mark and the space after it.
            let after = chars[i + 1..]
                .iter()
                .find(|n| !matches!(n, '*' | '_' | '"' | ')'));
            let boundary =
                matches!(c, '.' | ';' | ':' | '!' | '?') && after.is_none_or(|n| n.is_whitespace());
            if boundary {
                self.end(found);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_figures_outside_markers_are_found() {
        let page = "WebFlux served 4.4 times MVC's throughput, p99 -74%, at 9,082 req/s.\n\
                    It used 339 MB and waited 1.5 s; the ratio was 0.83x, in 21 minutes.\n";
        let found: Vec<String> = unmarked_figures(page, &[])
            .into_iter()
            .map(|f| f.1)
            .collect();
        assert_eq!(
            found,
            [
                "4.4 times",
                "74%",
                "9,082 req/s",
                "339 MB",
                "1.5 s",
                "0.83x",
                "21 minutes"
            ]
        );
    }

    #[test]
    fn figures_in_markers_code_tables_and_settings_are_not() {
        let page = "Served <!-- = d verdict s throughput ratio -->4.43<!-- /= -->x, `50%` and \
                    [a](docs/x-5%.md); 200 / 0.1 s = 2,000 req/s.\n\
                    | a | 5% |\n```\n12 req/s\n```\n\
                    <!-- iobound table --markdown d -->\n**s** 10,000 req/s\n<!-- /iobound table -->\n\
                    A 100 ms wait, 1,000 users, 8 s, a 512m heap, equivalent within 5%.\n";
        assert_eq!(unmarked_figures(page, &["within 5%"]), vec![]);
        assert_eq!(unmarked_figures(page, &[]), vec![(9, "5%".to_string())]);
    }

    #[test]
    fn verdict_words_beside_a_verdicts_figure_are_found() {
        let fig = |q: &str, v: &str| format!("<!-- = d verdict {q} -->{v}<!-- /= -->");
        let page = format!(
            "WebFlux spent {} against the pool (tested), and\n\
             {} against virtual threads, both different.\n\
             Throughput stayed {} ({}). The words mean: \"different\" at p <= 0.05,\n\
             \"equivalent\" within the margin, undecided otherwise.\n\n\
             | a | {} tested |\n\
             A different host; {} `tested` [undecided](x.md#undecided).\n",
            fig("s cpu change flux/mvc", "-26%"),
            fig("s cpu change flux/virt", "-18%"),
            fig("s throughput outcome flux/mvc", "undecided"),
            fig("s throughput ratio flux/mvc", "0.97"),
            fig("s cpu change flux/mvc", "-26%"),
            fig("s cpu change flux/mvc", "-26%"),
        );
        let found = typed_verdict_words(&page);
        // Beside the figures of lines 1-2 and 7 (line 3's outcome marker renders its word); not in
        // the explanation without a figure, a table row, code or a link's target.
        assert_eq!(
            found,
            [
                (1, "tested".to_string()),
                (2, "different".to_string()),
                (7, "undecided".to_string())
            ],
            "{page}"
        );
    }

    #[test]
    fn a_bold_lead_in_is_a_sentence_of_its_own() {
        let page = "- **The pool, tested.** WebFlux answered \
                    <!-- = d verdict s throughput ratio f/m -->53.76<!-- /= --> times.\n\
                    Write `<!-- = d verdict s throughput ratio f/m -->1<!-- /= -->`, tested.\n";
        assert_eq!(typed_verdict_words(page), vec![]);
    }

    #[test]
    fn a_rendered_outcome_is_not_a_typed_word() {
        let page = "WebFlux spent <!-- = d verdict s cpu change f/m -->-26%<!-- /= --> \
                    (<!-- = d verdict s cpu outcome f/m -->different<!-- /= -->).\n";
        assert_eq!(typed_verdict_words(page), vec![]);
    }
}
