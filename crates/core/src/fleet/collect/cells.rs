//! The table's columns and each row's cells in words, once for the CSV and the HTML page.

use crate::i18n::{Lang, render, t, tf};
use crate::msg;
use crate::units::utc;

use super::{Pc, Row, Seen, Table};

/// The columns, in order. `key` is what `#sort=KEY` names on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    Computer,
    Gpu,
    Driver,
    Toolkit,
    Cudnn,
    Torch,
    Guard,
    Check,
    Speedup,
    Drift,
    Age,
    Written,
    File,
    Problem,
    /// The page's one column for both: the drift, or why the report is unreadable.
    Status,
}

/// The CSV's columns: everything, the drift and the unreadable reason apart (filterable).
pub const CSV_COLS: [Col; 14] = [
    Col::Computer,
    Col::Gpu,
    Col::Driver,
    Col::Toolkit,
    Col::Cudnn,
    Col::Torch,
    Col::Guard,
    Col::Check,
    Col::Speedup,
    Col::Drift,
    Col::Age,
    Col::Written,
    Col::File,
    Col::Problem,
];

/// The page's columns: what an admin looks for first on the left; the report's file and
/// time are the computer's and the age's tooltips.
pub const PAGE_COLS: [Col; 11] = [
    Col::Computer,
    Col::Status,
    Col::Age,
    Col::Gpu,
    Col::Driver,
    Col::Toolkit,
    Col::Cudnn,
    Col::Torch,
    Col::Guard,
    Col::Check,
    Col::Speedup,
];

impl Col {
    pub fn key(self) -> &'static str {
        match self {
            Col::Computer => "computer",
            Col::Gpu => "gpu",
            Col::Driver => "driver",
            Col::Toolkit => "toolkit",
            Col::Cudnn => "cudnn",
            Col::Torch => "torch",
            Col::Guard => "guard",
            Col::Check => "check",
            Col::Speedup => "speedup",
            Col::Drift => "drift",
            Col::Age => "age",
            Col::Written => "written",
            Col::File => "file",
            Col::Problem => "problem",
            // `#sort=drift` on the page.
            Col::Status => "drift",
        }
    }

    /// Sorted as numbers (the cell's `value`), not as text.
    pub fn numeric(self) -> bool {
        matches!(self, Col::Speedup | Col::Age)
    }

    pub fn header(self, lang: Lang) -> String {
        t(
            lang,
            match self {
                Col::Computer => "fleet_col_computer",
                Col::Gpu => "fleet_col_gpu",
                Col::Driver => "fleet_col_driver",
                Col::Toolkit => "fleet_col_toolkit",
                Col::Cudnn => "fleet_col_cudnn",
                Col::Torch => "fleet_col_torch",
                Col::Guard => "fleet_col_guard",
                Col::Check => "fleet_col_check",
                Col::Speedup => "fleet_col_speedup",
                Col::Drift => "fleet_col_drift",
                Col::Age => "fleet_col_age",
                Col::Written => "fleet_col_written",
                Col::File => "fleet_col_file",
                Col::Problem => "fleet_col_problem",
                Col::Status => "fleet_col_status",
            },
        )
    }
}

/// One cell: its words, a number to sort by (numeric columns), whether it is a problem
/// (drawn red), and more words for a tooltip.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cell {
    pub text: String,
    pub value: Option<f64>,
    pub bad: bool,
    pub more: Option<String>,
}

fn text(s: impl Into<String>) -> Cell {
    Cell {
        text: s.into(),
        ..Cell::default()
    }
}

fn bad(s: impl Into<String>) -> Cell {
    Cell {
        text: s.into(),
        bad: true,
        ..Cell::default()
    }
}

/// A list of versions or names, or "none".
fn list(v: &[String], lang: Lang) -> Cell {
    if v.is_empty() {
        text(t(lang, "fleet_none"))
    } else {
        text(v.join(", "))
    }
}

/// The layer's name in words (a layer this version does not know: as written).
fn layer(name: &str, lang: Lang) -> String {
    let key = match name {
        "driver" => "fleet_layer_driver",
        "toolkit" => "fleet_layer_toolkit",
        "cudnn" => "fleet_layer_cudnn",
        "pytorch" => "fleet_layer_pytorch",
        "guard" => "fleet_layer_guard",
        other => return other.to_string(),
    };
    t(lang, key)
}

/// The day of `secs` (UTC): when a guard or a check happened, to the day.
fn day(secs: u64) -> String {
    crate::units::at_offset(secs, 0)[..10].to_string()
}

/// `3 min`, `5 h`, `12 d`: how long ago a report was written.
pub fn age(secs: u64, lang: Lang) -> String {
    if secs < 3600 {
        tf(lang, "fleet_age_minutes", &[("n", &(secs / 60))])
    } else if secs < 2 * 86_400 {
        tf(lang, "fleet_age_hours", &[("n", &(secs / 3600))])
    } else {
        tf(lang, "fleet_age_days", &[("n", &(secs / 86_400))])
    }
}

pub fn cell(row: &Row, col: Col, lang: Lang) -> Cell {
    match (&row.seen, col) {
        (_, Col::Computer) => Cell {
            text: row.computer.clone(),
            more: Some(row.file.clone()),
            ..Cell::default()
        },
        (Seen::Unreadable { .. }, Col::Status) => cell(row, Col::Problem, lang),
        (Seen::Read(_), Col::Status) => cell(row, Col::Drift, lang),
        (_, Col::File) => text(row.file.clone()),
        (Seen::Unreadable { reason }, Col::Problem) => Cell {
            text: render(&reason.message(), lang),
            value: None,
            bad: true,
            more: reason.detail(),
        },
        (Seen::Unreadable { .. }, _) => Cell::default(),
        (Seen::Read(pc), col) => pc_cell(pc, col, lang),
    }
}

fn pc_cell(pc: &Pc, col: Col, lang: Lang) -> Cell {
    match col {
        Col::Gpu => list(&pc.gpus, lang),
        Col::Driver => text(pc.driver.clone().unwrap_or_else(|| t(lang, "fleet_none"))),
        Col::Toolkit => list(&pc.toolkits, lang),
        Col::Cudnn => list(&pc.cudnn, lang),
        Col::Torch => match &pc.torch {
            None => text(t(lang, "fleet_none")),
            Some(tr) if tr.variant.is_empty() => text(tr.version.clone()),
            Some(tr) => text(format!("{} ({})", tr.version, tr.variant)),
        },
        Col::Guard => match &pc.guard {
            None => text(t(lang, "fleet_guard_never")),
            Some(g) => {
                let when = day(g.verified_at);
                if g.intact == Some(false) {
                    bad(tf(lang, "fleet_guard_changed", &[("when", &when)]))
                } else if g.on {
                    text(tf(lang, "fleet_guard_on", &[("when", &when)]))
                } else {
                    text(tf(lang, "fleet_guard_off", &[("when", &when)]))
                }
            }
        },
        Col::Check => match &pc.last_check {
            None => text(t(lang, "fleet_check_never")),
            Some(c) if c.works => text(tf(lang, "fleet_check_works", &[("when", &day(c.at))])),
            Some(c) => bad(tf(lang, "fleet_check_failed", &[("when", &day(c.at))])),
        },
        Col::Speedup => match pc.last_check.as_ref().and_then(|c| c.speedup) {
            None => Cell::default(),
            Some(s) => Cell {
                text: format!("{s:.1}×"),
                value: Some(s),
                ..Cell::default()
            },
        },
        Col::Drift => match &pc.drift {
            None => match &pc.cannot_judge {
                Some(why) => bad(tf(lang, "fleet_drift_cannot_judge", &[("why", why)])),
                None => text(t(lang, "fleet_drift_not_tested")),
            },
            Some(d) if d.is_empty() => text(t(lang, "fleet_drift_none")),
            Some(d) => {
                let layers: Vec<String> = d.iter().map(|x| layer(x.layer.as_str(), lang)).collect();
                let more: Vec<String> = d
                    .iter()
                    .map(|x| {
                        render(
                            &msg!(
                                "fleet_drift_item",
                                layer = layer(x.layer.as_str(), lang),
                                is = x.is.clone().unwrap_or_else(|| t(lang, "fleet_none")),
                                should = &x.should,
                                fix = &x.fix
                            ),
                            lang,
                        )
                    })
                    .collect();
                Cell {
                    text: layers.join(", "),
                    value: None,
                    bad: true,
                    more: Some(more.join("\n")),
                }
            }
        },
        Col::Age if pc.from_future => Cell {
            text: t(lang, "fleet_age_future"),
            value: Some(pc.age_secs as f64),
            bad: true,
            more: Some(utc(pc.written_at)),
        },
        Col::Age => Cell {
            text: age(pc.age_secs.max(0) as u64, lang),
            value: Some(pc.age_secs as f64),
            bad: false,
            more: Some(utc(pc.written_at)),
        },
        Col::Written => text(utc(pc.written_at)),
        Col::Computer | Col::File | Col::Problem | Col::Status => Cell::default(),
    }
}

/// The lines above the table: the summary first, then where the drift comes from.
pub fn heading(table: &Table, lang: Lang) -> Vec<String> {
    let mut out: Vec<String> = table
        .summary()
        .messages()
        .iter()
        .map(|m| render(m, lang))
        .collect();
    out.push(match &table.judged {
        super::Judged::Reports => t(lang, "fleet_judged_reports"),
        super::Judged::Profile { file } => {
            tf(lang, "fleet_judged_profile", &[("profile", &file.as_str())])
        }
    });
    out
}

/// What the command line prints: a line per PC that needs the admin (drifted, unreadable,
/// its check failed, its clock wrong), then the lines above the page's table.
pub fn lines(table: &Table, lang: Lang) -> Vec<String> {
    let mut out = Vec::new();
    for row in &table.rows {
        let said = match &row.seen {
            Seen::Unreadable { reason } => Some(tf(
                lang,
                "fleet_line_unreadable",
                &[
                    ("computer", &row.computer.as_str()),
                    ("file", &row.file.as_str()),
                    ("reason", &render(&reason.message(), lang)),
                ],
            )),
            Seen::Read(_) => {
                let problems: Vec<String> = [Col::Status, Col::Guard, Col::Check, Col::Age]
                    .into_iter()
                    .map(|c| cell(row, c, lang))
                    .filter(|c| c.bad)
                    .map(|c| c.text)
                    .collect();
                (!problems.is_empty()).then(|| {
                    tf(
                        lang,
                        "fleet_line_problem",
                        &[
                            ("computer", &row.computer.as_str()),
                            ("problems", &problems.join("; ")),
                        ],
                    )
                })
            }
        };
        out.extend(said);
    }
    out.extend(heading(table, lang));
    out
}
