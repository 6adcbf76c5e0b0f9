//! The guard of the verified PyTorch (#33): the chosen Python's status and its switch,
//! a system Python's confirmation, the swaps the last detection found, and putting the
//! verified build back (repair's fix for a swap, run by the executor), then the doctor.

use std::path::{Path, PathBuf};

use cuda_setup_core::download::Cancel;
use cuda_setup_core::guard::{OnOutcome, Places, Status as GuardStatus, Swap};
use cuda_setup_core::message::Message;
use cuda_setup_core::plan::Plan;
use cuda_setup_core::run::RunEvent;

use super::Session;
use crate::ui::job::{Job, Outcome, Status};
use crate::ui::progress::RunView;
use crate::ui::worker::{Command, GuardAnswer, GuardDone, GuardOp, JobId};

/// A job's error in the core's words; None: its thread died (the app says so).
#[derive(Debug, Clone)]
pub struct Said(pub Option<Message>);

impl Outcome for Said {
    fn crashed(_message: &str) -> Self {
        Said(None)
    }
    fn failed(&self) -> bool {
        true
    }
}

/// A system Python's prefix, waiting for the user's yes.
#[derive(Debug, Clone)]
pub struct Confirm {
    pub python: PathBuf,
    pub prefix: PathBuf,
    pub places: Places,
}

#[derive(Default)]
pub struct Guard {
    /// Recorded builds another install replaced (the last detection's).
    pub(super) swaps: Vec<Swap>,
    /// The guard of `status_for`.
    pub(super) status: Job<Result<Box<GuardStatus>, Said>>,
    pub(super) status_for: Option<PathBuf>,
    /// What the last switch could not do.
    pub(super) error: Option<Message>,
    pub(super) confirm: Option<Confirm>,
    /// The restore's plan being made (its run is `restore`).
    pub(super) restore_plan: Job<Result<(), Said>>,
    pub(super) restore: RunView,
    /// The Python being put back; set from the click on, for the pages that show it.
    pub(super) restore_python: Option<PathBuf>,
}

impl Guard {
    /// Recorded builds another install replaced.
    pub fn swaps(&self) -> &[Swap] {
        &self.swaps
    }

    /// The guard of `python`, once known (the last answer for it).
    pub fn status_of(&self, python: &Path) -> Option<&GuardStatus> {
        (self.status_for.as_deref() == Some(python))
            .then(|| self.status.done()?.as_deref().ok())
            .flatten()
    }

    /// Why the last question about `python` got no answer.
    pub fn failed_for(&self, python: &Path) -> Option<&Said> {
        (self.status_for.as_deref() == Some(python))
            .then(|| self.status.done()?.as_ref().err())
            .flatten()
    }

    pub fn checking(&self) -> bool {
        self.status.is_running()
    }

    /// The page should ask about `python` (no answer for it, none on the way).
    pub fn stale(&self, python: &Path) -> bool {
        !self.status.is_running()
            && !python.as_os_str().is_empty()
            && self.status_for.as_deref() != Some(python)
    }

    pub fn error(&self) -> Option<&Message> {
        self.error.as_ref()
    }

    pub fn confirm(&self) -> Option<&Confirm> {
        self.confirm.as_ref()
    }

    /// The restore's plan or run is under way.
    pub fn restoring(&self) -> bool {
        self.restore_plan.is_running() || self.restore.running()
    }

    pub fn restore(&self) -> &RunView {
        &self.restore
    }

    /// Why the restore's plan could not be made.
    pub fn restore_error(&self) -> Option<&Said> {
        self.restore_plan.done()?.as_ref().err()
    }

    /// The Python being (or last) put back.
    pub fn restore_python(&self) -> Option<&Path> {
        self.restore_python.as_deref()
    }

    pub fn busy(&self) -> bool {
        self.status.is_running() || self.restoring()
    }

    pub(super) fn status_job(&self) -> Status {
        self.status.status()
    }

    pub(super) fn restore_status(&self) -> Status {
        match self.restore_plan.status() {
            Status::Idle | Status::Done => self.restore.status(),
            s => s,
        }
    }
}

impl Session {
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    fn guard_command(&mut self, op: GuardOp) -> Vec<Command> {
        let Some(python) = self.torch.python_path() else {
            return Vec::new();
        };
        self.guard.status = Job::started();
        self.guard.status_for = Some(python.clone());
        vec![Command::Guard { python, op }]
    }

    /// The chosen Python's guard.
    #[must_use]
    pub(super) fn guard_status(&mut self) -> Vec<Command> {
        self.guard_command(GuardOp::Status)
    }

    /// The switch: on (a system Python asks first: the core says so) or off.
    #[must_use]
    pub(super) fn guard_switch(&mut self, on: bool) -> Vec<Command> {
        self.guard.error = None;
        self.guard.confirm = None;
        self.guard_command(if on {
            GuardOp::On { confirmed: false }
        } else {
            GuardOp::Off
        })
    }

    /// The user's answer to the system Python's question: yes writes, no writes nothing.
    #[must_use]
    pub(super) fn guard_confirm(&mut self, yes: bool) -> Vec<Command> {
        let Some(c) = self.guard.confirm.take() else {
            return Vec::new();
        };
        if !yes {
            return Vec::new();
        }
        self.guard.status = Job::started();
        self.guard.status_for = Some(c.python.clone());
        vec![Command::Guard {
            python: c.python,
            op: GuardOp::On { confirmed: true },
        }]
    }

    pub(super) fn guard_answer(&mut self, a: GuardAnswer) {
        match a.done {
            Some(Ok(GuardDone::On(OnOutcome::NeedsConfirmation { prefix, places }))) => {
                self.guard.confirm = Some(Confirm {
                    python: a.python.clone(),
                    prefix,
                    places,
                });
            }
            Some(Err(m)) => self.guard.error = Some(m),
            Some(Ok(_)) | None => {}
        }
        // An answer for a Python no longer chosen still ends the job; the page asks again.
        self.guard.status_for = Some(a.python);
        self.guard
            .status
            .finish(a.status.map_err(|m| Said(Some(m))));
    }

    /// "Put the verified PyTorch back" for `python`: its plan is made in the worker (a
    /// cached wheel is hashed), then run by the executor, then the doctor checks it.
    #[must_use]
    pub(super) fn restore_torch(&mut self, python: PathBuf) -> Vec<Command> {
        if self.guard.restoring() {
            return Vec::new();
        }
        self.guard.restore_plan = Job::started();
        self.guard.restore = RunView::default();
        self.guard.restore_python = Some(python.clone());
        vec![Command::PlanRestore { python }]
    }

    #[must_use]
    pub(super) fn restore_planned(
        &mut self,
        python: PathBuf,
        r: Result<Option<Box<Plan>>, Message>,
    ) -> Vec<Command> {
        match r {
            Ok(Some(plan)) => {
                self.guard.restore_plan.finish(Ok(()));
                let cancel = Cancel::default();
                self.guard.restore = RunView::start(&plan, cancel.clone());
                vec![Command::Run {
                    job: JobId::Restore,
                    plan,
                    cancel,
                }]
            }
            // The verified build is there already: the check says so.
            Ok(None) => {
                self.guard.restore_plan.finish(Ok(()));
                self.check_restored(python)
            }
            Err(m) => {
                self.guard.restore_plan.finish(Err(Said(Some(m))));
                Vec::new()
            }
        }
    }

    /// pip's run; once it ended well the doctor checks the build, and either way
    /// detection (and with it the swaps) runs again.
    #[must_use]
    pub(super) fn restore_event(&mut self, e: RunEvent) -> Vec<Command> {
        let finished = matches!(&e, RunEvent::Done(_));
        let ok = matches!(&e, RunEvent::Done(r) if r.ok());
        self.guard.restore.apply(e, self.lang);
        let mut cmds = Vec::new();
        if ok && let Some(p) = self.guard.restore_python.clone() {
            cmds.extend(self.check_restored(p));
        }
        if finished {
            cmds.extend(self.detect_again());
        }
        cmds
    }

    /// The doctor on the Python put back (it becomes the chosen one).
    fn check_restored(&mut self, python: PathBuf) -> Vec<Command> {
        self.torch.python = python.display().to_string();
        vec![self.start_doctor()]
    }
}
