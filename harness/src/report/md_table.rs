//! The one Markdown table writer: report.md, `iobound table --markdown` and the capacity and
//! gate sections all write their tables with it.

/// A Markdown table: the first `left` columns aligned left, the rest right (numbers).
pub fn table(header: &[String], left: usize, rows: &[Vec<String>]) -> String {
    let row = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
    let mut out = row(header);
    out.push('|');
    for i in 0..header.len() {
        out.push_str(if i < left { "---|" } else { "---:|" });
    }
    out.push('\n');
    for r in rows {
        out.push_str(&row(r));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_text_left_and_numbers_right() {
        let t = table(
            &["name".into(), "req/s".into()],
            1,
            &[vec!["a".into(), "1,000".into()]],
        );
        assert_eq!(t, "| name | req/s |\n|---|---:|\n| a | 1,000 |\n");
    }
}
