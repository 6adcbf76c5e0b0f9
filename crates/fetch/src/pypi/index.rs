//! A PyPI "simple" index page reader: PEP 691 JSON first, PEP 503 HTML when a mirror only
//! speaks that (Tsinghua, Aliyun and most `bandersnatch` mirrors answer HTML).

use serde::Deserialize;

use super::version::WheelVersion;

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
    /// Its `Requires-Python` as the page gives it (JSON `requires-python`, HTML
    /// `data-requires-python`); None when absent or blank.
    pub requires_python: Option<String>,
    /// Its core metadata (PEP 658/714): None, not offered; Some(None), offered without a
    /// hash; Some(Some(sha256)).
    pub metadata: Option<Option<String>>,
    pub yanked: bool,
}

impl DistFile {
    /// Where its core metadata is (`<file URL>.metadata`, PEP 658).
    pub fn metadata_url(&self) -> String {
        format!("{}.metadata", self.url)
    }
}

/// A wheel file name taken apart (`{dist}-{version}(-{build})?-{py}-{abi}-{platform}.whl`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelName {
    pub dist: String,
    pub version: WheelVersion,
    pub platforms: Vec<String>,
}

impl WheelName {
    /// None for sdists and names that are not wheels (pre-releases parse: [the wheels' `pick`]
    /// leaves out those its specifier does not ask for).
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

/// The page's files as listed, names not yet judged (the wheels' `fetch_project` judges them
/// with its own typed error; the refresh only reads them).
pub fn parse_any(base: &str, content_type: &str, text: &str) -> Result<Vec<DistFile>, String> {
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
    /// Read leniently: a value that is not a string is as good as absent.
    #[serde(rename = "requires-python", default)]
    requires_python: serde_json::Value,
    #[serde(rename = "core-metadata", default)]
    core_metadata: serde_json::Value,
    #[serde(rename = "data-dist-info-metadata", default)]
    dist_info_metadata: serde_json::Value,
    #[serde(default)]
    yanked: serde_json::Value,
}

/// A `Requires-Python` worth keeping: a blank one says nothing.
fn requires_python(r: Option<&str>) -> Option<String> {
    r.filter(|r| !r.trim().is_empty()).map(str::to_string)
}

/// JSON core metadata: `true`, `{"sha256": …}` or a `sha256=…` string: offered; false,
/// null, absent: not.
fn metadata_of(v: &serde_json::Value) -> Option<Option<String>> {
    match v {
        serde_json::Value::Bool(true) => Some(None),
        serde_json::Value::Object(o) => Some(
            o.get("sha256")
                .and_then(|h| h.as_str())
                .map(str::to_ascii_lowercase),
        ),
        serde_json::Value::String(s) => metadata_attr(s),
        _ => None,
    }
}

/// HTML core metadata (`data-core-metadata`): `true` or `sha256=…`: offered; `false`: not.
fn metadata_attr(s: &str) -> Option<Option<String>> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("false") {
        return None;
    }
    Some(s.strip_prefix("sha256=").map(str::to_ascii_lowercase))
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
                requires_python: requires_python(f.requires_python.as_str()),
                metadata: metadata_of(&f.core_metadata)
                    .or_else(|| metadata_of(&f.dist_info_metadata)),
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

/// PEP 503: one `<a href="URL#sha256=HEX">FILENAME</a>` per file; `data-yanked` marks
/// yanked ones, `data-requires-python` and `data-core-metadata` (PEP 658/714, formerly
/// `data-dist-info-metadata`) are read as the JSON form's fields. The page goes through a WHATWG tokenizer (html5gum: no dependencies,
/// passes html5lib's tokenizer tests, decodes character references), so quoting,
/// entities, comments and `<script>` text are read as a browser reads them.
pub fn parse_html(base: &str, text: &str) -> Result<Vec<DistFile>, String> {
    let mut base = reqwest::Url::parse(base).map_err(|e| format!("{base}: {e}"))?;
    let mut emitter = html5gum::DefaultEmitter::default();
    // `<script>`, `<style>`, `<title>`… hold text, not tags.
    emitter.naively_switch_states(true);
    let mut out = Vec::new();
    let mut is_html = false;
    let mut open: Option<Anchor> = None;
    for token in html5gum::Tokenizer::new_with_emitter(text, emitter).flatten() {
        match token {
            html5gum::Token::Doctype(_) => is_html = true,
            html5gum::Token::StartTag(tag) => {
                let attr = |name: &str| {
                    tag.attributes
                        .get(name.as_bytes())
                        .map(|v| String::from_utf8_lossy(v).into_owned())
                };
                match tag.name.as_slice() {
                    b"html" => is_html = true,
                    // Links resolve against `<base href>` when the page has one.
                    b"base" => {
                        if let Some(href) = attr("href") {
                            base = base.join(&href).map_err(|e| format!("{href}: {e}"))?;
                        }
                    }
                    b"a" => {
                        // An `<a>` inside an open one closes it, as in a browser.
                        if let Some(a) = open.take() {
                            out.extend(a.finish(&base)?);
                        }
                        open = Some(Anchor {
                            href: attr("href"),
                            requires_python: attr("data-requires-python"),
                            metadata: attr("data-core-metadata")
                                .or_else(|| attr("data-dist-info-metadata"))
                                .and_then(|m| metadata_attr(&m)),
                            yanked: attr("data-yanked").is_some(),
                            text: String::new(),
                        });
                    }
                    _ => {}
                }
            }
            html5gum::Token::String(s) => {
                if let Some(a) = open.as_mut() {
                    a.text.push_str(&String::from_utf8_lossy(&s));
                }
            }
            html5gum::Token::EndTag(tag) if tag.name.as_slice() == b"a" => {
                if let Some(a) = open.take() {
                    out.extend(a.finish(&base)?);
                }
            }
            _ => {}
        }
    }
    if let Some(a) = open.take() {
        out.extend(a.finish(&base)?);
    }
    if out.is_empty() && !is_html {
        return Err("neither a PEP 691 JSON nor a PEP 503 HTML page".into());
    }
    Ok(out)
}

/// One `<a>` being read: its attributes (entities already decoded) and its text.
struct Anchor {
    href: Option<String>,
    requires_python: Option<String>,
    metadata: Option<Option<String>>,
    yanked: bool,
    text: String,
}

impl Anchor {
    /// The file it lists; None for an anchor without `href`.
    fn finish(self, base: &reqwest::Url) -> Result<Option<DistFile>, String> {
        let Some(href) = self.href else {
            return Ok(None);
        };
        let mut url = base.join(&href).map_err(|e| format!("{href}: {e}"))?;
        let sha256 = url
            .fragment()
            .and_then(|f| f.strip_prefix("sha256="))
            .map(str::to_ascii_lowercase);
        url.set_fragment(None);
        // PEP 503: the text is the file name; careless pages put other text there, so
        // the link's last path segment, percent-decoded, stands in for it.
        let text = self.text.trim();
        let filename = if text.contains('.') && !text.contains(char::is_whitespace) {
            text.to_string()
        } else {
            let last = url.path_segments().and_then(|mut s| s.next_back());
            percent_encoding::percent_decode_str(last.unwrap_or(""))
                .decode_utf8_lossy()
                .into_owned()
        };
        Ok(Some(DistFile {
            url: url.to_string(),
            sha256,
            size: None,
            requires_python: requires_python(self.requires_python.as_deref()),
            metadata: self.metadata,
            yanked: self.yanked,
            filename,
        }))
    }
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
        let rc = WheelName::parse("nvidia_cuda_nvcc-13.4.46rc1-py3-none-win_amd64.whl").unwrap();
        assert!(rc.version.is_prerelease());
        let post = WheelName::parse("nvidia_cudnn_cu12-9.1.0.70.post1-py3-none-win_amd64.whl");
        assert_eq!(post.unwrap().version.to_string(), "9.1.0.70.post1");
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

    const BASE: &str = "https://mirrors.example/pypi/simple/torch/";

    #[test]
    fn json_and_html_agree_on_requires_python_and_metadata() {
        let json = r#"{"files":[
            {"filename":"t-1.0-py3-none-any.whl","url":"t-1.0-py3-none-any.whl","requires-python":">=3.11","core-metadata":{"sha256":"CD"}},
            {"filename":"u-1.0-py3-none-any.whl","url":"u-1.0-py3-none-any.whl","requires-python":" ","data-dist-info-metadata":true}]}"#;
        let html = r#"<!DOCTYPE html><html><body>
<a href="t-1.0-py3-none-any.whl" data-requires-python="&gt;=3.11" data-core-metadata="sha256=CD">t-1.0-py3-none-any.whl</a>
<a href="u-1.0-py3-none-any.whl" data-requires-python=" " data-dist-info-metadata="true">u-1.0-py3-none-any.whl</a>
</body></html>"#;
        let j = parse_page(BASE, "application/vnd.pypi.simple.v1+json", json).unwrap();
        let h = parse_page(BASE, "text/html", html).unwrap();
        assert_eq!(j, h);
        assert_eq!(j[0].requires_python.as_deref(), Some(">=3.11"));
        assert_eq!(j[0].metadata, Some(Some("cd".into())));
        assert_eq!(
            j[0].metadata_url(),
            format!("{BASE}t-1.0-py3-none-any.whl.metadata")
        );
        // A blank Requires-Python says nothing; the older attribute stands in.
        assert_eq!(
            (&j[1].requires_python, &j[1].metadata),
            (&None, &Some(None))
        );
    }

    fn html(body: &str) -> Vec<DistFile> {
        parse_page(
            BASE,
            "text/html",
            &format!("<!DOCTYPE html><html><body>{body}</body></html>"),
        )
        .unwrap()
    }

    #[test]
    fn html_attributes_as_a_browser_reads_them() {
        // Entities in an attribute, and in the text.
        let f = html(
            r#"<a href="../../p/x-1.0-py3-none-any.whl?a=1&amp;b=2#sha256=AB">x-1.0-py3-none-any.whl</a>"#,
        );
        assert_eq!(
            f[0].url,
            "https://mirrors.example/pypi/p/x-1.0-py3-none-any.whl?a=1&b=2"
        );
        assert_eq!(f[0].sha256.as_deref(), Some("ab"));
        let f = html("<a href='x-1.0-py3-none-any.whl'>x&#45;1.0&#x2D;py3-none-any.whl</a>");
        assert_eq!(f[0].filename, "x-1.0-py3-none-any.whl");
        assert_eq!(f[0].url, format!("{BASE}x-1.0-py3-none-any.whl"));
        // Unquoted, with `>` right after and attribute names in capitals.
        let f = html(
            "<A HREF=/f/y-2.0-py3-none-any.whl#sha256=cd DATA-YANKED>y-2.0-py3-none-any.whl</A>",
        );
        assert_eq!(f[0].url, "https://mirrors.example/f/y-2.0-py3-none-any.whl");
        assert_eq!(f[0].sha256.as_deref(), Some("cd"));
        assert!(f[0].yanked);
        // `data-yanked` with a reason; a `data-yanked`-like text is not the attribute.
        let f = html(
            r#"<a data-yanked="broken &gt; 1" href="a-1-py3-none-any.whl">a-1-py3-none-any.whl</a><a href="b-1-py3-none-any.whl" title="data-yanked">b-1-py3-none-any.whl</a>"#,
        );
        assert!(f[0].yanked && !f[1].yanked);
        // A fragment other than sha256 gives no hash; the URL never keeps one.
        let f = html(r#"<a href="c-1-py3-none-any.whl#md5=00">c-1-py3-none-any.whl</a>"#);
        assert_eq!(
            (f[0].sha256.as_deref(), f[0].url.contains('#')),
            (None, false)
        );
    }

    #[test]
    fn html_percent_encoded_names() {
        // Anchor text that is not a file name: the href's last segment, decoded.
        let f = html(
            r#"<a href="/whl/cu130/torch-2.15.0%2Bcu130-cp312-cp312-win_amd64.whl#sha256=ee">download</a>"#,
        );
        assert_eq!(
            f[0].filename,
            "torch-2.15.0+cu130-cp312-cp312-win_amd64.whl"
        );
        assert_eq!(
            f[0].url,
            "https://mirrors.example/whl/cu130/torch-2.15.0%2Bcu130-cp312-cp312-win_amd64.whl"
        );
        let w = WheelName::parse(&f[0].filename).unwrap();
        assert_eq!(w.version.to_string(), "2.15.0+cu130");
        // An encoded separator decodes into a name that is refused, the page with it.
        let bad = "<html><a href=\"p/..%2F..%2Fevil-1.0-py3-none-any.whl\">x</a></html>";
        assert!(parse_page(BASE, "text/html", bad).is_err());
    }

    #[test]
    fn html_comments_cdata_and_scripts_hold_no_links() {
        let f = html(concat!(
            "<!-- <a href=\"fake-1-py3-none-any.whl\">fake-1-py3-none-any.whl</a> -->",
            "<![CDATA[<a href=\"cdata-1-py3-none-any.whl\">cdata-1-py3-none-any.whl</a>]]>",
            "<script>document.write('<a href=\"js-1-py3-none-any.whl\">js</a>')</script>",
            "<a href=\"real-1-py3-none-any.whl\">real-1-py3-none-any.whl</a>",
        ));
        let names: Vec<&str> = f.iter().map(|f| f.filename.as_str()).collect();
        assert_eq!(names, ["real-1-py3-none-any.whl"]);
        // Anchors without href are not files; an unclosed one still is.
        let f = html("<a name=top>top</a><a href=\"z-1-py3-none-any.whl\">z-1-py3-none-any.whl");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].filename, "z-1-py3-none-any.whl");
    }

    #[test]
    fn html_base_element() {
        let text = r#"<html><head><base href="https://files.example/root/"></head><a href="w-1-py3-none-any.whl">w-1-py3-none-any.whl</a></html>"#;
        let f = parse_page(BASE, "text/html", text).unwrap();
        assert_eq!(f[0].url, "https://files.example/root/w-1-py3-none-any.whl");
    }
}
