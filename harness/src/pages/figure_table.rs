//! A table of figures quoted from any results directories, in one marker: for the tables whose
//! cells are not one contender's medians (a grid's or rows' cells) but other queries, such as
//! sittings side by side with `versus`, start times, profile shares or plan settings.
//!
//! ```text
//! <!-- iobound figures
//! head: median of the runs
//! col 200 threads = docs/results/pool/default cell delay-100ms spring-mvc {row}
//! col 1,000 / 200 = docs/results/pool/1000 versus ../default delay-100ms spring-mvc {row} ratio
//! row throughput (req/s) = throughput
//! row peak threads = threads | -
//! -->
//! ...the table...
//! <!-- /iobound figures -->
//! ```
//!
//! Each `col LABEL = DIR QUERY` is a column, each `row LABEL = VALUE` a row; a cell is the
//! column's query (a figure marker's, pages/quote.rs) with `{row}` replaced by the row's value.
//! A row may give one value per column instead, separated by `|`; a `-` there leaves that cell
//! empty. A row written `row LABEL := QUERY` asks its own query of each column's directory (for
//! a last row such as `unsettled-of SCENARIO CONTENDER`). The spec is written once; the table
//! below it is written by `iobound render` and checked like every marker.

use anyhow::{bail, Result};

pub(super) const FIGURES: &str = "<!-- iobound figures";
pub(super) const FIGURES_END: &str = "<!-- /iobound figures -->";

/// A table's spec, as its marker states it.
#[derive(Debug, PartialEq)]
pub(super) struct Spec {
    /// The first cell of the header (above the rows' labels).
    pub head: String,
    /// Each column's label and query (`DIR QUERY`, with `{row}` where the row's value goes).
    pub cols: Vec<(String, String)>,
    /// Each row's label and what each of its cells asks.
    pub rows: Vec<(String, Vec<Cell>)>,
}

/// What one cell of a figures table asks.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Cell {
    /// The column's query with `{row}` replaced by this value.
    Value(String),
    /// This query, asked of the column's directory.
    Query(String),
    /// Nothing: an empty cell.
    Empty,
}

/// The spec between the marker's opening words and its `-->`.
pub(super) fn parse(spec: &str) -> Result<Spec> {
    let mut out = Spec {
        head: String::new(),
        cols: Vec::new(),
        rows: Vec::new(),
    };
    let mut rows: Vec<(String, String, bool)> = Vec::new();
    for line in spec.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(head) = line.strip_prefix("head:") {
            out.head = head.trim().to_string();
            continue;
        }
        let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
        let (split, query) = match rest.split_once(" := ") {
            Some(s) => (Some(s), true),
            None => (rest.split_once(" = "), false),
        };
        let Some((label, value)) = split else {
            bail!(
                "`{line}`: write `col LABEL = DIR QUERY`, `row LABEL = VALUE`, \
                 `row LABEL := QUERY` or `head: TEXT`"
            );
        };
        let (label, value) = (label.trim().to_string(), value.trim().to_string());
        match kind {
            "col" if !query => out.cols.push((label, value)),
            "row" => rows.push((label, value, query)),
            _ => bail!("`{line}`: a line of a figures table starts with `col`, `row` or `head:`"),
        }
    }
    if out.cols.is_empty() || rows.is_empty() {
        bail!("a figures table needs at least one `col LABEL = DIR QUERY` and one `row LABEL = VALUE`");
    }
    for (label, value, query) in rows {
        let cell = |v: &str| match (v, query) {
            ("-", _) => Cell::Empty,
            (v, true) => Cell::Query(v.to_string()),
            (v, false) => Cell::Value(v.to_string()),
        };
        let values: Vec<&str> = value.split('|').map(str::trim).collect();
        let cells: Vec<Cell> = match values.len() {
            1 => vec![cell(values[0]); out.cols.len()],
            n if n == out.cols.len() => values.iter().map(|v| cell(v)).collect(),
            n => bail!(
                "row `{label}` gives {n} values for {} columns: give one for all, or one per column",
                out.cols.len()
            ),
        };
        out.rows.push((label, cells));
    }
    Ok(out)
}

/// The table of `spec`, as Markdown rows, each cell `quote(DIR, QUERY WORDS)`.
pub(super) fn table(
    spec: &Spec,
    quote: &mut dyn FnMut(&str, &[&str]) -> Result<String>,
) -> Result<String> {
    let mut head = vec![spec.head.clone()];
    head.extend(spec.cols.iter().map(|(label, _)| label.clone()));
    let mut rows = Vec::new();
    for (label, values) in &spec.rows {
        let mut cells = vec![label.clone()];
        for ((col, template), value) in spec.cols.iter().zip(values) {
            let dir = template.split_whitespace().next().unwrap_or_default();
            let query = match value {
                Cell::Empty => {
                    cells.push(String::new());
                    continue;
                }
                Cell::Value(v) => template.replace("{row}", v),
                Cell::Query(q) => format!("{dir} {q}"),
            };
            let words: Vec<&str> = query.split_whitespace().collect();
            let Some((dir, words)) = words.split_first() else {
                bail!("column `{col}` has no query");
            };
            let figure = quote(dir, words)
                .map_err(|e| anyhow::anyhow!("row `{label}`, column `{col}`: `{query}`: {e:#}"))?;
            cells.push(figure);
        }
        rows.push(cells);
    }
    Ok(crate::report::md_table::table(&head, 1, &rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "
head: median of the runs
col a = r cell wait a {row}
col b / a = r other {row} ratio
row throughput (req/s) = throughput
row peak threads = threads | -
row runs not at steady state := unsettled-of wait a
";

    #[test]
    fn a_spec_reads_its_columns_and_rows_and_a_row_may_give_a_value_per_column() {
        let s = parse(SPEC).unwrap();
        assert_eq!(s.head, "median of the runs");
        assert_eq!(s.cols[1], ("b / a".into(), "r other {row} ratio".into()));
        assert_eq!(
            s.rows[1],
            (
                "peak threads".into(),
                vec![Cell::Value("threads".into()), Cell::Empty]
            )
        );
        let own = Cell::Query("unsettled-of wait a".into());
        assert_eq!(s.rows[2].1, [own.clone(), own]);
        let e = parse("col a = r x\nrow t = 1 | 2 | 3")
            .unwrap_err()
            .to_string();
        assert!(e.contains("3 values for 1 columns"), "{e}");
        let e = parse("column a = r x\nrow t = 1").unwrap_err().to_string();
        assert!(e.contains("starts with `col`, `row`"), "{e}");
        assert!(parse("head: x").is_err(), "no column, no row");
    }

    #[test]
    fn each_cell_is_its_columns_query_for_its_row_and_an_error_names_the_cell() {
        let s = parse(SPEC).unwrap();
        let mut asked = Vec::new();
        let t = table(&s, &mut |dir, words| {
            asked.push(format!("{dir}: {}", words.join(" ")));
            Ok(words.len().to_string())
        })
        .unwrap();
        assert_eq!(
            asked,
            [
                "r: cell wait a throughput",
                "r: other throughput ratio",
                "r: cell wait a threads",
                "r: unsettled-of wait a",
                "r: unsettled-of wait a"
            ]
        );
        assert_eq!(
            t,
            "| median of the runs | a | b / a |\n|---|---:|---:|\n\
             | throughput (req/s) | 4 | 3 |\n| peak threads | 4 |  |\n\
             | runs not at steady state | 3 | 3 |\n"
        );
        let e = table(&s, &mut |_, _| bail!("no such run"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("row `throughput (req/s)`, column `a`") && e.contains("no such run"),
            "{e}"
        );
    }
}
