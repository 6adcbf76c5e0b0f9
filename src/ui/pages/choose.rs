//! Choose: the recommended path — "PyTorch only" (the driver and the right wheel) or
//! "Developer" (toolkit + cuDNN) — with the versions and the recommender's reasons, and an
//! advanced panel to override them.

use egui::{Grid, RichText, TextEdit, Ui};

use crate::ui::app::{App, Options};
use crate::ui::text::{msg, t, tf};
use crate::ui::widgets::{self, Tone};
use cuda_setup_core::compat::Os;
use cuda_setup_core::plan::{Choices, CudnnChoice, Method};
use cuda_setup_core::recommend::{DriverAction, Goal, Recommendation};
use cuda_setup_core::verify::doctor::PypiMirror;

pub type Key = (Goal, String, u64);

pub struct State {
    /// Toolkit version prefix (`12.4`), empty for the recommended one.
    pub cuda: String,
    /// Mirror base URLs, one a line.
    pub mirrors: String,
    pub with_driver: bool,
    pub connections: usize,
    pub cache: Option<(Key, Recommendation)>,
    /// Installer or wheels; `method_advice` chose the default.
    pub method: Method,
    /// The PyPI index for wheels: a mirror name or URL, empty for pypi.org.
    pub pypi: String,
}

impl State {
    pub fn new(opts: &Options) -> State {
        State {
            cuda: opts
                .cuda
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
            mirrors: opts.mirrors.join("\n"),
            with_driver: false,
            connections: 8,
            cache: None,
            method: opts.method,
            pypi: opts.pypi_mirror.clone().unwrap_or_default(),
        }
    }

    /// The index URL for the wheels method (None: pypi.org; an unknown name too — the
    /// field shows why).
    pub fn pypi_index(&self) -> Option<String> {
        let t = self.pypi.trim();
        (!t.is_empty())
            .then(|| t.parse::<PypiMirror>().ok().map(|m| m.url))
            .flatten()
    }

    pub fn mirrors(&self) -> Vec<String> {
        self.mirrors
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    }
}

/// The plan's choices. cuDNN has a page of its own, so the plan leaves it out.
pub fn choices(app: &App) -> Choices {
    Choices {
        pypi_index: app.choose.pypi_index(),
        components: app.opts.components.clone(),
        cudnn: CudnnChoice::Skip,
        mirrors: app.choose.mirrors(),
        with_driver: app.choose.with_driver,
        ..Choices::new(app.choose.method)
    }
    .with_connections(app.choose.connections)
}

pub fn show(app: &mut App, ui: &mut Ui) {
    let lang = app.lang;
    ui.label(t(lang, "ui_choose_intro"));
    widgets::gap(ui);
    let before = app.goal;
    ui.columns(2, |cols| {
        widgets::card(
            &mut cols[0],
            &mut app.goal,
            Goal::Pytorch,
            &t(lang, "ui_goal_pytorch"),
            &t(lang, "ui_goal_pytorch_body"),
        );
        widgets::card(
            &mut cols[1],
            &mut app.goal,
            Goal::Developer,
            &t(lang, "ui_goal_developer"),
            &t(lang, "ui_goal_developer_body"),
        );
    });
    if app.goal != before {
        // A new goal means a new plan.
        app.prepare = Default::default();
        app.install = Default::default();
    }
    let goal = app.goal;
    let Some(rec) = app.recommendation().cloned() else {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(t(lang, "ui_detecting"));
        });
        return;
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
            ui.label(driver_line(lang, &rec));
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
        if app.refreshing {
            ui.spinner();
            ui.label(RichText::new(msg(lang, &cuda_setup_core::msg!("refresh_running"))).weak());
        }
        ui.label(RichText::new(msg(lang, &app.tables_line)).weak());
    });

    if goal == Goal::Developer {
        method(app, ui);
    }

    widgets::gap(ui);
    egui::CollapsingHeader::new(t(lang, "ui_advanced"))
        .id_salt("advanced")
        .show(ui, |ui| advanced(app, ui, goal));
}

/// Installer or wheels: two radio buttons, the difference in one sentence, and why the
/// default is what it is.
fn method(app: &mut App, ui: &mut Ui) {
    let lang = app.lang;
    widgets::section(ui, &t(lang, "ui_method"));
    let (before, pypi_before) = (app.choose.method, app.choose.pypi.clone());
    ui.horizontal(|ui| {
        ui.radio_value(
            &mut app.choose.method,
            Method::Installer,
            t(lang, "ui_method_installer"),
        );
        ui.radio_value(
            &mut app.choose.method,
            Method::Wheels,
            t(lang, "ui_method_wheels"),
        );
    });
    ui.label(RichText::new(t(lang, "ui_method_explain")).weak());
    let (advised, why) =
        cuda_setup_core::recommend::method_advice(&cuda_setup_core::recommend::MethodFacts {
            elevated: app.opts.target.elevated || cfg!(windows),
            pypi_mirror: !app.choose.pypi.trim().is_empty(),
            installer_download_failed: false,
        });
    if advised == app.choose.method {
        widgets::note(ui, Tone::Info, &msg(lang, &why));
    }
    if app.choose.method == Method::Wheels {
        ui.horizontal(|ui| {
            let l = ui.label(t(lang, "ui_method_pypi"));
            ui.add(
                TextEdit::singleline(&mut app.choose.pypi)
                    .hint_text("tsinghua")
                    .desired_width(260.0),
            )
            .labelled_by(l.id);
        });
        if !app.choose.pypi.trim().is_empty() && app.choose.pypi_index().is_none() {
            widgets::note(ui, Tone::Bad, &t(lang, "ui_method_pypi_bad"));
        }
    }
    if app.choose.method != before || app.choose.pypi != pypi_before {
        // Another method is another recommendation (wheels know more releases) and plan.
        app.choose.cache = None;
        app.prepare = Default::default();
        app.install = Default::default();
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

fn advanced(app: &mut App, ui: &mut Ui, goal: Goal) {
    let lang = app.lang;
    ui.label(RichText::new(t(lang, "ui_advanced_intro")).weak());
    Grid::new("advanced-grid").num_columns(2).show(ui, |ui| {
        if goal == Goal::Developer {
            let l = ui.label(t(lang, "ui_cuda_version"));
            ui.add(
                TextEdit::singleline(&mut app.choose.cuda)
                    .hint_text(t(lang, "ui_cuda_version_hint"))
                    .desired_width(120.0),
            )
            .labelled_by(l.id);
            ui.end_row();
            if app.opts.target.os == Os::Windows {
                ui.label("");
                ui.checkbox(&mut app.choose.with_driver, t(lang, "ui_with_driver"));
                ui.end_row();
            }
        }
        let l = ui.label(t(lang, "ui_mirrors"));
        ui.add(
            TextEdit::multiline(&mut app.choose.mirrors)
                .hint_text(t(lang, "ui_mirrors_hint"))
                .desired_rows(2)
                .desired_width(360.0),
        )
        .labelled_by(l.id);
        ui.end_row();
        ui.label(t(lang, "ui_connections"));
        ui.add(
            egui::Slider::new(&mut app.choose.connections, 1..=16).text(t(lang, "ui_connections")),
        );
        ui.end_row();
    });
    let cuda = app.choose.cuda.trim();
    if !cuda.is_empty() && cuda.parse::<cuda_setup_core::version::Version>().is_err() {
        widgets::note(
            ui,
            Tone::Bad,
            &tf(lang, "ui_bad_version", &[("value", &cuda)]),
        );
    }
}
