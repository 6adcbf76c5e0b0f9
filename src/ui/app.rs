//! The wizard's frame function. The UI is a function of the [`Session`]: each frame
//! applies what the worker reported, then draws the current page; a page returns
//! [`Action`]s, which [`App::apply`] applies in one place (navigation here, the rest in
//! the session) and whose work it hands to the worker. Nothing on the UI thread waits.

use std::path::PathBuf;
use std::sync::mpsc::Receiver;

use egui::{RichText, Ui};

use cuda_setup_core::i18n::Lang;

use super::pages::Pages;
use super::session::{Action, Session};
use super::text::t;
use super::widgets;
use super::worker::{Command, Env, Event, Worker};

pub use super::flow::{Mode, Page, flow};
pub use super::options::{Options, Overrides};

pub struct App {
    /// What the pages read: facts, recommendation, plan, results, language.
    pub session: Session,
    pub page: Page,
    /// Each page's own widget state.
    pub pages: Pages,
    worker: Worker,
    events: Receiver<Event>,
    /// The language the window title was last set in.
    titled: Option<Lang>,
    /// The autopilot showed its target page's work (screenshots).
    arrived: bool,
    /// Frames drawn so far (counted up to 2: the start-up work waits for the second).
    frames: u8,
    /// Work asked for before the first frame was on screen (detection, the refresh):
    /// on two cores its threads and child processes (Python probes, pyenv shims) would
    /// compete with the first frame, so it starts as the second frame begins. None once
    /// released.
    held: Option<Vec<Command>>,
    /// The OS font's loader, started with the held work (tests join it).
    pub fonts_loader: Option<std::thread::JoinHandle<Option<PathBuf>>>,
    /// Esc and the focus ring (#35).
    keys: super::keyboard::Keys,
    /// The footer's height last frame: its space is kept first, its buttons drawn after
    /// the page, so Tab walks the page top to bottom and reaches Back and Next last.
    footer_height: f32,
}

impl App {
    /// The wizard for `opts`. After the restart a driver asked for, it opens where it
    /// stopped (derived from disk: the plan waiting in the journal).
    pub fn new(opts: Options) -> App {
        let awaiting = cuda_setup_core::run::awaiting_restart(&opts.target);
        App::with_awaiting(opts, awaiting)
    }

    /// The wizard, opening on the Install page to continue `awaiting` (the plan of a run
    /// that stopped for a restart) when there is one.
    pub fn with_awaiting(opts: Options, awaiting: Option<cuda_setup_core::plan::Plan>) -> App {
        let existing = cuda_setup_core::repair::existing(&opts.target);
        let (worker, events) = Worker::new(Env {
            tables: opts.tables.clone(),
            host: opts.host.clone(),
            target: opts.target.clone(),
            smoke: opts.smoke.clone(),
            deadlines: opts.deadlines,
            file_dialogs: opts.file_dialogs,
        });
        // Chosen as the CLI chooses it: the flag, the locale variables, the system locale.
        let lang = cuda_setup_core::locale::system_lang(opts.lang);
        let refresh = opts.refresh.clone();
        let mut app = App {
            session: Session::new(opts, lang, existing),
            page: Page::Welcome,
            pages: Pages::default(),
            worker,
            events,
            titled: None,
            arrived: false,
            frames: 0,
            held: Some(Vec::new()),
            fonts_loader: None,
            keys: Default::default(),
            footer_height: 48.0,
        };
        if let Some(plan) = awaiting {
            app.session.resume_after_restart(plan);
            app.page = Page::Install;
        }
        // Detection starts as soon as the first frame is on screen, so the System page is
        // ready when the user is (the session shows it running from the first frame on).
        app.apply(Action::Detect);
        if let Some(r) = refresh {
            let cmd = app.session.refresh(r);
            app.submit(cmd);
        }
        app
    }

    /// Hands `cmd` to the worker (held, in order, until the first frame is on screen).
    fn submit(&mut self, cmd: Command) {
        match &mut self.held {
            Some(held) => held.push(cmd),
            None => self.worker.submit(cmd),
        }
    }

    /// Whether the work asked for so far has been handed to the worker.
    pub fn started(&self) -> bool {
        self.held.is_none()
    }

    /// The first frame is on screen: what waited for it starts (the held work, in the
    /// order it was asked for, and the OS font's loader).
    fn release(&mut self, ctx: &egui::Context) {
        for cmd in self.held.take().unwrap_or_default() {
            self.worker.submit(cmd);
        }
        self.fonts_loader = super::fonts::add_system_font_later(ctx, self.session.opts.fonts);
    }

    /// The one place actions are applied: navigation here, everything else in the
    /// session, whose answer (the work to start) goes to the worker.
    pub fn apply(&mut self, action: Action) {
        match action {
            Action::Next => self.next(),
            Action::Back => self.back(),
            Action::Go(p) => self.go(p),
            a => {
                for cmd in self.session.apply(a) {
                    self.submit(cmd);
                }
            }
        }
    }

    fn on_event(&mut self, e: Event) {
        let new_tables = matches!(e, Event::Refreshed(Ok(_)));
        for cmd in self.session.on_event(e) {
            self.submit(cmd);
        }
        if new_tables {
            // Later commands use them; running ones keep the tables they started with.
            self.worker.set_tables(self.session.opts.tables.clone());
        }
    }

    /// One frame: apply what arrived, then draw, then apply what the user asked for.
    pub fn show(&mut self, ui: &mut Ui) {
        self.worker.set_context(ui.ctx());
        // eframe paints a frame after this function returns: when the second begins, the
        // first is on screen.
        match self.frames {
            0 => ui.ctx().request_repaint(),
            1 => self.release(ui.ctx()),
            _ => {}
        }
        self.frames = self.frames.saturating_add(1).min(2);
        widgets::reset_primaries(ui.ctx());
        while let Ok(e) = self.events.try_recv() {
            self.on_event(e);
        }
        let lang = self.session.lang;
        if self.titled != Some(lang) {
            self.titled = Some(lang);
            ui.ctx()
                .send_viewport_cmd(egui::ViewportCommand::Title(t(lang, "ui_app_title")));
        }
        match self.session.opts.autopilot {
            Some(p) if p != self.page => self.autopilot(),
            Some(_) if !self.arrived => {
                self.arrived = true;
                for a in self.pages.get(self.page).show_work(&self.session) {
                    self.apply(a);
                }
            }
            _ => {}
        }
        // Enter is the primary button, unless a widget has the keyboard (a text field, or
        // a focused button that Enter presses itself).
        let enter = ui.input(|i| i.key_pressed(egui::Key::Enter))
            && ui.ctx().memory(|m| m.focused().is_none());
        let mut actions = Vec::new();
        // Esc is Back, where the Back button is open (#35).
        if self.keys.begin(ui.ctx()) && self.back_open() {
            actions.push(Action::Back);
        }
        egui::Panel::top("header").show(ui, |ui| actions.extend(self.header(ui)));
        let footer = egui::Panel::bottom("footer")
            .show(ui, |ui| {
                let w = ui.available_width();
                ui.allocate_space(egui::vec2(w, self.footer_height)).1
            })
            .inner;
        let (session, pages, page) = (&self.session, &mut self.pages, self.page);
        egui::CentralPanel::default().show(ui, |ui| {
            egui::ScrollArea::vertical()
                .auto_shrink([false, false])
                .show(ui, |ui| {
                    ui.add_space(6.0);
                    ui.heading(t(lang, page.title_key()));
                    ui.add_space(4.0);
                    if let Some(m) = &session.crash() {
                        widgets::callout(ui, widgets::Tone::Bad, |ui| {
                            ui.label(t(lang, "ui_worker_crashed_plain"));
                            super::progress::details(ui, lang, "crash", m);
                        });
                        ui.add_space(4.0);
                    }
                    actions.extend(pages.get_mut(page).show(session, ui));
                    ui.add_space(12.0);
                });
        });
        let mut below = ui.new_child(
            egui::UiBuilder::new()
                .id_salt("footer-contents")
                .max_rect(footer)
                .layout(egui::Layout::top_down(egui::Align::Min)),
        );
        actions.extend(self.footer(&mut below, enter));
        let height = below.min_rect().height();
        if (height - self.footer_height).abs() > 0.5 {
            self.footer_height = height;
            ui.ctx().request_repaint();
        }
        self.keys.end(ui.ctx());
        if !actions.is_empty() {
            // The next frame shows what they changed.
            ui.ctx().request_repaint();
        }
        for a in actions {
            self.apply(a);
        }
    }

    fn header(&self, ui: &mut Ui) -> Vec<Action> {
        let lang = self.session.lang;
        let mut chosen = lang;
        ui.add_space(6.0);
        ui.horizontal(|ui| {
            ui.label(RichText::new(t(lang, "ui_app_title")).strong().size(18.0));
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                // The Welcome page has its own language choice.
                if self.page != Page::Welcome {
                    ui.selectable_value(&mut chosen, Lang::Zh, "中文");
                    ui.selectable_value(&mut chosen, Lang::En, "English");
                }
            });
        });
        // The step bar: where we are in this goal's flow.
        let steps = self.session.steps();
        let here = steps.iter().position(|p| *p == self.page).unwrap_or(0);
        ui.horizontal_wrapped(|ui| {
            ui.spacing_mut().item_spacing.x = 4.0;
            for (i, p) in steps.iter().enumerate() {
                let label = format!("{}. {}", i + 1, t(lang, p.title_key()));
                let text = if i == here {
                    RichText::new(label)
                        .strong()
                        .color(ui.visuals().strong_text_color())
                } else if i < here {
                    RichText::new(label)
                } else {
                    RichText::new(label).weak()
                };
                ui.label(text);
                if i + 1 < steps.len() {
                    ui.label(RichText::new("›").weak());
                }
            }
        });
        ui.add_space(4.0);
        if chosen != lang {
            vec![Action::SetLang(chosen)]
        } else {
            Vec::new()
        }
    }

    /// Back on the left; on the right the page's one primary button (filled; Enter
    /// presses it) and, when the page's primary is something else, Next as a secondary.
    fn footer(&self, ui: &mut Ui, enter: bool) -> Vec<Action> {
        let lang = self.session.lang;
        let screen = self.pages.get(self.page);
        let mut actions = Vec::new();
        ui.add_space(6.0);
        ui.horizontal(|ui| {
            let back = self.back_open();
            if ui
                .add_enabled(back, egui::Button::new(t(lang, "ui_back")))
                .clicked()
            {
                actions.push(Action::Back);
            }
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                let last = super::flow::neighbours(self.session.steps(), self.page)
                    .0
                    .is_none();
                let can = self.can_next();
                match screen.primary(&self.session) {
                    Some(p) => {
                        let r = widgets::primary_enabled(ui, p.enabled, &p.label);
                        if r.clicked() || (enter && p.enabled) {
                            actions.extend(p.actions);
                        }
                        if last {
                            if ui.button(t(lang, "ui_close")).clicked() {
                                ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
                            }
                        } else if ui
                            .add_enabled(
                                can,
                                egui::Button::new(t(lang, screen.next_label(&self.session))),
                            )
                            .clicked()
                        {
                            actions.push(Action::Next);
                        }
                    }
                    None if last => {
                        if widgets::primary(ui, &t(lang, "ui_close")).clicked() || enter {
                            ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
                        }
                    }
                    None => {
                        let label = t(lang, screen.next_label(&self.session));
                        if widgets::primary_enabled(ui, can, &label).clicked() || (enter && can) {
                            actions.push(Action::Next);
                        }
                    }
                }
                if let Some(why) = screen.why_not_next(&self.session).filter(|_| !can) {
                    ui.label(RichText::new(t(lang, why)).weak());
                }
            });
        });
        ui.add_space(6.0);
        actions
    }

    /// Whether Back (the button, Esc) is open: not on the first page, nor while a job
    /// the page shows runs.
    fn back_open(&self) -> bool {
        self.page != Page::Welcome && !self.busy()
    }

    /// A job runs that the current page owns (leaving would hide its progress).
    pub fn busy(&self) -> bool {
        self.pages.get(self.page).busy(&self.session)
    }

    pub fn can_next(&self) -> bool {
        self.pages.get(self.page).can_next(&self.session)
    }

    fn next(&mut self) {
        let steps = self.session.steps();
        if let (Some(p), _) = super::flow::neighbours(steps, self.page) {
            self.go(p);
        }
    }

    /// The page before; its work is not started again, and nothing is dropped.
    fn back(&mut self) {
        self.session.clear_crash();
        let steps = self.session.steps();
        if let (_, Some(p)) = super::flow::neighbours(steps, self.page) {
            self.page = p;
        }
    }

    /// Goes to `page`, starting the work that page shows.
    pub fn go(&mut self, page: Page) {
        self.session.clear_crash();
        self.page = page;
        for a in self.pages.get(page).enter(&self.session) {
            self.apply(a);
        }
    }

    /// The toolkit folder the plan installs to.
    pub fn toolkit_dir(&self) -> Option<PathBuf> {
        self.session.toolkit_dir()
    }

    /// One move towards the autopilot's page: what a user would click next, once the
    /// page allows it.
    fn autopilot(&mut self) {
        let actions = match self.pages.get(self.page).drive(&self.session) {
            Some(a) => a,
            None if self.busy() => Vec::new(),
            None if self.can_next() => vec![Action::Next],
            None => Vec::new(),
        };
        for a in actions {
            self.apply(a);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuda_setup_core::compat::{Os, Tables};

    #[test]
    fn back_and_next_from_done_keep_the_results() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = Options::sandbox(Tables::embedded().unwrap(), Os::Windows, dir.path());
        o.lang = Some(Lang::En);
        o.fonts = crate::ui::fonts::FontSource::EmbeddedOnly;
        o.file_dialogs = false;
        let mut app = App::new(o);
        assert_eq!(app.session.mode, Mode::Setup, "nothing on disk");
        app.apply(Action::SetMode(Mode::Repair));
        app.apply(Action::Go(Page::Done));
        // What the audit found and where the report went, as the worker says them.
        app.session.on_event(Event::Audited(Vec::new()));
        let report = dir.path().join("report.json");
        app.session.on_event(Event::Saved(Ok(report.clone())));

        app.apply(Action::Back);
        assert_eq!(app.page, Page::Repair);
        assert!(
            app.session.repair().findings().is_some() && !app.session.repair().auditing(),
            "Back neither drops the audit nor runs it again"
        );
        app.apply(Action::Next);
        assert_eq!(app.page, Page::Done);
        assert_eq!(
            app.session.saved().as_ref().unwrap().as_ref().unwrap(),
            &report
        );
        assert!(app.session.repair().findings().is_some());

        // The language, switched on Done, changes only the language.
        app.apply(Action::SetLang(Lang::Zh));
        assert_eq!((app.page, app.session.lang), (Page::Done, Lang::Zh));
        assert!(app.session.saved().is_some() && app.session.repair().findings().is_some());
        app.apply(Action::Back);
        app.apply(Action::Back);
        assert_eq!(app.page, Page::Welcome);
        app.apply(Action::Back);
        assert_eq!(app.page, Page::Welcome, "nothing before the first page");
    }
}
