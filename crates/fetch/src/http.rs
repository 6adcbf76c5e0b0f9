//! Every HTTP client and async runtime the core uses is built here, so the TLS set-up,
//! user agent, proxy behaviour (the system's, or the user's [`crate::proxy`]) and timeouts are decided in one place.
//!
//! Two kinds of client: the download engine's (connect timeout only, since a large file
//! may take hours; many pooled connections for parallel ranges) and the short fetch's
//! (an overall timeout, so an offline machine falls back in seconds).
//!
//! Transport is input too (#30): a redirect is someone else's choice of where we go next.
//! Neither client follows a redirect from `https` to plain `http` (the hash protects a
//! file's bytes, not the index page the hash came from, nor the user's privacy); the page
//! client, which fetches what carries hashes (PyPI index pages, checksum lists), also never
//! leaves the host the user named. A refused redirect is that source's failure
//! ([`RedirectRefused`] in the error's chain), and the next source is tried.

use std::time::Duration;

/// Sent with every request, so a mirror's logs can tell us apart.
pub const USER_AGENT: &str = concat!("cuda-setup/", env!("CARGO_PKG_VERSION"));

/// rustls is built without a default provider (pure-Rust `ring`, no C toolchain for the
/// Windows build); installing it is idempotent and must precede any client.
fn tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Why a redirect was not followed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedirectRefused {
    #[error(
        "redirected from {from} to plain-http {to}; refused (a source given as https stays https)"
    )]
    Downgrade { from: String, to: String },
    #[error(
        "redirected from {from} to another host, {to}; refused (index pages come only from the host you named)"
    )]
    OtherHost { from: String, to: String },
    #[error("more than {MAX_REDIRECTS} redirects from {from}")]
    TooMany { from: String },
}

/// As many redirects as browsers follow at most (reqwest's default too).
pub const MAX_REDIRECTS: usize = 10;

/// Whether a request that started at `first` and was last at `from` may go on to `to`:
/// never from https to anything less (http, or an unknown scheme); with `same_host`, never
/// to another host or port than `first`'s. Also the check of a response's final URL
/// (`from` is then the URL asked for).
pub fn redirect_allowed(
    first: &reqwest::Url,
    from: &reqwest::Url,
    to: &reqwest::Url,
    same_host: bool,
) -> Result<(), RedirectRefused> {
    let secure = |u: &reqwest::Url| u.scheme().eq_ignore_ascii_case("https");
    if (secure(first) || secure(from)) && !secure(to) {
        return Err(RedirectRefused::Downgrade {
            from: from.to_string(),
            to: to.to_string(),
        });
    }
    if same_host
        && (first.host_str().map(str::to_ascii_lowercase)
            != to.host_str().map(str::to_ascii_lowercase)
            || first.port_or_known_default() != to.port_or_known_default())
    {
        return Err(RedirectRefused::OtherHost {
            from: from.to_string(),
            to: to.to_string(),
        });
    }
    Ok(())
}

/// The redirect policy of [`redirect_allowed`], for a client.
fn policy(same_host: bool) -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(move |attempt| {
        let (first, from) = match (attempt.previous().first(), attempt.previous().last()) {
            (Some(a), Some(b)) => (a.clone(), b.clone()),
            _ => return attempt.follow(),
        };
        if attempt.previous().len() > MAX_REDIRECTS {
            return attempt.error(RedirectRefused::TooMany {
                from: first.to_string(),
            });
        }
        match redirect_allowed(&first, &from, attempt.url(), same_host) {
            Ok(()) => attempt.follow(),
            Err(e) => attempt.error(e),
        }
    })
}

/// The [`RedirectRefused`] somewhere in `e`'s chain, if that is why it failed.
pub fn refused_redirect(e: &(dyn std::error::Error + 'static)) -> Option<RedirectRefused> {
    let mut next = Some(e);
    while let Some(cause) = next {
        if let Some(r) = cause.downcast_ref::<RedirectRefused>() {
            return Some(r.clone());
        }
        next = cause.source();
    }
    None
}

/// Debug builds trust one more root certificate, the PEM file named by
/// `CUDA_SETUP_TEST_ROOT_CA`, so tests can serve https from a loopback server of their
/// own; release builds compile this out.
fn test_roots(builder: reqwest::ClientBuilder) -> reqwest::ClientBuilder {
    #[cfg(debug_assertions)]
    if let Some(cert) = std::env::var_os("CUDA_SETUP_TEST_ROOT_CA")
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|pem| reqwest::Certificate::from_pem(&pem).ok())
    {
        return builder.tls_certs_merge([cert]);
    }
    builder
}

/// The download engine's client: `connect_timeout` bounds each connection, no overall
/// timeout (the engine watches for stalls itself), up to 16 idle connections per host
/// for parallel ranges. `direct` skips any proxy (used when every source is on
/// this machine, where a proxy could only get in the way).
pub fn download_client(
    connect_timeout: Duration,
    direct: bool,
) -> Result<reqwest::Client, reqwest::Error> {
    tls();
    let mut builder = reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .connect_timeout(connect_timeout)
        .pool_max_idle_per_host(16)
        // A file's bytes may come from another host (a CDN); the hash checks them.
        .redirect(policy(false));
    builder = test_roots(builder);
    if direct {
        builder = builder.no_proxy();
    } else {
        builder = with_proxy(builder)?;
    }
    builder.build()
}

/// A client for small GETs (listings, size probes): `connect_timeout` for the
/// connection and `timeout` for the whole request, body included.
pub fn fetch_client(
    connect_timeout: Duration,
    timeout: Duration,
) -> Result<reqwest::Client, reqwest::Error> {
    small_client(connect_timeout, timeout, false)
}

/// [`fetch_client`] for pages that carry hashes (a package index, a checksum list): its
/// redirects also stay on the host first asked.
pub fn page_client(
    connect_timeout: Duration,
    timeout: Duration,
) -> Result<reqwest::Client, reqwest::Error> {
    small_client(connect_timeout, timeout, true)
}

fn small_client(
    connect_timeout: Duration,
    timeout: Duration,
    same_host: bool,
) -> Result<reqwest::Client, reqwest::Error> {
    tls();
    let builder = reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .connect_timeout(connect_timeout)
        .timeout(timeout)
        .redirect(policy(same_host));
    with_proxy(test_roots(builder))?.build()
}

/// The user's proxy ([`crate::proxy`]), when one is set: it replaces the system's, and
/// this machine's own addresses bypass it.
fn with_proxy(builder: reqwest::ClientBuilder) -> Result<reqwest::ClientBuilder, reqwest::Error> {
    Ok(match crate::proxy::current() {
        Some(p) => builder.proxy(
            reqwest::Proxy::all(p.as_str())?
                .no_proxy(reqwest::NoProxy::from_string(crate::proxy::LOOPBACK)),
        ),
        None => builder,
    })
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
    fn https_never_goes_to_http_and_pages_stay_on_their_host() {
        let u = |s: &str| reqwest::Url::parse(s).unwrap();
        let ok = |a: &str, b: &str, c: &str, same| redirect_allowed(&u(a), &u(b), &u(c), same);
        // Same scheme or better: followed (a CDN on another host, for files).
        assert!(ok("https://a/x", "https://a/x", "https://cdn.b/x", false).is_ok());
        assert!(ok("http://lan/x", "http://lan/x", "https://lan/x", false).is_ok());
        assert!(ok("http://lan/x", "http://lan/x", "http://other/x", false).is_ok());
        // A downgrade, directly or after a hop: refused.
        for (a, b, c) in [
            ("https://a/x", "https://a/x", "http://a/x"),
            ("https://a/x", "https://cdn/x", "http://cdn/y"),
            ("http://lan/x", "https://lan/x", "http://lan/y"),
            ("https://a/x", "https://a/x", "ftp://a/x"),
        ] {
            assert!(
                matches!(ok(a, b, c, false), Err(RedirectRefused::Downgrade { .. })),
                "{a} {b} {c}"
            );
        }
        // Pages: the host (and port) first asked, only.
        assert!(
            ok(
                "https://pypi.org/simple/",
                "https://pypi.org/simple/",
                "https://PyPI.org/simple/x/",
                true
            )
            .is_ok()
        );
        for c in [
            "https://evil.example/simple/x/",
            "https://pypi.org:8443/simple/x/",
            "http://localhost:8000/x",
        ] {
            assert!(
                ok(
                    "https://pypi.org/simple/",
                    "https://pypi.org/simple/",
                    c,
                    true
                )
                .is_err(),
                "{c}"
            );
        }
        assert!(matches!(
            ok(
                "http://127.0.0.1:8000/s/",
                "http://127.0.0.1:8000/s/",
                "http://localhost:8000/s/",
                true
            ),
            Err(RedirectRefused::OtherHost { .. })
        ));
    }

    #[test]
    fn both_clients_build() {
        let t = Duration::from_secs(1);
        assert!(download_client(t, true).is_ok());
        assert!(download_client(t, false).is_ok());
        assert!(fetch_client(t, t).is_ok() && page_client(t, t).is_ok());
        assert!(download_runtime().is_ok() && fetch_runtime().is_ok());
    }
}
