//! Putting the verified build back: offline from the wheel our download engine left in
//! `<state>/downloads` (or its hash-named cache) when its bytes still hash to the
//! recorded SHA-256, else pip from the recorded version and index.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::GuardError;
use super::record::Record;
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
    /// Our cached wheel (its SHA-256 checked now, and again just before pip runs).
    Cache { wheel: PathBuf, args: Vec<String> },
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
/// (copied there from the hash-named cache first when only the cache has it).
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
    // The hash-named cache (this machine only: a sandbox root has none).
    let cached = crate::platform::cache_dir(&target.host)
        .filter(|_| target.root.is_none())
        .map(|d| d.join(format!("sha256-{}", w.sha256.to_ascii_lowercase())));
    let Some(cached) = cached else {
        return Err(CacheState::Missing);
    };
    let Ok(Some((f, _))) = crate::place::open_regular(&cached, u64::MAX) else {
        return Err(CacheState::Missing);
    };
    let part = format!("{name}.guard-part");
    let Ok(mut out) = downloads.create_new(&part) else {
        return Err(CacheState::Missing);
    };
    match sha256_of(f, Some(&mut out)) {
        Ok(h) if h.eq_ignore_ascii_case(&w.sha256) => {
            drop(out);
            downloads
                .rename(&part, &downloads, name)
                .map(|_| downloads.display(name))
                .map_err(|_| CacheState::Missing)
        }
        Ok(actual) => {
            let _ = downloads.remove(&part);
            Err(CacheState::Mismatch {
                file: cached,
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

/// How to put `rec` back, given the torch installed now.
pub fn plan(target: &Target, rec: &Record, installed: Option<&str>) -> Restore {
    if installed == Some(rec.torch.as_str()) {
        return Restore::NothingToDo;
    }
    match cached_wheel(target, rec) {
        Ok(wheel) => Restore::Cache {
            args: vec![
                "--no-deps".into(),
                "--force-reinstall".into(),
                wheel.display().to_string(),
            ],
            wheel,
        },
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
