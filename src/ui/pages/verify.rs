//! Verify: the smoke test's results (GFLOP/s, copy bandwidth, cuDNN, nvcc, the build
//! check) and a live plot of GPU utilisation and memory from NVML while it runs; then
//! the verdict.

use egui::{RichText, Ui};

use super::{Primary, Screen};
use crate::ui::flow::Page;
use crate::ui::session::{Action, Session};
use crate::ui::text::{msg, t, tf};
use crate::ui::verdict::{self, Scope};
use crate::ui::widgets::{self, Tone, status_badge};
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::verify::Status;

#[derive(Default)]
pub struct State;

impl Screen for State {
    fn show(&mut self, s: &Session, ui: &mut Ui) -> Vec<Action> {
        show(s, ui)
    }

    fn enter(&self, s: &Session) -> Vec<Action> {
        if s.verify().report().is_none() && !s.verify().running() {
            vec![Action::Verify]
        } else {
            Vec::new()
        }
    }

    fn can_next(&self, s: &Session) -> bool {
        s.verify().report().is_some()
    }

    fn why_not_next(&self, _s: &Session) -> Option<&'static str> {
        Some("ui_wait_verify")
    }

    /// Not usable yet: the verdict's fix (install the driver, repair …); else Next.
    fn primary(&self, s: &Session) -> Option<Primary> {
        verdict::fix_primary(s, Page::Verify, Scope::Cuda)
    }
}

fn show(session: &Session, ui: &mut Ui) -> Vec<Action> {
    let lang = session.lang;
    let mut actions = Vec::new();
    ui.label(t(lang, "ui_verify_intro"));
    if session.verify().running() {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(t(lang, "ui_verifying"));
        });
    }
    verdict::live_plot(
        ui,
        lang,
        "verify",
        session.verify().samples(),
        session.verify().monitor_error(),
    );
    let Some(r) = session.verify().report() else {
        return actions;
    };
    widgets::section(ui, &t(lang, "ui_results"));
    ui.horizontal(|ui| {
        status_badge(ui, lang, r.status);
        if let Some(d) = &r.device {
            // The card's generation in front ("RTX 3060 (Ampere)"); sm_86 is jargon.
            let name = match session.opts.tables.architecture_of(d.compute_capability) {
                Some(a) if !d.name.contains(&a.name) => format!("{} ({})", d.name, a.name),
                _ => d.name.clone(),
            };
            ui.label(RichText::new(name).strong());
        }
        if let Some(tk) = &r.toolkit {
            ui.label(
                RichText::new(format!(
                    "CUDA {}",
                    tk.version.as_ref().map_or("?".into(), ToString::to_string)
                ))
                .weak(),
            );
        }
    });
    if let Some(reason) = &r.reason {
        widgets::note(
            ui,
            if r.status == Status::Failed {
                Tone::Bad
            } else {
                Tone::Warn
            },
            &msg(lang, reason),
        );
        raw_details(ui, lang, "reason", reason);
    }
    let c = &r.checks;
    // The reason above is not repeated under each check it stopped.
    let shown = r.reason.clone();
    let check = |ui: &mut Ui,
                 title,
                 status,
                 reason: &Option<cuda_setup_core::message::Message>,
                 detail: &mut dyn FnMut(&mut Ui)| {
        check(
            ui,
            lang,
            title,
            status,
            reason.as_ref().filter(|m| Some(*m) != shown.as_ref()),
            detail,
        )
    };
    check(
        ui,
        "ui_check_gemm",
        c.gemm.status,
        &c.gemm.reason,
        &mut |ui| {
            for g in &c.gemm.detail.results {
                ui.label(tf(
                    lang,
                    "ui_gemm_result",
                    &[
                        ("precision", &g.precision.name().to_uppercase()),
                        ("size", &g.size),
                        ("gflops", &format!("{:.0}", g.gflops)),
                        ("error", &format!("{:.1e}", g.accuracy.max_error)),
                    ],
                ));
            }
        },
    );
    check(
        ui,
        "ui_check_bandwidth",
        c.bandwidth.status,
        &c.bandwidth.reason,
        &mut |ui| {
            for b in &c.bandwidth.detail.results {
                let dir = if b.direction == "host_to_device" {
                    "ui_h2d"
                } else {
                    "ui_d2h"
                };
                let memory = if b.memory == "pinned" {
                    "ui_mem_pinned"
                } else {
                    "ui_mem_pageable"
                };
                ui.label(format!(
                    "{} · {} · {:.1} GB/s",
                    t(lang, memory),
                    t(lang, dir),
                    b.gb_per_s
                ));
            }
        },
    );
    check(
        ui,
        "ui_check_cudnn",
        c.cudnn.status,
        &c.cudnn.reason,
        &mut |ui| {
            if let Some(v) = &c.cudnn.detail.version {
                ui.label(format!("cuDNN {v}"));
            }
            if let Some(conv) = &c.cudnn.detail.convolution {
                ui.label(tf(
                    lang,
                    "ui_conv_result",
                    &[("error", &format!("{:.1e}", conv.accuracy.max_error))],
                ));
            }
        },
    );
    check(
        ui,
        "ui_check_nvcc",
        c.nvcc.status,
        &c.nvcc.reason,
        &mut |ui| {
            if let Some(v) = &c.nvcc.detail.version {
                ui.label(format!("nvcc {v}"));
            }
            if c.nvcc.detail.compiled {
                ui.label(t(lang, "ui_nvcc_compiled"));
            }
        },
    );
    check(
        ui,
        "ui_check_build",
        c.build.status,
        &c.build.reason,
        &mut |ui| {
            if c.build.detail.linked {
                ui.label(tf(
                    lang,
                    "ui_build_linked",
                    &[("libraries", &c.build.detail.libraries.join(", "))],
                ));
            }
        },
    );
    widgets::gap(ui);
    if ui
        .add_enabled(
            !session.verify().running(),
            egui::Button::new(t(lang, "ui_run_again")),
        )
        .clicked()
    {
        actions.push(Action::Verify);
    }
    verdict::banner(session, ui, Page::Verify, Scope::Cuda);
    actions
}

/// What a check's library said, word for word (English, for searching and for support):
/// folded under "Details", never in front.
fn raw_details(ui: &mut Ui, lang: Lang, id: &str, m: &cuda_setup_core::message::Message) {
    if let Some(raw) = cuda_setup_core::i18n::details(m, lang) {
        crate::ui::progress::details(ui, lang, ("verify", id, m.key), &raw);
    }
}

fn check(
    ui: &mut Ui,
    lang: Lang,
    title: &'static str,
    status: Status,
    reason: Option<&cuda_setup_core::message::Message>,
    detail: &mut dyn FnMut(&mut Ui),
) {
    ui.add_space(4.0);
    ui.horizontal(|ui| {
        status_badge(ui, lang, status);
        ui.label(RichText::new(t(lang, title)).strong());
    });
    ui.indent(title, |ui| {
        detail(ui);
        if let Some(m) = reason {
            ui.label(RichText::new(msg(lang, m)).weak());
            raw_details(ui, lang, title, m);
        }
    });
}
