//! The verdict: is the graphics card usable *for the user's goal*, and if not, the cause
//! and the one fix that addresses it — or, honestly, that nothing here can fix it and
//! what the user can do. Decided once, here, from the typed outcomes of the smoke test
//! and the doctor and from detection's facts; the CLI and the wizard only render it
//! ([`render`]), so both say the same sentence.
//!
//! A fix never leads to a page that finds nothing: [`Fix::Repair`] is offered only for
//! causes repair's audit detects (the link names a build needs, `repair_toolkit_cannot_link`);
//! a cause no step of ours addresses gets [`Fix::Manual`].

use serde::Serialize;

use super::doctor::{DoctorReport, FindingKind, Severity};
use super::{SmokeOutcome, SmokeReport, Status};
use crate::i18n::{self, Lang};
use crate::message::Message;
use crate::recommend::{Facts, Goal};

/// Which results a page (or a command) judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The smoke test (the toolkit's own libraries on the GPU).
    Cuda,
    /// The doctor's check of torch in the chosen Python.
    Torch,
    /// Everything that ran, and what was skipped (the wizard's Done).
    All,
}

/// What [`decide`] reads.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    pub scope: Scope,
    pub goal: Goal,
    /// PyTorch was part of the run (a setup, not a repair): with no doctor report, it was
    /// skipped.
    pub torch_expected: bool,
    pub facts: Option<&'a Facts>,
    pub smoke: Option<&'a SmokeReport>,
    pub doctor: Option<&'a DoctorReport>,
    /// What this session's runs did to the driver (`repair::run_facts`).
    pub run: RunFacts,
}

/// What a run did that the checks cannot see yet: a driver it installed is invisible to
/// detection (and unused by the GPU) until the computer restarts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RunFacts {
    /// A run installed the display driver.
    pub driver_installed: bool,
    /// A run stopped for the restart that driver needs (or its installer asked for one).
    pub restart_pending: bool,
}

/// What works: the CUDA toolkit (smoke test) or PyTorch (doctor).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Works {
    Cuda,
    Torch,
}

/// What the speed-up was measured against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measured {
    /// PyTorch's own matrix product on the GPU and on the CPU.
    Torch,
    /// cuBLAS against the smoke test's one-core reference loop.
    Reference,
}

/// The layer a cause belongs to: the wizard's Done lists one row per layer, and the row
/// of the verdict's cause says it too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    Driver,
    Toolkit,
    Cudnn,
    Env,
    Torch,
    GpuTest,
}

/// Why the card is not usable yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    NoGpu,
    NoDriver,
    /// Detection names a driver, but the check could not load it (a new driver before
    /// its restart, or a broken install).
    DriverNotLoaded,
    /// This run installed the driver; it works after the computer restarts.
    RestartNeeded,
    DriverFailed,
    /// The toolkit's stub libcuda was loaded instead of the driver's.
    DriverStub,
    DriverTooOld,
    NoToolkit,
    ToolkitLacksArch,
    /// A library of the toolkit is missing or does not load.
    ToolkitIncomplete,
    /// Programs cannot be linked: link names are missing (repair's audit finds these).
    CannotLink,
    BuildFailed,
    NvccFailed,
    CudnnBroken,
    WrongResults,
    /// A GPU call failed, the copy came back changed, the test hung.
    GpuError,
    NoPython,
    PythonFailed,
    TorchMissing,
    TorchBroken,
    /// PyTorch does not start because a library it loads is missing (named in the fix).
    LibraryMissing,
    CpuTorch,
    TorchNotForGpu,
    CudaUnavailable,
    TorchCudnnMissing,
    TorchCheckFailed,
    /// PyTorch works, but a CUDA extension would not build.
    ExtensionBuild,
}

impl Cause {
    pub fn layer(self) -> Layer {
        use Cause::*;
        match self {
            NoGpu | NoDriver | DriverNotLoaded | RestartNeeded | DriverFailed | DriverTooOld => {
                Layer::Driver
            }
            DriverStub => Layer::Env,
            NoToolkit | ToolkitLacksArch | ToolkitIncomplete | CannotLink | BuildFailed
            | NvccFailed => Layer::Toolkit,
            CudnnBroken => Layer::Cudnn,
            WrongResults | GpuError => Layer::GpuTest,
            NoPython | PythonFailed | TorchMissing | TorchBroken | LibraryMissing | CpuTorch
            | TorchNotForGpu | CudaUnavailable | TorchCudnnMissing | TorchCheckFailed
            | ExtensionBuild => Layer::Torch,
        }
    }

    /// The cause in one plain sentence (no path, no command: those are details).
    fn key(self) -> &'static str {
        use Cause::*;
        match self {
            NoGpu => "verdict_cause_no_gpu",
            NoDriver => "verdict_cause_no_driver",
            DriverNotLoaded => "verdict_cause_driver_not_loaded",
            RestartNeeded => "verdict_cause_restart_needed",
            DriverFailed => "verdict_cause_driver_failed",
            DriverStub => "verdict_cause_driver_stub",
            DriverTooOld => "verdict_cause_driver_too_old",
            NoToolkit => "verdict_cause_no_toolkit",
            ToolkitLacksArch => "verdict_cause_toolkit_lacks_arch",
            ToolkitIncomplete => "verdict_cause_toolkit_incomplete",
            CannotLink => "verdict_cause_cannot_link",
            BuildFailed => "verdict_cause_build_failed",
            NvccFailed => "verdict_cause_nvcc_failed",
            CudnnBroken => "verdict_cause_cudnn_broken",
            WrongResults => "verdict_cause_wrong_results",
            GpuError => "verdict_cause_gpu_error",
            NoPython => "verdict_cause_no_python",
            PythonFailed => "verdict_cause_python_failed",
            TorchMissing => "verdict_cause_torch_missing",
            TorchBroken => "verdict_cause_torch_broken",
            LibraryMissing => "verdict_cause_library_missing",
            CpuTorch => "verdict_cause_cpu_torch",
            TorchNotForGpu => "verdict_cause_torch_not_for_gpu",
            CudaUnavailable => "verdict_cause_cuda_unavailable",
            TorchCudnnMissing => "verdict_cause_torch_cudnn_missing",
            TorchCheckFailed => "verdict_cause_torch_check_failed",
            ExtensionBuild => "verdict_cause_extension_build",
        }
    }
}

/// What fixes the cause.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fix {
    /// Plan a driver install (the recommender says which).
    InstallDriver,
    /// Plan a toolkit install (the developer goal).
    InstallToolkit,
    InstallTorch,
    ReinstallTorch,
    /// Repair's audit finds this cause and fixes it (or says exactly what to run).
    Repair,
    /// Restart the computer (the driver this run installed needs it); no button on Done.
    Restart,
    /// Nothing here fixes it; `how` says what the user can do.
    Manual {
        how: Message,
    },
    /// Nothing to fix (no NVIDIA graphics card).
    None,
}

impl Fix {
    fn manual(key: &'static str) -> Fix {
        Fix::Manual {
            how: Message::new(key),
        }
    }

    /// The wizard's button that does it (None: no button does).
    pub fn button_key(&self) -> Option<&'static str> {
        match self {
            Fix::InstallDriver => Some("ui_fix_install_driver"),
            Fix::InstallToolkit => Some("ui_fix_install_toolkit"),
            Fix::InstallTorch => Some("ui_install_pytorch"),
            Fix::ReinstallTorch => Some("ui_fix_reinstall_torch"),
            Fix::Repair => Some("ui_fix_repair"),
            Fix::Restart | Fix::Manual { .. } | Fix::None => None,
        }
    }

    /// The command a terminal user runs.
    fn cli_key(&self) -> Option<&'static str> {
        match self {
            Fix::InstallDriver => Some("verdict_cli_install_driver"),
            Fix::InstallToolkit => Some("verdict_cli_install_toolkit"),
            Fix::InstallTorch => Some("verdict_cli_install_torch"),
            Fix::ReinstallTorch => Some("verdict_cli_reinstall_torch"),
            Fix::Repair => Some("verdict_cli_repair"),
            Fix::Restart => Some("verdict_cli_restart"),
            Fix::Manual { .. } | Fix::None => None,
        }
    }
}

/// A cause, its fix, and the check's own message (its paths and raw text are details).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    pub cause: Cause,
    pub layer: Layer,
    pub fix: Fix,
    pub detail: Option<Message>,
}

impl Problem {
    fn new(cause: Cause, fix: Fix, detail: Option<Message>) -> Problem {
        Problem {
            cause,
            layer: cause.layer(),
            fix,
            detail,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Verdict {
    /// Nothing was checked yet.
    Pending,
    Ready {
        works: Works,
        gpu: String,
        /// Times faster than the CPU, when measured.
        speedup: Option<f64>,
        measured: Measured,
        /// A developer's check that failed while the goal's own works (amber, not red).
        secondary: Vec<Problem>,
    },
    NotYet {
        #[serde(flatten)]
        problem: Problem,
        secondary: Vec<Problem>,
    },
}

impl Verdict {
    /// The cause in the headline.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            Verdict::NotYet { problem, .. } => Some(problem),
            _ => None,
        }
    }

    pub fn secondary(&self) -> &[Problem] {
        match self {
            Verdict::Ready { secondary, .. } | Verdict::NotYet { secondary, .. } => secondary,
            Verdict::Pending => &[],
        }
    }

    fn secondary_mut(&mut self) -> Option<&mut Vec<Problem>> {
        match self {
            Verdict::Ready { secondary, .. } | Verdict::NotYet { secondary, .. } => Some(secondary),
            Verdict::Pending => None,
        }
    }
}

fn not_yet(cause: Cause, fix: Fix, detail: Option<Message>) -> Verdict {
    Verdict::NotYet {
        problem: Problem::new(cause, fix, detail),
        secondary: Vec::new(),
    }
}

/// The verdict for `i`.
pub fn decide(i: &Inputs) -> Verdict {
    let mut v = decide_checks(i);
    // "Not installed" would contradict the driver the System page and Done list: a check
    // that could not load a driver detection found says that instead, and a restart (not
    // a plan that installs nothing) is what helps.
    if let Verdict::NotYet { problem, .. } = &mut v
        && problem.cause == Cause::NoDriver
        && i.facts.is_some_and(|f| f.driver.is_some())
    {
        *problem = Problem::new(
            Cause::DriverNotLoaded,
            Fix::manual("verdict_how_restart"),
            problem.detail.clone(),
        );
    }
    // A driver this run installed: before the restart nothing can use it (and detection
    // may not see it), so "not installed" would contradict the run that just installed it.
    let driver_unseen = v.problem().is_some_and(|p| {
        matches!(
            p.cause,
            Cause::NoDriver | Cause::DriverNotLoaded | Cause::DriverFailed
        )
    });
    if i.run.restart_pending || (i.run.driver_installed && driver_unseen) {
        return not_yet(Cause::RestartNeeded, Fix::Restart, None);
    }
    if i.facts.is_some_and(Facts::wsl2) {
        windows_driver_fixes(&mut v);
    }
    v
}

/// Inside WSL2 (#32) the driver is the Windows one: installing one here breaks its
/// libcuda, and restarting Linux reloads nothing. Every driver fix becomes the Windows
/// driver's, then `wsl --shutdown`.
fn windows_driver_fixes(v: &mut Verdict) {
    let wsl = |p: &mut Problem| {
        let driver = matches!(p.cause, Cause::NoDriver | Cause::DriverNotLoaded)
            || p.fix == Fix::InstallDriver;
        if driver {
            p.fix = Fix::manual("verdict_how_wsl_driver");
        }
    };
    if let Verdict::NotYet { problem, .. } = v {
        wsl(problem);
    }
    if let Some(sec) = v.secondary_mut() {
        sec.iter_mut().for_each(wsl);
    }
}

fn decide_checks(i: &Inputs) -> Verdict {
    match i.scope {
        Scope::Cuda => i.smoke.map_or(Verdict::Pending, from_smoke),
        Scope::Torch => i.doctor.map_or(Verdict::Pending, from_doctor),
        Scope::All => {
            let smoke = i.smoke.map(from_smoke);
            let torch = i
                .doctor
                .map(from_doctor)
                .or_else(|| i.torch_expected.then(|| skipped_torch(i.facts)));
            let smoke_failed = smoke.as_ref().and_then(Verdict::problem).cloned();
            // A developer's toolkit comes first: PyTorch brings its own CUDA.
            if i.goal == Goal::Developer
                && let Some(s) = &smoke
                && smoke_failed.is_some()
            {
                return s.clone();
            }
            let from_torch = torch.is_some();
            let mut v = torch
                .or(smoke)
                .or_else(|| i.facts.and_then(blocked_by_facts))
                .unwrap_or(Verdict::Pending);
            // The smoke test is a developer's check beside PyTorch: its failure is an
            // amber line under PyTorch's verdict, not the headline.
            if from_torch
                && let Some(p) = smoke_failed
                && let Some(sec) = v.secondary_mut()
                && !sec.contains(&p)
            {
                sec.insert(0, p);
            }
            v
        }
    }
}

/// No GPU or no driver, as detection saw it.
fn blocked_by_facts(f: &Facts) -> Option<Verdict> {
    if f.gpus.is_empty() && f.unidentified_gpus.is_empty() {
        Some(not_yet(Cause::NoGpu, Fix::None, None))
    } else if f.driver.is_none() {
        Some(not_yet(Cause::NoDriver, Fix::InstallDriver, None))
    } else {
        None
    }
}

/// PyTorch was never checked: what stands in its way, else "not installed yet".
fn skipped_torch(facts: Option<&Facts>) -> Verdict {
    facts
        .and_then(blocked_by_facts)
        .unwrap_or_else(|| not_yet(Cause::TorchMissing, Fix::InstallTorch, None))
}

/// The smoke test's outcome as a cause and the fix that addresses it.
fn smoke_problem(outcome: SmokeOutcome) -> Option<(Cause, Fix)> {
    use SmokeOutcome as O;
    Some(match outcome {
        O::Passed => return None,
        O::NoGpu => (Cause::NoGpu, Fix::None),
        O::NoDriver => (Cause::NoDriver, Fix::InstallDriver),
        O::DriverFailed => (Cause::DriverFailed, Fix::manual("verdict_how_restart")),
        O::DriverStub => (Cause::DriverStub, Fix::manual("verdict_how_stub")),
        O::ToolkitNewerThanDriver => (Cause::DriverTooOld, Fix::InstallDriver),
        O::NoToolkit => (Cause::NoToolkit, Fix::InstallToolkit),
        O::ToolkitLacksArch => (Cause::ToolkitLacksArch, Fix::InstallToolkit),
        // Repair's audit checks nvcc and cudart, not cuBLAS nor what a library needs.
        O::LibraryMissing => (
            Cause::ToolkitIncomplete,
            Fix::manual("verdict_how_reinstall_toolkit"),
        ),
        O::GemmWrong => (
            Cause::WrongResults,
            Fix::manual("verdict_how_wrong_results"),
        ),
        O::NoSuchDevice | O::CudaCallFailed | O::CopyCorrupted | O::Timeout | O::Internal => {
            (Cause::GpuError, Fix::manual("verdict_how_retry"))
        }
        O::Cudnn => (Cause::CudnnBroken, Fix::manual("verdict_how_cudnn")),
        O::Nvcc => (Cause::NvccFailed, Fix::manual("verdict_how_build")),
        // `repair_toolkit_cannot_link` finds exactly these.
        O::CannotLink => (Cause::CannotLink, Fix::Repair),
        O::BuildFailed => (Cause::BuildFailed, Fix::manual("verdict_how_build")),
    })
}

fn from_smoke(s: &SmokeReport) -> Verdict {
    if s.status == Status::Passed {
        return Verdict::Ready {
            works: Works::Cuda,
            gpu: s
                .device
                .as_ref()
                .map(|d| d.name.clone())
                .unwrap_or_default(),
            speedup: s.checks.gemm.detail.speedup(),
            measured: Measured::Reference,
            secondary: Vec::new(),
        };
    }
    let (cause, fix) = smoke_problem(s.outcome).unwrap_or((Cause::NoGpu, Fix::None));
    not_yet(cause, fix, s.reason.clone())
}

/// A doctor's problem as a cause and its fix (None: about building extensions, or no
/// problem).
fn doctor_problem(kind: FindingKind) -> Option<(Cause, Fix)> {
    use FindingKind as K;
    Some(match kind {
        K::PythonNotFound => (Cause::NoPython, Fix::manual("verdict_how_python")),
        K::PythonFailed => (Cause::PythonFailed, Fix::manual("verdict_how_python")),
        K::TorchMissing => (Cause::TorchMissing, Fix::InstallTorch),
        K::TorchImportFailed => (Cause::TorchBroken, Fix::ReinstallTorch),
        // The finding's own fix names the library; `from_doctor` puts it in.
        K::TorchLibraryMissing => (Cause::LibraryMissing, Fix::ReinstallTorch),
        K::TorchCpuBuild => (Cause::CpuTorch, Fix::ReinstallTorch),
        K::NoDriver => (Cause::NoDriver, Fix::InstallDriver),
        K::TorchCudaTooNew => (Cause::DriverTooOld, Fix::InstallDriver),
        K::CudaUnavailable => (Cause::CudaUnavailable, Fix::manual("verdict_how_restart")),
        K::ArchMissing | K::GpuCheckNoKernel => (Cause::TorchNotForGpu, Fix::ReinstallTorch),
        K::GpuCheckWrong => (
            Cause::WrongResults,
            Fix::manual("verdict_how_wrong_results"),
        ),
        K::CudnnUnavailable => (Cause::TorchCudnnMissing, Fix::ReinstallTorch),
        K::GpuCheckFailed => (Cause::TorchCheckFailed, Fix::manual("verdict_how_retry")),
        _ => return None,
    })
}

/// The order a problem is told in when there are several: what stands first in the way.
fn doctor_rank(c: Cause) -> u8 {
    match c {
        Cause::NoPython | Cause::PythonFailed => 0,
        Cause::TorchMissing | Cause::TorchBroken | Cause::LibraryMissing | Cause::CpuTorch => 1,
        Cause::NoDriver => 2,
        Cause::DriverTooOld => 3,
        Cause::CudaUnavailable => 4,
        Cause::TorchNotForGpu => 5,
        Cause::WrongResults => 6,
        _ => 7,
    }
}

/// A missing library's fix is the finding's sentence naming it (#33), unless that fix is
/// reinstalling PyTorch (its commands are the finding's).
fn library_fix(f: &super::doctor::Finding, fix: Fix) -> Fix {
    match &f.fix {
        Some(own) if f.kind == FindingKind::TorchLibraryMissing && own.commands.is_empty() => {
            Fix::Manual {
                how: own.message.clone(),
            }
        }
        _ => fix,
    }
}

fn from_doctor(d: &DoctorReport) -> Verdict {
    let problems = || {
        d.findings
            .iter()
            .filter(|f| f.severity == Severity::Problem)
    };
    let extension = problems().find(|f| f.kind.is_extension()).map(|f| {
        Problem::new(
            Cause::ExtensionBuild,
            Fix::manual("verdict_how_extension"),
            Some(f.message.clone()),
        )
    });
    let with_secondary = |mut v: Verdict| {
        if let (Some(p), Some(sec)) = (extension.clone(), v.secondary_mut()) {
            sec.push(p);
        }
        v
    };
    let first = problems()
        .filter_map(|f| doctor_problem(f.kind).map(|(c, fix)| (c, library_fix(f, fix), f)))
        .min_by_key(|(c, _, _)| doctor_rank(*c));
    if d.python.is_none() || d.probe_error.is_some() {
        let (cause, fix, detail) = match first {
            Some((c, fix, f)) => (c, fix, Some(f.message.clone())),
            None => (Cause::NoPython, Fix::manual("verdict_how_python"), None),
        };
        return not_yet(cause, fix, detail);
    }
    if d.gpus.is_empty() {
        return not_yet(Cause::NoGpu, Fix::None, None);
    }
    if let Some((cause, fix, f)) = first {
        return with_secondary(not_yet(cause, fix, Some(f.message.clone())));
    }
    let Some(torch) = &d.torch else {
        return not_yet(Cause::TorchMissing, Fix::InstallTorch, None);
    };
    if torch.is_cpu_build() {
        return not_yet(Cause::CpuTorch, Fix::ReinstallTorch, None);
    }
    if d.status == Status::Skipped {
        return not_yet(Cause::NoGpu, Fix::None, None);
    }
    let check = d.check.as_ref().filter(|c| c.ok);
    with_secondary(Verdict::Ready {
        works: Works::Torch,
        gpu: torch
            .device_name
            .clone()
            .or_else(|| d.gpus.first().map(|g| g.name.clone()))
            .unwrap_or_default(),
        speedup: check.and_then(|c| c.speedup),
        measured: Measured::Torch,
        secondary: Vec::new(),
    })
}

// ---- rendering: one sentence for both front ends ----

/// Where the verdict is shown: the CLI may name commands; the wizard names the button
/// on the page (`button`: whether the page shows the fix's button).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    Cli,
    Wizard { button: bool },
}

/// The verdict in words: the headline (with the cause), the next step, and the amber
/// lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sentence {
    pub headline: String,
    pub next: Option<String>,
    pub secondary: Vec<String>,
}

/// "NVIDIA GeForce RTX 3060" → "RTX 3060": the name on the box.
fn short_gpu_name(name: &str) -> String {
    let mut n = name.trim();
    for prefix in ["NVIDIA ", "GeForce "] {
        n = n.strip_prefix(prefix).unwrap_or(n);
    }
    n.to_string()
}

/// 38.2 → "38", 3.46 → "3.5": whole times from ten up.
pub fn times(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// The cause in one plain sentence, in `lang`.
pub fn cause_text(lang: Lang, cause: Cause) -> String {
    i18n::t(lang, cause.key())
}

/// What to do next about `fix`, where it is shown.
fn next_text(lang: Lang, fix: &Fix, at: Surface) -> Option<String> {
    match (fix, at) {
        (Fix::Manual { how }, _) => Some(i18n::tf(
            lang,
            "verdict_manual",
            &[("how", &i18n::render(how, lang))],
        )),
        (Fix::None, _) => None,
        // No page's button restarts from Done: the wizard says it in words.
        (Fix::Restart, Surface::Wizard { .. }) => Some(i18n::t(lang, "verdict_restart")),
        (f, Surface::Cli) => f.cli_key().map(|k| i18n::t(lang, k)),
        (f, Surface::Wizard { button: true }) => f
            .button_key()
            .map(|b| i18n::tf(lang, "verdict_press", &[("button", &i18n::t(lang, b))])),
        (_, Surface::Wizard { button: false }) => None,
    }
}

/// The verdict as the user reads it (None while nothing was checked).
pub fn render(v: &Verdict, lang: Lang, at: Surface) -> Option<Sentence> {
    let headline = match v {
        Verdict::Pending => return None,
        Verdict::Ready {
            works,
            gpu,
            speedup,
            ..
        } => {
            let gpu = short_gpu_name(gpu);
            match (works, speedup) {
                (Works::Torch, Some(x)) => i18n::tf(
                    lang,
                    "verdict_ready_torch_speed",
                    &[("gpu", &gpu), ("times", &times(*x))],
                ),
                (Works::Torch, None) => i18n::tf(lang, "verdict_ready_torch", &[("gpu", &gpu)]),
                (Works::Cuda, Some(x)) => i18n::tf(
                    lang,
                    "verdict_ready_cuda_speed",
                    &[("gpu", &gpu), ("times", &times(*x))],
                ),
                (Works::Cuda, None) => i18n::tf(lang, "verdict_ready_cuda", &[("gpu", &gpu)]),
            }
        }
        Verdict::NotYet { problem, .. } => i18n::tf(
            lang,
            "verdict_not_yet",
            &[("cause", &cause_text(lang, problem.cause))],
        ),
    };
    let next = v.problem().and_then(|p| next_text(lang, &p.fix, at));
    // An amber line has no button of its own: the wizard says what to do in words.
    let secondary_at = match at {
        Surface::Cli => Surface::Cli,
        Surface::Wizard { .. } => Surface::Wizard { button: false },
    };
    let secondary = v
        .secondary()
        .iter()
        .map(|p| {
            let next = next_text(lang, &p.fix, secondary_at).unwrap_or_default();
            i18n::tf(
                lang,
                "verdict_also",
                &[("cause", &cause_text(lang, p.cause)), ("next", &next)],
            )
            .trim_end()
            .to_string()
        })
        .collect();
    Some(Sentence {
        headline,
        next,
        secondary,
    })
}

/// The technical words behind a problem — the check's paths, files and the library's
/// error, one `name: value` a line — for Details (the wizard) or a log. The check's
/// own sentence is not repeated: it may name a command, and the verdict already says
/// what to do.
pub fn details(p: &Problem) -> Option<String> {
    let m = p.detail.as_ref()?;
    let lines: Vec<String> = m
        .params
        .iter()
        .map(|(name, value)| format!("{name}: {value}"))
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

#[cfg(test)]
mod tests;
