//! A plan's steps as data: what each is (`Step`, `StepKind`), what a download fetches
//! (`Artifact`), and how a step is named to a user (`title_key`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::version::Version;

use super::{driver, preflight, toolkit};

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
        /// The sources measured before pip runs (#34; absent: the index the arguments
        /// name, and no PyPI mirror but the one they name).
        #[serde(
            default,
            skip_serializing_if = "super::torch_sources::AutoSources::is_empty"
        )]
        auto: super::torch_sources::AutoSources,
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

    /// Whether a cancel while this step runs leaves the machine as it was. Not while
    /// NVIDIA's display driver installer runs: a cancel stops it half-way (the executor
    /// ends the installer's process tree), which can leave Windows without a working
    /// display driver. Other steps may be stopped: a download resumes, and the journal
    /// runs an unfinished step again at the next try.
    pub fn cancel_is_safe(self) -> bool {
        self != StepKind::InstallDriver
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

/// The catalogue key of a step's title: how both front ends name a step to a user (never
/// the raw `set_env`). Written out, not assembled.
pub fn title_key(kind: StepKind) -> &'static str {
    match kind {
        StepKind::Preflight => "ui_step_preflight",
        StepKind::DownloadDriver => "ui_step_download_driver",
        StepKind::InstallDriver => "ui_step_install_driver",
        StepKind::DownloadToolkit => "ui_step_download_toolkit",
        StepKind::InstallToolkit => "ui_step_install_toolkit",
        StepKind::AssembleToolkit => "ui_step_assemble_toolkit",
        StepKind::DownloadCudnn => "ui_step_download_cudnn",
        StepKind::InstallCudnn => "ui_step_install_cudnn",
        StepKind::ConfigureEnv => "ui_step_configure_env",
        StepKind::InstallTorch => "ui_step_install_torch",
        StepKind::Verify => "ui_step_verify",
        StepKind::SetEnv => "ui_step_set_env",
        StepKind::RecoverCudnn => "ui_step_recover_cudnn",
        StepKind::RecoverToolkit => "ui_step_recover_toolkit",
        StepKind::CompleteToolkit => "ui_step_complete_toolkit",
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of step has a title of its own in both languages, and its serde name
    /// is the stable name reports and journals carry.
    #[test]
    fn every_step_has_a_title_and_its_stable_name() {
        let all = [
            StepKind::Preflight,
            StepKind::DownloadDriver,
            StepKind::DownloadToolkit,
            StepKind::DownloadCudnn,
            StepKind::InstallDriver,
            StepKind::InstallToolkit,
            StepKind::AssembleToolkit,
            StepKind::InstallCudnn,
            StepKind::ConfigureEnv,
            StepKind::InstallTorch,
            StepKind::SetEnv,
            StepKind::RecoverCudnn,
            StepKind::RecoverToolkit,
            StepKind::CompleteToolkit,
            StepKind::Verify,
        ];
        let mut keys = std::collections::BTreeSet::new();
        for k in all {
            let key = title_key(k);
            assert!(crate::i18n::has_key(key), "{k}");
            assert!(keys.insert(key), "{k}: one title per step");
            assert_eq!(key, format!("ui_step_{}", k.as_str()));
            let json = serde_json::to_value(k).unwrap();
            assert_eq!(json, k.as_str());
            assert_eq!(serde_json::from_value::<StepKind>(json).unwrap(), k);
        }
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

    /// The driver's download may be cancelled; its installer, once running, may not.
    #[test]
    fn only_the_running_driver_installer_is_unsafe_to_cancel() {
        assert!(StepKind::DownloadDriver.cancel_is_safe());
        assert!(!StepKind::InstallDriver.cancel_is_safe());
        assert!(StepKind::DownloadToolkit.cancel_is_safe());
    }
}
