//! `decide` for every case: no GPU, no driver, a driver too old, no toolkit, no Python,
//! PyTorch missing, broken, CPU-only or not built for the card, CUDA unavailable, wrong
//! results, a check's own failure, success with and without a speed-up, Done's mix; and
//! `render`: one sentence in the CLI and the wizard.

use super::*;
use crate::msg;
use crate::recommend::GpuFact;
use crate::verify::cuda::DeviceInfo;
use crate::verify::doctor::{Finding, GpuCheck, GpuSummary, TorchError, TorchState};
use crate::verify::gemm::{GemmReport, GemmResult};
use crate::verify::reference::{self, Precision};
use crate::verify::{Check, Checks, DriverReport};

fn smoke(status: Status, outcome: SmokeOutcome, speed: Option<(f64, f64)>) -> SmokeReport {
    let reason = (status != Status::Passed).then(|| msg!("smoke_cuda_call_failed", call = "x"));
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
        outcome,
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

fn problem(kind: FindingKind) -> Finding {
    Finding {
        kind,
        severity: Severity::Problem,
        message: Message::new("doctor_no_gpu"),
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
        packages: None,
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
        os: crate::compat::Os::Windows,
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
        host_kind: Default::default(),
        free_threaded: false,
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
        run: RunFacts::default(),
    }
}

fn cause_and_fix(v: Verdict) -> (Cause, Fix) {
    match v {
        Verdict::NotYet { problem, .. } => (problem.cause, problem.fix),
        v => panic!("not a failure: {v:?}"),
    }
}

fn manual(key: &'static str) -> Fix {
    Fix::manual(key)
}

fn headline(v: &Verdict) -> String {
    render(v, Lang::En, Surface::Cli).unwrap().headline
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
    assert_eq!(render(&Verdict::Pending, Lang::En, Surface::Cli), None);
}

#[test]
fn the_smoke_test_passed_with_its_speedup() {
    let s = smoke(Status::Passed, SmokeOutcome::Passed, Some((2.0, 76.0)));
    let v = decide(&inputs(Scope::Cuda, Some(&s), None, None));
    assert_eq!(
        v,
        Verdict::Ready {
            works: Works::Cuda,
            gpu: "NVIDIA GeForce RTX 3060".into(),
            speedup: Some(38.0),
            measured: Measured::Reference,
            secondary: Vec::new(),
        }
    );
    assert_eq!(
        headline(&v),
        "Your graphics card is ready for CUDA — RTX 3060; a matrix multiplication runs 38× faster than on the CPU"
    );
    // Not timed: the same verdict without a figure.
    let s = smoke(Status::Passed, SmokeOutcome::Passed, None);
    let v = decide(&inputs(Scope::Cuda, Some(&s), None, None));
    assert!(matches!(v, Verdict::Ready { speedup: None, .. }));
    assert!(!headline(&v).contains('×'));
}

#[test]
fn smoke_failures_name_their_fix() {
    let case = |status, outcome| {
        let s = smoke(status, outcome, None);
        cause_and_fix(decide(&inputs(Scope::Cuda, Some(&s), None, None)))
    };
    use SmokeOutcome as O;
    assert_eq!(case(Status::Skipped, O::NoGpu), (Cause::NoGpu, Fix::None));
    assert_eq!(
        case(Status::Skipped, O::NoDriver),
        (Cause::NoDriver, Fix::InstallDriver)
    );
    assert_eq!(
        case(Status::Failed, O::DriverStub),
        (Cause::DriverStub, manual("verdict_how_stub"))
    );
    assert_eq!(
        case(Status::Failed, O::ToolkitNewerThanDriver),
        (Cause::DriverTooOld, Fix::InstallDriver)
    );
    assert_eq!(
        case(Status::Skipped, O::NoToolkit),
        (Cause::NoToolkit, Fix::InstallToolkit)
    );
    assert_eq!(
        case(Status::Failed, O::GemmWrong),
        (Cause::WrongResults, manual("verdict_how_wrong_results"))
    );
    assert_eq!(
        case(Status::Failed, O::CannotLink),
        (Cause::CannotLink, Fix::Repair)
    );
}

/// Repair's audit (repair/checks.rs) finds missing link names (`repair_toolkit_cannot_link`)
/// and nothing else a smoke test can fail on: no other outcome sends the user there.
#[test]
fn only_what_repair_finds_is_sent_to_repair() {
    use SmokeOutcome as O;
    let all = [
        O::NoGpu,
        O::NoDriver,
        O::DriverFailed,
        O::DriverStub,
        O::NoSuchDevice,
        O::NoToolkit,
        O::ToolkitNewerThanDriver,
        O::ToolkitLacksArch,
        O::LibraryMissing,
        O::CudaCallFailed,
        O::GemmWrong,
        O::CopyCorrupted,
        O::Cudnn,
        O::Nvcc,
        O::CannotLink,
        O::BuildFailed,
        O::Timeout,
        O::Internal,
    ];
    for o in all {
        let (_, fix) = smoke_problem(o).unwrap();
        assert_eq!(fix == Fix::Repair, o == O::CannotLink, "{o:?}");
    }
    assert_eq!(smoke_problem(O::Passed), None);
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
            secondary: Vec::new(),
        }
    );
    // The card's short name and whole times.
    assert_eq!(
        render(&v, Lang::Zh, Surface::Cli).unwrap().headline,
        i18n::tf(
            Lang::Zh,
            "verdict_ready_torch_speed",
            &[("gpu", &"RTX 3060"), ("times", &"38")]
        )
    );
    // A check that computed wrong numbers gives no speed-up to boast of.
    d.check.as_mut().unwrap().ok = false;
    d.findings.push(problem(FindingKind::GpuCheckWrong));
    d.status = Status::Failed;
    assert_eq!(
        cause_and_fix(decide(&inputs(Scope::Torch, None, Some(&d), None))),
        (Cause::WrongResults, manual("verdict_how_wrong_results"))
    );
}

#[test]
fn an_extension_problem_is_an_amber_line_beside_a_working_torch() {
    // A toolkit of another CUDA major and too new a g++: extensions will not build, but
    // PyTorch itself uses the GPU.
    let d = doctor(
        Some(cuda_torch()),
        vec![
            problem(FindingKind::ExtMajorMismatch),
            problem(FindingKind::ExtCompilerTooNew),
        ],
    );
    assert_eq!(d.status, Status::Failed);
    let v = decide(&inputs(Scope::Torch, None, Some(&d), None));
    let Verdict::Ready {
        works: Works::Torch,
        secondary,
        ..
    } = &v
    else {
        panic!("{v:?}")
    };
    assert_eq!(secondary.len(), 1);
    assert_eq!(secondary[0].cause, Cause::ExtensionBuild);
    let s = render(&v, Lang::En, Surface::Wizard { button: false }).unwrap();
    assert!(
        s.headline
            .starts_with("Your graphics card is ready for PyTorch")
    );
    assert!(s.secondary[0].starts_with("Also: CUDA extensions"), "{s:?}");
    // A torch problem next to them still decides.
    let mut d = d;
    d.findings.push(problem(FindingKind::ArchMissing));
    assert_eq!(
        cause_and_fix(decide(&inputs(Scope::Torch, None, Some(&d), None))),
        (Cause::TorchNotForGpu, Fix::ReinstallTorch)
    );
}

#[test]
fn torch_problems_name_their_fix() {
    let with = |torch: Option<TorchState>, kind: Option<FindingKind>| {
        let d = doctor(torch, kind.map(problem).into_iter().collect());
        cause_and_fix(decide(&inputs(Scope::Torch, None, Some(&d), None)))
    };
    use FindingKind as K;
    let cpu = TorchState {
        version: "2.7.1+cpu".into(),
        ..Default::default()
    };
    assert_eq!(
        with(Some(cpu), Some(K::TorchCpuBuild)),
        (Cause::CpuTorch, Fix::ReinstallTorch)
    );
    assert_eq!(
        with(None, Some(K::TorchMissing)),
        (Cause::TorchMissing, Fix::InstallTorch)
    );
    assert_eq!(
        with(Some(cuda_torch()), Some(K::NoDriver)),
        (Cause::NoDriver, Fix::InstallDriver)
    );
    assert_eq!(
        with(Some(cuda_torch()), Some(K::TorchCudaTooNew)),
        (Cause::DriverTooOld, Fix::InstallDriver)
    );
    assert_eq!(
        with(Some(cuda_torch()), Some(K::CudaUnavailable)),
        (Cause::CudaUnavailable, manual("verdict_how_restart"))
    );
    assert_eq!(
        with(Some(cuda_torch()), Some(K::ArchMissing)),
        (Cause::TorchNotForGpu, Fix::ReinstallTorch)
    );
    assert_eq!(
        with(Some(cuda_torch()), Some(K::CudnnUnavailable)),
        (Cause::TorchCudnnMissing, Fix::ReinstallTorch)
    );
    // torch that will not import.
    let mut d = doctor(None, vec![problem(K::TorchImportFailed)]);
    d.torch_error = Some(TorchError {
        kind: "import_failed".into(),
        detail: "DLL load failed".into(),
    });
    assert_eq!(
        cause_and_fix(decide(&inputs(Scope::Torch, None, Some(&d), None))),
        (Cause::TorchBroken, Fix::ReinstallTorch)
    );
    // No Python at all: what to do, in words.
    let mut d = doctor(None, vec![problem(K::PythonNotFound)]);
    d.python = None;
    assert_eq!(
        cause_and_fix(decide(&inputs(Scope::Torch, None, Some(&d), None))),
        (Cause::NoPython, manual("verdict_how_python"))
    );
    // No NVIDIA card: CPU torch is right, and nothing can change that.
    let mut d = doctor(None, Vec::new());
    d.gpus.clear();
    d.status = Status::Skipped;
    assert_eq!(
        cause_and_fix(decide(&inputs(Scope::Torch, None, Some(&d), None))),
        (Cause::NoGpu, Fix::None)
    );
}

#[test]
fn done_says_pytorch_was_skipped_or_what_blocks_it() {
    let f = facts(true, Some("560.94"));
    assert_eq!(
        cause_and_fix(decide(&inputs(Scope::All, None, None, Some(&f)))),
        (Cause::TorchMissing, Fix::InstallTorch)
    );
    let f = facts(true, None);
    assert_eq!(
        cause_and_fix(decide(&inputs(Scope::All, None, None, Some(&f)))),
        (Cause::NoDriver, Fix::InstallDriver)
    );
    let f = facts(false, None);
    assert_eq!(
        cause_and_fix(decide(&inputs(Scope::All, None, None, Some(&f)))),
        (Cause::NoGpu, Fix::None)
    );
    let f = facts(true, Some("560.94"));
    let mut i = inputs(Scope::All, None, None, Some(&f));
    i.torch_expected = false;
    assert_eq!(decide(&i), Verdict::Pending);
}

#[test]
fn done_for_a_developer_puts_the_toolkit_first() {
    let passed = smoke(Status::Passed, SmokeOutcome::Passed, Some((2.0, 76.0)));
    let failed = smoke(Status::Skipped, SmokeOutcome::NoToolkit, None);
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
    assert_eq!(
        cause_and_fix(decide(&dev(Some(&failed), Some(&ok)))),
        (Cause::NoToolkit, Fix::InstallToolkit)
    );
    assert!(matches!(
        decide(&dev(Some(&passed), Some(&ok))),
        Verdict::Ready { works: Works::Torch, speedup: Some(s), .. } if s == 12.0
    ));
    assert_eq!(
        cause_and_fix(decide(&dev(Some(&passed), None))),
        (Cause::TorchMissing, Fix::InstallTorch)
    );
}

#[test]
fn for_the_pytorch_goal_a_failed_smoke_test_is_an_amber_line_not_the_headline() {
    let build = smoke(Status::Failed, SmokeOutcome::CannotLink, Some((2.0, 26.0)));
    let mut ok = doctor(Some(cuda_torch()), Vec::new());
    ok.check = Some(GpuCheck {
        ok: true,
        speedup: Some(13.0),
        ..Default::default()
    });
    let v = decide(&inputs(Scope::All, Some(&build), Some(&ok), None));
    let Verdict::Ready {
        works: Works::Torch,
        secondary,
        ..
    } = &v
    else {
        panic!("{v:?}")
    };
    assert_eq!(secondary[0].cause, Cause::CannotLink);
    assert_eq!(secondary[0].layer, Layer::Toolkit);
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
    let s = smoke(Status::Skipped, SmokeOutcome::NoDriver, None);
    let f = facts(true, Some("522.06"));
    assert_eq!(
        cause_and_fix(decide(&inputs(Scope::Cuda, Some(&s), None, Some(&f)))),
        (Cause::DriverNotLoaded, manual("verdict_how_restart"))
    );
    let none = facts(true, None);
    assert_eq!(
        cause_and_fix(decide(&inputs(Scope::Cuda, Some(&s), None, Some(&none)))),
        (Cause::NoDriver, Fix::InstallDriver)
    );
}

/// One sentence: the CLI and the wizard say the same headline; the next step names a
/// command in a terminal and the button in the wizard, never the other's.
#[test]
fn the_cli_and_the_wizard_say_the_same_sentence() {
    let s = smoke(Status::Failed, SmokeOutcome::CannotLink, None);
    let v = decide(&Inputs {
        goal: Goal::Developer,
        ..inputs(Scope::Cuda, Some(&s), None, None)
    });
    for lang in [Lang::En, Lang::Zh] {
        let cli = render(&v, lang, Surface::Cli).unwrap();
        let gui = render(&v, lang, Surface::Wizard { button: true }).unwrap();
        assert_eq!(cli.headline, gui.headline);
        assert!(
            cli.next
                .as_deref()
                .unwrap()
                .contains("cuda-setup repair --fix")
        );
        let next = gui.next.unwrap();
        assert!(!next.contains("cuda-setup"), "{next}");
        assert!(next.contains(&i18n::t(lang, "ui_fix_repair")), "{next}");
    }
    // The cause in plain words: not the check's sentence (its own "Failed:" prefix, its
    // path, its command line).
    let zh = render(&v, Lang::Zh, Surface::Cli).unwrap().headline;
    assert_eq!(
        zh,
        i18n::tf(
            Lang::Zh,
            "verdict_not_yet",
            &[("cause", &cause_text(Lang::Zh, Cause::CannotLink))]
        )
    );
    // A cause nothing here fixes says so, in both.
    let s = smoke(Status::Failed, SmokeOutcome::LibraryMissing, None);
    let v = decide(&inputs(Scope::Cuda, Some(&s), None, None));
    for at in [Surface::Cli, Surface::Wizard { button: false }] {
        let next = render(&v, Lang::En, at).unwrap().next.unwrap();
        assert!(
            next.starts_with("This cannot be fixed automatically."),
            "{next}"
        );
    }
}

/// A driver this run installed: before the restart the checks cannot use it and
/// detection may not see it; the verdict says a restart is needed, never "not installed".
#[test]
fn a_driver_this_run_installed_waits_for_the_restart() {
    let no_driver = facts(true, None);
    let restart = RunFacts {
        driver_installed: true,
        restart_pending: true,
    };
    // The run stopped for the restart: nothing else was checked.
    let mut i = inputs(Scope::All, None, None, Some(&no_driver));
    i.run = restart;
    assert_eq!(
        cause_and_fix(decide(&i)),
        (Cause::RestartNeeded, Fix::Restart)
    );
    // Installed without a restart asked for, but not seen yet: the same.
    i.run = RunFacts {
        driver_installed: true,
        restart_pending: false,
    };
    let v = decide(&i);
    assert_eq!(
        cause_and_fix(v.clone()),
        (Cause::RestartNeeded, Fix::Restart)
    );
    assert_eq!(v.problem().unwrap().layer, Layer::Driver);
    let cli = render(&v, Lang::En, Surface::Cli).unwrap();
    assert_eq!(
        cli.next.as_deref(),
        Some("Restart the computer, then run the same command again to finish.")
    );
    let gui = render(&v, Lang::En, Surface::Wizard { button: false }).unwrap();
    assert!(gui.next.unwrap().starts_with("Next: restart the computer."));
    assert!(!headline(&v).contains("not installed"), "{}", headline(&v));
    // Without this run's driver, no driver is what it is.
    i.run = RunFacts::default();
    assert_eq!(cause_and_fix(decide(&i)).0, Cause::NoDriver);
    // A check that works after the install is believed.
    let s = smoke(Status::Passed, SmokeOutcome::Passed, None);
    let mut i = inputs(Scope::Cuda, Some(&s), None, None);
    i.run = RunFacts {
        driver_installed: true,
        restart_pending: false,
    };
    assert!(matches!(decide(&i), Verdict::Ready { .. }));
}

/// Inside WSL2 (#32) the driver is the Windows one: "no driver" and "driver not loaded"
/// send the user to Windows, then `wsl --shutdown` — never to install a driver here, nor
/// to a button that would plan one.
#[test]
fn in_wsl2_a_driver_problem_is_fixed_on_windows() {
    let wsl = |driver: Option<&str>| Facts {
        os: crate::compat::Os::Linux,
        host_kind: crate::recommend::HostKind::Wsl2,
        ..facts(true, driver)
    };
    let on_windows = manual("verdict_how_wsl_driver");
    let no_driver = smoke(Status::Skipped, SmokeOutcome::NoDriver, None);
    let (none, found) = (wsl(None), wsl(Some("512.95")));
    let cases = [
        (
            inputs(Scope::Cuda, Some(&no_driver), None, Some(&none)),
            Cause::NoDriver,
        ),
        (
            inputs(Scope::Cuda, Some(&no_driver), None, Some(&found)),
            Cause::DriverNotLoaded,
        ),
        // Done with nothing checked: what detection saw.
        (inputs(Scope::All, None, None, Some(&none)), Cause::NoDriver),
    ];
    for (i, cause) in cases {
        let v = decide(&i);
        assert_eq!(cause_and_fix(v.clone()), (cause, on_windows.clone()));
        for lang in [Lang::En, Lang::Zh] {
            let cli = render(&v, lang, Surface::Cli).unwrap().next.unwrap();
            assert!(cli.contains("wsl --shutdown"), "{cli}");
            assert!(!cli.contains("cuda-setup install"), "{cli}");
            let gui = render(&v, lang, Surface::Wizard { button: true })
                .unwrap()
                .next
                .unwrap();
            assert!(gui.contains("wsl --shutdown"), "{gui}");
            assert!(
                !gui.contains(&i18n::t(lang, "ui_fix_install_driver")),
                "{gui}"
            );
        }
        let en = render(&v, Lang::En, Surface::Cli).unwrap().next.unwrap();
        assert!(
            en.contains("on Windows") && en.contains("never inside WSL2"),
            "{en}"
        );
    }
    // A driver too old for PyTorch's CUDA: updated on Windows too.
    let d = doctor(
        Some(cuda_torch()),
        vec![problem(FindingKind::TorchCudaTooNew)],
    );
    let v = decide(&inputs(Scope::Torch, None, Some(&d), Some(&found)));
    assert_eq!(cause_and_fix(v), (Cause::DriverTooOld, on_windows.clone()));
    // The same facts on a plain Linux PC keep their own fixes.
    let native = Facts {
        host_kind: crate::recommend::HostKind::Native,
        ..wsl(None)
    };
    assert_eq!(
        cause_and_fix(decide(&inputs(
            Scope::Cuda,
            Some(&no_driver),
            None,
            Some(&native)
        ))),
        (Cause::NoDriver, Fix::InstallDriver)
    );
    let native = Facts {
        host_kind: crate::recommend::HostKind::Native,
        ..found
    };
    assert_eq!(
        cause_and_fix(decide(&inputs(
            Scope::Cuda,
            Some(&no_driver),
            None,
            Some(&native)
        ))),
        (Cause::DriverNotLoaded, manual("verdict_how_restart"))
    );
}

/// #33: a missing library is the cause, and its fix sentence (naming the library) is what
/// to do; where that fix is reinstalling PyTorch, the button and commands stay.
#[test]
fn a_missing_library_is_named_in_the_verdict() {
    let named = |fix: Option<crate::verify::doctor::Fix>| {
        let mut f = problem(FindingKind::TorchLibraryMissing);
        f.fix = fix;
        doctor(None, vec![f])
    };
    let how = msg!(
        "fix_lib_cudnn",
        library = "cudnn_ops64_9.dll",
        major = 9,
        cuda = 12
    );
    let d = named(Some(crate::verify::doctor::Fix {
        message: how.clone(),
        commands: Vec::new(),
    }));
    let v = decide(&inputs(Scope::Torch, None, Some(&d), None));
    assert_eq!(
        cause_and_fix(v.clone()),
        (Cause::LibraryMissing, Fix::Manual { how })
    );
    let s = render(&v, Lang::En, Surface::Cli).unwrap();
    assert!(
        s.headline.contains("a file it needs to start is missing"),
        "{s:?}"
    );
    assert!(
        s.next
            .as_deref()
            .unwrap()
            .contains("cudnn_ops64_9.dll is part of cuDNN 9"),
        "{s:?}"
    );
    let zh = render(&v, Lang::Zh, Surface::Cli).unwrap();
    assert!(zh.next.as_deref().unwrap().contains("cuDNN 9"), "{zh:?}");
    let d = named(Some(crate::verify::doctor::Fix {
        message: msg!(
            "fix_lib_bundled",
            package = "PyTorch",
            library = "x",
            folder = "y"
        ),
        commands: vec!["python -m pip install torch".into()],
    }));
    assert_eq!(
        cause_and_fix(decide(&inputs(Scope::Torch, None, Some(&d), None))),
        (Cause::LibraryMissing, Fix::ReinstallTorch)
    );
}
