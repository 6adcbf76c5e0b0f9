//! The doctor for what people run besides PyTorch (#33): onnxruntime-gpu, CTranslate2
//! (faster-whisper), PaddlePaddle, TensorFlow and JAX in the chosen Python. A probe
//! (`assets/packages_probe.py`) lists what is installed and tries each GPU path in a child
//! process; [`findings`] then compares, purely, what each version needs (the package's own
//! build facts and metadata first, else `gpu-packages.toml`) with what the machine offers
//! (detection's toolkits and cuDNN, the nvidia-* wheels in that Python, PyTorch's own
//! libraries, the driver), and names the fix.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::compat::Os;
use crate::detect::{cudnn::CudnnInstall, toolkit::Toolkit};
use crate::platform::Host;
use crate::version::Version;

use super::missing_library;

pub mod ctranslate2;
mod findings;
mod libraries;
mod offer;

pub use findings::{Context, PackageFinding, PackageFindingKind, findings};
pub use offer::{Offer, Offered, OfferedBy};

pub const PROBE_SCRIPT: &str = include_str!("../../../../../assets/packages_probe.py");
const MARKER: &str = "CUDA_SETUP_PACKAGES ";

/// What the probe printed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PackagesProbe {
    #[serde(default)]
    pub python: String,
    /// The watched packages installed (names as PyPI normalises them).
    #[serde(default)]
    pub packages: Vec<Installed>,
    /// Every nvidia-* wheel installed.
    #[serde(default)]
    pub nvidia: Vec<Wheel>,
    /// Per GPU path tried (`onnxruntime`, `ctranslate2`, `paddle`, `tensorflow`, `jax`).
    #[serde(default)]
    pub checks: BTreeMap<String, GpuLoad>,
    #[serde(default)]
    pub error: Option<String>,
    /// `sys.platform`, `sys.executable`, `sys.exec_prefix`, `sys.base_exec_prefix`: the
    /// interpreter's facts for naming a missing library (as the doctor's probe has them).
    #[serde(default)]
    pub platform: Option<String>,
    #[serde(default)]
    pub executable: Option<String>,
    #[serde(default)]
    pub exec_prefix: Option<String>,
    #[serde(default)]
    pub base_exec_prefix: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Installed {
    pub name: String,
    pub version: String,
    /// Its `Requires-Dist` lines that name an nvidia-* wheel (markers kept).
    #[serde(default)]
    pub requires: Vec<String>,
    /// What the package records of its own build (onnxruntime-gpu ≥ 1.21).
    #[serde(default)]
    pub build: Option<BuildInfo>,
    /// The folder of the module it installs (`…/site-packages/onnxruntime`): where the
    /// native files of a failed load are.
    #[serde(default)]
    pub dir: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BuildInfo {
    pub cuda_version: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Wheel {
    pub name: String,
    pub version: String,
}

/// Whether a package's GPU path loaded, in the child process.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuLoad {
    #[serde(default)]
    pub ok: bool,
    /// The error's own text (`OSError: …`, `RuntimeError: Library cublas64_12.dll is not
    /// found…`).
    pub error: Option<String>,
    #[serde(default)]
    pub timed_out: bool,
    /// The last lines the check printed (paddle's `run_check()` says what it found).
    pub output: Option<String>,
    pub detail: Option<String>,
    /// onnxruntime's `get_available_providers()`.
    pub providers: Option<Vec<String>>,
    /// GPUs the package sees.
    pub devices: Option<u32>,
    pub compiled_with_cuda: Option<bool>,
    /// The CUDA and cuDNN the package says it was built with (paddle, TensorFlow).
    pub build_cuda: Option<String>,
    pub build_cudnn: Option<String>,
    /// `onnxruntime.preload_dlls()` (onnxruntime-gpu >= 1.21) ran before the provider
    /// was loaded: the nvidia-* wheels' (or a CUDA 12 torch's) libraries were loaded.
    #[serde(default)]
    pub preloaded: Option<bool>,
    /// The libraries loaded by name as the package loads them when it runs
    /// (CTranslate2's cuBLAS and cuDNN, `ctranslate2::load`).
    #[serde(default)]
    pub loaded: Option<Vec<String>>,
}

impl PackagesProbe {
    pub fn installed(&self, name: &str) -> Option<&Installed> {
        self.packages.iter().find(|p| p.name == name)
    }

    /// The interpreter's facts for `missing_library` (its OS from `sys.platform`, else
    /// `os`).
    pub fn interpreter(&self, os: Os, python: &Path) -> missing_library::Interpreter {
        let os = match self.platform.as_deref() {
            Some("win32") | Some("cygwin") => Os::Windows,
            Some(p) if p.starts_with("linux") => Os::Linux,
            _ => os,
        };
        missing_library::Interpreter {
            os,
            version: self.python.parse().ok(),
            executable: self
                .executable
                .as_ref()
                .map_or_else(|| python.to_path_buf(), PathBuf::from),
            exec_prefix: self.exec_prefix.as_ref().map(PathBuf::from),
            base_exec_prefix: self.base_exec_prefix.as_ref().map(PathBuf::from),
        }
    }
}

/// Finds the probe line among whatever else the packages printed.
pub fn parse_probe_output(stdout: &str) -> Option<PackagesProbe> {
    let line = stdout.lines().rev().find_map(|l| l.strip_prefix(MARKER))?;
    serde_json::from_str(line).ok()
}

/// The packages part of the doctor's report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PackagesReport {
    pub probe: Option<PackagesProbe>,
    /// Why there is no probe (an interpreter that could not run it): no finding, since
    /// the doctor's Python findings already say what is wrong with it.
    pub error: Option<String>,
    pub offer: Offer,
    pub findings: Vec<PackageFinding>,
}

/// How long each package's GPU check may take, and the probe as a whole.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(90);

/// Runs the probe in `python` (each GPU check limited to `check`).
pub fn probe(host: &Host, python: &Path, check: Duration) -> Result<PackagesProbe, String> {
    let secs = check.as_secs().max(1).to_string();
    // Five checks at most, each bounded by the probe itself; the margin covers the scan.
    let whole = check * 5 + Duration::from_secs(30);
    let out = host
        .run(python, &["-c", PROBE_SCRIPT, &secs], whole)
        .map_err(|e| e.to_string())?;
    parse_probe_output(&out.stdout).ok_or_else(|| {
        let tail: Vec<&str> = out.stderr.trim().lines().rev().take(3).collect();
        format!(
            "no packages probe output (exit {:?}): {}",
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        )
    })
}

/// What detection knows that the packages may use: toolkits and cuDNN copies.
#[derive(Debug, Clone, Default)]
pub struct Found {
    pub toolkits: Vec<Toolkit>,
    pub cudnn: Vec<CudnnInstall>,
}

impl Found {
    pub fn detect(host: &Host) -> Found {
        let toolkits = crate::detect::toolkit::probe(host, Duration::from_secs(10));
        let cudnn = crate::detect::cudnn::probe(host, &toolkits);
        Found { toolkits, cudnn }
    }
}

/// Everything [`examine`] needs beyond the Python.
pub struct Examine<'a> {
    pub os: Os,
    pub python: &'a Path,
    pub tables: &'a crate::compat::Tables,
    pub found: &'a Found,
    pub torch: Option<&'a super::doctor::TorchState>,
    pub driver_cuda: Option<&'a Version>,
    pub has_gpu: bool,
    pub check_timeout: Duration,
}

/// Runs the probe and computes the findings.
pub fn examine(host: &Host, e: &Examine) -> PackagesReport {
    let mut probe = match probe(host, e.python, e.check_timeout) {
        Ok(p) => p,
        Err(error) => {
            return PackagesReport {
                error: Some(error),
                ..Default::default()
            };
        }
    };
    let offer = Offer::gather(e.found, &probe.nvidia, e.torch);
    // CTranslate2's device count says nothing of cuBLAS and cuDNN: load them as it will.
    let names = ctranslate2::libraries_to_load(&context(e, &offer, &probe));
    if let Some(names) = names {
        ctranslate2::load(host, e.python, e.check_timeout, &names, &mut probe);
    }
    let cx = context(e, &offer, &probe);
    let mut found = findings(&cx);
    // A GPU path that failed to load a library: walk the package's native files for the
    // one missing (findings are pure; the walk reads files).
    libraries::name_missing(host, &cx, e.torch, &mut found);
    PackagesReport {
        probe: Some(probe),
        error: None,
        offer,
        findings: found,
    }
}

fn context<'a>(e: &'a Examine, offer: &'a Offer, probe: &'a PackagesProbe) -> Context<'a> {
    Context {
        os: e.os,
        python: e.python,
        probe,
        offer,
        table: &e.tables.gpu_packages,
        driver_cuda: e.driver_cuda,
        has_gpu: e.has_gpu,
    }
}

/// `python -m pip ARGS` for this interpreter.
pub(crate) fn pip(python: &Path, args: &str) -> String {
    format!("{} -m pip {args}", super::doctor::shell_quote(python))
}

#[cfg(test)]
mod tests;
