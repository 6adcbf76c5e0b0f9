//! A source's first answer (hedged requests across mirrors), its probe (size, ranges,
//! where it landed) and retries: which source the bytes come from.

use super::*;

/// A source's first answer, pending.
pub(super) type Asking<'a> = Pin<Box<dyn Future<Output = Result<Probe, DownloadError>> + 'a>>;

/// Asks the sources in `queue`, in order, for the file; each source is asked once (one
/// silence is its failure, not one per retry). One that has not answered within
/// `opts.hedge_after` gets the next source started beside it (hedged requests), and the
/// first to answer is used. Sources that fail are reported and kept in `failures`; ones
/// still waiting when another answered go back to the front of the queue, in order.
#[allow(clippy::too_many_arguments)]
pub(super) async fn first_answer<'a>(
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

/// One source's turn at the file: what it is compared against, and what it did.
#[derive(Default)]
pub(super) struct SourceRun {
    /// The best speed a source still waiting offered in the probe: fall far below it and
    /// the rest moves there.
    pub(super) offered: Option<u64>,
    /// Bytes of the file this source completed.
    pub(super) served: AtomicU64,
    /// Bytes already done in the part file when it started.
    pub(super) resumed: AtomicU64,
}

/// What the first request learnt about a source.
pub(super) enum Probe {
    /// Ranges work; the total size.
    Ranged(u64),
    /// A plain 200: the body streams from byte 0.
    Whole(reqwest::Response),
}

impl Probe {
    /// The size the server told (a 200's length, without reading its body).
    pub(super) fn size(&self) -> Option<u64> {
        match self {
            Probe::Ranged(total) => Some(*total),
            Probe::Whole(resp) => resp.content_length(),
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) async fn from_source(
    client: &reqwest::Client,
    url: &str,
    probe: Probe,
    req: &Request,
    dest: &Dest,
    opts: &Options,
    reporter: &dyn Reporter,
    cancel: &Cancel,
    run: &SourceRun,
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
        Probe::Ranged(size) => {
            ranged(client, url, size, req, dest, opts, reporter, cancel, run).await
        }
        Probe::Whole(resp) => {
            whole(client, url, resp, req, dest, opts, reporter, cancel, run).await
        }
    }
}

/// `timeout`: the limit reqwest was given (the connect timeout, or a page's whole time).
pub(super) fn http_error(url: &str, e: reqwest::Error, timeout: Duration) -> DownloadError {
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

pub(super) fn secs(d: Duration) -> u64 {
    d.as_secs_f64().ceil().max(1.0) as u64
}

/// Sends a request and waits for the answer's headers: DNS, connect, TLS and every header
/// within the connect and first-byte timeouts, so a server that accepts and never answers
/// (or stops mid-headers) is a stall like any other.
pub(super) async fn send(
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
pub(super) fn landed(
    url: &str,
    resp: &reqwest::Response,
    same_host: bool,
) -> Result<(), DownloadError> {
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
pub(super) async fn probe(
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

pub(super) fn ok_status(url: &str, resp: &reqwest::Response) -> Result<(), DownloadError> {
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
pub(super) async fn retrying<T, F, Fut>(
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
