//! The second way to get a toolkit: NVIDIA's own component wheels from a PyPI index
//! (pypi.org or any mirror — Tsinghua, Aliyun, USTC carry them at full speed), laid out as
//! a standard toolkit tree. No installer, no administrator rights.
//!
//! Resolution reads NVIDIA's `cuda-toolkit==X.Y.Z` metapackage: its `Requires-Dist`
//! lines pin every component wheel of that release per extra (`nvcc`, `cublas`, …) and
//! platform, so we never keep our own table of component versions.

pub mod assemble;
pub mod index;
pub mod keep;
pub mod metadata;
pub mod swap;
pub use cuda_setup_fetch::pypi::version;

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::compat::Os;
use crate::download::{self, DownloadError, Options};
use crate::error::{Cause, cause, text};
use crate::version::Version;
use index::{DistFile, WheelName};
use version::{Specifier, WheelVersion};

pub use assemble::{AssembleSpec, assemble};

/// NVIDIA's metapackage that pins a release's component wheels.
pub const METAPACKAGE: &str = "cuda-toolkit";

/// The components a developer install takes, as the installer's `-s` list does: compiler,
/// runtime, the math libraries PyTorch extensions link, NVTX and CCCL (Thrust/CUB).
pub const DEVELOPER_COMPONENTS: &[&str] = &[
    "nvcc", "cudart", "nvrtc", "cublas", "cufft", "curand", "cusolver", "cusparse", "nvtx", "cccl",
    "profiler",
];

/// One wheel to fetch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wheel {
    pub project: String,
    pub version: String,
    pub filename: String,
    pub url: String,
    pub sha256: String,
    pub size: Option<u64>,
}

impl Wheel {
    /// The wheel's file name as a path component, refused unless it is one plain name
    /// (`origin` names where it came from for the error).
    pub fn file_name(&self, origin: &str) -> Result<&str, WheelError> {
        crate::safe_path::file_name(&self.filename).map_err(|why| WheelError::UnsafeName {
            origin: origin.to_string(),
            why,
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Resolved {
    pub toolkit: Version,
    pub index: String,
    pub components: Vec<String>,
    pub wheels: Vec<Wheel>,
    pub cudnn: Option<Wheel>,
    /// What the user should know (a cuDNN wheel the index lacks).
    #[serde(default)]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Request {
    /// A PEP 503/691 simple index (`https://pypi.org/simple`, a mirror's `…/simple`).
    pub index: String,
    pub toolkit: Version,
    pub os: Os,
    /// Extras of `cuda-toolkit`; None: [`DEVELOPER_COMPONENTS`] that this release has.
    pub components: Option<Vec<String>>,
    /// The cuDNN release to take as `nvidia-cudnn-cuNN`; None: no cuDNN.
    pub cudnn: Option<Version>,
}

/// Why the wheels method failed. Causes (the download's, the archive reader's, the file
/// system's) are kept as sources: render one with [`crate::error::chain`].
#[derive(Debug, Clone, thiserror::Error)]
pub enum WheelError {
    #[error("package index {url}")]
    Index {
        url: String,
        #[source]
        source: Cause,
    },
    #[error("{project} {version} is not on the index {index} (it has: {available})")]
    NoRelease {
        project: String,
        version: String,
        index: String,
        available: String,
    },
    #[error("no {platform} wheel of {project} {spec} on {index}{}", if .seen.is_empty() { String::new() } else { format!(" (versions there: {})", .seen.join(", ")) })]
    NoWheel {
        project: String,
        spec: String,
        platform: String,
        index: String,
        seen: Vec<String>,
    },
    #[error("{file}: the index gives no SHA-256 for it, so it cannot be verified")]
    NoHash { file: String },
    #[error("{file}: unreadable package metadata")]
    Metadata {
        file: String,
        #[source]
        source: Cause,
    },
    #[error("CUDA {toolkit} has no component \"{name}\" (it has: {})", .available.join(", "))]
    UnknownComponent {
        name: String,
        toolkit: String,
        available: Vec<String>,
    },
    #[error("{0}")]
    Download(#[source] DownloadError),
    #[error("{wheel}: {detail}")]
    Layout { wheel: String, detail: String },
    #[error("{path}")]
    Io {
        path: String,
        #[source]
        source: Cause,
    },
    /// The drive filled up (ENOSPC, ERROR_DISK_FULL) or cannot hold the tree: its own
    /// kind (`disk_full`) so the user is told what to free, not "permissions".
    #[error("{}: the drive is full ({} bytes free{})", .path.display(), .free.map_or("?".into(), |f| f.to_string()), .needed.map_or(String::new(), |n| format!(", {n} needed")))]
    DiskFull {
        path: PathBuf,
        needed: Option<u64>,
        free: Option<u64>,
    },
    /// A file name from outside (an index entry, a saved resolution) that is not one
    /// plain file-name component; refused before anything is written.
    #[error("{origin} names a file that cannot be used: {why}")]
    UnsafeName {
        origin: String,
        why: crate::safe_path::Unsafe,
    },
    #[error(
        "{dir} holds files that cuda-setup did not build from wheels and is not a complete CUDA toolkit; it is left as it is"
    )]
    NotOurs { dir: String },
    #[error(
        "{path}: this record of a wheel-built toolkit cannot be trusted ({detail}); the folder is left as it is"
    )]
    BadRecord { path: String, detail: String },
    /// A rebuild would put a file of the new toolkit where the user has one of their own
    /// (or a folder, or a link): stopped before anything changed.
    #[error("{dir} holds files that are not cuda-setup's where the new toolkit has its own: {}; nothing was changed", .files.join(", "))]
    UserFiles { dir: String, files: Vec<String> },
    /// The cuDNN installed into the tree is for another CUDA major than the new toolkit.
    #[error(
        "{dir} holds cuDNN {cudnn} for CUDA {cuda}, which does not fit CUDA {toolkit}; nothing was changed"
    )]
    CudnnOtherMajor {
        dir: String,
        cudnn: String,
        cuda: u32,
        toolkit: String,
    },
    #[error("the toolkit built from these wheels lacks {}{}", .missing.join(", "), if *.restored { "; the previous toolkit was put back as it was" } else { "" })]
    Incomplete {
        missing: Vec<String>,
        restored: bool,
    },
}

impl WheelError {
    /// An I/O error (or what went wrong, in words) on `path`.
    pub fn io(path: &Path, source: Cause) -> Self {
        WheelError::Io {
            path: path.display().to_string(),
            source,
        }
    }

    /// What to do about it, for the command line's `hint:` line.
    pub fn hint(&self) -> crate::message::Message {
        use crate::msg;
        match self {
            WheelError::Index { .. } => msg!("hint_wheels_index"),
            WheelError::NoRelease { .. } | WheelError::NoWheel { .. } => {
                msg!("hint_wheels_no_release")
            }
            WheelError::NoHash { .. } => msg!("hint_wheels_no_hash"),
            WheelError::Metadata { .. } | WheelError::Layout { .. } => {
                msg!("hint_wheels_unexpected")
            }
            WheelError::UnknownComponent { .. } => msg!("hint_wheels_unknown_component"),
            WheelError::Download(e) => e.hint(),
            WheelError::Io { .. } => msg!("hint_wheels_io"),
            WheelError::DiskFull { .. } => msg!("hint_download_disk_full"),
            WheelError::UnsafeName { .. } => msg!("hint_wheels_unsafe_name"),
            WheelError::NotOurs { .. } | WheelError::BadRecord { .. } => {
                msg!("hint_wheels_not_ours")
            }
            WheelError::Incomplete { .. } => msg!("hint_wheels_incomplete"),
            WheelError::UserFiles { .. } => msg!("hint_user_files"),
            WheelError::CudnnOtherMajor { .. } => msg!("hint_wheels_cudnn_other_major"),
        }
    }
}

fn platform_ok(os: Os, tags: &[String]) -> bool {
    tags.iter().any(|t| match os {
        _ if t == "any" => true,
        Os::Windows => t == "win_amd64",
        Os::Linux => t == "linux_x86_64" || (t.starts_with("manylinux") && t.ends_with("_x86_64")),
    })
}

pub fn platform_name(os: Os) -> &'static str {
    match os {
        Os::Windows => "win_amd64",
        Os::Linux => "manylinux x86_64",
    }
}

/// The newest wheel of `project` for `os` whose version `spec` accepts; not yanked, hashed.
pub fn pick(
    files: &[DistFile],
    project: &str,
    spec: &Specifier,
    os: Os,
    index: &str,
) -> Result<Wheel, WheelError> {
    // A set, not a list searched per file: a page of 50,000 versions (a hostile or just
    // long-lived project) made that search quadratic, minutes of CPU.
    let mut seen: std::collections::BTreeSet<WheelVersion> = Default::default();
    let mut best: Option<(WheelVersion, &DistFile)> = None;
    for f in files.iter().filter(|f| !f.yanked) {
        let Some(w) = WheelName::parse(&f.filename) else {
            continue;
        };
        if w.dist != index::normalize(project) || !platform_ok(os, &w.platforms) {
            continue;
        }
        // A pre-release the specifier does not ask for is not a candidate at all.
        if w.version.is_prerelease() && !spec.matches(&w.version) {
            continue;
        }
        if !seen.contains(&w.version) {
            seen.insert(w.version.clone());
        }
        if spec.matches(&w.version) && best.as_ref().is_none_or(|(v, _)| w.version > *v) {
            best = Some((w.version, f));
        }
    }
    let Some((v, f)) = best else {
        return Err(WheelError::NoWheel {
            project: project.into(),
            spec: spec.to_string(),
            platform: platform_name(os).into(),
            index: index.into(),
            seen: seen.iter().rev().take(6).map(ToString::to_string).collect(),
        });
    };
    let sha256 = f.sha256.clone().ok_or_else(|| WheelError::NoHash {
        file: f.filename.clone(),
    })?;
    Ok(Wheel {
        project: index::normalize(project),
        version: v.to_string(),
        filename: f.filename.clone(),
        url: f.url.clone(),
        sha256,
        size: f.size,
    })
}

/// Reads `*.dist-info/METADATA` out of a downloaded wheel.
pub fn read_metadata(wheel: &Path) -> Result<String, WheelError> {
    let file = wheel.display().to_string();
    let bad = |source: Cause| WheelError::Metadata {
        file: file.clone(),
        source,
    };
    let f = std::fs::File::open(wheel).map_err(|e| bad(cause(e)))?;
    let mut zip = zip::ZipArchive::new(f).map_err(|e| bad(cause(e)))?;
    let name = zip
        .file_names()
        .filter_map(|n| n.ok().map(|n| n.into_owned()))
        .find(|n| n.ends_with(".dist-info/METADATA") && n.matches('/').count() == 1)
        .ok_or_else(|| bad(text("no .dist-info/METADATA")))?;
    let mut text = String::new();
    zip.by_name(&name)
        .map_err(|e| bad(cause(e)))?
        .take(1 << 20)
        .read_to_string(&mut text)
        .map_err(|e| bad(cause(e)))?;
    Ok(text)
}

/// Downloads a small wheel (the metapackage) into `dir`, verified against the index hash.
fn fetch_small(w: &Wheel, dir: &Path) -> Result<std::path::PathBuf, WheelError> {
    let req = download::Request {
        url: w.url.clone(),
        mirrors: vec![],
        expected: download::Expected {
            sha256: Some(w.sha256.clone()),
            md5: None,
            size: w.size,
        },
        dest: dir.join(w.file_name(&w.url)?),
        connections: 1,
        cache_dir: None,
        bundle_dirs: vec![],
        allow_http: true,
    };
    download::download(
        &req,
        &Options::default(),
        &|_| {},
        &download::Cancel::default(),
    )
    .map(|o| o.path)
    .map_err(WheelError::Download)
}

/// Resolves the wheels for `req`: the metapackage's pins for the chosen components, each
/// matched to the newest wheel for the platform on the index. `work` holds the metapackage.
pub fn resolve(req: &Request, opts: &Options, work: &Path) -> Result<Resolved, WheelError> {
    let index = req.index.trim_end_matches('/').to_string();
    let meta_files = index::fetch_project(&index, METAPACKAGE, opts)?;
    let exact: Specifier =
        format!("=={}", req.toolkit)
            .parse()
            .map_err(|d| WheelError::Metadata {
                file: METAPACKAGE.into(),
                source: text(d),
            })?;
    let meta = pick(&meta_files, METAPACKAGE, &exact, req.os, &index).map_err(|e| match e {
        WheelError::NoWheel { seen, .. } => WheelError::NoRelease {
            project: METAPACKAGE.into(),
            version: req.toolkit.to_string(),
            index: index.clone(),
            available: if seen.is_empty() {
                "nothing".into()
            } else {
                seen.join(", ")
            },
        },
        e => e,
    })?;
    std::fs::create_dir_all(work).map_err(|e| WheelError::io(work, cause(e)))?;
    let path = fetch_small(&meta, work)?;
    let md = metadata::parse(&read_metadata(&path)?).map_err(|detail| WheelError::Metadata {
        file: meta.filename.clone(),
        source: text(detail),
    })?;

    let components: Vec<String> = match &req.components {
        Some(list) => {
            for c in list {
                if !md
                    .extras
                    .iter()
                    .any(|e| index::normalize(e) == index::normalize(c))
                {
                    return Err(WheelError::UnknownComponent {
                        name: c.clone(),
                        toolkit: req.toolkit.to_string(),
                        available: md.extras.iter().filter(|e| *e != "all").cloned().collect(),
                    });
                }
            }
            list.clone()
        }
        None => DEVELOPER_COMPONENTS
            .iter()
            .filter(|c| md.extras.iter().any(|e| e == *c))
            .map(|c| c.to_string())
            .collect(),
    };
    // The tree unpacked from these wheels is no one interpreter's: `python_*` markers
    // hold when some CPython 3 satisfies them.
    let env = metadata::Env::new(req.os, None, components.clone());
    // Every pin that applies, merged per project (all its clauses must hold).
    // (In the metadata's order; found through a map, not a search per line: a hostile
    // METADATA may hold 50,000 of them.)
    let mut wanted: Vec<(String, Vec<Specifier>)> = Vec::new();
    let mut at: std::collections::HashMap<&str, usize> = Default::default();
    for r in &md.requires {
        if !r.applies(&env) {
            continue;
        }
        match at.get(r.name.as_str()) {
            Some(&i) => wanted[i].1.push(r.spec.clone()),
            None => {
                at.insert(&r.name, wanted.len());
                wanted.push((r.name.clone(), vec![r.spec.clone()]));
            }
        }
    }
    let mut wheels = Vec::new();
    for (project, specs) in &wanted {
        let files = index::fetch_project(&index, project, opts)?;
        let w = pick_all(&files, project, specs, req.os, &index)?;
        wheels.push(w);
    }
    // cuDNN is optional: an index without it leaves it out, with a note, not the toolkit.
    let mut notes = Vec::new();
    let cudnn = match &req.cudnn {
        Some(v) => {
            let project = format!("nvidia-cudnn-cu{}", req.toolkit.major());
            let spec: Specifier = format!("=={v}.*")
                .parse()
                .map_err(|d| WheelError::Metadata {
                    file: project.clone(),
                    source: text(d),
                })?;
            match index::fetch_project(&index, &project, opts)
                .and_then(|files| pick(&files, &project, &spec, req.os, &index))
            {
                Ok(w) => Some(w),
                Err(e) => {
                    notes.push(format!("cuDNN is left out: {}", crate::error::chain(&e)));
                    None
                }
            }
        }
        None => None,
    };
    Ok(Resolved {
        toolkit: req.toolkit.clone(),
        index,
        components,
        wheels,
        cudnn,
        notes,
    })
}

/// The file an offline bundle keeps a resolution in, so an install from the bundle needs
/// no index.
pub fn resolution_file(toolkit: &Version, os: Os) -> String {
    format!("wheels-{toolkit}-{}.json", os.as_str())
}

pub fn save_resolution(dir: &Path, r: &Resolved, os: Os) -> Result<std::path::PathBuf, WheelError> {
    let p = dir.join(resolution_file(&r.toolkit, os));
    std::fs::write(&p, serde_json::to_vec_pretty(r).expect("serialisable"))
        .map_err(|e| WheelError::io(&p, cause(e)))?;
    Ok(p)
}

pub fn read_resolution(dir: &Path, toolkit: &Version, os: Os) -> Option<Resolved> {
    let b = std::fs::read(dir.join(resolution_file(toolkit, os))).ok()?;
    serde_json::from_slice(&b).ok()
}

/// `pick` with several specifier sets that must all hold.
fn pick_all(
    files: &[DistFile],
    project: &str,
    specs: &[Specifier],
    os: Os,
    index: &str,
) -> Result<Wheel, WheelError> {
    let spec = Specifier::all_of(specs);
    pick(files, project, &spec, os, index)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, sha: Option<&str>) -> DistFile {
        DistFile {
            filename: name.into(),
            url: format!("https://x/{name}"),
            sha256: sha.map(str::to_string),
            size: None,
            requires_python: None,
            metadata: None,
            yanked: false,
        }
    }

    #[test]
    fn picks_newest_for_platform() {
        let files = [
            file("nvidia_cuda_nvcc-13.5.37-py3-none-win_amd64.whl", Some("a")),
            file(
                "nvidia_cuda_nvcc-13.5.37-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
                Some("b"),
            ),
            file(
                "nvidia_cuda_nvcc-13.5.37-py3-none-manylinux2014_aarch64.manylinux_2_17_aarch64.whl",
                Some("c"),
            ),
            file("nvidia_cuda_nvcc-13.4.92-py3-none-win_amd64.whl", Some("d")),
            file(
                "nvidia_cuda_nvcc-13.6.0rc1-py3-none-win_amd64.whl",
                Some("e"),
            ),
        ];
        let any: Specifier = "".parse().unwrap();
        let w = pick(&files, "nvidia-cuda-nvcc", &any, Os::Windows, "i").unwrap();
        assert_eq!((w.version.as_str(), w.sha256.as_str()), ("13.5.37", "a"));
        let l = pick(&files, "nvidia-cuda-nvcc", &any, Os::Linux, "i").unwrap();
        assert_eq!(l.sha256, "b");
        let old: Specifier = "==13.4.*".parse().unwrap();
        assert_eq!(
            pick(&files, "nvidia-cuda-nvcc", &old, Os::Windows, "i")
                .unwrap()
                .sha256,
            "d"
        );
        let none: Specifier = "==12.*".parse().unwrap();
        let e = pick(&files, "nvidia-cuda-nvcc", &none, Os::Linux, "i").unwrap_err();
        assert!(e.to_string().contains("13.5.37"), "{e}");
        let nohash = [file("p-1.0-py3-none-any.whl", None)];
        assert!(matches!(
            pick(&nohash, "p", &any, Os::Linux, "i"),
            Err(WheelError::NoHash { .. })
        ));
    }
}
