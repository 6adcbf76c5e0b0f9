//! The worker: everything slow runs here, never on the UI thread. The UI hands it a
//! [`Command`]; it runs the core on a thread of its own and answers with [`Event`]s over
//! one channel, asking egui for a repaint each time, so the UI redraws from state.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, OnceLock};

use cuda_setup_core::compat::Tables;
use cuda_setup_core::cudnn;
use cuda_setup_core::detect::{self, Deadlines, SystemReport};
use cuda_setup_core::download::Cancel;
use cuda_setup_core::guard;
use cuda_setup_core::linux_driver;
use cuda_setup_core::message::Message;
use cuda_setup_core::plan::{self, Choices, Plan};
use cuda_setup_core::platform::Host;
use cuda_setup_core::recommend::{CudnnPick, Recommendation};
use cuda_setup_core::run::{self, Failure, RunEvent};
use cuda_setup_core::steps::{self, StepKind, preflight};
use cuda_setup_core::target::Target;
use cuda_setup_core::verify::{self, SmokeOptions, SmokeReport, doctor};
use cuda_setup_core::version::Version;

use cuda_setup_core::monitor::{self, Sample};

/// What the UI asks for.
pub enum Command {
    Detect,
    /// Build the plan (hashes may come from NVIDIA's published lists) and run the
    /// pre-flight checks, changing nothing.
    Prepare {
        rec: Box<Recommendation>,
        choices: Box<Choices>,
    },
    Run {
        job: JobId,
        plan: Box<Plan>,
        cancel: Cancel,
    },
    /// A file dialog for a cuDNN zip (or a Python), off the UI thread.
    PickFile {
        purpose: Pick,
    },
    ValidateCudnn {
        archive: PathBuf,
        toolkit_dir: PathBuf,
    },
    /// The plan that downloads the pick's archive (finding its hash may read NVIDIA's
    /// redist manifest); the session then submits it as a [`JobId::CudnnDownload`] run.
    PlanCudnnDownload {
        pick: Box<CudnnPick>,
        choices: Box<Choices>,
    },
    /// Undo cuDNN: the transaction's uninstall (files it replaced are put back).
    UninstallCudnn {
        toolkit_dir: PathBuf,
    },
    Smoke {
        cuda_dir: Option<PathBuf>,
    },
    Doctor {
        python: Option<PathBuf>,
        mirror: Option<doctor::PypiMirror>,
        gpu: doctor::GpuFacts,
    },
    /// Write `text` to `path`, or (with `path` None) to a file the user picks.
    Save {
        path: Option<PathBuf>,
        default_name: String,
        text: String,
    },
    /// Open a file with the system's viewer (the run's log).
    Open(PathBuf),
    /// Repair: audit every layer.
    Audit {
        overrides: cuda_setup_core::repair::Overrides,
    },
    /// Repair: apply the fixable findings' fixes, then audit again.
    Fix {
        overrides: cuda_setup_core::repair::Overrides,
        findings: Vec<cuda_setup_core::repair::Finding>,
    },
    /// Read NVIDIA's manifests and the PyTorch index for new releases (in the background,
    /// at start; nothing waits for it).
    Refresh(Box<Refresh>),
    /// Linux: the package and commands that give a driver of at least `minimum` (reads
    /// the distribution and the Secure Boot state, so not on the UI thread).
    LinuxDriverAdvice {
        minimum: Option<Version>,
        /// The toolkit's driver branch a new driver is of (CUDA 13.4: R615, #32).
        branch: Option<u32>,
        /// The GPUs' last driver branch (Kepler: 470), when one is on a stopped branch.
        last_branch: Option<u32>,
    },
    /// The driver asked for a restart: open cuda-setup again after it, and restart now
    /// when `now`.
    Restart {
        now: bool,
    },
    /// Windows' policy that keeps Windows Update from replacing drivers (#33): on, or
    /// back to what was there.
    DriverPolicy {
        on: bool,
    },
    /// What `cuda-setup uninstall` would undo (#35), to confirm.
    PlanUninstall,
    /// Undo it.
    Uninstall(Box<cuda_setup_core::uninstall::UninstallPlan>),
    /// The guard of `python`'s verified PyTorch (#33): `op`, then its status.
    Guard {
        python: PathBuf,
        op: GuardOp,
    },
    /// The plan that puts `python`'s verified PyTorch back (repair's fix for a swap); the
    /// session then submits it as a [`JobId::Restore`] run.
    PlanRestore {
        python: PathBuf,
    },
}

/// What the guard's switch asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardOp {
    Status,
    /// `confirmed`: the user agreed to write into a system Python's prefix.
    On {
        confirmed: bool,
    },
    Off,
}

/// What a guard command did.
#[derive(Debug, Clone)]
pub enum GuardDone {
    On(guard::OnOutcome),
    Off(guard::OffOutcome),
}

/// The guard's answer for `python`: what the switch did (None: only asked), then its
/// status; errors in the core's words.
#[derive(Debug, Clone)]
pub struct GuardAnswer {
    pub python: PathBuf,
    pub done: Option<Result<GuardDone, Message>>,
    pub status: Result<Box<guard::Status>, Message>,
}

/// What a background refresh needs: the tables without any cache merged in, where to
/// read, and the cache file.
#[derive(Debug, Clone)]
pub struct Refresh {
    pub base: Tables,
    pub sources: cuda_setup_core::refresh::Sources,
    pub cache: Option<PathBuf>,
}

/// Which of the session's jobs a command works for: its [`RunEvent`]s say it, and so does
/// the crash of its thread, so the session ends exactly that job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobId {
    Detect,
    /// Linux: the driver package and commands for the recommendation's minimum.
    LinuxDriver,
    /// The background refresh of the tables.
    Refresh,
    Prepare,
    /// The install run (the driver, the toolkit).
    Install,
    /// The restart the driver asked for.
    Restart,
    /// Windows Update's driver policy switched (#33).
    DriverPolicy,
    /// cuDNN: an archive checked against the toolkit.
    CudnnCheck,
    /// cuDNN: the download's plan, then its run.
    CudnnDownload,
    CudnnInstall,
    /// cuDNN: the page's Undo.
    CudnnUndo,
    Smoke,
    Doctor,
    Pip,
    Audit,
    /// Repair's fixes (a run per fix, then the audit again).
    Fix,
    Save,
    /// The guard's status and switch for the chosen Python (#33).
    Guard,
    /// Putting the verified PyTorch back: its plan, then its run.
    Restore,
    /// Undoing what cuda-setup changed: the plan to confirm, then its run (#35).
    PlanUninstall,
    Uninstall,
}

impl JobId {
    /// Every job, for tests that go through them all.
    pub const ALL: [JobId; 21] = [
        JobId::Detect,
        JobId::LinuxDriver,
        JobId::Refresh,
        JobId::Prepare,
        JobId::Install,
        JobId::Restart,
        JobId::DriverPolicy,
        JobId::CudnnCheck,
        JobId::CudnnDownload,
        JobId::CudnnInstall,
        JobId::CudnnUndo,
        JobId::Smoke,
        JobId::Doctor,
        JobId::Pip,
        JobId::Audit,
        JobId::Fix,
        JobId::Save,
        JobId::Guard,
        JobId::Restore,
        JobId::PlanUninstall,
        JobId::Uninstall,
    ];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    CudnnArchive,
    Python,
}

/// A cuDNN archive's check, as the core makes it.
pub use cuda_setup_core::cudnn::{Checked as ArchiveCheck, Refused};

/// The plan and what pre-flight found.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub plan: Plan,
    /// Pre-flight's checks and the free space, measured here rather than on the UI thread.
    pub ahead: preflight::Ahead,
}

/// What the worker says.
pub enum Event {
    /// Detection's report, and the distribution's os-release (Linux) read beside it.
    Detected(Box<SystemReport>, Option<linux_driver::OsRelease>),
    /// The driver record and what the machine shows beside it (#33), read beside each
    /// detection.
    DriverWatch(Box<cuda_setup_core::driverwatch::Observed>),
    /// What is installed, read beside each detection.
    Existing(Box<cuda_setup_core::repair::Existing>),
    Prepared(Result<Box<Prepared>, String>),
    Run(JobId, RunEvent),
    Picked(Pick, Option<PathBuf>),
    CudnnValidated(Result<Box<ArchiveCheck>, Box<Refused>>),
    /// The cuDNN download's plan, or why none could be made.
    CudnnPlanned(Result<Box<Plan>, Box<Failure>>),
    /// The cuDNN page's Undo: what was removed (the toolkit folder is as before).
    CudnnUninstalled(Result<Box<cudnn::Manifest>, cudnn::CudnnError>),
    Sample(Sample),
    MonitorUnavailable(String),
    Smoke(Box<SmokeReport>),
    Doctor(Box<doctor::DoctorReport>),
    Saved(Result<PathBuf, String>),
    Audited(Vec<cuda_setup_core::repair::Finding>),
    Fixed(Box<cuda_setup_core::repair::FixResult>),
    /// The refresh's outcome, or why a source's data was refused.
    Refreshed(Result<Box<cuda_setup_core::refresh::Outcome>, String>),
    /// The Linux driver advice for `minimum` (None: nothing known for this distribution).
    LinuxDriverAdvice {
        minimum: Option<Version>,
        branch: Option<u32>,
        advice: Option<Box<linux_driver::LinuxDriverAdvice>>,
    },
    /// cuda-setup opens again after the restart; Ok(true): the restart is under way.
    Restarting(Result<bool, String>),
    /// The driver policy after the switch, or why it was not switched (in words).
    DriverPolicy(Result<Box<cuda_setup_core::driverwatch::policy::PolicyStatus>, String>),
    /// The uninstall's plan, or why it could not be made (in words).
    UninstallPlanned(Result<Box<cuda_setup_core::uninstall::UninstallPlan>, String>),
    /// Actions of the uninstall finished, of all.
    UninstallProgress {
        done: usize,
        total: usize,
    },
    /// How many actions the uninstall did, or why it stopped.
    Uninstalled(Result<usize, String>),
    /// Recorded PyTorch builds another install replaced (read beside each detection).
    Swaps(Vec<guard::Swap>),
    Guard(Box<GuardAnswer>),
    /// The restore's plan for `python` (None: the verified build is there).
    RestorePlanned(PathBuf, Result<Option<Box<Plan>>, Message>),
    /// A bug of ours: the thread working for `job` panicked (the message). The session
    /// ends that job with the error, and the page says so.
    Crashed {
        job: Option<JobId>,
        message: String,
    },
}

impl Command {
    /// The session's job this command works for (None: nothing waits for it — a file
    /// dialog's answer comes as `Picked`, opening the log answers nothing).
    pub fn job(&self) -> Option<JobId> {
        Some(match self {
            Command::Detect => JobId::Detect,
            Command::Prepare { .. } => JobId::Prepare,
            Command::Run { job, .. } => *job,
            Command::ValidateCudnn { .. } => JobId::CudnnCheck,
            Command::PlanCudnnDownload { .. } => JobId::CudnnDownload,
            Command::UninstallCudnn { .. } => JobId::CudnnUndo,
            Command::Smoke { .. } => JobId::Smoke,
            Command::Doctor { .. } => JobId::Doctor,
            Command::Save { .. } => JobId::Save,
            Command::Audit { .. } => JobId::Audit,
            Command::Fix { .. } => JobId::Fix,
            Command::Refresh(_) => JobId::Refresh,
            Command::LinuxDriverAdvice { .. } => JobId::LinuxDriver,
            Command::Restart { .. } => JobId::Restart,
            Command::DriverPolicy { .. } => JobId::DriverPolicy,
            Command::PlanUninstall => JobId::PlanUninstall,
            Command::Uninstall(_) => JobId::Uninstall,
            Command::Guard { .. } => JobId::Guard,
            Command::PlanRestore { .. } => JobId::Restore,
            Command::PickFile { .. } | Command::Open(_) => return None,
        })
    }
}

/// What the UI hears when the thread running a command for `job` panicked: a run ends
/// with its report, failed (its rows and log say where), then the crash itself.
pub fn crash_events(job: Option<JobId>, plan: Option<&Plan>, message: &str) -> Vec<Event> {
    let mut events = Vec::new();
    if let (Some(job), Some(plan)) = (job, plan) {
        let r = run::RunReport::crashed(plan, message);
        events.push(Event::Run(job, RunEvent::Done(Box::new(r))));
    }
    events.push(Event::Crashed {
        job,
        message: message.to_string(),
    });
    events
}

/// What the worker works on: the same sandbox knobs as the CLI.
#[derive(Clone)]
pub struct Env {
    pub tables: Tables,
    /// The machine detection probes (a sandbox in tests).
    pub host: Host,
    /// Where installs go (`--root` in tests).
    pub target: Target,
    pub smoke: SmokeOptions,
    pub deadlines: Deadlines,
    pub file_dialogs: bool,
}

/// Sends events and wakes the UI.
#[derive(Clone)]
struct Outbox {
    tx: Sender<Event>,
    ctx: Arc<OnceLock<egui::Context>>,
}

impl Outbox {
    fn send(&self, e: Event) {
        let _ = self.tx.send(e);
        if let Some(ctx) = self.ctx.get() {
            ctx.request_repaint();
        }
    }
}

pub struct Worker {
    out: Outbox,
    env: Arc<Env>,
}

impl Worker {
    pub fn new(env: Env) -> (Worker, Receiver<Event>) {
        let (tx, rx) = channel();
        let w = Worker {
            out: Outbox {
                tx,
                ctx: Arc::default(),
            },
            env: Arc::new(env),
        };
        (w, rx)
    }

    /// The context to wake when events arrive (known from the first frame on).
    pub fn set_context(&self, ctx: &egui::Context) {
        let _ = self.out.ctx.set(ctx.clone());
    }

    pub fn env(&self) -> &Env {
        &self.env
    }

    /// Later commands use these tables (a refresh brought new releases); running ones
    /// keep the tables they started with.
    pub fn set_tables(&mut self, tables: Tables) {
        let mut env = (*self.env).clone();
        env.tables = tables;
        self.env = Arc::new(env);
    }

    /// Runs `cmd` on a thread of its own: a long install never holds up a file dialog.
    pub fn submit(&self, cmd: Command) {
        let (out, env) = (self.out.clone(), self.env.clone());
        let spawned = std::thread::Builder::new()
            .name("cuda-setup-worker".into())
            .spawn(move || {
                let job = cmd.job();
                let plan = match &cmd {
                    Command::Run { plan, .. } => Some(plan.clone()),
                    _ => None,
                };
                if let Err(p) = cuda_setup_core::panics::catch(|| execute(cmd, &env, &out)) {
                    for e in crash_events(job, plan.as_deref(), &p.message) {
                        out.send(e);
                    }
                }
            });
        if let Err(e) = spawned {
            eprintln!("cuda-setup: could not start a worker thread: {e}");
        }
    }
}

fn execute(cmd: Command, env: &Env, out: &Outbox) {
    use cuda_setup_core::uninstall;
    // `worker_prepare`, `worker_cudnninstall`, … (`worker_none`: a file dialog, the log).
    let job = cmd.job().map_or("none".to_string(), |j| format!("{j:?}"));
    cuda_setup_core::panics::test_hook(&format!("worker_{job}").to_lowercase());
    match cmd {
        Command::Detect => {
            let r = detect::detect(&env.host, &env.tables, env.deadlines);
            // What is installed, read here (folder reads, manifests, the journal), not on
            // the UI thread; sent first, so the detection's follow-ups see it.
            let existing = cuda_setup_core::repair::existing(&env.target);
            out.send(Event::Existing(Box::new(existing)));
            let swaps = guard::swaps(&env.target).into_iter().map(|(s, _)| s);
            out.send(Event::Swaps(swaps.collect()));
            // The distribution, which the recommendation asks whether it packages a driver
            // update (#32): read here too, not on the UI thread.
            let distro = linux_driver::os_release(&env.host);
            // The driver that passed last, read here too (#33).
            let watch = cuda_setup_core::driverwatch::observe(&env.target);
            out.send(Event::DriverWatch(Box::new(watch)));
            out.send(Event::Detected(Box::new(r), distro));
        }
        Command::Prepare { rec, choices } => {
            out.send(Event::Prepared(prepare(env, &rec, &choices)))
        }
        Command::Run { job, plan, cancel } => {
            // The events end with Done, also when the executor's thread died.
            for e in run::spawn(*plan, env.target.clone(), cancel) {
                out.send(Event::Run(job, e));
            }
        }
        Command::PickFile { purpose } => {
            let picked = if env.file_dialogs {
                let d = rfd::FileDialog::new();
                match purpose {
                    Pick::CudnnArchive => d
                        .add_filter("cuDNN (.zip, .tar.xz)", &["zip", "xz"])
                        .pick_file(),
                    Pick::Python => d.pick_file(),
                }
            } else {
                None
            };
            out.send(Event::Picked(purpose, picked));
        }
        Command::ValidateCudnn {
            archive,
            toolkit_dir,
        } => out.send(Event::CudnnValidated(
            cudnn::check(&env.host, env.target.os, &archive, &toolkit_dir)
                .map(Box::new)
                .map_err(Box::new),
        )),
        Command::PlanCudnnDownload { pick, choices } => {
            let r = plan::cudnn_download(&env.target, &pick, &choices)
                .map_err(|e| Box::new(Failure::of_plan(StepKind::DownloadCudnn, &e)));
            out.send(Event::CudnnPlanned(r.map(Box::new)));
        }
        Command::UninstallCudnn { toolkit_dir } => {
            // The CLI's `cudnn uninstall`: recover first, then restore what it replaced.
            let r = cudnn::uninstall(&toolkit_dir).map(Box::new);
            out.send(Event::CudnnUninstalled(r));
        }
        Command::Smoke { cuda_dir } => {
            let opts = SmokeOptions {
                cuda_dir,
                ..env.smoke.clone()
            };
            let r = monitored(out, || verify::smoke(&env.target.host, &env.tables, &opts));
            // A pass on this machine records its driver (#33); a sandbox's facts are given.
            if env.target.root.is_none() {
                cuda_setup_core::driverwatch::after_smoke(&env.target, &r, false);
            }
            out.send(Event::Smoke(Box::new(r)));
        }
        Command::Doctor {
            python,
            mirror,
            gpu,
        } => {
            let opts = doctor::DoctorOptions {
                python,
                mirror,
                ..Default::default()
            };
            // Sampled too: the user sees the card work during the doctor's matmul.
            let mut r = monitored(out, || doctor::examine(&env.host, &env.tables, &opts, &gpu));
            // A build verified here is recorded (and guarded); a swap is told (#33).
            guard::after_doctor(&env.target, &mut r);
            if env.target.root.is_none() {
                cuda_setup_core::driverwatch::after_doctor(&env.target, &r, false);
            }
            out.send(Event::Doctor(Box::new(r)));
        }
        Command::Save {
            path,
            default_name,
            text,
        } => {
            let path = path.or_else(|| {
                env.file_dialogs
                    .then(|| {
                        rfd::FileDialog::new()
                            .set_file_name(&default_name)
                            .save_file()
                    })
                    .flatten()
            });
            let r = match path {
                None => Err(String::new()),
                Some(p) => {
                    if let Some(d) = p.parent() {
                        let _ = std::fs::create_dir_all(d);
                    }
                    std::fs::write(&p, text)
                        .map(|_| p.clone())
                        .map_err(|e| format!("{}: {e}", p.display()))
                }
            };
            out.send(Event::Saved(r));
        }
        Command::Open(path) => open_with_system(&path),
        Command::Audit { overrides } => {
            let found = cuda_setup_core::repair::audit(&env.target, &env.tables, &overrides);
            out.send(Event::Audited(found));
        }
        Command::Refresh(r) => {
            let got = cuda_setup_core::refresh::refresh(
                &r.base,
                &r.sources,
                r.cache.as_deref(),
                &cuda_setup_core::refresh::Options::default(),
            );
            out.send(Event::Refreshed(
                got.map(Box::new).map_err(|e| e.to_string()),
            ));
        }
        Command::LinuxDriverAdvice {
            minimum,
            branch,
            last_branch,
        } => {
            let advice = linux_driver::advice_for(&env.host, minimum.as_ref(), branch, last_branch)
                .map(Box::new);
            out.send(Event::LinuxDriverAdvice {
                minimum,
                branch,
                advice,
            });
        }
        Command::DriverPolicy { on } => {
            use cuda_setup_core::driverwatch::policy;
            let changed = if on {
                policy::on(&env.target)
            } else {
                policy::off(&env.target)
            };
            let r = changed
                .and_then(|_| policy::status(&env.target))
                .map(Box::new)
                .map_err(|e| cuda_setup_core::error::chain(&e));
            out.send(Event::DriverPolicy(r));
        }
        Command::PlanUninstall => {
            let r = uninstall::plan(&env.target, &uninstall::Options::default())
                .map(Box::new)
                .map_err(|e| cuda_setup_core::error::chain(&e));
            out.send(Event::UninstallPlanned(r));
        }
        Command::Uninstall(plan) => {
            let r = uninstall::execute(&env.target, &plan, &mut |e| {
                if let uninstall::Event::Finished { index, total } = e {
                    out.send(Event::UninstallProgress {
                        done: index + 1,
                        total,
                    });
                }
            })
            .map(|r| r.done)
            .map_err(|e| cuda_setup_core::error::chain(&e));
            out.send(Event::Uninstalled(r));
        }
        Command::Restart { now } => {
            out.send(Event::Restarting(steps::driver::restart(&env.target, now)))
        }
        Command::Guard { python, op } => {
            let t = &env.target;
            let done = match op {
                GuardOp::Status => None,
                GuardOp::On { confirmed } => {
                    Some(guard::on(t, &python, confirmed).map(GuardDone::On))
                }
                GuardOp::Off => Some(guard::off(t, &python).map(GuardDone::Off)),
            };
            let done = done.map(|r| r.map_err(|e| e.message()));
            let status = guard::status(t, &python)
                .map(Box::new)
                .map_err(|e| e.message());
            out.send(Event::Guard(Box::new(GuardAnswer {
                python,
                done,
                status,
            })));
        }
        Command::PlanRestore { python } => {
            let r = cuda_setup_core::repair::restore_plan(&env.target, &python)
                .map(|p| p.map(Box::new))
                .map_err(|e| e.message());
            out.send(Event::RestorePlanned(python, r));
        }
        Command::Fix {
            overrides,
            findings,
        } => {
            let r = cuda_setup_core::repair::fix(
                &env.target,
                &env.tables,
                &overrides,
                &findings,
                &mut |e| out.send(Event::Run(JobId::Fix, e)),
            );
            out.send(Event::Fixed(Box::new(r)));
        }
    }
}

/// Runs `f` while GPU figures are sampled (NVML) and sent as events.
fn monitored<T>(out: &Outbox, f: impl FnOnce() -> T) -> T {
    let stop = Arc::new(AtomicBool::new(false));
    {
        let (stop, out) = (stop.clone(), out.clone());
        std::thread::spawn(move || {
            monitor::run(&stop, &mut |s| match s {
                Ok(sample) => out.send(Event::Sample(sample)),
                Err(why) => out.send(Event::MonitorUnavailable(why)),
            })
        });
    }
    let r = f();
    stop.store(true, Ordering::SeqCst);
    r
}

fn prepare(env: &Env, rec: &Recommendation, choices: &Choices) -> Result<Box<Prepared>, String> {
    // The plan's look-ups (checksums, vswhere) run here, not on the UI thread.
    let plan =
        plan::make(&env.target, rec, choices).map_err(|e| cuda_setup_core::error::chain(&e))?;
    let ahead = preflight::ahead(&env.target, &plan.steps);
    Ok(Box::new(Prepared { plan, ahead }))
}

/// The system's viewer for a file; nothing waits for it.
fn open_with_system(path: &std::path::Path) {
    #[cfg(windows)]
    let r = std::process::Command::new("explorer").arg(path).spawn();
    #[cfg(target_os = "macos")]
    let r = std::process::Command::new("open").arg(path).spawn();
    #[cfg(all(unix, not(target_os = "macos")))]
    let r = std::process::Command::new("xdg-open").arg(path).spawn();
    // This is a worker thread: waiting reaps the child (xdg-open returns at once).
    match r {
        Ok(mut child) => {
            let _ = child.wait();
        }
        Err(e) => eprintln!("cuda-setup: could not open {}: {e}", path.display()),
    }
}
