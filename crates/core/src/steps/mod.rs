//! The steps a plan is made of, each idempotent: run on a machine where it is already
//! done, it changes nothing and says so (`changed: false`).

mod build_record;
pub mod driver;
pub mod env;
mod failure;
pub mod installer_process;
pub mod preflight;
pub mod toolkit;
pub mod torch_wheel;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::download::{self, Cancel, DownloadError, DownloadKind, Expected};
use crate::error::Cause;
use crate::message::Message;
use crate::msg;
use crate::target::Target;
use crate::version::Version;

pub use failure::FailureKind;

/// One step of a plan (serialisable: `--dry-run` prints them, `--plan FILE` reads them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum Step {
    Preflight(preflight::Inputs),
    Download(DownloadSpec),
    /// Windows: NVIDIA's display driver, silently, after its signature is checked.
    InstallDriver(driver::InstallSpec),
    InstallToolkit(toolkit::InstallSpec),
    /// The `wheels` method: lay downloaded component wheels out as a toolkit tree.
    AssembleToolkit(crate::wheels::AssembleSpec),
    InstallCudnn {
        archive: PathBuf,
        cuda_dir: PathBuf,
    },
    ConfigureEnv {
        cuda_dir: PathBuf,
        version: Version,
    },
    InstallTorch {
        python: PathBuf,
        args: Vec<String>,
    },
    /// Windows: set (or remove) one variable at the target's scope (repair).
    SetEnv {
        name: String,
        value: Option<String>,
    },
    /// Finish or roll back a cuDNN transaction a killed run left (repair).
    RecoverCudnn {
        cuda_dir: PathBuf,
    },
    /// Put back or clean what a killed wheels build left beside a toolkit folder (repair).
    RecoverToolkit {
        dir: PathBuf,
    },
    /// Complete a toolkit tree the wheels method built earlier, in place, with what a
    /// developer's build links (link names, driver stub, import libraries) (repair).
    CompleteToolkit {
        dir: PathBuf,
        version: Version,
    },
    Verify {
        cuda_dir: PathBuf,
        version: Version,
        cudnn: bool,
        /// Also build (compile and link) a program against the toolkit: the developer
        /// goal's check (`verify::build`). Absent in older journals: false.
        #[serde(default)]
        build: bool,
    },
}

/// Which step a step is: its identity, typed (front ends and the executor match on this,
/// never on names). Serialised as the stable names reports and journals carry
/// (`download_cudnn`, …), which are also the i18n key suffixes of the titles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    Preflight,
    DownloadDriver,
    DownloadToolkit,
    DownloadCudnn,
    InstallDriver,
    InstallToolkit,
    AssembleToolkit,
    InstallCudnn,
    ConfigureEnv,
    InstallTorch,
    SetEnv,
    RecoverCudnn,
    RecoverToolkit,
    CompleteToolkit,
    Verify,
}

impl StepKind {
    /// The stable name (the serde name).
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Preflight => "preflight",
            StepKind::DownloadDriver => "download_driver",
            StepKind::DownloadToolkit => "download_toolkit",
            StepKind::DownloadCudnn => "download_cudnn",
            StepKind::InstallDriver => "install_driver",
            StepKind::InstallToolkit => "install_toolkit",
            StepKind::AssembleToolkit => "assemble_toolkit",
            StepKind::InstallCudnn => "install_cudnn",
            StepKind::ConfigureEnv => "configure_env",
            StepKind::InstallTorch => "install_torch",
            StepKind::SetEnv => "set_env",
            StepKind::RecoverCudnn => "recover_cudnn",
            StepKind::RecoverToolkit => "recover_toolkit",
            StepKind::CompleteToolkit => "complete_toolkit",
            StepKind::Verify => "verify",
        }
    }

    /// The display driver's steps (download, then install), which come first.
    pub fn is_driver(self) -> bool {
        matches!(self, StepKind::DownloadDriver | StepKind::InstallDriver)
    }
}

impl std::fmt::Display for StepKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Step {
    pub fn kind(&self) -> StepKind {
        match self {
            Step::Preflight(_) => StepKind::Preflight,
            Step::Download(d) => match d.what {
                Artifact::CudnnArchive => StepKind::DownloadCudnn,
                Artifact::DriverInstaller => StepKind::DownloadDriver,
                Artifact::ToolkitInstaller | Artifact::ToolkitWheel => StepKind::DownloadToolkit,
            },
            Step::InstallDriver(_) => StepKind::InstallDriver,
            Step::InstallToolkit(_) => StepKind::InstallToolkit,
            Step::AssembleToolkit(_) => StepKind::AssembleToolkit,
            Step::InstallCudnn { .. } => StepKind::InstallCudnn,
            Step::ConfigureEnv { .. } => StepKind::ConfigureEnv,
            Step::InstallTorch { .. } => StepKind::InstallTorch,
            Step::SetEnv { .. } => StepKind::SetEnv,
            Step::RecoverCudnn { .. } => StepKind::RecoverCudnn,
            Step::RecoverToolkit { .. } => StepKind::RecoverToolkit,
            Step::CompleteToolkit { .. } => StepKind::CompleteToolkit,
            Step::Verify { .. } => StepKind::Verify,
        }
    }

    /// A stable, short name (also the i18n key suffix of its title): [`StepKind::as_str`].
    pub fn name(&self) -> &'static str {
        self.kind().as_str()
    }
}

/// What a download step fetches. It decides the one exception to "every download is
/// checked against a hash": the driver installer, for which NVIDIA publishes none (its
/// Authenticode signature is checked before it runs). Serialised as before
/// (`"what": "cudnn_archive"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Artifact {
    ToolkitInstaller,
    /// NVIDIA's cuDNN redist archive, or the `nvidia-cudnn` wheel (the wheels method).
    CudnnArchive,
    ToolkitWheel,
    DriverInstaller,
}

impl Artifact {
    /// Whether this download may come without a hash (only the driver installer).
    pub fn may_lack_hash(self) -> bool {
        self == Artifact::DriverInstaller
    }
}

/// The catalogue key of a step's title, by its name ([`Step::name`]): how both front ends
/// name a step to a user (never the raw `set_env`). Written out, not assembled; a name
/// this match does not know yet still reads as words.
pub fn title_key(name: &str) -> &'static str {
    match name {
        "preflight" => "ui_step_preflight",
        "download_driver" => "ui_step_download_driver",
        "install_driver" => "ui_step_install_driver",
        "download_toolkit" => "ui_step_download_toolkit",
        "install_toolkit" => "ui_step_install_toolkit",
        "assemble_toolkit" => "ui_step_assemble_toolkit",
        "download_cudnn" => "ui_step_download_cudnn",
        "install_cudnn" => "ui_step_install_cudnn",
        "configure_env" => "ui_step_configure_env",
        "install_torch" => "ui_step_install_torch",
        "verify" => "ui_step_verify",
        "set_env" => "ui_step_set_env",
        "recover_cudnn" => "ui_step_recover_cudnn",
        "recover_toolkit" => "ui_step_recover_toolkit",
        "complete_toolkit" => "ui_step_complete_toolkit",
        _ => "ui_step_other",
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DownloadSpec {
    pub what: Artifact,
    pub url: String,
    pub mirrors: Vec<String>,
    pub sha256: Option<String>,
    pub md5: Option<String>,
    pub size: Option<u64>,
    pub dest: PathBuf,
    pub bundle_dirs: Vec<PathBuf>,
    pub cache_dir: Option<PathBuf>,
    pub connections: usize,
}

/// What a step reports as it runs.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StepEvent {
    Progress {
        done: u64,
        total: Option<u64>,
        bytes_per_sec: f64,
        eta_secs: Option<f64>,
    },
    /// A line for the log and the progress view: a step's own words, or a program's
    /// output quoted as it is (`step_output`).
    Log { line: Message },
}

impl StepEvent {
    /// A program's output line, quoted as it is.
    pub fn output(line: String) -> StepEvent {
        StepEvent::Log {
            line: msg!("step_output", line = line),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct StepOutcome {
    pub changed: bool,
    /// What the step did, in words front ends render in the user's language.
    pub detail: Message,
    pub reboot_required: bool,
}

/// Why a step failed. Causes are kept (`#[source]`), not flattened into text: render one
/// with [`crate::error::chain`].
#[derive(Debug, Clone, thiserror::Error)]
pub enum StepError {
    #[error("pre-flight checks failed: {}", .failed.iter().map(|c| format!("{}: {}", c.what, c.why)).collect::<Vec<_>>().join("; "))]
    Preflight { failed: Vec<preflight::Check> },
    #[error("download failed: {0}")]
    Download(#[source] DownloadError),
    #[error("the CUDA installer exited with code {}, and {} missing afterwards; its log: {}", toolkit::exit_code(*.code), .missing.join(", "), .log.as_ref().map_or("-".into(), |p| p.display().to_string()))]
    Installer {
        code: Option<i32>,
        missing: Vec<String>,
        log: Option<PathBuf>,
    },
    #[error("the CUDA installer did not finish within {minutes} minutes and was stopped")]
    InstallerTimeout { minutes: u64 },
    /// The driver installer is not signed by NVIDIA: it was not run.
    #[error("{}: not run: {source}", .path.display())]
    DriverSignature {
        path: PathBuf,
        #[source]
        source: crate::platform::signature::SignatureError,
    },
    #[error("NVIDIA's driver installer ({version}) exited with {}", .code.map_or("no code".into(), |c| c.to_string()))]
    DriverInstaller { code: Option<i32>, version: Version },
    #[error("{what} needs administrator rights")]
    NeedsAdmin { what: String },
    #[error("cuDNN: {0}")]
    Cudnn(#[source] crate::cudnn::CudnnError),
    #[error("toolkit from wheels: {0}")]
    Wheels(#[source] crate::wheels::WheelError),
    /// `what`: what could not be done ("cannot set CUDA_PATH"); the registry's or the
    /// record's error is the source.
    #[error("environment: {what}")]
    Env {
        what: String,
        #[source]
        source: Cause,
    },
    #[error("pip failed (exit code {})", toolkit::exit_code(*.code))]
    Pip { code: Option<i32> },
    #[error("verification failed: {detail}")]
    Verify { detail: String },
    /// The build check failed: `problem` is what a user acts on, language-neutral (the
    /// missing files, or the compiler's first error line); `detail` the check's words.
    #[error("the build check failed: {detail}")]
    Build { problem: String, detail: String },
    #[error("{}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: Cause,
    },
    /// The drive filled up while writing `path` (ENOSPC, ERROR_DISK_FULL).
    #[error("{}: the drive is full ({})", .path.display(), space(*.needed, *.free))]
    DiskFull {
        path: PathBuf,
        needed: Option<u64>,
        free: Option<u64>,
    },
    /// A bug of ours: a panic inside the step, caught by the executor.
    #[error("internal error: {message}")]
    Internal { message: String },
    #[error("cancelled")]
    Cancelled,
    #[error(transparent)]
    Busy(crate::lock::Busy),
}

impl StepError {
    /// An environment change that failed (`what`), with its cause.
    pub fn env(
        what: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        StepError::Env {
            what: what.into(),
            source: std::sync::Arc::new(source),
        }
    }
}

/// "1.2 GB free, 3.0 GB needed" with what is known.
fn space(needed: Option<u64>, free: Option<u64>) -> String {
    let gb = crate::units::bytes;
    match (free, needed) {
        (Some(f), Some(n)) => format!("{} free, {} needed", gb(f), gb(n)),
        (Some(f), None) => format!("{} free", gb(f)),
        (None, Some(n)) => format!("{} needed", gb(n)),
        (None, None) => "no space left".into(),
    }
}

impl StepError {
    /// An I/O error on `path`; a full drive is told apart (kind `disk_full`).
    pub fn io(path: &Path, e: std::io::Error) -> Self {
        if crate::platform::is_disk_full(&e) {
            return StepError::DiskFull {
                path: path.to_path_buf(),
                needed: None,
                free: crate::platform::free_space(path).ok(),
            };
        }
        StepError::Io {
            path: path.to_path_buf(),
            source: crate::error::cause(e),
        }
    }

    /// The parameters of the plain-words text (`fail_<kind>`, `fix_<kind>`): for a full
    /// drive the folder, what is free and what is needed (`needed` None: not known here;
    /// the executor fills it in from the plan's pre-flight figure).
    pub fn params(&self) -> Option<(PathBuf, Option<u64>, Option<u64>)> {
        use crate::cudnn::CudnnError;
        match self {
            StepError::DiskFull { path, needed, free } => Some((path.clone(), *needed, *free)),
            StepError::Cudnn(CudnnError::DiskFull { dir, needed, free }) => {
                Some((dir.clone(), (*needed > 0).then_some(*needed), Some(*free)))
            }
            StepError::Download(e) => download_disk_full(e),
            _ => None,
        }
    }

    /// The failure's class, stable for scripts (`--json` reports it) and the key of the
    /// plain-words text the wizard shows in the user's language (`fail_<kind>`).
    pub fn kind(&self) -> FailureKind {
        use crate::cudnn::CudnnError;
        match self {
            StepError::Preflight { .. } => FailureKind::Preflight,
            StepError::Download(e) => match e.kind() {
                DownloadKind::Network => FailureKind::DownloadNetwork,
                DownloadKind::Missing => FailureKind::DownloadMissing,
                DownloadKind::Corrupt => FailureKind::DownloadCorrupt,
                DownloadKind::DiskFull => FailureKind::DiskFull,
                DownloadKind::Cancelled => FailureKind::Cancelled,
                DownloadKind::Other => FailureKind::DownloadOther,
            },
            StepError::Installer { .. } => FailureKind::InstallerFailed,
            StepError::InstallerTimeout { .. } => FailureKind::InstallerTimeout,
            StepError::DriverSignature { .. } => FailureKind::DriverSignature,
            StepError::DriverInstaller { .. } => FailureKind::DriverFailed,
            StepError::NeedsAdmin { .. } => FailureKind::NeedsAdmin,
            StepError::Cudnn(CudnnError::InUse { .. }) => FailureKind::FileInUse,
            StepError::Cudnn(CudnnError::DiskFull { .. }) => FailureKind::DiskFull,
            StepError::Cudnn(CudnnError::Busy(_)) | StepError::Busy(_) => FailureKind::Busy,
            StepError::Cudnn(_) => FailureKind::Cudnn,
            StepError::Wheels(crate::wheels::WheelError::UserFiles { .. }) => {
                FailureKind::UserFiles
            }
            StepError::Wheels(_) => FailureKind::Wheels,
            StepError::Env { .. } => FailureKind::Env,
            StepError::Pip { .. } => FailureKind::Pip,
            StepError::Verify { .. } => FailureKind::Verify,
            StepError::Build { .. } => FailureKind::Build,
            StepError::Io { .. } => FailureKind::Io,
            StepError::DiskFull { .. } => FailureKind::DiskFull,
            StepError::Internal { .. } => FailureKind::Internal,
            StepError::Cancelled => FailureKind::Cancelled,
        }
    }

    /// The other cuda-setup's process id, when another run holds the lock (`busy`).
    pub fn busy(&self) -> Option<&crate::lock::Busy> {
        match self {
            StepError::Busy(b) | StepError::Cudnn(crate::cudnn::CudnnError::Busy(b)) => Some(b),
            _ => None,
        }
    }

    /// What to do about it, for the command line's `hint:` line (it names commands and
    /// flags; the wizard says its own words for the kind, naming its own buttons).
    pub fn hint(&self) -> Message {
        match self {
            StepError::Preflight { .. } => msg!("hint_step_preflight"),
            StepError::Download(e) => e.hint(),
            StepError::Installer { .. } => msg!("hint_step_installer_failed"),
            StepError::InstallerTimeout { .. } => msg!("hint_step_installer_timeout"),
            StepError::DriverSignature { path, .. } => {
                msg!("hint_step_driver_signature", path = path.display())
            }
            StepError::DriverInstaller { .. } => msg!("hint_step_driver_failed"),
            StepError::NeedsAdmin { .. } => msg!("hint_step_needs_admin"),
            StepError::Cudnn(e) => e.hint(),
            StepError::Wheels(e) => e.hint(),
            StepError::Env { .. } => msg!("hint_step_env"),
            StepError::Pip { .. } => msg!("hint_step_pip"),
            StepError::Verify { .. } => msg!("hint_step_verify"),
            StepError::Build { .. } => msg!("hint_step_build"),
            StepError::Io { .. } => msg!("hint_step_io"),
            StepError::DiskFull { path, .. } => {
                msg!("hint_step_disk_full", folder = path.display())
            }
            StepError::Internal { .. } => msg!("hint_step_internal"),
            StepError::Cancelled => msg!("hint_step_cancelled"),
            StepError::Busy(_) => msg!("hint_busy"),
        }
    }
}

/// The full drive a download failed on, also among the sources that were tried.
fn download_disk_full(e: &DownloadError) -> Option<(PathBuf, Option<u64>, Option<u64>)> {
    match e {
        DownloadError::DiskFull { path, needed, free } => {
            Some((path.clone(), Some(*needed), Some(*free)))
        }
        DownloadError::AllSourcesFailed(all) => all.iter().find_map(download_disk_full),
        _ => None,
    }
}

/// What every step gets.
pub struct Ctx<'a> {
    pub target: &'a Target,
    pub cancel: &'a Cancel,
    pub emit: &'a (dyn Fn(StepEvent) + Sync),
}

pub fn run(step: &Step, ctx: &Ctx) -> Result<StepOutcome, StepError> {
    match step {
        Step::Preflight(inputs) => preflight::run(inputs, ctx),
        Step::Download(spec) => run_download(spec, ctx),
        Step::InstallDriver(spec) => driver::install(spec, ctx),
        Step::InstallToolkit(spec) => toolkit::install(spec, ctx),
        Step::AssembleToolkit(spec) => assemble_toolkit(spec, ctx),
        Step::InstallCudnn { archive, cuda_dir } => install_cudnn(archive, cuda_dir, ctx),
        Step::ConfigureEnv { cuda_dir, version } => {
            let changes = env::configure(ctx.target, cuda_dir, version)?;
            record_env_changes(ctx.target, &changes)?;
            let names: Vec<&str> = changes.iter().map(|c| c.name.as_str()).collect();
            Ok(StepOutcome {
                changed: !changes.is_empty(),
                detail: if names.is_empty() {
                    msg!("step_env_already")
                } else {
                    msg!("step_env_set", names = names.join(", "))
                },
                reboot_required: false,
            })
        }
        Step::InstallTorch { python, args } => install_torch(python, args, ctx),
        Step::SetEnv { name, value } => {
            let change = env::set_windows_var(ctx.target, name, value.as_deref())?;
            let changed = change.is_some();
            record_env_changes(ctx.target, &change.into_iter().collect::<Vec<_>>())?;
            let detail = match value {
                Some(v) => msg!("step_set_env_value", name = name, value = v),
                None => msg!("step_set_env_removed", name = name),
            };
            Ok(StepOutcome {
                changed,
                detail,
                reboot_required: false,
            })
        }
        Step::RecoverCudnn { cuda_dir } => {
            let r = crate::cudnn::recover(cuda_dir)?;
            Ok(StepOutcome {
                changed: r.is_some(),
                detail: match r {
                    Some(crate::cudnn::Recovered::RolledBack) => {
                        msg!("step_cudnn_rolled_back", dir = cuda_dir.display())
                    }
                    Some(crate::cudnn::Recovered::Completed) => {
                        msg!("step_cudnn_completed", dir = cuda_dir.display())
                    }
                    None => msg!("step_cudnn_nothing_to_recover", dir = cuda_dir.display()),
                },
                reboot_required: false,
            })
        }
        Step::RecoverToolkit { dir } => {
            let r = crate::wheels::swap::recover(dir, &crate::wheels::assemble::is_ours)
                .map_err(StepError::Wheels)?;
            Ok(StepOutcome {
                changed: r.restored || r.removed > 0,
                detail: if r.restored {
                    msg!(
                        "step_toolkit_put_back",
                        dir = dir.display(),
                        removed = r.removed
                    )
                } else {
                    msg!(
                        "step_toolkit_leftovers",
                        dir = dir.display(),
                        removed = r.removed
                    )
                },
                reboot_required: false,
            })
        }
        Step::CompleteToolkit { dir, .. } => complete_toolkit(dir, ctx),
        Step::Verify {
            cuda_dir,
            version,
            cudnn,
            build,
        } => verify(ctx, cuda_dir, version, *cudnn, *build),
    }
}

/// Completes a wheel-built tree in place ([`crate::devlayout::complete`]): what it added
/// is the outcome's detail; what it could not make is said in the log.
fn complete_toolkit(dir: &Path, ctx: &Ctx) -> Result<StepOutcome, StepError> {
    // Repair proposes this step only for a tree of ours; its record is marked complete
    // too, so the next install does not complete it again.
    let c = crate::wheels::assemble::complete_in_place(ctx.target.os, dir)
        .map_err(StepError::Wheels)?;
    // The management library's stub and import library are never made (no wheel has
    // them; docs/cli.md says so): only what should have been made is worth a line.
    use crate::devlayout::complete::{NVML_IMPORT_LIB, NVML_STUB};
    let not_made: Vec<&str> = c
        .no_stub
        .iter()
        .chain(&c.unreadable)
        .map(String::as_str)
        .filter(|f| *f != NVML_STUB && *f != NVML_IMPORT_LIB)
        .collect();
    if !not_made.is_empty() {
        (ctx.emit)(StepEvent::Log {
            line: msg!("step_toolkit_not_made", files = not_made.join(", ")),
        });
    }
    let added: Vec<&str> = c
        .links
        .iter()
        .chain(&c.import_libs)
        .chain(&c.stubs)
        .chain(&c.files)
        .map(String::as_str)
        .collect();
    Ok(StepOutcome {
        changed: !added.is_empty(),
        detail: if added.is_empty() {
            msg!("step_toolkit_complete_already", dir = dir.display())
        } else {
            msg!(
                "step_toolkit_completed",
                dir = dir.display(),
                count = added.len(),
                files = added.join(", ")
            )
        },
        reboot_required: false,
    })
}

fn run_download(spec: &DownloadSpec, ctx: &Ctx) -> Result<StepOutcome, StepError> {
    let req = download::Request {
        url: spec.url.clone(),
        mirrors: spec.mirrors.clone(),
        expected: Expected {
            sha256: spec.sha256.clone(),
            md5: spec.md5.clone(),
            size: spec.size,
        },
        dest: spec.dest.clone(),
        connections: spec.connections,
        cache_dir: spec.cache_dir.clone(),
        bundle_dirs: spec.bundle_dirs.clone(),
        allow_http: !spec.mirrors.is_empty()
            || !spec
                .url
                .starts_with("https://developer.download.nvidia.com"),
    };
    let reporter = download_reporter(ctx);
    let opts = download::Options::default();
    let o = if spec.what.may_lack_hash() {
        download::download_signed(&req, &opts, &reporter, ctx.cancel)
    } else {
        download::download(&req, &opts, &reporter, ctx.cancel)
    }
    .map_err(|e| match e {
        DownloadError::Cancelled => StepError::Cancelled,
        e => StepError::Download(e),
    })?;
    let changed = matches!(
        o.source,
        download::Source::Network(_) | download::Source::Bundle(_) | download::Source::Cache(_)
    );
    // The driver has no checksum to verify: its signature is checked before it runs.
    let detail = if spec.what.may_lack_hash() {
        msg!(
            "step_downloaded_signed",
            path = o.path.display(),
            size = crate::units::bytes(o.size)
        )
    } else {
        msg!(
            "step_downloaded",
            path = o.path.display(),
            size = crate::units::bytes(o.size)
        )
    };
    Ok(StepOutcome {
        changed,
        detail: detail.with("bytes", o.size).with("sha256", o.sha256),
        reboot_required: false,
    })
}

/// The download engine's events as step events: progress, and a log line per source
/// (its words from [`download::Event::message`]; a source's raw error a parameter).
fn download_reporter<'a>(ctx: &'a Ctx<'a>) -> impl Fn(download::Event) + Send + Sync + 'a {
    move |e: download::Event| match e {
        download::Event::Progress(p) => (ctx.emit)(StepEvent::Progress {
            done: p.done,
            total: p.total,
            bytes_per_sec: p.bytes_per_sec,
            eta_secs: p.eta_secs,
        }),
        e => {
            if let Some(line) = e.message() {
                (ctx.emit)(StepEvent::Log { line })
            }
        }
    }
}

fn assemble_toolkit(
    spec: &crate::wheels::AssembleSpec,
    ctx: &Ctx,
) -> Result<StepOutcome, StepError> {
    assemble_toolkit_streamed(spec, ctx, None)
}

/// Wheels handed to the assembly one by one as their downloads are verified (the
/// pipelined install, `run`), and their bytes in all, for progress.
pub type WheelStream<'a> = (Box<dyn Iterator<Item = PathBuf> + 'a>, u64);

/// The assembly step; with `stream`, each wheel is unpacked as soon as it arrives while
/// the others still download (the tree is still swapped in only once it is whole).
/// Without, the wheels named in `spec` are all on disk.
pub fn assemble_toolkit_streamed(
    spec: &crate::wheels::AssembleSpec,
    ctx: &Ctx,
    stream: Option<WheelStream>,
) -> Result<StepOutcome, StepError> {
    let progress = |done: u64, total: u64| {
        (ctx.emit)(StepEvent::Progress {
            done,
            total: Some(total),
            bytes_per_sec: 0.0,
            eta_secs: None,
        })
    };
    // A usable toolkit: nvcc and the runtime where detection looks for them.
    let check = |dir: &Path| {
        let missing = toolkit_missing(ctx.target, dir, &spec.version);
        if missing.is_empty() {
            Ok(())
        } else {
            Err(crate::wheels::WheelError::Incomplete {
                missing,
                restored: false,
            })
        }
    };
    let cancelled = || ctx.cancel.is_cancelled();
    let o = match stream {
        None => crate::wheels::assemble(spec, ctx.target.os, &progress, &cancelled, &check),
        Some((wheels, total)) => {
            use crate::wheels::assemble::{Begin, Build};
            Build::begin(spec, ctx.target.os, &check).and_then(|b| match b {
                Begin::Done(o) => Ok(o),
                Begin::Build(b) => {
                    b.extract(wheels, total, &progress, &cancelled)?;
                    b.finish(&check)
                }
            })
        }
    }
    .map_err(|e| match e {
        _ if ctx.cancel.is_cancelled() => StepError::Cancelled,
        crate::wheels::WheelError::Incomplete { missing, restored } => StepError::Verify {
            detail: format!(
                "the wheels did not give {} (choose the nvcc and cudart components){}",
                missing.join(", "),
                if restored {
                    "; the previous toolkit was put back as it was"
                } else {
                    ""
                }
            ),
        },
        crate::wheels::WheelError::DiskFull { path, needed, free } => {
            StepError::DiskFull { path, needed, free }
        }
        e => StepError::Wheels(e),
    })?;
    // What the rebuild kept of the tree it replaced (issue 30: the user's files).
    let c = &o.carried;
    if !c.entries.is_empty() || c.cudnn_files > 0 {
        (ctx.emit)(StepEvent::Log {
            line: msg!(
                "step_assembled_carried",
                dir = spec.dir.display(),
                count = c.entries.len(),
                entries = keep_list(&c.entries),
                cudnn = c.cudnn_files
            ),
        });
    }
    if let Some(p) = &o.kept_previous {
        (ctx.emit)(StepEvent::Log {
            line: msg!(
                "step_assembled_kept_previous",
                dir = spec.dir.display(),
                previous = p.display()
            ),
        });
    }
    Ok(StepOutcome {
        changed: o.changed,
        detail: if let Some(m) = crate::wheels::assemble::completion_message(
            &o,
            &spec.version,
            spec.wheels.len(),
            &spec.dir,
        ) {
            // Built (or an older tree of ours completed) and what was added for
            // building programs, in plain words.
            m
        } else if o.changed {
            msg!(
                "step_assembled",
                version = &spec.version,
                wheels = spec.wheels.len(),
                dir = spec.dir.display(),
                files = o.files
            )
        } else if o.kept_foreign {
            msg!(
                "step_assembled_kept",
                version = spec.version.major_minor(),
                dir = spec.dir.display()
            )
        } else {
            msg!("step_assembled_same", version = &spec.version)
        },
        reboot_required: false,
    })
}

/// At most ten names of a list, and how many more: a message stays short.
fn keep_list(names: &[String]) -> String {
    let mut s = names
        .iter()
        .take(10)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > 10 {
        s.push_str(&format!(" (+{})", names.len() - 10));
    }
    s
}

fn install_cudnn(archive: &Path, cuda_dir: &Path, ctx: &Ctx) -> Result<StepOutcome, StepError> {
    // What a run killed after staging cuDNN ahead of its toolkit left beside it (that
    // run's assembly may have finished: this one then installs step by step).
    crate::cudnn::clean_prestaged(cuda_dir);
    // Already ours and intact, from this very archive: nothing to do.
    if let Ok(Some(m)) = crate::cudnn::txn::read_manifest(cuda_dir)
        && archive
            .file_name()
            .is_some_and(|n| n.to_string_lossy() == m.archive)
        // The stamps recorded when its files were written: a file changed since (size
        // or time) is re-hashed; `cudnn verify --deep` re-reads them all.
        && crate::cudnn::verify_at(cuda_dir, crate::cudnn::Depth::Quick)
            .is_ok_and(|r| r.problems.is_empty())
    {
        return Ok(StepOutcome {
            changed: false,
            detail: msg!("step_cudnn_already", version = &m.cudnn_version),
            reboot_required: false,
        });
    }
    let emit = cudnn_progress(ctx);
    let m = crate::cudnn::install(archive, cuda_dir, &emit).map_err(StepError::Cudnn)?;
    Ok(cudnn_installed(&m))
}

/// cuDNN's extraction progress as the step's.
fn cudnn_progress<'a>(ctx: &'a Ctx) -> impl Fn(crate::cudnn::Event) + Sync + 'a {
    |e: crate::cudnn::Event| {
        if let crate::cudnn::Event::Extracted {
            bytes, total_bytes, ..
        } = e
        {
            (ctx.emit)(StepEvent::Progress {
                done: bytes,
                total: Some(total_bytes),
                bytes_per_sec: 0.0,
                eta_secs: None,
            });
        }
    }
}

fn cudnn_installed(m: &crate::cudnn::Manifest) -> StepOutcome {
    StepOutcome {
        changed: true,
        detail: msg!(
            "step_cudnn_installed",
            version = &m.cudnn_version,
            files = m.files.len()
        ),
        reboot_required: false,
    }
}

/// The install_cudnn step of the pipelined wheels install, started while the toolkit it
/// goes into is still being assembled: the archive is checked and extracted beside that
/// toolkit's folder ([`crate::cudnn::stage`]), then `ready()` waits for the assembly and
/// says whether the toolkit is in place (false: the step stops as cancelled, its staging
/// gone); then the files move in as one transaction, as in [`install_cudnn`].
pub fn install_cudnn_ahead(
    archive: &Path,
    cuda_dir: &Path,
    ctx: &Ctx,
    ready: &dyn Fn() -> bool,
) -> Result<StepOutcome, StepError> {
    let emit = cudnn_progress(ctx);
    crate::cudnn::clean_prestaged(cuda_dir);
    let pre = crate::cudnn::stage(archive, cuda_dir, &emit).map_err(StepError::Cudnn)?;
    // A test kills the run here: cuDNN staged beside a toolkit still being assembled.
    crate::lock::test_pause("cudnn_prestaged");
    if !ready() || ctx.cancel.is_cancelled() {
        return Err(StepError::Cancelled);
    }
    let m = crate::cudnn::install_prestaged(pre, cuda_dir, &emit).map_err(StepError::Cudnn)?;
    Ok(cudnn_installed(&m))
}

/// Appends to the record of environment changes (for revert and repair). Read bounded
/// from our state folder (a regular file, never through a link) and written back new.
fn record_env_changes(target: &Target, changes: &[env::EnvChange]) -> Result<(), StepError> {
    if changes.is_empty() {
        return Ok(());
    }
    const FILE: &str = "env-changes.json";
    let state = target
        .state()
        .map_err(|e| StepError::io(&target.state_dir(), e))?;
    let path = state.display(FILE);
    // A damaged or hostile record is set aside (kept), never silently overwritten.
    let mut all: Vec<env::EnvChange> = match state.read(FILE, crate::state_file::MAX_BYTES) {
        Ok(Some(b)) => serde_json::from_slice(&b).unwrap_or_else(|_| {
            crate::state_file::set_aside(&path);
            Vec::new()
        }),
        Ok(None) => Vec::new(),
        Err(_) => {
            crate::state_file::set_aside(&path);
            Vec::new()
        }
    };
    all.extend(changes.iter().cloned());
    state
        .write_atomic(
            FILE,
            &serde_json::to_vec_pretty(&all).expect("serialisable"),
            true,
        )
        .map_err(|e| StepError::io(&path, e))
}

fn install_torch(python: &Path, args: &[String], ctx: &Ctx) -> Result<StepOutcome, StepError> {
    let fetched = torch_wheel::prefetch(python, args, ctx)?;
    let args = fetched.as_deref().unwrap_or(args);
    let mut cmd = std::process::Command::new(python);
    cmd.args(["-m", "pip", "install"]).args(args);
    let emit = ctx.emit;
    let finished = crate::platform::run_long(
        cmd,
        std::time::Duration::from_secs(3600),
        &|| ctx.cancel.is_cancelled(),
        &mut |line| emit(StepEvent::output(line)),
    )
    .map_err(|e| StepError::Io {
        path: python.to_path_buf(),
        source: crate::error::cause(e),
    })?;
    match finished {
        crate::platform::Finished::Exited(Some(0)) => Ok(StepOutcome {
            changed: true,
            detail: msg!(
                "step_torch_installed",
                command = format!("pip install {}", args.join(" "))
            ),
            reboot_required: false,
        }),
        crate::platform::Finished::Exited(code) => Err(StepError::Pip { code }),
        crate::platform::Finished::Cancelled => Err(StepError::Cancelled),
        crate::platform::Finished::TimedOut => Err(StepError::Pip { code: None }),
    }
}

/// "running PROGRAM ARGS" for an installer about to start (its command line quoted as is).
fn running(cmd: &std::process::Command) -> Message {
    let mut line = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        line.push(' ');
        line.push_str(&a.to_string_lossy());
    }
    msg!("step_running", command = line)
}

/// The files that prove a toolkit is there: nvcc and the runtime library.
pub fn toolkit_missing(target: &Target, dir: &Path, version: &Version) -> Vec<String> {
    let rt = crate::detect::toolkit::runtime_dir(target.os, dir, Some(version));
    let major = version.major();
    let (nvcc, cudart) = match target.os {
        crate::compat::Os::Windows => (
            "bin/nvcc.exe".to_string(),
            if major == 11 {
                "cudart64_110.dll".to_string()
            } else {
                format!("cudart64_{major}.dll")
            },
        ),
        crate::compat::Os::Linux => (
            "bin/nvcc".to_string(),
            if major == 11 {
                "libcudart.so.11.0".to_string()
            } else {
                format!("libcudart.so.{major}")
            },
        ),
    };
    let mut missing = Vec::new();
    if !dir.join(&nvcc).is_file() {
        missing.push(dir.join(nvcc).display().to_string());
    }
    if !rt.join(&cudart).exists() {
        missing.push(rt.join(cudart).display().to_string());
    }
    missing
}

fn verify(
    ctx: &Ctx,
    dir: &Path,
    version: &Version,
    cudnn: bool,
    build: bool,
) -> Result<StepOutcome, StepError> {
    let missing = toolkit_missing(ctx.target, dir, version);
    if !missing.is_empty() {
        return Err(StepError::Verify {
            detail: format!("missing {}", missing.join(", ")),
        });
    }
    let mut detail = msg!("step_verified", version = version, dir = dir.display());
    if cudnn {
        let r =
            crate::cudnn::verify_at(dir, crate::cudnn::Depth::Quick).map_err(StepError::Cudnn)?;
        if !r.problems.is_empty() {
            let p: Vec<String> = r
                .problems
                .iter()
                .map(|p| format!("{} {}", p.path, p.problem))
                .collect();
            return Err(StepError::Verify {
                detail: format!("cuDNN: {}", p.join(", ")),
            });
        }
        detail = msg!(
            "step_verified_cudnn",
            version = version,
            dir = dir.display(),
            cudnn = &r.cudnn_version
        );
    }
    if build {
        detail = build_check(ctx, dir, version, cudnn, detail)?;
    }
    Ok(StepOutcome {
        changed: false,
        detail,
        reboot_required: false,
    })
}

/// The developer goal's build check (`verify::build`) on the toolkit just installed:
/// missing link names fail the step, naming them (and, for NVIDIA's installer, the
/// sub-package that lays each down); so does a program that will not compile or link.
/// No host compiler: the step passes and says the build check was skipped, and why.
fn build_check(
    ctx: &Ctx,
    dir: &Path,
    version: &Version,
    cudnn: bool,
    verified: Message,
) -> Result<Message, StepError> {
    use crate::verify::{Status, build};
    let t = ctx.target;
    // A sandbox run of another system's install: that system's names and compilers.
    let host = if t.host.os == t.os {
        t.host.clone()
    } else {
        crate::platform::Host::sandbox(
            t.os,
            t.root.as_deref().unwrap_or(Path::new("")),
            t.host
                .vars()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    };
    // cuDNN inside the toolkit (from an archive or a wheel) is linked too.
    let cudnn = cudnn || dir.join("include").join("cudnn.h").is_file();
    // The same program against the same files passed before: it would pass again.
    let record_file = ctx.target.state_dir().join(build_record::FILE);
    let key = build_record::Key {
        toolkit: dir.display().to_string(),
        version: version.to_string(),
        cudnn,
    };
    if build_record::still_holds(&record_file, &key, &host, dir, version) {
        return Ok(passed(verified, version, dir));
    }
    let c = build::check(&build::BuildOptions {
        host: &host,
        toolkit: dir,
        version: Some(version),
        cudnn,
        timeout: std::time::Duration::from_secs(600),
    });
    match (&c.status, &c.detail.host_compiler) {
        (Status::Passed, Some(compiler)) => {
            build_record::save(&record_file, key, &host, dir, version, compiler)
        }
        // Anything but a pass: the next run checks again.
        _ => build_record::forget(&record_file),
    }
    let why = |m: &Option<Message>| {
        m.as_ref()
            .map(|m| crate::i18n::render(m, crate::i18n::Lang::En))
            .unwrap_or_default()
    };
    match c.status {
        Status::Failed => Err(StepError::Build {
            problem: if c.detail.missing.is_empty() {
                c.reason
                    .as_ref()
                    .and_then(|m| m.param("detail"))
                    .unwrap_or_default()
                    .to_string()
            } else {
                c.detail.missing.join(", ")
            },
            detail: why(&c.reason),
        }),
        Status::Skipped => Ok(match c.reason.as_ref().map(|m| m.key) {
            Some("build_no_host_compiler_windows") => msg!(
                "step_verified_build_skipped_windows",
                version = version,
                dir = dir.display()
            ),
            Some("build_no_host_compiler_linux") => msg!(
                "step_verified_build_skipped_linux",
                version = version,
                dir = dir.display()
            ),
            _ => verified,
        }),
        Status::Passed => Ok(passed(verified, version, dir)),
    }
}

/// The verify step's words for a build check that passed.
fn passed(verified: Message, version: &Version, dir: &Path) -> Message {
    match verified.param("cudnn") {
        Some(v) => msg!(
            "step_verified_build_cudnn",
            version = version,
            dir = dir.display(),
            cudnn = v
        ),
        None => msg!(
            "step_verified_build",
            version = version,
            dir = dir.display()
        ),
    }
}

impl From<crate::cudnn::CudnnError> for StepError {
    fn from(e: crate::cudnn::CudnnError) -> Self {
        StepError::Cudnn(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::download::DownloadError;

    fn net(url: &str) -> DownloadError {
        DownloadError::network(url, crate::error::text("connection refused"))
    }

    fn http(status: u16) -> DownloadError {
        DownloadError::Http {
            url: "http://mirror/f".into(),
            status,
        }
    }

    /// Every step a plan or a fix can hold has a title of its own in both languages.
    #[test]
    fn every_step_has_a_title() {
        let names = [
            "preflight",
            "download_toolkit",
            "install_toolkit",
            "assemble_toolkit",
            "download_cudnn",
            "install_cudnn",
            "configure_env",
            "install_torch",
            "verify",
            "set_env",
            "recover_cudnn",
            "recover_toolkit",
            "complete_toolkit",
        ];
        for n in names {
            let key = title_key(n);
            assert!(key != "ui_step_other" && crate::i18n::has_key(key), "{n}");
        }
        let step = Step::SetEnv {
            name: "CUDA_PATH".into(),
            value: None,
        };
        assert!(names.contains(&step.name()));
        assert_eq!(title_key("a_step_from_later"), "ui_step_other");
    }

    #[test]
    fn failures_are_classed_by_what_the_user_can_do() {
        let dl = |e| StepError::Download(e).kind();
        assert_eq!(dl(net("a")), FailureKind::DownloadNetwork);
        assert_eq!(dl(http(503)), FailureKind::DownloadNetwork);
        assert_eq!(dl(http(404)), FailureKind::DownloadMissing);
        // Every source missing the file: missing; one of them down: the network.
        assert_eq!(
            dl(DownloadError::AllSourcesFailed(vec![http(404), http(404)])),
            FailureKind::DownloadMissing
        );
        assert_eq!(
            dl(DownloadError::AllSourcesFailed(vec![http(404), net("b")])),
            FailureKind::DownloadNetwork
        );
        // Bad bytes anywhere outweigh the rest.
        let bad = DownloadError::HashMismatch {
            url: "u".into(),
            algorithm: "sha256".into(),
            expected: "a".into(),
            actual: "b".into(),
        };
        assert_eq!(
            dl(DownloadError::AllSourcesFailed(vec![net("a"), bad])),
            FailureKind::DownloadCorrupt
        );
        assert_eq!(
            dl(DownloadError::DiskFull {
                path: "x".into(),
                needed: 2,
                free: 1
            }),
            FailureKind::DiskFull
        );
        for (e, kind) in [
            (
                StepError::Installer {
                    code: Some(1),
                    missing: vec![],
                    log: None,
                },
                FailureKind::InstallerFailed,
            ),
            (
                StepError::NeedsAdmin { what: "x".into() },
                FailureKind::NeedsAdmin,
            ),
            (StepError::Pip { code: Some(1) }, FailureKind::Pip),
            (StepError::Cancelled, FailureKind::Cancelled),
            (
                StepError::Download(DownloadError::NoHash),
                FailureKind::DownloadOther,
            ),
            (
                StepError::Download(DownloadError::Cancelled),
                FailureKind::Cancelled,
            ),
        ] {
            assert_eq!(e.kind(), kind, "{e}");
        }
    }

    /// A write that really hits a full drive (Linux's /dev/full answers every write with
    /// ENOSPC): the profile script's temporary file is a link to it. The step fails as
    /// `disk_full`, not as "an I/O error, check permissions", and the plain words name
    /// the folder and what to free, in both languages.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_write_on_a_full_drive_is_disk_full_naming_the_folder() {
        let root = tempfile::tempdir().unwrap();
        let target = Target::rooted(crate::compat::Os::Linux, root.path());
        let profile_d = root.path().join("etc/profile.d");
        std::fs::create_dir_all(&profile_d).unwrap();
        // (We never write through a link, so no link to /dev/full: the debug-only marker.)
        std::fs::write(profile_d.join(".cuda-setup-test-disk-full"), b"").unwrap();
        let plan = crate::plan::Plan {
            format: 1,
            goal: crate::recommend::Goal::Developer,
            os: crate::compat::Os::Linux,
            root: Some(root.path().to_path_buf()),
            toolkit: None,
            cudnn: None,
            torch_command: None,
            notes: vec![],
            steps: vec![Step::ConfigureEnv {
                cuda_dir: root.path().join("usr/local/cuda-12.4"),
                version: "12.4.1".parse().unwrap(),
            }],
        };
        let r = crate::run::run_blocking(&plan, &target, &Cancel::default(), &mut |_| {});
        let f = r.failure.unwrap();
        assert_eq!(f.kind, FailureKind::DiskFull, "{}", f.error);
        assert!(f.error.contains("the drive is full"), "{}", f.error);
        assert_eq!(f.params["folder"], profile_d.display().to_string());
        assert_eq!(
            f.params["needed"], "1.0 GB",
            "no pre-flight figure: at least 1 GB"
        );
        let text = |lang, key: &'static str| {
            let mut m = crate::message::Message::new(key);
            for (k, v) in &f.params {
                m = m.with(k, v);
            }
            crate::i18n::render(&m, lang)
        };
        let en = text(crate::i18n::Lang::En, "fail_disk_full");
        assert!(
            en.starts_with(&format!(
                "The drive holding {} is full",
                profile_d.display()
            )),
            "{en}"
        );
        // What to do names how much to free, in each language.
        let fix = crate::i18n::render(&f.hint, crate::i18n::Lang::En);
        assert!(
            fix.starts_with("free at least 1.0 GB on that drive"),
            "{fix}"
        );
        let zh = crate::i18n::render(&f.hint, crate::i18n::Lang::Zh);
        assert!(zh.contains("至少腾出 1.0 GB"), "{zh}");
    }

    /// The same classification on every path that builds an I/O error.
    #[cfg(target_os = "linux")]
    #[test]
    fn enospc_is_disk_full_for_steps_and_cudnn() {
        let e = std::fs::write("/dev/full", b"x").unwrap_err();
        assert_eq!(
            StepError::io(Path::new("/dev/full"), e).kind(),
            FailureKind::DiskFull
        );
        let e = std::fs::write("/dev/full", b"x").unwrap_err();
        let c = crate::cudnn::CudnnError::io(Path::new("/dev/full"), e);
        assert!(c.to_string().contains("the drive is full"), "{c}");
        assert_eq!(StepError::Cudnn(c).kind(), FailureKind::DiskFull);
        let other = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let e = StepError::io(Path::new("/x"), other);
        assert_eq!(e.kind(), FailureKind::Io);
        // The cause is kept, and the report's text still says it.
        assert_eq!(
            crate::error::io_kind(&e),
            Some(std::io::ErrorKind::PermissionDenied)
        );
        assert_eq!(
            crate::error::chain(&e),
            format!(
                "/x: {}",
                std::io::Error::from(std::io::ErrorKind::PermissionDenied)
            )
        );
    }

    /// A journal written before the build check existed still loads: no build.
    #[test]
    fn an_old_verify_step_parses_without_the_build_check() {
        let old = r#"{"step":"verify","cuda_dir":"/usr/local/cuda-12.4","version":"12.4.1","cudnn":true}"#;
        let s: Step = serde_json::from_str(old).unwrap();
        assert!(
            matches!(
                s,
                Step::Verify {
                    build: false,
                    cudnn: true,
                    ..
                }
            ),
            "{s:?}"
        );
        let new = serde_json::to_string(&Step::Verify {
            cuda_dir: "/x".into(),
            version: "12.4.1".parse().unwrap(),
            cudnn: false,
            build: true,
        })
        .unwrap();
        assert!(new.contains(r#""build":true"#), "{new}");
    }
}
