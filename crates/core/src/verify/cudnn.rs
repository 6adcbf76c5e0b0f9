//! cuDNN: find the copy the toolkit uses, check every sub-library is there, load it from
//! its folder, read its version, create a handle and run a small convolution forward,
//! checked against the CPU. A missing DLL is named.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::cuda::Device;
use super::loader::{self, LoadFailure, MissingDep};
use super::{Check, Status};
use crate::compat::Os;
use crate::detect::CudnnInstall;
use crate::msg;
use crate::platform::Host;
use crate::version::Version;
// The calls into cuDNN itself (the library table, the convolution) are the gpu crate's.
pub use cuda_setup_gpu::cudnn::{ConvError, ConvResult, Cudnn};

/// The sub-libraries a cuDNN major ships next to its main library (compat dossier §5.3),
/// in an order where each one's cuDNN dependencies come before it. `true`: a small
/// convolution needs it.
pub fn companions(major: u32) -> &'static [(&'static str, bool)] {
    match major {
        9 => &[
            ("cudnn_graph", true),
            ("cudnn_ops", true),
            ("cudnn_cnn", true),
            ("cudnn_adv", false),
            ("cudnn_engines_precompiled", true),
            ("cudnn_engines_runtime_compiled", false),
            ("cudnn_heuristic", false),
        ],
        8 => &[
            ("cudnn_ops_infer", true),
            ("cudnn_ops_train", false),
            ("cudnn_cnn_infer", true),
            ("cudnn_cnn_train", false),
            ("cudnn_adv_infer", false),
            ("cudnn_adv_train", false),
        ],
        _ => &[],
    }
}

/// The companion files of cuDNN `major` that are not in `dir` (compared ignoring case,
/// as Windows does).
pub fn missing_companions(os: Os, major: u32, dir: &Path) -> Vec<String> {
    let present: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().to_ascii_lowercase())
                .collect()
        })
        .unwrap_or_default();
    companions(major)
        .iter()
        .map(|(base, _)| loader::library_file(os, base, major))
        .filter(|f| !present.contains(&f.to_ascii_lowercase()))
        .collect()
}

/// Library file names mentioned in an error text (`Could not load library
/// cudnn_cnn64_9.dll. Error code 126` → `cudnn_cnn64_9.dll`).
pub fn library_names_in(text: &str) -> Vec<String> {
    let mut out: Vec<String> = text
        .split(|c: char| c.is_whitespace() || "\"'`,;()[]<>".contains(c))
        .map(|t| t.trim_end_matches(['.', ':']))
        .filter(|t| {
            let l = t.to_ascii_lowercase();
            (l.ends_with(".dll") && l.len() > 4) || (l.starts_with("lib") && l.contains(".so"))
        })
        // Either separator: a Windows path in a message read on any OS.
        .filter_map(|t| t.rsplit(['\\', '/']).next().map(str::to_string))
        .collect();
    out.dedup();
    out
}

/// Picks the cuDNN to test: the one inside the chosen toolkit, else the one the loader
/// finds first, else any.
pub fn choose<'a>(
    installs: &'a [CudnnInstall],
    toolkit: Option<&Path>,
) -> Option<&'a CudnnInstall> {
    let canon = crate::platform::canonical;
    installs
        .iter()
        .find(|c| {
            toolkit.is_some_and(|t| c.toolkit.as_deref().map(canon) == Some(canon(t)))
                && !c.libraries.is_empty()
        })
        .or_else(|| {
            installs
                .iter()
                .find(|c| c.first_on_search_path && !c.libraries.is_empty())
        })
        .or_else(|| installs.iter().find(|c| !c.libraries.is_empty()))
}

/// The main library among an install's files (`cudnn64_9.dll`, `libcudnn.so.9`), highest
/// major first.
pub fn main_library(os: Os, install: &CudnnInstall) -> Option<(PathBuf, u32)> {
    let mut hits: Vec<(u32, usize, &PathBuf)> = install
        .libraries
        .iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            Some((
                loader::library_major(os, &name, "cudnn")?,
                usize::MAX - name.len(),
                p,
            ))
        })
        .collect();
    hits.sort();
    hits.pop().map(|(m, _, p)| (p.clone(), m))
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct CudnnReport {
    pub location: Option<PathBuf>,
    pub library: Option<PathBuf>,
    /// From `cudnnGetVersion()`.
    pub version: Option<Version>,
    /// From `cudnn_version.h`, when there is one.
    pub header_version: Option<Version>,
    /// The CUDA this cuDNN build is for (`cudnnGetCudartVersion()`, e.g. 12.2).
    pub built_for_cuda: Option<Version>,
    /// Sub-library files that are not next to the main library.
    pub missing_files: Vec<String>,
    /// Dependencies the loader cannot find.
    pub missing: Vec<MissingDep>,
    pub load_error: Option<String>,
    /// Optional sub-libraries that did not load (not needed for the convolution).
    pub notes: Vec<String>,
    pub convolution: Option<ConvResult>,
}

/// What the rest of the smoke test knows when cuDNN is checked.
pub struct Context<'a> {
    pub host: &'a Host,
    pub toolkit_dir: Option<&'a Path>,
    pub toolkit_version: Option<&'a Version>,
    /// Library folders of the toolkit (cuBLAS lives there; cuDNN 9 needs cuBLASLt).
    pub toolkit_lib_dirs: &'a [PathBuf],
    pub installs: &'a [CudnnInstall],
    /// The device, or why there is none (the convolution is then skipped).
    pub device: Result<&'a Device, crate::message::Message>,
}

/// Runs the cuDNN check.
pub fn check(cx: &Context) -> Check<CudnnReport> {
    let os = cx.host.os;
    let mut r = CudnnReport::default();
    let Some(install) = choose(cx.installs, cx.toolkit_dir) else {
        return Check::new(Status::Skipped, Some(msg!("cudnn_not_found")), r);
    };
    r.location = Some(install.location.clone());
    r.header_version = install.version.clone();
    let Some((main, major)) = main_library(os, install) else {
        return Check::new(Status::Skipped, Some(msg!("cudnn_not_found")), r);
    };
    r.library = Some(main.clone());
    let dir = main.parent().unwrap_or(Path::new(".")).to_path_buf();
    r.missing_files = missing_companions(os, major, &dir);
    if !r.missing_files.is_empty() {
        let archive_dir = match os {
            Os::Windows => "bin",
            Os::Linux => "lib",
        };
        let m = msg!(
            "cudnn_missing_libraries",
            version = install
                .version
                .as_ref()
                .map_or(major.to_string(), ToString::to_string),
            dir = dir.display(),
            missing = r.missing_files.join(", "),
            archive_dir = archive_dir
        );
        return Check::new(Status::Failed, Some(m), r);
    }

    // cuBLAS(Lt) from the toolkit first: cuDNN's sub-libraries need them, and a copy already
    // loaded is the one they get.
    let mut keep = Vec::new();
    for base in ["cublasLt", "cublas"] {
        if let Some((p, _)) = loader::find_library(os, cx.toolkit_lib_dirs, base)
            && let Ok(lib) = loader::open(cx.host, &p)
        {
            keep.push(lib);
        }
    }
    for (base, needed) in companions(major) {
        let path = dir.join(loader::library_file(os, base, major));
        match loader::open(cx.host, &path) {
            Ok(lib) => keep.push(lib),
            Err(e) if *needed => return load_failed(r, e),
            Err(e) => {
                r.notes.push(format!("{}: {}", path.display(), e.detail));
                r.missing.extend(e.missing);
            }
        }
    }
    let lib = match loader::open(cx.host, &main) {
        Ok(l) => l,
        Err(e) => return load_failed(r, e),
    };
    let cudnn = match Cudnn::load(&main, lib, keep) {
        Ok(c) => c,
        Err(e) => return load_failed(r, e),
    };
    let (version, cudart) = (cudnn.version(), cudnn.cudart_version());
    r.version = Some(version.clone());
    r.built_for_cuda = Some(cudart.clone());
    if let Some(tk) = cx.toolkit_version
        && tk.major() != cudart.major()
    {
        let m = msg!(
            "cudnn_wrong_cuda_major",
            version = &version,
            cudnn_cuda = cudart.major(),
            toolkit = tk,
            major = tk.major()
        );
        return Check::new(Status::Failed, Some(m), r);
    }
    let Ok(dev) = cx.device else {
        // Why there is no device is the GEMM check's reason (and the report's).
        let m = msg!("cudnn_loads_conv_skipped", version = &version);
        return Check::new(Status::Skipped, Some(m), r);
    };
    match cudnn.convolution(dev) {
        Ok(conv) => {
            let ok = conv.accuracy.passed;
            let m = (!ok).then(|| {
                msg!(
                    "cudnn_conv_wrong",
                    error = format!("{:.2e}", conv.accuracy.max_error),
                    tolerance = format!("{:.0e}", conv.accuracy.tolerance)
                )
            });
            r.convolution = Some(conv);
            Check::new(if ok { Status::Passed } else { Status::Failed }, m, r)
        }
        Err(ConvError::Cuda(e)) => Check::new(
            Status::Failed,
            Some(
                msg!("smoke_cuda_call_failed", call = e.call)
                    .with("error", format!("{} ({})", e.name, e.text)),
            ),
            r,
        ),
        Err(ConvError::Cudnn { call, text }) => {
            for name in library_names_in(&text) {
                r.missing.push(MissingDep {
                    name,
                    needed_by: main
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                });
            }
            let m = msg!("cudnn_call_failed", call = call).with("error", text);
            Check::new(Status::Failed, Some(m), r)
        }
    }
}

fn load_failed(mut r: CudnnReport, e: LoadFailure) -> Check<CudnnReport> {
    let m = if e.missing.is_empty() {
        msg!("library_load_failed", library = &e.library).with("detail", &e.detail)
    } else {
        msg!(
            "library_missing_dependency",
            library = &e.library,
            missing = e.missing_list()
        )
    };
    r.load_error = Some(e.detail.clone());
    r.missing.extend(e.missing);
    Check::new(Status::Failed, Some(m), r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn companion_files_by_major() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        std::fs::write(dir.join("cudnn64_9.dll"), "").unwrap();
        std::fs::write(dir.join("CUDNN_GRAPH64_9.DLL"), "").unwrap();
        let missing = missing_companions(Os::Windows, 9, dir);
        assert_eq!(missing.len(), 6);
        assert_eq!(missing[0], "cudnn_ops64_9.dll");
        assert!(!missing.iter().any(|m| m.contains("graph")));
        assert_eq!(
            missing_companions(Os::Linux, 8, dir)[0],
            "libcudnn_ops_infer.so.8"
        );
        assert!(missing_companions(Os::Linux, 7, dir).is_empty());
    }

    #[test]
    fn library_names_in_error_texts() {
        assert_eq!(
            library_names_in("Could not load library cudnn_cnn64_9.dll. Error code 126"),
            ["cudnn_cnn64_9.dll"]
        );
        assert_eq!(
            library_names_in(
                "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED: libcudnn_ops.so.9: cannot open shared object file"
            ),
            ["libcudnn_ops.so.9"]
        );
        assert_eq!(
            library_names_in(
                "Please make sure 'C:\\cuda\\bin\\zlibwapi.dll' is in your library path!"
            ),
            ["zlibwapi.dll"]
        );
        assert!(library_names_in("CUDNN_STATUS_BAD_PARAM").is_empty());
    }
}
