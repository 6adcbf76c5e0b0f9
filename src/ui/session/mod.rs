//! The wizard's session: everything the pages read — the language, the mode and goal, the
//! detection report and the facts from it, the recommendation, the plan, and what each
//! job did (install, cuDNN, smoke test, pip and the doctor, repair). Pages draw from a
//! `&Session` and return [`Action`]s; [`Session::apply`] is the one place that changes it,
//! and it invalidates what a change makes stale (a new goal: a new recommendation, no
//! plan). Worker events come in through [`Session::on_event`]. Both answer with the
//! worker [`Command`]s to submit, so the session itself starts no thread and tests drive
//! it directly. It knows no page module (pages depend on it, never the other way round).
//!
//! Every background job is a [`Job`] (idle, running with its cancel, done with its
//! result), named by the [`JobId`] its commands and events carry: a worker thread that
//! dies ends exactly its job, with the error. One module per area: `settings`,
//! `detection`, `install` (the plan, the run, the restart), `cudnn`, `torch` (pip),
//! `checks` (the smoke test, the doctor), `repair`. Pages read through accessors.

mod checks;
mod cudnn;
mod detection;
mod guard;
mod install;
mod repair;
mod settings;
mod torch;
mod uninstall;

use std::path::PathBuf;

use cuda_setup_core::i18n::Lang;
use cuda_setup_core::message::Message;
use cuda_setup_core::plan::{Choices, CudnnChoice};
use cuda_setup_core::recommend::{Facts, Goal, Recommendation, TorchPick};
use cuda_setup_core::repair::Existing;
use cuda_setup_core::steps::Step;
use cuda_setup_core::verify::doctor;

use super::flow::{Mode, Page};
use super::job::{Job, Status};
use super::options::Options;
use super::worker::{Command, Event, JobId, Pick};

pub use checks::Verify;
pub use cudnn::{CheckAnswer, Cudnn};
pub use detection::{Detection, LinuxDriver};
pub use guard::{Confirm, Guard, Said};
pub use install::{DriverPlan, Install, Preparation, installs_driver};
pub use repair::Repair;
pub use settings::{
    PIP_MIRRORS, PypiChoice, Settings, default_pip_mirror, default_pypi, pip_mirror,
    torch_auto_default, torch_mirror_key,
};
pub use torch::Torch;

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
    /// Update an old driver that works, or keep it (#32): the core re-plans.
    ChooseDriver(cuda_setup_core::recommend::DriverPath),
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
    /// The PyPI index for the other packages measured when pip runs (#34).
    SetPipAuto,
    /// PyTorch's wheels from the fastest measured of its server and mirrors (true), or
    /// from the index the page names (false) (#34).
    SetTorchAuto(bool),
    /// pip installs this wheel into the chosen Python; the doctor follows.
    RunPip(Box<TorchPick>),
    CancelPip,
    RunDoctor,
    /// Repair mode's end: the checks setup runs — the doctor on the torch detection found,
    /// the smoke test where the goal needs it — so Done has reports to judge.
    CheckInstalled,
    /// The chosen Python's guard of its verified PyTorch (#33).
    GuardStatus,
    /// The guard's switch: on or off (a system Python asks first).
    GuardSwitch(bool),
    /// The answer to the system Python's question.
    GuardConfirm(bool),
    /// Put the verified PyTorch back into this Python, then check it.
    RestoreTorch(PathBuf),
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
    /// Windows Update's driver policy on (true) or back (false) (#33).
    DriverPolicy(bool),
    /// "Undo what cuda-setup changed": the plan, to confirm (#35).
    PlanUninstall,
    /// The confirmed plan runs.
    Uninstall,
    /// The confirmation closed: nothing changes.
    CancelUninstall,
}

pub struct Session {
    pub lang: Lang,
    pub mode: Mode,
    pub goal: Goal,
    /// What was on disk at start-up.
    pub existing: Existing,
    pub opts: Options,
    pub settings: Settings,
    system: Detection,
    /// Linux only: how to get the driver the recommendation needs.
    linux_driver: LinuxDriver,
    /// Derived from the facts, the goal and the settings; recomputed when they change.
    recommendation: Option<Recommendation>,
    prepare: Preparation,
    install: Install,
    cudnn: Cudnn,
    verify: Verify,
    torch: Torch,
    repair: Repair,
    guard: Guard,
    /// The report written (where), or why not (empty: the user closed the dialog).
    saved: Job<Result<PathBuf, String>>,
    /// Where the tables' facts come from; the background refresh that may change them.
    pub tables_line: Message,
    refresh: Job<Result<(), String>>,
    /// The wheels' PyPI index was set (on the Choose page or the command line): it no
    /// longer follows the language.
    pub pypi_chosen: bool,
    /// A worker thread's panic message, shown until the user moves to another page.
    crash: Option<String>,
    /// The driver record and what the machine showed beside the last detection (#33).
    driver_watch: Option<cuda_setup_core::driverwatch::Observed>,
    /// The driver policy switched from the Repair page: its state after, or why not.
    driver_policy: Job<Result<Box<cuda_setup_core::driverwatch::policy::PolicyStatus>, String>>,
    /// Undoing what cuda-setup changed (#35).
    uninstall: uninstall::Uninstall,
}

impl Session {
    /// This run has administrator rights: the guard only reports here (the core refuses
    /// to run pip in the user's Python as administrator).
    pub fn elevated(&self) -> bool {
        self.opts.target.elevated
    }

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
                torch_auto: torch_auto_default(lang),
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
            guard: Guard::default(),
            saved: Job::Idle,
            refresh: Job::Idle,
            pypi_chosen,
            crash: None,
            driver_watch: None,
            driver_policy: Job::Idle,
            uninstall: uninstall::Uninstall::default(),
        }
    }

    /// The driver policy's switch from the Repair page (#33).
    pub fn driver_policy(
        &self,
    ) -> &Job<Result<Box<cuda_setup_core::driverwatch::policy::PolicyStatus>, String>> {
        &self.driver_policy
    }

    /// What changed since the driver passed the GPU check (#33): the core's judgement of
    /// the record against the facts (overrides applied) and Device Manager's code.
    pub fn driver_drift(&self) -> Option<cuda_setup_core::driverwatch::Drift> {
        let observed = self.driver_watch.as_ref()?;
        let facts = self.system.facts()?;
        let code = self.system.report().and_then(|r| {
            r.nvidia_gpus()
                .find_map(|g| g.problem.as_ref().and_then(|p| p.code))
        });
        cuda_setup_core::driverwatch::judge(
            self.opts.target.os,
            observed,
            facts.driver.as_ref(),
            code,
        )
    }

    /// Detection: its job, the last report, the facts.
    pub fn system(&self) -> &Detection {
        &self.system
    }

    pub fn linux_driver(&self) -> &LinuxDriver {
        &self.linux_driver
    }

    pub fn prepare(&self) -> &Preparation {
        &self.prepare
    }

    pub fn install(&self) -> &Install {
        &self.install
    }

    pub fn cudnn(&self) -> &Cudnn {
        &self.cudnn
    }

    /// The smoke test.
    pub fn verify(&self) -> &Verify {
        &self.verify
    }

    /// PyTorch: pip's run and the doctor.
    pub fn torch(&self) -> &Torch {
        &self.torch
    }

    pub fn repair(&self) -> &Repair {
        &self.repair
    }

    /// Where the report went, or why it did not (once a save ended).
    pub fn saved(&self) -> Option<&Result<PathBuf, String>> {
        self.saved.done()
    }

    /// The background refresh of the tables runs.
    pub fn refreshing(&self) -> bool {
        self.refresh.is_running()
    }

    /// A worker thread's panic, until the user moves to another page.
    pub fn crash(&self) -> Option<&str> {
        self.crash.as_deref()
    }

    /// The user moved on: the crash note goes with the page.
    pub fn clear_crash(&mut self) {
        self.crash = None;
    }

    /// Where job `id` is: idle, running, done, or done with an error.
    pub fn status(&self, id: JobId) -> Status {
        match id {
            JobId::Detect => self.system.status(),
            JobId::LinuxDriver => self.linux_driver.status(),
            JobId::Refresh => self.refresh.status(),
            JobId::Prepare => self.prepare.status(),
            JobId::Install => self.install.run.status(),
            JobId::Restart => self.install.restart.status(),
            JobId::DriverPolicy => self.driver_policy.status(),
            JobId::PlanUninstall | JobId::Uninstall => self.uninstall.status(id),
            JobId::CudnnCheck | JobId::CudnnDownload | JobId::CudnnInstall | JobId::CudnnUndo => {
                self.cudnn.status(id)
            }
            JobId::Smoke => self.verify.status(),
            JobId::Doctor => self.torch.doctor_status(),
            JobId::Pip => self.torch.run.status(),
            JobId::Audit => self.repair.audit_status(),
            JobId::Fix => self.repair.fix_status(),
            JobId::Save => self.saved.status(),
            JobId::Guard => self.guard.status_job(),
            JobId::Restore => self.guard.restore_status(),
        }
    }

    /// The recommendation for the facts, the goal and the settings (None before detection).
    pub fn recommendation(&self) -> Option<&Recommendation> {
        self.recommendation.as_ref()
    }

    /// The facts to recommend for: detection, then the overrides.
    pub fn facts(&self) -> Option<&Facts> {
        self.system.facts()
    }

    /// The plan's choices. cuDNN has a page of its own, so the plan leaves it out.
    pub fn choices(&self) -> Choices {
        let s = &self.settings;
        Choices {
            pypi_index: s.pypi_index(),
            pypi_auto: s.pypi == PypiChoice::Auto,
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

    /// The pages this mode, goal and plan visit. Before the plan is made, what it will
    /// do: a driver the plan installs (none found, say) puts its page in the step bar from
    /// the start, so the bar does not grow a step under the user.
    pub fn steps(&self) -> &'static [Page] {
        let driver = match self.prepare.plan() {
            Some(plan) => installs_driver(plan),
            None => self.driver_plan() == DriverPlan::Planned,
        };
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
        self.facts()
            .map(cuda_setup_core::repair::gpu_facts)
            .unwrap_or_default()
    }

    /// Applies what a page asked for; returns the work to hand to the worker.
    pub fn apply(&mut self, action: Action) -> Vec<Command> {
        match action {
            // The app's: which page shows is not the session's.
            Action::Next | Action::Back | Action::Go(_) => Vec::new(),
            Action::SetLang(l) => {
                self.set_lang(l);
                Vec::new()
            }
            Action::SetMode(m) => {
                self.mode = m;
                Vec::new()
            }
            Action::ChooseGoal(g) => self.choose_goal(g),
            Action::SetSettings(s) => self.set_settings(s),
            Action::ChooseDriver(p) => self.choose_driver(p),
            Action::Detect => self.detect_again(),
            Action::Prepare => self.start_prepare(),
            Action::StartInstall => self.start_install(),
            Action::CancelInstall => {
                self.install.run.cancel();
                Vec::new()
            }
            Action::UseCudnnArchive(path) => self.use_archive(path),
            Action::DownloadCudnn => self.download_cudnn(),
            Action::CancelCudnnDownload => {
                self.cudnn.download.cancel();
                Vec::new()
            }
            Action::InstallCudnn => self.install_cudnn(),
            Action::SkipCudnn => {
                self.cudnn.skipped = true;
                Vec::new()
            }
            Action::UndoCudnn => self.undo_cudnn(),
            Action::Verify => vec![self.start_verify()],
            Action::SetPython(p) => {
                self.torch.python = p;
                Vec::new()
            }
            Action::SetPipMirror(i) => {
                self.set_pip_mirror(i);
                Vec::new()
            }
            Action::SetPipAuto => {
                self.torch.pypi_auto = true;
                self.torch.mirror_chosen = true;
                Vec::new()
            }
            Action::SetTorchAuto(on) => {
                self.torch.torch_auto = on;
                self.torch.torch_auto_chosen = true;
                Vec::new()
            }
            Action::RunPip(torch) => self.run_pip(&torch),
            Action::CancelPip => {
                self.torch.run.cancel();
                Vec::new()
            }
            Action::RunDoctor => vec![self.start_doctor()],
            Action::CheckInstalled => self.check_installed(),
            Action::GuardStatus => self.guard_status(),
            Action::GuardSwitch(on) => self.guard_switch(on),
            Action::GuardConfirm(yes) => self.guard_confirm(yes),
            Action::RestoreTorch(python) => self.restore_torch(python),
            Action::Audit => self.audit(),
            Action::Fix => self.fix(),
            Action::PickFile(purpose) => vec![Command::PickFile { purpose }],
            Action::Save {
                path,
                default_name,
                text,
            } => {
                self.saved = Job::started();
                vec![Command::Save {
                    path,
                    default_name,
                    text,
                }]
            }
            Action::Open(path) => vec![Command::Open(path)],
            Action::Restart { now } => self.restart(now),
            Action::DriverPolicy(on) => {
                self.driver_policy = Job::started();
                vec![Command::DriverPolicy { on }]
            }
            Action::PlanUninstall => self.plan_uninstall(),
            Action::Uninstall => self.run_uninstall(),
            Action::CancelUninstall => {
                self.cancel_uninstall();
                Vec::new()
            }
        }
    }

    /// Applies what the worker reported; returns the work that follows from it.
    pub fn on_event(&mut self, e: Event) -> Vec<Command> {
        match e {
            Event::Detected(r, distro) => return self.detected(r, distro),
            Event::Existing(e) => self.existing = *e,
            Event::DriverWatch(o) => self.driver_watch = Some(*o),
            Event::LinuxDriverAdvice {
                minimum,
                branch,
                advice,
            } => self.linux_driver_advice(minimum, branch, advice),
            Event::Restarting(r) => self.install.restart.finish(r),
            Event::DriverPolicy(r) => self.driver_policy.finish(r),
            Event::UninstallPlanned(r) => self.uninstall.plan.finish(r),
            Event::UninstallProgress { done, total } => self.uninstall.progress = (done, total),
            Event::Uninstalled(r) => return self.uninstalled(r),
            Event::Prepared(r) => self.prepare.job.finish(r),
            Event::Run(JobId::Install, e) => return self.install_event(e),
            Event::Run(JobId::Pip, e) => return self.pip_event(e),
            Event::Run(JobId::Fix, e) => self.fix_event(e),
            Event::Run(JobId::CudnnDownload, e) => return self.download_event(e),
            Event::Run(JobId::CudnnInstall, e) => return self.install_cudnn_event(e),
            Event::Run(JobId::Restore, e) => return self.restore_event(e),
            // No other job runs a plan.
            Event::Run(..) => {}
            Event::Picked(Pick::CudnnArchive, Some(p)) => return self.use_archive(p),
            Event::Picked(Pick::Python, Some(p)) => self.torch.python = p.display().to_string(),
            Event::Picked(_, None) => {}
            Event::CudnnValidated(r) => return self.checked(r),
            Event::CudnnPlanned(r) => return self.cudnn_planned(r),
            Event::CudnnUninstalled(r) => return self.cudnn_uninstalled(r),
            // The doctor's check or the smoke test, whichever runs.
            Event::Sample(s) => self.sampled(Ok(s)),
            Event::MonitorUnavailable(why) => self.sampled(Err(why)),
            Event::Smoke(r) => self.smoke_done(r),
            Event::Doctor(r) => {
                self.doctor_done(r);
                // The doctor may have recorded and guarded the build (#33): the page that
                // shows the guard asks again.
                self.guard.status_for = None;
            }
            Event::Swaps(s) => self.guard.swaps = s,
            Event::Guard(a) => self.guard_answer(*a),
            Event::RestorePlanned(python, r) => return self.restore_planned(python, r),
            Event::Saved(r) => self.saved.finish(r),
            Event::Audited(f) => self.audited(f),
            Event::Fixed(r) => return self.fixed(r),
            Event::Crashed { job, message } => self.crashed(job, message),
            Event::Refreshed(r) => return self.refreshed(r),
        }
        Vec::new()
    }

    /// A worker thread died (a bug of ours): its job ends with the crash as its error —
    /// what waited for it stops waiting, the other jobs go on — and the page says so
    /// until the user moves on. A run's worker sent the run's failed report first.
    fn crashed(&mut self, job: Option<JobId>, message: String) {
        let m = message.as_str();
        match job {
            Some(JobId::Detect) => self.detection_crashed(m),
            Some(JobId::LinuxDriver) => {
                self.linux_driver.job.crash(m);
            }
            Some(JobId::Refresh) => {
                self.refresh.crash(m);
            }
            Some(JobId::Prepare) => {
                self.prepare.job.crash(m);
            }
            Some(JobId::Restart) => {
                self.install.restart.crash(m);
            }
            Some(JobId::DriverPolicy) => {
                self.driver_policy.crash(m);
            }
            Some(id @ (JobId::PlanUninstall | JobId::Uninstall)) => self.uninstall_crashed(id, m),
            // Ended by their failed report (the worker's, as the executor's would be).
            Some(JobId::Install | JobId::Pip) => {}
            Some(
                id @ (JobId::CudnnCheck
                | JobId::CudnnDownload
                | JobId::CudnnInstall
                | JobId::CudnnUndo),
            ) => self.cudnn.crash(id, m),
            Some(JobId::Smoke) => {
                self.verify.job.crash(m);
            }
            Some(JobId::Doctor) => {
                self.torch.doctor.crash(m);
            }
            Some(JobId::Audit) => {
                self.repair.audit.crash(m);
            }
            Some(JobId::Fix) => {
                self.repair.fix.crash(m);
            }
            Some(JobId::Save) => {
                self.saved.crash(m);
            }
            Some(JobId::Guard) => {
                self.guard.status.crash(m);
            }
            // The plan's thread; a run's crash ends it with its failed report.
            Some(JobId::Restore) => {
                self.guard.restore_plan.crash(m);
            }
            // Nothing waits for it (a file dialog, opening the log).
            None => {}
        }
        self.crash = Some(message);
    }
}

#[cfg(test)]
mod tests;
