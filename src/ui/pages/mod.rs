//! One module per page. A page draws from the [`Session`] and its own widget state, and
//! returns the [`Action`]s the user asked for; it never changes the session or another
//! page. Pages do not import each other: what they share is in the session, the
//! widgets or `progress`.
//!
//! A new page: a variant of [`Page`] (and its place in `flow`), its module with a type
//! implementing [`Screen`], and a field and two match arms in [`Pages`] below.

use egui::Ui;

use crate::ui::flow::Page;
use crate::ui::session::{Action, Session};

pub mod choose;
pub mod cudnn;
pub mod done;
pub mod install;
pub mod prepare;
pub mod pytorch;
pub mod repair;
pub mod system;
pub mod verify;
pub mod welcome;

/// A page's one primary action, when it is not Next: its label (already in the user's
/// language), what it does, and whether it can be done now. The frame draws it with
/// [`crate::ui::widgets::primary`] at the bottom right, Enter triggers it, and Next is
/// then drawn as a secondary button beside it. A page draws no primary of its own.
pub struct Primary {
    pub label: String,
    pub actions: Vec<Action>,
    pub enabled: bool,
}

impl Primary {
    pub fn new(label: String, action: Action) -> Primary {
        Primary::many(label, vec![action])
    }

    /// A primary that does several things in order (a verdict's fix: set the mode, go).
    pub fn many(label: String, actions: Vec<Action>) -> Primary {
        Primary {
            label,
            actions,
            enabled: true,
        }
    }

    /// Drawn, but greyed out unless `enabled`.
    pub fn enabled(self, enabled: bool) -> Primary {
        Primary { enabled, ..self }
    }
}

/// What the app asks of a page.
pub trait Screen {
    /// Draws the page from the session; returns what the user asked for.
    fn show(&mut self, s: &Session, ui: &mut Ui) -> Vec<Action>;

    /// The work the page starts when the user arrives on it.
    fn enter(&self, _s: &Session) -> Vec<Action> {
        Vec::new()
    }

    /// Whether Next is open.
    fn can_next(&self, _s: &Session) -> bool {
        true
    }

    /// Why Next is greyed out, when it says something useful (a catalogue key).
    fn why_not_next(&self, _s: &Session) -> Option<&'static str> {
        None
    }

    /// The Next button's label (a catalogue key).
    fn next_label(&self, _s: &Session) -> &'static str {
        "ui_next"
    }

    /// The page's primary action when it is something other than Next (e.g. "Install
    /// PyTorch" before "Next", so Next never skips an install the user has not run). None:
    /// Next (or Close on the last page) is the primary.
    fn primary(&self, _s: &Session) -> Option<Primary> {
        None
    }

    /// A job runs that this page shows (leaving would hide its progress).
    fn busy(&self, _s: &Session) -> bool {
        false
    }

    /// The autopilot arrived here: start what the page shows, as a user would, so a
    /// screenshot has something to show.
    fn show_work(&self, _s: &Session) -> Vec<Action> {
        Vec::new()
    }

    /// The autopilot passes through: what a user would click here before Next (None:
    /// just Next, once it is open).
    fn drive(&self, _s: &Session) -> Option<Vec<Action>> {
        None
    }
}

/// Every page's own state.
#[derive(Default)]
pub struct Pages {
    pub welcome: welcome::State,
    pub repair: repair::State,
    pub system: system::State,
    pub choose: choose::State,
    pub prepare: prepare::State,
    pub install: install::State,
    pub cudnn: cudnn::State,
    pub verify: verify::State,
    pub torch: pytorch::State,
    pub done: done::State,
}

impl Pages {
    pub fn get(&self, page: Page) -> &dyn Screen {
        match page {
            Page::Welcome => &self.welcome,
            Page::Repair => &self.repair,
            Page::System => &self.system,
            Page::Choose => &self.choose,
            Page::Prepare => &self.prepare,
            Page::Install => &self.install,
            Page::Cudnn => &self.cudnn,
            Page::Verify => &self.verify,
            Page::Pytorch => &self.torch,
            Page::Done => &self.done,
        }
    }

    pub fn get_mut(&mut self, page: Page) -> &mut dyn Screen {
        match page {
            Page::Welcome => &mut self.welcome,
            Page::Repair => &mut self.repair,
            Page::System => &mut self.system,
            Page::Choose => &mut self.choose,
            Page::Prepare => &mut self.prepare,
            Page::Install => &mut self.install,
            Page::Cudnn => &mut self.cudnn,
            Page::Verify => &mut self.verify,
            Page::Pytorch => &mut self.torch,
            Page::Done => &mut self.done,
        }
    }
}
