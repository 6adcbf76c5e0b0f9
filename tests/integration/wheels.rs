//! `install --method wheels` end to end with stand-ins for NVIDIA's wheels (their names,
//! layouts and dist-info, built here) served on loopback as a PyPI index: the assembled
//! 13.5 tree has the installer's layout, its nvcc reports 13.5, `detect` finds the
//! toolkit, `smoke` explains there is no driver; a wrong hash, a wheel missing for the
//! platform and a mirror that is down each stop with a clear error and leave no tree.
//!
//! The same checks with NVIDIA's real wheels (fetched once with pip, cached under
//! target/), where the real nvcc also compiles a kernel with gcc as host compiler, are the
//! ignored `real_nvidia_wheels_*` tests: they need PyPI, and `scripts/real-artifacts.sh`
//! runs them.

#![cfg(all(unix, target_arch = "x86_64"))]

use crate::support;

use std::path::Path;
use std::process::{Command, Output};

use cuda_setup_core::compat::Os;
use cuda_setup_core::download::Options;
use cuda_setup_core::wheels::{self, WheelError};
use serde_json::Value;
use support::wheels::{
    COMPONENTS, IndexFile, NVCC_VERSION, Platform, TOOLKIT, cached, files, serve, toolkit_standins,
};

fn cli(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.args(args).env("LANG", "C");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `install --method wheels` for CUDA 13.5 (driver and GPU given: none exist here).
fn install_args<'a>(index: &'a str, root: &'a str, os: &'a str) -> Vec<&'a str> {
    let mut a = install_args_with_cudnn(index, root, os);
    a.push("--no-cudnn");
    a
}

/// `install --method wheels` for Linux from `index` into a new temp root.
fn install_linux(index: &str) -> (tempfile::TempDir, Output) {
    let root = tempfile::tempdir().unwrap();
    let out = cli(
        &install_args(index, root.path().to_str().unwrap(), "linux"),
        &[],
    );
    (root, out)
}

/// The same, cuDNN included (the recommended 9.27.0.42, as `nvidia-cudnn-cu13`).
fn install_args_with_cudnn<'a>(index: &'a str, root: &'a str, os: &'a str) -> Vec<&'a str> {
    vec![
        "install",
        "--unattended",
        "--goal",
        "developer",
        "--cuda",
        "13.5",
        "--method",
        "wheels",
        "--pypi-mirror",
        index,
        "--components",
        COMPONENTS,
        "--driver",
        "600.00",
        "--gpu-cc",
        "8.6",
        "--os",
        os,
        "--root",
        root,
        "--connections",
        "2",
    ]
}

/// Where the toolkit's wheels come from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Wheels {
    /// Built here (`support::wheels::toolkit_standins`).
    StandIn,
    /// NVIDIA's, from PyPI (`support::wheels::cached`).
    Real,
}

/// The toolkit's wheels for `p` (stand-ins are written under `tmp`).
fn toolkit_files(p: Platform, w: Wheels, tmp: &Path) -> Vec<IndexFile> {
    let dir = match w {
        Wheels::StandIn => toolkit_standins(&tmp.join("toolkit"), p),
        Wheels::Real => cached(p),
    };
    files(&[&dir])
}

fn linux_files(tmp: &Path) -> Vec<IndexFile> {
    toolkit_files(Platform::Linux, Wheels::StandIn, tmp)
}

/// The toolkit's wheels plus a real-layout cuDNN wheel (the real one is 500 MB).
fn with_cudnn_wheel(p: Platform, w: Wheels, tmp: &Path) -> Vec<IndexFile> {
    let cudnn = tmp.join("cudnn");
    std::fs::create_dir_all(&cudnn).unwrap();
    support::cudnn_zip::write_cudnn_wheel(&cudnn, "9.27.0.42", 13, p == Platform::Windows);
    let mut all = toolkit_files(p, w, tmp);
    all.extend(files(&[&cudnn]));
    all
}

#[test]
fn linux_toolkit_from_a_json_index_is_assembled_and_found() {
    linux_toolkit_is_assembled_and_found(Wheels::StandIn);
}

#[test]
#[ignore = "needs PyPI: NVIDIA's real wheels; scripts/real-artifacts.sh runs it"]
fn real_nvidia_wheels_linux_toolkit_compiles_a_kernel_and_is_found() {
    linux_toolkit_is_assembled_and_found(Wheels::Real);
}

/// Installs 13.5 from `w` into a new root and checks the tree, its nvcc (the real one
/// also compiles and runs a kernel), detect, smoke, cuDNN from its wheel, and a second
/// run that fetches nothing new.
fn linux_toolkit_is_assembled_and_found(w: Wheels) {
    let wheels = tempfile::tempdir().unwrap();
    let server = serve(&with_cudnn_wheel(Platform::Linux, w, wheels.path()));
    let root = tempfile::tempdir().unwrap();
    let r = root.path().to_str().unwrap();
    let index = server.url("/simple");
    let out = cli(&install_args(&index, r, "linux"), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let dir = root.path().join("usr/local/cuda-13.5");

    // The layout NVIDIA's runfile makes.
    for f in [
        "bin/nvcc",
        "bin/ptxas",
        "nvvm/bin/cicc",
        "nvvm/libdevice/libdevice.10.bc",
        "include/cuda_runtime.h",
        "include/crt/host_config.h",
        "include/cccl/cuda/std/version",
        "lib64/libcudart.so.13",
        "lib64/libcudart_static.a",
        "version.json",
    ] {
        assert!(dir.join(f).exists(), "{f} missing");
    }
    assert!(std::fs::read_link(dir.join("lib")).is_ok(), "lib -> lib64");
    let vj: Value =
        serde_json::from_slice(&std::fs::read(dir.join("version.json")).unwrap()).unwrap();
    assert_eq!(vj["cuda"]["version"], TOOLKIT);
    assert_eq!(vj["cuda_nvcc"]["version"], "13.5.37");
    linux_dev_layout(&dir);

    // Its nvcc runs from the tree (the stand-in prints what the real one does).
    let v = Command::new(dir.join("bin/nvcc"))
        .arg("--version")
        .output()
        .unwrap();
    let vt = String::from_utf8_lossy(&v.stdout);
    assert!(vt.contains("release 13.5, V13.5.37"), "{vt}");
    if w == Wheels::StandIn {
        assert_eq!(vt, NVCC_VERSION);
    } else {
        compile_a_kernel(&dir);
    }
    detected_and_smoked(&dir, w);
    // cuDNN here is a stand-in wheel (its headers declare nothing), which the install's
    // build check cannot compile against with the real nvcc; NVIDIA's real cuDNN wheel
    // with the real toolkit is `real_dev::real_nvidia_wheels_dev_*`'s.
    if w == Wheels::StandIn {
        with_cudnn_then_again(&server, &index, r, &dir);
    }
}

/// What NVIDIA's runfile has for building programs and the wheels lack, laid down by
/// the assembly: link names to the versioned libraries, the driver stub (an ELF shared
/// library named `libcuda.so.1` exporting the driver API from the tree's own cuda.h),
/// pkg-config files, CCCL's CMake files where `find_package` looks, and an nvcc.profile
/// whose library folders hold them.
fn linux_dev_layout(dir: &Path) {
    for (link, target) in [
        ("lib64/libcudart.so", "libcudart.so.13"),
        ("lib64/libnvvm.so", "libnvvm.so.4"),
    ] {
        assert_eq!(
            std::fs::read_link(dir.join(link)).unwrap_or_else(|e| panic!("{link}: {e}")),
            Path::new(target),
            "{link}"
        );
        assert!(dir.join(link).is_file(), "{link} leads to the library");
    }
    assert!(!dir.join("lib64/libcudart_static.so").exists());
    let stub = dir.join("lib64/stubs/libcuda.so");
    let (soname, names) = cuda_setup_core::devlayout::stub::read_exports(&stub).unwrap();
    assert_eq!(soname.as_deref(), Some("libcuda.so.1"));
    for f in [
        "cuInit",
        "cuDriverGetVersion",
        "cuMemAlloc_v2",
        "cuLaunchKernel",
    ] {
        assert!(names.iter().any(|n| n == f), "the stub lacks {f}");
    }
    assert!(
        !dir.join("lib64/stubs/libnvidia-ml.so").exists(),
        "no wheel carries it, none is made"
    );
    let pc = std::fs::read_to_string(dir.join("pkgconfig/cudart-13.5.pc")).unwrap();
    assert!(pc.contains("Name: cudart\n") && pc.contains("Libs: -L${libdir} -lcudart\n"));
    assert!(pc.contains("libdir=${cudaroot}/lib64\n"), "{pc}");
    let pc = std::fs::read_to_string(dir.join("pkgconfig/cuda-13.5.pc")).unwrap();
    assert!(pc.contains("libdir=${cudaroot}/lib64/stubs\n"), "{pc}");
    assert!(
        dir.join("lib64/cmake/cccl/cccl-config.cmake").is_file(),
        "find_package(CCCL) looks in <prefix>/lib64/cmake/cccl"
    );
    // The wheels' profile names $(TOP)/lib and $(TOP)/lib/stubs: through lib -> lib64
    // they hold cudart's link name and the stub.
    let profile = std::fs::read_to_string(dir.join("bin/nvcc.profile")).unwrap();
    assert!(
        profile.contains("\"-L$(TOP)/lib/stubs\" \"-L$(TOP)/lib\""),
        "{profile}"
    );
    assert!(dir.join("lib/stubs/libcuda.so").is_file());
    assert!(dir.join("lib/libcudart.so").is_file());
    let rec: Value = serde_json::from_slice(
        &std::fs::read(dir.join(".cuda-setup/toolkit-wheels.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(rec["dev_layout"], 1);
}

/// The real nvcc compiles a kernel, gcc as the host compiler, linked against the wheels'
/// cudart; the program runs.
fn compile_a_kernel(dir: &Path) {
    let work = tempfile::tempdir().unwrap();
    let cu = work.path().join("add.cu");
    std::fs::write(
        &cu,
        r#"#include <cstdio>
#include <cuda_runtime.h>
__global__ void add(float *a) { a[threadIdx.x] += 1.0f; }
int main() {
  float *d;
  cudaError_t e = cudaMalloc(&d, 64 * sizeof(float));
  if (e != cudaSuccess) { printf("cuda: %s\n", cudaGetErrorString(e)); return 2; }
  add<<<1, 64>>>(d);
  printf("ran: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
"#,
    )
    .unwrap();
    let exe = work.path().join("add");
    let c = Command::new(dir.join("bin/nvcc"))
        .args(["-ccbin", "gcc", "-o"])
        .arg(&exe)
        .arg(&cu)
        .output()
        .unwrap();
    assert!(c.status.success(), "nvcc failed:\n{}", text(&c));
    let run = Command::new(&exe).output().unwrap();
    let rt = text(&run);
    // No GPU here: the program runs and the CUDA runtime says why it cannot go on.
    assert!(rt.contains("cuda: ") || rt.contains("ran: "), "{rt}");
}

/// detect finds the tree and smoke says there is no driver (the stand-in nvcc compiles
/// nothing: smoke's nvcc check is for the real one).
fn detected_and_smoked(dir: &Path, w: Wheels) {
    // detect finds it through CUDA_PATH and PATH, versioned from version.json.
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    let d = cli(
        &["detect", "--json"],
        &[("CUDA_PATH", dir.to_str().unwrap()), ("PATH", &path)],
    );
    let j: Value = serde_json::from_slice(&d.stdout).unwrap_or_else(|_| panic!("{}", text(&d)));
    let found = j["toolkits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["path"].as_str().is_some_and(|p| p.ends_with("cuda-13.5")))
        .unwrap_or_else(|| panic!("toolkit not detected: {}", j["toolkits"]));
    assert_eq!(found["version"], TOOLKIT);
    assert_eq!(found["version_source"], "version_json");
    assert_eq!(found["active"], true, "{found}");

    // smoke: no driver on this machine, and it says so (exit 4).
    if !Path::new("/proc/driver/nvidia/version").exists() {
        let mut args = vec!["smoke", "--json", "--cuda-dir", dir.to_str().unwrap()];
        if w == Wheels::StandIn {
            args.push("--no-nvcc");
        }
        let s = cli(&args, &[]);
        assert_eq!(s.status.code(), Some(4), "{}", text(&s));
        let sj: Value = serde_json::from_slice(&s.stdout).unwrap();
        assert_eq!(sj["reason"]["key"], "smoke_no_driver");
    }
}

/// Again with cuDNN (the toolkit is not rebuilt), then a third run that changes nothing.
fn with_cudnn_then_again(server: &support::server::Server, index: &str, r: &str, dir: &Path) {
    // Again with cuDNN: the toolkit is not rebuilt, cuDNN comes from its wheel through
    // the cuDNN transaction (Linux has no redist zip to use).
    let with = cli(&install_args_with_cudnn(index, r, "linux"), &[]);
    assert_eq!(with.status.code(), Some(0), "{}", text(&with));
    assert!(
        text(&with).contains("CUDA 13.5.0 already built from these wheels"),
        "{}",
        text(&with)
    );
    for f in [
        "lib64/libcudnn.so.9",
        "lib64/libcudnn_ops.so.9",
        "include/cudnn_version.h",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let m: Value = serde_json::from_slice(
        &std::fs::read(dir.join(".cuda-setup/cudnn-manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(m["cudnn_version"], "9.27.0");
    assert_eq!(m["cuda_major"], 13);
    let v = cli(
        &["cudnn", "verify", "--cuda-dir", dir.to_str().unwrap()],
        &[],
    );
    assert_eq!(v.status.code(), Some(0), "{}", text(&v));

    // A second run fetches nothing new and changes nothing.
    let before = server.requests();
    let again = cli(&install_args_with_cudnn(index, r, "linux"), &[]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(
        text(&again).contains("Already in place"),
        "{}",
        text(&again)
    );
    let file_requests = server.requests() - before;
    // Index pages and the metapackage only (7 pages + 1 tiny wheel), no component wheel.
    assert!(
        file_requests <= 9,
        "{file_requests} requests on the second run"
    );
}

#[test]
fn the_html_index_resolves_the_same_wheels_as_the_json_one() {
    let work = tempfile::tempdir().unwrap();
    let server = serve(&linux_files(work.path()));
    let req = |index: String| wheels::Request {
        index,
        toolkit: TOOLKIT.parse().unwrap(),
        os: Os::Linux,
        components: Some(COMPONENTS.split(',').map(str::to_string).collect()),
        cudnn: None,
    };
    let json = wheels::resolve(
        &req(server.url("/simple")),
        &Options::default(),
        work.path(),
    )
    .unwrap();
    let html =
        wheels::resolve(&req(server.url("/html")), &Options::default(), work.path()).unwrap();
    let names = |r: &wheels::Resolved| {
        let mut v: Vec<(String, String, String)> = r
            .wheels
            .iter()
            .map(|w| (w.project.clone(), w.version.clone(), w.sha256.clone()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&json), names(&html));
    let projects: Vec<String> = names(&json).into_iter().map(|n| n.0).collect();
    assert_eq!(
        projects,
        [
            "nvidia-cuda-cccl",
            "nvidia-cuda-crt",
            "nvidia-cuda-nvcc",
            "nvidia-cuda-runtime",
            "nvidia-nvvm"
        ]
    );
    // An unknown component is named with the ones this release has.
    let mut bad = req(server.url("/simple"));
    bad.components = Some(vec!["nvcc".into(), "cudnn-please".into()]);
    let e = wheels::resolve(&bad, &Options::default(), work.path()).unwrap_err();
    assert!(matches!(e, WheelError::UnknownComponent { .. }), "{e}");
    assert!(e.to_string().contains("cublas"), "{e}");
}

#[test]
fn a_wrong_hash_on_the_index_stops_before_anything_is_installed() {
    let wheels = tempfile::tempdir().unwrap();
    let mut f = linux_files(wheels.path());
    let rt = f
        .iter_mut()
        .find(|f| f.project == "nvidia-cuda-runtime")
        .unwrap();
    rt.sha256 = "0".repeat(64);
    let server = serve(&f);
    let (root, out) = install_linux(&server.url("/simple"));
    // 1603 (MSI's "fatal error"); Unix keeps the low 8 bits.
    assert_eq!(out.status.code(), Some(1603 % 256), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains("sha256 mismatch") || t.contains("SHA-256 mismatch") || t.contains("mismatch"),
        "{t}"
    );
    assert!(t.contains("nvidia_cuda_runtime-13.5.37"), "{t}");
    assert!(
        !root.path().join("usr/local/cuda-13.5").exists(),
        "no tree may be left"
    );
    // The bad download is deleted, not kept as if it were good.
    let dl = root.path().join(".cuda-setup/downloads");
    let left: Vec<String> = std::fs::read_dir(&dl)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("nvidia_cuda_runtime"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_wheel_missing_for_the_platform_is_named() {
    // The index has every wheel, but nvidia-cuda-crt only for Windows.
    let wheels = tempfile::tempdir().unwrap();
    let mut f = linux_files(wheels.path());
    let crt = f
        .iter_mut()
        .find(|f| f.project == "nvidia-cuda-crt")
        .unwrap();
    crt.filename = crt
        .filename
        .replace("manylinux2014_x86_64.manylinux_2_17_x86_64", "win_amd64");
    let server = serve(&f);
    let (root, out) = install_linux(&server.url("/simple"));
    assert_eq!(out.status.code(), Some(1603 % 256), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains("no manylinux x86_64 wheel of nvidia-cuda-crt ==13.5.37.*"),
        "{t}"
    );
    assert!(t.contains("hint: "), "{t}");
    assert!(!root.path().join("usr/local/cuda-13.5").exists());
}

#[test]
fn a_mirror_that_is_down_is_reported_with_a_hint() {
    let dead = format!("{}/simple", crate::support::server::dead_base());
    let (root, out) = install_linux(&dead);
    assert_eq!(out.status.code(), Some(1603 % 256), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains("package index") && t.contains("cuda-toolkit"),
        "{t}"
    );
    assert!(t.contains("hint: ") && t.contains("--pypi-mirror"), "{t}");
    assert!(!root.path().join("usr").exists());
}

#[test]
fn windows_layout_puts_nvcc_in_bin_and_cudart_in_bin_x64() {
    windows_layout(Wheels::StandIn);
}

#[test]
#[ignore = "needs PyPI: NVIDIA's real wheels; scripts/real-artifacts.sh runs it"]
fn real_nvidia_wheels_windows_layout_puts_nvcc_in_bin_and_cudart_in_bin_x64() {
    windows_layout(Wheels::Real);
}

/// The Windows tree from `w`: nvcc in bin, the DLLs in bin\x64, cuDNN beside them.
fn windows_layout(w: Wheels) {
    let wheels = tempfile::tempdir().unwrap();
    let server = serve(&with_cudnn_wheel(Platform::Windows, w, wheels.path()));
    let root = tempfile::tempdir().unwrap();
    let out = cli(
        &install_args_with_cudnn(
            &server.url("/simple"),
            root.path().to_str().unwrap(),
            "windows",
        ),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let dir = root
        .path()
        .join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v13.5");
    for f in [
        "bin/nvcc.exe",
        "bin/x64/cudart64_13.dll",
        "lib/x64/cudart.lib",
        "nvvm/bin/cicc.exe",
        "include/cuda_runtime.h",
        "bin/x64/cudnn64_9.dll",
        "bin/x64/cudnn_engines_tensor_ir64_9.dll",
        "include/cudnn_version.h",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing in {}", dir.display());
    }
    assert!(
        !dir.join("bin/x86_64").exists(),
        "the wheels' bin/x86_64 becomes bin/x64"
    );
    // CCCL's CMake files where find_package(CCCL) looks, its headers three folders up;
    // the wheels' profile links from lib\x64.
    assert!(dir.join("lib/cmake/cccl/cccl-config.cmake").is_file());
    assert!(
        std::fs::read_to_string(dir.join("bin/nvcc.profile"))
            .unwrap()
            .contains("/LIBPATH:$(TOP)/lib/$(_WIN_PLATFORM_)")
    );
    assert!(!dir.join("lib64").exists() && !dir.join("pkgconfig").exists());
    // The environment record: CUDA_PATH and PATH point at the tree.
    let rec = std::fs::read_to_string(root.path().join(".cuda-setup/windows-env.json")).unwrap();
    assert!(rec.contains("CUDA_PATH") && rec.contains("v13.5"), "{rec}");
    assert!(rec.contains("x64"), "PATH has bin\\x64: {rec}");
}

#[test]
fn a_hostile_cudnn_wheel_is_refused_and_the_toolkit_is_unchanged() {
    let work = tempfile::tempdir().unwrap();
    let tk = work.path().join("cuda-13.5");
    std::fs::create_dir_all(tk.join("bin")).unwrap();
    std::fs::create_dir_all(tk.join("include")).unwrap();
    std::fs::write(
        tk.join("version.json"),
        r#"{"cuda":{"name":"CUDA SDK","version":"13.5.0"}}"#,
    )
    .unwrap();
    let snapshot = || support::tree::files(&tk, &|_| false);
    let before = snapshot();
    // A real-layout wheel with one extra program in it.
    let name = support::cudnn_zip::write_cudnn_wheel(work.path(), "9.27.0.42", 13, false);
    let good = work.path().join(&name);
    let mut files = Vec::new();
    let mut z = zip::ZipArchive::new(std::fs::File::open(&good).unwrap()).unwrap();
    for i in 0..z.len() {
        let mut e = z.by_index(i).unwrap();
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut e, &mut b).unwrap();
        files.push((String::from_utf8_lossy(e.name_raw()).into_owned(), b));
    }
    files.push((
        "nvidia/cudnn/bin/evil.sh".into(),
        b"#!/bin/sh\nrm -rf ~\n".to_vec(),
    ));
    let bad = work.path().join("bad.whl");
    support::cudnn_zip::write_zip(&bad, &files, false);
    let out = cli(
        &[
            "cudnn",
            "install",
            "--archive",
            bad.to_str().unwrap(),
            "--cuda-dir",
            tk.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        text(&out).contains("nvidia/cudnn/bin/evil.sh"),
        "{}",
        text(&out)
    );
    assert_eq!(snapshot(), before, "nothing changed");
    // The same wheel without it goes in, and uninstall restores the folder.
    let ok = cli(
        &[
            "cudnn",
            "install",
            "--archive",
            good.to_str().unwrap(),
            "--cuda-dir",
            tk.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok));
    assert!(tk.join("lib64/libcudnn_graph.so.9").is_file());
    assert!(
        tk.join(".cuda-setup/cudnn-License.txt").is_file(),
        "the licence is kept"
    );
    let un = cli(
        &["cudnn", "uninstall", "--cuda-dir", tk.to_str().unwrap()],
        &[],
    );
    assert_eq!(un.status.code(), Some(0), "{}", text(&un));
    assert!(!tk.join("lib64/libcudnn_graph.so.9").exists());
}

#[test]
fn a_wheels_bundle_installs_with_the_index_gone() {
    let wheels = tempfile::tempdir().unwrap();
    let server = serve(&with_cudnn_wheel(
        Platform::Linux,
        Wheels::StandIn,
        wheels.path(),
    ));
    let bundle = tempfile::tempdir().unwrap();
    let b = bundle.path().to_str().unwrap();
    let index = server.url("/simple");
    let out = cli(
        &[
            "bundle",
            "--out",
            b,
            "--method",
            "wheels",
            "--pypi-mirror",
            &index,
            "--components",
            COMPONENTS,
            "--cuda",
            "13.5",
            "--os",
            "linux",
            "--driver",
            "600.00",
            "--gpu-cc",
            "8.6",
            "--json",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let m: Value = serde_json::from_slice(&out.stdout).unwrap();
    let kinds: Vec<&str> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "toolkit_wheel").count(),
        5,
        "{kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| **k == "cudnn_wheel").count(),
        1,
        "{kinds:?}"
    );
    assert!(bundle.path().join("wheels-13.5.0-linux.json").is_file());
    drop(server); // the index is gone

    let root = tempfile::tempdir().unwrap();
    let mut args = install_args_with_cudnn(&index, root.path().to_str().unwrap(), "linux");
    args.extend(["--bundle", b]);
    let out = cli(&args, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let dir = root.path().join("usr/local/cuda-13.5");
    assert!(dir.join("bin/nvcc").is_file() && dir.join("lib64/libcudnn.so.9").is_file());
}

#[test]
fn a_cudnn_wheel_the_index_lacks_is_left_out_with_a_note() {
    // The toolkit's wheels only: no nvidia-cudnn-cu13 on this index.
    let wheels = tempfile::tempdir().unwrap();
    let server = serve(&linux_files(wheels.path()));
    let root = tempfile::tempdir().unwrap();
    let index = server.url("/simple");
    let mut args = install_args_with_cudnn(&index, root.path().to_str().unwrap(), "linux");
    args.push("--dry-run");
    let out = cli(&args, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let t = text(&out);
    // The note in words, the resolver's own error after "details:".
    assert!(
        t.contains("note: cuDNN is left out: the package index has no cuDNN")
            && t.contains("(details: cuDNN is left out: package index"),
        "{t}"
    );
    assert!(
        t.contains("Unpack the toolkit wheels") && !t.contains("Install cuDNN"),
        "{t}"
    );
}

/// cuBLAS chosen: its versioned libraries get their link names and a pkg-config file,
/// and the step says what was added and what no wheel carries. Then the tree is made to
/// look as one built before the development layout (no link names, no stub, a record
/// without the mark): the next run completes it where it is, keeping what it holds, and
/// the run after that finds nothing to do.
#[test]
fn cublas_gets_link_names_and_an_older_tree_is_completed_in_place() {
    let wheels = tempfile::tempdir().unwrap();
    let server = serve(&linux_files(wheels.path()));
    let root = tempfile::tempdir().unwrap();
    let r = root.path().to_str().unwrap();
    let index = server.url("/simple");
    let mut args = install_args(&index, r, "linux");
    let at = args.iter().position(|x| *x == COMPONENTS).unwrap();
    args[at] = "nvcc,cudart,cccl,cublas";
    let out = cli(&args, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("library link names"), "{t}");
    assert!(t.contains("lib64/stubs/libnvidia-ml.so"), "{t}");
    let dir = root.path().join("usr/local/cuda-13.5");
    for (link, target) in [
        ("lib64/libcublas.so", "libcublas.so.13"),
        ("lib64/libcublasLt.so", "libcublasLt.so.13"),
        ("lib64/libnvblas.so", "libnvblas.so.13"),
        ("lib64/libcudart.so", "libcudart.so.13"),
    ] {
        assert_eq!(
            std::fs::read_link(dir.join(link)).unwrap(),
            Path::new(target)
        );
    }
    let pc = std::fs::read_to_string(dir.join("pkgconfig/cublas-13.5.pc")).unwrap();
    assert!(pc.contains("Libs: -L${libdir} -lcublas\n"), "{pc}");
    let (_, names) =
        cuda_setup_core::devlayout::stub::read_exports(&dir.join("lib64/stubs/libcuda.so"))
            .unwrap();
    assert_eq!(names, support::wheels::CUDA_H_SYMBOLS);

    // As a tree built before: no link names, no stub, no pkg-config, no mark.
    for e in std::fs::read_dir(dir.join("lib64")).unwrap().flatten() {
        if e.file_type().unwrap().is_symlink() {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    std::fs::remove_dir_all(dir.join("lib64/stubs")).unwrap();
    std::fs::remove_dir_all(dir.join("pkgconfig")).unwrap();
    let rp = dir.join(".cuda-setup/toolkit-wheels.json");
    let mut rec: Value = serde_json::from_slice(&std::fs::read(&rp).unwrap()).unwrap();
    rec.as_object_mut().unwrap().remove("dev_layout");
    std::fs::write(&rp, rec.to_string()).unwrap();
    std::fs::write(dir.join("lib64/kept.txt"), "not rebuilt").unwrap();

    let before = server.requests();
    let again = cli(&args, &[]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    let t = text(&again);
    assert!(t.contains("completed for building programs"), "{t}");
    assert!(
        std::fs::read_link(dir.join("lib64/libcublas.so")).is_ok(),
        "link names made again"
    );
    assert!(dir.join("lib64/stubs/libcuda.so").is_file());
    assert!(dir.join("pkgconfig/cublas-13.5.pc").is_file());
    assert_eq!(
        std::fs::read_to_string(dir.join("lib64/kept.txt")).unwrap(),
        "not rebuilt",
        "completed where it is, not rebuilt"
    );
    let rec: Value = serde_json::from_slice(&std::fs::read(&rp).unwrap()).unwrap();
    assert_eq!(rec["dev_layout"], 1);
    assert!(
        server.requests() - before <= 10,
        "no component wheel fetched again"
    );

    let third = cli(&args, &[]);
    assert_eq!(third.status.code(), Some(0), "{}", text(&third));
    assert!(
        text(&third).contains("CUDA 13.5.0 already built from these wheels"),
        "{}",
        text(&third)
    );
}

// ---- Never delete what we did not create; names from outside (issue #16). These use
// small stand-in wheels built here, so they need no network.

/// `install --method wheels` for Linux CUDA 13.5 (nvcc and the runtime) into `root`.
fn standin_install(index: &str, root: &Path, env: &[(&str, &str)]) -> Output {
    let r = root.to_str().unwrap();
    let mut a = install_args(index, r, "linux");
    let at = a.iter().position(|x| *x == COMPONENTS).unwrap();
    a[at] = "nvcc,cudart";
    cli(&a, env)
}

/// Every file under `dir` with its bytes (links as `-> target`).
fn snapshot(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            // The stand-in nvcc's own note of its last arguments (the build check ran it).
            if rel == "bin/last-args" {
                continue;
            }
            let t = e.file_type().unwrap();
            if t.is_symlink() {
                let to = std::fs::read_link(&p).unwrap();
                out.insert(rel, format!("-> {}", to.display()).into_bytes());
            } else if t.is_dir() {
                stack.push(p);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// The names in `dir` that start with a dot and name a staging or old copy.
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains(".staging-") || n.contains(".old-"))
                .collect()
        })
        .unwrap_or_default()
}

/// An installer-made toolkit (no record of ours) with a file of the user's in it.
fn installer_toolkit(dir: &Path, complete: bool) {
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::fs::create_dir_all(dir.join("lib64")).unwrap();
    std::fs::write(
        dir.join("bin/nvcc"),
        support::standin::nvcc_script("installer nvcc\n"),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.join("bin/nvcc"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
    }
    if complete {
        // What NVIDIA's runfile lays down for a developer: the runtime, its link name and
        // the driver stub.
        std::fs::write(dir.join("lib64/libcudart.so.13"), "installer cudart").unwrap();
        std::os::unix::fs::symlink("libcudart.so.13", dir.join("lib64/libcudart.so")).unwrap();
        std::fs::create_dir_all(dir.join("lib64/stubs")).unwrap();
        std::fs::write(dir.join("lib64/stubs/libcuda.so"), "installer stub").unwrap();
    }
    std::fs::write(
        dir.join("version.json"),
        r#"{"cuda":{"name":"CUDA SDK","version":"13.5.0"}}"#,
    )
    .unwrap();
    std::fs::write(dir.join("my-notes.txt"), "the user's own file").unwrap();
}

#[test]
fn a_hostile_file_name_on_the_index_writes_nothing_outside_the_root() {
    let tmp = tempfile::tempdir().unwrap();
    let good = support::wheels::standin(&tmp.path().join("wheels"), "13.5.37", true);
    let meta = good.iter().find(|f| f.project == "cuda-toolkit").unwrap();
    // Four `..` from downloads/<first part> climb out of <root>/.cuda-setup/downloads.
    let evil = "cuda_toolkit-13.5.0-py3/../../../../x/evil-none-any.whl";
    let server = support::server::Server::start();
    let page = serde_json::json!({
        "meta": {"api-version": "1.1"},
        "name": "cuda-toolkit",
        "files": [{"filename": evil, "url": "../../files/meta.whl",
                   "hashes": {"sha256": meta.sha256}, "size": meta.size}],
    });
    server.add_typed(
        "/simple/cuda-toolkit/",
        support::server::Body::Bytes(std::sync::Arc::new(serde_json::to_vec(&page).unwrap())),
        "application/vnd.pypi.simple.v1+json",
    );
    server.add(
        "/files/meta.whl",
        support::server::Body::File(meta.path.clone(), meta.size),
    );
    let root = tmp.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    let index = server.url("/simple");
    let mut args = install_args(&index, root.to_str().unwrap(), "linux");
    args.push("--dry-run");
    let out = cli(&args, &[]);
    let t = text(&out);
    assert!(
        !tmp.path().join("x").exists(),
        "a file was written outside --root"
    );
    assert_ne!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("names a file that cannot be used") && t.contains("path separator"),
        "{t}"
    );
    assert!(
        t.contains("hint: ") && t.contains("nothing was written"),
        "{t}"
    );
    let outside: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "root" && n != "wheels")
        .collect();
    assert!(outside.is_empty(), "{outside:?}");
}

/// A loopback index serving stand-in wheels of CUDA `version` (with or without libcudart).
fn standin_index(dir: &Path, version: &str, cudart: bool) -> support::server::Server {
    serve(&support::wheels::standin(dir, version, cudart))
}

#[test]
fn an_installer_made_toolkit_at_the_destination_is_kept_not_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let server = standin_index(&tmp.path().join("wheels"), "13.5.37", true);
    let root = tmp.path().join("root");
    let dir = root.join("usr/local/cuda-13.5");
    installer_toolkit(&dir, true);
    let before = snapshot(&dir);
    let out = standin_install(&server.url("/simple"), &root, &[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("it will be kept"), "pre-flight says so: {t}");
    assert!(t.contains("not built from wheels"), "{t}");
    assert_eq!(
        snapshot(&dir),
        before,
        "the installer's toolkit was changed"
    );
    assert!(leftovers(&root.join("usr/local")).is_empty());
}

#[test]
fn a_folder_we_did_not_build_and_that_is_no_toolkit_is_refused_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let server = standin_index(&tmp.path().join("wheels"), "13.5.37", true);
    let root = tmp.path().join("root");
    let dir = root.join("usr/local/cuda-13.5");
    installer_toolkit(&dir, false); // nvcc without its runtime: half an installer run
    let before = snapshot(&dir);
    let out = standin_install(&server.url("/simple"), &root, &[]);
    let t = text(&out);
    assert_ne!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("holds files cuda-setup did not build")
            && t.contains("never replaces or deletes a folder it did not build"),
        "{t}"
    );
    assert_eq!(snapshot(&dir), before);
    assert!(leftovers(&root.join("usr/local")).is_empty());
}

#[test]
fn a_record_that_points_outside_its_folder_is_not_trusted() {
    let tmp = tempfile::tempdir().unwrap();
    let server = standin_index(&tmp.path().join("wheels"), "13.5.37", true);
    let root = tmp.path().join("root");
    let dir = root.join("usr/local/cuda-13.5");
    // A record naming a wheel `../../victim`: not ours, whatever else it says.
    installer_toolkit(&dir, false);
    std::fs::create_dir_all(dir.join(".cuda-setup")).unwrap();
    std::fs::write(
        dir.join(".cuda-setup/toolkit-wheels.json"),
        r#"{"version":"13.5.0","wheels":["../../victim"],"files":1}"#,
    )
    .unwrap();
    let before = snapshot(&dir);
    let out = standin_install(&server.url("/simple"), &root, &[]);
    let t = text(&out);
    assert_ne!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("cannot be trusted"), "{t}");
    assert_eq!(snapshot(&dir), before);

    // A `.cuda-setup` that is a link to a record elsewhere: the same.
    let dir2 = tmp.path().join("other/usr/local/cuda-13.5");
    installer_toolkit(&dir2, false);
    let real = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&real).unwrap();
    std::fs::write(
        real.join("toolkit-wheels.json"),
        r#"{"version":"13.5.0","wheels":[],"files":0}"#,
    )
    .unwrap();
    std::os::unix::fs::symlink(&real, dir2.join(".cuda-setup")).unwrap();
    let before = snapshot(&dir2);
    let out = standin_install(&server.url("/simple"), &tmp.path().join("other"), &[]);
    let t = text(&out);
    assert_ne!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("symbolic link"), "{t}");
    assert_eq!(snapshot(&dir2), before);
}

#[test]
fn a_rebuild_whose_check_fails_puts_the_previous_tree_back() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let dir = root.join("usr/local/cuda-13.5");
    let a = standin_index(&tmp.path().join("a"), "13.5.37", true);
    let out = standin_install(&a.url("/simple"), &root, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let built = snapshot(&dir);
    assert!(built.contains_key(".cuda-setup/toolkit-wheels.json"));
    // A newer runtime wheel that lacks libcudart: the new tree fails its check.
    let b = standin_index(&tmp.path().join("b"), "13.5.38", false);
    let out = standin_install(&b.url("/simple"), &root, &[]);
    let t = text(&out);
    assert_ne!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("libcudart.so.13"), "{t}");
    assert!(t.contains("the previous toolkit was put back"), "{t}");
    assert_eq!(
        snapshot(&dir),
        built,
        "the previous tree is back, unchanged"
    );
    assert!(leftovers(&root.join("usr/local")).is_empty());
}

/// Kill -9 at each point of a swap: the toolkit is there (old or new) or comes back; repair
/// names what was left; the next run restores, cleans and finishes. The points run side by
/// side, each in a copy of one root where the first tree was built.
#[test]
fn kill_9_at_each_point_of_a_swap_never_leaves_no_toolkit() {
    let tmp = tempfile::tempdir().unwrap();
    let a = standin_index(&tmp.path().join("a"), "13.5.37", true);
    let b = standin_index(&tmp.path().join("b"), "13.5.38", true);
    let template = tmp.path().join("template");
    let out = standin_install(&a.url("/simple"), &template, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let old = snapshot(&template.join("usr/local/cuda-13.5"));
    let index = b.url("/simple");
    std::thread::scope(|s| {
        for point in [
            "wheels_staged",
            "wheels_old_out",
            "wheels_new_in",
            "wheels_committed",
        ] {
            let (tmp, template, old, index) = (tmp.path(), &template, &old, &index);
            s.spawn(move || kill_at(tmp, template, old, index, point));
        }
    });
}

fn kill_at(
    tmp: &Path,
    template: &Path,
    old: &std::collections::BTreeMap<String, Vec<u8>>,
    index: &str,
    point: &str,
) {
    let root = tmp.join(point);
    let cp = Command::new("cp")
        .arg("-a")
        .arg(template)
        .arg(&root)
        .status()
        .unwrap();
    assert!(cp.success());
    let local = root.join("usr/local");
    let dir = local.join("cuda-13.5");
    let flag = tmp.join(format!("{point}.paused"));
    let r = root.to_str().unwrap().to_string();
    let mut args = install_args(index, &r, "linux");
    let at = args.iter().position(|x| *x == COMPONENTS).unwrap();
    args[at] = "nvcc,cudart";
    let mut child = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(&args)
        .env("LANG", "C")
        .env("CUDA_SETUP_TEST_PAUSE_AT", point)
        .env("CUDA_SETUP_TEST_PAUSE_DIR", tmp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !flag.exists() {
        if start.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            panic!("never reached {point}");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    // Old or new in place, or the old one beside it to be put back: never neither.
    let olds: Vec<String> = leftovers(&local)
        .into_iter()
        .filter(|n| n.contains(".old-"))
        .collect();
    let here = dir.exists().then(|| snapshot(&dir));
    match point {
        "wheels_old_out" => {
            assert!(here.is_none() && olds.len() == 1, "{point}: {olds:?}");
            assert_eq!(&snapshot(&local.join(&olds[0])), old, "{point}");
        }
        "wheels_staged" => assert_eq!(here.as_ref(), Some(old), "{point}"),
        _ => assert!(
            here.as_ref().is_some_and(
                |t| t.contains_key("bin/nvcc") && t.contains_key("lib64/libcudart.so.13")
            ),
            "{point}"
        ),
    }
    assert!(!leftovers(&local).is_empty(), "{point}: nothing left over?");

    // Repair names the leftovers, with a fix.
    let rep = cli(&["repair", "--root", &r, "--os", "linux", "--json"], &[]);
    let rt = text(&rep);
    assert!(rt.contains("repair_wheels_leftover"), "{point}: {rt}");
    assert!(rt.contains("recover_toolkit"), "{point}: {rt}");

    // The next run restores and cleans first, then finishes with the new wheels.
    let out = standin_install(index, &root, &[]);
    assert_eq!(out.status.code(), Some(0), "{point}: {}", text(&out));
    assert!(
        leftovers(&local).is_empty(),
        "{point}: {:?}",
        leftovers(&local)
    );
    assert_eq!(
        snapshot(&dir)
            .get("lib64/libcudart.so.13")
            .map(Vec::as_slice),
        Some(&b"libcudart 13.5.38\n"[..]),
        "{point}"
    );
}

#[test]
fn repair_fix_puts_back_a_tree_a_killed_swap_left_aside() {
    let tmp = tempfile::tempdir().unwrap();
    let a = standin_index(&tmp.path().join("a"), "13.5.37", true);
    let root = tmp.path().join("root");
    let local = root.join("usr/local");
    let dir = local.join("cuda-13.5");
    let out = standin_install(&a.url("/simple"), &root, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let old = snapshot(&dir);
    // What a kill between the two renames leaves: the tree aside, a staging copy.
    std::fs::rename(&dir, local.join(".cuda-13.5.old-4242")).unwrap();
    std::fs::create_dir_all(local.join(".cuda-13.5.staging-4242/bin")).unwrap();
    let r = root.to_str().unwrap();
    let rep = cli(
        &["repair", "--root", r, "--os", "linux", "--fix", "--json"],
        &[],
    );
    let t = text(&rep);
    assert!(t.contains("recover_toolkit"), "{t}");
    assert_eq!(snapshot(&dir), old);
    assert!(leftovers(&local).is_empty(), "{:?}", leftovers(&local));
}

#[test]
fn a_bundle_whose_saved_resolution_names_a_path_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let server = standin_index(&tmp.path().join("wheels"), "13.5.37", true);
    let bundle = tmp.path().join("bundle");
    let b = bundle.to_str().unwrap();
    let index = server.url("/simple");
    let out = cli(
        &[
            "bundle",
            "--out",
            b,
            "--method",
            "wheels",
            "--pypi-mirror",
            &index,
            "--components",
            "nvcc,cudart",
            "--cuda",
            "13.5",
            "--os",
            "linux",
            "--driver",
            "600.00",
            "--gpu-cc",
            "8.6",
            "--no-cudnn",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // The saved resolution is input too: one wheel's name now climbs out of downloads.
    let saved = bundle.join("wheels-13.5.0-linux.json");
    let mut r: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    r["wheels"][0]["filename"] = "../../../evil.whl".into();
    std::fs::write(&saved, serde_json::to_vec(&r).unwrap()).unwrap();
    drop(server);

    let root = tmp.path().join("root");
    let mut args = install_args(&index, root.to_str().unwrap(), "linux");
    let at = args.iter().position(|x| *x == COMPONENTS).unwrap();
    args[at] = "nvcc,cudart";
    args.extend(["--bundle", b]);
    let out = cli(&args, &[]);
    let t = text(&out);
    assert!(
        !tmp.path().join("evil.whl").exists(),
        "written outside --root"
    );
    assert_ne!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("wheels-13.5.0-linux.json names a file that cannot be used"),
        "{t}"
    );
    assert!(!root.join("usr/local/cuda-13.5").exists());
}

/// #21: a second run trusts a downloaded wheel whose size and modification time are those
/// recorded when it was verified (`.NAME.verified` beside it); one changed behind our back
/// is hashed again — replaced when its bytes are no longer right, kept (and its record
/// renewed) when only its time moved.
#[test]
fn a_downloaded_wheel_changed_behind_our_back_is_hashed_again_and_replaced() {
    let wheels = tempfile::tempdir().unwrap();
    let files = linux_files(wheels.path());
    let server = serve(&files);
    let index = server.url("/simple");
    let (root, out) = install_linux(&index);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let downloads = root.path().join(".cuda-setup/downloads");
    let nvcc = files
        .iter()
        .find(|f| f.filename.starts_with("nvidia_cuda_nvcc"))
        .unwrap();
    let runtime = files
        .iter()
        .find(|f| f.filename.starts_with("nvidia_cuda_runtime"))
        .unwrap();
    let record = |f: &IndexFile| downloads.join(format!(".{}.verified", f.filename));
    for f in [nvcc, runtime] {
        let r: Value = serde_json::from_slice(&std::fs::read(record(f)).unwrap()).unwrap();
        assert_eq!(r["sha256"], f.sha256.as_str(), "{}", f.filename);
        assert_eq!(r["size"], f.size, "{}", f.filename);
    }

    // Nothing changed: nothing is fetched again.
    let before = server.requests();
    let again = cli(
        &install_args(&index, root.path().to_str().unwrap(), "linux"),
        &[],
    );
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    let noop_requests = server.requests() - before;

    // nvcc's wheel: other bytes of the same size (a new time). Runtime's: its time only.
    let nvcc_path = downloads.join(&nvcc.filename);
    let mut b = std::fs::read(&nvcc_path).unwrap();
    let mid = b.len() / 2;
    b[mid] ^= 0xff;
    std::fs::write(&nvcc_path, &b).unwrap();
    let rt_path = downloads.join(&runtime.filename);
    let old_time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
    std::fs::File::options()
        .write(true)
        .open(&rt_path)
        .unwrap()
        .set_modified(old_time)
        .unwrap();

    let before = server.requests();
    let third = cli(
        &install_args(&index, root.path().to_str().unwrap(), "linux"),
        &[],
    );
    assert_eq!(third.status.code(), Some(0), "{}", text(&third));
    // The damaged wheel alone is fetched again (over a connection or two), and holds the
    // right bytes.
    assert!(
        server.requests() - before > noop_requests,
        "{}",
        text(&third)
    );
    let fetched = |f: &IndexFile| {
        text(&third)
            .lines()
            .any(|l| l.contains("downloading") && l.contains(&f.filename))
    };
    assert!(fetched(nvcc), "{}", text(&third));
    assert!(!fetched(runtime), "{}", text(&third));
    assert_eq!(support::wheels::sha256_file(&nvcc_path), nvcc.sha256);
    // The runtime's wheel was hashed, found right and kept, its record renewed.
    assert_eq!(
        std::fs::metadata(&rt_path).unwrap().modified().unwrap(),
        old_time
    );
    let r: Value = serde_json::from_slice(&std::fs::read(record(runtime)).unwrap()).unwrap();
    assert_eq!(r["stamp"]["mtime_ns"], 1_000_000u64 * 1_000_000_000);
}

/// #21: the build check's record (`build-check.json`) lets a run again skip the compile
/// and link only while what it used keeps its stamps; a changed nvcc is built with again,
/// and a failing check leaves no record to skip on.
#[test]
fn the_build_check_runs_again_when_what_it_used_changed() {
    let wheels = tempfile::tempdir().unwrap();
    let server = serve(&linux_files(wheels.path()));
    let index = server.url("/simple");
    let (root, out) = install_linux(&index);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = root.path().to_str().unwrap();
    let record_file = root.path().join(".cuda-setup/build-check.json");
    let nvcc = root.path().join("usr/local/cuda-13.5/bin/nvcc");
    let nvcc_stamp = || -> Value {
        let rec: Value = serde_json::from_slice(&std::fs::read(&record_file).unwrap()).unwrap();
        rec["files"][nvcc.to_str().unwrap()].clone()
    };
    let first = nvcc_stamp();
    assert!(first["size"].as_u64().is_some(), "nvcc recorded: {first}");

    // nvcc touched (same bytes, another time): the check runs and records the new stamp.
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(2_000_000);
    std::fs::File::options()
        .write(true)
        .open(&nvcc)
        .unwrap()
        .set_modified(t)
        .unwrap();
    let again = cli(&install_args(&index, r, "linux"), &[]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(
        text(&again).contains("compiled and linked"),
        "{}",
        text(&again)
    );
    assert_eq!(nvcc_stamp()["mtime_ns"], 2_000_000u64 * 1_000_000_000);

    // An nvcc that fails: the step fails (no skipping on the old record) and the record
    // is dropped.
    std::fs::write(&nvcc, "#!/bin/sh\necho 'fatal: broken' >&2\nexit 1\n").unwrap();
    let broken = cli(&install_args(&index, r, "linux"), &[]);
    assert_ne!(broken.status.code(), Some(0), "{}", text(&broken));
    assert!(!record_file.exists());
}

// ---- #21 pipeline: each wheel is unpacked as soon as its download is verified, while
// the others still download; the tree still goes in only whole.

/// The steps of a `--json` report: (name, status).
fn statuses(out: &Output) -> Vec<(String, String)> {
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("no JSON report ({e}): {}", text(out));
    });
    v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The runtime wheel, downloaded after nvcc, fails its hash: the assembly had begun with
/// nvcc (the pipeline) and stops with it; the previous tree is as it was, nothing is left
/// beside it, and the error is the hash mismatch.
#[test]
fn a_wheel_that_fails_its_hash_stops_the_pipeline_and_leaves_the_tree_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let local = root.join("usr/local");
    let dir = local.join("cuda-13.5");
    let a = standin_index(&tmp.path().join("a"), "13.5.37", true);
    let out = standin_install(&a.url("/simple"), &root, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let before = snapshot(&dir);
    let mut files = support::wheels::standin(&tmp.path().join("b"), "13.5.38", true);
    files
        .iter_mut()
        .find(|f| f.project == "nvidia-cuda-runtime")
        .unwrap()
        .sha256 = "0".repeat(64);
    let b = serve(&files);
    let index = b.url("/simple");
    let r = root.to_str().unwrap().to_string();
    let mut args = install_args(&index, &r, "linux");
    let at = args.iter().position(|x| *x == COMPONENTS).unwrap();
    args[at] = "nvcc,cudart";
    args.push("--json");
    let out = cli(&args, &[]);
    let t = text(&out);
    assert_ne!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("mismatch"), "{t}");
    assert!(t.contains("nvidia_cuda_runtime-13.5.38"), "{t}");
    let steps = statuses(&out);
    let of = |name: &str| -> Vec<&str> {
        steps
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, s)| s.as_str())
            .collect()
    };
    assert_eq!(of("download_toolkit"), ["done", "failed"], "{steps:?}");
    assert_eq!(
        of("assemble_toolkit"),
        ["cancelled"],
        "the assembly began with nvcc, then stopped: {steps:?}"
    );
    assert_eq!(snapshot(&dir), before, "the previous tree, unchanged");
    assert!(leftovers(&local).is_empty(), "{:?}", leftovers(&local));
}

/// Kill -9 while the tree is being unpacked and the downloads go on: the previous tree is
/// untouched, the half-built staging folder is beside it; repair names it, and the next
/// run cleans it and finishes with the new wheels.
#[test]
fn kill_9_mid_pipeline_leaves_the_tree_and_the_next_run_finishes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let local = root.join("usr/local");
    let dir = local.join("cuda-13.5");
    let a = standin_index(&tmp.path().join("a"), "13.5.37", true);
    let out = standin_install(&a.url("/simple"), &root, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let before = snapshot(&dir);
    let b = standin_index(&tmp.path().join("b"), "13.5.38", true);
    let index = b.url("/simple");
    let r = root.to_str().unwrap().to_string();
    let mut args = install_args(&index, &r, "linux");
    let at = args.iter().position(|x| *x == COMPONENTS).unwrap();
    args[at] = "nvcc,cudart";
    let pause = tmp.path().join("pause");
    std::fs::create_dir_all(&pause).unwrap();
    let flag = pause.join("wheels_unpacking.paused");
    let mut child = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(&args)
        .env("LANG", "C")
        .env("CUDA_SETUP_TEST_PAUSE_AT", "wheels_unpacking")
        .env("CUDA_SETUP_TEST_PAUSE_DIR", &pause)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !flag.exists() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("never reached wheels_unpacking");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(snapshot(&dir), before, "the tree in use is not touched");
    let left = leftovers(&local);
    assert!(
        left.len() == 1 && left[0].contains(".staging-"),
        "the half-built tree is beside it: {left:?}"
    );
    let rep = cli(&["repair", "--root", &r, "--os", "linux", "--json"], &[]);
    assert!(
        text(&rep).contains("repair_wheels_leftover"),
        "{}",
        text(&rep)
    );
    let out = standin_install(&index, &root, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(leftovers(&local).is_empty(), "{:?}", leftovers(&local));
    assert_eq!(
        snapshot(&dir)
            .get("lib64/libcudart.so.13")
            .map(Vec::as_slice),
        Some(&b"libcudart 13.5.38\n"[..])
    );
}

/// The names beside a toolkit folder that cuDNN staged ahead of it (`.LEAF.cudnn-PID`).
fn cudnn_prestaged(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains(".cudnn-"))
                .collect()
        })
        .unwrap_or_default()
}

/// The staging folders inside a toolkit's `.cuda-setup` (cuDNN's transaction).
fn cudnn_staging(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir.join(".cuda-setup"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("staging-"))
                .collect()
        })
        .unwrap_or_default()
}

/// The first install with cuDNN, stand-in toolkit wheels and a real-layout cuDNN wheel.
fn first_install_with_cudnn(index: &str, root: &Path, env: &[(&str, &str)]) -> Output {
    let r = root.to_str().unwrap();
    let mut a = install_args_with_cudnn(index, r, "linux");
    a.push("--json");
    cli(&a, env)
}

/// A cuDNN manifest's files without their stamps (a time of writing differs per install).
fn manifest_files(dir: &Path) -> Vec<Value> {
    let m: Value = serde_json::from_slice(
        &std::fs::read(dir.join(".cuda-setup/cudnn-manifest.json")).unwrap(),
    )
    .unwrap();
    m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let mut f = f.clone();
            f.as_object_mut().unwrap().remove("stamp");
            f
        })
        .collect()
}

/// The first wheels install with cuDNN stages cuDNN beside the toolkit while it is
/// assembled, then moves it in: the files and the manifest are those the plain
/// `cudnn install` of the same wheel into the same toolkit gives, nothing is left beside
/// the toolkit or in its staging, and every step is done.
#[test]
fn the_prestaged_cudnn_installs_the_same_files_and_manifest_as_the_plain_install() {
    let tmp = tempfile::tempdir().unwrap();
    let server = serve(&with_cudnn_wheel(
        Platform::Linux,
        Wheels::StandIn,
        tmp.path(),
    ));
    let root = tmp.path().join("root");
    let local = root.join("usr/local");
    let dir = local.join("cuda-13.5");
    let out = first_install_with_cudnn(&server.url("/simple"), &root, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let steps = statuses(&out);
    assert!(
        steps.iter().all(|(_, s)| s == "done"),
        "every step done: {steps:?}"
    );
    assert!(steps.iter().any(|(n, _)| n == "install_cudnn"), "{steps:?}");
    assert!(
        cudnn_prestaged(&local).is_empty(),
        "{:?}",
        cudnn_prestaged(&local)
    );
    assert!(leftovers(&local).is_empty(), "{:?}", leftovers(&local));
    assert!(cudnn_staging(&dir).is_empty(), "{:?}", cudnn_staging(&dir));
    let d = dir.to_str().unwrap();
    let v = cli(&["cudnn", "verify", "--deep", "--cuda-dir", d], &[]);
    assert_eq!(v.status.code(), Some(0), "{}", text(&v));
    let skip = |s: &str| s.starts_with(".cuda-setup");
    let ahead_files = manifest_files(&dir);
    let ahead_tree: Vec<_> = snapshot(&dir)
        .into_iter()
        .filter(|(k, _)| !skip(k))
        .collect();
    let m: Value = serde_json::from_slice(
        &std::fs::read(dir.join(".cuda-setup/cudnn-manifest.json")).unwrap(),
    )
    .unwrap();
    let wheel = m["archive_path"].as_str().unwrap().to_string();

    // The plain way: out, then in again from the same wheel.
    let un = cli(&["cudnn", "uninstall", "--cuda-dir", d], &[]);
    assert_eq!(un.status.code(), Some(0), "{}", text(&un));
    assert!(!dir.join("lib64/libcudnn.so.9").exists());
    let plain = cli(
        &["cudnn", "install", "--archive", &wheel, "--cuda-dir", d],
        &[],
    );
    assert_eq!(plain.status.code(), Some(0), "{}", text(&plain));
    assert_eq!(manifest_files(&dir), ahead_files, "the same manifest");
    let plain_tree: Vec<_> = snapshot(&dir)
        .into_iter()
        .filter(|(k, _)| !skip(k))
        .collect();
    assert_eq!(plain_tree, ahead_tree, "the same files, the same bytes");
}

/// A cuDNN wheel with a file that has no place in cuDNN: refused while (or after) the
/// toolkit is assembled. The toolkit is installed all the same, cuDNN is not, and no
/// staging of it is left beside the toolkit or inside it.
#[test]
fn a_cudnn_wheel_that_fails_its_checks_leaves_the_toolkit_installed_and_no_cudnn_staging() {
    let tmp = tempfile::tempdir().unwrap();
    let cudnn = tmp.path().join("cudnn");
    std::fs::create_dir_all(&cudnn).unwrap();
    let name = support::cudnn_zip::write_cudnn_wheel(&cudnn, "9.27.0.42", 13, false);
    let good = cudnn.join(&name);
    let mut entries = Vec::new();
    let mut z = zip::ZipArchive::new(std::fs::File::open(&good).unwrap()).unwrap();
    for i in 0..z.len() {
        let mut e = z.by_index(i).unwrap();
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut e, &mut b).unwrap();
        entries.push((String::from_utf8_lossy(e.name_raw()).into_owned(), b));
    }
    drop(z);
    entries.push((
        "nvidia/cudnn/bin/evil.sh".into(),
        b"#!/bin/sh\nrm -rf ~\n".to_vec(),
    ));
    // The same name, so the index offers it (with its own, matching hash).
    support::cudnn_zip::write_zip(&good, &entries, false);
    let mut all = toolkit_files(Platform::Linux, Wheels::StandIn, tmp.path());
    all.extend(files(&[&cudnn]));
    let server = serve(&all);
    let root = tmp.path().join("root");
    let local = root.join("usr/local");
    let dir = local.join("cuda-13.5");
    let out = first_install_with_cudnn(&server.url("/simple"), &root, &[]);
    let t = text(&out);
    assert_ne!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("nvidia/cudnn/bin/evil.sh"), "{t}");
    let steps = statuses(&out);
    let of = |name: &str| -> Vec<&str> {
        steps
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, s)| s.as_str())
            .collect()
    };
    assert_eq!(of("assemble_toolkit"), ["done"], "{steps:?}");
    assert_eq!(of("install_cudnn"), ["failed"], "{steps:?}");
    assert!(dir.join("bin/nvcc").is_file(), "the toolkit is in place");
    assert!(!dir.join(".cuda-setup/cudnn-manifest.json").exists());
    assert!(!dir.join("lib64/libcudnn.so.9").exists());
    assert!(
        cudnn_prestaged(&local).is_empty(),
        "{:?}",
        cudnn_prestaged(&local)
    );
    assert!(leftovers(&local).is_empty(), "{:?}", leftovers(&local));
    assert!(cudnn_staging(&dir).is_empty(), "{:?}", cudnn_staging(&dir));
}

/// Kill -9 with cuDNN staged beside a toolkit still being assembled: the staged copy is
/// beside the destination (proof the pipeline staged it ahead); the next run deletes it,
/// finishes the toolkit and installs cuDNN, and leaves nothing beside it.
#[test]
fn kill_9_with_cudnn_staged_ahead_is_cleaned_and_the_next_run_installs_it() {
    let tmp = tempfile::tempdir().unwrap();
    let server = serve(&with_cudnn_wheel(
        Platform::Linux,
        Wheels::StandIn,
        tmp.path(),
    ));
    let index = server.url("/simple");
    let root = tmp.path().join("root");
    let local = root.join("usr/local");
    let dir = local.join("cuda-13.5");
    let pause = tmp.path().join("pause");
    std::fs::create_dir_all(&pause).unwrap();
    let flag = pause.join("cudnn_prestaged.paused");
    let mut a = install_args_with_cudnn(&index, root.to_str().unwrap(), "linux");
    a.push("--json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(&a)
        .env("LANG", "C")
        .env("CUDA_SETUP_TEST_PAUSE_AT", "cudnn_prestaged")
        .env("CUDA_SETUP_TEST_PAUSE_DIR", &pause)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !flag.exists() {
        if start.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            panic!("never reached cudnn_prestaged");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let left = cudnn_prestaged(&local);
    assert_eq!(left.len(), 1, "cuDNN staged beside the toolkit: {left:?}");
    assert!(
        std::fs::read_dir(local.join(&left[0]))
            .unwrap()
            .next()
            .is_some(),
        "with its files"
    );
    assert!(!dir.join(".cuda-setup/cudnn-manifest.json").exists());
    let out = first_install_with_cudnn(&index, &root, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        cudnn_prestaged(&local).is_empty(),
        "{:?}",
        cudnn_prestaged(&local)
    );
    assert!(leftovers(&local).is_empty(), "{:?}", leftovers(&local));
    assert!(cudnn_staging(&dir).is_empty(), "{:?}", cudnn_staging(&dir));
    assert!(dir.join("lib64/libcudnn.so.9").is_file());
    let v = cli(
        &[
            "cudnn",
            "verify",
            "--deep",
            "--cuda-dir",
            dir.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(v.status.code(), Some(0), "{}", text(&v));
}

/// The cuDNN wheel, fetched first now that its install is staged ahead, fails its hash:
/// the toolkit's wheels are still fetched and the toolkit goes in (as when cuDNN came
/// last); the run fails with the mismatch, cuDNN is not installed, nothing is left over.
#[test]
fn a_cudnn_wheel_that_fails_its_hash_still_leaves_the_toolkit_installed() {
    let tmp = tempfile::tempdir().unwrap();
    let mut all = with_cudnn_wheel(Platform::Linux, Wheels::StandIn, tmp.path());
    all.iter_mut()
        .find(|f| f.project == "nvidia-cudnn-cu13")
        .unwrap()
        .sha256 = "0".repeat(64);
    let server = serve(&all);
    let root = tmp.path().join("root");
    let local = root.join("usr/local");
    let dir = local.join("cuda-13.5");
    let out = first_install_with_cudnn(&server.url("/simple"), &root, &[]);
    let t = text(&out);
    assert_ne!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("mismatch"), "{t}");
    let steps = statuses(&out);
    let of = |name: &str| -> Vec<&str> {
        steps
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, s)| s.as_str())
            .collect()
    };
    assert_eq!(of("download_cudnn"), ["failed"], "{steps:?}");
    assert_eq!(of("assemble_toolkit"), ["done"], "{steps:?}");
    assert_eq!(of("install_cudnn"), ["not_run"], "{steps:?}");
    assert!(dir.join("bin/nvcc").is_file(), "the toolkit is in place");
    assert!(!dir.join(".cuda-setup/cudnn-manifest.json").exists());
    assert!(
        cudnn_prestaged(&local).is_empty(),
        "{:?}",
        cudnn_prestaged(&local)
    );
    assert!(leftovers(&local).is_empty(), "{:?}", leftovers(&local));
}
