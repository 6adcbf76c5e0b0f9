//! cuDNN: a zip dropped on the window, picked in a file dialog, or downloaded from
//! NVIDIA's public redist; validated (layout, version, CUDA major) and shown before
//! anything is copied; then installed as the core's transaction.

use std::path::PathBuf;

use egui::{ProgressBar, RichText, Ui};

use crate::ui::app::App;
use crate::ui::text::{self, t, tf};
use crate::ui::widgets::{self, Tone};
use crate::ui::worker::{ArchiveCheck, Command, Pick, Refused};
use cuda_setup_core::compat::Os;
use cuda_setup_core::cudnn::Manifest;
use cuda_setup_core::download::{self, Cancel};
use cuda_setup_core::i18n::Lang;

#[derive(Default)]
pub struct State {
    pub archive: Option<PathBuf>,
    pub validating: bool,
    pub check: Option<Result<Box<ArchiveCheck>, Box<Refused>>>,
    pub downloading: Option<Cancel>,
    pub download_progress: Option<download::Progress>,
    pub download_error: Option<String>,
    pub installing: bool,
    pub extracted: Option<(u64, u64)>,
    pub installed: Option<Result<Box<Manifest>, String>>,
    pub skipped: bool,
}

impl State {
    pub fn busy(&self) -> bool {
        self.validating || self.downloading.is_some() || self.installing
    }

    /// Installed, or skipped on purpose.
    pub fn finished(&self) -> bool {
        self.skipped || matches!(self.installed, Some(Ok(_)))
    }
}

/// Validates `path` against the toolkit (nothing is copied yet).
pub fn use_archive(app: &mut App, path: PathBuf) {
    let Some(toolkit_dir) = app.toolkit_dir() else {
        return;
    };
    app.cudnn.archive = Some(path.clone());
    app.cudnn.check = None;
    app.cudnn.installed = None;
    app.cudnn.extracted = None;
    app.cudnn.validating = true;
    app.submit(Command::ValidateCudnn {
        archive: path,
        toolkit_dir,
    });
}

fn download(app: &mut App) {
    let Some(pick) = app.choose.cache.as_ref().and_then(|(_, r)| r.cudnn.clone()) else {
        return;
    };
    let cancel = Cancel::default();
    app.cudnn.downloading = Some(cancel.clone());
    app.cudnn.download_progress = None;
    app.cudnn.download_error = None;
    app.submit(Command::DownloadCudnn {
        pick: Box::new(pick),
        mirrors: app.choose.mirrors(),
        cancel,
    });
}

fn install(app: &mut App) {
    let (Some(archive), Some(toolkit_dir)) = (app.cudnn.archive.clone(), app.toolkit_dir()) else {
        return;
    };
    app.cudnn.installing = true;
    app.cudnn.extracted = None;
    app.submit(Command::InstallCudnn {
        archive,
        toolkit_dir,
    });
}

/// What a user would do next here (screenshots drive the wizard with it).
pub fn autopilot(app: &mut App) {
    if app.cudnn.busy() {
        return;
    }
    match (&app.cudnn.archive, &app.cudnn.check, &app.cudnn.installed) {
        (None, _, _) => match app.opts.cudnn_archive.clone() {
            Some(z) => use_archive(app, z),
            None => app.cudnn.skipped = true,
        },
        (Some(_), Some(Ok(_)), None) => install(app),
        _ => {}
    }
}

pub fn show(app: &mut App, ui: &mut Ui) {
    let lang = app.lang;
    ui.label(t(lang, "ui_cudnn_intro"));
    if app.opts.target.os == Os::Linux {
        widgets::note(ui, Tone::Info, &t(lang, "ui_cudnn_linux"));
    }
    let Some(dir) = app.toolkit_dir() else {
        widgets::note(ui, Tone::Warn, &t(lang, "ui_cudnn_no_toolkit"));
        return;
    };
    ui.label(tf(lang, "ui_cudnn_goes_to", &[("dir", &dir.display())]));
    if let Some(c) = app
        .choose
        .cache
        .as_ref()
        .and_then(|(_, r)| r.cudnn.as_ref())
    {
        ui.label(tf(
            lang,
            "ui_cudnn_recommended",
            &[
                ("version", &c.version),
                ("major", &c.cuda_major),
                ("file", &c.archive.file),
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
        && !app.cudnn.busy()
    {
        use_archive(app, p);
    }
    let hovering = ui.ctx().input(|i| !i.raw.hovered_files.is_empty());
    widgets::gap(ui);
    widgets::callout(ui, if hovering { Tone::Ok } else { Tone::Pending }, |ui| {
        ui.vertical_centered(|ui| {
            ui.add_space(8.0);
            let drop = if app.opts.target.os == Os::Linux {
                "ui_drop_tarball"
            } else {
                "ui_drop_zip"
            };
            ui.label(RichText::new(t(lang, drop)).size(16.0));
            ui.add_space(8.0);
        });
    });
    widgets::gap(ui);
    let busy = app.cudnn.busy();
    ui.horizontal(|ui| {
        if ui
            .add_enabled(!busy, egui::Button::new(t(lang, "ui_choose_file")))
            .clicked()
        {
            app.submit(Command::PickFile {
                purpose: Pick::CudnnArchive,
            });
        }
        let can_download = app
            .choose
            .cache
            .as_ref()
            .is_some_and(|(_, r)| r.cudnn.is_some());
        if can_download
            && ui
                .add_enabled(!busy, egui::Button::new(t(lang, "ui_download_nvidia")))
                .clicked()
        {
            download(app);
        }
        if ui
            .add_enabled(!busy, egui::Button::new(t(lang, "ui_skip_cudnn")))
            .clicked()
        {
            app.cudnn.skipped = true;
            app.next();
        }
    });

    if let Some(cancel) = app.cudnn.downloading.clone() {
        widgets::section(ui, &t(lang, "ui_downloading"));
        match &app.cudnn.download_progress {
            Some(p) => widgets::transfer(ui, lang, p.done, p.total, p.bytes_per_sec, p.eta_secs),
            None => {
                ui.spinner();
            }
        }
        if ui.button(t(lang, "ui_cancel")).clicked() {
            cancel.cancel();
        }
    }
    if let Some(e) = &app.cudnn.download_error {
        widgets::callout(ui, Tone::Bad, |ui| {
            ui.label(RichText::new(t(lang, "ui_download_failed")).strong());
            ui.label(e);
        });
    }

    if let Some(a) = &app.cudnn.archive {
        widgets::section(ui, &t(lang, "ui_validation"));
        ui.label(RichText::new(a.display().to_string()).monospace().small());
    }
    if app.cudnn.validating {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(t(lang, "ui_validating"));
        });
    }
    match &app.cudnn.check {
        Some(Ok(c)) => {
            validation(ui, lang, c);
            match &app.cudnn.installed {
                None if app.cudnn.installing => {
                    let (done, total) = app.cudnn.extracted.unwrap_or((0, c.total_bytes));
                    let f = if total > 0 {
                        done as f32 / total as f32
                    } else {
                        0.0
                    };
                    ui.add(ProgressBar::new(f).text(tf(
                        lang,
                        "ui_cudnn_copying",
                        &[("done", &text::bytes(done)), ("total", &text::bytes(total))],
                    )));
                }
                None => {
                    widgets::note(ui, Tone::Info, &t(lang, "ui_nothing_copied_yet"));
                    widgets::gap(ui);
                    if ui
                        .button(RichText::new(t(lang, "ui_install_cudnn")).strong())
                        .clicked()
                    {
                        install(app);
                    }
                }
                Some(Ok(m)) => widgets::note(
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
                ),
                Some(Err(e)) => widgets::callout(ui, Tone::Bad, |ui| {
                    ui.label(RichText::new(t(lang, "ui_cudnn_install_failed")).strong());
                    ui.label(e);
                }),
            }
        }
        Some(Err(r)) => refused(ui, lang, r),
        None => {}
    }
}

fn validation(ui: &mut Ui, lang: Lang, c: &ArchiveCheck) {
    ui.horizontal(|ui| {
        widgets::badge(ui, Tone::Ok, &t(lang, "ui_pass"));
        ui.label(tf(
            lang,
            "ui_cudnn_layout_ok",
            &[
                ("entries", &c.entries),
                ("dlls", &c.dlls),
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

fn refused(ui: &mut Ui, lang: Lang, r: &Refused) {
    let title = match r.rule {
        "not_zip" => "ui_refused_not_zip",
        "unsafe_name" => "ui_refused_unsafe_name",
        "case_collision" => "ui_refused_case_collision",
        "same_destination" => "ui_refused_same_destination",
        "too_large" => "ui_refused_too_large",
        "corrupt" => "ui_refused_corrupt",
        "layout" => "ui_refused_layout",
        "no_version" => "ui_refused_no_version",
        "cuda_mismatch" => "ui_refused_cuda_mismatch",
        _ => "ui_refused",
    };
    widgets::callout(ui, Tone::Bad, |ui| {
        ui.horizontal(|ui| {
            widgets::badge(ui, Tone::Bad, &t(lang, "ui_fail"));
            ui.label(RichText::new(t(lang, title)).strong());
        });
        ui.label(&r.detail);
        ui.label(tf(lang, "ui_what_to_do", &[("hint", &r.hint)]));
        ui.label(RichText::new(t(lang, "ui_nothing_copied")).weak());
    });
}
