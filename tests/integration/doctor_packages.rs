//! The doctor for the GPU packages besides PyTorch (#33): a stand-in Python says which
//! packages are installed and what their GPU checks answer (`support::python::Packages`),
//! a sandbox root holds the toolkits detection finds, and the doctor — the core's
//! `examine`, and the real binary's text in English and Chinese — names what is missing
//! and the fix. `real_python_packages_probe` runs the probe itself on a real Python.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::platform::Host;
use cuda_setup_core::verify::Status;
use cuda_setup_core::verify::doctor::Severity;
use cuda_setup_core::verify::doctor::{self, DoctorOptions, DoctorReport, GpuFacts, GpuSummary};
use cuda_setup_core::verify::packages::{PackageFinding, PackageFindingKind as Kind};
use cuda_setup_core::version::ComputeCapability;
use serde_json::json;

use crate::support::python::{self, Packages};

/// A toolkit folder detection finds under `root` (Linux layout).
fn toolkit(root: &Path, version: &str) {
    let major_minor: Vec<&str> = version.split('.').take(2).collect();
    let dir = root.join(format!("usr/local/cuda-{}", major_minor.join(".")));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("version.json"),
        format!(r#"{{"cuda": {{"name": "CUDA SDK", "version": "{version}"}}}}"#),
    )
    .unwrap();
}

fn rtx3060(driver_cuda: &str) -> GpuFacts {
    GpuFacts {
        driver: None,
        driver_cuda: Some(driver_cuda.parse().unwrap()),
        gpus: vec![GpuSummary {
            name: "NVIDIA GeForce RTX 3060".into(),
            compute_capability: Some(ComputeCapability::new(8, 6)),
        }],
    }
}

/// The doctor on a stand-in Python with `packages`, on `os`, over `root`.
fn examine(os: Os, root: &Path, packages: &Packages, gpu: &GpuFacts) -> DoctorReport {
    let dir = root.join("py");
    let py = python::interpreter(&dir, None);
    python::set_packages(&dir, packages);
    let env = BTreeMap::from([("PATH".to_string(), "/usr/bin:/bin".to_string())]);
    let host = Host::sandbox(os, root, env);
    let opts = DoctorOptions {
        python: Some(py),
        mirror: None,
        timeout: Duration::from_secs(30),
        size: 16,
    };
    doctor::examine(&host, &Tables::embedded().unwrap(), &opts, gpu)
}

fn only(r: &DoctorReport) -> &PackageFinding {
    let p = r.packages.as_ref().expect("the packages were examined");
    assert!(p.error.is_none(), "{p:#?}");
    assert_eq!(p.findings.len(), 1, "{:#?}", p.findings);
    &p.findings[0]
}

fn commands(f: &PackageFinding) -> Vec<String> {
    f.fix
        .as_ref()
        .map(|x| x.commands.clone())
        .unwrap_or_default()
}

fn failing(error: &str) -> serde_json::Value {
    json!({"ok": false, "error": error})
}

const ORT_CUDNN_ERROR: &str =
    "OSError: libcudnn.so.9: cannot open shared object file: No such file or directory";

#[test]
fn onnxruntime_gpu_that_loads_is_ok() {
    let d = tempfile::tempdir().unwrap();
    let p = Packages::default()
        .with("onnxruntime-gpu", "1.20.1", &[])
        .check(
            "onnxruntime",
            json!({"ok": true, "providers": ["CUDAExecutionProvider"]}),
        );
    let r = examine(Os::Linux, d.path(), &p, &rtx3060("12.4"));
    let f = only(&r);
    assert_eq!((f.kind, f.severity), (Kind::GpuOk, Severity::Ok));
    assert_eq!(f.message.key, "pkg_gpu_ok");
}

#[test]
fn onnxruntime_gpu_for_cuda_12_on_a_cuda_11_machine_gets_the_cuda_11_version() {
    let d = tempfile::tempdir().unwrap();
    toolkit(d.path(), "11.8.89");
    let p = Packages::default()
        .with("onnxruntime-gpu", "1.20.1", &[])
        .check(
            "onnxruntime",
            failing("OSError: libcublasLt.so.12: cannot open shared object file"),
        );
    let r = examine(Os::Linux, d.path(), &p, &rtx3060("12.4"));
    let f = only(&r);
    assert_eq!((f.kind, f.severity), (Kind::CudaMissing, Severity::Problem));
    assert_eq!(f.message.param("cuda"), Some("12"));
    assert!(f.message.param("offered").unwrap().starts_with("11.8.89 ("));
    let c = commands(f);
    assert!(
        c[0].ends_with("-m pip install \"onnxruntime-gpu>=1.7,<1.19\""),
        "{c:?}"
    );
    assert_eq!(r.status, Status::Failed);
}

#[test]
fn onnxruntime_gpu_without_cudnn_9_gets_the_cudnn_wheel() {
    let d = tempfile::tempdir().unwrap();
    let p = Packages::default()
        .with("onnxruntime-gpu", "1.20.1", &[])
        .nvidia("nvidia-cublas-cu12", "12.4.5.8")
        .check("onnxruntime", failing(ORT_CUDNN_ERROR));
    let r = examine(Os::Linux, d.path(), &p, &rtx3060("12.4"));
    let f = only(&r);
    assert_eq!(
        (f.kind, f.severity),
        (Kind::CudnnMissing, Severity::Problem)
    );
    assert_eq!(f.message.key, "pkg_cudnn_none");
    assert!(commands(f)[0].ends_with("install \"nvidia-cudnn-cu12==9.*\""));
    // The loader's own words are kept for the details.
    assert!(f.message.param("detail").unwrap().contains("libcudnn.so.9"));
}

#[test]
fn ctranslate2_4_5_with_only_cudnn_8_needs_cudnn_9() {
    let d = tempfile::tempdir().unwrap();
    toolkit(d.path(), "12.4.1");
    let p = Packages::default()
        .with("ctranslate2", "4.5.0", &[])
        .with("faster-whisper", "1.1.0", &[])
        .nvidia("nvidia-cudnn-cu12", "8.9.7.29")
        .check("ctranslate2", failing("RuntimeError: Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so}"));
    let r = examine(Os::Linux, d.path(), &p, &rtx3060("12.4"));
    let f = only(&r);
    assert_eq!(f.kind, Kind::CudnnMissing);
    assert_eq!(f.message.key, "pkg_cudnn_missing");
    assert_eq!(
        f.message.param("offered"),
        Some("8.9.7.29 (nvidia-cudnn-cu12)")
    );
}

#[test]
fn ctranslate2_4_4_on_cuda_12_with_cudnn_8_that_loads_is_ok() {
    let d = tempfile::tempdir().unwrap();
    let p = Packages::default()
        .with("ctranslate2", "4.4.0", &[])
        .check("ctranslate2", json!({"ok": true, "devices": 1}));
    let r = examine(Os::Linux, d.path(), &p, &rtx3060("12.4"));
    assert_eq!(only(&r).kind, Kind::GpuOk);
}

#[test]
fn a_version_the_tables_do_not_know_gets_no_rule() {
    let d = tempfile::tempdir().unwrap();
    toolkit(d.path(), "11.8.89");
    for (name, version, check) in [
        ("onnxruntime-gpu", "1.30.0", "onnxruntime"),
        ("ctranslate2", "4.9.0", "ctranslate2"),
    ] {
        let p = Packages::default()
            .with(name, version, &[])
            .check(check, failing("OSError: something"));
        let r = examine(Os::Linux, d.path(), &p, &rtx3060("12.4"));
        let f = only(&r);
        assert_eq!(f.kind, Kind::UnknownVersion, "{name} {version}");
        assert!(f.fix.is_none(), "no invented fix: {f:#?}");
    }
}

#[test]
fn an_unconfirmed_row_is_a_note_not_a_problem() {
    let d = tempfile::tempdir().unwrap();
    let p = Packages::default()
        .with("ctranslate2", "3.10.0", &[])
        .nvidia("nvidia-cublas-cu12", "12.4.5.8")
        .check("ctranslate2", failing("RuntimeError: cublas64_11.dll"));
    let r = examine(Os::Linux, d.path(), &p, &rtx3060("12.4"));
    let f = only(&r);
    assert_eq!((f.kind, f.severity), (Kind::CudaMissing, Severity::Info));
}

#[test]
fn tensorflow_2_15_on_windows_has_no_gpu_and_points_to_wsl2() {
    let d = tempfile::tempdir().unwrap();
    let p = Packages::default()
        .with("tensorflow", "2.15.0", &[])
        .with("tensorflow-intel", "2.15.0", &[])
        .check(
            "tensorflow",
            failing("tf.config.list_physical_devices('GPU') is empty"),
        );
    let r = examine(Os::Windows, d.path(), &p, &rtx3060("12.4"));
    let f = only(&r);
    assert_eq!((f.kind, f.severity), (Kind::NoGpuOnOs, Severity::Problem));
    assert_eq!(
        f.fix.as_ref().unwrap().message.key,
        "fix_pkg_wsl2_or_version"
    );
    assert!(commands(f)[0].ends_with("install \"tensorflow>=2.5,<2.11\""));
    // The same version on Linux is judged by its own libraries instead.
    let p = Packages::default()
        .with(
            "tensorflow",
            "2.15.0",
            &["nvidia-cudnn-cu12==8.9.4.25; extra == \"and-cuda\""],
        )
        .check(
            "tensorflow",
            failing("tf.config.list_physical_devices('GPU') is empty"),
        );
    let r = examine(Os::Linux, d.path(), &p, &rtx3060("12.4"));
    let f = only(&r);
    assert_eq!(f.kind, Kind::WheelsMissing);
    assert!(commands(f)[0].ends_with("install \"tensorflow[and-cuda]==2.15.0\""));
}

#[test]
fn jax_on_windows_has_no_gpu_and_on_linux_its_plugin_names_the_cuda() {
    let d = tempfile::tempdir().unwrap();
    let p = Packages::default()
        .with("jax", "0.4.30", &[])
        .with("jaxlib", "0.4.30", &[])
        .check("jax", failing("jax.devices() has no GPU: cpu"));
    let r = examine(Os::Windows, d.path(), &p, &rtx3060("12.4"));
    assert_eq!(only(&r).kind, Kind::NoGpuOnOs);
    let p = p.with("jax-cuda12-plugin", "0.4.30", &[]);
    let r = examine(Os::Linux, d.path(), &p, &rtx3060("11.8"));
    let f = only(&r);
    assert_eq!(f.kind, Kind::DriverTooOld);
    assert_eq!(f.message.param("cuda"), Some("12"));
}

#[test]
fn paddle_says_its_own_build_and_the_cpu_packages_are_notes() {
    let d = tempfile::tempdir().unwrap();
    toolkit(d.path(), "12.6.3");
    let p = Packages::default()
        .with("paddlepaddle-gpu", "3.0.0", &[])
        .check(
            "paddle",
            json!({"ok": false, "error": "RuntimeError: cudnn64_8.dll not found",
                   "build_cuda": "11.8", "build_cudnn": "8.9", "compiled_with_cuda": true}),
        );
    let r = examine(Os::Linux, d.path(), &p, &rtx3060("12.6"));
    let f = only(&r);
    assert_eq!(f.kind, Kind::CudaMissing);
    assert_eq!(f.message.param("cuda"), Some("11"));
    assert_eq!(f.fix.as_ref().unwrap().message.key, "fix_pkg_install_cuda");

    let p = Packages::default().with("onnxruntime", "1.20.1", &[]);
    let r = examine(Os::Linux, d.path(), &p, &rtx3060("12.6"));
    let f = only(&r);
    assert_eq!((f.kind, f.severity), (Kind::CpuPackage, Severity::Info));
    assert!(commands(f)[1].ends_with("install onnxruntime-gpu"));
}

#[test]
fn without_a_gpu_the_packages_are_only_noted() {
    let d = tempfile::tempdir().unwrap();
    let p = Packages::default()
        .with("onnxruntime-gpu", "1.20.1", &[])
        .check("onnxruntime", failing("no CUDA"));
    let r = examine(Os::Linux, d.path(), &p, &GpuFacts::default());
    let f = only(&r);
    assert_eq!((f.kind, f.severity), (Kind::NoGpu, Severity::Info));
}

// ---- the tables ----

/// A copy of the built-in tables with `gpu-packages.toml` replaced by `text`.
fn tables_with(dir: &Path, text: &str) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("compat-tables");
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    std::fs::write(dir.join("gpu-packages.toml"), text).unwrap();
    Tables::from_dir(dir).unwrap_err().to_string()
}

const META: &str = "[meta]\nsubject = \"t\"\nsources = [\"s\"]\n";

#[test]
fn a_bad_gpu_packages_table_is_refused_naming_file_and_key() {
    let d = tempfile::tempdir().unwrap();
    let range = tables_with(
        d.path(),
        &format!(
            "{META}[[needs]]\npackage = \"ctranslate2\"\nversions = \">=4.5, <4.0\"\ncuda = 12\ncudnn = 9\nconfirmed = true\nsource = \"https://x\"\n"
        ),
    );
    assert!(range.contains("gpu-packages.toml"), "{range}");
    assert!(range.contains("empty: 4.5 is not below 4.0"), "{range}");
    let unknown = tables_with(
        d.path(),
        &format!(
            "{META}[[needs]]\npackage = \"ctranslate2\"\nversions = \">=4.5\"\ncuda = 12\ncudnn = 9\ncuda_min = 3\nconfirmed = true\nsource = \"https://x\"\n"
        ),
    );
    assert!(
        unknown.contains("gpu-packages.toml") && unknown.contains("cuda_min"),
        "{unknown}"
    );
    let overlap = tables_with(
        d.path(),
        &format!(
            "{META}[[needs]]\npackage = \"ctranslate2\"\nversions = \">=4.0, <4.6\"\ncuda = 12\ncudnn = 9\nconfirmed = true\nsource = \"https://x\"\n\
             [[needs]]\npackage = \"ctranslate2\"\nversions = \">=4.5\"\ncuda = 12\ncudnn = 9\nconfirmed = true\nsource = \"https://x\"\n"
        ),
    );
    assert!(
        overlap.contains("needs[1] (ctranslate2 >=4.5).versions")
            && overlap.contains("overlaps needs[0]"),
        "{overlap}"
    );
}

// ---- the command line, in both languages ----

fn cli(root: &Path, py: &Path, extra: &[&str], lang: &str) -> String {
    let mut args = vec![
        "doctor".to_string(),
        "--python".into(),
        py.display().to_string(),
        "--root".into(),
        root.display().to_string(),
        "--gpu-cc".into(),
        "8.6".into(),
        "--driver-cuda".into(),
        "12.4".into(),
        "--lang".into(),
        lang.into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(&args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
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
fn cli_names_the_missing_cudnn_and_the_windows_tensorflow_in_english_and_chinese() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("py");
    let py = python::interpreter(&dir, None);
    python::set_packages(
        &dir,
        &Packages::default()
            .with("onnxruntime-gpu", "1.20.1", &[])
            .nvidia("nvidia-cublas-cu12", "12.4.5.8")
            .check("onnxruntime", failing(ORT_CUDNN_ERROR)),
    );
    let en = cli(d.path(), &py, &[], "en");
    let q = py.display();
    for line in [
        "GPU packages besides PyTorch in this Python:".to_string(),
        "[problem] onnxruntime-gpu 1.20.1 needs cuDNN 9 for CUDA 12, but this Python finds no cuDNN.".into(),
        format!("details: {ORT_CUDNN_ERROR}"),
        "fix: Install cuDNN 9 into this Python (below), or put cuDNN 9 into your CUDA 12 toolkit with cuda-setup's cuDNN step (cuda-setup cudnn install).".into(),
        format!("{q} -m pip install \"nvidia-cudnn-cu12==9.*\""),
    ] {
        assert!(en.contains(&line), "missing {line:?} in:\n{en}");
    }
    let zh = cli(d.path(), &py, &[], "zh");
    for line in [
        "这个 Python 里除 PyTorch 以外的显卡相关包：",
        "onnxruntime-gpu 1.20.1 需要适配 CUDA 12 的 cuDNN 9，但这个 Python 找不到 cuDNN。",
        "请把 cuDNN 9 装进这个 Python（用下面的命令），或者用 cuda-setup 的 cuDNN 步骤（cuda-setup cudnn install）把 cuDNN 9 装进你的 CUDA 12 工具包。",
    ] {
        assert!(zh.contains(line), "missing {line:?} in:\n{zh}");
    }

    python::set_packages(
        &dir,
        &Packages::default().with("tensorflow", "2.15.0", &[]).check(
            "tensorflow",
            failing("tf.config.list_physical_devices('GPU') is empty"),
        ),
    );
    let en = cli(d.path(), &py, &["--os", "windows"], "en");
    for line in [
        "[problem] tensorflow 2.15.0 cannot use the GPU on Windows itself: it runs on the CPU only here.".to_string(),
        "fix: To use the GPU, run it inside WSL2 (Linux on Windows: wsl --install in PowerShell; cuda-setup sets up the GPU there too), or install an older tensorflow (>=2.5,<2.11) that still uses the GPU on Windows with CUDA 11 and cuDNN 8:".into(),
        format!("{q} -m pip install \"tensorflow>=2.5,<2.11\""),
    ] {
        assert!(en.contains(&line), "missing {line:?} in:\n{en}");
    }
    let zh = cli(d.path(), &py, &["--os", "windows"], "zh");
    for line in [
        "tensorflow 2.15.0 在 Windows 本机上不能使用显卡：在这里它只能用 CPU 运行。",
        "想用显卡，请在 WSL2（Windows 里的 Linux，在 PowerShell 中运行 wsl --install；cuda-setup 也能在那里装好显卡环境）里运行它",
    ] {
        assert!(zh.contains(line), "missing {line:?} in:\n{zh}");
    }
}

#[test]
fn cli_json_carries_the_package_findings() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("py");
    let py = python::interpreter(&dir, None);
    python::set_packages(
        &dir,
        &Packages::default()
            .with("onnxruntime-gpu", "1.20.1", &[])
            .check("onnxruntime", failing(ORT_CUDNN_ERROR)),
    );
    let out = cli(d.path(), &py, &["--json"], "en");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let f = &v["packages"]["findings"][0];
    assert_eq!(f["package"], "onnxruntime-gpu");
    assert_eq!(f["kind"], "cuda_missing");
    assert_eq!(f["layer"], "toolkit");
    assert_eq!(f["key"], "pkg_cuda_none");
    assert!(f["text"].as_str().unwrap().contains("needs CUDA 12"));
    assert!(f["missing_library"].is_null());
}

// ---- the probe itself, on a real Python ----

/// The probe on a real interpreter with none of the packages: an empty answer, no
/// crash; then with a stand-in ctranslate2 whose GPU check raises, the error's text.
#[test]
#[ignore = "needs a real python3: scripts/real-artifacts.sh"]
fn real_python_packages_probe() {
    let py = python::real_sandboxed();
    let host = Host::real();
    let p = cuda_setup_core::verify::packages::probe(&host, &py, Duration::from_secs(30)).unwrap();
    assert!(
        p.packages.is_empty() && p.nvidia.is_empty() && p.checks.is_empty(),
        "{p:#?}"
    );
    assert!(p.error.is_none());

    let d = tempfile::tempdir().unwrap();
    let site = d.path();
    let write = |rel: &str, text: &str| {
        let f = site.join(rel);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, text).unwrap();
    };
    write(
        "ctranslate2/__init__.py",
        "def get_cuda_device_count():\n    raise RuntimeError('Library cublas64_12.dll is not found or cannot be loaded')\n",
    );
    write(
        "ctranslate2-4.5.0.dist-info/METADATA",
        "Metadata-Version: 2.1\nName: ctranslate2\nVersion: 4.5.0\nRequires-Dist: numpy\n",
    );
    write(
        "nvidia_cudnn_cu12-9.1.0.70.dist-info/METADATA",
        "Metadata-Version: 2.1\nName: nvidia-cudnn-cu12\nVersion: 9.1.0.70\n",
    );
    let env = BTreeMap::from([
        ("PYTHONPATH".to_string(), site.display().to_string()),
        ("PYTHONNOUSERSITE".to_string(), "1".to_string()),
        ("PYTHONDONTWRITEBYTECODE".to_string(), "1".to_string()),
    ]);
    let host = Host::sandbox(Os::Linux, Path::new("/"), env);
    let p = cuda_setup_core::verify::packages::probe(&host, &py, Duration::from_secs(30)).unwrap();
    assert_eq!(p.packages[0].name, "ctranslate2");
    assert_eq!(p.nvidia[0].name, "nvidia-cudnn-cu12");
    let c = &p.checks["ctranslate2"];
    assert!(!c.ok);
    assert_eq!(
        c.error.as_deref(),
        Some("RuntimeError: Library cublas64_12.dll is not found or cannot be loaded")
    );
}
