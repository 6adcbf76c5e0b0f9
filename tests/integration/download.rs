//! The download engine against a real HTTP server on 127.0.0.1 serving real bytes, with
//! faults on demand.

use crate::support;

use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use cuda_setup_core::download::{
    self, Cancel, DownloadError, Event, Expected, Options, Request, Source,
};
use support::server::{Body, Fault, Server, pattern};

const SIZE: usize = 3 << 20; // 3 MiB: 12 chunks of 256 KiB over 4 connections

struct Fixture {
    server: Server,
    bytes: Arc<Vec<u8>>,
    sha256: String,
    dir: tempfile::TempDir,
}

fn fixture() -> Fixture {
    let bytes = Arc::new(pattern(SIZE, 7));
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.bin");
    std::fs::write(&src, &*bytes).unwrap();
    let sha256 = download::hash_file(&src).unwrap().0.sha256;
    let server = Server::start();
    server.add(
        "/compute/cuda/12.4.1/local_installers/f.exe",
        Body::Bytes(bytes.clone()),
    );
    Fixture {
        server,
        bytes,
        sha256,
        dir,
    }
}

const PATH: &str = "/compute/cuda/12.4.1/local_installers/f.exe";

impl Fixture {
    fn request(&self) -> Request {
        Request {
            url: self.server.url(PATH),
            mirrors: vec![],
            expected: Expected {
                sha256: Some(self.sha256.clone()),
                md5: None,
                size: Some(SIZE as u64),
            },
            dest: self.dir.path().join("out/f.exe"),
            connections: 4,
            cache_dir: None,
            bundle_dirs: vec![],
            allow_http: true,
        }
    }

    fn assert_done(&self, dest: &Path) {
        assert!(std::fs::read(dest).unwrap() == *self.bytes, "bytes differ");
        let (part, state) = (
            dest.with_file_name("f.exe.part"),
            dest.with_file_name("f.exe.part.json"),
        );
        assert!(!part.exists() && !state.exists(), "part files left behind");
    }
}

/// No probe before the download: these tests follow the sources in their listed order
/// (measuring and choosing is `sources.rs`'s).
fn fast() -> Options {
    Options {
        retries: 3,
        backoff: Duration::from_millis(20),
        stall_timeout: Duration::from_millis(700),
        measure_budget: Duration::ZERO,
        ..Options::default()
    }
}

/// Collects events.
#[derive(Default)]
struct Log(Mutex<Vec<Event>>);

impl download::Reporter for Log {
    fn event(&self, e: Event) {
        self.0.lock().unwrap().push(e);
    }
}

impl Log {
    fn count(&self, f: impl Fn(&Event) -> bool) -> usize {
        self.0.lock().unwrap().iter().filter(|e| f(e)).count()
    }
}

fn closed_port_url(path: &str) -> String {
    format!("{}{path}", support::server::dead_base())
}

#[test]
fn segmented_download_is_verified_and_renamed() {
    let f = fixture();
    let log = Log::default();
    let o = download::download(&f.request(), &fast(), &log, &Cancel::default()).unwrap();
    f.assert_done(&o.path);
    assert_eq!(o.sha256, f.sha256);
    assert!(matches!(o.source, Source::Network(_)));
    assert!(
        f.server.range_requests() >= 12,
        "{} range requests",
        f.server.range_requests()
    );
    // The last progress event accounts for every byte, across several connections.
    let last = log.0.lock().unwrap().iter().rev().find_map(|e| match e {
        Event::Progress(p) => Some(p.clone()),
        _ => None,
    });
    let p = last.unwrap();
    assert_eq!(p.done, SIZE as u64);
    assert!(
        p.per_connection.iter().filter(|b| **b > 0).count() >= 2,
        "{:?}",
        p.per_connection
    );
}

#[test]
fn dropped_connection_is_resumed_with_a_range() {
    let f = fixture();
    f.server.set_fault(
        PATH,
        Fault {
            drop_after: Some((100_000, 2)),
            ..Fault::default()
        },
    );
    let log = Log::default();
    let o = download::download(&f.request(), &fast(), &log, &Cancel::default()).unwrap();
    f.assert_done(&o.path);
    assert!(log.count(|e| matches!(e, Event::Retry { .. })) >= 1);
}

#[test]
fn killed_download_resumes_from_the_part_file() {
    let f = fixture();
    // Slow the server so the run can be cancelled half way.
    f.server.set_fault(
        PATH,
        Fault {
            throttle: Some(2 << 20),
            ..Fault::default()
        },
    );
    let cancel = Cancel::default();
    let seen = AtomicU64::new(0);
    let c2 = cancel.clone();
    let reporter = move |e: Event| {
        if let Event::Progress(p) = e {
            seen.store(p.done, Ordering::SeqCst);
            if p.done > SIZE as u64 / 3 {
                c2.cancel();
            }
        }
    };
    let mut req = f.request();
    req.connections = 2;
    let err = download::download(&req, &fast(), &reporter, &cancel).unwrap_err();
    assert!(matches!(err, DownloadError::Cancelled), "{err}");
    let state = req.dest.with_file_name("f.exe.part.json");
    assert!(state.exists() && req.dest.with_file_name("f.exe.part").exists());
    assert!(!req.dest.exists(), "nothing unverified at the destination");

    f.server.set_fault(PATH, Fault::default());
    let before = f.server.requests();
    let o = download::download(&req, &fast(), &(), &Cancel::default()).unwrap();
    f.assert_done(&o.path);
    assert!(o.resumed_bytes > 0, "nothing resumed");
    let chunks_total = 12;
    assert!(
        f.server.requests() - before < chunks_total + 1,
        "re-fetched everything"
    );
}

#[test]
fn wrong_bytes_are_refused_and_deleted() {
    let f = fixture();
    f.server.set_fault(
        PATH,
        Fault {
            corrupt_at: Some(1_234_567),
            ..Fault::default()
        },
    );
    let req = f.request();
    let err = download::download(&req, &fast(), &(), &Cancel::default()).unwrap_err();
    let DownloadError::AllSourcesFailed(errs) = &err else {
        panic!("{err}")
    };
    match &errs[0] {
        DownloadError::HashMismatch {
            url,
            expected,
            actual,
            ..
        } => {
            assert_eq!(url, &f.server.url(PATH));
            assert_eq!(expected, &f.sha256);
            assert_ne!(actual, &f.sha256);
        }
        e => panic!("{e}"),
    }
    assert!(err.to_string().contains(&f.server.url(PATH)));
    assert!(
        !req.dest.exists()
            && !req.dest.with_file_name("f.exe.part").exists()
            && !req.dest.with_file_name("f.exe.part.json").exists()
    );
}

#[test]
fn not_found_fails_at_once_naming_the_url() {
    let f = fixture();
    let mut req = f.request();
    req.url = f.server.url("/nope.exe");
    let before = f.server.requests();
    let err = download::download(&req, &fast(), &(), &Cancel::default()).unwrap_err();
    assert!(
        err.to_string().contains("/nope.exe") && err.to_string().contains("404"),
        "{err}"
    );
    assert_eq!(f.server.requests() - before, 1, "a 404 is not retried");
}

#[test]
fn server_errors_are_retried_then_reported() {
    let f = fixture();
    f.server.set_fault(
        PATH,
        Fault {
            status: Some((500, 2)),
            ..Fault::default()
        },
    );
    let log = Log::default();
    let o = download::download(&f.request(), &fast(), &log, &Cancel::default()).unwrap();
    f.assert_done(&o.path);
    assert_eq!(log.count(|e| matches!(e, Event::Retry { .. })), 2);

    let g = fixture();
    g.server.set_fault(
        PATH,
        Fault {
            status: Some((503, 100)),
            ..Fault::default()
        },
    );
    let err = download::download(&g.request(), &fast(), &(), &Cancel::default()).unwrap_err();
    assert!(
        err.to_string().contains("HTTP 503") && err.to_string().contains(PATH),
        "{err}"
    );
}

#[test]
fn a_stall_times_out_and_is_retried() {
    let f = fixture();
    f.server.set_fault(
        PATH,
        Fault {
            stall_after: Some((50_000, 1)),
            ..Fault::default()
        },
    );
    let log = Log::default();
    let o = download::download(&f.request(), &fast(), &log, &Cancel::default()).unwrap();
    f.assert_done(&o.path);
    let retries: Vec<String> = log
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::Retry { error, .. } => Some(error.clone()),
            _ => None,
        })
        .collect();
    assert!(retries.iter().any(|e| e.contains("no data")), "{retries:?}");
}

#[test]
fn a_server_ignoring_ranges_streams_the_whole_file() {
    let f = fixture();
    f.server.set_fault(
        PATH,
        Fault {
            ignore_range: true,
            drop_after: Some((500_000, 1)),
            ..Fault::default()
        },
    );
    let o = download::download(&f.request(), &fast(), &(), &Cancel::default()).unwrap();
    f.assert_done(&o.path);
    assert_eq!(f.server.range_requests(), 0);
}

#[test]
fn redirects_are_followed() {
    let f = fixture();
    f.server.add_with(
        "/moved.exe",
        Body::Bytes(Arc::new(vec![])),
        Fault {
            redirect_to: Some(PATH.into()),
            ..Fault::default()
        },
    );
    let mut req = f.request();
    req.url = f.server.url("/moved.exe");
    let o = download::download(&req, &fast(), &(), &Cancel::default()).unwrap();
    assert_eq!(std::fs::read(&o.path).unwrap(), *f.bytes);
}

#[test]
fn the_cache_makes_a_second_download_free() {
    let f = fixture();
    let mut req = f.request();
    req.cache_dir = Some(f.dir.path().join("cache"));
    download::download(&req, &fast(), &(), &Cancel::default()).unwrap();
    assert!(
        f.dir
            .path()
            .join("cache")
            .join(format!("sha256-{}", f.sha256))
            .is_file()
    );
    let before = f.server.requests();
    req.dest = f.dir.path().join("elsewhere/f.exe");
    let o = download::download(&req, &fast(), &(), &Cancel::default()).unwrap();
    assert!(matches!(o.source, Source::Cache(_)), "{:?}", o.source);
    assert_eq!(f.server.requests(), before, "a cache hit makes no request");
    f.assert_done(&req.dest);
}

#[test]
fn a_mirror_that_is_down_falls_through_to_the_next() {
    let f = fixture();
    let mut req = f.request();
    let down = closed_port_url("");
    req.mirrors = vec![down.clone(), format!("http://{}", f.server.addr)];
    req.url = format!("https://developer.download.nvidia.com{PATH}");
    let log = Log::default();
    let o = download::download(&req, &fast(), &log, &Cancel::default()).unwrap();
    assert_eq!(o.source, Source::Network(f.server.url(PATH)));
    assert_eq!(
        log.count(|e| matches!(e, Event::SourceFailed { url, .. } if url.starts_with(&down))),
        1
    );
    f.assert_done(&o.path);
}

#[test]
fn an_offline_bundle_needs_no_network() {
    let f = fixture();
    let bundle = f.dir.path().join("bundle");
    std::fs::create_dir_all(&bundle).unwrap();
    std::fs::write(bundle.join("f.exe"), &*f.bytes).unwrap();
    let mut req = f.request();
    req.url = closed_port_url(PATH); // the network is unreachable
    req.bundle_dirs = vec![bundle.clone()];
    let o = download::download(&req, &fast(), &(), &Cancel::default()).unwrap();
    assert_eq!(o.source, Source::Bundle(bundle.join("f.exe")));
    f.assert_done(&o.path);

    // A bundle file with other bytes is not used.
    std::fs::write(bundle.join("f.exe"), b"not it").unwrap();
    let mut req2 = req.clone();
    req2.dest = f.dir.path().join("out2/f.exe");
    let err = download::download(&req2, &fast(), &(), &Cancel::default()).unwrap_err();
    assert!(matches!(err, DownloadError::AllSourcesFailed(_)), "{err}");
}

#[test]
fn unsafe_requests_are_refused() {
    let f = fixture();
    let mut req = f.request();
    req.allow_http = false;
    assert!(matches!(
        download::download(&req, &fast(), &(), &Cancel::default()),
        Err(DownloadError::InsecureUrl { .. })
    ));
    let mut req = f.request();
    req.expected = Expected::default();
    assert!(matches!(
        download::download(&req, &fast(), &(), &Cancel::default()),
        Err(DownloadError::NoHash)
    ));
    let mut req = f.request();
    req.expected.size = Some(123);
    let err = download::download(&req, &fast(), &(), &Cancel::default()).unwrap_err();
    assert!(err.to_string().contains("expected 123"), "{err}");
}

#[test]
fn a_file_bigger_than_the_disk_is_refused_before_writing() {
    let f = fixture();
    f.server.add("/huge.exe", Body::Zeros(1 << 50)); // 1 PiB
    let mut req = f.request();
    req.url = f.server.url("/huge.exe");
    req.expected.size = None;
    let err = download::download(&req, &fast(), &(), &Cancel::default()).unwrap_err();
    assert!(matches!(err, DownloadError::DiskFull { .. }), "{err}");
    assert!(err.to_string().contains("not enough free space"), "{err}");
    assert!(!req.dest.with_file_name("f.exe.part").exists());
}

#[test]
fn md5_only_is_accepted() {
    let f = fixture();
    let mut req = f.request();
    let (d, _) = download::hash_file(&f.dir.path().join("src.bin")).unwrap();
    req.expected = Expected {
        sha256: None,
        md5: Some(d.md5.clone()),
        size: None,
    };
    let o = download::download(&req, &fast(), &(), &Cancel::default()).unwrap();
    assert_eq!(o.md5, d.md5);
}

#[test]
fn cli_download_prints_json_and_fails_clearly() {
    let f = fixture();
    let out = f.dir.path().join("cli/f.exe");
    let run = |sha: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
            .args([
                "download",
                "--json",
                "--no-cache",
                "--url",
                &f.server.url(PATH),
                "--sha256",
                sha,
                "--out",
            ])
            .arg(&out)
            .output()
            .unwrap()
    };
    let ok = run(&f.sha256);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(j["sha256"], f.sha256.as_str());
    assert_eq!(j["size"], SIZE as u64);
    assert!(
        String::from_utf8_lossy(&ok.stderr).contains("warning:"),
        "http is warned about"
    );

    std::fs::remove_file(&out).unwrap();
    let bad = run(&"0".repeat(64));
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("sha256 mismatch") && err.contains("hint:"),
        "{err}"
    );
    assert!(!out.exists());
    let usage = run("xyz");
    assert_eq!(usage.status.code(), Some(2));
}

// --- Downloads always end: silent, trickling and over-long sources; bad state files. ---

/// Short limits, so a source that misbehaves is left within a second or two.
fn impatient() -> Options {
    Options {
        retries: 3,
        backoff: Duration::from_millis(20),
        stall_timeout: Duration::from_millis(700),
        connect_timeout: Duration::from_millis(500),
        first_byte_timeout: Duration::from_millis(700),
        min_speed: 64 << 10,
        min_speed_window: Duration::from_secs(1),
        measure_budget: Duration::ZERO,
        ..Options::default()
    }
}

/// Runs `f` on a thread and fails the test if it has not ended within `secs` (before the
/// fix these hung: a hang must fail, not block the suite).
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .unwrap_or_else(|e| panic!("the download did not end within {secs} s ({e})"))
}

/// Downloads `req` with `opts` within `secs`, with the events.
fn download_within(
    secs: u64,
    req: &Request,
    opts: Options,
) -> (Result<download::Outcome, DownloadError>, Arc<Log>) {
    let log = Arc::new(Log::default());
    let (req, log2) = (req.clone(), log.clone());
    let r = within(secs, move || {
        download::download(&req, &opts, &*log2, &Cancel::default())
    });
    (r, log)
}

fn failed_sources(log: &Log) -> Vec<(String, String)> {
    log.0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::SourceFailed { url, error } => Some((url.clone(), error.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_mirror_that_never_answers_does_not_hold_back_the_url() {
    let f = fixture();
    let (_listener, mute) = support::server::mute_listener();
    let mut req = f.request();
    req.mirrors = vec![mute.clone()];
    let (r, log) = download_within(10, &req, impatient());
    let o = r.unwrap();
    assert_eq!(o.source, Source::Network(f.server.url(PATH)));
    let failed = failed_sources(&log);
    assert!(
        failed.len() == 1 && failed[0].0.starts_with(&mute) && failed[0].1.contains("no data"),
        "{failed:?}"
    );
    f.assert_done(&o.path);
}

#[test]
fn a_server_that_stops_mid_headers_is_left_for_the_next_source() {
    let f = fixture();
    let bad = Server::start();
    bad.add_with(
        PATH,
        Body::Bytes(f.bytes.clone()),
        Fault {
            mute_after_status: true,
            ..Fault::default()
        },
    );
    let mut req = f.request();
    req.mirrors = vec![format!("http://{}", bad.addr)];
    let (r, log) = download_within(10, &req, impatient());
    let o = r.unwrap();
    assert_eq!(o.source, Source::Network(f.server.url(PATH)));
    let failed = failed_sources(&log);
    assert!(
        failed.len() == 1 && failed[0].1.contains("no data"),
        "{failed:?}"
    );
    f.assert_done(&o.path);
}

#[test]
fn a_trickle_is_called_too_slow_and_the_next_source_used() {
    let f = fixture();
    let slow = Server::start();
    slow.add_with(
        PATH,
        Body::Bytes(f.bytes.clone()),
        Fault {
            // 5 bytes a second: never silent for the stall timeout, far below the floor.
            trickle: Some(Duration::from_millis(200)),
            ..Fault::default()
        },
    );
    let mut req = f.request();
    req.mirrors = vec![format!("http://{}", slow.addr)];
    let (r, log) = download_within(10, &req, impatient());
    let o = r.unwrap();
    assert_eq!(o.source, Source::Network(f.server.url(PATH)));
    let failed = failed_sources(&log);
    assert!(
        failed.len() == 1 && failed[0].1.contains("too slow"),
        "{failed:?}"
    );
    f.assert_done(&o.path);
}

#[test]
fn a_body_longer_than_the_file_is_cut_and_refused() {
    // A stream with no length, 1000 bytes too long; and ranged answers that each carry
    // 1000 bytes more than asked for.
    for fault in [
        Fault {
            no_length: true,
            extra: 1000,
            ..Fault::default()
        },
        Fault {
            extra: 1000,
            ..Fault::default()
        },
    ] {
        let f = fixture();
        f.server.set_fault(PATH, fault);
        let req = f.request();
        let (r, _) = download_within(10, &req, impatient());
        let err = r.unwrap_err();
        let DownloadError::AllSourcesFailed(errs) = &err else {
            panic!("{err}")
        };
        assert!(
            matches!(&errs[..], [DownloadError::TooLong { .. }]),
            "{err}"
        );
        assert!(err.to_string().contains("sent more than the"), "{err}");
        assert_eq!(err.kind(), cuda_setup_core::download::DownloadKind::Corrupt);
        assert!(
            !req.dest.exists()
                && !req.dest.with_file_name("f.exe.part").exists()
                && !req.dest.with_file_name("f.exe.part.json").exists(),
            "nothing is left but the error"
        );
    }
}

/// Runs the CLI and kills it if it has not ended within `secs`.
fn cli_within(secs: u64, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(args)
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("cuda-setup {args:?} did not end within {secs} s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn an_endless_body_is_cut_at_the_size_or_the_free_space() {
    let f = fixture();
    f.server.add_with(
        "/endless.exe",
        Body::Endless,
        Fault {
            no_length: true,
            // Slow enough that code without a bound fills little of the disk before the
            // deadline kills it.
            throttle: Some(8 << 20),
            ..Fault::default()
        },
    );
    let out = f.dir.path().join("endless/f.exe");
    let url = f.server.url("/endless.exe");
    let size = SIZE.to_string();
    let mut args = vec![
        "download",
        "--no-cache",
        "--url",
        &url,
        "--sha256",
        &f.sha256,
        "--out",
        out.to_str().unwrap(),
        "--stall-timeout",
        "2",
    ];
    let parts_gone = || {
        !out.exists()
            && !out.with_file_name("f.exe.part").exists()
            && !out.with_file_name("f.exe.part.json").exists()
    };

    // The limits are checked like any argument.
    let mut zero = args.clone();
    let last = zero.len() - 1;
    zero[last] = "0";
    assert_eq!(cli_within(15, &zero, &[]).status.code(), Some(2));

    // With --size: cut at the size.
    let mut sized = args.clone();
    sized.extend(["--size", &size]);
    let o = cli_within(15, &sized, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("sent more than the {SIZE} bytes expected")) && err.contains("hint:"),
        "{err}"
    );
    assert!(parts_gone());

    // With no size at all: cut at what the disk can spare (a debug build's pretend disk
    // of 2 MiB).
    args.push("--json");
    let o = cli_within(15, &args, &[("CUDA_SETUP_TEST_FREE_SPACE", "2097152")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("bytes free on the disk"), "{err}");
    assert!(parts_gone());
}

#[test]
fn a_malformed_part_state_is_discarded_and_the_download_starts_over() {
    let key = |f: &Fixture| format!("sha256-{}", f.sha256);
    let states: [&dyn Fn(&Fixture) -> String; 6] = [
        // A chunk map shorter than the file.
        &|f| {
            format!(
                r#"{{"key":"{}","size":{SIZE},"chunk":262144,"done":[true]}}"#,
                key(f)
            )
        },
        // Chunk size 0.
        &|f| {
            format!(
                r#"{{"key":"{}","size":{SIZE},"chunk":0,"done":[{}]}}"#,
                key(f),
                ["false"; 12].join(",")
            )
        },
        // A 4 TiB chunk.
        &|f| {
            format!(
                r#"{{"key":"{}","size":{SIZE},"chunk":4398046511104,"done":[true]}}"#,
                key(f)
            )
        },
        // An absurd size.
        &|f| {
            format!(
                r#"{{"key":"{}","size":4398046511104,"chunk":262144,"done":[true]}}"#,
                key(f)
            )
        },
        // Not JSON.
        &|_| "{\"key\": [".into(),
        // Far too big for a state file.
        &|f| {
            format!(
                "{}{}",
                " ".repeat(5 << 20),
                format_args!(
                    r#"{{"key":"{}","size":{SIZE},"chunk":262144,"done":[]}}"#,
                    key(f)
                )
            )
        },
    ];
    for (i, state) in states.iter().enumerate() {
        let f = fixture();
        let req = f.request();
        std::fs::create_dir_all(req.dest.parent().unwrap()).unwrap();
        std::fs::write(req.dest.with_file_name("f.exe.part"), vec![0u8; SIZE]).unwrap();
        std::fs::write(req.dest.with_file_name("f.exe.part.json"), state(&f)).unwrap();
        let (r, log) = download_within(10, &req, impatient());
        let o = r.unwrap_or_else(|e| panic!("state {i}: {e}"));
        f.assert_done(&o.path);
        assert_eq!(o.resumed_bytes, 0, "state {i}");
        assert_eq!(
            log.count(|e| matches!(e, Event::PartDiscarded { .. })),
            1,
            "state {i}"
        );
    }
}

// --- Issue 30: transport (no downgrade, a source's lie is its own failure) and places
// (never through a link we did not make; copies, not links). ---

/// The `source.from` of a `--json` result.
fn json_source(out: &std::process::Output) -> String {
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    j["source"]["from"].as_str().unwrap_or_default().to_string()
}

#[test]
fn an_https_source_that_redirects_to_plain_http_is_that_sources_failure() {
    let f = fixture();
    // The mirror is https and sends every request on to the same file over plain http.
    let tls = support::tls::redirector(&format!("http://{}", f.server.addr));
    let ca = support::tls::ca_file(f.dir.path());
    let out = f.dir.path().join("tls/f.exe");
    let url = f.server.url(PATH);
    let o = cli_within(
        30,
        &[
            "download",
            "--json",
            "--no-cache",
            "--mirror",
            &tls.base(),
            "--url",
            &url,
            "--sha256",
            &f.sha256,
            "--out",
            out.to_str().unwrap(),
        ],
        &[("CUDA_SETUP_TEST_ROOT_CA", ca.to_str().unwrap())],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    // The downgrade was refused; the file came from the source named as http itself.
    assert_eq!(json_source(&o), url, "{err}");
    assert!(
        err.contains(&format!("{}{PATH} did not give the file", tls.base())),
        "{err}"
    );
    f.assert_done(&out);

    // With the https source alone: the run fails, and its details say why (the TLS
    // handshake worked; the redirect to plain http was refused).
    std::fs::remove_file(&out).unwrap();
    let alone = format!("{}{PATH}", tls.base());
    let o = cli_within(
        30,
        &[
            "download",
            "--no-cache",
            "--url",
            &alone,
            "--sha256",
            &f.sha256,
            "--out",
            out.to_str().unwrap(),
        ],
        &[("CUDA_SETUP_TEST_ROOT_CA", ca.to_str().unwrap())],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("to plain-http {url}; refused")),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn an_index_page_is_not_followed_to_another_host() {
    let f = fixture();
    let page = "<a href=\"x-1.0-py3-none-any.whl#sha256=00\">x</a>";
    f.server.add_typed(
        "/simple/x/",
        Body::Bytes(Arc::new(page.as_bytes().to_vec())),
        "text/html",
    );
    // Same host, another path: followed.
    f.server.add_with(
        "/moved/x/",
        Body::Bytes(Arc::new(vec![])),
        Fault {
            redirect_to: Some(f.server.url("/simple/x/")),
            ..Fault::default()
        },
    );
    let p = download::get_page(&[f.server.url("/moved/x/")], None, &fast()).unwrap();
    assert!(p.text.contains("x-1.0"), "{}", p.text);
    // The same server under another name (localhost, not 127.0.0.1): refused, the
    // page's hashes come only from the host named.
    let other = format!("http://localhost:{}/simple/x/", f.server.addr.port());
    f.server.add_with(
        "/away/x/",
        Body::Bytes(Arc::new(vec![])),
        Fault {
            redirect_to: Some(other.clone()),
            ..Fault::default()
        },
    );
    let err = download::get_page(&[f.server.url("/away/x/")], None, &fast()).unwrap_err();
    let DownloadError::AllSourcesFailed(errs) = &err else {
        panic!("{err}")
    };
    assert!(
        matches!(&errs[..], [DownloadError::Redirect { .. }]),
        "{err}"
    );
    let said = cuda_setup_core::error::chain(&err);
    assert!(
        said.contains("another host") && said.contains(&other),
        "{said}"
    );
}

#[test]
fn a_mirror_announcing_an_absurd_length_is_left_for_the_url() {
    let f = fixture();
    // The mirror says the file is 1 PiB: more than any disk here.
    let liar = Server::start();
    liar.add(PATH, Body::Zeros(1 << 50));
    let mut req = f.request();
    req.mirrors = vec![format!("http://{}", liar.addr)];
    req.expected.size = None;
    let (r, log) = download_within(20, &req, fast());
    let o = r.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.source, Source::Network(f.server.url(PATH)));
    let failed = failed_sources(&log);
    assert!(
        failed.len() == 1 && failed[0].0.starts_with(&format!("http://{}", liar.addr)),
        "{failed:?}"
    );
    assert!(failed[0].1.contains("bytes free"), "{failed:?}");
    f.assert_done(&o.path);
}

#[test]
fn a_silent_mirror_costs_one_first_byte_timeout_not_one_per_retry() {
    let f = fixture();
    let (_listener, mute) = support::server::mute_listener();
    let out = f.dir.path().join("silent/f.exe");
    let url = f.server.url(PATH);
    // Connect 1 s + first byte 3 s: the mute mirror is left after ~4 s (before: twice,
    // plus a backoff, ~8.5 s).
    let t0 = std::time::Instant::now();
    let o = cli_within(
        30,
        &[
            "download",
            "--json",
            "--no-cache",
            "--mirror",
            &mute,
            "--url",
            &url,
            "--sha256",
            &f.sha256,
            "--out",
            out.to_str().unwrap(),
            "--connect-timeout",
            "1",
            "--stall-timeout",
            "3",
        ],
        &[],
    );
    let took = t0.elapsed();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(json_source(&o), url);
    assert!(
        took < Duration::from_secs(7),
        "a silent mirror held the download back {took:?} (one silence is 4 s)"
    );
    f.assert_done(&out);
}

#[test]
fn a_source_that_has_not_answered_gets_the_next_one_started_beside_it() {
    let f = fixture();
    let (_listener, mute) = support::server::mute_listener();
    let mut req = f.request();
    req.mirrors = vec![mute.clone()];
    // Long timeouts, a short hedge: the URL is asked beside the silent mirror.
    let opts = Options {
        connect_timeout: Duration::from_secs(10),
        first_byte_timeout: Duration::from_secs(30),
        hedge_after: Duration::from_millis(300),
        ..fast()
    };
    let t0 = std::time::Instant::now();
    let (r, log) = download_within(30, &req, opts);
    let o = r.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.source, Source::Network(f.server.url(PATH)));
    assert!(
        t0.elapsed() < Duration::from_secs(8),
        "{:?}: the URL waited for the mirror's timeout",
        t0.elapsed()
    );
    let tried: Vec<String> = log
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::Trying { url } => Some(url.clone()),
            _ => None,
        })
        .collect();
    assert!(tried.len() == 2 && tried[0].starts_with(&mute), "{tried:?}");
    f.assert_done(&o.path);
}

#[cfg(unix)]
fn nlink(p: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(p).unwrap().nlink()
}

/// Rewrites `p` in place with `bytes` (same size), putting its modification time back:
/// a change the size-and-time fast path cannot see.
#[cfg(unix)]
fn rewrite_keeping_stamp(p: &Path, bytes: &[u8]) {
    let before = std::fs::metadata(p).unwrap().modified().unwrap();
    let mut f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
    std::io::Write::write_all(&mut f, bytes).unwrap();
    f.set_modified(before).unwrap();
}

#[cfg(unix)]
#[test]
fn links_planted_at_the_part_state_and_final_names_are_never_written_through() {
    let f = fixture();
    let req = f.request();
    let out = req.dest.parent().unwrap().to_path_buf();
    std::fs::create_dir_all(&out).unwrap();
    let victim = |n: &str| {
        let p = f.dir.path().join(n);
        std::fs::write(&p, format!("victim {n}")).unwrap();
        p
    };
    let (v_part, v_state, v_dest) = (victim("v_part"), victim("v_state"), victim("v_dest"));
    let untouched = || {
        for v in ["v_part", "v_state", "v_dest"] {
            assert!(
                std::fs::read(f.dir.path().join(v)).unwrap() == format!("victim {v}").as_bytes(),
                "{v} was written through a link"
            );
        }
        assert!(std::fs::symlink_metadata(&req.dest).unwrap().is_file());
        f.assert_done(&req.dest);
    };
    // `FILE.part` and `FILE` are links to other files.
    std::os::unix::fs::symlink(&v_part, out.join("f.exe.part")).unwrap();
    std::os::unix::fs::symlink(&v_dest, &req.dest).unwrap();
    let o = download::download(&req, &fast(), &(), &Cancel::default()).unwrap();
    assert!(matches!(o.source, Source::Network(_)), "{:?}", o.source);
    untouched();
    // And `FILE.part.json` too, beside a part link.
    std::fs::remove_file(&req.dest).unwrap();
    std::os::unix::fs::symlink(&v_part, out.join("f.exe.part")).unwrap();
    std::os::unix::fs::symlink(&v_state, out.join("f.exe.part.json")).unwrap();
    let o = download::download(&req, &fast(), &(), &Cancel::default()).unwrap();
    assert!(matches!(o.source, Source::Network(_)), "{:?}", o.source);
    untouched();

    // A link at the destination to a file that holds the right bytes is not "verified,
    // existing" either: the download replaces the link with a file of ours.
    let good = f.dir.path().join("good.exe");
    std::fs::write(&good, &*f.bytes).unwrap();
    std::fs::remove_file(&req.dest).unwrap();
    std::os::unix::fs::symlink(&good, &req.dest).unwrap();
    let o = download::download(&req, &fast(), &(), &Cancel::default()).unwrap();
    assert!(matches!(o.source, Source::Network(_)), "{:?}", o.source);
    assert!(std::fs::symlink_metadata(&req.dest).unwrap().is_file());
}

#[cfg(unix)]
#[test]
fn a_download_folder_that_is_a_link_is_refused() {
    let f = fixture();
    let elsewhere = f.dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let linked = f.dir.path().join("downloads");
    std::os::unix::fs::symlink(&elsewhere, &linked).unwrap();
    let mut req = f.request();
    req.dest = linked.join("f.exe");
    let err = download::download(&req, &fast(), &(), &Cancel::default()).unwrap_err();
    assert!(
        matches!(&err, DownloadError::UnsafePlace { path, .. } if *path == linked),
        "{err}"
    );
    // The command line says so in words, with what to do.
    let o = cli_within(
        15,
        &[
            "download",
            "--no-cache",
            "--url",
            &f.server.url(PATH),
            "--sha256",
            &f.sha256,
            "--out",
            req.dest.to_str().unwrap(),
        ],
        &[],
    );
    let said = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(
        said.contains("is not safe to write into: it is a symbolic link or junction")
            && said.contains("Nothing was written there")
            && said.contains("hint: give --out a real folder"),
        "{said}"
    );
    // Nothing at all was written there: no file, no part, no lock.
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

/// Elevated, a download goes only into a folder no other account can change: `--out` in
/// a world-writable folder, or in one another account owns, is refused with nothing
/// written; a cache folder another account owns is not used (nothing read from it,
/// nothing put in it).
#[cfg(unix)]
#[test]
fn as_root_a_folder_another_account_can_change_gets_no_download_and_its_cache_is_unused() {
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root (an elevated run, and chown to another uid)");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let f = fixture();
    for how in ["world-writable", "another owner"] {
        let shared = f
            .dir
            .path()
            .join(format!("shared-{}", how.replace(' ', "-")));
        std::fs::create_dir(&shared).unwrap();
        if how == "world-writable" {
            std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        } else {
            std::os::unix::fs::chown(&shared, Some(65534), Some(65534)).unwrap();
        }
        let mut req = f.request();
        req.dest = shared.join("f.exe");
        let err = download::download(&req, &fast(), &(), &Cancel::default()).unwrap_err();
        assert!(
            matches!(&err, DownloadError::UnsafePlace { path, .. } if *path == shared),
            "{how}: {err}"
        );
        assert!(err.to_string().contains("another account"), "{how}: {err}");
        assert_eq!(std::fs::read_dir(&shared).unwrap().count(), 0, "{how}");
    }
    // A cache another account owns, holding a file under the right hash's name: not used.
    let cache = f.dir.path().join("their-cache");
    std::fs::create_dir(&cache).unwrap();
    let mut req = f.request();
    req.cache_dir = Some(cache.clone());
    let key = req.expected.key().unwrap();
    std::fs::write(cache.join(&key), b"theirs").unwrap();
    std::os::unix::fs::chown(&cache, Some(65534), Some(65534)).unwrap();
    let ok = download::download(&req, &fast(), &(), &Cancel::default()).unwrap();
    assert!(
        !matches!(ok.source, download::Source::Cache(_)),
        "{:?}",
        ok.source
    );
    assert_eq!(std::fs::read(cache.join(&key)).unwrap(), b"theirs");
    assert_eq!(
        std::fs::read_dir(&cache).unwrap().count(),
        1,
        "nothing put in it"
    );
}

#[cfg(unix)]
#[test]
fn a_bundle_file_is_copied_and_a_later_rewrite_of_it_changes_nothing_of_ours() {
    let f = fixture();
    let bundle = f.dir.path().join("bundle");
    std::fs::create_dir_all(&bundle).unwrap();
    let theirs = bundle.join("f.exe");
    std::fs::write(&theirs, &*f.bytes).unwrap();
    let mut req = f.request();
    req.url = closed_port_url(PATH);
    req.bundle_dirs = vec![bundle.clone()];
    let o = download::download(&req, &fast(), &(), &Cancel::default()).unwrap();
    assert_eq!(o.source, Source::Bundle(theirs.clone()));
    assert_eq!(
        nlink(&req.dest),
        1,
        "the bundle's file was linked, not copied"
    );
    assert_eq!(nlink(&theirs), 1);
    // The bundle's owner rewrites their file, keeping its size and time.
    rewrite_keeping_stamp(&theirs, &vec![0u8; SIZE]);
    let o = download::download(&req, &fast(), &(), &Cancel::default()).unwrap();
    assert_eq!(o.source, Source::Existing);
    f.assert_done(&req.dest);
}

#[cfg(unix)]
#[test]
fn a_verified_file_with_another_name_is_copied_before_it_is_trusted() {
    let f = fixture();
    let req = f.request();
    download::download(&req, &fast(), &(), &Cancel::default()).unwrap();
    // Someone else gets a second name for our verified file (the record still matches).
    let theirs = f.dir.path().join("theirs.exe");
    std::fs::hard_link(&req.dest, &theirs).unwrap();
    let o = download::download(&req, &fast(), &(), &Cancel::default()).unwrap();
    assert_eq!(o.source, Source::Existing);
    assert_eq!(nlink(&req.dest), 1, "a shared file was taken as verified");
    // Their rewrite, size and time kept, no longer reaches the file we hand on.
    rewrite_keeping_stamp(&theirs, &vec![0u8; SIZE]);
    let o = download::download(&req, &fast(), &(), &Cancel::default()).unwrap();
    assert_eq!(o.source, Source::Existing);
    f.assert_done(&req.dest);
}

#[cfg(unix)]
#[test]
fn a_verified_file_another_account_owns_is_copied_before_it_is_trusted() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: chown to another account needs root");
        return;
    }
    let f = fixture();
    let req = f.request();
    download::download(&req, &fast(), &(), &Cancel::default()).unwrap();
    std::os::unix::fs::chown(&req.dest, Some(12345), Some(12345)).unwrap();
    let o = download::download(&req, &fast(), &(), &Cancel::default()).unwrap();
    assert_eq!(o.source, Source::Existing);
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        std::fs::metadata(&req.dest).unwrap().uid(),
        0,
        "another account's file was taken as verified"
    );
    f.assert_done(&req.dest);
}
