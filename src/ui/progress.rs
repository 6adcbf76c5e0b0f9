//! A plan's run as the UI shows it: one row per step with its status, a progress bar
//! with speed and ETA while it downloads, and the live log. Built from the executor's
//! `RunEvent`s (the Install page and the PyTorch page's pip run).

use egui::{RichText, Ui};

use cuda_setup_core::download::Cancel;
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::plan::Plan;
use cuda_setup_core::run::{RunEvent, RunReport};
use cuda_setup_core::steps::{StepEvent, StepKind};

use super::fixes::{self, Here};
use super::job::{Job, Status};
use super::text::{msg, t, tf};
use super::widgets::{self, Tone};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepState {
    Waiting,
    Running,
    Done { changed: bool },
    DoneBefore,
    Failed,
    Cancelled,
}

#[derive(Debug, Clone)]
pub struct StepRow {
    pub name: StepKind,
    pub state: StepState,
    pub progress: Option<(u64, Option<u64>, f64, Option<f64>)>,
    /// The host serving the download now.
    pub source: Option<String>,
    pub detail: String,
}

/// A run's rows and log, and the run as a job: not started, running (with its cancel),
/// done with its report.
#[derive(Default)]
pub struct RunView {
    steps: Vec<StepRow>,
    log: Vec<String>,
    job: Job<Box<RunReport>>,
}

/// The translated title of a step.
pub fn step_title(lang: Lang, kind: StepKind) -> String {
    t(lang, cuda_setup_core::steps::title_key(kind))
}

impl RunView {
    /// A fresh view of `plan`, about to run.
    pub fn start(plan: &Plan, cancel: Cancel) -> RunView {
        RunView {
            steps: plan
                .steps
                .iter()
                .map(|s| StepRow {
                    name: s.kind(),
                    state: StepState::Waiting,
                    progress: None,
                    source: None,
                    detail: String::new(),
                })
                .collect(),
            log: Vec::new(),
            job: Job::cancellable(cancel),
        }
    }

    /// Started (running, or done with its report).
    pub fn started(&self) -> bool {
        !self.job.is_idle()
    }

    pub fn running(&self) -> bool {
        self.job.is_running()
    }

    /// The executor's report, once the run ended (a crashed one included).
    pub fn report(&self) -> Option<&RunReport> {
        self.job.done().map(|r| &**r)
    }

    pub fn succeeded(&self) -> bool {
        self.report().is_some_and(|r| r.ok())
    }

    pub fn status(&self) -> Status {
        match self.report() {
            None if self.running() => Status::Running,
            None => Status::Idle,
            Some(r) if r.failure.is_some() => Status::Failed,
            Some(_) => Status::Done,
        }
    }

    pub fn steps(&self) -> &[StepRow] {
        &self.steps
    }

    pub fn log(&self) -> &[String] {
        &self.log
    }

    pub fn cancel(&self) {
        self.job.cancel();
    }

    pub fn apply(&mut self, e: RunEvent, lang: Lang) {
        self.log.extend(log_line(&e, lang));
        match e {
            RunEvent::Started { index, .. } => {
                if let Some(s) = self.steps.get_mut(index) {
                    s.state = StepState::Running;
                }
            }
            RunEvent::Step { index, event } => match event {
                StepEvent::Progress {
                    done,
                    total,
                    bytes_per_sec,
                    eta_secs,
                    source,
                } => {
                    if let Some(s) = self.steps.get_mut(index) {
                        s.progress = Some((done, total, bytes_per_sec, eta_secs));
                        s.source = source;
                    }
                }
                StepEvent::Log { .. } => {}
            },
            RunEvent::Finished {
                index,
                outcome,
                skipped,
                ..
            } => {
                if let Some(s) = self.steps.get_mut(index) {
                    s.state = if skipped {
                        StepState::DoneBefore
                    } else {
                        StepState::Done {
                            changed: outcome.changed,
                        }
                    };
                    s.detail = cuda_setup_core::i18n::render(&outcome.detail, lang);
                }
            }
            RunEvent::Failed { index, error, .. } => {
                if let Some(s) = self.steps.get_mut(index) {
                    s.state = StepState::Failed;
                    s.detail = error.clone();
                }
            }
            RunEvent::Done(r) => {
                // What was running when a cancel came, and what the report calls cancelled.
                for (row, rep) in self.steps.iter_mut().zip(&r.steps) {
                    if rep.status == cuda_setup_core::run::StepStatus::Cancelled
                        || (row.state == StepState::Running && r.cancelled)
                    {
                        row.state = StepState::Cancelled;
                    }
                }
                // The executor died mid-step (its report has no row for it): failed.
                if r.failure.is_some() {
                    for row in &mut self.steps {
                        if row.state == StepState::Running {
                            row.state = StepState::Failed;
                        }
                    }
                }
                self.job.finish(r);
            }
        }
    }

    /// The step rows, then the outcome, then the log (open, or folded to expand); a
    /// failure says what to do `here`.
    pub fn show(&self, ui: &mut Ui, lang: Lang, log_open: bool, here: &Here) {
        for s in &self.steps {
            ui.horizontal(|ui| {
                let (tone, label) = match s.state {
                    StepState::Waiting => (Tone::Pending, t(lang, "ui_state_waiting")),
                    StepState::Running => (Tone::Info, t(lang, "ui_state_running")),
                    // Checks change nothing by nature; elsewhere it means "already there".
                    StepState::Done { changed: false }
                        if !matches!(s.name, StepKind::Preflight | StepKind::Verify) =>
                    {
                        (Tone::Ok, t(lang, "ui_state_nothing_to_do"))
                    }
                    StepState::Done { .. } => (Tone::Ok, t(lang, "ui_state_done")),
                    StepState::DoneBefore => (Tone::Ok, t(lang, "ui_state_done_before")),
                    StepState::Failed => (Tone::Bad, t(lang, "ui_state_failed")),
                    StepState::Cancelled => (Tone::Warn, t(lang, "ui_state_cancelled")),
                };
                widgets::badge(ui, tone, &label);
                ui.label(RichText::new(step_title(lang, s.name)).strong());
                if s.state == StepState::Running {
                    ui.spinner();
                }
            });
            if let Some((done, total, speed, eta)) = s.progress
                && matches!(s.state, StepState::Running)
            {
                ui.indent(s.name, |ui| {
                    widgets::transfer(ui, lang, done, total, speed, eta);
                    if let Some(host) = &s.source {
                        ui.label(RichText::new(tf(lang, "ui_dl_from", &[("host", host)])).small());
                    }
                });
            }
        }
        if let Some(r) = self.report() {
            widgets::gap(ui);
            if let Some(f) = &r.failure {
                failure_callout(ui, lang, f, here);
            } else if r.cancelled {
                widgets::note(ui, Tone::Warn, &t(lang, "ui_run_cancelled"));
            } else if r.reboot_required && !r.restart_pending {
                // (A pending restart has its own box: "Restart now / later".)
                widgets::note(ui, Tone::Warn, &t(lang, "ui_reboot_required"));
            }
        }
        if !self.log.is_empty() {
            egui::CollapsingHeader::new(t(lang, "ui_live_log"))
                .id_salt(("live-log", self.steps.first().map(|s| s.name)))
                .default_open(log_open)
                .show(ui, |ui| {
                    egui::ScrollArea::vertical()
                        .max_height(220.0)
                        .stick_to_bottom(true)
                        .show(ui, |ui| {
                            for line in &self.log {
                                ui.label(RichText::new(line).monospace().small());
                            }
                        });
                });
        }
    }
}

/// The plain-words sentence of a failure (`FailureKind::fail_key`, with its parameters)
/// and what to do about it where `here` shows it (the wizard's own words, naming that
/// page's buttons; never the command line's hint).
pub fn failure_text(
    lang: Lang,
    f: &cuda_setup_core::run::Failure,
    here: &Here,
) -> (String, String) {
    (msg(lang, &f.sentence()), fixes::what_to_do(lang, f, here))
}

/// The raw text behind plain words (a core error's chain, a library's message), folded
/// under "Details": for searching and for support, never in front.
pub fn details(ui: &mut Ui, lang: Lang, id: impl std::hash::Hash + std::fmt::Debug, raw: &str) {
    if raw.trim().is_empty() {
        return;
    }
    egui::CollapsingHeader::new(t(lang, "ui_details"))
        .id_salt(("details", id))
        .default_open(false)
        .show(ui, |ui| {
            ui.label(RichText::new(raw).monospace().small().weak());
        });
}

/// A failed step: which, in plain words with what to do here, and the core's exact error
/// (English, for searching and for support) folded under "Details".
pub fn failure_callout(ui: &mut Ui, lang: Lang, f: &cuda_setup_core::run::Failure, here: &Here) {
    let title = tf(
        lang,
        "ui_step_failed",
        &[("step", &t(lang, f.step_title_key()))],
    );
    titled_failure(ui, lang, &title, f, here, ("failure", f.step));
}

/// A run event as a line of the log a page shows (None: not a line): a step started,
/// its output, its outcome, or its raw error (what to do is said once, in the failure's
/// box).
pub fn log_line(e: &RunEvent, lang: Lang) -> Option<String> {
    use cuda_setup_core::i18n::render;
    Some(match e {
        RunEvent::Started { name, .. } => format!("▶ {}", step_title(lang, *name)),
        RunEvent::Step {
            event: StepEvent::Log { line },
            ..
        } => format!("  {}", render(line, lang)),
        RunEvent::Finished { name, outcome, .. } => format!(
            "✓ {}: {}",
            step_title(lang, *name),
            render(&outcome.detail, lang)
        ),
        RunEvent::Failed { name, error, .. } => {
            format!("× {}: {error}", step_title(lang, *name))
        }
        _ => return None,
    })
}

/// A failure under `title`: its plain words, what to do here, the raw error under
/// "Details" (`id` keeps that fold apart from others on the page).
pub fn titled_failure(
    ui: &mut Ui,
    lang: Lang,
    title: &str,
    f: &cuda_setup_core::run::Failure,
    here: &Here,
    id: impl std::hash::Hash + std::fmt::Debug,
) {
    widgets::callout(ui, Tone::Bad, |ui| {
        ui.label(RichText::new(title).strong());
        let (what, fix) = failure_text(lang, f, here);
        ui.label(what);
        ui.label(tf(lang, "ui_what_to_do", &[("hint", &fix)]));
        details(ui, lang, id, &f.error);
    });
}
