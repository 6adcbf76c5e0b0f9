//! What the fast paths trust instead of re-reading a file: its size and modification time,
//! recorded when we wrote it (or last hashed it). A file whose stamp still matches is taken
//! to hold the bytes whose hash was recorded with the stamp; one whose stamp differs is
//! re-hashed. Only a deep check (`verify --deep`) re-hashes everything: a change made with
//! the size and the modification time put back is found there, not on the fast path.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// Size and modification time (nanoseconds since the Unix epoch; 0 before it or where the
/// file system keeps none) of one file, read without following a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: u64,
}

impl Stamp {
    pub fn of_metadata(m: &std::fs::Metadata) -> Stamp {
        let mtime_ns = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        Stamp {
            size: m.len(),
            mtime_ns,
        }
    }
}

/// The stamp of the file at `path` (not through a link: a link's own metadata).
pub fn of(path: &Path) -> std::io::Result<Stamp> {
    std::fs::symlink_metadata(path).map(|m| Stamp::of_metadata(&m))
}

/// Whether the file at `path` still has `want` (false when it cannot be read).
pub fn matches(path: &Path, want: &Stamp) -> bool {
    of(path).is_ok_and(|s| s == *want)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_of_another_size_or_time_no_longer_matches() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, b"abc").unwrap();
        let s = of(&p).unwrap();
        assert_eq!(s.size, 3);
        assert!(s.mtime_ns > 0);
        assert!(matches(&p, &s));
        std::fs::write(&p, b"abcd").unwrap();
        assert!(!matches(&p, &s));
        let s2 = of(&p).unwrap();
        let f = std::fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000))
            .unwrap();
        assert!(!matches(&p, &s2), "same size, another time");
        assert!(!matches(&d.path().join("missing"), &s2));
    }
}
