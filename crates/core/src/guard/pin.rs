//! The pin: a constraints file of ours in the environment's prefix, named by pip's "site"
//! configuration file there (`<sys.prefix>/pip.conf`, `pip.ini` on Windows: pip reads it
//! for that environment only, after the global and user files —
//! https://pip.pypa.io/en/stable/topics/configuration/ ("Site"), pypa/pip#1364).
//!
//! The prefix is the user's: both files are reached through a handle on it
//! (`place::Dir`), a link planted at either name is never followed (pip.conf: refused;
//! the constraints file: replaced by our rename, never written through), and the user's
//! own settings in pip.conf are kept byte for byte — we add, and later remove, only our
//! lines. Our `[install]` key hides a `constraint` the user set elsewhere (`[global]`, the
//! user's or the machine's pip config): those files go on our line before ours
//! (`pipconf`), and come off with it. pip reads its configuration in the locale's
//! encoding (cp936 on a Chinese Windows), so what we write there of our own is ASCII (the
//! user's values are copied byte for byte): a path that is not plain ASCII goes in as a
//! `file://` URL (pip percent-decodes it); the Chinese words are in the constraints file,
//! whose first line names its encoding (pip honours a PEP 263 line in requirement files).
//!
//! uv reads no per-environment file (only a project's `uv.toml`/`pyproject.toml`, the
//! user's and the system's: https://docs.astral.sh/uv/concepts/configuration-files/), so
//! nothing is written for it: `guard status` names `UV_CONSTRAINT=FILE` / `--constraint
//! FILE` (https://docs.astral.sh/uv/reference/environment/).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::GuardError;
use super::pipconf::Outside;
use super::record::Record;
use crate::compat::Os;
use crate::i18n::{Lang, render_key};
use crate::place::{Dir, ReadError};

/// Our constraints file's name in the prefix.
pub const CONSTRAINTS: &str = "cuda-setup-constraints.txt";
/// Marks our lines in pip's configuration (ASCII, see above).
const MARK: &str = "# cuda-setup guard:";
/// A pip configuration file is a few lines; anything near this is not one.
const MAX_CONFIG: u64 = 1 << 20;

/// pip's site configuration file's name on `os`.
pub fn config_name(os: Os) -> &'static str {
    match os {
        Os::Windows => "pip.ini",
        Os::Linux => "pip.conf",
    }
}

/// Whether the pin is in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PinState {
    /// pip's site configuration names our constraints file, and it holds the record's build.
    On,
    /// Neither file of ours is there.
    Off,
    /// Half there (a file removed by hand, or naming another build): `guard on` mends it.
    Broken,
}

/// `path` as pip reads it from a configuration value or `PIP_CONSTRAINT`: values are
/// split at whitespace, and the file is read in the locale's encoding, so anything but
/// plain ASCII goes as a percent-encoded `file://` URL.
pub fn pip_value(path: &Path) -> String {
    let s = path.to_string_lossy();
    if s.chars()
        .all(|c| c.is_ascii_graphic() && !"%#;\"'".contains(c))
    {
        return s.into_owned();
    }
    let mut p = s.replace('\\', "/");
    if !p.starts_with('/') {
        p.insert(0, '/');
    }
    let mut out = String::from("file://");
    for b in p.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~:".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Our constraints file: what it is and how to lift it, in English and Chinese, then the
/// pins.
pub fn constraints_text(rec: &Record, python: &Path) -> String {
    let command = format!(
        "cuda-setup guard off --python {}",
        crate::verify::doctor::shell_quote(python)
    );
    let mut o = String::from("# -*- coding: utf-8 -*-\n");
    for lang in [Lang::En, Lang::Zh] {
        let what = render_key("guard_constraints_header", [("torch", &rec.torch)], lang);
        let lift = render_key("guard_constraints_lift", [("command", &command)], lang);
        for line in [what, lift].into_iter().flatten() {
            o.push_str("# ");
            o.push_str(&line);
            o.push('\n');
        }
    }
    for c in rec.constraints() {
        o.push_str(&c);
        o.push('\n');
    }
    o
}

// ---- pip.conf, as lines of bytes (the user's file may be in any encoding) ----

fn lines(conf: &[u8]) -> Vec<&[u8]> {
    conf.split_inclusive(|&b| b == b'\n').collect()
}

fn trim(l: &[u8]) -> &[u8] {
    l.trim_ascii()
}

fn is_comment(l: &[u8]) -> bool {
    matches!(trim(l).first(), Some(b'#' | b';'))
}

fn section_of(l: &[u8]) -> Option<&[u8]> {
    let t = trim(l);
    (t.first() == Some(&b'[') && !l[0].is_ascii_whitespace())
        .then(|| t[1..].split(|&b| b == b']').next().unwrap_or_default())
}

/// `constraint = …` (or `:`), not indented: the value's first part.
fn constraint_key(l: &[u8]) -> Option<&[u8]> {
    if l.first().is_none_or(|b| b.is_ascii_whitespace()) || is_comment(l) {
        return None;
    }
    let at = l.iter().position(|&b| b == b'=' || b == b':')?;
    trim(&l[..at])
        .eq_ignore_ascii_case(b"constraint")
        .then(|| trim(&l[at + 1..]))
}

fn is_ours(token: &[u8]) -> bool {
    token
        .windows(CONSTRAINTS.len())
        .any(|w| w == CONSTRAINTS.as_bytes())
}

fn tokens(v: &[u8]) -> impl Iterator<Item = &[u8]> {
    v.split(|b| b.is_ascii_whitespace())
        .filter(|t| !t.is_empty())
}

fn newline(conf: &[u8]) -> &'static [u8] {
    if conf.windows(2).any(|w| w == b"\r\n") {
        b"\r\n"
    } else {
        b"\n"
    }
}

/// Whether `conf` names our constraints file.
pub fn has_ours(conf: &[u8]) -> bool {
    lines(conf)
        .iter()
        .any(|l| trim(l).starts_with(MARK.as_bytes()) || (!is_comment(l) && tokens(l).any(is_ours)))
}

/// Each line, and whether it is ours: our note, and the line after it naming our file
/// (its whole value: the user's files from elsewhere that we copy beside ours are ours
/// to remove too, see `pipconf`).
fn marked(conf: &[u8]) -> Vec<(&[u8], bool)> {
    let mut after_note = false;
    lines(conf)
        .into_iter()
        .map(|l| {
            let note = trim(l).starts_with(MARK.as_bytes());
            let ours = note || (after_note && tokens(l).any(is_ours));
            after_note = note;
            (l, ours)
        })
        .collect()
}

/// The user's own `constraint` files in `section` (ours left out), as pip would split
/// them; empty when not set.
pub fn constraint_values(conf: &[u8], section_name: &str) -> Vec<String> {
    constraint_tokens(conf, section_name)
        .into_iter()
        .map(|t| String::from_utf8_lossy(&t).into_owned())
        .collect()
}

/// [`constraint_values`] as the file's bytes (pip reads every file in the locale's
/// encoding: a value copied byte for byte into another file means the same there).
pub fn constraint_tokens(conf: &[u8], section_name: &str) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut section: Option<&[u8]> = None;
    let mut in_key = false;
    for (l, ours) in marked(conf) {
        if let Some(s) = section_of(l) {
            section = Some(s);
            in_key = false;
            continue;
        }
        if section != Some(section_name.as_bytes()) || is_comment(l) {
            continue;
        }
        if ours {
            // Our key's value is ours; after our continuation line the user's goes on.
            in_key &= constraint_key(l).is_none();
            continue;
        }
        let value = if let Some(v) = constraint_key(l) {
            in_key = true;
            v
        } else if in_key && l.first().is_some_and(|b| b.is_ascii_whitespace()) {
            trim(l)
        } else {
            in_key = false;
            continue;
        };
        out.extend(tokens(value).filter(|t| !is_ours(t)).map(<[u8]>::to_vec));
    }
    out
}

/// The user's own constraint files in the `[install]` section (ours left out).
pub fn others(conf: &[u8]) -> Vec<String> {
    constraint_values(conf, "install")
}

/// `conf` without our lines (and without an `[install]` header left with nothing under
/// it); the user's lines are kept as they were.
pub fn remove_ours(conf: &[u8]) -> Vec<u8> {
    let nl = newline(conf);
    let mut kept: Vec<Vec<u8>> = Vec::new();
    for (l, ours) in marked(conf) {
        let t = trim(l);
        if ours {
            continue;
        }
        if let Some(v) = constraint_key(l)
            && tokens(v).any(is_ours)
        {
            let rest: Vec<&[u8]> = tokens(v).filter(|t| !is_ours(t)).collect();
            if !rest.is_empty() {
                let mut line = b"constraint = ".to_vec();
                line.extend(rest.join(&b' '));
                line.extend_from_slice(nl);
                kept.push(line);
            }
            continue;
        }
        if l.first().is_some_and(|b| b.is_ascii_whitespace())
            && tokens(t).count() == 1
            && is_ours(t)
        {
            continue;
        }
        kept.push(l.to_vec());
    }
    // An `[install]` header with nothing but blank lines under it: ours, or empty anyway.
    let mut out: Vec<Vec<u8>> = Vec::new();
    let mut i = 0;
    while i < kept.len() {
        if section_of(&kept[i]) == Some(b"install".as_slice()) {
            let end = (i + 1..kept.len())
                .find(|&j| section_of(&kept[j]).is_some())
                .unwrap_or(kept.len());
            if kept[i + 1..end].iter().all(|l| trim(l).is_empty()) {
                // Drop the blank line we put before it too.
                if out.last().is_some_and(|l| trim(l).is_empty()) && end == kept.len() {
                    out.pop();
                }
                i = end;
                continue;
            }
        }
        out.push(kept[i].clone());
        i += 1;
    }
    out.concat()
}

/// `conf` with `value` added to the `[install]` section's `constraint` (a section and a
/// key made when missing; a value the user has keeps its files, ours added on a line of
/// its own), our earlier lines replaced.
pub fn add_ours(conf: &[u8], value: impl AsRef<[u8]>) -> Vec<u8> {
    let value = value.as_ref();
    let conf = remove_ours(conf);
    let nl = newline(&conf);
    let note = {
        let text = render_key(
            "guard_pip_conf_note",
            std::iter::empty::<(&str, &str)>(),
            Lang::En,
        )
        .unwrap_or_default();
        let ascii: String = text.chars().filter(char::is_ascii).collect();
        [MARK.as_bytes(), b" ", ascii.trim().as_bytes(), nl].concat()
    };
    let ls = lines(&conf);
    let header = ls
        .iter()
        .position(|l| section_of(l) == Some(b"install".as_slice()));
    let Some(h) = header else {
        let mut out = conf.clone();
        if !out.is_empty() && !out.ends_with(b"\n") {
            out.extend_from_slice(nl);
        }
        if !out.is_empty() {
            out.extend_from_slice(nl);
        }
        out.extend_from_slice(b"[install]");
        out.extend_from_slice(nl);
        out.extend(note);
        out.extend_from_slice(&[b"constraint = ", value].concat());
        out.extend_from_slice(nl);
        return out;
    };
    let end = (h + 1..ls.len())
        .find(|&j| section_of(ls[j]).is_some())
        .unwrap_or(ls.len());
    let key = (h + 1..end).find(|&j| constraint_key(ls[j]).is_some());
    let mut out: Vec<u8> = Vec::new();
    let (at, ours) = match key {
        // After the user's value and its continuation lines: pip splits the whole value
        // at whitespace, so our file is one more.
        Some(k) => {
            let last = (k + 1..end)
                .take_while(|&j| {
                    ls[j].first().is_some_and(|b| b.is_ascii_whitespace())
                        && !trim(ls[j]).is_empty()
                })
                .last()
                .unwrap_or(k);
            (last + 1, [b"    ", value].concat())
        }
        None => (h + 1, [b"constraint = ", value].concat()),
    };
    for (j, l) in ls.iter().enumerate() {
        if j == at {
            out.extend(&note);
            out.extend_from_slice(&ours);
            out.extend_from_slice(nl);
        }
        out.extend_from_slice(l);
        if j + 1 == ls.len() && !l.ends_with(b"\n") && at == ls.len() {
            out.extend_from_slice(nl);
        }
    }
    if at == ls.len() {
        out.extend(&note);
        out.extend_from_slice(&ours);
        out.extend_from_slice(nl);
    }
    out
}

// ---- the files ----

/// Where the pin's two files are for an environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Places {
    pub constraints: PathBuf,
    pub config: PathBuf,
}

pub fn places(os: Os, prefix: &Path) -> Places {
    Places {
        constraints: prefix.join(CONSTRAINTS),
        config: prefix.join(config_name(os)),
    }
}

/// The prefix as a handle: resolved once (a venv made through a linked folder is the
/// user's choice), then every file in it reached without following a link.
fn open_prefix(prefix: &Path) -> Result<Dir, GuardError> {
    let real = std::fs::canonicalize(prefix).map_err(|e| GuardError::io(prefix, e))?;
    Dir::open(&real).map_err(|e| GuardError::io(prefix, e))
}

fn read_config(dir: &Dir, name: &str) -> Result<Vec<u8>, GuardError> {
    match dir.read(name, MAX_CONFIG) {
        Ok(b) => Ok(b.unwrap_or_default()),
        Err(ReadError::Link { path }) => Err(GuardError::Link { path }),
        Err(ReadError::NotRegular { path, .. }) => Err(GuardError::Link { path }),
        Err(e) => Err(GuardError::io(
            e.path(),
            std::io::Error::other(e.to_string()),
        )),
    }
}

/// `dir.write_atomic(name)`, with a plain word for what an earlier write may have left at
/// `<name>.tmp` (a crash between its create and its rename, or something planted): a file
/// or a link there is removed by `write_atomic` itself (the link, never what it points
/// at), but a folder or another thing that is not ours to remove would refuse every
/// later write with a bare I/O error — the user is told which file to delete.
fn replace(dir: &Dir, name: &str, bytes: &[u8]) -> Result<(), GuardError> {
    dir.write_atomic(name, bytes, true).map_err(|e| {
        let tmp = format!("{name}.tmp");
        match dir.symlink_metadata(&tmp) {
            Ok(m) if !m.is_file() && !m.is_symlink() => GuardError::Leftover {
                path: dir.display(&tmp),
            },
            _ => GuardError::io(&dir.display(name), e),
        }
    })
}

/// Writes the pin for `rec` into its prefix: our file, after the user's constraint files
/// that our key would hide (`outside`: pip's other configuration files).
pub fn write(os: Os, rec: &Record, python: &Path, outside: &Outside) -> Result<Places, GuardError> {
    let dir = open_prefix(&rec.prefix)?;
    let name = config_name(os);
    // The configuration first: a link planted there stops everything before a byte is
    // written.
    let conf = read_config(&dir, name)?;
    let text = constraints_text(rec, python);
    replace(&dir, CONSTRAINTS, text.as_bytes())?;
    let mut value = outside.extras(&conf);
    value.push(pip_value(&dir.display(CONSTRAINTS)).into_bytes());
    replace(&dir, name, &add_ours(&conf, value.join(&b' ')))?;
    Ok(places(os, &rec.prefix))
}

/// Removes our lines from pip's configuration (the file itself when nothing else is
/// left) and our constraints file. Whether anything of ours was there.
pub fn remove(os: Os, prefix: &Path) -> Result<bool, GuardError> {
    let dir = open_prefix(prefix)?;
    let name = config_name(os);
    let conf = read_config(&dir, name)?;
    let mut changed = false;
    if has_ours(&conf) {
        let left = remove_ours(&conf);
        if left.trim_ascii().is_empty() {
            dir.remove(name)
                .map_err(|e| GuardError::io(&dir.display(name), e))?;
        } else {
            replace(&dir, name, &left)?;
        }
        changed = true;
    }
    if dir.symlink_metadata(CONSTRAINTS).is_ok() {
        // The name itself (a link someone put there included), never what it points at.
        dir.remove(CONSTRAINTS)
            .map_err(|e| GuardError::io(&dir.display(CONSTRAINTS), e))?;
        changed = true;
    }
    Ok(changed)
}

/// Whether the pin for `rec` is in place (read only; a link at either name counts as not).
pub fn state(os: Os, rec: &Record) -> PinState {
    let Ok(dir) = open_prefix(&rec.prefix) else {
        return PinState::Off;
    };
    let conf = read_config(&dir, config_name(os)).unwrap_or_default();
    let file = dir.read(CONSTRAINTS, MAX_CONFIG).ok().flatten();
    let named = has_ours(&conf);
    match (named, file) {
        (false, None) => PinState::Off,
        (true, Some(f)) => {
            let want = format!("torch=={}", rec.torch);
            if String::from_utf8_lossy(&f)
                .lines()
                .any(|l| l.trim() == want)
            {
                PinState::On
            } else {
                PinState::Broken
            }
        }
        _ => PinState::Broken,
    }
}

/// The constraint files pip would use in `prefix` without ours: the site file's own, or
/// those from pip's other files (`outside`).
pub fn user_constraints(os: Os, prefix: &Path, outside: &Outside) -> Vec<String> {
    let conf = open_prefix(prefix)
        .and_then(|d| read_config(&d, config_name(os)))
        .unwrap_or_default();
    outside.user_value(&conf)
}

/// Whether pip's configuration in `prefix` names our file.
pub fn config_names_ours(os: Os, prefix: &Path) -> bool {
    open_prefix(prefix)
        .and_then(|d| read_config(&d, config_name(os)))
        .is_ok_and(|c| has_ours(&c))
}
