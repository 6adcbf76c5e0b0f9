//! Choosing a CUDA toolkit release and the cuDNN that goes with it.

use super::driver::{self, DriverFit, Need, Needs};
use super::{CudnnPick, Download, Facts, Request, ToolkitPick};
use crate::compat::{CudnnRelease, InstallerKind, Os, Tables, ToolkitRelease};
use crate::message::Message;
use crate::msg;
use crate::version::{ComputeCapability, Version};

struct Candidate<'t> {
    release: &'t ToolkitRelease,
    fit: DriverFit,
    minimum: Version,
    driver_confirmed: bool,
    confirmed: bool,
}

impl Candidate<'_> {
    fn rank(&self) -> (DriverFit, bool, Version) {
        (self.fit, self.confirmed, self.release.version.clone())
    }
}

/// `version` starts with `prefix` component by component (`12.4` matches `12.4.1`).
fn matches_prefix(version: &Version, prefix: &Version) -> bool {
    version.parts().starts_with(prefix.parts())
}

fn installer_kind(os: Os) -> InstallerKind {
    match os {
        Os::Windows => InstallerKind::WindowsLocal,
        Os::Linux => InstallerKind::LinuxRunfile,
    }
}

pub(super) fn pick(
    tables: &Tables,
    facts: &Facts,
    request: &Request,
    needs: &mut Needs,
    reasons: &mut Vec<Message>,
    blockers: &mut Vec<Message>,
) -> Option<(ToolkitPick, Need)> {
    let kind = installer_kind(facts.os);
    let gpu_ok = |r: &ToolkitRelease| {
        facts
            .gpus
            .iter()
            .all(|g| r.builds_for(g.compute_capability))
    };
    let usable = |r: &&ToolkitRelease| {
        !r.preview
            && (request.method == super::Method::Wheels || r.installer(kind).is_some())
            && request
                .cuda
                .as_ref()
                .is_none_or(|p| matches_prefix(&r.version, p))
    };
    let candidates: Vec<Candidate> = tables
        .toolkits
        .releases
        .iter()
        .filter(usable)
        .filter(|r| gpu_ok(r))
        .map(|release| {
            let (fit, minimum, driver_confirmed) = driver::toolkit_fit(tables, facts, release);
            // The exact minimum matters when ranking what runs today; a driver that
            // must be installed anyway will be the newest one.
            let by_nvml = facts.driver_cuda.is_some() && fit == DriverFit::Yes;
            Candidate {
                release,
                fit,
                minimum,
                driver_confirmed,
                confirmed: release.confirmed
                    && (driver_confirmed || by_nvml || fit == DriverFit::No),
            }
        })
        .collect();

    let Some(best) = candidates.iter().max_by_key(|c| c.rank()) else {
        blockers.push(no_toolkit(tables, facts, request));
        return None;
    };

    if best.fit == DriverFit::Yes
        && let Some(better) = candidates
            .iter()
            .filter(|c| {
                c.fit < DriverFit::Yes
                    && c.release.confirmed
                    && c.release.version > best.release.version
            })
            // Only a stated minimum above today's driver is worth offering.
            .filter(|c| facts.driver.as_ref().is_some_and(|d| c.minimum > *d))
            .max_by_key(|c| c.rank())
    {
        needs.offer(
            better.minimum.clone(),
            format!("CUDA {}", better.release.version),
        );
    }

    let r = best.release;
    let gpus: Vec<String> = facts.gpus.iter().map(|g| g.label()).collect();
    reasons.push(msg!(
        "toolkit_builds_for",
        version = &r.version,
        sm_min = r.sm_min.sm(),
        sm_max = r.sm_max.sm(),
        gpus = gpus.join(", ")
    ));
    let key = match best.fit {
        // No published minimum to quote: the driver's own CUDA figure decided it.
        DriverFit::Yes if r.driver_min(facts.os).is_none() => "toolkit_runs_on_driver_reported",
        DriverFit::Yes => "toolkit_runs_on_driver",
        DriverFit::MinorCompat => "toolkit_minor_compat",
        DriverFit::No => "toolkit_needs_driver",
    };
    reasons.push(
        Message::new(key)
            .with("version", &r.version)
            .with("minimum", &best.minimum),
    );
    if !r.confirmed {
        reasons.push(msg!("toolkit_unconfirmed", version = &r.version));
    }
    if !best.driver_confirmed && best.fit != DriverFit::Yes {
        reasons.push(msg!(
            "toolkit_driver_unconfirmed",
            version = &r.version,
            minimum = &best.minimum,
            major = r.version.major()
        ));
    }
    // Nothing is inferred for a release whose minimum driver no source states: say when
    // that decided the choice.
    if r.driver_min(facts.os).is_none()
        && best.fit == DriverFit::Yes
        && let Some(cuda) = &facts.driver_cuda
    {
        reasons.push(msg!(
            "toolkit_minimum_unknown",
            version = &r.version,
            cuda = cuda
        ));
    }
    if let Some(skipped) = candidates
        .iter()
        .filter(|c| c.release.version > r.version && c.fit == DriverFit::MinorCompat)
        .filter(|c| c.release.driver_min(facts.os).is_none())
        .max_by_key(|c| c.release.version.clone())
    {
        reasons.push(msg!(
            "toolkit_newer_minimum_unknown",
            version = &skipped.release.version,
            chosen = &r.version
        ));
    }
    if let Some(newest) = tables.toolkits.releases.iter().rfind(|c| !c.preview)
        && newest.version > r.version
        && !facts
            .gpus
            .iter()
            .all(|g| newest.builds_for(g.compute_capability))
    {
        reasons.push(msg!(
            "newer_toolkit_drops_gpu",
            version = &newest.version,
            sm_min = newest.sm_min.sm()
        ));
    }
    if facts
        .installed_toolkits
        .iter()
        .any(|v| v.major_minor() == r.version.major_minor())
    {
        reasons.push(msg!(
            "toolkit_already_installed",
            version = r.version.major_minor()
        ));
    }

    let download = |k: InstallerKind| {
        r.installer(k).map(|i| Download {
            file: i.file.clone(),
            url: r.installer_url(k).expect("installer exists"),
            size: i.size,
            sha256: i.sha256.clone(),
            md5: i.md5.clone(),
        })
    };
    let pick = ToolkitPick {
        version: r.version.clone(),
        label: r.label.clone(),
        installer: download(kind),
        network_installer: if facts.os == Os::Windows {
            download(InstallerKind::WindowsNetwork)
        } else {
            None
        },
        confirmed: best.confirmed,
    };
    Some((
        pick,
        Need {
            minimum: best.minimum.clone(),
            fit: best.fit,
        },
    ))
}

/// Why no toolkit fits, as the most specific blocker.
fn no_toolkit(tables: &Tables, facts: &Facts, request: &Request) -> Message {
    let releases = &tables.toolkits.releases;
    if let Some(p) = &request.cuda
        && !releases.iter().any(|r| matches_prefix(&r.version, p))
    {
        return msg!("no_toolkit_matches_request", cuda = p);
    }
    let alone: Vec<String> = facts
        .gpus
        .iter()
        .filter(|g| !releases.iter().any(|r| r.builds_for(g.compute_capability)))
        .map(|g| g.label())
        .collect();
    if !alone.is_empty() {
        return msg!("no_toolkit_for_gpu", gpus = alone.join(", "));
    }
    let gpus: Vec<String> = facts.gpus.iter().map(|g| g.label()).collect();
    if facts.gpus.len() > 1 {
        return msg!("gpus_have_no_common_toolkit", gpus = gpus.join(", "));
    }
    match &request.cuda {
        Some(p) => msg!("no_toolkit_matches_request", cuda = p),
        None => msg!("no_toolkit_for_gpu", gpus = gpus.join(", ")),
    }
}

/// The effective SM range of a cuDNN release: its own, or inherited from the nearest
/// earlier release that states one (support for old GPUs only ever drops).
fn sm_range(
    tables: &Tables,
    r: &CudnnRelease,
) -> Option<(ComputeCapability, ComputeCapability, bool)> {
    if let (Some(lo), Some(hi)) = (r.sm_min, r.sm_max) {
        return Some((lo, hi, true));
    }
    tables
        .cudnn
        .releases
        .iter()
        .filter(|o| o.version < r.version)
        .rev()
        .find_map(|o| Some((o.sm_min?, o.sm_max?, false)))
}

pub(super) fn pick_cudnn(
    tables: &Tables,
    facts: &Facts,
    tk: &ToolkitPick,
    reasons: &mut Vec<Message>,
) -> Option<CudnnPick> {
    let major = tk.version.major();
    let tk_mm = tk.version.major_minor();
    let mut best: Option<(bool, &CudnnRelease)> = None;
    for r in &tables.cudnn.releases {
        let (Some(cuda), Some(_)) = (r.cuda(major), r.archive(facts.os, major)) else {
            continue;
        };
        if cuda
            .toolkit_min
            .as_ref()
            .is_some_and(|lo| tk_mm < lo.major_minor())
            || cuda
                .toolkit_max
                .as_ref()
                .is_some_and(|hi| tk_mm > hi.major_minor())
        {
            continue;
        }
        let sm_known = match sm_range(tables, r) {
            Some((lo, hi, own)) => {
                if !facts
                    .gpus
                    .iter()
                    .all(|g| lo <= g.compute_capability && g.compute_capability <= hi)
                {
                    continue;
                }
                own
            }
            None => false,
        };
        let confirmed = r.confirmed && sm_known;
        if best.is_none_or(|(c, b)| (confirmed, &r.version) > (c, &b.version)) {
            best = Some((confirmed, r));
        }
    }
    let Some((confirmed, r)) = best else {
        reasons.push(msg!("cudnn_none_for_toolkit", cuda = &tk.version));
        return None;
    };
    let a = r.archive(facts.os, major).expect("checked above");
    reasons.push(msg!(
        "cudnn_for_toolkit",
        version = &r.version,
        cuda_major = major,
        toolkit = &tk.version
    ));
    if !confirmed {
        reasons.push(msg!("cudnn_unconfirmed", version = &r.version));
    }
    if facts.os == Os::Windows && r.version.major() == 8 {
        reasons.push(msg!("cudnn8_needs_zlib"));
    }
    Some(CudnnPick::new(r, a, confirmed))
}
