//! `decide` for every case: no GPU, no driver, a driver too old, no toolkit, no Python,
//! PyTorch missing, broken, CPU-only or not built for the card, CUDA unavailable, wrong
//! results, a check's own failure, success with and without a speed-up, and Done's mix.

use super::*;
use cuda_setup_core::msg;
use cuda_setup_core::recommend::GpuFact;
use cuda_setup_core::verify::cuda::DeviceInfo;
use cuda_setup_core::verify::doctor::{Finding, GpuCheck, GpuSummary, TorchError, TorchState};
use cuda_setup_core::verify::gemm::{GemmReport, GemmResult};
use cuda_setup_core::verify::reference::{self, Precision};
use cuda_setup_core::verify::{Check, Checks, DriverReport};

fn smoke(status: Status, reason: Option<Message>, speed: Option<(f64, f64)>) -> SmokeReport {
    let gemm = GemmReport {
        results: speed
            .map(|(ms, cpu_ms)| GemmResult {
                precision: Precision::Fp32,
                size: 1024,
                ms,
                gflops: reference::gflops(1024, 1024, 1024, ms),
                iterations: 1,
                accuracy: reference::compare(&[], |_, _| 0.0, |_, _| (0.0, 1.0), true, 1.0),
                cpu_ms: Some(cpu_ms),
            })
            .into_iter()
            .collect(),
        ..Default::default()
    };
    SmokeReport {
        status,
        exit_code: status.exit_code(),
        reason: reason.clone(),
        driver: DriverReport::default(),
        device: (status == Status::Passed).then(|| DeviceInfo {
            index: 0,
            name: "NVIDIA GeForce RTX 3060".into(),
            compute_capability: "8.6".parse().unwrap(),
            multiprocessors: 28,
            memory_total_bytes: 12 << 30,
            pci_bus_id: String::new(),
        }),
        toolkit: None,
        checks: Checks {
            gemm: Check::new(status, reason, gemm),
            bandwidth: Check::new(Status::Skipped, None, Default::default()),
            cudnn: Check::new(Status::Skipped, None, Default::default()),
            nvcc: Check::new(Status::Skipped, None, Default::default()),
            build: Check::new(Status::Skipped, None, Default::default()),
        },
        elapsed_ms: 1,
    }
}

fn problem(key: &'static str) -> Finding {
    Finding {
        severity: Severity::Problem,
        message: Message::new(key),
        fix: None,
    }
}

/// A doctor report for an RTX 3060 with `torch` in /py, and `findings`.
fn doctor(torch: Option<TorchState>, findings: Vec<Finding>) -> DoctorReport {
    let status = if findings.iter().any(|f| f.severity == Severity::Problem) {
        Status::Failed
    } else {
        Status::Passed
    };
    DoctorReport {
        status,
        exit_code: status.exit_code(),
        python: Some("/py/bin/python3".into()),
        python_version: Some("3.11.9".into()),
        probe_error: None,
        torch,
        torch_error: None,
        driver: Some("560.94".parse().unwrap()),
        driver_cuda: Some("12.6".parse().unwrap()),
        gpus: vec![GpuSummary {
            name: "NVIDIA GeForce RTX 3060".into(),
            compute_capability: Some("8.6".parse().unwrap()),
        }],
        check: None,
        findings,
        recommended: None,
        pypi_mirror: None,
        extension: None,
        build_extension: None,
        elapsed_ms: 1,
    }
}

fn cuda_torch() -> TorchState {
    TorchState {
        version: "2.7.1+cu126".into(),
        cuda: Some("12.6".into()),
        cuda_available: true,
        device_name: Some("NVIDIA GeForce RTX 3060".into()),
        ..Default::default()
    }
}

fn facts(gpu: bool, driver: Option<&str>) -> Facts {
    Facts {
        os: cuda_setup_core::compat::Os::Windows,
        gpus: gpu
            .then(|| GpuFact {
                name: Some("NVIDIA GeForce RTX 3060".into()),
                compute_capability: "8.6".parse().unwrap(),
            })
            .into_iter()
            .collect(),
        driver: driver.map(|d| d.parse().unwrap()),
        driver_cuda: None,
        python: None,
        installed_toolkits: Vec::new(),
        unidentified_gpus: Vec::new(),
        notes: Vec::new(),
    }
}

fn inputs<'a>(
    scope: Scope,
    smoke: Option<&'a SmokeReport>,
    doctor: Option<&'a DoctorReport>,
    facts: Option<&'a Facts>,
) -> Inputs<'a> {
    Inputs {
        scope,
        goal: Goal::Pytorch,
        torch_expected: true,
        facts,
        smoke,
        doctor,
    }
}

fn reason_and_fix(v: Verdict) -> (Reason, Option<Fix>) {
    match v {
        Verdict::NotYet { reason, fix } => (reason, fix),
        v => panic!("not a failure: {v:?}"),
    }
}

#[test]
fn nothing_checked_yet_is_no_banner() {
    for scope in [Scope::Cuda, Scope::Torch] {
        assert_eq!(decide(&inputs(scope, None, None, None)), Verdict::Pending);
    }
    // A repair, with nothing run and nothing known: nothing to say either.
    let mut i = inputs(Scope::All, None, None, None);
    i.torch_expected = false;
    assert_eq!(decide(&i), Verdict::Pending);
}

#[test]
fn the_smoke_test_passed_with_its_speedup() {
    let s = smoke(Status::Passed, None, Some((2.0, 76.0)));
    let v = decide(&inputs(Scope::Cuda, Some(&s), None, None));
    assert_eq!(
        v,
        Verdict::Ready {
            works: Works::Cuda,
            gpu: "NVIDIA GeForce RTX 3060".into(),
            speedup: Some(38.0),
            measured: Measured::Reference,
        }
    );
    assert_eq!(
        headline(Lang::En, &v).unwrap(),
        "Your graphics card is ready for CUDA — RTX 3060; a matrix multiplication runs 38× faster than on the CPU"
    );
    // Not timed: the same verdict without a figure.
    let s = smoke(Status::Passed, None, None);
    let v = decide(&inputs(Scope::Cuda, Some(&s), None, None));
    assert!(matches!(v, Verdict::Ready { speedup: None, .. }));
    assert!(!headline(Lang::En, &v).unwrap().contains('×'));
}

#[test]
fn smoke_failures_name_their_fix() {
    let case = |status, key: &'static str| {
        let s = smoke(status, Some(Message::new(key)), None);
        reason_and_fix(decide(&inputs(Scope::Cuda, Some(&s), None, None)))
    };
    assert_eq!(case(Status::Skipped, "smoke_no_gpu"), (Reason::NoGpu, None));
    assert_eq!(
        case(Status::Skipped, "smoke_no_driver"),
        (Reason::NoDriver, Some(Fix::InstallDriver))
    );
    assert_eq!(
        case(Status::Failed, "smoke_driver_stub"),
        (Reason::NoDriver, Some(Fix::InstallDriver))
    );
    assert_eq!(
        case(Status::Failed, "smoke_toolkit_newer_than_driver"),
        (Reason::DriverTooOld, Some(Fix::InstallDriver))
    );
    assert_eq!(
        case(Status::Skipped, "smoke_no_toolkit"),
        (Reason::NoToolkit, Some(Fix::InstallToolkit))
    );
    assert_eq!(
        case(Status::Failed, "smoke_gemm_wrong"),
        (Reason::WrongResults, Some(Fix::InstallDriver))
    );
    // Anything else: its own words, and repair.
    let m = msg!("smoke_copy_corrupted");
    let s = smoke(Status::Failed, Some(m.clone()), None);
    assert_eq!(
        reason_and_fix(decide(&inputs(Scope::Cuda, Some(&s), None, None))),
        (Reason::Failed(m), Some(Fix::Repair))
    );
}

#[test]
fn torch_ok_with_the_speedup_torch_measured() {
    let mut d = doctor(Some(cuda_torch()), Vec::new());
    d.check = Some(GpuCheck {
        ok: true,
        speedup: Some(38.4),
        ..Default::default()
    });
    let v = decide(&inputs(Scope::Torch, None, Some(&d), None));
    assert_eq!(
        v,
        Verdict::Ready {
            works: Works::Torch,
            gpu: "NVIDIA GeForce RTX 3060".into(),
            speedup: Some(38.4),
            measured: Measured::Torch,
        }
    );
    // The card's short name and whole times (the Chinese text: tests/integration/gui_verdict.rs).
    assert_eq!(
        headline(Lang::Zh, &v).unwrap(),
        tf(
            Lang::Zh,
            "ui_verdict_ready_torch_speed",
            &[("gpu", &"RTX 3060"), ("times", &"38")]
        )
    );
    // A check that computed wrong numbers gives no speed-up to boast of.
    d.check.as_mut().unwrap().ok = false;
    d.findings.push(problem("doctor_gpu_check_wrong"));
    d.status = Status::Failed;
    assert_eq!(
        reason_and_fix(decide(&inputs(Scope::Torch, None, Some(&d), None))),
        (Reason::WrongResults, Some(Fix::InstallDriver))
    );
}

#[test]
fn an_extension_problem_does_not_stop_torch_being_ready() {
    // A toolkit of another CUDA major and too new a g++: extensions will not build, but
    // PyTorch itself uses the GPU.
    let d = doctor(
        Some(cuda_torch()),
        vec![
            problem("doctor_ext_major_mismatch"),
            problem("doctor_ext_gcc_too_new"),
        ],
    );
    assert_eq!(d.status, Status::Failed);
    assert!(matches!(
        decide(&inputs(Scope::Torch, None, Some(&d), None)),
        Verdict::Ready {
            works: Works::Torch,
            ..
        }
    ));
    // A torch problem next to them still decides.
    let mut d = d;
    d.findings.push(problem("doctor_arch_missing"));
    assert_eq!(
        reason_and_fix(decide(&inputs(Scope::Torch, None, Some(&d), None))),
        (Reason::TorchNotForGpu, Some(Fix::ReinstallTorch))
    );
}

#[test]
fn torch_problems_name_their_fix() {
    let with = |torch: Option<TorchState>, key: Option<&'static str>| {
        let d = doctor(torch, key.map(problem).into_iter().collect());
        reason_and_fix(decide(&inputs(Scope::Torch, None, Some(&d), None)))
    };
    // CPU-only torch on a machine with an NVIDIA card.
    let cpu = TorchState {
        version: "2.7.1+cpu".into(),
        ..Default::default()
    };
    assert_eq!(
        with(Some(cpu), Some("doctor_torch_cpu_build")),
        (Reason::CpuTorch, Some(Fix::ReinstallTorch))
    );
    assert_eq!(
        with(None, Some("doctor_torch_missing")),
        (Reason::TorchMissing, Some(Fix::InstallTorch))
    );
    assert_eq!(
        with(Some(cuda_torch()), Some("doctor_no_driver")),
        (Reason::NoDriver, Some(Fix::InstallDriver))
    );
    assert_eq!(
        with(Some(cuda_torch()), Some("doctor_torch_cuda_too_new")),
        (Reason::DriverTooOld, Some(Fix::InstallDriver))
    );
    assert_eq!(
        with(Some(cuda_torch()), Some("doctor_cuda_unavailable")),
        (Reason::CudaUnavailable, Some(Fix::InstallDriver))
    );
    assert_eq!(
        with(Some(cuda_torch()), Some("doctor_arch_missing")),
        (Reason::TorchNotForGpu, Some(Fix::ReinstallTorch))
    );
    assert_eq!(
        with(Some(cuda_torch()), Some("doctor_cudnn_unavailable")),
        (
            Reason::Failed(Message::new("doctor_cudnn_unavailable")),
            Some(Fix::ReinstallTorch)
        )
    );

    // torch that will not import.
    let mut d = doctor(None, vec![problem("doctor_torch_import_failed")]);
    d.torch_error = Some(TorchError {
        kind: "import_failed".into(),
        detail: "DLL load failed".into(),
    });
    assert_eq!(
        reason_and_fix(decide(&inputs(Scope::Torch, None, Some(&d), None))),
        (Reason::TorchBroken, Some(Fix::ReinstallTorch))
    );
    // No Python at all: nothing to click here, the page says how to get one.
    let mut d = doctor(None, vec![problem("doctor_python_not_found")]);
    d.python = None;
    assert_eq!(
        reason_and_fix(decide(&inputs(Scope::Torch, None, Some(&d), None))),
        (Reason::NoPython, None)
    );
    // No NVIDIA card: CPU torch is right, and no button can change that.
    let mut d = doctor(None, Vec::new());
    d.gpus.clear();
    d.status = Status::Skipped;
    assert_eq!(
        reason_and_fix(decide(&inputs(Scope::Torch, None, Some(&d), None))),
        (Reason::NoGpu, None)
    );
}

#[test]
fn done_says_pytorch_was_skipped_or_what_blocks_it() {
    // The PyTorch goal, never installed: "not installed yet", with the button.
    let f = facts(true, Some("560.94"));
    assert_eq!(
        reason_and_fix(decide(&inputs(Scope::All, None, None, Some(&f)))),
        (Reason::TorchMissing, Some(Fix::InstallTorch))
    );
    // Detection already knows worse: no driver, or no card.
    let f = facts(true, None);
    assert_eq!(
        reason_and_fix(decide(&inputs(Scope::All, None, None, Some(&f)))),
        (Reason::NoDriver, Some(Fix::InstallDriver))
    );
    let f = facts(false, None);
    assert_eq!(
        reason_and_fix(decide(&inputs(Scope::All, None, None, Some(&f)))),
        (Reason::NoGpu, None)
    );
    // A repair run with nothing checked: no banner, whatever the goal.
    let f = facts(true, Some("560.94"));
    let mut i = inputs(Scope::All, None, None, Some(&f));
    i.torch_expected = false;
    assert_eq!(decide(&i), Verdict::Pending);
}

#[test]
fn done_for_a_developer_puts_the_toolkit_first() {
    let passed = smoke(Status::Passed, None, Some((2.0, 76.0)));
    let failed = smoke(Status::Skipped, Some(msg!("smoke_no_toolkit")), None);
    let mut ok = doctor(Some(cuda_torch()), Vec::new());
    ok.check = Some(GpuCheck {
        ok: true,
        speedup: Some(12.0),
        ..Default::default()
    });
    let dev = |smoke, doctor| Inputs {
        goal: Goal::Developer,
        ..inputs(Scope::All, smoke, doctor, None)
    };
    // The toolkit did not work: that first, even with PyTorch fine.
    assert_eq!(
        reason_and_fix(decide(&dev(Some(&failed), Some(&ok)))),
        (Reason::NoToolkit, Some(Fix::InstallToolkit))
    );
    // Both work: PyTorch's verdict, with PyTorch's own figure.
    assert!(matches!(
        decide(&dev(Some(&passed), Some(&ok))),
        Verdict::Ready { works: Works::Torch, speedup: Some(s), .. } if s == 12.0
    ));
    // The toolkit works, PyTorch skipped: said so.
    assert_eq!(
        reason_and_fix(decide(&dev(Some(&passed), None))),
        (Reason::TorchMissing, Some(Fix::InstallTorch))
    );
}

#[test]
fn names_and_numbers_as_the_banner_prints_them() {
    assert_eq!(short_gpu_name("NVIDIA GeForce RTX 3060"), "RTX 3060");
    assert_eq!(short_gpu_name("NVIDIA RTX A4000"), "RTX A4000");
    assert_eq!(short_gpu_name("Tesla T4"), "Tesla T4");
    assert_eq!(times(38.4), "38");
    assert_eq!(times(3.46), "3.5");
}

#[test]
fn a_driver_detection_found_but_the_check_could_not_load_is_not_called_missing() {
    let s = smoke(Status::Skipped, Some(Message::new("smoke_no_driver")), None);
    let f = facts(true, Some("522.06"));
    assert_eq!(
        reason_and_fix(decide(&inputs(Scope::Cuda, Some(&s), None, Some(&f)))),
        (Reason::DriverNotLoaded, Some(Fix::InstallDriver))
    );
    let none = facts(true, None);
    assert_eq!(
        reason_and_fix(decide(&inputs(Scope::Cuda, Some(&s), None, Some(&none)))),
        (Reason::NoDriver, Some(Fix::InstallDriver))
    );
}
