//! The verdict at the end of `install` and `repair` (issue #31): the same sentence
//! `smoke`, `doctor` and the wizard say, decided by the core from the checks that end
//! the run (`verify::verdict::after_run`). In a `--root` sandbox with a stand-in Python
//! (pip, detection's probe and the doctor's probe answered as a CUDA torch on an
//! RTX 3060 would answer them), in English and Chinese, and as `verdict` in `--json`.

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cuda_setup_core::i18n::{Lang, tf};
use serde_json::Value;

use crate::support;

/// What the doctor's probe prints for a working CUDA build of torch on an RTX 3060.
const DOCTOR: &str = r#"{"python": "3.11.9", "executable": "/opt/py/bin/python3", "torch": {"version": "2.7.1+cu126", "cuda": "12.6", "cuda_available": true, "cuda_error": null, "cudnn": 90100, "cudnn_available": true, "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], "device_count": 1, "device_name": "NVIDIA GeForce RTX 3060", "device_capability": [8, 6], "driver_version": 12080}, "torch_error": null, "check": {"size": 2048, "moved_to": "cuda:0", "tensor_ok": true, "cpu_ms": 80.0, "gpu_ms": 2.0, "speedup": 40.0, "max_error": 0.0001, "tolerance": 0.01, "ok": true, "error": null}}"#;

/// What detection's probe prints with that torch.
const PROBE: &str = r#"{"version": "3.11.9", "executable": "/opt/py/bin/python3", "bits": 64, "torch": {"version": "2.7.1+cu126", "cuda": "12.6", "cuda_available": true, "cudnn": 90100, "arch_list": ["sm_86"]}, "torch_error": null}"#;

/// A Python stand-in (shell built-ins only): pip logs its arguments and succeeds, the
/// doctor's and detection's probes find the working torch.
fn python(bin: &Path) -> PathBuf {
    std::fs::create_dir_all(bin).unwrap();
    let py = bin.join("python3");
    let log = bin.join("pip.log");
    std::fs::write(
        &py,
        format!(
            "#!/bin/sh\ncase \"$*\" in\n*CUDA_SETUP_DOCTOR*) echo 'CUDA_SETUP_DOCTOR {DOCTOR}' ;;\n\"-m pip\"*) echo \"$@\" >> '{}'; echo 'Successfully installed torch' ;;\n*) echo 'CUDA_SETUP_PROBE {PROBE}' ;;\nesac\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    py
}

fn cli(args: &[String], path: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(args)
        .env("LANG", "C")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        // Only the stand-in: no Python of this machine is examined.
        .env("PATH", path)
        .output()
        .unwrap()
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}\nstdout: {}\nstderr: {}",
            stdout(o),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// The verdict the doctor's answer gives, as the catalogue says it.
fn ready(lang: Lang) -> String {
    tf(
        lang,
        "verdict_ready_torch_speed",
        &[("gpu", &"RTX 3060"), ("times", &"40")],
    )
}

/// `install` (the PyTorch goal, a Windows PC with an RTX 3060 in a root): after pip, the
/// doctor checks the Python torch went into, and the run ends with the verdict — last,
/// in the user's language; `--json` carries it as `verdict`.
#[test]
fn install_ends_with_the_verdict_in_words_and_in_json() {
    let work = tempfile::tempdir().unwrap();
    let bin = work.path().join("bin");
    let py = python(&bin);
    let install = |root: &str, extra: &[&str]| {
        let mut a = strings(&[
            "install",
            "--goal",
            "pytorch",
            "--unattended",
            "--os",
            "windows",
            "--gpu-cc",
            "8.6",
            "--driver",
            "551.78",
            "--python-exe",
        ]);
        a.push(py.display().to_string());
        a.push("--root".into());
        a.push(work.path().join(root).display().to_string());
        a.extend(strings(extra));
        cli(&a, &bin)
    };
    for (lang, flag) in [(Lang::En, "en"), (Lang::Zh, "zh")] {
        let out = install(flag, &["--lang", flag]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let s = stdout(&out);
        assert!(
            s.trim_end().ends_with(&ready(lang)),
            "{lang:?}: the verdict, last:\n{s}"
        );
    }
    assert!(
        std::fs::read_to_string(bin.join("pip.log"))
            .unwrap()
            .contains("install torch=="),
        "pip ran first"
    );

    let out = install("json", &["--json"]);
    let j = json(&out);
    let v = &j["verdict"];
    assert_eq!(v["state"], "ready", "{v:#}");
    assert_eq!(v["works"], "torch");
    assert_eq!(v["headline"], ready(Lang::En));
    assert_eq!(
        j["steps"].as_array().unwrap().last().unwrap()["name"],
        "install_torch"
    );
}

/// A run that failed runs no checks: its failure is what the user is told, and the
/// verdict is `pending` (nothing checked), never a sentence beside the failure.
#[test]
fn a_failed_install_has_no_verdict_to_contradict_its_failure() {
    let work = tempfile::tempdir().unwrap();
    let bin = work.path().join("bin");
    // A Python whose pip fails: the run fails at install_torch.
    std::fs::create_dir_all(&bin).unwrap();
    let py = bin.join("python3");
    std::fs::write(
        &py,
        "#!/bin/sh\necho 'ERROR: no matching distribution' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut a = strings(&[
        "install",
        "--goal",
        "pytorch",
        "--unattended",
        "--json",
        "--os",
        "windows",
        "--gpu-cc",
        "8.6",
        "--driver",
        "551.78",
        "--python-exe",
    ]);
    a.push(py.display().to_string());
    a.push("--root".into());
    a.push(work.path().join("root").display().to_string());
    let out = cli(&a, &bin);
    assert_eq!(out.status.code(), Some(1603 % 256));
    let j = json(&out);
    assert_eq!(j["verdict"]["state"], "pending", "{j:#}");
    assert!(j["verdict"]["headline"].is_null());
}

/// `repair --fix` on a Windows root whose toolkit was never put on PATH: the fix runs,
/// then setup's checks (the doctor on the torch detection finds), and the verdict ends
/// the output; plain `repair` (an audit) ends with it too, and `--json` has it.
#[test]
fn repair_ends_with_the_verdict() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("root");
    let bin = work.path().join("bin");
    python(&bin);
    let parent = root.join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA");
    let tk = support::cudnn_zip::toolkit(&parent, "11.8.0");
    std::fs::write(tk.join("bin/cudart64_110.dll"), b"MZ stand-in cudart").unwrap();
    let repair = |extra: &[&str]| {
        let mut a = strings(&[
            "repair", "--os", "windows", "--gpu-cc", "8.6", "--driver", "522.06",
        ]);
        a.push("--root".into());
        a.push(root.display().to_string());
        a.extend(strings(extra));
        cli(&a, &bin)
    };
    let out = repair(&["--json"]);
    let j = json(&out);
    assert!(j["problems"].as_u64().unwrap() > 0, "{j:#}");
    assert_eq!(j["verdict"]["headline"], ready(Lang::En), "{j:#}");

    let out = repair(&["--fix"]);
    let s = stdout(&out);
    assert!(s.trim_end().ends_with(&ready(Lang::En)), "{s}");
    let out = repair(&["--lang", "zh"]);
    let s = stdout(&out);
    assert!(s.trim_end().ends_with(&ready(Lang::Zh)), "{s}");
}
