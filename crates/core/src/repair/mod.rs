//! Repair: audit every layer (driver, toolkits, environment, cuDNN, interrupted work,
//! Python/torch), report findings with a plain explanation, and fix them through the
//! same executor as install. What is installed at all (the wizard's first page) is
//! [`existing`].

mod after;
mod checks;
mod existing;

pub use after::{
    AfterRun, EndChecks, after_run, checks_at_end, gpu_facts, on_machine, run_facts, with_torch,
};
pub use checks::restore_plan;
pub use existing::{Existing, Origin, existing};

use std::collections::BTreeMap;

use serde::Serialize;

use crate::compat::{Os, Tables};
use crate::cudnn::Depth;
use crate::detect::{self, Deadlines, SystemReport};
use crate::download::Cancel;
use crate::message::Message;
use crate::plan::Plan;
use crate::platform::Host;
use crate::recommend::Goal;
use crate::run::{self, RunEvent, RunReport};
use crate::steps::Step;
use crate::target::Target;
pub use crate::verify::verdict::Layer;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

/// How a finding is fixed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fix {
    /// Steps the executor runs.
    Steps { steps: Vec<Step> },
    /// Run again the install plan a killed run left in its journal.
    ResumeInstall,
    /// Something only the user can do (the message says what).
    Manual { how: Message },
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// A stable id (also the i18n key of `message`).
    pub id: &'static str,
    /// The layer it is about (the wizard's Done says a problem left on that layer's row).
    pub layer: Layer,
    pub severity: Severity,
    pub message: Message,
    pub fix: Fix,
}

impl Finding {
    pub fn fixable(&self) -> bool {
        !matches!(self.fix, Fix::Manual { .. })
    }
}

/// What repair looks at besides detection (what-if and sandbox runs give these).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub gpu_cc: Vec<crate::version::ComputeCapability>,
    pub driver: Option<crate::version::Version>,
}

/// The persistent environment a new console would get: Windows' registry (or a sandbox
/// root's record); on Linux the process environment with our profile script's values.
pub fn environment(target: &Target) -> BTreeMap<String, String> {
    let process: BTreeMap<String, String> = target
        .host
        .vars()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    match target.os {
        Os::Windows => {
            let view = crate::steps::env::windows_view(target);
            let mut env = if target.root.is_some() {
                BTreeMap::new()
            } else {
                process
            };
            env.retain(|k, _| !k.eq_ignore_ascii_case("Path"));
            env.extend(view);
            env
        }
        Os::Linux => {
            let mut env = process;
            let ours = crate::steps::env::profile_vars(target);
            if let Some(home) = ours.get("CUDA_HOME") {
                let path = env.get("PATH").cloned().unwrap_or_default();
                if !path.split(':').any(|p| p == format!("{home}/bin")) {
                    env.insert("PATH".into(), format!("{home}/bin:{path}"));
                }
                let ld = env.get("LD_LIBRARY_PATH").cloned().unwrap_or_default();
                env.insert(
                    "LD_LIBRARY_PATH".into(),
                    if ld.is_empty() {
                        format!("{home}/lib64")
                    } else {
                        format!("{home}/lib64:{ld}")
                    },
                );
            }
            env.extend(ours);
            env
        }
    }
}

/// The host repair looks at: the persistent environment, inside the root.
fn host_for(target: &Target, env: &BTreeMap<String, String>) -> Host {
    match &target.root {
        Some(root) => Host::sandbox(target.os, root, env.clone()),
        None => Host::real_with_env(env.clone()),
    }
}

/// Audits `target`. cuDNN files whose size and modification time match what we recorded
/// are trusted ([`Depth::Quick`]); [`audit_at`] with [`Depth::Deep`] re-reads them all.
pub fn audit(target: &Target, tables: &Tables, overrides: &Overrides) -> Vec<Finding> {
    audit_at(target, tables, overrides, Depth::Quick)
}

/// Audits `target`, reading our cuDNN files to `depth`.
///
/// Python is asked only when its answer can count — the torch checks need an NVIDIA GPU
/// with a known compute capability — and beside the other checks: each interpreter is a
/// child process (a pyenv shim alone is a third of a second of shell, importing torch can
/// take seconds), while the rest of the audit reads a few files.
pub fn audit_at(
    target: &Target,
    tables: &Tables,
    overrides: &Overrides,
    depth: Depth,
) -> Vec<Finding> {
    audit_report(target, tables, overrides, depth).0
}

/// [`audit_at`], and the detection its findings were judged on (inside the persistent
/// environment, overrides applied, the Pythons probed when a GPU makes them count): what
/// the verdict that ends `repair` reads, so the machine is not detected twice.
pub fn audit_report(
    target: &Target,
    tables: &Tables,
    overrides: &Overrides,
    depth: Depth,
) -> (Vec<Finding>, SystemReport) {
    let env = environment(target);
    tracing::debug!(root = ?target.root, depth = ?depth, vars = env.len(), "repair: audit started");
    let host = host_for(target, &env);
    let deadlines = Deadlines::default();
    let mut report = detect::detect_without_python(&host, tables, deadlines);
    apply_overrides(&mut report, tables, overrides);
    let (found, pythons) = std::thread::scope(|s| {
        let python = checks::wants_python(&report)
            .then(|| s.spawn(|| detect::python::probe(&host, deadlines.python)));
        // Each recorded interpreter asked beside the rest (a GPU or not: the record says
        // it was verified on one).
        let guarded = s.spawn(|| {
            let mut out = Vec::new();
            checks::guarded(target, &mut out);
            out
        });
        let input = |report| checks::Input {
            target,
            tables,
            report,
            env: &env,
            depth,
        };
        let mut out = checks::layers(&input(&report));
        let mut pythons = Vec::new();
        if let Some(h) = python {
            // A probe thread that panicked found no interpreter, as detection's would.
            let mut report = report.clone();
            report.pythons = h.join().unwrap_or_default();
            checks::python(&input(&report), &mut out);
            pythons = report.pythons;
        }
        let guarded = guarded.join().unwrap_or_default();
        // A swapped build is put back as it was verified, not replaced by a new pick.
        let restored: Vec<std::path::PathBuf> = guarded.iter().flat_map(torch_pythons).collect();
        out.retain(|f| !torch_pythons(f).any(|p| restored.contains(&p)));
        out.extend(guarded);
        (out, pythons)
    });
    report.pythons = pythons;
    for f in &found {
        tracing::debug!(id = f.id, severity = ?f.severity, fix = ?f.fix, "repair: finding");
    }
    tracing::info!(
        findings = found.len(),
        problems = problems(&found),
        "repair: audit done"
    );
    (found, report)
}

/// The interpreters a finding's fix installs torch into.
fn torch_pythons(f: &Finding) -> impl Iterator<Item = std::path::PathBuf> + '_ {
    let steps = match &f.fix {
        Fix::Steps { steps } => steps.as_slice(),
        _ => &[],
    };
    steps.iter().filter_map(|s| match s {
        Step::InstallTorch { python, .. } => Some(python.clone()),
        _ => None,
    })
}

/// The what-if flags over detection (`state get` applies them the same way).
pub fn apply_overrides(report: &mut SystemReport, tables: &Tables, o: &Overrides) {
    if let Some(d) = &o.driver {
        report.driver = Some(detect::DriverInfo {
            version: d.clone(),
            cuda_version: None,
            source: detect::gpu::DriverSource::Nvml,
        });
    }
    if !o.gpu_cc.is_empty() {
        report.gpus.retain(|g| !g.cuda_capable);
        for cc in &o.gpu_cc {
            report.gpus.push(detect::Gpu {
                name: format!("GPU sm_{}{}", cc.major, cc.minor),
                vendor: detect::gpu::Vendor::Nvidia,
                source: detect::GpuSource::Nvml,
                cuda_capable: true,
                compute_capability: Some(*cc),
                architecture: tables.architecture_of(*cc).map(|a| a.name.clone()),
                uuid: None,
                memory_total_bytes: None,
                memory_used_bytes: None,
                pci_bus_id: None,
                pci_device_id: None,
                kernel_driver: None,
                problem: None,
            });
        }
    }
}

/// Problems that count: warnings and errors.
pub fn problems(findings: &[Finding]) -> usize {
    findings
        .iter()
        .filter(|f| f.severity >= Severity::Warning)
        .count()
}

/// The result of `fix`: what ran, and the audit afterwards.
#[derive(Debug, Clone, Serialize)]
pub struct FixResult {
    pub runs: Vec<RunReport>,
    pub after: Vec<Finding>,
    /// The detection that audit judged (what the closing verdict reads).
    #[serde(skip)]
    pub report: Option<Box<SystemReport>>,
}

/// Applies every fixable finding's fix through the executor, then audits again.
pub fn fix(
    target: &Target,
    tables: &Tables,
    overrides: &Overrides,
    findings: &[Finding],
    on_event: &mut dyn FnMut(RunEvent),
) -> FixResult {
    let mut runs = Vec::new();
    let cancel = Cancel::default();
    tracing::info!(findings = findings.len(), "repair: fixing");
    if findings.iter().any(|f| f.fix == Fix::ResumeInstall)
        && let Some(plan) = run::interrupted_plan(target)
    {
        runs.push(run::run_blocking(&plan, target, &cancel, on_event));
    }
    let mut steps: Vec<Step> = Vec::new();
    for f in findings {
        if let Fix::Steps { steps: s } = &f.fix {
            for step in s {
                if !steps.contains(step) {
                    steps.push(step.clone());
                }
            }
        }
    }
    if !steps.is_empty() {
        let plan = Plan {
            format: 1,
            goal: Goal::Developer,
            os: target.os,
            root: target.root.clone(),
            toolkit: None,
            cudnn: None,
            torch_command: None,
            notes: vec![crate::plan::Note::Repair],
            steps,
        };
        runs.push(run::run_blocking(&plan, target, &cancel, on_event));
    }
    let (after, report) = audit_report(target, tables, overrides, Depth::Quick);
    FixResult {
        runs,
        after,
        report: Some(Box::new(report)),
    }
}

/// The toolkit folder's name for messages.
fn show(p: &std::path::Path) -> String {
    p.display().to_string()
}
