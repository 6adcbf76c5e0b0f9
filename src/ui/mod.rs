//! The wizard: the double-click GUI over the same core the CLI uses.
//!
//! The UI is a function of state ([`app::App`]). Widgets change that state or hand a
//! [`worker::Command`] to the worker, which runs the core (detection, planning, the
//! executor, cuDNN, the smoke test, the doctor) on threads of its own and answers with
//! [`worker::Event`]s, asking for a repaint each time; the UI thread never waits. The pages
//! are one enum ([`app::Page`]), one module each ([`pages`]); the first page's mode comes
//! from what is on disk ([`disk`]). Every string is an i18n key (English and Chinese),
//! with a CJK font loaded at run time ([`fonts`]).

pub mod app;
pub mod disk;
pub mod elevate;
pub mod fonts;
mod launch;
pub mod pages;
pub mod progress;
pub mod report;
pub mod text;
pub mod widgets;
pub mod worker;

pub use app::{App, Mode, Options, Overrides, Page};
pub use launch::{Args, launch, options};

/// Fonts and style, installed before the first frame (eframe's creation context, or a
/// test harness's context setup), so the first frame already has its Chinese glyphs.
pub fn setup_context(ctx: &egui::Context, fonts: fonts::FontSource) -> Option<std::path::PathBuf> {
    widgets::style(ctx);
    fonts::install(ctx, fonts)
}
