//! Short fetches: a page of text (an index page, NVIDIA's checksum list) and a size probe.

use super::*;

/// A small text file (a checksum list, a manifest): the first source that answers.
pub(in crate::download) fn get_text(
    sources: &[String],
    opts: &Options,
) -> Result<String, DownloadError> {
    get_page(sources, None, opts).map(|p| p.text)
}

/// A fetched page: where it ended up (after redirects), its media type and its text.
#[derive(Debug, Clone)]
pub struct Page {
    pub url: String,
    pub content_type: String,
    pub text: String,
}

/// The largest page read into memory (PyPI's JSON for torch is a few MiB; a bigger page
/// is that source's failure).
pub(super) const MAX_PAGE: u64 = 32 << 20;

/// Like `get_text`, with an `Accept` header and the response's URL and media type (a
/// package index answers JSON or HTML, and relative links resolve against the final URL).
pub fn get_page(
    sources: &[String],
    accept: Option<&str>,
    opts: &Options,
) -> Result<Page, DownloadError> {
    // Pages carry hashes: their redirects stay https and on the host named.
    let client = http::page_client(opts.connect_timeout, opts.stall_timeout).map_err(|e| {
        DownloadError::network(sources.first().cloned().unwrap_or_default(), cause(e))
    })?;
    let rt = http::fetch_runtime().map_err(|e| io_err(Path::new("tokio runtime"), e))?;
    let mut failures = Vec::new();
    for url in sources {
        let got = rt.block_on(retrying(url, opts, &(), &Cancel::default(), 2, || async {
            let mut req = client.get(url);
            if let Some(a) = accept {
                req = req.header(reqwest::header::ACCEPT, a);
            }
            let mut resp = req
                .send()
                .await
                .map_err(|e| http_error(url, e, opts.stall_timeout))?;
            landed(url, &resp, true)?;
            ok_status(url, &resp)?;
            let final_url = resp.url().to_string();
            let content_type = resp
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_ascii_lowercase();
            // Bounded in time by the client's timeout, and in size here.
            let mut body = Vec::new();
            while let Some(b) = resp
                .chunk()
                .await
                .map_err(|e| http_error(url, e, opts.stall_timeout))?
            {
                if (body.len() + b.len()) as u64 > MAX_PAGE {
                    return Err(DownloadError::TooLong {
                        url: url.clone(),
                        expected: MAX_PAGE,
                    });
                }
                body.extend_from_slice(&b);
            }
            let text = String::from_utf8_lossy(&body).into_owned();
            Ok(Page {
                url: final_url,
                content_type,
                text,
            })
        }));
        match got {
            Ok(p) => return Ok(p),
            Err(e) => failures.push(e),
        }
    }
    Err(DownloadError::AllSourcesFailed(failures))
}

/// The size of the file at `url` (a one-byte ranged GET, which servers answer where a
/// HEAD is refused), or None when the server does not tell within `timeout`. Used only to
/// size the pre-flight disk check; the download itself checks again.
pub fn remote_size(url: &str, timeout: Duration) -> Option<u64> {
    let client = http::fetch_client(timeout, timeout).ok()?;
    let rt = http::fetch_runtime().ok()?;
    let opts = Options {
        connect_timeout: timeout,
        first_byte_timeout: timeout,
        ..Options::default()
    };
    rt.block_on(async { probe(&client, url, &opts).await.ok()?.size() })
}
