//! PyTorch: the Python and mirror chosen, pip's run, and the doctor that follows it.

use std::path::PathBuf;

use cuda_setup_core::download::Cancel;
use cuda_setup_core::monitor::Sample;
use cuda_setup_core::recommend::TorchPick;
use cuda_setup_core::run::RunEvent;
use cuda_setup_core::steps::torch_sources::{self, AutoSources};
use cuda_setup_core::verify::doctor::{DoctorReport, PypiMirror};

use super::Session;
use super::settings::{PIP_MIRRORS, pip_mirror};
use crate::ui::job::{Job, Status};
use crate::ui::progress::RunView;
use crate::ui::worker::{Command, JobId};

/// PyTorch: the Python and mirror chosen, pip's run, the doctor.
#[derive(Default)]
pub struct Torch {
    /// The interpreter, as typed or picked.
    pub(super) python: String,
    /// Index into [`PIP_MIRRORS`].
    pub(super) mirror: usize,
    /// The user chose the mirror (else it follows the language).
    pub(super) mirror_chosen: bool,
    /// The PyPI index is measured when pip runs (#34; `mirror` is then not used).
    pub(super) pypi_auto: bool,
    /// PyTorch's wheels from the fastest of its server and mirrors (#34).
    pub(super) torch_auto: bool,
    /// The user chose the wheels' source (else it follows the language).
    pub(super) torch_auto_chosen: bool,
    pub(super) run: RunView,
    /// GPU figures sampled while the doctor's check runs.
    pub(super) samples: Vec<Sample>,
    pub(super) monitor_error: Option<String>,
    pub(super) doctor: Job<Result<Box<DoctorReport>, String>>,
}

impl Torch {
    pub fn python(&self) -> &str {
        &self.python
    }

    /// The mirror's index into [`PIP_MIRRORS`].
    pub fn mirror_index(&self) -> usize {
        self.mirror
    }

    /// The user chose the mirror (else it follows the language).
    pub fn mirror_chosen(&self) -> bool {
        self.mirror_chosen
    }

    /// The PyPI index is measured when pip runs (#34).
    pub fn pypi_auto(&self) -> bool {
        self.pypi_auto
    }

    /// PyTorch's wheels come from the fastest measured source (#34).
    pub fn torch_auto(&self) -> bool {
        self.torch_auto
    }

    pub fn run(&self) -> &RunView {
        &self.run
    }

    pub fn samples(&self) -> &[Sample] {
        &self.samples
    }

    pub fn monitor_error(&self) -> Option<&str> {
        self.monitor_error.as_deref()
    }

    pub fn doctor_running(&self) -> bool {
        self.doctor.is_running()
    }

    pub fn doctor_status(&self) -> Status {
        self.doctor.status()
    }

    /// The doctor's report (None while it runs, and when its thread died).
    pub fn doctor(&self) -> Option<&DoctorReport> {
        self.doctor.done()?.as_deref().ok()
    }

    pub fn busy(&self) -> bool {
        self.run.running() || self.doctor.is_running()
    }

    /// The PyPI mirror chosen (None: pypi.org, or measured when pip runs).
    pub fn mirror(&self) -> Option<PypiMirror> {
        if self.pypi_auto {
            return None;
        }
        pip_mirror(self.mirror)
    }

    pub fn python_path(&self) -> Option<PathBuf> {
        let p = self.python.trim();
        (!p.is_empty()).then(|| PathBuf::from(p))
    }
}

impl Session {
    pub(super) fn set_pip_mirror(&mut self, i: usize) {
        self.torch.mirror = i.min(PIP_MIRRORS.len() - 1);
        self.torch.mirror_chosen = true;
        self.torch.pypi_auto = false;
    }

    #[must_use]
    pub(super) fn run_pip(&mut self, torch: &TorchPick) -> Vec<Command> {
        let Some(python) = self.torch.python_path() else {
            return Vec::new();
        };
        let mirror = self.torch.mirror();
        // The automatic choices: the core names what the pip step measures.
        let mut torch = torch.clone();
        let mut auto = AutoSources {
            pypi: self.torch.pypi_auto,
            ..Default::default()
        };
        if self.torch.torch_auto {
            auto.torch_mirrors = torch_sources::apply(
                &mut torch,
                &torch_sources::TorchSource::Auto,
                &self.opts.tables.pytorch.mirrors,
                &cuda_setup_core::refresh::Sources::from_env().torch_index,
            )
            .unwrap_or_default();
        }
        let plan = cuda_setup_core::plan::pip_install(
            &self.opts.target,
            &torch,
            &python,
            mirror.as_ref().map(|m| m.url.as_str()),
            auto,
        );
        let cancel = Cancel::default();
        self.torch.run = RunView::start(&plan, cancel.clone());
        self.torch.doctor = Job::Idle;
        vec![Command::Run {
            job: JobId::Pip,
            plan: Box::new(plan),
            cancel,
        }]
    }

    /// pip's progress; once it ended well the doctor checks what it installed, and either
    /// way detection runs again (a failed pip may have installed some packages).
    #[must_use]
    pub(super) fn pip_event(&mut self, e: RunEvent) -> Vec<Command> {
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
        cmds
    }
}
