//! Running NVIDIA's installer silently: the Windows .exe with `-s <sub-packages>`, the
//! Linux runfile with `--silent --toolkit --toolkitpath=DIR`. Its exit code is not
//! trusted: afterwards nvcc and the runtime library must exist.

use std::path::PathBuf;
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::{Ctx, StepError, StepEvent, StepOutcome, installer_process, toolkit_missing};
use crate::compat::Os;
use crate::version::Version;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstallSpec {
    pub version: Version,
    pub installer: PathBuf,
    pub dir: PathBuf,
    /// Windows `-s` sub-packages; empty: the installer's full default selection.
    pub subpackages: Vec<String>,
    /// Minutes before the installer is stopped.
    pub timeout_minutes: u64,
}

/// The sub-packages a developer needs to build PyTorch extensions (compat dossier §3.2),
/// as `<name>_<major>.<minor>`. 13.x: the full selection, as PyTorch's CI does (its
/// sub-package names are not confirmed).
pub fn subpackages(version: &Version, visual_studio: bool, with_driver: bool) -> Vec<String> {
    if version.major() >= 13 {
        return Vec::new();
    }
    let mm = version.major_minor();
    let mut names: Vec<String> = [
        "nvcc",
        "cudart",
        "nvrtc",
        "nvrtc_dev",
        "cublas",
        "cublas_dev",
        "cusparse",
        "cusparse_dev",
        "cusolver",
        "cusolver_dev",
        "curand",
        "curand_dev",
        "cufft",
        "cufft_dev",
        "cuda_profiler_api",
        "nvtx",
        "thrust",
    ]
    .iter()
    .map(|n| format!("{n}_{mm}"))
    .collect();
    if visual_studio {
        names.push(format!("visual_studio_integration_{mm}"));
    }
    if with_driver {
        names.push("Display.Driver".into());
    }
    names
}

pub fn install(spec: &InstallSpec, ctx: &Ctx) -> Result<StepOutcome, StepError> {
    let t = ctx.target;
    if toolkit_missing(t, &spec.dir, &spec.version).is_empty() {
        return Ok(StepOutcome {
            changed: false,
            detail: crate::msg!(
                "step_toolkit_present",
                version = spec.version.major_minor(),
                dir = spec.dir.display()
            ),
            reboot_required: false,
        });
    }
    // An installer an earlier run started may still be at work in that folder: never a
    // second one beside it.
    let state = t.state_dir();
    let waited = std::cell::Cell::new(false);
    if !installer_process::wait_for_earlier(&state, &|| ctx.cancel.is_cancelled(), &|pid| {
        waited.set(true);
        (ctx.emit)(StepEvent::Log {
            line: crate::msg!("step_waiting_earlier_installer", pid = pid),
        })
    }) {
        return Err(StepError::Cancelled);
    }
    if waited.get() && toolkit_missing(t, &spec.dir, &spec.version).is_empty() {
        return Ok(StepOutcome {
            changed: true,
            detail: crate::msg!(
                "step_toolkit_installed_earlier",
                version = &spec.version,
                dir = spec.dir.display()
            ),
            reboot_required: false,
        });
    }
    if !t.elevated {
        return Err(StepError::NeedsAdmin {
            what: format!("installing CUDA into {}", spec.dir.display()),
        });
    }
    // NVIDIA's installer writes its logs here as administrator: a folder of ours, reached
    // without following a link, made anew if another account planted it.
    let log_dir = t
        .state()
        .and_then(|s| s.sub(format!("logs/cuda-installer-{}", spec.version), true))
        .map_err(|e| StepError::io(&t.logs_dir(), e))?
        .path()
        .to_path_buf();
    let mut cmd = match t.os {
        Os::Windows => {
            // A download has no execute bit where that matters (a sandbox run off Windows).
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(
                    &spec.installer,
                    std::fs::Permissions::from_mode(0o755),
                );
            }
            let mut c = Command::new(&spec.installer);
            c.arg("-s")
                .args(&spec.subpackages)
                .arg("-n")
                .arg("-loglevel:6")
                .arg(format!("-log:{}", log_dir.display()));
            if t.root.is_some() {
                // A sandbox root: the installer's Program Files is the root's.
                c.env("ProgramFiles", t.program_files())
                    .env("ProgramW6432", t.program_files());
            }
            c
        }
        Os::Linux => {
            let mut c = Command::new("sh");
            c.arg(&spec.installer)
                .arg("--silent")
                .arg("--toolkit")
                .arg(format!("--toolkitpath={}", spec.dir.display()));
            c
        }
    };
    cmd.current_dir(&log_dir);
    let code = installer_process::run(cmd, &state, &spec.installer, spec.timeout_minutes, ctx)?;
    let missing = toolkit_missing(t, &spec.dir, &spec.version);
    if !missing.is_empty() {
        return Err(StepError::Installer {
            code,
            missing,
            log: Some(log_dir),
        });
    }
    let reboot_required = code.is_some_and(installer_process::asks_for_restart);
    Ok(StepOutcome {
        changed: true,
        // (No code: the installer ended by a signal, and the files are there anyway.)
        detail: match code {
            Some(code) => crate::msg!(
                "step_toolkit_installed",
                version = &spec.version,
                dir = spec.dir.display(),
                code = code
            ),
            None => crate::msg!(
                "step_toolkit_installed_no_code",
                version = &spec.version,
                dir = spec.dir.display()
            ),
        },
        reboot_required,
    })
}

/// An exit code as words: the number, or how the process ended without one.
pub(crate) fn exit_code(code: Option<i32>) -> String {
    code.map_or_else(|| "none (ended by a signal)".into(), |c| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The developer's selection holds every sub-package that lays down a link name the
    /// build check needs (`cudart.lib`, `cublas.lib`, `cublasLt.lib`: dossier §3.2), with
    /// nvcc; 13.x installs the full selection (an empty list).
    #[test]
    fn the_developer_selection_lays_down_every_link_name() {
        let d = tempfile::tempdir().unwrap();
        // cuBLAS is in the tree (its DLL), so its link names count.
        std::fs::create_dir_all(d.path().join("bin")).unwrap();
        std::fs::write(d.path().join("bin/cublas64_12.dll"), b"MZ").unwrap();
        for v in ["11.8.0", "12.4.1", "12.9.1"] {
            let v: Version = v.parse().unwrap();
            let mm = v.major_minor();
            for with in [false, true] {
                let chosen = subpackages(&v, with, with);
                assert!(chosen.contains(&format!("nvcc_{mm}")), "{v}");
                let needed = crate::devlayout::link_names(Os::Windows, d.path(), &v, false);
                let packages: Vec<&str> =
                    needed.iter().filter_map(|n| n.package.as_deref()).collect();
                assert!(
                    packages.contains(&format!("cublas_dev_{mm}").as_str())
                        && packages.contains(&format!("cudart_{mm}").as_str()),
                    "{packages:?}"
                );
                for p in packages {
                    assert!(chosen.iter().any(|c| c == p), "{v}: {p} left out");
                }
            }
        }
        assert!(subpackages(&"13.5.0".parse().unwrap(), true, false).is_empty());
    }
}
