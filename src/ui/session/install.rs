//! The plan with its pre-flight checks, the install run (the driver, the toolkit), and
//! the restart a driver asks for.

use cuda_setup_core::compat::Os;
use cuda_setup_core::download::Cancel;
use cuda_setup_core::plan::Plan;
use cuda_setup_core::recommend::DriverAction;
use cuda_setup_core::run::RunEvent;
use cuda_setup_core::steps::preflight::Status as CheckStatus;

use super::Session;
use crate::ui::job::{Job, Status};
use crate::ui::progress::RunView;
use crate::ui::worker::{Command, JobId, Prepared};

/// The plan and its pre-flight checks.
#[derive(Default)]
pub struct Preparation {
    pub(super) job: Job<Result<Box<Prepared>, String>>,
}

impl Preparation {
    pub fn running(&self) -> bool {
        self.job.is_running()
    }

    pub fn status(&self) -> Status {
        self.job.status()
    }

    /// The plan and its checks, or why none could be made.
    pub fn result(&self) -> Option<&Result<Box<Prepared>, String>> {
        self.job.done()
    }

    /// A plan exists and no check failed.
    pub fn ready(&self) -> bool {
        matches!(self.result(), Some(Ok(p)) if !p.ahead.checks.iter().any(|c| c.status == CheckStatus::Fail))
    }

    pub fn plan(&self) -> Option<&Plan> {
        match self.result() {
            Some(Ok(p)) => Some(&p.plan),
            _ => None,
        }
    }
}

/// The install run (the driver, the toolkit).
#[derive(Default)]
pub struct Install {
    pub(super) run: RunView,
    /// The wizard opened after the restart the driver asked for: the plan waits in the
    /// journal, and "Continue the installation" runs the rest of it.
    pub(super) resumed: bool,
    /// The restart the run asked for: Ok(now): registered, and restarting now (or after
    /// the user's own restart); Err: refused.
    pub(super) restart: Job<Result<bool, String>>,
}

impl Install {
    pub fn run(&self) -> &RunView {
        &self.run
    }

    pub fn resumed(&self) -> bool {
        self.resumed
    }

    /// The restart asked of the worker, and its answer once given.
    pub fn restart(&self) -> &Job<Result<bool, String>> {
        &self.restart
    }

    /// The run stopped after the driver: Windows must restart before the rest.
    pub fn restart_pending(&self) -> bool {
        self.run
            .report()
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

/// The plan installs the driver (drvcore's `install_driver` step).
pub fn installs_driver(plan: &Plan) -> bool {
    plan.steps.iter().any(|s| s.kind().is_driver())
}

impl Session {
    /// The wizard opened after the restart the driver asked for: `plan` waits in the
    /// journal. It is the plan from now on (its goal too), and the Install page continues
    /// it; the run skips the steps the journal says are done.
    pub fn resume_after_restart(&mut self, plan: Plan) {
        self.mode = crate::ui::flow::Mode::Setup;
        self.goal = plan.goal;
        self.prepare = Preparation {
            job: Job::Done(Ok(Box::new(Prepared {
                plan,
                ahead: Default::default(),
            }))),
        };
        self.install = Install {
            resumed: true,
            ..Install::default()
        };
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

    /// The plan and its run were made for other choices.
    pub(super) fn drop_plan(&mut self) {
        self.prepare = Preparation::default();
        self.install = Install::default();
    }

    /// Build the plan and run the pre-flight checks.
    #[must_use]
    pub(super) fn start_prepare(&mut self) -> Vec<Command> {
        let Some(rec) = self.recommendation.clone() else {
            return Vec::new();
        };
        self.prepare.job = Job::started();
        vec![Command::Prepare {
            rec: Box::new(rec),
            choices: Box::new(self.choices()),
        }]
    }

    #[must_use]
    pub(super) fn start_install(&mut self) -> Vec<Command> {
        let Some(plan) = self.prepare.plan().cloned() else {
            return Vec::new();
        };
        let cancel = Cancel::default();
        self.install.run = RunView::start(&plan, cancel.clone());
        vec![Command::Run {
            job: JobId::Install,
            plan: Box::new(plan),
            cancel,
        }]
    }

    /// The install run's progress; once done, detection again (a failed run may have
    /// installed some of it, the driver too).
    #[must_use]
    pub(super) fn install_event(&mut self, e: RunEvent) -> Vec<Command> {
        let finished = matches!(&e, RunEvent::Done(_));
        self.install.run.apply(e, self.lang);
        if finished {
            return self.detect_again();
        }
        Vec::new()
    }

    /// The driver is installed and Windows must restart: asked of the worker.
    #[must_use]
    pub(super) fn restart(&mut self, now: bool) -> Vec<Command> {
        if !self.install.restart_pending() {
            return Vec::new();
        }
        self.install.restart = Job::started();
        vec![Command::Restart { now }]
    }
}
