//! Installed CUDA toolkits: where they are, their versions, and which one PATH finds first.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::compat::Os;
use crate::platform::{Host, canonical};
use crate::version::Version;

// What version a toolkit folder holds is read below the engine (the cuDNN install checks it
// too): `cuda_setup_archive::toolkit_version`.
pub use cuda_setup_archive::toolkit_version::{
    VersionSource, parse_nvcc_version, parse_version_json, parse_version_txt, read_small,
    read_version, version_of,
};

/// How a toolkit folder was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FoundBy {
    CudaPath,
    CudaPathVersioned,
    CudaHome,
    Registry,
    DefaultLocation,
    NvccOnPath,
}

#[derive(Debug, Clone, Serialize)]
pub struct Toolkit {
    pub path: PathBuf,
    pub version: Option<Version>,
    pub version_source: Option<VersionSource>,
    pub found_by: Vec<FoundBy>,
    /// Environment variables pointing here (`CUDA_PATH`, `CUDA_PATH_V12_4`, `CUDA_HOME`).
    pub env_vars: Vec<String>,
    pub nvcc: Option<PathBuf>,
    /// Where the runtime DLLs/SOs live (`bin`, `bin\x64` for 13.x on Windows, `lib64`).
    pub runtime_dir: PathBuf,
    /// Index of the first PATH entry that is this toolkit's bin or runtime dir.
    pub path_rank: Option<usize>,
    /// PATH's `nvcc` is this toolkit's.
    pub active: bool,
}

/// Finds toolkits; runs `nvcc --version` only where no version file says it.
pub fn probe(host: &Host, timeout: Duration) -> Vec<Toolkit> {
    let mut candidates: Vec<(PathBuf, FoundBy, Option<String>)> = Vec::new();
    for (k, v) in host.vars() {
        let by = match k.to_ascii_uppercase().as_str() {
            "CUDA_PATH" => Some(FoundBy::CudaPath),
            "CUDA_HOME" | "CUDA_ROOT" => Some(FoundBy::CudaHome),
            u if u.starts_with("CUDA_PATH_V") => Some(FoundBy::CudaPathVersioned),
            _ => None,
        };
        if let Some(by) = by
            && !v.is_empty()
        {
            candidates.push((PathBuf::from(v), by, Some(k.to_string())));
        }
    }
    #[cfg(windows)]
    if host.windows_apis {
        for (_, dir) in crate::platform::windows::cuda_registry_installs() {
            candidates.push((dir, FoundBy::Registry, None));
        }
    }
    for dir in default_dirs(host) {
        candidates.push((dir, FoundBy::DefaultLocation, None));
    }
    if let Some(nvcc) = host.which("nvcc")
        && let Some(root) = nvcc.parent().and_then(Path::parent)
    {
        candidates.push((root.to_path_buf(), FoundBy::NvccOnPath, None));
    }

    let path = host.path_list("PATH");
    let active_nvcc = host.which("nvcc").map(|p| canonical(&p));
    let mut out: Vec<Toolkit> = Vec::new();
    for (dir, by, var) in candidates {
        if !dir.is_dir() {
            continue;
        }
        let key = canonical(&dir);
        if let Some(t) = out.iter_mut().find(|t| canonical(&t.path) == key) {
            t.found_by.push(by);
            t.env_vars.extend(var);
            continue;
        }
        // A folder that looks like neither a toolkit nor holds nvcc is not one.
        let nvcc = dir.join("bin").join(host.exe("nvcc"));
        let nvcc = nvcc.is_file().then_some(nvcc);
        if nvcc.is_none()
            && !dir.join("version.json").is_file()
            && !dir.join("version.txt").is_file()
        {
            continue;
        }
        let (version, version_source) = read_version(host, &dir, nvcc.as_deref(), timeout);
        let runtime_dir = runtime_dir(host.os, &dir, version.as_ref());
        let bin = dir.join("bin");
        let path_rank = path.iter().position(|p| {
            canonical(p) == canonical(&bin) || canonical(p) == canonical(&runtime_dir)
        });
        let active = nvcc
            .as_ref()
            .is_some_and(|n| Some(canonical(n)) == active_nvcc);
        out.push(Toolkit {
            path: dir,
            version,
            version_source,
            found_by: vec![by],
            env_vars: var.into_iter().collect(),
            nvcc,
            runtime_dir,
            path_rank,
            active,
        });
    }
    for t in &mut out {
        t.found_by.sort();
        t.found_by.dedup();
        t.env_vars.sort();
    }
    out.sort_by(|a, b| b.version.cmp(&a.version).then(a.path.cmp(&b.path)));
    out
}

/// The runtime library folder: `bin\x64` for 13.x on Windows (compat dossier §3.6).
pub fn runtime_dir(os: Os, toolkit: &Path, version: Option<&Version>) -> PathBuf {
    match os {
        Os::Windows if version.is_some_and(|v| v.major() >= 13) => toolkit.join("bin").join("x64"),
        Os::Windows => toolkit.join("bin"),
        Os::Linux => toolkit.join("lib64"),
    }
}

/// The usual install locations, each toolkit folder in them.
fn default_dirs(host: &Host) -> Vec<PathBuf> {
    let mut dirs = BTreeSet::new();
    let children = |parent: &Path, prefix: &str| -> Vec<PathBuf> {
        std::fs::read_dir(parent)
            .map(|rd| {
                rd.flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default()
    };
    match host.os {
        Os::Windows => {
            let base = super::system::default_install_location(host);
            dirs.extend(children(&base, "v"));
        }
        Os::Linux => {
            let local = host.system_path("/usr/local");
            dirs.extend(children(&local, "cuda"));
            dirs.insert(host.system_path("/opt/cuda"));
        }
    }
    dirs.into_iter().collect()
}
