//! What needs no network: the destination already right, an offline bundle, the cache.

use std::path::{Path, PathBuf};

use super::{
    DownloadError, Event, Outcome, Reporter, Request, Source, file_name_of, hash_file, io_err,
    part_paths,
};

/// The verified file from `dest`, a bundle or the cache, placed at `dest`; None to download.
pub(super) fn find_local(
    req: &Request,
    reporter: &dyn Reporter,
) -> Result<Option<Outcome>, DownloadError> {
    if req.dest.is_file()
        && let Some(o) = verified(req, &req.dest, Source::Existing)
    {
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
            return Ok(verified(req, &req.dest, Source::Bundle(candidate)));
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
            return Ok(Some(o));
        }
        let _ = std::fs::remove_file(&cached); // corrupted on disk since: drop it
    }
    Ok(None)
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
