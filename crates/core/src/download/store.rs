//! What needs no network: the destination already right, an offline bundle, the cache.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::stamp::Stamp;

use super::{
    DownloadError, Event, Outcome, Reporter, Request, Source, file_name_of, hash_file, io_err,
    part_paths,
};

/// The verified file from `dest`, a bundle or the cache, placed at `dest`; None to download.
pub(super) fn find_local(
    req: &Request,
    reporter: &dyn Reporter,
) -> Result<Option<Outcome>, DownloadError> {
    // What we verified last time, untouched since (same size, same modification time):
    // taken without re-reading it. Anything else about it is re-hashed.
    if let Some(o) = recorded(req) {
        return Ok(Some(o));
    }
    if req.dest.is_file()
        && let Some(o) = verified(req, &req.dest, Source::Existing)
    {
        record(&req.dest, &o);
        return Ok(Some(o));
    }
    // The URL's last segment is input: only a plain file name is looked up in a bundle.
    let name = crate::safe_path::file_name(file_name_of(&req.url)).ok();
    for dir in req.bundle_dirs.iter().filter(|_| name.is_some()) {
        let candidate = dir.join(name.unwrap_or_default());
        if !candidate.is_file() {
            continue;
        }
        reporter.event(Event::Verifying);
        if verified(req, &candidate, Source::Existing).is_some() {
            place(&candidate, &req.dest)?;
            let o = verified(req, &req.dest, Source::Bundle(candidate));
            if let Some(o) = &o {
                record(&req.dest, o);
            }
            return Ok(o);
        }
        reporter.event(Event::SourceFailed {
            url: candidate.display().to_string(),
            error: "bundle file does not match the expected hash".into(),
        });
    }
    if let Some(cached) = cache_path(req)
        && cached.is_file()
        && req
            .expected
            .size
            .is_none_or(|s| std::fs::metadata(&cached).is_ok_and(|m| m.len() == s))
    {
        // Only verified files enter the cache; its name is their hash.
        place(&cached, &req.dest)?;
        if let Some(o) = verified(req, &req.dest, Source::Cache(cached.clone())) {
            record(&req.dest, &o);
            return Ok(Some(o));
        }
        let _ = std::fs::remove_file(&cached); // corrupted on disk since: drop it
    }
    Ok(None)
}

/// The record a verified download leaves beside its file (`.NAME.verified`): the hashes
/// of the bytes and the stamp the file had when they were hashed. Only ever a reason
/// not to re-read a file: a record that is missing, damaged, for other hashes, or whose
/// stamp the file no longer has, just means the file is hashed again.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    sha256: String,
    md5: String,
    size: u64,
    stamp: Stamp,
}

/// A record is four short fields; anything bigger is not one of ours.
const RECORD_MAX_BYTES: usize = 4096;

/// `DIR/.NAME.verified`: hidden, and named so no look-up for a file takes it for one.
pub(super) fn record_path(dest: &Path) -> PathBuf {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dest.with_file_name(format!(".{name}.verified"))
}

/// Records that `dest` holds the bytes `o` describes, as it is now (best effort: without
/// the record the next run re-hashes, nothing worse). Written unsynced: a record torn by
/// a crash fails to parse and costs one re-hash.
pub(super) fn record(dest: &Path, o: &Outcome) {
    let path = record_path(dest);
    let Ok(stamp) = crate::stamp::of(dest) else {
        let _ = std::fs::remove_file(&path);
        return;
    };
    let r = Record {
        sha256: o.sha256.clone(),
        md5: o.md5.clone(),
        size: o.size,
        stamp,
    };
    if stamp.size != o.size
        || crate::state_file::write_unsynced(&path, &serde_json::to_vec(&r).expect("plain"))
            .is_err()
    {
        let _ = std::fs::remove_file(&path);
    }
}

/// The outcome for `dest` from its record, when the record is for the hashes `req`
/// expects and the file still has the stamp recorded; None to hash it.
fn recorded(req: &Request) -> Option<Outcome> {
    // The record is input: read bounded and never through a link.
    let bytes = crate::state_file::read(&record_path(&req.dest)).ok()??;
    if bytes.len() > RECORD_MAX_BYTES {
        return None;
    }
    let r: Record = serde_json::from_slice(&bytes).ok()?;
    let wanted = req.expected.sha256.is_some() || req.expected.md5.is_some();
    if !wanted
        || req.expected.sha256.as_ref().is_some_and(|h| *h != r.sha256)
        || req.expected.md5.as_ref().is_some_and(|h| *h != r.md5)
        || req.expected.size.is_some_and(|s| s != r.size)
        || r.stamp.size != r.size
        // A link at the destination has a stamp of its own, not its target's.
        || !std::fs::symlink_metadata(&req.dest).is_ok_and(|m| m.is_file())
        || !crate::stamp::matches(&req.dest, &r.stamp)
    {
        return None;
    }
    Some(Outcome {
        path: req.dest.clone(),
        size: r.size,
        sha256: r.sha256,
        md5: r.md5,
        source: Source::Existing,
        resumed_bytes: 0,
        elapsed_ms: 0,
    })
}

/// An outcome for `path` if its bytes match what `req` expects.
fn verified(req: &Request, path: &Path, source: Source) -> Option<Outcome> {
    let (d, size) = hash_file(path).ok()?;
    if req.expected.check(&d).is_err() || req.expected.size.is_some_and(|s| s != size) {
        return None;
    }
    Some(Outcome {
        path: req.dest.clone(),
        size,
        sha256: d.sha256,
        md5: d.md5,
        source,
        resumed_bytes: 0,
        elapsed_ms: 0,
    })
}

/// Copies `from` to `to` through a part file, so `to` is never half-written.
fn place(from: &Path, to: &Path) -> Result<(), DownloadError> {
    if from == to {
        return Ok(());
    }
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    }
    let (part, _) = part_paths(to);
    let _ = std::fs::remove_file(&part);
    if std::fs::hard_link(from, &part).is_err() {
        std::fs::copy(from, &part).map_err(|e| io_err(&part, e))?;
    }
    std::fs::rename(&part, to).map_err(|e| io_err(to, e))
}

/// `CACHE/sha256-<hex>` (or `md5-<hex>`).
pub(super) fn cache_path(req: &Request) -> Option<PathBuf> {
    Some(req.cache_dir.as_ref()?.join(req.expected.key()?))
}

/// Adds a verified download to the cache (best effort: a full cache disk is no failure).
pub(super) fn into_cache(req: &Request, path: &Path) {
    if let Some(cached) = cache_path(req)
        && !cached.exists()
    {
        let _ = place(path, &cached);
    }
}
