//! Putting a wheel-built tree in place of the one at its destination without ever
//! leaving neither, and without ever removing a folder we did not build.
//!
//! Beside the destination `D` (same volume, so every move is one atomic rename):
//! `.D.staging-PID` is a tree being built or being thrown away, never a live one;
//! `.D.old-PID` is the previous tree of ours while the new one is checked. The swap:
//!
//! 1. `D` → `.D.old-PID` (a kill now: `D` is missing, the next run renames the old back);
//! 2. `.D.staging-PID` → `D`, then the check (a kill now: the swap is unfinished, the
//!    next run puts the old back); a failed check: `D` → `.D.staging-PID`, old → `D`;
//! 3. committed: `.D.old-PID` → `.D.staging-PID` (one rename, so a half-deleted old tree
//!    is never mistaken for one to restore), then it is deleted. The user's files and
//!    cuDNN were carried into the new tree before step 1 (`keep.rs`), so whichever tree
//!    a kill leaves in place holds them. An old tree whose record cannot tell the user's
//!    files from ours is not deleted: it is renamed into the new tree ([`kept_name`]).
//!
//! [`recover`] runs first in every assembly (and as repair's fix): it restores an
//! unfinished swap and deletes staging leftovers.

use std::path::{Path, PathBuf};

use super::WheelError;

const STAGING: &str = ".staging-";
const OLD: &str = ".old-";

/// What a leftover beside a toolkit folder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A tree being built or thrown away: deleted by the next run.
    Staging,
    /// The previous tree of an unfinished swap: put back by the next run.
    Old,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Leftover {
    pub path: PathBuf,
    /// The toolkit folder it belongs to.
    pub dest: PathBuf,
    pub kind: Kind,
}

fn leaf(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "cuda".into())
}

fn beside(dir: &Path, kind: &str) -> PathBuf {
    dir.with_file_name(format!(".{}{kind}{}", leaf(dir), std::process::id()))
}

/// This process's staging folder for `dir`.
pub fn staging_path(dir: &Path) -> PathBuf {
    beside(dir, STAGING)
}

fn old_path(dir: &Path) -> PathBuf {
    beside(dir, OLD)
}

/// The name a replaced tree that is kept whole takes inside the new tree `staging`:
/// `previous-toolkit`, else `previous-toolkit-2`, … (visible, for the user to look into;
/// not in the new record, so the user's from then on: carried by later rebuilds, named
/// by repair). Inside, not beside: nothing outside the toolkit folder changes.
pub fn kept_name(staging: &Path) -> String {
    (1..)
        .map(|n| match n {
            1 => "previous-toolkit".to_string(),
            n => format!("previous-toolkit-{n}"),
        })
        .find(|n| std::fs::symlink_metadata(staging.join(n)).is_err())
        .expect("a free name")
}

/// `.LEAF.staging-123` / `.LEAF.old-123` → (LEAF, kind).
fn parse(name: &str) -> Option<(&str, Kind)> {
    let rest = name.strip_prefix('.')?;
    for (mark, kind) in [(STAGING, Kind::Staging), (OLD, Kind::Old)] {
        if let Some(i) = rest.rfind(mark) {
            let pid = &rest[i + mark.len()..];
            if i > 0 && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) {
                return Some((&rest[..i], kind));
            }
        }
    }
    None
}

/// Every leftover in `parent` (for any toolkit folder there), sorted.
pub fn scan(parent: &Path) -> Vec<Leftover> {
    let mut out: Vec<Leftover> = std::fs::read_dir(parent)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let (leaf, kind) = parse(&name)?;
            // Only folders of our own making: a link named like one is not ours to move.
            e.file_type().ok().filter(|t| t.is_dir())?;
            Some(Leftover {
                path: e.path(),
                dest: parent.join(leaf),
                kind,
            })
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// The leftovers that belong to `dir`.
pub fn leftovers(dir: &Path) -> Vec<Leftover> {
    let Some(parent) = dir.parent() else {
        return Vec::new();
    };
    scan(parent).into_iter().filter(|l| l.dest == dir).collect()
}

fn io(path: &Path, e: std::io::Error) -> WheelError {
    WheelError::io(path, crate::error::cause(e))
}

fn rename(from: &Path, to: &Path) -> Result<(), WheelError> {
    std::fs::rename(from, to).map_err(|e| {
        let what = format!("cannot move to {}: {e}", to.display());
        io(from, std::io::Error::new(e.kind(), what))
    })
}

/// What [`recover`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// An unfinished swap's previous tree was put back.
    pub restored: bool,
    /// Staging folders deleted.
    pub removed: usize,
}

/// Finishes what a killed run left beside `dir`: an `.old-*` tree goes back to `dir`
/// (the new tree, which is ours, is thrown away); `.staging-*` folders are deleted.
/// `is_ours(dir)` guards the one case that would move a live folder aside.
pub fn recover(dir: &Path, is_ours: &dyn Fn(&Path) -> bool) -> Result<Recovered, WheelError> {
    let mut done = Recovered::default();
    let found = leftovers(dir);
    // The newest unfinished swap is the one to undo (with one run at a time, the only one).
    if let Some(old) = found.iter().rev().find(|l| l.kind == Kind::Old) {
        if std::fs::symlink_metadata(dir).is_err() {
            rename(&old.path, dir)?;
            done.restored = true;
        } else if is_ours(dir) {
            let discard = staging_path(dir);
            rename(dir, &discard)?;
            rename(&old.path, dir)?;
            done.restored = true;
        }
        // Else someone put a folder at `dir` since: it and the old tree both stay, and
        // repair keeps reporting the old one.
    }
    for l in leftovers(dir) {
        if l.kind == Kind::Staging {
            std::fs::remove_dir_all(&l.path).map_err(|e| io(&l.path, e))?;
            done.removed += 1;
        }
    }
    Ok(done)
}

/// A named point where a debug build stops so a test can kill it there
/// (`lock::test_pause`: `CUDA_SETUP_TEST_PAUSE_AT`/`_DIR`); release builds go on.
fn pause_point(point: &str) {
    crate::lock::test_pause(point);
}

/// Moves the finished `staging` tree to `dir` and runs `check` on it there. An existing
/// `dir` must be ours (the caller decides); it is kept as `.old-*` until the check passes
/// and put back when it fails. A new tree without a previous one stays when its check
/// fails (it is ours and complete as the wheels made it; the error says what it lacks).
/// With `keep`, the replaced tree is renamed there once the new one passed, not deleted.
pub fn swap_in(
    staging: &Path,
    dir: &Path,
    check: &dyn Fn(&Path) -> Result<(), WheelError>,
    keep: Option<&Path>,
) -> Result<(), WheelError> {
    pause_point("wheels_staged");
    if std::fs::symlink_metadata(dir).is_err() {
        rename(staging, dir)?;
        return check(dir);
    }
    let old = old_path(dir);
    rename(dir, &old)?;
    pause_point("wheels_old_out");
    if let Err(e) = rename(staging, dir) {
        rename(&old, dir)?;
        return Err(e);
    }
    pause_point("wheels_new_in");
    if let Err(e) = check(dir) {
        rename(dir, staging)?;
        rename(&old, dir)?;
        let _ = std::fs::remove_dir_all(staging);
        return Err(match e {
            WheelError::Incomplete { missing, .. } => WheelError::Incomplete {
                missing,
                restored: true,
            },
            e => e,
        });
    }
    if let Some(keep) = keep {
        return rename(&old, keep);
    }
    // Committed: the old tree becomes a staging leftover in one rename, then goes.
    rename(&old, staging)?;
    pause_point("wheels_committed");
    std::fs::remove_dir_all(staging).map_err(|e| io(staging, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(dir: &Path, text: &str) {
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::write(dir.join("bin/nvcc"), text).unwrap();
    }

    fn nvcc(dir: &Path) -> String {
        std::fs::read_to_string(dir.join("bin/nvcc")).unwrap()
    }

    #[test]
    fn names() {
        assert_eq!(
            parse(".cuda-13.5.staging-42"),
            Some(("cuda-13.5", Kind::Staging))
        );
        assert_eq!(parse(".v13.5.old-7"), Some(("v13.5", Kind::Old)));
        for no in [
            "cuda-13.5",
            ".cuda.old-",
            ".old-12",
            ".cuda.old-x1",
            ".bashrc",
        ] {
            assert_eq!(parse(no), None, "{no}");
        }
    }

    #[test]
    fn a_failed_check_puts_the_previous_tree_back() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("cuda-13.5");
        tree(&dir, "old");
        let staging = staging_path(&dir);
        tree(&staging, "new");
        let e = swap_in(
            &staging,
            &dir,
            &|p| {
                assert_eq!(nvcc(p), "new", "checked in place");
                Err(WheelError::io(p, crate::error::text("lacks cudart")))
            },
            None,
        )
        .unwrap_err();
        assert!(crate::error::chain(&e).contains("lacks cudart"));
        assert_eq!(nvcc(&dir), "old");
        assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));

        tree(&staging, "new");
        swap_in(&staging, &dir, &|_| Ok(()), None).unwrap();
        assert_eq!(nvcc(&dir), "new");
        assert!(leftovers(&dir).is_empty());
    }

    #[test]
    fn recovery_puts_an_old_tree_back_and_cleans_staging() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("cuda-13.5");
        // Killed after the old tree moved out, before the new one moved in.
        tree(&d.path().join(".cuda-13.5.old-99"), "old");
        tree(&d.path().join(".cuda-13.5.staging-99"), "new");
        tree(&d.path().join(".cuda-12.8.staging-5"), "other");
        let r = recover(&dir, &|_| true).unwrap();
        assert_eq!((r.restored, r.removed), (true, 1));
        assert_eq!(nvcc(&dir), "old");
        assert!(leftovers(&dir).is_empty());
        assert_eq!(scan(d.path()).len(), 1, "another folder's leftover stays");

        // Killed after the new tree moved in, before the check passed: undone.
        tree(&d.path().join(".cuda-13.5.old-99"), "older");
        let r = recover(&dir, &|_| true).unwrap();
        assert!(r.restored);
        assert_eq!(nvcc(&dir), "older");
        assert!(leftovers(&dir).is_empty());

        // A folder at `dir` that is not ours is never moved aside.
        tree(&d.path().join(".cuda-13.5.old-99"), "oldest");
        let r = recover(&dir, &|_| false).unwrap();
        assert!(!r.restored);
        assert_eq!(nvcc(&dir), "older");
        assert_eq!(leftovers(&dir).len(), 1);
    }
}
