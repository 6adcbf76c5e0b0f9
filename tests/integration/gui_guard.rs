//! The guard of the verified PyTorch in the wizard (#33), driven with egui_kittest as a
//! user would, against the real worker, guard and executor, with the stand-in Python of
//! tests/support/python.rs (it answers the guard's probe, plays pip, and gives the
//! doctor a working CUDA build): the PyTorch page shows the guard and its switch writes
//! and removes the pin; a system Python asks first and "Do not protect it" writes
//! nothing; a swapped build is told on the first page (English and Chinese) and its one
//! button puts the cached wheel back, then the doctor checks it. Contrast as the other
//! GUI pages (WCAG AA), in both themes.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use cuda_setup::ui::contrast;
use cuda_setup::ui::fonts::FontSource;
use cuda_setup::ui::{App, Options, Page};
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::detect::Deadlines;
use cuda_setup_core::guard::{self, EnvKind, Record, VerifiedBy, Wheel};
use cuda_setup_core::i18n::{Lang, t, tf};
use cuda_setup_core::platform::Host;
use cuda_setup_core::recommend::Goal;
use cuda_setup_core::target::Target;
use egui::Theme;
use egui_kittest::Harness;
use egui_kittest::kittest::{By, NodeT, Queryable};

use crate::gui::{click, has, settle, wait};
use crate::support::python::{self as standin, Torch};

/// What the doctor's probe prints for a working torch 2.7.1+cu118 on an RTX 3060.
const DOCTOR: &str = r#"{"python": "3.11.9", "executable": "/opt/py/bin/python3", "torch": {"version": "2.7.1+cu118", "cuda": "11.8", "cuda_available": true, "cuda_error": null, "cudnn": 90100, "cudnn_available": true, "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], "device_count": 1, "device_name": "NVIDIA GeForce RTX 3060", "device_capability": [8, 6], "driver_version": 11080}, "torch_error": null, "check": {"size": 2048, "moved_to": "cuda:0", "tensor_ok": true, "cpu_ms": 80.0, "gpu_ms": 2.0, "speedup": 40.0, "max_error": 0.0001, "tolerance": 0.01, "ok": true, "error": null}}"#;

struct Machine {
    _dir: tempfile::TempDir,
    root: PathBuf,
    bin: PathBuf,
    py: PathBuf,
    prefix: PathBuf,
}

impl Machine {
    /// A stand-in environment (`kind`: venv or system) with `torch`, whose doctor finds
    /// torch 2.7.1+cu118 working on the GPU.
    fn new(torch: &str, kind: &str) -> Machine {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("env");
        let bin = prefix.join("bin");
        let py = standin::interpreter(&bin, Some(&Torch::new(torch, None, "")));
        standin::set_env(&bin, &prefix, kind);
        standin::set_doctor(&bin, DOCTOR);
        Machine {
            root: dir.path().join("root"),
            _dir: dir,
            bin,
            py,
            prefix,
        }
    }

    /// The run without administrator rights: only it writes a pin or runs pip in the
    /// user's environment (an elevated one records only).
    fn target(&self) -> Target {
        let mut t = Target::rooted(Os::Linux, &self.root);
        t.elevated = false;
        t
    }

    /// A Linux machine in the root with an RTX 3060; the stand-in chosen for PyTorch.
    fn options(&self, lang: Lang) -> Options {
        let mut o = Options::sandbox(Tables::embedded().unwrap(), Os::Linux, &self.root);
        o.target = self.target();
        let env = [("PATH".to_string(), self.bin.display().to_string())]
            .into_iter()
            .collect();
        o.host = Host::sandbox(Os::Linux, &self.root, env);
        o.lang = Some(lang);
        o.overrides = crate::support::machine::rtx_3060(Some("580.65.06"), "3.11");
        o.goal = Some(Goal::Pytorch);
        o.python = Some(self.py.clone());
        o.fonts = FontSource::EmbeddedOnly;
        o.file_dialogs = false;
        o.deadlines = Deadlines {
            quick: Duration::from_secs(10),
            python: Duration::from_secs(10),
        };
        o
    }

    fn record(&self, env: EnvKind, wheel: Option<Wheel>) {
        let rec = Record {
            python: self.py.clone(),
            prefix: self.prefix.clone(),
            env,
            torch: "2.7.1+cu118".into(),
            version: "2.7.1".into(),
            local: Some("cu118".into()),
            variant: "cu118".into(),
            index_url: Some("https://download.pytorch.org/whl/cu118".into()),
            wheel,
            companions: Default::default(),
            verified_at: 1_764_849_600,
            by: VerifiedBy::Install,
            lifted: false,
        };
        guard::record::put(&self.target(), rec).unwrap();
    }

    fn pip_conf(&self) -> PathBuf {
        self.prefix.join("pip.conf")
    }
}

fn harness_in(app: App, theme: Theme) -> Harness<'static, App> {
    Harness::builder()
        .with_size([1000.0, 1600.0])
        .with_theme(theme)
        .with_context_setup(|ctx| {
            cuda_setup::ui::setup_context(ctx, FontSource::EmbeddedOnly);
        })
        .build_ui_state(|ui, app: &mut App| app.show(ui), app)
}

/// The wizard on the PyTorch page once the chosen Python's guard is known.
fn on_pytorch_page(m: &Machine, lang: Lang, theme: Theme) -> Harness<'static, App> {
    let mut h = harness_in(App::new(m.options(lang)), theme);
    h.step();
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    h.state_mut().go(Page::Pytorch);
    guard_known(&mut h, &m.py);
    h
}

/// Steps until the page shows `py`'s guard as the core has it now.
fn guard_known(h: &mut Harness<'static, App>, py: &Path) {
    let py = py.to_path_buf();
    wait(h, "the guard's status", move |a| {
        let g = a.session.guard();
        !g.busy() && g.status_of(&py).is_some() && !a.session.torch().busy()
    });
    settle(h);
}

fn texts(h: &Harness<'_, App>) -> Vec<String> {
    h.query_all(By::new())
        .filter_map(|n| {
            let n = n.accesskit_node();
            n.label().or_else(|| n.value())
        })
        .collect()
}

/// The doctor finds the chosen venv's torch working and guards it (the core's policy);
/// the page says so, and its switch lifts the pin (pip.conf removed) and puts it back.
#[test]
fn the_pytorch_page_shows_the_guard_and_its_switch_turns_it_off_and_on() {
    let m = Machine::new("2.7.1+cu118", "venv");
    let lang = Lang::En;
    let mut h = on_pytorch_page(&m, lang, Theme::Light);
    assert!(
        has(&h, &t(lang, "ui_guard_not_verified")),
        "before the check: {:#?}",
        texts(&h)
    );
    assert!(
        !has(&h, &t(lang, "ui_guard_switch")),
        "nothing to switch yet"
    );
    // What happens once it works is the core's policy for a venv: protected.
    assert!(has(&h, &t(lang, "ui_guard_then_guarded")));
    assert!(!has(&h, &t(lang, "ui_guard_then_asks")));

    click(&mut h, &t(lang, "ui_run_doctor"));
    wait(&mut h, "the doctor", |a| {
        a.session.torch().doctor().is_some()
    });
    guard_known(&mut h, &m.py);
    let on = "PyTorch 2.7.1+cu118 is protected: other pip installs cannot replace it.";
    assert!(has(&h, on), "{:#?}", texts(&h));
    let conf = std::fs::read_to_string(m.pip_conf()).unwrap();
    assert!(conf.contains("cuda-setup-constraints.txt"), "{conf}");

    click(&mut h, &t(lang, "ui_guard_switch"));
    guard_known(&mut h, &m.py);
    assert!(!m.pip_conf().exists(), "off: pip.conf removed");
    assert!(!m.prefix.join("cuda-setup-constraints.txt").exists());
    assert!(has(
        &h,
        &tf(lang, "ui_guard_off", &[("torch", &"2.7.1+cu118")])
    ));

    click(&mut h, &t(lang, "ui_guard_switch"));
    guard_known(&mut h, &m.py);
    assert!(m.pip_conf().is_file(), "on again: written");
    assert!(has(&h, on));
    h.state_mut()
        .apply(cuda_setup::ui::session::Action::SetLang(Lang::Zh));
    settle(&mut h);
    assert!(has(
        &h,
        "PyTorch 2.7.1+cu118 已锁定：以后用 pip 装别的东西时，不能把它换掉。"
    ));
}

/// A system Python's prefix is shared: the switch first asks, saying what is written
/// where and how to undo it; "Do not protect it" writes nothing, "Protect it" writes.
#[test]
fn a_system_python_asks_first_and_no_writes_nothing() {
    let m = Machine::new("2.7.1+cu118", "system");
    m.record(EnvKind::System, None);
    let lang = Lang::En;
    let mut h = on_pytorch_page(&m, lang, Theme::Light);
    assert!(has(&h, &t(lang, "ui_guard_off_system")), "{:#?}", texts(&h));

    click(&mut h, &t(lang, "ui_guard_switch"));
    guard_known(&mut h, &m.py);
    assert!(has(&h, &t(lang, "ui_guard_confirm_title")));
    let body = tf(
        lang,
        "ui_guard_confirm_body",
        &[
            ("prefix", &m.prefix.display()),
            ("config", &m.pip_conf().display()),
            (
                "file",
                &m.prefix.join("cuda-setup-constraints.txt").display(),
            ),
        ],
    );
    assert!(has(&h, &body), "{:#?}", texts(&h));
    assert!(has(&h, "cuda-setup guard off --python"), "how to undo it");
    assert!(!m.pip_conf().exists(), "asked, not written");

    click(&mut h, &t(lang, "ui_guard_confirm_no"));
    settle(&mut h);
    assert!(h.state().session.guard().confirm().is_none());
    assert!(!has(&h, &body) && !has(&h, &t(lang, "ui_guard_confirm_yes")));
    assert!(!m.pip_conf().exists(), "no: nothing written");
    assert!(!m.prefix.join("cuda-setup-constraints.txt").exists());

    click(&mut h, &t(lang, "ui_guard_switch"));
    guard_known(&mut h, &m.py);
    click(&mut h, &t(lang, "ui_guard_confirm_yes"));
    guard_known(&mut h, &m.py);
    assert!(m.pip_conf().is_file(), "yes: written");
    assert!(has(
        &h,
        "PyTorch 2.7.1+cu118 is protected: other pip installs cannot replace it."
    ));
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

const WHEEL: &str = "torch-2.7.1+cu118-cp311-cp311-manylinux_2_28_x86_64.whl";

/// A recorded torch 2.7.1+cu118 whose wheel our download engine left in the downloads
/// folder, replaced by 2.8.0+cpu on 2025-12-04 by another install.
fn swapped() -> (Machine, PathBuf) {
    let m = Machine::new("2.8.0+cpu", "venv");
    standin::set_torch_installed_at(&m.bin, 1_764_849_600);
    let bytes = b"the wheel our download engine verified";
    let wheel = m.root.join(".cuda-setup-user/downloads").join(WHEEL);
    std::fs::create_dir_all(wheel.parent().unwrap()).unwrap();
    std::fs::write(&wheel, bytes).unwrap();
    m.record(
        EnvKind::Venv,
        Some(Wheel {
            file: WHEEL.into(),
            sha256: sha256(bytes),
        }),
    );
    (m, wheel)
}

/// The first page says what happened, in plain words, and its one button puts the
/// verified build back from the cached wheel (pip got that file: offline), then the
/// doctor checks it and the verdict ends the page.
#[test]
fn a_swap_is_told_on_the_first_page_and_its_button_puts_the_cached_wheel_back() {
    for (lang, sentence) in [
        (
            Lang::En,
            "torch 2.7.1+cu118 was replaced by 2.8.0+cpu on 2025-12-04 by another install.",
        ),
        (
            Lang::Zh,
            "torch 2.7.1+cu118 在 2025-12-04 被另一次安装换成了 2.8.0+cpu。",
        ),
    ] {
        let (m, wheel) = swapped();
        let mut h = harness_in(App::new(m.options(lang)), Theme::Light);
        h.step();
        wait(&mut h, "detection and the swaps", |a| {
            !a.session.guard().swaps().is_empty()
        });
        settle(&mut h);
        assert_eq!(h.state().page, Page::Welcome);
        assert!(has(&h, sentence), "{lang:?}: {:#?}", texts(&h));
        let button = t(lang, "ui_guard_restore");
        assert_eq!(h.query_all_by_label(&button).count(), 1, "one button");

        click(&mut h, &button);
        wait(&mut h, "the restore, then the doctor", |a| {
            let s = &a.session;
            !s.guard().restoring()
                && s.torch().doctor().is_some()
                && !s.system().running()
                && s.guard().swaps().is_empty()
        });
        settle(&mut h);
        assert_eq!(
            std::fs::read_to_string(standin::pip_install_log(&m.bin)).unwrap(),
            format!(
                "-m pip install --no-deps --force-reinstall {}\n",
                wheel.display()
            ),
            "{lang:?}: pip got the cached wheel"
        );
        assert_eq!(
            std::fs::read_to_string(m.bin.join("torch.version")).unwrap(),
            "2.7.1+cu118\n"
        );
        assert!(h.state().session.guard().restore().succeeded());
        assert!(!has(&h, sentence), "{lang:?}: told no more");
        let ready = tf(
            lang,
            "verdict_ready_torch_speed",
            &[("gpu", &"RTX 3060"), ("times", &"40")],
        );
        assert!(has(&h, &ready), "{lang:?}: the verdict: {:#?}", texts(&h));
        assert_eq!(
            h.state()
                .session
                .torch()
                .doctor()
                .unwrap()
                .python
                .as_deref(),
            Some(m.py.as_path()),
            "the doctor checked the Python put back"
        );
    }
}

/// The PyTorch page tells the same swap for the chosen Python, says the build comes back
/// without the internet, and its button is the same restore.
#[test]
fn the_pytorch_page_tells_the_swap_and_puts_it_back() {
    let (m, wheel) = swapped();
    let lang = Lang::En;
    let mut h = on_pytorch_page(&m, lang, Theme::Light);
    assert!(has(
        &h,
        "torch 2.7.1+cu118 was replaced by 2.8.0+cpu on 2025-12-04 by another install."
    ));
    assert!(has(&h, &t(lang, "ui_guard_restore_offline")));
    assert!(!has(&h, &t(lang, "ui_guard_switch")), "put it back first");
    click(&mut h, &t(lang, "ui_guard_restore"));
    wait(&mut h, "the restore, then the doctor", |a| {
        !a.session.guard().restoring() && a.session.torch().doctor().is_some()
    });
    guard_known(&mut h, &m.py);
    assert!(
        std::fs::read_to_string(standin::pip_install_log(&m.bin))
            .unwrap()
            .ends_with(&format!("{}\n", wheel.display()))
    );
    assert!(has(
        &h,
        "PyTorch 2.7.1+cu118 is protected: other pip installs cannot replace it."
    ));
}

/// Every glyph of the new parts measured against its fill (`ui::contrast`, WCAG AA), as
/// gui_contrast measures every page: the first page with a swap, the PyTorch page with
/// the system Python's question and with the guard on, in the light and the dark theme.
#[test]
fn the_guard_reaches_wcag_aa_in_both_themes() {
    for theme in [Theme::Light, Theme::Dark] {
        let mut failed = Vec::new();
        let (m, _) = swapped();
        let mut h = harness_in(App::new(m.options(Lang::Zh)), theme);
        h.step();
        wait(&mut h, "the swaps", |a| {
            !a.session.guard().swaps().is_empty()
        });
        measure(&mut h, theme, &mut failed);

        let m = Machine::new("2.7.1+cu118", "system");
        m.record(EnvKind::System, None);
        let mut h = on_pytorch_page(&m, Lang::Zh, theme);
        click(&mut h, &t(Lang::Zh, "ui_guard_switch"));
        guard_known(&mut h, &m.py);
        assert!(h.state().session.guard().confirm().is_some());
        measure(&mut h, theme, &mut failed);
        click(&mut h, &t(Lang::Zh, "ui_guard_confirm_yes"));
        guard_known(&mut h, &m.py);
        measure(&mut h, theme, &mut failed);
        assert!(
            failed.is_empty(),
            "{theme:?}: below WCAG AA:\n{}",
            failed.join("\n")
        );
    }
}

fn measure(h: &mut Harness<'_, App>, theme: Theme, failed: &mut Vec<String>) {
    settle(h);
    let base = h.ctx.style_of(theme).visuals.panel_fill;
    let disabled: Vec<egui::Rect> = h
        .query_all(By::new())
        .filter(|n| n.accesskit_node().is_disabled())
        .map(|n| n.rect())
        .collect();
    let pairs: Vec<contrast::Pair> = contrast::pairs(&h.output().shapes, base)
        .into_iter()
        .filter(|p| !disabled.iter().any(|r| r.contains(p.at)))
        .collect();
    assert!(pairs.len() > 5, "hardly anything measured");
    let page = h.state().page;
    failed.extend(
        pairs
            .into_iter()
            .filter(|p| !p.passes())
            .map(|p| format!("{page:?}: {p}")),
    );
}

/// Before the check, the page promises only what the core will do: a system Python is
/// asked about, and a wizard running as administrator only notes the build; with a build
/// recorded, the elevated wizard shows it without a switch (its switch is the user's run's).
#[test]
fn the_page_promises_only_what_the_core_does_for_this_python_and_run() {
    let lang = Lang::En;
    let m = Machine::new("2.7.1+cu118", "system");
    let h = on_pytorch_page(&m, lang, Theme::Light);
    assert!(has(&h, &t(lang, "ui_guard_not_verified")));
    assert!(has(&h, &t(lang, "ui_guard_then_asks")), "{:#?}", texts(&h));
    assert!(!has(&h, &t(lang, "ui_guard_then_guarded")));
    drop(h);

    let m = Machine::new("2.7.1+cu118", "venv");
    let elevated = |m: &Machine| {
        let mut o = m.options(lang);
        o.target.elevated = true;
        let mut h = harness_in(App::new(o), Theme::Light);
        h.step();
        wait(&mut h, "detection", |a| {
            a.session.system().report().is_some()
        });
        h.state_mut().go(Page::Pytorch);
        guard_known(&mut h, &m.py);
        h
    };
    let h = elevated(&m);
    assert!(
        has(&h, &t(lang, "ui_guard_then_recorded")),
        "{:#?}",
        texts(&h)
    );
    assert!(!has(&h, &t(lang, "ui_guard_then_guarded")));
    drop(h);
    // Recorded by the elevated run itself (its own state folder).
    let mut admin = m.target();
    admin.elevated = true;
    guard::record::put(
        &admin,
        Record {
            python: m.py.clone(),
            prefix: m.prefix.clone(),
            env: EnvKind::Venv,
            torch: "2.7.1+cu118".into(),
            version: "2.7.1".into(),
            local: Some("cu118".into()),
            variant: "cu118".into(),
            index_url: None,
            wheel: None,
            companions: Default::default(),
            verified_at: 1_764_849_600,
            by: VerifiedBy::Doctor,
            lifted: false,
        },
    )
    .unwrap();
    let h = elevated(&m);
    assert!(
        has(
            &h,
            &tf(lang, "ui_guard_elevated", &[("torch", &"2.7.1+cu118")])
        ),
        "{:#?}",
        texts(&h)
    );
    assert!(!has(&h, &t(lang, "ui_guard_switch")));
}

/// Run as administrator, the wizard says what was replaced and how to put it back as the
/// user, as `guard status` does — no button that the core would refuse.
#[test]
fn as_administrator_the_swap_is_told_without_a_button_that_would_fail() {
    let (m, _) = swapped();
    let mut admin = Target::rooted(Os::Linux, &m.root);
    admin.elevated = true;
    let rec = guard::record::find(&m.target(), &m.py).unwrap().unwrap();
    guard::record::put(&admin, rec).unwrap();
    let mut o = m.options(Lang::En);
    o.target = admin;
    let mut h = harness_in(App::new(o), Theme::Light);
    h.step();
    wait(&mut h, "detection and the swaps", |a| {
        !a.session.guard().swaps().is_empty()
    });
    settle(&mut h);
    assert!(
        has(
            &h,
            "torch 2.7.1+cu118 was replaced by 2.8.0+cpu on 2025-12-04 by another install."
        ),
        "{:#?}",
        texts(&h)
    );
    assert_eq!(
        h.query_all_by_label(&t(Lang::En, "ui_guard_restore"))
            .count(),
        0,
        "no button as administrator"
    );
    assert!(
        has(
            &h,
            "cuda-setup running as administrator does not run pip in this Python"
        ),
        "{:#?}",
        texts(&h)
    );
}
