//! Repair (when an install is already there): the core's audit of every layer — driver,
//! toolkits, environment, cuDNN, interrupted work, PyTorch — each finding explained with
//! its fix; the fixable ones run through the same executor as an install, then the audit
//! runs again.

use egui::{RichText, Ui};

use super::{Primary, Screen};
use crate::ui::progress::step_title;
use crate::ui::session::{Action, Session};
use crate::ui::text::{msg, t, tf};
use crate::ui::widgets::{self, Tone};
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::repair::{self, Finding, Severity};
use cuda_setup_core::steps::Step;

#[derive(Default)]
pub struct State;

impl Screen for State {
    fn show(&mut self, s: &Session, ui: &mut Ui) -> Vec<Action> {
        show(s, ui)
    }

    fn enter(&self, s: &Session) -> Vec<Action> {
        if s.repair().findings().is_none() && !s.repair().auditing() {
            vec![Action::Audit]
        } else {
            Vec::new()
        }
    }

    fn can_next(&self, s: &Session) -> bool {
        s.repair().findings().is_some() && !s.repair().busy()
    }

    fn why_not_next(&self, _s: &Session) -> Option<&'static str> {
        Some("ui_wait_repair")
    }

    fn busy(&self, s: &Session) -> bool {
        s.repair().busy()
    }

    /// Problems that cuda-setup can fix: "Fix N problems"; else Next.
    fn primary(&self, s: &Session) -> Option<Primary> {
        let fixable = fixable(s.repair().findings()?);
        (fixable > 0).then(|| {
            Primary::new(
                tf(s.lang, "ui_fix_count", &[("count", &fixable)]),
                Action::Fix,
            )
            .enabled(!s.repair().busy())
        })
    }
}

/// The problems a fix of ours can mend.
fn fixable(findings: &[Finding]) -> usize {
    findings
        .iter()
        .filter(|f| f.severity != Severity::Info && f.fixable())
        .count()
}

/// One step of a fix in words: an environment variable names itself and its value.
fn fix_step(lang: Lang, step: &Step) -> String {
    match step {
        Step::SetEnv {
            name,
            value: Some(v),
        } => tf(lang, "ui_fix_set_env", &[("name", name), ("value", v)]),
        Step::SetEnv { name, value: None } => tf(lang, "ui_fix_unset_env", &[("name", name)]),
        s => step_title(lang, s.kind()),
    }
}

/// Windows Update replaced the driver (#33): Windows' policy that stops it, off until
/// ticked, explained with its undo (unticking puts back what was there).
fn driver_policy(session: &Session, ui: &mut Ui, actions: &mut Vec<Action>) {
    let lang = session.lang;
    widgets::gap(ui);
    widgets::note(ui, Tone::Info, &t(lang, "ui_driver_policy_explain"));
    let job = session.driver_policy();
    let mut on = matches!(job.done(), Some(Ok(s)) if s.on);
    let before = on;
    ui.add_enabled(
        !job.is_running(),
        egui::Checkbox::new(&mut on, t(lang, "ui_driver_policy_checkbox")),
    );
    if on != before {
        actions.push(Action::DriverPolicy(on));
    }
    match job.done() {
        Some(Ok(s)) => widgets::note(
            ui,
            Tone::Ok,
            &cuda_setup_core::i18n::render(
                &cuda_setup_core::driverwatch::policy::describe(s),
                lang,
            ),
        ),
        Some(Err(e)) => {
            widgets::note(ui, Tone::Warn, &t(lang, "ui_driver_policy_failed"));
            ui.label(RichText::new(e).weak().small());
        }
        None => {}
    }
}

fn finding(ui: &mut Ui, lang: Lang, f: &Finding) {
    let (tone, key) = match f.severity {
        Severity::Error => (Tone::Bad, "ui_problem"),
        Severity::Warning => (Tone::Warn, "ui_warn"),
        Severity::Info => (Tone::Ok, "ui_ok"),
    };
    ui.horizontal_wrapped(|ui| {
        widgets::badge(ui, tone, &t(lang, key));
        ui.label(msg(lang, &f.message));
    });
    if let Some(raw) = cuda_setup_core::i18n::details(&f.message, lang) {
        crate::ui::progress::details(ui, lang, ("finding", f.id), &raw);
    }
    let how = match &f.fix {
        repair::Fix::Steps { steps } => {
            let names: Vec<String> = steps.iter().map(|s| fix_step(lang, s)).collect();
            tf(lang, "ui_fix_steps", &[("steps", &names.join(", "))])
        }
        repair::Fix::ResumeInstall => t(lang, "ui_fix_resume"),
        repair::Fix::Manual { how } => tf(lang, "ui_what_to_do", &[("hint", &msg(lang, how))]),
    };
    if f.severity != Severity::Info {
        ui.indent(f.id, |ui| {
            ui.label(RichText::new(how).weak());
        });
    }
}

fn show(session: &Session, ui: &mut Ui) -> Vec<Action> {
    let lang = session.lang;
    let mut actions = Vec::new();
    ui.label(t(lang, "ui_repair_intro"));
    if session.repair().auditing() {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(t(lang, "ui_auditing"));
        });
    }
    if let (Some(before), Some(_)) = (session.repair().before(), &session.repair().fixed()) {
        let left = session.repair().findings().map_or(0, repair::problems);
        widgets::note(
            ui,
            if left == 0 { Tone::Ok } else { Tone::Warn },
            &tf(
                lang,
                "ui_repair_result",
                &[("before", &before), ("left", &left)],
            ),
        );
    }
    // A fix that failed says why, as an install does.
    if let Some(fixed) = session.repair().fixed() {
        // "Check again" is drawn below the findings.
        let again = session
            .repair()
            .findings()
            .is_some()
            .then(|| t(lang, "ui_check_again"));
        let here = crate::ui::fixes::Here::new(crate::ui::flow::Page::Repair, again);
        for f in fixed.runs.iter().filter_map(|r| r.failure.as_ref()) {
            crate::ui::progress::failure_callout(ui, lang, f, &here);
        }
    }
    if let Some(findings) = session.repair().findings() {
        widgets::section(ui, &t(lang, "ui_findings"));
        for f in findings {
            finding(ui, lang, f);
        }
        if findings
            .iter()
            .any(|f| cuda_setup_core::driverwatch::offers_policy(f.id))
        {
            driver_policy(session, ui, &mut actions);
        }
        let problems = repair::problems(findings);
        widgets::gap(ui);
        if problems == 0 {
            widgets::note(ui, Tone::Ok, &t(lang, "ui_repair_nothing"));
        }
        // "Fix N problems" is the page's primary button, at the bottom.
        ui.horizontal(|ui| {
            if ui
                .add_enabled(
                    !session.repair().busy(),
                    egui::Button::new(t(lang, "ui_check_again")),
                )
                .clicked()
            {
                actions.push(Action::Audit);
            }
        });
    }
    if session.repair().fixing() {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(t(lang, "ui_fixing"));
        });
    }
    if !session.repair().log().is_empty() {
        egui::CollapsingHeader::new(t(lang, "ui_live_log"))
            .id_salt("repair-log")
            .default_open(true)
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .max_height(200.0)
                    .stick_to_bottom(true)
                    .show(ui, |ui| {
                        for line in session.repair().log() {
                            ui.label(RichText::new(line).monospace().small());
                        }
                    });
            });
    }
    widgets::gap(ui);
    ui.label(RichText::new(t(lang, "ui_repair_setup_hint")).weak());
    // Undo what cuda-setup changed (#35), once the audit has said what is there.
    if session.repair().findings().is_some() {
        widgets::gap(ui);
        crate::ui::uninstall_view::show(session, ui, &mut actions);
    }
    actions
}
