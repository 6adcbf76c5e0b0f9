//! The table as one HTML page a lab admin opens from the share: no server, no network,
//! no other file (inline CSS and a few lines of script; the page's Content-Security-Policy
//! allows nothing else to load). A click on a column heading sorts by it (numbers as
//! numbers, versions digit-aware), `#sort=KEY` or `#sort=-KEY` in the address sorts on
//! load. Every value is HTML-escaped: computer names come from the PCs.

use crate::i18n::{Lang, t, tf};
use crate::shown;
use crate::units::utc;

use super::cells::{Col, PAGE_COLS, cell, heading};
use super::{Seen, Table};

const STYLE: &str = r#"
body{font:13px/1.4 system-ui,"Segoe UI","Microsoft YaHei","PingFang SC","Noto Sans CJK SC",sans-serif;margin:16px;color:#1a1a1a;background:#fff}
h1{font-size:20px;margin:0 0 6px}
.summary{font-size:16px;font-weight:600;margin:4px 0}
.summary.bad{color:#b00020}
.note{color:#444;margin:2px 0}
table{border-collapse:separate;border-spacing:0;margin-top:10px}
th,td{padding:4px 6px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top;white-space:nowrap}
th{position:sticky;top:0;z-index:1;background:#e8edf3;cursor:pointer;user-select:none;border-bottom:2px solid #8a94a6}
th:focus{outline:2px solid #1a56db;outline-offset:-2px}
th[aria-sort=ascending]::after{content:" \25B2"}
th[aria-sort=descending]::after{content:" \25BC"}
tbody tr:nth-child(even) td{background:#f7f8fa}
td.num{text-align:right}
td.wrap{white-space:normal;min-width:16em;max-width:30em}
td.bad[title]{text-decoration:underline dotted}
tbody tr.unreadable td,tbody tr td.bad{background:#fdecee;color:#b00020;font-weight:600}
"#;

const SCRIPT: &str = r#"
(function () {
  var table = document.getElementById('pcs'), body = table.tBodies[0];
  var heads = table.tHead.rows[0].cells;
  function key(row, i, num) {
    var c = row.cells[i];
    var v = c.hasAttribute('data-v') ? c.getAttribute('data-v') : c.textContent;
    if (v === '') return null;
    return num ? parseFloat(v) : v;
  }
  function sortBy(i, desc) {
    var num = heads[i].getAttribute('data-num') === '1';
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a, i, num), y = key(b, i, num);
      if (x === null || y === null) return (x === null) - (y === null);
      var r = num ? x - y : x.localeCompare(y, undefined, {numeric: true, sensitivity: 'base'});
      return desc ? -r : r;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    for (var j = 0; j < heads.length; j++) {
      heads[j].setAttribute('aria-sort', j === i ? (desc ? 'descending' : 'ascending') : 'none');
    }
  }
  Array.prototype.forEach.call(heads, function (h, i) {
    function go() { sortBy(i, h.getAttribute('aria-sort') === 'ascending'); }
    h.addEventListener('click', go);
    h.addEventListener('keydown', function (e) {
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); go(); }
    });
  });
  var m = /^#sort=(-?)(\w+)$/.exec(location.hash);
  if (m) {
    Array.prototype.forEach.call(heads, function (h, i) {
      if (h.getAttribute('data-key') === m[2]) sortBy(i, m[1] === '-');
    });
  }
})();
"#;

/// Text as HTML text or an attribute's value.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

pub fn html(table: &Table, lang: Lang) -> String {
    let summary = table.summary();
    let lines = heading(table, lang);
    let mut o = String::new();
    o.push_str("<!DOCTYPE html>\n<html lang=\"");
    o.push_str(match lang {
        Lang::En => "en",
        Lang::Zh => "zh-CN",
    });
    o.push_str("\">\n<head>\n<meta charset=\"utf-8\">\n");
    o.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n",
    );
    o.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let title = escape(&t(lang, "fleet_html_title"));
    o.push_str(&format!(
        "<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
    ));
    o.push_str(&format!("<h1>{title}</h1>\n"));
    let bad = summary.drifted + summary.unreadable + summary.left_out > 0;
    for (i, line) in lines.iter().enumerate() {
        let class = match (i, bad) {
            (0, true) => "summary bad",
            (0, false) => "summary",
            _ => "note",
        };
        o.push_str(&format!("<p class=\"{class}\">{}</p>\n", escape(line)));
    }
    let read = tf(
        lang,
        "fleet_html_read",
        &[("dir", &shown::path(&table.dir)), ("when", &utc(table.now))],
    );
    o.push_str(&format!("<p class=\"note\">{}</p>\n", escape(&read)));
    o.push_str(&format!(
        "<p class=\"note\">{}</p>\n",
        escape(&t(lang, "fleet_html_sort"))
    ));
    o.push_str("<table id=\"pcs\">\n<thead><tr>");
    for c in PAGE_COLS {
        o.push_str(&format!(
            "<th data-key=\"{}\" data-num=\"{}\" tabindex=\"0\" aria-sort=\"none\">{}</th>",
            c.key(),
            u8::from(c.numeric()),
            escape(&c.header(lang))
        ));
    }
    o.push_str("</tr></thead>\n<tbody>\n");
    for row in &table.rows {
        let unreadable = matches!(row.seen, Seen::Unreadable { .. });
        o.push_str(if unreadable {
            "<tr class=\"unreadable\">"
        } else {
            "<tr>"
        });
        for c in PAGE_COLS {
            let cell = cell(row, c, lang);
            let mut class = Vec::new();
            if cell.bad {
                class.push("bad");
            }
            if c.numeric() {
                class.push("num");
            }
            if c == Col::Status {
                class.push("wrap");
            }
            o.push_str("<td");
            if !class.is_empty() {
                o.push_str(&format!(" class=\"{}\"", class.join(" ")));
            }
            if c.numeric() {
                let v = cell.value.map(|v| v.to_string()).unwrap_or_default();
                o.push_str(&format!(" data-v=\"{}\"", escape(&v)));
            }
            if let Some(more) = &cell.more {
                o.push_str(&format!(" title=\"{}\"", escape(more)));
            }
            o.push_str(&format!(">{}</td>", escape(&cell.text)));
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</tbody>\n</table>\n");
    o.push_str(&format!("<script>{SCRIPT}</script>\n</body>\n</html>\n"));
    o
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_is_escaped() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
    }
}
