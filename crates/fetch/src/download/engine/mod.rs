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
    Source, io_err,
};
use crate::error::{cause, chain, text};
use crate::http;
// The parts, by what they do; each shares this module's imports (`use super::*`).
mod chunks;
mod file_io;
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

    let mut queue: VecDeque<usize> = (0..sources.len()).collect();
    let mut said_http = vec![false; sources.len()];
    let mut failures = Vec::new();
    loop {
        if cancel.is_cancelled() {
            return Err(DownloadError::Cancelled);
        }
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
        let result = rt.block_on(from_source(
            &client, url, probe, req, dest, opts, reporter, cancel,
        ));
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
                    reporter.event(Event::SourceFailed {
                        url: url.clone(),
                        error: chain(&e),
                    });
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
                });
            }
            Err(DownloadError::Cancelled) => return Err(DownloadError::Cancelled),
            Err(
                e @ (DownloadError::TooLong { .. }
                | DownloadError::BeyondFreeSpace { .. }
                | DownloadError::TooBigForDisk { .. }),
            ) => {
                // A source that sends (or announces) more than the file: none of its bytes
                // are kept, and the next source is tried.
                discard(dest);
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
