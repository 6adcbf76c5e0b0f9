//! The network part: probe each source, then fetch the file in chunks over several
//! connections (or as one stream when the server ignores ranges), hashing the
//! contiguous prefix as it completes.

use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::hash::Hasher;
use super::{
    Cancel, Digests, DownloadError, Event, Options, Outcome, Progress, Reporter, Request, Source,
    io_err, part_paths,
};

/// The part file's companion: which chunks are done, for which expected file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct PartState {
    key: String,
    size: u64,
    chunk: u64,
    done: Vec<bool>,
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
    sources: &[String],
    opts: &Options,
    reporter: &dyn Reporter,
    cancel: &Cancel,
) -> Result<Outcome, DownloadError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let loopback_only = sources
        .iter()
        .all(|u| u.contains("://127.0.0.1") || u.contains("://localhost"));
    let mut builder = reqwest::Client::builder()
        .user_agent(concat!("cuda-setup/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(opts.connect_timeout)
        .pool_max_idle_per_host(16);
    if loopback_only {
        builder = builder.no_proxy();
    }
    let client = builder.build().map_err(|e| DownloadError::Network {
        url: sources[0].clone(),
        detail: e.to_string(),
    })?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| io_err(Path::new("tokio runtime"), e))?;
    if let Some(dir) = req.dest.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    }

    let mut failures = Vec::new();
    for url in sources {
        if cancel.is_cancelled() {
            return Err(DownloadError::Cancelled);
        }
        reporter.event(Event::Trying { url: url.clone() });
        if url.starts_with("http://") {
            reporter.event(Event::InsecureUrl { url: url.clone() });
        }
        let result = rt.block_on(from_source(&client, url, req, opts, reporter, cancel));
        match result {
            Ok((digests, size, resumed)) => {
                let (part, state) = part_paths(&req.dest);
                if opts.verify
                    && let Err((algorithm, expected, actual)) = req.expected.check(&digests)
                {
                    // Never hand corrupt bytes on; never resume from them either.
                    let _ = std::fs::remove_file(&part);
                    let _ = std::fs::remove_file(&state);
                    let e = DownloadError::HashMismatch {
                        url: url.clone(),
                        algorithm: algorithm.into(),
                        expected,
                        actual,
                    };
                    reporter.event(Event::SourceFailed {
                        url: url.clone(),
                        error: e.to_string(),
                    });
                    failures.push(e);
                    continue;
                }
                std::fs::rename(&part, &req.dest).map_err(|e| io_err(&req.dest, e))?;
                let _ = std::fs::remove_file(&state);
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
            Err(e @ DownloadError::DiskFull { .. }) | Err(e @ DownloadError::Io { .. }) => {
                return Err(e);
            }
            Err(e) => {
                reporter.event(Event::SourceFailed {
                    url: url.clone(),
                    error: e.to_string(),
                });
                failures.push(e);
            }
        }
    }
    Err(DownloadError::AllSourcesFailed(failures))
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

async fn from_source(
    client: &reqwest::Client,
    url: &str,
    req: &Request,
    opts: &Options,
    reporter: &dyn Reporter,
    cancel: &Cancel,
) -> Result<(Digests, u64, u64), DownloadError> {
    let probe = retrying(url, opts, reporter, cancel, || probe(client, url)).await?;
    // The server's size against the expected one, before a byte is written.
    if let (Some(want), Some(got)) = (req.expected.size, probe.size())
        && want != got
    {
        return Err(DownloadError::SizeMismatch {
            url: url.into(),
            expected: want,
            actual: got,
        });
    }
    match probe {
        Probe::Ranged(size) => ranged(client, url, size, req, opts, reporter, cancel).await,
        Probe::Whole(resp) => whole(client, url, resp, req, opts, reporter, cancel).await,
    }
}

fn http_error(url: &str, e: reqwest::Error) -> DownloadError {
    if e.is_timeout() {
        return DownloadError::Stalled {
            url: url.into(),
            seconds: 0,
        };
    }
    let mut detail = e.to_string();
    let mut src = std::error::Error::source(&e);
    while let Some(s) = src {
        detail.push_str(": ");
        detail.push_str(&s.to_string());
        src = s.source();
    }
    DownloadError::Network {
        url: url.into(),
        detail,
    }
}

/// `Range: bytes=0-0`: a 206 tells the size and that ranges work; a 200 is the whole body.
async fn probe(client: &reqwest::Client, url: &str) -> Result<Probe, DownloadError> {
    let resp = client
        .get(url)
        .header("Range", "bytes=0-0")
        .send()
        .await
        .map_err(|e| http_error(url, e))?;
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
                    let resp = client
                        .get(url)
                        .send()
                        .await
                        .map_err(|e| http_error(url, e))?;
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

/// Runs `attempt` until it succeeds, fails for good, or the retries are spent.
async fn retrying<T, F, Fut>(
    url: &str,
    opts: &Options,
    reporter: &dyn Reporter,
    cancel: &Cancel,
    mut attempt: F,
) -> Result<T, DownloadError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, DownloadError>>,
{
    let mut n = 0;
    loop {
        if cancel.is_cancelled() {
            return Err(DownloadError::Cancelled);
        }
        match attempt().await {
            Ok(v) => return Ok(v),
            Err(e) if e.transient() && n + 1 < opts.retries => {
                n += 1;
                let wait = opts.backoff * 2u32.pow(n.min(6) - 1);
                reporter.event(Event::Retry {
                    url: url.into(),
                    attempt: n,
                    error: e.to_string(),
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
        Ok(r) => r.map_err(|e| http_error(url, e)),
    }
}

fn chunk_size(size: u64, connections: usize) -> u64 {
    (size / (connections as u64 * 8)).clamp(256 << 10, 8 << 20)
}

/// Progress accounting shared by workers and the ticker.
struct Meter {
    per_conn: Vec<AtomicU64>,
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
    opts: &Options,
    reporter: &dyn Reporter,
    cancel: &Cancel,
) -> Result<(Digests, u64, u64), DownloadError> {
    let (part, state_path) = part_paths(&req.dest);
    let key = req.expected.key().unwrap_or_default();
    let connections = req.connections.clamp(1, 16);
    let chunk = chunk_size(size, connections);
    let n_chunks = size.div_ceil(chunk).max(1) as usize;

    // Resume only a part file made for the same expected bytes.
    let saved: Option<PartState> = std::fs::read(&state_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let state = match saved {
        Some(s)
            if s.key == key
                && s.size == size
                && part.is_file()
                && std::fs::metadata(&part).is_ok_and(|m| m.len() == size) =>
        {
            s
        }
        _ => {
            check_space(&req.dest, size)?;
            let f = File::create(&part).map_err(|e| io_err(&part, e))?;
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
    let file = Arc::new(
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&part)
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
        let (file, board, state, meter, state_path) = (
            file.clone(),
            board.clone(),
            state.clone(),
            meter.clone(),
            state_path.clone(),
        );
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
                let got = retrying(url, opts, reporter, cancel, || {
                    fetch_range(
                        client,
                        url,
                        start,
                        end,
                        &file,
                        &meter.per_conn[conn],
                        opts.stall_timeout,
                        cancel,
                    )
                })
                .await;
                if let Err(e) = got {
                    board.slots.lock().unwrap()[i] = Slot::Todo;
                    return Err(e);
                }
                {
                    let mut s = state.lock().unwrap();
                    s.done[i] = true;
                    save_state(&state_path, &s);
                }
                board.slots.lock().unwrap()[i] = Slot::Done;
                board.changed.notify_all();
            }
        }
    };
    let workers = futures_join_all((0..connections).map(worker).collect());
    let result = tokio::select! {
        r = workers => r,
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

fn save_state(path: &Path, s: &PartState) {
    // Write-then-rename: a kill mid-write leaves the previous state, never a torn one.
    let tmp = path.with_extension("json.tmp");
    if std::fs::write(&tmp, serde_json::to_vec(s).unwrap_or_default()).is_ok() {
        let _ = std::fs::rename(&tmp, path);
    }
}

#[allow(clippy::too_many_arguments)]
async fn fetch_range(
    client: &reqwest::Client,
    url: &str,
    start: u64,
    end: u64,
    file: &File,
    counter: &AtomicU64,
    stall: Duration,
    cancel: &Cancel,
) -> Result<(), DownloadError> {
    let mut resp = client
        .get(url)
        .header("Range", format!("bytes={start}-{end}"))
        .send()
        .await
        .map_err(|e| http_error(url, e))?;
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
        return Err(DownloadError::Network {
            url: url.into(),
            detail: format!("asked for bytes {start}-{end}, got \"{cr}\""),
        });
    }
    let mut pos = start;
    let mut got = 0u64;
    while let Some(bytes) = next_chunk(&mut resp, url, stall).await? {
        if cancel.is_cancelled() {
            counter.fetch_sub(got, Ordering::Relaxed);
            return Err(DownloadError::Cancelled);
        }
        let n = (bytes.len() as u64).min(end + 1 - pos);
        write_at(file, &bytes[..n as usize], pos)
            .map_err(|e| disk_err(Path::new("part file"), e, 0))?;
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
        return Err(DownloadError::Network {
            url: url.into(),
            detail: format!("connection closed at byte {pos} of {start}-{end}"),
        });
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

/// The server ignores ranges: one stream from byte 0, hashed as it arrives. A retry
/// starts over (there is nothing to resume from).
async fn whole(
    client: &reqwest::Client,
    url: &str,
    first: reqwest::Response,
    req: &Request,
    opts: &Options,
    reporter: &dyn Reporter,
    cancel: &Cancel,
) -> Result<(Digests, u64, u64), DownloadError> {
    let (part, state) = part_paths(&req.dest);
    let _ = std::fs::remove_file(&state);
    let total = first.content_length();
    if let Some(t) = total {
        check_space(&req.dest, t)?;
    }
    let meter = Arc::new(Meter {
        per_conn: vec![AtomicU64::new(0)],
        base: 0,
        total,
        started: Instant::now(),
    });
    let mut first = Some(first);
    let run = retrying(url, opts, reporter, cancel, || {
        let resp = first.take();
        let meter = meter.clone();
        let part = part.clone();
        async move {
            let mut resp = match resp {
                Some(r) => r,
                None => {
                    let r = client
                        .get(url)
                        .send()
                        .await
                        .map_err(|e| http_error(url, e))?;
                    ok_status(url, &r)?;
                    r
                }
            };
            meter.per_conn[0].store(0, Ordering::Relaxed);
            let mut f = File::create(&part).map_err(|e| io_err(&part, e))?;
            let mut h = Hasher::new(req.expected.md5.is_some());
            let mut n = 0u64;
            while let Some(bytes) = next_chunk(&mut resp, url, opts.stall_timeout).await? {
                if cancel.is_cancelled() {
                    return Err(DownloadError::Cancelled);
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
                return Err(DownloadError::Network {
                    url: url.into(),
                    detail: format!("connection closed after {n} bytes"),
                });
            }
            Ok((h.finish(), n))
        }
    });
    let (digests, n) = tokio::select! {
        r = run => r?,
        _ = ticker(meter.clone(), reporter) => unreachable!(),
    };
    Ok((digests, n, 0))
}

/// Refuses early when the target volume cannot hold the file.
fn check_space(dest: &Path, needed: u64) -> Result<(), DownloadError> {
    match crate::platform::free_space(dest.parent().unwrap_or(Path::new("."))) {
        Ok(free) if free < needed => Err(DownloadError::DiskFull {
            path: dest.to_path_buf(),
            needed,
            free,
        }),
        _ => Ok(()),
    }
}

fn disk_err(path: &Path, e: std::io::Error, needed: u64) -> DownloadError {
    if e.kind() == std::io::ErrorKind::StorageFull {
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

/// Like `get_text`, with an `Accept` header and the response's URL and media type (a
/// package index answers JSON or HTML, and relative links resolve against the final URL).
pub fn get_page(
    sources: &[String],
    accept: Option<&str>,
    opts: &Options,
) -> Result<Page, DownloadError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .user_agent(concat!("cuda-setup/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(opts.connect_timeout)
        .timeout(opts.stall_timeout)
        .build()
        .map_err(|e| DownloadError::Network {
            url: sources.first().cloned().unwrap_or_default(),
            detail: e.to_string(),
        })?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| io_err(Path::new("tokio runtime"), e))?;
    let mut failures = Vec::new();
    for url in sources {
        let got = rt.block_on(retrying(url, opts, &(), &Cancel::default(), || async {
            let mut req = client.get(url);
            if let Some(a) = accept {
                req = req.header(reqwest::header::ACCEPT, a);
            }
            let resp = req.send().await.map_err(|e| http_error(url, e))?;
            ok_status(url, &resp)?;
            let final_url = resp.url().to_string();
            let content_type = resp
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_ascii_lowercase();
            let text = resp.text().await.map_err(|e| http_error(url, e))?;
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
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .user_agent(concat!("cuda-setup/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(timeout)
        .timeout(timeout)
        .build()
        .ok()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    rt.block_on(async { probe(&client, url).await.ok()?.size() })
}
