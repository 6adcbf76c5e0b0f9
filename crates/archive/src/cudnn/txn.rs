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
//! Every step is done relative to folders held open ([`super::places`]): a link someone
//! planted at a folder on the way — or swapped in mid-transaction — is never followed.
//!
//! Recovery reads the journal: `applying` rolls back (restore every backup, delete every
//! file that did not exist), `committed` finishes (manifest, clean-up). Both are
//! idempotent, so a kill during recovery is recovered the same way.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::places::{self, Toolkit};
use super::{CudnnError, Manifest};
use crate::place::{self, ReadError};
use crate::safe_path;
use crate::state_file::{self, Rejected};

pub const META: &str = ".cuda-setup";
const JOURNAL: &str = "cudnn-journal.json";
pub const MANIFEST: &str = "cudnn-manifest.json";
pub const BACKUP: &str = "cudnn-backup";

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
    /// An uninstall's files left in place because they changed since we put them
    /// (`uninstall_except`): those that replaced a toolkit file keep their backup and stay
    /// in the manifest, which then names only them. Absent in older journals.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keep: Vec<super::ManifestFile>,
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

/// Writes a record of ours in `.cuda-setup` so that a reader sees the old or the new
/// content, never a torn file (created new beside it, synced, renamed over it: never
/// written through a link planted at either name).
fn write_record<T: Serialize>(tk: &Toolkit, name: &str, value: &T) -> Result<(), CudnnError> {
    let bytes = serde_json::to_vec_pretty(value).expect("serialisable");
    let meta = tk.meta_or_err()?;
    meta.write_atomic(name, &bytes, true)
        .map_err(|e| CudnnError::io(&meta.display(name), e))
}

/// Writes a record by path (the wheels rebuild carrying a manifest into its new tree):
/// the folder opened without following a link (`state_file::write`), the file created
/// new and renamed into place.
pub fn write_atomic<T: Serialize>(path: &Path, value: &T) -> Result<(), CudnnError> {
    let bytes = serde_json::to_vec_pretty(value).expect("serialisable");
    crate::state_file::write(path, &bytes).map_err(|e| CudnnError::io(path, e))
}

/// A record of ours in `.cuda-setup`, read bounded (a regular file, not through a link,
/// never blocking) and parsed; None when there is none.
fn read_json<T: for<'de> Deserialize<'de>>(
    tk: &Toolkit,
    name: &str,
) -> Result<Option<T>, Rejected> {
    let Some(meta) = tk.meta() else {
        return Ok(None);
    };
    let path = meta.display(name);
    let bytes = match meta.read(name, state_file::MAX_BYTES) {
        Ok(Some(b)) => b,
        Ok(None) => return Ok(None),
        Err(ReadError::Link { .. }) => return Err(Rejected::new(&path, "it is a symbolic link")),
        Err(ReadError::NotRegular { .. }) => return Err(Rejected::new(&path, "it is not a file")),
        Err(ReadError::TooBig { size, max, .. }) => {
            return Err(Rejected::new(
                &path,
                format!("{size} bytes; over the {max}-byte limit"),
            ));
        }
        Err(ReadError::Io { source, .. }) => {
            return Err(Rejected::new(&path, format!("unreadable: {source}")));
        }
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| Rejected::new(&path, format!("not a record cuda-setup wrote: {e}")))
}

/// Our records' folder and its backup folder are real folders: through a link, every
/// move, clean-up and restore would act somewhere else. (`.cuda-setup` itself was
/// opened without following: [`Toolkit::open`].)
fn check_meta(tk: &Toolkit) -> Result<(), Rejected> {
    if let Some(meta) = tk.meta()
        && meta.symlink_metadata(BACKUP).is_ok_and(|m| !m.is_dir())
    {
        return Err(Rejected::new(
            &meta.display(BACKUP),
            "not a folder (a symbolic link?)",
        ));
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
    if !dir.is_dir() {
        return Ok(None);
    }
    judge_manifest(&Toolkit::open(dir, false)?)
}

fn judge_manifest(tk: &Toolkit) -> Result<Option<Manifest>, CudnnError> {
    let judge = || -> Result<Option<Manifest>, Rejected> {
        check_meta(tk)?;
        let Some(m) = read_json::<Manifest>(tk, MANIFEST)? else {
            return Ok(None);
        };
        check_manifest(tk.dir(), &m)
            .map_err(|why| Rejected::new(&meta(tk.dir()).join(MANIFEST), why))?;
        Ok(Some(m))
    };
    judge().map_err(CudnnError::BadState)
}

/// [`read_manifest`] for a command about to act on it: a rejected manifest is set aside
/// with the backup folder (which may hold the toolkit's own files: a later install must
/// not write over them), and nothing is deleted or restored on its strength.
pub fn load_manifest(tk: &Toolkit) -> Result<Option<Manifest>, CudnnError> {
    judge_manifest(tk).map_err(|e| reject(tk, e))
}

/// Sets a rejected record aside, and with it the rest of what tracks the install (the
/// journal, the manifest, the backup folder, which may hold the toolkit's own files): one
/// bad record makes the others unreliable, and a later install must not write over the
/// backups. If `.cuda-setup` itself is what was rejected, only it moves. All renames are
/// of the names themselves, in the folders held open.
pub fn reject(tk: &Toolkit, e: CudnnError) -> CudnnError {
    let CudnnError::BadState(r) = e else { return e };
    let r = tk.set_aside(r);
    if let Some(m) = tk.meta()
        && r.file != meta(tk.dir())
    {
        for rest in [JOURNAL, MANIFEST, BACKUP] {
            if m.display(rest) != r.file && m.symlink_metadata(rest).is_ok() {
                places::set_aside_in(m.handle(), rest);
            }
        }
    }
    CudnnError::BadState(r)
}

/// The journal of a killed run, judged whole.
fn read_journal(tk: &Toolkit) -> Result<Option<Journal>, CudnnError> {
    let judge = || -> Result<Option<Journal>, Rejected> {
        check_meta(tk)?;
        let Some(j) = read_json::<Journal>(tk, JOURNAL)? else {
            return Ok(None);
        };
        let dir = tk.dir();
        let checked = check_manifest(dir, &j.manifest).and_then(|()| {
            j.staging
                .as_deref()
                .map_or(Ok(()), |s| check_staging(dir, s))
        });
        checked.map_err(|why| Rejected::new(&meta(dir).join(JOURNAL), why))?;
        Ok(Some(j))
    };
    judge().map_err(CudnnError::BadState)
}

/// Test hooks, compiled into debug builds only: make one file's move fail as if the file
/// were in use (Windows' sharing violation cannot happen on Linux), or pause before the
/// first move or the n-th (`cudnn_move_<n>`, from 0) so a test can kill the process at
/// every point of a transaction in turn (or swap a folder for a link there).
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

/// `rel`'s backup, in `.cuda-setup/cudnn-backup/`.
fn backup_rel(rel: &str) -> String {
    format!("{BACKUP}/{rel}")
}

/// The folder holding `rel`'s backup and the backup's name, when it is there itself (a
/// symbolic link counts even when its target does not: a backed-up link points at a name
/// beside it that is not in the backup folder). A link on the way is never followed.
fn backup_of(tk: &Toolkit, rel: &str) -> Result<Option<(place::Dir, String)>, CudnnError> {
    let b = backup_rel(rel);
    let (_, name) = places::split(&b);
    let name = name.to_string();
    Ok(tk
        .meta_folder(&b, false)?
        .filter(|d| d.symlink_metadata(&name).is_ok())
        .map(|d| (d, name)))
}

/// Moves the backup of `rel` back into place.
fn restore(tk: &Toolkit, rel: &str, backup: (place::Dir, String)) -> Result<(), CudnnError> {
    let (folder, name) = places::split(rel);
    let to = tk.folder(folder, true)?.expect("made when missing");
    Toolkit::rename(
        backup.0.handle(),
        &backup.1,
        &to,
        name,
        &tk.shown(backup_rel(rel)),
    )
}

/// Applies an install whose files sit in `staging` (`.cuda-setup/<staging_name>`): each
/// manifest entry's file at `staged` (below staging), in the manifest's order.
pub fn apply_install(
    tk: &Toolkit,
    staging: &place::Dir,
    staging_name: &str,
    staged: &[(String, String)],
    mut manifest: Manifest,
) -> Result<Manifest, CudnnError> {
    // The stamps the quick check trusts, from the staged files: a rename keeps them.
    for ((_, from), f) in staged.iter().zip(manifest.files.iter_mut()) {
        if f.link.is_none() {
            f.stamp = staging
                .open_read(from, u64::MAX)
                .ok()
                .flatten()
                .and_then(|(file, _)| file.metadata().ok())
                .map(|m| crate::stamp::Stamp::of_metadata(&m));
        }
    }
    let mut journal = Journal {
        op: Op::Install,
        state: State::Applying,
        staging: Some(format!("{META}/{staging_name}")),
        manifest,
        keep: Vec::new(),
    };
    write_record(tk, JOURNAL, &journal)?;
    let apply = || -> Result<(), CudnnError> {
        for ((rel, from), f) in staged.iter().zip(&journal.manifest.files) {
            debug_assert_eq!(rel, &f.path);
            test_hooks(rel)?;
            let (folder, name) = places::split(rel);
            let dest = tk.folder(folder, true)?.expect("made when missing");
            if f.replaced {
                let b = backup_rel(rel);
                let backup = tk.meta_folder(&b, true)?.expect("made when missing");
                Toolkit::rename(
                    &dest,
                    name,
                    backup.handle(),
                    places::split(&b).1,
                    &tk.shown(rel),
                )?;
            }
            let (sfolder, sname) = places::split(from);
            let src = if sfolder.is_empty() {
                staging.try_clone()
            } else {
                staging.sub(sfolder, false)
            }
            .map_err(|e| CudnnError::io(&staging.display(from), e))?;
            Toolkit::rename(src.handle(), sname, &dest, name, &staging.display(from))?;
        }
        Ok(())
    };
    if let Err(e) = apply() {
        rollback(tk, &journal)?;
        return Err(e);
    }
    journal.state = State::Committed;
    write_record(tk, JOURNAL, &journal)?;
    finish(tk, &journal)?;
    Ok(journal.manifest)
}

/// Undoes an install in any state of `applying`.
fn rollback(tk: &Toolkit, j: &Journal) -> Result<(), CudnnError> {
    for f in j.manifest.files.iter().rev() {
        if let Some(b) = backup_of(tk, &f.path)? {
            restore(tk, &f.path, b)?;
        } else if !f.replaced && tk.present(&f.path)? {
            tk.remove(&f.path)?;
        }
    }
    cleanup(tk, j);
    remove_journal(tk);
    Ok(())
}

fn remove_journal(tk: &Toolkit) {
    if let Some(m) = tk.meta() {
        let _ = m.remove(JOURNAL);
    }
}

/// After `committed`: the manifest, then the journal goes.
fn finish(tk: &Toolkit, j: &Journal) -> Result<(), CudnnError> {
    match j.op {
        Op::Install => write_record(tk, MANIFEST, &j.manifest)?,
        // Files left because they changed keep the toolkit's original in the backup
        // folder: the manifest goes on naming them (NVIDIA's file is not ours to delete).
        Op::Uninstall if !j.keep.is_empty() => write_record(
            tk,
            MANIFEST,
            &Manifest {
                files: j.keep.clone(),
                ..j.manifest.clone()
            },
        )?,
        Op::Uninstall => {
            if let Some(m) = tk.meta() {
                let _ = m.remove(MANIFEST);
                let _ = m.remove_all(BACKUP);
            }
        }
    }
    cleanup(tk, j);
    remove_journal(tk);
    Ok(())
}

fn cleanup(tk: &Toolkit, j: &Journal) {
    let Some(meta) = tk.meta() else { return };
    if let Some(s) = j
        .staging
        .as_deref()
        .and_then(|s| s.strip_prefix(&format!("{META}/")))
    {
        let _ = meta.remove_all(s);
    }
    // Staging folders of runs killed before their journal was written — not this run's
    // own (an install stages a tarball before it uninstalls the previous cuDNN).
    remove_staging(meta, Some(&format!("staging-{}", std::process::id())));
}

/// Removes `staging-*` in `.cuda-setup` (links removed as links), but `keep`.
fn remove_staging(meta: &place::Dir, keep: Option<&str>) {
    let Ok(rd) = meta.handle().entries() else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("staging-") && Some(name.as_str()) != keep {
            let _ = meta.remove_all(&name);
        }
    }
}

/// Restores what was there before the install the manifest describes.
pub fn uninstall(tk: &Toolkit, manifest: Manifest) -> Result<Manifest, CudnnError> {
    uninstall_except(tk, manifest, &[])
}

/// [`uninstall`], but the files at `keep` (relative paths of the manifest) stay as they
/// are: neither removed nor overwritten by their backup. Those that replaced a toolkit
/// file keep their backup, and the manifest is rewritten to name only them.
pub fn uninstall_except(
    tk: &Toolkit,
    mut manifest: Manifest,
    keep: &[String],
) -> Result<Manifest, CudnnError> {
    let (kept, undone): (Vec<_>, Vec<_>) = manifest
        .files
        .drain(..)
        .partition(|f| keep.contains(&f.path));
    manifest.files = undone;
    let mut j = Journal {
        op: Op::Uninstall,
        state: State::Applying,
        staging: None,
        manifest,
        keep: kept.into_iter().filter(|f| f.replaced).collect(),
    };
    write_record(tk, JOURNAL, &j)?;
    undo_files(tk, &j)?;
    j.state = State::Committed;
    write_record(tk, JOURNAL, &j)?;
    finish(tk, &j)?;
    Ok(j.manifest)
}

/// Idempotent: restore each backup, delete each file that was new.
fn undo_files(tk: &Toolkit, j: &Journal) -> Result<(), CudnnError> {
    for f in &j.manifest.files {
        test_hooks(&f.path)?;
        if f.replaced {
            if let Some(b) = backup_of(tk, &f.path)? {
                restore(tk, &f.path, b)?;
            }
        } else if tk.present(&f.path)? {
            tk.remove(&f.path)?;
        }
    }
    Ok(())
}

/// Finishes or rolls back whatever a killed run left. None: nothing to do.
pub fn recover(tk: &Toolkit) -> Result<Option<Recovered>, CudnnError> {
    let Some(j) = read_journal(tk).map_err(|e| reject(tk, e))? else {
        // A run killed before writing its journal leaves only staging: drop it.
        if let Some(meta) = tk.meta() {
            remove_staging(meta, None);
        }
        return Ok(None);
    };
    match (j.op, j.state) {
        (Op::Install, State::Applying) => {
            rollback(tk, &j)?;
            Ok(Some(Recovered::RolledBack))
        }
        (Op::Uninstall, State::Applying) => {
            // Half an uninstall is finished, never undone: the user asked for it.
            undo_files(tk, &j)?;
            finish(tk, &j)?;
            Ok(Some(Recovered::Completed))
        }
        (_, State::Committed) => {
            finish(tk, &j)?;
            Ok(Some(Recovered::Completed))
        }
    }
}
