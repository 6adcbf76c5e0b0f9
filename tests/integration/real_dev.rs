//! Issue #19 against NVIDIA's real wheels: the toolkit the wheels method assembles is one a
//! developer can build with. The real CUDA 13.5 component wheels plus `nvidia-cublas`
//! 13.10.0.20 and `nvidia-cuda-nvrtc` 13.5.37 (what the `cuda-toolkit` 13.5.0
//! metapackage's `cublas` extra pins) and `nvidia-cudnn-cu13` 9.28.1.4, fetched with pip once (cached under `target/tmp/wheels-dev/{linux,win}`),
//! served on loopback as the index; then
//!
//! - Linux: the real `nvcc` and the system `g++` compile and link a program against the
//!   shared cudart, cuBLAS, cuDNN and the driver (`-lcuda`, through the stub) with no `-L`
//!   of the developer's own — the program is not run (no GPU here), its `NEEDED` entries
//!   are read instead;
//! - Linux: CMake's `find_package(CUDAToolkit)` finds the tree, says 13.5, and a target
//!   linked to `CUDA::cublas` and `CUDA::cuda_driver` builds;
//! - Linux: pkg-config's `cudart-13.5`, `cublas-13.5`, `cuda-13.5` give `g++` alone the
//!   flags to link them;
//! - Linux: `smoke`'s `build` check passes with `g++`;
//! - Windows (assembled here with `--os windows`): `cublas.lib`, `cublasLt.lib` and
//!   `cudnn.lib` are import libraries made from the DLLs' export tables, naming every
//!   export; NVIDIA's own `cudart.lib` is left as the wheel ships it.
//!
//! All are ignored (`real_nvidia_wheels_dev_*`): they need PyPI, g++, readelf, cmake
//! and pkg-config, and `scripts/real-artifacts.sh` runs them. They share one installed tree per
//! platform (an install moves about 1 GB of wheels).

#![cfg(all(unix, target_arch = "x86_64"))]

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

use cuda_setup_core::devlayout::implib;
use serde_json::Value;
use support::wheels::{PINS, Platform, files, serve};

/// The wheels besides the toolkit's (`support::wheels::PINS`): cuBLAS as the 13.5.0
/// metapackage pins it, and cuDNN for CUDA 13.
const CUBLAS_PIN: &str = "nvidia-cublas==13.10.0.20";
/// The metapackage's `cublas` extra pins NVRTC too (cuBLAS's wheel requires it).
const NVRTC_PIN: &str = "nvidia-cuda-nvrtc==13.5.37";
const CUDNN_PIN: &str = "nvidia-cudnn-cu13==9.28.1.4";
/// The toolkit's components, cuBLAS included (cuDNN comes with `--cudnn-archive`).
const COMPONENTS: &str = "nvcc,cudart,cublas,cccl";

fn cli(args: &[&str]) -> Output {
    support::cli::run(args)
}

use support::cli::text;

/// The start of the file name pip saves `pin` under: `nvidia-cublas==13.10.0.20` →
/// `nvidia_cublas-13.10.0.20-`.
fn wheel_prefix(pin: &str) -> String {
    let (name, version) = pin.split_once("==").unwrap();
    format!("{}-{version}-", name.replace('-', "_"))
}

/// The wheel for `pin` in `dir`, if there.
fn wheel_for(dir: &Path, pin: &str) -> Option<PathBuf> {
    let prefix = wheel_prefix(pin);
    std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
        let n = e.file_name().to_string_lossy().into_owned();
        (n.starts_with(&prefix) && n.ends_with(".whl")).then(|| e.path())
    })
}

static FETCH: Mutex<()> = Mutex::new(());

/// NVIDIA's real wheels for `p`, fetched with pip the first time: the folder holding them
/// (the index is served from it) and the cuDNN wheel.
fn fetch(p: Platform) -> (PathBuf, PathBuf) {
    let _guard = FETCH.lock().unwrap_or_else(|e| e.into_inner());
    let (name, tags): (&str, &[&str]) = match p {
        // cuBLAS is tagged manylinux1 / manylinux_2_5, cuDNN manylinux_2_27.
        Platform::Linux => (
            "linux",
            &[
                "manylinux_2_27_x86_64",
                "manylinux_2_17_x86_64",
                "manylinux2014_x86_64",
                "manylinux_2_12_x86_64",
                "manylinux2010_x86_64",
                "manylinux_2_5_x86_64",
                "manylinux1_x86_64",
            ],
        ),
        Platform::Windows => ("win", &["win_amd64"]),
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("wheels-dev")
        .join(name);
    let pins: Vec<&str> = PINS
        .iter()
        .copied()
        .chain([CUBLAS_PIN, NVRTC_PIN, CUDNN_PIN])
        .collect();
    let missing: Vec<&str> = pins
        .iter()
        .copied()
        .filter(|pin| wheel_for(&dir, pin).is_none())
        .collect();
    if !missing.is_empty() {
        let start = std::time::Instant::now();
        support::wheels::pip_download(&dir, tags, &missing);
        eprintln!(
            "fetched {missing:?} for {name} in {:.0} s",
            start.elapsed().as_secs_f64()
        );
    }
    for pin in &pins {
        assert!(
            wheel_for(&dir, pin).is_some(),
            "no wheel for {pin} in {} after pip download",
            dir.display()
        );
    }
    let cudnn = wheel_for(&dir, CUDNN_PIN).unwrap();
    (dir, cudnn)
}

/// A tree `install --method wheels` built from the real wheels, shared by the tests of
/// one platform.
struct Tree {
    /// The toolkit folder.
    dir: PathBuf,
}

/// Fetches, serves and installs 13.5 with cuBLAS and cuDNN for `p` into a fresh root
/// under target/tmp; the tree, or why there is none (each test that needs it says so).
fn build_tree(p: Platform) -> Result<Tree, String> {
    let run = || {
        let (wheels, cudnn) = fetch(p);
        let os = match p {
            Platform::Linux => "linux",
            Platform::Windows => "windows",
        };
        let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join("real-dev")
            .join(os);
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        // The cuDNN wheel as a file the user has (`--cudnn-archive`): 9.28.1.4 is newer
        // than the tables' recommended cuDNN, which the index would be asked for.
        let archive = root.join(cudnn.file_name().unwrap());
        if std::fs::hard_link(&cudnn, &archive).is_err() {
            std::fs::copy(&cudnn, &archive).unwrap();
        }
        let toolkit: Vec<_> = files(&[&wheels])
            .into_iter()
            .filter(|f| !f.filename.starts_with("nvidia_cudnn"))
            .collect();
        let server = serve(&toolkit);
        let index = server.url("/simple");
        let r = root.join("root");
        let out = cli(&[
            "install",
            "--unattended",
            "--goal",
            "developer",
            "--cuda",
            "13.5",
            "--method",
            "wheels",
            "--pypi-mirror",
            &index,
            "--components",
            COMPONENTS,
            "--cudnn-archive",
            archive.to_str().unwrap(),
            "--driver",
            "600.00",
            "--gpu-cc",
            "8.6",
            "--os",
            os,
            "--root",
            r.to_str().unwrap(),
            "--connections",
            "2",
        ]);
        let dir = match p {
            Platform::Linux => r.join("usr/local/cuda-13.5"),
            Platform::Windows => r.join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v13.5"),
        };
        if out.status.code() != Some(0) {
            return Err(format!(
                "install --method wheels --os {os} from NVIDIA's real wheels (components \
                 {COMPONENTS}, cuDNN from {}) exited {:?}:\n{}",
                archive.display(),
                out.status.code(),
                text(&out)
            ));
        }
        // The wheels are not needed any more: keep the disk for the next platform.
        let _ = std::fs::remove_dir_all(r.join(".cuda-setup/downloads"));
        Ok(Tree { dir })
    };
    // A panic while fetching (no PyPI) becomes the reason every test of `p` gives.
    std::panic::catch_unwind(run).unwrap_or_else(|e| {
        Err(e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panicked while building the tree".into()))
    })
}

fn tree(p: Platform) -> &'static Tree {
    static LINUX: OnceLock<Result<Tree, String>> = OnceLock::new();
    static WINDOWS: OnceLock<Result<Tree, String>> = OnceLock::new();
    let cell = match p {
        Platform::Linux => &LINUX,
        Platform::Windows => &WINDOWS,
    };
    match cell.get_or_init(|| build_tree(p)) {
        Ok(t) => t,
        Err(why) => panic!("no {p:?} tree to check: {why}"),
    }
}

/// `tool`'s path on PATH, or a failure naming what to install.
fn need(tool: &str, package: &str) -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(tool))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| {
            panic!("{tool} is not on PATH: install {package} (apt-get install {package})")
        })
}

/// The `DT_NEEDED` entries of the ELF file `f` (readelf -d).
fn needed(f: &Path) -> Vec<String> {
    need("readelf", "binutils");
    let o = Command::new("readelf").arg("-d").arg(f).output().unwrap();
    assert!(
        o.status.success(),
        "readelf -d {}: {}",
        f.display(),
        text(&o)
    );
    dynamic(&o, "(NEEDED)")
}

/// The `[...]` values of `readelf -d`'s lines of `kind` (`(NEEDED)`, `(SONAME)`).
fn dynamic(o: &Output, kind: &str) -> Vec<String> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.contains(kind))
        .filter_map(|l| {
            let (_, v) = l.split_once('[')?;
            Some(v.trim_end_matches(']').to_string())
        })
        .collect()
}

/// The link names a Linux developer's `-l` needs, relative to the toolkit folder, that
/// are not there (the runfile's layout: unversioned links in lib64, the driver stub in
/// lib64/stubs).
fn missing_linux_link_names(dir: &Path) -> Vec<&'static str> {
    [
        "lib64/libcudart.so",
        "lib64/libcublas.so",
        "lib64/libcublasLt.so",
        "lib64/libcudnn.so",
        "lib64/stubs/libcuda.so",
    ]
    .into_iter()
    .filter(|f| !dir.join(f).exists())
    .collect()
}

const PROGRAM: &str = r#"#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cudnn.h>

int main() {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  CUresult d = cuDriverGetVersion(&driver);
  cublasHandle_t h;
  cublasStatus_t b = cublasCreate(&h);
  size_t dnn = cudnnGetVersion();
  printf("runtime %d driver %d (%d) cublas %d cudnn %zu\n", runtime, driver, (int)d, (int)b, dnn);
  return 0;
}
"#;

/// A host-only program (g++, no nvcc) calling the runtime, cuBLAS and the driver.
const HOST_PROGRAM: &str = r#"#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
int main() {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cuDriverGetVersion(&driver);
  cublasHandle_t h;
  printf("%d %d %d\n", runtime, driver, (int)cublasCreate(&h));
  return 0;
}
"#;

/// a. The real nvcc and g++ link a program against the shared cudart, cuBLAS, cuDNN and
/// the driver stub, with the tree's own nvcc.profile giving the library folders.
#[test]
#[ignore = "needs PyPI: NVIDIA's real wheels; scripts/real-artifacts.sh runs it"]
fn real_nvidia_wheels_dev_linux_nvcc_links_cudart_cublas_cudnn_and_cuda() {
    need("g++", "g++");
    let t = tree(Platform::Linux);
    let dir = &t.dir;
    let missing = missing_linux_link_names(dir);
    assert!(
        missing.is_empty(),
        "link names missing in {}: {missing:?} (the development layout adds them)",
        dir.display()
    );
    // The stub is for linking only: under a name the loader would pick before the
    // driver's own libcuda.so.1, it would shadow the driver.
    assert!(
        !dir.join("lib64/libcuda.so.1").exists(),
        "lib64/libcuda.so.1 exists: the loader would take it for the driver"
    );
    let stub = Command::new("readelf")
        .arg("-d")
        .arg(dir.join("lib64/stubs/libcuda.so"))
        .output()
        .unwrap();
    assert_eq!(
        dynamic(&stub, "(SONAME)"),
        ["libcuda.so.1"],
        "lib64/stubs/libcuda.so's SONAME: a program linked with it must ask for the \
         driver's libcuda.so.1\n{}",
        text(&stub)
    );

    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("t.cu"), PROGRAM).unwrap();
    let args = [
        "-cudart", "shared", "t.cu", "-lcudart", "-lcublas", "-lcudnn", "-lcuda", "-o", "t",
    ];
    let c = Command::new(dir.join("bin/nvcc"))
        .args(args)
        .current_dir(work.path())
        .output()
        .unwrap();
    assert!(
        c.status.success(),
        "`nvcc {}` with {}'s nvcc and the system g++ failed (exit {:?}):\n{}",
        args.join(" "),
        dir.display(),
        c.status.code(),
        text(&c)
    );
    // No GPU here: the program is not run; what it would load is read instead.
    let n = needed(&work.path().join("t"));
    for lib in [
        "libcudart.so.13",
        "libcublas.so.13",
        "libcudnn.so.9",
        "libcuda.so.1",
    ] {
        assert!(
            n.iter().any(|x| x == lib),
            "the program does not ask for {lib}: its NEEDED entries are {n:?}"
        );
    }
}

/// b. CMake's FindCUDAToolkit finds the tree (13.5, its cuBLAS, the driver stub), and a
/// target linked to CUDA::cublas and CUDA::cuda_driver builds; a CUDA-language project
/// with the tree's nvcc as CMAKE_CUDA_COMPILER builds a kernel too.
#[test]
#[ignore = "needs PyPI: NVIDIA's real wheels; scripts/real-artifacts.sh runs it"]
fn real_nvidia_wheels_dev_linux_cmake_finds_the_toolkit_and_links_cublas_and_cuda() {
    let cmake = need("cmake", "cmake");
    need("g++", "g++");
    let t = tree(Platform::Linux);
    let dir = &t.dir;
    let work = tempfile::tempdir().unwrap();
    let src = work.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("CMakeLists.txt"),
        r#"cmake_minimum_required(VERSION 3.18)
project(devcheck LANGUAGES CXX CUDA)
find_package(CUDAToolkit REQUIRED)
message(STATUS "CUDAToolkit_VERSION=${CUDAToolkit_VERSION}")
message(STATUS "CUDAToolkit_BIN_DIR=${CUDAToolkit_BIN_DIR}")
message(STATUS "CUDA_cublas_LIBRARY=${CUDA_cublas_LIBRARY}")
message(STATUS "CUDA_cuda_driver_LIBRARY=${CUDA_cuda_driver_LIBRARY}")
add_executable(host main.cpp)
target_link_libraries(host PRIVATE CUDA::cudart CUDA::cublas CUDA::cuda_driver)
add_executable(kernel kernel.cu)
target_link_libraries(kernel PRIVATE CUDA::cublas)
"#,
    )
    .unwrap();
    std::fs::write(src.join("main.cpp"), HOST_PROGRAM).unwrap();
    std::fs::write(
        src.join("kernel.cu"),
        r#"#include <cstdio>
#include <cublas_v2.h>
__global__ void add(float *a) { a[threadIdx.x] += 1.0f; }
int main() {
  float *d = nullptr;
  if (cudaMalloc(&d, 64 * sizeof(float)) != cudaSuccess) return 2;
  add<<<1, 64>>>(d);
  cublasHandle_t h;
  return (int)cublasCreate(&h);
}
"#,
    )
    .unwrap();
    let build = work.path().join("build");
    let nvcc = dir.join("bin/nvcc");
    let configure = Command::new(&cmake)
        .arg("-S")
        .arg(&src)
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCUDAToolkit_ROOT={}", dir.display()))
        .arg(format!("-DCMAKE_CUDA_COMPILER={}", nvcc.display()))
        // No GPU to detect the architecture from.
        .arg("-DCMAKE_CUDA_ARCHITECTURES=75")
        .arg("-DCMAKE_CXX_COMPILER=g++")
        .env("CUDACXX", &nvcc)
        .output()
        .unwrap();
    let out = text(&configure);
    assert!(
        configure.status.success(),
        "cmake could not configure a project with find_package(CUDAToolkit) and \
         -DCUDAToolkit_ROOT={} (link names missing: {:?}):\n{out}",
        dir.display(),
        missing_linux_link_names(dir)
    );
    let value = |key: &str| -> String {
        out.lines()
            .find_map(|l| {
                l.split_once(&format!("{key}="))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_default()
    };
    let version = value("CUDAToolkit_VERSION");
    assert!(
        version.starts_with("13.5."),
        "FindCUDAToolkit says CUDAToolkit_VERSION={version:?}, not 13.5.x:\n{out}"
    );
    // cmake names the files through `lib` (a link to lib64) or lib64: compare where
    // they lead.
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    for (key, rel) in [
        ("CUDAToolkit_BIN_DIR", "bin"),
        ("CUDA_cublas_LIBRARY", "lib64/libcublas.so"),
        ("CUDA_cuda_driver_LIBRARY", "lib64/stubs/libcuda.so"),
    ] {
        let v = value(key);
        assert!(
            canon(Path::new(&v)).is_some() && canon(Path::new(&v)) == canon(&dir.join(rel)),
            "FindCUDAToolkit's {key}={v:?} is not the tree's {rel} ({}):\n{out}",
            dir.display()
        );
    }
    let b = Command::new(&cmake)
        .arg("--build")
        .arg(&build)
        .output()
        .unwrap();
    assert!(
        b.status.success(),
        "cmake --build failed (a target linked to CUDA::cublas and CUDA::cuda_driver, \
         and a .cu kernel):\n{}",
        text(&b)
    );
    let n = needed(&build.join("host"));
    for lib in ["libcudart.so.13", "libcublas.so.13", "libcuda.so.1"] {
        assert!(
            n.iter().any(|x| x == lib),
            "the CMake-built program does not ask for {lib}: NEEDED {n:?}"
        );
    }
    let n = needed(&build.join("kernel"));
    assert!(
        n.iter().any(|x| x == "libcublas.so.13"),
        "the CMake-built kernel program does not ask for libcublas.so.13: NEEDED {n:?}"
    );
}

/// b'. pkg-config's files (`pkgconfig/*-13.5.pc`, as NVIDIA's runfile names them) give g++
/// alone, without nvcc, what it needs to link the runtime, cuBLAS and the driver stub.
#[test]
#[ignore = "needs PyPI: NVIDIA's real wheels; scripts/real-artifacts.sh runs it"]
fn real_nvidia_wheels_dev_linux_pkg_config_gives_gxx_the_flags_to_link() {
    need("pkg-config", "pkg-config");
    need("g++", "g++");
    let t = tree(Platform::Linux);
    let pc = t.dir.join("pkgconfig");
    let modules = ["cudart-13.5", "cublas-13.5", "cuda-13.5"];
    let flags = Command::new("pkg-config")
        .args(["--cflags", "--libs"])
        .args(modules)
        .env("PKG_CONFIG_PATH", &pc)
        .output()
        .unwrap();
    assert!(
        flags.status.success(),
        "pkg-config {modules:?} with PKG_CONFIG_PATH={} failed:\n{}",
        pc.display(),
        text(&flags)
    );
    let flags = String::from_utf8_lossy(&flags.stdout).into_owned();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("main.cpp"), HOST_PROGRAM).unwrap();
    let c = Command::new("g++")
        .arg("main.cpp")
        .args(flags.split_whitespace())
        .args(["-o", "p"])
        .current_dir(work.path())
        .output()
        .unwrap();
    assert!(
        c.status.success(),
        "g++ main.cpp {} failed (the flags pkg-config gives for {modules:?}):\n{}",
        flags.trim(),
        text(&c)
    );
    let n = needed(&work.path().join("p"));
    for lib in ["libcudart.so.13", "libcublas.so.13", "libcuda.so.1"] {
        assert!(
            n.iter().any(|x| x == lib),
            "the program g++ linked with pkg-config's flags does not ask for {lib}: NEEDED {n:?}"
        );
    }
}

/// c. smoke's build check passes on the tree with g++ (the rest of smoke needs a GPU).
#[test]
#[ignore = "needs PyPI: NVIDIA's real wheels; scripts/real-artifacts.sh runs it"]
fn real_nvidia_wheels_dev_linux_smoke_build_check_passes_with_gxx() {
    need("g++", "g++");
    let t = tree(Platform::Linux);
    let s = cli(&["smoke", "--json", "--cuda-dir", t.dir.to_str().unwrap()]);
    let j: Value = serde_json::from_slice(&s.stdout)
        .unwrap_or_else(|e| panic!("smoke --json printed no JSON ({e}):\n{}", text(&s)));
    let b = &j["checks"]["build"];
    assert!(
        b.is_object(),
        "smoke --json has no checks.build (the #19 build check): {}",
        text(&s)
    );
    assert_eq!(
        b["status"],
        "passed",
        "smoke's checks.build did not pass on the tree built from NVIDIA's wheels \
         (link names missing: {:?}): {b:#}",
        missing_linux_link_names(&t.dir)
    );
    assert_eq!(b["linked"], true, "checks.build: {b:#}");
    let cc = b["host_compiler"]["path"].as_str().unwrap_or_default();
    assert!(
        Path::new(cc).file_name().is_some_and(|n| n == "g++"),
        "checks.build's host compiler is {cc:?}, not g++: {b:#}"
    );
    let libs: Vec<&str> = b["libraries"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for l in ["cudart", "cublas", "cudnn", "cuda"] {
        assert!(
            libs.contains(&l),
            "checks.build did not link -l{l} (cuDNN is installed): {b:#}"
        );
    }
}

/// The import library at `lib` (relative to `dir`) names `dll` and exactly the names the
/// DLL at `dll_rel` exports; returns them.
fn import_lib_matches(dir: &Path, lib: &str, dll_rel: &str) -> Vec<String> {
    let lib_path = dir.join(lib);
    assert!(
        lib_path.is_file(),
        "{lib} missing in {} (the development layout makes it from {dll_rel})",
        dir.display()
    );
    let (from, names) = implib::read_import_lib(&lib_path)
        .unwrap_or_else(|e| panic!("{lib} cannot be read back as an import library: {e}"));
    let dll_name = Path::new(dll_rel).file_name().unwrap().to_str().unwrap();
    assert!(
        from.eq_ignore_ascii_case(dll_name),
        "{lib} imports from {from:?}, not {dll_name}"
    );
    let exports = implib::dll_exports(&dir.join(dll_rel))
        .unwrap_or_else(|e| panic!("the export table of {dll_rel} cannot be read: {e}"));
    assert_eq!(
        names.len(),
        exports.len(),
        "{lib} lists {} names, {dll_rel} exports {}",
        names.len(),
        exports.len()
    );
    let absent: Vec<&String> = exports
        .iter()
        .filter(|e| !names.contains(e))
        .take(10)
        .collect();
    assert!(
        absent.is_empty(),
        "{lib} leaves out exports of {dll_rel}, among them {absent:?}"
    );
    names
}

/// d. The Windows tree from the real win_amd64 wheels: cuBLAS and cuDNN import libraries
/// made from their DLLs, every export listed.
#[test]
#[ignore = "needs PyPI: NVIDIA's real wheels; scripts/real-artifacts.sh runs it"]
fn real_nvidia_wheels_dev_windows_import_libs_for_cublas_and_cudnn() {
    let t = tree(Platform::Windows);
    let dir = &t.dir;
    let cublas = import_lib_matches(dir, "lib/x64/cublas.lib", "bin/x64/cublas64_13.dll");
    for f in ["cublasCreate_v2", "cublasSgemm_v2", "cublasDestroy_v2"] {
        assert!(
            cublas.iter().any(|n| n == f),
            "lib/x64/cublas.lib does not list {f} ({} names)",
            cublas.len()
        );
    }
    let lt = import_lib_matches(dir, "lib/x64/cublasLt.lib", "bin/x64/cublasLt64_13.dll");
    assert!(
        lt.iter().any(|n| n == "cublasLtCreate"),
        "lib/x64/cublasLt.lib does not list cublasLtCreate"
    );
    let cudnn = import_lib_matches(dir, "lib/x64/cudnn.lib", "bin/x64/cudnn64_9.dll");
    for f in ["cudnnGetVersion", "cudnnCreate"] {
        assert!(
            cudnn.iter().any(|n| n == f),
            "lib/x64/cudnn.lib does not list {f} ({} names)",
            cudnn.len()
        );
    }
}

/// d'. The import libraries NVIDIA's runtime wheel ships (`cudart.lib`, `cuda.lib`: COFF
/// objects as lib.exe writes them) are kept as they are, never replaced by made ones.
#[test]
#[ignore = "needs PyPI: NVIDIA's real wheels; scripts/real-artifacts.sh runs it"]
fn real_nvidia_wheels_dev_windows_keeps_nvidias_own_cudart_and_cuda_libs() {
    let t = tree(Platform::Windows);
    let (wheels, _) = fetch(Platform::Windows);
    let runtime = wheel_for(&wheels, "nvidia-cuda-runtime==13.5.37").unwrap();
    let mut z = zip::ZipArchive::new(std::fs::File::open(&runtime).unwrap()).unwrap();
    for lib in [
        "cudart.lib",
        "cuda.lib",
        "cudart_static.lib",
        "cudadevrt.lib",
    ] {
        let mut shipped = Vec::new();
        std::io::Read::read_to_end(
            &mut z.by_name(&format!("nvidia/cu13/lib/x64/{lib}")).unwrap(),
            &mut shipped,
        )
        .unwrap();
        let p = t.dir.join("lib/x64").join(lib);
        let ours = std::fs::read(&p).unwrap_or_else(|e| panic!("lib/x64/{lib}: {e}"));
        assert!(
            ours == shipped,
            "lib/x64/{lib} is not the one NVIDIA's runtime wheel ships ({} bytes, the \
             wheel's {}): the development layout must not replace it",
            ours.len(),
            shipped.len()
        );
    }
}
