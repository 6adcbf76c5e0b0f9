//! The download engine: every file verified before use, resumable, segmented over
//! several connections when the server allows ranges, with mirrors, a hash-keyed cache
//! and offline bundles checked before any network.
//!
//! The bytes go to `DEST.part` (with `DEST.part.json` recording which chunks are done
//! and for which expected hash), are hashed as the contiguous prefix completes, and
//! `DEST.part` is renamed to `DEST` only after the hash matches.
//!
//! Every file beside `DEST` (the part file, its state, the `.NAME.verified` record, the
//! final name) is reached through the destination folder held open as a
//! [`crate::place::Dir`]: never through a link someone planted, and a folder that is itself
//! a link is refused ([`DownloadError::UnsafePlace`]). A file taken from a bundle, the
//! cache, or a destination that another name or account shares becomes ours by copying
//! (hashed while copied), never by linking.

mod engine;
pub use engine::{Page, get_page, remote_size};
mod hash;
mod memory;
pub mod published;
mod store;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::Serialize;

pub use hash::{Digests, Hasher, hash_file};

/// What the file must be. At least one hash is required: nothing unverified is used.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Expected {
    pub sha256: Option<String>,
    pub md5: Option<String>,
    pub size: Option<u64>,
}

impl Expected {
    /// The key naming the file in the cache and the part-file state.
    pub fn key(&self) -> Option<String> {
        self.sha256
            .as_ref()
            .map(|h| format!("sha256-{h}"))
            .or_else(|| self.md5.as_ref().map(|h| format!("md5-{h}")))
    }

    /// Checks `d` against every expected hash; the first mismatch.
    pub fn check(&self, d: &Digests) -> Result<(), (&'static str, String, String)> {
        if let Some(want) = &self.sha256
            && *want != d.sha256
        {
            return Err(("sha256", want.clone(), d.sha256.clone()));
        }
        if let Some(want) = &self.md5
            && *want != d.md5
        {
            return Err(("md5", want.clone(), d.md5.clone()));
        }
        Ok(())
    }
}

/// One download.
#[derive(Debug, Clone)]
pub struct Request {
    /// The canonical URL (NVIDIA's, or the user's `--url`).
    pub url: String,
    /// Base URLs tried before `url`, in order; the canonical path is appended to each
    /// (`http://lan/mirror` + `/compute/cuda/…`).
    pub mirrors: Vec<String>,
    pub expected: Expected,
    pub dest: PathBuf,
    pub connections: usize,
    pub cache_dir: Option<PathBuf>,
    /// Offline bundles, checked (by file name, then hash) before any network.
    pub bundle_dirs: Vec<PathBuf>,
    /// The user gave an http:// URL or mirror: allowed, with a warning. Built-in URLs are
    /// https only.
    pub allow_http: bool,
}

/// Tunables; the defaults suit a slow, flaky link. Every wait on the network is bounded
/// by one of them, so a download always ends: a silent or trickling source is left for the
/// next one.
#[derive(Debug, Clone)]
pub struct Options {
    /// Attempts per chunk (or per stream) on one source before trying the next.
    pub retries: u32,
    pub backoff: Duration,
    /// No byte of the body for this long: the connection is dropped and retried.
    pub stall_timeout: Duration,
    pub connect_timeout: Duration,
    /// An answer's headers must all have arrived within the connect timeout plus this
    /// (DNS, connect, TLS included): a server that accepts and says nothing, or stops
    /// mid-headers, is dropped like a stall. A source that never answers costs this once,
    /// not once per retry: the next one is tried.
    pub first_byte_timeout: Duration,
    /// A source that has not answered (its headers) within this gets the next source
    /// started beside it, and the first to answer is used (hedged requests): a silent
    /// mirror costs this, not a whole first-byte timeout. Zero: one source at a time.
    pub hedge_after: Duration,
    /// A source averaging fewer bytes per second than this over `min_speed_window` is
    /// left for the next one (the part file is kept, so the next source resumes). 0: off.
    pub min_speed: u64,
    pub min_speed_window: Duration,
    /// Hash while downloading (off only to measure what hashing costs).
    pub verify: bool,
    /// With two or more network sources, each is probed at once (a connect and a short
    /// ranged read) for at most this long and the fastest is tried first; cut short as
    /// soon as one is clearly ahead. Zero: no probe, the sources keep their order.
    pub measure_budget: Duration,
    /// The first source is the user's own choice: it stays first whatever the probe says
    /// (the others are still ordered by speed behind it).
    pub pinned_first: bool,
    /// Where the speeds measured (and achieved) per source host are remembered
    /// (`<state>/sources.json`): recent ones order the next download without a probe.
    /// None: nothing is read or written.
    pub memory: Option<PathBuf>,
    /// A ranged download whose source delivers less than a third of what a waiting source
    /// offered in the probe, over this long, moves its remaining chunks to that source
    /// (the chunks already done are kept). Zero: never.
    pub failover_window: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            retries: 5,
            backoff: Duration::from_millis(500),
            stall_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(15),
            first_byte_timeout: Duration::from_secs(30),
            hedge_after: Duration::from_secs(5),
            min_speed: 1024,
            min_speed_window: Duration::from_secs(60),
            verify: true,
            measure_budget: Duration::from_secs(3),
            pinned_first: false,
            memory: None,
            failover_window: Duration::from_secs(5),
        }
    }
}

/// Where the verified file came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "from", rename_all = "snake_case")]
pub enum Source {
    /// `dest` already held the right bytes.
    Existing,
    Bundle(PathBuf),
    Cache(PathBuf),
    Network(String),
}

#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub path: PathBuf,
    pub size: u64,
    pub sha256: String,
    pub md5: String,
    pub source: Source,
    /// Bytes that were already in the part file when this run started.
    pub resumed_bytes: u64,
    pub elapsed_ms: u64,
    /// The network sources that served bytes of the file in this run, in the order they
    /// served (several after a failover).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub served: Vec<Served>,
}

/// What one source served in a download.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Served {
    pub url: String,
    /// Bytes of the file it delivered (chunks completed).
    pub bytes: u64,
    pub bytes_per_sec: u64,
}

/// One source's result in the probe before a download.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measurement {
    pub url: String,
    /// `host[:port]`: what is shown and remembered.
    pub host: String,
    #[serde(flatten)]
    pub result: Measured,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Measured {
    /// Measured now.
    Speed { bytes_per_sec: u64 },
    /// Measured by an earlier download, `age_secs` ago (no probe this time).
    Remembered { bytes_per_sec: u64, age_secs: u64 },
    /// No answer, an error, or not within the budget: tried last, not dropped.
    Failed { why: String },
    /// Serves another file (its size or first bytes differ): not used in this run.
    Dropped { why: String },
}

impl Measured {
    /// Bytes per second, when measured (now or before).
    pub fn rate(&self) -> Option<u64> {
        match self {
            Measured::Speed { bytes_per_sec } | Measured::Remembered { bytes_per_sec, .. } => {
                Some(*bytes_per_sec)
            }
            Measured::Failed { .. } | Measured::Dropped { .. } => None,
        }
    }
}

/// Progress, for the GUI's bar and the CLI's status line.
#[derive(Debug, Clone, Serialize)]
pub struct Progress {
    pub done: u64,
    pub total: Option<u64>,
    pub bytes_per_sec: f64,
    pub eta_secs: Option<f64>,
    /// Bytes each connection has fetched in this run.
    pub per_connection: Vec<u64>,
    /// The host (`host[:port]`) serving the bytes now; None for a copy from a bundle or
    /// the cache.
    pub source: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Trying {
        url: String,
    },
    InsecureUrl {
        url: String,
    },
    Progress(Progress),
    /// The sources' speeds (probed now, or remembered), fastest first: the order they are
    /// tried in.
    Measured {
        results: Vec<Measurement>,
        /// The first source stays first: the user chose it.
        pinned: bool,
    },
    /// A source left for this download: it serves other bytes than the file (its size,
    /// its first bytes, or its whole file's hash differ).
    Dropped {
        url: String,
        error: String,
    },
    /// The serving source became much slower than another: the remaining chunks move to
    /// `to`; the `kept` bytes already done stay.
    Switched {
        from: String,
        to: String,
        bytes_per_sec: u64,
        offered: u64,
        kept: u64,
    },
    Retry {
        url: String,
        attempt: u32,
        error: String,
        wait_ms: u64,
    },
    SourceFailed {
        url: String,
        error: String,
    },
    /// `FILE.part.json` made no sense (hand-edited, another tool's, damaged): the part
    /// file and its state were deleted and the download starts over.
    PartDiscarded {
        path: PathBuf,
        reason: String,
    },
    Verifying,
    Done {
        source: Source,
    },
    /// Another cuda-setup is downloading the same file (or cache entry): this one waits
    /// for it, then uses its verified file.
    Waiting(crate::lock::Busy),
}

impl Event {
    /// The line a front end shows for this event, in the user's language (None for
    /// progress, verifying and done). A source's own error is a parameter the sentence
    /// does not show: front ends put it after "details" ([`crate::i18n::details`]).
    pub fn message(&self) -> Option<crate::message::Message> {
        Some(match self {
            Event::Trying { url } => crate::msg!("download_trying", url = url),
            Event::InsecureUrl { url } => crate::msg!("download_insecure", url = url),
            Event::Retry {
                attempt,
                error,
                wait_ms,
                ..
            } => crate::msg!(
                "download_retry",
                attempt = attempt,
                seconds = format!("{:.1}", *wait_ms as f64 / 1000.0)
            )
            .with("error", error),
            Event::SourceFailed { url, error } => {
                crate::msg!("download_source_failed", url = url).with("error", error)
            }
            Event::PartDiscarded { path, reason } => {
                crate::msg!("download_discarded", path = path.display()).with("reason", reason)
            }
            Event::Waiting(b) => b.message("download_waiting"),
            Event::Measured { results, pinned } => memory::measured_line(results, *pinned)?,
            Event::Dropped { url, error } => {
                crate::msg!("download_source_dropped", url = url).with("error", error)
            }
            Event::Switched {
                from,
                to,
                bytes_per_sec,
                offered,
                kept,
            } => crate::msg!(
                "download_switched",
                from = host_of(from),
                to = host_of(to),
                rate = crate::units::rate(*bytes_per_sec as f64),
                offered = crate::units::rate(*offered as f64),
                kept = crate::units::bytes(*kept)
            ),
            Event::Progress(_) | Event::Verifying | Event::Done { .. } => return None,
        })
    }
}

/// Receives events (from worker threads: must be Send + Sync).
pub trait Reporter: Send + Sync {
    fn event(&self, event: Event);
}

impl Reporter for () {
    fn event(&self, _: Event) {}
}

impl<F: Fn(Event) + Send + Sync> Reporter for F {
    fn event(&self, event: Event) {
        self(event)
    }
}

/// A cancel token; the engine checks it between chunks of bytes.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Why a download failed. Causes (the HTTP client's, the file system's) are kept as
/// sources: render one with [`crate::error::chain`].
#[derive(Debug, Clone, thiserror::Error)]
pub enum DownloadError {
    #[error("no SHA-256 or MD5 is known for this file, so it cannot be verified")]
    NoHash,
    #[error("{url}: not an https URL (only URLs you give yourself may be http)")]
    InsecureUrl { url: String },
    #[error(
        "{url}: {algorithm} mismatch: expected {expected}, got {actual} (the file was deleted)"
    )]
    HashMismatch {
        url: String,
        algorithm: String,
        expected: String,
        actual: String,
    },
    #[error("{url}: the server says the file is {actual} bytes, expected {expected}")]
    SizeMismatch {
        url: String,
        expected: u64,
        actual: u64,
    },
    #[error("{url}: HTTP {status}")]
    Http { url: String, status: u16 },
    #[error("{url}")]
    Network {
        url: String,
        #[source]
        source: crate::error::Cause,
    },
    /// The source redirected where it may not send us (https to http; a page to another
    /// host): that source's failure, the next one is tried.
    #[error("{url}")]
    Redirect {
        url: String,
        #[source]
        source: crate::http::RedirectRefused,
    },
    /// The source announced more bytes than the disk has free: that source's failure (a
    /// lying mirror must not end the download); when every source says so, [`DiskFull`].
    ///
    /// [`DiskFull`]: DownloadError::DiskFull
    #[error("{url}: announces {size} bytes, more than the {free} bytes free; this source is left")]
    TooBigForDisk { url: String, size: u64, free: u64 },
    /// The destination's folder (`--out`'s parent, the downloads folder) is a symbolic
    /// link or junction: nothing is written through it.
    #[error("{}: {why}", .path.display())]
    UnsafePlace { path: PathBuf, why: String },
    #[error("{url}: no data for {seconds} s")]
    Stalled { url: String, seconds: u64 },
    #[error(
        "{url}: too slow: {bytes_per_sec} bytes/s over the last {seconds} s, below the floor of {floor} bytes/s"
    )]
    TooSlow {
        url: String,
        bytes_per_sec: u64,
        floor: u64,
        seconds: u64,
    },
    /// Much slower than another source offered: the remaining chunks move there (the
    /// `kept` bytes already done stay). Not a fault of the file: the source may be tried
    /// again later in the same download.
    #[error(
        "{url}: {bytes_per_sec} bytes/s over the last {seconds} s, under a third of the {offered} bytes/s another source offered; the remaining chunks moved there"
    )]
    Slower {
        url: String,
        bytes_per_sec: u64,
        offered: u64,
        seconds: u64,
        kept: u64,
    },
    #[error(
        "{url}: sent more than the {expected} bytes expected; refused (the partial file was deleted)"
    )]
    TooLong { url: String, expected: u64 },
    #[error(
        "{url}: sent more than the {free} bytes free on the disk, with no size known; refused (the partial file was deleted)"
    )]
    BeyondFreeSpace { url: String, free: u64 },
    #[error("every source failed:\n{}", .0.iter().map(|e| format!("  - {}", crate::error::chain(e))).collect::<Vec<_>>().join("\n"))]
    AllSourcesFailed(Vec<DownloadError>),
    #[error("not enough free space for {path}: {needed} bytes needed, {free} free")]
    DiskFull {
        path: PathBuf,
        needed: u64,
        free: u64,
    },
    #[error("{}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: crate::error::IoCause,
    },
    #[error("cancelled (the partial download is kept and resumes next time)")]
    Cancelled,
}

/// What went wrong with a download, by what the user can do about it (a step's failure
/// kind is built from it: `download_network`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DownloadKind {
    Network,
    Missing,
    Corrupt,
    DiskFull,
    Cancelled,
    Other,
}

impl DownloadError {
    /// An I/O error on `path`.
    pub fn io(path: &Path, e: std::io::Error) -> Self {
        DownloadError::Io {
            path: path.to_path_buf(),
            source: crate::error::IoCause::new(e),
        }
    }

    /// A network failure of `url`: the HTTP client's error, or what we saw (`text`).
    pub fn network(url: impl Into<String>, cause: crate::error::Cause) -> Self {
        DownloadError::Network {
            url: url.into(),
            source: cause,
        }
    }

    /// What went wrong, by what a user-facing text and a fleet's script key on.
    pub fn kind(&self) -> DownloadKind {
        match self {
            DownloadError::Network { .. }
            | DownloadError::Redirect { .. }
            | DownloadError::Stalled { .. }
            | DownloadError::TooSlow { .. }
            | DownloadError::Slower { .. } => DownloadKind::Network,
            DownloadError::Http {
                status: 403 | 404 | 410,
                ..
            } => DownloadKind::Missing,
            DownloadError::Http { .. } => DownloadKind::Network,
            DownloadError::HashMismatch { .. }
            | DownloadError::SizeMismatch { .. }
            | DownloadError::TooLong { .. } => DownloadKind::Corrupt,
            DownloadError::DiskFull { .. }
            | DownloadError::BeyondFreeSpace { .. }
            | DownloadError::TooBigForDisk { .. } => DownloadKind::DiskFull,
            DownloadError::Cancelled => DownloadKind::Cancelled,
            // Several sources: bad bytes anywhere, or every one missing the file, say more
            // than the network failures beside them.
            DownloadError::AllSourcesFailed(all) => {
                let kinds: Vec<DownloadKind> = all.iter().map(|e| e.kind()).collect();
                if kinds.contains(&DownloadKind::Corrupt) {
                    DownloadKind::Corrupt
                } else if kinds.contains(&DownloadKind::DiskFull) {
                    DownloadKind::DiskFull
                } else if !kinds.is_empty() && kinds.iter().all(|k| *k == DownloadKind::Missing) {
                    DownloadKind::Missing
                } else {
                    DownloadKind::Network
                }
            }
            DownloadError::NoHash
            | DownloadError::InsecureUrl { .. }
            | DownloadError::UnsafePlace { .. }
            | DownloadError::Io { .. } => DownloadKind::Other,
        }
    }

    /// Worth retrying on the same source.
    fn transient(&self) -> bool {
        match self {
            // A name that does not resolve will not resolve in a second either (hyper
            // reports it only as text, somewhere in the cause chain).
            DownloadError::Network { source, .. } => {
                !crate::error::chain(source.as_ref()).contains("dns error")
            }
            DownloadError::Stalled { .. } => true,
            DownloadError::Http { status, .. } => {
                *status >= 500 || *status == 429 || *status == 408
            }
            _ => false,
        }
    }

    /// What to do about it, for the command line's `hint:` line (it may name flags; the
    /// wizard says its own words for the failure's kind).
    pub fn hint(&self) -> crate::message::Message {
        use crate::msg;
        match self {
            DownloadError::NoHash => msg!("hint_download_no_hash"),
            DownloadError::InsecureUrl { .. } => msg!("hint_download_insecure_url"),
            DownloadError::Redirect { .. } => msg!("hint_download_redirect"),
            DownloadError::UnsafePlace { .. } => msg!("hint_download_place"),
            DownloadError::TooSlow { .. } => msg!("hint_download_too_slow"),
            DownloadError::Io { .. } => msg!("hint_download_again"),
            // The rest by what went wrong (every source's failure counts).
            _ => match self.kind() {
                DownloadKind::Network => msg!("hint_download_network"),
                DownloadKind::Missing => msg!("hint_download_missing"),
                DownloadKind::Corrupt => msg!("hint_download_corrupt"),
                DownloadKind::DiskFull => msg!("hint_download_disk_full"),
                DownloadKind::Cancelled => msg!("hint_download_cancelled"),
                DownloadKind::Other => msg!("hint_download_again"),
            },
        }
    }
}

/// The sources in the order they are tried: mirrors first, then the canonical URL.
pub fn sources(req: &Request) -> Vec<String> {
    source_urls(&req.url, &req.mirrors)
}

/// `url` on each mirror, then `url` itself. A mirror entry that already names the same
/// file (a whole URL ending in `url`'s file name: a PyTorch mirror whose folders differ
/// from download.pytorch.org's) is used as it is.
pub fn source_urls(url: &str, mirrors: &[String]) -> Vec<String> {
    let path = url_path(url);
    let name = file_name_of(url);
    let mut out: Vec<String> = mirrors
        .iter()
        .map(|m| {
            if !name.is_empty() && same_name(file_name_of(m), name) && url_path(m) != "/" {
                m.clone()
            } else {
                format!("{}{path}", m.trim_end_matches('/'))
            }
        })
        .collect();
    out.push(url.to_string());
    let mut seen = std::collections::HashSet::new();
    out.retain(|u| seen.insert(u.clone()));
    out
}

/// Two file names from URLs are the same file: compared percent-decoded (PyTorch's index
/// writes `torch-2.7.1%2Bcu126-…`, a mirror's may write `+`).
fn same_name(a: &str, b: &str) -> bool {
    fn decoded(s: &str) -> Vec<u8> {
        let b = s.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if b[i] == b'%'
                && let (Some(h), Some(l)) = (
                    b.get(i + 1).copied().and_then(hex),
                    b.get(i + 2).copied().and_then(hex),
                )
            {
                out.push((h * 16 + l) as u8);
                i += 3;
            } else {
                out.push(b[i]);
                i += 1;
            }
        }
        out
    }
    decoded(a) == decoded(b)
}

/// `https://host/a/b?c` → `/a/b?c`.
fn url_path(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.find('/').map_or("/", |i| &rest[i..])
}

/// `host[:port]` of a URL (what a user reads as "the source", and the memory's key).
pub fn host_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    // Never a user name or password from the URL.
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, h)| h)
        .to_ascii_lowercase()
}

/// The file name a URL names (for bundle look-ups).
pub fn file_name_of(url: &str) -> &str {
    let path = url_path(url);
    let path = path.split(['?', '#']).next().unwrap_or(path);
    path.rsplit('/').next().unwrap_or(path)
}

/// Downloads (or finds) the file `req` describes and verifies it.
pub fn download(
    req: &Request,
    opts: &Options,
    reporter: &dyn Reporter,
    cancel: &Cancel,
) -> Result<Outcome, DownloadError> {
    if req.expected.sha256.is_none() && req.expected.md5.is_none() {
        return Err(DownloadError::NoHash);
    }
    download_signed(req, opts, reporter, cancel)
}

/// [`download`] of a file whose publisher gives no hash but signs it (NVIDIA's driver
/// installers, Authenticode): a hash is checked when given, the size when known, and the
/// caller checks the signature before the file is used. Without a hash nothing is
/// cached (the cache is keyed by hash); a part file still resumes.
pub fn download_signed(
    req: &Request,
    opts: &Options,
    reporter: &dyn Reporter,
    cancel: &Cancel,
) -> Result<Outcome, DownloadError> {
    let started = std::time::Instant::now();
    let sources = sources(req);
    for url in &sources {
        if url.starts_with("http://") {
            if !req.allow_http {
                return Err(DownloadError::InsecureUrl { url: url.clone() });
            }
        } else if !url.starts_with("https://") {
            return Err(DownloadError::InsecureUrl { url: url.clone() });
        }
    }
    // The destination's folder, held open and not a link: before the lock, which lives in it.
    let dest = Dest::open(&req.dest)?;
    // One writer per file: a second download of the same destination (or the same cache
    // entry) waits for the first, then finds its verified file. Destination, then cache:
    // always in that order.
    let _dest = lock_file(&req.dest, &req.dest, reporter, cancel)?;
    let _cache = match store::cache_path(req) {
        Some(c) => Some(lock_file(&c, &req.dest, reporter, cancel)?),
        None => None,
    };
    crate::lock::test_pause("download_locked");
    tracing::debug!(dest = %req.dest.display(), sources = ?sources, "download: started");
    if let Some(found) = store::find_local(req, &dest, reporter)? {
        tracing::info!(dest = %req.dest.display(), source = ?found.source, "download: found locally");
        return Ok(Outcome {
            elapsed_ms: started.elapsed().as_millis() as u64,
            ..found
        });
    }
    let mut outcome = engine::fetch(req, &dest, &sources, opts, reporter, cancel)?;
    // What each source achieved, for the next download's order.
    if let Some(path) = &opts.memory {
        let speeds: Vec<(String, u64)> = outcome
            .served
            .iter()
            .filter(|s| s.bytes >= engine::MEANINGFUL_BYTES)
            .map(|s| (host_of(&s.url), s.bytes_per_sec))
            .collect();
        memory::remember(path, &speeds);
    }
    // Unhashed bytes (verification off) get no record: the next run must hash them.
    if opts.verify {
        store::record(&dest, &outcome);
    }
    store::into_cache(req, &dest);
    outcome.elapsed_ms = started.elapsed().as_millis() as u64;
    tracing::info!(
        dest = %req.dest.display(),
        source = ?outcome.source,
        bytes = outcome.size,
        resumed = outcome.resumed_bytes,
        ms = outcome.elapsed_ms,
        "download: done"
    );
    reporter.event(Event::Done {
        source: outcome.source.clone(),
    });
    Ok(outcome)
}

/// Locks `path` (a destination or a cache entry) through `.NAME.lock` beside it — hidden,
/// and named so no look-up for a file of ours takes it for one.
fn lock_file(
    path: &Path,
    dest: &Path,
    reporter: &dyn Reporter,
    cancel: &Cancel,
) -> Result<crate::lock::Lock, DownloadError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = path.with_file_name(format!(".{name}.lock"));
    let waiting = crate::lock::Waiting {
        cancelled: &|| cancel.is_cancelled(),
        notice: &|b| reporter.event(Event::Waiting(b.clone())),
    };
    crate::lock::acquire_with(dest, &file, Some(&waiting)).map_err(|e| match e {
        crate::lock::LockError::Cancelled => DownloadError::Cancelled,
        // The lock keeps its I/O error as text; it becomes the cause here.
        e => DownloadError::io(&file, std::io::Error::other(e.to_string())),
    })
}

/// The destination: its folder held open (never through a link) and the file's name in it;
/// every file of a download is reached through it.
pub(crate) struct Dest {
    dir: crate::place::Dir,
    name: OsString,
}

impl Dest {
    /// Opens (creating it if missing) the folder of `dest`; one that is a symbolic link or
    /// junction is refused.
    fn open(dest: &Path) -> Result<Dest, DownloadError> {
        let name = dest.file_name().ok_or_else(|| {
            io_err(
                dest,
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"),
            )
        })?;
        let folder = dest
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let dir = crate::place::Dir::create(folder).map_err(|e| {
            if is_link(folder) {
                DownloadError::UnsafePlace {
                    path: folder.to_path_buf(),
                    why: "it is a symbolic link or junction, not a folder; refused".into(),
                }
            } else {
                io_err(folder, e)
            }
        })?;
        // Elevated, we write (and later run) only in a folder no other account can change:
        // in one another account owns or can write, it could swap our verified file.
        if crate::platform::is_elevated()
            && let Ok(o) = crate::place::owner_of(folder)
            && !o.ours
        {
            return Err(DownloadError::UnsafePlace {
                path: folder.to_path_buf(),
                why: format!(
                    "another account can change what is in it (owner: {}); as administrator, \
                     cuda-setup downloads only into folders that only administrators can change",
                    o.owner
                ),
            });
        }
        Ok(Dest {
            dir,
            name: name.to_os_string(),
        })
    }

    /// `NAME<suffix>`.
    fn with(&self, suffix: &str) -> OsString {
        let mut n = self.name.clone();
        n.push(suffix);
        n
    }

    /// `NAME.part`: the bytes as they arrive.
    fn part(&self) -> OsString {
        self.with(".part")
    }

    /// `NAME.part.json`: which chunks of the part file are done.
    fn state(&self) -> OsString {
        self.with(".part.json")
    }

    /// `.NAME<suffix>`: a hidden companion (the record, a copy in progress).
    fn hidden(&self, suffix: &str) -> OsString {
        let mut n = OsString::from(".");
        n.push(&self.name);
        n.push(suffix);
        n
    }

    /// Where `rel` is, for messages.
    fn shown(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.dir.display(rel)
    }
}

/// Whether `path` itself is a symbolic link or a junction (reparse point).
fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| {
        #[cfg(windows)]
        {
            use std::os::windows::fs::MetadataExt;
            m.file_type().is_symlink() || m.file_attributes() & 0x400 != 0
        }
        #[cfg(not(windows))]
        {
            m.file_type().is_symlink()
        }
    })
}

fn io_err(path: &Path, e: std::io::Error) -> DownloadError {
    DownloadError::io(path, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event a user reads is a sentence in both languages; a source's raw error
    /// is not in it but in the details.
    #[test]
    fn every_event_line_is_a_sentence_with_the_raw_error_in_details() {
        use crate::i18n::{self, Lang};
        let raw = "HTTP 503 Service Unavailable";
        let events = [
            Event::Trying {
                url: "https://example.com/f".into(),
            },
            Event::InsecureUrl {
                url: "http://example.com/f".into(),
            },
            Event::Retry {
                url: "https://example.com/f".into(),
                attempt: 2,
                error: raw.into(),
                wait_ms: 1500,
            },
            Event::SourceFailed {
                url: "https://example.com/f".into(),
                error: raw.into(),
            },
            Event::PartDiscarded {
                path: "f.part.json".into(),
                reason: raw.into(),
            },
            Event::Waiting(crate::lock::Busy {
                pid: Some(42),
                folder: "/tmp/x".into(),
            }),
            Event::Dropped {
                url: "https://example.com/f".into(),
                error: raw.into(),
            },
            Event::Switched {
                from: "https://download.pytorch.org/f".into(),
                to: "https://mirror.nju.edu.cn/f".into(),
                bytes_per_sec: 300_000,
                offered: 8_200_000,
                kept: 700 << 20,
            },
        ];
        for e in &events {
            let m = e.message().unwrap();
            let zh = i18n::render(&m, Lang::Zh);
            assert!(
                zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
                "{zh}"
            );
            assert!(!zh.contains(raw) && !zh.contains('{'), "{zh}");
            if matches!(
                e,
                Event::Retry { .. }
                    | Event::SourceFailed { .. }
                    | Event::PartDiscarded { .. }
                    | Event::Dropped { .. }
            ) {
                assert_eq!(i18n::details(&m, Lang::Zh).as_deref(), Some(raw));
            }
        }
        let retry = i18n::render(&events[2].message().unwrap(), Lang::Zh);
        assert!(retry.contains("1.5") && retry.contains('2'), "{retry}");
        assert!(Event::Verifying.message().is_none());
        let switched = i18n::render(&events[7].message().unwrap(), Lang::Zh);
        assert!(
            switched.contains("换到更快的来源 mirror.nju.edu.cn")
                && switched.contains("已下载的部分（700")
                && switched.starts_with("download.pytorch.org"),
            "{switched}"
        );
    }

    /// The speed test's line: speeds fastest first, who is tried first, who did not answer.
    #[test]
    fn the_measured_line_names_the_speeds_and_the_first_source() {
        use crate::i18n::{self, Lang};
        let m = |url: &str, result| Measurement {
            url: url.into(),
            host: host_of(url),
            result,
        };
        let results = vec![
            m(
                "https://mirror.nju.edu.cn/pytorch/whl/cu126/t.whl",
                Measured::Speed {
                    bytes_per_sec: 8_200_000,
                },
            ),
            m(
                "https://download.pytorch.org/whl/cu126/t.whl",
                Measured::Speed {
                    bytes_per_sec: 300_000,
                },
            ),
            m(
                "https://mirror.sjtu.edu.cn/pytorch-wheels/cu126/t.whl",
                Measured::Failed {
                    why: "HTTP 503".into(),
                },
            ),
        ];
        let e = Event::Measured {
            results: results.clone(),
            pinned: false,
        };
        let zh = i18n::render(&e.message().unwrap(), Lang::Zh);
        let en = i18n::render(&e.message().unwrap(), Lang::En);
        println!("{en}\n{zh}");
        assert!(
            zh.starts_with("测速：mirror.nju.edu.cn ")
                && zh.contains("download.pytorch.org ")
                && zh.contains("mirror.sjtu.edu.cn 没有及时回应")
                && zh.ends_with("先用最快的 mirror.nju.edu.cn。"),
            "{zh}"
        );
        assert!(en.starts_with("Speed test: mirror.nju.edu.cn "), "{en}");
        let pinned = Event::Measured {
            results: results[..2].to_vec(),
            pinned: true,
        };
        let zh = i18n::render(&pinned.message().unwrap(), Lang::Zh);
        assert!(zh.contains("按你的选择先用 mirror.nju.edu.cn"), "{zh}");
        assert_eq!(
            host_of("https://user:pw@Mirror.Example:8443/a?b"),
            "mirror.example:8443"
        );
    }

    #[test]
    fn mirrors_come_first_with_the_canonical_path() {
        let req = Request {
            url: "https://developer.download.nvidia.com/compute/cuda/12.4.1/local_installers/x.exe"
                .into(),
            mirrors: vec![
                "http://lan.example/mirror/".into(),
                "https://m2.example".into(),
            ],
            expected: Expected::default(),
            dest: "x".into(),
            connections: 1,
            cache_dir: None,
            bundle_dirs: vec![],
            allow_http: true,
        };
        assert_eq!(
            sources(&req),
            [
                "http://lan.example/mirror/compute/cuda/12.4.1/local_installers/x.exe",
                "https://m2.example/compute/cuda/12.4.1/local_installers/x.exe",
                "https://developer.download.nvidia.com/compute/cuda/12.4.1/local_installers/x.exe",
            ]
        );
        assert_eq!(file_name_of(&req.url), "x.exe");
        // A whole URL of the same file, its name written either way, is taken as it is.
        assert_eq!(
            source_urls(
                "https://download.pytorch.org/whl/cu126/torch-2.7.1%2Bcu126-cp312-cp312-win_amd64.whl",
                &[
                    "https://m.example/pytorch/cu126/torch-2.7.1+cu126-cp312-cp312-win_amd64.whl"
                        .into()
                ],
            )[0],
            "https://m.example/pytorch/cu126/torch-2.7.1+cu126-cp312-cp312-win_amd64.whl"
        );
        // A whole URL of the same file (another folder layout) is taken as it is.
        assert_eq!(
            source_urls(
                "https://download.pytorch.org/whl/cu126/torch-2.7.1%2Bcu126-cp312-cp312-win_amd64.whl",
                &["https://mirror.nju.edu.cn/pytorch/whl/cu126/torch-2.7.1%2Bcu126-cp312-cp312-win_amd64.whl".into(),
                  "https://mirror.nju.edu.cn/pytorch/whl/cu126/torch-2.7.1%2Bcu126-cp312-cp312-win_amd64.whl".into()],
            ),
            [
                "https://mirror.nju.edu.cn/pytorch/whl/cu126/torch-2.7.1%2Bcu126-cp312-cp312-win_amd64.whl",
                "https://download.pytorch.org/whl/cu126/torch-2.7.1%2Bcu126-cp312-cp312-win_amd64.whl",
            ]
        );
        assert_eq!(file_name_of("http://h/a/b.zip?token=1"), "b.zip");
    }
}
