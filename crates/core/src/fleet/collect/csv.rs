//! The table as CSV for Excel: RFC 4180 (fields with a comma, quote or line break quoted,
//! quotes doubled, CRLF between records, https://www.rfc-editor.org/rfc/rfc4180), UTF-8
//! with a byte-order mark (without it Excel on a Chinese Windows reads UTF-8 as GBK), the
//! header in the user's language. Computer names and versions come from the PCs, so a
//! cell that a spreadsheet would take for a formula (it starts with `=`, `+`, `-`, `@`, a
//! tab or a carriage return) is prefixed with `'`, as OWASP advises
//! (https://owasp.org/www-community/attacks/CSV_Injection).

use crate::i18n::Lang;

use super::Table;
use super::cells::{CSV_COLS, Col, cell};

pub fn csv(table: &Table, lang: Lang) -> String {
    let mut out = String::from("\u{feff}");
    let header: Vec<String> = CSV_COLS.iter().map(|c| field(&c.header(lang))).collect();
    out.push_str(&header.join(","));
    out.push_str("\r\n");
    for row in &table.rows {
        let cells: Vec<String> = CSV_COLS
            .iter()
            .map(|&c| {
                let cell = cell(row, c, lang);
                // A number a spreadsheet can sum and sort: the speed-up without its "×".
                match (c, cell.value) {
                    (Col::Speedup, Some(v)) => format!("{v:.1}"),
                    _ => field(&cell.text),
                }
            })
            .collect();
        out.push_str(&cells.join(","));
        out.push_str("\r\n");
    }
    out
}

/// One field, defused and quoted as needed.
pub fn field(s: &str) -> String {
    let defused = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if defused.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", defused.replace('"', "\"\""))
    } else {
        defused
    }
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn fields_are_quoted_and_defused() {
        assert_eq!(field("LAB-PC-07"), "LAB-PC-07");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
        assert_eq!(field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(field("+1"), "'+1");
        assert_eq!(field("-1"), "'-1");
        assert_eq!(field("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(field("\tx"), "'\tx");
    }
}
