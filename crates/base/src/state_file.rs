//! Our own state files (the cuDNN manifest and journal, the install journal) are input
//! too: anyone who can write the folder can write them, and a kill can leave anything.
//! Each is read bounded, never through a symbolic link, and judged whole before one
//! record of it is acted on. A rejected file is set aside (renamed, never deleted), so
//! the next run starts clean and the evidence stays for the user to look at.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// No state file of ours comes near this (a cuDNN manifest is ~10 kB).
pub const MAX_BYTES: u64 = 16 << 20;

/// A state file that was not acted on, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{}: rejected: {why}{}", file.display(), moved_to.as_ref().map_or_else(String::new, |p| format!(" (set aside as {})", p.display())))]
pub struct Rejected {
    pub file: PathBuf,
    pub why: String,
    /// Where the file was moved; None while it was not (yet) moved.
    pub moved_to: Option<PathBuf>,
}

impl Rejected {
    pub fn new(file: &Path, why: impl Into<String>) -> Self {
        Rejected {
            file: file.to_path_buf(),
            why: why.into(),
            moved_to: None,
        }
    }

    /// Sets the file aside and records where it went.
    pub fn set_aside(mut self) -> Self {
        self.moved_to = set_aside(&self.file);
        self
    }
}

/// The bytes of the state file at `path`; None when there is none. Refused: a
/// symbolic link (ours are plain files: a link could make us read, and then rename or
/// rewrite, something elsewhere), anything but a regular file (a FIFO would block us for
/// ever), more than [`MAX_BYTES`] — all judged on the open handle (`place::read_regular`),
/// so a file swapped after a check cannot slip through.
pub fn read(path: &Path) -> Result<Option<Vec<u8>>, Rejected> {
    use crate::place::ReadError;
    crate::place::read_regular(path, MAX_BYTES).map_err(|e| {
        let why = match &e {
            ReadError::Link { .. } => "it is a symbolic link".to_string(),
            ReadError::NotRegular { what, .. } => format!("it is not a file ({what})"),
            ReadError::TooBig { size, max, .. } => {
                format!("{size} bytes; over the {max}-byte limit")
            }
            ReadError::Io { source, .. } => format!("unreadable: {source}"),
        };
        Rejected::new(path, why)
    })
}

/// Writes `bytes` to `path` so that a reader sees the old or the new content, never a
/// torn file: into `<path>.tmp`, synced, then renamed over `path`. The folder is opened
/// as a handle without following a link (`place::Dir`); whatever is at the temporary name
/// is removed first and the file is created new, so a link planted there is never
/// written through; the rename replaces a link at `path` itself.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, bytes, true)
}

/// [`write`] without the sync, for a progress record written often whose loss only
/// costs redoing work (a download's `.part.json`).
pub fn write_unsynced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, bytes, false)
}

fn replace(path: &Path, bytes: &[u8], sync: bool) -> std::io::Result<()> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(std::io::Error::other(format!(
            "{} is not a file path",
            path.display()
        )));
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    crate::place::Dir::open(dir)?.write_atomic(name, bytes, sync)
}

/// Renames `path` (the file, or a link itself: a rename never follows one) to
/// `<name>.rejected-<unix seconds>` beside it, in its folder opened as a handle. None
/// when it could not be moved.
pub fn set_aside(path: &Path) -> Option<PathBuf> {
    let (dir, name) = (path.parent()?, path.file_name()?);
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let held = crate::place::Dir::open(dir).ok()?;
    let to = crate::place::set_aside_in(held.handle(), name, "rejected").ok()?;
    Some(path.with_file_name(to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_plain_files_only() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a.json");
        assert_eq!(read(&f), Ok(None));
        std::fs::write(&f, b"{}").unwrap();
        assert_eq!(read(&f).unwrap().unwrap(), b"{}");
        std::fs::File::create(&f)
            .unwrap()
            .set_len(MAX_BYTES + 1)
            .unwrap();
        assert!(read(&f).is_err());
        assert!(read(d.path()).is_err());
        #[cfg(unix)]
        {
            let l = d.path().join("l.json");
            std::os::unix::fs::symlink(&f, &l).unwrap();
            assert!(read(&l).unwrap_err().why.contains("symbolic link"));
            let moved = set_aside(&l).unwrap();
            assert!(moved.symlink_metadata().unwrap().file_type().is_symlink());
            assert!(f.is_file(), "the link's target stays where it was");
        }
        #[cfg(unix)]
        {
            // A link planted at the temporary name is replaced, not written through.
            let victim = d.path().join("victim");
            std::fs::write(&victim, b"victim").unwrap();
            let w = d.path().join("w.json");
            std::os::unix::fs::symlink(&victim, d.path().join("w.json.tmp")).unwrap();
            write(&w, b"{}").unwrap();
            assert_eq!(std::fs::read(&victim).unwrap(), b"victim");
            assert_eq!(std::fs::read(&w).unwrap(), b"{}");
        }
        let moved = set_aside(&f).unwrap();
        assert!(!f.exists() && moved.is_file());
        assert!(
            moved
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("a.json.rejected-")
        );
    }
}
