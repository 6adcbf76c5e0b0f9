//! cuDNN: a zip dropped on the window, picked in a file dialog, or downloaded from
//! NVIDIA's public redist; validated (layout, version, CUDA major) and shown before
//! anything is copied; then installed as the core's transaction.

use std::path::PathBuf;

use egui::{RichText, Ui};

use super::{Primary, Screen};
use crate::ui::progress;
use crate::ui::session::{Action, Session};
use crate::ui::text::{self, t, tf};
use crate::ui::widgets::{self, Tone};
use crate::ui::worker::{ArchiveCheck, Pick, Refused};
use cuda_setup_core::compat::Os;
use cuda_setup_core::cudnn::Manifest;
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::recommend::CudnnPick;
use cuda_setup_core::run::Failure;

#[derive(Default)]
pub struct State {
    /// Undo was clicked: the confirmation is showing.
    confirm_undo: bool,
}

impl Screen for State {
    fn show(&mut self, s: &Session, ui: &mut Ui) -> Vec<Action> {
        show(self, s, ui)
    }

    fn can_next(&self, s: &Session) -> bool {
        s.cudnn().finished()
    }

    fn why_not_next(&self, _s: &Session) -> Option<&'static str> {
        Some("ui_cudnn_choose_first")
    }

    fn busy(&self, s: &Session) -> bool {
        s.cudnn().busy()
    }

    /// An archive checked and nothing copied yet: "Install cuDNN"; before that, "Download
    /// and install" the recommended one (Next waits for either, or for "Skip").
    fn primary(&self, s: &Session) -> Option<Primary> {
        let c = &s.cudnn();
        s.toolkit_dir()?;
        if matches!(c.check(), Some(Ok(_))) && c.installed().is_none() {
            return Some(
                Primary::new(t(s.lang, "ui_install_cudnn"), Action::InstallCudnn)
                    .enabled(!c.busy()),
            );
        }
        if c.finished() {
            return None;
        }
        let pick = s.recommendation()?.cudnn.as_ref()?;
        Some(Primary::new(download_label(s.lang, pick), Action::DownloadCudnn).enabled(!c.busy()))
    }

    fn show_work(&self, s: &Session) -> Vec<Action> {
        match (&s.cudnn().archive(), &s.opts.cudnn_archive) {
            (None, Some(z)) => vec![Action::UseCudnnArchive(z.clone())],
            _ => Vec::new(),
        }
    }

    /// The zip given on the command line, validated then installed; none: skipped.
    fn drive(&self, s: &Session) -> Option<Vec<Action>> {
        let c = &s.cudnn();
        if c.finished() {
            return None;
        }
        if c.busy() {
            return Some(Vec::new());
        }
        Some(match (&c.archive(), &c.check(), &c.installed()) {
            (None, _, _) => match &s.opts.cudnn_archive {
                Some(z) => vec![Action::UseCudnnArchive(z.clone())],
                None => vec![Action::SkipCudnn],
            },
            (Some(_), Some(Ok(_)), None) => vec![Action::InstallCudnn],
            _ => Vec::new(),
        })
    }
}

fn show(state: &mut State, session: &Session, ui: &mut Ui) -> Vec<Action> {
    let lang = session.lang;
    let mut actions = Vec::new();
    let c = &session.cudnn();
    ui.label(t(lang, "ui_cudnn_intro"));
    if session.opts.target.os == Os::Linux {
        widgets::note(ui, Tone::Info, &t(lang, "ui_cudnn_linux"));
    }
    let Some(dir) = session.toolkit_dir() else {
        widgets::note(ui, Tone::Warn, &t(lang, "ui_cudnn_no_toolkit"));
        return actions;
    };
    ui.label(tf(lang, "ui_cudnn_goes_to", &[("dir", &dir.display())]));
    let pick = session.recommendation().and_then(|r| r.cudnn.as_ref());
    if let Some(p) = pick {
        ui.label(tf(
            lang,
            "ui_cudnn_recommended",
            &[
                ("version", &p.version),
                ("major", &p.cuda_major),
                ("file", &p.archive.file),
            ],
        ));
    }

    // Files dropped on the window (anywhere on this page).
    let dropped: Option<PathBuf> = ui.ctx().input(|i| {
        i.raw
            .dropped_files
            .iter()
            .find_map(|f| Some(f.path().to_path_buf()).filter(|p| !p.as_os_str().is_empty()))
    });
    if let Some(p) = dropped
        && !c.busy()
    {
        actions.push(Action::UseCudnnArchive(p));
    }
    let hovering = ui.ctx().input(|i| !i.raw.hovered_files.is_empty());
    widgets::gap(ui);
    widgets::callout(ui, if hovering { Tone::Ok } else { Tone::Pending }, |ui| {
        ui.vertical_centered(|ui| {
            ui.add_space(8.0);
            let drop = if session.opts.target.os == Os::Linux {
                "ui_drop_tarball"
            } else {
                "ui_drop_zip"
            };
            ui.label(RichText::new(t(lang, drop)).size(16.0));
            ui.add_space(8.0);
        });
    });
    widgets::gap(ui);
    let busy = c.busy();
    ui.horizontal(|ui| {
        if ui
            .add_enabled(!busy, egui::Button::new(t(lang, "ui_choose_file")))
            .clicked()
        {
            actions.push(Action::PickFile(Pick::CudnnArchive));
        }
        if ui
            .add_enabled(!busy, egui::Button::new(t(lang, "ui_skip_cudnn")))
            .clicked()
        {
            actions.extend([Action::SkipCudnn, Action::Next]);
        }
    });

    if c.downloading() {
        widgets::section(ui, &t(lang, "ui_downloading"));
        match c.download_progress() {
            Some((done, total, rate, eta)) => widgets::transfer(ui, lang, done, total, rate, eta),
            None => {
                ui.spinner();
            }
        }
        if ui.button(t(lang, "ui_cancel")).clicked() {
            actions.push(Action::CancelCudnnDownload);
        }
    }
    if let Some(f) = c.download_error() {
        let again = pick.map(|p| download_label(lang, p));
        failed(ui, lang, "ui_download_failed", f, again);
    }

    if let Some(a) = &c.archive() {
        widgets::section(ui, &t(lang, "ui_validation"));
        ui.label(RichText::new(a.display().to_string()).monospace().small());
    }
    if c.validating() {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(t(lang, "ui_validating"));
        });
    }
    match c.check() {
        Some(Ok(check)) => {
            validation(ui, lang, check);
            match c.installed() {
                None if c.installing() => {
                    let (done, total) = c.extracted().unwrap_or((0, check.total_bytes));
                    let f = if total > 0 {
                        done as f32 / total as f32
                    } else {
                        0.0
                    };
                    widgets::progress(
                        ui,
                        f,
                        &tf(
                            lang,
                            "ui_cudnn_copying",
                            &[("done", &text::bytes(done)), ("total", &text::bytes(total))],
                        ),
                    );
                }
                // "Install cuDNN" is the page's primary button, at the bottom.
                None => widgets::note(ui, Tone::Info, &t(lang, "ui_nothing_copied_yet")),
                Some(Ok(m)) => {
                    widgets::note(
                        ui,
                        Tone::Ok,
                        &tf(
                            lang,
                            "ui_cudnn_installed",
                            &[
                                ("version", &m.cudnn_version),
                                ("files", &m.files.len()),
                                ("replaced", &m.files.iter().filter(|f| f.replaced).count()),
                            ],
                        ),
                    );
                    actions.extend(undo(state, session, ui, m, &dir));
                }
                Some(Err(f)) => failed(
                    ui,
                    lang,
                    "ui_cudnn_install_failed",
                    f,
                    Some(t(lang, "ui_choose_file")),
                ),
            }
        }
        Some(Err(r)) => refused(ui, lang, r, &t(lang, "ui_choose_file")),
        None => {}
    }
    match c.undone() {
        Some(Ok(m)) => widgets::note(
            ui,
            Tone::Ok,
            &tf(
                lang,
                "ui_cudnn_undone",
                &[("version", &m.cudnn_version), ("dir", &dir.display())],
            ),
        ),
        Some(Err(f)) => {
            let again = matches!(c.installed(), Some(Ok(_))).then(|| t(lang, "ui_cudnn_undo"));
            failed(ui, lang, "ui_cudnn_undo_failed", f, again)
        }
        None => {}
    }
    actions
}

/// The primary before an archive: "Download and install cuDNN 9.x (about N MB, no NVIDIA
/// account needed)", the version and size the recommendation's.
pub fn download_label(lang: Lang, pick: &CudnnPick) -> String {
    match pick.archive.size {
        Some(size) => tf(
            lang,
            "ui_cudnn_download_install",
            &[("version", &pick.version), ("size", &text::bytes(size))],
        ),
        None => tf(
            lang,
            "ui_cudnn_download_install_unsized",
            &[("version", &pick.version)],
        ),
    }
}

/// A failure on this page: the title, the kind's plain words and what to do (naming
/// `again`, this page's button that does it again, when shown), the raw error folded
/// under "Details".
fn failed(ui: &mut Ui, lang: Lang, title: &'static str, f: &Failure, again: Option<String>) {
    let here = crate::ui::fixes::Here::new(crate::ui::flow::Page::Cudnn, again);
    progress::titled_failure(ui, lang, &t(lang, title), f, &here, title);
}

/// Undo: a button, then a confirmation naming what goes and what comes back; the core's
/// uninstall runs on the worker.
fn undo(
    state: &mut State,
    session: &Session,
    ui: &mut Ui,
    m: &Manifest,
    dir: &std::path::Path,
) -> Vec<Action> {
    let lang = session.lang;
    let mut actions = Vec::new();
    if session.cudnn().undoing() {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(t(lang, "ui_cudnn_undoing"));
        });
        return actions;
    }
    if !state.confirm_undo {
        if ui.button(t(lang, "ui_cudnn_undo")).clicked() {
            state.confirm_undo = true;
        }
        return actions;
    }
    widgets::callout(ui, Tone::Warn, |ui| {
        ui.label(tf(
            lang,
            "ui_cudnn_undo_confirm",
            &[
                ("version", &m.cudnn_version),
                ("dir", &dir.display()),
                ("replaced", &m.files.iter().filter(|f| f.replaced).count()),
            ],
        ));
        ui.horizontal(|ui| {
            if ui
                .button(RichText::new(t(lang, "ui_cudnn_undo_yes")).strong())
                .clicked()
            {
                state.confirm_undo = false;
                actions.push(Action::UndoCudnn);
            }
            if ui.button(t(lang, "ui_cancel")).clicked() {
                state.confirm_undo = false;
            }
        });
    });
    actions
}

fn validation(ui: &mut Ui, lang: Lang, c: &ArchiveCheck) {
    ui.horizontal(|ui| {
        widgets::badge(ui, Tone::Ok, &t(lang, "ui_pass"));
        ui.label(tf(
            lang,
            "ui_cudnn_layout_ok",
            &[
                ("entries", &c.entries),
                ("dlls", &c.libraries),
                ("headers", &c.headers),
                ("size", &text::bytes(c.total_bytes)),
            ],
        ));
    });
    ui.horizontal(|ui| {
        widgets::badge(ui, Tone::Ok, &t(lang, "ui_pass"));
        ui.label(tf(
            lang,
            "ui_cudnn_version_found",
            &[("version", &c.version)],
        ));
    });
    ui.horizontal(|ui| match (c.cuda_major, &c.toolkit) {
        (Some(m), Some(tk)) => {
            widgets::badge(ui, Tone::Ok, &t(lang, "ui_pass"));
            ui.label(tf(
                lang,
                "ui_cudnn_major_ok",
                &[("major", &m), ("toolkit", tk)],
            ));
        }
        _ => {
            widgets::badge(ui, Tone::Warn, &t(lang, "ui_warn"));
            ui.label(t(lang, "ui_cudnn_major_unknown"));
        }
    });
}

/// A refused archive; `again` is this page's button that picks another.
fn refused(ui: &mut Ui, lang: Lang, r: &Refused, again: &str) {
    use cuda_setup_core::cudnn::RefusalRule as R;
    let title = match r.rule() {
        R::NotZip => "ui_refused_not_zip",
        R::UnsafeName => "ui_refused_unsafe_name",
        R::WindowsName => "ui_refused_windows_name",
        R::CaseCollision => "ui_refused_case_collision",
        R::SameDestination => "ui_refused_same_destination",
        R::TooLarge => "ui_refused_too_large",
        R::Corrupt => "ui_refused_corrupt",
        R::Layout => "ui_refused_layout",
        R::NoVersion => "ui_refused_no_version",
        R::CudaMismatch => "ui_refused_cuda_mismatch",
    };
    widgets::callout(ui, Tone::Bad, |ui| {
        ui.horizontal(|ui| {
            widgets::badge(ui, Tone::Bad, &t(lang, "ui_fail"));
            ui.label(RichText::new(t(lang, title)).strong());
        });
        let here = crate::ui::fixes::Here::new(crate::ui::flow::Page::Cudnn, Some(again.into()));
        let fix = crate::ui::fixes::kind_text(
            lang,
            cuda_setup_core::steps::FailureKind::Cudnn,
            &Default::default(),
            &here,
        );
        ui.label(tf(lang, "ui_what_to_do", &[("hint", &fix)]));
        ui.label(RichText::new(t(lang, "ui_nothing_copied")).weak());
        progress::details(ui, lang, "refused", &r.detail());
    });
}
