//! Done: every layer (driver, toolkit, cuDNN, environment, PyTorch, GPU test) with its
//! state, the verdict, three lines to try in Python, the guide's first tips; then "save
//! report", "copy diagnostics" (a text to paste into a forum), "open log".

use std::path::PathBuf;

use egui::{RichText, Ui};

use super::{Primary, Screen};
use crate::ui::flow::{Mode, Page};
use crate::ui::progress::StepState;
use crate::ui::report;
use crate::ui::session::{Action, Session};
use crate::ui::text::{t, tf};
use crate::ui::verdict::{self, Layer, Scope, Verdict};
use crate::ui::widgets::{self, Tone};
use cuda_setup_core::i18n;
use cuda_setup_core::recommend::{DriverAction, Goal};
use cuda_setup_core::repair::Severity;
use cuda_setup_core::steps::StepKind;
use cuda_setup_core::verify::Status;
use cuda_setup_core::verify::verdict::{Cause, cause_text};

/// The guide's check, three lines to paste into Python.
pub const TRY_IN_PYTHON: &str =
    "import torch\nprint(torch.cuda.is_available())\nprint(torch.cuda.get_device_name(0))";

#[derive(Default)]
pub struct State {
    /// What went to the clipboard last, and when (egui's clock): "Copied" shows beside
    /// it for [`COPIED_FOR`] seconds.
    pub copied: Option<(Copied, f64)>,
}

/// What a copy button put on the clipboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Copied {
    /// The three lines to try in Python.
    Snippet,
    Diagnostics,
}

/// How long "Copied" stays, in seconds: long enough to be seen, then out of the way.
pub const COPIED_FOR: f64 = 2.0;

impl State {
    /// "Copied" under `what`'s button, while it is fresh; asks for the frame that clears it.
    fn copied_note(&self, ui: &mut Ui, lang: cuda_setup_core::i18n::Lang, what: Copied) {
        let Some((w, at)) = self.copied else {
            return;
        };
        let now = ui.input(|i| i.time);
        if w == what && now - at < COPIED_FOR {
            ui.label(RichText::new(t(lang, "ui_copied")).color(ui.visuals().strong_text_color()));
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_secs_f64(COPIED_FOR - (now - at)));
        }
    }
}

impl Screen for State {
    fn show(&mut self, s: &Session, ui: &mut Ui) -> Vec<Action> {
        show(self, s, ui)
    }

    /// Repair mode ends with the checks that follow a run (`repair::checks_at_end`: the
    /// doctor on the detected torch, the smoke test for developers), once per state of the
    /// machine: a fix clears their reports.
    fn enter(&self, s: &Session) -> Vec<Action> {
        let checked = s.torch().doctor().is_some()
            || s.torch().doctor_running()
            || s.verify().report().is_some()
            || s.verify().running();
        if s.mode == Mode::Repair && !checked && !s.repair().checks_waiting() {
            vec![Action::CheckInstalled]
        } else {
            Vec::new()
        }
    }

    /// The last page: Close instead of Next.
    fn can_next(&self, _s: &Session) -> bool {
        false
    }

    /// Not usable yet: the verdict's fix (install PyTorch, the driver …); else Close.
    fn primary(&self, s: &Session) -> Option<Primary> {
        verdict::fix_primary(s, Page::Done, Scope::All)
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
    if let Some(f) = session.repair().findings() {
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
            picks.push(format!(
                "CUDA {}",
                crate::ui::text::plain_release(&tk.label)
            ));
        }
        if let Some(p) = &rec.torch {
            picks.push(crate::ui::text::msg(lang, &p.label()));
        }
        line(
            ui,
            Tone::Info,
            &t(lang, "ui_recommended"),
            &picks.join(", "),
        );
    }
    widgets::section(ui, &t(lang, "ui_layers"));
    for (tone, name, state) in layers(session) {
        line(ui, tone, &name, &state);
    }
    verdict::banner(session, ui, Page::Done, Scope::All);
    widgets::gap(ui);
    if session.goal == Goal::Developer && session.install().run().succeeded() {
        widgets::note(ui, Tone::Info, &t(lang, "ui_new_terminal"));
    }

    widgets::section(ui, &t(lang, "ui_try_title"));
    if widgets::command(ui, lang, TRY_IN_PYTHON) {
        page.copied = Some((Copied::Snippet, ui.input(|i| i.time)));
    }
    page.copied_note(ui, lang, Copied::Snippet);
    ui.label(RichText::new(t(lang, "ui_try_expect")).weak());
    widgets::section(ui, &t(lang, "ui_tips_title"));
    for tip in tips(session) {
        ui.horizontal_wrapped(|ui| {
            ui.label("•");
            ui.label(t(lang, tip));
        });
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
            page.copied = Some((Copied::Diagnostics, ui.input(|i| i.time)));
        }
        let log = session
            .install()
            .run()
            .report()
            .or(session.torch().run().report())
            .and_then(|r| r.log_file.clone());
        if let Some(log) = log
            && ui.button(t(lang, "ui_open_log")).clicked()
        {
            actions.push(Action::Open(log));
        }
    });
    page.copied_note(ui, lang, Copied::Diagnostics);
    match &session.saved() {
        Some(Ok(p)) => {
            ui.label(tf(lang, "ui_report_saved", &[("path", &p.display())]));
        }
        Some(Err(e)) if !e.is_empty() => widgets::callout(ui, Tone::Bad, |ui| {
            ui.label(t(lang, "ui_report_not_saved"));
            crate::ui::progress::details(ui, lang, "save-failed", e);
        }),
        _ => {}
    }
    actions
}

/// The core's tips for this machine's GPUs (compute capability from the facts, memory
/// from detection) and OS, as catalogue keys.
fn tips(session: &Session) -> Vec<&'static str> {
    use cuda_setup_core::verify::tips::{self, Tip};
    let gpus = session.facts().map_or(&[][..], |f| &f.gpus[..]);
    let detected = session.system().report().map_or(&[][..], |r| &r.gpus[..]);
    tips::tips(session.opts.target.os, gpus, detected)
        .into_iter()
        .map(|tip| match tip {
            Tip::OutOfMemory => "ui_tip_oom",
            Tip::SmallMemory => "ui_tip_small_vram",
            Tip::Loader { windows: true } => "ui_tip_loader_windows",
            Tip::Loader { windows: false } => "ui_tip_loader",
            Tip::MixedPrecision => "ui_tip_amp",
        })
        .collect()
}

/// The torch detection found (the Python the checks examine first), as the System page
/// shows it.
fn detected_torch(session: &Session) -> Option<String> {
    let pythons = &session.system().report()?.pythons;
    let examined = session.torch_python()?;
    let t = pythons
        .iter()
        .find(|p| p.path == examined)
        .and_then(|p| p.torch.as_ref())?;
    Some(crate::ui::text::plain_torch_version(&t.version).to_string())
}

/// Each layer: its tone, name and state in plain words, "not installed yet (skipped)"
/// included, from what ran in this session and what detection saw.
fn layers(session: &Session) -> Vec<(Tone, String, String)> {
    let lang = session.lang;
    // A repair has no goal of its own: every layer counts there.
    let pytorch_only = session.goal == Goal::Pytorch && session.mode == Mode::Setup;
    let run = &session.install().run();
    let step = |kinds: &[StepKind], want: fn(StepState) -> bool| {
        run.steps()
            .iter()
            .any(|s| kinds.contains(&s.name) && want(s.state))
    };
    let done = |s: StepState| matches!(s, StepState::Done { .. } | StepState::DoneBefore);
    let failed = |s: StepState| s == StepState::Failed;
    let skipped = || (Tone::Pending, t(lang, "ui_layer_skipped"));
    let not_needed = || (Tone::Info, t(lang, "ui_layer_not_needed"));
    let failed_state = || (Tone::Bad, t(lang, "ui_layer_failed"));
    let facts = session.facts();
    let mut out = Vec::new();

    // The core's reading of the run: a driver it installed that still waits for the
    // restart. After the restart (the wizard continues the plan: its driver step is done
    // before) nothing waits, and the row says what is installed.
    let waits = cuda_setup_core::repair::run_facts(run.report()).restart_pending;
    let planned_driver = session.prepare().plan().and_then(|p| {
        p.steps.iter().find_map(|s| match s {
            cuda_setup_core::steps::Step::InstallDriver(d) => Some(d.version.to_string()),
            _ => None,
        })
    });
    let driver = if step(&[StepKind::InstallDriver], done) && waits {
        (Tone::Ok, t(lang, "ui_layer_driver_installed"))
    } else if step(&[StepKind::InstallDriver], done) {
        let v = facts
            .and_then(|f| f.driver.as_ref())
            .map(ToString::to_string)
            .or(planned_driver)
            .unwrap_or_default();
        (Tone::Ok, tf(lang, "ui_layer_version", &[("version", &v)]))
    } else if step(&[StepKind::InstallDriver], failed) {
        failed_state()
    } else {
        let advice = session.recommendation().map(|r| &r.driver);
        match (facts.and_then(|f| f.driver.as_ref()), advice) {
            (Some(v), Some(a)) if a.action == DriverAction::Update => (
                Tone::Warn,
                tf(
                    lang,
                    "ui_layer_driver_old",
                    &[
                        ("version", v),
                        (
                            "minimum",
                            &a.minimum
                                .as_ref()
                                .map(ToString::to_string)
                                .unwrap_or_default(),
                        ),
                    ],
                ),
            ),
            // An old driver the user chose to keep works, but holds PyTorch back (#32).
            (Some(_), _)
                if let Some(m) = session.recommendation().and_then(|r| r.driver_kept_old()) =>
            {
                (Tone::Warn, crate::ui::text::msg(lang, &m))
            }
            (Some(v), _) => (Tone::Ok, tf(lang, "ui_layer_version", &[("version", v)])),
            (None, _)
                if facts.is_some_and(|f| f.gpus.is_empty() && f.unidentified_gpus.is_empty()) =>
            {
                (Tone::Pending, t(lang, "ui_layer_no_gpu"))
            }
            (None, _) => (Tone::Bad, t(lang, "ui_layer_missing")),
        }
    };
    out.push((driver, "ui_layer_driver"));

    let toolkit_steps = [StepKind::InstallToolkit, StepKind::AssembleToolkit];
    let toolkit = if step(&toolkit_steps, done) {
        let dir = session
            .toolkit_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        (Tone::Ok, tf(lang, "ui_summary_toolkit", &[("dir", &dir)]))
    } else if step(&toolkit_steps, failed) {
        failed_state()
    } else if pytorch_only {
        not_needed()
    } else if let Some(v) = facts.and_then(|f| f.installed_toolkits.last()).or_else(|| {
        session
            .existing
            .toolkits
            .iter()
            .rev()
            .find_map(|t| t.version.as_ref())
    }) {
        (Tone::Ok, tf(lang, "ui_layer_version", &[("version", v)]))
    } else {
        skipped()
    };
    out.push((toolkit, "ui_layer_toolkit"));

    let cudnn = match session.cudnn().installed() {
        Some(Ok(m)) => (
            Tone::Ok,
            tf(lang, "ui_layer_version", &[("version", &m.cudnn_version)]),
        ),
        Some(Err(_)) => failed_state(),
        None if let Some(c) = session.existing.cudnn.last() => (
            Tone::Ok,
            tf(lang, "ui_layer_version", &[("version", &c.version)]),
        ),
        None if pytorch_only && !session.cudnn().skipped() => not_needed(),
        None => skipped(),
    };
    out.push((cudnn, "ui_page_cudnn"));

    let env = if step(&[StepKind::ConfigureEnv], done) {
        (Tone::Ok, t(lang, "ui_layer_env_set"))
    } else if step(&[StepKind::ConfigureEnv], failed) {
        failed_state()
    } else if session
        .repair()
        .findings()
        .is_some_and(|f| cuda_setup_core::repair::problems(f) == 0)
    {
        (Tone::Ok, t(lang, "ui_layer_env_set"))
    } else if pytorch_only {
        not_needed()
    } else {
        skipped()
    };
    out.push((env, "ui_layer_env"));

    let torch = match session.torch().doctor() {
        Some(d) if d.status == Status::Passed => (
            Tone::Ok,
            tf(
                lang,
                "ui_layer_version",
                &[(
                    "version",
                    &d.torch
                        .as_ref()
                        .map(|t| crate::ui::text::plain_torch_version(&t.version).to_string())
                        .unwrap_or_default(),
                )],
            ),
        ),
        Some(_) => match verdict::decide(session, Scope::Torch) {
            Verdict::NotYet { problem, .. } => (
                Tone::Bad,
                tf(
                    lang,
                    "ui_layer_problem",
                    &[("reason", &cause_text(lang, problem.cause))],
                ),
            ),
            _ => (Tone::Warn, t(lang, "ui_skipped")),
        },
        // Repair mode checks the torch detection found: said while its check runs.
        None if session.mode == Mode::Repair => match detected_torch(session) {
            Some(v) if session.torch().doctor_running() || session.repair().checks_waiting() => (
                Tone::Pending,
                tf(lang, "ui_layer_torch_checking", &[("version", &v)]),
            ),
            Some(v) => (Tone::Info, tf(lang, "ui_layer_version", &[("version", &v)])),
            None => (Tone::Pending, t(lang, "ui_layer_torch_none")),
        },
        None => (Tone::Pending, t(lang, "ui_layer_torch_missing")),
    };
    out.push((torch, "ui_page_pytorch"));

    let passed = |speedup: Option<f64>| {
        (
            Tone::Ok,
            speedup.map_or_else(
                || t(lang, "ui_passed"),
                |x| {
                    tf(
                        lang,
                        "ui_layer_passed_speed",
                        &[("times", &verdict::times(x))],
                    )
                },
            ),
        )
    };
    let check = session.torch().doctor().and_then(|d| d.check.as_ref());
    let test = match (session.verify().report(), check) {
        (Some(r), _) if r.status == Status::Passed => passed(r.checks.gemm.detail.speedup()),
        (_, Some(c)) if c.ok => passed(c.speedup),
        (Some(r), _) if r.status == Status::Skipped => (Tone::Warn, t(lang, "ui_skipped")),
        (Some(_), _) | (_, Some(_)) => (Tone::Bad, t(lang, "ui_failed")),
        (None, None) => (Tone::Pending, t(lang, "ui_layer_not_run")),
    };
    out.push((test, "ui_summary_smoke"));

    // Repair mode: a problem the audit found and the fixes left is its layer's state
    // (never "not installed yet (skipped)"); the first one per layer.
    let left = session.repair().findings().into_iter().flatten();
    let mut said = [false; 6];
    for f in left.filter(|f| f.severity >= Severity::Warning) {
        let row = row_of(f.layer);
        let ((tone, state), _) = &mut out[row];
        if std::mem::replace(&mut said[row], true) || *tone == Tone::Bad {
            continue;
        }
        *tone = match f.severity {
            Severity::Error => Tone::Bad,
            _ => Tone::Warn,
        };
        *state = tf(
            lang,
            "ui_layer_problem_left",
            &[("problem", &i18n::render(&f.message, lang))],
        );
    }

    // The verdict's cause is one of these rows: the layer it blames is not shown as
    // fine (red for the headline, amber for a developer's check beside it).
    let v = verdict::decide(session, Scope::All);
    let blamed = v
        .problem()
        .map(|p| (p, Tone::Bad))
        .into_iter()
        .chain(v.secondary().iter().map(|p| (p, Tone::Warn)));
    for (p, tone) in blamed {
        let row = row_of(p.layer);
        // A driver this run installed waits for its restart: detection cannot see it yet,
        // and the row says what happened.
        if p.layer == Layer::Driver && step(&[StepKind::InstallDriver], done) {
            continue;
        }
        let ((shown, state), _) = &mut out[row];
        // A row that already says the layer is missing ("not installed yet") says it.
        let absent = matches!(
            p.cause,
            Cause::NoGpu | Cause::NoDriver | Cause::NoToolkit | Cause::TorchMissing
        );
        if *shown != Tone::Bad && !(absent && *shown == Tone::Pending) {
            *shown = tone;
            *state = tf(
                lang,
                "ui_layer_problem",
                &[("reason", &cause_text(lang, p.cause))],
            );
        }
    }

    out.into_iter()
        .map(|((tone, state), name)| (tone, t(lang, name), state))
        .collect()
}

/// The row of Done's list that shows `layer`.
fn row_of(layer: Layer) -> usize {
    match layer {
        Layer::Driver => 0,
        Layer::Toolkit => 1,
        Layer::Cudnn => 2,
        Layer::Env => 3,
        Layer::Torch => 4,
        Layer::GpuTest => 5,
    }
}
