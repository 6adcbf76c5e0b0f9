//! One step run: the dispatcher from a `Step` to the code that does it, and the small
//! steps that need no module of their own (environment, recovery).

use crate::msg;
use crate::target::Target;

use super::assemble::{assemble_toolkit, complete_toolkit};
use super::cudnn_step::install_cudnn;
use super::download_step::run_download;
use super::pip::install_torch;
use super::verify_step::verify;
use super::{Ctx, Step, StepError, StepOutcome, driver, env, preflight, toolkit};

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
        Step::InstallTorch { python, args, auto } => install_torch(python, args, auto, ctx),
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
