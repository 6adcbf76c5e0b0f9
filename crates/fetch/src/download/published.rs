//! Hashes NVIDIA publishes next to its files, for files the tables have none for:
//! `compute/cuda/<ver>/docs/sidebar/md5sum.txt` for toolkit installers, and the cuDNN
//! redist manifest `compute/cudnn/redist/redistrib_<X.Y.Z>.json` (SHA-256 per archive).

use std::path::Path;

use super::{DownloadError, Expected, Options, Request, engine};
use crate::compat::{CUDA_DOWNLOAD_BASE, CUDNN_REDIST_BASE, Os};
use crate::version::Version;

/// `<md5>  <path>` lines → the MD5 of the entry whose file name is `file`.
pub fn md5_from_list(text: &str, file: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        let (hash, path) = (w.next()?, w.next()?);
        let name = path.trim_start_matches('*').rsplit(['/', '\\']).next()?;
        (name == file && hash.len() == 32 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| hash.to_ascii_lowercase())
    })
}

/// The cuDNN manifest's entry for (os, cuda major): SHA-256, MD5 and size. Tolerates the
/// nested `cudaNN` objects and a flat `relative_path` beside them (dossier §5.4).
pub fn cudnn_from_manifest(text: &str, os: Os, cuda_major: u32) -> Option<Expected> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let platform = match os {
        Os::Windows => "windows-x86_64",
        Os::Linux => "linux-x86_64",
    };
    let entry = &v["cudnn"][platform][format!("cuda{cuda_major}")];
    let sha256 = entry["sha256"].as_str()?.to_ascii_lowercase();
    Some(Expected {
        sha256: Some(sha256),
        md5: entry["md5"].as_str().map(str::to_ascii_lowercase),
        // `size` is a JSON string in NVIDIA's manifests.
        size: entry["size"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .or_else(|| entry["size"].as_u64()),
    })
}

fn via_mirrors(url: String, mirrors: &[String]) -> Vec<String> {
    super::sources(&Request {
        url,
        mirrors: mirrors.to_vec(),
        expected: Expected::default(),
        dest: Default::default(),
        connections: 1,
        cache_dir: None,
        bundle_dirs: vec![],
        allow_http: true,
    })
}

/// A published list or manifest, fetched once: kept as `cache/<name>` for later runs.
/// What it holds are the hashes our downloads are checked against, so the kept copy is
/// input like any state file: read only from a real folder (not a link), as a regular
/// file of at most [`LIST_MAX_BYTES`] (a FIFO never blocks), written new through the
/// folder's handle; a cache folder that is a link is neither read nor written.
fn fetch_cached(
    url: String,
    mirrors: &[String],
    opts: &Options,
    cache: Option<&Path>,
    name: &str,
) -> Result<String, DownloadError> {
    // Run as administrator, a folder another account can change is not a cache of ours:
    // a list planted there would choose the hash our installer is checked against.
    let dir = cache
        .and_then(|c| crate::place::Dir::create(c).ok())
        .filter(|d| !crate::platform::is_elevated() || d.is_ours());
    if let Some(text) = dir
        .as_ref()
        .and_then(|d| d.read(name, LIST_MAX_BYTES).ok().flatten())
        .and_then(|b| String::from_utf8(b).ok())
    {
        return Ok(text);
    }
    let text = engine::get_text(&via_mirrors(url, mirrors), opts)?;
    if let Some(d) = dir {
        let _ = d.write_atomic(name, text.as_bytes(), false);
    }
    Ok(text)
}

/// NVIDIA's md5sum.txt and cuDNN manifests are tens of kilobytes.
const LIST_MAX_BYTES: u64 = 4 << 20;

/// The MD5 NVIDIA lists for a toolkit installer.
pub fn toolkit_md5(
    version: &Version,
    file: &str,
    mirrors: &[String],
    opts: &Options,
    cache: Option<&Path>,
) -> Result<Option<String>, DownloadError> {
    let url = format!("{CUDA_DOWNLOAD_BASE}/{version}/docs/sidebar/md5sum.txt");
    let text = fetch_cached(
        url,
        mirrors,
        opts,
        cache,
        &format!("md5sum-cuda-{version}.txt"),
    )?;
    Ok(md5_from_list(&text, file))
}

/// The hashes NVIDIA's cuDNN manifest gives for an archive.
pub fn cudnn_expected(
    version: &Version,
    os: Os,
    cuda_major: u32,
    mirrors: &[String],
    opts: &Options,
    cache: Option<&Path>,
) -> Result<Option<Expected>, DownloadError> {
    let p = version.parts();
    let label = format!(
        "{}.{}.{}",
        p[0],
        p.get(1).unwrap_or(&0),
        p.get(2).unwrap_or(&0)
    );
    // The manifests sit one level above the per-platform archive folders.
    let base = CUDNN_REDIST_BASE.trim_end_matches("/cudnn");
    let url = format!("{base}/redistrib_{label}.json");
    let text = fetch_cached(
        url,
        mirrors,
        opts,
        cache,
        &format!("redistrib-cudnn-{label}.json"),
    )?;
    Ok(cudnn_from_manifest(&text, os, cuda_major))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_list_lines() {
        let text = "35f518faeedff72d005a244b792f21f4  local_installers/cuda_12.4.1_551.78_windows.exe\n\
                    0123456789abcdef0123456789abcdef  local_installers/cuda_12.4.1_550.54.15_linux.run\n";
        assert_eq!(
            md5_from_list(text, "cuda_12.4.1_551.78_windows.exe").as_deref(),
            Some("35f518faeedff72d005a244b792f21f4")
        );
        assert_eq!(md5_from_list(text, "cuda_12.4.1_windows_network.exe"), None);
    }

    #[test]
    fn cudnn_manifest_shapes() {
        // The 9.27 shape: nested cudaNN objects, plus a flat relative_path beside them.
        let text = r#"{"release_date":"2026-09-29","release_label":"9.27.0","release_product":"cudnn",
          "cudnn":{"name":"NVIDIA CUDA Deep Neural Network library","license":"cudnn","version":"9.27.0.42",
            "cuda_variant":["12","13"],
            "windows-x86_64":{"cuda12":{"relative_path":"cudnn/windows-x86_64/cudnn-windows-x86_64-9.27.0.42_cuda12-archive.zip",
                "sha256":"93949680d6499ad0f17fc1abb131825c9dd41b460844513f608e840e0c8ce72b","md5":"7a8abbde235f0efca1d23635d8ab1b62","size":"1924314965"}},
            "windows-arm64":{"relative_path":"x.zip","cuda13":{"relative_path":"y.zip","sha256":"00","md5":"11","size":"2"}}}}"#;
        let e = cudnn_from_manifest(text, Os::Windows, 12).unwrap();
        assert_eq!(
            e.sha256.as_deref(),
            Some("93949680d6499ad0f17fc1abb131825c9dd41b460844513f608e840e0c8ce72b")
        );
        assert_eq!(e.size, Some(1924314965));
        assert!(cudnn_from_manifest(text, Os::Windows, 13).is_none());
        assert!(cudnn_from_manifest("not json", Os::Linux, 12).is_none());
    }
}
