//! Small GETs for listings, manifests and index pages: one client, few retries, short
//! timeouts, so an offline machine falls back in seconds rather than minutes.

use std::time::Duration;

use super::RefreshError;
use crate::http;

pub(super) struct Fetcher {
    client: reqwest::Client,
    rt: tokio::runtime::Runtime,
}

/// Page bodies above this are refused (the real torch index pages are ~1 MB).
pub(super) const MAX_BYTES: usize = 32 << 20;
/// A wheel's core metadata (PEP 658) above this is refused (torch's is ~40 KB).
pub(super) const MAX_METADATA_BYTES: usize = 1 << 20;

impl Fetcher {
    pub fn new(timeout: Duration) -> Result<Fetcher, RefreshError> {
        let client =
            http::fetch_client(timeout.min(Duration::from_secs(10)), timeout).map_err(|e| {
                RefreshError::Network {
                    url: String::new(),
                    detail: e.to_string(),
                }
            })?;
        let rt = http::fetch_runtime().map_err(|e| RefreshError::Network {
            url: String::new(),
            detail: e.to_string(),
        })?;
        Ok(Fetcher { client, rt })
    }

    /// The body of `url` as text; `accept` is sent as the Accept header when given.
    /// A 5xx or a dropped connection is tried once more; a 404 is `NotFound`.
    pub fn get(&self, url: &str, accept: Option<&str>) -> Result<String, RefreshError> {
        self.get_limited(url, accept, MAX_BYTES)
    }

    /// [`Fetcher::get`] refusing a body above `max` bytes: one that announces more is
    /// not read at all, one without a length (or lying about it) is cut off at `max`.
    pub fn get_limited(
        &self,
        url: &str,
        accept: Option<&str>,
        max: usize,
    ) -> Result<String, RefreshError> {
        let mut last = None;
        for attempt in 0..2 {
            if attempt > 0 {
                std::thread::sleep(Duration::from_millis(300));
            }
            match self.once(url, accept, max) {
                Ok(t) => return Ok(t),
                Err(e @ RefreshError::Network { .. }) => last = Some(e),
                Err(RefreshError::Http { status, .. }) if status >= 500 => {
                    last = Some(RefreshError::Http {
                        url: url.into(),
                        status,
                    })
                }
                Err(e) => return Err(e),
            }
        }
        Err(last.expect("two attempts"))
    }

    fn once(&self, url: &str, accept: Option<&str>, max: usize) -> Result<String, RefreshError> {
        let net = |e: reqwest::Error| RefreshError::Network {
            url: url.into(),
            detail: e.to_string(),
        };
        self.rt.block_on(async {
            let mut req = self.client.get(url);
            if let Some(a) = accept {
                req = req.header(reqwest::header::ACCEPT, a);
            }
            let mut resp = req.send().await.map_err(net)?;
            let status = resp.status().as_u16();
            if status == 404 {
                return Err(RefreshError::NotFound { url: url.into() });
            }
            if !(200..300).contains(&status) {
                return Err(RefreshError::Http {
                    url: url.into(),
                    status,
                });
            }
            let too_large = |n: u64| RefreshError::Malformed {
                url: url.into(),
                problem: format!("{n} bytes is too large (at most {max} are read)"),
            };
            if let Some(n) = resp.content_length()
                && n > max as u64
            {
                return Err(too_large(n));
            }
            // Read in pieces, so a body without a length (or longer than it said) costs
            // at most `max` bytes of memory.
            let mut bytes = Vec::new();
            while let Some(chunk) = resp.chunk().await.map_err(net)? {
                if bytes.len() + chunk.len() > max {
                    return Err(too_large((bytes.len() + chunk.len()) as u64));
                }
                bytes.extend_from_slice(&chunk);
            }
            String::from_utf8(bytes).map_err(|_| RefreshError::Malformed {
                url: url.into(),
                problem: "not UTF-8 text".into(),
            })
        })
    }
}
