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
const MAX_BYTES: usize = 32 << 20;

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
        let mut last = None;
        for attempt in 0..2 {
            if attempt > 0 {
                std::thread::sleep(Duration::from_millis(300));
            }
            match self.once(url, accept) {
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

    fn once(&self, url: &str, accept: Option<&str>) -> Result<String, RefreshError> {
        let net = |e: reqwest::Error| RefreshError::Network {
            url: url.into(),
            detail: e.to_string(),
        };
        self.rt.block_on(async {
            let mut req = self.client.get(url);
            if let Some(a) = accept {
                req = req.header(reqwest::header::ACCEPT, a);
            }
            let resp = req.send().await.map_err(net)?;
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
            let bytes = resp.bytes().await.map_err(net)?;
            if bytes.len() > MAX_BYTES {
                return Err(RefreshError::Malformed {
                    url: url.into(),
                    problem: format!("{} bytes is too large for a listing", bytes.len()),
                });
            }
            String::from_utf8(bytes.to_vec()).map_err(|_| RefreshError::Malformed {
                url: url.into(),
                problem: "not UTF-8 text".into(),
            })
        })
    }
}
