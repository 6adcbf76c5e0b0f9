//! Why a step failed (`StepError`), typed, with its class for scripts and the
//! parameters of its plain words.

use std::path::{Path, PathBuf};

use crate::download::{DownloadError, DownloadKind};
use crate::error::Cause;
use crate::message::Message;
use crate::msg;
use crate::version::Version;

use super::unreachable::Unreachable;
use super::{FailureKind, preflight, toolkit};

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
    /// pip failed; `unreachable`: its output says an index did not answer (#34).
    #[error("pip failed (exit code {}){}", toolkit::exit_code(*.code), .unreachable.as_ref().map_or(String::new(), |u| format!(": it could not reach {}", u.host)))]
    Pip {
        code: Option<i32>,
        unreachable: Option<Unreachable>,
    },
    /// The torch wheel's download (ours, before pip) failed; `from`: its source (#34).
    #[error("the torch wheel from {}: {error}", .from.host)]
    TorchWheel {
        from: Unreachable,
        #[source]
        error: Box<DownloadError>,
    },
    /// The display driver's download failed on every NVIDIA host (`hosts`, #34).
    #[error("the NVIDIA driver from {}: {error}", .hosts.host)]
    DriverDownload {
        hosts: Unreachable,
        #[source]
        error: Box<DownloadError>,
    },
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
            StepError::TorchWheel { error, .. } | StepError::DriverDownload { error, .. } => {
                download_disk_full(error)
            }
            _ => None,
        }
    }

    /// The failure's class, stable for scripts (`--json` reports it) and the key of the
    /// plain-words text the wizard shows in the user's language (`fail_<kind>`).
    pub fn kind(&self) -> FailureKind {
        use crate::cudnn::CudnnError;
        match self {
            StepError::Preflight { .. } => FailureKind::Preflight,
            StepError::Download(e) => download_kind(e),
            StepError::TorchWheel { error, .. } | StepError::DriverDownload { error, .. } => {
                download_kind(error)
            }
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
            StepError::TorchWheel { error, .. } | StepError::DriverDownload { error, .. } => {
                match self.unreachable() {
                    Some(u) => u.hint(),
                    None => error.hint(),
                }
            }
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
            StepError::Pip {
                unreachable: Some(u),
                ..
            } => u.hint(),
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

impl StepError {
    /// The source that did not answer, when that is what stopped the step (#34): pip's
    /// index, the torch wheel's host, NVIDIA's driver hosts. A wrong file, a full drive or
    /// a cancel is no unreachable source; a driver missing there is (nothing else to do
    /// but fetch it another way).
    pub fn unreachable(&self) -> Option<&Unreachable> {
        match self {
            StepError::Pip { unreachable, .. } => unreachable.as_ref(),
            StepError::TorchWheel { from, error } => {
                (download_kind(error) == FailureKind::DownloadNetwork).then_some(from)
            }
            // Only what the hosts did: a folder that cannot be written, or a mirror refused
            // for being http, keeps its own words.
            StepError::DriverDownload { hosts, error } => matches!(
                download_kind(error),
                FailureKind::DownloadNetwork | FailureKind::DownloadMissing
            )
            .then_some(hosts),
            _ => None,
        }
    }
}

/// A download's failure class.
fn download_kind(e: &DownloadError) -> FailureKind {
    match e.kind() {
        DownloadKind::Network => FailureKind::DownloadNetwork,
        DownloadKind::Missing => FailureKind::DownloadMissing,
        DownloadKind::Corrupt => FailureKind::DownloadCorrupt,
        DownloadKind::DiskFull => FailureKind::DiskFull,
        DownloadKind::Cancelled => FailureKind::Cancelled,
        DownloadKind::Other => FailureKind::DownloadOther,
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

impl From<crate::cudnn::CudnnError> for StepError {
    fn from(e: crate::cudnn::CudnnError) -> Self {
        StepError::Cudnn(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(url: &str) -> DownloadError {
        DownloadError::network(url, crate::error::text("connection refused"))
    }

    fn http(status: u16) -> DownloadError {
        DownloadError::Http {
            url: "http://mirror/f".into(),
            status,
        }
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
            (
                StepError::Pip {
                    code: Some(1),
                    unreachable: None,
                },
                FailureKind::Pip,
            ),
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
        use crate::download::Cancel;
        use crate::steps::Step;
        use crate::target::Target;
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
}
