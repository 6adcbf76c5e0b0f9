//! The driver layer: is there one, does it load, is it new enough for the toolkits.

use super::*;

/// NVIDIA GPUs whose compute capability is known: the torch checks judge against them.
pub(super) fn judged_gpus(report: &SystemReport) -> impl Iterator<Item = &crate::detect::Gpu> {
    report
        .nvidia_gpus()
        .filter(|g| g.compute_capability.is_some())
}

pub(super) fn driver(i: &Input, out: &mut Vec<Finding>) {
    let r = i.report;
    for g in r.nvidia_gpus() {
        if let Some(p) = &g.problem {
            // The same sentence detect's notes say (`GpuProblem::message_key`).
            out.push(finding(
                Layer::Driver,
                p.key.message_key(),
                Severity::Error,
                p.message(&g.name),
                manual(p.key.fix_key()),
            ));
        }
    }
    let Some(driver) = &r.driver else {
        if r.nvidia_gpus().next().is_some() && !r.nvidia_gpus().any(|g| g.problem.is_some()) {
            out.push(finding(
                Layer::Driver,
                "repair_driver_missing",
                Severity::Error,
                msg!("repair_driver_missing"),
                fix_driver(i),
            ));
        }
        return;
    };
    for t in &r.toolkits {
        let Some(v) = &t.version else { continue };
        let Some(line) = i.tables.toolkit_line(v.major()) else {
            continue;
        };
        let floor = line.driver_floor(driver_os(i));
        let releases = &i.tables.toolkits.releases;
        let release = releases.iter().find(|rel| rel.version == *v).or_else(|| {
            releases
                .iter()
                .rfind(|rel| rel.version.major_minor() == v.major_minor())
        });
        let release_min = release.and_then(|rel| rel.driver_min(driver_os(i)).cloned());
        let beyond = match &driver.cuda_version {
            Some(c) => v.major_minor() > c.major_minor(),
            None => release_min.as_ref().is_some_and(|m| &driver.version < m),
        };
        if driver.version < *floor {
            let m = msg!(
                "repair_driver_too_old",
                driver = &driver.version,
                toolkit = v.major_minor(),
                minimum = release_min.as_ref().unwrap_or(floor)
            );
            out.push(finding(
                Layer::Driver,
                "repair_driver_too_old",
                Severity::Error,
                m,
                fix_driver(i),
            ));
        } else if beyond {
            let m = msg!(
                "repair_driver_minor_compat",
                driver = &driver.version,
                toolkit = v.major_minor(),
                minimum = release_min.as_ref().unwrap_or(floor)
            );
            out.push(finding(
                Layer::Driver,
                "repair_driver_minor_compat",
                Severity::Warning,
                m,
                fix_driver(i),
            ));
        }
    }
}
