//! The verdict: one big sentence at the end of Verify, PyTorch and Done saying whether the
//! graphics card now works ("ready for PyTorch — RTX 3060, 38× faster than the CPU") or
//! why not, with the one button that fixes it. [`decide`] is a pure function of the
//! results (the smoke test, the doctor, detection's facts); [`banner`] draws its answer.
//! Also the live GPU plot the checks show while they run ([`live_plot`]).

use egui::{CornerRadius, Frame, Margin, RichText, Stroke, Ui};
use egui_plot::{Legend, Line, Plot};

use cuda_setup_core::i18n::Lang;
use cuda_setup_core::message::Message;
use cuda_setup_core::monitor::Sample;
use cuda_setup_core::recommend::{Facts, Goal};
use cuda_setup_core::verify::doctor::{DoctorReport, Severity, extension};
use cuda_setup_core::verify::{SmokeReport, Status};

use super::flow::{Mode, Page};
use super::pages::Primary;
use super::session::{Action, Session};
use super::text::{msg, t, tf};
use super::widgets::{self, Tone};

/// Which results a page judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Verify: the smoke test (the toolkit's own libraries on the GPU).
    Cuda,
    /// The PyTorch page: the doctor's check of torch in the chosen Python.
    Torch,
    /// Done: everything that ran, and what was skipped.
    All,
}

/// What [`decide`] reads.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    pub scope: Scope,
    pub goal: Goal,
    /// The flow had a PyTorch page (a setup, not a repair): on Done, no doctor report
    /// means PyTorch was skipped.
    pub torch_expected: bool,
    pub facts: Option<&'a Facts>,
    pub smoke: Option<&'a SmokeReport>,
    pub doctor: Option<&'a DoctorReport>,
}

impl<'a> Inputs<'a> {
    /// The session's results, as `scope` judges them.
    pub fn of(session: &'a Session, scope: Scope) -> Inputs<'a> {
        Inputs {
            scope,
            goal: session.goal,
            torch_expected: session.mode == Mode::Setup,
            facts: session.facts(),
            smoke: session.verify.report.as_deref(),
            doctor: session.torch.doctor.as_deref(),
        }
    }
}

/// What works: the CUDA toolkit (smoke test) or PyTorch (doctor).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Works {
    Cuda,
    Torch,
}

/// What the speed-up was measured against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measured {
    /// PyTorch's own matrix product on the GPU and on the CPU.
    Torch,
    /// cuBLAS against the smoke test's one-core reference loop.
    Reference,
}

/// Why the card is not usable yet, in words a beginner reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Reason {
    NoGpu,
    NoDriver,
    /// Detection names a driver, but the check could not load it (a new driver before
    /// its restart, or a broken install).
    DriverNotLoaded,
    DriverTooOld,
    NoToolkit,
    NoPython,
    /// PyTorch is not in the chosen Python (or the user went on without installing it).
    TorchMissing,
    TorchBroken,
    CpuTorch,
    TorchNotForGpu,
    CudaUnavailable,
    /// The GPU computed a wrong matrix product.
    WrongResults,
    /// A check failed for its own reason (already a plain-words message).
    Failed(Message),
}

/// The one button that fixes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fix {
    InstallDriver,
    InstallToolkit,
    InstallTorch,
    ReinstallTorch,
    Repair,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Nothing was checked yet: no banner.
    Pending,
    Ready {
        works: Works,
        gpu: String,
        /// Times faster than the CPU, when measured.
        speedup: Option<f64>,
        measured: Measured,
    },
    NotYet {
        reason: Reason,
        fix: Option<Fix>,
    },
}

fn not_yet(reason: Reason, fix: Option<Fix>) -> Verdict {
    Verdict::NotYet { reason, fix }
}

/// The verdict for `i`.
pub fn decide(i: &Inputs) -> Verdict {
    let v = decide_checks(i);
    // "Not installed" would contradict the driver the System page and Done list: a check
    // that could not load a driver detection found says that instead.
    match v {
        Verdict::NotYet {
            reason: Reason::NoDriver,
            fix,
        } if i.facts.is_some_and(|f| f.driver.is_some()) => Verdict::NotYet {
            reason: Reason::DriverNotLoaded,
            fix,
        },
        v => v,
    }
}

fn decide_checks(i: &Inputs) -> Verdict {
    match i.scope {
        Scope::Cuda => i.smoke.map_or(Verdict::Pending, from_smoke),
        Scope::Torch => i.doctor.map_or(Verdict::Pending, from_doctor),
        Scope::All => {
            let smoke = i.smoke.map(from_smoke);
            let torch = i
                .doctor
                .map(from_doctor)
                .or_else(|| i.torch_expected.then(|| skipped_torch(i.facts)));
            // A developer's toolkit comes first: PyTorch brings its own CUDA.
            if i.goal == Goal::Developer
                && let Some(s) = &smoke
                && !matches!(s, Verdict::Ready { .. })
            {
                return s.clone();
            }
            torch
                .or(smoke)
                .or_else(|| i.facts.and_then(blocked_by_facts))
                .unwrap_or(Verdict::Pending)
        }
    }
}

/// No GPU or no driver, as detection saw it.
fn blocked_by_facts(f: &Facts) -> Option<Verdict> {
    if f.gpus.is_empty() && f.unidentified_gpus.is_empty() {
        Some(not_yet(Reason::NoGpu, None))
    } else if f.driver.is_none() {
        Some(not_yet(Reason::NoDriver, Some(Fix::InstallDriver)))
    } else {
        None
    }
}

/// PyTorch was never checked: what stands in its way, else "not installed yet".
fn skipped_torch(facts: Option<&Facts>) -> Verdict {
    facts
        .and_then(blocked_by_facts)
        .unwrap_or_else(|| not_yet(Reason::TorchMissing, Some(Fix::InstallTorch)))
}

fn from_smoke(s: &SmokeReport) -> Verdict {
    if s.status == Status::Passed {
        return Verdict::Ready {
            works: Works::Cuda,
            gpu: s
                .device
                .as_ref()
                .map(|d| d.name.clone())
                .unwrap_or_default(),
            speedup: s.checks.gemm.detail.speedup(),
            measured: Measured::Reference,
        };
    }
    let Some(m) = s.reason.as_ref().or(s.checks.gemm.reason.as_ref()) else {
        return not_yet(Reason::NoGpu, None);
    };
    match m.key {
        "smoke_no_gpu" => not_yet(Reason::NoGpu, None),
        "smoke_no_driver" | "smoke_driver_stub" => {
            not_yet(Reason::NoDriver, Some(Fix::InstallDriver))
        }
        "smoke_driver_failed" => not_yet(Reason::Failed(m.clone()), Some(Fix::InstallDriver)),
        "smoke_toolkit_newer_than_driver" => {
            not_yet(Reason::DriverTooOld, Some(Fix::InstallDriver))
        }
        "smoke_no_toolkit" => not_yet(Reason::NoToolkit, Some(Fix::InstallToolkit)),
        "smoke_gemm_wrong" => not_yet(Reason::WrongResults, Some(Fix::InstallDriver)),
        _ => not_yet(Reason::Failed(m.clone()), Some(Fix::Repair)),
    }
}

fn from_doctor(d: &DoctorReport) -> Verdict {
    let problem = |key: &str| {
        d.findings
            .iter()
            .find(|f| f.severity == Severity::Problem && f.message.key == key)
    };
    if d.python.is_none() {
        return not_yet(Reason::NoPython, None);
    }
    if d.probe_error.is_some() {
        let m = d.findings.iter().find(|f| f.severity == Severity::Problem);
        return not_yet(
            m.map_or(Reason::NoPython, |f| Reason::Failed(f.message.clone())),
            None,
        );
    }
    if d.gpus.is_empty() {
        return not_yet(Reason::NoGpu, None);
    }
    let Some(torch) = &d.torch else {
        return match &d.torch_error {
            Some(e) if e.kind == "import_failed" => {
                not_yet(Reason::TorchBroken, Some(Fix::ReinstallTorch))
            }
            _ => not_yet(Reason::TorchMissing, Some(Fix::InstallTorch)),
        };
    };
    if torch.is_cpu_build() {
        return not_yet(Reason::CpuTorch, Some(Fix::ReinstallTorch));
    }
    if problem("doctor_no_driver").is_some() {
        return not_yet(Reason::NoDriver, Some(Fix::InstallDriver));
    }
    if problem("doctor_torch_cuda_too_new").is_some() {
        return not_yet(Reason::DriverTooOld, Some(Fix::InstallDriver));
    }
    if problem("doctor_cuda_unavailable").is_some() {
        return not_yet(Reason::CudaUnavailable, Some(Fix::InstallDriver));
    }
    if problem("doctor_arch_missing").is_some() {
        return not_yet(Reason::TorchNotForGpu, Some(Fix::ReinstallTorch));
    }
    if problem("doctor_gpu_check_wrong").is_some() {
        return not_yet(Reason::WrongResults, Some(Fix::InstallDriver));
    }
    // Building extensions (toolkit, compiler) is doctor's other question: PyTorch itself
    // works without them.
    if let Some(f) = d.findings.iter().find(|f| {
        f.severity == Severity::Problem && !extension::is_extension_finding(f.message.key)
    }) {
        // The rest (cuDNN missing from the wheel, no kernel image) a reinstall fixes.
        return not_yet(Reason::Failed(f.message.clone()), Some(Fix::ReinstallTorch));
    }
    if d.status == Status::Skipped {
        return not_yet(Reason::NoGpu, None);
    }
    let check = d.check.as_ref().filter(|c| c.ok);
    Verdict::Ready {
        works: Works::Torch,
        gpu: torch
            .device_name
            .clone()
            .or_else(|| d.gpus.first().map(|g| g.name.clone()))
            .unwrap_or_default(),
        speedup: check.and_then(|c| c.speedup),
        measured: Measured::Torch,
    }
}

/// "NVIDIA GeForce RTX 3060" → "RTX 3060": the name on the box.
pub fn short_gpu_name(name: &str) -> String {
    let mut n = name.trim();
    for prefix in ["NVIDIA ", "GeForce "] {
        n = n.strip_prefix(prefix).unwrap_or(n);
    }
    n.to_string()
}

/// 38.2 → "38", 3.46 → "3.5": whole times from ten up.
pub fn times(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// The banner's headline, in `lang`.
pub fn headline(lang: Lang, v: &Verdict) -> Option<String> {
    match v {
        Verdict::Pending => None,
        Verdict::Ready {
            works,
            gpu,
            speedup,
            ..
        } => {
            let gpu = short_gpu_name(gpu);
            Some(match (works, speedup) {
                (Works::Torch, Some(x)) => tf(
                    lang,
                    "ui_verdict_ready_torch_speed",
                    &[("gpu", &gpu), ("times", &times(*x))],
                ),
                (Works::Torch, None) => tf(lang, "ui_verdict_ready_torch", &[("gpu", &gpu)]),
                (Works::Cuda, Some(x)) => tf(
                    lang,
                    "ui_verdict_ready_cuda_speed",
                    &[("gpu", &gpu), ("times", &times(*x))],
                ),
                (Works::Cuda, None) => tf(lang, "ui_verdict_ready_cuda", &[("gpu", &gpu)]),
            })
        }
        Verdict::NotYet { reason, .. } => Some(tf(
            lang,
            "ui_verdict_not_yet",
            &[("reason", &reason_text(lang, reason))],
        )),
    }
}

/// Why, in one plain sentence.
pub fn reason_text(lang: Lang, reason: &Reason) -> String {
    match reason {
        Reason::NoGpu => t(lang, "ui_verdict_no_gpu"),
        Reason::NoDriver => t(lang, "ui_verdict_no_driver"),
        Reason::DriverNotLoaded => t(lang, "ui_verdict_driver_not_loaded"),
        Reason::DriverTooOld => t(lang, "ui_verdict_driver_too_old"),
        Reason::NoToolkit => t(lang, "ui_verdict_no_toolkit"),
        Reason::NoPython => t(lang, "ui_verdict_no_python"),
        Reason::TorchMissing => t(lang, "ui_verdict_torch_missing"),
        Reason::TorchBroken => t(lang, "ui_verdict_torch_broken"),
        Reason::CpuTorch => t(lang, "ui_verdict_cpu_torch"),
        Reason::TorchNotForGpu => t(lang, "ui_verdict_torch_not_for_gpu"),
        Reason::CudaUnavailable => t(lang, "ui_verdict_cuda_unavailable"),
        Reason::WrongResults => t(lang, "ui_verdict_wrong_results"),
        Reason::Failed(m) => msg(lang, m),
    }
}

/// The fix's button label.
pub fn fix_label(fix: Fix) -> &'static str {
    match fix {
        Fix::InstallDriver => "ui_fix_install_driver",
        Fix::InstallToolkit => "ui_fix_install_toolkit",
        Fix::InstallTorch => "ui_install_pytorch",
        Fix::ReinstallTorch => "ui_fix_reinstall_torch",
        Fix::Repair => "ui_fix_repair",
    }
}

/// What the fix's button does from `here`: the driver and the toolkit are planned on
/// Choose; PyTorch is installed on its page (there, at once); repair audits and fixes.
pub fn fix_actions(session: &Session, here: Page, fix: Fix) -> Vec<Action> {
    match fix {
        Fix::InstallDriver | Fix::InstallToolkit => {
            let mut a = vec![Action::SetMode(Mode::Setup)];
            if fix == Fix::InstallToolkit {
                a.push(Action::ChooseGoal(Goal::Developer));
            }
            a.push(Action::Go(Page::Choose));
            a
        }
        Fix::InstallTorch | Fix::ReinstallTorch if here == Page::Pytorch => session
            .recommendation()
            .and_then(|r| r.torch.clone())
            .map(|pick| vec![Action::RunPip(Box::new(pick))])
            .unwrap_or_default(),
        Fix::InstallTorch | Fix::ReinstallTorch => {
            vec![Action::SetMode(Mode::Setup), Action::Go(Page::Pytorch)]
        }
        Fix::Repair => vec![Action::SetMode(Mode::Repair), Action::Go(Page::Repair)],
    }
}

/// The verdict's fix as the page's primary button (drawn by the frame, pressed by
/// Enter): None when the card works, nothing was checked yet, or nothing we can do fixes
/// it.
pub fn fix_primary(session: &Session, here: Page, scope: Scope) -> Option<Primary> {
    match decide(&Inputs::of(session, scope)) {
        Verdict::NotYet { fix: Some(fix), .. } => {
            let actions = fix_actions(session, here, fix);
            (!actions.is_empty()).then(|| Primary::many(t(session.lang, fix_label(fix)), actions))
        }
        _ => None,
    }
}

/// The verdict of `scope` as one big framed sentence. Its fix is the page's primary
/// button ([`fix_primary`], at the bottom): the banner names it, so there is one button
/// to press, not two.
pub fn banner(session: &Session, ui: &mut Ui, scope: Scope) {
    let lang = session.lang;
    let v = decide(&Inputs::of(session, scope));
    let Some(head) = headline(lang, &v) else {
        return;
    };
    let tone = match v {
        Verdict::Ready { .. } => Tone::Ok,
        _ => Tone::Bad,
    };
    let c = tone.color(ui);
    widgets::gap(ui);
    Frame::new()
        .stroke(Stroke::new(2.0, c))
        .fill(c.gamma_multiply(0.12))
        .corner_radius(CornerRadius::same(10))
        .inner_margin(Margin::same(14))
        .show(ui, |ui| {
            ui.set_width(ui.available_width());
            // The mark stands apart from the words (it is no word to translate).
            let mark = if tone == Tone::Ok { "✓" } else { "×" };
            ui.horizontal(|ui| {
                ui.label(RichText::new(mark).size(30.0).strong().color(c));
                ui.add(
                    egui::Label::new(
                        RichText::new(head)
                            .size(19.0)
                            .strong()
                            .color(ui.visuals().strong_text_color()),
                    )
                    .wrap(),
                );
            });
            match &v {
                Verdict::Ready { measured, .. } => {
                    let how = match measured {
                        Measured::Torch => "ui_verdict_measured_torch",
                        Measured::Reference => "ui_verdict_measured_reference",
                    };
                    ui.label(RichText::new(t(lang, how)).weak());
                    ui.label(t(lang, "ui_verdict_watch_gpu"));
                }
                Verdict::NotYet { fix: Some(fix), .. } => {
                    ui.add_space(4.0);
                    ui.label(tf(
                        lang,
                        "ui_verdict_press_fix",
                        &[("button", &t(lang, fix_label(*fix)))],
                    ));
                }
                _ => {}
            }
        });
}

/// GPU utilisation and memory (percent) over the seconds of a check, so the user sees
/// the card go to work; without NVML, a plain sentence instead (the reason as details).
pub fn live_plot(ui: &mut Ui, lang: Lang, id: &str, samples: &[Sample], unavailable: Option<&str>) {
    widgets::section(ui, &t(lang, "ui_gpu_live"));
    if let Some(why) = unavailable {
        widgets::note(ui, Tone::Info, &t(lang, "ui_live_none"));
        egui::CollapsingHeader::new(t(lang, "ui_verdict_details"))
            .id_salt((id, "why"))
            .show(ui, |ui| {
                ui.label(
                    RichText::new(tf(lang, "ui_gpu_live_unavailable", &[("why", &why)])).weak(),
                );
            });
        return;
    }
    if let Some(last) = samples.last() {
        ui.label(tf(
            lang,
            "ui_gpu_live_now",
            &[
                ("util", &format!("{:.0}", last.util)),
                ("used", &super::text::bytes(last.mem_used)),
                ("total", &super::text::bytes(last.mem_total)),
            ],
        ));
    } else {
        ui.label(RichText::new(t(lang, "ui_live_waiting")).weak());
    }
    let util: Vec<[f64; 2]> = samples.iter().map(|x| [x.t, x.util]).collect();
    let mem: Vec<[f64; 2]> = samples
        .iter()
        .map(|x| [x.t, 100.0 * x.mem_used as f64 / x.mem_total.max(1) as f64])
        .collect();
    let util_name = t(lang, "ui_plot_util");
    let mem_name = t(lang, "ui_plot_memory");
    Plot::new(("gpu-live", id))
        .height(160.0)
        .include_y(0.0)
        .include_y(100.0)
        .allow_zoom(false)
        .allow_drag(false)
        .allow_scroll(false)
        .legend(Legend::default())
        .x_axis_label(t(lang, "ui_plot_seconds"))
        .show(ui, |p| {
            p.line(Line::new(util_name, util));
            p.line(Line::new(mem_name, mem));
        });
}

#[cfg(test)]
mod tests;
