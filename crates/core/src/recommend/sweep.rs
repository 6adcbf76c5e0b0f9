//! #20 "How it is shown": an invariant checker that knows nothing of how the picks are
//! made, swept over every GPU family × driver × Python × OS × goal in the tables (and
//! every pair of GPU families in one PC), and the named examples of the issue as a
//! table. What is "right" comes from the issue and the compat dossier (§1 driver
//! floors and minimums, §4 architectures, §6 wheels), never from the engine: every
//! expectation is brute-forced from the tables.
//!
//! Each violation carries its class (`[1 torch covers …]`), so a red run says which
//! class of #20 still breaks and on which configuration.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use super::*;
use crate::compat::{InstallerKind, Os, ToolkitRelease, TorchRelease, TorchVariant};
use crate::i18n::{self, Lang};
use crate::version::{ComputeCapability, Version};

fn v(s: &str) -> Version {
    s.parse().unwrap()
}

fn cc(s: &str) -> ComputeCapability {
    s.parse().unwrap()
}

/// Every Python the issue names, 3.8 to 3.15.
const PYTHONS: [&str; 8] = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15"];
/// The free-threaded builds (#32): two with wheels, one without.
const FREE_THREADED: [&str; 3] = ["3.13t", "3.14t", "3.15t"];

// ---- the classes a violation belongs to ----
const BASICS: &str = "0 basics";
const C1_TORCH: &str = "1 torch wheel carries code for every GPU kept";
const C1_TOOLKIT: &str = "1 toolkit builds for every GPU kept";
const C1_LEFT_OUT: &str =
    "1 left-out GPUs: only when nothing covers all, reason, CUDA_VISIBLE_DEVICES";
const C5_SM_RANGE: &str = "5 toolkit within the dossier's SM range per release (§4.1)";
const C2_PYTHON: &str = "2 torch supports the Python";
const C2_BLOCKER: &str = "2 blocker names its real cause";
const C3_DRIVER_NONE: &str = "3 action none: the running driver runs every pick, minimum <= driver";
const C4_DRIVER_UPDATE: &str =
    "4 install/update: minimum covers every need, stays within the last branch";
const C4_LAST_BRANCH: &str = "4 last branch said (driver_last_branch, DriverAdvice.last_branch)";
const C4_NEWEST: &str = "4 after a required update: the newest confirmed torch that fits";
const C6_CARRIED: &str = "6 no 'the driver comes with it' for an installer that carries none";
const C7_WINDOWS_PIN: &str = "7 Windows command pins torch==X+cuNNN";
const MESSAGES: &str = "messages: key in the catalogue, renders in en and zh";
const C8_FREE_THREADED: &str = "8 free-threaded Python: a torch patch with its cpXYt wheels, run by its interpreter, or the blocker with the way out";
const C9_JETSON: &str =
    "9 a Jetson GPU gets JetPack's answer: no pick, no driver action, the Jetson wheels (#32)";

#[derive(Debug, Clone)]
struct Violation {
    class: &'static str,
    what: String,
}

#[derive(Default)]
struct Found(Vec<Violation>);

impl Found {
    fn add(&mut self, class: &'static str, what: impl Into<String>) {
        self.0.push(Violation {
            class,
            what: what.into(),
        });
    }
}

// ---- facts brute-forced from the tables ----

fn python_ok(r: &TorchRelease, py: Option<&Version>) -> bool {
    py.is_none_or(|p| r.python_min <= *p && *p <= r.python_max)
}

fn line_floor(t: &Tables, os: Os, major: u32) -> Option<&Version> {
    t.toolkit_line(major).map(|l| l.driver_floor(os))
}

fn arch_min(t: &Tables, os: Os, gpu: ComputeCapability) -> Option<&Version> {
    let a = t.architecture_of(gpu)?;
    a.driver_min(os)
}

/// The last driver branch every GPU here still gets: the lowest `last_branch` among
/// their architectures. Kepler's R470 is named by the issue itself ("Kepler's R470: the
/// offer to install a newer driver cannot be followed"), so it holds even where the
/// tables do not say it yet.
fn last_branch(t: &Tables, f: &Facts) -> Option<u32> {
    let all: Vec<ComputeCapability> = f.gpus.iter().map(|g| g.compute_capability).collect();
    last_branch_of(t, &all)
}

/// [`last_branch`] of some of the GPUs: a GPU every pick leaves out holds the driver to
/// no branch, and a set of GPUs a pick would keep is held only by its own members.
fn last_branch_of(t: &Tables, gpus: &[ComputeCapability]) -> Option<u32> {
    gpus.iter()
        .filter_map(|g| {
            let a = t.architecture_of(*g)?;
            let issue = (a.name == "Kepler").then_some(470);
            match (a.last_branch, issue) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            }
        })
        .min()
}

/// Whether driver `d` belongs to branch `b` or an older one. Linux drivers of branch
/// R470 are numbered 470.x; NVIDIA's Windows drivers of a branch carry the next few
/// numbers (R470: 471.11 … 474.xx, e.g. CUDA 11.4's Windows minimum 471.11), so on
/// Windows a branch reaches up to `b + 4`.
fn within_branch(os: Os, d: &Version, b: u32) -> bool {
    match os {
        Os::Linux => d.major() <= b,
        Os::Windows => d.major() <= b + 4,
    }
}

fn within(os: Os, ceiling: Option<u32>, d: &Version) -> bool {
    ceiling.is_none_or(|b| within_branch(os, d, b))
}

/// The driver a toolkit release needs: its published minimum for the OS, else its
/// major line's floor (dossier §1.1/§1.2).
fn toolkit_need<'t>(t: &'t Tables, os: Os, r: &'t ToolkitRelease) -> Option<&'t Version> {
    r.driver_min(os)
        .or_else(|| line_floor(t, os, r.version.major()))
}

/// Every (release, variant) of the tables, with the variant's first-hand SM list for
/// that release when it has one.
fn torch_pairs(t: &Tables) -> impl Iterator<Item = (&TorchRelease, &TorchVariant)> {
    t.pytorch.releases.iter().flat_map(move |r| {
        r.variants
            .iter()
            .filter_map(move |n| t.variant(n).map(|var| (r, var)))
    })
}

/// A (release, variant) whose first-hand SM list runs on every GPU of `gpus`, for
/// Python `py`, whose driver floor can be installed on these GPUs (`ceiling`).
fn torch_covers(
    t: &Tables,
    os: Os,
    ceiling: Option<u32>,
    r: &TorchRelease,
    var: &TorchVariant,
    py: Option<&Version>,
    gpus: &[ComputeCapability],
) -> bool {
    python_ok(r, py)
        && var
            .arch_for(&r.version)
            .is_some_and(|a| gpus.iter().all(|g| a.runs_on(*g)))
        && line_floor(t, os, var.cuda.major()).is_some_and(|fl| within(os, ceiling, fl))
}

/// The toolkit releases the request allows on this OS (not a preview, an installer for
/// the OS unless the wheels method, the `--cuda` prefix).
fn toolkit_usable(r: &ToolkitRelease, os: Os, req: &Request) -> bool {
    let kind = match os {
        Os::Windows => InstallerKind::WindowsLocal,
        Os::Linux => InstallerKind::LinuxRunfile,
    };
    !r.preview
        && (req.method == Method::Wheels || r.installer(kind).is_some())
        && req
            .cuda
            .as_ref()
            .is_none_or(|p| r.version.parts().starts_with(p.parts()))
}

/// The versions a `pythons` parameter names: "3.10–3.14", "3.11, 3.12", "3.10 to 3.14".
fn listed_pythons(s: &str) -> BTreeSet<Version> {
    let all: Vec<Version> = PYTHONS.iter().map(|p| v(p)).collect();
    let mut out = BTreeSet::new();
    for tok in s.split([',', '、', ';', '，']) {
        let tok = tok.trim().trim_start_matches("Python").trim();
        let range = tok
            .split_once(['–', '—', '-', '~', '～'])
            .or_else(|| tok.split_once(" to "))
            .or_else(|| tok.split_once('至'));
        match range {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<Version>(), b.trim().parse::<Version>()) {
                    out.extend(all.iter().filter(|p| a <= **p && **p <= b).cloned());
                }
            }
            None => {
                if let Ok(p) = tok.parse::<Version>() {
                    out.insert(p);
                }
            }
        }
    }
    out
}

fn has(msgs: &[Message], key: &str) -> bool {
    msgs.iter().any(|m| m.key == key)
}

fn mentions(m: &Message, param: &str, g: &GpuFact) -> bool {
    m.param(param).is_some_and(|p| {
        p.contains(&g.compute_capability.sm())
            || g.name.as_deref().is_some_and(|n| p.contains(n))
            || p.contains(&g.compute_capability.to_string())
    })
}

// ---- the checker ----

/// What must hold for any recommendation (#20), whatever made it.
pub(super) fn check(
    t: &Tables,
    f: &Facts,
    req: &Request,
    rec: &Recommendation,
) -> Result<(), String> {
    let found = violations(t, f, req, rec);
    if found.is_empty() {
        return Ok(());
    }
    Err(found
        .iter()
        .map(|x| format!("[{}] {}", x.class, x.what))
        .collect::<Vec<_>>()
        .join("\n      "))
}

fn violations(t: &Tables, f: &Facts, req: &Request, rec: &Recommendation) -> Vec<Violation> {
    let mut out = Found::default();
    // A GPU only Jetson modules have: JetPack's answer, and none of a PC's rules apply
    // (nor the free-threaded ones: nothing is picked for any Python).
    let jetson_gpu = f.gpus.iter().any(|g| t.jetson_only(g.compute_capability));
    if jetson_gpu || rec.jetson.is_some() {
        messages(rec, &mut out);
        jetson(jetson_gpu, rec, &mut out);
        return out.0;
    }
    // A free-threaded Python installs only its `cpXYt` wheels: every rule holds over the
    // tables as that Python sees them (dossier §13.4).
    let view;
    let t = match (&f.python, f.free_threaded) {
        (Some(py), true) => {
            free_threaded(t, py, req, rec, &mut out);
            view = abi_view(t, py);
            &view
        }
        _ => t,
    };
    messages(rec, &mut out);
    basics(f, req, rec, &mut out);
    left_out(t, f, req, rec, &mut out);
    torch_pick(t, f, rec, &mut out);
    toolkit_pick(t, f, rec, &mut out);
    toolkit_missing(t, f, req, rec, &mut out);
    driver(t, f, rec, &mut out);
    newest_after_update(t, f, rec, &mut out);
    blocker_cause(t, f, rec, &mut out);
    carried(t, f, rec, &mut out);
    dossier_sm_check(f, rec, &mut out);
    out.0
}

/// The tables as free-threaded CPython `py` sees them: the patches with its wheels only.
fn abi_view(t: &Tables, py: &Version) -> Tables {
    let mut view = t.clone();
    for r in &mut view.pytorch.releases {
        r.patches.retain(|p| t.free_threaded_has(py, p));
    }
    view.pytorch.releases.retain(|r| !r.patches.is_empty());
    view
}

/// A free-threaded pick is a patch with the ABI's wheels, run by that interpreter,
/// without torchvision (no source lists its cpXYt wheels), with the reason; no patch with
/// the ABI at all is the ABI's own blocker.
fn free_threaded(t: &Tables, py: &Version, req: &Request, rec: &Recommendation, out: &mut Found) {
    let interpreter = match rec.os {
        Os::Linux => format!("python{py}t -m pip install "),
        Os::Windows => format!("py -{py}t -m pip install "),
    };
    if let Some(p) = &rec.torch {
        if !t.free_threaded_has(py, &p.version) {
            out.add(
                C8_FREE_THREADED,
                format!(
                    "torch {} has no cp{}{}t wheels",
                    p.version,
                    py.major(),
                    py.minor()
                ),
            );
        }
        if !p.command.starts_with(&interpreter) || p.command.contains("torchvision") {
            out.add(
                C8_FREE_THREADED,
                format!(
                    "command {:?}: want {interpreter:?}, no torchvision",
                    p.command
                ),
            );
        }
        if !has(&rec.reasons, "torch_free_threaded") {
            out.add(C8_FREE_THREADED, "no torch_free_threaded reason");
        }
    }
    let any = t
        .pytorch
        .releases
        .iter()
        .filter(|r| python_ok(r, Some(py)))
        .flat_map(|r| &r.patches)
        .any(|p| t.free_threaded_has(py, p));
    if req.goal == Goal::Pytorch
        && !any
        && !rec
            .blockers
            .iter()
            .any(|b| b.key.starts_with("torch_no_free_threaded"))
    {
        out.add(
            C8_FREE_THREADED,
            format!(
                "no release has cp{}{}t wheels, yet blockers are {:?}",
                py.major(),
                py.minor(),
                rec.blockers.iter().map(|b| b.key).collect::<Vec<_>>()
            ),
        );
    }
}

fn messages(rec: &Recommendation, out: &mut Found) {
    for m in rec.reasons.iter().chain(&rec.blockers) {
        if !i18n::has_key(m.key) {
            out.add(
                MESSAGES,
                format!("message key {} is not in the catalogue", m.key),
            );
            continue;
        }
        for lang in [Lang::En, Lang::Zh] {
            let text = i18n::render(m, lang);
            if text.contains('{') {
                out.add(
                    MESSAGES,
                    format!("{}: a parameter left unfilled in {lang:?}: {text:?}", m.key),
                );
            }
        }
    }
}

fn jetson(jetson_gpu: bool, rec: &Recommendation, out: &mut Found) {
    if !jetson_gpu {
        out.add(C9_JETSON, "the Jetson answer for GPUs a PC has");
    }
    if rec.jetson.is_none() {
        out.add(C9_JETSON, "a Jetson GPU, but a PC's answer");
    }
    if rec.toolkit.is_some() || rec.cudnn.is_some() || rec.torch.is_some() {
        out.add(C9_JETSON, "a desktop toolkit, cuDNN or torch wheel picked");
    }
    if rec.driver.action != DriverAction::None
        || rec.driver.install.is_some()
        || rec.driver.last_branch.is_some()
    {
        out.add(C9_JETSON, "driver advice on a Jetson board");
    }
    if !rec.blockers.is_empty() || !has(&rec.reasons, "jetson_torch") || rec.installable() {
        out.add(
            C9_JETSON,
            "blocked, installable, or no pointer to NVIDIA's Jetson wheels",
        );
    }
}

fn basics(f: &Facts, req: &Request, rec: &Recommendation, out: &mut Found) {
    if f.gpus.is_empty() {
        return;
    }
    if rec.blockers.is_empty() {
        match req.goal {
            Goal::Pytorch if rec.torch.is_none() => {
                out.add(BASICS, "PyTorch goal, no blocker, no torch pick")
            }
            Goal::Developer if rec.toolkit.is_none() => {
                out.add(BASICS, "developer goal, no blocker, no toolkit pick")
            }
            _ => {}
        }
        if f.driver.is_none() && rec.driver.action != DriverAction::Install {
            out.add(
                BASICS,
                format!("no driver, but action {:?}", rec.driver.action),
            );
        }
    } else if rec.toolkit.is_some() || (req.goal == Goal::Pytorch && rec.torch.is_some()) {
        out.add(BASICS, "blocked, yet something is recommended");
    }
}

/// The indices of `f.gpus` that `part` keeps.
fn kept(f: &Facts, rec: &Recommendation, part: Part) -> Vec<usize> {
    (0..f.gpus.len())
        .filter(|i| !rec.left_out.iter().any(|l| l.part == part && l.index == *i))
        .collect()
}

/// The indices of `f.gpus` some pick serves (all of them when nothing is picked).
fn served(f: &Facts, rec: &Recommendation) -> Vec<usize> {
    let mut parts = Vec::new();
    if rec.torch.is_some() {
        parts.push(Part::Torch);
    }
    if rec.toolkit.is_some() {
        parts.push(Part::Toolkit);
    }
    (0..f.gpus.len())
        .filter(|i| parts.is_empty() || parts.iter().any(|p| kept(f, rec, *p).contains(i)))
        .collect()
}

fn ccs_of(f: &Facts, idx: &[usize]) -> Vec<ComputeCapability> {
    idx.iter().map(|i| f.gpus[*i].compute_capability).collect()
}

fn left_out(t: &Tables, f: &Facts, req: &Request, rec: &Recommendation, out: &mut Found) {
    let n = f.gpus.len();
    for l in &rec.left_out {
        if l.index >= n || f.gpus[l.index] != l.gpu {
            out.add(
                C1_LEFT_OUT,
                format!(
                    "left_out index {} does not name {} in Facts::gpus",
                    l.index,
                    l.gpu.label()
                ),
            );
            continue;
        }
        let said = rec
            .reasons
            .iter()
            .filter(|m| m.key == "gpu_left_out")
            .any(|m| mentions(m, "gpu", &l.gpu));
        if !said {
            out.add(
                C1_LEFT_OUT,
                format!(
                    "{} left out ({:?}) without a gpu_left_out reason naming it",
                    l.gpu.label(),
                    l.part
                ),
            );
        }
    }
    let all: Vec<ComputeCapability> = f.gpus.iter().map(|g| g.compute_capability).collect();
    let gone: BTreeSet<usize> = rec.left_out.iter().map(|l| l.index).collect();
    let kept_all: Vec<String> = (0..n)
        .filter(|i| !gone.contains(i))
        .map(|i| i.to_string())
        .collect();
    let want = (!gone.is_empty()).then(|| kept_all.join(","));
    let got = rec.visible_devices.as_ref().map(|s| s.replace(' ', ""));
    if got != want {
        out.add(
            C1_LEFT_OUT,
            format!(
                "visible_devices {:?}, the GPUs kept are {want:?}",
                rec.visible_devices
            ),
        );
    }
    if !gone.is_empty() && kept_all.is_empty() && (rec.torch.is_some() || rec.toolkit.is_some()) {
        out.add(C1_LEFT_OUT, "every GPU left out, yet a pick is made");
    }
    let ceiling = last_branch(t, f);
    let py = f.python.as_ref();
    if rec.left_out.iter().any(|l| l.part == Part::Torch)
        && let Some((r, var)) =
            torch_pairs(t).find(|(r, var)| torch_covers(t, f.os, ceiling, r, var, py, &all))
    {
        out.add(
            C1_LEFT_OUT,
            format!(
                "a GPU is left out of torch, yet torch {} {} carries code for every GPU ({})",
                r.version,
                var.name,
                sms(&all)
            ),
        );
    }
    if rec.left_out.iter().any(|l| l.part == Part::Toolkit)
        && let Some(r) = t.toolkits.releases.iter().find(|r| {
            toolkit_usable(r, f.os, req)
                && all.iter().all(|g| r.builds_for(*g))
                && toolkit_need(t, f.os, r).is_some_and(|m| within(f.os, ceiling, m))
        })
    {
        out.add(
            C1_LEFT_OUT,
            format!(
                "a GPU is left out of the toolkit, yet CUDA {} builds for every GPU ({})",
                r.version,
                sms(&all)
            ),
        );
    }
}

fn sms(ccs: &[ComputeCapability]) -> String {
    ccs.iter().map(|c| c.sm()).collect::<Vec<_>>().join("+")
}

fn torch_release<'t>(t: &'t Tables, p: &TorchPick) -> Option<&'t TorchRelease> {
    t.pytorch
        .releases
        .iter()
        .find(|r| r.patches.contains(&p.version) || r.version == p.version.major_minor())
}

fn torch_pick(t: &Tables, f: &Facts, rec: &Recommendation, out: &mut Found) {
    let Some(p) = &rec.torch else { return };
    let Some(r) = torch_release(t, p) else {
        out.add(
            BASICS,
            format!("torch {} is in no release of the tables", p.version),
        );
        return;
    };
    let Some(var) = t
        .variant(&p.variant)
        .filter(|_| r.variants.contains(&p.variant))
    else {
        out.add(
            BASICS,
            format!("torch {} has no variant {}", r.version, p.variant),
        );
        return;
    };
    if let Some(py) = &f.python
        && !python_ok(r, Some(py))
    {
        out.add(
            C2_PYTHON,
            format!(
                "torch {} supports Python {}–{}, not {py}",
                p.version, r.python_min, r.python_max
            ),
        );
    }
    let keep = kept(f, rec, Part::Torch);
    match var.arch_for(&r.version) {
        Some(a) => {
            for i in &keep {
                let g = &f.gpus[*i];
                if !a.runs_on(g.compute_capability) {
                    let list: Vec<String> = a.sm.iter().map(|s| s.sm()).collect();
                    out.add(
                        C1_TORCH,
                        format!(
                            "torch {} {} carries {}{}: no code for GPU {i} {}, which is not left out",
                            p.version,
                            p.variant,
                            list.join(" "),
                            if a.ptx { " +PTX" } else { "" },
                            g.label()
                        ),
                    );
                }
            }
        }
        None => {
            // No list for this release: where the variant's lists for other releases
            // all lack a GPU (cu128 and sm_61, dossier §6.4), the toolkit's range
            // the engine falls back to claims code no wheel of that variant carries.
            for i in &keep {
                let g = &f.gpus[*i];
                if !var.arch.is_empty() && var.arch.iter().all(|a| !a.runs_on(g.compute_capability))
                {
                    let spans: Vec<String> = var
                        .arch
                        .iter()
                        .map(|a| format!("{}–{}: {}", a.torch_from, a.torch_to, sms(&a.sm)))
                        .collect();
                    out.add(
                        C1_TORCH,
                        format!(
                            "torch {} {} has no SM list; every list of {} ({}) lacks GPU {i} {}, which is not left out",
                            p.version,
                            p.variant,
                            var.name,
                            spans.join("; "),
                            g.label()
                        ),
                    );
                }
            }
            if p.confirmed {
                out.add(
                    C1_TORCH,
                    format!(
                        "torch {} {} has no first-hand SM list, yet the pick says confirmed",
                        p.version, p.variant
                    ),
                );
            }
            if !has(&rec.reasons, "torch_verify_after_install") {
                out.add(
                    C1_TORCH,
                    format!(
                        "torch {} {} has no first-hand SM list and no torch_verify_after_install reason",
                        p.version, p.variant
                    ),
                );
            }
        }
    }
    if f.os == Os::Windows {
        let pin = format!("torch=={}+{}", p.version, p.variant);
        if !p.command.contains(&pin) {
            out.add(
                C7_WINDOWS_PIN,
                format!(
                    "Windows command {:?} lacks {pin}: PyPI's CPU wheel can satisfy it",
                    p.command
                ),
            );
        }
        if let Some(rest) = p.command.split("torchvision==").nth(1) {
            let tv = rest.split_whitespace().next().unwrap_or("");
            if !tv.contains("+cu") {
                out.add(
                    C7_WINDOWS_PIN,
                    format!("Windows command pins torchvision=={tv} without +cuNNN"),
                );
            }
        }
    }
    if rec.goal == Goal::Developer
        && let Some(tk) = &rec.toolkit
        && var.cuda.major() != tk.version.major()
    {
        out.add(BASICS, "torch's CUDA major differs from the toolkit's");
    }
}

/// Developer goal without a toolkit: a release that builds for some of the GPUs should
/// be picked, leaving the others out (#20 class 1).
fn toolkit_missing(t: &Tables, f: &Facts, req: &Request, rec: &Recommendation, out: &mut Found) {
    if req.goal != Goal::Developer || rec.toolkit.is_some() || f.gpus.is_empty() {
        return;
    }
    let ceiling = last_branch(t, f);
    let usable = |r: &&ToolkitRelease| {
        toolkit_usable(r, f.os, req)
            && toolkit_need(t, f.os, r).is_some_and(|m| within(f.os, ceiling, m))
    };
    let keys: Vec<&str> = rec.blockers.iter().map(|m| m.key).collect();
    let all: Vec<ComputeCapability> = f.gpus.iter().map(|g| g.compute_capability).collect();
    if let Some(r) = t
        .toolkits
        .releases
        .iter()
        .rev()
        .filter(usable)
        .find(|r| all.iter().all(|g| r.builds_for(*g)))
    {
        out.add(
            C1_TOOLKIT,
            format!(
                "no toolkit (blockers {keys:?}), yet CUDA {} builds for {}",
                r.version,
                sms(&all)
            ),
        );
    } else if let Some(r) = t.toolkits.releases.iter().rev().find(|r| {
        toolkit_usable(r, f.os, req)
            && all.iter().any(|g| {
                r.builds_for(*g)
                    && toolkit_need(t, f.os, r)
                        .is_some_and(|m| within(f.os, last_branch_of(t, &[*g]), m))
            })
    }) {
        out.add(
            C1_LEFT_OUT,
            format!(
                "no toolkit (blockers {keys:?}) for {}, yet CUDA {} builds for some: pick one and leave the others out",
                sms(&all),
                r.version
            ),
        );
    }
}

fn toolkit_pick(t: &Tables, f: &Facts, rec: &Recommendation, out: &mut Found) {
    let Some(tk) = &rec.toolkit else { return };
    let Some(r) = t.toolkit(&tk.version) else {
        out.add(
            BASICS,
            format!("toolkit {} is not in the tables", tk.version),
        );
        return;
    };
    if r.preview {
        out.add(BASICS, format!("toolkit {} is a preview", tk.version));
    }
    for i in kept(f, rec, Part::Toolkit) {
        let g = &f.gpus[i];
        if !r.builds_for(g.compute_capability) {
            let list = if r.sm.is_empty() {
                format!("{}–{}", r.sm_min.sm(), r.sm_max.sm())
            } else {
                sms(&r.sm)
            };
            out.add(
                C1_TOOLKIT,
                format!(
                    "CUDA {} builds {list}: not for GPU {i} {}, which is not left out",
                    r.version,
                    g.label()
                ),
            );
        }
    }
}

/// What each pick needs of the driver, by name.
fn needs(t: &Tables, f: &Facts, rec: &Recommendation) -> Vec<(String, Version)> {
    let mut needs = Vec::new();
    if let Some(p) = &rec.torch
        && let Some(var) = t.variant(&p.variant)
        && let Some(fl) = line_floor(t, f.os, var.cuda.major())
    {
        needs.push((
            format!(
                "torch {} {} (cu{}x floor)",
                p.version,
                p.variant,
                var.cuda.major()
            ),
            fl.clone(),
        ));
    }
    if let Some(tk) = &rec.toolkit
        && let Some(r) = t.toolkit(&tk.version)
        && let Some(m) = toolkit_need(t, f.os, r)
    {
        needs.push((format!("CUDA {}", r.version), m.clone()));
    }
    for g in &f.gpus {
        if let Some(m) = arch_min(t, f.os, g.compute_capability) {
            needs.push((format!("{} (its architecture)", g.label()), m.clone()));
        }
    }
    needs
}

fn driver(t: &Tables, f: &Facts, rec: &Recommendation, out: &mut Found) {
    if f.gpus.is_empty() || !rec.blockers.is_empty() {
        return;
    }
    let adv = &rec.driver;
    let ceiling = last_branch_of(t, &ccs_of(f, &served(f, rec)));
    let os = f.os;
    // No driver runs every GPU (Kepler, whose last branch is R470, beside a Blackwell
    // card that needs 570): nothing the driver advice says can hold for both.
    if f.gpus
        .iter()
        .any(|g| arch_min(t, os, g.compute_capability).is_some_and(|m| !within(os, ceiling, m)))
    {
        return;
    }
    match (adv.action, &f.driver) {
        (DriverAction::None, None) => out.add(C3_DRIVER_NONE, "action none without a driver"),
        (DriverAction::None, Some(d)) => {
            if let Some(p) = &rec.torch
                && let Some(var) = t.variant(&p.variant)
                && let Some(fl) = line_floor(t, os, var.cuda.major())
                && d < fl
            {
                out.add(
                    C3_DRIVER_NONE,
                    format!(
                        "driver {d} is below the cu{}x floor {fl} of {} {}, action none",
                        var.cuda.major(),
                        p.version,
                        p.variant
                    ),
                );
            }
            if let Some(tk) = &rec.toolkit
                && let Some(r) = t.toolkit(&tk.version)
            {
                // Runs: at or above its published minimum, or NVML's CUDA figure reaches
                // it, or (minor-version compatibility, dossier §1.1) at or above its
                // line's floor.
                let published = r.driver_min(os).is_some_and(|m| d >= m);
                let nvml = f
                    .driver_cuda
                    .as_ref()
                    .is_some_and(|c| c.major_minor() >= r.version.major_minor());
                let minor = line_floor(t, os, r.version.major()).is_some_and(|fl| d >= fl);
                if !(published || nvml || minor) {
                    out.add(
                        C3_DRIVER_NONE,
                        format!("driver {d} does not run CUDA {} (action none)", r.version),
                    );
                }
            }
            for g in &f.gpus {
                if let Some(m) = arch_min(t, os, g.compute_capability)
                    && d < m
                {
                    out.add(
                        C3_DRIVER_NONE,
                        format!(
                            "{} needs driver {m}, the driver is {d}, action none",
                            g.label()
                        ),
                    );
                }
            }
            if let Some(m) = &adv.minimum
                && m > d
            {
                out.add(
                    C3_DRIVER_NONE,
                    format!("driver.minimum {m} is above the running driver {d}, action none"),
                );
            }
            if let Some(u) = &adv.upgrade_minimum {
                if u <= d {
                    out.add(
                        C3_DRIVER_NONE,
                        format!("upgrade_minimum {u} is not above the running driver {d}"),
                    );
                }
                if !within(os, ceiling, u) {
                    out.add(
                        C4_DRIVER_UPDATE,
                        format!(
                            "upgrade_minimum {u} is above the last branch R{}",
                            ceiling.unwrap_or(0)
                        ),
                    );
                }
            }
        }
        (action, current) => {
            let Some(m) = &adv.minimum else {
                out.add(
                    C4_DRIVER_UPDATE,
                    format!("action {action:?} without a minimum"),
                );
                return;
            };
            for (what, need) in needs(t, f, rec) {
                if m < &need {
                    out.add(
                        C4_DRIVER_UPDATE,
                        format!("driver.minimum {m} is below what {what} needs: {need}"),
                    );
                }
            }
            if !within(os, ceiling, m) {
                out.add(
                    C4_DRIVER_UPDATE,
                    format!(
                        "driver.minimum {m} is above the last branch R{} of these GPUs",
                        ceiling.unwrap_or(0)
                    ),
                );
            }
            if let Some(i) = &adv.install
                && !within(os, ceiling, &i.version)
            {
                out.add(
                    C4_DRIVER_UPDATE,
                    format!(
                        "the driver package {} is above the last branch R{}",
                        i.version,
                        ceiling.unwrap_or(0)
                    ),
                );
            }
            // (A driver above the GPUs' last branch cannot be running them: going back
            // to the branch is an update too.)
            if action == DriverAction::Update
                && let Some(d) = current
                && d >= m
                && within(os, ceiling, d)
            {
                out.add(
                    C4_DRIVER_UPDATE,
                    format!(
                        "update asked, yet the running driver {d} already meets the minimum {m}"
                    ),
                );
            }
            if let Some(u) = &adv.upgrade_minimum
                && !within(os, ceiling, u)
            {
                out.add(
                    C4_DRIVER_UPDATE,
                    format!("upgrade_minimum {u} above the last branch"),
                );
            }
        }
    }
    if let Some(b) = ceiling {
        if !has(&rec.reasons, "driver_last_branch") {
            out.add(
                C4_LAST_BRANCH,
                format!("these GPUs' last branch is R{b}, no driver_last_branch reason"),
            );
        }
        if adv.last_branch != Some(b) {
            out.add(
                C4_LAST_BRANCH,
                format!(
                    "DriverAdvice.last_branch {:?}, the GPUs' last branch is {b}",
                    adv.last_branch
                ),
            );
        }
    }
}

/// #20 class 4: the driver must change anyway, so the torch pick is what runs best after
/// the change: the newest confirmed release whose variant carries code for every GPU
/// kept and whose floor is within the GPUs' last branch.
fn newest_after_update(t: &Tables, f: &Facts, rec: &Recommendation, out: &mut Found) {
    if rec.driver.action == DriverAction::None || !rec.blockers.is_empty() {
        return;
    }
    let Some(p) = &rec.torch else { return };
    let keep = ccs_of(f, &kept(f, rec, Part::Torch));
    let ceiling = last_branch_of(t, &keep);
    let major = match (rec.goal, &rec.toolkit) {
        (Goal::Developer, Some(tk)) => Some(tk.version.major()),
        _ => None,
    };
    let best = torch_pairs(t)
        .filter(|(r, var)| {
            r.confirmed
                && r.variants_confirmed
                && var.arch_for(&r.version).is_some_and(|a| a.confirmed)
                && major.is_none_or(|m| var.cuda.major() == m)
                && torch_covers(t, f.os, ceiling, r, var, f.python.as_ref(), &keep)
        })
        .max_by(|a, b| a.0.version.cmp(&b.0.version));
    let Some((best, var)) = best else { return };
    let picked = p.version.major_minor();
    if picked != best.version {
        out.add(
            C4_NEWEST,
            format!(
                "driver action {:?}: after it, torch {} ({} …) is the newest confirmed build for {}; picked {} {}",
                rec.driver.action,
                best.version,
                var.name,
                sms(&keep),
                p.version,
                p.variant
            ),
        );
    }
}

/// The Pythons (other than `py`) for which some torch carries code for at least one of
/// the GPUs (a pick, leaving the others out), within the GPUs' last branch.
fn pythons_that_help(t: &Tables, f: &Facts, py: Option<&Version>) -> Vec<Version> {
    let ceiling = last_branch(t, f);
    PYTHONS
        .iter()
        .map(|p| v(p))
        .filter(|p| Some(p) != py)
        .filter(|p| python_would_pick(t, f, ceiling, Some(p)))
        .collect()
}

fn python_would_pick(t: &Tables, f: &Facts, _ceiling: Option<u32>, py: Option<&Version>) -> bool {
    // A pick for one GPU leaves the others out: only that GPU's last branch holds.
    torch_pairs(t).any(|(r, var)| {
        f.gpus.iter().any(|g| {
            let one = [g.compute_capability];
            torch_covers(t, f.os, last_branch_of(t, &one), r, var, py, &one)
        })
    })
}

fn blocker_cause(t: &Tables, f: &Facts, rec: &Recommendation, out: &mut Found) {
    if rec.goal != Goal::Pytorch || rec.torch.is_some() || f.gpus.is_empty() {
        return;
    }
    let ceiling = last_branch(t, f);
    let py = f.python.as_ref();
    let keys: Vec<&str> = rec.blockers.iter().map(|m| m.key).collect();
    if python_would_pick(t, f, ceiling, py) {
        let all: Vec<ComputeCapability> = f.gpus.iter().map(|g| g.compute_capability).collect();
        let whole =
            torch_pairs(t).find(|(r, var)| torch_covers(t, f.os, ceiling, r, var, py, &all));
        let (class, what) = match whole {
            Some((r, var)) => (
                C1_TORCH,
                format!(
                    "torch {} {} carries code for every GPU",
                    r.version, var.name
                ),
            ),
            None => (
                C1_LEFT_OUT,
                "a first-hand wheel runs on some of them: pick it and leave the others out"
                    .to_string(),
            ),
        };
        out.add(
            class,
            format!(
                "no torch pick (blockers {keys:?}) for {} with Python {}, yet {what}",
                sms(&all),
                py.map_or("?".into(), ToString::to_string),
            ),
        );
        return;
    }
    let Some(py) = py else { return };
    let help = pythons_that_help(t, f, Some(py));
    if help.is_empty() {
        if has(&rec.blockers, "torch_blocked_by_python") {
            out.add(
                C2_BLOCKER,
                "torch_blocked_by_python, yet no other Python has a first-hand wheel for these GPUs",
            );
        }
        return;
    }
    let helps: Vec<String> = help.iter().map(ToString::to_string).collect();
    if has(&rec.blockers, "no_torch_for_gpus") {
        out.add(
            C2_BLOCKER,
            format!(
                "no_torch_for_gpus blames the GPU for Python {py}; Python {} would get a wheel",
                helps.join(", ")
            ),
        );
    }
    match rec
        .blockers
        .iter()
        .find(|m| m.key == "torch_blocked_by_python")
    {
        None => out.add(
            C2_BLOCKER,
            format!(
                "Python {py}: blockers {keys:?}, want torch_blocked_by_python naming {}",
                helps.join(", ")
            ),
        ),
        Some(m) => {
            let listed = listed_pythons(m.param("pythons").unwrap_or(""));
            if !help.iter().any(|p| listed.contains(p)) {
                out.add(
                    C2_BLOCKER,
                    format!(
                        "torch_blocked_by_python pythons={:?} names none of {}",
                        m.param("pythons"),
                        helps.join(", ")
                    ),
                );
            }
        }
    }
}

/// The first and last CUDA `MAJOR.MINOR` whose nvcc builds for `gpu` (dossier §4.1),
/// independent of the tables: sm_86 from 11.1, sm_87 from 11.4, sm_89/sm_90 from 11.8,
/// sm_100/sm_120 from 12.8, sm_103/sm_121 from 12.9, Thor as sm_110 from 13.0; Kepler
/// up to 11.8 (12.0 dropped it), Maxwell to Volta up to 12.9 (13.0 dropped them).
fn dossier_sm_range(gpu: ComputeCapability) -> (Option<Version>, Option<Version>) {
    let first = match (gpu.major, gpu.minor) {
        (8, 6) => Some("11.1"),
        (8, 7) => Some("11.4"),
        (8, 9) | (9, 0) => Some("11.8"),
        (10, 0) | (12, 0) => Some("12.8"),
        (10, 3) | (12, 1) => Some("12.9"),
        (11, 0) => Some("13.0"),
        _ => None,
    };
    let last = match gpu.major {
        3 => Some("11.8"),
        5..=7 if gpu < ComputeCapability::new(7, 5) => Some("12.9"),
        _ => None,
    };
    (first.map(v), last.map(v))
}

fn dossier_sm_check(f: &Facts, rec: &Recommendation, out: &mut Found) {
    let Some(tk) = &rec.toolkit else { return };
    let mm = tk.version.major_minor();
    for i in kept(f, rec, Part::Toolkit) {
        let g = &f.gpus[i];
        let (first, last) = dossier_sm_range(g.compute_capability);
        if first.as_ref().is_some_and(|fst| mm < *fst) || last.as_ref().is_some_and(|l| mm > *l) {
            out.add(
                C5_SM_RANGE,
                format!(
                    "CUDA {} for GPU {i} {}: the dossier has its {} from CUDA {} to {}",
                    tk.version,
                    g.label(),
                    g.compute_capability.sm(),
                    first.map_or("11.0".into(), |x| x.to_string()),
                    last.map_or("now".into(), |x| x.to_string())
                ),
            );
        }
    }
}

/// #20 class 6: "the driver update comes with it" only of an installer that carries one.
fn carried(t: &Tables, f: &Facts, rec: &Recommendation, out: &mut Found) {
    let Some(tk) = &rec.toolkit else { return };
    let Some(r) = t.toolkit(&tk.version) else {
        return;
    };
    if r.carried_driver(f.os).is_some() {
        return;
    }
    for m in &rec.reasons {
        let text = i18n::render(m, Lang::En).to_lowercase();
        if text.contains("comes with it") || text.contains("driver update comes with") {
            out.add(
                C6_CARRIED,
                format!(
                    "CUDA {} ({:?}) carries no driver, yet {}: {text:?}",
                    r.version, f.os, m.key
                ),
            );
        }
    }
}

// ---- the sweep ----

/// One below a driver version: the last component less one (`525.60.13` → `525.60.12`,
/// `527.41` → `527.40`); a two-part Linux version gets a third part (`570.26` →
/// `570.25.99`, as Linux drivers have three); a zero borrows (`580.0` → `579.99`).
fn one_below(os: Os, d: &Version) -> Option<Version> {
    let mut p = d.parts().to_vec();
    let i = p.iter().rposition(|x| *x > 0)?;
    p[i] -= 1;
    for x in &mut p[i + 1..] {
        *x = 99;
    }
    if os == Os::Linux && p.len() == 2 {
        p.push(99);
    }
    Some(Version::new(&p))
}

/// Every distinct compute capability of gpus.toml (its architectures and its GPUs).
fn families(t: &Tables) -> Vec<ComputeCapability> {
    let mut s: BTreeSet<ComputeCapability> = BTreeSet::new();
    for a in &t.gpus.architectures {
        s.extend(a.compute_capabilities.iter().copied());
    }
    s.extend(t.gpus.gpus.iter().map(|g| g.cc));
    s.into_iter().collect()
}

/// The drivers the sweep tries on `os`: each line's floor, each architecture's
/// minimum and each release's published minimum, each at and one below; `full`
/// false keeps only the floors and architecture minimums (the two-GPU sweep).
fn drivers(t: &Tables, os: Os, full: bool) -> Vec<Version> {
    let mut at: BTreeSet<Version> = BTreeSet::new();
    for l in &t.toolkits.lines {
        at.insert(l.driver_floor(os).clone());
    }
    for a in &t.gpus.architectures {
        let m = a.driver_min(os);
        at.extend(m.cloned());
    }
    if full {
        for r in &t.toolkits.releases {
            at.extend(r.driver_min(os).cloned());
        }
    }
    let mut all: BTreeSet<Version> = BTreeSet::new();
    for d in &at {
        all.insert(d.clone());
        all.extend(one_below(os, d));
    }
    // Realistic drivers around the branches the issue names (Kepler on 390 and R470, a
    // data-centre 570 and 580, and a branch newer than every table row).
    let extra: &[&str] = match os {
        Os::Linux => &[
            "390.157",
            "470.256.02",
            "570.172.08",
            "580.95.05",
            "610.43.02",
        ],
        Os::Windows => &["391.35", "474.44", "560.94", "581.42", "610.47"],
    };
    all.extend(extra.iter().map(|s| v(s)));
    all.into_iter().collect()
}

/// The CUDA version NVML reports for driver `d` (drivers from 525 on): the newest
/// release whose published minimum the driver meets (on Windows, the 13.x rows have
/// none: their Linux minimum, which numbers the same branch).
fn nvml_cuda(t: &Tables, os: Os, d: &Version) -> Option<Version> {
    if d.major() < 525 {
        return None;
    }
    t.toolkits
        .releases
        .iter()
        .filter(|r| !r.preview && r.driver_confirmed)
        .filter(|r| {
            r.driver_min(os)
                .or(r.driver_linux.as_ref())
                .is_some_and(|m| m <= d)
        })
        .map(|r| r.version.major_minor())
        .max()
}

fn facts(
    os: Os,
    gpus: &[ComputeCapability],
    driver: Option<&Version>,
    cuda: Option<Version>,
    py: Option<&str>,
) -> Facts {
    Facts {
        os,
        gpus: gpus
            .iter()
            .map(|c| GpuFact {
                name: None,
                compute_capability: *c,
            })
            .collect(),
        driver: driver.cloned(),
        driver_cuda: cuda,
        python: py.map(|p| v(p.trim_end_matches('t'))),
        installed_toolkits: Vec::new(),
        unidentified_gpus: Vec::new(),
        notes: Vec::new(),
        host_kind: Default::default(),
        free_threaded: py.is_some_and(|p| p.ends_with('t')),
    }
}

#[derive(Default)]
struct Tally {
    cases: usize,
    failing_cases: usize,
    by_class: BTreeMap<&'static str, (usize, Vec<String>)>,
}

impl Tally {
    fn run(&mut self, t: &Tables, f: &Facts, goal: Goal) {
        let req = Request {
            goal,
            cuda: None,
            method: Method::Installer,
            driver: Default::default(),
            distro: None,
            ..Default::default()
        };
        let rec = recommend(t, f, &req);
        self.cases += 1;
        let found = violations(t, f, &req, &rec);
        if found.is_empty() {
            return;
        }
        self.failing_cases += 1;
        let seen: BTreeSet<&str> = found.iter().map(|x| x.class).collect();
        for x in &found {
            let e = self.by_class.entry(x.class).or_default();
            // A few examples per class, of different kinds (the first words differ).
            let kind: String = x.what.chars().take(24).collect();
            if e.1.len() < 6 && !e.1.iter().any(|s| s.contains(&format!("| {kind}"))) {
                e.1.push(format!("{} | {}", describe(f, goal), x.what));
            }
        }
        for c in seen {
            self.by_class.entry(c).or_default().0 += 1;
        }
    }

    fn merge(&mut self, other: Tally) {
        self.cases += other.cases;
        self.failing_cases += other.failing_cases;
        for (class, (n, examples)) in other.by_class {
            let e = self.by_class.entry(class).or_default();
            e.0 += n;
            for x in examples {
                if e.1.len() < 6 {
                    e.1.push(x);
                }
            }
        }
    }
}

fn describe(f: &Facts, goal: Goal) -> String {
    let gpus: Vec<String> = f.gpus.iter().map(|g| g.compute_capability.sm()).collect();
    format!(
        "{:?} {goal:?} {} driver {} (cuda {}) py {}",
        f.os,
        gpus.join("+"),
        f.driver.as_ref().map_or("none".into(), ToString::to_string),
        f.driver_cuda
            .as_ref()
            .map_or("-".into(), ToString::to_string),
        f.python.as_ref().map_or("?".into(), |p| {
            crate::version::PythonVersion::label(p, f.free_threaded)
        }),
    )
}

/// The drivers the two-GPU sweep tries: none, one below each architecture's minimum
/// (Blackwell: a 56x driver), and the 13.x floor at and one below.
fn pair_drivers(t: &Tables, os: Os) -> Vec<Option<Version>> {
    let mut ds = vec![None];
    let f13 = line_floor(t, os, 13).cloned();
    ds.push(f13.as_ref().and_then(|f| one_below(os, f)));
    ds.push(f13);
    ds.extend(
        t.gpus
            .architectures
            .iter()
            .filter_map(|a| a.driver_min(os))
            .map(|m| one_below(os, m)),
    );
    let mut seen = BTreeSet::new();
    ds.retain(|d| seen.insert(d.clone()));
    ds
}

/// The cases of the sweep (see the test below).
fn sweep_cases(t: &Tables) -> (Vec<(Facts, Goal)>, String) {
    let fams = families(t);
    let mut pythons: Vec<Option<&str>> = PYTHONS.iter().map(|p| Some(*p)).collect();
    pythons.push(None);
    // One-GPU cases also for the free-threaded builds (pairs keep to the regular ones).
    let mut single_pythons = pythons.clone();
    single_pythons.extend(FREE_THREADED.iter().map(|p| Some(*p)));
    let goals = [Goal::Pytorch, Goal::Developer];
    let mut cases = Vec::new();
    for os in [Os::Windows, Os::Linux] {
        // Floors, architecture minimums and the named drivers: every Python.
        let mut core: Vec<Option<Version>> = vec![None];
        core.extend(drivers(t, os, false).into_iter().map(Some));
        // Each published minimum, at and one below, and NVML's figure: Python 3.12.
        let every: Vec<Version> = drivers(t, os, true)
            .into_iter()
            .filter(|d| !core.contains(&Some(d.clone())))
            .collect();
        for g in &fams {
            for d in &core {
                for py in &single_pythons {
                    for goal in goals {
                        cases.push((facts(os, &[*g], d.as_ref(), None, *py), goal));
                    }
                }
            }
            for d in core.iter().flatten().chain(&every) {
                let nvml = nvml_cuda(t, os, d);
                for goal in goals {
                    let py = Some("3.12");
                    // Without NVML's figure the core drivers ran above, with every Python.
                    if every.contains(d) {
                        cases.push((facts(os, &[*g], Some(d), None, py), goal));
                    }
                    if nvml.is_some() {
                        cases.push((facts(os, &[*g], Some(d), nvml.clone(), py), goal));
                    }
                }
            }
        }
    }
    let singles = cases.len();
    for os in [Os::Windows, Os::Linux] {
        for (i, a) in fams.iter().enumerate() {
            for b in &fams[..i] {
                // The newer card first, as the issue's 5090 + 1080 Ti.
                for d in pair_drivers(t, os) {
                    for py in &pythons {
                        cases.push((facts(os, &[*a, *b], d.as_ref(), None, *py), Goal::Pytorch));
                        if matches!(*py, Some("3.12") | None) {
                            cases.push((
                                facts(os, &[*a, *b], d.as_ref(), None, *py),
                                Goal::Developer,
                            ));
                        }
                    }
                }
            }
        }
    }
    let size = format!(
        "{} cases: {singles} one-GPU ({} compute capabilities × Windows/Linux drivers at and one below every floor, architecture minimum and published minimum, with and without NVML's CUDA figure × Python 3.8–3.15, unknown and 3.13t–3.15t × 2 goals) and {} two-GPU ({} pairs)",
        cases.len(),
        fams.len(),
        cases.len() - singles,
        fams.len() * (fams.len() - 1) / 2,
    );
    (cases, size)
}

/// Every GPU family × driver × Python 3.8–3.15 and unknown × OS × goal, and every pair
/// of families in one PC: the invariants of `check` hold in every one. Runs on every
/// core (the engine is most of the time: about half a millisecond a case in debug).
#[test]
fn the_invariants_hold_for_every_family_driver_python_and_os() {
    let t = Tables::embedded().unwrap();
    let started = Instant::now();
    let (cases, size) = sweep_cases(&t);
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    let chunk = cases.len().div_ceil(threads);
    let mut tally = Tally::default();
    std::thread::scope(|s| {
        let handles: Vec<_> = cases
            .chunks(chunk)
            .map(|part| {
                let t = &t;
                s.spawn(move || {
                    let mut tally = Tally::default();
                    for (f, goal) in part {
                        tally.run(t, f, *goal);
                    }
                    tally
                })
            })
            .collect();
        for h in handles {
            tally.merge(h.join().unwrap());
        }
    });
    eprintln!(
        "#20 sweep: {size}; {:.1?} on {threads} threads; {} cases break an invariant",
        started.elapsed(),
        tally.failing_cases
    );
    let mut report = Vec::new();
    for (class, (n, examples)) in &tally.by_class {
        report.push(format!(
            "[{class}] {n} cases, e.g.\n      {}",
            examples.join("\n      ")
        ));
    }
    assert!(
        tally.cases > 10_000,
        "the sweep is too small: {}",
        tally.cases
    );
    assert!(
        tally.failing_cases == 0,
        "{} of {} cases break #20's invariants:\n{}",
        tally.failing_cases,
        tally.cases,
        report.join("\n")
    );
}

// ---- the named examples of the issue ----

type Expect = fn(&Tables, &Facts, &Recommendation) -> Result<(), String>;

struct Named {
    name: &'static str,
    os: Os,
    goal: Goal,
    gpus: &'static [(&'static str, &'static str)],
    driver: Option<&'static str>,
    driver_cuda: Option<&'static str>,
    python: Option<&'static str>,
    expect: Expect,
}

fn named_facts(c: &Named) -> Facts {
    Facts {
        os: c.os,
        gpus: c
            .gpus
            .iter()
            .map(|(name, c)| GpuFact {
                name: Some(name.to_string()),
                compute_capability: cc(c),
            })
            .collect(),
        driver: c.driver.map(v),
        driver_cuda: c.driver_cuda.map(v),
        python: c.python.map(v),
        installed_toolkits: Vec::new(),
        unidentified_gpus: Vec::new(),
        notes: Vec::new(),
        host_kind: Default::default(),
        free_threaded: false,
    }
}

const RTX_5090: (&str, &str) = ("NVIDIA GeForce RTX 5090", "12.0");
const GTX_1080_TI: (&str, &str) = ("NVIDIA GeForce GTX 1080 Ti", "6.1");
const RTX_4090: (&str, &str) = ("NVIDIA GeForce RTX 4090", "8.9");
const A100: (&str, &str) = ("NVIDIA A100-SXM4-80GB", "8.0");
const H100: (&str, &str) = ("NVIDIA H100 80GB HBM3", "9.0");
const K80: (&str, &str) = ("Tesla K80", "3.7");
const B300: (&str, &str) = ("NVIDIA B300", "10.3");
const ORIN: (&str, &str) = ("Orin (nvgpu)", "8.7");

/// #32: a Jetson Orin (what NVML names it on JetPack 6, driver 540.4.0, CUDA 12.6) gets
/// JetPack's answer: no pytorch.org wheel, no toolkit, no "R580 is its last line".
fn jetpack_answer(_: &Tables, _: &Facts, rec: &Recommendation) -> Result<(), String> {
    match &rec.jetson {
        Some(_)
            if rec.torch.is_none() && rec.toolkit.is_none() && rec.driver.last_branch.is_none() =>
        {
            Ok(())
        }
        _ => Err("a PC's answer on a Jetson Orin".into()),
    }
}

/// Class 1: the pick carries code for both cards, or says which it leaves out (and
/// never a cu128/cu129 wheel for sm_61: none carries sm_6x, dossier §6.4).
fn two_gpus_one_wheel(t: &Tables, f: &Facts, rec: &Recommendation) -> Result<(), String> {
    let pascal = f
        .gpus
        .iter()
        .position(|g| g.compute_capability == cc("6.1"))
        .unwrap();
    let left = |part| {
        rec.left_out
            .iter()
            .any(|l| l.part == part && l.index == pascal)
    };
    if let Some(p) = &rec.torch {
        let r = torch_release(t, p).ok_or("unknown torch")?;
        let first_hand = t
            .variant(&p.variant)
            .and_then(|var| var.arch_for(&r.version))
            .is_some_and(|a| a.runs_on(cc("6.1")));
        if !first_hand && !left(Part::Torch) {
            return Err(format!(
                "torch {} {} does not carry sm_61 first-hand, yet the GTX 1080 Ti is not left out",
                p.version, p.variant
            ));
        }
        if left(Part::Torch) && !has(&rec.reasons, "gpu_left_out") {
            return Err("the GTX 1080 Ti is left out without saying so".into());
        }
    } else if rec.goal == Goal::Pytorch {
        return Err(format!("no torch at all: {:?}", rec.blockers));
    }
    if let Some(tk) = &rec.toolkit {
        let r = t.toolkit(&tk.version).ok_or("unknown toolkit")?;
        if !r.builds_for(cc("6.1")) && !left(Part::Toolkit) {
            return Err(format!(
                "CUDA {} has no sm_61, the GTX 1080 Ti is not left out",
                r.version
            ));
        }
    }
    if !rec.left_out.is_empty() && rec.visible_devices.is_none() {
        return Err("a GPU left out, no CUDA_VISIBLE_DEVICES value".into());
    }
    Ok(())
}

/// Class 2: the Python is the cause; another Python is named.
fn python_is_the_cause(t: &Tables, f: &Facts, rec: &Recommendation) -> Result<(), String> {
    let py = f.python.as_ref().unwrap();
    if let Some(p) = &rec.torch {
        let r = torch_release(t, p).ok_or("unknown torch")?;
        return if python_ok(r, Some(py)) {
            Ok(())
        } else {
            Err(format!("torch {} does not support Python {py}", p.version))
        };
    }
    for wrong in ["no_torch_for_gpus", "no_torch_for_python"] {
        if has(&rec.blockers, wrong) {
            return Err(format!(
                "blocker {wrong} for Python {py}: want torch_blocked_by_python"
            ));
        }
    }
    let m = rec
        .blockers
        .iter()
        .find(|m| m.key == "torch_blocked_by_python")
        .ok_or_else(|| format!("no torch_blocked_by_python blocker: {:?}", rec.blockers))?;
    let listed = listed_pythons(m.param("pythons").unwrap_or(""));
    if !["3.10", "3.11", "3.12", "3.13", "3.14"]
        .iter()
        .any(|p| listed.contains(&v(p)))
    {
        return Err(format!(
            "pythons={:?} names no Python that has a wheel",
            m.param("pythons")
        ));
    }
    Ok(())
}

/// Python 3.8 and an RTX 5090: no torch for 3.8 carries sm_120, so no pick.
fn python_38_blackwell(t: &Tables, f: &Facts, rec: &Recommendation) -> Result<(), String> {
    if let Some(p) = &rec.torch {
        return Err(format!(
            "torch {} {} for Python 3.8 on sm_120",
            p.version, p.variant
        ));
    }
    python_is_the_cause(t, f, rec)
}

/// Class 3: nothing to change, and the minimum is not above the running driver.
fn minimum_at_most_the_driver(_: &Tables, f: &Facts, rec: &Recommendation) -> Result<(), String> {
    let d = f.driver.as_ref().unwrap();
    if rec.driver.action != DriverAction::None {
        return Err(format!(
            "action {:?} on a driver that runs it",
            rec.driver.action
        ));
    }
    match &rec.driver.minimum {
        Some(m) if m > d => Err(format!("driver.minimum {m} above the running driver {d}")),
        _ => Ok(()),
    }
}

/// The data-centre case of class 3, plus the toolkit NVML's figure allows.
fn data_centre_128(t: &Tables, f: &Facts, rec: &Recommendation) -> Result<(), String> {
    minimum_at_most_the_driver(t, f, rec)?;
    toolkit_line_is(rec, "12.8")
}

fn data_centre_130(t: &Tables, f: &Facts, rec: &Recommendation) -> Result<(), String> {
    minimum_at_most_the_driver(t, f, rec)?;
    toolkit_line_is(rec, "13.0")
}

fn toolkit_line_is(rec: &Recommendation, mm: &str) -> Result<(), String> {
    match &rec.toolkit {
        None if rec.goal == Goal::Pytorch => Ok(()),
        Some(tk) if tk.version.major_minor() == v(mm) => Ok(()),
        other => Err(format!(
            "toolkit {:?}, want CUDA {mm}.x (what NVML says the driver runs)",
            other.as_ref().map(|t| t.version.to_string())
        )),
    }
}

/// Class 4: RTX 50 on a 56x driver: update to the 58x branch for the newest build, not
/// to 570 for an older torch on cu128.
fn blackwell_on_56x(t: &Tables, f: &Facts, rec: &Recommendation) -> Result<(), String> {
    if rec.driver.action != DriverAction::Update {
        return Err(format!("action {:?}, want update", rec.driver.action));
    }
    let floor13 = line_floor(t, f.os, 13).unwrap();
    let m = rec.driver.minimum.as_ref().ok_or("no minimum")?;
    if m < floor13 {
        return Err(format!("minimum {m}: want the 58x branch (>= {floor13})"));
    }
    let p = rec.torch.as_ref().ok_or("no torch")?;
    if p.variant == "cu128" {
        return Err(format!("torch {} cu128 after an update to {m}", p.version));
    }
    let newest = t
        .pytorch
        .releases
        .iter()
        .filter(|r| r.confirmed && r.variants_confirmed && python_ok(r, f.python.as_ref()))
        .filter(|r| {
            r.variants.iter().any(|n| {
                t.variant(n)
                    .and_then(|var| var.arch_for(&r.version))
                    .is_some_and(|a| a.confirmed && a.runs_on(cc("12.0")))
            })
        })
        .map(|r| r.version.clone())
        .max()
        .ok_or("no confirmed torch for sm_120")?;
    if p.version.major_minor() != newest {
        return Err(format!(
            "torch {} {}, want the newest: {newest}",
            p.version, p.variant
        ));
    }
    Ok(())
}

/// Class 4: Kepler is on R470 for good: update to R470, never an offer above it, and
/// the reason says so.
fn kepler_r470(t: &Tables, f: &Facts, rec: &Recommendation) -> Result<(), String> {
    if rec.driver.action != DriverAction::Update {
        return Err(format!(
            "action {:?}, want update (390 is too old for CUDA 11.x)",
            rec.driver.action
        ));
    }
    let m = rec.driver.minimum.as_ref().ok_or("no minimum")?;
    if !within_branch(f.os, m, 470) {
        return Err(format!("minimum {m}: above Kepler's last branch R470"));
    }
    if let Some(u) = &rec.driver.upgrade_minimum
        && !within_branch(f.os, u, 470)
    {
        return Err(format!("offers {u}, which Kepler cannot run"));
    }
    if let Some(i) = &rec.driver.install
        && !within_branch(f.os, &i.version, 470)
    {
        return Err(format!("installs driver {}, above R470", i.version));
    }
    if !has(&rec.reasons, "driver_last_branch") {
        return Err("no driver_last_branch reason".into());
    }
    if rec.driver.last_branch != Some(470) {
        return Err(format!(
            "DriverAdvice.last_branch {:?}, want 470",
            rec.driver.last_branch
        ));
    }
    let tk = rec.toolkit.as_ref().ok_or("no toolkit")?;
    let r = t.toolkit(&tk.version).ok_or("unknown toolkit")?;
    if r.version.major() != 11 {
        return Err(format!(
            "CUDA {} for Kepler (12.0 dropped sm_35/37)",
            r.version
        ));
    }
    Ok(())
}

/// Class 5: 12.8 builds no sm_103 (first in 12.9, dossier §4.1).
fn no_128_for_b300(_: &Tables, _: &Facts, rec: &Recommendation) -> Result<(), String> {
    let tk = rec.toolkit.as_ref().ok_or("no toolkit")?;
    if tk.version.major_minor() == v("12.8") {
        return Err(format!("CUDA {} offered for sm_103", tk.version));
    }
    Ok(())
}

/// Class 6: a 13.x Windows installer carries no driver: nothing says it comes with it.
fn no_driver_in_13x_windows(t: &Tables, _: &Facts, rec: &Recommendation) -> Result<(), String> {
    let tk = rec.toolkit.as_ref().ok_or("no toolkit")?;
    let r = t.toolkit(&tk.version).ok_or("unknown toolkit")?;
    if r.version.major() < 13 {
        return Err(format!(
            "CUDA {}: a driver is installed anyway, so the newest toolkit (13.x) is the pick",
            r.version
        ));
    }
    if r.carried_driver(Os::Windows).is_some() {
        return Err(format!(
            "CUDA {} is said to carry a Windows driver (dossier §0: none)",
            r.version
        ));
    }
    for m in &rec.reasons {
        let text = i18n::render(m, Lang::En);
        if text.to_lowercase().contains("comes with it") {
            return Err(format!("{}: {text:?}", m.key));
        }
    }
    Ok(())
}

fn named() -> Vec<Named> {
    use Goal::{Developer as D, Pytorch as P};
    use Os::{Linux, Windows};
    #[allow(clippy::too_many_arguments)]
    fn c(
        name: &'static str,
        os: Os,
        goal: Goal,
        gpus: &'static [(&'static str, &'static str)],
        driver: Option<&'static str>,
        driver_cuda: Option<&'static str>,
        python: Option<&'static str>,
        expect: Expect,
    ) -> Named {
        Named {
            name,
            os,
            goal,
            gpus,
            driver,
            driver_cuda,
            python,
            expect,
        }
    }
    vec![
        // #32: Jetson.
        c(
            "Jetson Orin, JetPack 6 (driver 540.4.0, CUDA 12.6), py3.10",
            Linux,
            P,
            &[ORIN],
            Some("540.4.0"),
            Some("12.6"),
            Some("3.10"),
            jetpack_answer,
        ),
        c(
            "Jetson Orin, developer",
            Linux,
            D,
            &[ORIN],
            Some("540.4.0"),
            Some("12.6"),
            Some("3.10"),
            jetpack_answer,
        ),
        // Class 1.
        c(
            "5090 + 1080 Ti, Windows 581.42, py3.12",
            Windows,
            P,
            &[RTX_5090, GTX_1080_TI],
            Some("581.42"),
            None,
            Some("3.12"),
            two_gpus_one_wheel,
        ),
        c(
            "5090 + 1080 Ti, Linux 570.172.08, py3.12",
            Linux,
            P,
            &[RTX_5090, GTX_1080_TI],
            Some("570.172.08"),
            Some("12.8"),
            Some("3.12"),
            two_gpus_one_wheel,
        ),
        c(
            "1080 Ti + 5090, Windows 576.57, py3.11",
            Windows,
            P,
            &[GTX_1080_TI, RTX_5090],
            Some("576.57"),
            None,
            Some("3.11"),
            two_gpus_one_wheel,
        ),
        c(
            "5090 + 1080 Ti, Windows, no driver",
            Windows,
            P,
            &[RTX_5090, GTX_1080_TI],
            None,
            None,
            Some("3.12"),
            two_gpus_one_wheel,
        ),
        c(
            "5090 + 1080 Ti, developer, Linux 580.95.05",
            Linux,
            D,
            &[RTX_5090, GTX_1080_TI],
            Some("580.95.05"),
            Some("13.0"),
            Some("3.12"),
            two_gpus_one_wheel,
        ),
        // Class 2.
        c(
            "RTX 4090, Python 3.15, Windows",
            Windows,
            P,
            &[RTX_4090],
            Some("581.42"),
            None,
            Some("3.15"),
            python_is_the_cause,
        ),
        c(
            "RTX 5090, Python 3.15, Linux",
            Linux,
            P,
            &[RTX_5090],
            Some("580.95.05"),
            Some("13.0"),
            Some("3.15"),
            python_is_the_cause,
        ),
        c(
            "RTX 5090, Python 3.8, Windows",
            Windows,
            P,
            &[RTX_5090],
            Some("581.42"),
            None,
            Some("3.8"),
            python_38_blackwell,
        ),
        c(
            "RTX 5090, Python 3.8, Linux",
            Linux,
            P,
            &[RTX_5090],
            Some("580.95.05"),
            None,
            Some("3.8"),
            python_38_blackwell,
        ),
        c(
            "RTX 4090, Python 3.8, Linux",
            Linux,
            P,
            &[RTX_4090],
            Some("580.95.05"),
            None,
            Some("3.8"),
            python_is_the_cause,
        ),
        // Class 3.
        c(
            "A100, Linux 570.172.08 (NVML 12.8), developer",
            Linux,
            D,
            &[A100],
            Some("570.172.08"),
            Some("12.8"),
            Some("3.12"),
            data_centre_128,
        ),
        c(
            "H100, Linux 570.172.08 (NVML 12.8), pytorch",
            Linux,
            P,
            &[H100],
            Some("570.172.08"),
            Some("12.8"),
            Some("3.12"),
            minimum_at_most_the_driver,
        ),
        c(
            "A100, Linux 580.95.05 (NVML 13.0), developer",
            Linux,
            D,
            &[A100],
            Some("580.95.05"),
            Some("13.0"),
            Some("3.12"),
            data_centre_130,
        ),
        c(
            "H100, Linux 580.95.05 (NVML 13.0), developer",
            Linux,
            D,
            &[H100],
            Some("580.95.05"),
            Some("13.0"),
            None,
            data_centre_130,
        ),
        c(
            "A100, Linux 570.172.08, no NVML figure, developer",
            Linux,
            D,
            &[A100],
            Some("570.172.08"),
            None,
            Some("3.12"),
            minimum_at_most_the_driver,
        ),
        // Class 4.
        c(
            "RTX 5090, Windows 560.94, py3.12",
            Windows,
            P,
            &[RTX_5090],
            Some("560.94"),
            None,
            Some("3.12"),
            blackwell_on_56x,
        ),
        c(
            "RTX 5090, Linux 560.35.03, py3.13",
            Linux,
            P,
            &[RTX_5090],
            Some("560.35.03"),
            Some("12.6"),
            Some("3.13"),
            blackwell_on_56x,
        ),
        c(
            "Tesla K80, Linux 390.157, developer",
            Linux,
            D,
            &[K80],
            Some("390.157"),
            None,
            None,
            kepler_r470,
        ),
        c(
            "Tesla K80, Windows 391.35, developer",
            Windows,
            D,
            &[K80],
            Some("391.35"),
            None,
            None,
            kepler_r470,
        ),
        // Class 5.
        c(
            "B300, Linux 570.172.08 (NVML 12.8), developer",
            Linux,
            D,
            &[B300],
            Some("570.172.08"),
            Some("12.8"),
            None,
            no_128_for_b300,
        ),
        c(
            "B300, Linux 570.172.08, developer",
            Linux,
            D,
            &[B300],
            Some("570.172.08"),
            None,
            None,
            no_128_for_b300,
        ),
        c(
            "B300, Linux, no driver, developer",
            Linux,
            D,
            &[B300],
            None,
            None,
            None,
            no_128_for_b300,
        ),
        // Class 6.
        c(
            "RTX 5090, Windows, no driver, developer",
            Windows,
            D,
            &[RTX_5090],
            None,
            None,
            Some("3.12"),
            no_driver_in_13x_windows,
        ),
        c(
            "RTX 4090, Windows, no driver, developer",
            Windows,
            D,
            &[RTX_4090],
            None,
            None,
            Some("3.12"),
            no_driver_in_13x_windows,
        ),
    ]
}

/// The examples the issue names, each with the outcome the dossier gives, and the
/// invariants of `check` on top.
#[test]
fn the_issues_named_examples() {
    let t = Tables::embedded().unwrap();
    let mut failures = Vec::new();
    let cases = named();
    for c in &cases {
        let f = named_facts(c);
        let req = Request {
            goal: c.goal,
            cuda: None,
            method: Method::Installer,
            driver: Default::default(),
            distro: None,
            ..Default::default()
        };
        let rec = recommend(&t, &f, &req);
        let mut errs = Vec::new();
        if let Err(e) = (c.expect)(&t, &f, &rec) {
            errs.push(format!("[named] {e}"));
        }
        if let Err(e) = check(&t, &f, &req, &rec) {
            errs.push(e);
        }
        if !errs.is_empty() {
            failures.push(format!(
                "{}: {}\n      got torch={:?} toolkit={:?} driver={:?} min={:?} upgrade={:?} left_out={:?} blockers={:?}",
                c.name,
                errs.join("\n      "),
                rec.torch.as_ref().map(|p| format!("{} {}", p.version, p.variant)),
                rec.toolkit.as_ref().map(|p| p.version.to_string()),
                rec.driver.action,
                rec.driver.minimum.as_ref().map(ToString::to_string),
                rec.driver.upgrade_minimum.as_ref().map(ToString::to_string),
                rec.left_out.iter().map(|l| (l.index, l.part)).collect::<Vec<_>>(),
                rec.blockers.iter().map(|m| m.key).collect::<Vec<_>>(),
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} named cases fail:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The helpers themselves: one below, the pythons list, the branch ceiling.
#[test]
fn the_sweeps_helpers() {
    assert_eq!(one_below(Os::Linux, &v("570.26")), Some(v("570.25.99")));
    assert_eq!(one_below(Os::Linux, &v("525.60.13")), Some(v("525.60.12")));
    assert_eq!(one_below(Os::Windows, &v("527.41")), Some(v("527.40")));
    assert_eq!(one_below(Os::Windows, &v("580.0")), Some(v("579.99")));
    let l = listed_pythons("3.10–3.14");
    assert!(l.contains(&v("3.12")) && !l.contains(&v("3.15")) && !l.contains(&v("3.9")));
    let l = listed_pythons("3.11, 3.12");
    assert_eq!(l.len(), 2);
    assert!(within_branch(Os::Linux, &v("470.256.02"), 470));
    assert!(!within_branch(Os::Linux, &v("471.00"), 470));
    assert!(within_branch(Os::Windows, &v("474.44"), 470));
    assert!(!within_branch(Os::Windows, &v("496.13"), 470));
    let t = Tables::embedded().unwrap();
    assert_eq!(nvml_cuda(&t, Os::Linux, &v("570.172.08")), Some(v("12.8")));
    assert_eq!(nvml_cuda(&t, Os::Linux, &v("580.95.05")), Some(v("13.0")));
    assert_eq!(nvml_cuda(&t, Os::Windows, &v("581.42")), Some(v("13.0")));
    assert!(families(&t).len() >= 20);
    // #32: the Jetson-only compute capabilities are in the sweep (and take JetPack's answer).
    for jetson in ["7.2", "8.7", "11.0"] {
        assert!(
            families(&t).contains(&cc(jetson)) && t.jetson_only(cc(jetson)),
            "{jetson}"
        );
    }
    assert!(!t.jetson_only(cc("8.6")) && !t.jetson_only(cc("7.0")));
}
