//! Install: the plan runs on the worker (the driver first, then the toolkit); a progress
//! bar per step with speed and ETA, the live log (folded), cancel. A failed or cancelled
//! run can be run again: finished steps are not repeated (the executor's journal). When
//! the driver needs a restart, the page offers "Restart now / later"; after the restart
//! the wizard opens here, and "Continue the installation" runs the rest.

use egui::{RichText, Ui};

use super::{Primary, Screen};
use crate::ui::fixes::Here;
use crate::ui::flow::Page;
use crate::ui::job::Job;
use crate::ui::progress::{StepState, step_title};
use crate::ui::session::{Action, Session, Settings};
use crate::ui::text::{msg, t};
use crate::ui::widgets::{self, Tone};
use cuda_setup_core::recommend::{Goal, Method, MethodFacts, method_advice};
use cuda_setup_core::steps::StepKind;

#[derive(Default)]
pub struct State;

impl Screen for State {
    fn show(&mut self, s: &Session, ui: &mut Ui) -> Vec<Action> {
        show(s, ui)
    }

    fn enter(&self, s: &Session) -> Vec<Action> {
        let run = &s.install().run();
        if !run.running() && !run.succeeded() && !s.install().resumed() {
            vec![Action::StartInstall]
        } else {
            Vec::new()
        }
    }

    /// Next only once everything ran: not while a restart is pending.
    fn can_next(&self, s: &Session) -> bool {
        s.install().finished()
    }

    fn why_not_next(&self, s: &Session) -> Option<&'static str> {
        s.install().run().running().then_some("ui_wait_install")
    }

    fn busy(&self, s: &Session) -> bool {
        s.install().run().running()
    }

    fn primary(&self, s: &Session) -> Option<Primary> {
        let i = s.install();
        let label = |key| t(s.lang, key);
        if i.restart_pending() {
            // Not while a restart is being arranged or under way; after "Restart later" it
            // is still there.
            let open = i.restart().is_idle() || i.restart().done() == Some(&Ok(false));
            return open
                .then(|| Primary::new(label("ui_restart_now"), Action::Restart { now: true }));
        }
        if !i.run().started() {
            return i
                .resumed()
                .then(|| Primary::new(label("ui_continue_install"), Action::StartInstall));
        }
        (!i.run().running() && !i.run().succeeded())
            .then(|| Primary::new(label("ui_try_again"), Action::StartInstall))
    }
}

fn show(session: &Session, ui: &mut Ui) -> Vec<Action> {
    let lang = session.lang;
    let run = &session.install().run();
    let mut actions = Vec::new();
    if !run.started() {
        if session.install().resumed() {
            resumed(session, ui);
        } else {
            ui.label(t(lang, "ui_nothing_to_install"));
        }
        return actions;
    }
    // A failure's words name the page's own "Try again" (the footer's primary).
    let again = State
        .primary(session)
        .filter(|p| matches!(p.actions.as_slice(), [Action::StartInstall]))
        .map(|p| p.label);
    run.show(ui, lang, false, &Here::new(Page::Install, again));
    widgets::gap(ui);
    // The step under way, when it is the driver's: what to expect, and whether Cancel is
    // safe now (the core's rule for the step).
    let driver_step = run
        .steps()
        .iter()
        .find(|r| r.state == StepState::Running)
        .map(|r| r.name)
        .filter(|k| run.running() && k.is_driver());
    if driver_step.is_some() {
        widgets::note(ui, Tone::Warn, &t(lang, "ui_driver_install_note"));
    }
    let cancel_safe = driver_step.is_none_or(|k| k.cancel_is_safe());
    ui.horizontal_wrapped(|ui| {
        if run.running() {
            let cancel = ui.add_enabled(cancel_safe, egui::Button::new(t(lang, "ui_cancel")));
            if cancel.clicked() {
                actions.push(Action::CancelInstall);
            }
            match driver_step {
                Some(_) if !cancel_safe => {
                    ui.label(RichText::new(t(lang, "ui_cancel_unsafe_driver")).strong());
                }
                Some(_) => {
                    ui.label(t(lang, "ui_cancel_safe_now"));
                }
                None => {}
            }
        }
        if let Some(log) = run.report().and_then(|r| r.log_file.clone())
            && ui.button(t(lang, "ui_open_log")).clicked()
        {
            actions.push(Action::Open(log));
        }
    });
    if session.install().restart_pending() {
        actions.extend(restart_choice(session, ui));
    } else if run.succeeded() {
        let done = match session.goal {
            Goal::Developer => "ui_install_done",
            Goal::Pytorch => "ui_install_done_driver",
        };
        widgets::note(ui, Tone::Ok, &t(lang, done));
    }
    actions.extend(offer_wheels(session, ui));
    actions
}

/// The driver is in and Windows must restart before the GPU can be used: restart now
/// (the primary button, in the footer) or later; either way cuda-setup opens again after
/// the restart and continues.
fn restart_choice(session: &Session, ui: &mut Ui) -> Vec<Action> {
    let lang = session.lang;
    let mut actions = Vec::new();
    widgets::callout(ui, Tone::Warn, |ui| {
        ui.label(
            RichText::new(t(lang, "ui_restart_title"))
                .strong()
                .size(16.0),
        );
        ui.label(t(lang, "ui_restart_body"));
        match session.install().restart() {
            Job::Idle => {
                ui.label(t(lang, "ui_restart_choose"));
                if ui.button(t(lang, "ui_restart_later")).clicked() {
                    actions.push(Action::Restart { now: false });
                }
            }
            Job::Running { .. } => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(t(lang, "ui_restart_preparing"));
                });
            }
            Job::Done(Ok(true)) => {
                ui.label(RichText::new(t(lang, "ui_restart_under_way")).strong());
            }
            Job::Done(Ok(false)) => {
                ui.label(RichText::new(t(lang, "ui_restart_later_done")).strong());
                // "Restart now" stays the primary; closing is safe: the plan waits in the
                // journal and the wizard opens on it after the restart.
                if ui.button(t(lang, "ui_close_continue_later")).clicked() {
                    ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
                }
            }
            Job::Done(Err(e)) => {
                ui.label(t(lang, "ui_restart_failed"));
                egui::CollapsingHeader::new(t(lang, "ui_details"))
                    .id_salt("restart-error")
                    .show(ui, |ui| ui.label(e));
            }
        }
    });
    actions
}

/// Opened after the driver's restart: the plan, with what ran before the restart marked
/// done (the run stopped right after the driver's steps), and "Continue the installation".
fn resumed(session: &Session, ui: &mut Ui) {
    let lang = session.lang;
    widgets::note(ui, Tone::Info, &t(lang, "ui_resume_intro"));
    widgets::gap(ui);
    let Some(plan) = session.prepare().plan() else {
        return;
    };
    let kinds: Vec<StepKind> = plan.steps.iter().map(|s| s.kind()).collect();
    // Everything up to the driver's install ran before the restart.
    let done_until = kinds
        .iter()
        .rposition(|k| *k == StepKind::InstallDriver)
        .map_or(0, |i| i + 1);
    for (i, &kind) in kinds.iter().enumerate() {
        ui.horizontal(|ui| {
            if i < done_until {
                widgets::badge(ui, Tone::Ok, &t(lang, "ui_step_done"));
            } else {
                widgets::badge(ui, Tone::Pending, &t(lang, "ui_step_next"));
            }
            ui.label(step_title(lang, kind));
        });
    }
}

/// NVIDIA's server failed us: offer the same toolkit as NVIDIA's wheels from PyPI.
fn offer_wheels(session: &Session, ui: &mut Ui) -> Vec<Action> {
    let failed_download = session
        .install()
        .run()
        .report()
        .and_then(|r| r.failure.as_ref())
        .is_some_and(|f| f.step == Some(StepKind::DownloadToolkit));
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
