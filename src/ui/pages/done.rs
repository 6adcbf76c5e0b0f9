//! Done: a summary, "save report", "copy diagnostics" (a text to paste into a forum),
//! "open log".

use std::path::PathBuf;

use egui::{RichText, Ui};

use super::Screen;
use crate::ui::report;
use crate::ui::session::{Action, Session};
use crate::ui::text::{t, tf};
use crate::ui::widgets::{self, Tone};
use cuda_setup_core::recommend::Goal;
use cuda_setup_core::verify::Status;

#[derive(Default)]
pub struct State {
    /// The diagnostics went to the clipboard.
    pub copied: bool,
}

impl Screen for State {
    fn show(&mut self, s: &Session, ui: &mut Ui) -> Vec<Action> {
        show(self, s, ui)
    }

    /// The last page: Close instead of Next.
    fn can_next(&self, _s: &Session) -> bool {
        false
    }
}

/// The report's default place: the state folder's reports, named by time.
fn default_report_path(session: &Session) -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    session
        .opts
        .target
        .state_dir()
        .join("reports")
        .join(format!("cuda-setup-report-{secs}.json"))
}

fn line(ui: &mut Ui, tone: Tone, badge: &str, text: &str) {
    ui.horizontal(|ui| {
        widgets::badge(ui, tone, badge);
        ui.label(text);
    });
}

fn show(page: &mut State, session: &Session, ui: &mut Ui) -> Vec<Action> {
    let lang = session.lang;
    let mut actions = Vec::new();
    widgets::section(ui, &t(lang, "ui_summary"));
    if let Some(f) = &session.repair.findings {
        let left = cuda_setup_core::repair::problems(f);
        let tone = if left == 0 { Tone::Ok } else { Tone::Warn };
        line(
            ui,
            tone,
            &t(lang, "ui_page_repair"),
            &tf(lang, "ui_summary_repair", &[("left", &left)]),
        );
    }
    if let Some(rec) = session.recommendation() {
        let mut picks = Vec::new();
        if let Some(tk) = &rec.toolkit {
            picks.push(format!("CUDA {}", tk.label));
        }
        if let Some(p) = &rec.torch {
            picks.push(format!("PyTorch {} ({})", p.version, p.variant));
        }
        line(
            ui,
            Tone::Info,
            &t(lang, "ui_recommended"),
            &picks.join(", "),
        );
    }
    if let Some(r) = &session.install.run.report {
        let (tone, word) = if r.ok() {
            (Tone::Ok, t(lang, "ui_state_done"))
        } else {
            (Tone::Bad, t(lang, "ui_failed"))
        };
        let what = session
            .toolkit_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        line(
            ui,
            tone,
            &word,
            &tf(lang, "ui_summary_toolkit", &[("dir", &what)]),
        );
    }
    match &session.cudnn.installed {
        Some(Ok(m)) => line(
            ui,
            Tone::Ok,
            &t(lang, "ui_state_done"),
            &format!("cuDNN {}", m.cudnn_version),
        ),
        _ if session.cudnn.skipped => line(ui, Tone::Pending, &t(lang, "ui_skipped"), "cuDNN"),
        _ => {}
    }
    if let Some(r) = &session.verify.report {
        let tone = match r.status {
            Status::Passed => Tone::Ok,
            Status::Skipped => Tone::Warn,
            Status::Failed => Tone::Bad,
        };
        let word = match r.status {
            Status::Passed => t(lang, "ui_passed"),
            Status::Skipped => t(lang, "ui_skipped"),
            Status::Failed => t(lang, "ui_failed"),
        };
        line(ui, tone, &word, &t(lang, "ui_summary_smoke"));
    }
    if let Some(d) = &session.torch.doctor {
        let tone = match d.status {
            Status::Passed => Tone::Ok,
            Status::Skipped => Tone::Warn,
            Status::Failed => Tone::Bad,
        };
        let problems = d
            .findings
            .iter()
            .filter(|f| f.severity == cuda_setup_core::verify::doctor::Severity::Problem)
            .count();
        line(
            ui,
            tone,
            "PyTorch",
            &tf(lang, "ui_summary_doctor", &[("problems", &problems)]),
        );
    }
    widgets::gap(ui);
    if session.goal == Goal::Developer && session.install.run.succeeded() {
        widgets::note(ui, Tone::Info, &t(lang, "ui_new_terminal"));
    }

    widgets::section(ui, &t(lang, "ui_share"));
    ui.horizontal(|ui| {
        if ui.button(t(lang, "ui_save_report")).clicked() {
            actions.push(Action::Save {
                path: Some(default_report_path(session)),
                default_name: String::new(),
                text: report::json(session),
            });
        }
        if session.opts.file_dialogs && ui.button(t(lang, "ui_save_report_as")).clicked() {
            actions.push(Action::Save {
                path: None,
                default_name: "cuda-setup-report.json".into(),
                text: report::json(session),
            });
        }
        if ui.button(t(lang, "ui_copy_diagnostics")).clicked() {
            ui.ctx().copy_text(report::diagnostics(session));
            page.copied = true;
        }
        let log = session
            .install
            .run
            .report
            .as_ref()
            .or(session.torch.run.report.as_ref())
            .and_then(|r| r.log_file.clone());
        if let Some(log) = log
            && ui.button(t(lang, "ui_open_log")).clicked()
        {
            actions.push(Action::Open(log));
        }
    });
    if page.copied {
        ui.label(RichText::new(t(lang, "ui_copied")).weak());
    }
    match &session.saved {
        Some(Ok(p)) => {
            ui.label(tf(lang, "ui_report_saved", &[("path", &p.display())]));
        }
        Some(Err(e)) if !e.is_empty() => widgets::note(ui, Tone::Bad, e),
        _ => {}
    }
    actions
}
