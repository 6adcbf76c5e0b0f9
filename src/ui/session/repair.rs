//! Repair: the audit's findings, the fixes' run (its log) and what they did.

use cuda_setup_core::i18n::Lang;
use cuda_setup_core::repair::{self, Finding, FixResult};
use cuda_setup_core::run::RunEvent;

use super::Session;
use crate::ui::job::{Job, Status};
use crate::ui::worker::Command;

/// Repair: the audit and the fixes, each a job; the findings are the last audit's (the
/// fixes audit again).
#[derive(Default)]
pub struct Repair {
    /// Ok(()): `findings` are this audit's.
    pub(super) audit: Job<Result<(), String>>,
    pub(super) findings: Option<Vec<Finding>>,
    /// Problems before the fixes ran.
    pub(super) before: Option<usize>,
    pub(super) fix: Job<Result<Box<FixResult>, String>>,
    pub(super) log: Vec<String>,
    /// Repair mode's checks wait for the detection under way (they read what it finds).
    pub(super) checks_waiting: bool,
}

impl Repair {
    pub fn auditing(&self) -> bool {
        self.audit.is_running()
    }

    pub fn fixing(&self) -> bool {
        self.fix.is_running()
    }

    pub fn busy(&self) -> bool {
        self.auditing() || self.fixing()
    }

    pub fn audit_status(&self) -> Status {
        self.audit.status()
    }

    pub fn fix_status(&self) -> Status {
        self.fix.status()
    }

    /// The last audit's findings (the fixes' own audit, after them).
    pub fn findings(&self) -> Option<&[Finding]> {
        self.findings.as_deref()
    }

    /// Problems before the fixes ran.
    pub fn before(&self) -> Option<usize> {
        self.before
    }

    /// What the fixes did (None while they run, and when their thread died).
    pub fn fixed(&self) -> Option<&FixResult> {
        self.fix.done()?.as_deref().ok()
    }

    /// The fixes' log, one line per step event.
    pub fn log(&self) -> &[String] {
        &self.log
    }

    /// The checks wait for detection to finish.
    pub fn checks_waiting(&self) -> bool {
        self.checks_waiting
    }

    fn log_event(&mut self, e: RunEvent, lang: Lang) {
        self.log.extend(crate::ui::progress::log_line(&e, lang));
    }
}

impl Session {
    /// The facts given instead of detected, as repair takes them.
    fn repair_overrides(&self) -> repair::Overrides {
        let o = &self.opts.overrides;
        repair::Overrides {
            gpu_cc: o.gpus.iter().map(|g| g.compute_capability).collect(),
            driver: o.driver.clone().flatten(),
        }
    }

    pub(super) fn audit(&mut self) -> Vec<Command> {
        self.repair.audit = Job::started();
        vec![Command::Audit {
            overrides: self.repair_overrides(),
        }]
    }

    pub(super) fn audited(&mut self, f: Vec<Finding>) {
        self.repair.audit.finish(Ok(()));
        self.repair.findings = Some(f);
    }

    /// Apply the fixable findings' fixes (then audit again).
    #[must_use]
    pub(super) fn fix(&mut self) -> Vec<Command> {
        let Some(findings) = self.repair.findings.clone() else {
            return Vec::new();
        };
        self.repair.before = Some(repair::problems(&findings));
        self.repair.fix = Job::started();
        self.repair.log.clear();
        vec![Command::Fix {
            overrides: self.repair_overrides(),
            findings,
        }]
    }

    pub(super) fn fix_event(&mut self, e: RunEvent) {
        self.repair.log_event(e, self.lang);
    }

    /// What the fixes did; when they changed anything, the checks judged the machine
    /// before them, and detection runs again.
    #[must_use]
    pub(super) fn fixed(&mut self, r: Box<FixResult>) -> Vec<Command> {
        self.repair.findings = Some(r.after.clone());
        let changed = !r.runs.is_empty();
        self.repair.fix.finish(Ok(r));
        if !changed {
            return Vec::new();
        }
        self.torch.doctor = Job::Idle;
        self.verify = super::Verify::default();
        self.detect_again()
    }
}
