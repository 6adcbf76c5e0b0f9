//! Installing NVIDIA's Windows display driver silently (`-s -noreboot`, dossier section 12).
//! NVIDIA publishes no hash for driver installers, so nothing runs before its Authenticode
//! signature says NVIDIA Corporation signed it. Already at (or above) the version: nothing
//! to do. A driver usually needs a restart before CUDA can use it: the executor stops
//! there and the plan resumes after it.

use std::path::PathBuf;
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::{Ctx, StepError, StepEvent, StepOutcome, installer_process};
use crate::platform::signature;
use crate::recommend::DriverPackage;
use crate::target::Target;
use crate::version::Version;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstallSpec {
    pub version: Version,
    pub package: DriverPackage,
    /// The downloaded installer (the plan's `download_driver` step).
    pub installer: PathBuf,
    /// The silent flags (`drivers.toml` `[silent]`).
    pub args: Vec<String>,
    /// Minutes before the installer is stopped.
    pub timeout_minutes: u64,
}

/// After the driver, Windows must restart: cuda-setup is registered to open again at the
/// next sign-in (the plan waits in the journal and resumes), then, with `now`, Windows
/// restarts. A `--root` sandbox is not this machine: nothing is registered or restarted
/// there, and the answer is as if it were. The error is English, for details.
pub fn restart(target: &Target, now: bool) -> Result<bool, String> {
    use crate::compat::Os;
    if target.root.is_some() {
        return Ok(now);
    }
    if target.os != Os::Windows {
        return Err("only Windows restarts for its driver".into());
    }
    #[cfg(windows)]
    {
        use crate::platform::windows;
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        windows::reopen_after_restart(&exe).map_err(|e| e.to_string())?;
        if now {
            windows::restart_now().map_err(|e| crate::error::chain(&e))?;
        }
        Ok(now)
    }
    #[cfg(not(windows))]
    Err("only Windows restarts for its driver".into())
}

/// The driver the target has now, as detection sees it (NVML on a real machine; in a
/// `--root` sandbox the driver package's INF under the root's DriverStore).
pub fn installed(target: &Target) -> Option<Version> {
    match &target.root {
        None => crate::detect::gpu::installed_driver(&target.host),
        Some(root) => crate::detect::gpu::installed_driver(&crate::platform::Host::sandbox(
            target.os,
            root,
            Default::default(),
        )),
    }
}

pub fn install(spec: &InstallSpec, ctx: &Ctx) -> Result<StepOutcome, StepError> {
    let t = ctx.target;
    if let Some(have) = installed(t).filter(|v| *v >= spec.version) {
        return Ok(StepOutcome {
            changed: false,
            detail: crate::msg!("step_driver_present", have = have, version = &spec.version),
            reboot_required: false,
        });
    }
    let state = t.state_dir();
    if !installer_process::wait_for_earlier(&state, &|| ctx.cancel.is_cancelled(), &|pid| {
        (ctx.emit)(StepEvent::Log {
            line: crate::msg!("step_waiting_earlier_installer", pid = pid),
        })
    }) {
        return Err(StepError::Cancelled);
    }
    if !t.elevated {
        return Err(StepError::NeedsAdmin {
            what: format!("installing the NVIDIA driver {}", spec.version),
        });
    }
    // Only a file NVIDIA signed runs. A sandbox root off Windows reads the stand-in's
    // trailer; Windows always asks WinVerifyTrust.
    let sig = signature::check(&spec.installer, t.root.is_some() && !cfg!(windows));
    if let Err(source) = signature::require_nvidia(&sig) {
        // A file that failed the check is set aside (kept, for whoever wants to look at
        // it), so "Try again" downloads it anew instead of refusing the same bytes.
        if source != signature::SignatureError::Unavailable {
            let mut aside = spec.installer.clone().into_os_string();
            aside.push(".rejected");
            let _ = std::fs::rename(&spec.installer, aside);
        }
        return Err(StepError::DriverSignature {
            path: spec.installer.clone(),
            source,
        });
    }
    (ctx.emit)(StepEvent::Log {
        line: crate::msg!("step_driver_signed", file = spec.installer.display()),
    });
    #[cfg(unix)]
    {
        // A download has no execute bit where that matters (a sandbox run off Windows).
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&spec.installer, std::fs::Permissions::from_mode(0o755));
    }
    let mut cmd = Command::new(&spec.installer);
    cmd.args(&spec.args);
    if t.root.is_some() {
        // A sandbox root: the installer's Windows folder is the root's.
        cmd.env("SystemRoot", t.system_path("C:\\Windows"));
    }
    if let Some(dir) = spec.installer.parent() {
        cmd.current_dir(dir);
    }
    let code = installer_process::run(cmd, &state, &spec.installer, spec.timeout_minutes, ctx)?;
    let reboot_required = code.is_some_and(installer_process::asks_for_restart);
    if code != Some(0) && !reboot_required {
        return Err(StepError::DriverInstaller {
            code,
            version: spec.version.clone(),
        });
    }
    Ok(StepOutcome {
        changed: true,
        detail: if reboot_required {
            crate::msg!("step_driver_installed_restart", version = &spec.version)
        } else {
            crate::msg!("step_driver_installed", version = &spec.version)
        },
        reboot_required,
    })
}
