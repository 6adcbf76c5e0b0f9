//! Choose: first what the driver needs (the headline, and a driver card: what cuda-setup
//! installs, or "I will install the driver myself"; on Linux the exact commands), then
//! the recommended path — "PyTorch only" (the driver and the right wheel) or "Developer"
//! (toolkit + cuDNN) — with each download's size, the recommender's reasons behind "Why
//! this recommendation?", and an advanced panel to override them.

use egui::{Grid, RichText, TextEdit, Ui};

use super::Screen;
use crate::ui::session::{
    Action, DriverPlan, PIP_MIRRORS, PypiChoice, Session, Settings, default_pypi,
};
use crate::ui::text::{self, msg, t, tf};
use crate::ui::widgets::{self, Tone};
use cuda_setup_core::compat::Os;
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::plan::Method;
use cuda_setup_core::recommend::{DriverAction, DriverPackage, DriverPath, Goal, Recommendation};

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
        s.recommendation().is_some_and(|r| r.installable())
    }
}

fn show(session: &Session, settings: &mut Settings, ui: &mut Ui) -> Vec<Action> {
    let mut actions = Vec::new();
    let lang = session.lang;
    let rec = session.recommendation();
    // The driver first: what must happen before anything else can work.
    if let Some(rec) = rec
        && let Some(h) = rec.driver_headline()
    {
        let tone = match session.driver_plan() {
            DriverPlan::Planned => Tone::Warn,
            _ => Tone::Bad,
        };
        widgets::callout(ui, tone, |ui| {
            ui.label(RichText::new(msg(lang, &h)).strong().size(17.0));
        });
        widgets::gap(ui);
        driver_card(session, settings, rec, ui);
        widgets::gap(ui);
    }
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
    let Some(rec) = rec else {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(t(lang, "ui_detecting"));
        });
        return actions;
    };

    widgets::section(ui, &t(lang, "ui_recommended"));
    // A Jetson board: JetPack's answer, nothing to pick or install (#32).
    if let Some(j) = &rec.jetson {
        widgets::callout(ui, Tone::Info, |ui| {
            ui.label(RichText::new(msg(lang, &j.headline)).strong());
        });
        widgets::gap(ui);
        for r in rec.reasons.iter().filter(|r| **r != j.headline) {
            ui.horizontal_wrapped(|ui| {
                ui.label("•");
                ui.label(msg(lang, r));
            });
        }
        return actions;
    }
    if !rec.fits() {
        for b in &rec.blockers {
            widgets::note(ui, Tone::Bad, &msg(lang, b));
        }
    }
    let about = |size: Option<u64>, estimate: &str| {
        let size = size.map_or_else(|| estimate.to_string(), text::bytes);
        tf(lang, "ui_download_about", &[("size", &size)])
    };
    Grid::new("picks")
        .num_columns(3)
        .spacing([16.0, 6.0])
        .show(ui, |ui| {
            if goal == Goal::Developer {
                ui.label(t(lang, "ui_toolkit"));
                match &rec.toolkit {
                    Some(tk) => {
                        ui.label(
                            RichText::new(format!("CUDA {}", text::plain_release(&tk.label)))
                                .strong(),
                        );
                        let size = tk.installer.as_ref().and_then(|i| i.size);
                        ui.label(RichText::new(about(size, TOOLKIT_ESTIMATE)).weak());
                    }
                    None => {
                        ui.label("—");
                        ui.label("");
                    }
                };
                ui.end_row();
                ui.label("cuDNN");
                match &rec.cudnn {
                    Some(c) => {
                        ui.label(
                            RichText::new(tf(
                                lang,
                                "ui_cudnn_choice",
                                &[("version", &c.version), ("major", &c.cuda_major)],
                            ))
                            .strong(),
                        );
                        match c.archive.size {
                            Some(size) => ui.label(RichText::new(about(Some(size), "")).weak()),
                            None => ui.label(""),
                        };
                    }
                    None => {
                        ui.label("—");
                        ui.label("");
                    }
                };
                ui.end_row();
            }
            ui.label("PyTorch");
            match &rec.torch {
                Some(p) => {
                    ui.label(RichText::new(crate::ui::text::msg(lang, &p.label())).strong());
                    ui.label(RichText::new(about(None, TORCH_ESTIMATE)).weak());
                }
                None => {
                    ui.label("—");
                    ui.label("");
                }
            };
            ui.end_row();
            // "驱动 512.95 · 最高支持 CUDA 11.6" names the row itself (#32).
            match rec.driver_supports() {
                Some(s) => ui.label(msg(lang, &s)),
                None => ui.label(t(lang, "ui_driver")),
            };
            ui.label(driver_line(lang, rec));
            ui.label("");
            ui.end_row();
        });
    driver_paths(session, rec, ui, &mut actions);
    let no_python = session
        .system()
        .report()
        .is_some_and(|r| r.pythons.is_empty())
        && session.torch().python().trim().is_empty();
    if goal == Goal::Pytorch && no_python {
        widgets::gap(ui);
        widgets::get_python(ui, lang, session.opts.target.os);
    }

    widgets::gap(ui);
    egui::CollapsingHeader::new(t(lang, "ui_why_this"))
        .id_salt("choose-why")
        .show(ui, |ui| {
            if let Some(p) = &rec.torch {
                ui.label(tf(
                    lang,
                    "ui_why_torch_build",
                    &[
                        ("version", &p.version),
                        ("variant", &p.variant),
                        ("index", &p.index_url),
                    ],
                ));
            }
            for r in &rec.reasons {
                ui.horizontal_wrapped(|ui| {
                    ui.label("•");
                    ui.label(msg(lang, r));
                });
            }
        });
    // Where the facts come from: the built-in tables, a cache of date X, or live data.
    ui.horizontal_wrapped(|ui| {
        if session.refreshing() {
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

/// What a download weighs when the tables do not say (labelled "about"): NVIDIA's
/// Windows toolkit installers, a CUDA build of torch with its NVIDIA wheels, a driver.
const TOOLKIT_ESTIMATE: &str = "3 GB";
const TORCH_ESTIMATE: &str = "2.5 GB";
const DRIVER_ESTIMATE: &str = "0.7–0.9 GB";

/// The driver as step one: on Windows what cuda-setup installs (or "I will install the
/// driver myself", with NVIDIA's links); on Linux the package and the exact commands.
fn driver_card(session: &Session, settings: &mut Settings, rec: &Recommendation, ui: &mut Ui) {
    let lang = session.lang;
    // The number the headline and the CLI name (the core's `driver_target`).
    let minimum = rec.driver_target().unwrap_or_default();
    widgets::callout(ui, Tone::Info, |ui| {
        ui.label(
            RichText::new(t(lang, "ui_driver_card_title"))
                .strong()
                .size(15.0),
        );
        match session.opts.target.os {
            Os::Windows => {
                match &rec.driver.install {
                    Some(d) => {
                        let size = d
                            .download
                            .size
                            .map_or_else(|| DRIVER_ESTIMATE.to_string(), text::bytes);
                        ui.label(tf(
                            lang,
                            "ui_driver_card_install",
                            &[
                                ("version", &d.version),
                                ("package", &t(lang, package_key(d.package))),
                                ("size", &size),
                            ],
                        ));
                        ui.label(RichText::new(t(lang, "ui_driver_card_restart")).weak());
                        ui.checkbox(&mut settings.skip_driver, t(lang, "ui_driver_myself"));
                    }
                    None => {
                        ui.label(tf(
                            lang,
                            "ui_driver_card_no_package",
                            &[("minimum", &minimum)],
                        ));
                    }
                }
                if settings.skip_driver || rec.driver.install.is_none() {
                    ui.horizontal_wrapped(|ui| {
                        ui.hyperlink_to(t(lang, "ui_driver_link"), nvidia_drivers(lang));
                        ui.hyperlink_to(
                            t(lang, "ui_driver_app_link"),
                            "https://www.nvidia.com/en-us/software/nvidia-app/",
                        );
                    });
                    ui.label(t(lang, "ui_driver_myself_then"));
                }
            }
            // WSL2 (#32): the Windows driver, installed on Windows; never a Linux one.
            Os::Linux if rec.wsl.is_some() => {
                ui.label(tf(
                    lang,
                    "ui_wsl_driver_on_windows",
                    &[("minimum", &minimum)],
                ));
                match rec.wsl.as_ref().and_then(|w| w.windows_driver.as_ref()) {
                    Some(d) => {
                        ui.hyperlink_to(
                            tf(lang, "ui_wsl_driver_download", &[("version", &d.version)]),
                            &d.download.url,
                        );
                    }
                    None => {
                        ui.hyperlink_to(t(lang, "ui_driver_link"), nvidia_drivers(lang));
                    }
                }
            }
            Os::Linux => linux_driver(session, &minimum, ui),
        }
    });
}

/// Linux: the package and commands for this distribution (worked out on the worker).
fn linux_driver(session: &Session, minimum: &str, ui: &mut Ui) {
    let lang = session.lang;
    let ld = &session.linux_driver();
    match &ld.advice() {
        _ if ld.running() => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(t(lang, "ui_detecting"));
            });
        }
        Some(a) => {
            let distro = a.distro.clone().unwrap_or_else(|| "Linux".into());
            match &a.package {
                Some(p) => ui.label(tf(
                    lang,
                    "ui_linux_driver_package",
                    &[("distro", &distro), ("package", p)],
                )),
                None => ui.label(tf(lang, "ui_linux_driver_commands", &[("distro", &distro)])),
            };
            for c in &a.commands {
                widgets::command(ui, lang, c);
            }
            if a.secure_boot == Some(true) {
                widgets::note(ui, Tone::Warn, &t(lang, "ui_linux_secure_boot"));
            }
            if !a.confirmed {
                ui.label(RichText::new(t(lang, "ui_linux_driver_unconfirmed")).weak());
            }
            ui.label(t(lang, "ui_driver_myself_then"));
        }
        None => {
            ui.label(tf(
                lang,
                "ui_linux_driver_unknown",
                &[("minimum", &minimum)],
            ));
            ui.hyperlink_to(t(lang, "ui_driver_link"), nvidia_drivers(lang));
        }
    }
}

/// NVIDIA's driver download page (its Chinese site for the Chinese UI).
fn nvidia_drivers(lang: Lang) -> &'static str {
    match lang {
        Lang::Zh => "https://www.nvidia.cn/drivers",
        _ => "https://www.nvidia.com/drivers",
    }
}

/// The driver package in plain words.
fn package_key(p: DriverPackage) -> &'static str {
    match p {
        DriverPackage::GeforceDesktop => "ui_driver_pkg_geforce_desktop",
        DriverPackage::GeforceNotebook => "ui_driver_pkg_geforce_notebook",
        DriverPackage::Rtx => "ui_driver_pkg_rtx",
        DriverPackage::DataCenter => "ui_driver_pkg_data_center",
    }
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
            // A mirror the user asked for (the Chinese UI's default is no request).
            pypi_mirror: session.pypi_chosen && settings.pypi.is_mirror(),
            installer_download_failed: false,
        });
    if advised == settings.method {
        widgets::note(ui, Tone::Info, &msg(lang, &why));
    }
    if settings.method == Method::Wheels {
        pypi_choice(lang, settings, ui);
        // Chinese: the mirror is ours, not the user's: say so, and how to turn it off.
        if !session.pypi_chosen
            && settings.pypi != PypiChoice::Listed(0)
            && settings.pypi == default_pypi(lang)
        {
            ui.label(RichText::new(t(lang, "ui_method_pypi_default")).weak());
        }
    }
}

/// The wheels' PyPI index (#34): the PyTorch page's dropdown (measured first, official
/// PyPI, the mirrors by name), and "another address…" opening a field; an empty or
/// unusable address is said, with what is used meanwhile.
fn pypi_choice(lang: Lang, settings: &mut Settings, ui: &mut Ui) {
    let other = PIP_MIRRORS.len() + 1;
    let mut entries = vec![t(lang, "ui_source_auto")];
    entries.extend(PIP_MIRRORS.iter().map(|(_, key)| t(lang, key)));
    entries.push(t(lang, "ui_mirror_other"));
    let selected = match &settings.pypi {
        PypiChoice::Auto => 0,
        PypiChoice::Listed(i) => *i + 1,
        PypiChoice::Address(_) => other,
    };
    match widgets::source_dropdown(ui, &t(lang, "ui_method_pypi"), &entries, selected) {
        Some(0) => settings.pypi = PypiChoice::Auto,
        Some(i) if i == other => settings.pypi = PypiChoice::Address(String::new()),
        Some(i) => settings.pypi = PypiChoice::Listed(i - 1),
        None => {}
    }
    if let PypiChoice::Address(address) = &mut settings.pypi {
        ui.horizontal(|ui| {
            let l = ui.label(t(lang, "ui_pypi_address"));
            ui.add(TextEdit::singleline(address).desired_width(380.0))
                .labelled_by(l.id);
        });
        if address.trim().is_empty() {
            widgets::note(ui, Tone::Warn, &t(lang, "ui_pypi_address_empty"));
        } else if settings.pypi_index().is_none() {
            widgets::note(ui, Tone::Bad, &t(lang, "ui_method_pypi_bad"));
        }
    }
}

/// An old driver that works (#32): the two paths side by side, the default marked, and
/// why a wheel above the driver's CUDA is fine. A click asks the core for the other path.
fn driver_paths(session: &Session, rec: &Recommendation, ui: &mut Ui, actions: &mut Vec<Action>) {
    let lang = session.lang;
    if let Some(c) = &rec.choice {
        let mut chosen = c.chosen;
        ui.add_space(6.0);
        ui.columns(2, |cols| {
            for (col, path) in cols.iter_mut().zip([DriverPath::Update, DriverPath::Keep]) {
                let body = if path == c.default {
                    msg(lang, &c.why_default(rec.os))
                } else {
                    String::new()
                };
                widgets::card(
                    col,
                    &mut chosen,
                    path,
                    &msg(lang, &c.label(path, rec.os)),
                    &body,
                );
            }
        });
        if chosen != c.chosen {
            actions.push(Action::ChooseDriver(chosen));
        }
    }
    if let Some(m) = rec.wheel_above_driver() {
        widgets::note(ui, Tone::Info, &msg(lang, &m));
    }
}

fn driver_line(lang: Lang, rec: &Recommendation) -> String {
    let current = match (&rec.driver.current, rec.driver_supports()) {
        // The row's label names the driver and its CUDA (#32).
        (Some(_), Some(_)) => String::new(),
        // The row's label already says "Driver": the version alone.
        (Some(d), None) => d.to_string(),
        (None, _) => t(lang, "ui_no_driver"),
    };
    // The same number the CLI names: the version installed for a toolkit's branch, the
    // branch, or the minimum (the core's `driver_target`).
    match (rec.driver.action, &rec.driver_target()) {
        (DriverAction::None, _) if current.is_empty() => t(lang, "ui_driver_runs_it"),
        (DriverAction::None, _) => format!("{current} · {}", t(lang, "ui_driver_runs_it")),
        (_, Some(m)) if current.is_empty() => {
            format!("→ {}", tf(lang, "ui_driver_needs", &[("minimum", m)]))
        }
        (_, Some(m)) => format!(
            "{current} → {}",
            tf(lang, "ui_driver_needs", &[("minimum", m)])
        ),
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
        // The grid's left column names it: no caption beside the slider too.
        let l = ui.label(t(lang, "ui_connections"));
        ui.add(egui::Slider::new(&mut settings.connections, 1..=16))
            .labelled_by(l.id);
        ui.end_row();
        let l = ui.label(t(lang, "ui_proxy"));
        let edited = ui
            .add(
                TextEdit::singleline(&mut settings.proxy)
                    .hint_text(t(lang, "ui_proxy_hint"))
                    .desired_width(360.0),
            )
            .labelled_by(l.id)
            .changed();
        ui.end_row();
        if edited && let Ok(p) = cuda_setup_core::proxy::parse_field(&settings.proxy) {
            cuda_setup_core::proxy::set(p);
        }
    });
    // A bad address is not applied: the last good one (or the system's) stays.
    if let Err(e) = cuda_setup_core::proxy::parse_field(&settings.proxy) {
        widgets::note(ui, Tone::Bad, &msg(lang, &e.message()));
    }
    let cuda = settings.cuda.trim();
    if !cuda.is_empty() && cuda.parse::<cuda_setup_core::version::Version>().is_err() {
        widgets::note(
            ui,
            Tone::Bad,
            &tf(lang, "ui_bad_version", &[("value", &cuda)]),
        );
    }
}
