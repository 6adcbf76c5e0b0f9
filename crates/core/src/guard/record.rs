//! The record of verified torch builds, one per interpreter, in our state folder
//! (`<state>/guard/verified-torch.json`), and the note the pip step leaves until the
//! doctor has verified what it installed (`<state>/guard/installed-torch.json`). Both are
//! state files: read bounded, never through a link, judged whole; a bad one is set aside.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::GuardError;
use super::probe::EnvKind;
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

fn read<T: serde::de::DeserializeOwned + Default>(
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

fn write<T: Serialize>(target: &Target, name: &str, value: &T) -> Result<(), GuardError> {
    let dir = target
        .state()
        .and_then(|s| s.sub(FOLDER, true))
        .map_err(|e| GuardError::io(&target.state_dir().join(FOLDER), e))?;
    let bytes = serde_json::to_vec_pretty(value).expect("serialisable");
    dir.write_atomic(name, &bytes, true)
        .map_err(|e| GuardError::io(&dir.display(name), e))
}

/// Every record (none when there is no file).
pub fn all(target: &Target) -> Result<Vec<Record>, GuardError> {
    Ok(read::<Records>(target, RECORDS, |r| r.format == FORMAT)?.records)
}

/// The record for `python`.
pub fn find(target: &Target, python: &Path) -> Result<Option<Record>, GuardError> {
    Ok(all(target)?
        .into_iter()
        .find(|r| same_python(&r.python, python)))
}

/// Stores `rec`, replacing the interpreter's previous record.
pub fn put(target: &Target, rec: Record) -> Result<(), GuardError> {
    // A file set aside as bad starts a fresh list.
    let mut records = all(target).unwrap_or_default();
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
pub fn pending(target: &Target, python: &Path) -> Option<Installed> {
    read::<Pending>(target, PENDING, |p| p.format == FORMAT)
        .ok()?
        .installed
        .into_iter()
        .find(|i| same_python(&i.python, python))
}

/// Notes (`Some`) or forgets (`None`) what our pip step installed into `python`.
pub fn set_pending(
    target: &Target,
    python: &Path,
    installed: Option<Installed>,
) -> Result<(), GuardError> {
    let mut all = read::<Pending>(target, PENDING, |p| p.format == FORMAT)
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
