//! Contrast, measured (issue #32): every page of the wizard drawn in Windows' default
//! light theme and in the dark one, and every glyph on screen measured against the fill
//! it sits on (`ui::contrast`: WCAG relative luminance; AA is 4.5:1, 3:1 for large text)
//! — labels, weak text, badges, callouts, links, the step bar, every button's text and
//! the primary button's white on its fill — and every radio's circle and dot (3:1). The
//! worst pairs are printed.

#![cfg(unix)]

use std::sync::Arc;

use cuda_setup::ui::contrast::{self, Pair, Part};
use cuda_setup::ui::fonts::FontSource;
use cuda_setup::ui::{App, Page};
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::recommend::Goal;
use egui::{Color32, Theme};
use egui_kittest::Harness;
use egui_kittest::kittest::{By, NodeT, Queryable};

use super::gui::{Dropped, Machine, click, settle, wait};
use super::gui_walk::enter;
use crate::support::standin::windows_installer;

/// The wizard in `theme`; `high_contrast`: as `--high-contrast` draws it (#35).
fn harness(app: App, theme: Theme, high_contrast: bool) -> Harness<'static, App> {
    Harness::builder()
        .with_size([1000.0, 1400.0])
        .with_theme(theme)
        .with_context_setup(move |ctx| {
            cuda_setup::ui::setup_context(ctx, FontSource::EmbeddedOnly);
            if high_contrast {
                cuda_setup::ui::high_contrast::install(ctx);
            }
        })
        .build_ui_state(|ui, app: &mut App| app.show(ui), app)
}

/// What failed, page by page.
struct Measure {
    theme: Theme,
    high_contrast: bool,
    failed: Vec<(String, Pair)>,
    pages: Vec<Page>,
    /// The primary button's text was measured on its fill.
    primary_seen: usize,
}

impl Measure {
    fn new(theme: Theme, high_contrast: bool) -> Measure {
        Measure {
            theme,
            high_contrast,
            failed: Vec::new(),
            pages: Vec::new(),
            primary_seen: 0,
        }
    }

    /// Measures the settled frame on screen.
    fn read(&mut self, h: &mut Harness<'_, App>, what: &str) {
        settle(h);
        let page = h.state().page;
        if !self.pages.contains(&page) {
            self.pages.push(page);
        }
        let style = h.ctx.style_of(self.theme);
        let visuals = &style.visuals;
        assert_eq!(
            visuals.dark_mode,
            self.theme == Theme::Dark || self.high_contrast,
            "the harness draws in {:?}",
            self.theme
        );
        let base: Color32 = visuals.panel_fill;
        // WCAG asks nothing of a disabled control (egui paints it faded).
        let disabled: Vec<egui::Rect> = h
            .query_all(By::new())
            .filter(|n| n.accesskit_node().is_disabled())
            .map(|n| n.rect())
            .collect();
        let pairs: Vec<Pair> = contrast::pairs(&h.output().shapes, base)
            .into_iter()
            .filter(|p| !disabled.iter().any(|r| r.contains(p.at)))
            .collect();
        assert!(
            pairs.iter().filter(|p| p.part == Part::Text).count() > 5,
            "{page:?} ({what}): hardly any text measured"
        );
        // The primary button: white glyphs on a fill that is not the panel's (high
        // contrast: black on its cyan).
        let primary = |p: &Pair| match self.high_contrast {
            false => p.fg == Color32::WHITE && p.bg != base,
            true => p.fg == Color32::BLACK && p.bg == cuda_setup::ui::high_contrast::CYAN,
        };
        if pairs.iter().any(|p| primary(p) && p.part == Part::Text) {
            self.primary_seen += 1;
        }
        for p in pairs.into_iter().filter(|p| !p.passes()) {
            self.failed
                .push((format!("{:?} {page:?} ({what})", self.theme), p));
        }
    }

    fn verdict(mut self) {
        for p in [
            Page::Welcome,
            Page::System,
            Page::Choose,
            Page::Prepare,
            Page::Install,
            Page::Cudnn,
            Page::Verify,
            Page::Pytorch,
            Page::Done,
            Page::Repair,
        ] {
            assert!(self.pages.contains(&p), "not measured: {p:?}");
        }
        assert!(
            self.primary_seen >= 8,
            "{:?}: the primary button's white text was measured on {} pages only",
            self.theme,
            self.primary_seen
        );
        self.failed.sort_by(|a, b| a.1.ratio.total_cmp(&b.1.ratio));
        // One line per distinct colour pair, worst first.
        let mut seen = Vec::new();
        let lines: Vec<String> = self
            .failed
            .iter()
            .filter(|(_, p)| {
                let key = (p.fg, p.bg, p.part);
                let new = !seen.contains(&key);
                seen.push(key);
                new
            })
            .map(|(w, p)| format!("{w}: {p}"))
            .collect();
        assert!(
            lines.is_empty(),
            "{} pairs below WCAG AA ({} distinct), worst first:\n{}",
            self.failed.len(),
            lines.len(),
            lines.join("\n")
        );
    }
}

/// Every page of a developer setup (cuDNN refused, then checked and installed), the
/// PyTorch page before and after pip, Done, and Repair with findings, in `theme`.
fn every_page(theme: Theme, high_contrast: bool) {
    let lang = Lang::Zh;
    let mut m_ = Measure::new(theme, high_contrast);
    let m = Machine::new(windows_installer(0, 0));
    let mut o = m.options(lang);
    o.goal = Some(Goal::Developer);
    let mut h = harness(App::new(o), theme, high_contrast);
    h.step();
    m_.read(&mut h, "start");
    enter(&mut h);
    wait(&mut h, "detection", |a| {
        a.session.system().report().is_some()
    });
    m_.read(&mut h, "detected");
    enter(&mut h);
    m_.read(&mut h, "recommendation");
    click(&mut h, "高级选项");
    m_.read(&mut h, "advanced options");
    click(&mut h, "下一步");
    wait(&mut h, "prepare", |a| !a.session.prepare().running());
    m_.read(&mut h, "checks");
    enter(&mut h);
    assert_eq!(h.state().page, Page::Install);
    wait(&mut h, "install", |a| !a.session.install().run().running());
    m_.read(&mut h, "finished run");
    enter(&mut h);
    assert_eq!(h.state().page, Page::Cudnn);
    m_.read(&mut h, "before an archive");
    let not_zip = m.work.path().join("not-a-zip.zip");
    std::fs::write(&not_zip, b"not a zip at all").unwrap();
    h.input_mut().dropped_files.push(Arc::new(Dropped(not_zip)));
    wait(&mut h, "validation", |a| {
        a.session.cudnn().check().is_some()
    });
    m_.read(&mut h, "archive refused");
    h.input_mut()
        .dropped_files
        .push(Arc::new(Dropped(m.cudnn_zip())));
    wait(&mut h, "validation", |a| {
        matches!(a.session.cudnn().check(), Some(Ok(_)))
    });
    m_.read(&mut h, "archive checked");
    enter(&mut h);
    wait(&mut h, "cuDNN install", |a| {
        a.session.cudnn().installed().is_some()
    });
    m_.read(&mut h, "installed");
    click(&mut h, "下一步");
    wait(&mut h, "smoke", |a| a.session.verify().report().is_some());
    m_.read(&mut h, "GPU test");
    click(&mut h, "下一步");
    assert_eq!(h.state().page, Page::Pytorch);
    m_.read(&mut h, "before pip");
    enter(&mut h);
    wait(&mut h, "pip and the doctor", |a| {
        !a.session.torch().busy() && a.session.torch().doctor().is_some()
    });
    m_.read(&mut h, "PyTorch works");
    enter(&mut h);
    assert_eq!(h.state().page, Page::Done);
    m_.read(&mut h, "summary");

    // Repair with findings: a toolkit whose environment was never set.
    let m = Machine::new(windows_installer(0, 0));
    let parent = m
        .root()
        .join("C/Program Files/NVIDIA GPU Computing Toolkit/CUDA");
    let tk = crate::support::cudnn_zip::toolkit(&parent, "11.8.0");
    std::fs::write(tk.join("bin/cudart64_110.dll"), b"MZ stand-in cudart").unwrap();
    let mut h = harness(App::new(m.options(lang)), theme, high_contrast);
    h.step();
    click(&mut h, "下一步");
    assert_eq!(h.state().page, Page::Repair);
    wait(&mut h, "audit", |a| a.session.repair().findings().is_some());
    m_.read(&mut h, "findings");
    m_.verdict();
}

#[test]
fn every_page_reaches_wcag_aa_in_the_light_theme() {
    every_page(Theme::Light, false);
}

#[test]
fn every_page_reaches_wcag_aa_in_the_dark_theme() {
    every_page(Theme::Dark, false);
}

/// High contrast (#35), from a light system theme: it draws both alike.
#[test]
fn every_page_reaches_wcag_aa_in_high_contrast() {
    every_page(Theme::Light, true);
}
