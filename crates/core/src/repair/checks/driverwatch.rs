//! The driver that passed the GPU check, watched (#33): a driver older than the record,
//! none at all, or a Linux module not rebuilt for a new kernel. On Windows the fix puts
//! our driver back through the plan's signed driver step.

use super::*;
use crate::driverwatch::{self, Drift};

pub(super) fn driverwatch(i: &Input, out: &mut Vec<Finding>) {
    let observed = driverwatch::observe(i.target);
    let code = i
        .report
        .nvidia_gpus()
        .find_map(|g| g.problem.as_ref().and_then(|p| p.code));
    let driver = i.report.driver.as_ref().map(|d| &d.version);
    let Some(drift) = driverwatch::judge(i.target.os, &observed, driver, code) else {
        return;
    };
    let fix = match (drift.reinstall(), drift.manual()) {
        // Recorded by a run without administrator rights, read by this elevated one: told,
        // but no driver is installed on the word of a file every user program can write.
        (Some(v), _) if !observed.acts() => Fix::Manual {
            how: msg!("records_driver_user_record", version = v),
        },
        (Some(v), _) => reinstall(i, v),
        (None, Some(how)) => Fix::Manual { how },
        (None, None) => fix_driver(i),
    };
    if !matches!(drift, Drift::Older { .. }) {
        // Said better here: which driver is gone, and the fix that puts it back.
        out.retain(|f| f.id != "repair_driver_missing");
    }
    let severity = match drift {
        // It may still run, but it is not the driver that passed.
        Drift::Older { .. } => Severity::Warning,
        _ => Severity::Error,
    };
    out.push(finding(
        Layer::Driver,
        drift.id(),
        severity,
        drift.message(),
        fix,
    ));
}

/// Our driver step for `version` (the primary GPU's package), else the manual advice.
fn reinstall(i: &Input, version: &Version) -> Fix {
    let facts = i.report.facts(i.target.os);
    crate::recommend::reinstall_driver(i.tables, &facts, version)
        .and_then(|d| {
            crate::plan::driver_steps(
                i.target,
                &d,
                &crate::plan::Choices::new(crate::recommend::Method::Installer),
            )
            .ok()
        })
        .map_or_else(|| fix_driver(i), steps)
}
