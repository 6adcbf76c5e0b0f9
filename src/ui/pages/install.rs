//! Install: the plan runs on the worker; a progress bar per step with speed and ETA, the
//! live log (folded), cancel. A failed or cancelled run can be run again: finished steps
//! are not repeated (the executor's journal).

use egui::Ui;

use super::Screen;
use crate::ui::flow::Page;
use crate::ui::session::{Action, Session, Settings};
use crate::ui::text::{msg, t};
use crate::ui::widgets::{self, Tone};
use cuda_setup_core::recommend::{Method, MethodFacts, method_advice};

#[derive(Default)]
pub struct State;

impl Screen for State {
    fn show(&mut self, s: &Session, ui: &mut Ui) -> Vec<Action> {
        show(s, ui)
    }

    fn enter(&self, s: &Session) -> Vec<Action> {
        let run = &s.install.run;
        if !run.running() && !run.succeeded() {
            vec![Action::StartInstall]
        } else {
            Vec::new()
        }
    }

    fn can_next(&self, s: &Session) -> bool {
        s.install.run.succeeded()
    }

    fn why_not_next(&self, s: &Session) -> Option<&'static str> {
        s.install.run.running().then_some("ui_wait_install")
    }

    fn busy(&self, s: &Session) -> bool {
        s.install.run.running()
    }
}

fn show(session: &Session, ui: &mut Ui) -> Vec<Action> {
    let lang = session.lang;
    let run = &session.install.run;
    let mut actions = Vec::new();
    if !run.started {
        ui.label(t(lang, "ui_nothing_to_install"));
        return actions;
    }
    run.show(ui, lang, false);
    widgets::gap(ui);
    ui.horizontal(|ui| {
        if run.running() {
            if ui.button(t(lang, "ui_cancel")).clicked() {
                actions.push(Action::CancelInstall);
            }
        } else if !run.succeeded() && ui.button(t(lang, "ui_try_again")).clicked() {
            actions.push(Action::StartInstall);
        }
        if let Some(log) = run.report.as_ref().and_then(|r| r.log_file.clone())
            && ui.button(t(lang, "ui_open_log")).clicked()
        {
            actions.push(Action::Open(log));
        }
    });
    if run.succeeded() {
        widgets::note(ui, Tone::Ok, &t(lang, "ui_install_done"));
    }
    actions.extend(offer_wheels(session, ui));
    actions
}

/// NVIDIA's server failed us: offer the same toolkit as NVIDIA's wheels from PyPI.
fn offer_wheels(session: &Session, ui: &mut Ui) -> Vec<Action> {
    let failed_download = session
        .install
        .run
        .report
        .as_ref()
        .and_then(|r| r.failure.as_ref())
        .is_some_and(|f| f.step == "download_toolkit");
    if !failed_download || session.settings.method == Method::Wheels {
        return Vec::new();
    }
    let (method, why) = method_advice(&MethodFacts {
        installer_download_failed: true,
        ..Default::default()
    });
    widgets::note(ui, Tone::Info, &msg(session.lang, &why));
    if method == Method::Wheels && ui.button(t(session.lang, "ui_use_wheels")).clicked() {
        // Another method: the session drops the plan and its failed run.
        return vec![
            Action::SetSettings(Settings {
                method: Method::Wheels,
                ..session.settings.clone()
            }),
            Action::Go(Page::Choose),
        ];
    }
    Vec::new()
}
