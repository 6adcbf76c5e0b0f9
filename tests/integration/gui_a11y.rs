//! Screen readers and the keyboard (#35), through egui_kittest's AccessKit tree — the
//! tree Narrator and NVDA read once eframe is built with `accesskit`. Each page's controls
//! are found by role and name: the choice cards as radio buttons with their selected
//! state and their explanation as description, text fields named by their label, the
//! download as a progress bar with its value, the verdict as a status (a polite live
//! region) named by its sentence. The keyboard alone (Tab, Shift+Tab, Space, Enter, Esc)
//! walks a whole PyTorch setup to Done; Tab walks a page top to bottom and reaches the
//! footer last; Esc is Back, but first leaves a text field.

#![cfg(unix)]

use cuda_setup::ui::session::Action;
use cuda_setup::ui::{App, Mode, Page};
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::recommend::Goal;
use egui::Key;
use egui::accesskit::{Live, Role, Toggled};
use egui_kittest::Harness;
use egui_kittest::kittest::{By, NodeT, Queryable};

use super::gui::{Dropped, INSTALLER, Machine, harness, settle, wait};
use crate::support::server::Fault;
use crate::support::standin::windows_installer;

fn press(h: &mut Harness<'_, App>, key: Key) {
    h.key_press(key);
    h.step();
    h.step();
}

fn shift_tab(h: &mut Harness<'_, App>) {
    h.key_press_modifiers(egui::Modifiers::SHIFT, Key::Tab);
    h.step();
    h.step();
}

/// The focused node: its role, its name and where it is.
fn focused(h: &Harness<'_, App>) -> Option<(Role, String, egui::Rect)> {
    h.query_all(By::new()).find(|n| n.is_focused()).map(|n| {
        let a = n.accesskit_node();
        (a.role(), a.label().unwrap_or_default(), n.rect())
    })
}

/// Tab until the control `role` named `name` has the focus (at most 60 presses).
fn tab_to(h: &mut Harness<'_, App>, role: Role, name: &str) {
    let mut seen = Vec::new();
    for _ in 0..60 {
        press(h, Key::Tab);
        let f = focused(h);
        if f.as_ref().is_some_and(|(r, l, _)| *r == role && l == name) {
            return;
        }
        seen.push(f.map(|(r, l, _)| format!("{r:?} {l:?}")));
    }
    panic!("Tab never reached {role:?} {name:?}; it went through {seen:?}");
}

fn toggled(h: &Harness<'_, App>, role: Role, name: &str) -> Option<Toggled> {
    h.get_by_role_and_label(role, name)
        .accesskit_node()
        .toggled()
}

/// A choice card: a radio button named by its title, described by its body.
fn card(h: &Harness<'_, App>, title: &str, body: &str, selected: bool) {
    let n = h.get_by_role_and_label(Role::RadioButton, title);
    let a = n.accesskit_node();
    assert_eq!(
        a.toggled(),
        Some(if selected {
            Toggled::True
        } else {
            Toggled::False
        }),
        "{title}"
    );
    assert_eq!(a.description().as_deref(), Some(body), "{title}");
}

/// The verdict banner: one status, a polite live region, named by a sentence shown
/// inside it.
fn status(h: &Harness<'_, App>) -> String {
    let all: Vec<_> = h.query_all_by_role(Role::Status).collect();
    assert_eq!(all.len(), 1, "one verdict on the page");
    let a = all[0].accesskit_node();
    assert_eq!(a.live(), Live::Polite);
    let name = a.label().expect("the verdict is named");
    assert!(
        h.query_all_by_label(&name).count() >= 2,
        "the status's name is the sentence shown in it: {name:?}"
    );
    name
}

#[test]
fn every_page_names_its_controls_by_role() {
    // 1 MB at 400 KB/s: the Install page is caught mid-download.
    let m = Machine::new(windows_installer(0, 1_000_000));
    m.server.set_fault(
        INSTALLER,
        Fault {
            throttle: Some(400_000),
            ..Default::default()
        },
    );
    let mut o = m.options(Lang::En);
    o.goal = Some(Goal::Developer);
    let mut h = harness(App::new(o));
    h.step();
    settle(&mut h);

    // Welcome: the two modes as radio buttons, the explanation as their description.
    card(
        &h,
        "First-time setup",
        "Find the GPU and driver, choose what to install, install it and test it.",
        true,
    );
    card(
        &h,
        "Repair an existing install",
        "Check the CUDA, cuDNN and PyTorch already here, and fix what is broken.",
        false,
    );
    let back = h.get_by_role_and_label(Role::Button, "Back");
    assert!(
        back.accesskit_node().is_disabled(),
        "nothing before Welcome"
    );
    h.get_by_role_and_label(Role::Button, "Next").click();
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    settle(&mut h);
    assert_eq!(h.state().page, Page::System);
    h.get_by_role_and_label(Role::DisclosureTriangle, "Why this recommendation?");
    h.get_by_role_and_label(Role::Button, "Next").click();
    settle(&mut h);

    // Choose: the goals as radio buttons; the state follows a click.
    assert_eq!(h.state().page, Page::Choose);
    let body = |k| cuda_setup_core::i18n::t(Lang::En, k);
    card(&h, "Developer", &body("ui_goal_developer_body"), true);
    card(&h, "PyTorch only", &body("ui_goal_pytorch_body"), false);
    h.get_by_role_and_label(Role::RadioButton, "PyTorch only")
        .click();
    h.step();
    settle(&mut h);
    assert_eq!(
        toggled(&h, Role::RadioButton, "PyTorch only"),
        Some(Toggled::True)
    );
    assert_eq!(
        toggled(&h, Role::RadioButton, "Developer"),
        Some(Toggled::False)
    );
    h.get_by_role_and_label(Role::RadioButton, "Developer")
        .click();
    h.step();
    settle(&mut h);
    assert_eq!(h.state().session.goal, Goal::Developer);
    // Advanced: every field named by the label beside it.
    h.get_by_role_and_label(Role::DisclosureTriangle, "Advanced")
        .click();
    h.step();
    settle(&mut h);
    h.get_by_role_and_label(Role::TextInput, "CUDA version");
    h.get_by_role_and_label(Role::MultilineTextInput, "Download mirrors");
    h.get_by_role_and_label(Role::Slider, "Connections");
    h.get_by_role_and_label(Role::Button, "Next").click();
    wait(&mut h, "prepare", |a| !a.session.prepare().running());
    settle(&mut h);

    // Prepare → Install: the download as a progress bar with its value and its words.
    h.get_by_role_and_label(Role::Button, "Start installing")
        .click();
    wait(&mut h, "download under way", |a| {
        a.session.install().run().steps().get(1).is_some_and(|s| {
            s.state == cuda_setup::ui::progress::StepState::Running
                && s.progress.is_some_and(|p| p.0 > 0)
        })
    });
    let bars: Vec<(String, f64)> = h
        .query_all_by_role(Role::ProgressIndicator)
        .filter_map(|n| {
            let a = n.accesskit_node();
            Some((a.label()?, a.numeric_value()?))
        })
        .collect();
    assert!(
        bars.iter()
            .any(|(name, v)| name.contains(" / ") && (0.0..100.0).contains(v)),
        "the download's bar, named by its bytes, with a percentage: {bars:?}"
    );
    wait(&mut h, "install", |a| !a.session.install().run().running());
    settle(&mut h);
    h.get_by_role_and_label(Role::Button, "Next").click();
    settle(&mut h);

    // cuDNN: the archive checked and installed; then Verify's verdict is a status.
    assert_eq!(h.state().page, Page::Cudnn);
    h.input_mut()
        .dropped_files
        .push(std::sync::Arc::new(Dropped(m.cudnn_zip())));
    wait(&mut h, "validation", |a| {
        a.session.cudnn().check().is_some()
    });
    settle(&mut h);
    h.get_by_role_and_label(Role::Button, "Install cuDNN")
        .click();
    wait(&mut h, "cuDNN install", |a| {
        a.session.cudnn().installed().is_some()
    });
    settle(&mut h);
    h.get_by_role_and_label(Role::Button, "Next").click();
    wait(&mut h, "smoke", |a| a.session.verify().report().is_some());
    settle(&mut h);
    assert_eq!(h.state().page, Page::Verify);
    status(&h);
    h.get_by_role_and_label(Role::Button, "Next").click();
    settle(&mut h);

    // PyTorch: its fields named by their labels; after pip and the doctor, the verdict.
    assert_eq!(h.state().page, Page::Pytorch);
    h.get_by_role_and_label(Role::TextInput, "Python");
    h.get_by_role_and_label(
        Role::TextInput,
        "PyTorch download source (a mirror, optional)",
    );
    h.get_by_role_and_label(Role::Button, "Install PyTorch")
        .click();
    wait(&mut h, "pip and the doctor", |a| {
        !a.session.torch().busy() && a.session.torch().doctor().is_some()
    });
    settle(&mut h);
    let torch = status(&h);
    assert!(torch.contains("PyTorch"), "{torch}");
    h.get_by_role_and_label(Role::Button, "Next").click();
    settle(&mut h);

    // Done: the verdict for everything, and its buttons.
    assert_eq!(h.state().page, Page::Done);
    status(&h);
    h.get_by_role_and_label(Role::Button, "Save report");
    h.get_by_role_and_label(Role::Button, "Copy diagnostics");
    // The language switch: two toggles, the current one on.
    assert_eq!(toggled(&h, Role::Button, "English"), Some(Toggled::True));
    assert_eq!(toggled(&h, Role::Button, "中文"), Some(Toggled::False));
}

#[test]
fn the_keyboard_alone_walks_a_full_setup() {
    let m = Machine::new(windows_installer(0, 0));
    let mut h = harness(App::new(m.options(Lang::En)));
    h.step();
    settle(&mut h);

    // Welcome: Tab reaches the cards; Space picks one, and the other back.
    tab_to(&mut h, Role::RadioButton, "Repair an existing install");
    press(&mut h, Key::Space);
    assert_eq!(h.state().session.mode, Mode::Repair);
    shift_tab(&mut h);
    assert_eq!(
        focused(&h).map(|f| f.1).as_deref(),
        Some("First-time setup")
    );
    press(&mut h, Key::Space);
    assert_eq!(h.state().session.mode, Mode::Setup);
    // Enter on the focused Next.
    tab_to(&mut h, Role::Button, "Next");
    press(&mut h, Key::Enter);
    assert_eq!(h.state().page, Page::System);
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    settle(&mut h);
    press(&mut h, Key::Enter);
    assert_eq!(h.state().page, Page::Choose);
    settle(&mut h);

    // Choose: the goal by Tab and Space.
    tab_to(&mut h, Role::RadioButton, "Developer");
    press(&mut h, Key::Space);
    assert_eq!(h.state().session.goal, Goal::Developer);
    tab_to(&mut h, Role::RadioButton, "PyTorch only");
    press(&mut h, Key::Space);
    assert_eq!(h.state().session.goal, Goal::Pytorch);
    tab_to(&mut h, Role::Button, "Next");
    press(&mut h, Key::Enter);
    assert_eq!(h.state().page, Page::Prepare);
    wait(&mut h, "prepare", |a| !a.session.prepare().running());
    settle(&mut h);
    assert!(h.state().session.prepare().ready());
    press(&mut h, Key::Enter);

    // PyTorch: Enter is "Install PyTorch", then Next once the check passed.
    assert_eq!(h.state().page, Page::Pytorch);
    settle(&mut h);
    press(&mut h, Key::Enter);
    wait(&mut h, "pip and the doctor", |a| {
        !a.session.torch().busy() && a.session.torch().doctor().is_some()
    });
    settle(&mut h);
    assert_eq!(
        h.state().session.torch().doctor().unwrap().status,
        cuda_setup_core::verify::Status::Passed
    );
    press(&mut h, Key::Enter);
    assert_eq!(h.state().page, Page::Done);
    settle(&mut h);

    // Done: the report saved by Tab and Enter; Esc goes back a page.
    tab_to(&mut h, Role::Button, "Save report");
    press(&mut h, Key::Enter);
    wait(&mut h, "report", |a| a.session.saved().is_some());
    assert!(h.state().session.saved().unwrap().is_ok());
    press(&mut h, Key::Escape);
    assert_eq!(h.state().page, Page::Pytorch, "Esc is Back");
}

#[test]
fn tab_walks_the_page_top_to_bottom_and_the_footer_last() {
    let m = Machine::new(windows_installer(0, 0));
    let mut h = harness(App::new(m.options(Lang::En)));
    h.step();
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    h.state_mut().apply(Action::Go(Page::Choose));
    settle(&mut h);
    h.get_by_role_and_label(Role::DisclosureTriangle, "Advanced")
        .click();
    h.step();
    settle(&mut h);
    // Once round: from the first control to the one before it again.
    let mut order: Vec<(Role, String, egui::Rect)> = Vec::new();
    for _ in 0..80 {
        press(&mut h, Key::Tab);
        let f = focused(&h).expect("Tab always lands somewhere");
        if order.first().is_some_and(|o| o.1 == f.1 && o.0 == f.0) {
            break;
        }
        order.push(f);
    }
    let names: Vec<String> = order.iter().map(|o| format!("{:?} {}", o.0, o.1)).collect();
    assert!(order.len() > 6, "{names:?}");
    // The footer is the end of the round: Back, then the page's buttons on the right.
    let footer = order
        .iter()
        .position(|o| o.1 == "Back")
        .unwrap_or_else(|| panic!("Back is on the round: {names:?}"));
    assert!(
        order[footer..].iter().all(|o| o.0 == Role::Button),
        "after Back only the footer's buttons: {names:?}"
    );
    assert!(footer >= order.len() - 3, "{names:?}");
    // Top to bottom: no control comes before one above it (a row's controls share it).
    for w in order.windows(2) {
        assert!(
            w[1].2.top() + 8.0 >= w[0].2.top(),
            "{:?} {} above {:?} {} but after it: {names:?}",
            w[1].0,
            w[1].1,
            w[0].0,
            w[0].1
        );
    }
    // The cards and the fields are on it, in the page's order.
    let at = |name: &str| names.iter().position(|n| n.ends_with(name));
    assert!(at("PyTorch only").unwrap() < at("Developer").unwrap());
    assert!(at("Developer").unwrap() < at("Download mirrors").unwrap());
}

#[test]
fn esc_goes_back_but_first_leaves_a_text_field() {
    let m = Machine::new(windows_installer(0, 0));
    let mut h = harness(App::new(m.options(Lang::En)));
    h.step();
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    h.state_mut().apply(Action::Go(Page::Pytorch));
    settle(&mut h);
    let field = "PyTorch download source (a mirror, optional)";
    tab_to(&mut h, Role::TextInput, field);
    press(&mut h, Key::Escape);
    assert_eq!(h.state().page, Page::Pytorch, "Esc leaves the field first");
    assert!(h.ctx.memory(|m| m.focused()).is_none());
    press(&mut h, Key::Escape);
    assert_eq!(h.state().page, Page::Prepare, "then it is Back");
    press(&mut h, Key::Escape);
    assert_eq!(h.state().page, Page::Choose);
    // Nothing before the first page: Esc on Welcome stays.
    h.state_mut().apply(Action::Go(Page::Welcome));
    settle(&mut h);
    press(&mut h, Key::Escape);
    assert_eq!(h.state().page, Page::Welcome);
}

/// The shared progress bar, alone: a progress indicator named by its words, its value
/// the percentage; in high contrast too, where the words sit under the bar.
#[test]
fn a_progress_bar_says_its_value_and_its_words() {
    for high_contrast in [false, true] {
        let mut h = Harness::builder()
            .with_context_setup(move |ctx| {
                cuda_setup::ui::setup_context(ctx, cuda_setup::ui::fonts::FontSource::EmbeddedOnly);
                if high_contrast {
                    cuda_setup::ui::high_contrast::install(ctx);
                }
            })
            .build_ui(|ui| {
                cuda_setup::ui::widgets::transfer(ui, Lang::En, 250, Some(1000), 0.0, None);
            });
        h.run();
        let bar = h.get_by_role(Role::ProgressIndicator);
        let a = bar.accesskit_node();
        assert_eq!(a.numeric_value(), Some(25.0), "hc {high_contrast}");
        assert_eq!(
            a.label().as_deref(),
            Some("250 B / 1000 B"),
            "hc {high_contrast}"
        );
    }
}
