//! The guarded PyTorch (`crate::guard`): a build verified on the GPU that another install
//! replaced. The fix puts it back — from our cached wheel (hashed again before pip runs)
//! or from the recorded index.

use super::*;

/// One finding per recorded interpreter whose torch is no longer the verified build.
pub fn guarded(target: &Target, out: &mut Vec<Finding>) {
    for (swap, _, plan) in crate::guard::audit(target) {
        let message = swap.message();
        let fix = match plan.args() {
            Some(args) => steps(vec![Step::InstallTorch {
                python: swap.python.clone(),
                args: args.to_vec(),
            }]),
            None => continue,
        };
        out.push(finding(
            Layer::Torch,
            message.key,
            Severity::Warning,
            message,
            fix,
        ));
    }
}
