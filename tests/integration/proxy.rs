//! `--proxy` (#34): the user's proxy carries every request; without it the system's proxy
//! stays the default; a bad address is refused before anything runs. The sources here have
//! a made-up host (`files.proxy.test`), reachable only through the loopback proxy, which
//! sends every request to the loopback server.

use std::process::{Command, Output};
use std::sync::Arc;

use crate::support::proxy::Proxy;
use crate::support::server::{Body, Server, dead_base, pattern};

const PATH: &str = "/compute/f.bin";
const SOURCE: &str = "http://files.proxy.test/compute/f.bin";

struct Fixture {
    server: Server,
    proxy: Proxy,
    bytes: Vec<u8>,
    sha256: String,
    dir: tempfile::TempDir,
}

fn fixture() -> Fixture {
    let bytes = pattern(1 << 20, 34);
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.bin");
    std::fs::write(&src, &bytes).unwrap();
    let sha256 = cuda_setup_core::download::hash_file(&src).unwrap().0.sha256;
    let server = Server::start();
    server.add(PATH, Body::Bytes(Arc::new(bytes.clone())));
    let proxy = Proxy::start(server.addr);
    Fixture {
        server,
        proxy,
        bytes,
        sha256,
        dir,
    }
}

/// `cuda-setup download` of [`SOURCE`] in English, with only the proxy variables given.
fn download(f: &Fixture, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let out = f.dir.path().join("out.bin");
    let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.args(["download", "--url", SOURCE, "--out"])
        .arg(&out)
        .args(["--sha256", &f.sha256, "--no-cache"])
        .args(extra)
        .env("LANG", "C")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES");
    for k in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
    ] {
        c.env_remove(k);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn text(o: &Output) -> String {
    crate::support::cli::text(o)
}

#[test]
fn a_download_goes_through_the_proxy_given_and_verifies() {
    let f = fixture();
    let url = f.proxy.url();
    let o = download(&f, &["--proxy", &url], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(f.proxy.requests() > 0, "{}", text(&o));
    assert_eq!(f.server.requests(), f.proxy.requests());
    assert!(std::fs::read(f.dir.path().join("out.bin")).unwrap() == f.bytes);
}

/// The user's proxy replaces the system's: a dead system proxy does not matter.
#[test]
fn the_proxy_given_replaces_the_systems() {
    let f = fixture();
    let (url, dead) = (f.proxy.url(), dead_base());
    let o = download(&f, &["--proxy", &url], &[("HTTP_PROXY", &dead)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(f.proxy.requests() > 0);
}

/// Without `--proxy`, the system's proxy is used as before (here: the loopback proxy as
/// `http_proxy`), and a loopback source skips every proxy.
#[test]
fn without_the_flag_the_systems_proxy_stays_and_loopback_goes_direct() {
    let f = fixture();
    let url = f.proxy.url();
    let o = download(&f, &[], &[("http_proxy", &url)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let through = f.proxy.requests();
    assert!(through > 0);

    // A source on this machine: never through the proxy, given or not.
    let out = f.dir.path().join("direct.bin");
    let o = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(["download", "--url", &f.server.url(PATH), "--out"])
        .arg(&out)
        .args(["--sha256", &f.sha256, "--no-cache", "--proxy", &url])
        .env("LANG", "C")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(f.proxy.requests(), through);
    assert!(std::fs::read(&out).unwrap() == f.bytes);
}

#[test]
fn a_bad_proxy_address_is_refused_with_exit_2_in_plain_words() {
    let f = fixture();
    for (bad, words) in [
        ("127.0.0.1:7890", "is not a proxy address"),
        ("proxy.example.com", "is not a proxy address"),
        (
            "ftp://127.0.0.1:21",
            "a proxy address starts with http://, https://, socks5:// or socks5h://",
        ),
    ] {
        let o = download(&f, &["--proxy", bad], &[]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        let err = text(&o);
        assert!(err.contains(words), "{bad}: {err}");
        assert!(!f.dir.path().join("out.bin").exists());
    }
    assert_eq!(f.server.requests(), 0);
}
