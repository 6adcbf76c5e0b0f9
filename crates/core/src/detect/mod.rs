//! Detection: what this machine has. Every probe runs concurrently with a deadline; a
//! probe that fails or times out is reported with its reason and the rest goes on.
//! Nothing here panics on a machine with no GPU, no driver, no Python.

pub mod cudnn;
pub mod gpu;
pub mod jetson;
pub mod python;
pub mod system;
pub mod toolkit;
pub mod wsl;

use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::compat::Tables;
use crate::platform::{Host, RunError};

pub use cudnn::CudnnInstall;
pub use gpu::{DeviceProblem, DriverInfo, Gpu, GpuProbe, GpuProblem, GpuSource};
pub use python::{PythonInstall, TorchInfo};
pub use system::SystemInfo;
pub use toolkit::Toolkit;

/// Why a probe found nothing usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProbeError {
    #[error("{what} is not present: {detail}")]
    Missing { what: String, detail: String },
    #[error("{what} failed: {detail}")]
    Failed { what: String, detail: String },
    #[error(transparent)]
    Run(#[from] RunError),
    #[error("probe {probe} did not finish within {seconds} s")]
    Timeout { probe: String, seconds: u64 },
}

/// How one probe went.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeStatus {
    pub name: &'static str,
    pub ok: bool,
    pub error: Option<ProbeError>,
    pub elapsed_ms: u64,
}

/// Everything detection found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SystemReport {
    pub system: Option<SystemInfo>,
    pub driver: Option<DriverInfo>,
    /// Why no driver was found (NVML's error), when `driver` is null.
    pub driver_error: Option<ProbeError>,
    pub gpus: Vec<Gpu>,
    pub toolkits: Vec<Toolkit>,
    pub cudnn: Vec<CudnnInstall>,
    pub pythons: Vec<PythonInstall>,
    pub probes: Vec<ProbeStatus>,
    pub elapsed_ms: u64,
    /// A plain PC, WSL2 or a Jetson board (#32): read from the host's files before the
    /// other probes, since it changes where they look.
    pub host_kind: crate::recommend::HostKind,
    /// Native Windows: the WSL distributions registered for this user (#32): WSL2 is
    /// TensorFlow's own way to a GPU on Windows (dossier §9).
    pub wsl_distributions: Vec<String>,
}

impl SystemReport {
    /// NVIDIA GPUs that can run CUDA (with or without a working driver).
    pub fn nvidia_gpus(&self) -> impl Iterator<Item = &Gpu> {
        self.gpus.iter().filter(|g| g.cuda_capable)
    }

    /// The toolkit that PATH's `nvcc` resolves to, if any.
    pub fn active_toolkit(&self) -> Option<&Toolkit> {
        self.toolkits.iter().find(|t| t.active)
    }
}

/// How long each probe may take (Python imports torch, which can take seconds).
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    pub quick: Duration,
    pub python: Duration,
}

impl Default for Deadlines {
    fn default() -> Self {
        Deadlines {
            quick: Duration::from_secs(10),
            python: Duration::from_secs(30),
        }
    }
}

enum Found {
    System(SystemInfo),
    Gpus(GpuProbe),
    Toolkits(Vec<Toolkit>, Vec<CudnnInstall>),
    Pythons(Vec<PythonInstall>),
}

type ProbeFn = fn(&Host, &Tables, Duration) -> Result<Found, ProbeError>;

/// Where this runs (#32): a plain PC, Linux inside WSL2 or a Jetson board, read from a
/// few of the host's files. Cheap, so what-if runs that skip detection ask it too.
pub fn host_kind(host: &Host) -> crate::recommend::HostKind {
    if wsl::is_wsl2(host) {
        return crate::recommend::HostKind::Wsl2;
    }
    jetson::probe(host).unwrap_or_default()
}

/// Runs every probe concurrently and gathers what they found.
pub fn detect(host: &Host, tables: &Tables, deadlines: Deadlines) -> SystemReport {
    detect_some(host, tables, deadlines, true)
}

/// Everything but the Python interpreters (`pythons` stays empty, no `python` probe
/// status): repair's audit asks them itself, and only when a GPU makes their answer count
/// — each is a child process, and a pyenv shim alone is a third of a second of shell.
pub fn detect_without_python(host: &Host, tables: &Tables, deadlines: Deadlines) -> SystemReport {
    detect_some(host, tables, deadlines, false)
}

fn detect_some(host: &Host, tables: &Tables, deadlines: Deadlines, python: bool) -> SystemReport {
    let start = Instant::now();
    let mut probes: Vec<(&'static str, ProbeFn, Duration)> = vec![
        (
            "system",
            |h, _, _| Ok(Found::System(system::probe(h))),
            deadlines.quick,
        ),
        (
            "gpu",
            |h, t, d| gpu::probe(h, t, d).map(Found::Gpus),
            deadlines.quick,
        ),
        (
            "toolkit",
            |h, _, d| {
                let toolkits = toolkit::probe(h, d);
                let cudnn = cudnn::probe(h, &toolkits);
                Ok(Found::Toolkits(toolkits, cudnn))
            },
            deadlines.quick,
        ),
        (
            "python",
            |h, _, d| Ok(Found::Pythons(python::probe(h, d))),
            deadlines.python,
        ),
    ];
    if !python {
        probes.retain(|(name, _, _)| *name != "python");
    }
    tracing::debug!(root = %host.system_path("/").display(), python, "detect: probes started");
    let host = Arc::new(host.clone());
    let tables = Arc::new(tables.clone());
    let (tx, rx) = mpsc::channel();
    for &(name, f, deadline) in &probes {
        let (tx, host, tables) = (tx.clone(), host.clone(), tables.clone());
        // Detached on purpose: a probe stuck in a driver call must not hold up the report.
        std::thread::spawn(move || {
            let t0 = Instant::now();
            let r = f(&host, &tables, deadline);
            let _ = tx.send((name, r, t0.elapsed()));
        });
    }
    drop(tx);

    let mut report = SystemReport {
        host_kind: host_kind(&host),
        wsl_distributions: wsl::windows_distributions(&host),
        ..Default::default()
    };
    let mut pending: Vec<(&'static str, Duration)> =
        probes.iter().map(|(n, _, d)| (*n, *d)).collect();
    let overall = probes.iter().map(|p| p.2).max().unwrap_or_default() + Duration::from_millis(500);
    while !pending.is_empty() {
        let left = overall.saturating_sub(start.elapsed());
        let Ok((name, result, took)) = rx.recv_timeout(left) else {
            break;
        };
        pending.retain(|(n, _)| *n != name);
        tracing::debug!(
            probe = name,
            ok = result.is_ok(),
            ms = took.as_millis() as u64,
            "detect: probe finished"
        );
        let mut status = ProbeStatus {
            name,
            ok: result.is_ok(),
            error: None,
            elapsed_ms: took.as_millis() as u64,
        };
        match result {
            Ok(Found::System(s)) => report.system = Some(s),
            Ok(Found::Gpus(g)) => {
                report.driver = g.driver;
                report.driver_error = g.driver_error;
                report.gpus = g.gpus;
            }
            Ok(Found::Toolkits(t, c)) => {
                report.toolkits = t;
                report.cudnn = c;
            }
            Ok(Found::Pythons(p)) => report.pythons = p,
            Err(e) => status.error = Some(e),
        }
        report.probes.push(status);
    }
    for (name, deadline) in pending {
        tracing::info!(
            probe = name,
            seconds = deadline.as_secs(),
            "detect: probe timed out"
        );
        report.probes.push(ProbeStatus {
            name,
            ok: false,
            error: Some(ProbeError::Timeout {
                probe: name.to_string(),
                seconds: deadline.as_secs(),
            }),
            elapsed_ms: start.elapsed().as_millis() as u64,
        });
    }
    report.probes.sort_by_key(|p| p.name);
    report.elapsed_ms = start.elapsed().as_millis() as u64;
    tracing::info!(
        gpus = report.gpus.len(),
        driver = ?report.driver,
        toolkits = report.toolkits.len(),
        pythons = report.pythons.len(),
        ms = report.elapsed_ms,
        "detect: done"
    );
    report
}

impl SystemReport {
    /// The facts the recommender needs, from what was found on this machine.
    pub fn facts(&self, os: crate::compat::Os) -> crate::recommend::Facts {
        use crate::recommend::GpuFact;
        let mut gpus = Vec::new();
        let mut unidentified = Vec::new();
        let mut notes = Vec::new();
        for g in self.nvidia_gpus() {
            if let Some(p) = &g.problem {
                notes.push(p.message(&g.name));
            }
            match g.compute_capability {
                Some(cc) => gpus.push(GpuFact {
                    name: Some(g.name.clone()),
                    compute_capability: cc,
                }),
                None => unidentified.push(match &g.pci_device_id {
                    Some(id) => format!("{} [10de:{}]", g.name, id.trim_start_matches("0x")),
                    None => g.name.clone(),
                }),
            }
        }
        // The Python used: the first whose version is known, and whether it is a
        // free-threaded build (its wheels are another set).
        let python = self
            .pythons
            .iter()
            .find_map(|p| Some((p.version.as_ref()?, p.free_threaded)));
        crate::recommend::Facts {
            os,
            gpus,
            driver: self.driver.as_ref().map(|d| d.version.clone()),
            driver_cuda: self.driver.as_ref().and_then(|d| d.cuda_version.clone()),
            python: python.map(|(v, _)| v.major_minor()),
            installed_toolkits: self
                .toolkits
                .iter()
                .filter_map(|t| t.version.clone())
                .collect(),
            unidentified_gpus: unidentified,
            notes,
            host_kind: self.host_kind.clone(),
            free_threaded: python.is_some_and(|(_, ft)| ft),
        }
    }
}
