//! Findings and fixes, from probe outputs as real interpreters print them.

use super::*;

fn v(s: &str) -> Version {
    s.parse().unwrap()
}

fn rtx3060() -> GpuFacts {
    GpuFacts {
        driver: Some(v("551.78")),
        driver_cuda: Some(v("12.4")),
        gpus: vec![GpuSummary {
            name: "NVIDIA GeForce RTX 3060".into(),
            compute_capability: Some(ComputeCapability::new(8, 6)),
        }],
    }
}

fn probe(json: &str) -> DoctorProbe {
    parse_probe_output(&format!("some warning\nCUDA_SETUP_DOCTOR {json}\n")).unwrap()
}

fn run(os: Os, gpu: &GpuFacts, p: &DoctorProbe, mirror: Option<&PypiMirror>) -> Vec<Finding> {
    let tables = Tables::embedded().unwrap();
    let rec = recommendation(&tables, os, gpu, p.python.parse().ok().as_ref());
    let python = if os == Os::Windows {
        Path::new(r"C:\Users\Li Lei\AppData\Local\Programs\Python\Python311\python.exe")
    } else {
        Path::new("/home/li/venv/bin/python")
    };
    findings(&Context {
        os,
        python,
        probe: p,
        gpu,
        recommendation: Some(&rec),
        mirror,
    })
}

fn problem<'a>(f: &'a [Finding], key: &str) -> &'a Finding {
    f.iter()
        .find(|x| x.message.key == key)
        .unwrap_or_else(|| panic!("no {key} in {f:#?}"))
}

#[test]
fn a_cpu_build_on_a_gpu_machine_is_replaced_with_the_cuda_wheel() {
    let p = probe(
        r#"{"python": "3.11.7", "executable": "x", "torch": {"version": "2.5.1+cpu", "cuda": null, "cuda_available": false}, "torch_error": null, "check": null}"#,
    );
    let mirror: PypiMirror = "tsinghua".parse().unwrap();
    let f = run(Os::Windows, &rtx3060(), &p, Some(&mirror));
    let cpu = problem(&f, "doctor_torch_cpu_build");
    assert_eq!(cpu.severity, Severity::Problem);
    let fix = cpu.fix.as_ref().unwrap();
    assert_eq!(fix.message.key, "fix_reinstall_torch");
    assert_eq!(fix.commands.len(), 2);
    // The interpreter that was examined, quoted (its path has a space).
    assert_eq!(
        fix.commands[0],
        r#""C:\Users\Li Lei\AppData\Local\Programs\Python\Python311\python.exe" -m pip uninstall -y torch torchvision torchaudio"#
    );
    let install = &fix.commands[1];
    assert!(install.contains(" -m pip install torch=="), "{install}");
    // A CUDA 12 wheel this driver (CUDA 12.4) runs, from PyTorch's index; the mirror only
    // as an extra index (as -i it would replace PyTorch's index: the CPU build again).
    assert!(
        install.contains("--index-url https://download.pytorch.org/whl/cu12"),
        "{install}"
    );
    assert!(install.ends_with("--extra-index-url https://pypi.tuna.tsinghua.edu.cn/simple"));
    assert!(!install.contains(" -i "));
    assert_eq!(status_of(&f, false), Status::Failed);
}

#[test]
fn torch_cuda_against_the_driver() {
    let probe_for = |cuda: &str| {
        probe(&format!(
            r#"{{"python": "3.12.3", "torch": {{"version": "2.9.0+cu{}", "cuda": "{cuda}", "cuda_available": true, "arch_list": ["sm_80", "sm_86", "sm_90"], "device_name": "NVIDIA GeForce RTX 3060", "device_capability": [8, 6], "cudnn": 91002, "cudnn_available": true}}, "torch_error": null, "check": null}}"#,
            cuda.replace('.', "")
        ))
    };
    // Same as the driver: fine.
    let f = run(Os::Linux, &rtx3060(), &probe_for("12.4"), None);
    assert_eq!(problem(&f, "doctor_torch_cuda_ok").severity, Severity::Ok);
    assert_eq!(
        problem(&f, "doctor_arch_ok").message.param("sm"),
        Some("sm_86")
    );
    assert_eq!(
        problem(&f, "doctor_cudnn_ok").message.param("cudnn"),
        Some("9.10.2")
    );
    // Newer minor: minor-version compatibility, a note.
    let f = run(Os::Linux, &rtx3060(), &probe_for("12.8"), None);
    assert_eq!(
        problem(&f, "doctor_torch_cuda_minor_compat").severity,
        Severity::Info
    );
    assert_eq!(status_of(&f, false), Status::Passed);
    // Newer major: a problem, fixed by the wheel for today's driver.
    let f = run(Os::Linux, &rtx3060(), &probe_for("13.0"), None);
    let p = problem(&f, "doctor_torch_cuda_too_new");
    let fix = p.fix.as_ref().unwrap();
    assert_eq!(fix.message.key, "fix_torch_for_driver");
    assert!(fix.commands[0].starts_with("/home/li/venv/bin/python -m pip uninstall"));
    assert!(fix.commands[1].contains("/whl/cu12"), "{:?}", fix.commands);
}

#[test]
fn a_gpu_missing_from_the_wheels_arch_list() {
    let p = probe(
        r#"{"python": "3.11.7", "torch": {"version": "2.3.1+cu121", "cuda": "12.1", "cuda_available": true, "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], "device_name": "NVIDIA GeForce RTX 5090", "device_capability": [12, 0]}, "torch_error": null, "check": {"size": 2048, "error": "RuntimeError: CUDA error: no kernel image is available for execution on the device"}}"#,
    );
    let gpu = GpuFacts {
        driver: Some(v("576.02")),
        driver_cuda: Some(v("12.9")),
        gpus: vec![GpuSummary {
            name: "NVIDIA GeForce RTX 5090".into(),
            compute_capability: Some(ComputeCapability::new(12, 0)),
        }],
    };
    let f = run(Os::Windows, &gpu, &p, None);
    let arch = problem(&f, "doctor_arch_missing");
    assert_eq!(arch.message.param("sm"), Some("sm_120"));
    let fix = arch.fix.as_ref().unwrap();
    // The recommender's wheel carries Blackwell code: cu128 or newer.
    assert!(fix.commands[1].contains("/whl/cu12"), "{:?}", fix.commands);
    assert!(
        !fix.commands[1].contains("/whl/cu121"),
        "{:?}",
        fix.commands
    );
    let check = problem(&f, "doctor_gpu_check_failed");
    assert!(check.fix.is_some(), "no kernel image: reinstall");
}

#[test]
fn arch_lists() {
    let l = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let cc = ComputeCapability::new;
    assert!(arch_covers(&l(&["sm_80", "sm_86"]), cc(8, 9))); // sm_86 code runs on 8.9
    assert!(!arch_covers(&l(&["sm_80", "sm_86"]), cc(9, 0)));
    assert!(arch_covers(&l(&["sm_80", "compute_80"]), cc(9, 0))); // PTX JIT
    assert!(!arch_covers(&l(&["sm_90a"]), cc(9, 1)));
    assert!(arch_covers(&l(&["sm_90a"]), cc(9, 0)));
    assert!(arch_covers(&l(&["sm_120"]), cc(12, 0)));
    assert!(!arch_covers(&l(&["garbage"]), cc(8, 6)));
}

#[test]
fn no_driver_and_unavailable_cuda() {
    let p = probe(
        r#"{"python": "3.11.7", "torch": {"version": "2.5.1+cu124", "cuda": "12.4", "cuda_available": false, "cuda_error": "RuntimeError: Found no NVIDIA driver on your system."}, "torch_error": null, "check": null}"#,
    );
    let gpu = GpuFacts {
        driver: None,
        driver_cuda: None,
        gpus: rtx3060().gpus,
    };
    let f = run(Os::Windows, &gpu, &p, None);
    let d = problem(&f, "doctor_no_driver");
    assert_eq!(d.fix.as_ref().unwrap().message.key, "fix_install_driver");
    assert!(
        d.fix.as_ref().unwrap().message.param("minimum").unwrap() >= "5",
        "a driver version"
    );
    // With a driver but CUDA still unavailable, torch's own reason is shown.
    let f = run(Os::Windows, &rtx3060(), &p, None);
    let u = problem(&f, "doctor_cuda_unavailable");
    assert!(
        u.message
            .param("detail")
            .unwrap()
            .contains("Found no NVIDIA driver")
    );
}

#[test]
fn import_failures_and_missing_torch() {
    let p = probe(
        r#"{"python": "3.11.7", "torch": null, "torch_error": {"kind": "import_failed", "detail": "OSError: [WinError 126] The specified module could not be found. Error loading \"c10.dll\" or one of its dependencies."}, "check": null}"#,
    );
    let f = run(Os::Windows, &rtx3060(), &p, None);
    let i = problem(&f, "doctor_torch_import_failed");
    let fix = i.fix.as_ref().unwrap();
    assert_eq!(fix.message.key, "fix_vc_redist");
    assert_eq!(fix.commands.len(), 2);

    let p = probe(
        r#"{"python": "3.11.7", "torch": null, "torch_error": {"kind": "not_installed", "detail": "ModuleNotFoundError: No module named 'torch'"}, "check": null}"#,
    );
    let f = run(Os::Linux, &rtx3060(), &p, None);
    let m = problem(&f, "doctor_torch_missing");
    let fix = m.fix.as_ref().unwrap();
    assert_eq!(fix.message.key, "fix_install_torch");
    assert_eq!(fix.commands.len(), 1, "nothing to uninstall");
    // No GPU: the CPU wheel.
    let f = run(Os::Linux, &GpuFacts::default(), &p, None);
    let fix = problem(&f, "doctor_torch_missing").fix.clone().unwrap();
    assert!(fix.commands[0].contains("/whl/cpu"));
    assert!(f.iter().any(|x| x.message.key == "doctor_no_gpu"));
}

#[test]
fn a_passing_gpu_check_reports_the_speedup() {
    let p = probe(
        r#"{"python": "3.12.3", "torch": {"version": "2.9.0+cu126", "cuda": "12.6", "cuda_available": true, "arch_list": ["sm_86"], "device_capability": [8, 6], "cudnn": 91002, "cudnn_available": true}, "torch_error": null, "check": {"size": 2048, "moved_to": "cuda:0", "tensor_ok": true, "cpu_ms": 180.5, "gpu_ms": 2.25, "speedup": 80.2, "max_error": 1.1e-7, "tolerance": 0.001, "ok": true, "error": null}}"#,
    );
    let f = run(Os::Linux, &rtx3060(), &p, None);
    let ok = problem(&f, "doctor_gpu_check_ok");
    assert_eq!(ok.message.param("speedup"), Some("80.2"));
    assert_eq!(ok.message.param("device"), Some("cuda:0"));
    assert_eq!(status_of(&f, false), Status::Passed);
    assert!(f.iter().all(|x| x.severity != Severity::Problem), "{f:#?}");
}

#[test]
fn a_cpu_build_without_a_gpu_is_fine() {
    let p = probe(
        r#"{"python": "3.11.7", "torch": {"version": "2.5.1+cpu", "cuda": null}, "torch_error": null, "check": null}"#,
    );
    let f = run(Os::Linux, &GpuFacts::default(), &p, None);
    assert!(f.iter().all(|x| x.severity != Severity::Problem), "{f:#?}");
    assert_eq!(status_of(&f, true), Status::Skipped);
}

#[test]
fn mirrors_and_quoting() {
    let m = |s: &str| s.parse::<PypiMirror>();
    assert_eq!(
        m("Tsinghua").unwrap().url,
        "https://pypi.tuna.tsinghua.edu.cn/simple"
    );
    assert_eq!(
        m("aliyun").unwrap().url,
        "https://mirrors.aliyun.com/pypi/simple/"
    );
    assert_eq!(
        m("ustc").unwrap().url,
        "https://mirrors.ustc.edu.cn/pypi/simple"
    );
    assert_eq!(m("https://pypi.lab.local/simple").unwrap().name, "custom");
    assert!(m("douban").is_err());
    let lan = m("http://10.0.0.5:8080/simple").unwrap();
    let c = install_command(
        Path::new("python"),
        "pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124",
        Some(&lan),
    );
    assert_eq!(
        c,
        "python -m pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124 --extra-index-url http://10.0.0.5:8080/simple --trusted-host 10.0.0.5"
    );
    assert_eq!(
        shell_quote(Path::new("/usr/bin/python3")),
        "/usr/bin/python3"
    );
    assert_eq!(
        shell_quote(Path::new(r"C:\Program Files\Python312\python.exe")),
        r#""C:\Program Files\Python312\python.exe""#
    );
}

#[test]
fn probe_output_is_found_among_noise() {
    assert!(parse_probe_output("Traceback (most recent call last):\n").is_none());
    let p = probe(r#"{"python": "3.8.10", "torch": null, "torch_error": null, "check": null}"#);
    assert_eq!(p.python, "3.8.10");
}
