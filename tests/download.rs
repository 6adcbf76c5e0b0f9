//! The download engine against a real HTTP server on 127.0.0.1 serving real bytes, with
//! faults on demand.

mod support;

use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use cuda_setup::download::{
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

fn fast() -> Options {
    Options {
        retries: 3,
        backoff: Duration::from_millis(20),
        stall_timeout: Duration::from_millis(700),
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
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}{path}")
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
