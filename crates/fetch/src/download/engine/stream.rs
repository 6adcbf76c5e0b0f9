//! One stream when the server ignores ranges, bounded by the size, else the free space.

use super::*;

/// How far a single stream may go: the file's size when known (`--size`, else the
/// server's length), else what the disk can spare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bound {
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
pub(super) async fn whole(
    client: &reqwest::Client,
    url: &str,
    first: reqwest::Response,
    req: &Request,
    dest: &Dest,
    opts: &Options,
    reporter: &dyn Reporter,
    cancel: &Cancel,
    turn: &SourceRun,
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
        source: Some(crate::download::host_of(url)),
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
    turn.served.store(n, Ordering::Relaxed);
    Ok((digests, n, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

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
