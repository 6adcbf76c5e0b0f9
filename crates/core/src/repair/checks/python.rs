//! The PyTorch layer: the chosen Python's torch, against the GPU's architecture and the
//! driver.

use super::*;

/// Whether [`python`] can find anything with this report: without such a GPU it says
/// nothing, so the interpreters need not be run at all.
pub fn wants_python(report: &SystemReport) -> bool {
    judged_gpus(report).next().is_some()
}

/// `sm_86` / `compute_90` entries of torch's arch list.
pub(super) fn arch_covers(list: &[String], cc: ComputeCapability) -> bool {
    list.iter().any(|a| {
        let (ptx, digits) = match (a.strip_prefix("sm_"), a.strip_prefix("compute_")) {
            (Some(d), _) => (false, d),
            (_, Some(d)) => (true, d),
            _ => return false,
        };
        let Ok(c) =
            format!("sm_{}", digits.trim_end_matches(['a', 'f'])).parse::<ComputeCapability>()
        else {
            return false;
        };
        c.binary_runs_on(cc) || (ptx && c <= cc)
    })
}

/// Python and torch, from `report.pythons` (asked only when [`wants_python`]).
pub fn python(i: &Input, out: &mut Vec<Finding>) {
    let gpus: Vec<&crate::detect::Gpu> = judged_gpus(i.report).collect();
    if gpus.is_empty() {
        return;
    }
    for py in &i.report.pythons {
        let Some(torch) = &py.torch else { continue };
        // The fix: the recommended wheel for this Python and driver, replacing what is there.
        let fix = || {
            let mut facts = i.report.facts(i.target.os);
            facts.python = py.version.as_ref().map(Version::major_minor);
            let rec = crate::recommend::recommend(
                i.tables,
                &facts,
                &crate::recommend::Request {
                    goal: crate::recommend::Goal::Pytorch,
                    cuda: None,
                    method: crate::recommend::Method::Installer,
                    // The wheel for the driver that is there: repair never updates it.
                    driver: crate::recommend::DriverPref::Keep,
                    distro: None,
                    ..Default::default()
                },
            );
            match rec.torch {
                Some(t) => steps(vec![Step::InstallTorch {
                    python: py.path.clone(),
                    args: t.run_args(&["--force-reinstall"], None),
                    auto: Default::default(),
                }]),
                None => manual("repair_fix_torch"),
            }
        };
        let who = show(&py.path);
        if py.torch_cpu_build {
            out.push(finding(
                Layer::Torch,
                "repair_torch_cpu",
                Severity::Error,
                msg!("repair_torch_cpu", python = &who, torch = &torch.version),
                fix(),
            ));
            continue;
        }
        if let (Some(cuda), Some(driver)) = (
            torch.cuda.as_ref().and_then(|c| c.parse::<Version>().ok()),
            &i.report.driver,
        ) && let Some(line) = i.tables.toolkit_line(cuda.major())
            && driver.version < *line.driver_floor(i.target.os)
        {
            let m = msg!(
                "repair_torch_driver",
                python = &who,
                torch = &torch.version,
                cuda = &cuda,
                minimum = line.driver_floor(i.target.os)
            );
            out.push(finding(
                Layer::Torch,
                "repair_torch_driver",
                Severity::Error,
                m,
                fix(),
            ));
            continue;
        }
        if !torch.arch_list.is_empty()
            && let Some(g) = gpus
                .iter()
                .find(|g| !arch_covers(&torch.arch_list, g.compute_capability.expect("filtered")))
        {
            let m = msg!(
                "repair_torch_arch",
                python = &who,
                torch = &torch.version,
                gpu = &g.name,
                sm = g.compute_capability.expect("filtered").sm(),
                archs = torch.arch_list.join(" ")
            );
            out.push(finding(
                Layer::Torch,
                "repair_torch_arch",
                Severity::Error,
                m,
                fix(),
            ));
        }
    }
}
