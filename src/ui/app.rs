//! The wizard's state and its frame function. The UI is a function of this state: each
//! frame applies what the worker reported, then draws the current page; buttons change
//! state or hand a command to the worker, never wait for one.

use std::path::PathBuf;
use std::sync::mpsc::Receiver;

use egui::{RichText, Ui};

use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::detect::Deadlines;
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::platform::Host;
use cuda_setup_core::recommend::{Facts, Goal, GpuFact, Recommendation, Request};
use cuda_setup_core::target::Target;
use cuda_setup_core::verify::{SmokeOptions, doctor};
use cuda_setup_core::version::Version;

use super::fonts::FontSource;
use super::pages;
use super::text::{t, tf};
use super::widgets;
use super::worker::{Command, Crashed, Env, Event, Job, Worker};

/// The wizard's pages, in the order a first-time setup visits them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    Welcome,
    /// Repair mode: the audit's findings and their fixes.
    Repair,
    System,
    Choose,
    Prepare,
    Install,
    Cudnn,
    Verify,
    Pytorch,
    Done,
}

impl Page {
    pub const ALL: [Page; 10] = [
        Page::Welcome,
        Page::Repair,
        Page::System,
        Page::Choose,
        Page::Prepare,
        Page::Install,
        Page::Cudnn,
        Page::Verify,
        Page::Pytorch,
        Page::Done,
    ];

    /// The page's short title (the step bar's).
    pub fn title_key(self) -> &'static str {
        match self {
            Page::Welcome => "ui_page_welcome",
            Page::Repair => "ui_page_repair",
            Page::System => "ui_page_system",
            Page::Choose => "ui_page_choose",
            Page::Prepare => "ui_page_prepare",
            Page::Install => "ui_page_install",
            Page::Cudnn => "ui_page_cudnn",
            Page::Verify => "ui_page_verify",
            Page::Pytorch => "ui_page_pytorch",
            Page::Done => "ui_page_done",
        }
    }

    /// A stable name (`--page` takes it).
    pub fn id(self) -> &'static str {
        match self {
            Page::Welcome => "welcome",
            Page::Repair => "repair",
            Page::System => "system",
            Page::Choose => "choose",
            Page::Prepare => "prepare",
            Page::Install => "install",
            Page::Cudnn => "cudnn",
            Page::Verify => "verify",
            Page::Pytorch => "pytorch",
            Page::Done => "done",
        }
    }

    pub fn from_id(s: &str) -> Option<Page> {
        Page::ALL.into_iter().find(|p| p.id() == s)
    }
}

/// The pages a mode and goal visit. The PyTorch goal needs no toolkit, cuDNN or smoke
/// test: its check is the doctor, on the PyTorch page.
pub fn flow(mode: Mode, goal: Goal) -> &'static [Page] {
    match (mode, goal) {
        (Mode::Repair, _) => &[Page::Welcome, Page::Repair, Page::Done],
        (Mode::Setup, Goal::Developer) => &[
            Page::Welcome,
            Page::System,
            Page::Choose,
            Page::Prepare,
            Page::Install,
            Page::Cudnn,
            Page::Verify,
            Page::Pytorch,
            Page::Done,
        ],
        (Mode::Setup, Goal::Pytorch) => &[
            Page::Welcome,
            Page::System,
            Page::Choose,
            Page::Prepare,
            Page::Pytorch,
            Page::Done,
        ],
    }
}

/// First-time setup, or repair of what is already installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Setup,
    Repair,
}

/// Facts given instead of detected (the CLI's what-if flags).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub gpus: Vec<GpuFact>,
    /// `Some(None)`: no driver.
    pub driver: Option<Option<Version>>,
    pub driver_cuda: Option<Version>,
    pub python: Option<Version>,
}

impl Overrides {
    pub fn any(&self) -> bool {
        !self.gpus.is_empty()
            || self.driver.is_some()
            || self.driver_cuda.is_some()
            || self.python.is_some()
    }

    pub fn apply(&self, facts: &mut Facts) {
        if !self.gpus.is_empty() {
            facts.gpus = self.gpus.clone();
            facts.unidentified_gpus.clear();
            facts.notes.clear();
        }
        if let Some(d) = &self.driver {
            facts.driver = d.clone();
            facts.driver_cuda = self.driver_cuda.clone();
        }
        if let Some(p) = &self.python {
            facts.python = Some(p.major_minor());
        }
    }
}

/// How the wizard starts: the same knobs as the CLI, so tests run the real pipeline in a
/// sandbox.
#[derive(Clone)]
pub struct Options {
    /// None: from the system locale.
    pub lang: Option<Lang>,
    pub tables: Tables,
    /// Where installs go.
    pub target: Target,
    /// What detection probes.
    pub host: Host,
    pub overrides: Overrides,
    pub mirrors: Vec<String>,
    pub goal: Option<Goal>,
    /// Toolkit version prefix (`11.8`).
    pub cuda: Option<Version>,
    /// The interpreter PyTorch goes into.
    pub python: Option<PathBuf>,
    /// A cuDNN zip to use (the autopilot validates and installs it).
    pub cudnn_archive: Option<PathBuf>,
    pub smoke: SmokeOptions,
    pub deadlines: Deadlines,
    pub fonts: FontSource,
    /// Native file dialogs (off in tests: they would wait for a person).
    pub file_dialogs: bool,
    /// Walk through the pages by itself up to this one (screenshots).
    pub autopilot: Option<Page>,
    /// Installer or wheels (default: what `recommend::method_advice` says).
    pub method: cuda_setup_core::recommend::Method,
    /// The PyPI mirror for the wheels method.
    pub pypi_mirror: Option<String>,
    /// The wheels method's components (None: the developer set).
    pub components: Option<Vec<String>>,
    /// Look for new releases in the background at start (None: never; tests and
    /// sandboxes leave it off so they touch no network).
    pub refresh: Option<super::worker::Refresh>,
}

impl Options {
    /// This machine, as it is.
    pub fn machine(tables: Tables) -> Options {
        let target = Target::real();
        let (method, _) =
            cuda_setup_core::recommend::method_advice(&cuda_setup_core::recommend::MethodFacts {
                // On Windows the wizard can relaunch itself elevated.
                elevated: target.elevated || cfg!(windows),
                ..Default::default()
            });
        Options {
            method,
            pypi_mirror: None,
            components: None,
            lang: None,
            tables,
            target,
            host: Host::real(),
            overrides: Overrides::default(),
            mirrors: Vec::new(),
            goal: None,
            cuda: None,
            python: None,
            cudnn_archive: None,
            smoke: SmokeOptions::default(),
            deadlines: Deadlines::default(),
            fonts: FontSource::SystemThenEmbedded,
            file_dialogs: true,
            autopilot: None,
            refresh: None,
        }
    }

    /// Everything under `root`, as `install --root` does; detection sees only the root.
    pub fn sandbox(tables: Tables, os: Os, root: &std::path::Path) -> Options {
        let env = std::env::vars().filter(|(k, _)| k == "PATH").collect();
        Options {
            target: Target::rooted(os, root),
            host: Host::sandbox(os, root, env),
            // A sandbox root is writable: the installer, as on an elevated machine.
            method: cuda_setup_core::recommend::Method::Installer,
            ..Options::machine(tables)
        }
    }
}

/// The language of the system's locale (`zh-CN` → Chinese), else English.
pub fn system_lang() -> Lang {
    sys_locale::get_locale()
        .map(|l| Lang::from_locale(&l))
        .unwrap_or(Lang::En)
}

pub struct App {
    pub lang: Lang,
    pub page: Page,
    pub mode: Mode,
    pub goal: Goal,
    /// What was on disk at start-up.
    pub existing: super::disk::Existing,
    pub opts: Options,
    worker: Worker,
    events: Receiver<Event>,
    pub system: pages::system::State,
    pub choose: pages::choose::State,
    pub prepare: pages::prepare::State,
    pub install: pages::install::State,
    pub cudnn: pages::cudnn::State,
    pub verify: pages::verify::State,
    pub torch: pages::pytorch::State,
    pub done: pages::done::State,
    pub repair: pages::repair::State,
    /// Where the tables' facts come from, shown under the reasons; `refreshing` while
    /// the background refresh runs.
    pub tables_line: cuda_setup_core::message::Message,
    pub refreshing: bool,
    /// The language the window title was last set in.
    titled: Option<Lang>,
    /// The autopilot showed its target page's work (screenshots).
    arrived: bool,
    /// A worker thread's panic message, shown until the user moves to another page.
    pub crash: Option<String>,
}

impl App {
    pub fn new(opts: Options) -> App {
        let existing = super::disk::scan(&opts.target);
        let tables_line = cuda_setup_core::refresh::tables_message(&opts.tables);
        let (worker, events) = Worker::new(Env {
            tables: opts.tables.clone(),
            host: opts.host.clone(),
            target: opts.target.clone(),
            smoke: opts.smoke.clone(),
            deadlines: opts.deadlines,
            file_dialogs: opts.file_dialogs,
        });
        let mut app = App {
            lang: opts.lang.unwrap_or_else(system_lang),
            page: Page::Welcome,
            // The first page follows what is on disk: an install there → repair.
            mode: if existing.found() {
                Mode::Repair
            } else {
                Mode::Setup
            },
            goal: opts.goal.unwrap_or(Goal::Pytorch),
            existing,
            choose: pages::choose::State::new(&opts),
            torch: pages::pytorch::State::new(&opts),
            opts,
            worker,
            events,
            system: Default::default(),
            prepare: Default::default(),
            install: Default::default(),
            cudnn: Default::default(),
            verify: Default::default(),
            done: Default::default(),
            repair: Default::default(),
            tables_line,
            refreshing: false,
            titled: None,
            arrived: false,
            crash: None,
        };
        // Detection starts at once, so the System page is ready when the user is.
        pages::system::start(&mut app);
        if let Some(r) = app.opts.refresh.clone() {
            app.refreshing = true;
            app.submit(Command::Refresh(Box::new(r)));
        }
        app
    }

    /// Hands `cmd` to the worker.
    pub fn submit(&self, cmd: Command) {
        self.worker.submit(cmd);
    }

    /// One frame: apply what arrived, then draw.
    pub fn show(&mut self, ui: &mut Ui) {
        self.worker.set_context(ui.ctx());
        while let Ok(e) = self.events.try_recv() {
            self.apply(e);
        }
        if self.titled != Some(self.lang) {
            self.titled = Some(self.lang);
            ui.ctx()
                .send_viewport_cmd(egui::ViewportCommand::Title(t(self.lang, "ui_app_title")));
        }
        match self.opts.autopilot {
            Some(p) if p != self.page => self.autopilot(),
            Some(_) if !self.arrived => {
                self.arrived = true;
                self.show_work();
            }
            _ => {}
        }
        egui::Panel::top("header").show(ui, |ui| self.header(ui));
        egui::Panel::bottom("footer").show(ui, |ui| self.footer(ui));
        egui::CentralPanel::default().show(ui, |ui| {
            egui::ScrollArea::vertical()
                .auto_shrink([false, false])
                .show(ui, |ui| {
                    ui.add_space(6.0);
                    ui.heading(t(self.lang, self.page.title_key()));
                    ui.add_space(4.0);
                    if let Some(m) = &self.crash {
                        widgets::note(
                            ui,
                            widgets::Tone::Bad,
                            &tf(self.lang, "ui_worker_crashed", &[("error", m)]),
                        );
                        ui.add_space(4.0);
                    }
                    match self.page {
                        Page::Welcome => pages::welcome::show(self, ui),
                        Page::Repair => pages::repair::show(self, ui),
                        Page::System => pages::system::show(self, ui),
                        Page::Choose => pages::choose::show(self, ui),
                        Page::Prepare => pages::prepare::show(self, ui),
                        Page::Install => pages::install::show(self, ui),
                        Page::Cudnn => pages::cudnn::show(self, ui),
                        Page::Verify => pages::verify::show(self, ui),
                        Page::Pytorch => pages::pytorch::show(self, ui),
                        Page::Done => pages::done::show(self, ui),
                    }
                    ui.add_space(12.0);
                });
        });
    }

    fn header(&mut self, ui: &mut Ui) {
        ui.add_space(6.0);
        ui.horizontal(|ui| {
            ui.label(
                RichText::new(t(self.lang, "ui_app_title"))
                    .strong()
                    .size(18.0),
            );
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                // The Welcome page has its own language choice.
                if self.page != Page::Welcome {
                    ui.selectable_value(&mut self.lang, Lang::Zh, "中文");
                    ui.selectable_value(&mut self.lang, Lang::En, "English");
                }
            });
        });
        // The step bar: where we are in this goal's flow.
        let steps = flow(self.mode, self.goal);
        let here = steps.iter().position(|p| *p == self.page).unwrap_or(0);
        ui.horizontal_wrapped(|ui| {
            ui.spacing_mut().item_spacing.x = 4.0;
            for (i, p) in steps.iter().enumerate() {
                let label = format!("{}. {}", i + 1, t(self.lang, p.title_key()));
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
    }

    fn footer(&mut self, ui: &mut Ui) {
        ui.add_space(6.0);
        ui.horizontal(|ui| {
            let back = self.page != Page::Welcome && !self.busy();
            if ui
                .add_enabled(back, egui::Button::new(t(self.lang, "ui_back")))
                .clicked()
            {
                self.back();
            }
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                if self.page == Page::Done {
                    if ui.button(t(self.lang, "ui_close")).clicked() {
                        ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
                    }
                    return;
                }
                let label = match (self.page, self.goal) {
                    (Page::Prepare, Goal::Developer) => t(self.lang, "ui_start_install"),
                    _ => t(self.lang, "ui_next"),
                };
                let can = self.can_next();
                if ui
                    .add_enabled(can, egui::Button::new(RichText::new(label).strong()))
                    .clicked()
                {
                    self.next();
                }
                if let Some(why) = self.why_not_next().filter(|_| !can) {
                    ui.label(RichText::new(t(self.lang, why)).weak());
                }
            });
        });
        ui.add_space(6.0);
    }

    /// A job runs that the current page owns (leaving would hide its progress).
    pub fn busy(&self) -> bool {
        match self.page {
            Page::Install => self.install.run.running(),
            Page::Cudnn => self.cudnn.busy(),
            Page::Pytorch => self.torch.busy(),
            Page::Repair => self.repair.busy(),
            _ => false,
        }
    }

    pub fn can_next(&mut self) -> bool {
        match self.page {
            Page::Welcome | Page::Pytorch => true,
            Page::System => self.system.report.is_some(),
            Page::Choose => self.recommendation().is_some_and(|r| r.fits()),
            Page::Prepare => self.prepare.ready(),
            Page::Install => self.install.run.succeeded(),
            Page::Cudnn => self.cudnn.finished(),
            Page::Verify => self.verify.report.is_some(),
            Page::Repair => self.repair.findings.is_some() && !self.repair.busy(),
            Page::Done => false,
        }
    }

    /// Why Next is greyed out, when it says something useful.
    fn why_not_next(&self) -> Option<&'static str> {
        match self.page {
            Page::System => Some("ui_wait_detect"),
            Page::Prepare if self.prepare.running => Some("ui_wait_prepare"),
            Page::Prepare => Some("ui_fix_checks_first"),
            Page::Install if self.install.run.running() => Some("ui_wait_install"),
            Page::Cudnn => Some("ui_cudnn_choose_first"),
            Page::Verify => Some("ui_wait_verify"),
            Page::Repair => Some("ui_wait_repair"),
            _ => None,
        }
    }

    pub fn next(&mut self) {
        let steps = flow(self.mode, self.goal);
        let here = steps.iter().position(|p| *p == self.page).unwrap_or(0);
        if let Some(p) = steps.get(here + 1) {
            self.go(*p);
        }
    }

    pub fn back(&mut self) {
        self.crash = None;
        let steps = flow(self.mode, self.goal);
        let here = steps.iter().position(|p| *p == self.page).unwrap_or(0);
        if here > 0 {
            self.page = steps[here - 1];
        }
    }

    /// Goes to `page`, starting the work that page shows.
    pub fn go(&mut self, page: Page) {
        self.crash = None;
        self.page = page;
        match page {
            Page::System if self.system.report.is_none() && !self.system.running => {
                pages::system::start(self);
            }
            Page::Prepare => pages::prepare::start(self),
            Page::Repair if self.repair.findings.is_none() && !self.repair.auditing => {
                pages::repair::audit(self);
            }
            Page::Install if !self.install.run.running() && !self.install.run.succeeded() => {
                pages::install::start(self);
            }
            Page::Verify if self.verify.report.is_none() && !self.verify.running => {
                pages::verify::start(self);
            }
            _ => {}
        }
    }

    /// The facts to recommend for: detection, then the overrides.
    pub fn facts(&self) -> Option<Facts> {
        let report = self.system.report.as_ref()?;
        let mut f = report.facts(self.opts.target.os);
        self.opts.overrides.apply(&mut f);
        Some(f)
    }

    /// The recommendation for the chosen goal and advanced settings (a pure function,
    /// computed when its inputs change).
    pub fn recommendation(&mut self) -> Option<&Recommendation> {
        let facts = self.facts()?;
        let key = (
            self.goal,
            self.choose.cuda.trim().to_string(),
            self.system.generation,
        );
        if self.choose.cache.as_ref().is_none_or(|(k, _)| *k != key) {
            let cuda = key.1.parse::<Version>().ok();
            let rec = cuda_setup_core::recommend::recommend(
                &self.opts.tables,
                &facts,
                &Request {
                    goal: self.goal,
                    cuda,
                    method: self.choose.method,
                },
            );
            self.choose.cache = Some((key, rec));
        }
        self.choose.cache.as_ref().map(|(_, r)| r)
    }

    /// The toolkit folder the plan installs to.
    pub fn toolkit_dir(&self) -> Option<PathBuf> {
        if let Some(Ok(p)) = &self.prepare.result {
            for s in &p.plan.steps {
                if let cuda_setup_core::steps::Step::InstallToolkit(spec) = s {
                    return Some(spec.dir.clone());
                }
            }
        }
        let (_, rec) = self.choose.cache.as_ref()?;
        rec.toolkit
            .as_ref()
            .map(|tk| self.opts.target.toolkit_dir(&tk.version))
    }

    /// What the doctor needs to know of the GPUs (the facts, overrides included).
    pub fn gpu_facts(&self) -> doctor::GpuFacts {
        let Some(f) = self.facts() else {
            return doctor::GpuFacts::default();
        };
        doctor::GpuFacts {
            driver: f.driver.clone(),
            driver_cuda: f.driver_cuda.clone(),
            gpus: f
                .gpus
                .iter()
                .map(|g| doctor::GpuSummary {
                    name: g.name.clone().unwrap_or_else(|| g.compute_capability.sm()),
                    compute_capability: Some(g.compute_capability),
                })
                .collect(),
        }
    }

    fn apply(&mut self, e: Event) {
        match e {
            Event::Detected(r) => {
                self.system.running = false;
                self.system.generation += 1;
                self.system.report = Some(r);
            }
            Event::Prepared(r) => {
                self.prepare.running = false;
                self.prepare.result = Some(r);
            }
            Event::Run(Job::Install, e) => self.install.run.apply(e, self.lang),
            Event::Run(Job::Pip, e) => {
                let finished_ok = matches!(&e, cuda_setup_core::run::RunEvent::Done(r) if r.ok());
                self.torch.run.apply(e, self.lang);
                if finished_ok {
                    pages::pytorch::start_doctor(self);
                }
            }
            Event::Picked(purpose, path) => match purpose {
                super::worker::Pick::CudnnArchive => {
                    if let Some(p) = path {
                        pages::cudnn::use_archive(self, p);
                    }
                }
                super::worker::Pick::Python => {
                    if let Some(p) = path {
                        self.torch.python = p.display().to_string();
                    }
                }
            },
            Event::CudnnValidated(r) => {
                self.cudnn.validating = false;
                self.cudnn.check = Some(r);
            }
            Event::CudnnDownload(p) => self.cudnn.download_progress = Some(p),
            Event::CudnnDownloaded(r) => {
                self.cudnn.downloading = None;
                match r {
                    Ok(path) => pages::cudnn::use_archive(self, path),
                    Err(e) => self.cudnn.download_error = Some(e),
                }
            }
            Event::CudnnExtracted { bytes, total } => self.cudnn.extracted = Some((bytes, total)),
            Event::CudnnInstalled(r) => {
                self.cudnn.installing = false;
                let lang = self.lang;
                self.cudnn.installed = Some(r.map_err(|e| match e {
                    // Another cuda-setup at work on this toolkit: the install page's words.
                    cuda_setup_core::cudnn::CudnnError::Busy(b) => format!(
                        "{}\n{}",
                        cuda_setup_core::i18n::render(&b.message("fail_busy"), lang),
                        cuda_setup_core::i18n::render(
                            &cuda_setup_core::message::Message::new("fix_busy"),
                            lang
                        )
                    ),
                    e => format!("{}\n{}", cuda_setup_core::error::chain(&e), e.hint()),
                }));
            }
            Event::Sample(s) => self.verify.samples.push(s),
            Event::MonitorUnavailable(why) => self.verify.monitor_error = Some(why),
            Event::Smoke(r) => {
                self.verify.running = false;
                self.verify.report = Some(r);
            }
            Event::Doctor(r) => {
                self.torch.doctor_running = false;
                self.torch.doctor = Some(r);
            }
            Event::Saved(r) => self.done.saved = Some(r),
            Event::Run(Job::Repair, e) => self.repair.apply(e, self.lang),
            Event::Audited(f) => {
                self.repair.auditing = false;
                self.repair.findings = Some(f);
            }
            Event::Fixed(r) => {
                self.repair.fixing = false;
                self.repair.findings = Some(r.after.clone());
                self.repair.fixed = Some(r);
            }
            Event::Crashed { what, message } => self.crashed(what, message),
            Event::Refreshed(r) => {
                self.refreshing = false;
                match r {
                    Ok(o) => {
                        self.tables_line = cuda_setup_core::refresh::outcome_message(&o);
                        self.worker.set_tables(o.tables.clone());
                        self.opts.tables = o.tables;
                        // The recommendation is recomputed from the new tables.
                        self.choose.cache = None;
                    }
                    Err(e) => {
                        self.tables_line = cuda_setup_core::msg!("refresh_rejected", error = e);
                    }
                }
            }
        }
    }

    /// A worker thread died (a bug of ours): whatever waited for it stops waiting, shows
    /// the failure, and Back works again.
    fn crashed(&mut self, what: Crashed, message: String) {
        match what {
            Crashed::Detect => self.system.running = false,
            Crashed::Prepare => {
                self.prepare.running = false;
                self.prepare.result = Some(Err(message.clone()));
            }
            // The worker sent the run's failed report before this.
            Crashed::Run(Job::Install | Job::Pip) => {}
            Crashed::Run(Job::Repair) | Crashed::Fix => self.repair.fixing = false,
            Crashed::ValidateCudnn => self.cudnn.validating = false,
            Crashed::DownloadCudnn => {
                self.cudnn.downloading = None;
                self.cudnn.download_error = Some(message.clone());
            }
            Crashed::InstallCudnn => {
                self.cudnn.installing = false;
                self.cudnn.installed = Some(Err(message.clone()));
            }
            Crashed::Smoke => self.verify.running = false,
            Crashed::Doctor => self.torch.doctor_running = false,
            Crashed::Save => self.done.saved = Some(Err(message.clone())),
            Crashed::Audit => self.repair.auditing = false,
            Crashed::Refresh => self.refreshing = false,
            Crashed::Other => {}
        }
        self.crash = Some(message);
    }

    /// At the autopilot's page: start what the page shows, as a user would (the cuDNN
    /// zip validated, pip run), so a screenshot has something to show.
    fn show_work(&mut self) {
        match self.page {
            Page::Cudnn if self.cudnn.archive.is_none() => {
                if let Some(z) = self.opts.cudnn_archive.clone() {
                    pages::cudnn::use_archive(self, z);
                }
            }
            Page::Pytorch if !self.torch.run.started => pages::pytorch::run_recommended(self),
            _ => {}
        }
    }

    /// One move towards the autopilot's page: what a user would click next, once the
    /// page allows it.
    fn autopilot(&mut self) {
        match self.page {
            Page::Cudnn if !self.cudnn.finished() => pages::cudnn::autopilot(self),
            _ if self.busy() => {}
            _ => {
                if self.can_next() {
                    self.next();
                }
            }
        }
    }
}
