//! The proxy the user named (`--proxy`, the wizard's field), one setting for the whole
//! process: every client [`crate::http`] builds goes through it, and pip gets it as
//! `--proxy`. Not set: the system's proxy, as before. Loopback addresses never go
//! through it (a proxy elsewhere cannot reach this machine's servers).
//!
//! SOCKS comes from reqwest's `socks` feature, which in reqwest 0.13 is hyper-util's own
//! client (no further crate in the Windows build).

use std::sync::RwLock;

use crate::message::Message;
use crate::msg;

/// A checked proxy address: `http`, `https`, `socks5` or `socks5h`, with a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proxy(String);

impl Proxy {
    /// The address as the user gave it (credentials included: pip and reqwest need them).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a proxy address was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProxyError {
    #[error(
        "`{0}` is not a proxy address: give one like http://127.0.0.1:7890 or socks5://127.0.0.1:1080"
    )]
    NotUrl(String),
    #[error("`{value}`: a proxy's address starts with http://, https://, socks5:// or socks5h://")]
    Scheme { value: String },
}

impl ProxyError {
    /// The sentence a user reads (both front ends).
    pub fn message(&self) -> Message {
        match self {
            ProxyError::NotUrl(v) => msg!("proxy_bad", value = crate::shown::value(v)),
            ProxyError::Scheme { value } => {
                msg!("proxy_bad_scheme", value = crate::shown::value(value))
            }
        }
    }
}

/// Checks a proxy address: a URL with a host and one of the schemes we can use.
/// `socks4` is refused: it cannot carry a host name, and our downloads name hosts.
pub fn parse(s: &str) -> Result<Proxy, ProxyError> {
    let s = s.trim();
    let url = reqwest::Url::parse(s).map_err(|_| ProxyError::NotUrl(s.to_string()))?;
    if url.host_str().is_none_or(str::is_empty) {
        return Err(ProxyError::NotUrl(s.to_string()));
    }
    if !matches!(url.scheme(), "http" | "https" | "socks5" | "socks5h") {
        return Err(ProxyError::Scheme {
            value: s.to_string(),
        });
    }
    // The checked form is what a client would build from: the same check reqwest makes.
    reqwest::Proxy::all(s).map_err(|_| ProxyError::NotUrl(s.to_string()))?;
    Ok(Proxy(s.to_string()))
}

/// The wizard's text field: empty is "the system's proxy".
pub fn parse_field(s: &str) -> Result<Option<Proxy>, ProxyError> {
    if s.trim().is_empty() {
        Ok(None)
    } else {
        parse(s).map(Some)
    }
}

static CURRENT: RwLock<Option<Proxy>> = RwLock::new(None);

/// Sets the proxy for every client built from now on (None: the system's).
pub fn set(proxy: Option<Proxy>) {
    *CURRENT.write().unwrap_or_else(|e| e.into_inner()) = proxy;
}

/// The proxy the user named, if any.
pub fn current() -> Option<Proxy> {
    CURRENT.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The arguments that give pip the same proxy (none: pip uses the system's, as before).
pub fn pip_args() -> Vec<String> {
    current().map_or_else(Vec::new, |p| vec!["--proxy".into(), p.0])
}

/// Addresses that never go through the user's proxy: this machine.
pub(crate) const LOOPBACK: &str = "localhost,127.0.0.0/8,::1";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_addresses_with_a_scheme_and_host_pass() {
        for ok in [
            "http://127.0.0.1:7890",
            "https://proxy.example.com:8443",
            "socks5://127.0.0.1:1080",
            "socks5h://user:pw@10.0.0.1:1080",
        ] {
            assert_eq!(parse(ok).unwrap().as_str(), ok);
        }
        assert_eq!(parse_field("  ").unwrap(), None);
    }

    #[test]
    fn bare_hosts_and_other_schemes_are_refused() {
        for bad in ["127.0.0.1:7890", "proxy", "", "http://", "file:///tmp"] {
            assert!(matches!(parse(bad), Err(ProxyError::NotUrl(_))), "{bad}");
        }
        for bad in ["ftp://proxy:21", "socks4://127.0.0.1:1080"] {
            assert!(
                matches!(parse(bad), Err(ProxyError::Scheme { .. })),
                "{bad}"
            );
        }
    }
}
