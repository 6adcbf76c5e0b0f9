//! The verdict, drawn: the core decides it (`cuda_setup_core::verify::verdict`: usable or
//! not for the user's goal, the cause, the fix) and renders its sentence; here it becomes
//! one big framed banner at the end of Verify, PyTorch and Done, its fix becomes the
//! page's primary button ([`fix_primary`]), and a cause nothing here fixes says what the
//! user can do. Also the live GPU plot the checks show while they run ([`live_plot`]).

use egui::{CornerRadius, Frame, Margin, RichText, Stroke, Ui};
use egui_plot::{Legend, Line, Plot};

use cuda_setup_core::i18n::Lang;
use cuda_setup_core::monitor::Sample;
use cuda_setup_core::recommend::Goal;
use cuda_setup_core::verify::verdict::{self as core, Inputs, Measured, Surface};
pub use cuda_setup_core::verify::verdict::{Fix, Layer, Scope, Verdict};

use super::flow::{Mode, Page};
use super::pages::Primary;
use super::session::{Action, Session};
use super::text::{t, tf};
use super::widgets::{self, Tone};

/// The session's results, as `scope` judges them.
pub fn inputs(session: &Session, scope: Scope) -> Inputs<'_> {
    Inputs {
        scope,
        goal: session.goal,
        torch_expected: session.mode == Mode::Setup,
        facts: session.facts(),
        smoke: session.verify().report(),
        doctor: session.torch().doctor(),
        // A driver this session's install put in waits for the restart.
        run: cuda_setup_core::repair::run_facts(session.install().run().report()),
    }
}

/// The core's verdict on the session's results.
pub fn decide(session: &Session, scope: Scope) -> Verdict {
    core::decide(&inputs(session, scope))
}

/// 38.2 → "38", 3.46 → "3.5" (the core's, so the rows and the banner agree).
pub fn times(x: f64) -> String {
    core::times(x)
}

/// What the fix's button does from `here`: the driver and the toolkit are planned on
/// Choose; PyTorch is installed on its page (there, at once); repair audits and fixes.
/// A fix no button does has no actions.
pub fn fix_actions(session: &Session, here: Page, fix: &Fix) -> Vec<Action> {
    match fix {
        Fix::InstallDriver | Fix::InstallToolkit => {
            let mut a = vec![Action::SetMode(Mode::Setup)];
            if *fix == Fix::InstallToolkit {
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
        Fix::Restart | Fix::Manual { .. } | Fix::None => Vec::new(),
    }
}

/// The verdict's fix as the page's primary button (drawn by the frame, pressed by
/// Enter): None when the card works, nothing was checked yet, or no button fixes it.
pub fn fix_primary(session: &Session, here: Page, scope: Scope) -> Option<Primary> {
    let v = decide(session, scope);
    let fix = &v.problem()?.fix;
    let label = fix.button_key()?;
    let actions = fix_actions(session, here, fix);
    (!actions.is_empty()).then(|| Primary::many(t(session.lang, label), actions))
}

/// The verdict of `scope` as one big framed sentence: the core's words, with the next
/// step naming the page's primary button only when `here` shows it ([`fix_primary`]);
/// amber lines for a developer's check that failed beside a working goal; the check's
/// technical words (paths, files) folded under Details.
pub fn banner(session: &Session, ui: &mut Ui, here: Page, scope: Scope) {
    let lang = session.lang;
    let v = decide(session, scope);
    let button = fix_primary(session, here, scope).is_some();
    let Some(words) = core::render(&v, lang, Surface::Wizard { button }) else {
        return;
    };
    let tone = match v {
        Verdict::Ready { .. } => Tone::Ok,
        _ => Tone::Bad,
    };
    let c = tone.color(ui);
    widgets::gap(ui);
    // A status for a screen reader (#35): named by the headline, read out when it
    // appears or changes (a polite live region), the rest of the banner inside it.
    let status = egui::UiBuilder::new()
        .id_salt(("verdict-status", here.id()))
        .accessibility_role(egui::accesskit::Role::Status)
        .accessibility_label(words.headline.clone());
    ui.scope_builder(status, |ui| {
        let id = ui.unique_id();
        ui.ctx()
            .accesskit_node_builder(id, |n| n.set_live(egui::accesskit::Live::Polite));
        banner_frame(ui, &v, &words, c, tone, lang, here);
    });
    for line in &words.secondary {
        widgets::note(ui, Tone::Warn, line);
    }
}

/// The banner's frame: the mark, the headline, how it was measured, the next step, the
/// details.
fn banner_frame(
    ui: &mut Ui,
    v: &Verdict,
    words: &core::Sentence,
    c: egui::Color32,
    tone: Tone,
    lang: Lang,
    here: Page,
) {
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
                        RichText::new(&words.headline)
                            .size(19.0)
                            .strong()
                            .color(ui.visuals().strong_text_color()),
                    )
                    .wrap(),
                );
            });
            if let Verdict::Ready { measured, .. } = v {
                let how = match measured {
                    Measured::Torch => "ui_verdict_measured_torch",
                    Measured::Reference => "ui_verdict_measured_reference",
                };
                ui.label(RichText::new(t(lang, how)).weak());
                ui.label(t(lang, "ui_verdict_watch_gpu"));
            }
            if let Some(next) = &words.next {
                ui.add_space(4.0);
                ui.label(next);
            }
            if let Some(raw) = v.problem().and_then(core::details) {
                crate::ui::progress::details(ui, lang, ("verdict", format!("{here:?}")), &raw);
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
