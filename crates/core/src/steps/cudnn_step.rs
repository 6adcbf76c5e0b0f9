//! The cuDNN install step: at once, or staged ahead of a toolkit still being assembled.

use std::path::Path;

use crate::msg;

use super::{Ctx, StepError, StepEvent, StepOutcome};

pub(super) fn install_cudnn(
    archive: &Path,
    cuda_dir: &Path,
    ctx: &Ctx,
) -> Result<StepOutcome, StepError> {
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
                source: None,
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
