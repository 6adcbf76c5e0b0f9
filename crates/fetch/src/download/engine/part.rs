//! The part file's companion state: which chunks are done, so a download resumes, and
//! when it cannot (another file's, inconsistent, a link), starts over.

use super::*;

/// The part file's companion: which chunks are done, for which expected file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(super) struct PartState {
    pub(super) key: String,
    pub(super) size: u64,
    pub(super) chunk: u64,
    pub(super) done: Vec<bool>,
}

/// Chunk sizes the engine uses (`chunk_size`); a state file naming another is not ours.
pub(super) const MIN_CHUNK: u64 = 256 << 10;
pub(super) const MAX_CHUNK: u64 = 8 << 20;
/// The largest file fetched (a CUDA installer is about 4 GB): bounds what a server's or a
/// state file's numbers can make the engine allocate or write.
pub(super) const MAX_SIZE: u64 = 1 << 40;

impl PartState {
    /// Why this state cannot be resumed for the file `key` of `size` bytes whose part file
    /// is `part_len` bytes long; None when it can.
    fn problem(&self, key: &str, size: u64, part_len: Option<u64>) -> Option<String> {
        if self.key != key {
            return Some(format!("it belongs to another file ({})", self.key));
        }
        if self.size != size {
            return Some(format!(
                "it is for {} bytes, the server has {size}",
                self.size
            ));
        }
        if !(MIN_CHUNK..=MAX_CHUNK).contains(&self.chunk) {
            return Some(format!(
                "its chunk size {} is outside {MIN_CHUNK}-{MAX_CHUNK}",
                self.chunk
            ));
        }
        let chunks = size.div_ceil(self.chunk).max(1);
        if self.done.len() as u64 != chunks {
            return Some(format!(
                "it lists {} chunks, {size} bytes in chunks of {} make {chunks}",
                self.done.len(),
                self.chunk
            ));
        }
        if part_len != Some(size) {
            return Some(match part_len {
                None => "its part file is missing".into(),
                Some(n) => format!("its part file is {n} bytes, not {size}"),
            });
        }
        None
    }
}

/// The saved state for the part file if it can be resumed; otherwise None, and a state
/// file that was there (unreadable, oversized, inconsistent, another file's, or beside a
/// part file that is a link, not a plain file, or has another name) is reported and
/// deleted with the part, so the download starts over. Never panics, never allocates by
/// its numbers.
pub(super) fn load_state(
    dest: &Dest,
    key: &str,
    size: u64,
    reporter: &dyn Reporter,
) -> Option<PartState> {
    // Read as the input it is (bounded, regular, never through a link).
    let reason = match dest.dir.read(dest.state(), crate::state_file::MAX_BYTES) {
        Ok(None) => return None,
        Err(e) => e.to_string(),
        Ok(Some(b)) => match serde_json::from_slice::<PartState>(&b) {
            Err(e) => format!("it cannot be read: {e}"),
            Ok(s) => {
                // The part file only as one of ours: opened as we would resume it.
                let part = match dest.dir.open_rw(dest.part()) {
                    Ok(f) => Ok(f.metadata().ok().map(|m| m.len())),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(format!("its part file cannot be resumed: {e}")),
                };
                match part.map(|len| s.problem(key, size, len)) {
                    Ok(None) => return Some(s),
                    Ok(Some(r)) | Err(r) => r,
                }
            }
        },
    };
    reporter.event(Event::PartDiscarded {
        path: dest.shown(dest.state()),
        reason,
    });
    discard(dest);
    None
}

/// Removes the part file and its state (the names, never what a planted link points at).
pub(super) fn discard(dest: &Dest) {
    let _ = dest.dir.remove(dest.part());
    let _ = dest.dir.remove(dest.state());
}

pub(super) fn save_state(dest: &Dest, s: &PartState) {
    // Written after every chunk: not synced (a state lost to a crash is discarded and the
    // download starts over), but like every state file never torn, never through a link.
    let _ = dest.dir.write_atomic(
        dest.state(),
        &serde_json::to_vec(s).unwrap_or_default(),
        false,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(size: u64, chunk: u64, chunks: usize) -> PartState {
        PartState {
            key: "sha256-ab".into(),
            size,
            chunk,
            done: vec![false; chunks],
        }
    }

    #[test]
    fn only_a_state_that_adds_up_is_resumed() {
        let size = 3 << 20;
        let ok = state(size, 256 << 10, 12);
        assert_eq!(ok.problem("sha256-ab", size, Some(size)), None);
        // The last chunk may be short: 3 MiB + 1 in 256 KiB chunks is 13.
        assert_eq!(
            state(size + 1, 256 << 10, 13).problem("sha256-ab", size + 1, Some(size + 1)),
            None
        );
        let bad = [
            (
                state(size, 256 << 10, 12),
                "sha256-cd",
                size,
                Some(size),
                "another file",
            ),
            (
                state(size, 256 << 10, 12),
                "sha256-ab",
                size + 1,
                Some(size + 1),
                "is for",
            ),
            (
                state(size, 0, 12),
                "sha256-ab",
                size,
                Some(size),
                "chunk size 0",
            ),
            (
                state(size, 1 << 42, 1),
                "sha256-ab",
                size,
                Some(size),
                "chunk size",
            ),
            (
                state(size, 256 << 10, 1),
                "sha256-ab",
                size,
                Some(size),
                "lists 1 chunks",
            ),
            (
                state(size, 256 << 10, 13),
                "sha256-ab",
                size,
                Some(size),
                "lists 13",
            ),
            (
                state(size, 256 << 10, 12),
                "sha256-ab",
                size,
                None,
                "missing",
            ),
            (
                state(size, 256 << 10, 12),
                "sha256-ab",
                size,
                Some(5),
                "5 bytes",
            ),
        ];
        for (s, key, size, part_len, why) in bad {
            let p = s.problem(key, size, part_len).expect(why);
            assert!(p.contains(why), "{p}");
        }
    }
}
