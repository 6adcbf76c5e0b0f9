//! Welcome: the language, and the mode — first-time setup, or repair when an install is
//! already there (then preselected).

use egui::{RichText, Ui};

use super::Screen;
use crate::ui::flow::Mode;
use crate::ui::session::{Action, Session};
use crate::ui::text::{t, tf};
use crate::ui::widgets::{self, Tone};
use cuda_setup_core::i18n::Lang;

#[derive(Default)]
pub struct State;

impl Screen for State {
    fn show(&mut self, s: &Session, ui: &mut Ui) -> Vec<Action> {
        let mut actions = Vec::new();
        let lang = s.lang;
        ui.label(t(lang, "ui_welcome_intro"));
        widgets::section(ui, &t(lang, "ui_language"));
        let mut chosen = lang;
        ui.horizontal(|ui| {
            ui.radio_value(&mut chosen, Lang::En, "English");
            ui.radio_value(&mut chosen, Lang::Zh, "简体中文");
        });
        if chosen != lang {
            actions.push(Action::SetLang(chosen));
        }
        // The rest of this frame in the language just chosen.
        let lang = chosen;
        if let Some(drift) = s.driver_drift() {
            // The driver that passed the GPU check was replaced or stopped working (#33).
            widgets::section(ui, &t(lang, "ui_driverwatch_title"));
            widgets::note(
                ui,
                Tone::Warn,
                &cuda_setup_core::i18n::render(&drift.message(), lang),
            );
            if drift.reinstall().is_some() {
                widgets::note(ui, Tone::Info, &t(lang, "ui_driverwatch_repair"));
            } else if let Some(how) = drift.manual() {
                widgets::note(ui, Tone::Info, &cuda_setup_core::i18n::render(&how, lang));
            }
        }
        widgets::section(ui, &t(lang, "ui_what_to_do_title"));
        if s.existing.found() {
            widgets::note(
                ui,
                Tone::Info,
                &tf(
                    lang,
                    "ui_existing_found",
                    &[("what", &s.existing.describe())],
                ),
            );
            if s.existing.interrupted {
                widgets::note(ui, Tone::Warn, &t(lang, "ui_interrupted_found"));
            }
            widgets::gap(ui);
        }
        // A verified PyTorch another install replaced, and the button that puts it back
        // (#33).
        actions.extend(crate::ui::guard_view::first_page(s, ui));
        let mut mode = s.mode;
        widgets::card(
            ui,
            &mut mode,
            Mode::Setup,
            &t(lang, "ui_mode_setup"),
            &t(lang, "ui_mode_setup_body"),
        );
        widgets::gap(ui);
        widgets::card(
            ui,
            &mut mode,
            Mode::Repair,
            &t(lang, "ui_mode_repair"),
            &t(lang, "ui_mode_repair_body"),
        );
        if mode != s.mode {
            actions.push(Action::SetMode(mode));
        }
        widgets::gap(ui);
        ui.label(RichText::new(t(lang, "ui_cli_hint")).weak());
        actions
    }

    /// After putting PyTorch back, the check's fix when it found a problem.
    fn primary(&self, s: &Session) -> Option<super::Primary> {
        crate::ui::guard_view::first_page_primary(s)
    }

    fn busy(&self, s: &Session) -> bool {
        s.guard().restoring() || s.torch().doctor_running()
    }
}
