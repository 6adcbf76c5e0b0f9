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

/// The part file's companion: which chunks are done, for which expected file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct PartState {
    key: String,
    size: u64,
    chunk: u64,
    done: Vec<bool>,
}

/// Chunk sizes the engine uses (`chunk_size`); a state file naming another is not ours.
const MIN_CHUNK: u64 = 256 << 10;
const MAX_CHUNK: u64 = 8 << 20;
/// The largest file fetched (a CUDA installer is about 4 GB): bounds what a server's or a
/// state file's numbers can make the engine allocate or write.
const MAX_SIZE: u64 = 1 << 40;

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
fn load_state(dest: &Dest, key: &str, size: u64, reporter: &dyn Reporter) -> Option<PartState> {
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
fn discard(dest: &Dest) {
    let _ = dest.dir.remove(dest.part());
    let _ = dest.dir.remove(dest.state());
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Todo,
    Taken,
    Done,
}

/// Chunk bookkeeping shared by the workers and the hasher.
struct Board {
    slots: Mutex<Vec<Slot>>,
    changed: Condvar,
}

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

/// A source's first answer, pending.
type Asking<'a> = Pin<Box<dyn Future<Output = Result<Probe, DownloadError>> + 'a>>;

/// Asks the sources in `queue`, in order, for the file; each source is asked once (one
/// silence is its failure, not one per retry). One that has not answered within
/// `opts.hedge_after` gets the next source started beside it (hedged requests), and the
/// first to answer is used. Sources that fail are reported and kept in `failures`; ones
/// still waiting when another answered go back to the front of the queue, in order.
#[allow(clippy::too_many_arguments)]
async fn first_answer<'a>(
    client: &'a reqwest::Client,
    sources: &'a [String],
    queue: &mut VecDeque<usize>,
    said_http: &mut [bool],
    opts: &'a Options,
    reporter: &'a dyn Reporter,
    cancel: &'a Cancel,
    failures: &mut Vec<DownloadError>,
) -> Result<Option<(usize, Probe)>, DownloadError> {
    let mut running: Vec<(usize, Asking<'a>)> = Vec::new();
    let mut start = |i: usize, running: &mut Vec<(usize, Asking<'a>)>| {
        let url = &sources[i];
        reporter.event(Event::Trying { url: url.clone() });
        // A plain-http source (only ever one the user named) is said once.
        if url.starts_with("http://") && !std::mem::replace(&mut said_http[i], true) {
            reporter.event(Event::InsecureUrl { url: url.clone() });
        }
        running.push((
            i,
            Box::pin(retrying(url, opts, reporter, cancel, 1, move || {
                probe(client, url, opts)
            })),
        ));
    };
    loop {
        if cancel.is_cancelled() {
            return Err(DownloadError::Cancelled);
        }
        if running.is_empty() {
            match queue.pop_front() {
                Some(i) => start(i, &mut running),
                None => return Ok(None),
            }
        }
        let hedge = !queue.is_empty() && !opts.hedge_after.is_zero();
        let mut timer = Box::pin(tokio::time::sleep(opts.hedge_after));
        let next = std::future::poll_fn(|cx| {
            for (k, (_, asking)) in running.iter_mut().enumerate() {
                if let Poll::Ready(r) = asking.as_mut().poll(cx) {
                    return Poll::Ready(Some((k, r)));
                }
            }
            if hedge && timer.as_mut().poll(cx).is_ready() {
                return Poll::Ready(None);
            }
            Poll::Pending
        })
        .await;
        match next {
            // Still silent: the next source beside it.
            None => {
                if let Some(i) = queue.pop_front() {
                    start(i, &mut running);
                }
            }
            Some((k, Ok(probe))) => {
                let (i, _) = running.remove(k);
                for (j, _) in running.into_iter().rev() {
                    queue.push_front(j);
                }
                return Ok(Some((i, probe)));
            }
            Some((_, Err(DownloadError::Cancelled))) => return Err(DownloadError::Cancelled),
            Some((k, Err(e))) => {
                let (i, _) = running.remove(k);
                reporter.event(Event::SourceFailed {
                    url: sources[i].clone(),
                    error: chain(&e),
                });
                failures.push(e);
            }
        }
    }
}

/// What the first request learnt about a source.
enum Probe {
    /// Ranges work; the total size.
    Ranged(u64),
    /// A plain 200: the body streams from byte 0.
    Whole(reqwest::Response),
}

impl Probe {
    /// The size the server told (a 200's length, without reading its body).
    fn size(&self) -> Option<u64> {
        match self {
            Probe::Ranged(total) => Some(*total),
            Probe::Whole(resp) => resp.content_length(),
        }
    }
}

#[allow(clippy::too_many_arguments)]
async fn from_source(
    client: &reqwest::Client,
    url: &str,
    probe: Probe,
    req: &Request,
    dest: &Dest,
    opts: &Options,
    reporter: &dyn Reporter,
    cancel: &Cancel,
) -> Result<(Digests, u64, u64), DownloadError> {
    // The server's size against the expected one and the free space, before a byte is
    // written: a source that announces what cannot be is that source's failure.
    if let Some(got) = probe.size() {
        if let Some(want) = req.expected.size
            && want != got
        {
            return Err(DownloadError::SizeMismatch {
                url: url.into(),
                expected: want,
                actual: got,
            });
        }
        // A part file being resumed already holds its share of the disk.
        let held = dest
            .dir
            .symlink_metadata(dest.part())
            .map_or(0, |m| if m.is_file() { m.len() } else { 0 });
        if let Some(free) = free_space(&req.dest)
            && got > free.saturating_add(held)
        {
            return Err(DownloadError::TooBigForDisk {
                url: url.into(),
                size: got,
                free,
            });
        }
    }
    match probe {
        Probe::Ranged(size) => ranged(client, url, size, req, dest, opts, reporter, cancel).await,
        Probe::Whole(resp) => whole(client, url, resp, req, dest, opts, reporter, cancel).await,
    }
}

/// `timeout`: the limit reqwest was given (the connect timeout, or a page's whole time).
fn http_error(url: &str, e: reqwest::Error, timeout: Duration) -> DownloadError {
    if let Some(refused) = http::refused_redirect(&e) {
        return DownloadError::Redirect {
            url: url.into(),
            source: refused,
        };
    }
    if e.is_timeout() {
        return DownloadError::Stalled {
            url: url.into(),
            seconds: secs(timeout),
        };
    }
    DownloadError::network(url, cause(e))
}

fn secs(d: Duration) -> u64 {
    d.as_secs_f64().ceil().max(1.0) as u64
}

/// Sends a request and waits for the answer's headers: DNS, connect, TLS and every header
/// within the connect and first-byte timeouts, so a server that accepts and never answers
/// (or stops mid-headers) is a stall like any other.
async fn send(
    rb: reqwest::RequestBuilder,
    url: &str,
    opts: &Options,
) -> Result<reqwest::Response, DownloadError> {
    let limit = opts.connect_timeout + opts.first_byte_timeout;
    let resp = match tokio::time::timeout(limit, rb.send()).await {
        Err(_) => {
            return Err(DownloadError::Stalled {
                url: url.into(),
                seconds: secs(limit),
            });
        }
        Ok(r) => r.map_err(|e| http_error(url, e, opts.connect_timeout))?,
    };
    landed(url, &resp, false)?;
    Ok(resp)
}

/// Checks where a response came from after its redirects (the client's policy already
/// refused each hop; this is the second look): an https source answered over https, and,
/// for a page (`same_host`), by the host asked.
fn landed(url: &str, resp: &reqwest::Response, same_host: bool) -> Result<(), DownloadError> {
    let Ok(asked) = reqwest::Url::parse(url) else {
        return Ok(());
    };
    http::redirect_allowed(&asked, &asked, resp.url(), same_host).map_err(|source| {
        DownloadError::Redirect {
            url: url.into(),
            source,
        }
    })
}

/// `Range: bytes=0-0`: a 206 tells the size and that ranges work; a 200 is the whole body.
async fn probe(
    client: &reqwest::Client,
    url: &str,
    opts: &Options,
) -> Result<Probe, DownloadError> {
    let resp = send(client.get(url).header("Range", "bytes=0-0"), url, opts).await?;
    let status = resp.status().as_u16();
    match status {
        206 => {
            let total = resp
                .headers()
                .get("content-range")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.rsplit('/').next())
                .and_then(|t| t.trim().parse::<u64>().ok());
            match total {
                Some(t) => Ok(Probe::Ranged(t)),
                // A 206 without a usable total: fetch it whole instead.
                None => {
                    let resp = send(client.get(url), url, opts).await?;
                    ok_status(url, &resp)?;
                    Ok(Probe::Whole(resp))
                }
            }
        }
        200 => Ok(Probe::Whole(resp)),
        _ => Err(DownloadError::Http {
            url: url.into(),
            status,
        }),
    }
}

fn ok_status(url: &str, resp: &reqwest::Response) -> Result<(), DownloadError> {
    let status = resp.status().as_u16();
    if (200..300).contains(&status) {
        Ok(())
    } else {
        Err(DownloadError::Http {
            url: url.into(),
            status,
        })
    }
}

/// Runs `attempt` until it succeeds, fails for good, or the retries are spent; at most
/// `silent_tries` attempts end in silence (a stall or a timeout).
async fn retrying<T, F, Fut>(
    url: &str,
    opts: &Options,
    reporter: &dyn Reporter,
    cancel: &Cancel,
    silent_tries: u32,
    mut attempt: F,
) -> Result<T, DownloadError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, DownloadError>>,
{
    let mut n = 0;
    let mut silent = 0;
    loop {
        if cancel.is_cancelled() {
            return Err(DownloadError::Cancelled);
        }
        match attempt().await {
            Ok(v) => return Ok(v),
            Err(e @ DownloadError::Stalled { .. }) if silent + 1 >= silent_tries => {
                return Err(e);
            }
            Err(e) if e.transient() && n + 1 < opts.retries => {
                n += 1;
                if matches!(e, DownloadError::Stalled { .. }) {
                    silent += 1;
                }
                let wait = opts.backoff * 2u32.pow(n.min(6) - 1);
                reporter.event(Event::Retry {
                    url: url.into(),
                    attempt: n,
                    error: chain(&e),
                    wait_ms: wait.as_millis() as u64,
                });
                tokio::time::sleep(wait).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Reads the next body chunk, or fails after `stall` without a byte.
async fn next_chunk(
    resp: &mut reqwest::Response,
    url: &str,
    stall: Duration,
) -> Result<Option<bytes::Bytes>, DownloadError> {
    match tokio::time::timeout(stall, resp.chunk()).await {
        Err(_) => Err(DownloadError::Stalled {
            url: url.into(),
            seconds: stall.as_secs().max(1),
        }),
        Ok(r) => r.map_err(|e| http_error(url, e, stall)),
    }
}

fn chunk_size(size: u64, connections: usize) -> u64 {
    (size / (connections as u64 * 8)).clamp(MIN_CHUNK, MAX_CHUNK)
}

/// Progress accounting shared by workers and the ticker.
struct Meter {
    per_conn: Vec<AtomicU64>,
    /// Every byte received in this run, never taken back (for the floor rate).
    received: AtomicU64,
    base: u64,
    total: Option<u64>,
    started: Instant,
}

impl Meter {
    fn snapshot(&self, window: &mut (Instant, u64), rate: &mut f64) -> Progress {
        let per_connection: Vec<u64> = self
            .per_conn
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .collect();
        let fetched: u64 = per_connection.iter().sum();
        let done = self.base + fetched;
        let now = Instant::now();
        let dt = now.duration_since(window.0).as_secs_f64();
        if dt >= 0.2 {
            let inst = (fetched - window.1) as f64 / dt;
            // An exponential average: steady numbers on a bursty link.
            *rate = if *rate == 0.0 {
                inst
            } else {
                0.7 * *rate + 0.3 * inst
            };
            *window = (now, fetched);
        } else if *rate == 0.0 {
            *rate = fetched as f64 / self.started.elapsed().as_secs_f64().max(1e-3);
        }
        let eta_secs = self
            .total
            .filter(|_| *rate > 0.0)
            .map(|t| t.saturating_sub(done) as f64 / *rate);
        Progress {
            done,
            total: self.total,
            bytes_per_sec: *rate,
            eta_secs,
            per_connection,
        }
    }
}

/// Fails the source when it averages fewer than `opts.min_speed` bytes per second over
/// `opts.min_speed_window` (a trickle never trips the per-read stall timeout); pending
/// for ever when the floor is off.
async fn watchdog(meter: Arc<Meter>, url: &str, opts: &Options) -> DownloadError {
    let window = opts.min_speed_window;
    if opts.min_speed == 0 || window.is_zero() {
        return std::future::pending().await;
    }
    let step = (window / 20).clamp(Duration::from_millis(20), Duration::from_secs(1));
    // (when, bytes received by then): the oldest is about `window` ago.
    let mut samples = std::collections::VecDeque::from([(
        Instant::now(),
        meter.received.load(Ordering::Relaxed),
    )]);
    loop {
        tokio::time::sleep(step).await;
        let now = Instant::now();
        let got = meter.received.load(Ordering::Relaxed);
        samples.push_back((now, got));
        while samples.len() > 2 && now.duration_since(samples[1].0) >= window {
            samples.pop_front();
        }
        let (t0, b0) = samples[0];
        let span = now.duration_since(t0);
        if span >= window {
            let rate = got.saturating_sub(b0) as f64 / span.as_secs_f64();
            if rate < opts.min_speed as f64 {
                return DownloadError::TooSlow {
                    url: url.into(),
                    bytes_per_sec: rate as u64,
                    floor: opts.min_speed,
                    seconds: secs(span),
                };
            }
        }
    }
}

/// Emits a progress event every 250 ms until dropped.
async fn ticker(meter: Arc<Meter>, reporter: &dyn Reporter) {
    let mut window = (Instant::now(), 0);
    let mut rate = 0.0;
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        reporter.event(Event::Progress(meter.snapshot(&mut window, &mut rate)));
    }
}

#[allow(clippy::too_many_arguments)]
async fn ranged(
    client: &reqwest::Client,
    url: &str,
    size: u64,
    req: &Request,
    dest: &Dest,
    opts: &Options,
    reporter: &dyn Reporter,
    cancel: &Cancel,
) -> Result<(Digests, u64, u64), DownloadError> {
    let part = dest.shown(dest.part());
    let key = req.expected.key().unwrap_or_default();
    let connections = req.connections.clamp(1, 16);
    let chunk = chunk_size(size, connections);
    let n_chunks = size.div_ceil(chunk).max(1) as usize;

    // Resume only a part file made for the same expected bytes, by a state that adds up.
    let state = match load_state(dest, &key, size, reporter) {
        Some(s) => s,
        None => {
            check_space(&req.dest, size)?;
            if size > MAX_SIZE {
                return Err(DownloadError::TooLong {
                    url: url.into(),
                    expected: MAX_SIZE,
                });
            }
            // Created new: whatever is at the name (a planted link) is removed first.
            let f = dest
                .dir
                .create_new(dest.part())
                .map_err(|e| io_err(&part, e))?;
            f.set_len(size).map_err(|e| disk_err(&part, e, size))?;
            PartState {
                key,
                size,
                chunk,
                done: vec![false; n_chunks],
            }
        }
    };
    let chunk = state.chunk;
    // Read and written through a handle that is ours: not a link, regular, one name.
    let file = Arc::new(
        dest.dir
            .open_rw(dest.part())
            .map_err(|e| io_err(&part, e))?,
    );
    let resumed = state.done.iter().filter(|d| **d).count() as u64 * chunk;
    let board = Arc::new(Board {
        slots: Mutex::new(
            state
                .done
                .iter()
                .map(|d| if *d { Slot::Done } else { Slot::Todo })
                .collect(),
        ),
        changed: Condvar::new(),
    });
    let state = Arc::new(Mutex::new(state));
    let meter = Arc::new(Meter {
        per_conn: (0..connections).map(|_| AtomicU64::new(0)).collect(),
        received: AtomicU64::new(0),
        base: resumed.min(size),
        total: Some(size),
        started: Instant::now(),
    });

    // The hasher follows the contiguous prefix of done chunks, reading them back.
    let failed = Arc::new(AtomicUsize::new(0));
    let hasher = opts.verify.then(|| {
        let (file, board, failed) = (file.clone(), board.clone(), failed.clone());
        let with_md5 = req.expected.md5.is_some();
        std::thread::spawn(move || hash_prefix(&file, &board, &failed, size, chunk, with_md5))
    });

    let worker = |conn: usize| {
        let (file, board, state, meter) =
            (file.clone(), board.clone(), state.clone(), meter.clone());
        async move {
            loop {
                if cancel.is_cancelled() {
                    return Err(DownloadError::Cancelled);
                }
                let Some(i) = take_chunk(&board) else {
                    return Ok(());
                };
                let start = i as u64 * chunk;
                let end = (start + chunk).min(size) - 1;
                let got = retrying(url, opts, reporter, cancel, opts.retries, || {
                    fetch_range(client, url, start, end, &file, &meter, conn, opts, cancel)
                })
                .await;
                if let Err(e) = got {
                    board.slots.lock().unwrap()[i] = Slot::Todo;
                    return Err(e);
                }
                {
                    let mut s = state.lock().unwrap();
                    s.done[i] = true;
                    save_state(dest, &s);
                }
                board.slots.lock().unwrap()[i] = Slot::Done;
                board.changed.notify_all();
            }
        }
    };
    let workers = futures_join_all((0..connections).map(worker).collect());
    let result = tokio::select! {
        r = workers => r,
        e = watchdog(meter.clone(), url, opts) => Err(e),
        _ = ticker(meter.clone(), reporter) => unreachable!(),
    };
    let mut window = (Instant::now(), 0);
    reporter.event(Event::Progress(meter.snapshot(&mut window, &mut 0.0)));
    if let Err(e) = result {
        failed.store(1, Ordering::SeqCst);
        board.changed.notify_all();
        if let Some(h) = hasher {
            let _ = h.join();
        }
        return Err(e);
    }
    // No fsync: a file that a crash leaves damaged fails the hash check on reuse.
    reporter.event(Event::Verifying);
    let digests = match hasher {
        Some(h) => h
            .join()
            .map_err(|_| io_err(&part, std::io::Error::other("hasher panicked")))??,
        None => Digests {
            sha256: String::new(),
            md5: String::new(),
        },
    };
    Ok((digests, size, resumed.min(size)))
}

/// Runs all futures to completion; the first error wins (the others are dropped).
async fn futures_join_all<F: std::future::Future<Output = Result<(), DownloadError>>>(
    futs: Vec<F>,
) -> Result<(), DownloadError> {
    let mut futs: Vec<std::pin::Pin<Box<F>>> = futs.into_iter().map(Box::pin).collect();
    std::future::poll_fn(move |cx| {
        let mut i = 0;
        while i < futs.len() {
            match futs[i].as_mut().poll(cx) {
                std::task::Poll::Ready(Ok(())) => {
                    futs.swap_remove(i);
                }
                std::task::Poll::Ready(Err(e)) => return std::task::Poll::Ready(Err(e)),
                std::task::Poll::Pending => i += 1,
            }
        }
        if futs.is_empty() {
            std::task::Poll::Ready(Ok(()))
        } else {
            std::task::Poll::Pending
        }
    })
    .await
}

fn take_chunk(board: &Board) -> Option<usize> {
    let mut slots = board.slots.lock().unwrap();
    let i = slots.iter().position(|s| *s == Slot::Todo)?;
    slots[i] = Slot::Taken;
    Some(i)
}

fn save_state(dest: &Dest, s: &PartState) {
    // Written after every chunk: not synced (a state lost to a crash is discarded and the
    // download starts over), but like every state file never torn, never through a link.
    let _ = dest.dir.write_atomic(
        dest.state(),
        &serde_json::to_vec(s).unwrap_or_default(),
        false,
    );
}

#[allow(clippy::too_many_arguments)]
async fn fetch_range(
    client: &reqwest::Client,
    url: &str,
    start: u64,
    end: u64,
    file: &File,
    meter: &Meter,
    conn: usize,
    opts: &Options,
    cancel: &Cancel,
) -> Result<(), DownloadError> {
    let counter = &meter.per_conn[conn];
    let mut resp = send(
        client
            .get(url)
            .header("Range", format!("bytes={start}-{end}")),
        url,
        opts,
    )
    .await?;
    let status = resp.status().as_u16();
    if status != 206 {
        // A server that answered the probe with ranges must keep doing so.
        return Err(DownloadError::Http {
            url: url.into(),
            status,
        });
    }
    let cr = resp
        .headers()
        .get("content-range")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !cr.starts_with(&format!("bytes {start}-")) {
        return Err(DownloadError::network(
            url,
            text(format!("asked for bytes {start}-{end}, got \"{cr}\"")),
        ));
    }
    let asked = end + 1 - start;
    let too_long = || DownloadError::TooLong {
        url: url.into(),
        expected: asked,
    };
    if resp.content_length().is_some_and(|n| n > asked) {
        return Err(too_long());
    }
    let mut pos = start;
    let mut got = 0u64;
    while let Some(bytes) = next_chunk(&mut resp, url, opts.stall_timeout).await? {
        if cancel.is_cancelled() {
            counter.fetch_sub(got, Ordering::Relaxed);
            return Err(DownloadError::Cancelled);
        }
        meter
            .received
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        // Never a byte past the range asked for: a longer answer is refused.
        if bytes.len() as u64 > end + 1 - pos {
            counter.fetch_sub(got, Ordering::Relaxed);
            return Err(too_long());
        }
        write_at(file, &bytes, pos).map_err(|e| disk_err(Path::new("part file"), e, 0))?;
        let n = bytes.len() as u64;
        pos += n;
        got += n;
        counter.fetch_add(n, Ordering::Relaxed);
        if pos > end {
            break;
        }
    }
    if pos <= end {
        // The connection closed early: do not count the bytes of a chunk that will be redone.
        counter.fetch_sub(got, Ordering::Relaxed);
        return Err(DownloadError::network(
            url,
            text(format!("connection closed at byte {pos} of {start}-{end}")),
        ));
    }
    // With no length announced, the body must end here.
    if resp.content_length().is_none()
        && next_chunk(&mut resp, url, opts.stall_timeout)
            .await?
            .is_some_and(|b| !b.is_empty())
    {
        counter.fetch_sub(got, Ordering::Relaxed);
        return Err(too_long());
    }
    Ok(())
}

fn hash_prefix(
    file: &File,
    board: &Board,
    failed: &AtomicUsize,
    size: u64,
    chunk: u64,
    with_md5: bool,
) -> Result<Digests, DownloadError> {
    let mut h = Hasher::new(with_md5);
    let mut buf = vec![0u8; chunk as usize];
    let n = size.div_ceil(chunk).max(1) as usize;
    for i in 0..n {
        {
            let mut slots = board.slots.lock().unwrap();
            while slots[i] != Slot::Done {
                if failed.load(Ordering::SeqCst) != 0 {
                    return Err(DownloadError::Cancelled);
                }
                slots = board
                    .changed
                    .wait_timeout(slots, Duration::from_millis(200))
                    .unwrap()
                    .0;
            }
        }
        let start = i as u64 * chunk;
        let len = (chunk.min(size - start)) as usize;
        read_at(file, &mut buf[..len], start).map_err(|e| io_err(Path::new("part file"), e))?;
        h.update(&buf[..len]);
    }
    Ok(h.finish())
}

/// How far a single stream may go: the file's size when known (`--size`, else the
/// server's length), else what the disk can spare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    Size(u64),
    Free(u64),
}

impl Bound {
    fn new(expected: Option<u64>, content_length: Option<u64>, free: Option<u64>) -> Bound {
        match expected.or(content_length) {
            Some(n) => Bound::Size(n),
            // Leave the disk a little (1/16, at most 256 MiB) rather than fill it.
            None => Bound::Free(free.map_or(MAX_SIZE, |f| f - (f / 16).min(256 << 20))),
        }
    }

    fn limit(self) -> u64 {
        match self {
            Bound::Size(n) | Bound::Free(n) => n,
        }
    }

    fn exceeded(self, url: &str) -> DownloadError {
        match self {
            Bound::Size(expected) => DownloadError::TooLong {
                url: url.into(),
                expected,
            },
            Bound::Free(free) => DownloadError::BeyondFreeSpace {
                url: url.into(),
                free,
            },
        }
    }
}

/// The server ignores ranges: one stream from byte 0, hashed as it arrives. A retry
/// starts over (there is nothing to resume from).
#[allow(clippy::too_many_arguments)]
async fn whole(
    client: &reqwest::Client,
    url: &str,
    first: reqwest::Response,
    req: &Request,
    dest: &Dest,
    opts: &Options,
    reporter: &dyn Reporter,
    cancel: &Cancel,
) -> Result<(Digests, u64, u64), DownloadError> {
    let part = dest.shown(dest.part());
    let _ = dest.dir.remove(dest.state());
    let total = req.expected.size.or(first.content_length());
    if let Some(t) = total {
        check_space(&req.dest, t)?;
    }
    let bound = Bound::new(
        req.expected.size,
        first.content_length(),
        free_space(&req.dest),
    );
    let meter = Arc::new(Meter {
        per_conn: vec![AtomicU64::new(0)],
        received: AtomicU64::new(0),
        base: 0,
        total,
        started: Instant::now(),
    });
    let mut first = Some(first);
    let run = retrying(url, opts, reporter, cancel, opts.retries, || {
        let resp = first.take();
        let meter = meter.clone();
        let part = part.clone();
        async move {
            let mut resp = match resp {
                Some(r) => r,
                None => {
                    let r = send(client.get(url), url, opts).await?;
                    ok_status(url, &r)?;
                    r
                }
            };
            meter.per_conn[0].store(0, Ordering::Relaxed);
            // Created new each try, never through a link planted at the name.
            let mut f = dest
                .dir
                .create_new(dest.part())
                .map_err(|e| io_err(&part, e))?;
            let mut h = Hasher::new(req.expected.md5.is_some());
            let mut n = 0u64;
            while let Some(bytes) = next_chunk(&mut resp, url, opts.stall_timeout).await? {
                if cancel.is_cancelled() {
                    return Err(DownloadError::Cancelled);
                }
                meter
                    .received
                    .fetch_add(bytes.len() as u64, Ordering::Relaxed);
                // Never a byte past the bound: an endless body stops here.
                if bytes.len() as u64 > bound.limit() - n {
                    return Err(bound.exceeded(url));
                }
                std::io::Write::write_all(&mut f, &bytes)
                    .map_err(|e| disk_err(&part, e, total.unwrap_or(0)))?;
                if opts.verify {
                    h.update(&bytes);
                }
                n += bytes.len() as u64;
                meter.per_conn[0].fetch_add(bytes.len() as u64, Ordering::Relaxed);
            }
            if total.is_some_and(|t| t != n) {
                return Err(DownloadError::network(
                    url,
                    text(format!("connection closed after {n} bytes")),
                ));
            }
            Ok((h.finish(), n))
        }
    });
    let (digests, n) = tokio::select! {
        r = run => r?,
        e = watchdog(meter.clone(), url, opts) => return Err(e),
        _ = ticker(meter.clone(), reporter) => unreachable!(),
    };
    Ok((digests, n, 0))
}

/// Free bytes where `dest` goes. Debug builds let a test pretend the disk is small
/// (`CUDA_SETUP_TEST_FREE_SPACE`, in bytes); release builds ignore it.
fn free_space(dest: &Path) -> Option<u64> {
    #[cfg(debug_assertions)]
    if let Some(n) = std::env::var("CUDA_SETUP_TEST_FREE_SPACE")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return Some(n);
    }
    crate::platform::free_space(dest.parent().unwrap_or(Path::new("."))).ok()
}

/// Refuses early when the target volume cannot hold the file.
fn check_space(dest: &Path, needed: u64) -> Result<(), DownloadError> {
    match free_space(dest) {
        Some(free) if free < needed => Err(DownloadError::DiskFull {
            path: dest.to_path_buf(),
            needed,
            free,
        }),
        _ => Ok(()),
    }
}

pub(super) fn disk_err(path: &Path, e: std::io::Error, needed: u64) -> DownloadError {
    if crate::platform::is_disk_full(&e) {
        DownloadError::DiskFull {
            path: path.to_path_buf(),
            needed,
            free: 0,
        }
    } else {
        io_err(path, e)
    }
}

#[cfg(unix)]
fn write_at(f: &File, buf: &[u8], off: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(f, buf, off)
}

#[cfg(windows)]
fn write_at(f: &File, mut buf: &[u8], mut off: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_write(f, buf, off)?;
        buf = &buf[n..];
        off += n as u64;
    }
    Ok(())
}

#[cfg(unix)]
fn read_at(f: &File, buf: &mut [u8], off: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, off)
}

#[cfg(windows)]
fn read_at(f: &File, mut buf: &mut [u8], mut off: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_read(f, buf, off)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf = &mut buf[n..];
        off += n as u64;
    }
    Ok(())
}

/// A small text file (a checksum list, a manifest): the first source that answers.
pub(super) fn get_text(sources: &[String], opts: &Options) -> Result<String, DownloadError> {
    get_page(sources, None, opts).map(|p| p.text)
}

/// A fetched page: where it ended up (after redirects), its media type and its text.
#[derive(Debug, Clone)]
pub struct Page {
    pub url: String,
    pub content_type: String,
    pub text: String,
}

/// The largest page read into memory (PyPI's JSON for torch is a few MiB; a bigger page
/// is that source's failure).
const MAX_PAGE: u64 = 32 << 20;

/// Like `get_text`, with an `Accept` header and the response's URL and media type (a
/// package index answers JSON or HTML, and relative links resolve against the final URL).
pub fn get_page(
    sources: &[String],
    accept: Option<&str>,
    opts: &Options,
) -> Result<Page, DownloadError> {
    // Pages carry hashes: their redirects stay https and on the host named.
    let client = http::page_client(opts.connect_timeout, opts.stall_timeout).map_err(|e| {
        DownloadError::network(sources.first().cloned().unwrap_or_default(), cause(e))
    })?;
    let rt = http::fetch_runtime().map_err(|e| io_err(Path::new("tokio runtime"), e))?;
    let mut failures = Vec::new();
    for url in sources {
        let got = rt.block_on(retrying(url, opts, &(), &Cancel::default(), 2, || async {
            let mut req = client.get(url);
            if let Some(a) = accept {
                req = req.header(reqwest::header::ACCEPT, a);
            }
            let mut resp = req
                .send()
                .await
                .map_err(|e| http_error(url, e, opts.stall_timeout))?;
            landed(url, &resp, true)?;
            ok_status(url, &resp)?;
            let final_url = resp.url().to_string();
            let content_type = resp
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_ascii_lowercase();
            // Bounded in time by the client's timeout, and in size here.
            let mut body = Vec::new();
            while let Some(b) = resp
                .chunk()
                .await
                .map_err(|e| http_error(url, e, opts.stall_timeout))?
            {
                if (body.len() + b.len()) as u64 > MAX_PAGE {
                    return Err(DownloadError::TooLong {
                        url: url.clone(),
                        expected: MAX_PAGE,
                    });
                }
                body.extend_from_slice(&b);
            }
            let text = String::from_utf8_lossy(&body).into_owned();
            Ok(Page {
                url: final_url,
                content_type,
                text,
            })
        }));
        match got {
            Ok(p) => return Ok(p),
            Err(e) => failures.push(e),
        }
    }
    Err(DownloadError::AllSourcesFailed(failures))
}

/// The size of the file at `url` (a one-byte ranged GET, which servers answer where a
/// HEAD is refused), or None when the server does not tell within `timeout`. Used only to
/// size the pre-flight disk check; the download itself checks again.
pub fn remote_size(url: &str, timeout: Duration) -> Option<u64> {
    let client = http::fetch_client(timeout, timeout).ok()?;
    let rt = http::fetch_runtime().ok()?;
    let opts = Options {
        connect_timeout: timeout,
        first_byte_timeout: timeout,
        ..Options::default()
    };
    rt.block_on(async { probe(&client, url, &opts).await.ok()?.size() })
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

    #[test]
    fn a_stream_is_bounded_by_the_size_else_the_free_space() {
        assert_eq!(Bound::new(Some(10), None, Some(1 << 30)), Bound::Size(10));
        assert_eq!(Bound::new(None, Some(20), None), Bound::Size(20));
        // No size known: the free space, less a margin (1/16, at most 256 MiB).
        assert_eq!(Bound::new(None, None, Some(1600)), Bound::Free(1500));
        assert_eq!(
            Bound::new(None, None, Some(100 << 30)),
            Bound::Free((100 << 30) - (256 << 20))
        );
        assert_eq!(Bound::new(None, None, None), Bound::Free(MAX_SIZE));
        assert!(
            Bound::Size(10)
                .exceeded("u")
                .to_string()
                .contains("more than the 10 bytes expected")
        );
    }
}
