//! #32 in the wizard: Linux inside WSL2 (a fake WSL2 root, `support::machine::wsl2`) with
//! an RTX 3060 and no driver. The Choose page's driver card says to install the Windows
//! driver on Windows, then `wsl --shutdown`; it shows no Linux driver package or command,
//! no "I will install it myself" box, the core hands the wizard no Linux driver
//! commands, and the plan Prepare makes has no driver step.

#![cfg(unix)]

use std::path::Path;
use std::time::Duration;

use cuda_setup::ui::fonts::FontSource;
use cuda_setup::ui::session::DriverPlan;
use cuda_setup::ui::{App, Options, Page};
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::detect::Deadlines;
use cuda_setup_core::i18n::{Lang, render, t, tf};
use cuda_setup_core::platform::Host;
use cuda_setup_core::recommend::{DriverAction, Goal};
use cuda_setup_core::steps::StepKind;

use crate::gui::{harness, has, settle, wait};
use egui_kittest::kittest::{NodeT, Queryable};

fn options(root: &Path, lang: Lang) -> Options {
    crate::support::machine::wsl2(root, None);
    let mut o = Options::sandbox(Tables::embedded().unwrap(), Os::Linux, root);
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let env = [("PATH".to_string(), bin.display().to_string())]
        .into_iter()
        .collect();
    o.host = Host::sandbox(Os::Linux, root, env);
    o.lang = Some(lang);
    o.overrides = crate::support::machine::rtx_3060(None, "3.12");
    o.goal = Some(Goal::Pytorch);
    o.fonts = FontSource::EmbeddedOnly;
    o.file_dialogs = false;
    o.deadlines = Deadlines {
        quick: Duration::from_secs(10),
        python: Duration::from_secs(10),
    };
    o
}

#[test]
fn wsl2_choose_page_gives_the_windows_driver_advice_and_no_linux_driver() {
    for lang in [Lang::Zh, Lang::En] {
        let dir = tempfile::tempdir().unwrap();
        let mut h = harness(App::new(options(dir.path(), lang)));
        h.step();
        wait(&mut h, "detection", |a| {
            a.session.system().report().is_some()
        });
        h.state_mut().go(Page::Choose);
        settle(&mut h);
        let rec = h.state().session.recommendation().unwrap().clone();
        assert!(rec.wsl.is_some(), "detection saw WSL2");
        assert_eq!(rec.driver.action, DriverAction::Install);
        assert!(rec.driver.install.is_none(), "no driver a plan could run");
        // The core gives the wizard no Linux driver package or commands to show.
        let ld = h.state().session.linux_driver();
        assert!(!ld.running() && ld.advice().is_none(), "{:?}", ld.advice());

        // The headline and the card: the Windows driver, installed on Windows.
        let headline = render(&rec.driver_headline().unwrap(), lang);
        assert!(has(&h, &headline), "{headline}");
        let minimum = rec.driver.minimum.as_ref().unwrap().to_string();
        let advice = tf(lang, "ui_wsl_driver_on_windows", &[("minimum", &minimum)]);
        assert!(has(&h, &advice), "{advice}");
        assert!(advice.contains("wsl --shutdown"));
        // Nothing of a Linux driver, and no box that hands the driver to the user here.
        // (A Python install command is fine here: the root has no Python.)
        for never in [
            "nvidia-driver",
            "cuda-drivers",
            "NVIDIA-Linux",
            "apt install nvidia",
        ] {
            let found: Vec<String> = h
                .query_all_by_label_contains(never)
                .filter_map(|n| {
                    let n = n.accesskit_node();
                    n.label().or_else(|| n.value())
                })
                .collect();
            assert!(found.is_empty(), "{never:?} on the Choose page: {found:?}");
        }
        for key in ["ui_driver_myself", "ui_linux_driver_unconfirmed"] {
            assert!(!has(&h, &t(lang, key)), "{key} on the Choose page");
        }

        // Prepare's plan: no driver's download or install, and the wizard knows the
        // driver is the user's (on Windows).
        h.state_mut().go(Page::Prepare);
        wait(&mut h, "prepare", |a| !a.session.prepare().running());
        settle(&mut h);
        let plan = h.state().session.prepare().plan().expect("a plan").clone();
        let driver_steps: Vec<StepKind> = plan
            .steps
            .iter()
            .map(|s| s.kind())
            .filter(|k| matches!(k, StepKind::DownloadDriver | StepKind::InstallDriver))
            .collect();
        assert!(driver_steps.is_empty(), "{driver_steps:?}");
        assert_eq!(h.state().session.driver_plan(), DriverPlan::Yours);
    }
}
