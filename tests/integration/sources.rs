//! Measure, then choose (#34): several loopback sources at different rates, one that
//! slows down mid-way, ones that serve other bytes. The probe orders them, a remembered
//! speed orders the next download, a slow source's remaining chunks move to a faster
//! one (the chunks done are kept), a liar is dropped, the user's first source stays first.

use crate::support;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cuda_setup_core::download::{
    self, Cancel, Event, Expected, Measured, Measurement, Options, Request, Source, host_of,
};
use support::server::{Body, Fault, Server, pattern};

const SIZE: usize = 3 << 20;
const PATH: &str = "/whl/cu126/torch-2.7.1-cp312-cp312-win_amd64.whl";

struct Files {
    bytes: Arc<Vec<u8>>,
    sha256: String,
    dir: tempfile::TempDir,
}

fn files() -> Files {
    let bytes = Arc::new(pattern(SIZE, 11));
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.bin");
    std::fs::write(&src, &*bytes).unwrap();
    let sha256 = download::hash_file(&src).unwrap().0.sha256;
    Files { bytes, sha256, dir }
}

/// A server with the file at `PATH` under `fault`.
fn source(f: &Files, fault: Fault) -> Server {
    let s = Server::start();
    s.add_with(PATH, Body::Bytes(f.bytes.clone()), fault);
    s
}

fn throttled(bytes_per_sec: u64) -> Fault {
    Fault {
        throttle: Some(bytes_per_sec),
        ..Fault::default()
    }
}

/// `mirrors` tried (as whole URLs of the file), then `canonical`.
fn request(f: &Files, mirrors: &[&Server], canonical: &Server, out: &str) -> Request {
    Request {
        url: canonical.url(PATH),
        mirrors: mirrors.iter().map(|s| s.url(PATH)).collect(),
        expected: Expected {
            sha256: Some(f.sha256.clone()),
            md5: None,
            size: Some(SIZE as u64),
        },
        dest: f.dir.path().join(out).join("torch.whl"),
        connections: 4,
        cache_dir: None,
        bundle_dirs: vec![],
        allow_http: true,
    }
}

fn opts() -> Options {
    Options {
        retries: 3,
        backoff: Duration::from_millis(20),
        stall_timeout: Duration::from_secs(2),
        failover_window: Duration::from_secs(1),
        ..Options::default()
    }
}

#[derive(Default)]
struct Log(Mutex<Vec<Event>>);

impl download::Reporter for Log {
    fn event(&self, e: Event) {
        self.0.lock().unwrap().push(e);
    }
}

impl Log {
    fn measured(&self) -> (Vec<Measurement>, bool) {
        self.0
            .lock()
            .unwrap()
            .iter()
            .find_map(|e| match e {
                Event::Measured { results, pinned } => Some((results.clone(), *pinned)),
                _ => None,
            })
            .expect("a Measured event")
    }

    fn dropped(&self) -> Vec<(String, String)> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                Event::Dropped { url, error } => Some((url.clone(), error.clone())),
                _ => None,
            })
            .collect()
    }

    fn tried(&self, url: &str) -> usize {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|e| matches!(e, Event::Trying { url: u } if u == url))
            .count()
    }
}

fn assert_file(f: &Files, dest: &Path) {
    assert!(std::fs::read(dest).unwrap() == *f.bytes, "bytes differ");
}

#[test]
fn the_probe_picks_the_fast_source_even_listed_last() {
    let f = files();
    // The mirror listed first trickles along at 100 kB/s per connection; the publisher's
    // URL, listed last, is fast.
    let slow = source(&f, throttled(100_000));
    let fast = source(&f, Fault::default());
    let req = request(&f, &[&slow], &fast, "probe");
    let log = Log::default();
    let t0 = std::time::Instant::now();
    let o = download::download(&req, &opts(), &log, &Cancel::default()).unwrap();
    assert_eq!(o.source, Source::Network(fast.url(PATH)));
    assert_file(&f, &o.path);
    let (results, pinned) = log.measured();
    assert!(!pinned);
    assert_eq!(results[0].host, host_of(&fast.url(PATH)), "{results:?}");
    assert!(
        matches!(results[0].result, Measured::Speed { .. }),
        "{results:?}"
    );
    // The slow mirror was only probed: its one request, never a chunk.
    assert_eq!(log.tried(&slow.url(PATH)), 0);
    assert!(slow.requests() <= 1, "{} requests", slow.requests());
    // Always starting with the listed first source takes 3 MiB / 400 kB/s ≈ 8 s.
    assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());
    // The line the user reads names the speeds and the source used first.
    let line = download::Event::Measured {
        results,
        pinned: false,
    }
    .message()
    .unwrap();
    let zh = cuda_setup_core::i18n::render(&line, cuda_setup_core::i18n::Lang::Zh);
    assert!(
        zh.starts_with("测速：")
            && zh.contains(&format!("先用最快的 {}", host_of(&fast.url(PATH)))),
        "{zh}"
    );
}

#[test]
fn a_remembered_speed_orders_the_next_download_without_a_probe() {
    let f = files();
    let slow = source(&f, throttled(200_000));
    let fast = source(&f, Fault::default());
    let memory = f.dir.path().join("state/sources.json");
    std::fs::create_dir_all(memory.parent().unwrap()).unwrap();
    let opts = Options {
        memory: Some(memory.clone()),
        ..opts()
    };
    let o = download::download(
        &request(&f, &[&slow], &fast, "first"),
        &opts,
        &(),
        &Cancel::default(),
    )
    .unwrap();
    assert_eq!(o.source, Source::Network(fast.url(PATH)));
    // Written: both hosts, with a speed and a time.
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&memory).unwrap()).unwrap();
    for s in [&slow, &fast] {
        let rec = &saved["hosts"][host_of(&s.url(PATH))];
        assert!(
            rec["bytes_per_sec"].as_u64().unwrap() > 0 && rec["at"].as_u64().unwrap() > 0,
            "{saved}"
        );
    }

    // The next download reads it: no probe at all, the fast source first.
    let before = slow.requests();
    let log = Log::default();
    let o = download::download(
        &request(&f, &[&slow], &fast, "second"),
        &opts,
        &log,
        &Cancel::default(),
    )
    .unwrap();
    assert_eq!(o.source, Source::Network(fast.url(PATH)));
    assert_file(&f, &o.path);
    let (results, _) = log.measured();
    assert!(
        results
            .iter()
            .all(|m| matches!(m.result, Measured::Remembered { .. })),
        "{results:?}"
    );
    assert_eq!(results[0].host, host_of(&fast.url(PATH)));
    assert_eq!(slow.requests(), before, "the slow source was asked again");
}

#[test]
fn a_source_that_slows_down_hands_its_remaining_chunks_on_and_keeps_the_done_ones() {
    let f = files();
    // The mirror starts at 1 MB/s per connection (the probe's winner), then falls to
    // 10 kB/s; the publisher's URL keeps 300 kB/s per connection.
    let mirror = source(&f, throttled(1_000_000));
    let publisher = source(&f, throttled(300_000));
    let req = request(&f, &[&mirror], &publisher, "failover");
    let slowed = AtomicBool::new(false);
    let log = Log::default();
    let mirror = Arc::new(mirror);
    let m2 = mirror.clone();
    let reporter = |e: Event| {
        if let Event::Progress(p) = &e
            && p.done > 768 << 10
            && !slowed.swap(true, Ordering::SeqCst)
        {
            m2.set_fault(PATH, throttled(10_000));
        }
        download::Reporter::event(&log, e);
    };
    let o = download::download(&req, &opts(), &reporter, &Cancel::default()).unwrap();
    assert_file(&f, &o.path);
    assert_eq!(o.source, Source::Network(publisher.url(PATH)));
    let (results, _) = log.measured();
    assert_eq!(results[0].host, host_of(&mirror.url(PATH)), "{results:?}");
    // Said once, naming both, with the bytes kept.
    let switched: Vec<(String, String, u64)> = log
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::Switched { from, to, kept, .. } => Some((from.clone(), to.clone(), *kept)),
            _ => None,
        })
        .collect();
    assert_eq!(switched.len(), 1, "{switched:?}");
    assert_eq!(switched[0].0, mirror.url(PATH));
    assert_eq!(switched[0].1, publisher.url(PATH));
    assert!(switched[0].2 >= 768 << 10, "{switched:?}");
    // The publisher resumed the part file: the mirror's chunks were not fetched again.
    assert_eq!(o.resumed_bytes, switched[0].2);
    assert_eq!(o.served.len(), 2, "{:?}", o.served);
    assert_eq!(o.served[0].url, mirror.url(PATH));
    assert_eq!(o.served[1].url, publisher.url(PATH));
    assert_eq!(o.served[0].bytes + o.served[1].bytes, SIZE as u64);
    assert!(o.served[1].bytes < SIZE as u64);
    // The progress said who served, first one, then the other.
    let sources: Vec<String> = log
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::Progress(p) => p.source.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(sources.first(), Some(&host_of(&mirror.url(PATH))));
    assert_eq!(sources.last(), Some(&host_of(&publisher.url(PATH))));
}

#[test]
fn sources_serving_wrong_bytes_are_dropped_and_the_file_arrives_from_a_good_one() {
    let f = files();
    // One mirror's first bytes differ (seen by the probe); another's differ at 2 MB (seen
    // only by the hash); the publisher is slower but right.
    let early_liar = source(
        &f,
        Fault {
            corrupt_at: Some(10),
            ..Fault::default()
        },
    );
    let late_liar = source(
        &f,
        Fault {
            corrupt_at: Some(2_000_000),
            ..Fault::default()
        },
    );
    let publisher = source(&f, throttled(2_000_000));
    let req = request(&f, &[&early_liar, &late_liar], &publisher, "liars");
    let log = Log::default();
    let o = download::download(&req, &opts(), &log, &Cancel::default()).unwrap();
    assert_file(&f, &o.path);
    assert_eq!(o.source, Source::Network(publisher.url(PATH)));
    let dropped = log.dropped();
    assert_eq!(dropped.len(), 2, "{dropped:?}");
    assert_eq!(dropped[0].0, early_liar.url(PATH));
    assert!(dropped[0].1.contains("first bytes"), "{dropped:?}");
    assert_eq!(dropped[1].0, late_liar.url(PATH));
    assert!(dropped[1].1.contains("mismatch"), "{dropped:?}");
    // Neither was used again after it was caught.
    assert_eq!(log.tried(&early_liar.url(PATH)), 0);
    assert_eq!(log.tried(&late_liar.url(PATH)), 1);
}

#[test]
fn the_users_first_source_is_used_first_even_when_slower() {
    let f = files();
    let chosen = source(&f, throttled(1_000_000));
    let fast = source(&f, Fault::default());
    let req = request(&f, &[&chosen], &fast, "pinned");
    let log = Log::default();
    let opts = Options {
        pinned_first: true,
        ..opts()
    };
    let o = download::download(&req, &opts, &log, &Cancel::default()).unwrap();
    assert_file(&f, &o.path);
    assert_eq!(o.source, Source::Network(chosen.url(PATH)));
    assert_eq!(o.served.len(), 1, "{:?}", o.served);
    let (results, pinned) = log.measured();
    assert!(pinned);
    assert_eq!(results[0].host, host_of(&chosen.url(PATH)));
    // Measured all the same: the faster one is the slower one's speed times many.
    assert!(
        results[1].result.rate() > results[0].result.rate(),
        "{results:?}"
    );
}

#[test]
fn a_sources_file_that_is_a_link_or_garbage_is_ignored() {
    let f = files();
    let slow = source(&f, throttled(100_000));
    let fast = source(&f, Fault::default());
    let state = f.dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    // A fresh record saying the slow one is the fastest, where a link points.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let lie = serde_json::json!({ "hosts": {
        host_of(&slow.url(PATH)): { "bytes_per_sec": 1u64 << 40, "at": now },
        host_of(&fast.url(PATH)): { "bytes_per_sec": 1, "at": now },
    }});
    let elsewhere = f.dir.path().join("elsewhere.json");
    std::fs::write(&elsewhere, lie.to_string()).unwrap();
    let memory = state.join("sources.json");
    type Plant<'a> = Box<dyn Fn() + 'a>;
    let cases: Vec<(&str, Plant)> = vec![
        (
            "link",
            Box::new(|| {
                #[cfg(unix)]
                std::os::unix::fs::symlink(&elsewhere, &memory).unwrap();
                #[cfg(not(unix))]
                std::fs::write(&memory, b"\0\0not json").unwrap();
            }),
        ),
        (
            "garbage",
            Box::new(|| std::fs::write(&memory, b"{\"hosts\": [1, 2").unwrap()),
        ),
    ];
    for (what, plant) in cases {
        let _ = std::fs::remove_file(&memory);
        plant();
        let opts = Options {
            memory: Some(memory.clone()),
            ..opts()
        };
        let log = Log::default();
        let o = download::download(
            &request(&f, &[&slow], &fast, what),
            &opts,
            &log,
            &Cancel::default(),
        )
        .unwrap();
        assert_eq!(o.source, Source::Network(fast.url(PATH)), "{what}");
        let (results, _) = log.measured();
        assert!(
            results
                .iter()
                .all(|m| !matches!(m.result, Measured::Remembered { .. })),
            "{what}: {results:?}"
        );
        // Replaced by a good file of ours; what the link pointed at is untouched.
        let meta = std::fs::symlink_metadata(&memory).unwrap();
        assert!(meta.file_type().is_file(), "{what}");
        let saved: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&memory).unwrap()).unwrap();
        assert!(
            saved["hosts"][host_of(&fast.url(PATH))].is_object(),
            "{what}"
        );
        assert_eq!(
            std::fs::read_to_string(&elsewhere).unwrap(),
            lie.to_string(),
            "{what}"
        );
    }
}

#[test]
fn a_file_assembled_from_two_sources_that_fails_its_hash_is_fetched_from_each_alone() {
    let f = files();
    // The mirror wins the probe, then slows down: the publisher takes over the rest, but
    // its bytes at 2.5 MB are wrong. Which of the two lied cannot be told from the
    // assembled file: each is asked alone, and only the liar is dropped.
    let mirror = Arc::new(source(&f, throttled(1_000_000)));
    let publisher = source(
        &f,
        Fault {
            throttle: Some(600_000),
            corrupt_at: Some(2_500_000),
            ..Fault::default()
        },
    );
    let req = request(&f, &[&mirror], &publisher, "assembled");
    let slowed = AtomicBool::new(false);
    let log = Log::default();
    let m2 = mirror.clone();
    let reporter = |e: Event| {
        match &e {
            Event::Progress(p) if p.done > 768 << 10 && !slowed.swap(true, Ordering::SeqCst) => {
                m2.set_fault(PATH, throttled(10_000));
            }
            // Back to its speed once left: alone, it serves the whole file quickly.
            Event::Switched { .. } => m2.set_fault(PATH, throttled(1_000_000)),
            _ => {}
        }
        download::Reporter::event(&log, e);
    };
    let o = download::download(&req, &opts(), &reporter, &Cancel::default()).unwrap();
    assert_file(&f, &o.path);
    assert_eq!(o.source, Source::Network(mirror.url(PATH)));
    let dropped = log.dropped();
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(dropped[0].0, publisher.url(PATH));
    assert!(dropped[0].1.contains("mismatch"), "{dropped:?}");
    // The mirror's last turn was alone: the whole file, nothing resumed.
    let last = o.served.last().unwrap();
    assert_eq!(
        (last.url.as_str(), last.bytes),
        (mirror.url(PATH).as_str(), SIZE as u64)
    );
    assert_eq!(o.resumed_bytes, 0);
}

/// A source that ignores ranges would start the file over: after a switch it waits
/// behind one that resumes, so what the switch said it kept stays kept.
#[test]
fn after_a_switch_a_source_without_ranges_waits_behind_one_that_resumes() {
    let f = files();
    let mirror = source(&f, throttled(1_000_000));
    let whole = source(
        &f,
        Fault {
            ignore_range: true,
            ..throttled(600_000)
        },
    );
    let publisher = source(&f, throttled(300_000));
    let req = request(&f, &[&mirror, &whole], &publisher, "no-ranges");
    let slowed = AtomicBool::new(false);
    let log = Log::default();
    let mirror = Arc::new(mirror);
    let m2 = mirror.clone();
    let reporter = |e: Event| {
        if let Event::Progress(p) = &e
            && p.done > 768 << 10
            && !slowed.swap(true, Ordering::SeqCst)
        {
            m2.set_fault(PATH, throttled(10_000));
        }
        download::Reporter::event(&log, e);
    };
    let o = download::download(&req, &opts(), &reporter, &Cancel::default()).unwrap();
    assert_file(&f, &o.path);
    let kept: Vec<u64> = log
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::Switched { kept, .. } => Some(*kept),
            _ => None,
        })
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        o.source,
        Source::Network(publisher.url(PATH)),
        "{:?}",
        o.served
    );
    assert_eq!(
        o.resumed_bytes, kept[0],
        "the part file was not started over"
    );
    assert!(
        o.served.iter().all(|s| s.url != whole.url(PATH)),
        "{:?}",
        o.served
    );
}
