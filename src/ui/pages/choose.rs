//! Choose: the recommended path — "PyTorch only" (the driver and the right wheel) or
//! "Developer" (toolkit + cuDNN) — with the versions and the recommender's reasons, and an
//! advanced panel to override them.

use egui::{Grid, RichText, TextEdit, Ui};

use super::Screen;
use crate::ui::session::{Action, Session, Settings};
use crate::ui::text::{msg, t, tf};
use crate::ui::widgets::{self, Tone};
use cuda_setup_core::compat::Os;
use cuda_setup_core::plan::Method;
use cuda_setup_core::recommend::{DriverAction, Goal, Recommendation};

/// The settings live in the session (the plan is built from them); this page edits a copy
/// and hands it back when it changed.
#[derive(Default)]
pub struct State;

impl Screen for State {
    fn show(&mut self, s: &Session, ui: &mut Ui) -> Vec<Action> {
        let mut settings = s.settings.clone();
        let mut actions = show(s, &mut settings, ui);
        if settings != s.settings {
            actions.push(Action::SetSettings(settings));
        }
        actions
    }

    fn can_next(&self, s: &Session) -> bool {
        s.recommendation().is_some_and(|r| r.fits())
    }
}

fn show(session: &Session, settings: &mut Settings, ui: &mut Ui) -> Vec<Action> {
    let mut actions = Vec::new();
    let lang = session.lang;
    ui.label(t(lang, "ui_choose_intro"));
    widgets::gap(ui);
    let mut goal = session.goal;
    ui.columns(2, |cols| {
        widgets::card(
            &mut cols[0],
            &mut goal,
            Goal::Pytorch,
            &t(lang, "ui_goal_pytorch"),
            &t(lang, "ui_goal_pytorch_body"),
        );
        widgets::card(
            &mut cols[1],
            &mut goal,
            Goal::Developer,
            &t(lang, "ui_goal_developer"),
            &t(lang, "ui_goal_developer_body"),
        );
    });
    if goal != session.goal {
        // Drawn for the new goal from the next frame on, with its recommendation.
        actions.push(Action::ChooseGoal(goal));
        return actions;
    }
    let Some(rec) = session.recommendation() else {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(t(lang, "ui_detecting"));
        });
        return actions;
    };

    widgets::section(ui, &t(lang, "ui_recommended"));
    if !rec.fits() {
        for b in &rec.blockers {
            widgets::note(ui, Tone::Bad, &msg(lang, b));
        }
    }
    Grid::new("picks")
        .num_columns(2)
        .spacing([16.0, 6.0])
        .show(ui, |ui| {
            if goal == Goal::Developer {
                ui.label(t(lang, "ui_toolkit"));
                match &rec.toolkit {
                    Some(tk) => ui.label(RichText::new(format!("CUDA {}", tk.label)).strong()),
                    None => ui.label("—"),
                };
                ui.end_row();
                ui.label("cuDNN");
                match &rec.cudnn {
                    Some(c) => ui.label(
                        RichText::new(format!("cuDNN {} (cuda{})", c.version, c.cuda_major))
                            .strong(),
                    ),
                    None => ui.label("—"),
                };
                ui.end_row();
            }
            ui.label("PyTorch");
            match &rec.torch {
                Some(p) => {
                    ui.label(RichText::new(format!("torch {} ({})", p.version, p.variant)).strong())
                }
                None => ui.label("—"),
            };
            ui.end_row();
            ui.label(t(lang, "ui_driver"));
            ui.label(driver_line(lang, rec));
            ui.end_row();
        });
    if rec.fits() {
        match rec.driver.action {
            DriverAction::Install => widgets::note(
                ui,
                Tone::Warn,
                &msg(
                    lang,
                    &cuda_setup_core::msg!(
                        "driver_install",
                        minimum = rec
                            .driver
                            .minimum
                            .as_ref()
                            .map_or("-".into(), ToString::to_string)
                    ),
                ),
            ),
            DriverAction::Update => widgets::note(
                ui,
                Tone::Warn,
                &msg(
                    lang,
                    &cuda_setup_core::msg!(
                        "driver_update_required",
                        current = rec
                            .driver
                            .current
                            .as_ref()
                            .map_or("-".into(), ToString::to_string),
                        minimum = rec
                            .driver
                            .minimum
                            .as_ref()
                            .map_or("-".into(), ToString::to_string)
                    ),
                ),
            ),
            DriverAction::None => {}
        }
    }

    widgets::section(ui, &t(lang, "ui_why"));
    for r in &rec.reasons {
        ui.horizontal_wrapped(|ui| {
            ui.label("•");
            ui.label(msg(lang, r));
        });
    }
    // Where the facts come from: the built-in tables, a cache of date X, or live data.
    ui.horizontal_wrapped(|ui| {
        if session.refreshing {
            ui.spinner();
            ui.label(RichText::new(msg(lang, &cuda_setup_core::msg!("refresh_running"))).weak());
        }
        ui.label(RichText::new(msg(lang, &session.tables_line)).weak());
    });

    if goal == Goal::Developer {
        method(session, settings, ui);
    }

    widgets::gap(ui);
    egui::CollapsingHeader::new(t(lang, "ui_advanced"))
        .id_salt("advanced")
        .show(ui, |ui| advanced(session, settings, ui, goal));
    actions
}

/// Installer or wheels: two radio buttons, the difference in one sentence, and why the
/// default is what it is.
fn method(session: &Session, settings: &mut Settings, ui: &mut Ui) {
    let lang = session.lang;
    widgets::section(ui, &t(lang, "ui_method"));
    ui.horizontal(|ui| {
        ui.radio_value(
            &mut settings.method,
            Method::Installer,
            t(lang, "ui_method_installer"),
        );
        ui.radio_value(
            &mut settings.method,
            Method::Wheels,
            t(lang, "ui_method_wheels"),
        );
    });
    ui.label(RichText::new(t(lang, "ui_method_explain")).weak());
    let (advised, why) =
        cuda_setup_core::recommend::method_advice(&cuda_setup_core::recommend::MethodFacts {
            elevated: session.opts.target.elevated || cfg!(windows),
            pypi_mirror: !settings.pypi.trim().is_empty(),
            installer_download_failed: false,
        });
    if advised == settings.method {
        widgets::note(ui, Tone::Info, &msg(lang, &why));
    }
    if settings.method == Method::Wheels {
        ui.horizontal(|ui| {
            let l = ui.label(t(lang, "ui_method_pypi"));
            ui.add(
                TextEdit::singleline(&mut settings.pypi)
                    .hint_text("tsinghua")
                    .desired_width(260.0),
            )
            .labelled_by(l.id);
        });
        if !settings.pypi.trim().is_empty() && settings.pypi_index().is_none() {
            widgets::note(ui, Tone::Bad, &t(lang, "ui_method_pypi_bad"));
        }
    }
}

fn driver_line(lang: cuda_setup_core::i18n::Lang, rec: &Recommendation) -> String {
    let current = match &rec.driver.current {
        Some(d) => tf(lang, "ui_driver_version", &[("version", d)]),
        None => t(lang, "ui_no_driver"),
    };
    match (rec.driver.action, &rec.driver.minimum) {
        (DriverAction::None, _) => format!("{current} ✓"),
        (_, Some(m)) => format!("{current} → {m}+"),
        (_, None) => current,
    }
}

fn advanced(session: &Session, settings: &mut Settings, ui: &mut Ui, goal: Goal) {
    let lang = session.lang;
    ui.label(RichText::new(t(lang, "ui_advanced_intro")).weak());
    Grid::new("advanced-grid").num_columns(2).show(ui, |ui| {
        if goal == Goal::Developer {
            let l = ui.label(t(lang, "ui_cuda_version"));
            ui.add(
                TextEdit::singleline(&mut settings.cuda)
                    .hint_text(t(lang, "ui_cuda_version_hint"))
                    .desired_width(120.0),
            )
            .labelled_by(l.id);
            ui.end_row();
            if session.opts.target.os == Os::Windows {
                ui.label("");
                ui.checkbox(&mut settings.with_driver, t(lang, "ui_with_driver"));
                ui.end_row();
            }
        }
        let l = ui.label(t(lang, "ui_mirrors"));
        ui.add(
            TextEdit::multiline(&mut settings.mirrors)
                .hint_text(t(lang, "ui_mirrors_hint"))
                .desired_rows(2)
                .desired_width(360.0),
        )
        .labelled_by(l.id);
        ui.end_row();
        ui.label(t(lang, "ui_connections"));
        ui.add(
            egui::Slider::new(&mut settings.connections, 1..=16).text(t(lang, "ui_connections")),
        );
        ui.end_row();
    });
    let cuda = settings.cuda.trim();
    if !cuda.is_empty() && cuda.parse::<cuda_setup_core::version::Version>().is_err() {
        widgets::note(
            ui,
            Tone::Bad,
            &tf(lang, "ui_bad_version", &[("value", &cuda)]),
        );
    }
}
