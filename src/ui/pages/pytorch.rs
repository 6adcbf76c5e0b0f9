//! PyTorch: the generated pip command with a copy button and a PyPI mirror choice; run it
//! in a chosen Python with live output; then the doctor's findings with their fixes.

use std::path::PathBuf;

use egui::{RichText, TextEdit, Ui};

use crate::ui::app::{App, Options};
use crate::ui::progress::RunView;
use crate::ui::text::{msg, t, tf};
use crate::ui::widgets::{self, Tone};
use crate::ui::worker::{Command, Job, Pick};
use cuda_setup_core::download::Cancel;
use cuda_setup_core::plan::Plan;
use cuda_setup_core::recommend::{Goal, TorchPick};
use cuda_setup_core::steps::Step;
use cuda_setup_core::verify::doctor::{self, DoctorReport, PypiMirror, Severity};

/// The PyPI mirrors offered for torch's dependencies (the wheels come from PyTorch's own
/// index, which no PyPI mirror carries).
pub const MIRRORS: [(&str, &str); 4] = [
    ("", "ui_mirror_none"),
    ("tsinghua", "ui_mirror_tsinghua"),
    ("aliyun", "ui_mirror_aliyun"),
    ("ustc", "ui_mirror_ustc"),
];

pub struct State {
    /// The interpreter, as typed or picked.
    pub python: String,
    /// Index into [`MIRRORS`].
    pub mirror: usize,
    /// A mirror of PyTorch's wheel index (`https://…/whl`), as typed; empty: PyTorch's.
    pub torch_index: String,
    pub run: RunView,
    pub doctor_running: bool,
    pub doctor: Option<Box<DoctorReport>>,
}

impl State {
    pub fn new(opts: &Options) -> State {
        State {
            python: opts
                .python
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            mirror: 0,
            torch_index: String::new(),
            run: RunView::default(),
            doctor_running: false,
            doctor: None,
        }
    }

    pub fn busy(&self) -> bool {
        self.run.running() || self.doctor_running
    }

    pub fn mirror(&self) -> Option<PypiMirror> {
        let (name, _) = MIRRORS[self.mirror.min(MIRRORS.len() - 1)];
        (!name.is_empty()).then(|| name.parse().ok()).flatten()
    }

    fn python_path(&self) -> Option<PathBuf> {
        let p = self.python.trim();
        (!p.is_empty()).then(|| PathBuf::from(p))
    }
}

/// The wheel for this goal: the pytorch goal's pick, or (developer) the one built with
/// the toolkit's CUDA major.
fn pick(app: &mut App) -> Option<TorchPick> {
    let index = app.torch.torch_index.trim().to_string();
    let mut t = app.recommendation().and_then(|r| r.torch.clone())?;
    if index.starts_with("https://") || index.starts_with("http://") {
        t.use_index(&index);
    }
    Some(t)
}

/// pip's arguments after `install`, with the mirror as an extra index.
pub fn pip_args(torch: &TorchPick, mirror: Option<&PypiMirror>) -> Vec<String> {
    let mut args: Vec<String> = torch
        .command
        .split_whitespace()
        .skip(2)
        .map(str::to_string)
        .collect();
    if let Some(m) = mirror {
        args.push("--extra-index-url".into());
        args.push(m.url.clone());
    }
    args
}

fn run_pip(app: &mut App, torch: &TorchPick) {
    let Some(python) = app.torch.python_path() else {
        return;
    };
    let args = pip_args(torch, app.torch.mirror().as_ref());
    let plan = Plan {
        format: 1,
        goal: Goal::Pytorch,
        os: app.opts.target.os,
        root: app.opts.target.root.clone(),
        toolkit: None,
        cudnn: None,
        torch_command: Some(torch.command.clone()),
        notes: Vec::new(),
        steps: vec![Step::InstallTorch { python, args }],
    };
    let cancel = Cancel::default();
    app.torch.run = RunView::start(&plan, cancel.clone());
    app.torch.doctor = None;
    app.submit(Command::Run {
        job: Job::Pip,
        plan: Box::new(plan),
        cancel,
    });
}

/// Runs the recommended wheel's pip command in the chosen Python.
pub fn run_recommended(app: &mut App) {
    if let Some(torch) = pick(app) {
        run_pip(app, &torch);
    }
}

pub fn start_doctor(app: &mut App) {
    app.torch.doctor_running = true;
    let gpu = app.gpu_facts();
    app.submit(Command::Doctor {
        python: app.torch.python_path(),
        mirror: app.torch.mirror(),
        gpu,
    });
}

pub fn show(app: &mut App, ui: &mut Ui) {
    let lang = app.lang;
    if app.torch.python.is_empty()
        && let Some(p) = app.system.report.as_ref().and_then(|r| r.pythons.first())
    {
        app.torch.python = p.path.display().to_string();
    }
    ui.label(msg(
        lang,
        &cuda_setup_core::msg!("torch_wheel_bundles_runtime"),
    ));
    let Some(torch) = pick(app) else {
        widgets::note(ui, Tone::Warn, &t(lang, "ui_no_wheel"));
        return;
    };
    ui.label(tf(
        lang,
        "ui_torch_pick",
        &[
            ("version", &torch.version),
            ("variant", &torch.variant),
            ("min", &torch.python_min),
            ("max", &torch.python_max),
        ],
    ));

    widgets::section(ui, "Python");
    ui.horizontal(|ui| {
        let l = ui.label(t(lang, "ui_python_path"));
        ui.add(
            TextEdit::singleline(&mut app.torch.python)
                .hint_text(t(lang, "ui_python_hint"))
                .desired_width(380.0),
        )
        .labelled_by(l.id);
        if ui.button(t(lang, "ui_choose_python")).clicked() {
            app.submit(Command::PickFile {
                purpose: Pick::Python,
            });
        }
    });
    ui.horizontal(|ui| {
        let current = t(lang, MIRRORS[app.torch.mirror].1);
        egui::ComboBox::from_label(t(lang, "ui_pypi_mirror"))
            .selected_text(current)
            .show_ui(ui, |ui| {
                for (i, (_, key)) in MIRRORS.iter().enumerate() {
                    ui.selectable_value(&mut app.torch.mirror, i, t(lang, key));
                }
            });
    });

    ui.horizontal(|ui| {
        let l = ui.label(t(lang, "ui_torch_index"));
        ui.add(
            TextEdit::singleline(&mut app.torch.torch_index)
                .hint_text(cuda_setup_core::compat::TORCH_INDEX_BASE)
                .desired_width(380.0),
        )
        .labelled_by(l.id);
    });
    ui.label(RichText::new(t(lang, "ui_torch_download_note")).weak());

    widgets::section(ui, &t(lang, "ui_the_command"));
    let python = app
        .torch
        .python_path()
        .unwrap_or_else(|| PathBuf::from("python"));
    let cmd = doctor::install_command(&python, &torch.command, app.torch.mirror().as_ref());
    widgets::command(ui, lang, &cmd);
    if app.opts.target.os == cuda_setup_core::compat::Os::Windows {
        ui.label(RichText::new(msg(lang, &cuda_setup_core::msg!("windows_pypi_is_cpu"))).weak());
    }
    widgets::gap(ui);
    let busy = app.torch.busy();
    let has_python = app.torch.python_path().is_some();
    ui.horizontal(|ui| {
        if ui
            .add_enabled(
                !busy && has_python,
                egui::Button::new(t(lang, "ui_run_pip")),
            )
            .clicked()
        {
            run_pip(app, &torch);
        }
        if app.torch.run.running() && ui.button(t(lang, "ui_cancel")).clicked() {
            app.torch.run.cancel();
        }
        if ui
            .add_enabled(!busy, egui::Button::new(t(lang, "ui_run_doctor")))
            .clicked()
        {
            start_doctor(app);
        }
    });
    if app.torch.run.started {
        widgets::section(ui, &t(lang, "ui_pip_output"));
        app.torch.run.show(ui, lang, true);
    }
    if app.torch.doctor_running {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(t(lang, "ui_doctor_running"));
        });
    }
    if let Some(d) = app.torch.doctor.clone() {
        doctor_report(ui, lang, &d);
    }
}

fn doctor_report(ui: &mut Ui, lang: cuda_setup_core::i18n::Lang, d: &DoctorReport) {
    widgets::section(ui, &t(lang, "ui_doctor"));
    ui.horizontal(|ui| {
        super::verify::status_badge(ui, lang, d.status);
        if let Some(v) = &d.python_version {
            ui.label(format!("Python {v}"));
        }
        if let Some(tch) = &d.torch {
            ui.label(format!("torch {}", tch.version));
        }
    });
    for f in &d.findings {
        let tone = match f.severity {
            Severity::Ok => Tone::Ok,
            Severity::Info => Tone::Info,
            Severity::Problem => Tone::Bad,
        };
        ui.horizontal_wrapped(|ui| {
            widgets::badge(
                ui,
                tone,
                &t(
                    lang,
                    match f.severity {
                        Severity::Ok => "ui_ok",
                        Severity::Info => "ui_info",
                        Severity::Problem => "ui_problem",
                    },
                ),
            );
            ui.label(msg(lang, &f.message));
        });
        if let Some(fix) = &f.fix {
            ui.indent(f.message.key, |ui| {
                ui.label(msg(lang, &fix.message));
                for c in &fix.commands {
                    widgets::command(ui, lang, c);
                }
            });
        }
    }
}
