//! The library a GPU package's failed load misses (#33): a stand-in Python whose packages
//! probe reports onnxruntime-gpu or CTranslate2 failing with a load error, over package
//! folders of real PE and ELF files (`support::pe_imports`, `support::elf`); the doctor
//! walks them against the search order of that load and names the library and its fix
//! — the core's report, and the real binary's text in English and Chinese.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::platform::Host;
use cuda_setup_core::verify::doctor::{self, DoctorOptions, GpuFacts, GpuSummary};
use cuda_setup_core::verify::packages::{PackageFinding, PackageFindingKind as Kind};
use cuda_setup_core::version::ComputeCapability;
use serde_json::json;

use crate::support::python::{self, Packages};
use crate::support::{elf, pe_imports::dll};

pub(crate) fn write(p: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

pub(crate) fn rtx3060() -> GpuFacts {
    GpuFacts {
        driver: None,
        driver_cuda: Some("12.4".parse().unwrap()),
        gpus: vec![GpuSummary {
            name: "NVIDIA GeForce RTX 3060".into(),
            compute_capability: Some(ComputeCapability::new(8, 6)),
        }],
    }
}

/// The package findings of the doctor on the stand-in in `root/py` (its packages probe
/// answering `packages`).
pub(crate) fn package_findings(
    os: Os,
    root: &Path,
    packages: &Packages,
    env: &[(&str, String)],
) -> Vec<PackageFinding> {
    let dir = root.join("py");
    let py = python::interpreter(&dir, None);
    python::set_packages(&dir, packages);
    let env: BTreeMap<String, String> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let host = Host::sandbox(os, root, env);
    let opts = DoctorOptions {
        python: Some(py),
        mirror: None,
        timeout: Duration::from_secs(30),
        size: 16,
    };
    let r = doctor::examine(&host, &Tables::embedded().unwrap(), &opts, &rtx3060());
    let p = r.packages.expect("the packages were examined");
    assert!(p.error.is_none(), "{:?}", p.error);
    p.findings
}

/// The one package finding of the doctor on the stand-in in `root/py`.
fn finding(os: Os, root: &Path, packages: &Packages, env: &[(&str, String)]) -> PackageFinding {
    let findings = package_findings(os, root, packages, env);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    findings.into_iter().next().unwrap()
}

/// A Windows venv under `root` with onnxruntime-gpu: its CUDA provider needs
/// `onnxruntime_providers_shared.dll` (beside it), `cublasLt64_12.dll` (in a toolkit on
/// PATH) and `cudnn64_9.dll` (nowhere); its own module needs the VC++ runtime.
struct Win {
    site: PathBuf,
    ort: PathBuf,
    toolkit_bin: PathBuf,
    packages: Packages,
}

const PROVIDER_FAILED: &str = "FileNotFoundError: Could not find module 'C:\\venv\\Lib\\site-packages\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll' (or one of its dependencies). Try using the full path with constructor syntax.";

fn windows_onnxruntime(root: &Path, check: serde_json::Value) -> Win {
    let base = root.join("Python311");
    let venv = root.join("venv");
    let site = venv.join("Lib/site-packages");
    let ort = site.join("onnxruntime");
    let capi = ort.join("capi");
    write(
        &capi.join("onnxruntime_providers_cuda.dll"),
        &dll(&[
            "onnxruntime_providers_shared.dll",
            "cublasLt64_12.dll",
            "cudnn64_9.dll",
            "KERNEL32.dll",
        ]),
    );
    write(
        &capi.join("onnxruntime_providers_shared.dll"),
        &dll(&["KERNEL32.dll"]),
    );
    write(
        &capi.join("onnxruntime_pybind11_state.pyd"),
        &dll(&["MSVCP140.dll", "VCRUNTIME140_1.dll", "python311.dll"]),
    );
    let toolkit_bin = root.join("CUDA/v12.6/bin");
    write(&toolkit_bin.join("cublasLt64_12.dll"), &dll(&[]));
    write(&base.join("python311.dll"), &dll(&[]));
    write(&root.join("Windows/System32/msvcp140.dll"), b"Windows' own");
    let packages = Packages::default()
        .with("onnxruntime-gpu", "1.20.1", &[])
        .at(&ort)
        .interpreter("win32", &venv.join("Scripts/python.exe"), &venv, &base)
        .check("onnxruntime", check);
    Win {
        site,
        ort,
        toolkit_bin,
        packages,
    }
}

fn windows_env(root: &Path, w: &Win) -> Vec<(&'static str, String)> {
    vec![
        ("PATH", w.toolkit_bin.display().to_string()),
        ("SystemRoot", root.join("Windows").display().to_string()),
    ]
}

#[test]
fn onnxruntime_provider_without_cudnn_names_cudnn64_9_in_the_core() {
    let d = tempfile::tempdir().unwrap();
    let w = windows_onnxruntime(d.path(), json!({"ok": false, "error": PROVIDER_FAILED}));
    let f = finding(
        Os::Windows,
        d.path(),
        &w.packages,
        &windows_env(d.path(), &w),
    );
    // Before, the finding was the general need ("needs CUDA 12 …") with no library.
    assert_eq!(f.kind, Kind::LibraryMissing, "{f:#?}");
    assert_eq!(f.missing_library.as_deref(), Some("cudnn64_9.dll"));
    assert_eq!(f.message.key, "pkg_library_missing");
    assert_eq!(
        f.message.param("chain"),
        Some("onnxruntime_providers_cuda.dll → cudnn64_9.dll")
    );
    let fix = f.fix.unwrap();
    // onnxruntime 1.20 has no preload_dlls: the nvidia-* wheels are not found, the
    // toolkit (on PATH, which its provider's load searches) is.
    assert_eq!(fix.message.key, "fix_lib_cudnn_toolkit");
    assert_eq!(fix.message.param("cuda"), Some("12"));
    assert!(fix.commands.is_empty(), "{:?}", fix.commands);
}

#[test]
fn a_cudnn_copy_in_a_wheel_folder_counts_only_where_onnxruntime_preloads_it() {
    let d = tempfile::tempdir().unwrap();
    let w = windows_onnxruntime(d.path(), json!({"ok": false, "error": PROVIDER_FAILED}));
    write(&w.site.join("nvidia/cudnn/bin/cudnn64_9.dll"), &dll(&[]));
    // Without preload_dlls nothing loads from the wheel's folder: still missing.
    let f = finding(
        Os::Windows,
        d.path(),
        &w.packages,
        &windows_env(d.path(), &w),
    );
    assert_eq!(f.missing_library.as_deref(), Some("cudnn64_9.dll"));
    // preload_dlls (>= 1.21) loaded it beforehand: not missing, the finding stays the
    // general one.
    let preloaded = w.packages.clone().check(
        "onnxruntime",
        json!({"ok": false, "error": PROVIDER_FAILED, "preloaded": true}),
    );
    let f = finding(
        Os::Windows,
        d.path(),
        &preloaded,
        &windows_env(d.path(), &w),
    );
    assert_eq!(f.missing_library, None, "{f:#?}");
    assert_ne!(f.kind, Kind::LibraryMissing);
    // With the wheel gone, the fix offers it, since onnxruntime now finds the wheels.
    std::fs::remove_dir_all(w.site.join("nvidia")).unwrap();
    let f = finding(
        Os::Windows,
        d.path(),
        &preloaded,
        &windows_env(d.path(), &w),
    );
    let fix = f.fix.unwrap();
    assert_eq!(fix.message.key, "fix_lib_cudnn");
    assert!(
        fix.commands[0].ends_with("-m pip install \"nvidia-cudnn-cu12==9.*\""),
        "{:?}",
        fix.commands
    );
}

#[test]
fn onnxruntime_whose_own_module_fails_names_the_vc_runtime() {
    let d = tempfile::tempdir().unwrap();
    let error = "ImportError: DLL load failed while importing onnxruntime_pybind11_state: The specified module could not be found.";
    let w = windows_onnxruntime(d.path(), json!({"ok": false, "error": error}));
    let f = finding(
        Os::Windows,
        d.path(),
        &w.packages,
        &windows_env(d.path(), &w),
    );
    assert_eq!(
        f.missing_library.as_deref(),
        Some("VCRUNTIME140_1.dll"),
        "{f:#?}"
    );
    assert_eq!(f.message.key, "doctor_library_missing");
    assert_eq!(
        f.message.param("chain"),
        Some("onnxruntime_pybind11_state.pyd → VCRUNTIME140_1.dll")
    );
    assert_eq!(f.fix.unwrap().message.key, "fix_lib_vc_redist");
    assert!(w.ort.is_dir());
}

#[test]
fn ctranslate2_on_linux_names_the_cublaslt_its_cublas_needs() {
    let d = tempfile::tempdir().unwrap();
    let site = d.path().join("venv/lib/python3.11/site-packages");
    let ct2 = site.join("ctranslate2");
    elf::write_library(&ct2, "_ext.cpython-311-x86_64-linux-gnu.so", &[], &[]);
    // cuBLAS in the default folders; the cuBLASLt it needs only in the nvidia-* wheel,
    // which CTranslate2 does not search.
    elf::write_library(
        &d.path().join("usr/lib/x86_64-linux-gnu"),
        "libcublas.so.12",
        &["libcublasLt.so.12"],
        &[],
    );
    elf::write_library(
        &site.join("nvidia/cublas/lib"),
        "libcublasLt.so.12",
        &[],
        &[],
    );
    let venv = d.path().join("venv");
    let p = Packages::default()
        .with("ctranslate2", "4.5.0", &[])
        .at(&ct2)
        .interpreter("linux", &venv.join("bin/python3"), &venv, &venv)
        .check(
            "ctranslate2",
            json!({"ok": false, "error": "RuntimeError: Library libcublas.so.12 is not found or cannot be loaded"}),
        );
    let f = finding(Os::Linux, d.path(), &p, &[]);
    assert_eq!(
        f.missing_library.as_deref(),
        Some("libcublasLt.so.12"),
        "{f:#?}"
    );
    assert_eq!(f.kind, Kind::LibraryMissing);
    assert_eq!(
        f.message.param("chain"),
        Some("libcublas.so.12 → libcublasLt.so.12")
    );
    assert_eq!(f.fix.unwrap().message.key, "fix_lib_cuda_toolkit");
    // In a folder the loader searches (LD_LIBRARY_PATH), it is found: no library named.
    let wheel = site.join("nvidia/cublas/lib").display().to_string();
    let f = finding(Os::Linux, d.path(), &p, &[("LD_LIBRARY_PATH", wheel)]);
    assert_eq!(f.missing_library, None, "{f:#?}");
}

// ---- the command line, in both languages ----

fn cli(root: &Path, w: &Win, lang: &str) -> String {
    let dir = root.join("py");
    let py = python::interpreter(&dir, None);
    python::set_packages(&dir, &w.packages);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(["doctor", "--python"])
        .arg(&py)
        .arg("--root")
        .arg(root)
        .args([
            "--os",
            "windows",
            "--gpu-cc",
            "8.6",
            "--driver-cuda",
            "12.4",
        ])
        .args(["--lang", lang])
        .env_clear()
        .env("PATH", w.toolkit_bin.display().to_string())
        .env("SystemRoot", root.join("Windows"))
        .env("LANG", "C")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        crate::support::cli::text(&out)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn cli_names_the_cudnn_dll_onnxruntime_misses_in_english_and_chinese() {
    let d = tempfile::tempdir().unwrap();
    let w = windows_onnxruntime(d.path(), json!({"ok": false, "error": PROVIDER_FAILED}));
    let en = cli(d.path(), &w, "en");
    for line in [
        "[problem] onnxruntime-gpu 1.20.1 cannot use the GPU: the file cudnn64_9.dll its GPU part needs is missing.",
        "details: onnxruntime_providers_cuda.dll → cudnn64_9.dll",
        "fix: cudnn64_9.dll is part of cuDNN 9. Install cuDNN 9 for CUDA 12 on cuda-setup's cuDNN page: it puts cuDNN into the CUDA 12 toolkit, where this package looks for it.",
    ] {
        assert!(en.contains(line), "missing {line:?} in:\n{en}");
    }
    assert!(!en.contains("cublasLt64_12.dll"), "found on PATH: {en}");
    let zh = cli(d.path(), &w, "zh");
    for line in [
        "onnxruntime-gpu 1.20.1 用不了显卡：它的显卡部分需要的文件 cudnn64_9.dll 缺失。",
        "onnxruntime_providers_cuda.dll → cudnn64_9.dll",
        "cudnn64_9.dll 属于 cuDNN 9",
    ] {
        assert!(zh.contains(line), "missing {line:?} in:\n{zh}");
    }
    println!("---- en ----\n{en}\n---- zh ----\n{zh}");
}
