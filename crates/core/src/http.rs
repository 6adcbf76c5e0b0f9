//! Every HTTP client and async runtime the core uses is built here, so the TLS set-up,
//! user agent, proxy behaviour and timeouts are decided in one place.
//!
//! Two kinds of client: the download engine's (connect timeout only, since a large file
//! may take hours; many pooled connections for parallel ranges) and the short fetch's
//! (an overall timeout, so an offline machine falls back in seconds).

use std::time::Duration;

/// Sent with every request, so a mirror's logs can tell us apart.
pub const USER_AGENT: &str = concat!("cuda-setup/", env!("CARGO_PKG_VERSION"));

/// rustls is built without a default provider (pure-Rust `ring`, no C toolchain for the
/// Windows build); installing it is idempotent and must precede any client.
fn tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The download engine's client: `connect_timeout` bounds each connection, no overall
/// timeout (the engine watches for stalls itself), up to 16 idle connections per host
/// for parallel ranges. `direct` skips the system proxy (used when every source is on
/// this machine, where a proxy could only get in the way).
pub fn download_client(
    connect_timeout: Duration,
    direct: bool,
) -> Result<reqwest::Client, reqwest::Error> {
    tls();
    let mut builder = reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .connect_timeout(connect_timeout)
        .pool_max_idle_per_host(16);
    if direct {
        builder = builder.no_proxy();
    }
    builder.build()
}

/// A client for small GETs (pages, listings, size probes): `connect_timeout` for the
/// connection and `timeout` for the whole request, body included.
pub fn fetch_client(
    connect_timeout: Duration,
    timeout: Duration,
) -> Result<reqwest::Client, reqwest::Error> {
    tls();
    reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .connect_timeout(connect_timeout)
        .timeout(timeout)
        .build()
}

/// The download engine's runtime: two workers drive the parallel ranges while the
/// calling thread blocks on the whole.
pub fn download_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// A runtime for one request at a time, on the calling thread.
pub fn fetch_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// True when every URL points at this machine (tests' servers, a local mirror): judged
/// by the parsed host, not by a substring (`http://127.0.0.1.example.com` is not local).
pub fn loopback_only(urls: &[String]) -> bool {
    urls.iter().all(|u| {
        let url = reqwest::Url::parse(u);
        let host = url.as_ref().ok().and_then(|u| u.host_str()).unwrap_or("");
        host.eq_ignore_ascii_case("localhost")
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_means_every_source_is_local() {
        let local = vec![
            "http://127.0.0.1:1/a".to_string(),
            "http://localhost:2/b".into(),
        ];
        assert!(loopback_only(&local));
        let mixed = vec![local[0].clone(), "https://example.com/a".into()];
        assert!(!loopback_only(&mixed));
        for lookalike in [
            "http://127.0.0.1.example.com/a",
            "https://example.com/?next=http://localhost/",
            "not a url",
        ] {
            assert!(!loopback_only(&[lookalike.to_string()]), "{lookalike}");
        }
    }

    #[test]
    fn both_clients_build() {
        let t = Duration::from_secs(1);
        assert!(download_client(t, true).is_ok());
        assert!(download_client(t, false).is_ok());
        assert!(fetch_client(t, t).is_ok());
        assert!(download_runtime().is_ok() && fetch_runtime().is_ok());
    }
}
