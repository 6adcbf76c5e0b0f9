//! The transaction that puts cuDNN into a toolkit folder, and undoes it.
//!
//! Protocol (every step survives a kill -9):
//! 1. Everything is extracted to `.cuda-setup/staging-*` first; the toolkit is untouched.
//! 2. The journal (`.cuda-setup/cudnn-journal.json`, state `applying`) records every file
//!    and whether it existed, before the first change.
//! 3. Per file: an existing file is renamed into `.cuda-setup/cudnn-backup/`, then the
//!    staged file is renamed into place (same volume: atomic). A symbolic link (Linux
//!    tarball) is renamed as the link itself, never what it points to.
//! 4. The journal turns `committed`, the manifest is written, the journal is removed.
//!
//! Recovery reads the journal: `applying` rolls back (restore every backup, delete every
//! file that did not exist), `committed` finishes (manifest, clean-up). Both are
//! idempotent, so a kill during recovery is recovered the same way.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{CudnnError, Manifest};
use crate::safe_path;
use crate::state_file::{self, Rejected};

pub const META: &str = ".cuda-setup";
const JOURNAL: &str = "cudnn-journal.json";
pub const MANIFEST: &str = "cudnn-manifest.json";
const BACKUP: &str = "cudnn-backup";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Install,
    Uninstall,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Applying,
    Committed,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Journal {
    pub op: Op,
    pub state: State,
    /// The staging folder (install), relative to the toolkit folder.
    pub staging: Option<String>,
    pub manifest: Manifest,
}

/// What recovery did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Recovered {
    RolledBack,
    Completed,
}

pub fn meta(dir: &Path) -> PathBuf {
    dir.join(META)
}

fn backup_path(dir: &Path, rel: &str) -> PathBuf {
    meta(dir).join(BACKUP).join(rel)
}

/// Writes JSON so that a reader sees the old or the new content, never a torn file.
pub fn write_atomic<T: Serialize>(path: &Path, value: &T) -> Result<(), CudnnError> {
    let bytes = serde_json::to_vec_pretty(value).expect("serialisable");
    state_file::write(path, &bytes).map_err(|e| CudnnError::io(path, e))
}

/// A state file of ours, read bounded and parsed; None when there is none.
fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>, Rejected> {
    let Some(bytes) = state_file::read(path)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| Rejected::new(path, format!("not a record cuda-setup wrote: {e}")))
}

/// Our records' folder and its backup folder are real folders: through a link, every
/// move, clean-up and restore would act somewhere else.
fn check_meta(dir: &Path) -> Result<(), Rejected> {
    for p in [meta(dir), meta(dir).join(BACKUP)] {
        if std::fs::symlink_metadata(&p).is_ok_and(|m| !m.is_dir()) {
            return Err(Rejected::new(&p, "not a folder (a symbolic link?)"));
        }
    }
    Ok(())
}

/// Every path a manifest names resolves inside the toolkit folder, and its backup inside
/// the backup folder (no `..`, nothing absolute, no link leading out); a link's target
/// is a sibling's name; no path twice (one record would undo the other's restore).
fn check_manifest(dir: &Path, m: &Manifest) -> Result<(), String> {
    let backup = meta(dir).join(BACKUP);
    let mut seen = std::collections::HashSet::new();
    for f in &m.files {
        let entry = |why: String| format!("entry \"{}\" {why}", f.path);
        safe_path::resolves_inside(dir, &f.path)
            .map_err(|e| entry(format!("leads outside the toolkit folder ({e})")))?;
        safe_path::resolves_inside(&backup, &f.path)
            .map_err(|e| entry(format!("has its backup outside {META}/{BACKUP} ({e})")))?;
        if let Some(t) = &f.link {
            safe_path::file_name(t).map_err(|e| entry(format!("links to a path ({e})")))?;
        }
        let rel = safe_path::relative(&f.path).map_err(|e| entry(e.to_string()))?;
        if !seen.insert(super::archive::fold(&rel.to_string_lossy())) {
            return Err(entry(
                "appears twice (one record would undo the other)".into(),
            ));
        }
    }
    Ok(())
}

/// An install's staging folder is `.cuda-setup/staging-*`, nothing else.
fn check_staging(dir: &Path, staging: &str) -> Result<(), String> {
    let bad =
        |why: &str| format!("staging \"{staging}\" is not a staging folder inside {META} ({why})");
    let rel = safe_path::relative(staging).map_err(|e| bad(&e.to_string()))?;
    let parts: Vec<_> = rel.iter().map(|c| c.to_string_lossy()).collect();
    if !(parts.len() == 2 && parts[0] == META && parts[1].starts_with("staging-")) {
        return Err(bad("cuda-setup stages only in .cuda-setup/staging-*"));
    }
    safe_path::resolves_inside(dir, staging).map_err(|e| bad(&e.to_string()))?;
    Ok(())
}

/// The manifest of our install in `dir`, judged whole; changes nothing (for callers that
/// only look). [`load_manifest`] also sets a rejected one aside.
pub fn read_manifest(dir: &Path) -> Result<Option<Manifest>, CudnnError> {
    let judge = || -> Result<Option<Manifest>, Rejected> {
        check_meta(dir)?;
        let path = meta(dir).join(MANIFEST);
        let Some(m) = read_json::<Manifest>(&path)? else {
            return Ok(None);
        };
        check_manifest(dir, &m).map_err(|why| Rejected::new(&path, why))?;
        Ok(Some(m))
    };
    judge().map_err(CudnnError::BadState)
}

/// [`read_manifest`] for a command about to act on it: a rejected manifest is set aside
/// with the backup folder (which may hold the toolkit's own files: a later install must
/// not write over them), and nothing is deleted or restored on its strength.
pub fn load_manifest(dir: &Path) -> Result<Option<Manifest>, CudnnError> {
    read_manifest(dir).map_err(|e| reject(dir, e))
}

/// Sets a rejected record aside, and with it the rest of what tracks the install (the
/// journal, the manifest, the backup folder, which may hold the toolkit's own files): one
/// bad record makes the others unreliable, and a later install must not write over the
/// backups. If `.cuda-setup` itself is what was rejected, only it moves.
fn reject(dir: &Path, e: CudnnError) -> CudnnError {
    let CudnnError::BadState(r) = e else { return e };
    let r = r.set_aside();
    if r.file != meta(dir) {
        for rest in [JOURNAL, MANIFEST, BACKUP].map(|n| meta(dir).join(n)) {
            if rest != r.file && std::fs::symlink_metadata(&rest).is_ok() {
                state_file::set_aside(&rest);
            }
        }
    }
    CudnnError::BadState(r)
}

/// The journal of a killed run, judged whole.
fn read_journal(dir: &Path) -> Result<Option<Journal>, CudnnError> {
    let judge = || -> Result<Option<Journal>, Rejected> {
        check_meta(dir)?;
        let path = meta(dir).join(JOURNAL);
        let Some(j) = read_json::<Journal>(&path)? else {
            return Ok(None);
        };
        let checked = check_manifest(dir, &j.manifest).and_then(|()| {
            j.staging
                .as_deref()
                .map_or(Ok(()), |s| check_staging(dir, s))
        });
        checked.map_err(|why| Rejected::new(&path, why))?;
        Ok(Some(j))
    };
    judge().map_err(CudnnError::BadState)
}

/// Test hooks, compiled into debug builds only: make one file's move fail as if the file
/// were in use (Windows' sharing violation cannot happen on Linux), or pause before the
/// first move or the n-th (`cudnn_move_<n>`, from 0) so a test can kill the process at
/// every point of a transaction in turn.
fn test_hooks(rel: &str) -> Result<(), CudnnError> {
    if cfg!(debug_assertions) {
        static MOVES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = MOVES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        crate::lock::test_pause("cudnn_move");
        crate::lock::test_pause(&format!("cudnn_move_{n}"));
        if std::env::var("CUDA_SETUP_TEST_IN_USE").is_ok_and(|f| rel.ends_with(&f)) {
            return Err(CudnnError::InUse {
                file: PathBuf::from(rel),
                source: crate::error::text("simulated sharing violation"),
            });
        }
    }
    Ok(())
}

/// Whether `p` exists itself: a symbolic link counts even when its target does not
/// (a backed-up link points at a name beside it that is not in the backup folder).
pub fn present(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

/// `rename`, classifying a file held open by another program.
fn mv(from: &Path, to: &Path) -> Result<(), CudnnError> {
    if let Some(d) = to.parent() {
        std::fs::create_dir_all(d).map_err(|e| CudnnError::io(d, e))?;
    }
    std::fs::rename(from, to).map_err(|e| {
        // Windows: 32 sharing violation, 5 access denied (a loaded DLL); Unix: ETXTBSY.
        let in_use = matches!(e.raw_os_error(), Some(32) | Some(33))
            || (cfg!(windows) && e.raw_os_error() == Some(5))
            || (cfg!(unix) && e.raw_os_error() == Some(26));
        if in_use {
            CudnnError::InUse {
                file: from.to_path_buf(),
                source: crate::error::cause(e),
            }
        } else {
            CudnnError::io(from, e)
        }
    })
}

/// Applies an install whose files sit in `staging` (one per manifest entry, at `staged`).
pub fn apply_install(
    dir: &Path,
    staging: &Path,
    staged: &[(String, PathBuf)],
    mut manifest: Manifest,
) -> Result<Manifest, CudnnError> {
    // The stamps the quick check trusts, from the staged files: a rename keeps them.
    for ((_, from), f) in staged.iter().zip(manifest.files.iter_mut()) {
        if f.link.is_none() {
            f.stamp = crate::stamp::of(from).ok();
        }
    }
    let mut journal = Journal {
        op: Op::Install,
        state: State::Applying,
        staging: staging
            .strip_prefix(dir)
            .ok()
            .map(|p| p.to_string_lossy().replace('\\', "/")),
        manifest,
    };
    write_atomic(&meta(dir).join(JOURNAL), &journal)?;
    let apply = || -> Result<(), CudnnError> {
        for ((rel, from), f) in staged.iter().zip(&journal.manifest.files) {
            debug_assert_eq!(rel, &f.path);
            let dest = dir.join(rel);
            test_hooks(rel)?;
            if f.replaced {
                mv(&dest, &backup_path(dir, rel))?;
            }
            mv(from, &dest)?;
        }
        Ok(())
    };
    if let Err(e) = apply() {
        rollback(dir, &journal)?;
        return Err(e);
    }
    journal.state = State::Committed;
    write_atomic(&meta(dir).join(JOURNAL), &journal)?;
    finish(dir, &journal)?;
    Ok(journal.manifest)
}

/// Undoes an install in any state of `applying`.
fn rollback(dir: &Path, j: &Journal) -> Result<(), CudnnError> {
    for f in j.manifest.files.iter().rev() {
        let dest = dir.join(&f.path);
        let backup = backup_path(dir, &f.path);
        if present(&backup) {
            mv(&backup, &dest)?;
        } else if !f.replaced && present(&dest) {
            std::fs::remove_file(&dest).map_err(|e| CudnnError::io(&dest, e))?;
        }
    }
    cleanup(dir, j);
    let _ = std::fs::remove_file(meta(dir).join(JOURNAL));
    Ok(())
}

/// After `committed`: the manifest, then the journal goes.
fn finish(dir: &Path, j: &Journal) -> Result<(), CudnnError> {
    match j.op {
        Op::Install => write_atomic(&meta(dir).join(MANIFEST), &j.manifest)?,
        Op::Uninstall => {
            let _ = std::fs::remove_file(meta(dir).join(MANIFEST));
            let _ = std::fs::remove_dir_all(meta(dir).join(BACKUP));
        }
    }
    cleanup(dir, j);
    let _ = std::fs::remove_file(meta(dir).join(JOURNAL));
    Ok(())
}

fn cleanup(dir: &Path, j: &Journal) {
    if let Some(s) = &j.staging {
        let _ = std::fs::remove_dir_all(dir.join(s));
    }
    // Staging folders of runs killed before their journal was written — not this run's
    // own (an install stages a tarball before it uninstalls the previous cuDNN).
    let ours = format!("staging-{}", std::process::id());
    if let Ok(rd) = std::fs::read_dir(meta(dir)) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("staging-") && name != ours {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}

/// Restores what was there before the install the manifest describes.
pub fn uninstall(dir: &Path, manifest: Manifest) -> Result<Manifest, CudnnError> {
    let mut j = Journal {
        op: Op::Uninstall,
        state: State::Applying,
        staging: None,
        manifest,
    };
    write_atomic(&meta(dir).join(JOURNAL), &j)?;
    undo_files(dir, &j)?;
    j.state = State::Committed;
    write_atomic(&meta(dir).join(JOURNAL), &j)?;
    finish(dir, &j)?;
    Ok(j.manifest)
}

/// Idempotent: restore each backup, delete each file that was new.
fn undo_files(dir: &Path, j: &Journal) -> Result<(), CudnnError> {
    for f in &j.manifest.files {
        test_hooks(&f.path)?;
        let dest = dir.join(&f.path);
        let backup = backup_path(dir, &f.path);
        if f.replaced {
            if present(&backup) {
                mv(&backup, &dest)?;
            }
        } else if present(&dest) {
            std::fs::remove_file(&dest).map_err(|e| CudnnError::io(&dest, e))?;
        }
    }
    Ok(())
}

/// Finishes or rolls back whatever a killed run left. None: nothing to do.
pub fn recover(dir: &Path) -> Result<Option<Recovered>, CudnnError> {
    let Some(j) = read_journal(dir).map_err(|e| reject(dir, e))? else {
        // A run killed before writing its journal leaves only staging: drop it.
        if let Ok(rd) = std::fs::read_dir(meta(dir)) {
            for e in rd.flatten() {
                if e.file_name().to_string_lossy().starts_with("staging-") {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        return Ok(None);
    };
    match (j.op, j.state) {
        (Op::Install, State::Applying) => {
            rollback(dir, &j)?;
            Ok(Some(Recovered::RolledBack))
        }
        (Op::Uninstall, State::Applying) => {
            // Half an uninstall is finished, never undone: the user asked for it.
            undo_files(dir, &j)?;
            finish(dir, &j)?;
            Ok(Some(Recovered::Completed))
        }
        (_, State::Committed) => {
            finish(dir, &j)?;
            Ok(Some(Recovered::Completed))
        }
    }
}
