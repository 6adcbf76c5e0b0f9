//! Putting the verified build back: offline from the wheel our download engine left in
//! `<state>/downloads` (or the other run's downloads folder, or the hash-named cache, each
//! copied in) when its bytes still hash to the recorded SHA-256, else pip from the
//! recorded version and index. The companions recorded with it (torchvision, torchaudio)
//! that changed go back in the same pip call: our engine saves only torch's wheel, so
//! they come from the recorded index at their recorded versions.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::record::Record;
use super::{GuardError, Swap};
use crate::download::Hasher;
use crate::target::Target;

/// Why the cached wheel is not used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CacheState {
    /// We did not download this build (a doctor-verified one, or pip fetched it).
    NotOurs,
    /// The file is gone.
    Missing,
    /// Only companions changed: torch's wheel is not needed.
    NotNeeded,
    /// The file is there, but its bytes are not the ones recorded.
    Mismatch {
        file: PathBuf,
        expected: String,
        actual: String,
    },
}

/// How the verified build goes back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum Restore {
    /// The installed torch is the recorded one.
    NothingToDo,
    /// Our cached wheel (its SHA-256 checked now, and again just before pip runs), and
    /// the changed companions (`torchvision==V`) from the recorded index: none, offline.
    Cache {
        wheel: PathBuf,
        args: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        companions: Vec<String>,
    },
    /// pip from the recorded index.
    Index {
        args: Vec<String>,
        cache: CacheState,
    },
}

impl Restore {
    /// pip's arguments after `-m pip install`.
    pub fn args(&self) -> Option<&[String]> {
        match self {
            Restore::NothingToDo => None,
            Restore::Cache { args, .. } | Restore::Index { args, .. } => Some(args),
        }
    }
}

/// pip's arguments for the recorded version from its index (torchvision and torchaudio
/// as they were, which the same index carries).
pub fn index_args(rec: &Record) -> Vec<String> {
    let mut args = rec.constraints();
    if let Some(url) = &rec.index_url {
        args.push("--index-url".into());
        args.push(url.clone());
    }
    args
}

/// The SHA-256 of what `f` reads, written to `copy` as it goes when given.
fn sha256_of(mut f: impl Read, mut copy: Option<&mut std::fs::File>) -> std::io::Result<String> {
    let mut h = Hasher::new(false);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        if let Some(c) = copy.as_deref_mut() {
            std::io::Write::write_all(c, &buf[..n])?;
        }
    }
    Ok(h.finish().sha256)
}

/// The recorded wheel in our downloads folder, its bytes checked against the record
/// (copied there first from the other run's downloads folder or the hash-named cache
/// when only they have it). `rec` is one this run acts on: its SHA-256 is what makes a
/// file from the other folder safe to hand to pip.
pub fn cached_wheel(target: &Target, rec: &Record) -> Result<PathBuf, CacheState> {
    let Some(w) = &rec.wheel else {
        return Err(CacheState::NotOurs);
    };
    // The name comes from our own state file: judged like one from an index.
    let Ok(name) = crate::safe_path::file_name(&w.file) else {
        return Err(CacheState::Missing);
    };
    let Ok(downloads) = target.state().and_then(|s| s.sub("downloads", true)) else {
        return Err(CacheState::Missing);
    };
    if let Ok(Some((f, _))) = downloads.open_read(name, u64::MAX) {
        let file = downloads.display(name);
        return match sha256_of(f, None) {
            Ok(h) if h.eq_ignore_ascii_case(&w.sha256) => Ok(file),
            Ok(actual) => Err(CacheState::Mismatch {
                file,
                expected: w.sha256.clone(),
                actual,
            }),
            Err(_) => Err(CacheState::Missing),
        };
    }
    // The other run's downloads folder (an elevated install's wheel, for the user's
    // restore; read-only, never used in place), then the hash-named cache (this machine
    // only: a sandbox root has none). Either is copied into ours and hashed as it is.
    let mut mismatch = None;
    if let Some(other) = crate::records::other_downloads(target)
        && let Ok(Some((f, _))) = other.open_read(name, u64::MAX)
    {
        match copy_in(f, &downloads, name, w, &other.display(name)) {
            Ok(p) => return Ok(p),
            Err(m @ CacheState::Mismatch { .. }) => mismatch = Some(m),
            Err(_) => {}
        }
    }
    let cached = crate::platform::cache_dir(&target.host)
        .filter(|_| target.root.is_none())
        .map(|d| d.join(format!("sha256-{}", w.sha256.to_ascii_lowercase())));
    let opened = cached
        .as_ref()
        .and_then(|c| crate::place::open_regular(c, u64::MAX).ok().flatten());
    match (opened, cached) {
        (Some((f, _)), Some(cached)) => match copy_in(f, &downloads, name, w, &cached) {
            Err(CacheState::Missing) => Err(mismatch.unwrap_or(CacheState::Missing)),
            r => r,
        },
        _ => Err(mismatch.unwrap_or(CacheState::Missing)),
    }
}

/// Copies what `f` reads into `downloads/name`, hashed as it is copied (what is checked
/// is what was written): through `NAME.guard-part`, created new, renamed into place only
/// when the bytes are the record's. `shown`: where the bytes came from, for the mismatch.
fn copy_in(
    f: std::fs::File,
    downloads: &crate::place::Dir,
    name: &str,
    w: &super::record::Wheel,
    shown: &Path,
) -> Result<PathBuf, CacheState> {
    let part = format!("{name}.guard-part");
    let Ok(mut out) = downloads.create_new(&part) else {
        return Err(CacheState::Missing);
    };
    match sha256_of(f, Some(&mut out)) {
        Ok(h) if h.eq_ignore_ascii_case(&w.sha256) => {
            drop(out);
            downloads
                .rename(&part, downloads, name)
                .map(|_| downloads.display(name))
                .map_err(|_| CacheState::Missing)
        }
        Ok(actual) => {
            let _ = downloads.remove(&part);
            Err(CacheState::Mismatch {
                file: shown.to_path_buf(),
                expected: w.sha256.clone(),
                actual,
            })
        }
        Err(_) => {
            let _ = downloads.remove(&part);
            Err(CacheState::Missing)
        }
    }
}

/// `--index-url URL` when the record names one (else pip's own index).
fn index_of(rec: &Record) -> Vec<String> {
    rec.index_url
        .iter()
        .flat_map(|u| ["--index-url".to_string(), u.clone()])
        .collect()
}

/// How to put `rec` back, given what changed (None: nothing).
pub fn plan(target: &Target, rec: &Record, swap: Option<&Swap>) -> Restore {
    let Some(swap) = swap else {
        return Restore::NothingToDo;
    };
    let companions: Vec<String> = swap.companions.iter().map(|c| c.requirement()).collect();
    if !swap.torch_changed() {
        // torch is intact (no 2 GB wheel fetched again): the companions alone, which
        // pip resolves against that torch.
        return Restore::Index {
            args: companions.into_iter().chain(index_of(rec)).collect(),
            cache: CacheState::NotNeeded,
        };
    }
    match cached_wheel(target, rec) {
        Ok(wheel) => {
            // One pip call: the wheel, and the companions its torch needs beside it.
            let mut args = vec![
                "--no-deps".into(),
                "--force-reinstall".into(),
                wheel.display().to_string(),
            ];
            if !companions.is_empty() {
                args.extend(companions.iter().cloned());
                args.extend(index_of(rec));
            }
            Restore::Cache {
                args,
                wheel,
                companions,
            }
        }
        Err(cache) => Restore::Index {
            args: index_args(rec),
            cache,
        },
    }
}

/// Before pip installs `args` into `python`: a wheel our record names is hashed again
/// (the file sits in a folder others may reach between the plan and now).
pub fn check_args(rec: &Record, args: &[String]) -> Result<(), GuardError> {
    let Some(w) = &rec.wheel else { return Ok(()) };
    for a in args {
        let p = Path::new(a);
        if p.file_name().and_then(|n| n.to_str()) != Some(w.file.as_str()) {
            continue;
        }
        let actual = match crate::place::open_regular(p, u64::MAX) {
            Ok(Some((f, _))) => sha256_of(f, None).map_err(|e| GuardError::io(p, e))?,
            Ok(None) => continue,
            Err(_) => {
                return Err(GuardError::Link {
                    path: p.to_path_buf(),
                });
            }
        };
        if !actual.eq_ignore_ascii_case(&w.sha256) {
            return Err(GuardError::WheelHash {
                file: p.to_path_buf(),
                expected: w.sha256.clone(),
                actual,
            });
        }
    }
    Ok(())
}
