//! The network part: probe each source, then fetch the file in chunks over several
//! connections (or as one stream when the server ignores ranges), hashing the
//! contiguous prefix as it completes.

use std::collections::VecDeque;
use std::fs::File;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::Poll;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::hash::Hasher;
use super::{
    Cancel, Dest, Digests, DownloadError, Event, Options, Outcome, Progress, Reporter, Request,
    Served, Source, io_err,
};
use crate::error::{cause, chain, text};
use crate::http;
// The parts, by what they do; each shares this module's imports (`use super::*`).
mod chunks;
mod file_io;
mod measure;
mod page;
mod part;
mod progress;
mod sources;
mod stream;

pub(super) use file_io::disk_err;
pub(super) use page::get_text;
pub use page::{Page, get_page, remote_size};

use chunks::*;
use file_io::*;
use part::*;
use progress::*;
use sources::*;
use stream::*;

/// A source that served less than this is not remembered for its speed (too short to say).
pub(super) const MEANINGFUL_BYTES: u64 = 1 << 20;

pub(super) fn fetch(
    req: &Request,
    dest: &Dest,
    sources: &[String],
    opts: &Options,
    reporter: &dyn Reporter,
    cancel: &Cancel,
) -> Result<Outcome, DownloadError> {
    let direct = http::loopback_only(sources);
    let client = http::download_client(opts.connect_timeout, direct)
        .map_err(|e| DownloadError::network(sources[0].clone(), cause(e)))?;
    let rt = http::download_runtime().map_err(|e| io_err(Path::new("tokio runtime"), e))?;
    // A size the user gave that the disk cannot hold: no source can help.
    if let Some(size) = req.expected.size {
        check_space(&req.dest, size)?;
    }
    // Measure, then choose: the order to try the sources in.
    let mut choice = rt.block_on(measure::choose(
        &client, sources, req, opts, reporter, cancel,
    ));

    let mut queue: VecDeque<usize> = choice.order.iter().copied().collect();
    let mut said_http = vec![false; sources.len()];
    let mut failures = Vec::new();
    // Sources whose bytes failed the hash alone: never used again in this download.
    let mut dropped = vec![false; sources.len()];
    // Sources left for a faster one: each goes back to the end of the queue once.
    let mut switched_from = vec![false; sources.len()];
    // Sources that serve no ranges, put off once while a part file can be resumed.
    let mut whole_deferred = vec![false; sources.len()];
    // Who put bytes in the part file in this run, and whether it held some before.
    let mut contributors: Vec<usize> = Vec::new();
    let mut foreign = false;
    // After a file assembled from several sources failed its hash: each source alone, no
    // switching, so the one whose bytes are wrong shows (once per download).
    let mut solo = false;
    let mut served: Vec<Served> = Vec::new();
    loop {
        if cancel.is_cancelled() {
            return Err(DownloadError::Cancelled);
        }
        queue.retain(|&j| !dropped[j]);
        let answered = rt.block_on(first_answer(
            &client,
            sources,
            &mut queue,
            &mut said_http,
            opts,
            reporter,
            cancel,
            &mut failures,
        ))?;
        let Some((i, probe)) = answered else { break };
        let url = &sources[i];
        tracing::debug!(url = %url, "download: source answered");
        // A source that ignores ranges starts the file over: while the part file holds
        // done chunks (another source's, or a run before) and another source waits, it
        // goes last, once — what a switch said it kept stays kept.
        if matches!(probe, Probe::Whole(_))
            && !queue.is_empty()
            && !std::mem::replace(&mut whole_deferred[i], true)
            && dest.dir.symlink_metadata(dest.state()).is_ok()
        {
            tracing::info!(url = %url, "download: serves no ranges; the part file waits for one that does");
            queue.push_back(i);
            continue;
        }
        // The best speed a source still waiting offered: this one must keep up with a
        // third of it.
        // The user's own first source is not left for a faster one.
        let offered = if solo || (opts.pinned_first && i == 0) {
            None
        } else {
            queue.iter().filter_map(|&j| choice.offered[j]).max()
        };
        let run = SourceRun {
            offered,
            ..SourceRun::default()
        };
        let started = Instant::now();
        let result = rt.block_on(from_source(
            &client, url, probe, req, dest, opts, reporter, cancel, &run,
        ));
        let got = run.served.load(Ordering::Relaxed);
        if contributors.is_empty() && run.resumed.load(Ordering::Relaxed) > 0 {
            foreign = true;
        }
        if got > 0 {
            if !contributors.contains(&i) {
                contributors.push(i);
            }
            served.push(Served {
                url: url.clone(),
                bytes: got,
                bytes_per_sec: (got as f64 / started.elapsed().as_secs_f64().max(1e-3)) as u64,
            });
        }
        match result {
            Ok((digests, size, resumed)) => {
                if opts.verify
                    && let Err((algorithm, expected, actual)) = req.expected.check(&digests)
                {
                    // Never hand corrupt bytes on; never resume from them either.
                    discard(dest);
                    let e = DownloadError::HashMismatch {
                        url: url.clone(),
                        algorithm: algorithm.into(),
                        expected,
                        actual,
                    };
                    let mixed = contributors.len() > 1 || foreign;
                    if mixed && !solo {
                        // Several sources made the file: which one lied cannot be told.
                        // Each contributor again, alone, fastest first.
                        solo = true;
                        let mut again: Vec<usize> = contributors
                            .iter()
                            .copied()
                            .filter(|&j| !dropped[j])
                            .collect();
                        again.sort_by_key(|&j| std::cmp::Reverse(choice.offered[j].unwrap_or(0)));
                        queue.retain(|j| !again.contains(j));
                        for &j in again.iter().rev() {
                            queue.push_front(j);
                        }
                        tracing::info!(sources = ?again, "download: an assembled file failed its hash; each source alone");
                        reporter.event(Event::SourceFailed {
                            url: url.clone(),
                            error: chain(&e),
                        });
                    } else if !mixed {
                        // Its bytes alone failed: it serves another file.
                        dropped[i] = true;
                        reporter.event(Event::Dropped {
                            url: url.clone(),
                            error: chain(&e),
                        });
                    } else {
                        reporter.event(Event::SourceFailed {
                            url: url.clone(),
                            error: chain(&e),
                        });
                    }
                    contributors.clear();
                    foreign = false;
                    failures.push(e);
                    continue;
                }
                // A rename replaces a link planted at the name, never writes through it.
                dest.dir
                    .rename(dest.part(), &dest.dir, &dest.name)
                    .map_err(|e| io_err(&req.dest, e))?;
                let _ = dest.dir.remove(dest.state());
                return Ok(Outcome {
                    path: req.dest.clone(),
                    size,
                    sha256: digests.sha256,
                    md5: digests.md5,
                    source: Source::Network(url.clone()),
                    resumed_bytes: resumed,
                    elapsed_ms: 0,
                    served,
                });
            }
            Err(DownloadError::Cancelled) => return Err(DownloadError::Cancelled),
            Err(DownloadError::Slower {
                url: from,
                bytes_per_sec,
                offered,
                kept,
                ..
            }) if !queue.is_empty() => {
                // The part file and its done chunks stay: the next source resumes them.
                let to = sources[queue[0]].clone();
                tracing::info!(from = %from, to = %to, rate = bytes_per_sec, offered, kept, "download: switching to a faster source");
                reporter.event(Event::Switched {
                    from,
                    to,
                    bytes_per_sec,
                    offered,
                    kept,
                });
                // Tried again last, once, and no longer a speed to keep up with.
                choice.offered[i] = None;
                if !std::mem::replace(&mut switched_from[i], true) {
                    queue.push_back(i);
                }
            }
            Err(
                e @ (DownloadError::TooLong { .. }
                | DownloadError::BeyondFreeSpace { .. }
                | DownloadError::TooBigForDisk { .. }),
            ) => {
                // A source that sends (or announces) more than the file: none of its bytes
                // are kept, and the next source is tried.
                discard(dest);
                contributors.clear();
                foreign = false;
                reporter.event(Event::SourceFailed {
                    url: url.clone(),
                    error: chain(&e),
                });
                failures.push(e);
            }
            Err(e @ DownloadError::DiskFull { .. }) | Err(e @ DownloadError::Io { .. }) => {
                return Err(e);
            }
            Err(e) => {
                tracing::info!(url = %url, error = %chain(&e), "download: source failed");
                reporter.event(Event::SourceFailed {
                    url: url.clone(),
                    error: chain(&e),
                });
                failures.push(e);
            }
        }
    }
    // Every source announced more than the disk holds: the disk is what is short.
    let announced = failures.iter().try_fold(u64::MAX, |min, e| match e {
        DownloadError::TooBigForDisk { size, .. } => Some(min.min(*size)),
        _ => None,
    });
    if let (Some(needed), false) = (announced, failures.is_empty()) {
        return Err(DownloadError::DiskFull {
            path: req.dest.clone(),
            needed,
            free: free_space(&req.dest).unwrap_or(0),
        });
    }
    Err(DownloadError::AllSourcesFailed(failures))
}
