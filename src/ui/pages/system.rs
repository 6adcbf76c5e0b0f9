//! System: what detection found, with status badges; a card with no driver, or one that
//! is disabled, is explained with the guide's steps (Device Manager, the driver). The
//! driver's badge says whether it runs what is recommended (red: no; amber: only through
//! compatibility, or an update is advised; green: yes), with the reason in plain words.
//! GPUs are named plainly ("RTX 3060 (Ampere)"); compute capabilities and the like wait
//! behind "Why this recommendation?".

use egui::{Grid, RichText, Ui};

use super::Screen;
use crate::ui::session::{Action, DriverPlan, Session};
use crate::ui::text::{self, msg, t, tf};
use crate::ui::widgets::{self, Tone};
use cuda_setup_core::compat::Os;
use cuda_setup_core::detect::{Gpu, GpuSource};
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::version::PythonVersion;

#[derive(Default)]
pub struct State;

impl Screen for State {
    fn show(&mut self, s: &Session, ui: &mut Ui) -> Vec<Action> {
        show(s, ui)
    }

    fn enter(&self, s: &Session) -> Vec<Action> {
        if s.system().report().is_none() && !s.system().running() {
            vec![Action::Detect]
        } else {
            Vec::new()
        }
    }

    fn can_next(&self, s: &Session) -> bool {
        s.system().report().is_some()
    }

    /// Waiting for detection; not once it died (no answer comes).
    fn why_not_next(&self, s: &Session) -> Option<&'static str> {
        s.system().error().is_none().then_some("ui_wait_detect")
    }
}

fn show(session: &Session, ui: &mut Ui) -> Vec<Action> {
    let lang = session.lang;
    let mut actions = Vec::new();
    if session.opts.overrides.any() || session.opts.target.root.is_some() {
        widgets::note(ui, Tone::Info, &what_if(session));
        widgets::gap(ui);
    }
    // Borrowed, not copied: this runs every frame.
    let Some(report) = session.system().report() else {
        if session.system().error().is_some() {
            // Detection's thread died (a bug of ours; the app's note says so): no answer
            // comes, so no spinner, and the page's own button tries again.
            if ui.button(t(lang, "ui_detect_again")).clicked() {
                actions.push(Action::Detect);
            }
            return actions;
        }
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(t(lang, "ui_detecting"));
        });
        return actions;
    };
    let facts = session.facts();
    // Something changed since this report: said until the new one replaces it.
    if session.system().running() {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(t(lang, "ui_detecting_again"));
        });
    }

    widgets::section(ui, &t(lang, "ui_gpus"));
    let nvidia: Vec<&Gpu> = report.nvidia_gpus().collect();
    for g in &report.gpus {
        gpu_row(ui, lang, g);
    }
    for g in &session.opts.overrides.gpus {
        ui.horizontal(|ui| {
            widgets::badge(ui, Tone::Info, &t(lang, "ui_given"));
            let arch = session.opts.tables.architecture_of(g.compute_capability);
            let name = g.name.clone().unwrap_or_else(|| t(lang, "ui_nvidia_gpu"));
            ui.label(RichText::new(plain_gpu(&name, arch.map(|a| a.name.as_str()))).strong());
        });
    }
    if report.gpus.is_empty() && session.opts.overrides.gpus.is_empty() {
        ui.label(t(lang, "ui_none_found"));
    }
    // Problems, explained as the guide does.
    if let Some(f) = facts {
        for n in &f.notes {
            widgets::callout(ui, Tone::Bad, |ui| {
                ui.label(RichText::new(msg(lang, n)).strong());
                let steps = if n.key == "gpu_disabled" {
                    "ui_fix_disabled_steps"
                } else {
                    "ui_fix_driver_steps"
                };
                ui.label(t(lang, steps));
            });
        }
        if f.gpus.is_empty() && f.unidentified_gpus.is_empty() {
            widgets::note(ui, Tone::Bad, &t(lang, "ui_no_nvidia_gpu"));
        }
    }

    widgets::section(ui, &t(lang, "ui_driver"));
    let (tone, status, reason) = driver_state(session);
    ui.horizontal_wrapped(|ui| {
        widgets::badge(ui, tone, &status);
        let driver = facts.and_then(|f| f.driver.as_ref());
        match driver {
            Some(d) => ui.label(tf(lang, "ui_driver_version", &[("version", &d)])),
            None => ui.label(t(lang, "ui_no_driver")),
        };
    });
    if let Some(reason) = reason {
        widgets::note(ui, tone, &reason);
    }
    if facts.is_some_and(|f| f.driver.is_none())
        && (!nvidia.is_empty() || !session.opts.overrides.gpus.is_empty())
    {
        // Where the plan installs it, sending the user to NVIDIA's site would be wrong.
        if session.driver_plan() == DriverPlan::Planned {
            widgets::note(ui, Tone::Info, &t(lang, "ui_driver_we_install"));
        } else {
            widgets::callout(ui, Tone::Warn, |ui| {
                ui.label(t(lang, "ui_fix_driver_steps"));
            });
        }
    }

    widgets::section(ui, &t(lang, "ui_toolkits"));
    if report.toolkits.is_empty() {
        ui.label(t(lang, "ui_none_found"));
    }
    for tk in &report.toolkits {
        ui.horizontal(|ui| {
            let v = tk.version.as_ref().map_or("?".into(), ToString::to_string);
            widgets::badge(ui, Tone::Ok, &format!("CUDA {v}"));
            ui.label(tk.path.display().to_string());
            if tk.active {
                widgets::badge(ui, Tone::Info, &t(lang, "ui_on_path"));
            }
        });
    }

    widgets::section(ui, "cuDNN");
    if report.cudnn.is_empty() {
        ui.label(t(lang, "ui_none_found"));
    }
    for c in &report.cudnn {
        ui.horizontal(|ui| {
            let v = c.version.as_ref().map_or("?".into(), ToString::to_string);
            widgets::badge(ui, Tone::Ok, &format!("cuDNN {v}"));
            ui.label(c.location.display().to_string());
        });
    }

    widgets::section(ui, "Python");
    if report.pythons.is_empty() {
        ui.label(t(lang, "ui_none_found"));
        if session.goal == cuda_setup_core::recommend::Goal::Pytorch {
            widgets::get_python(ui, lang, session.opts.target.os);
        }
    }
    for p in &report.pythons {
        ui.horizontal(|ui| {
            let v = p.version_label();
            widgets::badge(ui, Tone::Ok, &format!("Python {v}"));
            ui.label(p.path.display().to_string());
            match &p.torch {
                Some(tch) if tch.cuda.is_some() => {
                    widgets::badge(
                        ui,
                        Tone::Ok,
                        &format!(
                            "torch {} (CUDA {})",
                            tch.version,
                            tch.cuda.as_deref().unwrap_or("")
                        ),
                    );
                }
                Some(tch) => {
                    widgets::badge(
                        ui,
                        Tone::Warn,
                        &tf(lang, "ui_torch_cpu", &[("version", &tch.version)]),
                    );
                }
                None => {
                    ui.label(RichText::new(t(lang, "ui_no_torch")).weak());
                }
            }
        });
    }

    if let Some(s) = &report.system {
        widgets::section(ui, &t(lang, "ui_this_computer"));
        Grid::new("system-grid").num_columns(2).show(ui, |ui| {
            ui.label(t(lang, "ui_os"));
            ui.label(format!("{} {} ({})", s.os_name, s.os_version, s.arch));
            ui.end_row();
            ui.label(t(lang, "ui_cpu"));
            ui.label(tf(
                lang,
                "ui_cpu_cores",
                &[("cpu", &s.cpu), ("cores", &s.cpu_cores)],
            ));
            ui.end_row();
            ui.label(t(lang, "ui_memory"));
            ui.label(text::bytes(s.ram_total_bytes));
            ui.end_row();
            ui.label(t(lang, "ui_free_space"));
            ui.label(format!(
                "{} ({})",
                s.install_location_free_bytes
                    .map_or("?".into(), text::bytes),
                s.install_location.display()
            ));
            ui.end_row();
            ui.label(t(lang, "ui_admin"));
            ui.label(t(lang, if s.elevated { "ui_yes" } else { "ui_no" }));
            ui.end_row();
        });
    }
    widgets::gap(ui);
    egui::CollapsingHeader::new(t(lang, "ui_why_this"))
        .id_salt("system-why")
        .show(ui, |ui| details(session, report, ui));
    widgets::gap(ui);
    if ui
        .add_enabled(
            !session.system().running(),
            egui::Button::new(t(lang, "ui_detect_again")),
        )
        .clicked()
    {
        actions.push(Action::Detect);
    }
    ui.label(
        RichText::new(tf(lang, "ui_detect_took", &[("ms", &report.elapsed_ms)]))
            .weak()
            .small(),
    );
    actions
}

fn gpu_row(ui: &mut Ui, lang: Lang, g: &Gpu) {
    let (tone, status) = match (&g.problem, g.cuda_capable, g.source) {
        (Some(p), _, _) if p.key == cuda_setup_core::detect::GpuProblem::Disabled => {
            (Tone::Bad, t(lang, "ui_gpu_disabled"))
        }
        (Some(_), _, _) => (Tone::Bad, t(lang, "ui_gpu_problem")),
        (None, false, _) => (Tone::Info, t(lang, "ui_gpu_not_cuda")),
        (None, true, GpuSource::Nvml) => (Tone::Ok, t(lang, "ui_gpu_ready")),
        (None, true, GpuSource::Pci) => (Tone::Warn, t(lang, "ui_gpu_no_driver")),
    };
    ui.horizontal(|ui| {
        widgets::badge(ui, tone, &status);
        ui.label(RichText::new(plain_gpu(&g.name, g.architecture.as_deref())).strong());
        if let Some(m) = g.memory_total_bytes {
            ui.label(RichText::new(text::bytes(m)).weak());
        }
    });
}

/// A GPU as a beginner reads it: its name and its generation, "RTX 3060 (Ampere)".
fn plain_gpu(name: &str, architecture: Option<&str>) -> String {
    match architecture {
        Some(a) if !name.contains(a) => format!("{name} ({a})"),
        _ => name.to_string(),
    }
}

/// The driver's badge and the reason for it, from the recommendation: red when there is
/// none or it cannot run what is recommended, amber when it runs it only through
/// minor-version compatibility or an update is advised, green otherwise.
fn driver_state(session: &Session) -> (Tone, String, Option<String>) {
    use cuda_setup_core::recommend::DriverAction;
    let lang = session.lang;
    let driver = session.facts().and_then(|f| f.driver.as_ref());
    let Some(rec) = session.recommendation() else {
        return match driver {
            Some(_) => (Tone::Pending, t(lang, "ui_installed"), None),
            None => (Tone::Bad, t(lang, "ui_missing"), None),
        };
    };
    let headline = rec.driver_headline().map(|m| msg(lang, &m));
    let Some(current) = driver else {
        let why = t(lang, "ui_driver_none_why");
        return (
            Tone::Bad,
            t(lang, "ui_missing"),
            Some(headline.map_or(why.clone(), |h| format!("{why} {h}"))),
        );
    };
    let current = current.to_string();
    if rec.driver.action != DriverAction::None {
        let why = tf(lang, "ui_driver_too_old_why", &[("current", &current)]);
        return (
            Tone::Bad,
            t(lang, "ui_driver_too_old"),
            Some(headline.map_or(why.clone(), |h| format!("{why} {h}"))),
        );
    }
    let minor = rec.reasons.iter().find(|m| m.key == "toolkit_minor_compat");
    if let Some(m) = minor {
        let minimum = m.params.get("minimum").cloned().unwrap_or_default();
        return (
            Tone::Warn,
            t(lang, "ui_driver_compat"),
            Some(tf(
                lang,
                "ui_driver_compat_why",
                &[("current", &current), ("minimum", &minimum)],
            )),
        );
    }
    if let (Some(m), Some(what)) = (&rec.driver.upgrade_minimum, &rec.driver.unlocks) {
        return (
            Tone::Warn,
            t(lang, "ui_driver_update_advised"),
            Some(tf(
                lang,
                "ui_driver_update_advised_why",
                &[("current", &current), ("minimum", m), ("unlocks", what)],
            )),
        );
    }
    (
        Tone::Ok,
        t(lang, "ui_driver_runs_it"),
        Some(tf(
            lang,
            "ui_driver_runs_it_why",
            &[("current", &current), ("what", &recommended(lang, rec))],
        )),
    )
}

/// What is recommended, by name: the toolkit for a developer, else the PyTorch build
/// ("PyTorch 2.13 (CUDA 13.2)", the core's plain label).
fn recommended(
    lang: cuda_setup_core::i18n::Lang,
    rec: &cuda_setup_core::recommend::Recommendation,
) -> String {
    match (&rec.toolkit, &rec.torch) {
        (Some(tk), _) if rec.goal == cuda_setup_core::recommend::Goal::Developer => {
            format!("CUDA {}", crate::ui::text::plain_release(&tk.label))
        }
        (_, Some(p)) => msg(lang, &p.label()),
        (Some(tk), None) => format!("CUDA {}", crate::ui::text::plain_release(&tk.label)),
        (None, None) => String::new(),
    }
}

/// The technical facts behind the plain words: compute capabilities, what the driver
/// supports, the recommender's reasons.
fn details(session: &Session, report: &cuda_setup_core::detect::SystemReport, ui: &mut Ui) {
    let lang = session.lang;
    for g in &report.gpus {
        if let Some(cc) = g.compute_capability {
            ui.label(tf(
                lang,
                "ui_gpu_cc",
                &[("gpu", &g.name), ("sm", &cc.sm()), ("cc", &cc)],
            ));
        }
    }
    for g in &session.opts.overrides.gpus {
        let name = g.name.clone().unwrap_or_default();
        let cc = g.compute_capability;
        ui.label(tf(
            lang,
            "ui_gpu_cc",
            &[("gpu", &name), ("sm", &cc.sm()), ("cc", &cc)],
        ));
    }
    if let Some(c) = session.facts().and_then(|f| f.driver_cuda.as_ref()) {
        ui.label(tf(lang, "ui_driver_cuda", &[("cuda", c)]));
    }
    if let Some(rec) = session.recommendation() {
        for r in &rec.reasons {
            ui.horizontal_wrapped(|ui| {
                ui.label("•");
                ui.label(msg(lang, r));
            });
        }
    }
}

/// The facts given rather than detected, and the sandbox root, in one sentence.
fn what_if(session: &Session) -> String {
    let o = &session.opts.overrides;
    let mut given: Vec<String> = o
        .gpus
        .iter()
        .map(|g| {
            let arch = session.opts.tables.architecture_of(g.compute_capability);
            let name = g
                .name
                .clone()
                .unwrap_or_else(|| t(session.lang, "ui_nvidia_gpu"));
            plain_gpu(&name, arch.map(|a| a.name.as_str()))
        })
        .collect();
    match &o.driver {
        Some(Some(d)) => given.push(tf(session.lang, "ui_driver_version", &[("version", d)])),
        Some(None) => given.push(t(session.lang, "ui_no_driver")),
        None => {}
    }
    if let Some(p) = &o.python {
        given.push(format!(
            "Python {}",
            PythonVersion::label(p, o.free_threaded)
        ));
    }
    let mut s = String::new();
    if !given.is_empty() {
        s = tf(session.lang, "ui_what_if", &[("facts", &given.join(", "))]);
    }
    if let Some(root) = &session.opts.target.root {
        if !s.is_empty() {
            s.push(' ');
        }
        s += &tf(
            session.lang,
            "ui_sandbox_root",
            &[
                ("root", &root.display()),
                // The system's name as people write it, not the flag's word.
                (
                    "os",
                    &match session.opts.target.os {
                        Os::Windows => "Windows",
                        Os::Linux => "Linux",
                    },
                ),
            ],
        );
    }
    s
}
