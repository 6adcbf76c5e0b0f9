//! The wizard: the double-click GUI over the same core the CLI uses.
//!
//! The UI is a function of one state, the [`session::Session`] (facts, recommendation,
//! plan, results, language). Pages draw from it and return [`session::Action`]s, which
//! [`app::App::apply`] applies in one place; the work they start goes to the worker as a
//! [`worker::Command`], run on threads of its own, and comes back as [`worker::Event`]s
//! with a repaint each time; the UI thread never waits. The pages are one enum
//! ([`flow::Page`]), one module each ([`pages`]); the first page's mode comes from what
//! is installed (`repair::existing`, the core's). Every string is an i18n key (English and Chinese),
//! with a CJK font loaded at run time ([`fonts`]). Nothing slow runs before the first
//! frame: detection, the background refresh and the OS font wait until it is on screen.

pub mod app;
pub mod contrast;
pub mod elevate;
pub mod fixes;
pub mod flow;
pub mod fonts;
pub mod guard_view;
pub mod high_contrast;
pub mod job;
pub mod keyboard;
mod launch;
pub mod options;
pub mod pages;
pub mod progress;
pub mod report;
pub mod session;
pub mod text;
pub mod uninstall_view;
pub mod verdict;
pub mod widgets;
pub mod worker;

pub use app::{App, Mode, Options, Overrides, Page};
pub use launch::{Args, launch, options};

/// Fonts and style, installed before the first frame (eframe's creation context, or a
/// test harness's context setup), so the first frame already has its Chinese glyphs: the
/// embedded subset, which reads nothing from disk. The OS font (`fonts`) is not read here:
/// [`App`] adds it on a thread once the first frame is on screen.
pub fn setup_context(ctx: &egui::Context, _fonts: fonts::FontSource) {
    widgets::style(ctx);
    fonts::install(ctx);
}
