//! #32: an old driver that still works gets a real choice on the Choose page. An RTX 3060
//! with driver 512.95 (CUDA 11.6) in a Windows `--root` sandbox: the driver row says what
//! the driver runs, the two paths stand side by side (update first, the default, since a
//! package of ours installs it; or keep it), and a click on "keep" asks the core again:
//! the recommendation and the plan follow.

#![cfg(unix)]

use std::path::Path;
use std::time::Duration;

use cuda_setup::ui::fonts::FontSource;
use cuda_setup::ui::{App, Options, Page};
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::detect::Deadlines;
use cuda_setup_core::i18n::{Lang, render};
use cuda_setup_core::platform::Host;
use cuda_setup_core::recommend::{DriverAction, DriverPath, Goal};
use cuda_setup_core::steps::StepKind;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use crate::gui::{click, has, settle, wait};

fn options(root: &Path, lang: Lang) -> Options {
    let mut o = Options::sandbox(Tables::embedded().unwrap(), Os::Windows, root);
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let env = [("PATH".to_string(), bin.display().to_string())]
        .into_iter()
        .collect();
    o.host = Host::sandbox(Os::Windows, root, env);
    o.lang = Some(lang);
    o.overrides = crate::support::machine::rtx_3060(Some("512.95"), "3.12");
    o.goal = Some(Goal::Pytorch);
    o.fonts = FontSource::EmbeddedOnly;
    o.file_dialogs = false;
    o.deadlines = Deadlines {
        quick: Duration::from_secs(10),
        python: Duration::from_secs(10),
    };
    o
}

fn harness(app: App) -> Harness<'static, App> {
    Harness::builder()
        .with_size([1000.0, 1400.0])
        .with_context_setup(|ctx| {
            cuda_setup::ui::setup_context(ctx, FontSource::EmbeddedOnly);
        })
        .build_ui_state(|ui, app: &mut App| app.show(ui), app)
}

fn on_choose(o: Options) -> Harness<'static, App> {
    let mut h = harness(App::new(o));
    h.step();
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    h.state_mut().go(Page::Choose);
    settle(&mut h);
    h
}

/// The driver steps of the plan Prepare made.
fn driver_steps(h: &mut Harness<'static, App>) -> usize {
    h.state_mut().go(Page::Prepare);
    wait(h, "prepare", |a| !a.session.prepare().running());
    settle(h);
    let plan = h.state().session.prepare().plan().expect("a plan").clone();
    plan.steps
        .iter()
        .filter(|s| matches!(s.kind(), StepKind::DownloadDriver | StepKind::InstallDriver))
        .count()
}

#[test]
fn an_old_driver_shows_both_paths_and_keep_replans() {
    for lang in [Lang::Zh, Lang::En] {
        let dir = tempfile::tempdir().unwrap();
        let mut h = on_choose(options(dir.path(), lang));
        let rec = h.state().session.recommendation().unwrap().clone();
        let c = rec.choice.clone().expect("two paths");
        assert_eq!(c.chosen, DriverPath::Update, "update: a package of ours");
        // The driver row says what the driver runs, outside any collapsed section.
        let supports = render(&rec.driver_supports().unwrap(), lang);
        if lang == Lang::Zh {
            assert_eq!(supports, "驱动 512.95 · 最高支持 CUDA 11.6");
        }
        assert!(has(&h, &supports), "{supports}");
        // Both paths, side by side.
        let update = render(&c.label(DriverPath::Update, Os::Windows), lang);
        let keep = render(&c.label(DriverPath::Keep, Os::Windows), lang);
        if lang == Lang::Zh {
            assert!(update.starts_with("先更新驱动（") && update.contains("需重启"));
            assert_eq!(keep, "保留现在的驱动（512.95）→ PyTorch 2.7.1");
        }
        let (u, k) = (h.get_by_label(&update).rect(), h.get_by_label(&keep).rect());
        assert!(
            (u.top() - k.top()).abs() < 4.0 && u.right() < k.left(),
            "side by side"
        );
        assert!(has(&h, &render(&c.why_default(Os::Windows), lang)));
        assert_eq!(rec.driver.action, DriverAction::Update);
        assert_eq!(
            driver_steps(&mut h),
            2,
            "update: the driver's download and install"
        );

        // "Keep": the core recommends again for the driver as it is.
        h.state_mut().go(Page::Choose);
        settle(&mut h);
        click(&mut h, &keep);
        settle(&mut h);
        let rec = h.state().session.recommendation().unwrap().clone();
        assert_eq!(rec.choice.as_ref().unwrap().chosen, DriverPath::Keep);
        assert_eq!(rec.torch.as_ref().unwrap().version.to_string(), "2.7.1");
        assert_eq!(rec.driver.action, DriverAction::None);
        // cu118 above the driver's 11.6: one sentence says why that is fine.
        assert!(has(&h, &render(&rec.wheel_above_driver().unwrap(), lang)));
        assert_eq!(driver_steps(&mut h), 0, "keep: no driver step");
    }
}

/// #32: with the old driver kept, Done's driver row is no plain "installed": it says what
/// the driver supports, that it works, and what updating it would bring.
#[test]
fn a_kept_old_driver_is_not_a_plain_tick_on_done() {
    for lang in [Lang::Zh, Lang::En] {
        let dir = tempfile::tempdir().unwrap();
        let mut h = on_choose(options(dir.path(), lang));
        let rec = h.state().session.recommendation().unwrap().clone();
        assert!(
            rec.driver_kept_old().is_none(),
            "update chosen: nothing kept"
        );
        let c = rec.choice.clone().expect("two paths");
        click(
            &mut h,
            &render(&c.label(DriverPath::Keep, Os::Windows), lang),
        );
        settle(&mut h);
        let rec = h.state().session.recommendation().unwrap().clone();
        let row = render(&rec.driver_kept_old().expect("kept"), lang);
        if lang == Lang::Zh {
            assert!(
                row.starts_with(
                    "驱动 512.95 · 最高支持 CUDA 11.6：能用；更新驱动可换用更新的 PyTorch 2."
                ),
                "{row}"
            );
        }
        h.state_mut().go(Page::Done);
        settle(&mut h);
        assert!(has(&h, &row), "{row}");
        let installed =
            cuda_setup_core::i18n::tf(lang, "ui_layer_version", &[("version", &"512.95")]);
        assert!(!has(&h, &installed), "{installed}");
    }
}
