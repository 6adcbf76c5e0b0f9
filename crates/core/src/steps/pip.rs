//! The PyTorch step: pip in the user's Python (the torch wheel fetched first).

use std::path::Path;

use crate::msg;

use super::{Ctx, StepError, StepEvent, StepOutcome, torch_wheel};

pub(super) fn install_torch(
    python: &Path,
    args: &[String],
    ctx: &Ctx,
) -> Result<StepOutcome, StepError> {
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
