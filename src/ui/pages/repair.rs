//! Repair (when an install is already there): the core's audit of every layer — driver,
//! toolkits, environment, cuDNN, interrupted work, PyTorch — each finding explained with
//! its fix; the fixable ones run through the same executor as an install, then the audit
//! runs again.

use egui::{RichText, Ui};

use crate::ui::app::App;
use crate::ui::progress::step_title;
use crate::ui::text::{msg, t, tf};
use crate::ui::widgets::{self, Tone};
use crate::ui::worker::Command;
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::repair::{self, Finding, FixResult, Severity};
use cuda_setup_core::run::RunEvent;
use cuda_setup_core::steps::StepEvent;

#[derive(Default)]
pub struct State {
    pub auditing: bool,
    pub findings: Option<Vec<Finding>>,
    /// Problems before the fixes ran.
    pub before: Option<usize>,
    pub fixing: bool,
    pub log: Vec<String>,
    pub fixed: Option<Box<FixResult>>,
}

impl State {
    pub fn busy(&self) -> bool {
        self.auditing || self.fixing
    }

    pub fn apply(&mut self, e: RunEvent, lang: Lang) {
        match e {
            RunEvent::Started { name, .. } => {
                self.log.push(format!("▶ {}", step_title(lang, name)))
            }
            RunEvent::Step {
                event: StepEvent::Log { line },
                ..
            } => self.log.push(format!("  {line}")),
            RunEvent::Finished { name, outcome, .. } => {
                self.log
                    .push(format!("✓ {}: {}", step_title(lang, name), outcome.detail))
            }
            RunEvent::Failed {
                name, error, hint, ..
            } => self
                .log
                .push(format!("× {}: {error} ({hint})", step_title(lang, name))),
            _ => {}
        }
    }
}

/// The facts given instead of detected, as repair takes them.
fn overrides(app: &App) -> repair::Overrides {
    repair::Overrides {
        gpu_cc: app
            .opts
            .overrides
            .gpus
            .iter()
            .map(|g| g.compute_capability)
            .collect(),
        driver: app.opts.overrides.driver.clone().flatten(),
    }
}

pub fn audit(app: &mut App) {
    app.repair.auditing = true;
    app.submit(Command::Audit {
        overrides: overrides(app),
    });
}

fn fix(app: &mut App) {
    let Some(findings) = app.repair.findings.clone() else {
        return;
    };
    app.repair.before = Some(repair::problems(&findings));
    app.repair.fixing = true;
    app.repair.log.clear();
    app.submit(Command::Fix {
        overrides: overrides(app),
        findings,
    });
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
    let how = match &f.fix {
        repair::Fix::Steps { steps } => {
            let names: Vec<String> = steps.iter().map(|s| step_title(lang, s.name())).collect();
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

pub fn show(app: &mut App, ui: &mut Ui) {
    let lang = app.lang;
    ui.label(t(lang, "ui_repair_intro"));
    if app.repair.auditing {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(t(lang, "ui_auditing"));
        });
    }
    if let (Some(before), Some(_)) = (app.repair.before, &app.repair.fixed) {
        let left = app.repair.findings.as_deref().map_or(0, repair::problems);
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
    if let Some(fixed) = &app.repair.fixed {
        for f in fixed.runs.iter().filter_map(|r| r.failure.as_ref()) {
            crate::ui::progress::failure_callout(ui, lang, f);
        }
    }
    if let Some(findings) = app.repair.findings.clone() {
        widgets::section(ui, &t(lang, "ui_findings"));
        for f in &findings {
            finding(ui, lang, f);
        }
        let problems = repair::problems(&findings);
        let fixable = findings
            .iter()
            .filter(|f| f.severity != Severity::Info && f.fixable())
            .count();
        widgets::gap(ui);
        if problems == 0 {
            widgets::note(ui, Tone::Ok, &t(lang, "ui_repair_nothing"));
        }
        ui.horizontal(|ui| {
            if fixable > 0
                && ui
                    .add_enabled(
                        !app.repair.busy(),
                        egui::Button::new(
                            RichText::new(tf(lang, "ui_fix_count", &[("count", &fixable)]))
                                .strong(),
                        ),
                    )
                    .clicked()
            {
                fix(app);
            }
            if ui
                .add_enabled(
                    !app.repair.busy(),
                    egui::Button::new(t(lang, "ui_check_again")),
                )
                .clicked()
            {
                audit(app);
            }
        });
    }
    if app.repair.fixing {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(t(lang, "ui_fixing"));
        });
    }
    if !app.repair.log.is_empty() {
        egui::CollapsingHeader::new(t(lang, "ui_live_log"))
            .id_salt("repair-log")
            .default_open(true)
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .max_height(200.0)
                    .stick_to_bottom(true)
                    .show(ui, |ui| {
                        for line in &app.repair.log {
                            ui.label(RichText::new(line).monospace().small());
                        }
                    });
            });
    }
    widgets::gap(ui);
    ui.label(RichText::new(t(lang, "ui_repair_setup_hint")).weak());
}
