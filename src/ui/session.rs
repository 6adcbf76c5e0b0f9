//! The wizard's session: everything the pages read — the language, the mode and goal, the
//! detection report and the facts from it, the recommendation, the plan, and what each
//! job did (install, cuDNN, smoke test, pip and the doctor, repair). Pages draw from a
//! `&Session` and return [`Action`]s; [`Session::apply`] is the one place that changes it,
//! and it invalidates what a change makes stale (a new goal: a new recommendation, no
//! plan). Worker events come in through [`Session::on_event`]. Both answer with the
//! worker [`Command`]s to submit, so the session itself starts no thread and tests drive
//! it directly. It knows no page module (pages depend on it, never the other way round).

use std::path::PathBuf;

use cuda_setup_core::compat::Os;
use cuda_setup_core::cudnn::Manifest;
use cuda_setup_core::detect::SystemReport;
use cuda_setup_core::download::Cancel;
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::message::Message;
use cuda_setup_core::monitor::Sample;
use cuda_setup_core::plan::{self, Choices, CudnnChoice, Method, Plan};
use cuda_setup_core::recommend::{DriverAction, Facts, Goal, Recommendation, Request, TorchPick};
use cuda_setup_core::repair::{self, Existing, Finding, FixResult};
use cuda_setup_core::run::{Failure, RunEvent};
use cuda_setup_core::steps::preflight::Status as CheckStatus;
use cuda_setup_core::steps::{Step, StepError, StepEvent, StepKind};
use cuda_setup_core::verify::SmokeReport;
use cuda_setup_core::verify::doctor::{self, DoctorReport, PypiMirror};
use cuda_setup_core::version::Version;

use super::flow::{Mode, Page};
use super::options::Options;
use super::progress::{RunView, step_title};
use super::worker::{ArchiveCheck, Command, Crashed, Event, Job, Pick, Prepared, Refused};

/// What a page asks for. Navigation (`Next`, `Back`, `Go`) is the app's; the rest
/// changes the session or starts work.
#[derive(Debug)]
pub enum Action {
    Next,
    Back,
    Go(Page),
    SetLang(Lang),
    SetMode(Mode),
    /// A new goal: a new recommendation, and the plan made for the old one is dropped.
    ChooseGoal(Goal),
    /// The Choose page's settings (all of them, when one changed).
    SetSettings(Settings),
    Detect,
    /// Build the plan and run the pre-flight checks.
    Prepare,
    StartInstall,
    CancelInstall,
    /// Validate a cuDNN archive against the toolkit (nothing is copied yet).
    UseCudnnArchive(PathBuf),
    DownloadCudnn,
    CancelCudnnDownload,
    InstallCudnn,
    /// Remove the cuDNN this page installed (confirmed on the page first).
    UndoCudnn,
    SkipCudnn,
    /// The smoke test.
    Verify,
    SetPython(String),
    /// An index into [`PIP_MIRRORS`].
    SetPipMirror(usize),
    /// pip installs this wheel into the chosen Python; the doctor follows.
    RunPip(Box<TorchPick>),
    CancelPip,
    RunDoctor,
    /// Repair mode's end: the checks setup runs — the doctor on the torch detection found,
    /// the smoke test where the goal needs it — so Done has reports to judge.
    CheckInstalled,
    Audit,
    Fix,
    PickFile(Pick),
    /// Write `text` to `path`, or (None) to a file the user picks.
    Save {
        path: Option<PathBuf>,
        default_name: String,
        text: String,
    },
    /// Open a file with the system's viewer (the run's log).
    Open(PathBuf),
    /// The driver is installed and Windows must restart: open cuda-setup again after the
    /// restart, and restart now (`now`) or when the user chooses.
    Restart {
        now: bool,
    },
}

/// The PyPI mirrors offered for torch's dependencies (the wheels come from PyTorch's own
/// index, which no PyPI mirror carries): (name, label key).
pub const PIP_MIRRORS: [(&str, &str); 4] = [
    ("", "ui_mirror_none"),
    ("tsinghua", "ui_mirror_tsinghua"),
    ("aliyun", "ui_mirror_aliyun"),
    ("ustc", "ui_mirror_ustc"),
];

/// The PyPI mirror a language starts with: Tsinghua's for Chinese (pypi.org is slow from
/// China; the user's guide uses https://pypi.tuna.tsinghua.edu.cn/simple, and TUNA's help
/// page https://mirrors.tuna.tsinghua.edu.cn/help/pypi/ gives that address), none otherwise.
pub fn default_pip_mirror(lang: Lang) -> usize {
    match lang {
        Lang::Zh => 1,
        _ => 0,
    }
}

/// The wheels method's PyPI index a language starts with, as the Choose page's field
/// holds it: the name of [`default_pip_mirror`]'s mirror ("tsinghua" in Chinese, "" —
/// pypi.org — otherwise). One source of truth for both pages.
pub fn default_pypi(lang: Lang) -> &'static str {
    PIP_MIRRORS[default_pip_mirror(lang)].0
}

/// The PyPI mirror at `index` of [`PIP_MIRRORS`] (None: pypi.org).
pub fn pip_mirror(index: usize) -> Option<PypiMirror> {
    let (name, _) = PIP_MIRRORS[index.min(PIP_MIRRORS.len() - 1)];
    (!name.is_empty()).then(|| name.parse().ok()).flatten()
}

/// What the plan is built from, as the Choose page shows it (text as typed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Toolkit version prefix (`12.4`), empty for the recommended one.
    pub cuda: String,
    /// Mirror base URLs, one a line.
    pub mirrors: String,
    pub with_driver: bool,
    /// "I will install the driver myself": the plan has no driver step.
    pub skip_driver: bool,
    pub connections: usize,
    /// Installer or wheels; `method_advice` chose the default.
    pub method: Method,
    /// The PyPI index for wheels: a mirror name or URL, empty for pypi.org.
    pub pypi: String,
}

impl Settings {
    /// From the command line; in the Chinese UI the wheels' PyPI index starts as the
    /// same Chinese mirror the PyPI page uses ([`default_pypi`]), unless one was given.
    pub fn new(opts: &Options, lang: Lang) -> Settings {
        Settings {
            cuda: opts
                .cuda
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
            mirrors: opts.mirrors.join("\n"),
            with_driver: false,
            skip_driver: false,
            connections: 8,
            method: opts.method,
            pypi: opts
                .pypi_mirror
                .clone()
                .unwrap_or_else(|| default_pypi(lang).to_string()),
        }
    }

    /// The toolkit asked for (None: the recommended one; text that is no version too).
    pub fn cuda_version(&self) -> Option<Version> {
        self.cuda.trim().parse().ok()
    }

    /// The index URL for the wheels method (None: pypi.org; an unknown name too — the
    /// field shows why).
    pub fn pypi_index(&self) -> Option<String> {
        let t = self.pypi.trim();
        (!t.is_empty())
            .then(|| t.parse::<PypiMirror>().ok().map(|m| m.url))
            .flatten()
    }

    pub fn mirror_list(&self) -> Vec<String> {
        self.mirrors
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    }
}

/// Detection: its report and the facts recommended for (overrides applied).
#[derive(Default)]
pub struct Detection {
    pub running: bool,
    /// Something was installed while detection ran: its answer is already old, so it is
    /// dropped and detection runs again.
    pub stale: bool,
    pub report: Option<Box<SystemReport>>,
    pub facts: Option<Facts>,
}

/// The plan and its pre-flight checks.
#[derive(Default)]
pub struct Preparation {
    pub running: bool,
    pub result: Option<Result<Box<Prepared>, String>>,
}

impl Preparation {
    /// A plan exists and no check failed.
    pub fn ready(&self) -> bool {
        matches!(&self.result, Some(Ok(p)) if !p.checks.iter().any(|c| c.status == CheckStatus::Fail))
    }

    pub fn plan(&self) -> Option<&Plan> {
        match &self.result {
            Some(Ok(p)) => Some(&p.plan),
            _ => None,
        }
    }
}

/// The install run (the driver, the toolkit).
#[derive(Default)]
pub struct Install {
    pub run: RunView,
    /// The wizard opened after the restart the driver asked for: the plan waits in the
    /// journal, and "Continue the installation" runs the rest of it.
    pub resumed: bool,
    /// The restart the run asked for: asked of the worker (`Some(None)`), then done
    /// (`Ok(now)`: now, or after the user's own restart) or refused.
    pub restart: Option<Option<Result<bool, String>>>,
}

impl Install {
    /// The run stopped after the driver: Windows must restart before the rest.
    pub fn restart_pending(&self) -> bool {
        self.run
            .report
            .as_ref()
            .is_some_and(|r| r.restart_pending && r.failure.is_none())
    }

    /// Finished, with nothing left for after a restart.
    pub fn finished(&self) -> bool {
        self.run.succeeded() && !self.restart_pending()
    }
}

/// Who installs the driver this run needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriverPlan {
    /// The current driver runs what was chosen.
    NotNeeded,
    /// The plan's first steps install it (Windows).
    Planned,
    /// The user does, before the GPU can be used: they said so ("I will install the
    /// driver myself"), or there is no installer of ours (Linux, an unknown package).
    Yours,
}

/// Linux: which package and command give the driver the recommendation needs, worked out
/// on the worker (it reads the distribution and Secure Boot state).
#[derive(Default)]
pub struct LinuxDriver {
    pub running: bool,
    /// Asked for `minimum` (and answered, unless `running`).
    pub asked: bool,
    /// The minimum the advice was asked for.
    pub minimum: Option<Version>,
    pub advice: Option<cuda_setup_core::linux_driver::LinuxDriverAdvice>,
}

/// cuDNN: the archive, its validation, a download, the install.
#[derive(Default)]
pub struct Cudnn {
    pub archive: Option<PathBuf>,
    pub validating: bool,
    pub check: Option<Result<Box<ArchiveCheck>, Box<Refused>>>,
    /// The download (planned, then run by the executor as [`Job::Cudnn`]) and its cancel.
    pub downloading: Option<Cancel>,
    /// Bytes done, total, bytes per second, seconds left.
    pub download_progress: Option<(u64, Option<u64>, f64, Option<f64>)>,
    pub download_error: Option<Box<Failure>>,
    /// The install, run by the executor as [`Job::Cudnn`].
    pub installing: bool,
    pub extracted: Option<(u64, u64)>,
    /// The last cuDNN run's log file (the executor's).
    pub log_file: Option<PathBuf>,
    pub installed: Option<Result<Box<Manifest>, Box<Failure>>>,
    pub skipped: bool,
    /// Undo (the page's button): running, and what it did.
    pub undoing: bool,
    pub undone: Option<Result<Box<Manifest>, Box<Failure>>>,
}

impl Cudnn {
    pub fn busy(&self) -> bool {
        self.validating || self.downloading.is_some() || self.installing || self.undoing
    }

    /// Installed, or skipped on purpose.
    pub fn finished(&self) -> bool {
        self.skipped || matches!(self.installed, Some(Ok(_)))
    }
}

/// The smoke test and the GPU figures sampled while it runs.
#[derive(Default)]
pub struct Verify {
    pub running: bool,
    pub report: Option<Box<SmokeReport>>,
    pub samples: Vec<Sample>,
    pub monitor_error: Option<String>,
}

/// PyTorch: the Python and mirror chosen, pip's run, the doctor.
#[derive(Default)]
pub struct Torch {
    /// The interpreter, as typed or picked.
    pub python: String,
    /// Index into [`PIP_MIRRORS`].
    pub mirror: usize,
    /// The user chose the mirror (else it follows the language).
    pub mirror_chosen: bool,
    pub run: RunView,
    /// GPU figures sampled while the doctor's check runs.
    pub samples: Vec<Sample>,
    pub monitor_error: Option<String>,
    pub doctor_running: bool,
    pub doctor: Option<Box<DoctorReport>>,
}

impl Torch {
    pub fn busy(&self) -> bool {
        self.run.running() || self.doctor_running
    }

    pub fn mirror(&self) -> Option<PypiMirror> {
        pip_mirror(self.mirror)
    }

    pub fn python_path(&self) -> Option<PathBuf> {
        let p = self.python.trim();
        (!p.is_empty()).then(|| PathBuf::from(p))
    }
}

/// Repair: the audit's findings, the fixes' run and result.
#[derive(Default)]
pub struct Repair {
    pub auditing: bool,
    pub findings: Option<Vec<Finding>>,
    /// Problems before the fixes ran.
    pub before: Option<usize>,
    pub fixing: bool,
    pub log: Vec<String>,
    pub fixed: Option<Box<FixResult>>,
    /// Repair mode's checks wait for the detection under way (they read what it finds).
    pub checks_waiting: bool,
    /// The smoke test follows the doctor (one check on the GPU at a time).
    pub smoke_next: bool,
}

impl Repair {
    pub fn busy(&self) -> bool {
        self.auditing || self.fixing
    }

    fn log_event(&mut self, e: RunEvent, lang: Lang) {
        match e {
            RunEvent::Started { name, .. } => {
                self.log.push(format!("▶ {}", step_title(lang, name)))
            }
            RunEvent::Step {
                event: StepEvent::Log { line },
                ..
            } => self
                .log
                .push(format!("  {}", cuda_setup_core::i18n::render(&line, lang))),
            RunEvent::Finished { name, outcome, .. } => self.log.push(format!(
                "✓ {}: {}",
                step_title(lang, name),
                cuda_setup_core::i18n::render(&outcome.detail, lang)
            )),
            RunEvent::Failed {
                name, error, hint, ..
            } => self
                .log
                .push(format!("× {}: {error} ({hint})", step_title(lang, name))),
            _ => {}
        }
    }
}

pub struct Session {
    pub lang: Lang,
    pub mode: Mode,
    pub goal: Goal,
    /// What was on disk at start-up.
    pub existing: Existing,
    pub opts: Options,
    pub system: Detection,
    pub settings: Settings,
    /// Linux only: how to get the driver the recommendation needs.
    pub linux_driver: LinuxDriver,
    /// Derived from the facts, the goal and the settings; recomputed when they change.
    recommendation: Option<Recommendation>,
    pub prepare: Preparation,
    pub install: Install,
    pub cudnn: Cudnn,
    pub verify: Verify,
    pub torch: Torch,
    pub repair: Repair,
    /// Where the report went (or why it did not).
    pub saved: Option<Result<PathBuf, String>>,
    /// Where the tables' facts come from; `refreshing` while the background refresh runs.
    pub tables_line: Message,
    pub refreshing: bool,
    /// The wheels' PyPI index was set (on the Choose page or the command line): it no
    /// longer follows the language.
    pub pypi_chosen: bool,
    /// A worker thread's panic message, shown until the user moves to another page.
    pub crash: Option<String>,
}

impl Session {
    /// The session at start: the mode follows what is on disk (an install there: repair).
    pub fn new(opts: Options, lang: Lang, existing: Existing) -> Session {
        let pypi_chosen = opts.pypi_mirror.is_some();
        Session {
            lang,
            mode: if existing.found() {
                Mode::Repair
            } else {
                Mode::Setup
            },
            goal: opts.goal.unwrap_or_default(),
            existing,
            settings: Settings::new(&opts, lang),
            torch: Torch {
                python: opts
                    .python
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                mirror: default_pip_mirror(lang),
                ..Default::default()
            },
            tables_line: cuda_setup_core::refresh::tables_message(&opts.tables),
            opts,
            system: Detection::default(),
            linux_driver: LinuxDriver::default(),
            recommendation: None,
            prepare: Preparation::default(),
            install: Install::default(),
            cudnn: Cudnn::default(),
            verify: Verify::default(),
            repair: Repair::default(),
            saved: None,
            refreshing: false,
            pypi_chosen,
            crash: None,
        }
    }

    /// The wizard opened after the restart the driver asked for: `plan` waits in the
    /// journal. It is the plan from now on (its goal too), and the Install page continues
    /// it; the run skips the steps the journal says are done.
    pub fn resume_after_restart(&mut self, plan: Plan) {
        self.mode = Mode::Setup;
        self.goal = plan.goal;
        self.prepare = Preparation {
            running: false,
            result: Some(Ok(Box::new(Prepared {
                plan,
                inputs: None,
                checks: Vec::new(),
                free: Vec::new(),
            }))),
        };
        self.install = Install {
            resumed: true,
            ..Install::default()
        };
    }

    /// The recommendation for the facts, the goal and the settings (None before detection).
    pub fn recommendation(&self) -> Option<&Recommendation> {
        self.recommendation.as_ref()
    }

    /// The facts to recommend for: detection, then the overrides.
    pub fn facts(&self) -> Option<&Facts> {
        self.system.facts.as_ref()
    }

    /// The plan's choices. cuDNN has a page of its own, so the plan leaves it out.
    pub fn choices(&self) -> Choices {
        let s = &self.settings;
        Choices {
            pypi_index: s.pypi_index(),
            components: self.opts.components.clone(),
            cudnn: CudnnChoice::Skip,
            mirrors: s.mirror_list(),
            bundle: self.opts.bundle.clone(),
            with_driver: s.with_driver,
            skip_driver: s.skip_driver,
            ..Choices::new(s.method)
        }
        .with_connections(s.connections)
    }

    /// Who installs the driver the recommendation needs.
    pub fn driver_plan(&self) -> DriverPlan {
        let Some(rec) = &self.recommendation else {
            return DriverPlan::NotNeeded;
        };
        if rec.driver.action == DriverAction::None {
            return DriverPlan::NotNeeded;
        }
        match self.prepare.plan() {
            Some(p) if installs_driver(p) => DriverPlan::Planned,
            // Before the plan is made: what it will do.
            None if self.opts.target.os == Os::Windows
                && !self.settings.skip_driver
                && rec.driver.install.is_some() =>
            {
                DriverPlan::Planned
            }
            _ => DriverPlan::Yours,
        }
    }

    /// The pages this mode, goal and plan visit.
    pub fn steps(&self) -> &'static [Page] {
        let driver = self.prepare.plan().is_some_and(installs_driver);
        super::flow::flow(self.mode, self.goal, driver)
    }

    /// The toolkit folder the plan installs to (else the recommended toolkit's).
    pub fn toolkit_dir(&self) -> Option<PathBuf> {
        if let Some(plan) = self.prepare.plan() {
            for s in &plan.steps {
                if let Step::InstallToolkit(spec) = s {
                    return Some(spec.dir.clone());
                }
            }
        }
        let rec = self.recommendation.as_ref()?;
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

    /// The facts given instead of detected, as repair takes them.
    fn repair_overrides(&self) -> repair::Overrides {
        let o = &self.opts.overrides;
        repair::Overrides {
            gpu_cc: o.gpus.iter().map(|g| g.compute_capability).collect(),
            driver: o.driver.clone().flatten(),
        }
    }

    /// A new recommendation; on Linux, the driver advice for its minimum is asked of the
    /// worker when that minimum changed.
    #[must_use]
    fn recompute(&mut self) -> Vec<Command> {
        self.recommendation = self.system.facts.as_ref().map(|facts| {
            cuda_setup_core::recommend::recommend(
                &self.opts.tables,
                facts,
                &Request {
                    goal: self.goal,
                    cuda: self.settings.cuda_version(),
                    method: self.settings.method,
                },
            )
        });
        let Some(rec) = &self.recommendation else {
            return Vec::new();
        };
        let ld = &mut self.linux_driver;
        if self.opts.target.os != Os::Linux
            || rec.driver.action == DriverAction::None
            || (ld.asked && ld.minimum == rec.driver.minimum)
        {
            return Vec::new();
        }
        ld.asked = true;
        ld.running = true;
        ld.minimum = rec.driver.minimum.clone();
        ld.advice = None;
        vec![Command::LinuxDriverAdvice {
            minimum: rec.driver.minimum.clone(),
            last_branch: rec.driver.last_branch,
        }]
    }

    /// The plan and its run were made for other choices.
    fn drop_plan(&mut self) {
        self.prepare = Preparation::default();
        self.install = Install::default();
    }

    /// Applies what a page asked for; returns the work to hand to the worker.
    pub fn apply(&mut self, action: Action) -> Vec<Command> {
        match action {
            // The app's: which page shows is not the session's.
            Action::Next | Action::Back | Action::Go(_) => {}
            Action::SetLang(l) => {
                let before = self.lang;
                self.lang = l;
                if !self.torch.mirror_chosen {
                    self.torch.mirror = default_pip_mirror(l);
                }
                // The wheels' index follows the language until the user (or the command
                // line) set one, and until a plan was made with it (the recommendation
                // does not depend on it).
                if !self.pypi_chosen
                    && self.settings.pypi == default_pypi(before)
                    && self.prepare.result.is_none()
                    && !self.prepare.running
                {
                    self.settings.pypi = default_pypi(l).to_string();
                }
            }
            Action::SetMode(m) => self.mode = m,
            Action::ChooseGoal(g) => {
                if g != self.goal {
                    self.goal = g;
                    self.drop_plan();
                    return self.recompute();
                }
            }
            Action::SetSettings(s) => {
                if s != self.settings {
                    self.pypi_chosen |= s.pypi != self.settings.pypi;
                    // Another toolkit or method is another recommendation (wheels know
                    // more releases), and any setting another plan.
                    self.settings = s;
                    self.drop_plan();
                    return self.recompute();
                }
            }
            Action::Detect => return self.detect_again(),
            Action::Prepare => {
                let Some(rec) = self.recommendation.clone() else {
                    return Vec::new();
                };
                self.prepare = Preparation {
                    running: true,
                    result: None,
                };
                return vec![Command::Prepare {
                    rec: Box::new(rec),
                    choices: Box::new(self.choices()),
                }];
            }
            Action::StartInstall => {
                let Some(plan) = self.prepare.plan().cloned() else {
                    return Vec::new();
                };
                let cancel = Cancel::default();
                self.install.run = RunView::start(&plan, cancel.clone());
                return vec![Command::Run {
                    job: Job::Install,
                    plan: Box::new(plan),
                    cancel,
                }];
            }
            Action::CancelInstall => self.install.run.cancel(),
            Action::UseCudnnArchive(path) => return self.use_archive(path),
            Action::DownloadCudnn => {
                let Some(pick) = self.recommendation.as_ref().and_then(|r| r.cudnn.clone()) else {
                    return Vec::new();
                };
                self.cudnn.downloading = Some(Cancel::default());
                self.cudnn.download_progress = None;
                self.cudnn.download_error = None;
                // The plan's choices: the mirrors, connections and bundle of every plan.
                return vec![Command::PlanCudnnDownload {
                    pick: Box::new(pick),
                    choices: Box::new(self.choices()),
                }];
            }
            Action::CancelCudnnDownload => {
                if let Some(c) = &self.cudnn.downloading {
                    c.cancel();
                }
            }
            Action::InstallCudnn => {
                let (Some(archive), Some(toolkit_dir)) =
                    (self.cudnn.archive.clone(), self.toolkit_dir())
                else {
                    return Vec::new();
                };
                self.cudnn.installing = true;
                self.cudnn.extracted = None;
                self.cudnn.undone = None;
                let plan = plan::cudnn_install(&self.opts.target, &archive, &toolkit_dir);
                return vec![Command::Run {
                    job: Job::Cudnn,
                    plan: Box::new(plan),
                    cancel: Cancel::default(),
                }];
            }
            Action::SkipCudnn => self.cudnn.skipped = true,
            Action::UndoCudnn => {
                let Some(toolkit_dir) = self.toolkit_dir() else {
                    return Vec::new();
                };
                self.cudnn.undoing = true;
                return vec![Command::UninstallCudnn { toolkit_dir }];
            }
            Action::Verify => return vec![self.start_smoke(self.toolkit_dir())],
            Action::SetPython(p) => self.torch.python = p,
            Action::SetPipMirror(i) => {
                self.torch.mirror = i.min(PIP_MIRRORS.len() - 1);
                self.torch.mirror_chosen = true;
            }
            Action::RunPip(torch) => return self.run_pip(&torch),
            Action::CancelPip => self.torch.run.cancel(),
            Action::RunDoctor => return vec![self.start_doctor()],
            Action::CheckInstalled => return self.check_installed(),
            Action::Audit => {
                self.repair.auditing = true;
                return vec![Command::Audit {
                    overrides: self.repair_overrides(),
                }];
            }
            Action::Fix => {
                let Some(findings) = self.repair.findings.clone() else {
                    return Vec::new();
                };
                self.repair.before = Some(repair::problems(&findings));
                self.repair.fixing = true;
                self.repair.log.clear();
                return vec![Command::Fix {
                    overrides: self.repair_overrides(),
                    findings,
                }];
            }
            Action::PickFile(purpose) => return vec![Command::PickFile { purpose }],
            Action::Save {
                path,
                default_name,
                text,
            } => {
                return vec![Command::Save {
                    path,
                    default_name,
                    text,
                }];
            }
            Action::Open(path) => return vec![Command::Open(path)],
            Action::Restart { now } => {
                if self.install.restart_pending() {
                    self.install.restart = Some(None);
                    return vec![Command::Restart { now }];
                }
            }
        }
        Vec::new()
    }

    /// Validates `path` against the toolkit (nothing is copied yet).
    fn use_archive(&mut self, path: PathBuf) -> Vec<Command> {
        let Some(toolkit_dir) = self.toolkit_dir() else {
            return Vec::new();
        };
        let c = &mut self.cudnn;
        c.archive = Some(path.clone());
        c.check = None;
        c.installed = None;
        c.extracted = None;
        c.validating = true;
        vec![Command::ValidateCudnn {
            archive: path,
            toolkit_dir,
        }]
    }

    /// The cuDNN page's run (the download or the install, whichever runs): progress,
    /// then its report — a downloaded archive is checked next; an installed cuDNN is
    /// what its manifest says.
    fn cudnn_run(&mut self, e: RunEvent) -> Vec<Command> {
        let c = &mut self.cudnn;
        match e {
            RunEvent::Step {
                event:
                    StepEvent::Progress {
                        done,
                        total,
                        bytes_per_sec,
                        eta_secs,
                    },
                ..
            } => {
                if c.downloading.is_some() {
                    c.download_progress = Some((done, total, bytes_per_sec, eta_secs));
                } else {
                    c.extracted = Some((done, total.unwrap_or(done)));
                }
            }
            RunEvent::Done(r) => {
                c.log_file = r.log_file.clone();
                let failure = |step| {
                    r.failure
                        .clone()
                        .map(Box::new)
                        .unwrap_or_else(|| cancelled(step))
                };
                if c.downloading.take().is_some() {
                    match plan::cudnn_archive_of(&r.plan).filter(|_| r.ok()) {
                        Some(path) => return self.use_archive(path.to_path_buf()),
                        None => c.download_error = Some(failure(StepKind::DownloadCudnn)),
                    }
                } else if c.installing {
                    c.installing = false;
                    let dir = r.plan.steps.iter().find_map(|s| match s {
                        Step::InstallCudnn { cuda_dir, .. } => Some(cuda_dir.clone()),
                        _ => None,
                    });
                    c.installed = Some(if r.ok() {
                        dir.as_deref()
                            .map(cuda_setup_core::cudnn::txn::read_manifest)
                            .and_then(|m| m.transpose())
                            .map(|m| {
                                m.map(Box::new).map_err(|e| {
                                    Box::new(Failure::of(
                                        StepKind::InstallCudnn,
                                        &StepError::Cudnn(e),
                                    ))
                                })
                            })
                            .unwrap_or_else(|| Err(failure(StepKind::InstallCudnn)))
                    } else {
                        Err(failure(StepKind::InstallCudnn))
                    });
                    // cuDNN is on disk now: the pages show it, not what was there before.
                    if r.ok() {
                        return self.detect_again();
                    }
                }
            }
            _ => {}
        }
        Vec::new()
    }

    fn run_pip(&mut self, torch: &TorchPick) -> Vec<Command> {
        let Some(python) = self.torch.python_path() else {
            return Vec::new();
        };
        let args = torch.run_args(&[], self.torch.mirror().as_ref().map(|m| m.url.as_str()));
        let plan = Plan {
            format: 1,
            goal: Goal::Pytorch,
            os: self.opts.target.os,
            root: self.opts.target.root.clone(),
            toolkit: None,
            cudnn: None,
            torch_command: Some(torch.command.clone()),
            notes: Vec::new(),
            steps: vec![Step::InstallTorch { python, args }],
        };
        let cancel = Cancel::default();
        self.torch.run = RunView::start(&plan, cancel.clone());
        self.torch.doctor = None;
        vec![Command::Run {
            job: Job::Pip,
            plan: Box::new(plan),
            cancel,
        }]
    }

    /// Detection, again: after anything was installed, pages show what is there now. One
    /// already running saw the machine before the change: its answer is dropped.
    #[must_use]
    fn detect_again(&mut self) -> Vec<Command> {
        if self.system.running {
            self.system.stale = true;
            return Vec::new();
        }
        self.system.running = true;
        vec![Command::Detect]
    }

    /// The Python whose torch the checks examine: the one chosen, else the first that
    /// detection found with torch in it (a CUDA build first).
    fn torch_python(&self) -> Option<PathBuf> {
        if let Some(p) = self.torch.python_path() {
            return Some(p);
        }
        let pythons = &self.system.report.as_ref()?.pythons;
        let with_torch = |cuda: bool| {
            pythons
                .iter()
                .find(|p| p.torch.as_ref().is_some_and(|t| !cuda || !t.is_cpu_build()))
        };
        with_torch(true)
            .or_else(|| with_torch(false))
            .map(|p| p.path.clone())
    }

    /// The toolkit the smoke test loads in repair mode: the one PATH finds, else the
    /// newest detected, else the newest installed.
    fn installed_toolkit_dir(&self) -> Option<PathBuf> {
        let report = self.system.report.as_deref();
        report
            .and_then(|r| r.active_toolkit().or(r.toolkits.last()))
            .map(|t| t.path.clone())
            .or_else(|| self.existing.toolkits.last().map(|t| t.dir.clone()))
    }

    /// Repair mode's end: the same checks as setup's — the doctor on the detected torch,
    /// then the smoke test for the developer goal — on what detection finds after the
    /// fixes (they wait for a detection under way).
    #[must_use]
    fn check_installed(&mut self) -> Vec<Command> {
        if self.system.running {
            self.repair.checks_waiting = true;
            return Vec::new();
        }
        self.repair.checks_waiting = false;
        if self.torch.python_path().is_none()
            && let Some(p) = self.torch_python()
        {
            self.torch.python = p.display().to_string();
        }
        self.verify = Verify::default();
        self.repair.smoke_next = self.goal == Goal::Developer;
        vec![self.start_doctor()]
    }

    fn start_smoke(&mut self, cuda_dir: Option<PathBuf>) -> Command {
        self.verify = Verify {
            running: true,
            ..Default::default()
        };
        Command::Smoke { cuda_dir }
    }

    fn start_doctor(&mut self) -> Command {
        self.torch.doctor_running = true;
        self.torch.samples.clear();
        self.torch.monitor_error = None;
        Command::Doctor {
            python: self.torch.python_path(),
            mirror: self.torch.mirror(),
            gpu: self.gpu_facts(),
        }
    }

    /// Applies what the worker reported; returns the work that follows from it.
    pub fn on_event(&mut self, e: Event) -> Vec<Command> {
        match e {
            Event::Detected(r) => {
                if std::mem::take(&mut self.system.stale) {
                    // Started before the last change: what it saw is gone.
                    return vec![Command::Detect];
                }
                let mut facts = r.facts(self.opts.target.os);
                self.opts.overrides.apply(&mut facts);
                self.system = Detection {
                    running: false,
                    stale: false,
                    report: Some(r),
                    facts: Some(facts),
                };
                // A few folder reads: what the first page and Done say is installed.
                self.existing = repair::existing(&self.opts.target);
                let mut cmds = self.recompute();
                if self.repair.checks_waiting {
                    cmds.extend(self.check_installed());
                }
                return cmds;
            }
            Event::LinuxDriverAdvice { minimum, advice } => {
                // An answer for another minimum is stale: a newer question is on its way.
                if minimum == self.linux_driver.minimum {
                    self.linux_driver.running = false;
                    self.linux_driver.advice = advice.map(|a| *a);
                }
            }
            Event::Restarting(r) => self.install.restart = Some(Some(r)),
            Event::Prepared(r) => {
                self.prepare.running = false;
                self.prepare.result = Some(r);
            }
            Event::Run(Job::Install, e) => {
                let finished = matches!(&e, RunEvent::Done(_));
                self.install.run.apply(e, self.lang);
                // A failed run may have installed some of it (the driver) too.
                if finished {
                    return self.detect_again();
                }
            }
            Event::Run(Job::Pip, e) => {
                let finished = matches!(&e, RunEvent::Done(_));
                let finished_ok = matches!(&e, RunEvent::Done(r) if r.ok());
                self.torch.run.apply(e, self.lang);
                let mut cmds = Vec::new();
                if finished_ok {
                    cmds.push(self.start_doctor());
                }
                if finished {
                    cmds.extend(self.detect_again());
                }
                return cmds;
            }
            Event::Run(Job::Repair, e) => self.repair.log_event(e, self.lang),
            Event::Picked(Pick::CudnnArchive, Some(p)) => return self.use_archive(p),
            Event::Picked(Pick::Python, Some(p)) => self.torch.python = p.display().to_string(),
            Event::Picked(_, None) => {}
            Event::CudnnValidated(r) => {
                self.cudnn.validating = false;
                self.cudnn.check = Some(r);
            }
            Event::CudnnPlanned(r) => match (r, &self.cudnn.downloading) {
                // Cancelled while the plan was made: it never runs.
                (Ok(_), Some(c)) if c.is_cancelled() => {
                    self.cudnn.downloading = None;
                    self.cudnn.download_error = Some(cancelled(StepKind::DownloadCudnn));
                }
                (Ok(plan), Some(c)) => {
                    return vec![Command::Run {
                        job: Job::Cudnn,
                        plan,
                        cancel: c.clone(),
                    }];
                }
                (Ok(_), None) => {}
                (Err(f), _) => {
                    self.cudnn.downloading = None;
                    self.cudnn.download_error = Some(f);
                }
            },
            Event::Run(Job::Cudnn, e) => return self.cudnn_run(e),
            Event::CudnnUninstalled(r) => {
                self.cudnn.undoing = false;
                let changed = r.is_ok();
                if changed {
                    self.cudnn.installed = None;
                }
                self.cudnn.undone = Some(r.map_err(|e| {
                    Box::new(Failure::of(StepKind::InstallCudnn, &StepError::Cudnn(e)))
                }));
                if changed {
                    return self.detect_again();
                }
            }
            // The doctor's check or the smoke test, whichever runs.
            Event::Sample(s) if self.torch.doctor_running => self.torch.samples.push(s),
            Event::MonitorUnavailable(why) if self.torch.doctor_running => {
                self.torch.monitor_error = Some(why)
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
                if std::mem::take(&mut self.repair.smoke_next) {
                    return vec![self.start_smoke(self.installed_toolkit_dir())];
                }
            }
            Event::Saved(r) => self.saved = Some(r),
            Event::Audited(f) => {
                self.repair.auditing = false;
                self.repair.findings = Some(f);
            }
            Event::Fixed(r) => {
                self.repair.fixing = false;
                self.repair.findings = Some(r.after.clone());
                let changed = !r.runs.is_empty();
                self.repair.fixed = Some(r);
                if changed {
                    // The checks judged the machine before the fixes.
                    self.torch.doctor = None;
                    self.verify = Verify::default();
                    return self.detect_again();
                }
            }
            Event::Crashed { what, message } => self.crashed(what, message),
            Event::Refreshed(r) => {
                self.refreshing = false;
                match r {
                    Ok(o) => {
                        self.tables_line = cuda_setup_core::refresh::outcome_message(&o);
                        self.opts.tables = o.tables;
                        // The recommendation comes from the new tables.
                        return self.recompute();
                    }
                    Err(e) => {
                        self.tables_line = cuda_setup_core::msg!("refresh_rejected", error = e);
                    }
                }
            }
        }
        Vec::new()
    }

    /// A worker thread died (a bug of ours): whatever waited for it stops waiting, shows
    /// the failure, and Back works again.
    fn crashed(&mut self, what: Crashed, message: String) {
        match what {
            Crashed::Detect => {
                self.system.running = false;
                self.system.stale = false;
                self.repair.checks_waiting = false;
            }
            Crashed::Prepare => {
                self.prepare.running = false;
                self.prepare.result = Some(Err(message.clone()));
            }
            // The worker sent the run's failed report before this.
            Crashed::Run(Job::Install | Job::Pip | Job::Cudnn) => {}
            Crashed::Run(Job::Repair) | Crashed::Fix => self.repair.fixing = false,
            Crashed::ValidateCudnn => self.cudnn.validating = false,
            Crashed::PlanCudnn => {
                self.cudnn.downloading = None;
                self.cudnn.download_error = Some(Box::new(Failure::internal(&message)));
            }
            Crashed::UninstallCudnn => {
                self.cudnn.undoing = false;
                self.cudnn.undone = Some(Err(Box::new(Failure::internal(&message))));
            }
            Crashed::Smoke => self.verify.running = false,
            Crashed::Doctor => {
                self.torch.doctor_running = false;
                self.repair.smoke_next = false;
            }
            Crashed::Save => self.saved = Some(Err(message.clone())),
            Crashed::Audit => self.repair.auditing = false,
            Crashed::Refresh => self.refreshing = false,
            Crashed::LinuxDriver => self.linux_driver.running = false,
            Crashed::Restart => self.install.restart = Some(Some(Err(message.clone()))),
            Crashed::Other => {}
        }
        self.crash = Some(message);
    }
}

/// The plan installs the driver (drvcore's `install_driver` step).
pub fn installs_driver(plan: &Plan) -> bool {
    plan.steps.iter().any(|s| s.kind().is_driver())
}

/// A job the user cancelled, as its failure.
fn cancelled(step: StepKind) -> Box<Failure> {
    Box::new(Failure::of(step, &StepError::Cancelled))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::options::Overrides;
    use cuda_setup_core::compat::{Os, Tables};
    use cuda_setup_core::platform::Host;
    use cuda_setup_core::recommend::GpuFact;

    /// A session for a Windows machine in `root` (an RTX 3060 and driver 522.06 given,
    /// CUDA 11.8 asked for), after a real detection of that (empty) root.
    fn detected(root: &std::path::Path) -> Session {
        let mut o = Options::sandbox(Tables::embedded().unwrap(), Os::Windows, root);
        o.host = Host::sandbox(Os::Windows, root, Default::default());
        o.overrides = Overrides {
            gpus: vec![GpuFact {
                name: Some("NVIDIA GeForce RTX 3060".into()),
                compute_capability: "8.6".parse().unwrap(),
            }],
            driver: Some(Some("522.06".parse().unwrap())),
            driver_cuda: None,
            python: Some("3.11".parse().unwrap()),
            no_gpu: false,
        };
        o.cuda = Some("11.8".parse().unwrap());
        let report = cuda_setup_core::detect::detect(&o.host, &o.tables, o.deadlines);
        let mut s = Session::new(o, Lang::En, Existing::default());
        assert!(s.recommendation().is_none(), "nothing to recommend for yet");
        assert!(s.on_event(Event::Detected(Box::new(report))).is_empty());
        s
    }

    /// Asks for the plan, builds it as the worker would, and reports it back.
    fn prepared(s: &mut Session) {
        let cmds = s.apply(Action::Prepare);
        let [Command::Prepare { rec, choices }] = cmds.as_slice() else {
            panic!("one Prepare command");
        };
        assert!(s.prepare.running);
        let plan = cuda_setup_core::plan::make(&s.opts.target, rec, choices).unwrap();
        s.on_event(Event::Prepared(Ok(Box::new(Prepared {
            plan,
            inputs: None,
            checks: Vec::new(),
            free: Vec::new(),
        }))));
        assert!(s.prepare.ready());
    }

    fn rec_json(s: &Session) -> serde_json::Value {
        serde_json::to_value(s.recommendation()).unwrap()
    }

    #[test]
    fn a_new_goal_recomputes_the_recommendation_and_drops_the_plan() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = detected(dir.path());
        assert_eq!(s.goal, Goal::Pytorch);
        assert_eq!(s.recommendation().unwrap().goal, Goal::Pytorch);
        assert!(s.recommendation().unwrap().toolkit.is_none());
        prepared(&mut s);

        // The goal it already has: nothing is dropped.
        assert!(s.apply(Action::ChooseGoal(Goal::Pytorch)).is_empty());
        assert!(s.prepare.plan().is_some());

        assert!(s.apply(Action::ChooseGoal(Goal::Developer)).is_empty());
        let rec = s.recommendation().unwrap();
        assert_eq!(rec.goal, Goal::Developer);
        let tk = rec.toolkit.as_ref().expect("a toolkit for developers");
        assert_eq!(tk.version.major_minor().to_string(), "11.8");
        assert!(s.prepare.result.is_none() && !s.prepare.running);
        assert!(!s.install.run.started);
        // Without a plan, the toolkit folder is the recommended toolkit's.
        assert!(
            s.toolkit_dir()
                .is_some_and(|d| d.ends_with("NVIDIA GPU Computing Toolkit/CUDA/v11.8"))
        );
    }

    #[test]
    fn new_settings_recompute_and_drop_the_plan_unchanged_ones_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = detected(dir.path());
        prepared(&mut s);
        let same = s.settings.clone();
        assert!(s.apply(Action::SetSettings(same)).is_empty());
        assert!(
            s.prepare.plan().is_some(),
            "the same settings keep the plan"
        );

        s.apply(Action::ChooseGoal(Goal::Developer));
        let before = rec_json(&s);
        let other = Settings {
            cuda: "12".into(),
            ..s.settings.clone()
        };
        s.apply(Action::SetSettings(other));
        assert_eq!(s.settings.cuda_version(), Some("12".parse().unwrap()));
        assert_ne!(rec_json(&s), before, "another toolkit asked for");
        assert_ne!(
            s.recommendation()
                .and_then(|r| r.toolkit.as_ref())
                .map(|t| t.version.major()),
            Some(11)
        );
        assert!(s.prepare.result.is_none());
    }

    #[test]
    fn a_language_switch_keeps_everything() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = detected(dir.path());
        prepared(&mut s);
        let started = s.apply(Action::StartInstall);
        assert!(matches!(
            started.as_slice(),
            [Command::Run {
                job: Job::Install,
                ..
            }]
        ));
        assert!(s.install.run.running());
        let rec = rec_json(&s);

        assert!(s.apply(Action::SetLang(Lang::Zh)).is_empty());
        assert_eq!(s.lang, Lang::Zh);
        assert_eq!(rec_json(&s), rec);
        assert!(s.prepare.plan().is_some());
        assert!(s.install.run.running(), "the run goes on");
        assert!(s.system.report.is_some() && s.facts().is_some());
    }

    #[test]
    fn on_linux_a_driver_to_install_asks_the_worker_for_the_advice_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = Options::sandbox(Tables::embedded().unwrap(), Os::Linux, dir.path());
        o.host = Host::sandbox(Os::Linux, dir.path(), Default::default());
        o.overrides = Overrides {
            gpus: vec![GpuFact {
                name: Some("NVIDIA GeForce RTX 3060".into()),
                compute_capability: "8.6".parse().unwrap(),
            }],
            driver: Some(None),
            driver_cuda: None,
            python: Some("3.12".parse().unwrap()),
            no_gpu: false,
        };
        let report = cuda_setup_core::detect::detect(&o.host, &o.tables, o.deadlines);
        let mut s = Session::new(o, Lang::En, Existing::default());
        let cmds = s.on_event(Event::Detected(Box::new(report)));
        let minimum = s.recommendation().unwrap().driver.minimum.clone();
        assert!(minimum.is_some());
        assert!(matches!(
            cmds.as_slice(),
            [Command::LinuxDriverAdvice { minimum: m, .. }] if *m == minimum
        ));
        assert!(s.linux_driver.running);
        assert_eq!(
            s.driver_plan(),
            DriverPlan::Yours,
            "no installer of ours on Linux"
        );
        // An answer for another minimum is stale and changes nothing.
        s.on_event(Event::LinuxDriverAdvice {
            minimum: Some("1.0".parse().unwrap()),
            advice: None,
        });
        assert!(s.linux_driver.running);
        s.on_event(Event::LinuxDriverAdvice {
            minimum: minimum.clone(),
            advice: None,
        });
        assert!(!s.linux_driver.running);
        // The same minimum again (another language, the same goal): not asked twice.
        let same = s.settings.clone();
        assert!(s.apply(Action::SetSettings(same)).is_empty());
        let mirrors = Settings {
            mirrors: "http://127.0.0.1:1".into(),
            ..s.settings.clone()
        };
        assert!(
            s.apply(Action::SetSettings(mirrors)).is_empty(),
            "the minimum did not change"
        );
    }

    /// Anything installed — an install run, cuDNN, pip, repair's fixes — asks the worker
    /// to detect again; an answer from a detection that started before the change is
    /// dropped for a new one, so pages never show what was there before.
    #[test]
    fn every_change_detects_again_and_an_older_answer_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = detected(dir.path());
        let report = || {
            let o = &s_opts(dir.path());
            Box::new(cuda_setup_core::detect::detect(
                &o.host,
                &o.tables,
                o.deadlines,
            ))
        };
        prepared(&mut s);
        let plan = s.prepare.plan().cloned().unwrap();
        s.apply(Action::StartInstall);
        let done = cuda_setup_core::run::RunReport::crashed(&plan, "test");
        let cmds = s.on_event(Event::Run(Job::Install, RunEvent::Done(Box::new(done))));
        assert!(
            matches!(cmds.as_slice(), [Command::Detect]),
            "install: {} commands",
            cmds.len()
        );
        assert!(s.system.running);

        // cuDNN lands while that detection runs (its install run ends well): the
        // detection's answer is already old.
        s.cudnn.installing = true;
        let cudnn_plan = Plan {
            steps: Vec::new(),
            ..plan.clone()
        };
        let mut landed = cuda_setup_core::run::RunReport::crashed(&cudnn_plan, "t");
        landed.failure = None;
        assert!(
            s.on_event(Event::Run(Job::Cudnn, RunEvent::Done(Box::new(landed))))
                .is_empty()
        );
        let old = s.system.report.as_ref().unwrap().elapsed_ms;
        let mut stale = report();
        stale.elapsed_ms = old + 1_000_000;
        let cmds = s.on_event(Event::Detected(stale));
        assert!(
            matches!(cmds.as_slice(), [Command::Detect]),
            "again: {} commands",
            cmds.len()
        );
        assert!(s.system.running);
        assert_eq!(s.system.report.as_ref().unwrap().elapsed_ms, old, "dropped");
        s.on_event(Event::Detected(report()));
        assert!(
            !s.system.running && s.system.report.as_ref().unwrap().elapsed_ms != old + 1_000_000
        );

        // pip, then repair's fixes.
        let pip = Plan {
            steps: Vec::new(),
            ..plan.clone()
        };
        let cmds = s.on_event(Event::Run(
            Job::Pip,
            RunEvent::Done(Box::new(cuda_setup_core::run::RunReport::crashed(
                &pip, "t",
            ))),
        ));
        assert!(
            matches!(cmds.as_slice(), [Command::Detect]),
            "pip: {} commands",
            cmds.len()
        );
        s.on_event(Event::Detected(report()));
        let fixed = FixResult {
            runs: vec![cuda_setup_core::run::RunReport::crashed(&plan, "t")],
            after: Vec::new(),
        };
        let cmds = s.on_event(Event::Fixed(Box::new(fixed)));
        assert!(
            matches!(cmds.as_slice(), [Command::Detect]),
            "fix: {} commands",
            cmds.len()
        );
    }

    /// The options [`detected`] makes, for another detection of the same root.
    fn s_opts(root: &std::path::Path) -> Options {
        let mut o = Options::sandbox(Tables::embedded().unwrap(), Os::Windows, root);
        o.host = Host::sandbox(Os::Windows, root, Default::default());
        o
    }

    #[test]
    fn events_update_results_and_start_what_follows() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = detected(dir.path());
        // A picked Python is the one pip and the doctor use.
        s.on_event(Event::Picked(
            Pick::Python,
            Some("/opt/py/bin/python3".into()),
        ));
        assert_eq!(s.torch.python, "/opt/py/bin/python3");
        let torch = s.recommendation().unwrap().torch.clone().unwrap();
        let cmds = s.apply(Action::RunPip(Box::new(torch)));
        let [Command::Run { plan, .. }] = cmds.as_slice() else {
            panic!("one Run command");
        };
        assert!(matches!(
            &plan.steps[..],
            [Step::InstallTorch { python, .. }] if python.ends_with("python3")
        ));
        // pip ends (here: its thread died), so no doctor, only detection again (a failed
        // pip may have installed some packages); the page stops waiting.
        let failed = cuda_setup_core::run::RunReport::crashed(plan, "test");
        assert!(matches!(
            s.on_event(Event::Run(Job::Pip, RunEvent::Done(Box::new(failed))))
                .as_slice(),
            [Command::Detect]
        ));
        assert!(!s.torch.busy());
        // A worker that died says so until the user moves on.
        s.on_event(Event::Crashed {
            what: Crashed::Doctor,
            message: "boom".into(),
        });
        assert_eq!(s.crash.as_deref(), Some("boom"));
        assert!(!s.torch.doctor_running);
    }
}
