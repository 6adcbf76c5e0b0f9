//! Prepare: the plan (the driver's steps listed first), and the pre-flight checks with
//! pass/fail and what to do, before a byte is downloaded. Never "ready" while the driver
//! blocks: a driver the user installs themselves is said first, in amber.

use egui::{RichText, Ui};

use super::{Primary, Screen};
use crate::ui::progress::step_title;
use crate::ui::session::{Action, DriverPlan, Session};
use crate::ui::text::{self, t, tf};
use crate::ui::widgets::{self, Tone};
use crate::ui::worker::Prepared;
use cuda_setup_core::compat::Os;
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::plan::{self, Later, Rate};
use cuda_setup_core::recommend::Goal;
use cuda_setup_core::steps::preflight::{Check, Status};
use cuda_setup_core::steps::{Step, StepKind};

#[derive(Default)]
pub struct State;

impl Screen for State {
    fn show(&mut self, s: &Session, ui: &mut Ui) -> Vec<Action> {
        show(s, ui)
    }

    /// The plan is made afresh on each arrival (the checks look at the machine now).
    fn enter(&self, _s: &Session) -> Vec<Action> {
        vec![Action::Prepare]
    }

    fn can_next(&self, s: &Session) -> bool {
        s.prepare().ready()
    }

    fn why_not_next(&self, s: &Session) -> Option<&'static str> {
        Some(if s.prepare().running() {
            "ui_wait_prepare"
        } else {
            "ui_fix_checks_first"
        })
    }

    /// Blocked (a check failed, or the plan could not be made): once the user fixed it,
    /// "Check again" is the way on; else Next ("Start installing").
    fn primary(&self, s: &Session) -> Option<Primary> {
        blocked(s).then(|| Primary::new(t(s.lang, "ui_check_again"), Action::Prepare))
    }

    /// The next page installs (the toolkit, or the driver for the PyTorch goal).
    fn next_label(&self, s: &Session) -> &'static str {
        if s.steps().contains(&crate::ui::flow::Page::Install) {
            "ui_start_install"
        } else {
            "ui_next"
        }
    }
}

/// Checked, and something stands in the way.
fn blocked(s: &Session) -> bool {
    !s.prepare().running() && s.prepare().result().is_some() && !s.prepare().ready()
}

fn show(session: &Session, ui: &mut Ui) -> Vec<Action> {
    let lang = session.lang;
    let mut actions = Vec::new();
    if session.prepare().running() {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(t(lang, "ui_preparing"));
        });
        return actions;
    }
    let Some(result) = &session.prepare().result() else {
        return actions;
    };
    match result {
        Err(e) => {
            widgets::callout(ui, Tone::Bad, |ui| {
                ui.label(RichText::new(t(lang, "ui_prepare_failed")).strong());
                ui.label(t(lang, "ui_prepare_failed_hint"));
                // The core's error chain, word for word: for searching and support.
                crate::ui::progress::details(ui, lang, "prepare-failed", e);
            });
        }
        Ok(p) => {
            widgets::section(ui, &t(lang, "ui_plan"));
            plan_steps(session, ui, p);

            widgets::section(ui, &t(lang, "ui_preflight"));
            for c in &p.ahead.checks {
                check_row(ui, lang, c, p);
            }
            let failed = p.ahead.checks.iter().any(|c| c.status == Status::Fail);
            if failed {
                widgets::gap(ui);
                widgets::note(ui, Tone::Bad, &t(lang, "ui_checks_failed"));
                let admin_failed = p
                    .ahead
                    .checks
                    .iter()
                    .any(|c| c.id == "admin" && c.status == Status::Fail);
                if admin_failed
                    && session.opts.target.os == Os::Windows
                    && session.opts.target.root.is_none()
                    && ui.button(t(lang, "ui_restart_admin")).clicked()
                    && crate::ui::elevate::relaunch_as_admin(&crate::ui::elevate::elevated_args(
                        lang,
                        &session.settings,
                        cuda_setup_core::proxy::current().as_ref(),
                    ))
                {
                    ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
                }
            } else {
                widgets::gap(ui);
                ready_note(session, ui);
            }
        }
    }
    // Blocked, "Check again" is the primary button, at the bottom.
    if !blocked(session) {
        widgets::gap(ui);
        if ui.button(t(lang, "ui_check_again")).clicked() {
            actions.push(Action::Prepare);
        }
    }
    actions
}

/// The plan's steps in its own order (the driver comes right after the pre-flight
/// checks), numbered as the Install page numbers them, each download with its size; then
/// what the later pages fetch (cuDNN, PyTorch), and the total with the time it takes.
fn plan_steps(session: &Session, ui: &mut Ui, p: &Prepared) {
    let lang = session.lang;
    let dir = session
        .toolkit_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    // A complete toolkit in its folder is kept (the plan has no step for it).
    let kept = p.ahead.checks.iter().any(|c| c.id == "already_installed")
        && !p.plan.steps.iter().any(|s| {
            matches!(
                s.kind(),
                StepKind::InstallToolkit | StepKind::AssembleToolkit
            )
        });
    if let Some(v) = &p.plan.toolkit {
        let key = if kept {
            "ui_plan_toolkit_kept"
        } else {
            "ui_plan_toolkit"
        };
        ui.label(tf(lang, key, &[("version", v), ("dir", &dir)]));
    }
    if p.plan.goal == Goal::Pytorch {
        ui.label(t(lang, "ui_plan_pytorch"));
    }
    let size = |bytes: Option<u64>| bytes.map_or_else(|| t(lang, "ui_size_unknown"), text::bytes);
    let mut n = 0;
    for step in &p.plan.steps {
        n += 1;
        let title = step_title(lang, step.kind());
        let line = match step {
            Step::Download(d) => tf(
                lang,
                "ui_plan_step_size",
                &[("step", &title), ("size", &size(d.size))],
            ),
            _ => title,
        };
        ui.label(format!("{n}. {line}"));
    }
    let Some(rec) = session.recommendation() else {
        return;
    };
    let later = Later {
        cudnn: p.plan.goal == Goal::Developer && rec.cudnn.is_some(),
        torch: rec.torch.is_some(),
    };
    let all = plan::downloads(&p.plan, rec, later);
    if later.cudnn {
        n += 1;
        let bytes = rec.cudnn.as_ref().and_then(|c| c.archive.size);
        let line = tf(lang, "ui_plan_later_cudnn", &[("size", &size(bytes))]);
        ui.label(format!("{n}. {line}"));
    }
    if later.torch {
        n += 1;
        let line = tf(
            lang,
            "ui_plan_later_torch",
            &[("size", &text::bytes(plan::TORCH_CUDA_ESTIMATE_BYTES))],
        );
        ui.label(format!("{n}. {line}"));
    }
    let Rate::Assumed { bytes_per_sec } = all.rate;
    let key = if all.partial {
        "ui_plan_total_partial"
    } else {
        "ui_plan_total"
    };
    widgets::gap(ui);
    ui.label(
        RichText::new(tf(
            lang,
            key,
            &[
                ("total", &text::bytes(all.total_bytes)),
                ("rate", &text::bytes(bytes_per_sec)),
                ("time", &duration(lang, all.seconds)),
            ],
        ))
        .strong(),
    );
}

/// A time in plain words, rounded up to whole minutes.
fn duration(lang: Lang, seconds: u64) -> String {
    let minutes = seconds.div_ceil(60);
    match minutes {
        0 | 1 => t(lang, "ui_duration_minute"),
        m if m < 60 => tf(lang, "ui_duration_minutes", &[("n", &m)]),
        m => tf(
            lang,
            "ui_duration_hours",
            &[("h", &(m / 60)), ("m", &(m % 60))],
        ),
    }
}

/// "Ready to install" only when nothing blocks: a driver the user installs themselves
/// (they said so, or there is no installer of ours) comes first, in amber.
fn ready_note(session: &Session, ui: &mut Ui) {
    let lang = session.lang;
    match session.driver_plan() {
        DriverPlan::NotNeeded => widgets::note(ui, Tone::Ok, &t(lang, "ui_checks_passed")),
        DriverPlan::Planned => {
            widgets::note(ui, Tone::Ok, &t(lang, "ui_checks_passed_driver_first"))
        }
        DriverPlan::Yours => {
            let what = session
                .recommendation()
                .and_then(|r| r.driver_headline())
                .map(|m| crate::ui::text::msg(lang, &m))
                .unwrap_or_default();
            widgets::note(
                ui,
                Tone::Warn,
                &tf(lang, "ui_driver_first", &[("what", &what)]),
            );
        }
    }
}

fn check_row(ui: &mut Ui, lang: Lang, c: &Check, p: &Prepared) {
    let (tone, mark) = match c.status {
        Status::Pass => (Tone::Ok, t(lang, "ui_pass")),
        Status::Warn => (Tone::Warn, t(lang, "ui_warn")),
        Status::Fail => (Tone::Bad, t(lang, "ui_fail")),
    };
    let (title, why, fix) = describe(lang, c, p);
    ui.horizontal(|ui| {
        widgets::badge(ui, tone, &mark);
        ui.label(RichText::new(title).strong());
    });
    if c.status != Status::Pass {
        ui.indent(("check", c.id.as_str()), |ui| {
            if !why.is_empty() {
                ui.label(why);
            }
            if !fix.is_empty() {
                ui.label(tf(lang, "ui_what_to_do", &[("hint", &fix)]));
            }
        });
    }
}

/// A check in the user's language: (title, why, what to do). Unknown checks keep the
/// core's own words.
fn describe(lang: Lang, c: &Check, p: &Prepared) -> (String, String, String) {
    let fail = c.status == Status::Fail;
    let path_in_what = || {
        c.what
            .split(" contains ")
            .next()
            .and_then(|s| s.split(" is over ").next())
            .unwrap_or(&c.what)
            .to_string()
    };
    let needed = p.ahead.inputs.as_ref().map_or(0, |i| i.needed_bytes);
    let version = p
        .plan
        .toolkit
        .as_ref()
        .map_or("?".into(), |v| v.major_minor().to_string());
    match c.id.as_str() {
        "disk_toolkit" | "disk_work" => {
            let dir = p.ahead.inputs.as_ref().and_then(|i| {
                if c.id == "disk_toolkit" {
                    i.toolkit_dir.clone()
                } else {
                    Some(i.work_dir.clone())
                }
            });
            let free = p
                .ahead
                .free
                .iter()
                .find(|(id, _)| *id == c.id)
                .and_then(|(_, f)| *f)
                .map_or("?".into(), text::bytes);
            let dir = dir.map(|d| d.display().to_string()).unwrap_or_default();
            if fail {
                (
                    tf(
                        lang,
                        "ui_check_disk_fail",
                        &[
                            ("free", &free),
                            ("needed", &text::bytes(needed)),
                            ("dir", &dir),
                        ],
                    ),
                    t(lang, "ui_check_disk_why"),
                    t(lang, "ui_check_disk_fix"),
                )
            } else if c.status == Status::Warn {
                (
                    tf(
                        lang,
                        "ui_check_disk_estimate",
                        &[
                            ("free", &free),
                            ("needed", &text::bytes(needed)),
                            ("dir", &dir),
                        ],
                    ),
                    t(lang, "ui_check_disk_estimate_why"),
                    t(lang, "ui_check_disk_fix"),
                )
            } else {
                (
                    tf(
                        lang,
                        "ui_check_disk_pass",
                        &[("free", &free), ("dir", &dir)],
                    ),
                    String::new(),
                    String::new(),
                )
            }
        }
        "admin" if fail => (
            t(lang, "ui_check_admin_fail"),
            t(lang, "ui_check_admin_why"),
            t(
                lang,
                if cfg!(windows) {
                    "ui_check_admin_fix_windows"
                } else {
                    "ui_check_admin_fix_linux"
                },
            ),
        ),
        "admin" => (t(lang, "ui_check_admin_pass"), String::new(), String::new()),
        "temp_path" | "install_path" if c.what.contains("non-ASCII") => (
            tf(lang, "ui_check_path_ascii", &[("path", &path_in_what())]),
            t(lang, "ui_check_path_ascii_why"),
            t(lang, "ui_check_path_ascii_fix"),
        ),
        "temp_path" | "install_path" => (
            tf(lang, "ui_check_path_long", &[("path", &path_in_what())]),
            String::new(),
            t(lang, "ui_check_path_long_fix"),
        ),
        "visual_studio" if c.status == Status::Pass => {
            (t(lang, "ui_check_vs_pass"), String::new(), String::new())
        }
        "visual_studio" => (
            t(lang, "ui_check_vs_warn"),
            t(lang, "ui_check_vs_why"),
            t(lang, "ui_check_vs_fix"),
        ),
        "already_installed" => (
            tf(lang, "ui_check_already", &[("version", &version)]),
            String::new(),
            String::new(),
        ),
        "wheels_ours" => (
            tf(lang, "ui_check_wheels_ours", &[("version", &version)]),
            String::new(),
            String::new(),
        ),
        "install_path_not_ours" => (
            tf(
                lang,
                "ui_check_not_ours",
                &[(
                    "path",
                    &p.ahead
                        .inputs
                        .as_ref()
                        .and_then(|i| i.toolkit_dir.as_ref())
                        .map(|d| d.display().to_string())
                        .unwrap_or_default(),
                )],
            ),
            t(lang, "ui_check_not_ours_why"),
            t(lang, "ui_check_not_ours_fix"),
        ),
        _ => (c.what.clone(), c.why.clone(), c.fix.clone()),
    }
}
