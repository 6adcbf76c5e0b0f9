//! Ranged chunks over several connections: the board of chunks, the workers that take
//! them, and the hasher that follows the contiguous prefix as it completes.

use super::*;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    Todo,
    Taken,
    Done,
}

/// Chunk bookkeeping shared by the workers and the hasher.
pub(super) struct Board {
    pub(super) slots: Mutex<Vec<Slot>>,
    pub(super) changed: Condvar,
}

/// Reads the next body chunk, or fails after `stall` without a byte.
pub(super) async fn next_chunk(
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

pub(super) fn chunk_size(size: u64, connections: usize) -> u64 {
    (size / (connections as u64 * 8)).clamp(MIN_CHUNK, MAX_CHUNK)
}

#[allow(clippy::too_many_arguments)]
pub(super) async fn ranged(
    client: &reqwest::Client,
    url: &str,
    size: u64,
    req: &Request,
    dest: &Dest,
    opts: &Options,
    reporter: &dyn Reporter,
    cancel: &Cancel,
    run: &SourceRun,
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
        source: Some(crate::download::host_of(url)),
    });
    run.resumed.store(resumed.min(size), Ordering::Relaxed);

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
        e = switcher(meter.clone(), url, run.offered, opts.failover_window) => Err(e),
        _ = ticker(meter.clone(), reporter) => unreachable!(),
    };
    let mut window = (Instant::now(), 0);
    reporter.event(Event::Progress(meter.snapshot(&mut window, &mut 0.0)));
    // What this source completed: the chunks done now that were not at the start.
    let done_now =
        (state.lock().unwrap().done.iter().filter(|d| **d).count() as u64 * chunk).min(size);
    run.served.store(
        done_now.saturating_sub(resumed.min(size)),
        Ordering::Relaxed,
    );
    let result = result.map_err(|e| match e {
        // Only whole chunks are kept: the ones in flight are fetched again.
        DownloadError::Slower {
            url,
            bytes_per_sec,
            offered,
            seconds,
            ..
        } => DownloadError::Slower {
            url,
            bytes_per_sec,
            offered,
            seconds,
            kept: done_now,
        },
        e => e,
    });
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
pub(super) async fn futures_join_all<F: std::future::Future<Output = Result<(), DownloadError>>>(
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

pub(super) fn take_chunk(board: &Board) -> Option<usize> {
    let mut slots = board.slots.lock().unwrap();
    let i = slots.iter().position(|s| *s == Slot::Todo)?;
    slots[i] = Slot::Taken;
    Some(i)
}

#[allow(clippy::too_many_arguments)]
pub(super) async fn fetch_range(
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

pub(super) fn hash_prefix(
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
