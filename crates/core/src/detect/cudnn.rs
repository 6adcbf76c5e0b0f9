//! cuDNN: inside each toolkit, and on the library search path (where a stray copy
//! earlier on PATH shadows the one the user installed).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Toolkit;
use crate::compat::Os;
use crate::platform::{Host, canonical};
use crate::version::Version;

#[derive(Debug, Clone, Serialize)]
pub struct CudnnInstall {
    /// The folder holding the libraries (or the toolkit, for one inside a toolkit).
    pub location: PathBuf,
    /// The toolkit this copy lives in.
    pub toolkit: Option<PathBuf>,
    /// From `cudnn_version.h` (or `cudnn.h` before 8.0).
    pub version: Option<Version>,
    pub header: Option<PathBuf>,
    pub libraries: Vec<PathBuf>,
    /// The major in the library names (`cudnn64_9.dll`, `libcudnn.so.9`).
    pub library_major: Option<u32>,
    /// Index of its folder on PATH (Windows) / LD_LIBRARY_PATH (Linux).
    pub search_rank: Option<usize>,
    /// The copy the loader finds first by name.
    pub first_on_search_path: bool,
}

pub fn probe(host: &Host, toolkits: &[Toolkit]) -> Vec<CudnnInstall> {
    let search = search_dirs(host);
    let mut out = Vec::new();
    for t in toolkits {
        let lib_dirs = toolkit_lib_dirs(host.os, &t.path);
        let libraries: Vec<PathBuf> = lib_dirs
            .iter()
            .flat_map(|d| cudnn_libs(host.os, d))
            .collect();
        let header = find_header(&t.path.join("include"));
        if libraries.is_empty() && header.is_none() {
            continue;
        }
        out.push(install(
            host,
            &search,
            t.path.clone(),
            Some(t.path.clone()),
            header,
            libraries,
        ));
    }
    // Stand-alone copies on the search path, outside every toolkit.
    for dir in &search {
        if toolkits
            .iter()
            .any(|t| canonical(dir).starts_with(canonical(&t.path)))
        {
            continue;
        }
        let libraries = cudnn_libs(host.os, dir);
        if libraries.is_empty() || out.iter().any(|c: &CudnnInstall| &c.location == dir) {
            continue;
        }
        let header = dir.parent().and_then(|p| find_header(&p.join("include")));
        out.push(install(host, &search, dir.clone(), None, header, libraries));
    }
    // Which copy wins the loader's search: the lowest rank.
    if let Some(first) = out
        .iter_mut()
        .filter(|c| c.search_rank.is_some())
        .min_by_key(|c| c.search_rank)
    {
        first.first_on_search_path = true;
    }
    out
}

fn install(
    host: &Host,
    search: &[PathBuf],
    location: PathBuf,
    toolkit: Option<PathBuf>,
    header: Option<PathBuf>,
    libraries: Vec<PathBuf>,
) -> CudnnInstall {
    let version = header
        .as_ref()
        .and_then(|h| crate::detect::toolkit::read_small(h))
        .and_then(|t| parse_cudnn_header(&t));
    let library_major = libraries.iter().find_map(|l| library_major(host.os, l));
    // Compared resolved: /usr/local/cuda is often a symlink to /usr/local/cuda-12.4.
    let search_rank = search.iter().position(|d| {
        let d = canonical(d);
        libraries
            .iter()
            .any(|l| l.parent().map(canonical) == Some(d.clone()))
    });
    CudnnInstall {
        location,
        toolkit,
        version,
        header,
        libraries,
        library_major,
        search_rank,
        first_on_search_path: false,
    }
}

/// The folders the loader searches for the cuDNN library.
fn search_dirs(host: &Host) -> Vec<PathBuf> {
    match host.os {
        Os::Windows => host.path_list("PATH"),
        Os::Linux => {
            let mut dirs = host.path_list("LD_LIBRARY_PATH");
            for d in ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/lib"] {
                dirs.push(host.system_path(d));
            }
            dirs
        }
    }
}

/// Where a toolkit keeps libraries (cuDNN copied in by hand lands in one of these).
pub fn toolkit_lib_dirs(os: Os, toolkit: &Path) -> Vec<PathBuf> {
    match os {
        Os::Windows => {
            let bin = toolkit.join("bin");
            let mut dirs = vec![bin.join("x64"), bin.clone()];
            // The cuDNN exe installer's layout: bin\12.x (and bin\12.x\x64).
            if let Ok(rd) = std::fs::read_dir(&bin) {
                for e in rd
                    .flatten()
                    .filter(|e| e.path().is_dir() && e.file_name() != "x64")
                {
                    dirs.push(e.path().join("x64"));
                    dirs.push(e.path());
                }
            }
            dirs
        }
        Os::Linux => vec![
            toolkit.join("lib64"),
            toolkit.join("lib"),
            toolkit.join("targets/x86_64-linux/lib"),
        ],
    }
}

fn cudnn_libs(os: Os, dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut libs: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().to_ascii_lowercase())
                .unwrap_or_default();
            match os {
                Os::Windows => name.starts_with("cudnn") && name.ends_with(".dll"),
                Os::Linux => name.starts_with("libcudnn") && name.contains(".so"),
            }
        })
        .collect();
    libs.sort();
    libs
}

fn library_major(os: Os, lib: &Path) -> Option<u32> {
    let name = lib.file_name()?.to_string_lossy().to_ascii_lowercase();
    match os {
        // cudnn64_9.dll, cudnn_ops64_9.dll
        Os::Windows => name.strip_suffix(".dll")?.rsplit('_').next()?.parse().ok(),
        // libcudnn.so.9, libcudnn.so.9.1.0
        Os::Linux => name.split(".so.").nth(1)?.split('.').next()?.parse().ok(),
    }
}

fn find_header(include: &Path) -> Option<PathBuf> {
    ["cudnn_version.h", "cudnn.h"]
        .iter()
        .map(|n| include.join(n))
        .find(|p| {
            crate::detect::toolkit::read_small(p).is_some_and(|t| t.contains("#define CUDNN_MAJOR"))
        })
}

// Read below the engine too (the cuDNN archive checks check it): `cuda_setup_archive`.
pub use cuda_setup_archive::toolkit_version::parse_cudnn_header;
