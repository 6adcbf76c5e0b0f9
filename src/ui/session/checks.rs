//! The checks that judge the machine: the smoke test (Verify) and the doctor (PyTorch),
//! with the GPU figures sampled while they run, and repair mode's end, which runs both
//! on what detection found after the fixes.

use std::path::PathBuf;

use cuda_setup_core::monitor::Sample;
use cuda_setup_core::verify::SmokeReport;
use cuda_setup_core::verify::doctor::DoctorReport;

use super::Session;
use crate::ui::job::{Job, Status};
use crate::ui::worker::Command;

/// The smoke test and the GPU figures sampled while it runs.
#[derive(Default)]
pub struct Verify {
    pub(super) job: Job<Result<Box<SmokeReport>, String>>,
    pub(super) samples: Vec<Sample>,
    pub(super) monitor_error: Option<String>,
}

impl Verify {
    pub fn running(&self) -> bool {
        self.job.is_running()
    }

    pub fn status(&self) -> Status {
        self.job.status()
    }

    pub fn report(&self) -> Option<&SmokeReport> {
        self.job.done()?.as_deref().ok()
    }

    pub fn samples(&self) -> &[Sample] {
        &self.samples
    }

    /// Why no GPU figures could be sampled.
    pub fn monitor_error(&self) -> Option<&str> {
        self.monitor_error.as_deref()
    }
}

impl Session {
    /// The Python whose torch the checks examine: the one chosen, else the first that
    /// detection found with torch in it (a CUDA build first).
    fn torch_python(&self) -> Option<PathBuf> {
        if let Some(p) = self.torch.python_path() {
            return Some(p);
        }
        let pythons = &self.system.report()?.pythons;
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
        self.system
            .report()
            .and_then(|r| r.active_toolkit().or(r.toolkits.last()))
            .map(|t| t.path.clone())
            .or_else(|| self.existing.toolkits.last().map(|t| t.dir.clone()))
    }

    /// Repair mode's end: the same checks as setup's — the doctor on the detected torch,
    /// then the smoke test for the developer goal — on what detection finds after the
    /// fixes (they wait for a detection under way).
    #[must_use]
    pub(super) fn check_installed(&mut self) -> Vec<Command> {
        if self.system.running() {
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
        // Which checks follow the fixes is the core's decision, the same as after
        // `cuda-setup install` and `repair`: the doctor for PyTorch, the smoke test for a
        // developer on this machine (its driver cannot be pointed into a sandbox), none
        // after a fix that failed.
        let runs = self.repair.fixed().map_or(&[][..], |f| f.runs.as_slice());
        let on_machine = self.opts.target.root.is_none();
        let checks = cuda_setup_core::repair::checks_at_end(self.goal, runs, on_machine);
        self.repair.smoke_next = checks.doctor && checks.smoke;
        if checks.doctor {
            vec![self.start_doctor()]
        } else if checks.smoke {
            vec![self.start_smoke(self.installed_toolkit_dir())]
        } else {
            Vec::new()
        }
    }

    pub(super) fn start_smoke(&mut self, cuda_dir: Option<PathBuf>) -> Command {
        self.verify = Verify {
            job: Job::started(),
            ..Default::default()
        };
        Command::Smoke { cuda_dir }
    }

    /// The smoke test of the toolkit the plan installed (else the recommended one).
    pub(super) fn start_verify(&mut self) -> Command {
        self.start_smoke(self.toolkit_dir())
    }

    pub(super) fn start_doctor(&mut self) -> Command {
        self.torch.doctor = Job::started();
        self.torch.samples.clear();
        self.torch.monitor_error = None;
        Command::Doctor {
            python: self.torch.python_path(),
            mirror: self.torch.mirror(),
            gpu: self.gpu_facts(),
        }
    }

    /// A GPU figure, for the check that runs: the doctor's, else the smoke test's.
    pub(super) fn sampled(&mut self, s: Result<Sample, String>) {
        let (samples, error) = if self.torch.doctor.is_running() {
            (&mut self.torch.samples, &mut self.torch.monitor_error)
        } else {
            (&mut self.verify.samples, &mut self.verify.monitor_error)
        };
        match s {
            Ok(s) => samples.push(s),
            Err(why) => *error = Some(why),
        }
    }

    pub(super) fn smoke_done(&mut self, r: Box<SmokeReport>) {
        self.verify.job.finish(Ok(r));
    }

    /// The doctor's report; in repair mode's checks, the smoke test follows.
    #[must_use]
    pub(super) fn doctor_done(&mut self, r: Box<DoctorReport>) -> Vec<Command> {
        self.torch.doctor.finish(Ok(r));
        if std::mem::take(&mut self.repair.smoke_next) {
            return vec![self.start_smoke(self.installed_toolkit_dir())];
        }
        Vec::new()
    }

    /// The doctor's thread died: the smoke test that was to follow does not.
    pub(super) fn doctor_crashed(&mut self, message: &str) {
        self.torch.doctor.crash(message);
        self.repair.smoke_next = false;
    }
}
