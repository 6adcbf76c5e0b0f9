//! The checks that judge the machine: the smoke test (Verify) and the doctor (PyTorch),
//! with the GPU figures sampled while they run, and repair mode's end, which runs both
//! on what detection found after the fixes.

use std::path::PathBuf;

use cuda_setup_core::monitor::Sample;
use cuda_setup_core::verify::SmokeReport;
use cuda_setup_core::verify::doctor::DoctorReport;

use cuda_setup_core::repair;

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
    pub fn torch_python(&self) -> Option<PathBuf> {
        self.torch
            .python_path()
            .or_else(|| repair::with_torch(&self.system.report()?.pythons))
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

    /// Repair mode's end: the checks the core picks for a run's end — the doctor on the
    /// detected torch for PyTorch, the smoke test for a developer on this machine — on
    /// what detection finds after the fixes (they wait for a detection under way).
    #[must_use]
    pub(super) fn check_installed(&mut self) -> Vec<Command> {
        if self.system.running() {
            self.repair.checks_waiting = true;
            return Vec::new();
        }
        self.repair.checks_waiting = false;
        if let Some(p) = self.torch_python() {
            self.torch.python = p.display().to_string();
        }
        self.verify = Verify::default();
        // Which checks follow the fixes is the core's decision, the same as after
        // `cuda-setup install` and `repair`: the doctor for PyTorch, the smoke test for a
        // developer on this machine (its driver cannot be pointed into a sandbox), none
        // after a fix that failed.
        let runs = self.repair.fixed().map_or(&[][..], |f| f.runs.as_slice());
        let on_machine = repair::on_machine(&self.opts.target);
        let checks = repair::checks_at_end(self.goal, runs, on_machine);
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

    pub(super) fn doctor_done(&mut self, r: Box<DoctorReport>) {
        self.torch.doctor.finish(Ok(r));
    }
}
