//! What the interpreter says about itself: its `sys.prefix` (where pip reads its "site"
//! configuration), whether that is a venv or a conda env, and the torch installed there
//! (from its metadata, without importing it) with the time it was installed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::GuardError;
use crate::platform::Host;

pub const PROBE_SCRIPT: &str = include_str!("../../../../assets/guard_probe.py");
const MARKER: &str = "CUDA_SETUP_GUARD ";
/// Reading metadata only: well under this, even on a cold disk.
const TIMEOUT: Duration = Duration::from_secs(60);

/// What kind of environment an interpreter's prefix is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvKind {
    /// `python -m venv` / virtualenv: `sys.prefix` differs from `sys.base_prefix`.
    Venv,
    /// A conda environment (its prefix holds `conda-meta`), the base one included.
    Conda,
    /// The system's (or python.org's) interpreter itself: its prefix is shared by every
    /// program using it, so we ask before writing there.
    System,
}

/// The probe's line.
#[derive(Debug, Clone, Deserialize)]
struct Raw {
    #[serde(default)]
    executable: String,
    prefix: String,
    #[serde(default)]
    base_prefix: Option<String>,
    #[serde(default)]
    real_prefix: Option<String>,
    #[serde(default)]
    conda: bool,
    #[serde(default)]
    packages: BTreeMap<String, String>,
    #[serde(default)]
    torch_installed_at: Option<u64>,
    #[serde(default)]
    error: Option<String>,
}

/// An interpreter, as it describes itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Env {
    pub python: PathBuf,
    pub executable: String,
    pub prefix: PathBuf,
    pub kind: EnvKind,
    /// The installed torch (`2.7.1+cu118`); None: not installed.
    pub torch: Option<String>,
    /// When that torch was installed (its dist-info folder's time, Unix seconds).
    pub torch_installed_at: Option<u64>,
    /// torchvision / torchaudio, when installed.
    pub companions: BTreeMap<String, String>,
}

/// Parses the probe's output (other lines around it are ignored).
pub(super) fn parse(python: &Path, stdout: &str) -> Option<Env> {
    let line = stdout.lines().rev().find_map(|l| l.strip_prefix(MARKER))?;
    let raw: Raw = serde_json::from_str(line).ok()?;
    if raw.error.is_some() || raw.prefix.is_empty() {
        return None;
    }
    let venv = raw.real_prefix.is_some()
        || raw
            .base_prefix
            .as_deref()
            .is_some_and(|b| !same_path(b, &raw.prefix));
    let kind = if venv {
        EnvKind::Venv
    } else if raw.conda {
        EnvKind::Conda
    } else {
        EnvKind::System
    };
    let mut packages = raw.packages;
    let torch = packages.remove("torch");
    Some(Env {
        python: python.to_path_buf(),
        executable: raw.executable,
        prefix: PathBuf::from(raw.prefix),
        kind,
        torch_installed_at: torch.as_ref().and(raw.torch_installed_at),
        torch,
        companions: packages,
    })
}

fn same_path(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.trim_end_matches(['/', '\\']).replace('\\', "/");
    if cfg!(windows) {
        norm(a).eq_ignore_ascii_case(&norm(b))
    } else {
        norm(a) == norm(b)
    }
}

/// Runs the probe in `python`.
pub fn probe(host: &Host, python: &Path) -> Result<Env, GuardError> {
    let failed = |detail: String| GuardError::Probe {
        python: python.to_path_buf(),
        detail,
    };
    let out = host
        .run(python, &["-c", PROBE_SCRIPT], TIMEOUT)
        .map_err(|e| failed(e.to_string()))?;
    parse(python, &out.stdout).ok_or_else(|| {
        let tail: Vec<&str> = out.stderr.trim().lines().rev().take(3).collect();
        failed(format!(
            "no answer (exit {:?}): {}",
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        ))
    })
}

/// The probe's answer is the interpreter's word, and a `sitecustomize` may say anything:
/// before a byte is written on it, the prefix must hold the interpreter (found from the
/// path we were given, its links followed hop by hop, never from the probe's
/// `executable`), and a venv must hold `pyvenv.cfg`, a conda env `conda-meta`. A kind
/// whose marker is missing counts as a system Python (its prefix is written only once the
/// user agrees); a prefix that does not hold the interpreter is refused.
pub fn check(python: &Path, prefix: &Path, kind: EnvKind) -> Result<EnvKind, GuardError> {
    let refused = || GuardError::Prefix {
        python: python.to_path_buf(),
        prefix: prefix.to_path_buf(),
    };
    let real_prefix = std::fs::canonicalize(prefix).map_err(|_| refused())?;
    if !holds(&real_prefix, python) {
        return Err(refused());
    }
    let marker = |name: &str, dir: bool| {
        // The marker itself, not what a link there points at.
        std::fs::symlink_metadata(real_prefix.join(name))
            .is_ok_and(|m| if dir { m.is_dir() } else { m.is_file() })
    };
    Ok(match kind {
        EnvKind::Venv if marker("pyvenv.cfg", false) => EnvKind::Venv,
        EnvKind::Conda if marker("conda-meta", true) => EnvKind::Conda,
        _ => EnvKind::System,
    })
}

/// Whether `python`, or a link on the way from it to the file it names, lies in `prefix`
/// (already resolved): a venv's `bin/python` is a link to the base interpreter, so only
/// its folder is resolved, and each link is followed one hop at a time.
fn holds(prefix: &Path, python: &Path) -> bool {
    let mut at = python.to_path_buf();
    for _ in 0..40 {
        let (Some(dir), Some(name)) = (at.parent(), at.file_name()) else {
            return false;
        };
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let Ok(real_dir) = std::fs::canonicalize(dir) else {
            return false;
        };
        let here = real_dir.join(name);
        if here.starts_with(prefix) {
            return true;
        }
        match std::fs::read_link(&here) {
            Ok(next) => at = real_dir.join(next),
            Err(_) => return false,
        }
    }
    false
}
