//! The library a package's failed load misses (#33): when a package's GPU check failed
//! with a load error, its native files (`Installed::dir`) are walked with
//! `missing_library::explain` against the search order of that load, and the finding
//! names the library and its fix instead of the general need.
//!
//! What each package adds to the search before the load (its `Package` facts):
//! - onnxruntime-gpu: `import onnxruntime` loads `capi/onnxruntime_pybind11_state.pyd`
//!   adding no folder (onnxruntime/python/_pybind_state.py.in). Its CUDA provider
//!   (`capi/onnxruntime_providers_cuda.dll`) is loaded by onnxruntime itself with
//!   `LoadLibraryExW(…, LOAD_WITH_ALTERED_SEARCH_PATH)` (onnxruntime
//!   core/platform/windows/env.cc): its own folder, Windows' folders and PATH, not the
//!   folders of `os.add_dll_directory`; on Linux `dlopen` of the full path.
//!   `onnxruntime.preload_dlls()` (onnxruntime-gpu >= 1.21, which the probe calls) loads
//!   beforehand the CUDA and cuDNN libraries of the nvidia-* wheels in site-packages, and
//!   on Windows those of a CUDA 12 torch (`torch\lib`) instead when one is installed
//!   (onnxruntime/__init__.py `preload_dlls`, https://github.com/microsoft/onnxruntime/pull/23744;
//!   https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider, "Preload
//!   DLLs"). Without it nothing finds the wheels.
//! - CTranslate2 on Windows: `os.add_dll_directory(package_dir)` and `ctypes.CDLL` of every
//!   DLL in its folder before importing `_ext` (python/ctranslate2/__init__.py); before it
//!   loads cuBLAS, `SetDllDirectoryA(%CUDA_PATH%\bin)` when `CUDA_PATH` is set (its
//!   src/cuda/cublas_stub.cc, as read by its users: the source file is not in our
//!   index, so this one folder is the only thing taken on their word). Its wheels
//!   are built with `CUDA_DYNAMIC_LOADING=ON` (python/tools/prepare_build_environment_*.sh):
//!   cuBLAS and cuDNN are loaded by name at run time ("Library cublas64_12.dll is not
//!   found or cannot be loaded"), never from the nvidia-* wheels' folders, which
//!   faster-whisper's README has users put on `LD_LIBRARY_PATH` on Linux.
//! - PaddlePaddle, TensorFlow, JAX: nothing is assumed of their folders; one whose own
//!   metadata names nvidia-* wheels (`tensorflow[and-cuda]`, the `jax-cuda*-plugin`s) is
//!   counted as finding them on Linux.

use std::path::{Path, PathBuf};

use super::super::doctor::{Fix, Severity, TorchState};
use super::super::missing_library::{self, LoadError, MissingLibrary, Package, Provider};
use super::super::verdict::Layer;
use super::findings::{Context, cuda_needed, rule_and_check};
use super::{GpuLoad, Installed, PackageFinding, PackageFindingKind, pip};
use crate::compat::Os;
use crate::message::Message;
use crate::msg;
use crate::platform::Host;

/// Fills `missing_library` of each finding whose GPU check failed with a load error, and
/// gives the library's sentence and fix where the finding was about the load.
pub(super) fn name_missing(
    host: &Host,
    cx: &Context,
    torch: Option<&TorchState>,
    found: &mut [PackageFinding],
) {
    use PackageFindingKind::*;
    let py = cx.probe.interpreter(cx.os, cx.python);
    for f in found.iter_mut() {
        // The wheels its own extra names are the better fix: they bring the whole set.
        let rewrite = match f.kind {
            CudaMissing | CudnnMissing | GpuFailed | UnknownVersion => true,
            WheelsMissing => false,
            _ => continue,
        };
        let Some(p) = cx.probe.installed(&f.package) else {
            continue;
        };
        let (Some(dir), Some((_, check))) = (p.dir.as_deref(), rule_and_check(&p.name)) else {
            continue;
        };
        let Some(c) = cx.probe.checks.get(check) else {
            continue;
        };
        let Some(error) = c.error.as_deref() else {
            continue;
        };
        let Some(load) = missing_library::classify(error) else {
            continue;
        };
        // The package's own module failed to import (not its GPU part).
        let at_import = matches!(load, LoadError::Extension { .. })
            || error.starts_with("ImportError")
            || error.starts_with("ModuleNotFoundError");
        let mut pkg = package(
            py.os,
            p,
            Path::new(dir),
            cuda_needed(cx, p),
            c,
            torch,
            at_import,
        );
        // CTranslate2 loads cuBLAS after SetDllDirectoryA(%CUDA_PATH%\bin).
        if p.name == "ctranslate2" && py.os == Os::Windows && !at_import {
            pkg.dll_dirs
                .extend(host.var("CUDA_PATH").map(|d| Path::new(d).join("bin")));
        }
        let Some(m) = missing_library::explain(host, &py, &pkg, error) else {
            continue;
        };
        f.missing_library = Some(m.name.clone());
        let detail = f.message.param("detail").unwrap_or(error).to_string();
        if !rewrite {
            f.message = f.message.clone().with("chain", &m.chain);
            continue;
        }
        f.kind = LibraryMissing;
        f.layer = layer_of(m.provider);
        f.severity = Severity::Problem;
        f.message = if at_import {
            m.message(&pkg, &detail)
        } else {
            gpu_part_message(&m, p, &detail)
        };
        f.fix = Some(Fix {
            message: m.fix(&pkg),
            commands: commands(cx.python, p, &pkg, &m),
        });
    }
}

/// The package's facts for the walk (see the module's notes and sources).
fn package(
    os: Os,
    p: &Installed,
    dir: &Path,
    cuda: Option<u32>,
    check: &GpuLoad,
    torch: Option<&TorchState>,
    at_import: bool,
) -> Package {
    let site = dir.parent();
    let wheels = || {
        site.map(|s| missing_library::nvidia_wheel_dirs(s, os))
            .unwrap_or_default()
    };
    let (dll_dirs, finds_nvidia_wheels): (Vec<PathBuf>, bool) = match (p.name.as_str(), os) {
        ("onnxruntime-gpu", _) if at_import => (Vec::new(), false),
        ("onnxruntime-gpu", _) => {
            // The provider needs `onnxruntime_providers_shared` beside it in `capi`.
            let mut dirs = vec![dir.join("capi")];
            let preloaded = check.preloaded == Some(true);
            if preloaded {
                let cu12_torch = torch.is_some_and(|t| t.version.contains("+cu12"));
                match site {
                    Some(s) if os == Os::Windows && cu12_torch => {
                        dirs.push(s.join("torch").join("lib"));
                    }
                    _ => dirs.extend(wheels()),
                }
            }
            (dirs, preloaded)
        }
        ("ctranslate2", Os::Windows) => (vec![dir.to_path_buf()], false),
        ("ctranslate2", Os::Linux) => (Vec::new(), false),
        (_, _) => {
            let named = !p.requires.is_empty();
            let dirs = if named && os == Os::Linux {
                wheels()
            } else {
                Vec::new()
            };
            (dirs, named)
        }
    };
    Package {
        label: p.name.clone(),
        dir: dir.to_path_buf(),
        dll_dirs,
        cuda_major: cuda,
        bundles_cuda: false,
        finds_nvidia_wheels,
    }
}

/// The GPU part cannot load (the package itself imports). Its load searches PATH (see
/// the module's notes), so no copy is ever "only on PATH" here.
fn gpu_part_message(m: &MissingLibrary, p: &Installed, detail: &str) -> Message {
    msg!(
        "pkg_library_missing",
        package = &p.name,
        version = &p.version,
        library = &m.name
    )
    .with("chain", &m.chain)
    .with("detail", detail)
}

fn layer_of(provider: Provider) -> Layer {
    match provider {
        Provider::Cudnn { .. } => Layer::Cudnn,
        Provider::CudaRuntime { .. } => Layer::Toolkit,
        Provider::Driver => Layer::Driver,
        _ => Layer::Env,
    }
}

/// The commands of the fix: the package again where that is the fix, the nvidia-* wheel
/// that brings the library where the package finds those wheels.
fn commands(python: &Path, p: &Installed, pkg: &Package, m: &MissingLibrary) -> Vec<String> {
    if m.reinstall(pkg) {
        return vec![pip(
            python,
            &format!("install --force-reinstall \"{}=={}\"", p.name, p.version),
        )];
    }
    let Some(cuda) = pkg.cuda_major.filter(|_| pkg.finds_nvidia_wheels) else {
        return Vec::new();
    };
    let wheel = match m.provider {
        Provider::Cudnn { major } => format!("nvidia-cudnn-cu{cuda}=={major}.*"),
        Provider::CudaRuntime { major } if major == cuda && cuda <= 12 => {
            let lower = m.name.to_ascii_lowercase();
            let base = lower.trim_start_matches("lib");
            if base.starts_with("cublas") {
                format!("nvidia-cublas-cu{cuda}")
            } else if base.starts_with("cudart") {
                format!("nvidia-cuda-runtime-cu{cuda}")
            } else {
                return Vec::new();
            }
        }
        _ => return Vec::new(),
    };
    vec![pip(python, &format!("install \"{wheel}\""))]
}
