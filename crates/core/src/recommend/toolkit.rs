//! Choosing a CUDA toolkit release and the cuDNN that goes with it.

use super::driver::{self, DriverFit, MinimumFrom, Need, Needs, Outlook};
use super::{CudnnPick, Download, Facts, LeftOut, Request, ToolkitPick, leave_out};
use crate::compat::{CudnnRelease, InstallerKind, Os, Tables, ToolkitRelease};
use crate::message::Message;
use crate::msg;
use crate::version::{ComputeCapability, Version};

struct Candidate<'t> {
    release: &'t ToolkitRelease,
    /// How the driver runs it; with a driver update asked for anyway (#20 class 4), what
    /// runs only through minor-version compatibility counts as needing the update.
    fit: DriverFit,
    /// The driver that runs it fully.
    full: driver::ReleaseMinimum,
    /// The driver to ask for.
    need: Version,
    confirmed: bool,
}

impl Candidate<'_> {
    /// With an update asked for anyway, every candidate is ranked as it runs after the
    /// update: the newest confirmed wins, whatever today's driver runs.
    fn rank(&self, anyway: bool) -> (DriverFit, bool, Version) {
        let fit = if anyway { DriverFit::No } else { self.fit };
        (fit, self.confirmed, self.release.version.clone())
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

/// The driver to ask for to run release `r`: with the driver to be updated anyway, the
/// one that runs it fully (a new driver is installed; minor-version compatibility is
/// no reason to stop short of it); else what `toolkit_fit` says.
fn need_of(tables: &Tables, facts: &Facts, r: &ToolkitRelease, anyway: bool) -> Version {
    let tf = driver::toolkit_fit(tables, facts, r);
    if anyway && tf.fit == DriverFit::MinorCompat {
        tf.full.version
    } else {
        tf.need
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn pick(
    tables: &Tables,
    facts: &Facts,
    request: &Request,
    needs: &mut Needs,
    reasons: &mut Vec<Message>,
    blockers: &mut Vec<Message>,
    left_out: &mut Vec<LeftOut>,
) -> Option<(ToolkitPick, Need)> {
    let kind = installer_kind(facts.os);
    let usable: Vec<&ToolkitRelease> = tables
        .toolkits
        .releases
        .iter()
        .filter(|r| {
            !r.preview
                && (request.method == super::Method::Wheels || r.installer(kind).is_some())
                && request
                    .cuda
                    .as_ref()
                    .is_none_or(|p| matches_prefix(&r.version, p))
        })
        .collect();
    // #20 class 1: the toolkit must build for every GPU; when none does, it serves the
    // GPUs it can keep (the newest card first) and says which it leaves out.
    // A release keeps a set of GPUs when it builds for each and the driver it needs is
    // one they can all get (no Kepler card under a driver above R470).
    let keep = leave_out::kept(&facts.gpus, |gs| {
        let outlook = Outlook::of_gpus(tables, facts, gs.iter().copied());
        usable.iter().any(|r| {
            gs.iter().all(|g| r.builds_for(g.compute_capability))
                && outlook.reachable_on(
                    facts.driver_os(),
                    &need_of(tables, facts, r, outlook.update_anyway),
                )
        })
    });
    if keep.is_empty() {
        blockers.push(no_toolkit(tables, facts, request));
        return None;
    }
    let all = facts;
    let kept_facts = leave_out::only(facts, &keep);
    let facts = &kept_facts;
    let outlook = Outlook::of(tables, facts);
    let anyway = outlook.update_anyway;
    let candidates: Vec<Candidate> = usable
        .iter()
        .copied()
        .filter(|r| {
            facts
                .gpus
                .iter()
                .all(|g| r.builds_for(g.compute_capability))
        })
        .map(|release| {
            let tf = driver::toolkit_fit(tables, facts, release);
            let need = need_of(tables, facts, release, anyway);
            let fit = if anyway && tf.fit == DriverFit::MinorCompat {
                DriverFit::No
            } else {
                tf.fit
            };
            // The exact minimum matters when ranking what runs today; a driver that
            // must be installed anyway will be the newest one.
            let by_nvml = facts.driver_cuda.is_some() && fit == DriverFit::Yes;
            Candidate {
                release,
                fit,
                confirmed: release.confirmed
                    && (tf.full.confirmed || by_nvml || fit == DriverFit::No),
                full: tf.full,
                need,
            }
        })
        // #20 class 4: a driver above the GPUs' last branch cannot be installed.
        .filter(|c| outlook.reachable_on(facts.driver_os(), &c.need))
        .collect();

    let Some(best) = candidates.iter().max_by_key(|c| c.rank(anyway)) else {
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
            // Only a stated minimum above today's driver, and one these GPUs can have,
            // is worth offering.
            .filter(|c| {
                facts.driver.as_ref().is_some_and(|d| c.full.version > *d)
                    && outlook.reachable_on(facts.driver_os(), &c.full.version)
            })
            .max_by_key(|c| c.rank(false))
    {
        needs.offer(
            better.full.version.clone(),
            format!("CUDA {}", better.release.version),
        );
    }

    if keep.len() < all.gpus.len() {
        leave_out::record(
            all,
            super::Part::Toolkit,
            "CUDA Toolkit",
            &keep,
            left_out,
            reasons,
        );
    }
    explain(tables, facts, best, &candidates, reasons);
    let pick = toolkit_pick(best, facts.os);
    Some((
        pick,
        Need {
            minimum: best.need.clone(),
            fit: best.fit,
        },
    ))
}

/// The reasons for the toolkit chosen (`best`, among `candidates`) for the GPUs kept.
fn explain(
    tables: &Tables,
    facts: &Facts,
    best: &Candidate,
    candidates: &[Candidate],
    reasons: &mut Vec<Message>,
) {
    let r = best.release;
    let gpus: Vec<String> = facts.gpus.iter().map(|g| g.label()).collect();
    if r.sm.is_empty() {
        reasons.push(msg!(
            "toolkit_builds_for",
            version = &r.version,
            sm_min = r.sm_min.sm(),
            sm_max = r.sm_max.sm(),
            gpus = gpus.join(", ")
        ));
    } else {
        let sm: Vec<String> = r.sm.iter().map(ToString::to_string).collect();
        reasons.push(msg!(
            "toolkit_builds_for_list",
            version = &r.version,
            sm = sm.join(", "),
            gpus = gpus.join(", ")
        ));
    }
    let from_floor = best.full.from == MinimumFrom::Floor;
    let key = match best.fit {
        // No minimum to quote: the driver's own CUDA figure decided it.
        DriverFit::Yes if from_floor => "toolkit_runs_on_driver_reported",
        DriverFit::Yes => "toolkit_runs_on_driver",
        DriverFit::MinorCompat => "toolkit_minor_compat",
        // WSL2: the driver is Windows', updated there; never the runfile's (#32).
        DriverFit::No if facts.wsl2() => "toolkit_needs_driver_wsl",
        // #20 class 6: only an installer that carries a new enough driver brings it.
        DriverFit::No if r.carried_driver(facts.os).is_some_and(|c| *c >= best.need) => {
            "toolkit_needs_driver"
        }
        DriverFit::No => match facts.os {
            Os::Windows => "toolkit_needs_driver_windows",
            Os::Linux => "toolkit_needs_driver_linux",
        },
    };
    reasons.push(
        Message::new(key)
            .with("version", &r.version)
            .with("minimum", &best.full.version),
    );
    if !r.confirmed {
        reasons.push(msg!("toolkit_unconfirmed", version = &r.version));
    }
    match &best.full.from {
        MinimumFrom::Earlier(from) => reasons.push(msg!(
            "toolkit_minimum_inherited",
            version = &r.version,
            minimum = &best.full.version,
            from = from
        )),
        // #32: the branch NVIDIA pairs with the minor is what a driver installed for it
        // is; the floor still runs it (minor-version compatibility).
        MinimumFrom::Floor
            if best.fit != DriverFit::Yes
                && let Some(b) = tables.driver_branch(&r.version) =>
        {
            reasons.push(msg!(
                "toolkit_driver_branch",
                version = &r.version,
                cuda = r.version.major_minor(),
                branch = b.branch,
                minimum = &best.full.version,
                major = r.version.major()
            ))
        }
        MinimumFrom::Floor if best.fit != DriverFit::Yes => reasons.push(msg!(
            "toolkit_driver_unconfirmed",
            version = &r.version,
            minimum = &best.full.version,
            major = r.version.major()
        )),
        MinimumFrom::Published if !best.full.confirmed => reasons.push(msg!(
            "toolkit_minimum_unconfirmed",
            version = &r.version,
            minimum = &best.full.version
        )),
        _ => {}
    }
    // Nothing is inferred for a release whose minimum driver no source states: say when
    // that decided the choice.
    if from_floor
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
        .filter(|c| c.full.from == MinimumFrom::Floor)
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
}

/// What the recommendation says of the toolkit chosen: its installers for `os`.
fn toolkit_pick(best: &Candidate, os: Os) -> ToolkitPick {
    let r = best.release;
    let kind = installer_kind(os);
    let download = |k: InstallerKind| {
        r.installer(k).map(|i| Download {
            file: i.file.clone(),
            url: r.installer_url(k).expect("installer exists"),
            size: i.size,
            sha256: i.sha256.clone(),
            md5: i.md5.clone(),
        })
    };
    ToolkitPick {
        version: r.version.clone(),
        label: r.label.clone(),
        installer: download(kind),
        network_installer: if os == Os::Windows {
            download(InstallerKind::WindowsNetwork)
        } else {
            None
        },
        carried_driver: r.carried_driver(os).cloned(),
        confirmed: best.confirmed,
    }
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
    // The version asked for builds no code for a GPU (12.8 and a B300, sm_103, first in
    // 12.9): say so, and which release is the first that does.
    if let Some(p) = &request.cuda {
        let missed: Vec<&super::GpuFact> = facts
            .gpus
            .iter()
            .filter(|g| {
                !releases.iter().any(|r| {
                    !r.preview
                        && matches_prefix(&r.version, p)
                        && r.builds_for(g.compute_capability)
                })
            })
            .collect();
        let first = releases
            .iter()
            .filter(|r| !r.preview)
            .find(|r| missed.iter().all(|g| r.builds_for(g.compute_capability)));
        if let (false, Some(first)) = (missed.is_empty(), first) {
            let gpus: Vec<String> = missed.iter().map(|g| g.label()).collect();
            return msg!(
                "toolkit_request_misses_gpu",
                cuda = p,
                gpus = gpus.join(", "),
                first = first.version.major_minor()
            );
        }
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
    // Releases for this toolkit whose SM range misses a GPU, and which GPUs.
    let mut missed: Vec<(&CudnnRelease, Vec<String>)> = Vec::new();
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
                let outside: Vec<String> = facts
                    .gpus
                    .iter()
                    .filter(|g| !(lo <= g.compute_capability && g.compute_capability <= hi))
                    .map(|g| g.label())
                    .collect();
                if !outside.is_empty() {
                    missed.push((r, outside));
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
    // Say when the newest cuDNN for this toolkit leaves a GPU out (#20 class 1).
    let newest_missed = missed
        .iter()
        .filter(|(m, _)| best.is_none_or(|(_, b)| m.version > b.version))
        .max_by_key(|(m, _)| &m.version);
    let Some((confirmed, r)) = best else {
        match newest_missed {
            Some((_, gpus)) => reasons.push(msg!(
                "cudnn_none_for_gpus",
                cuda = &tk.version,
                gpus = gpus.join(", ")
            )),
            None => reasons.push(msg!("cudnn_none_for_toolkit", cuda = &tk.version)),
        }
        return None;
    };
    if let Some((m, gpus)) = newest_missed {
        reasons.push(msg!(
            "cudnn_newer_misses_gpu",
            newer = &m.version,
            gpus = gpus.join(", "),
            version = &r.version
        ));
    }
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

#[cfg(test)]
mod tests {
    use super::super::{DriverAction, Goal, GpuFact, Method, Part, Recommendation, recommend};
    use super::*;

    fn tables() -> Tables {
        Tables::embedded().unwrap()
    }

    fn gpu(name: Option<&str>, cc: &str) -> GpuFact {
        GpuFact {
            name: name.map(Into::into),
            compute_capability: cc.parse().unwrap(),
        }
    }

    fn facts(os: Os, gpus: Vec<GpuFact>, driver: Option<&str>, nvml: Option<&str>) -> Facts {
        Facts {
            os,
            gpus,
            driver: driver.map(|d| d.parse().unwrap()),
            driver_cuda: nvml.map(|c| c.parse().unwrap()),
            python: Some("3.12".parse().unwrap()),
            installed_toolkits: vec![],
            unidentified_gpus: vec![],
            notes: vec![],
            host_kind: Default::default(),
            free_threaded: false,
        }
    }

    fn dev(t: &Tables, f: &Facts) -> Recommendation {
        recommend(
            t,
            f,
            &Request {
                goal: Goal::Developer,
                cuda: None,
                method: Method::Installer,
                driver: Default::default(),
                distro: None,
                ..Default::default()
            },
        )
    }

    /// One below `v` in its last part (None at 0).
    fn one_below(v: &Version) -> Option<Version> {
        let mut p = v.parts().to_vec();
        let last = p.last_mut()?;
        *last = last.checked_sub(1)?;
        Some(Version::new(&p))
    }

    /// #20 class 3, swept: every GPU family, each OS, drivers exactly at and one below
    /// every published minimum and every carried driver, with and without NVML's figure:
    /// a driver said to need no change is never below the reported minimum, and "the
    /// driver update comes with it" is said only of an installer carrying that driver.
    #[test]
    fn action_none_never_reports_a_minimum_above_the_driver() {
        let t = tables();
        let mut ccs: Vec<_> = t.gpus.gpus.iter().map(|g| g.cc).collect();
        ccs.sort();
        ccs.dedup();
        let mut n = 0;
        for os in [Os::Linux, Os::Windows] {
            let mut drivers: Vec<Version> = t
                .toolkits
                .releases
                .iter()
                .flat_map(|r| [r.driver_min(os), r.carried_driver(os)])
                .flatten()
                .flat_map(|d| [Some(d.clone()), one_below(d)])
                .flatten()
                .collect();
            drivers.sort();
            drivers.dedup();
            for cc in &ccs {
                for d in &drivers {
                    // NVML's figure: what the tables say this driver runs, or none.
                    let runs = t
                        .toolkits
                        .releases
                        .iter()
                        .filter(|r| r.driver_min(os).is_some_and(|m| m <= d))
                        .map(|r| r.version.major_minor().to_string())
                        .max_by_key(|s| s.parse::<Version>().unwrap());
                    for nvml in [None, runs.as_deref()] {
                        let f = facts(
                            os,
                            vec![gpu(None, &cc.to_string())],
                            Some(&d.to_string()),
                            nvml,
                        );
                        let rec = dev(&t, &f);
                        n += 1;
                        if rec.driver.action == DriverAction::None {
                            assert!(
                                rec.driver.minimum.as_ref().is_none_or(|m| m <= d),
                                "{os:?} cc {cc} driver {d} nvml {nvml:?}: minimum {:?} with action none",
                                rec.driver.minimum
                            );
                        }
                        if let Some(tk) = &rec.toolkit
                            && rec.reasons.iter().any(|m| m.key == "toolkit_needs_driver")
                        {
                            let r = t.toolkit(&tk.version).unwrap();
                            let need = rec
                                .reasons
                                .iter()
                                .find(|m| m.key == "toolkit_needs_driver")
                                .unwrap()
                                .params["minimum"]
                                .parse::<Version>()
                                .unwrap();
                            assert!(
                                r.carried_driver(os).is_some_and(|c| *c >= need),
                                "{os:?} {}: says the driver comes with it",
                                tk.version
                            );
                        }
                    }
                }
            }
        }
        assert!(n > 1000, "swept {n}");
    }

    /// #20 class 4: Kepler's last branch is R470. Without a driver on Windows the plan
    /// installs the R470 package (474.64), not the newest; on Linux with a 470 driver no
    /// update above the branch is offered.
    #[test]
    fn kepler_keeps_to_its_last_branch() {
        let t = tables();
        let f = facts(
            Os::Windows,
            vec![gpu(Some("NVIDIA GeForce GTX 780"), "3.5")],
            None,
            None,
        );
        let rec = dev(&t, &f);
        assert_eq!(rec.driver.last_branch, Some(470));
        let install = rec.driver.install.as_ref().expect("a driver to install");
        assert_eq!(install.version.to_string(), "474.64");
        assert!(rec.driver.minimum.as_ref().unwrap() <= &install.version);
        let r = rec
            .reasons
            .iter()
            .find(|m| m.key == "driver_last_branch")
            .unwrap();
        assert_eq!(r.params["branch"], "470");
        assert!(super::super::english(r).contains("R470"));

        let f = facts(Os::Linux, vec![gpu(None, "3.7")], Some("470.82.01"), None);
        let rec = dev(&t, &f);
        assert_eq!(rec.toolkit.as_ref().unwrap().version.to_string(), "11.4.4");
        assert_eq!(rec.driver.action, DriverAction::None);
        assert_eq!(rec.driver.upgrade_minimum, None, "520.61.05 is above R470");
        assert_eq!(rec.driver.unlocks, None);
    }

    /// #20 class 1: the toolkit serves the newer card, leaves the Kepler one out, and
    /// `visible_devices` names the one kept, whatever the PCI order.
    #[test]
    fn a_left_out_gpu_is_named_and_hidden() {
        let t = tables();
        for (gpus, left, visible) in [(["3.7", "12.0"], 0, "1"), (["12.0", "3.7"], 1, "0")] {
            let f = facts(
                Os::Linux,
                gpus.iter().map(|cc| gpu(None, cc)).collect(),
                Some("580.95.05"),
                None,
            );
            let rec = dev(&t, &f);
            assert!(rec.blockers.is_empty(), "{:?}", rec.blockers);
            // The toolkit leaves the K80 out, and so does PyTorch's wheel (none carries
            // sm_37).
            assert!(rec.left_out.iter().all(|l| l.index == left));
            assert!(rec.left_out.iter().any(|l| l.part == Part::Toolkit));
            assert_eq!(rec.visible_devices.as_deref(), Some(visible));
            // Kepler is left out: its R470 ceiling does not hold the driver back.
            assert_eq!(rec.driver.last_branch, None);
            let m = rec
                .reasons
                .iter()
                .find(|m| m.key == "gpu_left_out")
                .unwrap();
            assert_eq!(m.params["visible_devices"], visible);
            assert!(m.params["gpu"].contains("sm_37"));
        }
        // Windows: the driver package is for the card kept, not the Kepler one first.
        let f = facts(
            Os::Windows,
            vec![
                gpu(Some("Tesla K80"), "3.7"),
                gpu(Some("NVIDIA GeForce RTX 5090"), "12.0"),
            ],
            None,
            None,
        );
        let rec = dev(&t, &f);
        let chosen = rec
            .reasons
            .iter()
            .find(|m| m.key == "driver_package_chosen")
            .unwrap();
        assert!(chosen.params["gpu"].contains("5090"), "{chosen:?}");
        assert_eq!(
            rec.driver.install.as_ref().unwrap().package,
            crate::compat::DriverPackage::GeforceDesktop
        );
        assert!(
            rec.reasons
                .iter()
                .all(|m| m.key != "driver_package_primary")
        );
        // Two cards one toolkit covers: none left out.
        let f = facts(
            Os::Linux,
            vec![gpu(None, "12.0"), gpu(None, "6.1")],
            Some("580.95.05"),
            None,
        );
        let rec = dev(&t, &f);
        // The toolkit leaves none out (PyTorch's wheels may: none carries both).
        assert!(rec.left_out.iter().all(|l| l.part != Part::Toolkit));
        assert_eq!(
            rec.toolkit.unwrap().version.major_minor().to_string(),
            "12.9"
        );
    }

    /// #20 class 5: the exact lists, not the range.
    #[test]
    fn exact_architecture_lists() {
        let t = tables();
        let cc = |s: &str| s.parse::<ComputeCapability>().unwrap();
        let r = |v: &str| t.toolkit(&v.parse().unwrap()).unwrap().clone();
        assert!(
            !r("12.8.1").builds_for(cc("10.3")),
            "sm_103 is first in 12.9"
        );
        assert!(r("12.8.1").builds_for(cc("12.0")));
        assert!(r("12.9.1").builds_for(cc("10.3")) && r("12.9.1").builds_for(cc("12.1")));
        assert!(!r("12.8.1").builds_for(cc("12.1")));
        assert!(r("13.0.0").builds_for(cc("11.0")) && !r("13.0.0").builds_for(cc("10.1")));
        assert!(r("12.9.1").builds_for(cc("10.1")) && !r("12.9.1").builds_for(cc("11.0")));
        assert!(!r("12.0.0").builds_for(cc("3.7")) && r("11.8.0").builds_for(cc("3.7")));
        assert!(!r("11.0.3").builds_for(cc("8.6")) && r("11.1.1").builds_for(cc("8.6")));
        assert!(!r("13.0.0").builds_for(cc("7.0")));
    }
}
