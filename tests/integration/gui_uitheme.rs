//! The rest of the beginner's walk (issue #32), in Chinese, driven as a user would: the
//! cuDNN page's one primary button ("下载并安装 cuDNN x.y（约 N MB，不需要 NVIDIA 账号）",
//! Enter) downloads, checks and installs the recommended cuDNN; while the driver installs
//! the page says what to expect and whether Cancel is safe at that moment (the core's rule
//! for the running step); after "稍后重启" the page keeps "立即重启" and offers
//! "关闭，稍后再继续", the plan waiting in the journal.

#![cfg(unix)]

use std::sync::Arc;

use cuda_setup::ui::progress::StepState;
use cuda_setup::ui::text::bytes;
use cuda_setup::ui::widgets::primaries_drawn;
use cuda_setup::ui::{App, Page};
use cuda_setup_core::compat::Os;
use cuda_setup_core::i18n::{Lang, t, tf};
use cuda_setup_core::recommend::Goal;
use cuda_setup_core::steps::StepKind;
use cuda_setup_core::target::Target;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};

use crate::driver::newest_desktop;
use crate::gui::{Machine, click, harness, has, settle, wait};
use crate::gui_cudnn::{archive_for, on_cudnn_page, serve};
use crate::gui_walk::enter;
use crate::support::server::{Body, Fault};
use crate::support::standin::{Driver, driver_installer, windows_installer};

const ZH: Lang = Lang::Zh;

#[test]
fn the_cudnn_page_downloads_and_installs_the_recommended_cudnn_with_enter() {
    // The tables know few archives' sizes (those NVIDIA's manifests were read for): here
    // they know this one's, the stand-in archive's.
    let (h, pick) = on_cudnn_page(&Machine::new(windows_installer(0, 0)), |_| {});
    assert_eq!(pick.archive.size, None);
    let unsized_label = tf(
        Lang::En,
        "ui_cudnn_download_install_unsized",
        &[("version", &pick.version)],
    );
    assert!(has(&h, &unsized_label), "no size where none is known");
    drop(h);
    let scratch = tempfile::tempdir().unwrap();
    let size = archive_for(&pick, scratch.path()).1.len() as u64;
    let m = Machine::new(windows_installer(0, 0));
    let file = pick.archive.file.clone();
    let (mut h, pick) = on_cudnn_page(&m, move |o| {
        o.lang = Some(ZH);
        for a in o
            .tables
            .cudnn
            .releases
            .iter_mut()
            .flat_map(|r| &mut r.archives)
        {
            if a.file == file {
                a.size = Some(size);
            }
        }
    });
    assert_eq!(pick.archive.size, Some(size));
    serve(&m, &pick);
    // The version and size are the recommendation's, never typed.
    let label = tf(
        ZH,
        "ui_cudnn_download_install",
        &[("version", &pick.version), ("size", &bytes(size))],
    );
    assert!(label.starts_with("下载并安装 cuDNN 9.") && label.contains("不需要 NVIDIA 账号"));
    assert!(has(&h, &label), "the primary: {label}");
    assert_eq!(primaries_drawn(&h.ctx), 1);
    // The other ways are secondary buttons.
    assert!(has(&h, "我已有压缩包…") && has(&h, &t(ZH, "ui_skip_cudnn")));
    assert!(!h.state_mut().can_next());

    enter(&mut h);
    assert!(
        h.state().session.cudnn().busy(),
        "Enter started the download"
    );
    wait(&mut h, "download, check and install", |a| {
        let c = a.session.cudnn();
        c.installed().is_some() || c.download_error().is_some()
    });
    let c = h.state().session.cudnn();
    assert!(c.download_error().is_none(), "{:?}", c.download_error());
    assert!(
        matches!(c.check(), Some(Ok(_))),
        "checked before the install"
    );
    assert!(
        matches!(c.installed(), Some(Ok(_))),
        "installed with no second press"
    );
    let toolkit = h.state().toolkit_dir().unwrap();
    assert!(toolkit.join("include/cudnn_version.h").is_file());
    settle(&mut h);
    assert!(h.state_mut().can_next());
    assert!(!has(&h, &label), "done: Next is the primary now");

    // The Choose page's cuDNN row names the same size.
    h.state_mut().go(Page::Choose);
    settle(&mut h);
    assert!(has(
        &h,
        &tf(ZH, "ui_download_about", &[("size", &bytes(size))])
    ));
}

/// NVIDIA's newest desktop driver on the mirror: the stand-in, padded to `pad` bytes
/// (so a throttled download can be watched) and, with `hold`, waiting for the file
/// `driver-go` in the root before it "installs" (so its run can be watched).
fn serve_driver(m: &Machine, exit_code: i32, pad: usize, hold: bool) -> String {
    let v = newest_desktop().to_string();
    let script = String::from_utf8(driver_installer(&Driver {
        version: &v,
        exit_code,
        signer: Some("NVIDIA Corporation"),
    }))
    .unwrap();
    let (head, rest) = script.split_once('\n').unwrap();
    let mut body = format!("{head}\n");
    while body.len() < pad {
        body.push_str("# padding padding padding padding padding padding padding padding\n");
    }
    let wait = if hold {
        "while [ ! -e \"$root/driver-go\" ]; do sleep 0.05; done\necho \"installed NVIDIA driver"
    } else {
        "echo \"installed NVIDIA driver"
    };
    body.push_str(&rest.replacen("echo \"installed NVIDIA driver", wait, 1));
    let path = format!("/Windows/{v}/{v}-desktop-win10-win11-64bit-international-dch-whql.exe");
    m.server
        .add(&path, Body::Bytes(Arc::new(body.into_bytes())));
    path
}

/// The PyTorch goal on `gui::Machine`'s PC with no driver: detection, then Prepare
/// (the driver's two steps first), then Enter ("开始安装") on it.
fn install_with_no_driver(m: &Machine) -> Harness<'static, App> {
    let mut o = m.options(ZH);
    o.overrides.driver = Some(None);
    o.goal = Some(Goal::Pytorch);
    let mut h = harness(App::new(o));
    h.step();
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    h.state_mut().go(Page::Prepare);
    wait(&mut h, "prepare", |a| !a.session.prepare().running());
    settle(&mut h);
    enter(&mut h);
    assert_eq!(h.state().page, Page::Install);
    h
}

fn running_step(h: &Harness<'_, App>) -> Option<StepKind> {
    let run = h.state().session.install().run();
    run.steps()
        .iter()
        .find(|s| s.state == StepState::Running)
        .map(|s| s.name)
}

fn cancel_enabled(h: &Harness<'_, App>) -> bool {
    !h.get_by_label(&t(ZH, "ui_cancel"))
        .accesskit_node()
        .is_disabled()
}

#[test]
fn while_the_driver_installs_the_page_says_what_to_expect_and_when_cancel_is_safe() {
    let m = Machine::new(windows_installer(0, 0));
    // Slow enough on every connection the engine opens (it splits the file) that the
    // download is still running when the page is looked at: a second or more.
    let path = serve_driver(&m, 0, 1_000_000, true);
    m.server.set_fault(
        &path,
        Fault {
            throttle: Some(100_000),
            ..Fault::default()
        },
    );
    let mut h = install_with_no_driver(&m);
    let note = t(ZH, "ui_driver_install_note");
    assert!(note.starts_with("通常需要 2–5 分钟；期间屏幕可能黑屏或闪烁几秒"));

    // Downloading: the note, and Cancel is safe (only the download stops).
    wait(&mut h, "the driver's download under way", |a| {
        a.session.install().run().steps().iter().any(|s| {
            s.name == StepKind::DownloadDriver
                && s.state == StepState::Running
                && s.progress.is_some_and(|p| p.0 > 0)
        })
    });
    assert_eq!(running_step(&h), Some(StepKind::DownloadDriver));
    assert!(has(&h, &note));
    assert!(has(&h, &t(ZH, "ui_cancel_safe_now")));
    assert!(cancel_enabled(&h), "Cancel is open while it downloads");
    assert!(!has(&h, &t(ZH, "ui_cancel_unsafe_driver")));

    // NVIDIA's installer running: the note stays; Cancel is closed, with the reason.
    wait(&mut h, "the driver's installer running", |a| {
        a.session
            .install()
            .run()
            .steps()
            .iter()
            .any(|s| s.name == StepKind::InstallDriver && s.state == StepState::Running)
            && a.session
                .install()
                .run()
                .log()
                .iter()
                .any(|l| l.contains("-noreboot"))
    });
    assert!(has(&h, &note));
    assert!(has(&h, &t(ZH, "ui_cancel_unsafe_driver")));
    assert!(!has(&h, &t(ZH, "ui_cancel_safe_now")));
    assert!(
        !cancel_enabled(&h),
        "Cancel is closed while the installer runs"
    );
    // A press on it does nothing: the installer goes on.
    h.get_by_label(&t(ZH, "ui_cancel")).click();
    h.step();
    h.step();
    assert!(h.state().session.install().run().running());
    assert_eq!(running_step(&h), Some(StepKind::InstallDriver));

    std::fs::write(m.root().join("driver-go"), b"").unwrap();
    wait(&mut h, "the install", |a| {
        !a.session.install().run().running()
    });
    settle(&mut h);
    let r = h.state().session.install().run().report().cloned().unwrap();
    assert!(r.ok() && !r.cancelled, "{:?}", r.failure);
    assert!(!has(&h, &note), "the note goes with the driver's steps");
}

fn closes(h: &Harness<'_, App>) -> bool {
    h.output()
        .viewport_output
        .get(&egui::ViewportId::ROOT)
        .is_some_and(|v| v.commands.contains(&egui::ViewportCommand::Close))
}

#[test]
fn after_restart_later_the_page_keeps_restart_now_and_offers_close() {
    let m = Machine::new(windows_installer(0, 0));
    serve_driver(&m, 3010, 0, false);
    let mut h = install_with_no_driver(&m);
    wait(&mut h, "install", |a| !a.session.install().run().running());
    settle(&mut h);
    assert!(h.state().session.install().restart_pending());
    let (now, later, close) = (
        t(ZH, "ui_restart_now"),
        t(ZH, "ui_restart_later"),
        t(ZH, "ui_close_continue_later"),
    );
    assert_eq!((now.as_str(), later.as_str()), ("立即重启", "稍后重启"));
    assert_eq!(close, "关闭，稍后再继续");
    assert!(!has(&h, &close), "offered after \"later\"");
    click(&mut h, &later);
    wait(&mut h, "the restart arranged", |a| {
        a.session.install().restart().done().is_some()
    });
    settle(&mut h);
    assert_eq!(
        h.state().session.install().restart().done(),
        Some(&Ok(false))
    );
    assert!(has(&h, &now), "立即重启 stays");
    assert_eq!(primaries_drawn(&h.ctx), 1);
    assert!(has(&h, &close));
    // The plan waits in the journal: closing loses nothing.
    let target = Target::rooted(Os::Windows, &m.root());
    assert!(cuda_setup_core::run::awaiting_restart(&target).is_some());
    assert!(!closes(&h));
    h.get_by_label(&close).click();
    h.step();
    assert!(closes(&h), "the close button closes the window");
    drop(h);

    // The next start opens on Install, to continue.
    let mut o = m.options(ZH);
    o.overrides.driver = Some(None);
    o.goal = Some(Goal::Pytorch);
    let mut h = harness(App::new(o));
    h.step();
    settle(&mut h);
    assert_eq!(h.state().page, Page::Install);
    assert!(has(&h, &t(ZH, "ui_continue_install")));
}
