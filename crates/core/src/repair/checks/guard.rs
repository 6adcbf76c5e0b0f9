//! The guarded PyTorch (`crate::guard`): a build verified on the GPU that another install
//! replaced. The fix puts it back — from our cached wheel (hashed again before pip runs)
//! or from the recorded index. The wizard's "Put the verified PyTorch back" runs the same
//! step ([`restore_plan`]).

use super::*;
use crate::guard::{GuardError, Restore};
use crate::plan::Plan;

/// The executor's step for a restore (None: nothing to put back).
fn restore_step(python: &Path, plan: &Restore) -> Option<Step> {
    plan.args().map(|args| Step::InstallTorch {
        python: python.to_path_buf(),
        args: args.to_vec(),
        auto: Default::default(),
    })
}

/// One finding per recorded interpreter whose torch is no longer the verified build. An
/// elevated run tells it without a fix step: pip as administrator in the user's
/// environment leaves files the user's own pip cannot replace, so the user runs it.
pub fn guarded(target: &Target, out: &mut Vec<Finding>) {
    if target.elevated {
        for (swap, _) in crate::guard::swaps(target) {
            let message = swap.message();
            let how = msg!("guard_fix_as_user", command = swap.command());
            out.push(finding(
                Layer::Torch,
                message.key,
                Severity::Warning,
                message,
                Fix::Manual { how },
            ));
        }
        return;
    }
    for (swap, _, plan) in crate::guard::audit(target) {
        let message = swap.message();
        let Some(step) = restore_step(&swap.python, &plan) else {
            continue;
        };
        out.push(finding(
            Layer::Torch,
            message.key,
            Severity::Warning,
            message,
            steps(vec![step]),
        ));
    }
}

/// The plan that puts `python`'s verified build back: the `guard_swapped` finding's fix,
/// for the executor (None: the verified build is installed). Hashes a cached wheel: not
/// for a UI thread.
pub fn restore_plan(target: &Target, python: &Path) -> Result<Option<Plan>, GuardError> {
    let (_, restore) = crate::guard::restore_plan(target, python)?;
    Ok(restore_step(python, &restore).map(|step| Plan {
        format: 1,
        goal: crate::recommend::Goal::Pytorch,
        os: target.os,
        root: target.root.clone(),
        toolkit: None,
        cudnn: None,
        torch_command: None,
        notes: vec![crate::plan::Note::Repair],
        steps: vec![step],
    }))
}
