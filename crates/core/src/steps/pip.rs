//! The PyTorch step: pip in the user's Python (the torch wheel fetched first).
//!
//! With the guard (`crate::guard`): a pin of ours in that environment is lifted for this
//! pip call alone (else pip would refuse our own change of torch), a wheel our record
//! names is hashed again before pip gets it, and what was installed is noted so that the
//! doctor's verification that follows records it and moves the pin.

use std::path::Path;

use crate::msg;

use super::torch_sources::AutoSources;
use super::{Ctx, StepError, StepEvent, StepOutcome, torch_wheel};

pub(super) fn install_torch(
    python: &Path,
    args: &[String],
    auto: &AutoSources,
    ctx: &Ctx,
) -> Result<StepOutcome, StepError> {
    let with_pypi: Vec<String>;
    let mut args = args;
    if auto.pypi {
        // The fastest listed PyPI index for the other packages, named in the log.
        let (index, said) = super::pypi_race::choose();
        (ctx.emit)(StepEvent::Log { line: said });
        if let Some(url) = index {
            with_pypi = [args, &["--extra-index-url".to_string(), url]].concat();
            args = &with_pypi;
        }
    }
    let wanted = torch_wheel::TorchArgs::find(args);
    let fetched = torch_wheel::prefetch(python, args, &auto.torch_mirrors, ctx)?;
    let args = fetched.as_ref().map_or(args, |f| f.args.as_slice());
    crate::guard::check_wheel_args(ctx.target, python, args).map_err(|e| StepError::Verify {
        detail: crate::error::chain(&e),
    })?;
    let mut cmd = std::process::Command::new(python);
    cmd.args(["-m", "pip", "install"])
        .args(crate::proxy::pip_args())
        .args(args);
    for (k, v) in crate::guard::lift_for_pip(ctx.target, python) {
        (ctx.emit)(StepEvent::Log {
            line: msg!("guard_pip_lifted"),
        });
        cmd.env(k, v);
    }
    let emit = ctx.emit;
    // Which index pip could not reach, if that is what stops it (#34).
    let mut watch = super::unreachable::PipWatch::new(args);
    let finished = crate::platform::run_long(
        cmd,
        std::time::Duration::from_secs(3600),
        &|| ctx.cancel.is_cancelled(),
        &mut |line| {
            watch.line(&line);
            emit(StepEvent::output(line))
        },
    )
    .map_err(|e| StepError::Io {
        path: python.to_path_buf(),
        source: crate::error::cause(e),
    })?;
    match finished {
        crate::platform::Finished::Exited(Some(0)) => {
            if let Some(w) = &wanted {
                let wheel = fetched.as_ref().map(|f| crate::guard::Wheel {
                    file: f.file.clone(),
                    sha256: f.sha256.clone(),
                });
                crate::guard::note_installed(ctx.target, python, &w.version, &w.index, wheel);
            }
            let command = format!("pip install {}", args.join(" "));
            // The trust moved to a mirror: what the step did says so, not only its log.
            let detail = match fetched.as_ref().and_then(|f| f.hash_from_mirror.as_ref()) {
                Some(m) => super::torch_sources::trust_message(m).with("command", command),
                None => msg!("step_torch_installed", command = command),
            };
            Ok(StepOutcome {
                changed: true,
                detail,
                reboot_required: false,
            })
        }
        crate::platform::Finished::Exited(code) => Err(StepError::Pip {
            code,
            unreachable: watch.verdict(),
        }),
        crate::platform::Finished::Cancelled => Err(StepError::Cancelled),
        crate::platform::Finished::TimedOut => Err(StepError::Pip {
            code: None,
            unreachable: watch.verdict(),
        }),
    }
}
