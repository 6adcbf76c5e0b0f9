//! Inflating the validated entries into a staging folder, in parallel, hashing in the
//! same pass. Each worker has its own file handle and zip reader; memory stays at one
//! buffer per worker whatever the archive's size.

use std::fs::File;
use std::io::{BufReader, Read, Write};

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};

use super::archive::{Entry, Format, Plan, Refusal};
use super::{CudnnError, Event};
use crate::download::Hasher;
use crate::place;

/// Each read from the archive: large, so that one system call brings a MiB, not the
/// 8 KiB the zip reader's decoder asks for.
const READ_BLOCK: usize = 1 << 20;
/// Each block inflated, then hashed and written: small enough to stay in the core's
/// cache between the two (1 MiB blocks cost more CPU time on NVIDIA's 9.27 zip).
const IO_BLOCK: usize = 256 << 10;
/// Blocks per entry in flight between inflating and writing (memory: BLOCKS × IO_BLOCK
/// per worker).
const BLOCKS: usize = 4;

/// An extracted file (or symbolic link, with an empty hash) in staging, at its
/// `entry.inner` below the staging folder.
#[derive(Debug, Clone)]
pub struct Staged {
    pub entry: Entry,
    pub sha256: String,
}

/// Extracts every entry of `plan` under `staging/<inner path>`: each file created new
/// relative to the staging folder held open, no folder on the way followed if a link.
pub fn extract(
    plan: &Plan,
    staging: &place::Dir,
    report: &(dyn Fn(Event) + Sync),
) -> Result<Vec<Staged>, CudnnError> {
    // (NVIDIA's Linux tarball is extracted while it is checked: `tarball::open_and_extract`.)
    debug_assert!(plan.format != Format::TarXz);
    // The folders first, one thread: the workers then only open them.
    let folders: std::collections::BTreeSet<&str> = plan
        .entries
        .iter()
        .filter_map(|e| e.inner.rsplit_once('/').map(|(d, _)| d))
        .collect();
    for f in folders {
        staging
            .sub(f, true)
            .map_err(|e| CudnnError::io(&staging.display(f), e))?;
    }
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
                    // The zip reader's decoder pulls 8 KiB at a time: read the archive in
                    // large blocks under it (one system call per MiB, not per 8 KiB).
                    let file = BufReader::with_capacity(READ_BLOCK, file);
                    let mut zip = zip::ZipArchive::new(file).map_err(|e| {
                        refused(
                            plan,
                            Refusal::NotZip {
                                detail: e.to_string(),
                            },
                        )
                    })?;
                    loop {
                        if failure.lock().unwrap().is_some() {
                            return Ok(());
                        }
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some(entry) = order.get(i) else {
                            return Ok(());
                        };
                        let staged = one(plan, &mut zip, entry, staging, &done_bytes)?;
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

/// Inflates one entry into staging. Two threads share it: this one inflates (and the zip
/// reader checks the CRC), a second hashes and writes what the first hands it, block by
/// block. Hashing costs about half as much as inflating: done in line, it made the
/// largest DLL (231 MB of the 627 MB in cuDNN 9.27) the run's critical path.
fn one(
    plan: &Plan,
    zip: &mut zip::ZipArchive<BufReader<File>>,
    entry: &Entry,
    staging: &place::Dir,
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
    let path = staging.display(&entry.inner);
    let mut f = staging
        .create_new(&entry.inner)
        .map_err(|e| CudnnError::io(&path, e))?;
    // Filled blocks go to the writer; emptied ones come back (at most BLOCKS in all).
    let (full_tx, full_rx) = mpsc::sync_channel::<(Vec<u8>, usize)>(BLOCKS - 1);
    let (empty_tx, empty_rx) = mpsc::channel::<Vec<u8>>();
    std::thread::scope(|s| {
        let path = &path;
        let writer = s.spawn(move || -> Result<String, CudnnError> {
            let mut h = Hasher::new(false);
            for (block, n) in full_rx {
                h.update(&block[..n]);
                f.write_all(&block[..n])
                    .map_err(|e| CudnnError::io(path, e))?;
                done.fetch_add(n as u64, Ordering::Relaxed);
                let _ = empty_tx.send(block);
            }
            Ok(h.finish().sha256)
        });
        let mut made = 0;
        let mut written = 0u64;
        let inflated = 'blocks: loop {
            let mut block = match empty_rx.try_recv() {
                Ok(b) => b,
                Err(_) if made < BLOCKS => {
                    made += 1;
                    vec![0u8; IO_BLOCK]
                }
                // All blocks are with the writer (or it stopped): wait for one back.
                Err(_) => match empty_rx.recv() {
                    Ok(b) => b,
                    Err(_) => break 'blocks Ok(false),
                },
            };
            // The zip reader checks the CRC when it reaches the end of the entry. The
            // decoder hands out a few KiB per call: fill the block before passing it on.
            let mut n = 0;
            while n < block.len() {
                match reader.read(&mut block[n..]) {
                    Ok(0) => break,
                    Ok(k) => n += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => break 'blocks Err(corrupt(e.to_string())),
                }
            }
            if n == 0 {
                break Ok(true);
            }
            written += n as u64;
            if written > entry.size {
                // Never trust the declared size: a bomb lies about it.
                break Err(corrupt(format!(
                    "inflates past its declared {} bytes",
                    entry.size
                )));
            }
            if full_tx.send((block, n)).is_err() {
                // The writer failed: its error is the one to report.
                break Ok(false);
            }
        };
        drop(full_tx);
        let hashed = writer
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        // A damaged archive is said first; then the writer's failure (a full drive).
        let complete = inflated?;
        let sha256 = hashed?;
        // (Not complete with the writer's Ok cannot happen: it ends only when told.)
        if !complete || written != entry.size {
            return Err(corrupt(format!(
                "{written} bytes instead of {}: truncated",
                entry.size
            )));
        }
        Ok(Staged {
            entry: entry.clone(),
            sha256,
        })
    })
}
