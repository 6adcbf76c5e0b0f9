//! What needs no network: the destination already right, an offline bundle, the cache.
//!
//! A file we hand on (and an elevated run may execute) must be ours: one name, our
//! account's (or the administrators'), reached without following a link. A verified file
//! that another name or another account shares could be rewritten after the check, so it
//! is not trusted as it is: its bytes are copied into a new file of ours, hashed while
//! copied. Bundle and cache files are copied the same way, never hard-linked.

use std::io::{Read, Write};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::place;
use crate::stamp::Stamp;

use super::{
    Dest, DownloadError, Event, Hasher, Outcome, Reporter, Request, Source, file_name_of,
    hash::hash_reader, io_err,
};

/// The verified file from `dest`, a bundle or the cache, placed at `dest`; None to download.
pub(super) fn find_local(
    req: &Request,
    dest: &Dest,
    reporter: &dyn Reporter,
) -> Result<Option<Outcome>, DownloadError> {
    // The destination as it is, opened without following a link (a link, a FIFO or a
    // folder there is never used: the final rename replaces it).
    if let Ok(Some((f, _))) = dest.dir.open_read(&dest.name, u64::MAX) {
        if is_ours(&f) {
            // What we verified last time, untouched since (same size, same modification
            // time): taken without re-reading it. Anything else about it is re-hashed.
            if let Some(o) = recorded(req, dest, &f) {
                return Ok(Some(o));
            }
            if let Some(o) = verified(req, f, Source::Existing) {
                record(dest, &o);
                return Ok(Some(o));
            }
        } else if let Some(o) = copy_in(req, dest, f, Source::Existing)? {
            // Another name or account shares it: its bytes, if right, become ours.
            record(dest, &o);
            return Ok(Some(o));
        }
    }
    // The URL's last segment is input: only a plain file name is looked up in a bundle.
    let name = crate::safe_path::file_name(file_name_of(&req.url)).ok();
    for dir in req.bundle_dirs.iter().filter(|_| name.is_some()) {
        let candidate = dir.join(name.unwrap_or_default());
        // A bundle is another account's folder: a regular file, not a link, never blocking.
        let Ok(Some((f, _))) = place::open_regular(&candidate, u64::MAX) else {
            continue;
        };
        reporter.event(Event::Verifying);
        if let Some(o) = copy_in(req, dest, f, Source::Bundle(candidate.clone()))? {
            record(dest, &o);
            return Ok(Some(o));
        }
        reporter.event(Event::SourceFailed {
            url: candidate.display().to_string(),
            error: "bundle file does not match the expected hash".into(),
        });
    }
    if let Some(cached) = cache_path(req)
        && let Ok(Some((f, len))) = place::open_regular(&cached, u64::MAX)
        && req.expected.size.is_none_or(|s| s == len)
    {
        // Only verified files enter the cache (its name is their hash); copied and hashed
        // again on the way out all the same.
        if let Some(o) = copy_in(req, dest, f, Source::Cache(cached.clone()))? {
            record(dest, &o);
            return Ok(Some(o));
        }
        // Corrupted on disk since: drop it.
        if let (Some(dir), Some(n)) = (cached.parent(), cached.file_name())
            && let Ok(d) = place::Dir::open(dir)
        {
            let _ = d.remove(n);
        }
    }
    Ok(None)
}

/// One name, and this account's or the administrators': no one else can rewrite it.
fn is_ours(f: &std::fs::File) -> bool {
    place::link_count(f).is_ok_and(|n| n == 1) && place::owned_by_us(f).unwrap_or(false)
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
const RECORD_MAX_BYTES: u64 = 4096;

/// Records that the destination holds the bytes `o` describes, as it is now (best effort:
/// without the record the next run re-hashes, nothing worse). Written unsynced: a record
/// torn by a crash fails to parse and costs one re-hash. Only a file of ours is recorded.
pub(super) fn record(dest: &Dest, o: &Outcome) {
    let name = dest.hidden(".verified");
    let stamp = match dest.dir.open_read(&dest.name, u64::MAX) {
        Ok(Some((f, _))) if is_ours(&f) => f.metadata().map(|m| Stamp::of_metadata(&m)),
        _ => Err(std::io::Error::other("not a file of ours")),
    };
    let Ok(stamp) = stamp else {
        let _ = dest.dir.remove(&name);
        return;
    };
    let r = Record {
        sha256: o.sha256.clone(),
        md5: o.md5.clone(),
        size: o.size,
        stamp,
    };
    if stamp.size != o.size
        || dest
            .dir
            .write_atomic(&name, &serde_json::to_vec(&r).expect("plain"), false)
            .is_err()
    {
        let _ = dest.dir.remove(&name);
    }
}

/// The outcome for the destination open as `f` (ours) from its record, when the record
/// is for the hashes `req` expects and the file still has the stamp recorded; None to
/// hash it.
fn recorded(req: &Request, dest: &Dest, f: &std::fs::File) -> Option<Outcome> {
    // The record is input: read bounded, regular, never through a link.
    let bytes = dest
        .dir
        .read(dest.hidden(".verified"), RECORD_MAX_BYTES)
        .ok()??;
    let r: Record = serde_json::from_slice(&bytes).ok()?;
    let wanted = req.expected.sha256.is_some() || req.expected.md5.is_some();
    // The stamp of the handle we hold, not of whatever the name points at now.
    let now = Stamp::of_metadata(&f.metadata().ok()?);
    if !wanted
        || req.expected.sha256.as_ref().is_some_and(|h| *h != r.sha256)
        || req.expected.md5.as_ref().is_some_and(|h| *h != r.md5)
        || req.expected.size.is_some_and(|s| s != r.size)
        || r.stamp.size != r.size
        || now != r.stamp
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
        served: vec![],
    })
}

/// An outcome for the open file `f` if its bytes match what `req` expects.
fn verified(req: &Request, f: std::fs::File, source: Source) -> Option<Outcome> {
    let (d, size) = hash_reader(f).ok()?;
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
        served: vec![],
    })
}

/// Copies what `from` reads into a new file of ours at the destination, hashing the bytes
/// as they are copied (what is checked is what was written, whatever the source does
/// meanwhile): through `.NAME.copy`, created new, renamed over the destination only when
/// the hash matches. None (and nothing left behind) when the bytes are not the file's.
fn copy_in(
    req: &Request,
    dest: &Dest,
    mut from: std::fs::File,
    source: Source,
) -> Result<Option<Outcome>, DownloadError> {
    let tmp = dest.hidden(".copy");
    let shown = dest.shown(&tmp);
    let mut out = dest.dir.create_new(&tmp).map_err(|e| io_err(&shown, e))?;
    let mut h = Hasher::new(true);
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    let copied = loop {
        let k = match from.read(&mut buf) {
            Ok(0) => break true,
            Ok(k) => k,
            // The source is not ours: one we cannot read is just not used.
            Err(_) => break false,
        };
        n += k as u64;
        if req.expected.size.is_some_and(|s| n > s) {
            break false;
        }
        h.update(&buf[..k]);
        if let Err(e) = out.write_all(&buf[..k]) {
            drop(out);
            let _ = dest.dir.remove(&tmp);
            return Err(super::engine::disk_err(&shown, e, n));
        }
    };
    drop(out);
    let d = h.finish();
    if !copied || req.expected.check(&d).is_err() || req.expected.size.is_some_and(|s| s != n) {
        let _ = dest.dir.remove(&tmp);
        return Ok(None);
    }
    dest.dir
        .rename(&tmp, &dest.dir, &dest.name)
        .map_err(|e| io_err(&req.dest, e))?;
    Ok(Some(Outcome {
        path: req.dest.clone(),
        size: n,
        sha256: d.sha256,
        md5: d.md5,
        source,
        resumed_bytes: 0,
        elapsed_ms: 0,
        served: vec![],
    }))
}

/// `CACHE/sha256-<hex>` (or `md5-<hex>`).
pub(super) fn cache_path(req: &Request) -> Option<PathBuf> {
    Some(usable_cache(req)?.join(req.expected.key()?))
}

/// The cache folder, unless we run elevated and another account owns or can write it
/// (a per-user cache under `sudo`): then it is not used at all, neither read nor filled.
fn usable_cache(req: &Request) -> Option<&std::path::Path> {
    let dir = req.cache_dir.as_deref()?;
    let foreign =
        crate::platform::is_elevated() && crate::place::owner_of(dir).is_ok_and(|o| !o.ours);
    (!foreign).then_some(dir)
}

/// Adds a verified download to the cache, as a copy (best effort: a full cache disk, or a
/// cache folder that is a link, is no failure).
pub(super) fn into_cache(req: &Request, dest: &Dest) {
    let (Some(dir), Some(key)) = (usable_cache(req), req.expected.key()) else {
        return;
    };
    let Ok(cache) = place::Dir::create(dir) else {
        return;
    };
    if cache.symlink_metadata(&key).is_ok() {
        return;
    }
    let Ok(Some((mut from, _))) = dest.dir.open_read(&dest.name, u64::MAX) else {
        return;
    };
    let tmp = format!("{key}.part");
    let copied = cache
        .create_new(&tmp)
        .and_then(|mut to| std::io::copy(&mut from, &mut to));
    if copied.is_err() || cache.rename(&tmp, &cache, &key).is_err() {
        let _ = cache.remove(&tmp);
    }
}
