//! The verify step: the toolkit's files, cuDNN's, and for developers the build check.

use std::path::Path;

use crate::message::Message;
use crate::msg;
use crate::target::Target;
use crate::version::Version;

use super::{Ctx, StepError, StepOutcome, build_record};

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

pub(super) fn verify(
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
