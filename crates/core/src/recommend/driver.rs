//! Does the driver run a given CUDA? Two sources of truth, in order: NVML's own figure
//! (the highest CUDA the installed driver supports), else the tables' per-release driver
//! minimum for this OS, else the major line's minor-version-compatibility floor.

use super::{
    Download, DriverAction, DriverInstall, DriverPackage, Facts, GpuFact, Recommendation, Request,
};
use crate::compat::{Os, Tables, ToolkitRelease};
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

/// What the driver will be when the user has done what is asked of them (#20 class 4).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Outlook {
    /// The driver must be installed or updated whatever is picked: there is none, or a
    /// GPU's architecture needs a newer branch (Blackwell on a 56x driver).
    pub update_anyway: bool,
    /// The last driver branch every GPU still gets (the lowest `last_branch` among their
    /// architectures); None when they are all on current branches.
    pub last_branch: Option<u32>,
}

impl Outlook {
    pub fn of(tables: &Tables, facts: &Facts) -> Outlook {
        Outlook::of_gpus(tables, facts, &facts.gpus)
    }

    /// The outlook for some of the GPUs (those a recommendation keeps, #20 class 1): a GPU
    /// left out neither asks for an update nor holds the driver to its last branch.
    pub fn of_gpus<'g>(
        tables: &Tables,
        facts: &Facts,
        gpus: impl IntoIterator<Item = &'g GpuFact>,
    ) -> Outlook {
        let archs = gpus
            .into_iter()
            .filter_map(|g| tables.architecture_of(g.compute_capability));
        let mut update_anyway = facts.driver.is_none();
        let mut last_branch: Option<u32> = None;
        for a in archs {
            let min = a.driver_min(facts.driver_os());
            if let (Some(min), Some(d)) = (min, &facts.driver)
                && d < min
            {
                update_anyway = true;
            }
            if let Some(b) = a.last_branch {
                last_branch = Some(last_branch.map_or(b, |l| l.min(b)));
            }
        }
        Outlook {
            update_anyway,
            last_branch,
        }
    }

    /// The ceiling as `os` numbers its drivers. Linux numbers branch B's drivers `B.x.y`.
    /// Windows numbers them from `B.xx` up to the next branch (R470: 471.11 to 474.64;
    /// R580: 580.88 to 58x.xx); no stopped branch had a successor within ten (R470 was
    /// followed by R495, R580 by R590), so `(B+9).99` bounds it.
    pub fn ceiling_on(&self, os: Os) -> Option<Version> {
        match os {
            Os::Linux => self.last_branch.map(|b| Version::new(&[b, 999, 999])),
            Os::Windows => self.last_branch.map(|b| Version::new(&[b + 9, 99])),
        }
    }

    /// Whether a driver `minimum` can be installed on these GPUs under `os`.
    pub fn reachable_on(&self, os: Os, minimum: &Version) -> bool {
        self.ceiling_on(os).is_none_or(|c| *minimum <= c)
    }
}

/// The highest CUDA `MAJOR.MINOR` the driver runs: NVML's figure, else the newest release
/// whose confirmed minimum for this OS the driver meets.
pub(super) fn driver_cuda(tables: &Tables, facts: &Facts) -> Option<Version> {
    if let Some(c) = &facts.driver_cuda {
        return Some(c.major_minor());
    }
    let driver = facts.driver.as_ref()?;
    let by_release = tables
        .toolkits
        .releases
        .iter()
        .filter(|r| !r.preview && r.driver_confirmed)
        .filter(|r| r.driver_min(facts.driver_os()).is_some_and(|m| m <= driver))
        .map(|r| r.version.major_minor())
        .max();
    // A major line whose floor the driver meets runs at least its .0 (13.x publishes no
    // Windows minimum per release, only the floor, 580.88).
    let by_floor = tables
        .toolkits
        .lines
        .iter()
        .filter(|l| l.floor_confirmed && l.driver_floor(facts.driver_os()) <= driver)
        .map(|l| Version::new(&[l.major, 0]))
        .max();
    by_release.max(by_floor)
}

/// The driver floor of CUDA major `major` on this OS (minor-version compatibility).
fn floor(tables: &Tables, facts: &Facts, major: u32) -> Option<Version> {
    tables
        .toolkit_line(major)
        .map(|l| l.driver_floor(facts.driver_os()).clone())
}

/// Where a release's driver minimum comes from (#20 class 3: a driver an installer
/// carries is never one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum MinimumFrom {
    /// NVIDIA publishes it for this release (Table 3).
    Published,
    /// None is published for this release (rows "not in Table 3"): the published minimum
    /// of this earlier update of the same minor line. A later update never needs less, so
    /// it is the honest lower bound; UNCONFIRMED.
    Earlier(Version),
    /// Nothing is published for the minor line on this OS: the major line's floor
    /// (minor-version compatibility runs it from there).
    Floor,
}

/// A release's driver minimum for this OS.
#[derive(Debug, Clone)]
pub(super) struct ReleaseMinimum {
    pub version: Version,
    pub from: MinimumFrom,
    /// Published and confirmed by a first-hand source.
    pub confirmed: bool,
}

/// The driver minimum of toolkit release `r` on this OS: its published minimum, else the
/// newest published minimum of an earlier update of the same minor line, else the major
/// line's floor.
pub(super) fn release_minimum(tables: &Tables, os: Os, r: &ToolkitRelease) -> ReleaseMinimum {
    if let Some(m) = r.driver_min(os) {
        return ReleaseMinimum {
            version: m.clone(),
            from: MinimumFrom::Published,
            confirmed: r.driver_confirmed,
        };
    }
    let earlier = tables.toolkits.releases.iter().rfind(|o| {
        o.version < r.version
            && o.version.major_minor() == r.version.major_minor()
            && o.driver_min(os).is_some()
    });
    if let Some(o) = earlier {
        return ReleaseMinimum {
            version: o.driver_min(os).expect("filtered").clone(),
            from: MinimumFrom::Earlier(o.version.clone()),
            confirmed: false,
        };
    }
    let floor = tables
        .toolkit_line(r.version.major())
        .expect("validated: every release has a line")
        .driver_floor(os)
        .clone();
    ReleaseMinimum {
        version: floor,
        from: MinimumFrom::Floor,
        confirmed: false,
    }
}

/// How the driver runs a toolkit release.
#[derive(Debug, Clone)]
pub(super) struct ToolkitFit {
    pub fit: DriverFit,
    /// The driver that runs it fully.
    pub full: ReleaseMinimum,
    /// The driver to ask for: the major line's floor when minor-version compatibility
    /// runs it on the current driver, else `full` (never above a driver that runs it).
    pub need: Version,
}

/// How the driver runs toolkit release `r`. Fully: the driver meets the release's minimum
/// (and NVML, when it reports, does not say otherwise); a release with no minimum for
/// this minor line runs fully only when NVML says so. Else minor-version compatibility
/// from the major line's floor.
pub(super) fn toolkit_fit(tables: &Tables, facts: &Facts, r: &ToolkitRelease) -> ToolkitFit {
    let floor =
        floor(tables, facts, r.version.major()).expect("validated: every release has a line");
    let full = release_minimum(tables, facts.driver_os(), r);
    let Some(driver) = &facts.driver else {
        let need = full.version.clone();
        return ToolkitFit {
            fit: DriverFit::No,
            full,
            need,
        };
    };
    let nvml = facts
        .driver_cuda
        .as_ref()
        .map(|c| r.version.major_minor() <= c.major_minor());
    let runs_fully = match full.from {
        MinimumFrom::Floor => nvml == Some(true),
        _ => *driver >= full.version && nvml != Some(false),
    };
    let fit = if runs_fully {
        DriverFit::Yes
    } else if *driver >= floor {
        DriverFit::MinorCompat
    } else {
        DriverFit::No
    };
    let need = if fit == DriverFit::MinorCompat {
        floor
    } else {
        full.version.clone()
    };
    ToolkitFit { fit, full, need }
}

/// How the driver runs PyTorch wheels built with CUDA `cuda`. The wheels carry their own
/// runtime, so the major line's floor is what they need (compat dossier §6.3).
pub(super) fn wheel_fit(
    tables: &Tables,
    facts: &Facts,
    cuda: &Version,
) -> Option<(DriverFit, Version)> {
    let floor = super::wheel_driver_floor(tables, facts.driver_os(), cuda)?;
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
    let min = arch.driver_min(facts.driver_os());
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

/// A lab profile's driver floor (#36) as one more need: below it, the driver must be
/// updated. An exact version below the installed driver is no need (never a downgrade).
pub(super) fn floor_needs(facts: &Facts, floor: Option<&super::DriverFloor>, needs: &mut Needs) {
    let v = match floor {
        Some(super::DriverFloor::AtLeast(v)) => v,
        Some(super::DriverFloor::Exact(v)) if facts.driver.as_ref().is_none_or(|d| d <= v) => v,
        _ => return,
    };
    let fit = match &facts.driver {
        Some(d) if d >= v => DriverFit::Yes,
        _ => DriverFit::No,
    };
    needs.add(Need {
        minimum: v.clone(),
        fit,
    });
}

/// Fills in the driver action from what was picked.
pub(super) fn advise(
    tables: &Tables,
    facts: &Facts,
    request: &Request,
    needs: &Needs,
    rec: &mut Recommendation,
) {
    // One driver runs every card in the PC. It keeps them all working when it can: the
    // last branch of every GPU holds when the minimum fits under it (a GTX 1060 beside an
    // RTX 5090 gets an R580 driver, not 617). When it cannot (a K80, R470 at most, beside
    // an RTX 5090 that needs 570), only the GPUs some pick serves hold it, and the advice
    // says which card the update stops.
    let served = super::leave_out::served(rec);
    let all = Outlook::of(tables, facts);
    let keeps_all = needs
        .minimum
        .as_ref()
        .is_none_or(|m| all.reachable_on(facts.driver_os(), m));
    let covered: Vec<usize> = if keeps_all {
        (0..facts.gpus.len()).collect()
    } else {
        served.clone()
    };
    let outlook = Outlook::of_gpus(tables, facts, covered.iter().map(|i| &facts.gpus[*i]));
    let ceiling = outlook.ceiling_on(facts.driver_os());
    rec.driver.last_branch = outlook.last_branch;
    for (i, gpu) in facts.gpus.iter().enumerate() {
        if !covered.contains(&i) {
            continue;
        }
        if let Some(a) = tables.architecture_of(gpu.compute_capability)
            && let Some(b) = a.last_branch
        {
            rec.reasons.push(msg!(
                "driver_last_branch",
                gpu = gpu.label(),
                architecture = &a.name,
                branch = b
            ));
        }
    }
    let adv = &mut rec.driver;
    adv.minimum = needs.minimum.clone();
    let min = needs
        .minimum
        .clone()
        .map(|m| m.to_string())
        .unwrap_or_default();
    // Never a minimum above a driver said to need no change (#20 class 3): fleet scripts
    // read `driver.minimum`.
    let below_minimum = match (&facts.driver, &needs.minimum) {
        (Some(d), Some(m)) => d < m,
        _ => false,
    };
    match &facts.driver {
        None => {
            adv.action = DriverAction::Install;
            let key = super::wsl::driver_install_key(facts);
            rec.reasons.push(Message::new(key).with("minimum", &min));
        }
        Some(current) if needs.update_required || below_minimum => {
            adv.action = DriverAction::Update;
            rec.reasons.push(msg!(
                "driver_update_required",
                current = current,
                minimum = &min
            ));
        }
        Some(_) => {
            adv.action = DriverAction::None;
            // An offer above a GPU's last branch cannot be followed (#20 class 4), or
            // would stop that working card, left out or not: with nothing to change, no
            // offer drops a GPU.
            if let Some((m, what)) = &needs.unlock
                && all.reachable_on(facts.driver_os(), m)
            {
                adv.upgrade_minimum = Some(m.clone());
                adv.unlocks = Some(what.clone());
                rec.reasons
                    .push(msg!("driver_update_unlocks", minimum = m, unlocks = what));
            }
        }
    }
    if rec.driver.action != DriverAction::None && !keeps_all {
        stopped_gpus(tables, facts, &covered, &min, rec);
    }
    if rec.driver.action != DriverAction::None {
        rec.driver.branch = install_branch(tables, rec, ceiling.as_ref());
    }
    if facts.driver_os() == Os::Windows && rec.driver.action != DriverAction::None {
        // The package of the first GPU served: one no pick serves is not what the driver
        // is for.
        let kept = super::leave_out::only(facts, &served);
        let branch = rec
            .driver
            .branch
            .zip(rec.toolkit.as_ref().map(|t| t.version.major_minor()));
        let (install, reasons) = windows_install(
            tables,
            &kept,
            needs.minimum.as_ref(),
            ceiling.as_ref(),
            branch,
        );
        rec.driver.install = install;
        rec.reasons.extend(reasons);
        // `exact`: that version, when the tables list it for the package (#36).
        if let Some(super::DriverFloor::Exact(v)) = &request.driver_floor
            && rec.driver.install.as_ref().is_some_and(|i| i.version != *v)
            && let Some(exact) = reinstall(tables, &kept, v).filter(|i| i.version == *v)
        {
            rec.driver.install = Some(exact);
        }
    }
}

/// The driver branch a driver installed for the toolkit picked is at least (#32: CUDA
/// 13.4 → R615), when it is above the minimum that runs everything and the GPUs can have
/// it (their last branch allows it).
fn install_branch(tables: &Tables, rec: &Recommendation, ceiling: Option<&Version>) -> Option<u32> {
    let tk = rec.toolkit.as_ref()?;
    let b = tables.driver_branch(&tk.version)?.branch;
    let above = rec.driver.minimum.as_ref().is_none_or(|m| m.major() < b);
    let reachable = ceiling.is_none_or(|c| c.major() >= b);
    (above && reachable).then_some(b)
}

/// The GPUs outside `covered` whose last branch is below the driver asked for: the update
/// stops them, so nothing may tell the user to use them (their own wheel goes), and a
/// `driver_stops_gpu` reason says so.
fn stopped_gpus(
    tables: &Tables,
    facts: &Facts,
    covered: &[usize],
    minimum: &str,
    rec: &mut Recommendation,
) {
    for (i, gpu) in facts.gpus.iter().enumerate() {
        if covered.contains(&i) {
            continue;
        }
        let Some(a) = tables.architecture_of(gpu.compute_capability) else {
            continue;
        };
        let Some(b) = a.last_branch else { continue };
        rec.reasons.retain(|m| {
            !(m.key == "torch_other_gpu_wheel" && m.param("index") == Some(&i.to_string()))
        });
        rec.reasons.push(msg!(
            "driver_stops_gpu",
            gpu = gpu.label(),
            architecture = &a.name,
            branch = b,
            minimum = minimum
        ));
    }
}

/// The Windows driver the plan installs: the package of the primary (first) GPU, and the
/// newest known version of it at or above `minimum` (the newest known when there is no
/// minimum) and at or below `ceiling` (the GPUs' last branch, #20 class 4: a newer one
/// would not install on them). With `branch` (the toolkit's, and its CUDA), at least of
/// that branch; when the package line knows none, the newest known at or above `minimum`,
/// with a reason saying so (#32). None, with a reason, when no known version fits.
pub(super) fn windows_install(
    tables: &Tables,
    facts: &Facts,
    minimum: Option<&Version>,
    ceiling: Option<&Version>,
    branch: Option<(u32, Version)>,
) -> (Option<DriverInstall>, Vec<Message>) {
    let mut reasons = Vec::new();
    let package_of = |g: &GpuFact| {
        g.name
            .as_deref()
            .map_or(tables.drivers.choose.default, |n| {
                tables.driver_package_for(n)
            })
    };
    let Some(primary) = facts.gpus.first() else {
        return (None, reasons);
    };
    let package = package_of(primary);
    if let Some(other) = facts.gpus.iter().find(|g| package_of(g) != package) {
        reasons.push(msg!(
            "driver_package_primary",
            gpu = primary.label(),
            package = label(tables, package),
            other = other.label()
        ));
    }
    let Some(row) = tables.driver_package(package) else {
        return (None, reasons);
    };
    let newest_from = |m: Option<&Version>| {
        row.versions
            .iter()
            .rev()
            .filter(|v| ceiling.is_none_or(|c| v.version <= *c))
            .find(|v| m.is_none_or(|m| v.version >= *m))
    };
    let wanted = branch.as_ref().map(|(b, _)| {
        let b = Version::new(&[*b, 0]);
        minimum.map_or(b.clone(), |m| m.clone().max(b))
    });
    let mut pick = newest_from(wanted.as_ref().or(minimum));
    if pick.is_none()
        && let Some((b, cuda)) = &branch
    {
        pick = newest_from(minimum);
        if let Some(p) = pick {
            reasons.push(msg!(
                "driver_branch_not_known",
                package = &row.label,
                branch = b,
                cuda = cuda,
                version = &p.version
            ));
        }
    }
    let Some(pick) = pick else {
        reasons.push(msg!(
            "driver_package_none_known",
            package = &row.label,
            minimum = minimum.map(ToString::to_string).unwrap_or_default()
        ));
        return (None, reasons);
    };
    let url = row.url_for(&pick.version);
    let file = crate::download::file_name_of(&url).to_string();
    reasons.push(msg!(
        "driver_package_chosen",
        package = &row.label,
        version = &pick.version,
        gpu = primary.label()
    ));
    let install = DriverInstall {
        version: pick.version.clone(),
        package,
        download: Download {
            file,
            url,
            size: pick.size,
            // NVIDIA publishes none: the Authenticode signature is checked instead.
            sha256: None,
            md5: None,
        },
        confirmed: row.confirmed && tables.drivers.hosts.confirmed,
        mirrors: tables.drivers.hosts.mirrors.clone(),
        silent_args: tables.drivers.silent.args.clone(),
    };
    (Some(install), reasons)
}

/// The Windows driver that puts back `version` (#33: one Windows Update replaced): the
/// primary GPU's package at exactly that version when the tables list it, else the
/// newest known at or above it; None when no package or version fits.
pub fn reinstall(tables: &Tables, facts: &Facts, version: &Version) -> Option<DriverInstall> {
    let (install, _) = windows_install(tables, facts, Some(version), None, None);
    let mut install = install?;
    let package = install.package;
    if let Some(row) = tables.driver_package(package)
        && row.versions.iter().any(|v| v.version == *version)
        && install.version != *version
    {
        let url = row.url_for(version);
        install.download = Download {
            file: crate::download::file_name_of(&url).to_string(),
            url,
            size: row
                .versions
                .iter()
                .find(|v| v.version == *version)
                .and_then(|v| v.size),
            sha256: None,
            md5: None,
        };
        install.version = version.clone();
    }
    Some(install)
}

fn label(tables: &Tables, p: DriverPackage) -> String {
    tables
        .driver_package(p)
        .map_or_else(|| p.as_str().to_string(), |r| r.label.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::Os;
    use crate::version::ComputeCapability;

    fn tables() -> Tables {
        Tables::embedded().unwrap()
    }

    fn gpu(name: &str) -> GpuFact {
        GpuFact {
            name: Some(name.into()),
            compute_capability: ComputeCapability::new(8, 6),
        }
    }

    fn facts(os: Os, gpus: Vec<GpuFact>) -> Facts {
        Facts {
            os,
            gpus,
            driver: None,
            driver_cuda: None,
            python: Some("3.12".parse().unwrap()),
            installed_toolkits: vec![],
            unidentified_gpus: vec![],
            notes: vec![],
            host_kind: Default::default(),
            free_threaded: false,
        }
    }

    #[test]
    fn the_gpu_name_decides_the_package() {
        let t = tables();
        use DriverPackage::*;
        for (name, want) in [
            ("NVIDIA GeForce RTX 3060", GeforceDesktop),
            ("NVIDIA GeForce RTX 3060 Laptop GPU", GeforceNotebook),
            // #20: notebook names without "Laptop GPU".
            ("NVIDIA GeForce MX450", GeforceNotebook),
            ("NVIDIA GeForce MX550", GeforceNotebook),
            ("NVIDIA GeForce 940MX", GeforceNotebook),
            ("NVIDIA GeForce GTX 980M", GeforceNotebook),
            ("NVIDIA GeForce GTX 1660 Ti Mobile", GeforceNotebook),
            ("NVIDIA GeForce RTX 2080 with Max-Q Design", GeforceNotebook),
            ("NVIDIA GeForce GTX 1080 Ti", GeforceDesktop),
            ("NVIDIA GeForce RTX 5090", GeforceDesktop),
            ("Quadro M2000M", Rtx),
            ("NVIDIA GeForce RTX 4090", GeforceDesktop),
            ("NVIDIA TITAN RTX", GeforceDesktop),
            // Workstation notebooks use the RTX package, not the GeForce notebook one.
            ("NVIDIA RTX A2000 Laptop GPU", Rtx),
            ("NVIDIA RTX A1000", Rtx),
            ("Quadro RTX 5000", Rtx),
            ("NVIDIA RTX 6000 Ada Generation", Rtx),
            ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", Rtx),
            ("NVIDIA T1000 8GB", Rtx),
            ("Tesla T4", DataCenter),
            ("NVIDIA A100-SXM4-40GB", DataCenter),
            ("NVIDIA H100 PCIe", DataCenter),
            ("NVIDIA L4", DataCenter),
            ("Tesla V100-SXM2-16GB", DataCenter),
            // No rule: gpus.toml's segment says data centre.
            ("NVIDIA B200", DataCenter),
        ] {
            assert_eq!(t.driver_package_for(name), want, "{name}");
        }
    }

    #[test]
    fn the_newest_known_version_at_or_above_the_minimum_is_installed() {
        let t = tables();
        let f = facts(Os::Windows, vec![gpu("NVIDIA GeForce RTX 3060 Laptop GPU")]);
        let row = t.driver_package(DriverPackage::GeforceNotebook).unwrap();
        let newest = &row.versions.last().unwrap().version;
        let (got, reasons) = windows_install(&t, &f, Some(&"527.41".parse().unwrap()), None, None);
        let got = got.unwrap();
        assert_eq!(got.package, DriverPackage::GeforceNotebook);
        assert_eq!(&got.version, newest);
        assert_eq!(got.download.url, row.url_for(newest));
        assert!(
            got.download
                .file
                .ends_with("-notebook-win10-win11-64bit-international-dch-whql.exe")
        );
        assert!(got.download.file.starts_with(&newest.to_string()));
        assert!(got.download.sha256.is_none() && got.download.md5.is_none());
        assert!(!got.confirmed, "every driver fact is third-party");
        assert_eq!(got.silent_args, ["-s", "-noreboot"]);
        assert!(got.mirrors.iter().all(|m| m.starts_with("https://")));
        assert!(reasons.iter().any(|r| r.key == "driver_package_chosen"));
        // No minimum: the newest known.
        let (got, _) = windows_install(&t, &f, None, None, None);
        assert_eq!(&got.unwrap().version, newest);
        // A recorded size is carried.
        let desktop = t.driver_package(DriverPackage::GeforceDesktop).unwrap();
        let sized = desktop.versions.iter().find(|v| v.size.is_some()).unwrap();
        let f = facts(Os::Windows, vec![gpu("NVIDIA GeForce RTX 3060")]);
        let only = Tables {
            drivers: {
                let mut d = t.drivers.clone();
                d.packages
                    .iter_mut()
                    .for_each(|p| p.versions.retain(|v| v.version <= sized.version));
                d
            },
            ..t.clone()
        };
        let (got, _) = windows_install(&only, &f, Some(&sized.version), None, None);
        assert_eq!(got.unwrap().download.size, sized.size);
    }

    #[test]
    fn no_known_version_new_enough_means_nvidia_com() {
        let t = tables();
        let f = facts(Os::Windows, vec![gpu("Tesla T4")]);
        let (got, reasons) = windows_install(&t, &f, Some(&"999.99".parse().unwrap()), None, None);
        assert!(got.is_none());
        let r = reasons
            .iter()
            .find(|r| r.key == "driver_package_none_known")
            .unwrap();
        assert_eq!(r.params["minimum"], "999.99");
        let text = crate::i18n::render(r, crate::i18n::Lang::En);
        assert!(text.contains("nvidia.com/drivers"), "{text}");
    }

    #[test]
    fn two_kinds_of_card_follow_the_primary_and_say_so() {
        let t = tables();
        let f = facts(
            Os::Windows,
            vec![gpu("NVIDIA GeForce RTX 3060 Laptop GPU"), gpu("Tesla T4")],
        );
        let (got, reasons) = windows_install(&t, &f, None, None, None);
        assert_eq!(got.unwrap().package, DriverPackage::GeforceNotebook);
        let r = reasons
            .iter()
            .find(|r| r.key == "driver_package_primary")
            .unwrap();
        assert!(r.params["other"].contains("Tesla T4"), "{r:?}");
        // Two cards of one package: nothing to say.
        let f = facts(
            Os::Windows,
            vec![
                gpu("NVIDIA GeForce RTX 3060"),
                gpu("NVIDIA GeForce RTX 4090"),
            ],
        );
        let (_, reasons) = windows_install(&t, &f, None, None, None);
        assert!(reasons.iter().all(|r| r.key != "driver_package_primary"));
    }

    /// Through the recommender: Windows without a driver gets the install; Linux never
    /// does; a driver that is new enough gets none.
    #[test]
    fn the_recommendation_fills_the_install_on_windows_only() {
        let t = tables();
        let req = Request {
            goal: super::super::Goal::Pytorch,
            cuda: None,
            method: Default::default(),
            driver: Default::default(),
            distro: None,
            ..Default::default()
        };
        let rec = super::super::recommend(
            &t,
            &facts(Os::Windows, vec![gpu("NVIDIA GeForce RTX 3060")]),
            &req,
        );
        assert_eq!(rec.driver.action, DriverAction::Install);
        let i = rec.driver.install.as_ref().expect("a driver to install");
        assert_eq!(i.package, DriverPackage::GeforceDesktop);
        assert!(rec.driver.minimum.as_ref().is_none_or(|m| i.version >= *m));
        let rec = super::super::recommend(
            &t,
            &facts(Os::Linux, vec![gpu("NVIDIA GeForce RTX 3060")]),
            &req,
        );
        assert_eq!(rec.driver.action, DriverAction::Install);
        assert!(rec.driver.install.is_none());
        let mut f = facts(Os::Windows, vec![gpu("NVIDIA GeForce RTX 3060")]);
        f.driver = Some("999.99".parse().unwrap());
        let rec = super::super::recommend(&t, &f, &req);
        assert_eq!(rec.driver.action, DriverAction::None);
        assert!(rec.driver.install.is_none());
    }

    /// A lab profile's `[driver] min`/`exact` (#36 review 3): the floor is a need, so a
    /// working driver below it is updated (`exact`: to that version), never taken down.
    #[test]
    fn a_profiles_driver_floor_is_met_by_the_install() {
        use super::super::DriverFloor;
        let t = tables();
        let rec = |driver: &str, floor: Option<DriverFloor>| {
            let mut f = facts(Os::Windows, vec![gpu("NVIDIA GeForce RTX 3060")]);
            f.driver = Some(driver.parse().unwrap());
            let req = Request {
                goal: super::super::Goal::Pytorch,
                cuda: None,
                method: Default::default(),
                driver: super::super::DriverPref::Keep,
                distro: None,
                torch_version: None,
                torch_variant: None,
                driver_floor: floor,
            };
            super::super::recommend(&t, &f, &req)
        };
        let v = |s: &str| s.parse::<Version>().unwrap();
        // Today's driver runs the pick: nothing to do without a floor.
        let plain = rec("581.15", None);
        assert_eq!(
            plain.driver.action,
            DriverAction::None,
            "{:?}",
            plain.driver
        );
        let at_least = rec("581.15", Some(DriverFloor::AtLeast(v("591.86"))));
        assert_eq!(at_least.driver.action, DriverAction::Update);
        assert_eq!(at_least.driver.minimum, Some(v("591.86")));
        let i = at_least
            .driver
            .install
            .as_ref()
            .expect("a driver to install");
        assert!(i.version >= v("591.86"), "{:?}", i.version);
        // Exact: that version, not the newest above it.
        let exact = rec("576.40", Some(DriverFloor::Exact(v("581.15"))));
        assert_eq!(exact.driver.action, DriverAction::Update);
        assert_eq!(exact.driver.install.as_ref().unwrap().version, v("581.15"));
        // Exact below the installed driver: no step takes it down.
        let lower = rec("591.86", Some(DriverFloor::Exact(v("581.15"))));
        assert_eq!(lower.driver.action, DriverAction::None);
        assert!(lower.driver.install.is_none());
    }
}
