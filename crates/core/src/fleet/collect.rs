//! `fleet collect` (#36): the reports PCs wrote to a share (`--report
//! \\server\share\%COMPUTERNAME%.json`) read into one row per PC, written as CSV
//! (`csv.rs`) and as one self-contained HTML page (`html.rs`); both take their cells from
//! `cells.rs`, so the two files always say the same thing.
//!
//! Reports come from other machines, so each is input: read through `place` (a regular
//! file, never through a link, at most [`MAX_REPORT`] bytes), at most [`MAX_FILES`] of
//! them, and a report this cuda-setup cannot read (not JSON, not a fleet report, a newer
//! schema) is a row naming the reason, never guessed.

mod cells;
mod csv;
mod html;

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};

use serde::Serialize;

use super::drift::{self, DriftEntry};
use super::profile::{self, Profile, ProfileError};
use super::report::{self, Report};
use crate::compat::{Os, Tables};
use crate::i18n::Lang;
use crate::message::Message;
use crate::place::{self, ReadError};
use crate::{msg, shown};

pub use cells::lines;
pub use csv::csv;
pub use html::html;

/// The most bytes one report may have (a report is a few kilobytes).
pub const MAX_REPORT: u64 = 1 << 20;
/// The most reports read from one folder.
pub const MAX_FILES: usize = 10_000;
/// How far ahead of this machine's clock a report may be written before it is flagged:
/// Kerberos' default tolerance (5 minutes), within which a Windows domain keeps its
/// clocks.
pub const CLOCK_SKEW: u64 = 300;
/// Reports read at once: a share answers each open after a round trip.
const READERS: usize = 8;

/// Nothing to tabulate: the folder could not be listed, or the profile is wrong.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    #[error("{}: {source}", dir.display())]
    Dir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `--profile` could not be read or validated for PCs of this OS.
    #[error(transparent)]
    Profile(Box<ProfileError>),
}

impl CollectError {
    pub fn message(&self) -> Message {
        match self {
            CollectError::Dir { dir, .. } => msg!("fleet_err_dir", dir = shown::path(dir)),
            CollectError::Profile(e) => e.message(),
        }
    }
    pub fn hint(&self) -> Message {
        match self {
            CollectError::Dir { .. } => msg!("hint_fleet_dir"),
            CollectError::Profile(e) => e.hint(),
        }
    }
}

/// Every report of a folder, one row each, sorted by computer name.
#[derive(Debug, Clone, Serialize)]
pub struct Table {
    pub dir: PathBuf,
    /// When it was collected (seconds since the epoch): ages are from here.
    pub now: u64,
    pub judged: Judged,
    pub rows: Vec<Row>,
    /// Reports past [`MAX_FILES`], not read.
    pub left_out: usize,
}

/// Where the drift column comes from.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Judged {
    /// Each report's own test (a `state get` report has none: "not tested").
    Reports,
    /// Every report's state judged again against this profile.
    Profile { file: String },
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The report's file name in the folder.
    pub file: String,
    /// The report's computer; for an unreadable report, its file name without `.json`.
    pub computer: String,
    #[serde(flatten)]
    pub seen: Seen,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Seen {
    Read(Box<Pc>),
    Unreadable { reason: Unreadable },
}

/// One PC as its report says, in the table's terms.
#[derive(Debug, Clone, Serialize)]
pub struct Pc {
    pub gpus: Vec<String>,
    pub driver: Option<String>,
    /// The active toolkit first.
    pub toolkits: Vec<String>,
    pub cudnn: Vec<String>,
    pub torch: Option<Torch>,
    pub guard: Option<Guard>,
    pub last_check: Option<Check>,
    /// None: never tested (a `state get` report, no `--profile`); empty: in the desired state.
    pub drift: Option<Vec<DriftEntry>>,
    /// The profile does not validate for this PC's OS (#36 review 10): why, in the
    /// table's language; its drift is not judged (`drift` None).
    pub cannot_judge: Option<String>,
    pub written_at: u64,
    /// Seconds from `written_at` to the table's `now` (negative: written later than now).
    pub age_secs: i64,
    /// Written more than [`CLOCK_SKEW`] after now: that PC's clock (or this one's) is wrong.
    pub from_future: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Torch {
    pub version: String,
    /// `cu124`, `cpu`, `pypi`.
    pub variant: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Guard {
    pub on: bool,
    pub verified_at: u64,
    /// Some(false): the installed torch is no longer the verified build.
    pub intact: Option<bool>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub at: u64,
    pub works: bool,
    pub speedup: Option<f64>,
}

/// Why a report was not read.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Unreadable {
    /// A symbolic link or junction: never followed.
    Link,
    /// A folder, a FIFO, a device.
    NotFile {
        what: String,
    },
    TooBig {
        size: u64,
        max: u64,
    },
    Io {
        error: String,
    },
    /// Not JSON at all (a torn or corrupt file).
    NotJson {
        error: String,
    },
    /// JSON without `"schema": "cuda-setup/report"` (an old `install --report`).
    NotReport {
        schema: Option<String>,
    },
    /// Written by a newer cuda-setup.
    Newer {
        schema_version: u64,
    },
    /// A fleet report of our schema whose content does not fit it.
    Invalid {
        error: String,
    },
}

impl From<report::Unreadable> for Unreadable {
    fn from(e: report::Unreadable) -> Self {
        match e {
            report::Unreadable::NotJson { detail } => Unreadable::NotJson { error: detail },
            report::Unreadable::NotFleetReport { schema } => Unreadable::NotReport { schema },
            report::Unreadable::Newer { schema_version } => Unreadable::Newer { schema_version },
            report::Unreadable::Malformed { detail } => Unreadable::Invalid { error: detail },
            // Their bound is above ours (MAX_REPORT): not reached, said as ours would be.
            report::Unreadable::TooBig { max } => Unreadable::TooBig { size: max + 1, max },
        }
    }
}

impl Unreadable {
    pub fn message(&self) -> Message {
        match self {
            Unreadable::Link => msg!("fleet_unreadable_link"),
            Unreadable::NotFile { .. } => msg!("fleet_unreadable_not_file"),
            Unreadable::TooBig { size, max } => msg!(
                "fleet_unreadable_too_big",
                size = crate::units::bytes(*size),
                max = crate::units::bytes(*max)
            ),
            Unreadable::Io { error } => msg!("fleet_unreadable_io", error = shown::text(error)),
            // The report reader's own words for what it refused.
            Unreadable::NotJson { .. } => msg!("fleet_report_not_json"),
            Unreadable::NotReport { .. } => msg!("fleet_report_not_ours"),
            Unreadable::Newer { schema_version } => {
                msg!("fleet_report_newer", version = schema_version)
            }
            Unreadable::Invalid { .. } => msg!("fleet_report_malformed"),
        }
    }

    /// The reader's raw words (a JSON parser's position), for a tooltip and `--json`.
    pub fn detail(&self) -> Option<String> {
        match self {
            Unreadable::NotJson { error } | Unreadable::Invalid { error } => {
                Some(shown::text(error))
            }
            _ => None,
        }
    }
}

/// The counts the summary line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Rows: one per report file, read or not.
    pub pcs: usize,
    pub drifted: usize,
    pub unreadable: usize,
    pub not_tested: usize,
    /// Rows whose OS the profile does not validate for.
    pub cannot_judge: usize,
    pub from_future: usize,
    pub left_out: usize,
}

impl Summary {
    /// The summary line, then what else the admin should know (in that order).
    pub fn messages(&self) -> Vec<Message> {
        let mut out = vec![msg!(
            "fleet_summary",
            pcs = self.pcs,
            drifted = self.drifted,
            unreadable = self.unreadable
        )];
        if self.not_tested > 0 {
            out.push(msg!("fleet_summary_not_tested", count = self.not_tested));
        }
        if self.cannot_judge > 0 {
            out.push(msg!(
                "fleet_summary_cannot_judge",
                count = self.cannot_judge
            ));
        }
        if self.from_future > 0 {
            out.push(msg!("fleet_summary_future", count = self.from_future));
        }
        if self.left_out > 0 {
            out.push(msg!(
                "fleet_summary_left_out",
                count = self.left_out,
                max = MAX_FILES
            ));
        }
        out
    }
}

impl Table {
    pub fn summary(&self) -> Summary {
        let mut s = Summary {
            pcs: self.rows.len(),
            drifted: 0,
            unreadable: 0,
            not_tested: 0,
            cannot_judge: 0,
            from_future: 0,
            left_out: self.left_out,
        };
        for r in &self.rows {
            match &r.seen {
                Seen::Unreadable { .. } => s.unreadable += 1,
                Seen::Read(pc) => {
                    match &pc.drift {
                        None if pc.cannot_judge.is_some() => s.cannot_judge += 1,
                        None => s.not_tested += 1,
                        Some(d) if !d.is_empty() => s.drifted += 1,
                        Some(_) => {}
                    }
                    s.from_future += usize::from(pc.from_future);
                }
            }
        }
        s
    }

    /// 0 when every report was read and no PC drifted; 1 otherwise, so a scheduled task
    /// can alert on it.
    pub fn exit_code(&self) -> i32 {
        let s = self.summary();
        if s.drifted + s.unreadable + s.cannot_judge + s.left_out > 0 {
            crate::exit::ERROR
        } else {
            crate::exit::OK
        }
    }
}

/// How the drift column is judged: each report's own, or again against a profile (its
/// fixes said in `lang`).
pub enum Judge<'a> {
    Reports,
    Profile {
        path: &'a Path,
        tables: &'a Tables,
        lang: Lang,
    },
}

/// Reads every `*.json` directly in `dir` (not below it) into a [`Table`]; `now` is the
/// time ages are counted from.
pub fn collect(dir: &Path, now: u64, judge: &Judge) -> Result<Table, CollectError> {
    let err = |source| CollectError::Dir {
        dir: dir.to_path_buf(),
        source,
    };
    let folder = place::Dir::open(dir).map_err(err)?;
    let mut found: Vec<(String, Kind)> = Vec::new();
    let mut left_out = 0;
    for entry in folder.handle().entries().map_err(err)? {
        let entry = entry.map_err(err)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        // Hidden files are not reports (a writer's temporary file, a sync tool's).
        if name.starts_with('.') || !name.to_ascii_lowercase().ends_with(".json") {
            continue;
        }
        if found.len() == MAX_FILES {
            left_out += 1;
            continue;
        }
        // The entry's own type: a link is seen as a link, not what it points to.
        let kind = match entry.file_type() {
            Ok(t) if t.is_symlink() => Kind::Link,
            Ok(t) if t.is_file() => Kind::File,
            Ok(t) if t.is_dir() => Kind::Other("a folder"),
            Ok(_) => Kind::Other("not a plain file"),
            Err(_) => Kind::File, // the read says why
        };
        found.push((name, kind));
    }
    let read = read_all(&folder, found);
    let judged = match judge {
        Judge::Reports => Judged::Reports,
        Judge::Profile { path, .. } => Judged::Profile {
            file: shown::path(path),
        },
    };
    let mut rows = Vec::with_capacity(read.len());
    // The profile as validated for each OS the PCs run (its defaults and the installers
    // it names differ), loaded once per OS.
    // A profile that does not validate for one OS leaves those rows unjudged, not the
    // whole table (#36 review 10).
    let mut profiles: Vec<(Os, Result<Profile, String>)> = Vec::new();
    for (mut row, report) in read {
        if let (Judge::Profile { path, tables, lang }, Some(r), Seen::Read(pc)) =
            (judge, &report, &mut row.seen)
        {
            let os = r.state.os;
            let p = match profiles.iter().position(|(o, _)| *o == os) {
                Some(i) => &profiles[i].1,
                None => {
                    let loaded = profile::load(path, tables, os)
                        .map_err(|e| crate::i18n::render(&e.message(), *lang));
                    profiles.push((os, loaded));
                    &profiles[profiles.len() - 1].1
                }
            };
            match p {
                Ok(p) => {
                    let found = drift::diff(p, &r.state, tables);
                    pc.drift = Some(found.iter().map(|d| d.entry(*lang)).collect());
                }
                Err(why) => {
                    pc.drift = None;
                    pc.cannot_judge = Some(why.clone());
                }
            }
        }
        rows.push(row);
    }
    Ok(Table {
        dir: dir.to_path_buf(),
        now,
        judged,
        rows: finish(rows, now),
        left_out,
    })
}

enum Kind {
    File,
    Link,
    Other(&'static str),
}

/// Reads the reports on a few threads (each open on a share waits a round trip): each
/// row, with its report when it was read.
fn read_all(folder: &place::Dir, found: Vec<(String, Kind)>) -> Vec<(Row, Option<Report>)> {
    let next = AtomicUsize::new(0);
    let rows = Mutex::new(Vec::with_capacity(found.len()));
    std::thread::scope(|s| {
        for _ in 0..READERS.min(found.len()) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, AtomicOrdering::Relaxed);
                    let Some((name, kind)) = found.get(i) else {
                        break;
                    };
                    if let Some(row) = read_one(folder, name, kind) {
                        rows.lock().unwrap_or_else(|p| p.into_inner()).push(row);
                    }
                }
            });
        }
    });
    rows.into_inner().unwrap_or_else(|p| p.into_inner())
}

/// The ages from `now`, and the order: by computer name.
fn finish(mut rows: Vec<Row>, now: u64) -> Vec<Row> {
    for r in &mut rows {
        if let Seen::Read(pc) = &mut r.seen {
            pc.age_secs = now as i64 - pc.written_at as i64;
            pc.from_future = pc.age_secs < -(CLOCK_SKEW as i64);
        }
    }
    rows.sort_by(|a, b| natural(&a.computer, &b.computer).then_with(|| a.file.cmp(&b.file)));
    rows
}

/// One report as a row (and the report); None when the file went away since the listing.
fn read_one(folder: &place::Dir, name: &str, kind: &Kind) -> Option<(Row, Option<Report>)> {
    let stem = name[..name.len() - ".json".len()].to_string();
    let unreadable = |reason| {
        Some((
            Row {
                file: name.to_string(),
                computer: shown::value(&stem),
                seen: Seen::Unreadable { reason },
            },
            None,
        ))
    };
    match kind {
        Kind::Link => return unreadable(Unreadable::Link),
        Kind::Other(what) => {
            return unreadable(Unreadable::NotFile {
                what: (*what).to_string(),
            });
        }
        Kind::File => {}
    }
    let bytes = match folder.read(name, MAX_REPORT) {
        Ok(Some(b)) => b,
        Ok(None) => return None,
        Err(ReadError::Link { .. }) => return unreadable(Unreadable::Link),
        Err(ReadError::NotRegular { what, .. }) => {
            return unreadable(Unreadable::NotFile {
                what: what.to_string(),
            });
        }
        Err(ReadError::TooBig { size, max, .. }) => {
            return unreadable(Unreadable::TooBig { size, max });
        }
        Err(ReadError::Io { source, .. }) => {
            return unreadable(Unreadable::Io {
                error: source.to_string(),
            });
        }
    };
    let report = match report::read(&bytes) {
        Ok(r) => r,
        Err(e) => return unreadable(e.into()),
    };
    let st = &report.state;
    let computer = match st.computer.trim() {
        "" => stem.clone(),
        c => c.to_string(),
    };
    let version = |v: &Option<crate::version::Version>| {
        v.as_ref()
            .map_or_else(|| "?".to_string(), ToString::to_string)
    };
    let mut toolkits: Vec<_> = st.toolkits.iter().collect();
    toolkits.sort_by_key(|t| !t.active);
    let mut cudnn: Vec<String> = Vec::new();
    for c in &st.cudnn {
        let v = version(&c.version);
        if !cudnn.contains(&v) {
            cudnn.push(v);
        }
    }
    let pc = Pc {
        gpus: st.gpus.iter().map(|g| shown::value(&g.name)).collect(),
        driver: st.driver.as_ref().map(|d| d.version.to_string()),
        toolkits: toolkits.iter().map(|t| version(&t.version)).collect(),
        cudnn,
        torch: st.pytorch.as_ref().map(|t| Torch {
            version: shown::value(&t.version),
            variant: shown::value(&t.variant),
        }),
        guard: st.guard.as_ref().map(|g| Guard {
            on: g.on,
            verified_at: g.verified_at,
            intact: g.intact,
        }),
        cannot_judge: None,
        last_check: st.last_check.as_ref().map(|c| Check {
            at: c.at,
            works: c.works,
            speedup: c.speedup.filter(|s| s.is_finite()),
        }),
        drift: report.drift.clone(),
        written_at: report.written_at,
        age_secs: 0,
        from_future: false,
    };
    Some((
        Row {
            file: name.to_string(),
            computer: shown::value(&computer),
            seen: Seen::Read(Box::new(pc)),
        },
        Some(report),
    ))
}

/// Computer names in the order a person expects: case ignored, runs of digits as numbers
/// (`LAB-PC-7` before `LAB-PC-10`).
pub fn natural(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.chars().peekable(), b.chars().peekable());
    loop {
        match (x.peek().copied(), y.peek().copied()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let digits = |it: &mut std::iter::Peekable<std::str::Chars>| {
                    let mut s = String::new();
                    while let Some(c) = it.next_if(|c| c.is_ascii_digit()) {
                        s.push(c);
                    }
                    s
                };
                let (m, n) = (digits(&mut x), digits(&mut y));
                let (m, n) = (m.trim_start_matches('0'), n.trim_start_matches('0'));
                let o = m.len().cmp(&n.len()).then_with(|| m.cmp(n));
                if o != Ordering::Equal {
                    return o;
                }
            }
            (Some(c), Some(d)) => {
                let o = c.to_lowercase().cmp(d.to_lowercase());
                if o != Ordering::Equal {
                    return o;
                }
                x.next();
                y.next();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_as_people_count() {
        let mut v = vec!["lab-pc-10", "LAB-PC-7", "lab-pc-007b", "Lab-PC-2", "a"];
        v.sort_by(|a, b| natural(a, b));
        assert_eq!(v, ["a", "Lab-PC-2", "LAB-PC-7", "lab-pc-007b", "lab-pc-10"]);
    }
}
