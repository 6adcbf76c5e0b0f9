//! Progress: the meter the workers feed, the ticker that reports it, and the watchdog
//! that stops a transfer gone silent.

use super::*;

/// Progress accounting shared by workers and the ticker.
pub(super) struct Meter {
    pub(super) per_conn: Vec<AtomicU64>,
    /// Every byte received in this run, never taken back (for the floor rate).
    pub(super) received: AtomicU64,
    pub(super) base: u64,
    pub(super) total: Option<u64>,
    pub(super) started: Instant,
    /// The host serving (shown with the progress).
    pub(super) source: Option<String>,
}

impl Meter {
    pub(super) fn snapshot(&self, window: &mut (Instant, u64), rate: &mut f64) -> Progress {
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
            source: self.source.clone(),
        }
    }
}

/// Fails the source when it averages fewer than `opts.min_speed` bytes per second over
/// `opts.min_speed_window` (a trickle never trips the per-read stall timeout); pending
/// for ever when the floor is off.
pub(super) async fn watchdog(meter: Arc<Meter>, url: &str, opts: &Options) -> DownloadError {
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

/// Fails the source with [`DownloadError::Slower`] when, over `window`, it delivers less
/// than a third of what a waiting source `offered` in the probe, or goes silent (no byte
/// for a gap scaled to its own rate: 0.25 s to a fifth of the window);
/// pending for ever when nothing was offered or the window is zero.
pub(super) async fn switcher(
    meter: Arc<Meter>,
    url: &str,
    offered: Option<u64>,
    window: Duration,
) -> DownloadError {
    let Some(offered) = offered.filter(|o| *o > 0 && !window.is_zero()) else {
        return std::future::pending().await;
    };
    let step = (window / 10).clamp(Duration::from_millis(20), Duration::from_millis(500));
    // Silence is told sooner than slowness: no byte on any connection, while another source
    // waits with a measured speed (a mirror that went quiet mid-file would otherwise cost a
    // whole window, or the stall timeout). How long a gap is silence scales with what the
    // source was sending: the time 16 frames of 64 KiB take at its rate so far, at least
    // 0.25 s, at most a fifth of the window (2 s).
    let most = (window / 5).clamp(Duration::from_millis(250), Duration::from_secs(2));
    let first = meter.received.load(Ordering::Relaxed);
    let mut samples = std::collections::VecDeque::from([(Instant::now(), first)]);
    // When the first byte came (connecting, TLS over a long link, is not silence) and the
    // last one.
    let mut first_byte: Option<Instant> = None;
    let mut last_byte = (Instant::now(), first);
    loop {
        tokio::time::sleep(step.min(Duration::from_millis(50))).await;
        let now = Instant::now();
        let got = meter.received.load(Ordering::Relaxed);
        if got != last_byte.1 {
            first_byte.get_or_insert(last_byte.0);
            last_byte = (now, got);
        } else if let Some(since) = first_byte {
            let flowing = last_byte.0.duration_since(since).as_secs_f64();
            let rate = got.saturating_sub(first) as f64 / flowing.max(1e-3);
            let silence = if flowing < 0.1 {
                most
            } else {
                Duration::from_secs_f64((16.0 * 65536.0 / rate.max(1.0)).min(most.as_secs_f64()))
                    .max(Duration::from_millis(250))
                    .min(most)
            };
            if now.duration_since(last_byte.0) >= silence {
                let fetched: u64 = meter
                    .per_conn
                    .iter()
                    .map(|a| a.load(Ordering::Relaxed))
                    .sum();
                return DownloadError::Slower {
                    url: url.into(),
                    bytes_per_sec: 0,
                    offered,
                    seconds: secs(now.duration_since(last_byte.0)),
                    kept: meter.base + fetched,
                };
            }
        }
        samples.push_back((now, got));
        while samples.len() > 2 && now.duration_since(samples[1].0) >= window {
            samples.pop_front();
        }
        let (t0, b0) = samples[0];
        let span = now.duration_since(t0);
        if span >= window {
            let rate = got.saturating_sub(b0) as f64 / span.as_secs_f64();
            if rate * 3.0 < offered as f64 {
                let fetched: u64 = meter
                    .per_conn
                    .iter()
                    .map(|a| a.load(Ordering::Relaxed))
                    .sum();
                return DownloadError::Slower {
                    url: url.into(),
                    bytes_per_sec: rate as u64,
                    offered,
                    seconds: secs(span),
                    kept: meter.base + fetched,
                };
            }
        }
    }
}

/// Emits a progress event every 250 ms until dropped.
pub(super) async fn ticker(meter: Arc<Meter>, reporter: &dyn Reporter) {
    let mut window = (Instant::now(), 0);
    let mut rate = 0.0;
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        reporter.event(Event::Progress(meter.snapshot(&mut window, &mut rate)));
    }
}
