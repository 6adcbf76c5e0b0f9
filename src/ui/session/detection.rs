//! Detection and what follows from it: the facts (overrides applied), the recommendation
//! for them, and on Linux the driver advice for its minimum. Anything installed starts
//! detection again; an answer begun before the change is dropped.

use cuda_setup_core::compat::Os;
use cuda_setup_core::detect::SystemReport;
use cuda_setup_core::linux_driver::{LinuxDriverAdvice, OsRelease};
use cuda_setup_core::recommend::{DriverAction, Facts, Request};
use cuda_setup_core::version::Version;

use super::Session;
use crate::ui::job::{Job, Status};
use crate::ui::worker::Command;

/// Detection: the job, and the last report with the facts recommended for. A new
/// detection keeps showing the last report until its own arrives.
#[derive(Default)]
pub struct Detection {
    /// Ok(()): the report below is this detection's; Err: its thread died.
    pub(super) job: Job<Result<(), String>>,
    /// Something was installed while detection ran: its answer is already old, so it is
    /// dropped and detection runs again.
    pub(super) stale: bool,
    pub(super) report: Option<Box<SystemReport>>,
    pub(super) facts: Option<Facts>,
    /// Linux: the distribution (os-release, read once per detection), so the
    /// recommendation knows whether it packages a driver update (#32).
    pub(super) distro: Option<OsRelease>,
}

impl Detection {
    pub fn running(&self) -> bool {
        self.job.is_running()
    }

    pub fn status(&self) -> Status {
        self.job.status()
    }

    /// What the last detection that ended well found.
    pub fn report(&self) -> Option<&SystemReport> {
        self.report.as_deref()
    }

    /// The facts to recommend for: the report's, then the overrides.
    pub fn facts(&self) -> Option<&Facts> {
        self.facts.as_ref()
    }

    /// Why the last detection stopped without an answer (a bug of ours: the raw message).
    pub fn error(&self) -> Option<&str> {
        self.job.done()?.as_ref().err().map(String::as_str)
    }
}

/// Linux: which package and command give the driver the recommendation needs, worked out
/// on the worker (it reads the distribution and Secure Boot state).
#[derive(Default)]
pub struct LinuxDriver {
    /// The advice for `minimum` (None: nothing known for this distribution).
    pub(super) job: Job<Result<Option<LinuxDriverAdvice>, String>>,
    /// The minimum the advice was asked for (the question, answered once done).
    pub(super) minimum: Option<Option<Version>>,
    /// The driver branch asked for with it (#32).
    pub(super) branch: Option<u32>,
}

impl LinuxDriver {
    pub fn running(&self) -> bool {
        self.job.is_running()
    }

    pub fn status(&self) -> Status {
        self.job.status()
    }

    /// The minimum driver the advice was asked for (None: not asked).
    pub fn asked_for(&self) -> Option<&Option<Version>> {
        self.minimum.as_ref()
    }

    pub fn advice(&self) -> Option<&LinuxDriverAdvice> {
        self.job.done()?.as_ref().ok()?.as_ref()
    }
}

impl Session {
    /// Detection, again: after anything was installed, pages show what is there now. One
    /// already running saw the machine before the change: its answer is dropped.
    #[must_use]
    pub(super) fn detect_again(&mut self) -> Vec<Command> {
        if self.system.running() {
            self.system.stale = true;
            return Vec::new();
        }
        self.system.job = Job::started();
        vec![Command::Detect]
    }

    /// Detection's answer: the facts from it, the recommendation for them, and the checks
    /// that waited for it.
    #[must_use]
    pub(super) fn detected(
        &mut self,
        r: Box<SystemReport>,
        distro: Option<OsRelease>,
    ) -> Vec<Command> {
        if std::mem::take(&mut self.system.stale) {
            // Started before the last change: what it saw is gone.
            return vec![Command::Detect];
        }
        let mut facts = r.facts(self.opts.target.os);
        self.opts.overrides.apply(&mut facts);
        self.system = Detection {
            job: Job::Done(Ok(())),
            stale: false,
            report: Some(r),
            facts: Some(facts),
            distro,
        };
        let mut cmds = self.recompute();
        if self.repair.checks_waiting {
            cmds.extend(self.check_installed());
        }
        cmds
    }

    /// The thread detecting died: no answer comes, and nothing waits for one.
    pub(super) fn detection_crashed(&mut self, message: &str) {
        self.system.job.crash(message);
        self.system.stale = false;
        self.repair.checks_waiting = false;
    }

    pub(super) fn linux_driver_advice(
        &mut self,
        minimum: Option<Version>,
        branch: Option<u32>,
        advice: Option<Box<LinuxDriverAdvice>>,
    ) {
        // An answer for another minimum is stale: a newer question is on its way.
        if self.linux_driver.minimum.as_ref() == Some(&minimum)
            && self.linux_driver.branch == branch
        {
            self.linux_driver.job.finish(Ok(advice.map(|a| *a)));
        }
    }

    /// A new recommendation; on Linux, the driver advice for its minimum is asked of the
    /// worker when that minimum changed.
    #[must_use]
    pub(super) fn recompute(&mut self) -> Vec<Command> {
        self.recommendation = self.system.facts.as_ref().map(|facts| {
            cuda_setup_core::recommend::recommend(
                &self.opts.tables,
                facts,
                &Request {
                    goal: self.goal,
                    cuda: self.settings.cuda_version(),
                    method: self.settings.method,
                    driver: self.settings.driver,
                    distro: self.system.distro.clone(),
                    ..Default::default()
                },
            )
        });
        let Some(rec) = &self.recommendation else {
            return Vec::new();
        };
        let ld = &mut self.linux_driver;
        if self.opts.target.os != Os::Linux
            || rec.driver.action == DriverAction::None
            || (ld.minimum.as_ref() == Some(&rec.driver.minimum) && ld.branch == rec.driver.branch)
        {
            return Vec::new();
        }
        ld.minimum = Some(rec.driver.minimum.clone());
        ld.branch = rec.driver.branch;
        ld.job = Job::started();
        vec![Command::LinuxDriverAdvice {
            minimum: rec.driver.minimum.clone(),
            branch: rec.driver.branch,
            last_branch: rec.driver.last_branch,
        }]
    }
}
