//! What is installed, as the wizard tells it (issue #31): the no-admin wheels toolkit in
//! the user's own folder opens the next start in Repair; repair mode ends with setup's
//! checks (the detected torch, its doctor check, a verdict — never "skipped" for a torch
//! detection found); and after anything is installed, detection runs again so the pages
//! show what is there now. Driven with egui_kittest as a user would, against the real
//! detection, audit and executor; the GPU and Python are stand-ins.

#![cfg(unix)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::gui::{click, harness, has, settle, wait};
use crate::gui_journey::enter;
use crate::support;
use cuda_setup::ui::fonts::FontSource;
use cuda_setup::ui::{App, Mode, Options, Page};
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::detect::Deadlines;
use cuda_setup_core::i18n::{Lang, t, tf};
use cuda_setup_core::platform::Host;
use cuda_setup_core::recommend::Goal;
use cuda_setup_core::target::Target;

/// Every text on the page (for a failing assertion's message).
fn texts(h: &egui_kittest::Harness<'_, App>) -> Vec<String> {
    use egui_kittest::kittest::{By, NodeT, Queryable};
    h.query_all(By::new())
        .filter_map(|n| {
            let n = n.accesskit_node();
            n.label().or_else(|| n.value())
        })
        .collect()
}

/// What the doctor's probe prints for a working CUDA build of torch on an RTX 3060.
const DOCTOR: &str = r#"{"python": "3.11.9", "executable": "/opt/py/bin/python3", "torch": {"version": "2.7.1+cu118", "cuda": "11.8", "cuda_available": true, "cuda_error": null, "cudnn": 90100, "cudnn_available": true, "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], "device_count": 1, "device_name": "NVIDIA GeForce RTX 3060", "device_capability": [8, 6], "driver_version": 11080}, "torch_error": null, "check": {"size": 2048, "moved_to": "cuda:0", "tensor_ok": true, "cpu_ms": 80.0, "gpu_ms": 2.0, "speedup": 40.0, "max_error": 0.0001, "tolerance": 0.01, "ok": true, "error": null}}"#;

/// What detection's probe prints with that torch, and without any.
const WITH_TORCH: &str = r#"{"version": "3.11.9", "executable": "/opt/py/bin/python3", "bits": 64, "torch": {"version": "2.7.1+cu118", "cuda": "11.8", "cuda_available": true, "cudnn": 90100, "arch_list": ["sm_86"]}, "torch_error": null}"#;
const NO_TORCH: &str = r#"{"version": "3.11.9", "executable": "/opt/py/bin/python3", "bits": 64, "torch": null, "torch_error": "not installed: No module named torch"}"#;

/// A Python stand-in named as Windows names it (`python3.exe`, found on PATH): detection's
/// probe sees torch once `torch_installed` exists, which `-m pip install` creates; the
/// doctor's probe finds the working CUDA build.
fn python_standin(bin: &Path, torch: bool) -> PathBuf {
    std::fs::create_dir_all(bin).unwrap();
    let marker = bin.join("torch_installed");
    if torch {
        std::fs::write(&marker, b"").unwrap();
    }
    let py = bin.join("python3.exe");
    let m = marker.display();
    std::fs::write(
        &py,
        format!(
            "#!/bin/sh\ncase \"$*\" in\n*CUDA_SETUP_DOCTOR*) echo 'CUDA_SETUP_DOCTOR {DOCTOR}' ;;\n\"-m pip\"*) touch '{m}'; echo 'Successfully installed torch' ;;\n*) if [ -f '{m}' ]; then echo 'CUDA_SETUP_PROBE {WITH_TORCH}'; else echo 'CUDA_SETUP_PROBE {NO_TORCH}'; fi ;;\nesac\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    py
}

/// A Windows machine in `root` with an RTX 3060 and driver 522.06 given; detection sees
/// the root and `bin` (the stand-in Python's folder).
fn options(root: &Path, bin: &Path, lang: Lang) -> Options {
    let mut o = Options::sandbox(Tables::embedded().unwrap(), Os::Windows, root);
    let env = [("PATH".to_string(), bin.display().to_string())].into();
    o.host = Host::sandbox(Os::Windows, root, env);
    o.lang = Some(lang);
    o.overrides = crate::support::machine::rtx_3060(Some("522.06"), "3.11");
    o.fonts = FontSource::EmbeddedOnly;
    o.file_dialogs = false;
    o.deadlines = Deadlines {
        quick: Duration::from_secs(10),
        python: Duration::from_secs(10),
    };
    o
}

/// A Windows user without administrator rights, on the machine itself (no `--root`):
/// every folder comes from the user's variables, here all inside `home`.
fn windows_user(home: &Path) -> Target {
    let env: BTreeMap<String, String> = [
        ("ProgramFiles", "Program Files"),
        ("ProgramData", "ProgramData"),
        ("LOCALAPPDATA", "AppData/Local"),
        ("USERPROFILE", ""),
        ("PATH", "bin"),
    ]
    .into_iter()
    .map(|(k, sub)| (k.to_string(), home.join(sub).display().to_string()))
    .collect();
    Target {
        os: Os::Windows,
        root: None,
        host: Host::sandbox(Os::Windows, home, env),
        elevated: false,
    }
}

/// The no-admin wheels install the wizard recommends puts the toolkit in the user's
/// folder (`%LOCALAPPDATA%\Programs\NVIDIA GPU Computing Toolkit\CUDA\v13.5`), assembled
/// here from stand-ins of NVIDIA's wheels as the install's step does. The next start sees
/// it: Repair is preselected and the first page names it.
#[cfg(target_arch = "x86_64")]
#[test]
fn after_the_no_admin_wheels_install_the_next_start_opens_in_repair() {
    use cuda_setup_core::wheels::{AssembleSpec, assemble};
    use support::wheels::{Platform, toolkit_standins};
    let home = tempfile::tempdir().unwrap();
    let target = windows_user(home.path());
    let wheels_dir = toolkit_standins(&home.path().join("wheels"), Platform::Windows);
    let wheels: Vec<PathBuf> = std::fs::read_dir(&wheels_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("nvidia_")
        })
        .collect();
    let dir = target.user_toolkit_dir(&"13.5".parse().unwrap());
    assert!(dir.starts_with(home.path().join("AppData/Local/Programs")));
    let spec = AssembleSpec {
        version: support::wheels::TOOLKIT.parse().unwrap(),
        wheels,
        dir: dir.clone(),
    };
    assemble(&spec, Os::Windows, &|_, _| {}, &|| false, &|_| Ok(())).unwrap();
    assert!(dir.join("bin/nvcc.exe").is_file());

    for lang in [Lang::En, Lang::Zh] {
        let mut o = options(home.path(), &home.path().join("bin"), lang);
        o.host = target.host.clone();
        o.target = target.clone();
        let mut h = harness(App::new(o));
        h.step();
        assert_eq!(h.state().page, Page::Welcome);
        assert_eq!(
            h.state().session.mode,
            Mode::Repair,
            "{lang:?}: preselected from the user's toolkit folder"
        );
        let what = format!("CUDA 13.5.0 ({})", dir.display());
        assert!(
            has(&h, &tf(lang, "ui_existing_found", &[("what", &what)])),
            "{lang:?}: the first page names it"
        );
        settle(&mut h);
    }
}

/// Repair mode's Done on a machine whose Python has torch 2.7.1+cu118: after the audit
/// and its fixes, the doctor checks that torch (the Python detection found) and Done
/// shows its version and the verdict — never "not installed (skipped)".
#[test]
fn repair_mode_ends_with_the_detected_torch_checked_and_a_verdict() {
    for lang in [Lang::En, Lang::Zh] {
        let work = tempfile::tempdir().unwrap();
        let root = work.path().join("root");
        let bin = work.path().join("bin");
        python_standin(&bin, true);
        let parent = root.join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA");
        let tk = support::cudnn_zip::toolkit(&parent, "11.8.0");
        std::fs::write(tk.join("bin/cudart64_110.dll"), b"MZ stand-in cudart").unwrap();
        let o = options(&root, &bin, lang);
        assert!(
            o.python.is_none(),
            "no Python chosen: the detected one is checked"
        );

        let mut h = harness(App::new(o));
        h.step();
        assert_eq!(h.state().session.mode, Mode::Repair);
        enter(&mut h);
        assert_eq!(h.state().page, Page::Repair);
        wait(&mut h, "audit", |a| a.session.repair().findings().is_some());
        settle(&mut h);
        // The environment was never configured: the page's primary fixes it.
        assert!(
            h.state()
                .session
                .repair()
                .findings()
                .unwrap()
                .iter()
                .any(|f| f.fixable())
        );
        enter(&mut h);
        wait(&mut h, "fixes", |a| {
            a.session.repair().fixed().is_some() && !a.session.repair().busy()
        });
        settle(&mut h);
        click(&mut h, &t(lang, "ui_next"));
        assert_eq!(h.state().page, Page::Done);
        wait(&mut h, "the doctor on the detected torch", |a| {
            a.session.torch().doctor().is_some() && !a.session.system().running()
        });
        settle(&mut h);
        let doctor = h.state().session.torch().doctor().cloned().unwrap();
        assert_eq!(
            doctor.python.as_deref(),
            Some(bin.join("python3.exe").as_path()),
            "the Python detection found with torch"
        );
        assert!(
            has(&h, &tf(lang, "ui_layer_version", &[("version", &"2.7.1")])),
            "{lang:?}: Done names the torch it checked"
        );
        assert!(!has(&h, &t(lang, "ui_layer_torch_missing")), "{lang:?}");
        let ready = tf(
            lang,
            "verdict_ready_torch_speed",
            &[("gpu", &"RTX 3060"), ("times", &"40")],
        );
        assert!(
            has(&h, &ready),
            "{lang:?}: the verdict: {ready}\n{:#?}",
            texts(&h)
        );
    }
}

/// pip installs torch: detection runs again by itself, and the System page shows the
/// torch that is there now (before: what it saw at start, until "Detect again").
#[test]
fn after_pip_the_system_page_shows_the_new_torch() {
    let lang = Lang::En;
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("root");
    let bin = work.path().join("bin");
    let mut o = options(&root, &bin, lang);
    o.python = Some(python_standin(&bin, false));
    o.goal = Some(Goal::Pytorch);
    let mut h = harness(App::new(o));
    h.step();
    assert_eq!(h.state().session.mode, Mode::Setup, "nothing installed");
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    h.state_mut().go(Page::System);
    settle(&mut h);
    assert!(
        has(&h, "Python 3.11.9") && !has(&h, "torch 2.7.1+cu118"),
        "{:#?}",
        texts(&h)
    );

    h.state_mut().go(Page::Pytorch);
    settle(&mut h);
    enter(&mut h);
    assert!(h.state().session.torch().run().started(), "pip runs");
    wait(&mut h, "pip, then detection", |a| {
        !a.session.torch().busy()
            && a.session
                .system()
                .report()
                .is_some_and(|r| r.pythons.iter().any(|p| p.torch.is_some()))
    });
    h.state_mut().go(Page::System);
    settle(&mut h);
    assert!(has(&h, "torch 2.7.1+cu118 (CUDA 11.8)"));
}

/// Repair mode's Done when a problem is left after the fixes (a removed toolkit's folder
/// in the user's PATH, which only the user can take out): the environment row says that
/// problem, on its own line — never "not installed yet (skipped)".
#[test]
fn repair_mode_done_says_the_problem_left_on_its_layer_row() {
    use cuda_setup_core::steps::env::{WindowsEnvRecord, windows_record_path};
    let lang = Lang::En;
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("root");
    let bin = work.path().join("bin");
    python_standin(&bin, true);
    let parent = root.join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA");
    let tk = support::cudnn_zip::toolkit(&parent, "11.8.0");
    std::fs::write(tk.join("bin/cudart64_110.dll"), b"MZ stand-in cudart").unwrap();
    let stale = parent.join("v10.0/bin").display().to_string();
    let record = WindowsEnvRecord {
        machine: [("Path".to_string(), r"C:\Windows".to_string())].into(),
        user: [("Path".to_string(), stale.clone())].into(),
    };
    let file = windows_record_path(&Target::rooted(Os::Windows, &root));
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, serde_json::to_vec(&record).unwrap()).unwrap();

    let mut h = harness(App::new(options(&root, &bin, lang)));
    h.step();
    enter(&mut h);
    wait(&mut h, "audit", |a| a.session.repair().findings().is_some());
    settle(&mut h);
    enter(&mut h);
    wait(&mut h, "fixes", |a| {
        a.session.repair().fixed().is_some() && !a.session.repair().busy()
    });
    settle(&mut h);
    let left = h.state().session.repair().findings().unwrap().to_vec();
    let f = left
        .iter()
        .find(|f| f.id == "repair_path_stale")
        .expect("the user's PATH entry is left");
    assert_eq!(f.layer, cuda_setup_core::repair::Layer::Env);
    click(&mut h, &t(lang, "ui_next"));
    assert_eq!(h.state().page, Page::Done);
    wait(&mut h, "the checks", |a| {
        a.session.torch().doctor().is_some() && !a.session.system().running()
    });
    settle(&mut h);
    let problem = cuda_setup_core::i18n::render(&f.message, lang);
    let row = tf(lang, "ui_layer_problem_left", &[("problem", &problem)]);
    assert!(has(&h, &row), "{row}\n{:#?}", texts(&h));
    use egui_kittest::kittest::Queryable;
    // The row's name is in its badge, after the mark.
    let env_row = h
        .query_all_by_label_contains(&t(lang, "ui_layer_env"))
        .next()
        .expect("the environment's row")
        .rect()
        .top();
    let said = h.get_by_label_contains(&row).rect().top();
    assert!(
        (said - env_row).abs() < 12.0,
        "on the environment's row\n{:#?}",
        texts(&h)
    );
    let skipped = h
        .query_all_by_label(&t(lang, "ui_layer_skipped"))
        .map(|n| n.rect().top())
        .any(|top| (top - env_row).abs() < 12.0);
    assert!(!skipped, "the environment row is not \"skipped\"");
}
