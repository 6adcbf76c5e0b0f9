//! Install: the plan runs on the worker; a progress bar per step with speed and ETA, the
//! live log (folded), cancel. A failed or cancelled run can be run again: finished steps
//! are not repeated (the executor's journal).

use egui::Ui;

use crate::ui::app::App;
use crate::ui::app::Page;
use crate::ui::progress::RunView;
use crate::ui::text::{msg, t};
use crate::ui::widgets::{self, Tone};
use crate::ui::worker::{Command, Job};
use cuda_setup_core::download::Cancel;
use cuda_setup_core::recommend::{Method, MethodFacts, method_advice};

#[derive(Default)]
pub struct State {
    pub run: RunView,
}

pub fn start(app: &mut App) {
    let Some(Ok(p)) = &app.prepare.result else {
        return;
    };
    let plan = p.plan.clone();
    let cancel = Cancel::default();
    app.install.run = RunView::start(&plan, cancel.clone());
    app.submit(Command::Run {
        job: Job::Install,
        plan: Box::new(plan),
        cancel,
    });
}

pub fn show(app: &mut App, ui: &mut Ui) {
    let lang = app.lang;
    if !app.install.run.started {
        ui.label(t(lang, "ui_nothing_to_install"));
        return;
    }
    app.install.run.show(ui, lang, false);
    widgets::gap(ui);
    ui.horizontal(|ui| {
        if app.install.run.running() {
            if ui.button(t(lang, "ui_cancel")).clicked() {
                app.install.run.cancel();
            }
        } else if !app.install.run.succeeded() && ui.button(t(lang, "ui_try_again")).clicked() {
            start(app);
        }
        if let Some(log) = app
            .install
            .run
            .report
            .as_ref()
            .and_then(|r| r.log_file.clone())
            && ui.button(t(lang, "ui_open_log")).clicked()
        {
            app.submit(Command::Open(log));
        }
    });
    if app.install.run.succeeded() {
        widgets::note(ui, Tone::Ok, &t(lang, "ui_install_done"));
    }
    offer_wheels(app, ui);
}

/// NVIDIA's server failed us: offer the same toolkit as NVIDIA's wheels from PyPI.
fn offer_wheels(app: &mut App, ui: &mut Ui) {
    let failed_download = app
        .install
        .run
        .report
        .as_ref()
        .and_then(|r| r.failure.as_ref())
        .is_some_and(|f| f.step == "download_toolkit");
    if !failed_download || app.choose.method == Method::Wheels {
        return;
    }
    let (method, why) = method_advice(&MethodFacts {
        installer_download_failed: true,
        ..Default::default()
    });
    widgets::note(ui, Tone::Info, &msg(app.lang, &why));
    if method == Method::Wheels && ui.button(t(app.lang, "ui_use_wheels")).clicked() {
        app.choose.method = Method::Wheels;
        app.choose.cache = None;
        app.prepare = Default::default();
        app.install = Default::default();
        app.go(Page::Choose);
    }
}
