//! Measure, then choose: before a download from several network sources, each is asked at
//! once for the file's first bytes (a connect and a short ranged read); the fastest that
//! serves the right bytes is tried first. A few seconds at most (`Options::measure_budget`),
//! cut as soon as one source is clearly ahead. Recent speeds from earlier downloads
//! (`Options::memory`) order the sources without a probe.
//!
//! Sources that fail here go last, not away (they may still work); a source announcing
//! another size than the file's (or than the others'), or whose first bytes differ from
//! the publisher's (the canonical URL's), is dropped for this download. The user's own
//! first source (`Options::pinned_first`) stays first whatever is measured.

use super::*;
use crate::download::memory::{self, Memory};
use crate::download::{Measured, Measurement, host_of};

/// The probe reads this much of the file: enough to see a rate, little enough to be cheap.
pub(super) const PROBE_BYTES: u64 = 256 << 10;
/// "Clearly ahead": one finished its read while every other still running measures less
/// than the winner's rate divided by this.
const FAR_BEHIND: f64 = 3.0;

/// The order to try the sources in (indices into them; dropped ones left out), and what
/// each offered in the probe (bytes/s), which the download compares its source against.
pub(super) struct Choice {
    pub(super) order: Vec<usize>,
    pub(super) offered: Vec<Option<u64>>,
}

impl Choice {
    /// The sources in their own order, nothing measured.
    pub(super) fn as_listed(n: usize) -> Choice {
        Choice {
            order: (0..n).collect(),
            offered: vec![None; n],
        }
    }
}

/// One source's probe, as it goes.
#[derive(Debug, Clone, Default)]
pub(super) struct Live {
    pub(super) bytes: u64,
    pub(super) elapsed: Duration,
    pub(super) finished: bool,
    pub(super) error: Option<String>,
    /// The size the source announced.
    pub(super) total: Option<u64>,
    pub(super) prefix: Vec<u8>,
}

impl Live {
    fn rate(&self) -> f64 {
        self.bytes as f64 / self.elapsed.as_secs_f64().max(1e-3)
    }
}

/// Whether one source finished its read and every other is done or far behind it (the
/// probe can stop).
pub(super) fn clear_winner(live: &[Live]) -> bool {
    let best = live
        .iter()
        .filter(|l| l.finished && l.error.is_none() && l.bytes > 0)
        .map(Live::rate)
        .fold(0.0, f64::max);
    // The publisher's first bytes are what the others are checked against: the probe does
    // not end before it has sent some (or finished, or failed), or a fast mirror serving
    // another file would win unchecked.
    let reference_ready = live
        .last()
        .is_some_and(|l| l.finished || l.bytes >= REFERENCE_BYTES);
    best > 0.0
        && reference_ready
        && live
            .iter()
            .all(|l| l.finished || l.rate() * FAR_BEHIND < best)
}

/// How much of the publisher's file the probe waits for before a winner is declared.
const REFERENCE_BYTES: u64 = 64 << 10;

/// The order to try: measured ones fastest first, then the ones that failed in their
/// listed order; dropped ones left out (unless every one was dropped: then all, as
/// listed, and the download's own checks decide). A pinned first source stays first.
pub(super) fn rank(results: &[Measured], pinned_first: bool) -> Vec<usize> {
    let kept: Vec<usize> = (0..results.len())
        .filter(|&i| !matches!(results[i], Measured::Dropped { .. }) || (pinned_first && i == 0))
        .collect();
    if kept.is_empty() {
        return (0..results.len()).collect();
    }
    let mut order: Vec<usize> = kept
        .iter()
        .copied()
        .filter(|&i| !(pinned_first && i == 0))
        .collect();
    // Stable: equal speeds keep the listed order.
    order.sort_by_key(|&i| std::cmp::Reverse(results[i].rate().map_or(0, |r| r.max(1))));
    if pinned_first && kept.first() == Some(&0) {
        order.insert(0, 0);
    }
    order
}

/// Probes `sources` (or reads what is remembered), reports the result and returns the
/// order to try them in.
pub(super) async fn choose(
    client: &reqwest::Client,
    sources: &[String],
    req: &Request,
    opts: &Options,
    reporter: &dyn Reporter,
    cancel: &Cancel,
) -> Choice {
    let n = sources.len();
    if n < 2 || opts.measure_budget.is_zero() {
        return Choice::as_listed(n);
    }
    let hosts: Vec<String> = sources.iter().map(|u| host_of(u)).collect();
    let now = memory::now();
    let remembered = opts.memory.as_deref().map(Memory::load).unwrap_or_default();
    let known: Vec<Option<(u64, u64)>> = hosts.iter().map(|h| remembered.fresh(h, now)).collect();
    let results: Vec<Measured> = if known.iter().all(Option::is_some) {
        known
            .iter()
            .flatten()
            .map(|&(bytes_per_sec, age_secs)| Measured::Remembered {
                bytes_per_sec,
                age_secs,
            })
            .collect()
    } else {
        let live = probe_all(client, sources, req, opts, cancel).await;
        let results = judge(
            &live,
            req.expected.size,
            opts.pinned_first,
            opts.measure_budget,
        );
        if let Some(path) = &opts.memory {
            let speeds: Vec<(String, u64)> = results
                .iter()
                .zip(&hosts)
                .filter_map(|(r, h)| match r {
                    Measured::Speed { bytes_per_sec } => Some((h.clone(), *bytes_per_sec)),
                    _ => None,
                })
                .collect();
            memory::remember(path, &speeds);
        }
        results
    };
    let order = rank(&results, opts.pinned_first);
    for (i, r) in results.iter().enumerate() {
        if let Measured::Dropped { why } = r {
            reporter.event(Event::Dropped {
                url: sources[i].clone(),
                error: why.clone(),
            });
        }
    }
    let shown: Vec<Measurement> = order
        .iter()
        .map(|&i| Measurement {
            url: sources[i].clone(),
            host: hosts[i].clone(),
            result: results[i].clone(),
        })
        .collect();
    tracing::info!(results = ?shown, "download: sources measured");
    reporter.event(Event::Measured {
        results: shown,
        pinned: opts.pinned_first,
    });
    Choice {
        order,
        offered: results.iter().map(Measured::rate).collect(),
    }
}

/// Each probe's end: its speed, or why none; and sources serving another file dropped.
/// The reference for the file's first bytes is the publisher's (the last source, the
/// canonical URL) when it answered, else the one most others agree with.
pub(super) fn judge(
    live: &[Live],
    expected_size: Option<u64>,
    pinned_first: bool,
    budget: Duration,
) -> Vec<Measured> {
    let n = live.len();
    // The size: the expected one, else the one most sources announce.
    let size = expected_size.or_else(|| majority(live.iter().filter_map(|l| l.total)));
    let agree = |a: &Live, b: &Live| {
        let k = a.prefix.len().min(b.prefix.len());
        a.prefix[..k] == b.prefix[..k]
    };
    let with_bytes: Vec<usize> = (0..n).filter(|&i| !live[i].prefix.is_empty()).collect();
    let reference = if live[n - 1].prefix.is_empty() {
        with_bytes.iter().copied().max_by_key(|&i| {
            with_bytes
                .iter()
                .filter(|&&j| agree(&live[i], &live[j]))
                .count()
        })
    } else {
        Some(n - 1)
    };
    (0..n)
        .map(|i| {
            let l = &live[i];
            let pinned = pinned_first && i == 0;
            if let (Some(want), Some(got)) = (size, l.total)
                && want != got
                && !pinned
            {
                return Measured::Dropped {
                    why: format!("it announces {got} bytes, the file has {want}"),
                };
            }
            if let Some(r) = reference
                && r != i
                && !pinned
                && !l.prefix.is_empty()
                && !agree(l, &live[r])
            {
                return Measured::Dropped {
                    why: "its first bytes differ from the publisher's".into(),
                };
            }
            match &l.error {
                Some(e) => Measured::Failed { why: e.clone() },
                None if l.bytes == 0 => Measured::Failed {
                    why: format!("no data within {} s", secs(budget)),
                },
                None => Measured::Speed {
                    bytes_per_sec: l.rate().max(1.0) as u64,
                },
            }
        })
        .collect()
}

/// The value most items have (the first of those when tied); None for none.
fn majority(items: impl Iterator<Item = u64>) -> Option<u64> {
    let items: Vec<u64> = items.collect();
    items
        .iter()
        .copied()
        .max_by_key(|v| items.iter().filter(|w| *w == v).count())
}

/// Asks every source at once for the file's first [`PROBE_BYTES`], until the budget is
/// spent, one is clearly ahead, or all are done.
async fn probe_all(
    client: &reqwest::Client,
    sources: &[String],
    req: &Request,
    opts: &Options,
    cancel: &Cancel,
) -> Vec<Live> {
    let want = req
        .expected
        .size
        .map_or(PROBE_BYTES, |s| s.clamp(1, PROBE_BYTES));
    let live: Vec<Mutex<Live>> = sources.iter().map(|_| Mutex::default()).collect();
    let started = Instant::now();
    let mut pending: Vec<Option<Pin<Box<dyn Future<Output = ()> + '_>>>> = sources
        .iter()
        .zip(&live)
        .map(|(url, l)| {
            Some(Box::pin(probe_one(client, url, opts, l, want, started))
                as Pin<Box<dyn Future<Output = ()> + '_>>)
        })
        .collect();
    let all = std::future::poll_fn(|cx| {
        for slot in pending.iter_mut() {
            if let Some(f) = slot
                && f.as_mut().poll(cx).is_ready()
            {
                *slot = None;
            }
        }
        if pending.iter().all(Option::is_none) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    });
    let snapshot = || -> Vec<Live> {
        live.iter()
            .map(|l| {
                let mut s = l.lock().unwrap().clone();
                if !s.finished {
                    s.elapsed = started.elapsed();
                }
                s
            })
            .collect()
    };
    let cut = async {
        loop {
            tokio::time::sleep(Duration::from_millis(25)).await;
            if cancel.is_cancelled() || clear_winner(&snapshot()) {
                return;
            }
        }
    };
    tokio::select! {
        _ = all => {}
        _ = cut => {}
        _ = tokio::time::sleep(opts.measure_budget) => {}
    }
    snapshot()
}

/// One source's probe: `Range: bytes=0-(want-1)`; a server ignoring ranges answers 200
/// and is read only as far.
async fn probe_one(
    client: &reqwest::Client,
    url: &str,
    opts: &Options,
    live: &Mutex<Live>,
    want: u64,
    started: Instant,
) {
    let read = async {
        let mut resp = send(
            client
                .get(url)
                .header("Range", format!("bytes=0-{}", want - 1)),
            url,
            opts,
        )
        .await?;
        let status = resp.status().as_u16();
        let total = match status {
            206 => resp
                .headers()
                .get("content-range")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.rsplit('/').next())
                .and_then(|t| t.trim().parse::<u64>().ok()),
            200 => resp.content_length(),
            _ => {
                return Err(DownloadError::Http {
                    url: url.into(),
                    status,
                });
            }
        };
        live.lock().unwrap().total = total;
        while let Some(bytes) = next_chunk(&mut resp, url, opts.stall_timeout).await? {
            let mut l = live.lock().unwrap();
            let room = (want - l.bytes).min(bytes.len() as u64) as usize;
            l.prefix.extend_from_slice(&bytes[..room]);
            l.bytes += room as u64;
            if l.bytes >= want {
                break;
            }
        }
        Ok(())
    };
    let r: Result<(), DownloadError> = read.await;
    let mut l = live.lock().unwrap();
    l.finished = true;
    l.elapsed = started.elapsed();
    l.error = r.err().map(|e| chain(&e));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(bytes: u64, ms: u64, finished: bool) -> Live {
        Live {
            bytes,
            elapsed: Duration::from_millis(ms),
            finished,
            ..Live::default()
        }
    }

    #[test]
    fn a_clear_winner_is_one_done_with_every_other_far_behind() {
        // Done at 256 KiB in 100 ms; the other at 20 KiB after 100 ms: far behind.
        assert!(clear_winner(&[
            live(20 << 10, 100, false),
            live(256 << 10, 100, true)
        ]));
        // The other is at half the rate: not clear yet.
        assert!(!clear_winner(&[
            live(128 << 10, 100, false),
            live(256 << 10, 100, true)
        ]));
        // Nobody done: no winner; a failed one is no winner.
        assert!(!clear_winner(&[
            live(1, 100, false),
            live(200 << 10, 100, false)
        ]));
        let mut failed = live(0, 10, true);
        failed.error = Some("HTTP 404".into());
        assert!(!clear_winner(&[failed.clone(), live(1, 100, false)]));
        // Every other done (failed or not): the probe is over anyway.
        assert!(clear_winner(&[failed, live(256 << 10, 300, true)]));
        // A mirror done first while the publisher (last) has sent nothing yet: its bytes
        // are not checked yet, so no winner; once the publisher sent 64 KiB, there is.
        assert!(!clear_winner(&[
            live(256 << 10, 50, true),
            live(0, 50, false)
        ]));
        assert!(clear_winner(&[
            live(256 << 10, 50, true),
            live(64 << 10, 200, false)
        ]));
    }

    #[test]
    fn ranking_puts_the_fastest_first_the_failed_last_and_drops_liars() {
        let speed = |b| Measured::Speed { bytes_per_sec: b };
        let failed = Measured::Failed { why: "x".into() };
        let dropped = Measured::Dropped { why: "y".into() };
        let r = [
            speed(100),
            failed.clone(),
            speed(9000),
            dropped.clone(),
            speed(500),
        ];
        assert_eq!(rank(&r, false), [2, 4, 0, 1]);
        // The user's first source stays first, even slower, even "dropped".
        assert_eq!(rank(&r, true), [0, 2, 4, 1]);
        let r = [dropped.clone(), speed(5), speed(50)];
        assert_eq!(rank(&r, true), [0, 2, 1]);
        assert_eq!(rank(&r, false), [2, 1]);
        // Everyone dropped: all as listed (the download's own checks decide).
        assert_eq!(rank(&[dropped.clone(), dropped], false), [0, 1]);
        // Equal speeds keep their order; remembered ones rank like measured ones.
        let rem = Measured::Remembered {
            bytes_per_sec: 70,
            age_secs: 5,
        };
        assert_eq!(rank(&[speed(70), rem, speed(71)], false), [2, 0, 1]);
    }

    #[test]
    fn sources_serving_another_file_are_dropped() {
        let src = |total: Option<u64>, prefix: &[u8], bytes: u64| Live {
            bytes,
            elapsed: Duration::from_millis(100),
            finished: true,
            error: None,
            total,
            prefix: prefix.to_vec(),
        };
        let budget = Duration::from_secs(3);
        // The expected size rules; then the canonical's (last) first bytes.
        let live = [
            src(Some(10), b"ab", 2),
            src(Some(11), b"abcd", 4),
            src(Some(10), b"abXd", 4),
            src(Some(10), b"abcd", 4),
        ];
        let j = judge(&live, Some(10), false, budget);
        assert!(matches!(j[0], Measured::Speed { .. }), "{j:?}");
        assert!(matches!(&j[1], Measured::Dropped { why } if why.contains("11 bytes")));
        assert!(matches!(&j[2], Measured::Dropped { why } if why.contains("first bytes")));
        assert!(matches!(j[3], Measured::Speed { .. }));
        // No size known: the majority's; the canonical silent: the majority's bytes.
        let mut silent = src(None, b"", 0);
        silent.error = Some("HTTP 503".into());
        let live = [
            src(Some(10), b"abcd", 4),
            src(Some(12), b"zzzz", 4),
            src(Some(10), b"abcd", 4),
            silent,
        ];
        let j = judge(&live, None, false, budget);
        assert!(matches!(j[0], Measured::Speed { .. }));
        assert!(matches!(j[1], Measured::Dropped { .. }));
        assert!(matches!(&j[3], Measured::Failed { why } if why == "HTTP 503"));
        // The user's own first source is never dropped here.
        let j = judge(&live[1..], None, true, budget);
        assert!(matches!(j[0], Measured::Speed { .. }), "{j:?}");
    }
}
