//! Repair mode's "Undo what cuda-setup changed" (#35), clicked as a user would: the
//! core's plan is shown as the confirmation (nothing changes until it is confirmed), then
//! it runs with progress, and the audit runs again. A toolkit with the cuDNN of ours in
//! it: after the undo, the manifest is gone and the toolkit's own files are back.

#![cfg(unix)]

use crate::gui::{Machine, click, harness, has, settle, wait};
use crate::support;
use cuda_setup::ui::{App, Page};
use cuda_setup_core::i18n::Lang;
use support::standin::windows_installer;

#[test]
fn the_repair_page_undoes_our_cudnn_after_showing_the_list() {
    let m = Machine::new(windows_installer(0, 0));
    let parent = m
        .root()
        .join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA");
    let tk = support::cudnn_zip::toolkit(&parent, "11.8.0");
    std::fs::write(tk.join("bin/cudart64_110.dll"), b"MZ stand-in cudart").unwrap();
    // A toolkit file of NVIDIA's that our cuDNN replaces (kept as its backup).
    std::fs::write(tk.join("include/cudnn.h"), b"NVIDIA's own header\n").unwrap();
    cuda_setup_core::cudnn::install(&m.cudnn_zip(), &tk, &|_| {}).unwrap();
    let manifest = tk.join(".cuda-setup/cudnn-manifest.json");
    assert!(manifest.is_file());

    let mut h = harness(App::new(m.options(Lang::En)));
    h.step();
    settle(&mut h);
    click(&mut h, "Next");
    assert_eq!(h.state().page, Page::Repair);
    wait(&mut h, "audit", |a| a.session.repair().findings().is_some());
    settle(&mut h);
    click(&mut h, "Undo what cuda-setup changed…");
    wait(&mut h, "the plan", |a| {
        a.session.uninstall().plan().is_some()
    });
    settle(&mut h);
    assert!(has(&h, "cuda-setup will undo:"));
    assert!(has(&h, "Take cuDNN 9.10.2 out of"));
    assert!(
        manifest.is_file(),
        "nothing changes before the confirmation"
    );

    click(&mut h, "Undo these changes");
    wait(&mut h, "the undo", |a| {
        a.session.uninstall().result().is_some() && !a.session.repair().busy()
    });
    settle(&mut h);
    assert!(has(&h, "changes undone"), "the end is said");
    assert!(!manifest.exists());
    assert_eq!(
        std::fs::read(tk.join("include/cudnn.h")).unwrap(),
        b"NVIDIA's own header\n",
        "the toolkit's own file is back"
    );
    assert!(
        tk.join("bin/cudart64_110.dll").is_file(),
        "NVIDIA's toolkit stays"
    );
}
