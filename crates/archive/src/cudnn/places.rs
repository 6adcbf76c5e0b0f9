//! The toolkit folder held open (#30). Another account that can write the toolkit folder
//! may replace `include/` (or our `.cuda-setup/`, or a backup folder) with a link to a
//! folder of its choosing, before an install or in the middle of one. So every create,
//! rename and remove of a cuDNN transaction is done relative to handles opened once:
//!
//! - the toolkit folder itself, through the path the user gave (`/usr/local/cuda` is a
//!   link by NVIDIA's own design: the path is the user's choice, not a planted thing);
//! - `.cuda-setup/`, and every folder below it (staging, backups), opened without
//!   following a link ([`place::Dir`]): ours are real folders, a link there is refused;
//! - each destination folder (`include`, `lib64`, `bin/x64`) resolved once inside the
//!   toolkit by cap-std, which follows a link that stays inside (NVIDIA's
//!   `lib64 -> targets/x86_64-linux/lib`) and refuses one that leads out or is absolute.
//!   The handle is kept for the whole transaction and its rollback: a folder swapped for a
//!   link after it was resolved is never followed.
//!
//! Only the last name of each file is acted on (a rename or removal of the name itself,
//! never of what a link there points at).

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cap_fs_ext::DirExt;

use super::CudnnError;
use super::txn::META;
use crate::place;
use crate::state_file::Rejected;

/// A toolkit folder, and our records' folder in it, held open.
#[derive(Debug)]
pub struct Toolkit {
    /// As the user named it, for messages.
    dir: PathBuf,
    root: place::Dir,
    /// `.cuda-setup`; None when there is none (and none was to be made).
    meta: Option<place::Dir>,
    /// Destination folders by their path below the toolkit, resolved once.
    folders: Mutex<HashMap<String, Arc<cap_std::fs::Dir>>>,
}

/// `rel`'s folder and last name (`include/cudnn.h` → `include`, `cudnn.h`).
pub fn split(rel: &str) -> (&str, &str) {
    let rel = rel.trim_matches('/');
    rel.rsplit_once('/').unwrap_or(("", rel))
}

/// Why a record's folder is not used: the same words for a link and a file.
fn not_a_folder(path: &Path) -> CudnnError {
    CudnnError::BadState(Rejected::new(path, "not a folder (a symbolic link?)"))
}

impl Toolkit {
    /// Opens the toolkit folder `dir` and its `.cuda-setup` (made when `create`). A
    /// `.cuda-setup` that is a link or a file is a rejected record ([`Toolkit::set_aside`]
    /// moves it), never followed.
    pub fn open(dir: &Path, create: bool) -> Result<Toolkit, CudnnError> {
        // Resolved once: the links on the user's own path are theirs (a link swapped in
        // below it later is refused by the handles).
        let root = place::Dir::open(&crate::platform::canonical(dir))
            .map_err(|e| CudnnError::io(dir, e))?;
        let shown = dir.join(META);
        let meta = match root.symlink_metadata(META) {
            Err(e) if e.kind() == io::ErrorKind::NotFound && !create => None,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Some(
                root.sub(META, true)
                    .map_err(|e| CudnnError::io(&shown, e))?,
            ),
            Err(e) => return Err(CudnnError::io(&shown, e)),
            Ok(m) if m.is_dir() => Some(root.sub(META, false).map_err(|_| not_a_folder(&shown))?),
            Ok(_) => return Err(not_a_folder(&shown)),
        };
        Ok(Toolkit {
            dir: dir.to_path_buf(),
            root,
            meta,
            folders: Mutex::new(HashMap::new()),
        })
    }

    /// Removes `.cuda-setup` (a refused first install leaves no trace; a link that took
    /// the name meanwhile is removed as a link).
    pub fn remove_meta(&self) -> io::Result<()> {
        self.root.remove_all(META)
    }

    /// The toolkit folder as the user named it.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `.cuda-setup`, when there is one.
    pub fn meta(&self) -> Option<&place::Dir> {
        self.meta.as_ref()
    }

    /// `.cuda-setup`, which the caller knows exists (it was opened to be made).
    pub fn meta_or_err(&self) -> Result<&place::Dir, CudnnError> {
        self.meta.as_ref().ok_or_else(|| {
            CudnnError::io(
                &self.dir.join(META),
                io::Error::from(io::ErrorKind::NotFound),
            )
        })
    }

    /// The path of `rel` below the toolkit folder, for messages.
    pub fn shown(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.dir.join(rel)
    }

    /// The destination folder `folder` (a path below the toolkit, `/`-separated),
    /// resolved once and kept. Missing: made when `create`, else None. A link on the way
    /// that leads out of the toolkit: [`CudnnError::LinkOut`].
    pub fn folder(
        &self,
        folder: &str,
        create: bool,
    ) -> Result<Option<Arc<cap_std::fs::Dir>>, CudnnError> {
        let mut cache = self.folders.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(d) = cache.get(folder) {
            return Ok(Some(d.clone()));
        }
        let shown = self.shown(folder);
        let root = self.root.handle();
        let opened = if folder.is_empty() {
            root.try_clone()
        } else if folder == META {
            // Our own folder, already held (the licence goes there).
            self.meta_or_err()?.handle().try_clone()
        } else {
            match root.open_dir(folder) {
                Err(e) if e.kind() == io::ErrorKind::NotFound && !create => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::NotFound => root
                    .create_dir_all(folder)
                    .and_then(|()| root.open_dir(folder)),
                r => r,
            }
        };
        let d = Arc::new(opened.map_err(|e| self.refusal(folder, e))?);
        cache.insert(folder.to_string(), d.clone());
        drop(cache);
        tracing::debug!(target: "cuda_setup::cudnn", "{} held open", shown.display());
        Ok(Some(d))
    }

    /// A failure to open a destination folder: a link that leads out is said as such.
    fn refusal(&self, folder: &str, e: io::Error) -> CudnnError {
        let probe = format!("{folder}/.probe");
        let escaped = e.to_string().contains("outside")
            || crate::safe_path::resolves_inside(&self.dir, &probe).is_err();
        if escaped {
            CudnnError::LinkOut {
                path: self.shown(folder),
            }
        } else {
            CudnnError::io(&self.shown(folder), e)
        }
    }

    /// Whether the file (or link) `rel` exists itself, in its destination folder.
    pub fn present(&self, rel: &str) -> Result<bool, CudnnError> {
        let (folder, name) = split(rel);
        Ok(match self.folder(folder, false)? {
            Some(d) => d.symlink_metadata(name).is_ok(),
            None => false,
        })
    }

    /// Removes the file or link `rel` itself; nothing there is fine.
    pub fn remove(&self, rel: &str) -> Result<(), CudnnError> {
        let (folder, name) = split(rel);
        let Some(d) = self.folder(folder, false)? else {
            return Ok(());
        };
        match d.remove_file_or_symlink(name) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(CudnnError::io(&self.shown(rel), e))
            }
            _ => Ok(()),
        }
    }

    /// The folder below `.cuda-setup` holding `rel` (`cudnn-backup/include/x.h` →
    /// `cudnn-backup/include`), every folder opened without following; made when
    /// `create`. None: missing, or — not creating — a link or a file on the way, which
    /// is never followed (warned: someone put it there).
    pub fn meta_folder(&self, rel: &str, create: bool) -> Result<Option<place::Dir>, CudnnError> {
        let meta = self.meta_or_err()?;
        let (folder, _) = split(rel);
        if folder.is_empty() {
            return meta
                .try_clone()
                .map(Some)
                .map_err(|e| CudnnError::io(meta.path(), e));
        }
        match meta.sub(folder, create) {
            Ok(d) => Ok(Some(d)),
            Err(e) if e.kind() == io::ErrorKind::NotFound && !create => Ok(None),
            Err(e) if !create => {
                tracing::warn!(
                    target: "cuda_setup::cudnn",
                    "{}: not followed ({e})",
                    self.shown(META).join(folder).display()
                );
                Ok(None)
            }
            Err(e) => Err(CudnnError::io(&self.shown(META).join(folder), e)),
        }
    }

    /// Renames `from` in `from_dir` to `to` in `to_dir` (the name itself: a rename never
    /// follows a link), classifying a file held open by another program.
    pub fn rename(
        from_dir: &cap_std::fs::Dir,
        from: &str,
        to_dir: &cap_std::fs::Dir,
        to: &str,
        shown: &Path,
    ) -> Result<(), CudnnError> {
        from_dir.rename(from, to_dir, to).map_err(|e| {
            // Windows: 32 sharing violation, 5 access denied (a loaded DLL); Unix: ETXTBSY.
            let in_use = matches!(e.raw_os_error(), Some(32) | Some(33))
                || (cfg!(windows) && e.raw_os_error() == Some(5))
                || (cfg!(unix) && e.raw_os_error() == Some(26));
            if in_use {
                CudnnError::InUse {
                    file: shown.to_path_buf(),
                    source: crate::error::cause(e),
                }
            } else {
                CudnnError::io(shown, e)
            }
        })
    }

    /// Sets a rejected record aside: renamed to `<name>.rejected-<secs>` beside it, in
    /// the folder held open (`.cuda-setup` itself in the toolkit folder). Never deleted.
    pub fn set_aside(&self, mut r: Rejected) -> Rejected {
        let meta_path = self.shown(META);
        let (dir, name, shown_dir) = if r.file == meta_path {
            (self.root.handle(), META.to_string(), self.dir.clone())
        } else if let (Some(meta), Ok(rel)) = (&self.meta, r.file.strip_prefix(&meta_path)) {
            let rel = rel.to_string_lossy().replace('\\', "/");
            if rel.contains('/') {
                return r;
            }
            (meta.handle(), rel, meta_path)
        } else {
            return r;
        };
        r.moved_to = set_aside_in(dir, &name).map(|n| shown_dir.join(n));
        r
    }
}

/// Renames `name` in `dir` to `<name>.rejected-<secs>[-n]`; the new name.
pub fn set_aside_in(dir: &cap_std::fs::Dir, name: &str) -> Option<String> {
    place::set_aside_in(dir, name.as_ref(), "rejected")
        .ok()
        .map(|n| n.to_string_lossy().into_owned())
}
