//! The moment the GPU works, in the wizard (egui_kittest, no display): the verdict banner
//! for a stubbed smoke test or doctor result (the card's name and the speed-up, English
//! and Chinese), the failure banner's one button and where it leads, Done's six layers
//! with PyTorch skipped, the PyTorch page's "Install PyTorch", its mirrors, and the
//! Chinese UI's PyPI mirror by default.

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use cuda_setup::ui::fonts::FontSource;
use cuda_setup::ui::session::Action;
use cuda_setup::ui::worker::Event;
use cuda_setup::ui::{App, Mode, Options, Page};
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::message::Message;
use cuda_setup_core::platform::Host;
use cuda_setup_core::recommend::Goal;
use cuda_setup_core::verify::build::BuildReport;
use cuda_setup_core::verify::cuda::DeviceInfo;
use cuda_setup_core::verify::doctor::{
    DoctorReport, Finding, FindingKind, GpuCheck, GpuSummary, Severity, TorchState,
};
use cuda_setup_core::verify::gemm::{GemmReport, GemmResult};
use cuda_setup_core::verify::reference::{self, Precision};
use cuda_setup_core::verify::{Check, Checks, DriverReport, SmokeOutcome, SmokeReport, Status};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};

/// A Windows machine in `root` with an RTX 3060, driver 560.94 and Python 3.11 given; a
/// Python that fails at everything (pip never reaches a network).
pub(crate) fn options(root: &Path, lang: Lang, goal: Goal) -> Options {
    let mut o = Options::sandbox(Tables::embedded().unwrap(), Os::Windows, root);
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let py = bin.join("python3");
    std::fs::write(&py, "#!/bin/sh\nexit 1\n").unwrap();
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    o.host = Host::sandbox(
        Os::Windows,
        root,
        [("PATH".to_string(), bin.display().to_string())]
            .into_iter()
            .collect(),
    );
    o.lang = Some(lang);
    o.goal = Some(goal);
    o.overrides = crate::support::machine::rtx_3060(Some("560.94"), "3.11");
    o.python = Some(py);
    o.fonts = FontSource::EmbeddedOnly;
    o.file_dialogs = false;
    o
}

/// The wizard after detection, on `page` (put there directly: the page's own work, a
/// real smoke test or doctor, is not started; the test hands it results).
pub(crate) fn wizard(root: &Path, lang: Lang, goal: Goal, page: Page) -> Harness<'static, App> {
    wizard_with(options(root, lang, goal), page)
}

pub(crate) fn wizard_with(o: Options, page: Page) -> Harness<'static, App> {
    let app = App::new(o);
    let mut h = Harness::builder()
        .with_size([1000.0, 1600.0])
        .with_context_setup(|ctx| {
            cuda_setup::ui::setup_context(ctx, FontSource::EmbeddedOnly);
        })
        .build_ui_state(|ui, app: &mut App| app.show(ui), app);
    let t0 = Instant::now();
    while h.state().session.system().report().is_none() {
        h.step();
        assert!(t0.elapsed() < Duration::from_secs(60), "detection");
        std::thread::sleep(Duration::from_millis(15));
    }
    h.state_mut().page = page;
    settle(&mut h);
    h
}

pub(crate) fn settle(h: &mut Harness<'_, App>) {
    crate::gui::settle(h);
}

pub(crate) fn event(h: &mut Harness<'_, App>, e: Event) {
    assert!(h.state_mut().session.on_event(e).is_empty());
    settle(h);
}

pub(crate) fn has(h: &Harness<'_, App>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

fn click(h: &mut Harness<'_, App>, label: &str) {
    h.get_by_label(label).click();
    h.step();
    h.step();
}

fn rtx_3060() -> DeviceInfo {
    DeviceInfo {
        index: 0,
        name: "NVIDIA GeForce RTX 3060".into(),
        compute_capability: "8.6".parse().unwrap(),
        multiprocessors: 28,
        memory_total_bytes: 12 << 30,
        pci_bus_id: "0000:01:00.0".into(),
    }
}

/// A smoke report: passed with a 2048² SGEMM in 4 ms that takes the CPU reference 152 ms
/// (38×), or not passed for `reason` (`outcome`: why, as the smoke test types it).
fn smoke(status: Status, outcome: SmokeOutcome, reason: Option<&'static str>) -> SmokeReport {
    let reason = reason.map(Message::new);
    let mut gemm = GemmReport::default();
    if status == Status::Passed {
        gemm.results.push(GemmResult {
            precision: Precision::Fp32,
            size: 2048,
            ms: 4.0,
            gflops: reference::gflops(2048, 2048, 2048, 4.0),
            iterations: 50,
            accuracy: reference::compare(
                &[(0, 0)],
                |_, _| 1.0,
                |_, _| (1.0, 1.0),
                true,
                Precision::Fp32.tolerance(),
            ),
            cpu_ms: Some(152.0),
        });
    }
    SmokeReport {
        status,
        exit_code: status.exit_code(),
        outcome,
        reason: reason.clone(),
        driver: DriverReport::default(),
        device: (status == Status::Passed).then(rtx_3060),
        toolkit: None,
        checks: Checks {
            gemm: Check::new(status, reason, gemm),
            bandwidth: Check::new(Status::Skipped, None, Default::default()),
            cudnn: Check::new(Status::Skipped, None, Default::default()),
            nvcc: Check::new(Status::Skipped, None, Default::default()),
            build: Check::new(Status::Skipped, None, Default::default()),
        },
        elapsed_ms: 900,
    }
}

/// The doctor's report on `torch` in the stand-in Python: a CUDA build whose check ran
/// 38.4× faster on the GPU, or a CPU-only build.
pub(crate) fn doctor(root: &Path, cuda: bool) -> DoctorReport {
    let torch = if cuda {
        TorchState {
            version: "2.7.1+cu126".into(),
            cuda: Some("12.6".into()),
            cuda_available: true,
            device_name: Some("NVIDIA GeForce RTX 3060".into()),
            device_count: 1,
            ..Default::default()
        }
    } else {
        TorchState {
            version: "2.7.1+cpu".into(),
            ..Default::default()
        }
    };
    let findings = if cuda {
        Vec::new()
    } else {
        vec![Finding {
            kind: FindingKind::TorchCpuBuild,
            severity: Severity::Problem,
            message: Message::new("doctor_torch_cpu_build").with("torch", "2.7.1+cpu"),
            fix: None,
        }]
    };
    let status = if cuda { Status::Passed } else { Status::Failed };
    DoctorReport {
        status,
        exit_code: status.exit_code(),
        python: Some(root.join("bin/python3")),
        python_version: Some("3.11.9".into()),
        probe_error: None,
        torch: Some(torch),
        torch_error: None,
        driver: Some("560.94".parse().unwrap()),
        driver_cuda: Some("12.6".parse().unwrap()),
        gpus: vec![GpuSummary {
            name: "NVIDIA GeForce RTX 3060".into(),
            compute_capability: Some("8.6".parse().unwrap()),
        }],
        check: cuda.then(|| GpuCheck {
            size: 2048,
            moved_to: Some("cuda:0".into()),
            tensor_ok: true,
            cpu_ms: Some(76.8),
            gpu_ms: Some(2.0),
            speedup: Some(38.4),
            max_error: Some(1e-4),
            tolerance: 1e-2,
            ok: true,
            error: None,
        }),
        findings,
        recommended: None,
        extension: None,
        build_extension: None,
        packages: None,
        pypi_mirror: None,
        elapsed_ms: 1200,
    }
}

#[test]
fn the_success_banner_names_the_card_and_the_speedup_in_english_and_chinese() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut h = wizard(root, Lang::En, Goal::Developer, Page::Verify);
    assert!(
        !has(&h, "Your graphics card is ready"),
        "nothing checked yet"
    );
    event(
        &mut h,
        Event::Smoke(Box::new(smoke(Status::Passed, SmokeOutcome::Passed, None))),
    );
    assert!(has(
        &h,
        "Your graphics card is ready for CUDA — RTX 3060; a matrix multiplication runs 38× faster than on the CPU"
    ));
    assert!(has(
        &h,
        "Measured against a simple calculation on one processor core"
    ));
    // The card by its generation, not its architecture code.
    assert!(has(&h, "NVIDIA GeForce RTX 3060 (Ampere)"));
    assert!(!has(&h, "sm_86"));
    // Working: Next is the page's one primary.
    assert_eq!(cuda_setup::ui::widgets::primaries_drawn(&h.ctx), 1);

    // PyTorch: the doctor's own figure, and the guide's happy ending in Chinese.
    h.state_mut().page = Page::Pytorch;
    event(&mut h, Event::Doctor(Box::new(doctor(root, true))));
    assert!(has(
        &h,
        "Your graphics card is ready for PyTorch — RTX 3060; a matrix multiplication runs 38× faster than on the CPU"
    ));
    assert!(has(&h, "70–100%"), "what to watch next");
    assert!(has(&h, "Next"), "a working PyTorch: plain Next");
    h.state_mut().apply(Action::SetLang(Lang::Zh));
    settle(&mut h);
    assert!(has(
        &h,
        "你的显卡已可用于 PyTorch — RTX 3060，矩阵乘法比 CPU 快 38 倍"
    ));
    h.state_mut().page = Page::Verify;
    settle(&mut h);
    assert!(has(
        &h,
        "你的显卡已可用于 CUDA — RTX 3060，矩阵乘法比 CPU 快 38 倍"
    ));
    // Done says the same, and every layer's state.
    h.state_mut().page = Page::Done;
    settle(&mut h);
    assert!(has(
        &h,
        "你的显卡已可用于 PyTorch — RTX 3060，矩阵乘法比 CPU 快 38 倍"
    ));
    assert!(has(&h, "通过，比 CPU 快 38 倍"), "the GPU test layer");
}

#[test]
fn a_failure_banner_has_the_one_button_that_fixes_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // The driver is not there: the button goes back to Choose, where the plan installs
    // one.
    let mut o = options(root, Lang::En, Goal::Developer);
    o.overrides.driver = Some(None);
    let mut h = wizard_with(o, Page::Verify);
    event(
        &mut h,
        Event::Smoke(Box::new(smoke(
            Status::Skipped,
            SmokeOutcome::NoDriver,
            Some("smoke_no_driver"),
        ))),
    );
    assert!(has(
        &h,
        "Not usable yet: the NVIDIA graphics driver is not installed."
    ));
    assert!(has(&h, "The “Install the driver” button below does it."));
    click(&mut h, "Install the driver");
    assert_eq!(h.state().page, Page::Choose);
    assert_eq!(h.state().session.mode, Mode::Setup);

    // The check loads no driver, though detection found one (560.94): installed but not
    // usable yet. A plan would install nothing: a restart is what helps, said in words,
    // with no button that leads nowhere. The driver's own message is behind "Details".
    let mut h = wizard(root, Lang::En, Goal::Developer, Page::Verify);
    let mut failed = smoke(
        Status::Failed,
        SmokeOutcome::DriverFailed,
        Some("smoke_driver_failed"),
    );
    let raw = "cuInit returned CUDA_ERROR_UNKNOWN (999)";
    failed.reason = failed.reason.map(|m| m.with("error", raw));
    event(&mut h, Event::Smoke(Box::new(failed)));
    assert!(has(
        &h,
        "Not usable yet: the NVIDIA graphics driver is installed but does not work."
    ));
    assert!(has(
        &h,
        "This cannot be fixed automatically. What you can do: restart"
    ));
    assert!(!has(&h, raw));
    assert!(h.query_by_label("Install the driver").is_none());
    assert!(h.query_by_label("Repair").is_none());
    h.query_all_by_label("Details").next().unwrap().click();
    settle(&mut h);
    assert!(has(&h, raw), "the raw text, unfolded");

    // CPU-only PyTorch on the PyTorch page: the button reinstalls it at once.
    h.state_mut().apply(Action::SetMode(Mode::Setup));
    h.state_mut().page = Page::Pytorch;
    event(&mut h, Event::Doctor(Box::new(doctor(root, false))));
    assert!(has(
        &h,
        "Not usable yet: the PyTorch installed is the CPU-only version"
    ));
    assert!(
        has(&h, "Go on without PyTorch"),
        "Next says it goes on without a working PyTorch"
    );
    assert!(!h.state().session.torch().run().started());
    click(&mut h, "Reinstall PyTorch");
    assert!(h.state().session.torch().run().started(), "pip runs");
    assert_eq!(h.state().page, Page::Pytorch);
}

#[test]
fn done_lists_every_layer_with_pytorch_not_installed_after_a_skip() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = wizard(dir.path(), Lang::En, Goal::Pytorch, Page::Pytorch);
    // Next on the PyTorch page says what it does, and Done says it.
    click(&mut h, "Go on without PyTorch");
    assert_eq!(h.state().page, Page::Done);
    settle(&mut h);
    for layer in [
        "Graphics driver",
        "CUDA toolkit",
        "cuDNN",
        "Environment variables",
        "PyTorch",
        "GPU test",
    ] {
        assert!(has(&h, layer), "layer {layer}");
    }
    assert!(has(&h, "version 560.94"), "the driver's state");
    assert!(has(&h, "not needed: PyTorch brings its own"));
    assert!(has(&h, "PyTorch not installed yet (skipped)"));
    assert!(has(&h, "not run yet (skipped)"), "no GPU test ran");
    // The verdict, with the way back.
    assert!(has(&h, "Not usable yet: PyTorch is not installed yet."));
    // Three lines to try, copied with one click; the guide's first tips.
    assert!(has(&h, "print(torch.cuda.is_available())"));
    h.get_by_label("Copy").click();
    h.step();
    let copied = h
        .output()
        .platform_output
        .commands
        .iter()
        .find_map(|c| match c {
            egui::OutputCommand::CopyText(t) => Some(t.clone()),
            _ => None,
        })
        .expect("the snippet copied");
    assert_eq!(
        copied,
        "import torch\nprint(torch.cuda.is_available())\nprint(torch.cuda.get_device_name(0))"
    );
    assert!(has(&h, "CUDA out of memory") && has(&h, "batch size"));
    assert!(has(&h, "pin_memory=True") && has(&h, "num_workers"));
    assert!(has(&h, "torch.autocast"));
    // In Chinese too.
    h.state_mut().apply(Action::SetLang(Lang::Zh));
    settle(&mut h);
    assert!(has(&h, "还没有安装 PyTorch（已跳过）"));
    assert!(has(&h, "显卡驱动") && has(&h, "环境变量") && has(&h, "显卡测试"));
    assert!(has(&h, "把批量大小调小") && has(&h, "混合精度"));
    click(&mut h, "安装 PyTorch");
    assert_eq!(h.state().page, Page::Pytorch, "the banner's button");
}

/// The pip command as the PyTorch page shows it.
fn command(h: &Harness<'_, App>) -> String {
    let n = h.get_by_label_contains(" -m pip install torch");
    let n = n.accesskit_node();
    n.label().or_else(|| n.value()).expect("the pip command")
}

#[test]
fn the_pytorch_page_installs_with_mirrors_chosen_by_language() {
    let dir = tempfile::tempdir().unwrap();
    // Chinese: Tsinghua's PyPI mirror unless turned off; the primary button says install.
    let mut h = wizard(dir.path(), Lang::Zh, Goal::Pytorch, Page::Pytorch);
    h.get_by_label("安装 PyTorch");
    assert!(!has(&h, "在这个 Python 中运行"));
    assert!(has(&h, "约 2.5 GB"), "the size before the download");
    let cmd = command(&h);
    assert!(
        cmd.contains("--extra-index-url https://pypi.tuna.tsinghua.edu.cn/simple"),
        "{cmd}"
    );
    assert!(has(&h, "中文界面默认从清华大学镜像下载其他依赖包"));
    // The visible choice to turn it off.
    click(&mut h, "其他依赖包的 PyPI 镜像");
    click(&mut h, "PyPI 官方（pypi.org）");
    settle(&mut h);
    assert_eq!(h.state().session.torch().mirror_index(), 0);
    assert!(!command(&h).contains("tuna"), "{}", command(&h));
    // Chosen once, a language switch keeps it.
    h.state_mut().apply(Action::SetLang(Lang::En));
    h.state_mut().apply(Action::SetLang(Lang::Zh));
    assert_eq!(h.state().session.torch().mirror_index(), 0);

    // PyTorch's wheels from a mirror of its index (compat-tables/pytorch.toml).
    let nju = "南京大学镜像 — https://mirror.nju.edu.cn/pytorch/whl";
    click(&mut h, "PyTorch 的下载来源");
    click(&mut h, nju);
    settle(&mut h);
    let cmd = command(&h);
    assert!(
        cmd.contains("--index-url https://mirror.nju.edu.cn/pytorch/whl/cu"),
        "{cmd}"
    );
    assert!(has(&h, "这些镜像由国内高校提供"));

    // English: pypi.org as before, and the same primary button in English.
    let dir = tempfile::tempdir().unwrap();
    let h = wizard(dir.path(), Lang::En, Goal::Pytorch, Page::Pytorch);
    h.get_by_label("Install PyTorch");
    assert_eq!(h.state().session.torch().mirror_index(), 0);
    let cmd = command(&h);
    assert!(
        !cmd.contains("--extra-index-url") && cmd.contains("https://download.pytorch.org/whl/cu"),
        "{cmd}"
    );
}

#[test]
fn with_no_python_the_page_says_how_to_get_one_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(dir.path(), Lang::En, Goal::Pytorch);
    o.python = None;
    o.host = Host::sandbox(Os::Windows, dir.path(), Default::default());
    let h = wizard_with(o, Page::Pytorch);
    assert!(has(&h, "No Python was found on this computer"));
    assert!(has(&h, "python.org") && has(&h, "winget install Python.Python.3.12"));
    assert!(
        h.get_by_label("Install PyTorch")
            .accesskit_node()
            .is_disabled(),
        "nothing to install into yet"
    );
}

/// Contradiction (a) of #31: a smoke failure repair's audit does not check (cuBLAS that
/// will not load) ended red with a big 修复 button, and Repair then said "没有需要修复的问题".
/// Now the banner says honestly that nothing here fixes it and what the user can do, and
/// no button leads to a page that finds nothing.
#[test]
fn a_failure_repair_does_not_check_offers_no_repair_button() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = wizard(dir.path(), Lang::Zh, Goal::Developer, Page::Verify);
    let mut failed = smoke(
        Status::Failed,
        SmokeOutcome::LibraryMissing,
        Some("library_load_failed"),
    );
    failed.reason = failed.reason.map(|m| {
        m.with("library", "libcublas.so.12")
            .with("detail", "undefined symbol: cublasLtGetVersion")
    });
    event(&mut h, Event::Smoke(Box::new(failed)));
    assert!(
        h.query_by_label("修复").is_none(),
        "no button to a Repair that finds nothing"
    );
    assert!(has(
        &h,
        "还不能用：CUDA 工具包里缺少某个库，或者某个库无法加载。"
    ));
    assert!(has(&h, "这个问题无法自动修复。你可以："));
    // The page's one primary is Next again: the user goes on (and can run it again).
    assert_eq!(cuda_setup::ui::widgets::primaries_drawn(&h.ctx), 1);
    assert!(h.query_by_label("下一步").is_some());
}

/// The developer's smoke test: the GEMM passed (13×), the build check found link names
/// missing in `dir` — what repair's audit finds (`repair_toolkit_cannot_link`).
fn cannot_link(dir: &Path) -> SmokeReport {
    let mut s = smoke(Status::Passed, SmokeOutcome::Passed, None);
    s.checks.gemm.detail.results[0].cpu_ms = Some(52.0);
    let why = Message::new("build_missing_link_names")
        .with("dir", dir.display())
        .with("missing", "lib64/libcublas.so");
    s.checks.build = Check::new(
        Status::Failed,
        Some(why.clone()),
        BuildReport {
            missing: vec!["lib64/libcublas.so".into()],
            ..Default::default()
        },
    );
    s.status = Status::Failed;
    s.exit_code = Status::Failed.exit_code();
    s.outcome = SmokeOutcome::CannotLink;
    s.reason = Some(why);
    s
}

/// Contradiction (b) of #31: the developer's Done listed every row green ("显卡测试 通过，
/// 比 CPU 快 13 倍") under "还不能用：失败：… 请运行 cuda-setup repair 补上。点击下方的
/// '修复'按钮即可。" — a doubled prefix, a full path, a command line beside a button, and
/// a cause among no row. Now the cause is the toolkit's row, in plain words; the path is
/// under Details; the button is named, never the command.
#[test]
fn done_names_its_cause_in_a_row_without_a_command_line_or_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // NVIDIA's installer's toolkit, which detection lists (a green row before).
    let toolkit = root.join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.6");
    std::fs::create_dir_all(toolkit.join("bin")).unwrap();
    std::fs::write(toolkit.join("bin/nvcc.exe"), "").unwrap();
    std::fs::write(
        toolkit.join("version.json"),
        r#"{"cuda":{"name":"CUDA SDK","version":"12.6.3"}}"#,
    )
    .unwrap();
    let mut h = wizard(root, Lang::Zh, Goal::Developer, Page::Done);
    event(&mut h, Event::Smoke(Box::new(cannot_link(&toolkit))));
    let mut d = doctor(root, true);
    d.check.as_mut().unwrap().speedup = Some(13.0);
    event(&mut h, Event::Doctor(Box::new(d)));

    let cause = "无法用 CUDA 工具包编译程序：缺少链接时需要的文件。";
    assert!(!has(&h, "还不能用：失败"), "no doubled prefix");
    assert!(
        !has(&h, "cuda-setup repair"),
        "no command line in the wizard"
    );
    assert!(
        !has(&h, &toolkit.display().to_string()),
        "the path is a detail"
    );
    assert!(has(&h, "点击下方的“修复”按钮即可。"));
    assert!(has(&h, &format!("还不能用：{cause}")), "the headline");
    // The cause is a row: the toolkit's, red, in the same words.
    assert!(
        h.query_all_by_label_contains(cause).count() >= 2,
        "the headline and the toolkit's row"
    );
    // The button leads to Repair, whose audit checks exactly this.
    click(&mut h, "修复");
    assert_eq!(
        (h.state().page, h.state().session.mode),
        (Page::Repair, Mode::Repair)
    );
}

/// One sentence: for the same reports, the wizard's banner and the CLI's `smoke` and
/// `doctor` text say the same headline; the CLI names the command, the wizard the button.
#[test]
fn the_cli_and_the_wizard_print_the_same_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let toolkit = root.join("cuda-12.6");
    for lang in [Lang::En, Lang::Zh] {
        let report = cannot_link(&toolkit);
        let cli = cuda_setup::cli::verify::human_smoke(&report, lang);
        let mut h = wizard(root, lang, Goal::Developer, Page::Verify);
        event(&mut h, Event::Smoke(Box::new(report)));
        let headline = match lang {
            Lang::En => {
                "Not usable yet: programs cannot be built with the CUDA toolkit: files a build links against are missing."
            }
            Lang::Zh => "还不能用：无法用 CUDA 工具包编译程序：缺少链接时需要的文件。",
        };
        assert!(has(&h, headline), "the wizard: {headline}");
        assert!(cli.contains(&format!("\n{headline}\n")), "the CLI:\n{cli}");
        assert!(cli.contains("cuda-setup repair --fix"), "{cli}");

        let d = doctor(root, false);
        let cli = cuda_setup::cli::verify::human_doctor(&d, lang);
        h.state_mut().page = Page::Pytorch;
        event(&mut h, Event::Doctor(Box::new(d)));
        let headline = match lang {
            Lang::En => {
                "Not usable yet: the PyTorch installed is the CPU-only version, so it cannot use the graphics card."
            }
            Lang::Zh => "还不能用：已安装的 PyTorch 是只能用 CPU 的版本，用不了显卡。",
        };
        assert!(has(&h, headline), "the wizard: {headline}");
        assert!(cli.contains(&format!("\n{headline}\n")), "the CLI:\n{cli}");
    }
}
