//! cuDNN: the archive (picked or downloaded), its check against the toolkit, the
//! install, and the page's Undo. The download and the install are plans the executor
//! runs, each its own job.

use std::path::{Path, PathBuf};

use cuda_setup_core::cudnn::Manifest;
use cuda_setup_core::download::Cancel;
use cuda_setup_core::plan::{self, Plan};
use cuda_setup_core::run::{Failure, RunEvent, RunReport};
use cuda_setup_core::steps::{Step, StepError, StepEvent, StepKind};

use super::Session;
use crate::ui::job::{Job, Status};
use crate::ui::worker::{ArchiveCheck, Command, JobId, Refused};

/// The check's answer: the archive fits the toolkit, or why it is refused.
pub type CheckAnswer = Result<Box<ArchiveCheck>, Box<Refused>>;

/// cuDNN: the archive, its check, a download, the install, the Undo.
#[derive(Default)]
pub struct Cudnn {
    pub(super) archive: Option<PathBuf>,
    /// The check of `archive` (Err: its thread died).
    pub(super) check: Job<Result<CheckAnswer, String>>,
    /// The download: its plan is made, then the executor runs it (cancellable).
    pub(super) download: Job<Result<(), Box<Failure>>>,
    /// Bytes done, total, bytes per second, seconds left.
    pub(super) download_progress: Option<(u64, Option<u64>, f64, Option<f64>)>,
    pub(super) install: Job<Result<Box<Manifest>, Box<Failure>>>,
    pub(super) extracted: Option<(u64, u64)>,
    pub(super) skipped: bool,
    /// "Download and install": the downloaded archive is installed once its check passes.
    pub(super) install_when_checked: bool,
    /// Undo (the page's button): what it removed.
    pub(super) undo: Job<Result<Box<Manifest>, Box<Failure>>>,
}

impl Cudnn {
    pub fn archive(&self) -> Option<&Path> {
        self.archive.as_deref()
    }

    pub fn validating(&self) -> bool {
        self.check.is_running()
    }

    /// The check's answer (None while it runs, and when its thread died).
    pub fn check(&self) -> Option<&CheckAnswer> {
        self.check.done()?.as_ref().ok()
    }

    pub fn downloading(&self) -> bool {
        self.download.is_running()
    }

    pub fn download_progress(&self) -> Option<(u64, Option<u64>, f64, Option<f64>)> {
        self.download_progress
    }

    /// Why the last download stopped (a cancel too), when it did.
    pub fn download_error(&self) -> Option<&Failure> {
        self.download.done()?.as_ref().err().map(|f| &**f)
    }

    pub fn installing(&self) -> bool {
        self.install.is_running()
    }

    /// Bytes extracted so far, of the total.
    pub fn extracted(&self) -> Option<(u64, u64)> {
        self.extracted
    }

    /// What the install put in place (its manifest), or why it failed.
    pub fn installed(&self) -> Option<&Result<Box<Manifest>, Box<Failure>>> {
        self.install.done()
    }

    pub fn skipped(&self) -> bool {
        self.skipped
    }

    pub fn undoing(&self) -> bool {
        self.undo.is_running()
    }

    /// What Undo removed, or why it could not.
    pub fn undone(&self) -> Option<&Result<Box<Manifest>, Box<Failure>>> {
        self.undo.done()
    }

    pub fn busy(&self) -> bool {
        self.validating() || self.downloading() || self.installing() || self.undoing()
    }

    /// Installed, or skipped on purpose.
    pub fn finished(&self) -> bool {
        self.skipped || matches!(self.installed(), Some(Ok(_)))
    }

    pub(super) fn status(&self, job: JobId) -> Status {
        match job {
            JobId::CudnnCheck => self.check.status(),
            JobId::CudnnDownload => self.download.status(),
            JobId::CudnnInstall => self.install.status(),
            _ => self.undo.status(),
        }
    }

    /// The thread of one of cuDNN's jobs died: that job ends with the crash.
    pub(super) fn crash(&mut self, job: JobId, message: &str) {
        match job {
            JobId::CudnnCheck => self.check.crash(message),
            JobId::CudnnDownload => self.download.crash(message),
            JobId::CudnnInstall => self.install.crash(message),
            _ => self.undo.crash(message),
        };
    }
}

/// A job the user cancelled, as its failure.
pub(super) fn cancelled(step: StepKind) -> Box<Failure> {
    Box::new(Failure::of(step, &StepError::Cancelled))
}

/// A run's failure, or (a run that stopped without one) the user's cancel.
fn failure(r: &RunReport, step: StepKind) -> Box<Failure> {
    r.failure
        .clone()
        .map(Box::new)
        .unwrap_or_else(|| cancelled(step))
}

impl Session {
    /// Checks `path` against the toolkit (nothing is copied yet).
    #[must_use]
    pub(super) fn use_archive(&mut self, path: PathBuf) -> Vec<Command> {
        let Some(toolkit_dir) = self.toolkit_dir() else {
            return Vec::new();
        };
        let c = &mut self.cudnn;
        c.archive = Some(path.clone());
        // An archive the user gave is shown checked first; only the download installs on.
        c.install_when_checked = false;
        c.install = Job::Idle;
        c.extracted = None;
        c.check = Job::started();
        vec![Command::ValidateCudnn {
            archive: path,
            toolkit_dir,
        }]
    }

    /// The check's answer; after "Download and install", a passing archive goes on to
    /// its install.
    #[must_use]
    pub(super) fn checked(&mut self, r: CheckAnswer) -> Vec<Command> {
        let ok = r.is_ok();
        self.cudnn.check.finish(Ok(r));
        if std::mem::take(&mut self.cudnn.install_when_checked) && ok {
            return self.install_cudnn();
        }
        Vec::new()
    }

    /// "Download and install" the recommended cuDNN: first its plan (finding its hash may
    /// read NVIDIA's manifest), then its run, its check, and its install.
    #[must_use]
    pub(super) fn download_cudnn(&mut self) -> Vec<Command> {
        let Some(pick) = self.recommendation.as_ref().and_then(|r| r.cudnn.clone()) else {
            return Vec::new();
        };
        self.cudnn.install_when_checked = true;
        self.cudnn.download = Job::cancellable(Cancel::default());
        self.cudnn.download_progress = None;
        // The plan's choices: the mirrors, connections and bundle of every plan.
        vec![Command::PlanCudnnDownload {
            pick: Box::new(pick),
            choices: Box::new(self.choices()),
        }]
    }

    /// The download's plan: run it, unless it was cancelled meanwhile.
    #[must_use]
    pub(super) fn cudnn_planned(&mut self, r: Result<Box<Plan>, Box<Failure>>) -> Vec<Command> {
        let d = &mut self.cudnn.download;
        match (r, d.cancel_token().cloned()) {
            // Cancelled while the plan was made: it never runs.
            (Ok(_), Some(c)) if c.is_cancelled() => {
                d.finish(Err(cancelled(StepKind::DownloadCudnn)));
            }
            (Ok(plan), Some(c)) => {
                return vec![Command::Run {
                    job: JobId::CudnnDownload,
                    plan,
                    cancel: c,
                }];
            }
            // No download waits for it (it ended already).
            (Ok(_), None) => {}
            (Err(f), _) => d.finish(Err(f)),
        }
        Vec::new()
    }

    /// The download's run: progress, then its report — a downloaded archive is checked
    /// next.
    #[must_use]
    pub(super) fn download_event(&mut self, e: RunEvent) -> Vec<Command> {
        let c = &mut self.cudnn;
        match e {
            RunEvent::Step {
                event:
                    StepEvent::Progress {
                        done,
                        total,
                        bytes_per_sec,
                        eta_secs,
                        ..
                    },
                ..
            } => c.download_progress = Some((done, total, bytes_per_sec, eta_secs)),
            RunEvent::Done(r) => match plan::cudnn_archive_of(&r.plan).filter(|_| r.ok()) {
                Some(path) => {
                    c.download.finish(Ok(()));
                    let then = c.install_when_checked;
                    let cmds = self.use_archive(path.to_path_buf());
                    self.cudnn.install_when_checked = then;
                    return cmds;
                }
                None => c.download.finish(Err(failure(&r, StepKind::DownloadCudnn))),
            },
            _ => {}
        }
        Vec::new()
    }

    #[must_use]
    pub(super) fn install_cudnn(&mut self) -> Vec<Command> {
        let (Some(archive), Some(toolkit_dir)) = (self.cudnn.archive.clone(), self.toolkit_dir())
        else {
            return Vec::new();
        };
        self.cudnn.install = Job::started();
        self.cudnn.extracted = None;
        self.cudnn.undo = Job::Idle;
        let plan = plan::cudnn_install(&self.opts.target, &archive, &toolkit_dir);
        vec![Command::Run {
            job: JobId::CudnnInstall,
            plan: Box::new(plan),
            cancel: Cancel::default(),
        }]
    }

    /// The install's run: progress, then its report — an installed cuDNN is what its
    /// manifest says, and detection runs again.
    #[must_use]
    pub(super) fn install_cudnn_event(&mut self, e: RunEvent) -> Vec<Command> {
        let c = &mut self.cudnn;
        match e {
            RunEvent::Step {
                event: StepEvent::Progress { done, total, .. },
                ..
            } => c.extracted = Some((done, total.unwrap_or(done))),
            RunEvent::Done(r) => {
                let dir = r.plan.steps.iter().find_map(|s| match s {
                    Step::InstallCudnn { cuda_dir, .. } => Some(cuda_dir.clone()),
                    _ => None,
                });
                c.install.finish(if r.ok() {
                    dir.as_deref()
                        .map(cuda_setup_core::cudnn::txn::read_manifest)
                        .and_then(|m| m.transpose())
                        .map(|m| {
                            m.map(Box::new).map_err(|e| {
                                Box::new(Failure::of(StepKind::InstallCudnn, &StepError::Cudnn(e)))
                            })
                        })
                        .unwrap_or_else(|| Err(failure(&r, StepKind::InstallCudnn)))
                } else {
                    Err(failure(&r, StepKind::InstallCudnn))
                });
                // cuDNN is on disk now: the pages show it, not what was there before.
                if r.ok() {
                    return self.detect_again();
                }
            }
            _ => {}
        }
        Vec::new()
    }

    /// Remove the cuDNN this page installed (the files it replaced are put back).
    #[must_use]
    pub(super) fn undo_cudnn(&mut self) -> Vec<Command> {
        let Some(toolkit_dir) = self.toolkit_dir() else {
            return Vec::new();
        };
        self.cudnn.undo = Job::started();
        vec![Command::UninstallCudnn { toolkit_dir }]
    }

    #[must_use]
    pub(super) fn cudnn_uninstalled(
        &mut self,
        r: Result<Box<Manifest>, cuda_setup_core::cudnn::CudnnError>,
    ) -> Vec<Command> {
        let changed = r.is_ok();
        if changed {
            self.cudnn.install = Job::Idle;
        }
        self.cudnn.undo.finish(
            r.map_err(|e| Box::new(Failure::of(StepKind::InstallCudnn, &StepError::Cudnn(e)))),
        );
        if changed {
            return self.detect_again();
        }
        Vec::new()
    }
}
