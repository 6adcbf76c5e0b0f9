//! PyTorch: the generated pip command with a copy button, a PyPI mirror (Tsinghua's by
//! default in Chinese) and a source for PyTorch's own wheels (its server or a mirror of
//! it); "Install PyTorch" runs it in a chosen Python with live output; then the doctor's
//! findings with their fixes, the live GPU plot of its check, and the verdict.

use std::path::PathBuf;

use egui::{RichText, TextEdit, Ui};

use super::{Primary, Screen};
use crate::ui::fixes::Here;
use crate::ui::flow::Page;
use crate::ui::session::{
    Action, PIP_MIRRORS, Session, default_pip_mirror, pip_mirror, torch_mirror_key,
};
use crate::ui::text::{msg, t, tf};
use crate::ui::verdict::{self, Fix, Scope, Verdict};
use crate::ui::widgets::{self, Tone, status_badge};
use crate::ui::worker::Pick;
use cuda_setup_core::recommend::TorchPick;
use cuda_setup_core::verify::Status;
use cuda_setup_core::verify::doctor::{self, DoctorReport, Severity};

/// The Python and the PyPI mirror are the session's (the doctor uses them after pip);
/// the mirror of PyTorch's own index only makes this page's pip command.
#[derive(Default)]
pub struct State {
    /// A mirror of PyTorch's wheel index (`https://…/whl`), as typed; empty: PyTorch's.
    pub torch_index: String,
    /// What the page last scrolled to: it scrolls once to each new result, and leaves
    /// the user's own scrolling alone in between.
    scrolled: Option<Focus>,
}

/// What the end of the page shows, the thing a user waits for: the step running, the
/// failure, the doctor at work, the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Focus {
    Step(usize),
    Failed,
    Checking,
    Verdict { ready: bool },
}

/// The newest result the page shows, if any.
fn focus(session: &Session) -> Option<Focus> {
    let torch = session.torch();
    match verdict::decide(session, Scope::Torch) {
        Verdict::Ready { .. } => return Some(Focus::Verdict { ready: true }),
        Verdict::NotYet { .. } if torch.doctor().is_some() || torch.run().report().is_some() => {
            return Some(Focus::Verdict { ready: false });
        }
        _ => {}
    }
    if torch.doctor_running() {
        return Some(Focus::Checking);
    }
    if torch.run().report().is_some_and(|r| r.failure.is_some()) {
        return Some(Focus::Failed);
    }
    let steps = torch.run().steps();
    steps
        .iter()
        .position(|s| s.state == crate::ui::progress::StepState::Running)
        .filter(|_| torch.run().running())
        .map(Focus::Step)
}

impl State {
    /// The wheel for this goal (the recommendation's), from the typed index if any.
    fn pick(&self, s: &Session) -> Option<TorchPick> {
        let index = self.torch_index.trim();
        let mut t = s.recommendation().and_then(|r| r.torch.clone())?;
        if index.starts_with("https://") || index.starts_with("http://") {
            t.use_index(index);
        }
        Some(t)
    }
}

impl Screen for State {
    fn show(&mut self, s: &Session, ui: &mut Ui) -> Vec<Action> {
        show(self, s, ui)
    }

    fn busy(&self, s: &Session) -> bool {
        s.torch().busy() || s.guard().restoring()
    }

    /// The chosen Python's guard of its verified PyTorch (#33).
    fn enter(&self, _s: &Session) -> Vec<Action> {
        vec![Action::GuardStatus]
    }

    /// Next does not hide that PyTorch is not (yet) working: it says the user goes on
    /// without it (Done then lists it as not installed).
    fn next_label(&self, s: &Session) -> &'static str {
        match s.torch().doctor() {
            Some(d) if d.status == Status::Passed => "ui_next",
            _ => "ui_torch_skip_next",
        }
    }

    /// "Install PyTorch" (the page's point; Next then says it goes on without it) until
    /// the doctor finds PyTorch working; a verdict's other fix (the driver) when that is
    /// what stands in the way.
    fn primary(&self, s: &Session) -> Option<Primary> {
        let torch = self.pick(s)?;
        let lang = s.lang;
        let install = |key| {
            let has_python = !python_of(s).trim().is_empty();
            Primary::new(t(lang, key), Action::RunPip(Box::new(torch.clone())))
                .enabled(has_python && !s.torch().busy())
        };
        match verdict::decide(s, Scope::Torch) {
            Verdict::Ready { .. } => None,
            Verdict::NotYet { problem, .. } => match problem.fix {
                Fix::InstallTorch | Fix::ReinstallTorch => problem.fix.button_key().map(install),
                _ => verdict::fix_primary(s, Page::Pytorch, Scope::Torch)
                    .or_else(|| Some(install("ui_install_pytorch"))),
            },
            Verdict::Pending => Some(install("ui_install_pytorch")),
        }
    }

    /// The recommended wheel's pip command, run in the chosen Python.
    fn show_work(&self, s: &Session) -> Vec<Action> {
        match self.pick(s) {
            Some(torch) if !s.torch().run().started() => vec![Action::RunPip(Box::new(torch))],
            _ => Vec::new(),
        }
    }
}

/// The Python pip runs in: the one chosen, else the first one detection found.
fn python_of(session: &Session) -> String {
    let chosen = &session.torch().python();
    if !chosen.is_empty() {
        return chosen.to_string();
    }
    session
        .system()
        .report()
        .and_then(|r| r.pythons.first())
        .map(|p| p.path.display().to_string())
        .unwrap_or_default()
}

fn show(page: &mut State, session: &Session, ui: &mut Ui) -> Vec<Action> {
    let lang = session.lang;
    let mut actions = Vec::new();
    let torch_state = &session.torch();
    let mut python = python_of(session);
    ui.label(msg(
        lang,
        &cuda_setup_core::msg!("torch_wheel_bundles_runtime"),
    ));
    let Some(torch) = page.pick(session) else {
        widgets::note(ui, Tone::Warn, &t(lang, "ui_no_wheel"));
        if python != torch_state.python() {
            actions.push(Action::SetPython(python));
        }
        return actions;
    };
    ui.label(tf(
        lang,
        "ui_torch_pick_plain",
        &[
            ("version", &torch.version),
            ("cuda", &torch.cuda),
            ("min", &torch.python_min),
            ("max", &torch.python_max),
        ],
    ));
    ui.label(t(lang, "ui_torch_size"));

    widgets::section(ui, "Python");
    ui.horizontal(|ui| {
        let l = ui.label(t(lang, "ui_python_path"));
        ui.add(
            TextEdit::singleline(&mut python)
                .hint_text(t(lang, "ui_python_hint"))
                .desired_width(380.0),
        )
        .labelled_by(l.id);
        if ui.button(t(lang, "ui_choose_python")).clicked() {
            actions.push(Action::PickFile(Pick::Python));
        }
    });
    if python.trim().is_empty() {
        // Before the click that would lead nowhere: how to get a Python.
        widgets::note(ui, Tone::Warn, &t(lang, "ui_no_python"));
    }
    // Measured first (#34), then the listed indexes (the Choose page's dropdown).
    let mut mirror = torch_state.mirror_index();
    let mut pypi_auto = torch_state.pypi_auto();
    let mut entries = vec![t(lang, "ui_source_auto")];
    entries.extend(PIP_MIRRORS.iter().map(|(_, key)| t(lang, key)));
    let selected = if pypi_auto { 0 } else { mirror + 1 };
    match widgets::source_dropdown(ui, &t(lang, "ui_pypi_mirror"), &entries, selected) {
        Some(0) => {
            pypi_auto = true;
            actions.push(Action::SetPipAuto);
        }
        Some(i) => {
            (mirror, pypi_auto) = (i - 1, false);
            actions.push(Action::SetPipMirror(mirror));
        }
        None => {}
    }
    if lang == cuda_setup_core::i18n::Lang::Zh
        && !torch_state.mirror_chosen()
        && !pypi_auto
        && torch_state.mirror_index() == default_pip_mirror(lang)
    {
        ui.label(RichText::new(t(lang, "ui_pypi_mirror_default")).weak());
    }

    let torch_auto = torch_source(page, session, ui, &mut actions);
    if torch_auto {
        // Nothing to type: the sources are the table's, measured when pip runs.
        ui.label(RichText::new(t(lang, "ui_torch_source_auto_note")).weak());
    } else {
        ui.horizontal(|ui| {
            let l = ui.label(t(lang, "ui_torch_index"));
            ui.add(
                TextEdit::singleline(&mut page.torch_index)
                    .hint_text(cuda_setup_core::compat::TORCH_INDEX_BASE)
                    .desired_width(380.0),
            )
            .labelled_by(l.id);
        });
    }
    let typed_index = page.torch_index.trim();
    if !typed_index.is_empty() && cuda_setup_core::recommend::is_pypi_index(typed_index) {
        // Not used: a PyPI index has no CUDA builds of torch (the command keeps PyTorch's).
        ui.label(
            RichText::new(msg(
                lang,
                &cuda_setup_core::msg!("torch_index_is_pypi", index = typed_index),
            ))
            .color(ui.visuals().warn_fg_color),
        );
    }
    ui.label(RichText::new(t(lang, "ui_torch_download_note")).weak());

    widgets::section(ui, &t(lang, "ui_the_command"));
    // The command as the session will run it: this frame's Python and mirror.
    let typed = python.trim();
    let shown = PathBuf::from(if typed.is_empty() { "python" } else { typed });
    let cmd = doctor::install_command(
        &shown,
        &torch.command,
        pip_mirror(mirror).filter(|_| !pypi_auto).as_ref(),
    );
    widgets::command(ui, lang, &cmd);
    if session.opts.target.os == cuda_setup_core::compat::Os::Windows {
        ui.label(RichText::new(msg(lang, &cuda_setup_core::msg!("windows_pypi_is_cpu"))).weak());
    }
    widgets::gap(ui);
    // The part that changes as the work goes on, scrolled into view when it shows
    // something new (the page is taller than a small window).
    let tail = ui
        .scope(|ui| tail(page, session, ui, &mut actions))
        .response
        .rect;
    let now = focus(session);
    if now.is_some() && now != page.scrolled {
        ui.scroll_to_rect(tail, Some(egui::Align::Max));
        page.scrolled = now;
    }
    if python != torch_state.python() {
        // Before a RunPip of this frame, which runs in the Python shown.
        actions.insert(0, Action::SetPython(python));
    }
    actions
}

/// Cancel and the doctor's button, pip's output, the check's plot and findings, and the
/// verdict.
fn tail(page: &State, session: &Session, ui: &mut Ui, actions: &mut Vec<Action>) {
    let lang = session.lang;
    let torch_state = &session.torch();
    let busy = torch_state.busy();
    // "Install PyTorch" is the page's primary button, at the bottom (Enter presses it).
    ui.horizontal(|ui| {
        if torch_state.run().running() && ui.button(t(lang, "ui_cancel")).clicked() {
            actions.push(Action::CancelPip);
        }
        if ui
            .add_enabled(!busy, egui::Button::new(t(lang, "ui_run_doctor")))
            .clicked()
        {
            actions.push(Action::RunDoctor);
        }
    });
    if torch_state.run().started() {
        widgets::section(ui, &t(lang, "ui_pip_output"));
        // A failure's words name the page's own install button (the footer's primary).
        let again = page
            .primary(session)
            .filter(|p| matches!(p.actions.as_slice(), [Action::RunPip(_)]))
            .map(|p| p.label);
        // …and the source dropdown's mirrors, when PyTorch's server cannot be reached (#34).
        let mirrors = session
            .opts
            .tables
            .pytorch
            .mirrors
            .iter()
            .map(|m| {
                let name = torch_mirror_key(&m.name).map_or_else(|| m.name.clone(), |k| t(lang, k));
                (name, m.base.clone())
            })
            .collect();
        let here = Here::new(Page::Pytorch, again).with_torch_mirrors(mirrors);
        torch_state.run().show(ui, lang, true, &here);
    }
    // The guard of this Python's verified build, and putting it back when swapped (#33).
    let python = python_of(session);
    if !python.trim().is_empty() {
        actions.extend(crate::ui::guard_view::section(
            session,
            ui,
            std::path::Path::new(python.trim()),
        ));
    }
    if torch_state.doctor_running() {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(t(lang, "ui_doctor_running"));
        });
    }
    if torch_state.doctor_running()
        || !torch_state.samples().is_empty()
        || torch_state.monitor_error().is_some()
    {
        verdict::live_plot(
            ui,
            lang,
            "pytorch",
            torch_state.samples(),
            torch_state.monitor_error(),
        );
    }
    if let Some(d) = &torch_state.doctor() {
        doctor_report(ui, lang, d);
    }
    verdict::banner(session, ui, Page::Pytorch, Scope::Torch);
}

/// Measured (#34), PyTorch's own server or a mirror of it (compat-tables/pytorch.toml):
/// picking a mirror fills the address field below, which stays free to type another.
/// Returns whether the measured choice is in effect (an address typed is an explicit
/// choice, and wins).
fn torch_source(
    page: &mut State,
    session: &Session,
    ui: &mut Ui,
    actions: &mut Vec<Action>,
) -> bool {
    let lang = session.lang;
    let mirrors = &session.opts.tables.pytorch.mirrors;
    let typed = page.torch_index.trim().trim_end_matches('/').to_string();
    let mut auto = session.torch().torch_auto();
    if auto && !typed.is_empty() {
        auto = false;
        actions.insert(0, Action::SetTorchAuto(false));
    }
    // Measured, official, each mirror by its plain name, then another address (the field
    // below).
    let mut entries = vec![
        t(lang, "ui_source_auto"),
        t(lang, "ui_torch_source_official"),
    ];
    entries.extend(mirrors.iter().map(|m| {
        let name = torch_mirror_key(&m.name).map_or_else(|| m.name.clone(), |k| t(lang, k));
        tf(
            lang,
            "ui_torch_source_mirror",
            &[("name", &name), ("base", &m.base)],
        )
    }));
    entries.push(t(lang, "ui_torch_source_custom"));
    let selected = if auto {
        0
    } else if typed.is_empty() {
        1
    } else {
        mirrors
            .iter()
            .position(|m| m.base == typed)
            .map_or(entries.len() - 1, |i| i + 2)
    };
    let picked = widgets::source_dropdown(ui, &t(lang, "ui_torch_source"), &entries, selected);
    if let Some(i) = picked {
        auto = i == 0;
        actions.push(Action::SetTorchAuto(auto));
    }
    match picked {
        Some(0 | 1) => page.torch_index.clear(),
        Some(i) if i <= mirrors.len() + 1 => page.torch_index = mirrors[i - 2].base.clone(),
        // Another address: typed in the field below, which stays as it is.
        _ => {}
    }
    if !auto && mirrors.iter().any(|m| m.base == typed) {
        ui.label(RichText::new(t(lang, "ui_torch_mirror_note")).weak());
    }
    auto
}

fn doctor_report(ui: &mut Ui, lang: cuda_setup_core::i18n::Lang, d: &DoctorReport) {
    widgets::section(ui, &t(lang, "ui_doctor"));
    ui.horizontal(|ui| {
        status_badge(ui, lang, d.status);
        if let Some(v) = &d.python_version {
            ui.label(format!("Python {v}"));
        }
        if let Some(tch) = &d.torch {
            ui.label(format!(
                "PyTorch {}",
                crate::ui::text::plain_torch_version(&tch.version)
            ));
        }
    });
    // The verdict below says what it means, and its button fixes it; what the check
    // found, item by item (architectures, builds, raw errors), is behind "Details".
    egui::CollapsingHeader::new(t(lang, "ui_details"))
        .id_salt("doctor-findings")
        .default_open(false)
        .show(ui, |ui| findings(ui, lang, d));
    package_findings(ui, lang, d);
}

fn findings(ui: &mut Ui, lang: cuda_setup_core::i18n::Lang, d: &DoctorReport) {
    for f in &d.findings {
        finding(
            ui,
            lang,
            f.severity,
            &f.message,
            f.fix.as_ref(),
            f.message.key,
        );
    }
}

/// The other GPU packages in that Python (#33), open when one of them has a problem.
fn package_findings(ui: &mut Ui, lang: cuda_setup_core::i18n::Lang, d: &DoctorReport) {
    let Some(p) = d.packages.as_ref().filter(|p| !p.findings.is_empty()) else {
        return;
    };
    let problem = p.findings.iter().any(|f| f.severity == Severity::Problem);
    egui::CollapsingHeader::new(t(lang, "ui_doctor_packages"))
        .id_salt("doctor-packages")
        .default_open(problem)
        .show(ui, |ui| {
            for f in &p.findings {
                finding(ui, lang, f.severity, &f.message, f.fix.as_ref(), &f.package);
            }
        });
}

/// One finding: its badge and sentence, the raw details, the fix and its commands.
fn finding(
    ui: &mut Ui,
    lang: cuda_setup_core::i18n::Lang,
    severity: Severity,
    message: &cuda_setup_core::message::Message,
    fix: Option<&cuda_setup_core::verify::doctor::Fix>,
    id: &str,
) {
    let tone = match severity {
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
                match severity {
                    Severity::Ok => "ui_ok",
                    Severity::Info => "ui_info",
                    Severity::Problem => "ui_problem",
                },
            ),
        );
        ui.label(msg(lang, message));
    });
    if let Some(raw) = cuda_setup_core::i18n::details(message, lang) {
        crate::ui::progress::details(ui, lang, ("doctor", id), &raw);
    }
    if let Some(fix) = fix {
        ui.indent((id, message.key), |ui| {
            ui.label(msg(lang, &fix.message));
            for c in &fix.commands {
                widgets::command(ui, lang, c);
            }
        });
    }
}
