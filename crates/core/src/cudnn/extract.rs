//! Inflating the validated entries into a staging folder, in parallel, hashing in the
//! same pass. Each worker has its own file handle and zip reader; memory stays at one
//! buffer per worker whatever the archive's size.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use super::archive::{Entry, Format, Plan, Refusal};
use super::{CudnnError, Event};
use crate::download::Hasher;

/// An extracted file (or symbolic link, with an empty hash) in staging.
#[derive(Debug, Clone)]
pub struct Staged {
    pub entry: Entry,
    pub path: PathBuf,
    pub sha256: String,
}

/// Extracts every entry of `plan` under `staging/<inner path>`.
pub fn extract(
    plan: &Plan,
    staging: &Path,
    report: &(dyn Fn(Event) + Sync),
) -> Result<Vec<Staged>, CudnnError> {
    // (NVIDIA's Linux tarball is extracted while it is checked: `tarball::open_and_extract`.)
    debug_assert!(plan.format != Format::TarXz);
    // Largest first, so the big DLLs start at once and the workers finish together.
    let mut order: Vec<&Entry> = plan.entries.iter().collect();
    order.sort_by_key(|e| std::cmp::Reverse(e.size));
    let next = AtomicUsize::new(0);
    let done_bytes = AtomicU64::new(0);
    let done_entries = AtomicUsize::new(0);
    let out = Mutex::new(Vec::with_capacity(order.len()));
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 4)
        .min(order.len().max(1));
    let failure: Mutex<Option<CudnnError>> = Mutex::new(None);

    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                let run = || -> Result<(), CudnnError> {
                    let file = File::open(&plan.path).map_err(|e| CudnnError::io(&plan.path, e))?;
                    let mut zip = zip::ZipArchive::new(file).map_err(|e| {
                        refused(
                            plan,
                            Refusal::NotZip {
                                detail: e.to_string(),
                            },
                        )
                    })?;
                    let mut buf = vec![0u8; 256 << 10];
                    loop {
                        if failure.lock().unwrap().is_some() {
                            return Ok(());
                        }
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some(entry) = order.get(i) else {
                            return Ok(());
                        };
                        let staged = one(plan, &mut zip, entry, staging, &mut buf, &done_bytes)?;
                        out.lock().unwrap().push(staged);
                        let n = done_entries.fetch_add(1, Ordering::SeqCst) + 1;
                        report(Event::Extracted {
                            entries: n,
                            total_entries: order.len(),
                            bytes: done_bytes.load(Ordering::SeqCst),
                            total_bytes: plan.total_bytes,
                        });
                    }
                };
                if let Err(e) = run() {
                    failure.lock().unwrap().get_or_insert(e);
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().unwrap() {
        return Err(e);
    }
    let mut staged = out.into_inner().unwrap();
    staged.sort_by_key(|s| s.entry.index);
    Ok(staged)
}

fn refused(plan: &Plan, r: Refusal) -> CudnnError {
    CudnnError::Refused {
        archive: plan.path.clone(),
        refusal: r,
    }
}

fn one(
    plan: &Plan,
    zip: &mut zip::ZipArchive<File>,
    entry: &Entry,
    staging: &Path,
    buf: &mut [u8],
    done: &AtomicU64,
) -> Result<Staged, CudnnError> {
    let corrupt = |detail: String| {
        refused(
            plan,
            Refusal::Corrupt {
                name: entry.name.clone(),
                detail,
            },
        )
    };
    let mut reader = zip
        .by_index(entry.index)
        .map_err(|e| corrupt(e.to_string()))?;
    let path = staging.join(&entry.inner);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| CudnnError::io(dir, e))?;
    }
    let mut f = File::create(&path).map_err(|e| CudnnError::io(&path, e))?;
    let mut h = Hasher::new(false);
    let mut written = 0u64;
    loop {
        // The zip reader checks the CRC when it reaches the end of the entry.
        let n = reader.read(buf).map_err(|e| corrupt(e.to_string()))?;
        if n == 0 {
            break;
        }
        written += n as u64;
        if written > entry.size {
            // Never trust the declared size: a bomb lies about it.
            return Err(corrupt(format!(
                "inflates past its declared {} bytes",
                entry.size
            )));
        }
        h.update(&buf[..n]);
        f.write_all(&buf[..n])
            .map_err(|e| CudnnError::io(&path, e))?;
        done.fetch_add(n as u64, Ordering::Relaxed);
    }
    if written != entry.size {
        return Err(corrupt(format!(
            "{written} bytes instead of {}: truncated",
            entry.size
        )));
    }
    Ok(Staged {
        entry: entry.clone(),
        path,
        sha256: h.finish().sha256,
    })
}
