//! Choosing a PyTorch release and CUDA wheel variant.

use super::driver::{self, DriverFit, Need, Needs};
use super::{Facts, TorchPick};
use crate::compat::{IndexStyle, Os, Tables, TorchRelease, TorchVariant};
use crate::message::Message;
use crate::msg;
use crate::version::Version;

/// A (release, variant) pair that runs on every GPU and this Python.
struct Candidate<'t> {
    release: &'t TorchRelease,
    variant: &'t TorchVariant,
    fit: DriverFit,
    minimum: Version,
    /// The SM list is first-hand for this release (not inferred from the toolkit range).
    arch_known: bool,
    confirmed: bool,
    /// What the live wheel index says: Some(false) means no wheel for this Python and
    /// OS is listed (the candidate is dropped); None: the index was not read.
    in_index: Option<bool>,
}

impl Candidate<'_> {
    /// Preference: runs on today's driver, then confirmed facts, then newest torch, then
    /// newest CUDA.
    fn rank(&self) -> (bool, bool, Version, Version) {
        (
            self.fit == DriverFit::Yes,
            self.confirmed,
            self.release.version.clone(),
            self.variant.cuda.clone(),
        )
    }
}

/// Picks torch; `major` restricts the wheels' CUDA major (to match a toolkit).
/// Returns None (with blockers) when nothing fits.
pub(super) fn pick(
    tables: &Tables,
    facts: &Facts,
    major: Option<u32>,
    needs: &mut Needs,
    reasons: &mut Vec<Message>,
    blockers: &mut Vec<Message>,
) -> Option<(TorchPick, Need)> {
    let releases = &tables.pytorch.releases;
    let for_python: Vec<&TorchRelease> = releases
        .iter()
        .filter(|r| {
            facts
                .python
                .as_ref()
                .is_none_or(|py| r.python_min <= *py && *py <= r.python_max)
        })
        .collect();
    if for_python.is_empty() {
        let py = facts
            .python
            .clone()
            .map(|p| p.to_string())
            .unwrap_or_default();
        let lo = releases
            .iter()
            .map(|r| &r.python_min)
            .min()
            .map(ToString::to_string)
            .unwrap_or_default();
        let hi = releases
            .iter()
            .map(|r| &r.python_max)
            .max()
            .map(ToString::to_string)
            .unwrap_or_default();
        blockers.push(msg!(
            "no_torch_for_python",
            python = py,
            python_min = lo,
            python_max = hi
        ));
        return None;
    }

    let mut candidates = Vec::new();
    for release in &for_python {
        for name in &release.variants {
            let Some(variant) = tables.variant(name) else {
                continue;
            };
            if major.is_some_and(|m| variant.cuda.major() != m) {
                continue;
            }
            let Some(arch_known) = covers_gpus(tables, facts, release, variant) else {
                continue;
            };
            let Some((fit, minimum)) = driver::wheel_fit(tables, facts, &variant.cuda) else {
                continue;
            };
            candidates.push(Candidate {
                release,
                variant,
                fit,
                minimum,
                arch_known,
                confirmed: release.confirmed && release.variants_confirmed && arch_known,
                in_index: in_index(tables, facts, release, variant),
            });
        }
    }
    let (candidates, missing): (Vec<Candidate>, Vec<Candidate>) = candidates
        .into_iter()
        .partition(|c| c.in_index != Some(false));
    let Some(best) = candidates.iter().max_by_key(|c| c.rank()) else {
        if missing.is_empty() {
            let gpus: Vec<String> = facts.gpus.iter().map(|g| g.label()).collect();
            blockers.push(msg!("no_torch_for_gpus", gpus = gpus.join(", ")));
        } else {
            blockers.push(msg!(
                "no_torch_wheel_in_index",
                python = python_label(facts),
                platform = platform_label(facts.os)
            ));
        }
        return None;
    };
    // The wheels the index lacks that would otherwise have been chosen.
    let mut dropped: Vec<&Candidate> = missing.iter().filter(|c| c.rank() > best.rank()).collect();
    dropped.sort_by_key(|c| std::cmp::Reverse(c.rank()));
    for c in dropped.iter().take(2) {
        reasons.push(msg!(
            "torch_no_wheel_in_index",
            torch = &c.release.version,
            variant = &c.variant.name,
            python = python_label(facts),
            platform = platform_label(facts.os)
        ));
    }

    // What a newer driver would add: the best candidate the current driver cannot run.
    if best.fit == DriverFit::Yes
        && let Some(better) = candidates
            .iter()
            .filter(|c| c.fit == DriverFit::No && c.confirmed)
            .filter(|c| {
                (&c.release.version, &c.variant.cuda) > (&best.release.version, &best.variant.cuda)
            })
            .max_by_key(|c| c.rank())
    {
        needs.offer(
            better.minimum.clone(),
            format!("torch {} ({})", latest(better.release), better.variant.name),
        );
    }

    explain(tables, facts, best, reasons);
    let version = latest(best.release).clone();
    let pick = TorchPick {
        command: command(best.release, best.variant),
        index_url: best.variant.index_url(),
        variant: best.variant.name.clone(),
        cuda: best.variant.cuda.clone(),
        python_min: best.release.python_min.clone(),
        python_max: best.release.python_max.clone(),
        confirmed: best.confirmed,
        version,
    };
    Some((
        pick,
        Need {
            minimum: best.minimum.clone(),
            fit: best.fit,
        },
    ))
}

/// Whether the wheel index (when it was read for this variant) lists a wheel of
/// `release` for this OS and Python. Free-threaded builds do not count: a plain Python
/// cannot install them.
fn in_index(
    tables: &Tables,
    facts: &Facts,
    release: &TorchRelease,
    variant: &TorchVariant,
) -> Option<bool> {
    let wheels = tables.live.wheels.get(&variant.name)?;
    Some(wheels.iter().any(|w| {
        w.version.major_minor() == release.version
            && w.for_os(facts.os)
            && !w.freethreaded
            && facts
                .python
                .as_ref()
                .is_none_or(|py| w.python == py.major_minor())
    }))
}

fn python_label(facts: &Facts) -> String {
    facts
        .python
        .as_ref()
        .map_or("?".to_string(), |p| p.major_minor().to_string())
}

fn platform_label(os: Os) -> &'static str {
    match os {
        Os::Windows => "Windows (win_amd64)",
        Os::Linux => "Linux (x86_64)",
    }
}

/// Whether `variant` of `release` runs on every GPU. Some(true): by the variant's own SM
/// list; Some(false): inferred from the toolkit's SM range (no first-hand list); None: no.
fn covers_gpus(
    tables: &Tables,
    facts: &Facts,
    release: &TorchRelease,
    variant: &TorchVariant,
) -> Option<bool> {
    if let Some(arch) = variant.arch_for(&release.version) {
        let all = facts
            .gpus
            .iter()
            .all(|g| arch.runs_on(g.compute_capability));
        return all.then_some(arch.confirmed);
    }
    // No first-hand list: the toolkit's range, but never below the lowest SM any known
    // PyTorch list goes to (PyTorch builds fewer architectures than nvcc can).
    let toolkit = tables
        .toolkits
        .releases
        .iter()
        .rfind(|r| r.version.major_minor() == variant.cuda && !r.preview)?;
    let lowest_known = tables
        .pytorch
        .variants
        .iter()
        .flat_map(|v| &v.arch)
        .filter_map(|a| a.sm.first())
        .min()?;
    let all = facts
        .gpus
        .iter()
        .all(|g| toolkit.builds_for(g.compute_capability) && *lowest_known <= g.compute_capability);
    all.then_some(false)
}

fn latest(release: &TorchRelease) -> &Version {
    release
        .patches
        .last()
        .expect("validated: patches is not empty")
}

/// The pip command, pinned so that a later `pip install -U` cannot swap in the CPU build.
pub(super) fn command(release: &TorchRelease, variant: &TorchVariant) -> String {
    let torch = latest(release);
    let index = variant.index_url();
    let tv = release
        .torchvision
        .as_ref()
        .filter(|_| release.torchvision_confirmed);
    match release.index_style {
        IndexStyle::IndexUrl => {
            let tv = tv.map_or("torchvision".to_string(), |v| format!("torchvision=={v}"));
            format!("pip install torch=={torch} {tv} --index-url {index}")
        }
        IndexStyle::ExtraIndexUrlLocal => {
            let local = &variant.name;
            let tv = tv.map_or(String::new(), |v| format!(" torchvision=={v}+{local}"));
            format!("pip install torch=={torch}+{local}{tv} --extra-index-url {index}")
        }
    }
}

fn explain(tables: &Tables, facts: &Facts, best: &Candidate, reasons: &mut Vec<Message>) {
    let torch = latest(best.release);
    let v = best.variant;
    match &facts.python {
        Some(py) => reasons.push(msg!(
            "torch_for_python",
            torch = torch,
            python = py,
            python_min = &best.release.python_min,
            python_max = &best.release.python_max
        )),
        None => reasons.push(msg!(
            "python_unknown",
            torch = torch,
            python_min = &best.release.python_min,
            python_max = &best.release.python_max
        )),
    }
    // A newer torch that this Python cannot run.
    if let (Some(py), Some(newest)) = (
        &facts.python,
        tables.pytorch.releases.iter().rfind(|r| r.confirmed),
    ) && newest.version > best.release.version
        && *py < newest.python_min
    {
        reasons.push(msg!(
            "newer_torch_needs_python",
            torch = latest(newest),
            python_min = &newest.python_min
        ));
    }
    reasons.push(msg!(
        "torch_variant",
        variant = &v.name,
        cuda = &v.cuda,
        minimum = &best.minimum
    ));
    let gpus: Vec<String> = facts.gpus.iter().map(|g| g.label()).collect();
    match v.arch_for(&best.release.version) {
        Some(arch) => {
            let sms: Vec<String> = arch.sm.iter().map(|s| s.sm()).collect();
            reasons.push(msg!(
                "torch_arch_covers",
                variant = &v.name,
                sms = sms.join(" "),
                gpus = gpus.join(", ")
            ));
        }
        None => reasons.push(msg!(
            "torch_arch_inferred",
            variant = &v.name,
            cuda = &v.cuda,
            gpus = gpus.join(", ")
        )),
    }
    if !best.confirmed {
        reasons.push(msg!("torch_unconfirmed", torch = torch, variant = &v.name));
    }
    if !best.arch_known {
        reasons.push(msg!("torch_verify_after_install"));
    }
    if best.in_index == Some(true) {
        reasons.push(msg!(
            "torch_wheel_in_index",
            torch = &best.release.version,
            variant = &v.name,
            python = python_label(facts),
            platform = platform_label(facts.os)
        ));
    }
    reasons.push(msg!("torch_wheel_bundles_runtime"));
    if facts.os == Os::Windows && best.release.windows_pypi_default.as_deref() == Some("cpu") {
        reasons.push(msg!("windows_pypi_is_cpu"));
    }
}
