//! Removing a toolkit tree we assembled from wheels: only the files and links its record
//! names (`toolkit-wheels.json`'s `paths`), each removed as the name itself; folders on
//! the way opened without following a link (a link planted where our folder was is left,
//! never followed); then the folders the build made, when empty. What the record does not
//! name is the user's and stays (with the folders holding it).

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use cap_fs_ext::DirExt;
use cap_std::fs::Dir as CapDir;

use crate::cudnn::txn::META;

/// The tree's folder, opened without following a link (a link at the name is not ours).
fn open_root(dir: &Path) -> io::Result<CapDir> {
    crate::place::Dir::open(dir)?.handle().try_clone()
}

/// The folder `rel` (with `/`) below `root`, each component opened without following.
fn walk(root: &CapDir, rel: &str) -> io::Result<CapDir> {
    let mut at = root.try_clone()?;
    for c in rel.split('/').filter(|c| !c.is_empty()) {
        at = at.open_dir_nofollow(c)?;
    }
    Ok(at)
}

fn split(rel: &str) -> (&str, &str) {
    rel.rsplit_once('/').unwrap_or(("", rel))
}

/// What a removal did: files removed, and places left (named for the user).
#[derive(Debug, Default)]
pub struct Removed {
    pub files: usize,
    pub left: Vec<String>,
    pub dir_gone: bool,
}

/// Removes the tree at `dir` that `paths` (the record's) describe. Idempotent: a name
/// already gone is fine, so a rerun after a kill finishes the work.
pub fn remove(dir: &Path, paths: &[String]) -> io::Result<Removed> {
    let mut out = Removed::default();
    if std::fs::symlink_metadata(dir).is_err() {
        out.dir_gone = true;
        return Ok(out);
    }
    let root = open_root(dir)?;
    let mut folders = BTreeSet::new();
    for rel in paths {
        crate::safe_path::relative(rel)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        let (folder, name) = split(rel);
        let mut at = folder;
        while !at.is_empty() {
            folders.insert(at.to_string());
            at = split(at).0;
        }
        let Ok(d) = walk(&root, folder) else {
            // Gone already, or a link where our folder was: never followed.
            if root.symlink_metadata(folder).is_ok() && !folder.is_empty() {
                out.left.push(folder.to_string());
            }
            continue;
        };
        match d.symlink_metadata(name) {
            Err(_) => {}
            // A folder where we made a file: someone else's.
            Ok(m) if m.is_dir() => out.left.push(rel.clone()),
            Ok(_) => {
                d.remove_file_or_symlink(name)?;
                out.files += 1;
            }
        }
    }
    // Our records' folder: the wheel record and the licences; cuDNN's records stay when
    // its uninstall left a changed file (its manifest names it).
    if let Ok(meta) = root.open_dir_nofollow(META) {
        for name in [crate::wheels::assemble::RECORD, crate::lock::FILE] {
            let _ = meta.remove_file_or_symlink(name);
        }
        let _ = meta.remove_dir_all("licenses");
        drop(meta);
        let _ = root.remove_dir(META);
    }
    // The folders the build made, deepest first, when nothing else is in them. Each is
    // removed through its parent, held only for that (Windows removes no open folder).
    let mut folders: Vec<String> = folders.into_iter().collect();
    folders.sort_by_key(|f| std::cmp::Reverse(f.matches('/').count()));
    for f in folders {
        let (parent, name) = split(&f);
        if let Ok(p) = walk(&root, parent) {
            let _ = p.remove_dir(name);
        }
    }
    drop(root);
    let parent: PathBuf = dir.parent().map(Path::to_path_buf).unwrap_or_default();
    let name = dir.file_name().unwrap_or_default();
    if let Ok(p) = crate::place::Dir::open(&parent) {
        out.dir_gone = p.handle().remove_dir(name).is_ok();
    }
    Ok(out)
}
