//! The rest of the beginner's walk (#32), in Chinese: the PyTorch page brings its verdict
//! into view in a small window (800×600) without the user scrolling, above the footer;
//! Prepare says the total download with the time it takes and lists PyTorch's install,
//! and a toolkit already there is kept, not downloaded; Done's tips follow the card (a
//! 4 GB card gets the small-memory tip, a Pascal card no mixed-precision tip) and
//! Windows; a copy button says "Copied" for a moment; the step bar shows the driver's
//! Install page from the start when no driver was found.

#![cfg(unix)]

use std::time::{Duration, Instant};

use cuda_setup::ui::fonts::FontSource;
use cuda_setup::ui::worker::Event;
use cuda_setup::ui::{App, Options, Page};
use cuda_setup_core::detect::{Gpu, GpuSource, gpu::Vendor};
use cuda_setup_core::i18n::{Lang, t, tf};
use cuda_setup_core::recommend::{Goal, GpuFact};
use cuda_setup_core::steps::StepKind;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};

use super::gui::{Machine, click, has, settle, wait};
use crate::support::standin::windows_installer;

const ZH: Lang = Lang::Zh;

/// The wizard in a window of `size`, on `page` once detection is done.
fn wizard(o: Options, size: [f32; 2], page: Page) -> Harness<'static, App> {
    let mut h = Harness::builder()
        .with_size(size)
        .with_context_setup(|ctx| {
            cuda_setup::ui::setup_context(ctx, FontSource::EmbeddedOnly);
        })
        .build_ui_state(|ui, app: &mut App| app.show(ui), App::new(o));
    h.step();
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    h.state_mut().go(page);
    // Prepare starts resolving the plan (its spinner repaints): settled once done.
    wait(&mut h, "the page's work", |a| {
        !a.session.prepare().running() && !a.session.system().running()
    });
    settle(&mut h);
    h
}

fn zh(key: &'static str) -> String {
    t(ZH, key)
}

/// The words of `key` before its first placeholder.
fn head(key: &'static str) -> String {
    zh(key).split('{').next().unwrap().to_string()
}

#[test]
fn the_pytorch_page_shows_its_verdict_above_the_footer_in_a_small_window() {
    let m = Machine::new(windows_installer(0, 0));
    let mut o = m.options(ZH);
    o.goal = Some(Goal::Pytorch);
    let mut h = wizard(o, [800.0, 600.0], Page::Pytorch);
    // The primary button installs PyTorch; the doctor checks it after pip.
    click(&mut h, &zh("ui_install_pytorch"));
    wait(&mut h, "pip and the doctor", |a| {
        a.session.torch().doctor().is_some() && !a.session.torch().busy()
    });
    settle(&mut h);
    // The sentence itself (the banner's status node is named by it too, #35).
    let verdict = h
        .get_all_by_label_contains("你的显卡已可用于 PyTorch")
        .find(|n| n.accesskit_node().role() == egui::accesskit::Role::Label)
        .expect("the verdict's sentence")
        .rect();
    let footer = h.get_by_label(&zh("ui_back")).rect();
    let window = h.ctx.content_rect();
    // Whole, in the window, above the footer: no scrolling by hand.
    assert!(
        verdict.top() >= window.top() && verdict.bottom() <= footer.top(),
        "the verdict at {verdict:?}, the footer's top at {}",
        footer.top()
    );
    // The footer itself fits the window.
    assert!(
        footer.bottom() <= window.bottom(),
        "{footer:?} in {window:?}"
    );
}

#[test]
fn prepare_states_the_total_lists_pytorch_and_keeps_an_installed_toolkit() {
    let m = Machine::new(windows_installer(0, 0));
    let mut o = m.options(ZH);
    o.goal = Some(Goal::Developer);
    let mut h = wizard(o, [1000.0, 1400.0], Page::Prepare);
    wait(&mut h, "prepare", |a| {
        !a.session.prepare().running() && !a.session.system().running()
    });
    settle(&mut h);
    assert!(h.state().session.prepare().ready());
    // The total and the time, with the rate it assumed said as such.
    assert!(
        has(&h, &head("ui_plan_total")) || has(&h, &head("ui_plan_total_partial")),
        "the total download"
    );
    assert!(has(&h, "这是假设的网速"), "the rate is said to be assumed");
    // PyTorch's install is a step of its own, with its size; cuDNN's too.
    assert!(has(
        &h,
        &tf(ZH, "ui_plan_later_torch", &[("size", &"2.5 GB")])
    ));
    assert!(has(&h, &head("ui_plan_later_cudnn")));
    let download = cuda_setup::ui::progress::step_title(ZH, StepKind::DownloadToolkit);
    assert!(has(&h, &download), "the toolkit is downloaded first");

    // Installed: the next plan keeps it, and says so instead of "download / install".
    h.key_press(egui::Key::Enter);
    h.step();
    assert_eq!(h.state().page, Page::Install);
    wait(&mut h, "install", |a| !a.session.install().run().running());
    assert!(h.state().session.install().run().succeeded());
    h.state_mut().go(Page::Prepare);
    // The install starts detection again (its spinner repaints): both must be done.
    wait(&mut h, "prepare again", |a| {
        !a.session.prepare().running() && !a.session.system().running()
    });
    settle(&mut h);
    assert!(has(&h, &head("ui_plan_toolkit_kept")), "kept, in words");
    assert!(!has(&h, &download), "not downloaded again");
    let install = cuda_setup::ui::progress::step_title(ZH, StepKind::InstallToolkit);
    assert!(!has(&h, &install), "not installed again");
    let kinds: Vec<StepKind> = h
        .state()
        .session
        .prepare()
        .plan()
        .unwrap()
        .steps
        .iter()
        .map(|s| s.kind())
        .collect();
    assert!(
        !kinds.contains(&StepKind::DownloadToolkit) && !kinds.contains(&StepKind::InstallToolkit),
        "{kinds:?}"
    );
}

/// A detected card of `bytes` memory, as NVML reports it.
fn detected(name: &str, cc: &str, bytes: u64) -> Gpu {
    Gpu {
        name: name.into(),
        vendor: Vendor::Nvidia,
        source: GpuSource::Nvml,
        cuda_capable: true,
        compute_capability: Some(cc.parse().unwrap()),
        architecture: None,
        uuid: None,
        memory_total_bytes: Some(bytes),
        memory_used_bytes: None,
        pci_bus_id: None,
        pci_device_id: None,
        kernel_driver: None,
        problem: None,
    }
}

/// Done for a card of compute capability `cc` and `bytes` of memory.
fn done_for(m: &Machine, name: &str, cc: &str, bytes: u64) -> Harness<'static, App> {
    let mut o = m.options(ZH);
    o.goal = Some(Goal::Pytorch);
    o.overrides.gpus = vec![GpuFact {
        name: Some(name.into()),
        compute_capability: cc.parse().unwrap(),
    }];
    let mut h = wizard(o, [1000.0, 1600.0], Page::Done);
    let mut report = h.state().session.system().report().unwrap().clone();
    report.gpus.push(detected(name, cc, bytes));
    let _ = h
        .state_mut()
        .session
        .on_event(Event::Detected(Box::new(report), None));
    settle(&mut h);
    h
}

#[test]
fn done_tips_follow_the_card_and_windows() {
    let m = Machine::new(windows_installer(0, 0));
    // A 4 GB Pascal card: the small-memory tip, and no mixed precision (no tensor cores).
    let h = done_for(&m, "NVIDIA GeForce GTX 1050 Ti", "6.1", 4_294_639_616);
    assert!(has(&h, &zh("ui_tip_small_vram")));
    assert!(
        !has(&h, &zh("ui_tip_amp")),
        "no tensor cores, no mixed precision"
    );
    // Windows: the workers' __main__ guard and Jupyter's caveat.
    assert!(has(&h, &zh("ui_tip_loader_windows")));
    assert!(!has(&h, &zh("ui_tip_loader")));
    // A 12 GB Ampere card: mixed precision, no small-memory tip.
    let h = done_for(&m, "NVIDIA GeForce RTX 3060", "8.6", 12 << 30);
    assert!(has(&h, &zh("ui_tip_amp")));
    assert!(!has(&h, &zh("ui_tip_small_vram")));
}

#[test]
fn a_copy_button_says_copied_for_a_moment() {
    let m = Machine::new(windows_installer(0, 0));
    let mut h = done_for(&m, "NVIDIA GeForce RTX 3060", "8.6", 12 << 30);
    let copied = zh("ui_copied");
    assert!(!has(&h, &copied));
    click(&mut h, &zh("ui_copy"));
    assert!(has(&h, &copied), "said at once");
    // egui's clock moves a quarter second a frame here: gone after two seconds.
    let t0 = Instant::now();
    for _ in 0..12 {
        h.step();
    }
    assert!(t0.elapsed() < Duration::from_secs(30));
    settle(&mut h);
    assert!(!has(&h, &copied), "gone again");
}

#[test]
fn with_no_driver_the_step_bar_shows_the_install_page_from_the_start() {
    let m = Machine::new(windows_installer(0, 0));
    let mut o = m.options(ZH);
    o.goal = Some(Goal::Pytorch);
    o.overrides = crate::support::machine::rtx_3060(None, "3.11");
    let h = wizard(o, [1000.0, 1400.0], Page::System);
    let rec = h.state().session.recommendation().unwrap();
    assert!(rec.driver.install.is_some(), "a driver the wizard installs");
    assert!(
        h.state().session.prepare().plan().is_none(),
        "before Prepare"
    );
    // Welcome, System, Choose, Prepare, then the driver's Install page.
    assert!(h.state().session.steps().contains(&Page::Install));
    h.get_by_label(&format!("5. {}", zh("ui_page_install")));
}
