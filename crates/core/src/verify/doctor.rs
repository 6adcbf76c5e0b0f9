//! `doctor`: what is wrong with PyTorch in a given Python, and the exact commands that fix
//! it. A probe script runs in the interpreter (with a timeout); the findings and their
//! fixes are computed here, purely, from what it printed, what detection knows about the
//! GPU and driver, and the recommender's choice of wheel.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::Status;
use super::missing_library;
use super::reference::{decode_cuda_version, decode_cudnn_version};
use crate::compat::{Os, Tables};
use crate::message::Message;
use crate::msg;
use crate::platform::Host;
use crate::recommend::{
    self, CPU_TORCH_COMMAND, Facts, Goal, GpuFact, Recommendation, Request, TorchPick,
};
use crate::version::{ComputeCapability, Version};

pub const PROBE_SCRIPT: &str = include_str!("../../../../assets/doctor_probe.py");
const MARKER: &str = "CUDA_SETUP_DOCTOR ";

/// What the probe printed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DoctorProbe {
    /// The interpreter's version (`3.12.1`).
    pub python: String,
    #[serde(default)]
    pub executable: String,
    pub torch: Option<TorchState>,
    pub torch_error: Option<TorchError>,
    pub check: Option<GpuCheck>,
    #[serde(default)]
    pub probe_error: Option<String>,
    /// What `torch.utils.cpp_extension` would build with (CUDA builds of torch only).
    #[serde(default)]
    pub extension: Option<extension::ExtensionProbe>,
    /// `sys.platform`, `sys.exec_prefix`, `sys.base_exec_prefix`, and torch's folder
    /// (found without importing it) when its import failed: what `missing_library` walks.
    #[serde(default)]
    pub platform: Option<String>,
    #[serde(default)]
    pub exec_prefix: Option<String>,
    #[serde(default)]
    pub base_exec_prefix: Option<String>,
    #[serde(default)]
    pub torch_dir: Option<String>,
}

impl DoctorProbe {
    /// The interpreter's facts for `missing_library` (its OS from `sys.platform`, else
    /// the host's).
    pub fn interpreter(&self, host_os: Os, python: &Path) -> missing_library::Interpreter {
        let os = match self.platform.as_deref() {
            Some("win32") | Some("cygwin") => Os::Windows,
            Some(p) if p.starts_with("linux") => Os::Linux,
            _ => host_os,
        };
        missing_library::Interpreter {
            os,
            version: self.python.parse().ok(),
            executable: if self.executable.is_empty() {
                python.to_path_buf()
            } else {
                PathBuf::from(&self.executable)
            },
            exec_prefix: self.exec_prefix.as_ref().map(PathBuf::from),
            base_exec_prefix: self.base_exec_prefix.as_ref().map(PathBuf::from),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TorchState {
    pub version: String,
    /// `torch.version.cuda`; None for a CPU build.
    pub cuda: Option<String>,
    #[serde(default)]
    pub cuda_available: bool,
    pub cuda_error: Option<String>,
    /// `torch.backends.cudnn.version()` (91002 → 9.10.2).
    pub cudnn: Option<u64>,
    pub cudnn_available: Option<bool>,
    #[serde(default)]
    pub arch_list: Vec<String>,
    #[serde(default)]
    pub device_count: u32,
    pub device_name: Option<String>,
    pub device_capability: Option<[u32; 2]>,
    /// The driver's CUDA version as torch sees it (12040).
    pub driver_version: Option<i64>,
}

impl TorchState {
    /// A CPU-only build: no CUDA version, or a `+cpu` local version.
    pub fn is_cpu_build(&self) -> bool {
        self.cuda.is_none() || self.version.contains("+cpu")
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TorchError {
    /// `not_installed` or `import_failed`.
    pub kind: String,
    pub detail: String,
}

/// The guide's check: a tensor to the GPU, a matmul there and on the CPU.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GpuCheck {
    pub size: usize,
    pub moved_to: Option<String>,
    #[serde(default)]
    pub tensor_ok: bool,
    pub cpu_ms: Option<f64>,
    pub gpu_ms: Option<f64>,
    pub speedup: Option<f64>,
    pub max_error: Option<f64>,
    #[serde(default)]
    pub tolerance: f64,
    #[serde(default)]
    pub ok: bool,
    pub error: Option<String>,
}

/// Finds the probe line among whatever else torch printed.
pub fn parse_probe_output(stdout: &str) -> Option<DoctorProbe> {
    let line = stdout.lines().rev().find_map(|l| l.strip_prefix(MARKER))?;
    serde_json::from_str(line).ok()
}

/// A PyPI mirror for the packages torch depends on (the torch wheels themselves come from
/// PyTorch's index, which no PyPI mirror carries).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PypiMirror {
    /// `tsinghua`, `aliyun`, `ustc`, or `custom`.
    pub name: String,
    pub url: String,
}

impl std::str::FromStr for PypiMirror {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let known = |name: &str, url: &str| PypiMirror {
            name: name.into(),
            url: url.into(),
        };
        match s.trim().to_ascii_lowercase().as_str() {
            "tsinghua" | "tuna" => Ok(known(
                "tsinghua",
                "https://pypi.tuna.tsinghua.edu.cn/simple",
            )),
            "aliyun" | "alibaba" => Ok(known("aliyun", "https://mirrors.aliyun.com/pypi/simple/")),
            "ustc" => Ok(known("ustc", "https://mirrors.ustc.edu.cn/pypi/simple")),
            u if u.starts_with("https://") || u.starts_with("http://") => {
                Ok(known("custom", s.trim()))
            }
            _ => Err(format!(
                "`{}` is not a PyPI mirror: use tsinghua, aliyun, ustc, or the mirror's URL (https://…/simple)",
                crate::shown::value(s)
            )),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Ok,
    Info,
    Problem,
}

/// What to do about a finding: a sentence, and the commands to paste, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fix {
    #[serde(flatten)]
    pub message: Message,
    pub commands: Vec<String>,
}

/// What a finding is about, as a type (its `kind` in JSON): the verdict reads this, never
/// the message's key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    Python,
    PythonNotFound,
    PythonFailed,
    TorchMissing,
    TorchImportFailed,
    /// The import failed because a library is missing, named (#33).
    TorchLibraryMissing,
    NoGpu,
    TorchCpuNoGpu,
    TorchCpuBuild,
    NoDriver,
    TorchCudaTooNew,
    TorchCudaMinorCompat,
    TorchCudaOk,
    CudaUnavailable,
    ArchOk,
    ArchMissing,
    CudnnUnavailable,
    CudnnOk,
    GpuCheckOk,
    GpuCheckFailed,
    /// The check failed because the wheel has no code for the GPU ("no kernel image").
    GpuCheckNoKernel,
    GpuCheckWrong,
    // Building extensions: a developer's question, not whether PyTorch uses the GPU.
    ExtNoToolkit,
    ExtToolkitBroken,
    ExtToolkitVersionUnknown,
    ExtMajorMismatch,
    ExtToolkitOk,
    ExtCudaHomeUnset,
    ExtNoCompiler,
    ExtCompilerVersionUnknown,
    ExtCompilerRangeUnknown,
    ExtCompilerTooNew,
    ExtCompilerTooOld,
    ExtCompilerUnsupported,
    ExtCompilerOk,
    /// `--build-extension`'s result.
    ExtBuild,
    /// The torch build verified on the GPU was replaced by another install (`guard`).
    TorchSwapped,
    /// The guard recorded (and perhaps pinned) the build verified here.
    Guard,
}

impl FindingKind {
    /// About building extensions (not about PyTorch using the GPU).
    pub fn is_extension(self) -> bool {
        use FindingKind::*;
        matches!(
            self,
            ExtNoToolkit
                | ExtToolkitBroken
                | ExtToolkitVersionUnknown
                | ExtMajorMismatch
                | ExtToolkitOk
                | ExtCudaHomeUnset
                | ExtNoCompiler
                | ExtCompilerVersionUnknown
                | ExtCompilerRangeUnknown
                | ExtCompilerTooNew
                | ExtCompilerTooOld
                | ExtCompilerUnsupported
                | ExtCompilerOk
                | ExtBuild
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    pub severity: Severity,
    #[serde(flatten)]
    pub message: Message,
    pub fix: Option<Fix>,
}

pub(crate) fn finding(
    kind: FindingKind,
    severity: Severity,
    message: Message,
    fix: Option<Fix>,
) -> Finding {
    Finding {
        kind,
        severity,
        message,
        fix,
    }
}

/// What detection knows about the GPUs and the driver.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GpuFacts {
    pub driver: Option<Version>,
    /// The highest CUDA the driver runs (NVML's figure).
    pub driver_cuda: Option<Version>,
    pub gpus: Vec<GpuSummary>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GpuSummary {
    pub name: String,
    pub compute_capability: Option<ComputeCapability>,
}

impl GpuFacts {
    /// From the GPU probe (NVML, then PCI): NVIDIA GPUs only.
    pub fn detect(host: &Host, tables: &Tables) -> GpuFacts {
        let Ok(p) = crate::detect::gpu::probe(host, tables, Duration::from_secs(10)) else {
            return GpuFacts::default();
        };
        GpuFacts {
            driver: p.driver.as_ref().map(|d| d.version.clone()),
            driver_cuda: p.driver.as_ref().and_then(|d| d.cuda_version.clone()),
            gpus: p
                .gpus
                .iter()
                .filter(|g| g.cuda_capable)
                .map(|g| GpuSummary {
                    name: g.name.clone(),
                    compute_capability: g.compute_capability,
                })
                .collect(),
        }
    }
}

/// A path as a shell argument (quoted when it holds spaces; cmd.exe and sh both accept
/// double quotes around a path).
pub fn shell_quote(p: &Path) -> String {
    let s = p.display().to_string();
    if s.chars()
        .any(|c| c.is_whitespace() || "&()[]{}^=;!'+,`~$".contains(c))
    {
        format!("\"{s}\"")
    } else {
        s
    }
}

/// `python -m pip uninstall -y torch torchvision torchaudio` for this interpreter.
pub fn uninstall_command(python: &Path) -> String {
    format!(
        "{} -m pip uninstall -y torch torchvision torchaudio",
        shell_quote(python)
    )
}

/// The recommender's `pip install …` for this interpreter (`python -m pip`, so it lands in
/// the Python that was examined), with the PyPI mirror for torch's dependencies. The
/// mirror goes in `--extra-index-url`: as `-i`/`--index-url` it would *replace* PyTorch's
/// index and bring back the CPU build.
pub fn install_command(python: &Path, pip_command: &str, mirror: Option<&PypiMirror>) -> String {
    // The recommender's command starts with `pip` or, for a free-threaded Python, with
    // the interpreter (`python3.13t -m pip`): here `python` is the one examined.
    let rest = pip_command
        .split_once(" -m pip ")
        .map(|(_, r)| r)
        .or_else(|| pip_command.strip_prefix("pip "))
        .unwrap_or(pip_command);
    let mut c = format!("{} -m pip {rest}", shell_quote(python));
    if let Some(m) = mirror {
        c += &format!(" --extra-index-url {}", m.url);
        if m.url.starts_with("http://") {
            let host = m
                .url
                .trim_start_matches("http://")
                .split(['/', ':'])
                .next()
                .unwrap_or_default();
            c += &format!(" --trusted-host {host}");
        }
    }
    c
}

/// An architecture in `torch.cuda.get_arch_list()`: `sm_86` (machine code), `compute_90`
/// (PTX), `sm_90a` (machine code for exactly 9.0).
fn parse_arch(s: &str) -> Option<(bool, ComputeCapability, bool)> {
    let (ptx, digits) = if let Some(d) = s.strip_prefix("sm_") {
        (false, d)
    } else {
        (true, s.strip_prefix("compute_")?)
    };
    let specific = digits.ends_with(['a', 'f']);
    let digits = digits.trim_end_matches(['a', 'f']);
    let cc: ComputeCapability = format!("sm_{digits}").parse().ok()?;
    Some((ptx, cc, specific))
}

/// Whether wheels built for `arch_list` run on a GPU of capability `cc`: machine code of
/// the same major at or below its minor, or PTX at or below it.
pub fn arch_covers(arch_list: &[String], cc: ComputeCapability) -> bool {
    arch_list
        .iter()
        .filter_map(|a| parse_arch(a))
        .any(|(ptx, a, specific)| {
            if specific {
                a == cc
            } else if ptx {
                a <= cc
            } else {
                a.binary_runs_on(cc)
            }
        })
}

/// Everything findings are computed from.
pub struct Context<'a> {
    pub os: Os,
    pub python: &'a Path,
    pub probe: &'a DoctorProbe,
    pub gpu: &'a GpuFacts,
    pub recommendation: Option<&'a Recommendation>,
    pub mirror: Option<&'a PypiMirror>,
}

impl Context<'_> {
    fn pick(&self) -> Option<&TorchPick> {
        self.recommendation.and_then(|r| r.torch.as_ref())
    }

    /// Install the recommended wheel (the CPU one when there is no NVIDIA GPU); when
    /// nothing fits, the recommender's blocker says why.
    fn install_fix(&self, key: &'static str, uninstall_first: bool) -> Fix {
        let mut commands = Vec::new();
        if uninstall_first {
            commands.push(uninstall_command(self.python));
        }
        if self.gpu.gpus.is_empty() {
            commands.push(install_command(self.python, CPU_TORCH_COMMAND, self.mirror));
            return Fix {
                message: msg!("fix_install_torch_cpu"),
                commands,
            };
        }
        match self.pick() {
            Some(p) => {
                commands.push(install_command(self.python, &p.command, self.mirror));
                Fix {
                    message: Message::new(key)
                        .with("torch", &p.version)
                        .with("variant", &p.variant)
                        .with("index_url", &p.index_url),
                    commands,
                }
            }
            None => Fix {
                message: self
                    .recommendation
                    .and_then(|r| r.blockers.first().cloned())
                    .unwrap_or_else(|| msg!("fix_no_wheel_fits")),
                commands: Vec::new(),
            },
        }
    }

    fn driver_fix(&self) -> Fix {
        let minimum = self
            .recommendation
            .and_then(|r| r.driver.minimum.as_ref())
            .map(ToString::to_string)
            .unwrap_or_else(|| "the newest".into());
        Fix {
            message: msg!("fix_install_driver", minimum = minimum),
            commands: Vec::new(),
        }
    }
}

/// The findings, in the order a user should read them.
pub fn findings(cx: &Context) -> Vec<Finding> {
    use Severity::*;
    let mut out = Vec::new();
    let p = cx.probe;
    let no_gpu = cx.gpu.gpus.is_empty();
    out.push(finding(
        FindingKind::Python,
        Ok,
        msg!(
            "doctor_python",
            python = cx.python.display(),
            version = &p.python
        ),
        None,
    ));
    if let Some(e) = &p.probe_error {
        out.push(finding(
            FindingKind::PythonFailed,
            Problem,
            msg!("doctor_python_failed", python = cx.python.display()).with("detail", e),
            None,
        ));
        return out;
    }
    let t = match (&p.torch, &p.torch_error) {
        (Some(t), _) => t,
        (None, Some(e)) if e.kind == "import_failed" => {
            let dll = e.detail.contains("WinError 126") || e.detail.contains("DLL load failed");
            let fix = if cx.os == Os::Windows && dll {
                let mut f = cx.install_fix("fix_reinstall_torch", true);
                f.message = msg!("fix_vc_redist");
                f
            } else {
                cx.install_fix("fix_reinstall_torch", true)
            };
            out.push(finding(
                FindingKind::TorchImportFailed,
                Problem,
                msg!("doctor_torch_import_failed").with("detail", &e.detail),
                Some(fix),
            ));
            return out;
        }
        _ => {
            out.push(finding(
                FindingKind::TorchMissing,
                Problem,
                msg!("doctor_torch_missing", python = cx.python.display()),
                Some(cx.install_fix("fix_install_torch", false)),
            ));
            if no_gpu {
                out.push(finding(
                    FindingKind::NoGpu,
                    Info,
                    msg!("doctor_no_gpu"),
                    None,
                ));
            }
            return out;
        }
    };

    if t.is_cpu_build() {
        if no_gpu {
            out.push(finding(
                FindingKind::TorchCpuNoGpu,
                Info,
                msg!("doctor_torch_cpu_no_gpu", torch = &t.version),
                None,
            ));
            out.push(finding(
                FindingKind::NoGpu,
                Info,
                msg!("doctor_no_gpu"),
                None,
            ));
        } else {
            out.push(finding(
                FindingKind::TorchCpuBuild,
                Problem,
                msg!("doctor_torch_cpu_build", torch = &t.version),
                Some(cx.install_fix("fix_reinstall_torch", true)),
            ));
        }
        return out;
    }
    let torch_cuda: Option<Version> = t.cuda.as_deref().and_then(|c| c.parse().ok());
    if no_gpu && !t.cuda_available {
        out.push(finding(
            FindingKind::NoGpu,
            Info,
            msg!("doctor_no_gpu"),
            None,
        ));
        return out;
    }

    // torch's CUDA against what the driver runs.
    let driver_cuda = cx
        .gpu
        .driver_cuda
        .clone()
        .or_else(|| t.driver_version.map(|v| decode_cuda_version(v as i32)));
    let driver_known = cx.gpu.driver.is_some() || driver_cuda.is_some() || t.cuda_available;
    match (&torch_cuda, &driver_cuda) {
        _ if !driver_known => {
            out.push(finding(
                FindingKind::NoDriver,
                Problem,
                msg!("doctor_no_driver"),
                Some(cx.driver_fix()),
            ));
        }
        (Some(tc), Some(dc)) if tc.major() > dc.major() => {
            let mut fix = cx.install_fix("fix_torch_for_driver", true);
            if fix.commands.is_empty() {
                fix = cx.driver_fix();
            }
            out.push(finding(
                FindingKind::TorchCudaTooNew,
                Problem,
                msg!(
                    "doctor_torch_cuda_too_new",
                    torch = &t.version,
                    cuda = tc,
                    driver_cuda = dc
                ),
                Some(fix),
            ));
        }
        (Some(tc), Some(dc)) if tc.major_minor() > dc.major_minor() => out.push(finding(
            FindingKind::TorchCudaMinorCompat,
            Info,
            msg!(
                "doctor_torch_cuda_minor_compat",
                torch = &t.version,
                cuda = tc,
                driver_cuda = dc
            ),
            None,
        )),
        (Some(tc), Some(dc)) => out.push(finding(
            FindingKind::TorchCudaOk,
            Ok,
            msg!(
                "doctor_torch_cuda_ok",
                torch = &t.version,
                cuda = tc,
                driver_cuda = dc
            ),
            None,
        )),
        _ => {}
    }
    if !t.cuda_available {
        if driver_known {
            out.push(finding(
                FindingKind::CudaUnavailable,
                Problem,
                msg!("doctor_cuda_unavailable").with(
                    "detail",
                    t.cuda_error
                        .clone()
                        .unwrap_or_else(|| "no reason given".into()),
                ),
                Some(Fix {
                    message: msg!("fix_cuda_unavailable"),
                    commands: Vec::new(),
                }),
            ));
        }
        return out;
    }

    // The GPU's architecture in the wheel's list.
    let device = t
        .device_capability
        .map(|[ma, mi]| ComputeCapability::new(ma, mi))
        .or_else(|| cx.gpu.gpus.iter().find_map(|g| g.compute_capability));
    let gpu_name = t
        .device_name
        .clone()
        .or_else(|| cx.gpu.gpus.first().map(|g| g.name.clone()))
        .unwrap_or_else(|| "GPU 0".into());
    if let Some(cc) = device
        && !t.arch_list.is_empty()
    {
        if arch_covers(&t.arch_list, cc) {
            out.push(finding(
                FindingKind::ArchOk,
                Ok,
                msg!(
                    "doctor_arch_ok",
                    torch = &t.version,
                    gpu = &gpu_name,
                    sm = cc.sm()
                ),
                None,
            ));
        } else {
            out.push(finding(
                FindingKind::ArchMissing,
                Problem,
                msg!(
                    "doctor_arch_missing",
                    torch = &t.version,
                    gpu = &gpu_name,
                    sm = cc.sm(),
                    arch_list = t.arch_list.join(" ")
                ),
                Some(cx.install_fix("fix_reinstall_torch", true)),
            ));
        }
    }

    match (t.cudnn_available, t.cudnn) {
        (Some(false), _) => out.push(finding(
            FindingKind::CudnnUnavailable,
            Problem,
            msg!("doctor_cudnn_unavailable"),
            Some(cx.install_fix("fix_reinstall_torch", true)),
        )),
        (_, Some(v)) => out.push(finding(
            FindingKind::CudnnOk,
            Ok,
            msg!("doctor_cudnn_ok", cudnn = decode_cudnn_version(v)),
            None,
        )),
        _ => {}
    }

    if let Some(c) = &p.check {
        let ms = |x: Option<f64>| x.map_or("?".into(), |v| format!("{v:.2}"));
        if let Some(e) = &c.error {
            let fix = (e.contains("no kernel image") || e.contains("not compatible"))
                .then(|| cx.install_fix("fix_reinstall_torch", true));
            let kind = if fix.is_some() {
                FindingKind::GpuCheckNoKernel
            } else {
                FindingKind::GpuCheckFailed
            };
            out.push(finding(
                kind,
                Problem,
                msg!("doctor_gpu_check_failed").with("detail", e),
                fix,
            ));
        } else if c.ok {
            out.push(finding(
                FindingKind::GpuCheckOk,
                Ok,
                msg!(
                    "doctor_gpu_check_ok",
                    device = c.moved_to.clone().unwrap_or_default(),
                    size = c.size,
                    gpu_ms = ms(c.gpu_ms),
                    cpu_ms = ms(c.cpu_ms),
                    speedup = c.speedup.map_or("?".into(), |s| format!("{s:.1}"))
                ),
                None,
            ));
        } else {
            out.push(finding(
                FindingKind::GpuCheckWrong,
                Problem,
                msg!(
                    "doctor_gpu_check_wrong",
                    error = c.max_error.map_or("NaN".into(), |e| format!("{e:.2e}")),
                    tolerance = format!("{:.0e}", c.tolerance)
                ),
                Some(Fix {
                    message: msg!("fix_gpu_wrong"),
                    commands: Vec::new(),
                }),
            ));
        }
    }
    out
}

/// The status findings add up to: failed if any is a problem; skipped if the GPU could not
/// be checked (no NVIDIA GPU); else passed.
pub fn status_of(findings: &[Finding], no_gpu: bool) -> Status {
    if findings.iter().any(|f| f.severity == Severity::Problem) {
        Status::Failed
    } else if no_gpu {
        Status::Skipped
    } else {
        Status::Passed
    }
}

#[derive(Debug, Clone)]
pub struct DoctorOptions {
    /// The interpreter (default: the first python3/python on PATH).
    pub python: Option<PathBuf>,
    pub mirror: Option<PypiMirror>,
    pub timeout: Duration,
    /// The check's matmul size.
    pub size: usize,
}

impl Default for DoctorOptions {
    fn default() -> Self {
        DoctorOptions {
            python: None,
            mirror: None,
            timeout: Duration::from_secs(180),
            size: 2048,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct DoctorReport {
    pub status: Status,
    pub exit_code: i32,
    pub python: Option<PathBuf>,
    pub python_version: Option<String>,
    pub probe_error: Option<String>,
    pub torch: Option<TorchState>,
    pub torch_error: Option<TorchError>,
    pub driver: Option<Version>,
    pub driver_cuda: Option<Version>,
    pub gpus: Vec<GpuSummary>,
    pub check: Option<GpuCheck>,
    pub findings: Vec<Finding>,
    /// The wheel the fixes install.
    pub recommended: Option<TorchPick>,
    pub pypi_mirror: Option<PypiMirror>,
    /// The toolkit and host compiler a CUDA extension would be built with.
    pub extension: Option<extension::ExtensionFacts>,
    /// `--build-extension`'s result (None when not asked for).
    pub build_extension: Option<extension::BuildExtensionReport>,
    /// The GPU packages besides PyTorch in that Python (#33; None: the Python never ran).
    pub packages: Option<super::packages::PackagesReport>,
    pub elapsed_ms: u64,
}

/// What `doctor --build-extension` asks for beyond [`DoctorOptions`].
#[derive(Debug, Clone)]
pub struct ExtensionOptions {
    /// Build, import (and on a GPU, run) a minimal CUDAExtension.
    pub build: bool,
    /// The build's limit (the whole build, compilers included, is stopped after it).
    pub build_timeout: Duration,
}

impl Default for ExtensionOptions {
    fn default() -> Self {
        ExtensionOptions {
            build: false,
            build_timeout: Duration::from_secs(900),
        }
    }
}

/// The Python on PATH (python3 first; never the Windows Store alias).
pub fn default_python(host: &Host) -> Option<PathBuf> {
    ["python3", "python"]
        .iter()
        .flat_map(|name| {
            let exe = host.exe(name);
            host.path_list("PATH")
                .into_iter()
                .map(move |d| d.join(&exe))
        })
        .find(|p| p.is_file() && !p.to_string_lossy().contains("WindowsApps"))
}

/// The recommender's pick for this machine and Python.
pub fn recommendation(
    tables: &Tables,
    os: Os,
    gpu: &GpuFacts,
    python: Option<&Version>,
) -> Recommendation {
    let facts = Facts {
        os,
        gpus: gpu
            .gpus
            .iter()
            .filter_map(|g| {
                Some(GpuFact {
                    name: Some(g.name.clone()),
                    compute_capability: g.compute_capability?,
                })
            })
            .collect(),
        driver: gpu.driver.clone(),
        driver_cuda: gpu.driver_cuda.clone(),
        python: python.map(Version::major_minor),
        installed_toolkits: Vec::new(),
        unidentified_gpus: gpu
            .gpus
            .iter()
            .filter(|g| g.compute_capability.is_none())
            .map(|g| g.name.clone())
            .collect(),
        notes: Vec::new(),
        host_kind: Default::default(),
        free_threaded: false,
    };
    recommend::recommend(
        tables,
        &facts,
        &Request {
            goal: Goal::Pytorch,
            cuda: None,
            method: crate::recommend::Method::Installer,
            // The doctor judges the wheel against the driver that is there.
            driver: crate::recommend::DriverPref::Keep,
            distro: None,
            ..Default::default()
        },
    )
}

/// Examines the Python in `opts` (or PATH's) against the GPU facts given.
pub fn examine(host: &Host, tables: &Tables, opts: &DoctorOptions, gpu: &GpuFacts) -> DoctorReport {
    examine_with(host, tables, opts, gpu, &ExtensionOptions::default())
}

/// [`examine`], and with `ext.build` a minimal CUDA extension built and imported.
pub fn examine_with(
    host: &Host,
    tables: &Tables,
    opts: &DoctorOptions,
    gpu: &GpuFacts,
    ext: &ExtensionOptions,
) -> DoctorReport {
    let start = Instant::now();
    let mut report = DoctorReport {
        status: Status::Skipped,
        exit_code: 0,
        python: None,
        python_version: None,
        probe_error: None,
        torch: None,
        torch_error: None,
        driver: gpu.driver.clone(),
        driver_cuda: gpu.driver_cuda.clone(),
        gpus: gpu.gpus.clone(),
        check: None,
        findings: Vec::new(),
        recommended: None,
        pypi_mirror: opts.mirror.clone(),
        extension: None,
        build_extension: None,
        packages: None,
        elapsed_ms: 0,
    };
    let finish = |mut r: DoctorReport, status: Status| {
        r.status = status;
        r.exit_code = status.exit_code();
        r.elapsed_ms = start.elapsed().as_millis() as u64;
        r
    };
    let Some(python) = opts.python.clone().or_else(|| default_python(host)) else {
        let rec = recommendation(tables, host.os, gpu, None);
        let range = rec
            .torch
            .as_ref()
            .map(|p| (p.python_min.to_string(), p.python_max.to_string()))
            .unwrap_or_else(|| ("3.9".into(), "3.13".into()));
        report.findings.push(finding(
            FindingKind::PythonNotFound,
            Severity::Problem,
            msg!(
                "doctor_python_not_found",
                python_min = range.0,
                python_max = range.1
            ),
            None,
        ));
        return finish(report, Status::Skipped);
    };
    report.python = Some(python.clone());
    let size = opts.size.to_string();
    let probe = match host.run(&python, &["-c", PROBE_SCRIPT, &size], opts.timeout) {
        Ok(out) => parse_probe_output(&out.stdout).ok_or_else(|| {
            let err = out.stderr.trim();
            let tail: String = err
                .lines()
                .rev()
                .take(3)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join(" | ");
            format!("no probe output (exit {:?}): {tail}", out.status)
        }),
        Err(e) => Err(e.to_string()),
    };
    let probe = match probe {
        Ok(p) => p,
        Err(e) => {
            report.probe_error = Some(e.clone());
            report.findings.push(finding(
                FindingKind::PythonFailed,
                Severity::Problem,
                msg!("doctor_python_failed", python = python.display()).with("detail", e),
                None,
            ));
            return finish(report, Status::Failed);
        }
    };
    let py_version: Option<Version> = probe.python.parse().ok();
    // Detection may miss a GPU torch itself sees (no NVML in a container): use torch's.
    let mut gpu = gpu.clone();
    if gpu.gpus.is_empty()
        && let Some(t) = probe.torch.as_ref().filter(|t| t.cuda_available)
    {
        gpu.gpus.push(GpuSummary {
            name: t.device_name.clone().unwrap_or_else(|| "GPU 0".into()),
            compute_capability: t
                .device_capability
                .map(|[ma, mi]| ComputeCapability::new(ma, mi)),
        });
    }
    let gpu = &gpu;
    let rec = recommendation(tables, host.os, gpu, py_version.as_ref());
    let mut found = findings(&Context {
        os: host.os,
        python: &python,
        probe: &probe,
        gpu,
        recommendation: Some(&rec),
        mirror: opts.mirror.as_ref(),
    });
    name_missing_library(host, &python, &probe, &mut found);
    // Building extensions: only a CUDA build of torch has anything to build them with.
    let cuda_torch = probe.torch.as_ref().filter(|t| !t.is_cpu_build());
    let facts = match (cuda_torch, &probe.extension) {
        (Some(_), Some(e)) => Some(extension::ExtensionFacts::gather(host, e)),
        _ => None,
    };
    if let (Some(t), Some(f)) = (cuda_torch, &facts) {
        found.extend(extension::findings(host.os, t, f));
    }
    if ext.build {
        let b = match extension::build_skip_reason(host.os, cuda_torch, facts.as_ref()) {
            Some(why) => extension::BuildExtensionReport::skipped(why),
            None => extension::build_extension(host, &python, ext.build_timeout),
        };
        found.push(b.finding());
        report.build_extension = Some(b);
    }
    report.extension = facts;
    // The other GPU packages in that Python (#33): their problems fail the doctor too.
    let packages = super::packages::examine(
        host,
        &super::packages::Examine {
            os: host.os,
            python: &python,
            tables,
            found: &super::packages::Found::detect(host),
            torch: probe.torch.as_ref(),
            driver_cuda: gpu.driver_cuda.as_ref(),
            has_gpu: !gpu.gpus.is_empty(),
            check_timeout: opts.timeout.min(super::packages::CHECK_TIMEOUT),
        },
    );
    let mut status = status_of(&found, gpu.gpus.is_empty());
    if packages
        .findings
        .iter()
        .any(|f| f.severity == Severity::Problem)
    {
        status = Status::Failed;
    }
    report.packages = Some(packages);
    report.python_version = Some(probe.python.clone());
    report.probe_error = probe.probe_error.clone();
    report.torch = probe.torch.clone();
    report.torch_error = probe.torch_error.clone();
    report.check = probe.check.clone();
    report.findings = found;
    report.recommended = rec.torch.clone();
    finish(report, status)
}

/// A torch import that failed to load a library names that library and its fix (#33,
/// `missing_library`); reinstalling torch stays the commands only where that is the fix.
fn name_missing_library(host: &Host, python: &Path, probe: &DoctorProbe, found: &mut [Finding]) {
    let (Some(e), Some(dir)) = (&probe.torch_error, &probe.torch_dir) else {
        return;
    };
    let Some(f) = found
        .iter_mut()
        .find(|f| f.kind == FindingKind::TorchImportFailed)
    else {
        return;
    };
    let py = probe.interpreter(host.os, python);
    let pkg = missing_library::torch_package(host, &py, Path::new(dir));
    let Some(m) = missing_library::explain(host, &py, &pkg, &e.detail) else {
        return;
    };
    let commands = match f.fix.take() {
        Some(fix) if m.reinstall(&pkg) => fix.commands,
        _ => Vec::new(),
    };
    f.kind = FindingKind::TorchLibraryMissing;
    f.message = m.message(&pkg, &e.detail);
    f.fix = Some(Fix {
        message: m.fix(&pkg),
        commands,
    });
}

pub mod extension;

#[cfg(test)]
mod tests;
