//! `state set` (#36): make the machine as the lab profile says. The profile's install runs
//! that fix the drift (`drift::plans_for`) run in order until one does not succeed; then
//! the guard, which is no plan step; then what is left is judged again. The outcome is a
//! type: the CLI maps it to MSI's numbers. Plan-making and the executor's rendering stay
//! with the front end (`install`'s), passed in as `install`.

use super::drift::{self, Drift, Layer};
use super::profile::{Profile, Wanted};
use super::state::{self, Given, State};
use crate::compat::Tables;
use crate::guard::{self, GuardError, OnOutcome};
use crate::run::RunReport;
use crate::steps::FailureKind;
use crate::target::Target;

/// How a run, or `state set` as a whole, ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    /// Done, but the machine must restart (or a driver waits for its restart).
    RebootRequired,
    Cancelled,
    /// Another cuda-setup is installing on this target.
    Busy,
    /// A run failed.
    Failed,
    /// Every run succeeded, yet drift is left that no step of ours fixes.
    DriftLeft,
}

impl Outcome {
    /// One install run's outcome (`install`'s exit code is this one's number).
    pub fn of_run(r: &RunReport) -> Outcome {
        if r.cancelled {
            Outcome::Cancelled
        } else if r
            .failure
            .as_ref()
            .is_some_and(|f| f.kind == FailureKind::Busy)
        {
            Outcome::Busy
        } else if r.failure.is_some() {
            Outcome::Failed
        } else if r.reboot_required || r.restart_pending {
            Outcome::RebootRequired
        } else {
            Outcome::Success
        }
    }
}

/// What happened to the guard.
#[derive(Debug)]
pub enum GuardStep {
    /// Not asked: it does not drift, a run did not succeed, or there is no torch.
    NotRun,
    /// Put on (`written`: the pin was written now).
    Pinned { written: bool },
    /// `guard::on` refused or failed; the drift stays in `left`.
    Failed(GuardError),
}

/// What `state set` did.
#[derive(Debug)]
pub struct Applied<R> {
    /// The drift found before anything ran.
    pub first: Vec<Drift>,
    /// The state after, and the drift left in it.
    pub after: State,
    pub left: Vec<Drift>,
    /// What each install run gave the front end, in order.
    pub runs: Vec<R>,
    pub changed: bool,
    pub reboot: bool,
    pub guard: GuardStep,
    pub outcome: Outcome,
}

/// Runs the profile's install runs that fix the drift through `install` (it makes the plan
/// and runs it: `Ok((report, what the front end keeps))`, `Err` stops `state set` as a whole),
/// then the guard, and judges what is left.
pub fn apply<R, E>(
    target: &Target,
    tables: &Tables,
    profile: &Profile,
    given: &Given,
    mut install: impl FnMut(&Wanted) -> Result<(RunReport, R), E>,
) -> Result<Applied<R>, E> {
    let before = state::take(target, tables, given);
    let first = drift::diff(profile, &before, tables);
    let mut runs = Vec::new();
    let mut outcomes = Vec::new();
    let mut changed = false;
    let mut reboot = false;
    for w in drift::plans_for(profile, &first) {
        let (report, kept) = install(&w)?;
        changed |= report.changed;
        reboot |= report.reboot_required || report.restart_pending;
        let o = Outcome::of_run(&report);
        outcomes.push(o);
        runs.push(kept);
        // A failed or cancelled run, or a driver waiting for its restart, ends here.
        if o != Outcome::Success {
            break;
        }
    }
    let mut after = state::take(target, tables, given);
    let mut left = drift::diff(profile, &after, tables);
    let mut guard_step = GuardStep::NotRun;
    // The guard is not a plan's step: the lab's profile is the consent a system Python's
    // pin asks for. An elevated run never pins (`guard::on` refuses: files written as
    // administrator in the user's environment would be the administrator's); `diff`
    // judges its guard by the record alone, so drift left there is not ours to fix.
    if !target.elevated
        && outcomes.iter().all(|o| *o == Outcome::Success)
        && left.iter().any(|d| d.layer == Layer::Guard)
        && let Some(py) = after.pytorch.as_ref().map(|t| t.python.clone())
    {
        guard_step = match guard::on(target, &py, true) {
            Ok(o) => {
                let written = matches!(o, OnOutcome::Pinned { written: true, .. });
                changed |= written;
                after = state::take(target, tables, given);
                left = drift::diff(profile, &after, tables);
                GuardStep::Pinned { written }
            }
            Err(e) => GuardStep::Failed(e),
        };
    }
    let outcome = outcome(&outcomes, reboot, &left);
    Ok(Applied {
        first,
        after,
        left,
        runs,
        changed,
        reboot,
        guard: guard_step,
        outcome,
    })
}

/// A run's failure (busy, cancelled, failed) first, then a restart, then drift left that
/// no step of ours could fix.
fn outcome(runs: &[Outcome], reboot: bool, left: &[Drift]) -> Outcome {
    if let Some(o) = runs
        .iter()
        .find(|o| !matches!(o, Outcome::Success | Outcome::RebootRequired))
    {
        return *o;
    }
    if reboot {
        Outcome::RebootRequired
    } else if !left.is_empty() {
        Outcome::DriftLeft
    } else {
        Outcome::Success
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg;

    fn guard_drift() -> Drift {
        Drift {
            layer: Layer::Guard,
            is: None,
            should: msg!("fleet_guard_should_on"),
            fix: msg!("fleet_fix_guard"),
            fix_step: None,
        }
    }

    #[test]
    fn a_failed_run_comes_before_a_restart_and_a_restart_before_drift() {
        use Outcome::*;
        let left = [guard_drift()];
        assert_eq!(outcome(&[RebootRequired, Busy], true, &left), Busy);
        assert_eq!(outcome(&[Success, Cancelled], false, &[]), Cancelled);
        assert_eq!(outcome(&[Failed], true, &[]), Failed);
        assert_eq!(outcome(&[RebootRequired], true, &left), RebootRequired);
        assert_eq!(outcome(&[Success], false, &left), DriftLeft);
        assert_eq!(outcome(&[], false, &left), DriftLeft);
        assert_eq!(outcome(&[Success], false, &[]), Success);
        assert_eq!(outcome(&[], false, &[]), Success);
    }
}
