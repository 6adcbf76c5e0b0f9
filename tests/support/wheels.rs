//! NVIDIA's CUDA 13.5 component wheels served on loopback as a PyPI simple index: PEP 691
//! JSON under `/simple/`, PEP 503 HTML under `/html/`, files under `/files/`. The wheels
//! are stand-ins built here with the real ones' names, members (`nvidia/cu13/{bin,include,
//! lib,nvvm}/…`), modes and dist-info (METADATA, WHEEL, RECORD), small and without network;
//! the real ones, fetched with pip, only for the tests that `scripts/real-artifacts.sh`
//! runs ([`cached`]).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use super::server::{Body, Server};

/// The release the tests assemble and the pins its `cuda-toolkit` metapackage names for
/// the `nvcc`, `cudart` and `cccl` components.
pub const TOOLKIT: &str = "13.5.0";
pub const PINS: &[&str] = &[
    "cuda-toolkit==13.5.0",
    "nvidia-cuda-nvcc==13.5.37",
    "nvidia-nvvm==13.5.37",
    "nvidia-cuda-crt==13.5.37",
    "nvidia-cuda-runtime==13.5.37",
    "nvidia-cuda-cccl==13.3.5.0.6",
];
pub const COMPONENTS: &str = "nvcc,cudart,cccl";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Platform {
    Linux,
    Windows,
}

static FETCH: Mutex<()> = Mutex::new(());

/// The folder holding NVIDIA's real wheels for `p`, downloading them with pip the first
/// time (needs PyPI: only the ignored `real_nvidia_wheels_*` tests call it).
pub fn cached(p: Platform) -> PathBuf {
    let _guard = FETCH.lock().unwrap_or_else(|e| e.into_inner());
    let (name, tags): (&str, &[&str]) = match p {
        Platform::Linux => (
            "linux",
            &[
                "manylinux_2_17_x86_64",
                "manylinux2014_x86_64",
                "manylinux_2_12_x86_64",
                "manylinux2010_x86_64",
            ],
        ),
        Platform::Windows => ("win", &["win_amd64"]),
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("wheels")
        .join(name);
    if std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0) >= PINS.len() {
        return dir;
    }
    pip_download(&dir, tags, PINS);
    dir
}

/// `pip download`s NVIDIA's wheels `pins` for the platform `tags` into `dir` (needs PyPI:
/// only the ignored real-artifact tests call it); fails the test, saying why, if pip does.
pub fn pip_download(dir: &Path, tags: &[&str], pins: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    let python = ["python3", "python"]
        .into_iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok())
        .expect("these tests fetch NVIDIA's wheels with pip: install Python 3 with pip");
    let mut cmd = Command::new(python);
    cmd.args([
        "-m",
        "pip",
        "download",
        "--quiet",
        "--no-deps",
        "--only-binary=:all:",
        "--python-version",
        "3.11",
    ]);
    for t in tags {
        cmd.args(["--platform", t]);
    }
    cmd.arg("-d").arg(dir).args(pins);
    let out = cmd.output().expect("run pip");
    assert!(
        out.status.success(),
        "pip download {pins:?} failed (these tests need PyPI):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One file the index lists.
#[derive(Clone, Debug)]
pub struct IndexFile {
    pub project: String,
    pub filename: String,
    pub path: PathBuf,
    pub sha256: String,
    pub size: u64,
}

pub fn sha256_file(p: &Path) -> String {
    let mut h = Sha256::new();
    let mut f = std::fs::File::open(p).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = std::io::Read::read(&mut f, &mut buf).unwrap();
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The index entries for every wheel in `dirs`.
pub fn files(dirs: &[&Path]) -> Vec<IndexFile> {
    let mut out = Vec::new();
    for d in dirs {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let filename = e.file_name().to_string_lossy().into_owned();
            if !filename.ends_with(".whl") {
                continue;
            }
            let path = e.path();
            out.push(IndexFile {
                project: cuda_setup_core::wheels::index::normalize(
                    filename.split('-').next().unwrap(),
                ),
                sha256: sha256_file(&path),
                size: std::fs::metadata(&path).unwrap().len(),
                filename,
                path,
            });
        }
    }
    out.sort_by(|a, b| a.filename.cmp(&b.filename));
    out
}

/// Serves `files` as an index: `/simple/<project>/` (PEP 691 JSON, relative file URLs)
/// and `/html/<project>/` (PEP 503 HTML, with `#sha256=` fragments).
pub fn serve(files: &[IndexFile]) -> Server {
    let server = Server::start();
    let mut projects: Vec<&str> = files.iter().map(|f| f.project.as_str()).collect();
    projects.sort();
    projects.dedup();
    for p in projects {
        let mine: Vec<&IndexFile> = files.iter().filter(|f| f.project == p).collect();
        let json = serde_json::json!({
            "meta": {"api-version": "1.1"},
            "name": p,
            "files": mine.iter().map(|f| serde_json::json!({
                "filename": f.filename,
                "url": format!("../../files/{}", f.filename),
                "hashes": {"sha256": f.sha256},
                "size": f.size,
                "yanked": false,
            })).collect::<Vec<_>>(),
        });
        server.add_typed(
            &format!("/simple/{p}/"),
            Body::Bytes(Arc::new(serde_json::to_vec(&json).unwrap())),
            "application/vnd.pypi.simple.v1+json",
        );
        let links: String = mine
            .iter()
            .map(|f| {
                format!(
                    "    <a href=\"/files/{0}#sha256={1}\">{0}</a><br/>\n",
                    f.filename, f.sha256
                )
            })
            .collect();
        let html =
            format!("<!DOCTYPE html>\n<html><body><h1>Links for {p}</h1>\n{links}</body></html>\n");
        server.add_typed(
            &format!("/html/{p}/"),
            Body::Bytes(Arc::new(html.into_bytes())),
            "text/html",
        );
    }
    for f in files {
        server.add(
            &format!("/files/{}", f.filename),
            Body::File(f.path.clone(), f.size),
        );
    }
    server
}

/// The tags a wheel's file name carries (`py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64`
/// is two), as its WHEEL file lists them.
fn tags(file_name: &str) -> Vec<String> {
    let stem = file_name.strip_suffix(".whl").unwrap();
    let parts: Vec<&str> = stem.split('-').collect();
    let [py, abi, plat] = parts[parts.len() - 3..] else {
        unreachable!()
    };
    let mut out = Vec::new();
    for py in py.split('.') {
        for abi in abi.split('.') {
            for plat in plat.split('.') {
                out.push(format!("{py}-{abi}-{plat}"));
            }
        }
    }
    out
}

/// RECORD's hash: SHA-256 in URL-safe base64 without padding.
fn record_hash(bytes: &[u8]) -> String {
    const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let digest = Sha256::digest(bytes);
    let mut out = String::new();
    for chunk in digest.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// A wheel as NVIDIA's are built: `files` as (name, bytes, Unix mode), then
/// `<name>-<version>.dist-info/` with the licence (when given), METADATA, WHEEL (the
/// file name's tags), top_level.txt and RECORD (every member's hash and size).
pub fn write_wheel_with(
    path: &Path,
    metadata: &str,
    files: &[(&str, &[u8], u32)],
    licence: Option<&str>,
) {
    use std::io::Write;
    use zip::write::SimpleFileOptions;
    let mut z = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let opts = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let file_name = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut parts = file_name.split('-');
    let info = format!(
        "{}-{}.dist-info",
        parts.next().unwrap(),
        parts.next().unwrap()
    );
    let generator = if files.is_empty() {
        "hatchling 1.32.4"
    } else {
        "setuptools (84.0.0)"
    };
    let wheel = format!(
        "Wheel-Version: 1.0\nGenerator: {generator}\nRoot-Is-Purelib: true\n{}\n",
        tags(&file_name)
            .iter()
            .map(|t| format!("Tag: {t}\n"))
            .collect::<String>()
    );
    let mut members: Vec<(String, Vec<u8>, u32)> = files
        .iter()
        .map(|(n, b, m)| (n.to_string(), b.to_vec(), *m))
        .collect();
    if let Some(l) = licence {
        members.push((format!("{info}/licenses/License.txt"), l.into(), 0o644));
    }
    members.push((format!("{info}/METADATA"), metadata.into(), 0o644));
    members.push((format!("{info}/WHEEL"), wheel.into(), 0o644));
    if !files.is_empty() {
        members.push((format!("{info}/top_level.txt"), b"nvidia\n".to_vec(), 0o644));
    }
    let mut record: String = members
        .iter()
        .map(|(n, b, _)| format!("{n},sha256={},{}\n", record_hash(b), b.len()))
        .collect();
    record += &format!("{info}/RECORD,,\n");
    members.push((format!("{info}/RECORD"), record.into(), 0o664));
    for (name, bytes, mode) in &members {
        z.start_file(name.as_str(), opts.unix_permissions(*mode))
            .unwrap();
        z.write_all(bytes).unwrap();
    }
    z.finish().unwrap();
}

/// A small wheel: `files` as (name, bytes, executable), and its dist-info.
pub fn write_wheel(path: &Path, metadata: &str, files: &[(&str, &[u8], bool)]) {
    let files: Vec<(&str, &[u8], u32)> = files
        .iter()
        .map(|(n, b, x)| (*n, *b, if *x { 0o755 } else { 0o644 }))
        .collect();
    write_wheel_with(path, metadata, &files, None);
}

/// Where the real 13.5 wheels' pins apply: every platform NVIDIA builds for (the marker
/// `cuda-toolkit`'s METADATA puts on each of them).
const MARKER: &str = "(sys_platform == 'linux' and platform_machine == 'aarch64' or \
    sys_platform == 'linux' and platform_machine == 'x86_64' or \
    sys_platform == 'win32' and platform_machine == 'ARM64' or \
    sys_platform == 'win32' and platform_machine == 'AMD64')";

/// The `cuda-toolkit` 13.5.0 metapackage's METADATA: its extras, and the pins of the
/// extras the tests use (as NVIDIA writes them, markers and all); the others pin
/// packages the stand-in index does not have, as on a mirror that lacks them.
fn toolkit_metadata() -> String {
    let pins: &[(&str, &[&str])] = &[
        (
            "all",
            &[
                "nvidia-cublas==13.10.0.20.*",
                "nvidia-cuda-cccl==13.3.5.0.6.*",
                "nvidia-cuda-crt==13.5.37.*",
                "nvidia-cuda-nvcc==13.5.37.*",
                "nvidia-cuda-runtime==13.5.37.*",
                "nvidia-nvjitlink<14,>=13.5.37",
                "nvidia-nvvm==13.5.37.*",
            ],
        ),
        ("cccl", &["nvidia-cuda-cccl==13.3.5.0.6.*"]),
        ("crt", &["nvidia-cuda-crt==13.5.37.*"]),
        ("cublas", &["nvidia-cublas==13.10.0.20.*"]),
        ("cudart", &["nvidia-cuda-runtime==13.5.37.*"]),
        ("cufft", &["nvidia-cufft==12.3.0.37.*"]),
        (
            "cusolver",
            &[
                "nvidia-cublas==13.10.0.20.*",
                "nvidia-cusolver==12.2.0.37.*",
            ],
        ),
        (
            "nvcc",
            &[
                "nvidia-cuda-crt==13.5.37.*",
                "nvidia-cuda-nvcc==13.5.37.*",
                "nvidia-cuda-runtime==13.5.37.*",
                "nvidia-nvvm==13.5.37.*",
            ],
        ),
        ("nvrtc", &["nvidia-cuda-nvrtc==13.5.37.*"]),
        ("nvvm", &["nvidia-nvvm==13.5.37.*"]),
    ];
    let marker = MARKER.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut m = String::from(
        "Metadata-Version: 2.5\nName: cuda-toolkit\nVersion: 13.5.0\n\
         Summary: CUDA Toolkit meta-package\n\
         Project-URL: homepage, https://developer.nvidia.com/cuda-toolkit\n\
         Author-email: NVIDIA Kitmaker Team <compute_installer@nvidia.com>\n\
         Keywords: cuda,nvidia\nClassifier: Environment :: GPU :: NVIDIA CUDA\n",
    );
    for (extra, reqs) in pins {
        m += &format!("Provides-Extra: {extra}\n");
        for r in *reqs {
            m += &format!("Requires-Dist: {r}; {marker} and extra == '{extra}'\n");
        }
    }
    m += "Description-Content-Type: text/markdown\n\n# cuda-toolkit 13.5.0\n\n\
          Install just the CUDA Runtime\n```\npip install \"cuda-toolkit[cudart]\"\n```\n";
    m
}

/// A component wheel's METADATA as NVIDIA writes it (setuptools).
fn component_metadata(name: &str, version: &str, summary: &str, requires: &[&str]) -> String {
    let requires: String = requires
        .iter()
        .map(|r| format!("Requires-Dist: {r}\n"))
        .collect();
    format!(
        "Metadata-Version: 2.4\nName: {name}\nVersion: {version}\nSummary: {summary}\n\
         Home-page: https://developer.nvidia.com/cuda-zone\n\
         Author: Nvidia CUDA Installer Team\nAuthor-email: compute_installer@nvidia.com\n\
         License-Expression: LicenseRef-NVIDIA-Proprietary\n\
         Keywords: cuda,nvidia,runtime,machine learning,deep learning\n\
         Classifier: Operating System :: Microsoft :: Windows\n\
         Classifier: Operating System :: POSIX :: Linux\n\
         Requires-Python: >=3\nDescription-Content-Type: text/plain\n\
         License-File: License.txt\n{requires}Dynamic: summary\n\n{summary}\n"
    )
}

/// What `nvcc --version` prints for 13.5 (the stand-in nvcc prints it too).
pub const NVCC_VERSION: &str = "nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2026 NVIDIA Corporation
Built on Tue_Oct_13_21:46:08_PDT_2026
Cuda compilation tools, release 13.5, V13.5.37
Build cuda_13.5.r13.5/compiler.37040193_0
";

/// Lines of NVIDIA's 13.5 `cuda.h` (the runtime wheel's `include/cuda.h`): the CUDAAPI
/// define, a versioned name, a per-thread-stream one, declarations on one line and over
/// two. Enough for the driver stub the dev layout makes from it.
pub const CUDA_H: &str = r#"#ifndef __cuda_cuda_h__
#define __cuda_cuda_h__
#if defined(__CUDA_API_VERSION_INTERNAL) || defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
    #define __CUDA_API_PTDS(api) api ## _ptds
    #define __CUDA_API_PTSZ(api) api ## _ptsz
#else
    #define __CUDA_API_PTDS(api) api
    #define __CUDA_API_PTSZ(api) api
#endif
#define cuCtxCreate                         cuCtxCreate_v4
#define cuMemAlloc                          cuMemAlloc_v2
#define cuMemcpyHtoD                        __CUDA_API_PTDS(cuMemcpyHtoD_v2)
#define CUDA_VERSION 13050
#ifdef _WIN32
#define CUDAAPI __stdcall
#else
#define CUDAAPI
#endif
typedef enum cudaError_enum { CUDA_SUCCESS = 0, CUDA_ERROR_STUB_LIBRARY = 34 } CUresult;
/**
 * \brief Initialize the CUDA driver API
 */
CUresult CUDAAPI cuInit(unsigned int Flags);
CUresult CUDAAPI cuDriverGetVersion(int *driverVersion);
CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize);
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
CUresult CUDAAPI
cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra);
#endif
"#;

/// The driver functions [`CUDA_H`] gives the stub.
pub const CUDA_H_SYMBOLS: &[&str] = &[
    "cuCtxCreate",
    "cuCtxCreate_v4",
    "cuDriverGetVersion",
    "cuInit",
    "cuLaunchKernel",
    "cuMemAlloc",
    "cuMemAlloc_v2",
    "cuMemcpyHtoD",
    "cuMemcpyHtoD_v2",
    "cuMemcpyHtoD_v2_ptds",
];

/// The wheels' own `bin/nvcc.profile` (Linux, Windows), as NVIDIA ships them.
pub const NVCC_PROFILE_LINUX: &str = r#"
TOP              = $(_HERE_)/..

CICC_PATH        = $(TOP)/nvvm/bin
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice

LD_LIBRARY_PATH += $(TOP)/lib:
PATH            += $(CICC_PATH):$(_HERE_):

INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
SYSTEM_INCLUDES +=  "-isystem" "$(TOP)/include/cccl" $(_SPACE_)

LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib/stubs" "-L$(TOP)/lib"

CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
"#;
pub const NVCC_PROFILE_WINDOWS: &str = r#"
TOP              = $(_HERE_)/..

CICC_PATH        = $(TOP)/nvvm/bin
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice

PATH            += $(CICC_PATH);$(_HERE_);$(TOP)/lib;

INCLUDES        += "-I$(TOP)/include" "-I$(TOP)/include/cccl" $(_SPACE_)
SYSTEM_INCLUDES +=  $(_SPACE_)

LIBRARIES        =+ $(_SPACE_) "/LIBPATH:$(TOP)/lib/$(_WIN_PLATFORM_)"

CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
"#;

/// The cuBLAS wheel's DLLs (`nvidia-cublas` 13.10.0.20, win_amd64) and a few of each's
/// exports, as NVIDIA's export them: the stand-in wheel's DLLs export exactly these.
pub const CUBLAS_EXPORTS: &[(&str, &[&str])] = &[
    (
        "cublas64_13.dll",
        &[
            "cublasCreate_v2",
            "cublasDestroy_v2",
            "cublasGemmEx",
            "cublasSgemm_v2",
        ],
    ),
    ("cublasLt64_13.dll", &["cublasLtCreate", "cublasLtMatmul"]),
    ("nvblas64_13.dll", &["cgemm", "cgemm_", "sgemm", "sgemm_"]),
];

/// Stand-ins for NVIDIA's CUDA 13.5 toolkit wheels for `p`, written into `dir`: the
/// `cuda-toolkit` metapackage and the nvcc, nvvm, crt, runtime, cccl and cublas wheels,
/// with the real ones' file names, member paths and modes (a few members each, small
/// bytes): libraries by their versioned names only, no import library for cuBLAS's DLLs,
/// CCCL's CMake files in its own `cccl/lib/cmake/`, an excerpt of `cuda.h` ([`CUDA_H`])
/// in the runtime wheel, no `stubs/`. On Linux `nvcc` is a script that prints
/// [`NVCC_VERSION`]. (cuBLAS is fetched only when a test chooses the `cublas` component.)
pub fn toolkit_standins(dir: &Path, p: Platform) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let win = p == Platform::Windows;
    let (tag, nvvm_tag) = if win {
        ("py3-none-win_amd64", "py3-none-win_amd64")
    } else {
        (
            "py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64",
            "py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64",
        )
    };
    let exe = if win { ".exe" } else { "" };
    let licence = "NVIDIA Software License Agreement (stand-in)\n";
    let stub = |what: &str| format!("stand-in for {what}\n").into_bytes();
    write_wheel_with(
        &dir.join(format!("cuda_toolkit-{TOOLKIT}-py2.py3-none-any.whl")),
        &toolkit_metadata(),
        &[],
        None,
    );
    type Members = Vec<(String, Vec<u8>, u32)>;
    let component = |file: String,
                     name: &str,
                     version: &str,
                     summary: &str,
                     requires: &[&str],
                     members: Members| {
        let files: Vec<(&str, &[u8], u32)> = members
            .iter()
            .map(|(n, b, m)| (n.as_str(), b.as_slice(), *m))
            .collect();
        write_wheel_with(
            &dir.join(file),
            &component_metadata(name, version, summary, requires),
            &files,
            Some(licence),
        );
    };
    let f = |name: &str, bytes: Vec<u8>| (format!("nvidia/cu13/{name}"), bytes, 0o644);
    let x = |name: &str, bytes: Vec<u8>| (format!("nvidia/cu13/{name}"), bytes, 0o744);

    let nvcc = if win {
        stub("nvcc.exe")
    } else {
        // Prints the version and links like a real nvcc (the build check's link names).
        super::standin::nvcc_script(NVCC_VERSION).into_bytes()
    };
    let mut members = vec![x(&format!("bin/nvcc{exe}"), nvcc)];
    for tool in [
        "__nvcc_device_query",
        "bin2c",
        "cudafe++",
        "fatbinary",
        "nvlink",
        "ptxas",
    ] {
        members.push(x(&format!("bin/{tool}{exe}"), stub(tool)));
    }
    let profile = if win {
        NVCC_PROFILE_WINDOWS
    } else {
        NVCC_PROFILE_LINUX
    };
    members.push(f("bin/nvcc.profile", profile.as_bytes().to_vec()));
    members.push(f("bin/crt/link.stub", stub("link.stub")));
    members.push(f("bin/crt/prelink.stub", stub("prelink.stub")));
    members.push(f("include/fatbinary_section.h", b"#pragma once\n".to_vec()));
    component(
        format!("nvidia_cuda_nvcc-13.5.37-{tag}.whl"),
        "nvidia-cuda-nvcc",
        "13.5.37",
        "CUDA nvcc",
        &["nvidia-nvvm", "nvidia-cuda-runtime", "nvidia-cuda-crt"],
        members,
    );

    let mut members = vec![
        f("include/nvvm.h", b"#pragma once\n".to_vec()),
        x(&format!("nvvm/bin/cicc{exe}"), stub("cicc")),
        f("nvvm/libdevice/libdevice.10.bc", stub("libdevice")),
    ];
    members.push(if win {
        f("bin/x86_64/nvvm64_40_0.dll", stub("nvvm64_40_0.dll"))
    } else {
        f("lib/libnvvm.so.4", stub("libnvvm.so.4"))
    });
    component(
        format!("nvidia_nvvm-13.5.37-{nvvm_tag}.whl"),
        "nvidia-nvvm",
        "13.5.37",
        "NVVM Libraries",
        &[],
        members,
    );

    let members = [
        "common_functions.h",
        "host_config.h",
        "host_defines.h",
        "math_functions.h",
    ]
    .iter()
    .map(|h| f(&format!("include/crt/{h}"), b"#pragma once\n".to_vec()))
    .collect();
    component(
        format!("nvidia_cuda_crt-13.5.37-{tag}.whl"),
        "nvidia-cuda-crt",
        "13.5.37",
        "CUDA C Runtime",
        &[],
        members,
    );

    let mut members: Members = [
        "cuda_runtime.h",
        "cuda_runtime_api.h",
        "driver_types.h",
        "cooperative_groups/reduce.h",
    ]
    .iter()
    .map(|h| f(&format!("include/{h}"), b"#pragma once\n".to_vec()))
    .collect();
    members.push(f("include/cuda.h", CUDA_H.as_bytes().to_vec()));
    let libs: &[&str] = if win {
        &[
            "bin/x86_64/cudart64_13.dll",
            "lib/x64/cuda.lib",
            "lib/x64/cudadevrt.lib",
            "lib/x64/cudart.lib",
            "lib/x64/cudart_static.lib",
        ]
    } else {
        &[
            "lib/libcudadevrt.a",
            "lib/libcudart.so.13",
            "lib/libcudart_static.a",
        ]
    };
    members.extend(libs.iter().map(|l| f(l, stub(l))));
    component(
        format!("nvidia_cuda_runtime-13.5.37-{tag}.whl"),
        "nvidia-cuda-runtime",
        "13.5.37",
        "CUDA Runtime native Libraries",
        &[],
        members,
    );

    let mut members = vec![f("cccl/LICENSE", licence.into())];
    for c in [
        "cccl/cccl-config.cmake",
        "cccl/cccl-config-version.cmake",
        "cub/cub-config.cmake",
        "cub/cub-header-search.cmake",
        "libcudacxx/libcudacxx-config.cmake",
        "thrust/thrust-config.cmake",
    ] {
        members.push(f(&format!("cccl/lib/cmake/{c}"), stub(c)));
    }
    for h in [
        "cccl/cuda/std/version",
        "cccl/cub/version.cuh",
        "cccl/thrust/version.h",
        "nv/target",
    ] {
        members.push(f(&format!("include/{h}"), b"#pragma once\n".to_vec()));
    }
    component(
        format!("nvidia_cuda_cccl-13.3.5.0.6-{tag}.whl"),
        "nvidia-cuda-cccl",
        "13.3.5.0.6",
        "CUDA CCCL",
        &[],
        members,
    );

    // cuBLAS: its libraries and headers; on Windows the DLLs only, no .lib (as NVIDIA's).
    let mut members: Members = ["cublas.h", "cublasLt.h", "cublas_api.h", "cublas_v2.h"]
        .iter()
        .map(|h| f(&format!("include/{h}"), b"#pragma once\n".to_vec()))
        .collect();
    let libs: &[&str] = if win {
        &[
            "bin/x86_64/cublas64_13.dll",
            "bin/x86_64/cublasLt64_13.dll",
            "bin/x86_64/nvblas64_13.dll",
        ]
    } else {
        &[
            "lib/libcublas.so.13",
            "lib/libcublasLt.so.13",
            "lib/libnvblas.so.13",
        ]
    };
    // Windows: real PE32+ DLLs with export tables (import libraries are made from them).
    members.extend(libs.iter().map(|l| {
        let file = l.rsplit('/').next().unwrap_or(l);
        let bytes = match CUBLAS_EXPORTS.iter().find(|(d, _)| *d == file) {
            Some((dll, exports)) if win => super::pe::dll(dll, exports),
            _ => stub(l),
        };
        f(l, bytes)
    }));
    let cublas_tag = if win {
        tag
    } else {
        "py3-none-manylinux1_x86_64.manylinux_2_5_x86_64"
    };
    component(
        format!("nvidia_cublas-13.10.0.20-{cublas_tag}.whl"),
        "nvidia-cublas",
        "13.10.0.20",
        "CUBLAS native runtime libraries",
        &[],
        members,
    );
    dir.to_path_buf()
}

/// Simpler stand-ins for NVIDIA's 13.5 wheels (no network): the
/// `cuda-toolkit` metapackage pinning nvcc and the runtime for Linux, an nvcc wheel, and
/// a runtime wheel of version `runtime` (without `libcudart.so.13` unless `cudart`).
/// `nvcc` names the build in its output, so a test can tell one tree from another.
pub fn standin(dir: &Path, runtime: &str, cudart: bool) -> Vec<IndexFile> {
    std::fs::create_dir_all(dir).unwrap();
    let tag = "py3-none-manylinux_2_17_x86_64.whl";
    write_wheel(
        &dir.join(format!("cuda_toolkit-{TOOLKIT}-py3-none-any.whl")),
        &format!(
            "Metadata-Version: 2.4\nName: cuda-toolkit\nVersion: {TOOLKIT}\n\
             Provides-Extra: nvcc\nProvides-Extra: cudart\n\
             Requires-Dist: nvidia-cuda-nvcc==13.5.*; extra == 'nvcc'\n\
             Requires-Dist: nvidia-cuda-runtime==13.5.*; extra == 'cudart'\n"
        ),
        &[],
    );
    write_wheel(
        &dir.join(format!("nvidia_cuda_nvcc-13.5.37-{tag}")),
        "Metadata-Version: 2.4\nName: nvidia-cuda-nvcc\nVersion: 13.5.37\n",
        &[(
            "nvidia/cu13/bin/nvcc",
            super::standin::nvcc_script(&format!(
                "Cuda compilation tools, release 13.5, V13.5.37 (runtime {runtime})\n"
            ))
            .as_bytes(),
            true,
        )],
    );
    let lib = format!("libcudart {runtime}\n");
    let mut files: Vec<(&str, &[u8], bool)> = vec![
        (
            "nvidia/cu13/include/cuda_runtime.h",
            b"#pragma once\n",
            false,
        ),
        // The driver API's header, which the driver stub is made from.
        ("nvidia/cu13/include/cuda.h", CUDA_H.as_bytes(), false),
    ];
    if cudart {
        files.push(("nvidia/cu13/lib/libcudart.so.13", lib.as_bytes(), false));
    }
    write_wheel(
        &dir.join(format!("nvidia_cuda_runtime-{runtime}-{tag}")),
        &format!("Metadata-Version: 2.4\nName: nvidia-cuda-runtime\nVersion: {runtime}\n"),
        &files,
    );
    self::files(&[dir])
}
