//! Names the library a failed `import` misses (#33): from the import error's text, the
//! package's folder and the interpreter's facts, the package's native files are walked
//! (`libwalk`: PE imports, ELF `DT_NEEDED`) against the search order the loader of *that*
//! load really uses, and the first library found nowhere is named with the fix for it.
//! Generic: the doctor calls it for torch, and for any other package whose import fails.
//!
//! The search orders, with their sources:
//! - Windows, an extension module on Python ≥ 3.8 (`LOAD_LIBRARY_SEARCH_DEFAULT_DIRS |
//!   LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR`): the module's own folder, the application's folder
//!   (python.exe's), the folders added with `os.add_dll_directory`, System32. Python 3.8's
//!   "What's new" (https://docs.python.org/3/whatsnew/3.8.html, "Changes in the Python
//!   API"): "Only the system paths, the directory containing the DLL or PYD file, and
//!   directories added with add_dll_directory() are searched for load-time dependencies.
//!   Specifically, PATH and the current working directory are no longer used"; the order of
//!   those flags: Microsoft's "Dynamic-link library search order"
//!   (https://learn.microsoft.com/en-us/windows/win32/dlls/dynamic-link-library-search-order)
//!   and `SetDefaultDllDirectories`
//!   (https://learn.microsoft.com/en-us/windows/win32/api/libloaderapi/nf-libloaderapi-setdefaultdlldirectories).
//!   API sets and KnownDLLs are the loader's own (`libwalk::is_api_set`, `is_known_dll`).
//! - Windows, torch's own `Error loading "…\torch\lib\X.dll" or one of its dependencies`:
//!   torch/__init__.py `_load_dll_libraries` loads each `torch/lib/*.dll` with those flags
//!   and, on error 126, again with `LoadLibraryW` after putting its folders before PATH —
//!   the standard order (application folder, System32, System, Windows, PATH); that error
//!   is the second load's, so PATH did count there.
//! - Windows, Python < 3.8: the module's folder, then the standard order with PATH.
//! - Linux: glibc's ld.so(8): `DT_RPATH` (no `DT_RUNPATH`), `LD_LIBRARY_PATH`,
//!   `DT_RUNPATH`, `/etc/ld.so.cache`, the default folders; then the nvidia-* wheels'
//!   `lib` folders torch loads itself when that fails (torch/__init__.py
//!   `_preload_cuda_deps`).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::libwalk::{self, LinuxSearch, Missing, Search, WindowsSearch};
use crate::compat::Os;
use crate::message::Message;
use crate::msg;
use crate::platform::Host;
use crate::version::Version;

/// What is known of the interpreter whose import failed (the doctor's probe says it).
#[derive(Debug, Clone)]
pub struct Interpreter {
    /// The interpreter's OS (the probe's `sys.platform`): a Windows Python's paths are
    /// walked as PE files whatever machine reads them.
    pub os: Os,
    pub version: Option<Version>,
    /// `sys.executable`.
    pub executable: PathBuf,
    /// `sys.exec_prefix` and `sys.base_exec_prefix` (a venv's base install holds
    /// python.exe, the process's application folder).
    pub exec_prefix: Option<PathBuf>,
    pub base_exec_prefix: Option<PathBuf>,
}

/// The package whose import failed.
#[derive(Debug, Clone)]
pub struct Package {
    /// As users know it (`PyTorch`, `onnxruntime-gpu`).
    pub label: String,
    /// Its folder (`importlib.util.find_spec(name)`, found without importing it).
    pub dir: PathBuf,
    /// Windows: the folders it adds with `os.add_dll_directory` before loading; Linux:
    /// the folders it loads libraries from itself when the loader's search fails.
    pub dll_dirs: Vec<PathBuf>,
    /// The CUDA major it was built for, when known (names the cuDNN wheel).
    pub cuda_major: Option<u32>,
    /// It brings the CUDA runtime and cuDNN in its own folder (torch's Windows CUDA
    /// wheels): a missing one is a damaged install, not a missing toolkit.
    pub bundles_cuda: bool,
    /// It finds NVIDIA's nvidia-* pip wheels (torch on Linux: its RUNPATH and
    /// `_preload_cuda_deps`; torch on Windows does not add `nvidia\*\bin`), so a wheel is
    /// a fix worth naming.
    pub finds_nvidia_wheels: bool,
}

/// How the failed load happened, from Python's error text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// torch's `Error loading "…\lib\c10.dll" or one of its dependencies` (WinError 126).
    PackageDll { file: String },
    /// `DLL load failed while importing _C` / a bare WinError 126/127 (Windows).
    Extension { module: Option<String> },
    /// `libcudnn.so.9: cannot open shared object file` (Linux).
    SharedObject { name: String },
    /// A library the package's own loader asked for by name and could not load
    /// (CTranslate2's `Library cublas64_12.dll is not found or cannot be loaded`, cuDNN's
    /// `Could not load library cudnn_ops64_9.dll`): it is missing, or one it needs is.
    Named { name: String },
}

/// The text between `open` and the next `close` after it.
fn quoted<'a>(detail: &'a str, open: &str, close: char) -> Option<&'a str> {
    let rest = &detail[detail.find(open)? + open.len()..];
    Some(&rest[..rest.find(close)?]).filter(|s| !s.is_empty())
}

fn file_name_of(path: &str) -> String {
    path.rsplit(['\\', '/'])
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The load error in `detail`, if it is one.
pub fn classify(detail: &str) -> Option<LoadError> {
    if let Some(name) = crate::verify::loader::missing_from_dlerror(detail) {
        return Some(LoadError::SharedObject { name });
    }
    // ctypes on Windows, Python >= 3.8: `Could not find module 'C:\…\x.dll' (or one of its
    // dependencies)` — the file ctypes was asked to load, as with torch's own loader.
    if let Some(path) = quoted(detail, "Could not find module '", '\'') {
        return Some(LoadError::PackageDll {
            file: file_name_of(path),
        });
    }
    // A library asked for by name: CTranslate2 (`Library X is not found or cannot be
    // loaded`), cuDNN's own loader (`Could not load library X`, `Could not locate X`).
    for open in ["Library ", "Could not load library ", "Could not locate "] {
        let Some(i) = detail.find(open) else { continue };
        let word: String = detail[i + open.len()..]
            .chars()
            .take_while(|c| !c.is_whitespace() && !matches!(c, '\'' | '"' | ','))
            .collect();
        let name = file_name_of(word.trim_end_matches('.'));
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".dll") || lower.contains(".so") {
            return Some(LoadError::Named { name });
        }
    }
    if let Some(i) = detail.find("Error loading \"") {
        let rest = &detail[i + "Error loading \"".len()..];
        if let Some(end) = rest.find('"') {
            let file = rest[..end]
                .rsplit(['\\', '/'])
                .next()
                .unwrap_or_default()
                .to_string();
            if !file.is_empty() {
                return Some(LoadError::PackageDll { file });
            }
        }
    }
    if let Some(i) = detail.find("DLL load failed while importing ") {
        let rest = &detail[i + "DLL load failed while importing ".len()..];
        let module: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        return Some(LoadError::Extension {
            module: (!module.is_empty()).then_some(module),
        });
    }
    if detail.contains("DLL load failed")
        || detail.contains("WinError 126")
        || detail.contains("WinError 127")
    {
        return Some(LoadError::Extension { module: None });
    }
    None
}

/// Who provides a library, and so what fixes its absence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Provider {
    Cudnn {
        major: u32,
    },
    CudaRuntime {
        major: u32,
    },
    /// cuDNN 8's zlib on Windows.
    Zlib,
    VcRedist,
    /// Microsoft's LLVM OpenMP runtime from Visual Studio.
    OpenMpLlvm,
    Driver,
    Unknown,
}

/// The CUDA libraries named by major (`cublas64_12.dll`, `libcublas.so.12`): the base
/// names of NVIDIA's runtime libraries that a CUDA build of a package links.
const CUDA_RUNTIME: &[&str] = &[
    "cudart",
    "cublas",
    "cublasLt",
    "cufft",
    "cufftw",
    "curand",
    "cusparse",
    "cusolver",
    "cusolverMg",
    "nvrtc",
    "nvJitLink",
    "cupti",
    "nvToolsExt",
    "nvblas",
    "npp",
];

/// The major in `base64_N.dll` / `base64_N0.dll` / `libbase.so.N`.
fn major_of(os: Os, name: &str, base: &str) -> Option<u32> {
    let lower = name.to_ascii_lowercase();
    let base = base.to_ascii_lowercase();
    let digits = match os {
        Os::Windows => lower
            .strip_suffix(".dll")?
            .strip_prefix(&base)?
            .strip_prefix("64_")?
            .split('_')
            .next()?
            .to_string(),
        Os::Linux => lower
            .strip_prefix(&format!("lib{base}.so."))?
            .split('.')
            .next()?
            .to_string(),
    };
    let n: u32 = digits.parse().ok()?;
    // CUDA 11's runtime was `cudart64_110.dll`: major and minor.
    Some(if n >= 100 { n / 10 } else { n })
}

/// Who provides `name` (a small table; sources in the catalogue's fix sentences' notes in
/// ARCHITECTURE.md).
pub fn provider_of(os: Os, name: &str) -> Provider {
    let n = name.to_ascii_lowercase();
    match n.as_str() {
        "zlibwapi.dll" => return Provider::Zlib,
        "vcruntime140.dll" | "vcruntime140_1.dll" | "msvcp140.dll" | "msvcp140_1.dll"
        | "msvcp140_2.dll" | "concrt140.dll" | "vcomp140.dll" => return Provider::VcRedist,
        "libomp140.x86_64.dll" => return Provider::OpenMpLlvm,
        "nvcuda.dll" | "nvml.dll" | "libcuda.so.1" | "libnvidia-ml.so.1" => {
            return Provider::Driver;
        }
        _ => {}
    }
    // cuDNN: `cudnn64_9.dll`, `cudnn_ops64_9.dll`, `libcudnn.so.9`, `libcudnn_graph.so.9`.
    let cudnn = match os {
        Os::Windows => n
            .strip_prefix("cudnn")
            .and_then(|r| r.strip_suffix(".dll"))
            .and_then(|r| r.rsplit_once("64_"))
            .and_then(|(_, m)| m.parse().ok()),
        Os::Linux => n
            .strip_prefix("libcudnn")
            .and_then(|r| r.split_once(".so."))
            .and_then(|(_, m)| m.split('.').next()?.parse().ok()),
    };
    if let Some(major) = cudnn {
        return Provider::Cudnn { major };
    }
    CUDA_RUNTIME
        .iter()
        .find_map(|b| major_of(os, name, b))
        .map_or(Provider::Unknown, |major| Provider::CudaRuntime { major })
}

/// The library found missing, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MissingLibrary {
    /// `cudnn_ops64_9.dll`.
    pub name: String,
    /// `_C.pyd → torch_cuda.dll → cudnn_ops64_9.dll`.
    pub chain: String,
    /// The file that needs it (`torch_cuda.dll`; empty when only the error names it).
    pub needed_by: String,
    /// A folder on PATH that holds it, which this load does not search.
    pub on_path: Option<PathBuf>,
    pub provider: Provider,
    /// Others missing too, by name.
    pub also: Vec<String>,
}

impl MissingLibrary {
    /// The finding's sentence: what cannot start and what is missing; the chain and
    /// Python's error are its details.
    pub fn message(&self, package: &Package, detail: &str) -> Message {
        let m = match &self.on_path {
            Some(dir) => msg!(
                "doctor_library_missing_on_path",
                package = &package.label,
                library = &self.name,
                folder = dir.display()
            ),
            None => msg!(
                "doctor_library_missing",
                package = &package.label,
                library = &self.name
            ),
        };
        m.with("chain", &self.chain).with("detail", detail)
    }

    /// What to do about it, in plain words (whether reinstalling the package is part of
    /// it: [`MissingLibrary::reinstall`]).
    pub fn fix(&self, package: &Package) -> Message {
        let lib = &self.name;
        if self.reinstall(package) && self.provider != Provider::Unknown {
            let lib_dir = package.dir.join("lib");
            let folder = if lib_dir.is_dir() {
                lib_dir
            } else {
                package.dir.clone()
            };
            return msg!(
                "fix_lib_bundled",
                package = &package.label,
                library = lib,
                folder = folder.display()
            );
        }
        let wheels = package.finds_nvidia_wheels;
        match self.provider {
            Provider::Cudnn { major } => match (package.cuda_major, wheels) {
                (Some(cuda), true) => {
                    msg!("fix_lib_cudnn", library = lib, major = major, cuda = cuda)
                }
                (Some(cuda), false) => msg!(
                    "fix_lib_cudnn_toolkit",
                    library = lib,
                    major = major,
                    cuda = cuda
                ),
                (None, true) => msg!("fix_lib_cudnn_any", library = lib, major = major),
                (None, false) => msg!("fix_lib_cudnn_toolkit_any", library = lib, major = major),
            },
            Provider::CudaRuntime { major } if wheels => {
                msg!("fix_lib_cuda", library = lib, major = major)
            }
            Provider::CudaRuntime { major } => {
                msg!("fix_lib_cuda_toolkit", library = lib, major = major)
            }
            Provider::Zlib => msg!("fix_lib_zlib"),
            Provider::VcRedist => msg!("fix_lib_vc_redist", library = lib),
            Provider::OpenMpLlvm => msg!("fix_lib_libomp"),
            Provider::Driver => msg!("fix_lib_driver", library = lib),
            Provider::Unknown => msg!(
                "fix_lib_unknown",
                library = lib,
                package = &package.label,
                needed_by = if self.needed_by.is_empty() {
                    &package.label
                } else {
                    &self.needed_by
                }
            ),
        }
    }

    /// Whether reinstalling the package is the fix: it brings this library itself (torch's
    /// Windows CUDA wheels bring the CUDA runtime and cuDNN), or nobody here knows who
    /// provides it.
    pub fn reinstall(&self, package: &Package) -> bool {
        match self.provider {
            Provider::Cudnn { .. } | Provider::CudaRuntime { .. } => package.bundles_cuda,
            Provider::Unknown => true,
            _ => false,
        }
    }
}

/// torch as a [`Package`]: the folders its `_load_dll_libraries` adds on Windows
/// (torch/__init__.py: `torch/lib`, `<exec_prefix>\Library\bin`, the venv's base
/// `Library\bin`; the toolkit's `bin` only when none of those holds `cudart64*.dll`), or
/// on Linux the nvidia-* wheels' `lib` folders `_preload_cuda_deps` loads from; its CUDA
/// major from `torch/version.py`.
pub fn torch_package(host: &Host, py: &Interpreter, dir: &Path) -> Package {
    let cuda = read_torch_cuda(dir);
    let lib = dir.join("lib");
    let mut dirs = vec![lib.clone()];
    let mut bundles_cuda = false;
    match py.os {
        Os::Windows => {
            for p in [&py.exec_prefix, &py.base_exec_prefix]
                .into_iter()
                .flatten()
            {
                dirs.push(p.join("Library").join("bin"));
            }
            dirs.retain(|d| d.is_dir());
            dirs.dedup();
            bundles_cuda = has_file(&lib, |n| n.starts_with("cudart64") && n.ends_with(".dll"));
            let any_cudart = dirs
                .iter()
                .any(|d| has_file(d, |n| n.starts_with("cudart64") && n.ends_with(".dll")));
            if let Some(v) = cuda.as_ref().filter(|_| !any_cudart) {
                let var = format!("CUDA_PATH_V{}", v.replace('.', "_"));
                let tk = host.var(&var).map(PathBuf::from).unwrap_or_else(|| {
                    host.system_path(&format!(
                        r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v{v}"
                    ))
                });
                let bin = tk.join("bin");
                if bin.is_dir() {
                    dirs.push(bin);
                }
            }
        }
        Os::Linux => {
            dirs = dir
                .parent()
                .map(|site| nvidia_wheel_dirs(site, Os::Linux))
                .unwrap_or_default();
        }
    }
    Package {
        label: "PyTorch".into(),
        dir: dir.to_path_buf(),
        dll_dirs: dirs,
        cuda_major: cuda.and_then(|v| v.split('.').next()?.parse().ok()),
        bundles_cuda,
        finds_nvidia_wheels: py.os == Os::Linux,
    }
}

/// The nvidia-* wheels' library folders in `site` (`nvidia/*/bin` on Windows,
/// `nvidia/*/lib` on Linux), sorted; at most 64.
pub fn nvidia_wheel_dirs(site: &Path, os: Os) -> Vec<PathBuf> {
    let sub = if os == Os::Windows { "bin" } else { "lib" };
    let Ok(rd) = std::fs::read_dir(site.join("nvidia")) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd
        .flatten()
        .take(1024)
        .map(|e| e.path().join(sub))
        .filter(|p| p.is_dir())
        .take(64)
        .collect();
    out.sort();
    out
}

fn has_file(dir: &Path, want: impl Fn(&str) -> bool) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.flatten()
            .take(10_000)
            .any(|e| want(&e.file_name().to_string_lossy().to_ascii_lowercase()))
    })
}

/// `cuda = '12.4'` (or `cuda: Optional[str] = '12.4'`) in `torch/version.py`.
fn read_torch_cuda(dir: &Path) -> Option<String> {
    let bytes = crate::place::read_regular(&dir.join("version.py"), 64 << 10).ok()??;
    let text = String::from_utf8_lossy(&bytes);
    text.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        let k = k.trim();
        if k != "cuda" && !k.starts_with("cuda:") {
            return None;
        }
        let v = v.trim().trim_matches(['\'', '"']);
        (v.split('.').all(|p| p.parse::<u32>().is_ok()) && !v.is_empty()).then(|| v.to_string())
    })
}

/// Files under `dir` (depth ≤ `depth`) whose names pass `want`; at most `max`, sorted.
fn files_under(dir: &Path, depth: usize, max: usize, want: &dyn Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0)];
    let mut listed = 0;
    while let Some((d, level)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            listed += 1;
            if listed > 20_000 || out.len() >= max {
                break;
            }
            let Ok(ft) = e.file_type() else { continue };
            let name = e.file_name().to_string_lossy().into_owned();
            if ft.is_dir() && level < depth && !name.starts_with('.') && name != "__pycache__" {
                stack.push((e.path(), level + 1));
            } else if ft.is_file() && want(&name.to_ascii_lowercase()) {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// The files the failed load started from.
fn start_files(os: Os, pkg: &Package, error: &LoadError) -> Vec<PathBuf> {
    let ext = if os == Os::Windows { ".pyd" } else { ".so" };
    match error {
        LoadError::PackageDll { file } => {
            let want = file.to_ascii_lowercase();
            files_under(&pkg.dir, 1, 1, &|n| n == want)
        }
        LoadError::Extension { module: Some(m) } => {
            let m = m.to_ascii_lowercase();
            let (exact, dotted) = (format!("{m}{ext}"), format!("{m}."));
            files_under(&pkg.dir, 3, 4, &|n| {
                n == exact || (n.starts_with(&dotted) && n.ends_with(ext))
            })
        }
        LoadError::Extension { module: None } => {
            files_under(&pkg.dir, 1, 16, &|n| n.ends_with(ext))
        }
        LoadError::SharedObject { .. } => files_under(&pkg.dir, 1, 64, &|n| {
            n.ends_with(".so") || n.contains(".so.")
        }),
        // Where the loader finds it, if anywhere (see `explain`).
        LoadError::Named { .. } => Vec::new(),
    }
}

/// Windows' own folders: System32, System, Windows.
fn windows_system(host: &Host) -> Vec<PathBuf> {
    let root = host
        .var("SystemRoot")
        .or_else(|| host.var("windir"))
        .map(PathBuf::from)
        .unwrap_or_else(|| host.system_path(r"C:\Windows"));
    vec![root.join("System32"), root.join("System"), root]
}

/// The search order for this load (see the module's notes and sources).
pub fn search_for(host: &Host, py: &Interpreter, pkg: &Package, error: &LoadError) -> Search {
    match py.os {
        Os::Windows => {
            let system = windows_system(host);
            // The application folder: the process's python.exe (a venv's launcher starts
            // the base install's).
            let app: Vec<PathBuf> = py
                .base_exec_prefix
                .clone()
                .into_iter()
                .chain(py.executable.parent().map(Path::to_path_buf))
                .collect();
            let path = host.path_list("PATH");
            let secure = py
                .version
                .as_ref()
                .is_none_or(|v| v.major_minor() >= Version::new(&[3, 8]));
            let mut dirs = app;
            match error {
                LoadError::PackageDll { .. } | LoadError::Named { .. } => {
                    // torch's fallback: LoadLibraryW, its folders put before PATH. The
                    // same standard order for a library another package loads itself:
                    // onnxruntime's provider (`LoadLibraryExW` with
                    // `LOAD_WITH_ALTERED_SEARCH_PATH`, onnxruntime
                    // core/platform/windows/env.cc), a name CTranslate2 or cuDNN load
                    // at run time; its folders are those it loaded from beforehand.
                    dirs.extend(system.iter().cloned());
                    dirs.extend(pkg.dll_dirs.iter().cloned());
                    dirs.extend(path);
                    Search::Windows(WindowsSearch {
                        load_dir_first: false,
                        dirs,
                        system,
                        unsearched: Vec::new(),
                    })
                }
                _ if secure => {
                    dirs.extend(pkg.dll_dirs.iter().cloned());
                    dirs.push(system[0].clone());
                    Search::Windows(WindowsSearch {
                        load_dir_first: true,
                        dirs,
                        system: system[..1].to_vec(),
                        unsearched: path,
                    })
                }
                _ => {
                    dirs.extend(system.iter().cloned());
                    dirs.extend(path);
                    Search::Windows(WindowsSearch {
                        load_dir_first: true,
                        dirs,
                        system,
                        unsearched: Vec::new(),
                    })
                }
            }
        }
        Os::Linux => {
            let root = host.system_path("/");
            let under = |p: &str| host.system_path(p);
            Search::Linux(LinuxSearch {
                ld_library_path: host.path_list("LD_LIBRARY_PATH"),
                cache: libwalk::read_ld_so_cache(&under("/etc/ld.so.cache")),
                default_dirs: [
                    "/lib/x86_64-linux-gnu",
                    "/usr/lib/x86_64-linux-gnu",
                    "/lib/aarch64-linux-gnu",
                    "/usr/lib/aarch64-linux-gnu",
                    "/lib64",
                    "/usr/lib64",
                    "/lib",
                    "/usr/lib",
                ]
                .iter()
                .map(|p| under(p))
                .collect(),
                root,
                preloaded: pkg.dll_dirs.clone(),
            })
        }
    }
}

/// The library the failed import of `pkg` misses, when its native files say so.
pub fn explain(
    host: &Host,
    py: &Interpreter,
    pkg: &Package,
    error_text: &str,
) -> Option<MissingLibrary> {
    let error = classify(error_text)?;
    let search = search_for(host, py, pkg, &error);
    let mut missing: Vec<Missing> = Vec::new();
    let mut starts = start_files(py.os, pkg, &error);
    let located = match &error {
        LoadError::Named { name } => libwalk::locate(name, &search),
        _ => None,
    };
    starts.extend(located.clone());
    for start in starts {
        for m in libwalk::walk(&start, &search).missing {
            if !missing.iter().any(|x| x.name.eq_ignore_ascii_case(&m.name)) {
                missing.push(m);
            }
        }
    }
    // The error names the missing file itself: that one first, with its chain when
    // walked. A library asked for by name and found is not missing: what it needs is, or
    // nothing the walk can see is (then this is no missing library).
    if let LoadError::SharedObject { name } | LoadError::Named { name } = &error
        && located.is_none()
    {
        let at = missing.iter().position(|m| &m.name == name);
        match at {
            Some(i) => {
                let m = missing.remove(i);
                missing.insert(0, m);
            }
            None => missing.insert(
                0,
                Missing {
                    name: name.clone(),
                    chain: Vec::new(),
                    unsearched: None,
                },
            ),
        }
    }
    let first = missing.first()?;
    Some(MissingLibrary {
        name: first.name.clone(),
        chain: first.chain_text(),
        needed_by: first.chain.last().cloned().unwrap_or_default(),
        on_path: first.unsearched.clone(),
        provider: provider_of(py.os, &first.name),
        also: missing[1..].iter().map(|m| m.name.clone()).collect(),
    })
}

#[cfg(test)]
mod tests;
