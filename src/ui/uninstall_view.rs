//! Repair mode's "Undo what cuda-setup changed" (#35): the button, the core's plan as the
//! confirmation (what is undone, what is left, what is someone else's), then the run's
//! progress and its end. Draws from the session; decides nothing.

use egui::{RichText, Ui};

use crate::ui::session::{Action, Session};
use crate::ui::text::{msg, t, tf};
use crate::ui::widgets::{self, Tone};

pub fn show(session: &Session, ui: &mut Ui, actions: &mut Vec<Action>) {
    let lang = session.lang;
    let u = session.uninstall();
    widgets::section(ui, &t(lang, "ui_uninstall_title"));
    if u.running() {
        let (done, total) = u.progress();
        let label = tf(
            lang,
            "ui_uninstall_progress",
            &[("done", &done), ("total", &total)],
        );
        ui.add(egui::ProgressBar::new(done as f32 / total.max(1) as f32).text(label));
        return;
    }
    match u.result() {
        Some(Ok(n)) => widgets::note(
            ui,
            Tone::Ok,
            &tf(lang, "ui_uninstall_done", &[("count", n)]),
        ),
        Some(Err(e)) => {
            widgets::note(ui, Tone::Bad, &t(lang, "ui_uninstall_failed"));
            ui.label(RichText::new(e).weak().small());
        }
        None => {}
    }
    match u.plan() {
        Some(Ok(plan)) if plan.nothing_to_do() && plan.manual.is_empty() => {
            widgets::note(ui, Tone::Ok, &t(lang, "ui_uninstall_nothing"));
        }
        Some(Ok(plan)) => {
            let os = session.opts.target.os;
            let list = |ui: &mut Ui, title: &str, lines: Vec<String>| {
                if !lines.is_empty() {
                    ui.label(RichText::new(title).strong());
                    for l in lines {
                        ui.label(format!("• {l}"));
                    }
                }
            };
            let todo: Vec<String> = plan
                .actions
                .iter()
                .enumerate()
                .filter(|(i, _)| !plan.done.contains(i))
                .map(|(_, a)| msg(lang, &a.message()))
                .collect();
            let can_run = !todo.is_empty();
            list(ui, &t(lang, "ui_uninstall_will"), todo);
            list(
                ui,
                &t(lang, "ui_uninstall_left"),
                plan.left.iter().map(|l| msg(lang, &l.message())).collect(),
            );
            list(
                ui,
                &t(lang, "ui_uninstall_manual"),
                plan.manual
                    .iter()
                    .map(|m| msg(lang, &m.message(os)))
                    .collect(),
            );
            ui.horizontal(|ui| {
                if can_run && ui.button(t(lang, "ui_uninstall_go")).clicked() {
                    actions.push(Action::Uninstall);
                }
                if ui.button(t(lang, "ui_uninstall_keep")).clicked() {
                    actions.push(Action::CancelUninstall);
                }
            });
        }
        Some(Err(e)) => {
            widgets::note(ui, Tone::Bad, &t(lang, "ui_uninstall_failed"));
            ui.label(RichText::new(e).weak().small());
        }
        None => {
            ui.label(RichText::new(t(lang, "ui_uninstall_explain")).weak());
            let busy = u.planning() || session.repair().busy();
            if ui
                .add_enabled(!busy, egui::Button::new(t(lang, "ui_uninstall_button")))
                .clicked()
            {
                actions.push(Action::PlanUninstall);
            }
        }
    }
}
