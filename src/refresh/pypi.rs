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

/// The newest version among a project page's files (or its PEP 700 `versions`).
pub fn newest(body: &str, project: &str) -> Result<Option<Version>, String> {
    let trimmed = body.trim_start();
    let mut versions: Vec<Version> = Vec::new();
    if trimmed.starts_with('{') {
        let v: serde_json::Value =
            serde_json::from_str(trimmed).map_err(|e| format!("not JSON: {e}"))?;
        if let Some(list) = v["versions"].as_array() {
            versions.extend(list.iter().filter_map(|x| x.as_str()?.parse().ok()));
        }
        let files = v["files"].as_array().ok_or("no \"files\" list")?;
        versions.extend(
            files
                .iter()
                .filter_map(|f| version_of(f["filename"].as_str()?, project)),
        );
    } else {
        if !trimmed.to_ascii_lowercase().contains("<a") {
            return Err("neither a JSON nor an HTML simple-index page".into());
        }
        versions.extend(
            body.split(['"', '\'', '<', '>', '/', '#'])
                .filter_map(|t| version_of(t, project)),
        );
    }
    Ok(versions.into_iter().max())
}

/// `nvidia_cudnn_cu13-9.27.0.42-py3-none-win_amd64.whl` → 9.27.0.42 (for this project).
fn version_of(file: &str, project: &str) -> Option<Version> {
    let norm = project.replace('-', "_");
    let rest = file
        .strip_prefix(&norm)
        .or_else(|| file.strip_prefix(project))?
        .strip_prefix('-')?;
    let v = if file.ends_with(".whl") {
        rest.split('-').next()?
    } else {
        rest.strip_suffix(".tar.gz")?
    };
    v.parse().ok()
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
