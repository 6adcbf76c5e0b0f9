//! CTranslate2's GPU check loads what CTranslate2 loads when a model runs (#33):
//! `get_cuda_device_count()` answers 1 on a machine without cuBLAS, so the doctor names
//! the cuBLAS and cuDNN of the version's CUDA and cuDNN majors (`gpu-packages.toml`) and
//! the probe loads them by name in a second run. A stand-in Python answers both runs
//! (`Packages::ct2_loads`) and records the names it was given; PE and ELF files laid out
//! under a sandbox root are walked to the library that is missing. The core's report,
//! and the real binary's text in English and Chinese.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cuda_setup_core::compat::Os;
use cuda_setup_core::platform::Host;
use cuda_setup_core::verify::doctor::Severity;
use cuda_setup_core::verify::packages::{PackageFinding, PackageFindingKind as Kind};
use serde_json::json;

use crate::package_libraries::{package_findings, write};
use crate::support::pe_imports::dll;
use crate::support::python::{self, Packages};

/// The count answered by the first run: one GPU, as CTranslate2 says without cuBLAS.
fn counted() -> serde_json::Value {
    json!({"ok": true, "devices": 1})
}

/// The package findings of the doctor on the stand-in in `root/py`, and the names its
/// second run was asked to load.
fn examine(
    os: Os,
    root: &Path,
    packages: &Packages,
    env: &[(&str, String)],
) -> (Vec<PackageFinding>, Option<String>) {
    let dir = root.join("py");
    let _ = std::fs::remove_file(dir.join("packages-load.log"));
    let findings = package_findings(os, root, packages, env);
    (findings, python::ct2_loads_asked(&dir))
}

/// A Windows venv under `root` with ctranslate2 4.5.0 (CUDA 12, cuDNN 9) and a CUDA 12
/// toolkit whose `cublas64_12.dll` needs a `cublasLt64_12.dll` that is not there, the
/// toolkit named only by `CUDA_PATH` (not on PATH).
struct Win {
    venv: PathBuf,
    cuda_path: PathBuf,
    packages: Packages,
}

const CUBLAS_FAILED: &str =
    "RuntimeError: Library cublas64_12.dll is not found or cannot be loaded";

fn windows(root: &Path) -> Win {
    let base = root.join("Python311");
    let venv = root.join("venv");
    let ct2 = venv.join("Lib/site-packages/ctranslate2");
    write(
        &ct2.join("ctranslate2.dll"),
        &dll(&["cudnn64_9.dll", "KERNEL32.dll"]),
    );
    write(&ct2.join("cudnn64_9.dll"), &dll(&["KERNEL32.dll"]));
    let cuda_path = root.join("CUDA/v12.6");
    write(
        &cuda_path.join("bin/cublas64_12.dll"),
        &dll(&["cublasLt64_12.dll", "KERNEL32.dll"]),
    );
    write(&base.join("python311.dll"), &dll(&[]));
    let packages = Packages::default()
        .with("ctranslate2", "4.5.0", &[])
        .at(&ct2)
        .interpreter("win32", &venv.join("Scripts/python.exe"), &venv, &base)
        .check("ctranslate2", counted())
        .ct2_loads(json!({
            "ok": false, "devices": 1, "loaded": [],
            "error": CUBLAS_FAILED,
            "detail": "OSError: [WinError 126] The specified module could not be found",
        }));
    Win {
        venv,
        cuda_path,
        packages,
    }
}

fn windows_env(root: &Path, w: &Win) -> Vec<(&'static str, String)> {
    vec![
        ("PATH", root.join("nothing").display().to_string()),
        ("SystemRoot", root.join("Windows").display().to_string()),
        ("CUDA_PATH", w.cuda_path.display().to_string()),
    ]
}

fn only(findings: &[PackageFinding]) -> &PackageFinding {
    assert_eq!(findings.len(), 1, "{findings:#?}");
    &findings[0]
}

#[test]
fn a_gpu_count_without_cublas_is_not_working_and_the_missing_dll_is_named() {
    let d = tempfile::tempdir().unwrap();
    let w = windows(d.path());
    let (found, asked) = examine(
        Os::Windows,
        d.path(),
        &w.packages,
        &windows_env(d.path(), &w),
    );
    // The libraries 4.5.0 loads (CUDA 12, cuDNN 9 from the table), by their Windows names.
    assert_eq!(asked.as_deref(), Some("cublas64_12.dll cudnn64_9.dll"));
    // Before, the count alone made this `gpu_ok`.
    let f = only(&found);
    assert_eq!(
        (f.kind, f.severity),
        (Kind::LibraryMissing, Severity::Problem),
        "{f:#?}"
    );
    // cuBLAS is found where CTranslate2 looks (CUDA_PATH\bin); what it needs is not.
    assert_eq!(f.missing_library.as_deref(), Some("cublasLt64_12.dll"));
    assert_eq!(
        f.message.param("chain"),
        Some("cublas64_12.dll → cublasLt64_12.dll")
    );
    assert!(
        f.message.param("detail").unwrap().contains(CUBLAS_FAILED),
        "{f:#?}"
    );

    // Without CUDA_PATH nothing names the toolkit: cuBLAS itself is missing.
    let env: Vec<_> = windows_env(d.path(), &w)
        .into_iter()
        .filter(|(k, _)| *k != "CUDA_PATH")
        .collect();
    let (found, _) = examine(Os::Windows, d.path(), &w.packages, &env);
    let f = only(&found);
    assert_eq!(f.kind, Kind::LibraryMissing, "{f:#?}");
    assert_eq!(f.missing_library.as_deref(), Some("cublas64_12.dll"));
    assert!(w.venv.is_dir());
}

#[test]
fn the_libraries_follow_the_versions_majors_and_a_working_load_says_what_loaded() {
    let d = tempfile::tempdir().unwrap();
    let venv = d.path().join("venv");
    // 4.4.0: CUDA 12 with cuDNN 8 (faster-whisper's README), on Linux.
    let p = Packages::default()
        .with("ctranslate2", "4.4.0", &[])
        .interpreter("linux", &venv.join("bin/python3"), &venv, &venv)
        .check("ctranslate2", counted())
        .ct2_loads(
            json!({"ok": true, "devices": 1, "loaded": ["libcublas.so.12", "libcudnn.so.8"]}),
        );
    let (found, asked) = examine(Os::Linux, d.path(), &p, &[]);
    assert_eq!(asked.as_deref(), Some("libcublas.so.12 libcudnn.so.8"));
    let f = only(&found);
    assert_eq!(f.kind, Kind::GpuOk, "{f:#?}");
    assert_eq!(
        f.message.param("how"),
        Some("ctranslate2.get_cuda_device_count() = 1; libcublas.so.12, libcudnn.so.8 loaded")
    );

    // No GPU counted: nothing more to load. A version no row covers: nothing is guessed.
    for p in [
        p.clone().check(
            "ctranslate2",
            json!({"ok": false, "devices": 0, "error": "ctranslate2.get_cuda_device_count() is 0"}),
        ),
        Packages::default()
            .with("ctranslate2", "2.24.0", &[])
            .check("ctranslate2", counted())
            .ct2_loads(json!({"ok": false, "error": CUBLAS_FAILED})),
    ] {
        let (found, asked) = examine(Os::Linux, d.path(), &p, &[]);
        assert_eq!(asked, None, "{found:#?}");
    }
}

#[test]
fn cli_names_the_cublaslt_ctranslate2_misses_in_english_and_chinese() {
    let d = tempfile::tempdir().unwrap();
    let w = windows(d.path());
    let dir = d.path().join("py");
    let py = python::interpreter(&dir, None);
    python::set_packages(&dir, &w.packages);
    let run = |lang: &str| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
        c.args(["doctor", "--python"])
            .arg(&py)
            .arg("--root")
            .arg(d.path())
            .args([
                "--os",
                "windows",
                "--gpu-cc",
                "8.6",
                "--driver-cuda",
                "12.4",
                "--lang",
                lang,
            ])
            .env_clear()
            .env("LANG", "C");
        for (k, v) in windows_env(d.path(), &w) {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(5),
            "{}",
            crate::support::cli::text(&out)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let en = run("en");
    for line in [
        "[problem] ctranslate2 4.5.0 cannot use the GPU: the file cublasLt64_12.dll its GPU part needs is missing.",
        "details: cublas64_12.dll → cublasLt64_12.dll",
        CUBLAS_FAILED,
    ] {
        assert!(en.contains(line), "missing {line:?} in:\n{en}");
    }
    let zh = run("zh");
    for line in [
        "ctranslate2 4.5.0 用不了显卡：它的显卡部分需要的文件 cublasLt64_12.dll 缺失。",
        "cublas64_12.dll → cublasLt64_12.dll",
    ] {
        assert!(zh.contains(line), "missing {line:?} in:\n{zh}");
    }
    println!("---- en ----\n{en}\n---- zh ----\n{zh}");
}

/// The probe's second run on a real interpreter, with a stand-in ctranslate2 counting one
/// GPU: a library that loads is listed, the first that does not is CTranslate2's error
/// with the loader's own words in the detail.
#[test]
#[ignore = "needs a real python3: scripts/real-artifacts.sh"]
fn real_python_ctranslate2_loads() {
    use cuda_setup_core::verify::packages::{self, ctranslate2};
    let py = python::real_sandboxed();
    let d = tempfile::tempdir().unwrap();
    let site = d.path();
    let write_text = |rel: &str, text: &str| write(&site.join(rel), text.as_bytes());
    write_text(
        "ctranslate2/__init__.py",
        "def get_cuda_device_count():\n    return 1\n",
    );
    write_text(
        "ctranslate2-4.5.0.dist-info/METADATA",
        "Metadata-Version: 2.1\nName: ctranslate2\nVersion: 4.5.0\n",
    );
    let env = BTreeMap::from([
        ("PYTHONPATH".to_string(), site.display().to_string()),
        ("PYTHONNOUSERSITE".to_string(), "1".to_string()),
        ("PYTHONDONTWRITEBYTECODE".to_string(), "1".to_string()),
    ]);
    let host = Host::sandbox(Os::Linux, Path::new("/"), env);
    let mut p = packages::probe(&host, &py, Duration::from_secs(30)).unwrap();
    assert_eq!(p.checks["ctranslate2"].devices, Some(1), "{p:#?}");
    let names = ["libc.so.6".to_string(), "libcublas.so.99".to_string()];
    ctranslate2::load(&host, &py, Duration::from_secs(30), &names, &mut p);
    let c = &p.checks["ctranslate2"];
    assert!(!c.ok, "{c:#?}");
    assert_eq!(c.loaded.as_deref(), Some(&names[..1]));
    assert_eq!(
        c.error.as_deref(),
        Some("RuntimeError: Library libcublas.so.99 is not found or cannot be loaded")
    );
    assert!(
        c.detail.as_deref().unwrap().contains("libcublas.so.99"),
        "{c:#?}"
    );
    assert_eq!(c.devices, Some(1));
}
