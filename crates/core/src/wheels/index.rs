//! A PyPI "simple" index client: PEP 691 JSON first, PEP 503 HTML when a mirror only
//! speaks that (Tsinghua, Aliyun and most `bandersnatch` mirrors answer HTML).

use serde::Deserialize;

use super::WheelError;
use super::version::WheelVersion;
use crate::download::{self, Options};

/// What we ask for: JSON preferred, HTML accepted.
pub const ACCEPT: &str = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1";

pub const PYPI: &str = "https://pypi.org/simple";

/// One file a project page lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DistFile {
    pub filename: String,
    /// Absolute, without the `#sha256=` fragment.
    pub url: String,
    pub sha256: Option<String>,
    pub size: Option<u64>,
    pub yanked: bool,
}

/// A wheel file name taken apart (`{dist}-{version}(-{build})?-{py}-{abi}-{platform}.whl`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelName {
    pub dist: String,
    pub version: WheelVersion,
    pub platforms: Vec<String>,
}

impl WheelName {
    /// None for sdists, pre-releases and names that are not wheels.
    pub fn parse(filename: &str) -> Option<WheelName> {
        let stem = filename.strip_suffix(".whl")?;
        let parts: Vec<&str> = stem.split('-').collect();
        if !(5..=6).contains(&parts.len()) {
            return None;
        }
        Some(WheelName {
            dist: normalize(parts[0]),
            version: parts[1].parse().ok()?,
            platforms: parts[parts.len() - 1]
                .split('.')
                .map(str::to_string)
                .collect(),
        })
    }
}

/// PEP 503 name normalisation: lower case, runs of `-_.` become one `-`.
pub fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
        } else {
            if sep && !out.is_empty() {
                out.push('-');
            }
            sep = false;
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// `https://mirror/simple` + `nvidia-cuda-nvcc` → `https://mirror/simple/nvidia-cuda-nvcc/`.
pub fn project_url(index: &str, project: &str) -> String {
    format!("{}/{}/", index.trim_end_matches('/'), normalize(project))
}

/// Fetches and parses one project page.
pub fn fetch_project(
    index: &str,
    project: &str,
    opts: &Options,
) -> Result<Vec<DistFile>, WheelError> {
    let url = project_url(index, project);
    let page = download::get_page(std::slice::from_ref(&url), Some(ACCEPT), opts).map_err(|e| {
        WheelError::Index {
            url: url.clone(),
            source: crate::error::cause(e),
        }
    })?;
    let files = parse_any(&page.url, &page.content_type, &page.text).map_err(|detail| {
        WheelError::Index {
            url: url.clone(),
            source: crate::error::text(detail),
        }
    })?;
    // A listed name becomes a file in our downloads folder: one plain name, or the whole
    // page is refused (a mirror that lists `../x` is not one to take anything from).
    for f in &files {
        crate::safe_path::file_name(&f.filename).map_err(|why| WheelError::UnsafeName {
            origin: url.clone(),
            why,
        })?;
    }
    Ok(files)
}

/// Parses a project page by its media type (a JSON body is recognised even when a
/// careless mirror labels it text/html).
/// Every name it returns is one plain file name; a page listing another is refused.
pub fn parse_page(base: &str, content_type: &str, text: &str) -> Result<Vec<DistFile>, String> {
    let files = parse_any(base, content_type, text)?;
    for f in &files {
        crate::safe_path::file_name(&f.filename)
            .map_err(|why| format!("names a file that cannot be used: {why}"))?;
    }
    Ok(files)
}

/// The page's files as listed, names not yet judged (`fetch_project` judges them with
/// its own typed error).
fn parse_any(base: &str, content_type: &str, text: &str) -> Result<Vec<DistFile>, String> {
    if content_type.contains("json") || text.trim_start().starts_with('{') {
        parse_json(base, text)
    } else {
        parse_html(base, text)
    }
}

#[derive(Deserialize)]
struct JsonPage {
    files: Vec<JsonFile>,
}

#[derive(Deserialize)]
struct JsonFile {
    filename: String,
    url: String,
    #[serde(default)]
    hashes: std::collections::BTreeMap<String, String>,
    size: Option<u64>,
    #[serde(default)]
    yanked: serde_json::Value,
}

fn parse_json(base: &str, text: &str) -> Result<Vec<DistFile>, String> {
    let page: JsonPage =
        serde_json::from_str(text).map_err(|e| format!("not a PEP 691 JSON page: {e}"))?;
    page.files
        .into_iter()
        .map(|f| {
            Ok(DistFile {
                url: resolve(base, &f.url)?,
                sha256: f.hashes.get("sha256").map(|h| h.to_ascii_lowercase()),
                size: f.size,
                // `false`, or `true` / a reason string.
                yanked: !matches!(
                    f.yanked,
                    serde_json::Value::Bool(false) | serde_json::Value::Null
                ),
                filename: f.filename,
            })
        })
        .collect()
}

/// PEP 503: one `<a href="URL#sha256=HEX">FILENAME</a>` per file; `data-yanked` marks yanked ones.
fn parse_html(base: &str, text: &str) -> Result<Vec<DistFile>, String> {
    let mut out = Vec::new();
    let lower = text.to_ascii_lowercase();
    let mut at = 0;
    while let Some(i) = lower[at..].find("<a ") {
        let start = at + i;
        let Some(tag_end) = lower[start..].find('>').map(|j| start + j) else {
            break;
        };
        let Some(close) = lower[tag_end..].find("</a>").map(|j| tag_end + j) else {
            break;
        };
        let tag = &text[start..tag_end];
        let filename = unescape(text[tag_end + 1..close].trim());
        at = close + 4;
        let Some(href) = attr(tag, "href") else {
            continue;
        };
        let href = unescape(&href);
        let (link, fragment) = href.split_once('#').unwrap_or((&href, ""));
        let sha256 = fragment
            .strip_prefix("sha256=")
            .map(|h| h.to_ascii_lowercase());
        // PEP 503: the text is the file name; careless pages put other text there, so
        // the link's last path segment stands in for it.
        let filename = if filename.contains('.') && !filename.contains(' ') {
            filename
        } else {
            crate::safe_path::file_name_from_url(link)
                .unwrap_or_else(|_| link.rsplit('/').next().unwrap_or("").to_string())
        };
        out.push(DistFile {
            url: resolve(base, link)?,
            sha256,
            size: None,
            yanked: attr(tag, "data-yanked").is_some(),
            filename,
        });
    }
    if out.is_empty() && !lower.contains("<html") && !lower.contains("<!doctype") {
        return Err("neither a PEP 691 JSON nor a PEP 503 HTML page".into());
    }
    Ok(out)
}

/// The value of `name="…"` (or `'…'`, or a bare `name`) inside one tag.
fn attr(tag: &str, name: &str) -> Option<String> {
    let lower = tag.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find(name) {
        let s = from + i;
        from = s + name.len();
        let before_ok = s > 0 && lower.as_bytes()[s - 1].is_ascii_whitespace();
        if !before_ok {
            continue;
        }
        let rest = tag[from..].trim_start();
        let Some(rest) = rest.strip_prefix('=') else {
            return Some(String::new());
        };
        let rest = rest.trim_start();
        let q = rest.chars().next()?;
        return if q == '"' || q == '\'' {
            rest[1..].split(q).next().map(str::to_string)
        } else {
            rest.split(|c: char| c.is_whitespace() || c == '>')
                .next()
                .map(str::to_string)
        };
    }
    None
}

fn unescape(s: &str) -> String {
    s.replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
}

fn resolve(base: &str, link: &str) -> Result<String, String> {
    let base = reqwest::Url::parse(base).map_err(|e| format!("{base}: {e}"))?;
    let mut u = base.join(link).map_err(|e| format!("{link}: {e}"))?;
    u.set_fragment(None);
    Ok(u.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_normalise() {
        assert_eq!(normalize("nvidia_cuda_nvcc"), "nvidia-cuda-nvcc");
        assert_eq!(normalize("Cuda.Toolkit"), "cuda-toolkit");
        assert_eq!(normalize("a__-b"), "a-b");
    }

    #[test]
    fn wheel_names() {
        let w = WheelName::parse(
            "nvidia_cuda_nvcc-13.5.37-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        )
        .unwrap();
        assert_eq!(w.dist, "nvidia-cuda-nvcc");
        assert_eq!(w.version.to_string(), "13.5.37");
        assert_eq!(w.platforms.len(), 2);
        assert!(WheelName::parse("nvidia_cuda_nvcc-13.4.46rc1-py3-none-win_amd64.whl").is_none());
        assert!(WheelName::parse("cuda_toolkit-13.5.0.tar.gz").is_none());
        let c = WheelName::parse("nvidia_cuda_cccl-13.3.5.0.6-py3-none-win_amd64.whl").unwrap();
        assert_eq!(c.version.to_string(), "13.3.5.0.6");
    }

    #[test]
    fn json_page() {
        let text = r#"{"meta":{"api-version":"1.1"},"name":"cuda-toolkit","files":[
            {"filename":"cuda_toolkit-13.5.0-py2.py3-none-any.whl","url":"https://files.example/e6/cuda_toolkit-13.5.0-py2.py3-none-any.whl","hashes":{"sha256":"D5B1"},"size":2706,"yanked":false},
            {"filename":"old-1.0-py3-none-any.whl","url":"../../p/old-1.0-py3-none-any.whl","hashes":{},"yanked":"broken"}]}"#;
        let f = parse_page(
            "https://m.example/simple/cuda-toolkit/",
            "application/vnd.pypi.simple.v1+json",
            text,
        )
        .unwrap();
        assert_eq!(f[0].sha256.as_deref(), Some("d5b1"));
        assert_eq!(f[0].size, Some(2706));
        assert!(!f[0].yanked);
        assert!(f[1].yanked);
        assert_eq!(f[1].url, "https://m.example/p/old-1.0-py3-none-any.whl");
    }

    #[test]
    fn html_page() {
        let text = r#"<!DOCTYPE html><html><body><h1>Links for nvidia-cuda-runtime</h1>
<a href="../../packages/ab/nvidia_cuda_runtime-13.5.37-py3-none-win_amd64.whl#sha256=ABC123" data-requires-python="&gt;=3">nvidia_cuda_runtime-13.5.37-py3-none-win_amd64.whl</a><br/>
<a data-yanked="" href='https://other/x-1.0-py3-none-any.whl'>x-1.0-py3-none-any.whl</a>
</body></html>"#;
        let f = parse_page(
            "https://mirrors.example/pypi/simple/nvidia-cuda-runtime/",
            "text/html",
            text,
        )
        .unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(
            f[0].url,
            "https://mirrors.example/pypi/packages/ab/nvidia_cuda_runtime-13.5.37-py3-none-win_amd64.whl"
        );
        assert_eq!(f[0].sha256.as_deref(), Some("abc123"));
        assert!(!f[0].yanked && f[1].yanked);
        assert!(parse_page("https://x/", "text/plain", "garbage").is_err());
    }
}
