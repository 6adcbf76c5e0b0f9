//! The guard of the verified PyTorch, drawn (#33): on the first page, what another
//! install replaced with one button that puts it back (then the check and its verdict);
//! on the PyTorch page, the chosen Python's guard in plain words with its switch, a
//! system Python's question, and the same button. What each state means is the core's
//! (`guard::Status::shown`); this module only words it.

use std::path::Path;

use egui::{RichText, Ui};

use cuda_setup_core::guard::{Restore, Shown, Swap, Then};
use cuda_setup_core::i18n::Lang;

use super::fixes::Here;
use super::flow::Page;
use super::session::{Action, Said, Session};
use super::text::{msg, t, tf};
use super::verdict::{self, Scope};
use super::widgets::{self, Tone};

/// One swap: its sentence and the button that puts the verified build back.
fn swap(ui: &mut Ui, session: &Session, s: &Swap, offline: bool, actions: &mut Vec<Action>) {
    let lang = session.lang;
    widgets::callout(ui, Tone::Warn, |ui| {
        for m in s.messages() {
            ui.label(msg(lang, &m));
        }
        if offline {
            ui.label(t(lang, "ui_guard_restore_offline"));
        }
        // As administrator the core does not run pip in the user's Python: say how,
        // as `guard status` does, instead of a button that can only fail.
        if session.elevated() {
            let command = s.command();
            ui.label(tf(
                lang,
                "guard_status_elevated_restore",
                &[("command", &command)],
            ));
            return;
        }
        let busy = session.guard().restoring() || session.torch().busy();
        if ui
            .add_enabled(!busy, egui::Button::new(t(lang, "ui_guard_restore")))
            .clicked()
        {
            actions.push(Action::RestoreTorch(s.python.clone()));
        }
    });
}

/// The restore under way or done: pip's run (a failure in the page's words, naming the
/// button), then the doctor at work.
fn restoring(ui: &mut Ui, session: &Session, here: Page) {
    let lang = session.lang;
    let g = session.guard();
    if g.restore_python().is_none() {
        return;
    }
    if g.restoring() && !g.restore().started() {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(t(lang, "ui_guard_restoring"));
        });
    }
    if let Some(Said(Some(why))) = g.restore_error() {
        widgets::note(
            ui,
            Tone::Bad,
            &tf(lang, "ui_guard_restore_failed", &[("why", &msg(lang, why))]),
        );
    }
    if g.restore().started() {
        let again = Some(t(lang, "ui_guard_restore"));
        g.restore()
            .show(ui, lang, g.restore().running(), &Here::new(here, again));
    }
    if session.torch().doctor_running() && !g.restoring() {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(t(lang, "ui_guard_restore_checking"));
        });
    }
}

/// The first page: each recorded build another install replaced, the button, and — once
/// it ran — the check's verdict.
pub fn first_page(session: &Session, ui: &mut Ui) -> Vec<Action> {
    let mut actions = Vec::new();
    let swaps = session.guard().swaps();
    if swaps.is_empty() && session.guard().restore_python().is_none() {
        return actions;
    }
    for s in swaps {
        swap(ui, session, s, false, &mut actions);
    }
    restoring(ui, session, Page::Welcome);
    let restored = session.guard().restore_python().is_some() && !session.guard().restoring();
    if restored && session.torch().doctor().is_some() {
        verdict::banner(session, ui, Page::Welcome, Scope::Torch);
    }
    widgets::gap(ui);
    actions
}

/// The first page's primary once the check after a restore found a problem that a
/// button fixes (its banner names that button).
pub fn first_page_primary(session: &Session) -> Option<super::pages::Primary> {
    session.guard().restore_python()?;
    session.torch().doctor()?;
    verdict::fix_primary(session, Page::Welcome, Scope::Torch)
}

/// The PyTorch page: the chosen Python's guard and its switch.
pub fn section(session: &Session, ui: &mut Ui, python: &Path) -> Vec<Action> {
    let lang = session.lang;
    let mut actions = Vec::new();
    let g = session.guard();
    if g.stale(python) {
        actions.push(Action::GuardStatus);
    }
    widgets::section(ui, &t(lang, "ui_guard_section"));
    let Some(status) = g.status_of(python) else {
        if g.checking() {
            // No spinner: the answer takes a moment, and the page stays still meanwhile.
            ui.label(RichText::new(t(lang, "ui_guard_checking")).weak());
        } else if let Some(Said(why)) = g.failed_for(python) {
            // Asked, and the core could not say: its words, when it gave some.
            let text = why
                .as_ref()
                .map_or_else(|| t(lang, "ui_guard_unknown"), |m| msg(lang, m));
            ui.label(RichText::new(text).weak());
        }
        return actions;
    };
    let shown = status.shown();
    match &shown {
        Shown::NotVerified { then } => {
            // What happens next is the core's policy for this Python and this run.
            let next = match then {
                Then::Guarded => Some("ui_guard_then_guarded"),
                Then::Asks => Some("ui_guard_then_asks"),
                Then::Recorded => Some("ui_guard_then_recorded"),
                Then::Unknown => None,
            };
            widgets::note(ui, Tone::Info, &t(lang, "ui_guard_not_verified"));
            if let Some(key) = next {
                ui.label(RichText::new(t(lang, key)).weak());
            }
        }
        Shown::Elevated { torch } => {
            widgets::note(
                ui,
                Tone::Info,
                &tf(lang, "ui_guard_elevated", &[("torch", torch)]),
            );
        }
        Shown::Unknown => widgets::note(ui, Tone::Info, &t(lang, "ui_guard_unknown")),
        Shown::Swapped(s) => {
            let offline = matches!(&status.restore, Some(Restore::Cache { companions, .. }) if companions.is_empty());
            swap(ui, session, s, offline, &mut actions);
        }
        Shown::On { torch } => {
            widgets::note(ui, Tone::Ok, &tf(lang, "ui_guard_on", &[("torch", torch)]));
        }
        Shown::Off { torch, system } => {
            widgets::note(
                ui,
                Tone::Warn,
                &tf(lang, "ui_guard_off", &[("torch", torch)]),
            );
            if *system {
                ui.label(RichText::new(t(lang, "ui_guard_off_system")).weak());
            }
        }
        Shown::Broken { torch } => {
            widgets::note(
                ui,
                Tone::Warn,
                &tf(lang, "ui_guard_broken", &[("torch", torch)]),
            );
        }
    }
    // The pin is there, but pip's environment switches it off: said under its state.
    if let Some(m) = status.ignored_message() {
        widgets::note(ui, Tone::Warn, &msg(lang, &m));
    }
    if shown.switchable() {
        let was = matches!(shown, Shown::On { .. });
        let mut on = was;
        let enabled = !g.busy() && g.confirm().is_none();
        ui.add_enabled(
            enabled,
            egui::Checkbox::new(&mut on, t(lang, "ui_guard_switch")),
        );
        if on != was {
            actions.push(Action::GuardSwitch(on));
        }
    }
    if let Some(c) = g.confirm() {
        confirm(ui, lang, c, &mut actions);
    }
    if let Some(e) = g.error() {
        widgets::note(ui, Tone::Bad, &msg(lang, e));
    }
    restoring(ui, session, Page::Pytorch);
    actions
}

/// A system Python's question: what is written where, and how to undo it.
fn confirm(ui: &mut Ui, lang: Lang, c: &super::session::Confirm, actions: &mut Vec<Action>) {
    let python = cuda_setup_core::verify::doctor::shell_quote(&c.python);
    widgets::callout(ui, Tone::Warn, |ui| {
        ui.label(RichText::new(t(lang, "ui_guard_confirm_title")).strong());
        ui.label(tf(
            lang,
            "ui_guard_confirm_body",
            &[
                ("prefix", &c.prefix.display()),
                ("config", &c.places.config.display()),
                ("file", &c.places.constraints.display()),
            ],
        ));
        ui.label(tf(lang, "ui_guard_confirm_undo", &[("python", &python)]));
        ui.horizontal(|ui| {
            if ui.button(t(lang, "ui_guard_confirm_yes")).clicked() {
                actions.push(Action::GuardConfirm(true));
            }
            if ui.button(t(lang, "ui_guard_confirm_no")).clicked() {
                actions.push(Action::GuardConfirm(false));
            }
        });
    });
}
