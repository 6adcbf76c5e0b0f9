//! Repair mode's "Undo what cuda-setup changed" (#35): the core's uninstall plan shown as
//! a confirmation, then its run with progress. The core decides what is undone; this
//! only holds the jobs.

use cuda_setup_core::uninstall::UninstallPlan;

use super::Session;
use crate::ui::job::{Job, Status};
use crate::ui::worker::{Command, JobId};

#[derive(Default)]
pub struct Uninstall {
    /// The plan to confirm (asked for by the button).
    pub(super) plan: Job<Result<Box<UninstallPlan>, String>>,
    /// The run: how many actions it did, or why it stopped.
    pub(super) run: Job<Result<usize, String>>,
    /// Actions finished of all (for the progress bar).
    pub(super) progress: (usize, usize),
}

impl Uninstall {
    /// The plan to show, once it is made and before it runs.
    pub fn plan(&self) -> Option<&Result<Box<UninstallPlan>, String>> {
        self.plan.done()
    }

    pub fn planning(&self) -> bool {
        self.plan.is_running()
    }

    pub fn running(&self) -> bool {
        self.run.is_running()
    }

    pub fn result(&self) -> Option<&Result<usize, String>> {
        self.run.done()
    }

    pub fn progress(&self) -> (usize, usize) {
        self.progress
    }

    pub fn status(&self, id: JobId) -> Status {
        match id {
            JobId::Uninstall => self.run.status(),
            _ => self.plan.status(),
        }
    }
}

impl Session {
    pub fn uninstall(&self) -> &Uninstall {
        &self.uninstall
    }

    pub(super) fn plan_uninstall(&mut self) -> Vec<Command> {
        self.uninstall = Uninstall {
            plan: Job::started(),
            ..Uninstall::default()
        };
        vec![Command::PlanUninstall]
    }

    /// The confirmed plan runs; the plan's box goes (the progress replaces it).
    pub(super) fn run_uninstall(&mut self) -> Vec<Command> {
        let Some(Ok(plan)) = self.uninstall.plan.done().cloned() else {
            return Vec::new();
        };
        self.uninstall.plan = Job::Idle;
        self.uninstall.run = Job::started();
        self.uninstall.progress = (0, plan.actions.len());
        vec![Command::Uninstall(plan)]
    }

    pub(super) fn cancel_uninstall(&mut self) {
        self.uninstall.plan = Job::Idle;
    }

    /// Done: what is on disk changed, so the audit and detection run again.
    pub(super) fn uninstalled(&mut self, r: Result<usize, String>) -> Vec<Command> {
        let ok = r.is_ok();
        self.uninstall.run.finish(r);
        let mut cmds = self.audit();
        if ok {
            cmds.extend(self.detect_again());
        }
        cmds
    }

    pub(super) fn uninstall_crashed(&mut self, id: JobId, m: &str) {
        match id {
            JobId::Uninstall => self.uninstall.run.crash(m),
            _ => self.uninstall.plan.crash(m),
        };
    }
}
