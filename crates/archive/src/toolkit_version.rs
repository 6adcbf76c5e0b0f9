//! The versions a CUDA toolkit folder holds. CUDA's: `version.json`, `version.txt` (11.0
//! and older), `nvcc --version`, the folder's name — in that order; cuDNN's, from its
//! header. Detection reports them; the cuDNN install checks the toolkit's against the
//! archive's CUDA major before a byte is copied.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::platform::Host;
use crate::version::Version;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VersionSource {
    VersionJson,
    VersionTxt,
    Nvcc,
    FolderName,
}

/// The version of the toolkit in `dir` (version.json, version.txt, nvcc, folder name).
pub fn version_of(host: &Host, dir: &Path, timeout: Duration) -> Option<Version> {
    let nvcc = dir.join("bin").join(host.exe("nvcc"));
    read_version(host, dir, nvcc.is_file().then_some(nvcc.as_path()), timeout).0
}

pub fn read_version(
    host: &Host,
    dir: &Path,
    nvcc: Option<&Path>,
    timeout: Duration,
) -> (Option<Version>, Option<VersionSource>) {
    if let Some(v) = read_small(&dir.join("version.json")).and_then(|t| parse_version_json(&t)) {
        return (Some(v), Some(VersionSource::VersionJson));
    }
    if let Some(v) = read_small(&dir.join("version.txt")).and_then(|t| parse_version_txt(&t)) {
        return (Some(v), Some(VersionSource::VersionTxt));
    }
    if let Some(nvcc) = nvcc
        && let Ok(out) = host.run(nvcc, &["--version"], timeout)
        && let Some(v) = parse_nvcc_version(&out.stdout)
    {
        return (Some(v), Some(VersionSource::Nvcc));
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let from_name = name
        .trim_start_matches("cuda-")
        .trim_start_matches('v')
        .parse()
        .ok();
    (
        from_name.clone(),
        from_name.map(|_| VersionSource::FolderName),
    )
}

/// A toolkit's small text file (`version.json`, `version.txt`): a regular file of at most
/// 1 MiB, judged on the handle and opened without blocking (a FIFO planted at
/// `version.json` would stop detection for ever, a link to `/dev/zero` fill the memory).
/// Links are followed: it is only read, and distributions link headers. None otherwise.
pub fn read_small(path: &Path) -> Option<String> {
    let bytes = crate::place::read_regular_following(path, 1 << 20).ok()??;
    String::from_utf8(bytes).ok()
}

/// `version.json` → `cuda.version` (`"12.4.1"`).
pub fn parse_version_json(text: &str) -> Option<Version> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    v["cuda"]["version"].as_str()?.parse().ok()
}

/// `version.txt` (11.0 and older): `CUDA Version 11.0.228`.
pub fn parse_version_txt(text: &str) -> Option<Version> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("CUDA Version "))
        .and_then(|v| v.trim().parse().ok())
}

/// `nvcc --version`: `Cuda compilation tools, release 12.4, V12.4.131` → 12.4.131.
pub fn parse_nvcc_version(text: &str) -> Option<Version> {
    let line = text
        .lines()
        .find(|l| l.contains("Cuda compilation tools"))?;
    if let Some(full) = line.split(", V").nth(1) {
        return full.trim().parse().ok();
    }
    line.split("release ")
        .nth(1)?
        .split(',')
        .next()?
        .trim()
        .parse()
        .ok()
}

/// `#define CUDNN_MAJOR 9` / `MINOR` / `PATCHLEVEL` → 9.x.y (the `CUDNN_VERSION` formula
/// line is ignored: it differs between 8.x and 9.x).
pub fn parse_cudnn_header(text: &str) -> Option<Version> {
    let get = |name: &str| {
        text.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("#define") && w.next() == Some(name))
                .then(|| w.next()?.parse::<u32>().ok())?
        })
    };
    Some(Version::new(&[
        get("CUDNN_MAJOR")?,
        get("CUDNN_MINOR")?,
        get("CUDNN_PATCHLEVEL")?,
    ]))
}
