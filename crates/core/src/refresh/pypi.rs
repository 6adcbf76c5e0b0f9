//! PyPI's simple API (or a mirror's): the newest release of `nvidia-cudnn-cu13` and
//! friends. JSON (PEP 691) when the server offers it, else the PEP 503 HTML page.

use serde::{Deserialize, Serialize};

use crate::version::Version;

/// The projects whose newest release is reported.
pub const PACKAGES: [&str; 3] = ["nvidia-cudnn-cu12", "nvidia-cudnn-cu13", "nvidia-cuda-nvcc"];

pub const ACCEPT: &str = "application/vnd.pypi.simple.v1+json, text/html;q=0.1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LivePackage {
    pub name: String,
    /// The newest final release (pre-releases and odd versions are skipped).
    pub newest: Option<Version>,
}

/// The newest final release among a project page's wheels. The page is read by the
/// wheels method's index client (PEP 691 JSON or PEP 503 HTML).
pub fn newest(body: &str, project: &str) -> Result<Option<Version>, String> {
    let files = crate::wheels::index::parse_page("http://index.invalid/", "", body)?;
    let want = crate::wheels::index::normalize(project);
    // PEP 700's `versions` list names releases even when `files` is trimmed.
    let listed: Vec<String> = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["versions"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|x| x.as_str().map(str::to_string))
        .collect();
    Ok(files
        .iter()
        .filter_map(|f| crate::wheels::index::WheelName::parse(&f.filename))
        .filter(|w| w.dist == want)
        .map(|w| w.version.to_string())
        .chain(listed)
        // Pre-releases and versions past four parts are not ours to recommend.
        .filter_map(|v| v.parse::<Version>().ok())
        .max())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_html_pages() {
        let json = r#"{"meta":{"api-version":"1.1"},"name":"nvidia-cudnn-cu13","versions":["9.26.0.51","9.27.0.42"],
          "files":[{"filename":"nvidia_cudnn_cu13-9.27.0.42-py3-none-win_amd64.whl","url":"x","hashes":{}},
                   {"filename":"nvidia_cudnn_cu13-9.26.0.51-py3-none-manylinux_2_27_x86_64.whl","url":"x","hashes":{}}]}"#;
        assert_eq!(
            newest(json, "nvidia-cudnn-cu13")
                .unwrap()
                .unwrap()
                .to_string(),
            "9.27.0.42"
        );
        let html = r#"<html><body><a href="https://x/nvidia_cudnn_cu13-9.26.0.51-py3-none-win_amd64.whl#sha256=1">nvidia_cudnn_cu13-9.26.0.51-py3-none-win_amd64.whl</a>
<a href="https://x/nvidia_cudnn_cu13-9.27.0.42-py3-none-manylinux_2_27_x86_64.whl#sha256=2">x</a>
<a href="https://x/nvidia_cudnn_cu13-9.28.0.1rc1-py3-none-win_amd64.whl">rc</a></body></html>"#;
        assert_eq!(
            newest(html, "nvidia-cudnn-cu13")
                .unwrap()
                .unwrap()
                .to_string(),
            "9.27.0.42"
        );
        assert!(newest("garbage", "nvidia-cudnn-cu13").is_err());
    }
}
