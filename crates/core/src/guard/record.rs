//! The record of verified torch builds, one per interpreter, in our state folder
//! (`<state>/guard/verified-torch.json`), and the note the pip step leaves until the
//! doctor has verified what it installed (`<state>/guard/installed-torch.json`). Both are
//! state files: read bounded, never through a link, judged whole; a bad one is set aside.
//! Read from this run's folder and, read-only, the other run's (`crate::records`: an
//! elevated install's records seen by the user's runs); written to this run's only.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::GuardError;
use super::probe::EnvKind;
use crate::records::{Origin, Use};
use crate::target::Target;

const FOLDER: &str = "guard";
const RECORDS: &str = "verified-torch.json";
const PENDING: &str = "installed-torch.json";
const FORMAT: u32 = 1;

/// Who verified the build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerifiedBy {
    /// Our pip step installed it, then the doctor found it working on the GPU.
    Install,
    /// `doctor` found it working on the GPU.
    Doctor,
}

/// The wheel file our download engine fetched (into `<state>/downloads` and the
/// hash-named cache).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wheel {
    pub file: String,
    pub sha256: String,
}

/// A torch build verified on the GPU in one interpreter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub python: PathBuf,
    /// Its `sys.prefix` then: where the pin goes.
    pub prefix: PathBuf,
    pub env: EnvKind,
    /// The full version (`2.7.1+cu118`).
    pub torch: String,
    /// The release (`2.7.1`) and its local tag (`cu118`; None for PyPI's plain build).
    pub version: String,
    pub local: Option<String>,
    /// The build's variant: the local tag, else `cpu` / `pypi`.
    pub variant: String,
    /// The index it came from (ours: the plan's; a doctor-verified one: PyTorch's index
    /// for its local tag, when it has one).
    pub index_url: Option<String>,
    pub wheel: Option<Wheel>,
    /// torchvision / torchaudio as they were then.
    #[serde(default)]
    pub companions: std::collections::BTreeMap<String, String>,
    /// Unix seconds.
    pub verified_at: u64,
    pub by: VerifiedBy,
    /// The user turned the guard off here (`off`): the doctor records a new build but
    /// does not pin it again until `on`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lifted: bool,
}

impl Record {
    /// `torch==2.7.1+cu118` and its companions, as constraint lines.
    pub fn constraints(&self) -> Vec<String> {
        std::iter::once(format!("torch=={}", self.torch))
            .chain(self.companions.iter().map(|(n, v)| format!("{n}=={v}")))
            .collect()
    }
}

/// `2.7.1+cu118` → (`2.7.1`, Some(`cu118`)).
pub fn split_version(v: &str) -> (String, Option<String>) {
    match v.split_once('+') {
        Some((a, b)) => (a.to_string(), Some(b.to_string())),
        None => (v.to_string(), None),
    }
}

/// The index a build's local tag names (`cu118` → PyTorch's `…/whl/cu118`).
pub fn index_for(local: Option<&str>) -> Option<String> {
    let l = local?;
    let known = l == "cpu" || l.starts_with("cu") || l.starts_with("rocm") || l == "xpu";
    (known && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '.'))
        .then(|| format!("https://download.pytorch.org/whl/{l}"))
}

/// What our pip step installed, until the doctor verifies it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Installed {
    pub python: PathBuf,
    /// The release asked for (`2.7.1`) and the index (`…/whl/cu118`).
    pub version: String,
    pub index_url: String,
    pub wheel: Option<Wheel>,
    pub at: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Records {
    format: u32,
    records: Vec<Record>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Pending {
    format: u32,
    installed: Vec<Installed>,
}

/// Whether two interpreter paths name the same one (as given, else resolved).
pub fn same_python(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// The file `name` in this run's own folder only (what a writer merges into).
fn read_own<T: serde::de::DeserializeOwned + Default>(
    target: &Target,
    name: &str,
    valid: impl Fn(&T) -> bool,
) -> Result<T, GuardError> {
    let path = target.state_dir().join(FOLDER).join(name);
    let bytes = match crate::state_file::read(&path) {
        Ok(Some(b)) => b,
        Ok(None) => return Ok(T::default()),
        Err(r) => return Err(GuardError::Record(r.set_aside())),
    };
    match serde_json::from_slice::<T>(&bytes) {
        Ok(v) if valid(&v) => Ok(v),
        Ok(_) => Err(GuardError::Record(
            crate::state_file::Rejected::new(&path, "an unknown format").set_aside(),
        )),
        Err(e) => Err(GuardError::Record(
            crate::state_file::Rejected::new(&path, e.to_string()).set_aside(),
        )),
    }
}

/// The file `name` from this run's folder and, read-only, the other run's
/// (`crate::records`), each copy with where it came from. A bad copy of ours is an error
/// (set aside); the other's is passed over, left where it is.
fn read_found<T: serde::de::DeserializeOwned>(
    target: &Target,
    name: &str,
    use_: Use,
    valid: impl Fn(&T) -> bool,
) -> Result<Vec<(T, Origin)>, GuardError> {
    let rel = format!("{FOLDER}/{name}");
    let mut out = Vec::new();
    for f in crate::records::read(target, &rel, use_).map_err(GuardError::Record)? {
        let why = match serde_json::from_slice::<T>(&f.bytes) {
            Ok(v) if valid(&v) => {
                out.push((v, f.origin));
                continue;
            }
            Ok(_) => "an unknown format".to_string(),
            Err(e) => e.to_string(),
        };
        let r = f.reject(why);
        if f.origin == Origin::Own {
            return Err(GuardError::Record(r));
        }
    }
    Ok(out)
}

/// Per interpreter, the newest of `items` by `at`.
fn newest_per_python<T>(
    items: Vec<(T, Origin)>,
    python: impl Fn(&T) -> &Path,
    at: impl Fn(&T) -> u64,
) -> Vec<(T, Origin)> {
    let mut out: Vec<(T, Origin)> = Vec::new();
    for (t, o) in items {
        match out
            .iter_mut()
            .find(|(x, _)| same_python(python(x), python(&t)))
        {
            Some(slot) if at(&t) > at(&slot.0) => *slot = (t, o),
            Some(_) => {}
            None => out.push((t, o)),
        }
    }
    out
}

fn write<T: Serialize>(target: &Target, name: &str, value: &T) -> Result<(), GuardError> {
    let dir = target
        .state()
        .and_then(|s| s.sub(FOLDER, true))
        .map_err(|e| GuardError::io(&target.state_dir().join(FOLDER), e))?;
    let bytes = serde_json::to_vec_pretty(value).expect("serialisable");
    dir.write_atomic(name, &bytes, true)
        .map_err(|e| GuardError::io(&dir.display(name), e))
}

/// Every record this run may read for `use_`, with the folder it came from: this run's
/// and the other run's (`crate::records`), the newer per interpreter.
pub fn found(target: &Target, use_: Use) -> Result<Vec<(Record, Origin)>, GuardError> {
    let all = read_found::<Records>(target, RECORDS, use_, |r| r.format == FORMAT)?
        .into_iter()
        .flat_map(|(rs, o)| rs.records.into_iter().map(move |r| (r, o)))
        .collect();
    Ok(newest_per_python(all, |r| &r.python, |r| r.verified_at))
}

/// Every record this run may act on (none when there is no file).
pub fn all(target: &Target) -> Result<Vec<Record>, GuardError> {
    Ok(found(target, Use::Act)?
        .into_iter()
        .map(|(r, _)| r)
        .collect())
}

/// The record for `python` this run may act on.
pub fn find(target: &Target, python: &Path) -> Result<Option<Record>, GuardError> {
    Ok(all(target)?
        .into_iter()
        .find(|r| same_python(&r.python, python)))
}

/// The record for `python` to tell the user about, and where it came from (an elevated
/// run also sees the user's, which it only reports).
pub fn seen(target: &Target, python: &Path) -> Result<Option<(Record, Origin)>, GuardError> {
    Ok(found(target, Use::Report)?
        .into_iter()
        .find(|(r, _)| same_python(&r.python, python)))
}

/// Stores `rec`, replacing the interpreter's previous record.
pub fn put(target: &Target, rec: Record) -> Result<(), GuardError> {
    // Our own folder's list only (the other's is read, never copied); a file set aside
    // as bad starts a fresh list.
    let mut records = read_own::<Records>(target, RECORDS, |r| r.format == FORMAT)
        .unwrap_or_default()
        .records;
    records.retain(|r| !same_python(&r.python, &rec.python));
    records.push(rec);
    write(
        target,
        RECORDS,
        &Records {
            format: FORMAT,
            records,
        },
    )
}

/// What the pip step noted for `python`, if anything.
/// From this run's folder and the machine's (an elevated install's note, read by the
/// user's doctor), the newer; never the user's for an elevated run (it decides a pin).
pub fn pending(target: &Target, python: &Path) -> Option<Installed> {
    let all = read_found::<Pending>(target, PENDING, Use::Act, |p| p.format == FORMAT)
        .ok()?
        .into_iter()
        .flat_map(|(p, o)| p.installed.into_iter().map(move |i| (i, o)))
        .filter(|(i, _)| same_python(&i.python, python));
    crate::records::newest(all, |(i, _)| i.at).map(|(i, _)| i)
}

/// Notes (`Some`) or forgets (`None`) what our pip step installed into `python`.
pub fn set_pending(
    target: &Target,
    python: &Path,
    installed: Option<Installed>,
) -> Result<(), GuardError> {
    let mut all = read_own::<Pending>(target, PENDING, |p| p.format == FORMAT)
        .unwrap_or_default()
        .installed;
    all.retain(|i| !same_python(&i.python, python));
    all.extend(installed);
    write(
        target,
        PENDING,
        &Pending {
            format: FORMAT,
            installed: all,
        },
    )
}

/// The empty constraints file the pip step hands pip while it replaces a pinned torch
/// itself (`PIP_CONSTRAINT` overrides the site configuration; an empty value would be
/// ignored by pip, an empty file is not).
pub fn lift_file(target: &Target) -> Result<PathBuf, GuardError> {
    let dir = target
        .state()
        .and_then(|s| s.sub(FOLDER, true))
        .map_err(|e| GuardError::io(&target.state_dir().join(FOLDER), e))?;
    let name = "no-constraints.txt";
    dir.write_atomic(name, b"# cuda-setup: no constraints\n", false)
        .map_err(|e| GuardError::io(&dir.display(name), e))?;
    Ok(dir.display(name))
}
