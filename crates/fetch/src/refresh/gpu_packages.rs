//! What the GPU packages besides PyTorch need, learned from PyPI (#33): for releases of
//! onnxruntime-gpu newer than every row of `gpu-packages.toml`, the CUDA and cuDNN majors
//! their wheels' core metadata (PEP 658 `<wheel>.metadata`) states through the nvidia-*
//! wheels it requires.
//!
//! onnxruntime-gpu names them as extras since 1.21 (`Provides-Extra: cuda`,
//! `Requires-Dist: nvidia-cuda-runtime-cu12~=12.0; extra == "cuda"`, `Requires-Dist:
//! nvidia-cudnn-cu12~=9.0; extra == "cudnn"`: https://github.com/microsoft/onnxruntime/pull/23659,
//! "we only add extra requires for cuda 12 for now"). Only what a metadata file states
//! is learned: a release whose metadata names no nvidia-* wheel gets no row, and nothing
//! is carried from one release to another.
//!
//! CTranslate2 is not read: its wheels require only `setuptools`, `numpy` and `pyyaml`
//! (python/setup.py `install_requires`) and load cuBLAS by name at run time
//! (CONTRIBUTING.md, "CUDA support in Python wheels"), so its metadata states nothing.

use serde::{Deserialize, Serialize};

use crate::compat::Os;
use crate::pypi::index::DistFile;
use crate::version::Version;

/// The projects read, as PyPI normalises their names.
pub const PROJECTS: [&str; 1] = ["onnxruntime-gpu"];
/// At most this many releases newer than the table are learned per project and run.
pub const MAX_RELEASES: usize = 4;

/// One release newer than the table: what each OS's wheel metadata states.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveGpuRelease {
    pub package: String,
    pub version: Version,
    /// The Linux x86-64 wheel's metadata; None: no such wheel, or its metadata not read.
    pub linux: Option<GpuWheelNeeds>,
    pub windows: Option<GpuWheelNeeds>,
}

/// What one wheel's core metadata says of CUDA and cuDNN.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuWheelNeeds {
    /// The `.metadata` file read.
    pub metadata: String,
    /// Its `Requires-Dist` lines that name an nvidia-* wheel and apply to the wheel's OS
    /// (markers kept: `nvidia-cudnn-cu12~=9.0; extra == "cudnn"`).
    pub requires: Vec<String>,
    /// The CUDA major the `-cuNN` names of those wheels state; None when they state none
    /// or disagree.
    pub cuda: Option<u32>,
    /// The cuDNN major of the `nvidia-cudnn-cuNN` requirement's version.
    pub cudnn: Option<u32>,
}

impl GpuWheelNeeds {
    /// From a metadata file's `Requires-Dist` lines, for `os`.
    pub fn from_requires(metadata: &str, requires: &[String], os: Os) -> GpuWheelNeeds {
        let mut named = Vec::new();
        let mut majors: Vec<u32> = Vec::new();
        let mut cudnn = None;
        for r in requires {
            let (req, marker) = r.split_once(';').unwrap_or((r, ""));
            if !super::pypi::marker_applies(marker, os) {
                continue;
            }
            let req = req.trim();
            let end = req
                .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
                .unwrap_or(req.len());
            let name = crate::pypi::index::normalize(&req[..end]);
            if !name.starts_with("nvidia-") {
                continue;
            }
            named.push(r.trim().to_string());
            let (base, cu) = match name.rsplit_once("-cu") {
                Some((b, d)) if !d.is_empty() && d.bytes().all(|x| x.is_ascii_digit()) => {
                    (b, d.parse::<u32>().ok())
                }
                _ => (name.as_str(), None),
            };
            majors.extend(cu);
            if base == "nvidia-cudnn" {
                cudnn = cudnn.or_else(|| first_major(&req[end..]));
            }
        }
        majors.sort_unstable();
        majors.dedup();
        GpuWheelNeeds {
            metadata: metadata.to_string(),
            requires: named,
            // Two CUDA majors in one wheel's requirements state no one CUDA.
            cuda: (majors.len() == 1).then(|| majors[0]),
            cudnn,
        }
    }
}

/// The major of the first version a specifier names (`~=9.0` → 9, `==9.1.0.70` → 9,
/// `>=9,<10` → 9); None for a bare name or wildcards only.
fn first_major(spec: &str) -> Option<u32> {
    let s = spec.trim_start_matches(|c: char| c.is_whitespace() || c == '[');
    // Extras of the requirement (`[x]`) are not part of the version.
    let s = s.split_once(']').map_or(s, |(_, r)| r);
    let i = s.find(|c: char| c.is_ascii_digit())?;
    let op = s[..i].trim();
    if !matches!(op, "~=" | "==" | ">=" | "===" | "(~=" | "(==" | "(>=") {
        return None;
    }
    s[i..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()
}

/// A release to learn: its version, and the wheels whose metadata to read.
#[derive(Debug, Clone)]
pub struct ReleasePlan {
    pub version: Version,
    pub linux_wheel: Option<DistFile>,
    pub windows_wheel: Option<DistFile>,
}

/// A wheel's `(version, python tag, platform tags)`.
type WheelTags = (Version, String, Vec<String>);

/// `(version, python tag, platform tags)` of a wheel of `project`; None for other files.
fn wheel_of(project: &str, filename: &str) -> Option<WheelTags> {
    let stem = filename.strip_suffix(".whl")?;
    let parts: Vec<&str> = stem.split('-').collect();
    if !(5..=6).contains(&parts.len()) || crate::pypi::index::normalize(parts[0]) != project {
        return None;
    }
    // Final releases only: pre-releases and odd versions do not parse.
    let version = parts[1].parse::<Version>().ok()?;
    let python = parts[parts.len() - 3].to_string();
    let platforms = parts[parts.len() - 1]
        .split('.')
        .map(str::to_string)
        .collect();
    Some((version, python, platforms))
}

/// The final releases of `project` at or above `from` (None: any) that the page lists
/// wheels of, the newest [`MAX_RELEASES`], each with its newest CPython's Linux x86-64 and
/// win_amd64 wheels that offer core metadata. A page listing no wheel of the project is
/// not its page.
pub fn plan(
    project: &str,
    files: &[DistFile],
    from: Option<&Version>,
) -> Result<Vec<ReleasePlan>, String> {
    use std::collections::BTreeMap;
    let wheels: Vec<(&DistFile, WheelTags)> = files
        .iter()
        .filter_map(|f| Some((f, wheel_of(project, &f.filename)?)))
        .collect();
    if !files.iter().any(|f| {
        f.filename.ends_with(".whl")
            && f.filename
                .split('-')
                .next()
                .is_some_and(|d| crate::pypi::index::normalize(d) == project)
    }) {
        return Err(format!("lists no {project} wheels (not its project page?)"));
    }
    let mut releases: BTreeMap<Version, Vec<&(&DistFile, WheelTags)>> = BTreeMap::new();
    for w in &wheels {
        if w.0.yanked || from.is_some_and(|a| w.1.0 < *a) {
            continue;
        }
        releases.entry(w.1.0.clone()).or_default().push(w);
    }
    let skip = releases.len().saturating_sub(MAX_RELEASES);
    Ok(releases
        .into_iter()
        .skip(skip)
        .map(|(version, ws)| {
            let pick = |linux: bool| {
                ws.iter()
                    .filter(|w| w.0.metadata.is_some())
                    .filter(|w| {
                        w.1.2.iter().any(|p| {
                            if linux {
                                p.contains("linux") && p.ends_with("x86_64")
                            } else {
                                p == "win_amd64"
                            }
                        })
                    })
                    .max_by_key(|w| cpython(&w.1.1))
                    .map(|w| w.0.clone())
            };
            ReleasePlan {
                version,
                linux_wheel: pick(true),
                windows_wheel: pick(false),
            }
        })
        .collect())
}

/// `cp312` → (3, 12), for picking the newest; other tags sort first.
fn cpython(tag: &str) -> (u32, u32) {
    tag.strip_prefix("cp")
        .and_then(|d| {
            let (major, minor) = d.split_at(1.min(d.len()));
            Some((major.parse().ok()?, minor.parse().ok()?))
        })
        .unwrap_or((0, 0))
}

/// The first version past every row of `package` the table has (their highest upper
/// bound, exclusive there): Some(None) when the table has no row of it; None when a row
/// has no upper bound, so no release is newer than the table. Fetched rows do not count.
pub fn table_bound(t: &crate::compat::GpuPackagesFile, package: &str) -> Option<Option<Version>> {
    let rows: Vec<_> = t
        .needs
        .iter()
        .filter(|n| n.package == package && n.origin == crate::compat::Origin::Table)
        .collect();
    if rows.is_empty() {
        return Some(None);
    }
    if rows.iter().any(|r| r.versions.upper.is_none()) {
        return None;
    }
    Some(rows.iter().filter_map(|r| r.versions.upper.clone()).max())
}

/// The version just after `v` at its last written part (`1.26.0` → `1.26.1`): a row for
/// exactly `v` (and its post-releases) is `>=v, <next(v)`.
pub fn next_release(v: &Version) -> Version {
    let mut parts = v.parts().to_vec();
    if let Some(last) = parts.last_mut() {
        *last += 1;
    }
    Version::new(&parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extras_state_the_cuda_and_cudnn_majors() {
        // The extras block of onnxruntime PR 23659's example METADATA.
        let req: Vec<String> = [
            "coloredlogs",
            "numpy>=1.21.6",
            "nvidia-cuda-nvrtc-cu12~=12.0; extra == \"cuda\"",
            "nvidia-cuda-runtime-cu12~=12.0; extra == \"cuda\"",
            "nvidia-cufft-cu12~=11.0; extra == \"cuda\"",
            "nvidia-curand-cu12~=10.0; extra == \"cuda\"",
            "nvidia-cudnn-cu12~=9.0; extra == \"cudnn\"",
        ]
        .map(String::from)
        .to_vec();
        let n = GpuWheelNeeds::from_requires("u", &req, Os::Linux);
        assert_eq!((n.cuda, n.cudnn), (Some(12), Some(9)));
        assert_eq!(n.requires.len(), 5);
        // No nvidia-* wheel: nothing stated.
        let none = GpuWheelNeeds::from_requires("u", &req[..2], Os::Windows);
        assert_eq!((none.cuda, none.cudnn), (None, None));
        assert!(none.requires.is_empty());
        // Disagreeing majors state no CUDA; a requirement for another OS does not count.
        let mixed: Vec<String> = [
            "nvidia-cuda-runtime-cu12; extra == \"cuda\"",
            "nvidia-cudnn-cu13==9.8.0.87",
            "nvidia-cublas-cu11; platform_system == \"Windows\"",
        ]
        .map(String::from)
        .to_vec();
        let m = GpuWheelNeeds::from_requires("u", &mixed, Os::Linux);
        assert_eq!((m.cuda, m.cudnn), (None, Some(9)));
        assert_eq!(m.requires.len(), 2);
        assert_eq!(first_major(">=9,<10"), Some(9));
        assert_eq!(first_major(""), None);
        assert_eq!(first_major("<10"), None);
    }

    #[test]
    fn releases_past_the_table_are_planned() {
        let file = |name: &str, meta: bool| DistFile {
            filename: name.into(),
            url: format!("https://files.example/{name}"),
            sha256: None,
            size: None,
            requires_python: None,
            metadata: meta.then_some(None),
            yanked: false,
        };
        let files = vec![
            file("onnxruntime_gpu-1.24.3-cp312-cp312-win_amd64.whl", true),
            file("onnxruntime_gpu-1.26.0-cp312-cp312-win_amd64.whl", true),
            file("onnxruntime_gpu-1.26.0-cp313-cp313-win_amd64.whl", true),
            file("onnxruntime_gpu-1.26.0-cp314-cp314-win_amd64.whl", false),
            file(
                "onnxruntime_gpu-1.26.0-cp313-cp313-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
                true,
            ),
            file(
                "onnxruntime_gpu-1.26.0-cp313-cp313-manylinux_2_27_aarch64.whl",
                true,
            ),
            file("onnxruntime_gpu-1.27.0rc1-cp313-cp313-win_amd64.whl", true),
            file("onnxruntime_gpu-1.26.0.tar.gz", false),
        ];
        let p = plan("onnxruntime-gpu", &files, Some(&"1.25".parse().unwrap())).unwrap();
        assert_eq!(
            p.len(),
            1,
            "1.24.3 is in the table, 1.27.0rc1 a pre-release"
        );
        // The bound is the first version past the table: 1.26 itself is newer.
        assert_eq!(
            plan("onnxruntime-gpu", &files, Some(&"1.26".parse().unwrap()))
                .unwrap()
                .len(),
            1
        );
        assert_eq!(p[0].version.to_string(), "1.26.0");
        // cp314 offers no metadata: cp313's is read.
        assert!(
            p[0].windows_wheel
                .as_ref()
                .unwrap()
                .filename
                .contains("cp313-win")
        );
        assert!(
            p[0].linux_wheel
                .as_ref()
                .unwrap()
                .filename
                .contains("manylinux_2_27_x86_64")
        );
        assert!(plan("onnxruntime-gpu", &files[..0], None).is_err());
        assert_eq!(
            next_release(&"1.26.0".parse().unwrap()).to_string(),
            "1.26.1"
        );
    }

    #[test]
    fn the_table_bounds_what_is_newer() {
        let t = crate::compat::Tables::embedded().unwrap().gpu_packages;
        assert_eq!(
            table_bound(&t, "onnxruntime-gpu"),
            Some(Some("1.25".parse().unwrap()))
        );
        assert_eq!(table_bound(&t, "not-in-table"), Some(None));
    }
}
