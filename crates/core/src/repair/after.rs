//! What follows an install or a repair: which checks run ([`checks_at_end`]) and the
//! verdict from them ([`after_run`]), so `install`, `repair` and the wizard end on the
//! same checks and the same sentence.

use std::path::PathBuf;

use serde::Serialize;

use crate::compat::Tables;
use crate::detect::{Deadlines, python::PythonInstall};
use crate::plan::Plan;
use crate::recommend::{Facts, Goal};
use crate::run::RunReport;
use crate::steps::{Step, StepKind};
use crate::target::Target;
use crate::verify::doctor::{self, DoctorOptions, GpuFacts, GpuSummary};
use crate::verify::verdict::{Inputs, RunFacts, Scope, Verdict, decide};
use crate::verify::{self, SmokeOptions};

/// What `runs` did that the checks cannot see yet: the driver they installed, and
/// whether it waits for a restart.
pub fn run_facts<'a>(runs: impl IntoIterator<Item = &'a RunReport>) -> RunFacts {
    let mut f = RunFacts::default();
    for r in runs {
        let driver = r
            .steps
            .iter()
            .any(|s| s.name == StepKind::InstallDriver && s.changed);
        f.driver_installed |= driver;
        f.restart_pending |=
            r.failure.is_none() && (r.restart_pending || (driver && r.reboot_required));
    }
    f
}

/// The checks that end a run, for the user's goal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct EndChecks {
    /// The doctor on the Python with torch (the PyTorch goal).
    pub doctor: bool,
    /// The smoke test on the toolkit (the developer goal).
    pub smoke: bool,
}

/// The target is this machine, not a `--root` sandbox: only there can the smoke test run
/// (it loads this machine's driver, which cannot be pointed into a sandbox).
pub fn on_machine(t: &Target) -> bool {
    t.root.is_none() && t.host.root_is_real()
}

/// Which checks follow `runs` (none: an audit alone). None after a failure or a cancel
/// (the failure is what the user is told), nor while a new driver waits for its restart
/// (the GPU is not usable before it). The smoke test loads this computer's driver, which
/// cannot be redirected into a sandbox root: it runs only `on_machine`.
pub fn checks_at_end(goal: Goal, runs: &[RunReport], on_machine: bool) -> EndChecks {
    let stopped = runs.iter().any(|r| !r.ok());
    if stopped || run_facts(runs).restart_pending {
        return EndChecks::default();
    }
    match goal {
        Goal::Pytorch => EndChecks {
            doctor: true,
            smoke: false,
        },
        Goal::Developer => EndChecks {
            doctor: false,
            smoke: on_machine,
        },
    }
}

/// What [`after_run`] reads.
pub struct AfterRun<'a> {
    pub target: &'a Target,
    pub tables: &'a Tables,
    pub goal: Goal,
    /// What ran (an install's one run, repair's fixes; empty for an audit alone).
    pub runs: &'a [RunReport],
    /// Detection's facts, the what-if flags applied.
    pub facts: &'a Facts,
    /// The Python to examine (None: the one the plan installed torch into, else the one
    /// detection finds with torch, else the first on PATH).
    pub python: Option<PathBuf>,
}

/// Runs the checks [`checks_at_end`] names and decides the verdict for the goal.
pub fn after_run(a: &AfterRun) -> Verdict {
    let t = a.target;
    let checks = checks_at_end(a.goal, a.runs, on_machine(t));
    let run = run_facts(a.runs);
    let doctor = checks.doctor.then(|| {
        let python = a
            .python
            .clone()
            .or_else(|| plans(a.runs).find_map(torch_python))
            .or_else(|| {
                let found = crate::detect::python::probe(&t.host, Deadlines::default().python);
                with_torch(&found)
            });
        let opts = DoctorOptions {
            python,
            ..Default::default()
        };
        let mut report = doctor::examine(&t.host, a.tables, &opts, &gpu_facts(a.facts));
        // A build verified here is recorded; ours, just installed, is pinned (#33).
        crate::guard::after_doctor(t, &mut report);
        report
    });
    let smoke = checks.smoke.then(|| {
        let opts = SmokeOptions {
            cuda_dir: plans(a.runs).find_map(toolkit_dir),
            ..Default::default()
        };
        verify::smoke(&t.host, a.tables, &opts)
    });
    // A check that passed records the driver it passed on (#33, `driverwatch`).
    if let Some(d) = &doctor {
        crate::driverwatch::after_doctor(t, d, run.driver_installed);
    }
    if let Some(s) = &smoke {
        crate::driverwatch::after_smoke(t, s, run.driver_installed);
    }
    let verdict = if doctor.is_none() && smoke.is_none() && !run.restart_pending {
        // Nothing was checked (a failure says what happened).
        Verdict::Pending
    } else {
        decide(&Inputs {
            scope: Scope::All,
            goal: a.goal,
            torch_expected: false,
            facts: Some(a.facts),
            smoke: smoke.as_ref(),
            doctor: doctor.as_ref(),
            run,
        })
    };
    // What a lab's table shows as this PC's last GPU check (#36); only a check's verdict.
    if doctor.is_some() || smoke.is_some() {
        crate::last_check::record(t, &verdict);
    }
    verdict
}

/// What the doctor knows of the GPUs: detection's facts.
pub fn gpu_facts(f: &Facts) -> GpuFacts {
    GpuFacts {
        driver: f.driver.clone(),
        driver_cuda: f.driver_cuda.clone(),
        gpus: f
            .gpus
            .iter()
            .map(|g| GpuSummary {
                name: g.name.clone().unwrap_or_else(|| g.compute_capability.sm()),
                compute_capability: Some(g.compute_capability),
            })
            .collect(),
    }
}

fn plans(runs: &[RunReport]) -> impl Iterator<Item = &Plan> {
    runs.iter().map(|r| &r.plan)
}

/// The Python a plan installs torch into.
fn torch_python(p: &Plan) -> Option<PathBuf> {
    p.steps.iter().find_map(|s| match s {
        Step::InstallTorch { python, .. } => Some(python.clone()),
        _ => None,
    })
}

/// The toolkit a plan verified (the one it installed).
fn toolkit_dir(p: &Plan) -> Option<PathBuf> {
    p.steps.iter().find_map(|s| match s {
        Step::Verify { cuda_dir, .. } => Some(cuda_dir.clone()),
        _ => None,
    })
}

/// The Python whose torch is checked when none was chosen: a CUDA build first, then
/// any torch (the wizard's repair mode picks the same).
pub fn with_torch(pythons: &[PythonInstall]) -> Option<PathBuf> {
    let find = |cuda: bool| {
        pythons
            .iter()
            .find(|p| p.torch.as_ref().is_some_and(|t| !cuda || !t.is_cpu_build()))
    };
    find(true).or_else(|| find(false)).map(|p| p.path.clone())
}
