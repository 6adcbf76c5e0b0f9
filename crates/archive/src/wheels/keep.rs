//! What a rebuild keeps of the tree it replaces: the user's own files and the cuDNN that
//! `cudnn install` put into it. Nothing of either is deleted by a rebuild.
//!
//! - **The user's files.** Everything in the old tree that our record
//!   ([`Record::paths`]) does not name, outside `.cuda-setup/` (ours) and outside cuDNN's
//!   manifest, is the user's: it is carried to the same place in the new tree. A user's
//!   folder goes whole; a folder of ours is walked for the user's entries in it. Where
//!   the new tree has something of its own at such a place, the rebuild stops before
//!   anything changed and names those places ([`WheelError::UserFiles`]).
//! - **cuDNN.** A valid manifest's files are carried too, and the manifest with them: a
//!   file of the new toolkit at one of its places goes to the new tree's cuDNN backup
//!   folder (`replaced`), as `cudnn install` would have put it, so `cudnn verify` passes
//!   and `cudnn uninstall` restores the new toolkit's own file. A cuDNN for another CUDA
//!   major than the new toolkit's is refused ([`WheelError::CudnnOtherMajor`]).
//!
//! Everything is carried into the staging tree *before* the swap, by hard links (the same
//! file, no bytes copied, its size and time kept, so cuDNN's stamps still hold), else by a
//! copy: the old tree is untouched until the swap commits, so a kill at any point leaves
//! the old tree or the new one, each with the user's files ([`super::swap`]). A symbolic
//! link is carried as the link itself (its target text), never followed, nor walked into.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::Dir as CapDir;

use super::WheelError;
use super::assemble::Record;
use crate::cudnn::{Manifest, txn};

fn io(path: &Path, e: std::io::Error) -> WheelError {
    WheelError::io(path, crate::error::cause(e))
}

/// `rel` with `/` as the separator, as records keep it.
fn slash(rel: &Path) -> String {
    rel.to_string_lossy().replace('\\', "/")
}

/// Every file and link under `root` (not following links), relative with `/`, sorted;
/// `.cuda-setup/` is left out (ours whole). What a finished build made: the record's
/// [`Record::paths`].
pub fn list_tree(root: &Path) -> Result<Vec<String>, WheelError> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        for e in std::fs::read_dir(&dir).map_err(|e| io(&dir, e))? {
            let e = e.map_err(|e| io(&dir, e))?;
            let r = rel.join(e.file_name());
            if r == Path::new(txn::META) {
                continue;
            }
            let t = e.file_type().map_err(|err| io(&e.path(), err))?;
            if t.is_dir() && !t.is_symlink() {
                stack.push(r);
            } else {
                out.push(slash(&r));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The places under `dir` that hold something of ours: each path and every folder on
/// its way.
struct Ours {
    files: HashSet<String>,
    dirs: HashSet<String>,
}

impl Ours {
    fn new<'a>(paths: impl Iterator<Item = &'a String>) -> Ours {
        let mut o = Ours {
            files: HashSet::new(),
            dirs: HashSet::new(),
        };
        for p in paths {
            let mut at = p.as_str();
            while let Some(i) = at.rfind('/') {
                at = &at[..i];
                if !o.dirs.insert(at.to_string()) {
                    break;
                }
            }
            o.files.insert(p.clone());
        }
        o
    }
}

/// The user's entries in the tree of ours at `dir`: what `record` and `cudnn` (its
/// manifest's files) do not name, outside `.cuda-setup/`. A user's folder is one entry;
/// relative with `/`, sorted. Only names are read (repair lists them on every audit).
/// None for a record that keeps no list of paths (written before it did).
pub fn foreign(dir: &Path, record: &Record, cudnn: Option<&Manifest>) -> Option<Vec<String>> {
    let paths = record.paths.as_ref()?;
    let cudnn_paths: Vec<String> = cudnn
        .map(|m| m.files.iter().map(|f| f.path.clone()).collect())
        .unwrap_or_default();
    let ours = Ours::new(paths.iter().chain(&cudnn_paths));
    let mut out = Vec::new();
    let mut stack = vec![String::new()];
    while let Some(rel) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(dir.join(&rel)) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let r = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if r == txn::META {
                continue;
            }
            let real_dir = e.file_type().is_ok_and(|t| t.is_dir() && !t.is_symlink());
            if real_dir && ours.dirs.contains(&r) {
                stack.push(r);
            } else if !ours.files.contains(&r) {
                out.push(r);
            }
        }
    }
    out.sort();
    Some(out)
}

/// What exists at `p` itself (a link is a link, not its target).
fn kind(p: &Path) -> Option<std::fs::FileType> {
    std::fs::symlink_metadata(p).ok().map(|m| m.file_type())
}

fn is_real_dir(p: &Path) -> bool {
    kind(p).is_some_and(|t| t.is_dir() && !t.is_symlink())
}

/// Whether every folder on the way to `rel` in `root` is a real folder or absent (a file
/// or a link there would stop the carry, or lead it elsewhere).
fn way_is_clear(root: &Path, rel: &str) -> bool {
    let mut at = root.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    for p in &parts[..parts.len().saturating_sub(1)] {
        at.push(p);
        match kind(&at) {
            None => return true,
            Some(t) if t.is_dir() && !t.is_symlink() => {}
            Some(_) => return false,
        }
    }
    true
}

/// The user's entries to carry from `old` to `new` (a folder of theirs that the new tree
/// also has is merged: its entries are carried one by one), or the places where the new
/// tree has something of its own.
fn plan(old: &Path, new: &Path, foreign: &[String]) -> (Vec<String>, Vec<String>) {
    let (mut carry, mut clash) = (Vec::new(), Vec::new());
    let mut stack: Vec<String> = foreign.iter().rev().cloned().collect();
    while let Some(rel) = stack.pop() {
        if !way_is_clear(new, &rel) {
            clash.push(rel);
            continue;
        }
        let there = new.join(&rel);
        if kind(&there).is_none() {
            carry.push(rel);
        } else if is_real_dir(&there) && is_real_dir(&old.join(&rel)) {
            let mut inner: Vec<String> = std::fs::read_dir(old.join(&rel))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| format!("{rel}/{}", e.file_name().to_string_lossy()))
                .collect();
            inner.sort();
            stack.extend(inner.into_iter().rev());
        } else {
            clash.push(rel);
        }
    }
    (carry, clash)
}

/// `rel`'s folder in `root` (opened, every folder on the way without following a link;
/// made when `create`) and its last name.
fn parent_of(
    root: &crate::place::Dir,
    rel: &str,
    create: bool,
) -> std::io::Result<(crate::place::Dir, OsString)> {
    match rel.rsplit_once('/') {
        Some((parent, name)) => Ok((root.sub(parent, create)?, name.into())),
        None => Ok((root.try_clone()?, rel.into())),
    }
}

/// Carries `rel` from the tree `old` to the tree `new` (where nothing is at `rel`).
fn carry_rel(
    old: &crate::place::Dir,
    new: &crate::place::Dir,
    rel: &str,
) -> Result<(), WheelError> {
    let at = |e: std::io::Error| io(&new.display(rel), e);
    let (from, name) = parent_of(old, rel, false).map_err(|e| io(&old.display(rel), e))?;
    let (to, _) = parent_of(new, rel, true).map_err(at)?;
    carry_in(from.handle(), to.handle(), &name, &new.display(rel)).map_err(at)
}

/// Carries the entry `name` of the folder `from` into the folder `to`, through the
/// handles only: a link as a link (its target text, never followed), a folder entry by
/// entry (opened without following), anything else by a hard link, else a copy of a
/// regular file opened without following. `shown`: where it goes, for a Windows link.
fn carry_in(from: &CapDir, to: &CapDir, name: &OsStr, shown: &Path) -> std::io::Result<()> {
    let meta = from.symlink_metadata(name)?;
    let t = meta.file_type();
    if t.is_symlink() {
        let target = from.read_link_contents(name)?;
        #[cfg(unix)]
        return to.symlink_contents(&target, name);
        #[cfg(windows)]
        return windows_link(from, name, &target, shown);
    }
    if t.is_dir() {
        to.create_dir(name)?;
        let (f, d) = (from.open_dir_nofollow(name)?, to.open_dir_nofollow(name)?);
        for e in f.entries()? {
            let e = e?;
            carry_in(&f, &d, &e.file_name(), &shown.join(e.file_name()))?;
        }
        let _ = to.set_permissions(name, meta.permissions());
        return Ok(());
    }
    if from.hard_link(name, to, name).is_ok() {
        return Ok(());
    }
    if !t.is_file() {
        // A FIFO or a device where a hard link cannot be made: never opened.
        return Err(std::io::Error::other(
            "cannot be carried to the new toolkit (not a regular file)",
        ));
    }
    let mut r = cap_std::fs::OpenOptions::new();
    r.read(true).follow(FollowSymlinks::No);
    let mut src = from.open_with(name, &r)?.into_std();
    if !src.metadata()?.is_file() {
        return Err(std::io::Error::other("changed while it was carried"));
    }
    let mut w = cap_std::fs::OpenOptions::new();
    w.write(true).create_new(true).follow(FollowSymlinks::No);
    let mut dst = to.open_with(name, &w)?.into_std();
    std::io::copy(&mut src, &mut dst)?;
    let _ = dst.set_permissions(src.metadata()?.permissions());
    if let Ok(m) = src.metadata().and_then(|m| m.modified()) {
        let _ = dst.set_modified(m);
    }
    Ok(())
}

/// Windows: a link of the same kind (file or folder) with the same target, at `shown`.
#[cfg(windows)]
fn windows_link(from: &CapDir, name: &OsStr, target: &Path, shown: &Path) -> std::io::Result<()> {
    let dir = from.symlink_metadata(name)?.is_dir();
    if dir {
        std::os::windows::fs::symlink_dir(target, shown)
    } else {
        std::os::windows::fs::symlink_file(target, shown)
    }
}

/// cuDNN of ours in the old tree, checked against the new toolkit's CUDA major.
fn cudnn_to_carry(
    old: &Path,
    version: &crate::version::Version,
) -> Result<Option<Manifest>, WheelError> {
    // A killed cuDNN command's journal is finished or rolled back first; a record that
    // cannot be trusted leaves its files to be carried as the user's.
    let _ = crate::cudnn::recover(old);
    let Ok(Some(m)) = txn::read_manifest(old) else {
        return Ok(None);
    };
    if let Some(major) = m.cuda_major
        && major != version.major()
    {
        return Err(WheelError::CudnnOtherMajor {
            dir: old.display().to_string(),
            cudnn: m.cudnn_version.to_string(),
            cuda: major,
            toolkit: version.to_string(),
        });
    }
    Ok(Some(m))
}

fn open(dir: &Path) -> Result<crate::place::Dir, WheelError> {
    crate::place::Dir::open(dir).map_err(|e| io(dir, e))
}

/// What [`carry`] carried.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Carried {
    /// The user's entries (a folder counts once).
    pub entries: Vec<String>,
    /// cuDNN's files, when a cuDNN of ours was in the old tree.
    pub cudnn_files: usize,
}

/// Carries the user's entries and cuDNN from the old tree at `old` (ours, `record`) into
/// the finished staging tree `new` of CUDA `version`; `old` is only read. Refused before
/// anything is carried when the new tree has something at a user's place.
pub fn carry(
    old: &Path,
    record: &Record,
    new: &Path,
    version: &crate::version::Version,
) -> Result<Carried, WheelError> {
    let cudnn = cudnn_to_carry(old, version)?;
    // A record without a list: the old tree is kept whole ([`super::swap::kept_name`]),
    // cuDNN is still carried.
    let foreign = foreign(old, record, cudnn.as_ref()).unwrap_or_default();
    let (entries, clash) = plan(old, new, &foreign);
    // cuDNN's places must be clear of anything but a file of the new toolkit's.
    let mut clash = clash;
    if let Some(m) = &cudnn {
        for f in &m.files {
            let there = new.join(&f.path);
            if !way_is_clear(new, &f.path) || is_real_dir(&there) {
                clash.push(f.path.clone());
            }
        }
    }
    if !clash.is_empty() {
        // Named, not all listed: an error stays readable.
        if clash.len() > 10 {
            let more = clash.len() - 10;
            clash.truncate(10);
            clash.push(format!("(+{more})"));
        }
        return Err(WheelError::UserFiles {
            dir: old.display().to_string(),
            files: clash,
        });
    }
    let (from, to) = (open(old)?, open(new)?);
    for rel in &entries {
        carry_rel(&from, &to, rel)?;
        crate::lock::test_pause("wheels_carrying");
    }
    let cudnn_files = match cudnn {
        Some(m) => carry_cudnn(&from, &to, m, version)?,
        None => 0,
    };
    Ok(Carried {
        entries,
        cudnn_files,
    })
}

/// cuDNN's files and manifest into the new tree, as `cudnn install` would have left them
/// there: a new toolkit's file at one of its places is moved to the backup folder.
fn carry_cudnn(
    old: &crate::place::Dir,
    new: &crate::place::Dir,
    mut m: Manifest,
    version: &crate::version::Version,
) -> Result<usize, WheelError> {
    let backup = Path::new(txn::META).join("cudnn-backup");
    for f in &mut m.files {
        let to = new.display(&f.path);
        f.replaced = kind(&to).is_some();
        if f.replaced {
            let b = backup.join(&f.path);
            let (dir, name) = parent_of(new, &f.path, false).map_err(|e| io(&to, e))?;
            let bdir = match b.parent() {
                Some(p) => new.sub(p, true),
                None => new.try_clone(),
            }
            .map_err(|e| io(&new.display(&b), e))?;
            dir.handle()
                .rename(&name, bdir.handle(), b.file_name().unwrap_or_default())
                .map_err(|e| io(&to, e))?;
        }
        // A file the user removed since stays missing (verify says so, as before).
        if kind(&old.display(&f.path)).is_none() {
            continue;
        }
        carry_rel(old, new, &f.path)?;
        // A copy has a new time: its stamp no longer vouches; verify hashes it.
        if f.stamp.is_some_and(|s| !crate::stamp::matches(&to, &s)) {
            f.stamp = None;
        }
    }
    m.toolkit_version = Some(version.clone());
    let n = m.files.len();
    let at = new.display(Path::new(txn::META).join(txn::MANIFEST));
    txn::write_atomic(&at, &m)
        .map_err(|e| WheelError::io(&at, crate::error::text(e.to_string())))?;
    Ok(n)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn record(paths: &[&str]) -> Record {
        Record {
            version: "13.5.0".parse().unwrap(),
            wheels: vec![],
            files: paths.len(),
            dev_layout: 1,
            paths: Some(paths.iter().map(|p| p.to_string()).collect()),
        }
    }

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn the_users_entries_are_what_the_record_does_not_name() {
        let d = tempfile::tempdir().unwrap();
        let old = d.path().join("old");
        for f in ["bin/nvcc", "include/cuda.h", "version.json"] {
            write(&old.join(f), "ours");
        }
        write(&old.join("samples/mine/kernel.cu"), "mine");
        write(&old.join("bin/mytool"), "mine");
        write(&old.join(".cuda-setup/anything"), "ours");
        std::fs::create_dir_all(old.join("empty")).unwrap();
        std::os::unix::fs::symlink("/etc", old.join("include/etc")).unwrap();
        let r = record(&["bin/nvcc", "include/cuda.h", "version.json"]);
        assert_eq!(
            foreign(&old, &r, None).unwrap(),
            ["bin/mytool", "empty", "include/etc", "samples"]
        );
        let legacy = Record { paths: None, ..r };
        assert_eq!(foreign(&old, &legacy, None), None);
    }

    #[test]
    fn a_place_the_new_tree_holds_is_a_clash_and_nothing_is_carried() {
        let d = tempfile::tempdir().unwrap();
        let (old, new) = (d.path().join("old"), d.path().join("new"));
        write(&old.join("bin/nvcc"), "ours");
        write(&old.join("bin/mytool"), "mine");
        write(&old.join("samples/a.cu"), "mine");
        write(&new.join("bin/nvcc"), "new");
        write(&new.join("bin/mytool"), "new's own");
        write(&new.join("samples/b.cu"), "new's own");
        let r = record(&["bin/nvcc"]);
        let v = "13.5.0".parse().unwrap();
        match carry(&old, &r, &new, &v) {
            Err(WheelError::UserFiles { files, .. }) => assert_eq!(files, ["bin/mytool"]),
            other => panic!("{other:?}"),
        }
        assert!(!new.join("samples/a.cu").exists(), "nothing carried");
        std::fs::remove_file(new.join("bin/mytool")).unwrap();
        let c = carry(&old, &r, &new, &v).unwrap();
        assert_eq!(c.entries, ["bin/mytool", "samples/a.cu"], "merged folder");
        assert_eq!(
            std::fs::read_to_string(new.join("bin/mytool")).unwrap(),
            "mine"
        );
        assert_eq!(
            std::fs::read_to_string(old.join("bin/mytool")).unwrap(),
            "mine"
        );
    }

    /// cuDNN at a place where the new toolkit has a file of its own: that file goes to
    /// the new tree's backup folder, so verify passes and uninstall gives it back.
    #[test]
    fn cudnn_over_a_new_toolkit_file_is_carried_with_that_file_as_its_backup() {
        let d = tempfile::tempdir().unwrap();
        let (old, new) = (d.path().join("old"), d.path().join("new"));
        write(&old.join("bin/nvcc"), "ours");
        write(&old.join("include/cudnn.h"), "cudnn header");
        write(&new.join("bin/nvcc"), "new");
        write(&new.join("include/cudnn.h"), "the new toolkit's own");
        let (digest, size) = crate::download::hash_file(&old.join("include/cudnn.h")).unwrap();
        let m = Manifest {
            format: 1,
            cudnn_version: "9.10.2".parse().unwrap(),
            cuda_major: Some(13),
            toolkit_version: Some("13.5.0".parse().unwrap()),
            archive: "a.tar.xz".into(),
            archive_path: None,
            files: vec![crate::cudnn::ManifestFile {
                path: "include/cudnn.h".into(),
                sha256: digest.sha256,
                size,
                replaced: false,
                link: None,
                stamp: crate::stamp::of(&old.join("include/cudnn.h")).ok(),
            }],
        };
        std::fs::create_dir_all(txn::meta(&old)).unwrap();
        txn::write_atomic(&txn::meta(&old).join(txn::MANIFEST), &m).unwrap();
        let c = carry(
            &old,
            &record(&["bin/nvcc"]),
            &new,
            &"13.5.1".parse().unwrap(),
        )
        .unwrap();
        assert_eq!((c.entries.len(), c.cudnn_files), (0, 1));
        let r = crate::cudnn::verify(&new).unwrap();
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        crate::cudnn::uninstall(&new).unwrap();
        assert_eq!(
            std::fs::read_to_string(new.join("include/cudnn.h")).unwrap(),
            "the new toolkit's own"
        );
        assert_eq!(
            std::fs::read_to_string(old.join("include/cudnn.h")).unwrap(),
            "cudnn header",
            "the old tree is only read"
        );

        // A cuDNN for CUDA 12 does not go into a CUDA 13 toolkit.
        let m12 = Manifest {
            cuda_major: Some(12),
            ..m
        };
        txn::write_atomic(&txn::meta(&old).join(txn::MANIFEST), &m12).unwrap();
        let e = carry(
            &old,
            &record(&["bin/nvcc"]),
            &new,
            &"13.5.1".parse().unwrap(),
        );
        assert!(
            matches!(e, Err(WheelError::CudnnOtherMajor { .. })),
            "{e:?}"
        );
    }
}
