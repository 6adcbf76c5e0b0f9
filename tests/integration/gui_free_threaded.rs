//! #32 in the wizard: a free-threaded Python is shown as such on the System page — the
//! interpreter detection found (the stand-in answers as a free-threaded 3.13.1, dossier
//! §13.4) as "Python 3.13.1t", and a Python given instead of detected as "Python 3.13t" —
//! never as the plain 3.13 whose wheels it cannot install.

#![cfg(unix)]

use std::time::Duration;

use cuda_setup::ui::fonts::FontSource;
use cuda_setup::ui::{App, Options, Page};
use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::detect::Deadlines;
use cuda_setup_core::i18n::{Lang, tf};
use cuda_setup_core::platform::Host;
use cuda_setup_core::recommend::Goal;
use egui_kittest::kittest::{NodeT, Queryable};

use crate::gui::{harness, has, settle, wait};
use crate::support::python;

#[test]
fn the_system_page_shows_a_free_threaded_python_as_3_13t() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let bin = dir.path().join("bin");
    python::interpreter(&bin, None);
    python::set_free_threaded(&bin, "3.13.1");
    let mut o = Options::sandbox(Tables::embedded().unwrap(), Os::Linux, &root);
    let env = [("PATH".to_string(), bin.display().to_string())]
        .into_iter()
        .collect();
    o.host = Host::sandbox(Os::Linux, &root, env);
    o.lang = Some(Lang::En);
    o.overrides = crate::support::machine::rtx_3060(Some("580.65.06"), "3.13");
    o.overrides.free_threaded = true;
    o.goal = Some(Goal::Pytorch);
    o.fonts = FontSource::EmbeddedOnly;
    o.file_dialogs = false;
    o.deadlines = Deadlines {
        quick: Duration::from_secs(10),
        python: Duration::from_secs(10),
    };
    let mut h = harness(App::new(o));
    h.step();
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    h.state_mut().go(Page::System);
    settle(&mut h);
    let report = h.state().session.system().report().unwrap().clone();
    assert_eq!(report.pythons.len(), 1, "{:?}", report.pythons);
    assert!(report.pythons[0].free_threaded);

    // Detected: the badge names the build (a badge is its tone's mark, then the text).
    let badges: Vec<String> = h
        .query_all_by_label_contains("Python 3.13")
        .filter_map(|n| {
            let n = n.accesskit_node();
            n.label().or_else(|| n.value())
        })
        .collect();
    assert!(
        badges.iter().any(|b| b.ends_with(" Python 3.13.1t")),
        "{badges:?}"
    );
    assert!(
        !badges.iter().any(|b| b.ends_with(" Python 3.13.1")),
        "shown as a regular build: {badges:?}"
    );
    // Given: the what-if sentence says 3.13t.
    let given = tf(
        Lang::En,
        "ui_what_if",
        &[(
            "facts",
            &"NVIDIA GeForce RTX 3060 (Ampere), Driver 580.65.06, Python 3.13t",
        )],
    );
    assert!(has(&h, &given), "{given}");
}
