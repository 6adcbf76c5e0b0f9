//! NVIDIA's redist folders: the directory listing names `redistrib_<X.Y.Z>.json`; each
//! manifest lists components with per-platform `relative_path`, `sha256`, `md5` and
//! `size` (a JSON string), and CUDA's carry the bundled `nvidia_driver` (dossier §5.4).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::compat::Os;
use crate::version::Version;

/// A CUDA release as its manifest describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveToolkit {
    pub version: Version,
    pub release_date: Option<String>,
    /// `redistrib_13.6.0.json`
    pub manifest: String,
    /// `nvidia_driver.version`: the driver the Linux runfile bundles. Not a minimum
    /// (12.8.0 bundles 570.86.10 but needs 570.26), so it only names the runfile.
    pub bundled_driver: Option<Version>,
    /// Components ship for windows-x86_64 / linux-x86_64.
    pub windows: bool,
    pub linux: bool,
    /// The installers NVIDIA's md5sum.txt for this release names, with their MD5s; None
    /// when the list was not read (the names then follow NVIDIA's pattern, unhashed).
    #[serde(default)]
    pub installers: Option<LiveInstallers>,
}

/// The x86-64 installers of one release, as its md5sum.txt names them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveInstallers {
    pub windows_local: Option<LiveFile>,
    pub windows_network: Option<LiveFile>,
    pub linux_runfile: Option<LiveFile>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveFile {
    pub file: String,
    pub md5: String,
}

/// The installers in NVIDIA's `compute/cuda/<v>/docs/sidebar/md5sum.txt` (lines `MD5
/// path`). Only names for release `v`, x86-64 (no arm64, sbsa or aarch64), and a hash
/// of 32 hex digits count; anything else in the list is ignored.
pub fn installers_from_md5sum(text: &str, v: &Version) -> LiveInstallers {
    let prefix = format!("cuda_{v}_");
    let mut out = LiveInstallers::default();
    for line in text.lines() {
        let mut w = line.split_whitespace();
        let (Some(md5), Some(path)) = (w.next(), w.next()) else {
            continue;
        };
        let file = path
            .trim_start_matches('*')
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or("");
        let lower = file.to_ascii_lowercase();
        if !lower.starts_with(&prefix)
            || md5.len() != 32
            || !md5.bytes().all(|b| b.is_ascii_hexdigit())
            || ["arm64", "sbsa", "aarch64"]
                .iter()
                .any(|a| lower.contains(a))
        {
            continue;
        }
        let slot = if lower.ends_with(".exe") && lower.contains("network") {
            &mut out.windows_network
        } else if lower.ends_with(".exe") {
            &mut out.windows_local
        } else if lower.ends_with("_linux.run") {
            &mut out.linux_runfile
        } else {
            continue;
        };
        slot.get_or_insert(LiveFile {
            file: file.to_string(),
            md5: md5.to_ascii_lowercase(),
        });
    }
    out
}

/// A cuDNN release as its manifest describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveCudnn {
    /// Four parts (`9.27.0.42`).
    pub version: Version,
    pub release_date: Option<String>,
    pub manifest: String,
    pub archives: Vec<LiveArchive>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveArchive {
    pub os: Os,
    pub cuda_major: u32,
    /// Relative to the redist folder (`cudnn/windows-x86_64/cudnn-…-archive.zip`).
    pub relative_path: String,
    pub sha256: String,
    pub md5: Option<String>,
    pub size: Option<u64>,
}

/// The versions a redist folder's listing names (`redistrib_12.4.1.json` → 12.4.1).
pub fn listing(html: &str) -> Vec<Version> {
    let mut out: Vec<Version> = html
        .match_indices("redistrib_")
        .filter_map(|(i, _)| {
            let rest = &html[i + "redistrib_".len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            let v = rest[..end].trim_end_matches('.');
            rest[v.len()..]
                .starts_with(".json")
                .then(|| v.parse().ok())
                .flatten()
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

pub fn manifest_name(v: &Version) -> String {
    format!("redistrib_{v}.json")
}

fn platform_key(os: Os) -> &'static str {
    match os {
        Os::Windows => "windows-x86_64",
        Os::Linux => "linux-x86_64",
    }
}

/// The top-level checks both manifests share: JSON object, product, label = file name.
fn top(text: &str, version: &Version, product: &str) -> Result<Value, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    if !v.is_object() {
        return Err("not a JSON object".into());
    }
    match v["release_product"].as_str() {
        Some(p) if p == product => {}
        Some(p) => {
            return Err(format!(
                "release_product is \"{p}\", expected \"{product}\""
            ));
        }
        None => return Err("release_product is missing".into()),
    }
    let label = v["release_label"]
        .as_str()
        .ok_or("release_label is missing")?;
    let parsed: Version = label
        .parse()
        .map_err(|_| format!("release_label \"{label}\" is not a version"))?;
    if parsed.parts() != version.parts() {
        return Err(format!(
            "release_label \"{label}\" does not match the file name ({version})"
        ));
    }
    if let Some(d) = v.get("release_date")
        && !d.as_str().is_some_and(is_date)
    {
        return Err(format!("release_date {d} is not YYYY-MM-DD"));
    }
    Ok(v)
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// One file entry's fields, checked: relative_path, sha256 (64 hex), md5 (32 hex, if
/// any), size (a string of digits, or a number).
fn file_entry(
    e: &Value,
    at: &str,
) -> Result<(String, String, Option<String>, Option<u64>), String> {
    let rel = e["relative_path"]
        .as_str()
        .ok_or_else(|| format!("{at}: relative_path is missing"))?;
    // Its last part becomes a file name in our downloads: every part a plain name.
    crate::safe_path::relative(rel)
        .map_err(|why| format!("{at}: relative_path cannot be used: {why}"))?;
    let sha = e["sha256"]
        .as_str()
        .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or_else(|| format!("{at}: sha256 is missing or not 64 hex digits"))?;
    let md5 = match &e["md5"] {
        Value::Null => None,
        Value::String(h) if h.len() == 32 && h.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Some(h.to_ascii_lowercase())
        }
        other => return Err(format!("{at}: md5 {other} is not 32 hex digits")),
    };
    let size = match &e["size"] {
        Value::Null => None,
        Value::String(s) => Some(
            s.parse::<u64>()
                .map_err(|_| format!("{at}: size \"{s}\" is not a number"))?,
        ),
        Value::Number(n) => Some(
            n.as_u64()
                .ok_or_else(|| format!("{at}: size {n} is not a byte count"))?,
        ),
        other => return Err(format!("{at}: size {other} is not a number")),
    };
    Ok((rel.to_string(), sha.to_ascii_lowercase(), md5, size))
}

/// A CUDA `redistrib_<version>.json`. Every component's platform entries are checked,
/// so a damaged manifest is refused as a whole.
pub fn cuda_manifest(text: &str, version: &Version) -> Result<LiveToolkit, String> {
    let v = top(text, version, "cuda")?;
    let mut components = 0;
    let (mut windows, mut linux) = (false, false);
    let mut bundled_driver = None;
    for (name, comp) in v.as_object().expect("checked").iter() {
        if name.starts_with("release_") {
            continue;
        }
        let Some(obj) = comp.as_object() else {
            return Err(format!("component {name} is not an object"));
        };
        components += 1;
        for (platform, entry) in obj {
            if !entry.is_object() || platform == "cuda_variant" {
                continue;
            }
            file_entry(entry, &format!("{name}.{platform}"))?;
            if name == "nvidia_driver" {
                continue;
            }
            windows |= platform == platform_key(Os::Windows);
            linux |= platform == platform_key(Os::Linux);
        }
        if name == "nvidia_driver" {
            let d = obj
                .get("version")
                .and_then(Value::as_str)
                .ok_or("nvidia_driver.version is missing")?;
            bundled_driver = Some(
                d.parse::<Version>()
                    .map_err(|_| format!("nvidia_driver.version \"{d}\" is not a version"))?,
            );
        }
    }
    if components == 0 {
        return Err("lists no components".into());
    }
    Ok(LiveToolkit {
        version: version.clone(),
        release_date: v["release_date"].as_str().map(str::to_string),
        manifest: manifest_name(version),
        bundled_driver,
        windows,
        linux,
        installers: None,
    })
}

/// A cuDNN `redistrib_<X.Y.Z>.json`: the `cudnn` component, per platform either nested
/// `cudaNN` objects or (9.27 windows-arm64) a flat entry beside them, which is skipped.
pub fn cudnn_manifest(text: &str, label: &Version) -> Result<LiveCudnn, String> {
    let v = top(text, label, "cudnn")?;
    let c = &v["cudnn"];
    if !c.is_object() {
        return Err("the cudnn component is missing".into());
    }
    let ver = c["version"].as_str().ok_or("cudnn.version is missing")?;
    let version: Version = ver
        .parse()
        .map_err(|_| format!("cudnn.version \"{ver}\" is not a version"))?;
    if version.parts().len() != 4 || !version.parts().starts_with(label.parts()) {
        return Err(format!(
            "cudnn.version \"{ver}\" is not a four-part version of {label}"
        ));
    }
    let mut archives = Vec::new();
    for os in [Os::Windows, Os::Linux] {
        let key = platform_key(os);
        let Some(p) = c.get(key) else { continue };
        let Some(p) = p.as_object() else {
            return Err(format!("cudnn.{key} is not an object"));
        };
        for (k, entry) in p {
            // Only `cuda12`-style keys: `cuda13.4` and flat fields are other builds.
            let Some(major) = k
                .strip_prefix("cuda")
                .filter(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|m| m.parse::<u32>().ok())
            else {
                continue;
            };
            let (relative_path, sha256, md5, size) =
                file_entry(entry, &format!("cudnn.{key}.{k}"))?;
            archives.push(LiveArchive {
                os,
                cuda_major: major,
                relative_path,
                sha256,
                md5,
                size,
            });
        }
    }
    archives.sort_by_key(|a| (a.cuda_major, a.os.as_str()));
    Ok(LiveCudnn {
        version,
        release_date: v["release_date"].as_str().map(str::to_string),
        manifest: manifest_name(label),
        archives,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/refresh")
            .join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn listing_names_every_manifest_once() {
        let got = listing(&fixture("cuda-redist-index.html"));
        assert!(
            got.contains(&v("12.4.1")) && got.contains(&v("13.6.0")),
            "{got:?}"
        );
        assert!(got.windows(2).all(|w| w[0] < w[1]));
        assert!(listing("<a href=\"redistrib_x.json\">").is_empty());
    }

    #[test]
    fn cuda_manifest_real_shape() {
        let t = cuda_manifest(&fixture("redistrib_12.4.1.json"), &v("12.4.1")).unwrap();
        assert_eq!(t.bundled_driver, Some(v("550.54.15")));
        assert!(t.windows && t.linux);
        assert_eq!(t.release_date, None);
        // A label that disagrees with the file name is refused.
        let e = cuda_manifest(&fixture("redistrib_12.4.1.json"), &v("12.4.2")).unwrap_err();
        assert!(e.contains("release_label"), "{e}");
    }

    #[test]
    fn malformed_cuda_manifests_say_what_is_wrong() {
        let good = fixture("redistrib_12.4.1.json");
        for (from, to, want) in [
            ("\"size\": \"2474721\"", "\"size\": \"big\"", "size"),
            (
                "6a1c32e68ee1a95ca17334691ff9ad1ffe7f352c24a083d55e4c96b8063b2bcb",
                "6a1c",
                "sha256",
            ),
            (
                "\"release_product\": \"cuda\"",
                "\"release_product\": \"cudnn\"",
                "release_product",
            ),
        ] {
            assert!(good.contains(from), "{from}");
            let e = cuda_manifest(&good.replacen(from, to, 1), &v("12.4.1")).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
        assert!(
            cuda_manifest("{\"release_label\": ", &v("12.4.1"))
                .unwrap_err()
                .contains("JSON")
        );
    }

    #[test]
    fn a_relative_path_that_is_not_plain_names_is_refused() {
        let good = fixture("cudnn-redistrib_9.27.0.json");
        let from = "cudnn/windows-x86_64/cudnn-windows-x86_64-9.27.0.42_cuda12-archive.zip";
        assert!(good.contains(from));
        for bad in [
            "C:/Windows/evil.zip",
            "\\\\server\\share\\evil.zip",
            "cudnn/windows-x86_64/nul.zip",
            "cudnn/../../evil.zip",
            "/etc/evil.zip",
        ] {
            let json = bad.replace('\\', "\\\\"); // as JSON writes a backslash
            let e = cudnn_manifest(&good.replacen(from, &json, 1), &v("9.27.0")).unwrap_err();
            assert!(e.contains("relative_path cannot be used"), "{bad}: {e}");
        }
    }

    #[test]
    fn cudnn_manifest_nested_and_flat() {
        let c = cudnn_manifest(&fixture("cudnn-redistrib_9.27.0.json"), &v("9.27.0")).unwrap();
        assert_eq!(c.version, v("9.27.0.42"));
        let win12 = c
            .archives
            .iter()
            .find(|a| a.os == Os::Windows && a.cuda_major == 12)
            .unwrap();
        assert_eq!(
            win12.sha256,
            "93949680d6499ad0f17fc1abb131825c9dd41b460844513f608e840e0c8ce72b"
        );
        assert_eq!(win12.size, Some(1924314965));
        assert_eq!(
            win12.relative_path,
            "cudnn/windows-x86_64/cudnn-windows-x86_64-9.27.0.42_cuda12-archive.zip"
        );
        // windows-x86_64 cuda12/13 and linux-x86_64 cuda13; windows-arm64 is not ours.
        assert_eq!(c.archives.len(), 3);
    }
}
