//! Does the driver run a given CUDA? Two sources of truth, in order: NVML's own figure
//! (the highest CUDA the installed driver supports), else the tables' per-release driver
//! minimum for this OS, else the major line's minor-version-compatibility floor.

use super::{DriverAction, Facts, GpuFact, Recommendation, Request};
use crate::compat::{Tables, ToolkitRelease};
use crate::message::Message;
use crate::msg;
use crate::version::Version;

/// How well the current driver runs something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DriverFit {
    /// Not with the current driver (or there is none).
    No,
    /// Through minor-version compatibility: runs, with a reduced feature set (no PTX JIT
    /// of newer code).
    MinorCompat,
    /// Fully.
    Yes,
}

/// One pick's driver requirement.
#[derive(Debug, Clone)]
pub(super) struct Need {
    pub minimum: Version,
    pub fit: DriverFit,
}

/// Everything picked so far: the lowest driver that runs all of it, and what a newer
/// driver would add.
#[derive(Debug, Default)]
pub(super) struct Needs {
    pub minimum: Option<Version>,
    pub update_required: bool,
    pub unlock: Option<(Version, String)>,
}

impl Needs {
    pub fn add(&mut self, need: Need) {
        self.update_required |= need.fit == DriverFit::No;
        if self.minimum.as_ref().is_none_or(|m| *m < need.minimum) {
            self.minimum = Some(need.minimum);
        }
    }

    /// Records that `minimum` would unlock `what` (keeps the lowest such driver).
    pub fn offer(&mut self, minimum: Version, what: String) {
        if self.unlock.as_ref().is_none_or(|(m, _)| minimum < *m) {
            self.unlock = Some((minimum, what));
        }
    }
}

/// The highest CUDA `MAJOR.MINOR` the driver runs: NVML's figure, else the newest release
/// whose confirmed minimum for this OS the driver meets.
pub(super) fn driver_cuda(tables: &Tables, facts: &Facts) -> Option<Version> {
    if let Some(c) = &facts.driver_cuda {
        return Some(c.major_minor());
    }
    let driver = facts.driver.as_ref()?;
    tables
        .toolkits
        .releases
        .iter()
        .filter(|r| !r.preview && r.driver_confirmed)
        .filter(|r| r.driver_min(facts.os).is_some_and(|m| m <= driver))
        .map(|r| r.version.major_minor())
        .max()
}

/// The driver floor of CUDA major `major` on this OS (minor-version compatibility).
fn floor(tables: &Tables, facts: &Facts, major: u32) -> Option<Version> {
    tables
        .toolkit_line(major)
        .map(|l| l.driver_floor(facts.os).clone())
}

/// How the driver runs toolkit release `r`, and the driver it needs to run it fully.
pub(super) fn toolkit_fit(
    tables: &Tables,
    facts: &Facts,
    r: &ToolkitRelease,
) -> (DriverFit, Version, bool) {
    let floor =
        floor(tables, facts, r.version.major()).expect("validated: every release has a line");
    let exact = r.driver_min(facts.os);
    let minimum = exact.cloned().unwrap_or_else(|| floor.clone());
    let confirmed = exact.is_some() && r.driver_confirmed;
    let Some(driver) = &facts.driver else {
        return (DriverFit::No, minimum, confirmed);
    };
    let full = match (&facts.driver_cuda, exact) {
        (Some(cuda), _) => r.version.major_minor() <= cuda.major_minor(),
        (None, Some(m)) => driver >= m,
        (None, None) => false,
    };
    let fit = if full {
        DriverFit::Yes
    } else if *driver >= floor {
        DriverFit::MinorCompat
    } else {
        DriverFit::No
    };
    (fit, minimum, confirmed)
}

/// How the driver runs PyTorch wheels built with CUDA `cuda`. The wheels carry their own
/// runtime, so the major line's floor is what they need (compat dossier §6.3).
pub(super) fn wheel_fit(
    tables: &Tables,
    facts: &Facts,
    cuda: &Version,
) -> Option<(DriverFit, Version)> {
    let floor = floor(tables, facts, cuda.major())?;
    let fit = match &facts.driver {
        Some(d) if *d >= floor => DriverFit::Yes,
        _ => DriverFit::No,
    };
    Some((fit, floor))
}

/// The driver branch a GPU's architecture needs at the least (e.g. Blackwell).
pub(super) fn gpu_needs(
    tables: &Tables,
    facts: &Facts,
    gpu: &GpuFact,
    needs: &mut Needs,
    reasons: &mut Vec<Message>,
) {
    let Some(arch) = tables.architecture_of(gpu.compute_capability) else {
        return;
    };
    let min = match facts.os {
        crate::compat::Os::Windows => arch.driver_min_windows.as_ref(),
        crate::compat::Os::Linux => arch.driver_min_linux.as_ref(),
    };
    let Some(min) = min else { return };
    let fit = match &facts.driver {
        Some(d) if d >= min => DriverFit::Yes,
        _ => DriverFit::No,
    };
    let key = if arch.driver_min_confirmed {
        "gpu_needs_driver"
    } else {
        "gpu_needs_driver_unconfirmed"
    };
    reasons.push(
        Message::new(key)
            .with("gpu", gpu.label())
            .with("architecture", &arch.name)
            .with("minimum", min),
    );
    needs.add(Need {
        minimum: min.clone(),
        fit,
    });
}

/// Fills in the driver action from what was picked.
pub(super) fn advise(
    _tables: &Tables,
    facts: &Facts,
    _request: &Request,
    needs: &Needs,
    rec: &mut Recommendation,
) {
    let adv = &mut rec.driver;
    adv.minimum = needs.minimum.clone();
    let min = needs
        .minimum
        .clone()
        .map(|m| m.to_string())
        .unwrap_or_default();
    match &facts.driver {
        None => {
            adv.action = DriverAction::Install;
            rec.reasons.push(msg!("driver_install", minimum = min));
        }
        Some(current) if needs.update_required => {
            adv.action = DriverAction::Update;
            rec.reasons.push(msg!(
                "driver_update_required",
                current = current,
                minimum = min
            ));
        }
        Some(_) => {
            adv.action = DriverAction::None;
            if let Some((m, what)) = &needs.unlock {
                adv.upgrade_minimum = Some(m.clone());
                adv.unlocks = Some(what.clone());
                rec.reasons
                    .push(msg!("driver_update_unlocks", minimum = m, unlocks = what));
            }
        }
    }
}
