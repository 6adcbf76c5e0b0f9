//! Welcome: the language, and the mode — first-time setup, or repair when an install is
//! already there (then preselected).

use egui::{RichText, Ui};

use crate::ui::app::{App, Mode};
use crate::ui::disk;
use crate::ui::text::{t, tf};
use crate::ui::widgets::{self, Tone};
use cuda_setup_core::i18n::Lang;

pub fn show(app: &mut App, ui: &mut Ui) {
    let lang = app.lang;
    ui.label(t(lang, "ui_welcome_intro"));
    widgets::section(ui, &t(lang, "ui_language"));
    ui.horizontal(|ui| {
        ui.radio_value(&mut app.lang, Lang::En, "English");
        ui.radio_value(&mut app.lang, Lang::Zh, "简体中文");
    });
    let lang = app.lang;
    widgets::section(ui, &t(lang, "ui_what_to_do_title"));
    if app.existing.found() {
        widgets::note(
            ui,
            Tone::Info,
            &tf(
                lang,
                "ui_existing_found",
                &[("what", &disk::describe(&app.existing))],
            ),
        );
        if app.existing.interrupted {
            widgets::note(ui, Tone::Warn, &t(lang, "ui_interrupted_found"));
        }
        widgets::gap(ui);
    }
    widgets::card(
        ui,
        &mut app.mode,
        Mode::Setup,
        &t(lang, "ui_mode_setup"),
        &t(lang, "ui_mode_setup_body"),
    );
    widgets::gap(ui);
    widgets::card(
        ui,
        &mut app.mode,
        Mode::Repair,
        &t(lang, "ui_mode_repair"),
        &t(lang, "ui_mode_repair_body"),
    );
    widgets::gap(ui);
    ui.label(RichText::new(t(lang, "ui_cli_hint")).weak());
}
