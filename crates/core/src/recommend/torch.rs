//! Choosing a PyTorch release and CUDA wheel variant.
//!
//! A wheel must carry code for every GPU (#20 class 1): by the variant's own SM list for
//! that release, else by what any known list of the same variant (or CUDA line) says,
//! never by the toolkit's range alone. When no wheel covers them all, the pick is for the
//! GPUs it can keep (the newest GPU first, then as many as possible) and says which GPU
//! it leaves out. When the driver must be updated anyway (no driver, or a GPU needs a
//! newer branch), the candidates are ranked as they run after that update (#20 class 4).

use super::driver::{self, DriverFit, Need, Needs, Outlook};
use super::{Facts, TorchPick};
use crate::compat::{IndexStyle, Os, Tables, TorchRelease, TorchVariant, VariantArch};
use crate::message::Message;
use crate::msg;
use crate::version::{PythonVersion, Version};

/// A (release, variant) pair that runs on at least one GPU and this Python.
struct Candidate<'t> {
    release: &'t TorchRelease,
    variant: &'t TorchVariant,
    /// The patch to install: the newest, or for a free-threaded Python the newest with
    /// wheels for its ABI (`cp313t`: 2.12.0, not 2.12.1).
    patch: &'t Version,
    fit: DriverFit,
    minimum: Version,
    /// Per GPU (in `Facts::gpus` order): whether the wheel carries code for it.
    covers: Vec<bool>,
    /// The SM list is first-hand for this release (not inferred).
    arch_known: bool,
    confirmed: bool,
    /// What the live wheel index says: Some(false) means no wheel for this Python and
    /// OS is listed (the candidate is dropped); None: the index was not read.
    in_index: Option<bool>,
    /// The driver must be updated anyway: today's driver does not rank.
    update_anyway: bool,
}

impl Candidate<'_> {
    /// Preference: runs on today's driver (unless the driver is to be updated anyway),
    /// then confirmed facts, then newest torch, then newest CUDA.
    fn rank(&self) -> (bool, bool, Version, Version) {
        (
            self.update_anyway || self.fit == DriverFit::Yes,
            self.confirmed,
            self.release.version.clone(),
            self.variant.cuda.clone(),
        )
    }

    /// How good the set of GPUs it covers is: all of them; else the one with the highest
    /// compute capability among them; then as many as possible.
    fn reach(&self, top: usize) -> (bool, bool, usize) {
        let n = self.covers.iter().filter(|c| **c).count();
        (n == self.covers.len(), self.covers[top], n)
    }
}

/// What the torch pick gives the recommendation.
pub(super) struct Picked {
    pub pick: TorchPick,
    /// Its driver requirement, as today's driver runs it.
    pub need: Need,
    /// The GPUs the wheel carries no code for.
    pub left_out: Vec<super::LeftOut>,
}

/// The part's name in `gpu_left_out` (a product name: the same in every language).
pub(super) const PART_NAME: &str = "PyTorch";

/// Which Python the wheels are for: `MAJOR.MINOR` (any when None) and whether it is a
/// free-threaded build, whose wheels are a set apart (`cp313t`).
#[derive(Clone, Copy)]
struct Py<'a> {
    version: Option<&'a Version>,
    free_threaded: bool,
}

impl<'a> Py<'a> {
    fn of(facts: &'a Facts) -> Py<'a> {
        Py {
            version: facts.python.as_ref(),
            free_threaded: facts.free_threaded && facts.python.is_some(),
        }
    }

    fn plain(version: Option<&'a Version>) -> Py<'a> {
        Py {
            version,
            free_threaded: false,
        }
    }

    /// The patch of `release` this Python installs among those `want` names (None: none
    /// has wheels for it).
    fn patch<'t>(
        &self,
        tables: &Tables,
        release: &'t TorchRelease,
        want: Want,
    ) -> Option<&'t Version> {
        if let Some(py) = self.version
            && !(release.python_min <= *py && *py <= release.python_max)
        {
            return None;
        }
        match self.version {
            Some(py) if self.free_threaded => release
                .patches
                .iter()
                .rfind(|p| want.patch(p) && tables.free_threaded_has(py, p)),
            _ if want.whole_line(release) => Some(latest(release)),
            _ => release.patches.iter().rfind(|p| want.patch(p)),
        }
    }
}

/// The PyTorch the request names (`Request::torch_version`, `torch_variant`): only those
/// releases and variants are candidates. Nothing named: all of them.
#[derive(Clone, Copy, Default)]
pub(super) struct Want<'a> {
    version: Option<&'a Version>,
    variant: Option<&'a str>,
}

impl<'a> Want<'a> {
    pub(super) fn of(request: &'a super::Request) -> Want<'a> {
        Want {
            version: request.torch_version.as_ref(),
            variant: request.torch_variant.as_deref(),
        }
    }

    fn any(&self) -> bool {
        self.version.is_some() || self.variant.is_some()
    }

    /// The whole line of `release` is named (`2`, `2.5`), not one patch of it (`2.5.1`).
    fn whole_line(&self, release: &TorchRelease) -> bool {
        self.version
            .is_none_or(|v| release.version.parts().starts_with(v.parts()))
    }

    fn patch(&self, patch: &Version) -> bool {
        self.version
            .is_none_or(|v| patch.parts().starts_with(v.parts()))
    }

    fn variant(&self, name: &str) -> bool {
        self.variant.is_none_or(|v| v == name)
    }

    /// As the request names it: `2.5 cu124`, `2.5`, `cu124`.
    fn label(&self) -> String {
        let parts: Vec<String> = [
            self.version.map(ToString::to_string),
            self.variant.map(str::to_string),
        ]
        .into_iter()
        .flatten()
        .collect();
        parts.join(" ")
    }
}

/// Every (release, variant) pair for `python` (all releases when its version is None)
/// whose CUDA major is `major` (when given), that runs on at least one GPU and whose
/// driver the GPUs can get.
fn candidates<'t>(
    tables: &'t Tables,
    facts: &Facts,
    python: Py,
    major: Option<u32>,
    want: Want,
) -> Vec<Candidate<'t>> {
    let mut out = Vec::new();
    let releases = tables
        .pytorch
        .releases
        .iter()
        .filter_map(|r| Some((r, python.patch(tables, r, want)?)));
    for (release, patch) in releases {
        for name in release.variants.iter().filter(|n| want.variant(n)) {
            let Some(variant) = tables.variant(name) else {
                continue;
            };
            if major.is_some_and(|m| variant.cuda.major() != m) {
                continue;
            }
            let Some((covers, arch_known)) = coverage(tables, facts, release, variant) else {
                continue;
            };
            if !covers.iter().any(|c| *c) {
                continue;
            }
            let Some((fit, minimum)) = driver::wheel_fit(tables, facts, &variant.cuda) else {
                continue;
            };
            // A driver the GPUs it serves cannot get (Kepler stops at R470: no CUDA 12
            // wheel for it). A GPU the wheel leaves out holds the driver to no branch.
            let served = Outlook::of_gpus(
                tables,
                facts,
                facts
                    .gpus
                    .iter()
                    .zip(&covers)
                    .filter(|(_, c)| **c)
                    .map(|(g, _)| g),
            );
            if !served.reachable_on(facts.driver_os(), &minimum) {
                continue;
            }
            out.push(Candidate {
                release,
                variant,
                patch,
                fit,
                minimum,
                covers,
                arch_known,
                confirmed: release.confirmed && release.variants_confirmed && arch_known,
                in_index: in_index(tables, facts, python, release, variant),
                update_anyway: served.update_anyway,
            });
        }
    }
    out
}

/// The index of the GPU with the highest compute capability (the first such).
fn top_gpu(facts: &Facts) -> usize {
    let mut top = 0;
    for (i, g) in facts.gpus.iter().enumerate() {
        if g.compute_capability > facts.gpus[top].compute_capability {
            top = i;
        }
    }
    top
}

/// The Python versions (`MAJOR.MINOR`) any release in the tables supports, ascending.
fn known_pythons(tables: &Tables) -> Vec<Version> {
    let releases = &tables.pytorch.releases;
    let (Some(lo), Some(hi)) = (
        releases.iter().map(|r| r.python_min.clone()).min(),
        releases.iter().map(|r| r.python_max.clone()).max(),
    ) else {
        return Vec::new();
    };
    if lo.major() != hi.major() {
        return Vec::new();
    }
    (lo.minor()..=hi.minor())
        .map(|m| Version::new(&[lo.major(), m]))
        .collect()
}

/// The best GPU reach a Python gets (None: no wheel for it at all).
fn best_reach(
    tables: &Tables,
    facts: &Facts,
    python: Py,
    major: Option<u32>,
    asked: Want,
) -> Option<(bool, bool, usize)> {
    let top = top_gpu(facts);
    candidates(tables, facts, python, major, asked)
        .iter()
        .filter(|c| c.in_index != Some(false))
        .map(|c| c.reach(top))
        .max()
}

/// `3.10–3.14`, or `3.9, 3.11–3.12` when there are gaps.
fn python_ranges(pythons: &[Version]) -> String {
    let mut runs: Vec<(Version, Version)> = Vec::new();
    for p in pythons {
        match runs.last_mut() {
            Some((_, hi)) if hi.major() == p.major() && hi.minor() + 1 == p.minor() => {
                *hi = p.clone();
            }
            _ => runs.push((p.clone(), p.clone())),
        }
    }
    runs.iter()
        .map(|(lo, hi)| {
            if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}–{hi}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The Python versions whose best reach is `want` (those a wheel would fit as well as
/// any Python can).
fn pythons_reaching(
    tables: &Tables,
    facts: &Facts,
    major: Option<u32>,
    asked: Want,
    want: (bool, bool, usize),
) -> Vec<Version> {
    known_pythons(tables)
        .into_iter()
        .filter(|p| best_reach(tables, facts, Py::plain(Some(p)), major, asked) == Some(want))
        .collect()
}

/// Picks torch; `major` restricts the wheels' CUDA major (to match a toolkit), `asked`
/// the releases and variants (the request's). Returns None (with blockers) when nothing
/// fits.
pub(super) fn pick(
    tables: &Tables,
    facts: &Facts,
    major: Option<u32>,
    asked: Want,
    needs: &mut Needs,
    reasons: &mut Vec<Message>,
    blockers: &mut Vec<Message>,
) -> Option<Picked> {
    let outlook = Outlook::of(tables, facts);
    let python = Py::of(facts);
    let gpus: Vec<String> = facts.gpus.iter().map(|g| g.label()).collect();
    let top = top_gpu(facts);
    if let Some(py) = python.version
        && python.free_threaded
        && !tables
            .pytorch
            .releases
            .iter()
            .any(|r| python.patch(tables, r, Want::default()).is_some())
    {
        // No release has wheels for this free-threaded ABI: whatever the GPUs.
        blockers.push(no_free_threaded(tables, py));
        return None;
    }
    let asked_for = candidates(tables, facts, python, major, asked);
    if asked.any() && asked_for.iter().all(|c| c.in_index == Some(false)) {
        // The PyTorch asked for runs nowhere here, and another would: the choice is the
        // cause, named with what would fit instead.
        let instead = candidates(tables, facts, python, major, Want::default())
            .into_iter()
            .filter(|c| c.in_index != Some(false))
            .max_by_key(|c| (c.reach(top), c.rank()));
        if let Some(c) = instead {
            blockers.push(msg!(
                "torch_choice_unavailable",
                choice = asked.label(),
                torch = c.patch,
                variant = &c.variant.name
            ));
            return None;
        }
    }
    let (candidates, missing): (Vec<Candidate>, Vec<Candidate>) = asked_for
        .into_iter()
        .partition(|c| c.in_index != Some(false));
    // The best any Python could do, and what this one does.
    let best_any = best_reach(tables, facts, Py::plain(None), major, asked);
    let here = candidates.iter().map(|c| c.reach(top)).max();
    if let Some(py) = python.version
        && let Some(want) = best_any
        && here < Some(want)
        && missing.iter().all(|c| c.reach(top) < want)
    {
        // Another Python would fit these GPUs (better): the Python is the cause.
        let pythons = pythons_reaching(tables, facts, major, asked, want);
        if !pythons.is_empty() {
            // The GPUs no wheel for this Python reaches (all of them when each is
            // reached, but never together).
            let unreached: Vec<String> = facts
                .gpus
                .iter()
                .enumerate()
                .filter(|(i, _)| !candidates.iter().any(|c| c.covers[*i]))
                .map(|(_, g)| g.label())
                .collect();
            let named = if unreached.is_empty() {
                &gpus
            } else {
                &unreached
            };
            blockers.push(msg!(
                "torch_blocked_by_python",
                python = PythonVersion::label(&py.major_minor(), python.free_threaded),
                pythons = python_ranges(&pythons),
                gpus = named.join(", ")
            ));
            return None;
        }
    }
    let Some(reach) = here else {
        // No Python helps (or it would have been named above): the GPUs are the cause,
        // or the live index lists no wheel for this Python.
        if !missing.is_empty() {
            blockers.push(msg!(
                "no_torch_wheel_in_index",
                python = python_label(facts),
                platform = platform_label(facts.os)
            ));
        } else {
            blockers.push(msg!("no_torch_for_gpus", gpus = gpus.join(", ")));
        }
        return None;
    };
    // The wheels that reach the GPUs best; the pick is the best ranked of them.
    let pool: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| c.reach(top) == reach)
        .collect();
    let best = *pool
        .iter()
        .max_by_key(|c| c.rank())
        .expect("reach came from one");
    let pool: Vec<&Candidate> = pool
        .into_iter()
        .filter(|c| c.covers == best.covers)
        .collect();

    // The wheels the index lacks that would otherwise have been chosen.
    let mut dropped: Vec<&Candidate> = missing
        .iter()
        .filter(|c| c.reach(top) >= reach && c.rank() > best.rank())
        .collect();
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

    // What a newer driver would add: the best candidate the current driver cannot run
    // (never one above the last branch these GPUs get: `candidates` left those out).
    if !outlook.update_anyway
        && best.fit == DriverFit::Yes
        && let Some(better) = pool
            .iter()
            .filter(|c| c.fit == DriverFit::No && c.confirmed)
            .filter(|c| {
                (&c.release.version, &c.variant.cuda) > (&best.release.version, &best.variant.cuda)
            })
            .max_by_key(|c| c.rank())
    {
        needs.offer(
            better.minimum.clone(),
            format!("torch {} ({})", better.patch, better.variant.name),
        );
    }

    explain(tables, facts, best, reasons);
    let mut left_out = Vec::new();
    if best.covers.iter().any(|c| !c) {
        leave_out(tables, facts, major, best, &mut left_out, reasons);
    }
    let version = best.patch.clone();
    let args = pip_args(best.release, best.variant, best.patch, python.free_threaded);
    let interpreter = python
        .version
        .filter(|_| python.free_threaded)
        .map(|py| free_threaded_interpreter(facts.os, py));
    let pick = TorchPick {
        command: super::command_line(interpreter.as_deref(), &args),
        interpreter,
        pip_args: args,
        index_url: best.variant.index_url(),
        variant: best.variant.name.clone(),
        cuda: best.variant.cuda.clone(),
        python_min: best.release.python_min.clone(),
        python_max: best.release.python_max.clone(),
        confirmed: best.confirmed,
        version,
    };
    Some(Picked {
        pick,
        need: Need {
            minimum: best.minimum.clone(),
            fit: best.fit,
        },
        left_out,
    })
}

/// The GPUs the wheel carries no code for, each with its `gpu_left_out` reason
/// (`leave_out::record`), and the wheel that would run it in an environment of its own,
/// when there is one.
fn leave_out(
    tables: &Tables,
    facts: &Facts,
    major: Option<u32>,
    best: &Candidate,
    left_out: &mut Vec<super::LeftOut>,
    reasons: &mut Vec<Message>,
) {
    let kept: Vec<usize> = (0..facts.gpus.len()).filter(|i| best.covers[*i]).collect();
    let first = left_out.len();
    super::leave_out::record(
        facts,
        super::Part::Torch,
        PART_NAME,
        &kept,
        left_out,
        reasons,
    );
    for l in &left_out[first..] {
        let alone = super::leave_out::only(facts, &[l.index]);
        let other = candidates(tables, &alone, Py::of(facts), major, Want::default())
            .into_iter()
            .filter(|c| c.in_index != Some(false))
            .max_by_key(|c| c.rank());
        if let Some(c) = other {
            reasons.push(msg!(
                "torch_other_gpu_wheel",
                gpu = l.gpu.label(),
                torch = c.patch,
                index = l.index,
                command = command(facts, &c)
            ));
        }
    }
}

/// Whether the wheel index (when it was read for this variant) lists a wheel of
/// `release` for this OS and `python`. Only wheels of the Python's own build count: a
/// plain Python cannot install free-threaded wheels, nor the other way round.
fn in_index(
    tables: &Tables,
    facts: &Facts,
    python: Py,
    release: &TorchRelease,
    variant: &TorchVariant,
) -> Option<bool> {
    let wheels = tables.live.wheels.get(&variant.name)?;
    // Variants only assumed (a release learned from PyPI while PyTorch's index was out of
    // reach): a list with no wheel of that line at all predates it, and says nothing.
    if !release.variants_confirmed
        && !wheels
            .iter()
            .any(|w| w.version.major_minor() == release.version)
    {
        return None;
    }
    Some(wheels.iter().any(|w| {
        w.version.major_minor() == release.version
            && w.for_os(facts.os)
            && w.freethreaded == python.free_threaded
            && python.version.is_none_or(|py| w.python == py.major_minor())
    }))
}

fn python_label(facts: &Facts) -> String {
    facts.python.as_ref().map_or("?".to_string(), |p| {
        PythonVersion::label(&p.major_minor(), Py::of(facts).free_threaded)
    })
}

/// How a user starts free-threaded CPython `py`, so that pip runs in it and installs into
/// its own site-packages (not the regular build's): `python3.13t` on Linux, the Python
/// launcher's `py -3.13t` on Windows.
fn free_threaded_interpreter(os: Os, py: &Version) -> String {
    let label = PythonVersion::label(&py.major_minor(), true);
    match os {
        Os::Linux => format!("python{label}"),
        Os::Windows => format!("py -{label}"),
    }
}

/// The blocker for a free-threaded Python no release has wheels for, with the way out:
/// the regular build of the same version, or a free-threaded Python that has them.
fn no_free_threaded(tables: &Tables, py: &Version) -> Message {
    let py = py.major_minor();
    let label = PythonVersion::label(&py, true);
    let abi = format!("cp{}{}t", py.major(), py.minor());
    let others: Vec<String> = tables
        .free_threaded_pythons()
        .iter()
        .filter(|p| **p != py)
        .map(|p| PythonVersion::label(p, true))
        .collect();
    if others.is_empty() {
        msg!(
            "torch_no_free_threaded_only_regular",
            python = label,
            abi = abi,
            regular = py
        )
    } else {
        msg!(
            "torch_no_free_threaded",
            python = label,
            abi = abi,
            regular = py,
            others = others.join(", ")
        )
    }
}

fn platform_label(os: Os) -> &'static str {
    match os {
        Os::Windows => "Windows (win_amd64)",
        Os::Linux => "Linux (x86_64)",
    }
}

/// Per GPU, whether `variant` of `release` carries code for it, and whether that comes
/// from the release's own SM list (true) or is inferred (false). None: no way to tell.
///
/// Inferred: the toolkit must build for the GPU, and a known PyTorch list must cover it:
/// one of this variant's own lists (any release), else one of a variant of the same
/// CUDA major, else (no list for the line) the lowest SM any known list goes to. A GPU
/// no known list for that CUDA line covers is never claimed (cu128 and sm_61).
fn coverage(
    tables: &Tables,
    facts: &Facts,
    release: &TorchRelease,
    variant: &TorchVariant,
) -> Option<(Vec<bool>, bool)> {
    if let Some(arch) = variant.arch_for(&release.version) {
        let covers = facts
            .gpus
            .iter()
            .map(|g| arch.runs_on(g.compute_capability))
            .collect();
        return Some((covers, arch.confirmed));
    }
    let toolkit = tables
        .toolkits
        .releases
        .iter()
        .rfind(|r| r.version.major_minor() == variant.cuda && !r.preview)?;
    let line: Vec<&VariantArch> = if variant.arch.is_empty() {
        tables
            .pytorch
            .variants
            .iter()
            .filter(|v| v.cuda.major() == variant.cuda.major())
            .flat_map(|v| &v.arch)
            .collect()
    } else {
        variant.arch.iter().collect()
    };
    let lowest_known = tables
        .pytorch
        .variants
        .iter()
        .flat_map(|v| &v.arch)
        .filter_map(|a| a.sm.first())
        .min()?;
    let covers = facts
        .gpus
        .iter()
        .map(|g| {
            let cc = g.compute_capability;
            toolkit.builds_for(cc)
                && if line.is_empty() {
                    *lowest_known <= cc
                } else {
                    line.iter().any(|a| a.runs_on(cc))
                }
        })
        .collect();
    Some((covers, false))
}

fn latest(release: &TorchRelease) -> &Version {
    release
        .patches
        .last()
        .expect("validated: patches is not empty")
}

/// pip's arguments after `install` for `patch` of `release`. torch (and torchvision, when
/// its version is known) are pinned with the variant's local version
/// (`torch==2.13.0+cu130`): only the PyTorch index has such a wheel, so neither PyPI's
/// plain torch (the CPU build on Windows) nor a mirror of PyPI (an extra index, pip.conf)
/// can satisfy them. torchvision's pin pairs with the newest patch only; for a
/// free-threaded Python torchvision is left out: no source here lists its `cpXYt` wheels,
/// and one missing would fail the whole install.
pub(super) fn pip_args(
    release: &TorchRelease,
    variant: &TorchVariant,
    patch: &Version,
    free_threaded: bool,
) -> Vec<String> {
    let torch = patch;
    let index = variant.index_url();
    let local = &variant.name;
    let tv = release
        .torchvision
        .as_ref()
        .filter(|_| release.torchvision_confirmed && patch == latest(release));
    let mut args = vec![format!("torch=={torch}+{local}")];
    let index_flag = match release.index_style {
        IndexStyle::IndexUrl => {
            if !free_threaded {
                args.push(tv.map_or("torchvision".to_string(), |v| {
                    format!("torchvision=={v}+{local}")
                }));
            }
            "--index-url"
        }
        IndexStyle::ExtraIndexUrlLocal => {
            if !free_threaded {
                args.extend(tv.map(|v| format!("torchvision=={v}+{local}")));
            }
            "--extra-index-url"
        }
    };
    args.extend([index_flag.to_string(), index]);
    args
}

/// The pip command for a candidate, as a user would type it: derived from [`pip_args`],
/// never parsed back.
fn command(facts: &Facts, c: &Candidate) -> String {
    let python = Py::of(facts);
    let interpreter = python
        .version
        .filter(|_| python.free_threaded)
        .map(|py| free_threaded_interpreter(facts.os, py));
    super::command_line(
        interpreter.as_deref(),
        &pip_args(c.release, c.variant, c.patch, python.free_threaded),
    )
}

fn explain(tables: &Tables, facts: &Facts, best: &Candidate, reasons: &mut Vec<Message>) {
    let torch = best.patch;
    let v = best.variant;
    if let Some(py) = Py::of(facts)
        .version
        .filter(|_| Py::of(facts).free_threaded)
    {
        let py = py.major_minor();
        let rows: Vec<_> = tables.free_threaded(&py).collect();
        if let (Some(first), Some(last)) = (rows.first(), rows.last()) {
            reasons.push(msg!(
                "torch_free_threaded",
                torch = &best.release.version,
                python = PythonVersion::label(&py, true),
                abi = first.abi(),
                from = &first.torch_from,
                to = &last.torch_to,
                interpreter = free_threaded_interpreter(facts.os, &py)
            ));
        }
    }
    match &facts.python {
        Some(_) => reasons.push(msg!(
            "torch_for_python",
            torch = torch,
            python = python_label(facts),
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
    // A newer torch for this Python whose CUDA builds on PyTorch's index no source here
    // confirms (a release seen on PyPI): "the newest that fits" is the newest confirmed.
    if best.confirmed
        && let Some(patch) = tables.pytorch.releases.iter().rev().find_map(|r| {
            let patch = Py::of(facts).patch(tables, r, Want::default())?;
            (r.version > best.release.version && !(r.confirmed && r.variants_confirmed))
                .then_some(patch)
        })
    {
        reasons.push(msg!(
            "torch_newer_unconfirmed",
            torch = patch,
            chosen = best.patch
        ));
    }
    reasons.push(msg!(
        "torch_variant",
        variant = &v.name,
        cuda = &v.cuda,
        minimum = &best.minimum
    ));
    // The GPUs it carries code for (all of them, unless some are left out).
    let gpus: Vec<String> = facts
        .gpus
        .iter()
        .zip(&best.covers)
        .filter(|(_, c)| **c)
        .map(|(g, _)| g.label())
        .collect();
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

#[cfg(test)]
mod tests {
    use super::super::{
        DriverAction, GpuFact, LeftOut, Method, Part, Recommendation, Request, recommend,
    };
    use super::*;
    use crate::version::ComputeCapability;

    fn tables() -> Tables {
        Tables::embedded().unwrap()
    }

    fn gpu(name: &str, cc: &str) -> GpuFact {
        GpuFact {
            name: Some(name.into()),
            compute_capability: cc.parse().unwrap(),
        }
    }

    fn facts(os: Os, gpus: Vec<GpuFact>, driver: Option<&str>, python: Option<&str>) -> Facts {
        Facts {
            os,
            gpus,
            driver: driver.map(|d| d.parse().unwrap()),
            driver_cuda: None,
            python: python.map(|p| p.parse().unwrap()),
            installed_toolkits: vec![],
            unidentified_gpus: vec![],
            notes: vec![],
            host_kind: Default::default(),
            free_threaded: false,
        }
    }

    fn rec(t: &Tables, f: &Facts) -> Recommendation {
        rec_asking(t, f, None, None)
    }

    fn rec_asking(
        t: &Tables,
        f: &Facts,
        version: Option<&str>,
        variant: Option<&str>,
    ) -> Recommendation {
        recommend(
            t,
            f,
            &Request {
                goal: super::super::Goal::Pytorch,
                cuda: None,
                method: Method::Installer,
                driver: Default::default(),
                distro: None,
                torch_version: version.map(|v| v.parse().unwrap()),
                torch_variant: variant.map(str::to_string),
                driver_floor: None,
            },
        )
    }

    #[test]
    fn the_torch_release_and_variant_asked_for_are_the_pick() {
        let t = tables();
        let f = facts(
            Os::Windows,
            vec![gpu("NVIDIA GeForce RTX 3060", "8.6")],
            Some("566.36"),
            Some("3.12"),
        );
        let free = rec(&t, &f).torch.expect("a torch for an RTX 3060");
        let v25: Version = "2.5".parse().unwrap();
        assert!(free.version.major_minor() > v25, "{}", free.version);
        let asked = rec_asking(&t, &f, Some("2.5"), Some("cu121"));
        assert!(asked.blockers.is_empty(), "{:?}", asked.blockers);
        let p = asked.torch.expect("torch 2.5 cu121 runs on an RTX 3060");
        assert_eq!(
            (p.version.to_string(), p.variant.as_str()),
            ("2.5.1".into(), "cu121")
        );
        // A patch named: that patch, not the line's newest.
        let p = rec_asking(&t, &f, Some("2.5.0"), None).torch.unwrap();
        assert_eq!(p.version.to_string(), "2.5.0");
        assert!(p.pip_args.join(" ").contains("2.5.0"), "{:?}", p.pip_args);
        // A variant alone: a release that has it.
        let p = rec_asking(&t, &f, None, Some("cu118")).torch.unwrap();
        assert_eq!(p.variant, "cu118");
        assert!(p.version.major_minor() < free.version.major_minor() || p.variant != free.variant);
    }

    #[test]
    fn a_torch_asked_for_that_runs_nowhere_here_is_a_blocker_naming_it() {
        let t = tables();
        // Torch 2.5 carries no Blackwell code (sm_120): no 2.5 wheel runs on an RTX 5090.
        let f = facts(Os::Windows, vec![rtx5090()], Some("580.88"), Some("3.12"));
        assert!(rec(&t, &f).torch.is_some(), "a newer torch runs on it");
        for (version, variant, choice) in [
            (Some("2.5"), Some("cu124"), "2.5 cu124"),
            (Some("9.9"), None, "9.9"),
            (None, Some("cu118"), "cu118"),
        ] {
            let r = rec_asking(&t, &f, version, variant);
            assert!(r.torch.is_none(), "{choice}: {:?}", r.torch);
            let b = r
                .blockers
                .iter()
                .find(|m| m.key == "torch_choice_unavailable")
                .unwrap_or_else(|| panic!("{choice}: {:?}", r.blockers));
            assert_eq!(b.param("choice"), Some(choice));
            let instead: Version = b.param("torch").unwrap().parse().unwrap();
            assert!(instead >= "2.7".parse().unwrap(), "{instead}");
        }
    }

    fn rtx5090() -> GpuFact {
        gpu("NVIDIA GeForce RTX 5090", "12.0")
    }

    fn gtx1080ti() -> GpuFact {
        gpu("NVIDIA GeForce GTX 1080 Ti", "6.1")
    }

    fn reason<'a>(r: &'a Recommendation, key: &str) -> Vec<&'a Message> {
        r.reasons.iter().filter(|m| m.key == key).collect()
    }

    /// #20 class 1: the PC. The wheel is for the RTX 5090; the GTX 1080 Ti is left
    /// out, with the reason, the CUDA_VISIBLE_DEVICES value and the wheel that runs it.
    #[test]
    fn rtx_5090_and_gtx_1080_ti_share_no_wheel_and_the_pascal_is_left_out() {
        let t = tables();
        for (os, driver) in [(Os::Windows, "581.42"), (Os::Linux, "580.95.05")] {
            let f = facts(os, vec![rtx5090(), gtx1080ti()], Some(driver), Some("3.12"));
            let r = rec(&t, &f);
            assert!(r.blockers.is_empty(), "{:?}", r.blockers);
            let p = r.torch.as_ref().unwrap();
            let variant = t.variant(&p.variant).unwrap();
            let arch = variant.arch_for(&p.version).unwrap();
            assert!(arch.runs_on(ComputeCapability::new(12, 0)), "{}", p.variant);
            assert!(!arch.runs_on(ComputeCapability::new(6, 1)), "{}", p.variant);
            assert!(matches!(
                r.left_out.as_slice(),
                [LeftOut { part: Part::Torch, index: 1, gpu }] if gpu.compute_capability == ComputeCapability::new(6, 1)
            ));
            assert_eq!(r.visible_devices.as_deref(), Some("0"));
            let lo = reason(&r, "gpu_left_out");
            assert_eq!(lo.len(), 1);
            assert!(lo[0].params["gpu"].contains("1080 Ti"));
            assert!(lo[0].params["kept"].contains("5090"));
            assert!(!lo[0].params["kept"].contains("1080"));
            assert_eq!(lo[0].params["part"], "PyTorch");
            assert_eq!(lo[0].params["visible_devices"], "0");
            for lang in [crate::i18n::Lang::En, crate::i18n::Lang::Zh] {
                let text = crate::i18n::render(lo[0], lang);
                assert!(text.contains("CUDA_VISIBLE_DEVICES=0"), "{text}");
                assert!(text.contains("CUDA_DEVICE_ORDER=PCI_BUS_ID"), "{text}");
            }
            // The other GPU's wheel: cu126 (the only current line with sm_60).
            let other = reason(&r, "torch_other_gpu_wheel");
            assert_eq!(other.len(), 1);
            assert!(other[0].params["command"].contains("+cu126"), "{other:?}");
            assert_eq!(other[0].params["index"], "1");
            // The arch reason names only the GPU the wheel runs on.
            let covers = reason(&r, "torch_arch_covers");
            assert!(!covers[0].params["gpus"].contains("1080"), "{covers:?}");
        }
    }

    /// Order does not matter: the newest GPU is kept wherever it sits.
    #[test]
    fn the_newest_gpu_is_kept_in_any_position() {
        let t = tables();
        let f = facts(
            Os::Linux,
            vec![gtx1080ti(), rtx5090()],
            Some("580.95.05"),
            Some("3.12"),
        );
        let r = rec(&t, &f);
        assert_eq!(r.visible_devices.as_deref(), Some("1"));
        assert_eq!(r.left_out.len(), 1);
        assert_eq!(r.left_out[0].index, 0);
        // Three GPUs: two Pascal, one Blackwell: the Blackwell one is kept.
        let f = facts(
            Os::Linux,
            vec![gtx1080ti(), gtx1080ti(), rtx5090()],
            Some("580.95.05"),
            Some("3.12"),
        );
        let r = rec(&t, &f);
        assert_eq!(r.visible_devices.as_deref(), Some("2"));
        assert_eq!(reason(&r, "gpu_left_out").len(), 2);
        // GPUs one wheel covers: nothing left out, nothing hidden.
        let f = facts(
            Os::Linux,
            vec![gpu("RTX 3090", "8.6"), rtx5090()],
            Some("580.95.05"),
            Some("3.12"),
        );
        let r = rec(&t, &f);
        assert!(r.left_out.is_empty() && r.visible_devices.is_none());
    }

    /// A release whose variants are only assumed (learned from PyPI while PyTorch's index
    /// was out of reach) is not dropped by a cached wheel list that predates it; a line
    /// the list does know is still judged by it.
    #[test]
    fn a_wheel_list_older_than_an_assumed_release_says_nothing_of_it() {
        let mut t = tables();
        let assumed = t
            .pytorch
            .releases
            .iter()
            .rfind(|r| !r.variants_confirmed)
            .expect("a release with assumed variants")
            .clone();
        let variant = assumed.variants[0].clone();
        let older = t
            .pytorch
            .releases
            .iter()
            .rfind(|r| r.variants_confirmed && r.variants.contains(&variant))
            .unwrap()
            .version
            .clone();
        let wheel = |v: &Version, py: &str| crate::compat::Wheel {
            version: Version::new(&[v.major(), v.minor(), 0]),
            python: py.parse().unwrap(),
            freethreaded: false,
            platform: "manylinux_2_28_x86_64".into(),
        };
        t.live
            .wheels
            .insert(variant.clone(), vec![wheel(&older, "3.12")]);
        let py = assumed.python_max.to_string();
        let f = facts(Os::Linux, vec![rtx5090()], Some("600.00"), Some(&py));
        let r = rec(&t, &f);
        let p = r
            .torch
            .as_ref()
            .unwrap_or_else(|| panic!("{:?}", r.blockers));
        assert_eq!(p.version.major_minor(), assumed.version, "{:?}", r.reasons);
        // The list knows the assumed line, without this Python: dropped, and said.
        t.live
            .wheels
            .insert(variant.clone(), vec![wheel(&assumed.version, "3.11")]);
        let r = rec(&t, &f);
        assert!(
            r.torch
                .as_ref()
                .is_none_or(|p| p.version.major_minor() != assumed.version),
            "{:?}",
            r.torch
        );
    }

    /// The GPUs kept by two parts: the intersection.
    #[test]
    fn visible_devices_keep_what_every_part_keeps() {
        let t = tables();
        let f = facts(
            Os::Linux,
            vec![gtx1080ti(), gpu("RTX 3090", "8.6"), rtx5090()],
            Some("580.95.05"),
            Some("3.12"),
        );
        let out = |parts: &[(Part, usize)]| -> Vec<super::super::LeftOut> {
            parts
                .iter()
                .map(|(part, index)| super::super::LeftOut {
                    part: *part,
                    index: *index,
                    gpu: f.gpus[*index].clone(),
                })
                .collect()
        };
        let two = out(&[(Part::Toolkit, 0), (Part::Torch, 0), (Part::Torch, 1)]);
        assert_eq!(
            super::super::leave_out::visible_devices(&f, &two).as_deref(),
            Some("2")
        );
        let one = out(&[(Part::Torch, 0)]);
        assert_eq!(
            super::super::leave_out::visible_devices(&f, &one).as_deref(),
            Some("1,2")
        );
        // Through the recommender: what it leaves out, it hides.
        let r = rec(&t, &f);
        assert_eq!(
            r.visible_devices,
            super::super::leave_out::visible_devices(&f, &r.left_out)
        );
    }

    /// The inferred list never claims a GPU no known list of that CUDA line covers: no
    /// cu12x wheel other than cu126 (and the old cu11x/cu12[14] lines) runs sm_61, no
    /// cu13x wheel runs below sm_75, and no cu126 wheel runs sm_120.
    #[test]
    fn no_wheel_claims_a_gpu_its_line_has_no_code_for() {
        let t = tables();
        let f = facts(
            Os::Linux,
            vec![gtx1080ti(), gpu("V100", "7.0"), rtx5090()],
            None,
            None,
        );
        for r in &t.pytorch.releases {
            for name in &r.variants {
                let v = t.variant(name).unwrap();
                let Some((covers, _)) = coverage(&t, &f, r, v) else {
                    continue;
                };
                let ctx = format!("{} {name}", r.version);
                if matches!(name.as_str(), "cu128" | "cu129") || v.cuda.major() == 13 {
                    assert!(!covers[0], "{ctx} claims sm_61");
                    assert!(!covers[1], "{ctx} claims sm_70");
                }
                if name == "cu126" {
                    assert!(covers[0] && covers[1] && !covers[2], "{ctx}");
                }
                if v.cuda.major() == 13 {
                    assert!(covers[2], "{ctx} misses sm_120");
                }
            }
        }
    }

    /// #20 class 2: a Python no release fits, where another would: the blocker names
    /// the Python and the versions that work.
    #[test]
    fn the_python_is_blamed_and_the_working_pythons_named() {
        let mut t = tables();
        // Before the 2.15 rows existed: Python 3.15 had no torch at all.
        t.pytorch
            .releases
            .retain(|r| r.version < "2.15".parse().unwrap());
        let f = facts(
            Os::Linux,
            vec![gpu("NVIDIA GeForce RTX 4090", "8.9")],
            Some("580.95.05"),
            Some("3.15"),
        );
        let r = rec(&t, &f);
        assert!(r.torch.is_none());
        let b: Vec<_> = r.blockers.iter().map(|m| m.key).collect();
        assert_eq!(b, ["torch_blocked_by_python"]);
        let m = &r.blockers[0];
        assert_eq!(m.params["python"], "3.15");
        // 2.0 (Python 3.8) through 2.14 (3.14) have a wheel for sm_89; 1.13's CUDA 11.6
        // and 11.7 lines (Python 3.7) stop below it.
        assert_eq!(m.params["pythons"], "3.8–3.14");
        assert!(m.params["gpus"].contains("4090"));
        let text = crate::i18n::render(m, crate::i18n::Lang::En);
        assert!(text.contains("3.8–3.14") && text.contains("3.15"), "{text}");

        // Python 3.8 on an RTX 5090: the 3.8 releases (2.0 - 2.4) stop at CUDA 12.4.
        let t = tables();
        let f = facts(Os::Linux, vec![rtx5090()], Some("580.95.05"), Some("3.8"));
        let r = rec(&t, &f);
        let m = &r.blockers[0];
        assert_eq!(m.key, "torch_blocked_by_python");
        // cu128 from 2.7 (Python 3.9) on; 2.15 (3.15) with cu132, unconfirmed.
        assert_eq!(m.params["pythons"], "3.9–3.15");

        // No Python helps a Kepler GPU: the GPU is the cause.
        let f = facts(Os::Linux, vec![gpu("Tesla K80", "3.7")], None, Some("3.8"));
        let r = rec(&t, &f);
        let b: Vec<_> = r.blockers.iter().map(|m| m.key).collect();
        assert_eq!(b, ["no_torch_for_gpus"]);
    }

    #[test]
    fn python_versions_read_as_ranges() {
        let v = |s: &str| -> Vec<Version> { s.split(' ').map(|p| p.parse().unwrap()).collect() };
        assert_eq!(python_ranges(&v("3.10 3.11 3.12 3.13 3.14")), "3.10–3.14");
        assert_eq!(python_ranges(&v("3.9 3.11 3.12")), "3.9, 3.11–3.12");
        assert_eq!(python_ranges(&v("3.12")), "3.12");
    }

    /// #20 class 7: 2.14 and 2.15 are PyPI-confirmed, their index variants are not: a
    /// confirmed release wins wherever one fits, and 2.15 is taken only for Python 3.15,
    /// saying it is unconfirmed.
    #[test]
    fn an_unconfirmed_release_is_taken_only_when_needed() {
        let t = tables();
        let r214 = t
            .pytorch
            .releases
            .iter()
            .find(|r| r.version == "2.14".parse().unwrap())
            .unwrap();
        let r215 = t
            .pytorch
            .releases
            .iter()
            .find(|r| r.version == "2.15".parse().unwrap())
            .unwrap();
        assert!(r214.confirmed && !r214.variants_confirmed);
        assert!(r215.confirmed && !r215.variants_confirmed);
        assert_eq!(r215.python_min.to_string(), "3.11");
        assert_eq!(r215.python_max.to_string(), "3.15");
        assert_eq!(r215.linux_pypi_default.as_deref(), Some("cu132"));
        assert!(
            !r214.patches.iter().any(|p| p.to_string() == "2.14.1"),
            "3rd-party only"
        );
        for py in ["3.11", "3.12", "3.13", "3.14"] {
            let f = facts(
                Os::Linux,
                vec![gpu("RTX 4090", "8.9")],
                Some("595.71.05"),
                Some(py),
            );
            let p = rec(&t, &f).torch.unwrap();
            assert!(p.confirmed, "{py}: {}", p.version);
            assert!(p.version < "2.14".parse().unwrap(), "{py}: {}", p.version);
        }
        let f = facts(
            Os::Linux,
            vec![gpu("RTX 4090", "8.9")],
            Some("595.71.05"),
            Some("3.15"),
        );
        let r = rec(&t, &f);
        let p = r.torch.as_ref().unwrap();
        assert_eq!(
            (p.version.to_string().as_str(), p.variant.as_str()),
            ("2.15.0", "cu132")
        );
        assert!(!p.confirmed);
        assert!(!reason(&r, "torch_unconfirmed").is_empty());
    }

    /// #20 class 4: with the driver to be updated anyway, the newest build that runs after
    /// the update; never a wheel above the last branch a GPU gets (Kepler: R470).
    #[test]
    fn after_a_required_update_the_newest_build_within_the_last_branch() {
        let t = tables();
        let newest = t
            .pytorch
            .releases
            .iter()
            .rfind(|r| r.confirmed && r.variants_confirmed)
            .unwrap();
        let f = facts(Os::Windows, vec![rtx5090()], Some("560.94"), Some("3.12"));
        let r = rec(&t, &f);
        let p = r.torch.as_ref().unwrap();
        assert_eq!(&p.version, latest(newest));
        assert_eq!(p.cuda.major(), 13);
        assert_eq!(r.driver.action, DriverAction::Update);
        assert!(r.driver.minimum.as_ref().unwrap() >= &"580.88".parse().unwrap());

        // Kepler's last branch is R470 (set here; gpus.toml's value is the toolkit
        // helper's): with a K80 and an RTX 3090 and no driver, no cu12x/cu13x wheel.
        let mut t = tables();
        for a in &mut t.gpus.architectures {
            if a.name == "Kepler" {
                a.last_branch = Some(470);
            }
        }
        let pair = vec![gpu("Tesla K80", "3.7"), gpu("RTX 3090", "8.6")];
        // No wheel carries sm_37: the K80 is left out, so it holds the driver to no
        // branch, and the 3090 gets the newest build after the install.
        let f = facts(Os::Linux, pair.clone(), None, Some("3.12"));
        let r = rec(&t, &f);
        let p = r.torch.as_ref().expect("a wheel for the 3090");
        assert_eq!(p.cuda.major(), 13, "{}", p.variant);
        assert_eq!(r.visible_devices.as_deref(), Some("1"));
        assert_eq!(r.driver.last_branch, None);
        // With a 470 driver that works: a cu11x wheel, and no offer of a 525+ driver
        // (it would stop the K80).
        let f = facts(Os::Linux, pair, Some("470.82.01"), Some("3.12"));
        let r = rec(&t, &f);
        assert_eq!(r.torch.as_ref().unwrap().cuda.major(), 11);
        assert!(
            r.driver
                .upgrade_minimum
                .as_ref()
                .is_none_or(|m| *m <= Version::new(&[470, 999, 999])),
            "{:?}",
            r.driver.upgrade_minimum
        );
    }

    /// #20 class 7: on Windows PyPI's plain torch is the CPU build. The recommended
    /// requirement carries the variant's local version, so a PyPI-like index (served
    /// here on loopback) holding `torch-2.13.0-…-win_amd64.whl` has nothing that
    /// satisfies it, judged by the project's own PEP 440 matching; a PyPI mirror never
    /// becomes torch's index.
    #[test]
    fn the_windows_command_cannot_install_pypis_cpu_build() {
        use crate::wheels::index::{self, WheelName};
        use crate::wheels::version::Specifier;
        use std::io::{Read, Write};

        let t = tables();
        let f = facts(
            Os::Windows,
            vec![gpu("NVIDIA GeForce RTX 4090", "8.9")],
            Some("595.97"),
            Some("3.12"),
        );
        let r = rec(&t, &f);
        let p = r.torch.clone().unwrap();
        let version = p.version.to_string();

        // A PyPI-like simple index on loopback with PyPI's Windows CPU wheel.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let cpu_wheel = format!("torch-{version}-cp312-cp312-win_amd64.whl");
        let page = format!(
            "<!DOCTYPE html><html><body><a href=\"/files/{cpu_wheel}#sha256={}\">{cpu_wheel}</a></body></html>",
            "ab".repeat(32)
        );
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4096];
            let mut req = Vec::new();
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = s.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                req.extend_from_slice(&buf[..n]);
            }
            let head = String::from_utf8_lossy(&req).to_string();
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                page.len()
            );
            s.write_all(reply.as_bytes()).unwrap();
            head
        });
        let simple = format!("http://{addr}/simple");
        let files = index::fetch_project(&simple, "torch", &Default::default()).unwrap();
        let request = server.join().unwrap();
        assert!(request.starts_with("GET /simple/torch/ "), "{request}");
        assert_eq!(files.len(), 1);
        let cpu = WheelName::parse(&files[0].filename).unwrap();
        assert_eq!(cpu.dist, "torch");

        // The requirement as the command states it.
        let req = p
            .command
            .split_whitespace()
            .find(|a| a.starts_with("torch=="))
            .unwrap();
        assert_eq!(req, format!("torch=={version}+{}", p.variant));
        let spec: Specifier = req.trim_start_matches("torch").parse().unwrap();
        assert!(
            !spec.matches(&cpu.version),
            "{req} matches {}",
            files[0].filename
        );
        // The plain pin (the old command) would have taken it.
        let plain: Specifier = format!("=={version}").parse().unwrap();
        assert!(plain.matches(&cpu.version));
        // And the wheel on PyTorch's index does match.
        let cuda: WheelName = WheelName::parse(&format!(
            "torch-{version}+{}-cp312-cp312-win_amd64.whl",
            p.variant
        ))
        .unwrap();
        assert!(spec.matches(&cuda.version));

        // Only PyTorch's index (or a mirror of it) is torch's index; a PyPI mirror is an
        // extra index for the dependencies and cannot carry `+cuNNN`.
        assert!(p.command.contains(&format!("--index-url {}", p.index_url)));
        for pypi in [
            "https://pypi.tuna.tsinghua.edu.cn/simple",
            "https://mirrors.aliyun.com/pypi/simple/",
            "https://mirrors.ustc.edu.cn/pypi/simple",
            "https://pypi.org/simple",
            simple.as_str(),
        ] {
            let mut q = p.clone();
            assert!(!q.use_index(pypi), "{pypi}");
            assert_eq!(q.command, p.command);
            let mirror: crate::verify::doctor::PypiMirror = pypi.parse().unwrap();
            let cmd = crate::verify::doctor::install_command(
                std::path::Path::new("python"),
                &p.command,
                Some(&mirror),
            );
            let words: Vec<&str> = cmd.split_whitespace().collect();
            let at = words.iter().position(|w| *w == "--index-url").unwrap();
            assert_eq!(words[at + 1], p.index_url, "{cmd}");
            assert!(!words.contains(&"-i"), "{cmd}");
        }
        // A mirror of PyTorch's index is taken.
        let mut q = p.clone();
        assert!(q.use_index("https://mirror.nju.edu.cn/pytorch/whl"));
        assert!(q.command.contains(&format!(
            "--index-url https://mirror.nju.edu.cn/pytorch/whl/{}",
            p.variant
        )));
        assert!(
            q.command
                .contains(&format!("torch=={version}+{}", p.variant))
        );
    }

    /// Every Python from 3.7 to 3.16 on PCs of one and two GPUs, both systems: either a
    /// wheel for this Python that carries code for every GPU it does not leave out, or a
    /// blocker naming the cause: the Python (with versions that work, this one not among
    /// them) or the GPUs (no Python would help).
    #[test]
    fn every_python_gets_a_wheel_or_the_right_cause() {
        let t = tables();
        let pcs: Vec<Vec<GpuFact>> = vec![
            vec![gpu("RTX 4090", "8.9")],
            vec![rtx5090()],
            vec![gtx1080ti()],
            vec![gpu("GTX 970", "5.2")],
            vec![gpu("Tesla K80", "3.7")],
            vec![rtx5090(), gtx1080ti()],
            vec![gpu("V100", "7.0"), gpu("B200", "10.0")],
        ];
        let mut n = 0;
        for os in [Os::Windows, Os::Linux] {
            for driver in [None, Some("560.94"), Some("581.42")] {
                for gpus in &pcs {
                    for minor in 7..=16 {
                        let py = format!("3.{minor}");
                        let f = facts(os, gpus.clone(), driver, Some(&py));
                        let r = rec(&t, &f);
                        n += 1;
                        let ctx = format!("{os:?} {driver:?} {gpus:?} {py}");
                        match &r.torch {
                            Some(p) => {
                                let pyv: Version = py.parse().unwrap();
                                assert!(p.python_min <= pyv && pyv <= p.python_max, "{ctx}");
                                let v = t.variant(&p.variant).unwrap();
                                let release = t
                                    .pytorch
                                    .releases
                                    .iter()
                                    .find(|r| r.patches.contains(&p.version))
                                    .unwrap();
                                let (covers, _) = coverage(&t, &f, release, v).unwrap();
                                for (i, c) in covers.iter().enumerate() {
                                    assert!(
                                        *c || r.left_out.iter().any(|l| l.index == i),
                                        "{ctx}: GPU {i} neither covered nor left out"
                                    );
                                }
                                assert!(covers.iter().any(|c| *c), "{ctx}");
                            }
                            None => {
                                let b = &r.blockers[0];
                                match b.key {
                                    "torch_blocked_by_python" => {
                                        let pythons = &b.params["pythons"];
                                        assert!(!pythons.is_empty(), "{ctx}");
                                        // This Python is not among those that work.
                                        let listed = pythons.split(", ").any(|run| {
                                            let (lo, hi) =
                                                run.split_once('–').unwrap_or((run, run));
                                            let m = |s: &str| {
                                                s.rsplit('.')
                                                    .next()
                                                    .unwrap()
                                                    .parse::<u32>()
                                                    .unwrap()
                                            };
                                            (m(lo)..=m(hi)).contains(&minor)
                                        });
                                        assert!(!listed, "{ctx}: {pythons}");
                                    }
                                    "no_torch_for_gpus" => {
                                        // No Python would help.
                                        for m in 7..=16 {
                                            let other = facts(
                                                os,
                                                gpus.clone(),
                                                driver,
                                                Some(&format!("3.{m}")),
                                            );
                                            assert!(
                                                rec(&t, &other).torch.is_none(),
                                                "{ctx}: 3.{m} helps"
                                            );
                                        }
                                    }
                                    k => panic!("{ctx}: blocker {k}"),
                                }
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(n, 2 * 3 * 7 * 10);
    }

    fn free_threaded(os: Os, driver: &str, py: &str) -> Facts {
        let mut f = facts(os, vec![gpu("RTX 4090", "8.9")], Some(driver), Some(py));
        f.free_threaded = true;
        f
    }

    /// #32, dossier §13.4: PyPI has cp313t wheels for torch 2.7.0 – 2.12.0 only. A 3.13t
    /// user gets 2.12.0 (not 2.12.1, not 2.13), run by that interpreter, without
    /// torchvision, and the reason says why.
    #[test]
    fn free_threaded_313_gets_the_newest_torch_with_cp313t_wheels() {
        let t = tables();
        for (os, driver, run) in [
            (Os::Linux, "595.71.05", "python3.13t -m pip install "),
            (Os::Windows, "595.97", "py -3.13t -m pip install "),
        ] {
            let r = rec(&t, &free_threaded(os, driver, "3.13"));
            assert!(r.blockers.is_empty(), "{:?}", r.blockers);
            let p = r.torch.as_ref().unwrap();
            assert_eq!(p.version.to_string(), "2.12.0", "{os:?}");
            assert!(p.command.starts_with(run), "{}", p.command);
            assert!(
                p.command.contains(&format!("torch==2.12.0+{} ", p.variant)),
                "{}",
                p.command
            );
            assert!(!p.command.contains("torchvision"), "{}", p.command);
            assert_eq!(
                p.interpreter.as_deref(),
                Some(run.trim_end_matches(" -m pip install "))
            );
            assert!(!p.pip_args.iter().any(|a| a.contains("torchvision")));
            let why = reason(&r, "torch_free_threaded");
            assert_eq!(why.len(), 1);
            let text = super::super::english(why[0]);
            assert!(
                text.starts_with(
                    "PyTorch 2.12 is the newest with wheels for free-threaded Python 3.13t"
                ),
                "{text}"
            );
            assert!(
                text.contains("cp313t") && text.contains("2.7.0 to 2.12.0"),
                "{text}"
            );
            let fit = super::super::english(reason(&r, "torch_for_python")[0]);
            assert!(fit.contains("you have 3.13t"), "{fit}");
            // The mirror of PyTorch's index keeps the interpreter.
            let mut q = p.clone();
            assert!(q.use_index("https://mirror.nju.edu.cn/pytorch/whl"));
            assert!(q.command.starts_with(run), "{}", q.command);
            // The doctor's command runs the interpreter it examined.
            let doc = crate::verify::doctor::install_command(
                std::path::Path::new("/opt/py313t/bin/python3"),
                &p.command,
                None,
            );
            assert!(
                doc.starts_with("/opt/py313t/bin/python3 -m pip install torch==2.12.0+"),
                "{doc}"
            );
        }
        // The same version, regular build: the newest release.
        let plain = rec(
            &t,
            &facts(
                Os::Linux,
                vec![gpu("RTX 4090", "8.9")],
                Some("595.71.05"),
                Some("3.13"),
            ),
        );
        let p = plain.torch.clone().unwrap();
        assert!(p.version > "2.12.1".parse().unwrap(), "{}", p.version);
        assert!(
            p.command.starts_with("pip install torch=="),
            "{}",
            p.command
        );
        assert!(p.interpreter.is_none());
        assert!(reason(&plain, "torch_free_threaded").is_empty());
    }

    /// cp314t: 2.9.0 – 2.15.0; the newest confirmed release in it is taken.
    #[test]
    fn free_threaded_314_gets_a_torch_within_its_cp314t_range() {
        let t = tables();
        let r = rec(&t, &free_threaded(Os::Linux, "595.71.05", "3.14"));
        let p = r.torch.as_ref().unwrap();
        assert!(p.version <= "2.15.0".parse().unwrap(), "{}", p.version);
        assert!(p.version >= "2.13.0".parse().unwrap(), "{}", p.version);
        assert!(t.free_threaded_has(&"3.14".parse().unwrap(), &p.version));
        assert!(
            p.command.starts_with("python3.14t -m pip install "),
            "{}",
            p.command
        );
        assert_eq!(reason(&r, "torch_free_threaded").len(), 1);
    }

    /// No release has wheels for the ABI: a blocker with the way out, whatever the GPUs.
    #[test]
    fn a_free_threaded_python_without_wheels_is_blocked_with_the_way_out() {
        let t = tables();
        let r = rec(&t, &free_threaded(Os::Windows, "595.97", "3.15"));
        assert!(r.torch.is_none());
        let b = &r.blockers[0];
        assert_eq!(b.key, "torch_no_free_threaded");
        assert_eq!(b.params["python"], "3.15t");
        assert_eq!(b.params["regular"], "3.15");
        assert_eq!(b.params["others"], "3.13t, 3.14t");
        let text = super::super::english(b);
        assert!(text.contains("cp315t"), "{text}");
        // Tables that know no free-threaded wheels at all name the regular build only.
        let mut t = tables();
        t.pytorch.free_threaded.clear();
        let r = rec(&t, &free_threaded(Os::Linux, "595.71.05", "3.13"));
        assert_eq!(r.blockers[0].key, "torch_no_free_threaded_only_regular");
    }

    /// The live index: only wheels of the Python's own build count.
    #[test]
    fn the_index_counts_only_wheels_of_the_pythons_own_build() {
        use crate::compat::Wheel;
        let mut t = tables();
        let wheel = |ft: bool| Wheel {
            version: "2.12.0".parse().unwrap(),
            python: "3.13".parse().unwrap(),
            freethreaded: ft,
            platform: "manylinux_2_28_x86_64".into(),
        };
        let f = free_threaded(Os::Linux, "595.71.05", "3.13");
        let variant = rec(&t, &f).torch.unwrap().variant;
        // The index read for that variant lists only the regular cp313 wheel.
        t.live.wheels.insert(variant.clone(), vec![wheel(false)]);
        let r = rec(&t, &f);
        assert_ne!(r.torch.as_ref().map(|p| &p.variant), Some(&variant));
        t.live.wheels.insert(variant.clone(), vec![wheel(true)]);
        let r = rec(&t, &f);
        assert_eq!(r.torch.as_ref().unwrap().variant, variant);
        assert_eq!(reason(&r, "torch_wheel_in_index").len(), 1);
    }

    /// Every command the tables can produce pins torch with the variant's local version.
    #[test]
    fn every_command_pins_the_local_version() {
        let t = tables();
        for r in &t.pytorch.releases {
            for name in &r.variants {
                let v = t.variant(name).unwrap();
                let c = super::super::pip_command(&pip_args(r, v, latest(r), false));
                assert!(c.contains(&format!("torch=={}+{name} ", latest(r))), "{c}");
                if let Some(tv) = r.torchvision.as_ref().filter(|_| r.torchvision_confirmed) {
                    assert!(c.contains(&format!("torchvision=={tv}+{name}")), "{c}");
                }
            }
        }
    }
}
