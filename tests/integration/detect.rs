//! Detection on a sandboxed machine root (sysfs tree, toolkit folders, env vars) and
//! on this real machine, with real child processes (nvcc stand-ins, a real Python).
//! Unix only: the stand-ins are shell scripts; Windows runs are covered under Wine.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::detect::{self, Deadlines, GpuSource, cudnn, gpu, python, toolkit};
use cuda_setup_core::platform::Host;

fn fixture(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/detect")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// An executable shell script (a real child process, standing in for nvcc).
fn script(p: &Path, body: &str) {
    write(p, &format!("#!/bin/sh\n{body}\n"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// A stand-in nvcc that prints a real `nvcc --version` transcript.
fn fake_nvcc(bin: &Path, exe: &str, transcript: &str) {
    let text_file = bin.join("nvcc-version.txt");
    write(&text_file, transcript);
    script(&bin.join(exe), &format!("cat '{}'", text_file.display()));
}

/// A PCI device in a sysfs tree.
fn pci(root: &Path, bdf: &str, vendor: &str, device: &str, class: &str, driver: Option<&str>) {
    let d = root.join("sys/bus/pci/devices").join(bdf);
    write(&d.join("vendor"), &format!("{vendor}\n"));
    write(&d.join("device"), &format!("{device}\n"));
    write(&d.join("class"), &format!("{class}\n"));
    if let Some(drv) = driver {
        let target = root.join("sys/bus/pci/drivers").join(drv);
        std::fs::create_dir_all(&target).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&target, d.join("driver")).unwrap();
    }
}

fn env(pairs: &[(&str, String)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

#[test]
fn parsers_read_real_transcripts_and_headers() {
    let v = |s: &str| s.parse::<cuda_setup_core::version::Version>().unwrap();
    assert_eq!(
        toolkit::parse_nvcc_version(&fixture("nvcc-version-11.8.txt")),
        Some(v("11.8.89"))
    );
    assert_eq!(
        toolkit::parse_nvcc_version(&fixture("nvcc-version-12.4.txt")),
        Some(v("12.4.131"))
    );
    assert_eq!(
        toolkit::parse_nvcc_version(&fixture("nvcc-version-13.5.txt")),
        Some(v("13.5.37"))
    );
    assert_eq!(
        toolkit::parse_nvcc_version(&fixture("nvcc-version-13.5-windows.txt")),
        Some(v("13.5.37"))
    );
    assert_eq!(toolkit::parse_nvcc_version("nvcc: command not found"), None);
    assert_eq!(
        cudnn::parse_cudnn_header(&fixture("cudnn_version-8.9.h")),
        Some(v("8.9.7"))
    );
    assert_eq!(
        cudnn::parse_cudnn_header(&fixture("cudnn_version-9.27.h")),
        Some(v("9.27.0"))
    );
    assert_eq!(cudnn::parse_cudnn_header("#define CUDNN_MAJOR 9\n"), None);
    assert_eq!(
        toolkit::parse_version_json(&fixture("version.json-12.8-windows.json")),
        Some(v("12.8.2"))
    );
    assert_eq!(toolkit::parse_version_json("{}"), None);
    assert_eq!(
        toolkit::parse_version_txt(&fixture("version.txt-11.0.txt")),
        Some(v("11.0.207"))
    );
    assert_eq!(
        toolkit::parse_version_txt("CUDA Version 11.0.207"),
        Some(v("11.0.207"))
    );
}

#[test]
fn sysfs_finds_an_nvidia_card_without_a_driver_and_the_igpu() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    pci(
        r,
        "0000:00:02.0",
        "0x8086",
        "0x3e92",
        "0x030000",
        Some("i915"),
    ); // Intel UHD 630
    pci(r, "0000:01:00.0", "0x10de", "0x2684", "0x030000", None); // RTX 4090, no driver
    pci(r, "0000:01:00.1", "0x10de", "0x22ba", "0x040300", None); // its HDMI audio: not a GPU
    pci(
        r,
        "0000:02:00.0",
        "0x10de",
        "0x20b0",
        "0x030200",
        Some("nouveau"),
    ); // A100 3D controller
    pci(
        r,
        "0000:03:00.0",
        "0x10de",
        "0xffff",
        "0x030000",
        Some("nvidia"),
    ); // unknown model
    let host = Host::sandbox(Os::Linux, r, BTreeMap::new());
    let tables = Tables::embedded().unwrap();
    let found = gpu::probe(&host, &tables, Duration::from_secs(5)).unwrap();
    assert!(found.driver.is_none());
    let gpus = &found.gpus;
    assert_eq!(gpus.len(), 4, "{gpus:#?}");
    let igpu = &gpus[0];
    assert!(!igpu.cuda_capable && igpu.compute_capability.is_none());
    let rtx = &gpus[1];
    assert_eq!(
        (rtx.name.as_str(), rtx.source),
        ("GeForce RTX 4090", GpuSource::Pci)
    );
    assert_eq!(rtx.compute_capability.unwrap().to_string(), "8.9");
    assert_eq!(
        rtx.problem.as_ref().unwrap().key,
        cuda_setup_core::detect::GpuProblem::NoDriver
    );
    assert_eq!(gpus[2].compute_capability.unwrap().to_string(), "8.0");
    assert_eq!(gpus[2].kernel_driver.as_deref(), Some("nouveau"));
    assert!(gpus[3].cuda_capable && gpus[3].compute_capability.is_none());

    // What the recommender makes of it: the known cards count, the unknown one is named,
    // and the missing driver is said first.
    let report = detect::SystemReport {
        gpus: found.gpus.clone(),
        ..Default::default()
    };
    let facts = report.facts(Os::Linux);
    assert_eq!(facts.gpus.len(), 2);
    assert_eq!(
        facts.unidentified_gpus,
        vec!["PCI 0x10de:0xffff [10de:ffff]".to_string()]
    );
    assert_eq!(facts.notes[0].key, "gpu_no_driver");
}

#[test]
fn linux_toolkits_cudnn_and_path_order() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    // 12.4 with version.json, 11.8 known only by its nvcc, /usr/local/cuda → 12.4.
    let tk124 = r.join("usr/local/cuda-12.4");
    write(
        &tk124.join("version.json"),
        r#"{"cuda":{"name":"CUDA SDK","version":"12.4.1"}}"#,
    );
    fake_nvcc(
        &tk124.join("bin"),
        "nvcc",
        &fixture("nvcc-version-12.4.txt"),
    );
    write(
        &tk124.join("include/cudnn_version.h"),
        &fixture("cudnn_version-9.27.h"),
    );
    write(&tk124.join("lib64/libcudnn.so.9"), "");
    write(&tk124.join("lib64/libcudnn_ops.so.9"), "");
    let tk118 = r.join("usr/local/cuda-11.8");
    fake_nvcc(
        &tk118.join("bin"),
        "nvcc",
        &fixture("nvcc-version-11.8.txt"),
    );
    std::os::unix::fs::symlink(&tk124, r.join("usr/local/cuda")).unwrap();
    // A stray cuDNN 8 earlier on LD_LIBRARY_PATH.
    let stray = r.join("home/u/old-cudnn");
    write(&stray.join("lib/libcudnn.so.8"), "");
    write(
        &stray.join("include/cudnn_version.h"),
        &fixture("cudnn_version-8.9.h"),
    );

    let host = Host::sandbox(
        Os::Linux,
        r,
        env(&[
            (
                "PATH",
                format!("{}:/usr/bin:/bin", tk118.join("bin").display()),
            ),
            ("CUDA_HOME", r.join("usr/local/cuda").display().to_string()),
            (
                "LD_LIBRARY_PATH",
                format!(
                    "{}:{}",
                    stray.join("lib").display(),
                    tk124.join("lib64").display()
                ),
            ),
        ]),
    );
    let tks = toolkit::probe(&host, Duration::from_secs(5));
    let versions: Vec<String> = tks
        .iter()
        .map(|t| t.version.as_ref().unwrap().to_string())
        .collect();
    assert_eq!(versions, ["12.4.1", "11.8.89"], "{tks:#?}");
    let (t124, t118) = (&tks[0], &tks[1]);
    assert_eq!(
        t124.version_source,
        Some(toolkit::VersionSource::VersionJson)
    );
    assert_eq!(t118.version_source, Some(toolkit::VersionSource::Nvcc));
    assert!(
        t124.env_vars.contains(&"CUDA_HOME".to_string()),
        "the symlink resolves to 12.4"
    );
    assert!(t118.active && !t124.active, "PATH's nvcc is 11.8's");
    assert_eq!(t118.path_rank, Some(0));

    let found = cudnn::probe(&host, &tks);
    assert_eq!(found.len(), 2, "{found:#?}");
    let inside = found.iter().find(|c| c.toolkit.is_some()).unwrap();
    assert_eq!(inside.version.as_ref().unwrap().to_string(), "9.27.0");
    assert_eq!(inside.library_major, Some(9));
    let stray_copy = found.iter().find(|c| c.toolkit.is_none()).unwrap();
    assert_eq!(stray_copy.version.as_ref().unwrap().to_string(), "8.9.7");
    assert!(
        stray_copy.first_on_search_path && !inside.first_on_search_path,
        "the stray copy shadows ours"
    );
}

#[test]
fn windows_layout_with_cuda_path_and_13x_runtime_dir() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    let base = r.join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA");
    let v130 = base.join("v13.0");
    fake_nvcc(
        &v130.join("bin"),
        "nvcc.exe",
        &fixture("nvcc-version-13.5-windows.txt"),
    );
    write(&v130.join("bin/x64/cudnn64_9.dll"), "");
    write(&v130.join("bin/x64/cudnn_ops64_9.dll"), "");
    write(
        &v130.join("include/cudnn_version.h"),
        &fixture("cudnn_version-9.27.h"),
    );
    let v124 = base.join("v12.4");
    write(
        &v124.join("version.json"),
        r#"{"cuda":{"name":"CUDA SDK","version":"12.4.1"}}"#,
    );
    write(&v124.join("bin/nvcc.exe"), "");
    let host = Host::sandbox(
        Os::Windows,
        r,
        env(&[
            ("CUDA_PATH", v130.display().to_string()),
            ("CUDA_PATH_V13_0", v130.display().to_string()),
            ("CUDA_PATH_V12_4", v124.display().to_string()),
            (
                "Path",
                format!(
                    "{};{}",
                    v130.join("bin").display(),
                    v130.join("bin/x64").display()
                ),
            ),
        ]),
    );
    let tks = toolkit::probe(&host, Duration::from_secs(5));
    assert_eq!(tks.len(), 2, "{tks:#?}");
    let t13 = tks.iter().find(|t| t.path == v130).unwrap();
    assert_eq!(t13.version.as_ref().unwrap().to_string(), "13.5.37");
    assert_eq!(t13.runtime_dir, v130.join("bin").join("x64"));
    assert_eq!(t13.env_vars, ["CUDA_PATH", "CUDA_PATH_V13_0"]);
    assert!(t13.active);
    let t12 = tks.iter().find(|t| t.path == v124).unwrap();
    assert_eq!(t12.runtime_dir, v124.join("bin"));
    assert_eq!(t12.path_rank, None);
    let c = cudnn::probe(&host, &tks);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].libraries.len(), 2);
    assert!(c[0].first_on_search_path);
}

/// Writes a stand-in `torch` package: enough attributes for the probe to read.
fn fake_torch(dir: &Path, version: &str, cuda: Option<&str>, available: bool) {
    let cuda = cuda.map_or("None".to_string(), |c| format!("'{c}'"));
    write(
        &dir.join("torch/__init__.py"),
        &format!(
            "__version__ = '{version}'\n\
             class version:\n    cuda = {cuda}\n\
             class cuda:\n    @staticmethod\n    def is_available(): return {available}\n    \
             @staticmethod\n    def get_arch_list(): return ['sm_80', 'sm_86']\n\
             class backends:\n    class cudnn:\n        @staticmethod\n        def version(): return 91002\n",
            available = if available { "True" } else { "False" }
        ),
    );
}

/// `assets/python_probe.py` on a real interpreter (the other tests use the stand-in).
#[test]
#[ignore = "needs a real Python: scripts/real-artifacts.sh"]
fn real_python_probe_runs_a_real_interpreter() {
    let py = crate::support::python::real_sandboxed();
    let dir = tempfile::tempdir().unwrap();
    let bin = py.parent().unwrap().display().to_string();
    let probe = |pythonpath: &Path| {
        let host = Host::sandbox(
            Os::Linux,
            Path::new("/"),
            env(&[
                ("PATH", bin.clone()),
                ("PYTHONPATH", pythonpath.display().to_string()),
            ]),
        );
        python::probe_one(
            &host,
            py.clone(),
            python::PythonSource::Path,
            Duration::from_secs(20),
        )
    };

    // No torch at all.
    let none = probe(dir.path());
    assert!(none.probe_error.is_none(), "{none:?}");
    assert_eq!(none.version.as_ref().unwrap().major(), 3);
    assert!(none.torch.is_none());
    assert!(
        none.torch_error
            .as_deref()
            .unwrap()
            .contains("not installed")
    );

    // A CPU build: the users' most common failure, flagged.
    let cpu = dir.path().join("cpu");
    fake_torch(&cpu, "2.5.1+cpu", None, false);
    let p = probe(&cpu);
    assert_eq!(p.torch.as_ref().unwrap().version, "2.5.1+cpu");
    assert!(p.torch_cpu_build);

    // A CUDA build.
    let cu = dir.path().join("cu");
    fake_torch(&cu, "2.13.0+cu126", Some("12.6"), true);
    let p = probe(&cu);
    let t = p.torch.as_ref().unwrap();
    assert!(!p.torch_cpu_build);
    assert_eq!(
        (t.cuda.as_deref(), t.cuda_available, t.cudnn),
        (Some("12.6"), true, Some(91002))
    );
    assert_eq!(t.arch_list, ["sm_80", "sm_86"]);

    // A torch whose import hangs is stopped, not waited on forever.
    let hang = dir.path().join("hang");
    write(
        &hang.join("torch/__init__.py"),
        "import time\ntime.sleep(30)\n",
    );
    let host = Host::sandbox(
        Os::Linux,
        Path::new("/"),
        env(&[
            ("PATH", bin.clone()),
            ("PYTHONPATH", hang.display().to_string()),
        ]),
    );
    let p = python::probe_one(
        &host,
        py.clone(),
        python::PythonSource::Path,
        Duration::from_millis(1500),
    );
    assert!(
        matches!(
            p.probe_error,
            Some(cuda_setup_core::platform::RunError::Timeout { .. })
        ),
        "{p:?}"
    );
}

#[test]
fn a_sandbox_with_nothing_reports_every_probe() {
    let root = tempfile::tempdir().unwrap();
    let host = Host::sandbox(Os::Linux, root.path(), BTreeMap::new());
    let report = detect::detect(&host, &Tables::embedded().unwrap(), Deadlines::default());
    let names: Vec<&str> = report.probes.iter().map(|p| p.name).collect();
    assert_eq!(names, ["gpu", "python", "system", "toolkit"]);
    // No /sys at all: the GPU probe fails with its reason, the others carry on.
    let gpu = report.probes.iter().find(|p| p.name == "gpu").unwrap();
    assert!(
        !gpu.ok
            && gpu
                .error
                .as_ref()
                .unwrap()
                .to_string()
                .contains("PCI device list")
    );
    assert!(report.gpus.is_empty() && report.toolkits.is_empty() && report.pythons.is_empty());
    assert!(report.system.is_some());
}

/// End to end on this machine (no GPU here, nor on CI).
#[test]
fn detect_json_on_this_machine() {
    let out = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(["detect", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "system", "driver", "gpus", "toolkits", "cudnn", "pythons", "probes",
    ] {
        assert!(j.get(key).is_some(), "no {key}");
    }
    // Every GPU reported exists in sysfs; no invented card.
    let sys_nvidia = std::fs::read_dir("/sys/bus/pci/devices")
        .map(|rd| {
            rd.flatten()
                .filter(|e| {
                    std::fs::read_to_string(e.path().join("vendor"))
                        .is_ok_and(|v| v.trim() == "0x10de")
                })
                .count()
        })
        .unwrap_or(0);
    let reported = j["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["vendor"] == "nvidia")
        .count();
    assert!(
        reported <= sys_nvidia,
        "reported {reported} NVIDIA GPUs, sysfs has {sys_nvidia}"
    );
    if Path::new("/proc/driver/nvidia/version").exists() {
        return; // a machine with a driver: nothing more to say here
    }
    assert_eq!(j["driver"], serde_json::Value::Null);
    assert!(
        j["driver_error"]["detail"]
            .as_str()
            .unwrap()
            .contains("libnvidia-ml.so.1"),
        "{}",
        j["driver_error"]
    );

    // And `recommend` with no flags explains what is missing.
    let out = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(["recommend", "--json"])
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    if sys_nvidia == 0 {
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(j["blockers"][0]["key"], "no_nvidia_gpu");
    } else {
        assert_eq!(j["driver"]["action"], "install");
    }
}
