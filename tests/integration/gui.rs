//! The wizard, driven by egui_kittest (no display needed): clicks by label through every
//! page of a first-time developer setup to Done, against the real pipeline in a `--root`
//! sandbox — a loopback mirror serving a stand-in NVIDIA installer with NVIDIA's
//! md5sum.txt, a real-layout cuDNN zip dropped on the window, a stand-in Python for pip
//! and the doctor. Also: the repair start when an install exists (audit, fix, audit
//! again), cancel mid-download (and the resume), the Chinese UI (every string present and every glyph in the font),
//! and the message where no display exists.

#![cfg(unix)]

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuda_setup::ui::fonts::FontSource;
use cuda_setup::ui::progress::StepState;
use cuda_setup::ui::{App, Mode, Options, Page};
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::detect::Deadlines;
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::platform::Host;
use cuda_setup_core::recommend::Goal;
use cuda_setup_core::steps::StepKind;
use cuda_setup_core::verify::{SmokeOptions, Status};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use support::cudnn_zip::Spec;
use support::server::{Body, Fault, Server};
use support::standin::{serve_installer, windows_installer};

pub(crate) const INSTALLER: &str =
    "/compute/cuda/11.8.0/local_installers/cuda_11.8.0_522.06_windows.exe";

/// A Python stand-in: `-m pip …` logs its arguments, `-c <doctor probe> N` prints what
/// the doctor's probe prints for a working CUDA build of torch.
fn python_standin(dir: &Path) -> PathBuf {
    let py = dir.join("python3");
    let log = dir.join("pip-args.log");
    let probe = r#"{"python": "3.11.9", "executable": "/opt/py/bin/python3", "torch": {"version": "2.7.1+cu118", "cuda": "11.8", "cuda_available": true, "cuda_error": null, "cudnn": 90100, "cudnn_available": true, "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], "device_count": 1, "device_name": "NVIDIA GeForce RTX 3060", "device_capability": [8, 6], "driver_version": 11080}, "torch_error": null, "check": {"size": 2048, "moved_to": "cuda:0", "tensor_ok": true, "cpu_ms": 80.0, "gpu_ms": 2.0, "speedup": 40.0, "max_error": 0.0001, "tolerance": 0.01, "ok": true, "error": null}}"#;
    std::fs::write(
        &py,
        format!(
            "#!/bin/sh\nif [ \"$1\" = -m ]; then echo \"$@\" > '{}'; echo 'Collecting torch'; echo 'Successfully installed torch'; exit 0; fi\necho 'CUDA_SETUP_DOCTOR {probe}'\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    py
}

pub(crate) struct Machine {
    pub(crate) server: Server,
    pub(crate) work: tempfile::TempDir,
}

impl Machine {
    pub(crate) fn new(installer: Vec<u8>) -> Machine {
        let server = Server::start();
        serve_installer(
            &server,
            "11.8.0",
            "cuda_11.8.0_522.06_windows.exe",
            installer,
        );
        Machine {
            server,
            work: tempfile::tempdir().unwrap(),
        }
    }

    pub(crate) fn root(&self) -> PathBuf {
        self.work.path().join("root")
    }

    fn bin(&self) -> PathBuf {
        let b = self.work.path().join("bin");
        std::fs::create_dir_all(&b).unwrap();
        b
    }

    pub(crate) fn cudnn_zip(&self) -> PathBuf {
        let z = self
            .work
            .path()
            .join("cudnn-windows-x86_64-9.10.2.21_cuda11-archive.zip");
        if !z.exists() {
            Spec {
                version: "9.10.2.21",
                cuda_major: 11,
                dll_size: 100_000,
            }
            .write(&z);
        }
        z
    }

    pub(crate) fn toolkit(&self) -> PathBuf {
        self.root()
            .join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8")
    }

    /// The wizard's options: a Windows machine in the root, an RTX 3060 (sm_86) with
    /// driver 522.06 and Python 3.11 given, the loopback mirror, the stand-in Python.
    pub(crate) fn options(&self, lang: Lang) -> Options {
        let tables = Tables::embedded().unwrap();
        let mut o = Options::sandbox(tables, Os::Windows, &self.root());
        // Detection sees only the root and the stand-in's folder.
        let env = [("PATH".to_string(), self.bin().display().to_string())]
            .into_iter()
            .collect();
        o.host = Host::sandbox(Os::Windows, &self.root(), env);
        o.lang = Some(lang);
        o.overrides = crate::support::machine::rtx_3060(Some("522.06"), "3.11");
        // These journeys install with the driver as it is; an old driver's default (update
        // it first, #32) is gui_driver_choice's.
        o.driver = cuda_setup_core::recommend::DriverPref::Keep;
        o.mirrors = vec![format!("http://{}", self.server.addr)];
        o.cuda = Some("11.8".parse().unwrap());
        o.python = Some(python_standin(&self.bin()));
        o.fonts = FontSource::EmbeddedOnly;
        o.file_dialogs = false;
        o.deadlines = Deadlines {
            quick: Duration::from_secs(10),
            python: Duration::from_secs(10),
        };
        o.smoke = SmokeOptions {
            sizes: vec![64],
            bandwidth_bytes: 1 << 20,
            timeout: Duration::from_secs(30),
            compile_timeout: Duration::from_secs(30),
            ..Default::default()
        };
        o
    }

    /// The wizard's options when NVIDIA's installer cannot be had: the mirror answers 404
    /// and NVIDIA's own URL is a loopback port nothing listens on (so the test never
    /// reaches the real server, even on a machine that could).
    pub(crate) fn options_nvidia_unreachable(&self, lang: Lang) -> Options {
        self.server.set_fault(
            INSTALLER,
            Fault {
                status: Some((404, 1000)),
                ..Fault::default()
            },
        );
        let mut o = self.options(lang);
        let dead = crate::support::server::dead_base();
        for r in &mut o.tables.toolkits.releases {
            if let Some(i) = r.windows_local.as_mut() {
                i.url = Some(format!("{dead}{INSTALLER}"));
            }
        }
        o
    }
}

pub(crate) fn harness(app: App) -> Harness<'static, App> {
    Harness::builder()
        .with_size([1000.0, 1400.0])
        .with_context_setup(|ctx| {
            cuda_setup::ui::setup_context(ctx, FontSource::EmbeddedOnly);
        })
        .build_ui_state(|ui, app: &mut App| app.show(ui), app)
}

/// Steps frames until `done` holds (the worker answers on its own threads).
pub(crate) fn wait(h: &mut Harness<'_, App>, what: &str, done: impl Fn(&App) -> bool) {
    let t0 = Instant::now();
    loop {
        h.step();
        if done(h.state()) {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(90),
            "timed out waiting: {what}"
        );
        std::thread::sleep(Duration::from_millis(15));
    }
    h.step();
    h.step();
}

/// Settles the frame (and runs kittest's accessibility check: every widget is named).
/// A background job (a probe of the stand-in Python) keeps its spinner turning while it
/// runs, and on a loaded machine it may outlast one `run_ok`: try again for a while
/// before calling it a page that never settles.
pub(crate) fn settle(h: &mut Harness<'_, App>) {
    let t0 = std::time::Instant::now();
    while h.run_ok().is_none() {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "the page keeps repainting"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

pub(crate) fn click(h: &mut Harness<'_, App>, label: &str) {
    h.get_by_label(label).click();
    h.step();
    h.step();
}

pub(crate) fn has(h: &Harness<'_, App>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

#[derive(Debug)]
pub(crate) struct Dropped(pub(crate) PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &Path {
        &self.0
    }

    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

#[test]
fn first_time_developer_setup_through_every_page() {
    let m = Machine::new(windows_installer(0, 0));
    let mut h = harness(App::new(m.options(Lang::En)));
    h.step();

    // Welcome: nothing on disk, so first-time setup is chosen.
    assert_eq!(h.state().page, Page::Welcome);
    assert_eq!(h.state().session.mode, Mode::Setup);
    assert!(has(&h, "First-time setup") && has(&h, "Repair an existing install"));
    settle(&mut h);
    click(&mut h, "Next");

    // System: detection ran in the sandbox; the given GPU and driver are shown.
    assert_eq!(h.state().page, Page::System);
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    settle(&mut h);
    assert!(has(&h, "NVIDIA GeForce RTX 3060 (Ampere)"), "the given GPU");
    assert!(has(&h, "Driver 522.06"));
    assert!(has(&h, "Given instead of detected"));
    click(&mut h, "Next");

    // Choose: developer, CUDA 11.8 (given in Advanced), with its reasons.
    assert_eq!(h.state().page, Page::Choose);
    click(&mut h, "Developer");
    assert_eq!(h.state().session.goal, Goal::Developer);
    settle(&mut h);
    assert!(has(&h, "CUDA 11.8"), "the toolkit pick");
    assert!(
        !has(&h, "11.8 GA"),
        "NVIDIA's release tag is no word for a beginner"
    );
    assert!(has(&h, "cuDNN 9."), "the cuDNN pick");
    click(&mut h, "Why this recommendation?");
    assert!(has(&h, "CUDA 11.8.0 builds code for"), "a reason, rendered");
    // Tests never refresh in the background: the tables alone, and said so.
    assert!(h.state().session.opts.refresh.is_none() && !h.state().session.refreshing());
    assert!(has(&h, "CUDA 11.8.0: from the built-in tables."));
    assert!(has(&h, "Tables: built-in only."));
    click(&mut h, "Next");

    // Prepare: the plan (hash from the mirror's md5sum.txt) and the pre-flight checks.
    assert_eq!(h.state().page, Page::Prepare);
    wait(&mut h, "prepare", |a| !a.session.prepare().running());
    settle(&mut h);
    assert!(
        h.state().session.prepare().ready(),
        "{:?}",
        h.state()
            .session
            .prepare()
            .result()
            .as_ref()
            .map(|r| r.as_ref().err())
    );
    assert!(has(&h, "Running with administrator rights"));
    assert!(has(&h, "Ready to install."));
    assert!(has(&h, "1. Pre-flight checks"));
    click(&mut h, "Start installing");

    // Install: every step runs and finishes.
    assert_eq!(h.state().page, Page::Install);
    wait(&mut h, "install", |a| !a.session.install().run().running());
    settle(&mut h);
    let r = h.state().session.install().run().report().cloned().unwrap();
    assert!(r.ok(), "{:?}", r.failure);
    let names: Vec<StepKind> = h
        .state()
        .session
        .install()
        .run()
        .steps()
        .iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(
        names,
        [
            StepKind::Preflight,
            StepKind::DownloadToolkit,
            StepKind::InstallToolkit,
            StepKind::ConfigureEnv,
            StepKind::Verify
        ]
    );
    assert!(has(&h, "Download the CUDA toolkit") && has(&h, "Set the environment variables"));
    assert!(has(&h, "The CUDA toolkit is installed"));
    // The live log unfolds.
    assert!(!has(&h, "downloading http://127.0.0.1"));
    click(&mut h, "Log");
    assert!(
        has(&h, "downloading http://127.0.0.1"),
        "the log names the mirror"
    );
    assert!(m.toolkit().join("bin/nvcc.exe").is_file());
    click(&mut h, "Next");

    // cuDNN: a zip dropped on the window is validated before anything is copied.
    assert_eq!(h.state().page, Page::Cudnn);
    settle(&mut h);
    assert!(has(&h, "Drop the cuDNN .zip here"));
    assert!(!h.state_mut().can_next(), "Next waits for cuDNN");
    h.input_mut()
        .dropped_files
        .push(Arc::new(Dropped(m.cudnn_zip())));
    wait(&mut h, "validation", |a| {
        a.session.cudnn().check().is_some()
    });
    settle(&mut h);
    assert!(has(&h, "NVIDIA's layout:"), "layout result");
    assert!(has(&h, "Built for CUDA 11, like the toolkit (CUDA 11.8.0)"));
    assert!(has(&h, "Nothing has been copied yet."));
    assert!(
        !m.toolkit().join("bin/cudnn64_9.dll").exists(),
        "copied before install"
    );
    click(&mut h, "Install cuDNN");
    wait(&mut h, "cuDNN install", |a| {
        a.session.cudnn().installed().is_some()
    });
    settle(&mut h);
    assert!(has(&h, "cuDNN 9.10.2 is installed"));
    assert!(m.toolkit().join("bin/cudnn64_9.dll").is_file());
    assert!(m.toolkit().join("include/cudnn_version.h").is_file());
    click(&mut h, "Next");

    // Verify: no driver here, so the GPU checks are skipped with the reason; no NVML
    // means no live plot, said so.
    assert_eq!(h.state().page, Page::Verify);
    wait(&mut h, "smoke", |a| a.session.verify().report().is_some());
    settle(&mut h);
    let smoke = h.state().session.verify().report().cloned().unwrap();
    assert_ne!(smoke.status, Status::Passed);
    assert!(has(&h, "Matrix product (cuBLAS)") && has(&h, "Compiler (nvcc)"));
    assert!(has(&h, "No live reading of the graphics card"));
    click(&mut h, "Next");

    // PyTorch: the command for the cu118 wheel; run it in the stand-in Python; the doctor.
    assert_eq!(h.state().page, Page::Pytorch);
    settle(&mut h);
    assert!(has(
        &h,
        "--index-url https://download.pytorch.org/whl/cu118"
    ));
    // A mirror of PyTorch's index changes the command; cleared, PyTorch's comes back.
    let field = "PyTorch download source (a mirror, optional)";
    h.get_by_label(field).focus();
    h.get_by_label(field)
        .type_text("https://mirror.example/whl");
    settle(&mut h);
    assert!(has(&h, "--index-url https://mirror.example/whl/cu118"));
    h.state_mut().pages.torch.torch_index.clear();
    settle(&mut h);
    click(&mut h, "Install PyTorch");
    wait(&mut h, "pip and the doctor", |a| {
        !a.session.torch().run().running() && a.session.torch().doctor().is_some()
    });
    settle(&mut h);
    let pip = std::fs::read_to_string(m.bin().join("pip-args.log")).unwrap();
    assert!(
        pip.starts_with("-m pip install torch==") && pip.contains("whl/cu118"),
        "{pip}"
    );
    assert!(has(&h, "Successfully installed torch"), "pip's live output");
    let doctor = h.state().session.torch().doctor().cloned().unwrap();
    assert_eq!(doctor.status, Status::Passed, "{:?}", doctor.findings);
    assert!(has(&h, "PyTorch check"));
    click(&mut h, "Next");

    // Done: the summary, the diagnostics on the clipboard, the report saved.
    assert_eq!(h.state().page, Page::Done);
    settle(&mut h);
    assert!(has(&h, "Summary") && has(&h, "GPU test"));
    h.get_by_label("Copy diagnostics").click();
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
        .expect("diagnostics copied");
    assert!(
        copied.contains("GPU setup diagnostics") && copied.contains("RTX 3060"),
        "{copied}"
    );
    click(&mut h, "Save report");
    wait(&mut h, "report", |a| a.session.saved().is_some());
    let saved = h.state().session.saved().cloned().unwrap().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    assert_eq!(json["install"]["changed"], true);
    assert_eq!(json["cudnn"]["cudnn_version"], "9.10.2");
    assert!(has(&h, "Report saved"));
    assert!(has(&h, "Open log"));
}

#[test]
fn an_existing_install_starts_in_repair_mode() {
    let m = Machine::new(windows_installer(0, 0));
    let parent = m
        .root()
        .join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA");
    let tk = support::cudnn_zip::toolkit(&parent, "11.8.0");
    // CUDA 11's runtime DLL keeps the minor in its name.
    std::fs::write(tk.join("bin/cudart64_110.dll"), b"MZ stand-in cudart").unwrap();
    cuda_setup_core::cudnn::install(&m.cudnn_zip(), &tk, &|_| {}).unwrap();

    let mut h = harness(App::new(m.options(Lang::En)));
    h.step();
    assert_eq!(h.state().page, Page::Welcome);
    assert_eq!(
        h.state().session.mode,
        Mode::Repair,
        "preselected from what is on disk"
    );
    assert!(has(&h, "Already on this computer: CUDA 11.8"));
    assert!(has(&h, "cuDNN 9.10.2"));
    settle(&mut h);
    click(&mut h, "Next");

    // Repair: the core's audit, each finding with its fix.
    assert_eq!(h.state().page, Page::Repair);
    wait(&mut h, "audit", |a| a.session.repair().findings().is_some());
    settle(&mut h);
    let before = cuda_setup_core::repair::problems(h.state().session.repair().findings().unwrap());
    assert!(before > 0, "the environment was never configured");
    let ids: Vec<&str> = h
        .state()
        .session
        .repair()
        .findings()
        .unwrap()
        .iter()
        .map(|f| f.id)
        .collect();
    assert!(
        has(&h, "Findings") && has(&h, "CUDA_PATH"),
        "a finding, rendered: {ids:?}"
    );
    assert!(has(&h, "Fix: Set the environment variables"));
    h.get_by_label_contains(" problems").click();
    h.step();
    wait(&mut h, "fixes", |a| {
        a.session.repair().fixed().is_some() && !a.session.repair().busy()
    });
    settle(&mut h);
    let left = cuda_setup_core::repair::problems(h.state().session.repair().findings().unwrap());
    assert!(left < before, "{left} problems left of {before}");
    assert!(has(&h, "problems before the fixes"));
    assert!(
        m.root().join(".cuda-setup/windows-env.json").is_file(),
        "CUDA_PATH set"
    );
    click(&mut h, "Next");
    assert_eq!(h.state().page, Page::Done);
    assert!(has(&h, "Repair:"));

    // First-time setup stays one click away.
    click(&mut h, "Back");
    click(&mut h, "Back");
    assert_eq!(h.state().page, Page::Welcome);
    click(&mut h, "First-time setup");
    assert_eq!(h.state().session.mode, Mode::Setup);
    click(&mut h, "Next");
    assert_eq!(h.state().page, Page::System);
}

#[test]
fn cancel_mid_download_then_resume() {
    // 3 MB at 300 KB/s: ten seconds of download to cancel in.
    let m = Machine::new(windows_installer(0, 3_000_000));
    m.server.set_fault(
        INSTALLER,
        Fault {
            throttle: Some(300_000),
            ..Default::default()
        },
    );
    let mut o = m.options(Lang::En);
    o.goal = Some(Goal::Developer);
    let mut h = harness(App::new(o));
    h.step();
    click(&mut h, "Next");
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    click(&mut h, "Next");
    click(&mut h, "Next");
    wait(&mut h, "prepare", |a| !a.session.prepare().running());
    click(&mut h, "Start installing");
    wait(&mut h, "download under way", |a| {
        a.session
            .install()
            .run()
            .steps()
            .get(1)
            .is_some_and(|s| s.state == StepState::Running && s.progress.is_some_and(|p| p.0 > 0))
    });
    assert!(has(&h, "left"), "speed and ETA shown");
    click(&mut h, "Cancel");
    wait(&mut h, "cancelled", |a| {
        !a.session.install().run().running()
    });
    let r = h.state().session.install().run().report().cloned().unwrap();
    assert!(r.cancelled && r.failure.is_none());
    assert_eq!(
        h.state().session.install().run().steps()[1].state,
        StepState::Cancelled
    );
    assert!(!m.toolkit().exists(), "nothing installed after a cancel");
    settle(&mut h);
    assert!(has(&h, "Cancelled. Nothing is left half-done"));
    assert!(!h.state_mut().can_next());

    // Again, at full speed: it resumes and finishes.
    m.server.set_fault(INSTALLER, Fault::default());
    click(&mut h, "Try again");
    wait(&mut h, "install", |a| !a.session.install().run().running());
    assert!(h.state().session.install().run().succeeded());
    assert!(m.toolkit().join("bin/nvcc.exe").is_file());
}

#[test]
fn the_chinese_ui_renders_every_glyph() {
    // The harness panics on a glyph the font lacks: only the embedded subset is loaded.
    let m = Machine::new(windows_installer(0, 0));
    let mut o = m.options(Lang::Zh);
    o.goal = Some(Goal::Developer);
    let mut h = harness(App::new(o));
    h.step();
    assert!(has(&h, "首次安装") && has(&h, "修复已有的安装") && has(&h, "语言"));
    settle(&mut h);
    click(&mut h, "下一步");
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    settle(&mut h);
    assert!(has(&h, "显卡") && has(&h, "驱动 522.06"));
    click(&mut h, "下一步");
    settle(&mut h);
    assert!(has(&h, "只装 PyTorch") && has(&h, "开发者") && has(&h, "原因"));
    click(&mut h, "推荐原因（为什么这样选？）");
    assert!(
        has(&h, "CUDA 11.8.0 能为"),
        "the recommender's reasons in Chinese"
    );
    click(&mut h, "下一步");
    wait(&mut h, "prepare", |a| !a.session.prepare().running());
    settle(&mut h);
    assert!(has(&h, "正在以管理员权限运行") && has(&h, "可以开始安装了。"));
    // Switch language on the fly: the same page in English.
    click(&mut h, "English");
    assert!(has(&h, "Ready to install."));
    click(&mut h, "中文");
    assert!(has(&h, "开始安装"));
}

/// At start the worker reads NVIDIA's manifests and the PyTorch index (here the loopback
/// server, in their recorded formats) without holding up the pages; the new tables are
/// used from then on and the Choose page says where its facts come from.
#[test]
fn a_background_refresh_brings_new_releases_without_blocking() {
    let m = Machine::new(windows_installer(0, 0));
    let fixture = |name: &str| {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/refresh")
            .join(name);
        Body::Bytes(Arc::new(std::fs::read(p).unwrap()))
    };
    let s = &m.server;
    s.add("/compute/cuda/redist/", fixture("cuda-redist-index.html"));
    s.add(
        "/compute/cuda/redist/redistrib_13.6.0.json",
        fixture("redistrib_13.6.0.json"),
    );
    s.add("/compute/cudnn/redist/", fixture("cudnn-redist-index.html"));
    for v in ["cu126", "cu130", "cu132"] {
        s.add(
            &format!("/whl/{v}/torch/"),
            fixture(&format!("torch-{v}.html")),
        );
    }
    for p in ["nvidia-cudnn-cu12", "nvidia-cudnn-cu13", "nvidia-cuda-nvcc"] {
        let page = format!(
            r#"{{"meta":{{"api-version":"1.1"}},"name":"{p}","versions":["9.27.0.42"],"files":[]}}"#
        );
        s.add(
            &format!("/simple/{p}/"),
            Body::Bytes(Arc::new(page.into_bytes())),
        );
    }
    let base = format!("http://{}", s.addr);
    let mut o = m.options(Lang::En);
    o.refresh = Some(cuda_setup::ui::worker::Refresh {
        base: Tables::embedded().unwrap(),
        sources: cuda_setup_core::refresh::Sources {
            nvidia: format!("{base}/compute"),
            torch_index: format!("{base}/whl"),
            pypi: format!("{base}/simple"),
        },
        cache: Some(m.work.path().join("cache").join("refresh.json")),
    });
    let mut h = harness(App::new(o));
    h.step();
    assert_eq!(
        h.state().page,
        Page::Welcome,
        "nothing waits for the refresh"
    );
    wait(&mut h, "the refresh", |a| !a.session.refreshing());
    let v: cuda_setup_core::version::Version = "13.6.0".parse().unwrap();
    assert!(h.state().session.opts.tables.toolkit(&v).is_some());
    assert!(m.work.path().join("cache/refresh.json").exists());

    click(&mut h, "Next");
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    click(&mut h, "Next");
    assert_eq!(h.state().page, Page::Choose);
    settle(&mut h);
    assert!(
        has(&h, "Tables: built-in + live data fetched"),
        "{:?}",
        h.state().session.tables_line
    );
}

#[test]
fn without_a_display_it_points_to_the_cli() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .env("LANG", "C")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no display")
            && err.contains("cuda-setup detect")
            && err.contains("cuda-setup install --help"),
        "{err}"
    );
    // In Chinese too.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(["--lang", "zh"])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("没有找到显示器"));
}

#[test]
fn wizard_flags_with_a_subcommand_are_refused() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(["--page", "done", "tables"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hint:"));
}

/// The wheels method chosen in the wizard: stand-ins for NVIDIA's Windows wheels (real
/// names and layouts) from a loopback PyPI index, through Choose → Prepare → Install.
#[cfg(target_arch = "x86_64")]
#[test]
fn the_wheels_method_from_the_choose_page_to_an_assembled_toolkit() {
    use support::wheels::{Platform, files, serve, toolkit_standins};
    let wheels = tempfile::tempdir().unwrap();
    let index = serve(&files(&[&toolkit_standins(
        wheels.path(),
        Platform::Windows,
    )]));
    let m = Machine::new(windows_installer(0, 0));
    let mut o = m.options(Lang::En);
    o.cuda = Some("13.5".parse().unwrap());
    o.overrides.driver = Some(Some("600.00".parse().unwrap()));
    o.method = cuda_setup_core::recommend::Method::Wheels;
    o.pypi_mirror = Some(index.url("/simple"));
    // The components the stand-ins are of (the default set adds cuBLAS).
    o.components = Some(
        support::wheels::COMPONENTS
            .split(',')
            .map(str::to_string)
            .collect(),
    );
    let mut h = harness(App::new(o));
    h.step();
    click(&mut h, "Next");
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    click(&mut h, "Next");

    // Choose: the method with its one-sentence difference; 13.5 only exists as wheels.
    click(&mut h, "Developer");
    settle(&mut h);
    assert!(has(&h, "How to install the toolkit"));
    assert!(has(&h, "the wheels are the same NVIDIA files from PyPI"));
    assert!(has(&h, "CUDA 13.5"), "the wheels-only release is offered");
    click(&mut h, "Next");

    // Prepare resolves the wheels on the index: no administrator rights needed.
    wait(&mut h, "prepare", |a| !a.session.prepare().running());
    settle(&mut h);
    assert!(
        h.state().session.prepare().ready(),
        "{:?}",
        h.state()
            .session
            .prepare()
            .result()
            .as_ref()
            .map(|r| r.as_ref().err())
    );
    click(&mut h, "Start installing");
    wait(&mut h, "install", |a| !a.session.install().run().running());
    settle(&mut h);
    let r = h.state().session.install().run().report().cloned().unwrap();
    assert!(r.ok(), "{:?}", r.failure);
    let names: Vec<StepKind> = h
        .state()
        .session
        .install()
        .run()
        .steps()
        .iter()
        .map(|s| s.name)
        .collect();
    assert!(names.contains(&StepKind::AssembleToolkit), "{names:?}");
    assert!(has(&h, "Unpack the toolkit wheels"));
    let tk = m
        .root()
        .join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v13.5");
    assert!(tk.join("bin/nvcc.exe").is_file() && tk.join("bin/x64/cudart64_13.dll").is_file());
}

/// NVIDIA's server fails: the Install page offers the wheels, and one click makes them
/// the method.
#[test]
fn a_failed_nvidia_download_offers_the_wheels() {
    let m = Machine::new(windows_installer(0, 0));
    let o = m.options_nvidia_unreachable(Lang::En);
    let mut h = harness(App::new(o));
    h.step();
    click(&mut h, "Next");
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    click(&mut h, "Next");
    click(&mut h, "Developer");
    click(&mut h, "Next");
    wait(&mut h, "prepare", |a| !a.session.prepare().running());
    assert!(h.state().session.prepare().ready());
    click(&mut h, "Start installing");
    wait(&mut h, "install", |a| !a.session.install().run().running());
    settle(&mut h);
    let r = h.state().session.install().run().report().cloned().unwrap();
    assert_eq!(
        r.failure.as_ref().and_then(|f| f.step),
        Some(StepKind::DownloadToolkit)
    );
    // The mirror has no such file and NVIDIA's server cannot be reached.
    assert_eq!(
        r.failure.as_ref().map(|f| f.kind),
        Some(cuda_setup_core::steps::FailureKind::DownloadNetwork)
    );
    assert!(has(&h, "The download could not reach the server"));
    assert!(has(&h, "the download continues where it stopped"));
    // The exact error stays, folded under the plain words.
    assert!(!has(&h, "HTTP 404"), "raw text in front");
    click(&mut h, "Details");
    assert!(
        has(&h, "HTTP 404"),
        "the exact error stays, under the plain words"
    );
    assert!(has(&h, "Downloading from NVIDIA failed"));
    // The same page in Chinese: the plain words are translated.
    click(&mut h, "中文");
    assert!(has(&h, "下载时连不上服务器，或者连接中断了。"));
    click(&mut h, "English");
    click(&mut h, "Use NVIDIA's wheels from PyPI instead");
    assert_eq!(h.state().page, Page::Choose);
    assert_eq!(
        h.state().session.settings.method,
        cuda_setup_core::recommend::Method::Wheels
    );
}

/// Linux: NVIDIA's cuDNN .tar.xz dropped on the cuDNN page is checked, then installed into
/// the toolkit's lib64 with its library links kept as links.
#[test]
fn on_linux_the_cudnn_tarball_is_checked_then_installed_with_its_links() {
    use support::cudnn_tar::{LinuxSpec, linux_toolkit};
    let m = Machine::new(windows_installer(0, 0));
    let mut o = m.options(Lang::En);
    let linux = Options::sandbox(o.tables.clone(), Os::Linux, &m.root());
    o.target = linux.target;
    o.host = Host::sandbox(
        Os::Linux,
        &m.root(),
        [("PATH".to_string(), m.bin().display().to_string())]
            .into_iter()
            .collect(),
    );
    o.overrides.driver = Some(Some("580.65.06".parse().unwrap()));
    o.cuda = Some("12.9".parse().unwrap());
    o.goal = Some(Goal::Developer);
    let spec = LinuxSpec {
        version: "9.10.2.21",
        cuda_major: 12,
        lib_size: 4096,
    };
    let tarball = m.work.path().join(spec.file_name());
    spec.write(&tarball);
    let mut h = harness(App::new(o));
    h.step();
    click(&mut h, "Next");
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    click(&mut h, "Next");
    settle(&mut h);
    // The toolkit the recommendation names, as its installer would have left it.
    let dir = h
        .state()
        .toolkit_dir()
        .expect("a toolkit in the recommendation");
    assert!(dir.ends_with("usr/local/cuda-12.9"), "{}", dir.display());
    let tk = linux_toolkit(dir.parent().unwrap(), "12.9.1");
    assert_eq!(tk, dir);

    h.state_mut().go(Page::Cudnn);
    settle(&mut h);
    assert!(has(&h, "NVIDIA's cuDNN comes as a .tar.xz archive"));
    assert!(has(&h, "Drop the cuDNN .tar.xz here"));
    h.input_mut()
        .dropped_files
        .push(Arc::new(Dropped(tarball.clone())));
    wait(&mut h, "validation", |a| {
        a.session.cudnn().check().is_some()
    });
    settle(&mut h);
    assert!(has(&h, "NVIDIA's layout:"), "layout result");
    assert!(has(&h, "Nothing has been copied yet."));
    assert!(
        !tk.join("lib64/libcudnn.so").exists(),
        "copied before install"
    );
    click(&mut h, "Install cuDNN");
    wait(&mut h, "cuDNN install", |a| {
        a.session.cudnn().installed().is_some()
    });
    settle(&mut h);
    assert!(has(&h, "cuDNN 9.10.2 is installed"));
    assert_eq!(
        std::fs::read_link(tk.join("lib64/libcudnn.so")).unwrap(),
        Path::new("libcudnn.so.9")
    );
    assert!(tk.join("lib64/libcudnn.so.9.10.2").is_file());
    assert!(tk.join("include/cudnn_version.h").is_file());
}

/// Runs test `name` alone in a child copy of this test binary with the debug-only panic
/// hook set (an environment variable is process-wide: set here, it would reach the other
/// tests running alongside).
fn in_child_with_panic_in(name: &str, point: &str) -> bool {
    if std::env::var_os("CUDA_SETUP_TEST_PANIC_IN").is_some() {
        return false;
    }
    // The test's full name in this binary: its module path without the crate's name.
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &format!("{module}::{name}"),
            "--test-threads",
            "1",
        ])
        .env("CUDA_SETUP_TEST_PANIC_IN", point)
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

/// Through the wizard to Install, whose download step then panics (the hook).
fn to_a_failed_install(h: &mut Harness<'_, App>) {
    h.step();
    click(h, "Next");
    wait(h, "detection", |a| a.session.system().report().is_some());
    click(h, "Next");
    click(h, "Developer");
    click(h, "Next");
    wait(h, "prepare", |a| !a.session.prepare().running());
    click(h, "Start installing");
    wait(h, "install", |a| !a.session.install().run().running());
    settle(h);
}

/// A bug in a step (a panic) is a failed step in plain words, with the message under
/// them; the page stops running and Back works.
#[test]
fn a_panic_in_a_step_shows_the_failure_and_back_works() {
    let name = "a_panic_in_a_step_shows_the_failure_and_back_works";
    if in_child_with_panic_in(name, "download_toolkit") {
        return;
    }
    let m = Machine::new(windows_installer(0, 0));
    let mut h = harness(App::new(m.options(Lang::En)));
    to_a_failed_install(&mut h);
    let r = h.state().session.install().run().report().cloned().unwrap();
    let f = r.failure.as_ref().unwrap();
    assert_eq!(
        (f.step, f.kind),
        (
            Some(StepKind::DownloadToolkit),
            cuda_setup_core::steps::FailureKind::Internal
        )
    );
    assert!(has(
        &h,
        "cuda-setup ran into a bug of its own, so this step stopped."
    ));
    assert!(has(&h, "please report it, with the log file"));
    click(&mut h, "Details");
    assert!(
        has(&h, "test panic in download_toolkit"),
        "the message, as details"
    );
    assert!(
        h.state()
            .session
            .install()
            .run()
            .steps()
            .iter()
            .all(|s| s.state != StepState::Running)
    );
    click(&mut h, "中文");
    assert!(has(&h, "cuda-setup 自身出现了程序错误，此步骤已停止。"));
    click(&mut h, "English");
    click(&mut h, "Back");
    assert_eq!(h.state().page, Page::Prepare);
}

/// The worker thread itself dies (a panic outside any step, here while preparing the
/// plan): the page stops waiting, says so, and Back works.
#[test]
fn a_dead_worker_is_shown_and_back_works() {
    let name = "a_dead_worker_is_shown_and_back_works";
    if in_child_with_panic_in(name, "worker_prepare") {
        return;
    }
    let m = Machine::new(windows_installer(0, 0));
    let mut h = harness(App::new(m.options(Lang::En)));
    h.step();
    click(&mut h, "Next");
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    click(&mut h, "Next");
    click(&mut h, "Developer");
    click(&mut h, "Next");
    assert_eq!(h.state().page, Page::Prepare);
    wait(&mut h, "prepare", |a| !a.session.prepare().running());
    settle(&mut h);
    assert!(!h.state().session.prepare().ready());
    assert!(has(
        &h,
        "cuda-setup ran into a bug of its own while working on this page"
    ));
    // Blocked: "Check again" is the one primary (and the only such button).
    h.get_by_label("Check again");
    assert_eq!(cuda_setup::ui::widgets::primaries_drawn(&h.ctx), 1);
    // The panic's own words only behind "Details".
    assert!(!has(&h, "test panic in worker_prepare"));
    // (The crash's, and the failed preparation's: both name it.)
    for d in h.query_all_by_label("Details").collect::<Vec<_>>() {
        d.click();
    }
    h.step();
    h.step();
    assert!(has(&h, "test panic in worker_prepare"));
    click(&mut h, "Back");
    assert_eq!(h.state().page, Page::Choose);
    assert!(
        h.state().session.crash().is_none(),
        "the note goes with the page"
    );
}

/// Detection's worker thread dies (here every time): the System page does not wait for
/// an answer that never comes — no endless "Looking at this computer…" — but says what
/// happened and offers "Detect again"; the job is done with the error, nothing else is.
#[test]
fn a_dead_detection_is_said_on_the_system_page_with_detect_again() {
    use cuda_setup::ui::job::Status as Job;
    use cuda_setup::ui::worker::JobId;
    let name = "a_dead_detection_is_said_on_the_system_page_with_detect_again";
    if in_child_with_panic_in(name, "worker_detect") {
        return;
    }
    let m = Machine::new(windows_installer(0, 0));
    let mut h = harness(App::new(m.options(Lang::En)));
    h.step();
    wait(&mut h, "detection", |a| !a.session.system().running());
    // The crash came on Welcome; its note goes with that page. System detects again on
    // entry, and that one dies too.
    click(&mut h, "Next");
    wait(&mut h, "detection again", |a| !a.session.system().running());
    settle(&mut h);
    assert_eq!(h.state().page, Page::System);
    let s = &h.state().session;
    assert_eq!(s.system().status(), Job::Failed);
    assert!(
        s.system()
            .error()
            .unwrap()
            .contains("test panic in worker_detect")
    );
    for other in JobId::ALL.into_iter().filter(|j| *j != JobId::Detect) {
        assert_eq!(s.status(other), Job::Idle, "{other:?}");
    }
    assert!(!has(&h, "Looking at this computer"), "no endless spinner");
    assert!(has(
        &h,
        "cuda-setup ran into a bug of its own while working on this page"
    ));
    click(&mut h, "Detect again");
    wait(&mut h, "detection again", |a| !a.session.system().running());
    settle(&mut h);
    assert_eq!(h.state().session.system().status(), Job::Failed);
    h.get_by_label("Detect again");
}

/// Every text the frame painted.
fn painted_texts(shapes: &[egui::epaint::ClippedShape]) -> Vec<String> {
    fn walk(shape: &egui::Shape, out: &mut Vec<String>) {
        match shape {
            egui::Shape::Text(t) => out.push(t.galley.text().to_string()),
            egui::Shape::Vec(v) => v.iter().for_each(|s| walk(s, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for c in shapes {
        walk(&c.shape, &mut out);
    }
    out
}

/// The first frame is already right — the language asked for, Chinese with every glyph
/// (a missing one panics), the first page's mode from disk — while the start-up work
/// (detection) waits until that frame is on screen, and starts with the next one. Frames
/// are run one by one here (a kittest harness runs several as it is built).
#[test]
fn the_first_frame_is_in_the_chosen_language_and_the_work_waits_for_it() {
    use cuda_setup::ui::text::t;
    for (lang, other) in [(Lang::Zh, Lang::En), (Lang::En, Lang::Zh)] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = Options::sandbox(Tables::embedded().unwrap(), Os::Windows, dir.path());
        o.lang = Some(lang);
        o.fonts = FontSource::EmbeddedOnly;
        o.file_dialogs = false;
        let ctx = egui::Context::default();
        cuda_setup::ui::setup_context(&ctx, FontSource::EmbeddedOnly);
        ctx.set_missing_glyph_policy(egui::MissingGlyphPolicy::Panic);
        let input = egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(
                egui::Pos2::ZERO,
                egui::vec2(1000.0, 1400.0),
            )),
            ..Default::default()
        };
        let mut app = App::new(o);
        let frame = |app: &mut App| {
            let mut out = ctx.run_ui(input.clone(), |ui| app.show(ui));
            // No renderer here: the font atlas's uploads are dropped.
            out.textures_delta.clear();
            out
        };

        let first = frame(&mut app);
        let texts = painted_texts(&first.shapes);
        for key in ["ui_welcome_intro", "ui_mode_setup", "ui_mode_repair"] {
            let (want, not) = (t(lang, key), t(other, key));
            assert!(texts.contains(&want), "{lang:?}: {key} not in {texts:?}");
            assert!(!texts.contains(&not), "{lang:?}: {key} in {other:?}");
        }
        // Both choices of language, each in its own script (Chinese needs the CJK font).
        assert!(texts.iter().any(|t| t == "简体中文") && texts.iter().any(|t| t == "English"));
        assert_eq!(app.page, Page::Welcome);
        assert_eq!(app.session.mode, Mode::Setup, "nothing on disk");
        assert!(
            !app.started() && app.session.system().running(),
            "{lang:?}: detection shows as running but waits for the first frame"
        );
        // The first frame asks for the second at once.
        let root = &first.viewport_output[&egui::ViewportId::ROOT];
        assert_eq!(root.repaint_delay, Duration::ZERO);

        frame(&mut app);
        assert!(app.started(), "{lang:?}: the second frame starts it");
        let t0 = Instant::now();
        while app.session.system().report().is_none() {
            assert!(
                t0.elapsed() < Duration::from_secs(90),
                "timed out: detection"
            );
            std::thread::sleep(Duration::from_millis(15));
            frame(&mut app);
        }
        assert!(!app.session.system().running());
    }
}
