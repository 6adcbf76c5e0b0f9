//! Verify: does the stack actually work? `smoke` runs a GEMM on the GPU through the
//! toolkit's own cuBLAS (checked against the CPU, timed), measures host↔device bandwidth
//! with pageable and pinned memory, runs a cuDNN convolution and an nvcc-built kernel,
//! and builds (compiles and links, never runs) a program against the toolkit's libraries.
//! `doctor` examines a Python's PyTorch and says exactly how to fix what is wrong.
//!
//! Everything NVIDIA is loaded at run time: with no driver, no GPU or a wrong toolkit the
//! checks are *skipped* or *failed* with a reason, never a panic. The pure logic (CPU
//! references, tolerances, report arithmetic, exit codes, findings and their fixes) lives
//! in modules that need no GPU (`reference`, `doctor`'s findings); the GPU calls are thin.

// The GPU calls (every `unsafe` FFI call into CUDA, cuBLAS) live in their own crate.
pub use cuda_setup_gpu::{cuda, gemm, libwalk, loader, reference};

pub mod build;
pub mod cudnn;
pub mod doctor;
pub mod missing_library;
pub mod nvcc;
pub mod packages;
pub mod tips;
pub mod verdict;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::compat::Tables;
use crate::detect::{CudnnInstall, toolkit};
use crate::message::Message;
use crate::msg;
use crate::platform::Host;
use crate::version::Version;

use cuda::{
    CUDA_ERROR_NO_DEVICE, CUDA_ERROR_STUB_LIBRARY, Device, DeviceInfo, Driver, DriverFailure,
};

/// Exit codes of `smoke` and `doctor` (docs/cli.md), after the CLI's 0–3.
pub mod exit {
    /// Every check that ran passed, and the main one ran.
    pub const PASSED: i32 = 0;
    /// Nothing to test on: no driver, no GPU, no toolkit (smoke); no Python or no NVIDIA
    /// GPU (doctor).
    pub const SKIPPED: i32 = 4;
    /// A check ran and failed (wrong result, a library that will not load, a toolkit the
    /// driver cannot run); or doctor found something to fix.
    pub const FAILED: i32 = 5;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Passed,
    Skipped,
    Failed,
}

impl Status {
    pub fn exit_code(self) -> i32 {
        match self {
            Status::Passed => exit::PASSED,
            Status::Skipped => exit::SKIPPED,
            Status::Failed => exit::FAILED,
        }
    }
}

/// Failed if anything failed; else skipped if the main check was; else passed.
pub fn overall(main: Status, all: &[Status]) -> Status {
    if all.contains(&Status::Failed) || main == Status::Failed {
        Status::Failed
    } else if main == Status::Skipped {
        Status::Skipped
    } else {
        Status::Passed
    }
}

/// One check: its status, why (for skipped and failed), and what it measured.
#[derive(Debug, Clone, Serialize)]
pub struct Check<T> {
    pub status: Status,
    pub reason: Option<Message>,
    #[serde(flatten)]
    pub detail: T,
}

impl<T> Check<T> {
    pub fn new(status: Status, reason: Option<Message>, detail: T) -> Self {
        Check {
            status,
            reason,
            detail,
        }
    }
}

/// How `smoke` runs.
#[derive(Debug, Clone)]
pub struct SmokeOptions {
    /// The toolkit folder (default: the one nvcc on PATH belongs to, else CUDA_PATH's,
    /// else the newest found).
    pub cuda_dir: Option<PathBuf>,
    pub device: usize,
    /// GEMM sizes (m = n = k).
    pub sizes: Vec<usize>,
    pub bandwidth_bytes: usize,
    /// For the GPU part as a whole; a hung driver call is abandoned after it.
    pub timeout: Duration,
    pub compile_timeout: Duration,
    pub nvcc: bool,
    /// The build check (compile and link against the toolkit's libraries; no GPU needed).
    pub build: bool,
}

impl Default for SmokeOptions {
    fn default() -> Self {
        SmokeOptions {
            cuda_dir: None,
            device: 0,
            sizes: vec![1024, 2048, 4096, 8192],
            bandwidth_bytes: 128 << 20,
            timeout: Duration::from_secs(300),
            compile_timeout: Duration::from_secs(180),
            nvcc: true,
            build: true,
        }
    }
}

/// The toolkit under test.
#[derive(Debug, Clone, Serialize)]
pub struct ToolkitChoice {
    pub path: PathBuf,
    pub version: Option<Version>,
    pub runtime_dir: PathBuf,
    /// `cuda_dir` (the flag), `nvcc_on_path`, `cuda_path`, `newest`.
    pub chosen_by: &'static str,
}

/// Picks the toolkit: `--cuda-dir`, else PATH's nvcc's, else CUDA_PATH's, else the newest.
pub fn choose_toolkit(host: &Host, cuda_dir: Option<&Path>) -> Option<ToolkitChoice> {
    if let Some(dir) = cuda_dir {
        // Absolute: Windows resolves a DLL's dependencies from its folder only then.
        let dir = &std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        let version = toolkit::read_small(&dir.join("version.json"))
            .and_then(|t| toolkit::parse_version_json(&t))
            .or_else(|| {
                toolkit::read_small(&dir.join("version.txt"))
                    .and_then(|t| toolkit::parse_version_txt(&t))
            });
        return Some(ToolkitChoice {
            path: dir.to_path_buf(),
            runtime_dir: toolkit::runtime_dir(host.os, dir, version.as_ref()),
            version,
            chosen_by: "cuda_dir",
        });
    }
    let found = toolkit::probe(host, Duration::from_secs(10));
    let (t, by) = found
        .iter()
        .find(|t| t.active)
        .map(|t| (t, "nvcc_on_path"))
        .or_else(|| {
            found
                .iter()
                .find(|t| t.found_by.contains(&toolkit::FoundBy::CudaPath))
                .map(|t| (t, "cuda_path"))
        })
        .or_else(|| found.first().map(|t| (t, "newest")))?;
    Some(ToolkitChoice {
        path: t.path.clone(),
        version: t.version.clone(),
        runtime_dir: t.runtime_dir.clone(),
        chosen_by: by,
    })
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct DriverReport {
    /// `libcuda.so.1` / `nvcuda.dll`.
    pub library: String,
    pub loaded: bool,
    /// The highest CUDA it runs (`cuDriverGetVersion`).
    pub cuda_version: Option<Version>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Checks {
    pub gemm: Check<gemm::GemmReport>,
    pub bandwidth: Check<gemm::BandwidthReport>,
    pub cudnn: Check<cudnn::CudnnReport>,
    pub nvcc: Check<nvcc::NvccReport>,
    /// Compile and link against shared cudart, cuBLAS, cuDNN and the driver stub.
    pub build: Check<build::BuildReport>,
}

/// Why the smoke test did not pass, as a type: the verdict reads this, never the
/// reason's message key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SmokeOutcome {
    Passed,
    NoGpu,
    /// The driver library did not load.
    NoDriver,
    /// The driver loaded but failed (an incomplete install, an error from cuInit).
    DriverFailed,
    /// The toolkit's stub libcuda was loaded instead of the driver's.
    DriverStub,
    NoSuchDevice,
    NoToolkit,
    ToolkitNewerThanDriver,
    ToolkitLacksArch,
    /// cuBLAS is missing, or a library will not load.
    LibraryMissing,
    /// A CUDA or cuBLAS call failed.
    CudaCallFailed,
    GemmWrong,
    CopyCorrupted,
    /// The cuDNN check failed.
    Cudnn,
    /// The nvcc check failed.
    Nvcc,
    /// The build check: link names are missing.
    CannotLink,
    /// The build check: compiling or linking failed for another reason.
    BuildFailed,
    Timeout,
    Internal,
}

/// What `smoke` found (docs/cli.md lists the fields).
#[derive(Debug, Clone, Serialize)]
pub struct SmokeReport {
    pub status: Status,
    pub exit_code: i32,
    /// Why it did not pass (`passed` when it did), from the check that `reason` is from.
    pub outcome: SmokeOutcome,
    /// Why it did not pass: the first failed check's reason, else why the GEMM was skipped.
    pub reason: Option<Message>,
    pub driver: DriverReport,
    pub device: Option<DeviceInfo>,
    pub toolkit: Option<ToolkitChoice>,
    pub checks: Checks,
    pub elapsed_ms: u64,
}

/// What the GPU worker has finished so far (a timed-out run reports what it has).
#[derive(Default)]
struct Progress {
    driver: DriverReport,
    device: Option<DeviceInfo>,
    gemm_partial: gemm::GemmReport,
    gemm: Option<Check<gemm::GemmReport>>,
    gemm_outcome: Option<SmokeOutcome>,
    bandwidth_outcome: Option<SmokeOutcome>,
    bandwidth: Option<Check<gemm::BandwidthReport>>,
    cudnn: Option<Check<cudnn::CudnnReport>>,
}

fn lock(p: &Mutex<Progress>) -> std::sync::MutexGuard<'_, Progress> {
    p.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs the smoke test. Never panics, whatever the machine has.
pub fn smoke(host: &Host, tables: &Tables, opts: &SmokeOptions) -> SmokeReport {
    let start = Instant::now();
    let toolkit = choose_toolkit(host, opts.cuda_dir.as_deref());
    let installs = {
        let tks: Vec<toolkit::Toolkit> = toolkit
            .iter()
            .map(|t| toolkit::Toolkit {
                path: t.path.clone(),
                version: t.version.clone(),
                version_source: None,
                found_by: Vec::new(),
                env_vars: Vec::new(),
                nvcc: None,
                runtime_dir: t.runtime_dir.clone(),
                path_rank: None,
                active: false,
            })
            .collect();
        crate::detect::cudnn::probe(host, &tks)
    };
    // cuDNN inside the toolkit is linked by the build check too.
    let build_cudnn = toolkit.as_ref().is_some_and(|t| {
        installs
            .iter()
            .any(|i| i.toolkit.as_deref() == Some(t.path.as_path()))
    });

    let progress = Arc::new(Mutex::new(Progress::default()));
    let (tx, rx) = mpsc::channel();
    {
        let (host, tables, opts, toolkit, progress) = (
            host.clone(),
            tables.clone(),
            opts.clone(),
            toolkit.clone(),
            progress.clone(),
        );
        // Detached on purpose: a driver call that hangs must not hang the report.
        std::thread::spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                gpu_part(
                    &host,
                    &tables,
                    &opts,
                    toolkit.as_ref(),
                    &installs,
                    &progress,
                )
            }));
            let _ = tx.send(r.map_err(|p| {
                p.downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "panic".into())
            }));
        });
    }
    let (unfinished, unfinished_outcome) = match rx.recv_timeout(opts.timeout) {
        Ok(Ok(())) => (None, SmokeOutcome::Internal),
        Ok(Err(panic)) => (
            Some(msg!("smoke_internal_error", detail = panic)),
            SmokeOutcome::Internal,
        ),
        Err(_) => (
            Some(msg!("smoke_timeout", seconds = opts.timeout.as_secs())),
            SmokeOutcome::Timeout,
        ),
    };
    let (driver, device, gemm_c, bandwidth_c, cudnn_c, gemm_o, bandwidth_o) = {
        let mut p = lock(&progress);
        let why = unfinished
            .clone()
            .unwrap_or_else(|| msg!("smoke_internal_error", detail = "check did not finish"));
        let fail = || Some(why.clone());
        let partial = std::mem::take(&mut p.gemm_partial);
        (
            p.driver.clone(),
            p.device.clone(),
            p.gemm
                .take()
                .unwrap_or_else(|| Check::new(Status::Failed, fail(), partial)),
            p.bandwidth
                .take()
                .unwrap_or_else(|| Check::new(Status::Failed, fail(), Default::default())),
            p.cudnn
                .take()
                .unwrap_or_else(|| Check::new(Status::Failed, fail(), Default::default())),
            p.gemm_outcome.take().unwrap_or(unfinished_outcome),
            p.bandwidth_outcome.take().unwrap_or(unfinished_outcome),
        )
    };

    let nvcc_c = if !opts.nvcc {
        Check::new(
            Status::Skipped,
            Some(msg!("nvcc_not_requested")),
            Default::default(),
        )
    } else if unfinished.is_some() {
        // The GPU may be wedged; a kernel would hang too.
        Check::new(Status::Skipped, unfinished.clone(), Default::default())
    } else {
        nvcc::check(&nvcc::Options {
            host,
            toolkit: toolkit.as_ref().map(|t| t.path.as_path()),
            gpu: device.as_ref().map(|d| d.compute_capability),
            driver_present: driver.loaded,
            compile_timeout: opts.compile_timeout,
        })
    };

    // Needs no GPU: runs with no driver, and after a GPU part that hung.
    let build_c = if !opts.build {
        Check::new(
            Status::Skipped,
            Some(msg!("build_not_requested")),
            Default::default(),
        )
    } else if let Some(t) = &toolkit {
        build::check(&build::BuildOptions {
            host,
            toolkit: &t.path,
            version: t.version.as_ref(),
            cudnn: build_cudnn,
            timeout: opts.compile_timeout,
        })
    } else {
        Check::new(
            Status::Skipped,
            Some(msg!("smoke_no_toolkit")),
            Default::default(),
        )
    };

    let statuses = [
        gemm_c.status,
        bandwidth_c.status,
        cudnn_c.status,
        nvcc_c.status,
        build_c.status,
    ];
    let status = overall(gemm_c.status, &statuses);
    // The first failed check says why; else, when skipped, the GEMM's reason.
    let cudnn_o = SmokeOutcome::Cudnn;
    let nvcc_o = SmokeOutcome::Nvcc;
    let build_o = if build_c.detail.missing.is_empty() {
        SmokeOutcome::BuildFailed
    } else {
        SmokeOutcome::CannotLink
    };
    let (reason, outcome) = [
        (gemm_c.status, &gemm_c.reason, gemm_o),
        (bandwidth_c.status, &bandwidth_c.reason, bandwidth_o),
        (cudnn_c.status, &cudnn_c.reason, cudnn_o),
        (nvcc_c.status, &nvcc_c.reason, nvcc_o),
        (build_c.status, &build_c.reason, build_o),
    ]
    .into_iter()
    .find(|(s, _, _)| *s == Status::Failed)
    .map(|(_, r, o)| (r.clone(), o))
    .unwrap_or_else(|| match status {
        Status::Skipped => (gemm_c.reason.clone(), gemm_o),
        _ => (None, SmokeOutcome::Passed),
    });
    SmokeReport {
        status,
        exit_code: status.exit_code(),
        outcome,
        reason,
        driver,
        device,
        toolkit,
        checks: Checks {
            gemm: gemm_c,
            bandwidth: bandwidth_c,
            cudnn: cudnn_c,
            nvcc: nvcc_c,
            build: build_c,
        },
        elapsed_ms: start.elapsed().as_millis() as u64,
    }
}

/// Why the driver gives no device: (skipped or failed, why as a type, the message).
pub fn driver_outcome(f: &DriverFailure) -> (Status, SmokeOutcome, Message) {
    match f {
        DriverFailure::NotLoaded(l) => (
            Status::Skipped,
            SmokeOutcome::NoDriver,
            msg!("smoke_no_driver", library = &l.library).with("detail", &l.detail),
        ),
        DriverFailure::Incomplete { library, detail } => (
            Status::Failed,
            SmokeOutcome::DriverFailed,
            msg!("smoke_driver_failed")
                .with("call", library)
                .with("error", detail),
        ),
        DriverFailure::Call(e) if e.code == CUDA_ERROR_NO_DEVICE => (
            Status::Skipped,
            SmokeOutcome::NoGpu,
            msg!("smoke_no_gpu").with("error", format!("{}: {}", e.name, e.text)),
        ),
        DriverFailure::Call(e) if e.code == CUDA_ERROR_STUB_LIBRARY => (
            Status::Failed,
            SmokeOutcome::DriverStub,
            msg!("smoke_driver_stub"),
        ),
        DriverFailure::Call(e) => (
            Status::Failed,
            SmokeOutcome::DriverFailed,
            msg!("smoke_driver_failed")
                .with("call", e.call)
                .with("error", format!("{}: {}", e.name, e.text)),
        ),
    }
}

fn cuda_failed(e: &cuda::CudaError) -> Message {
    msg!("smoke_cuda_call_failed", call = e.call).with("error", format!("{}: {}", e.name, e.text))
}

fn load_failure_message(l: &loader::LoadFailure) -> Message {
    if l.missing.is_empty() {
        msg!("library_load_failed", library = &l.library).with("detail", &l.detail)
    } else {
        msg!(
            "library_missing_dependency",
            library = &l.library,
            missing = l.missing_list()
        )
    }
}

/// Whether the toolkit can run here at all: its major must not be newer than the driver's,
/// and it must build for the GPU (from the tables).
pub fn toolkit_fits(
    tables: &Tables,
    toolkit: &Version,
    driver_cuda: &Version,
    gpu: &DeviceInfo,
) -> Option<(SmokeOutcome, Message)> {
    if toolkit.major() > driver_cuda.major() {
        return Some((
            SmokeOutcome::ToolkitNewerThanDriver,
            msg!(
                "smoke_toolkit_newer_than_driver",
                toolkit = toolkit,
                major = toolkit.major(),
                driver_cuda = driver_cuda
            ),
        ));
    }
    let release = tables
        .toolkits
        .releases
        .iter()
        .rfind(|r| r.version.major_minor() == toolkit.major_minor())?;
    (!release.builds_for(gpu.compute_capability)).then(|| {
        (
            SmokeOutcome::ToolkitLacksArch,
            msg!(
                "smoke_toolkit_lacks_arch",
                toolkit = toolkit,
                gpu = &gpu.name,
                sm = gpu.compute_capability.sm(),
                archs = archs_of(release)
            ),
        )
    })
}

/// The architectures a release builds for, as a list (`sm_75 sm_80 … sm_121`) when the
/// tables have its exact one, else its range (`sm_50–sm_90`): a gap in a range (12.8
/// has no sm_103) is why a GPU inside it can still be missing.
fn archs_of(release: &crate::compat::ToolkitRelease) -> String {
    if release.sm.is_empty() {
        format!("{}–{}", release.sm_min.sm(), release.sm_max.sm())
    } else {
        let sms: Vec<String> = release.sm.iter().map(|s| s.sm()).collect();
        sms.join(" ")
    }
}

fn gpu_part(
    host: &Host,
    tables: &Tables,
    opts: &SmokeOptions,
    toolkit: Option<&ToolkitChoice>,
    installs: &[CudnnInstall],
    progress: &Mutex<Progress>,
) {
    let os = host.os;
    let lib_dirs: Vec<PathBuf> = toolkit
        .map(|t| gemm::library_dirs(os, &t.path, &t.runtime_dir))
        .unwrap_or_default();
    // cuBLAS loads (or not) without a GPU: a broken toolkit is reported either way.
    let cublas = toolkit.map(|_| gemm::load_cublas(host, &lib_dirs));

    lock(progress).driver.library = cuda::driver_library(os).to_string();
    let driver = Driver::load(os);
    let device: Result<Device, (Status, SmokeOutcome, Message)> = match &driver {
        Err(f) => {
            let mut p = lock(progress);
            p.driver.error = Some(match f {
                DriverFailure::NotLoaded(l) => l.detail.clone(),
                DriverFailure::Incomplete { detail, .. } => detail.clone(),
                DriverFailure::Call(e) => e.to_string(),
            });
            p.driver.loaded = !matches!(f, DriverFailure::NotLoaded(_));
            Err(driver_outcome(f))
        }
        Ok(d) => {
            {
                let mut p = lock(progress);
                p.driver.loaded = true;
                p.driver.cuda_version = Some(d.cuda_version.clone());
            }
            match d.device_count() {
                Err(e) => Err(driver_outcome(&DriverFailure::Call(e))),
                Ok(0) => Err((
                    Status::Skipped,
                    SmokeOutcome::NoGpu,
                    msg!("smoke_no_gpu").with("error", "0 devices"),
                )),
                Ok(n) if opts.device >= n => Err((
                    Status::Failed,
                    SmokeOutcome::NoSuchDevice,
                    msg!("smoke_no_such_device", index = opts.device, count = n),
                )),
                Ok(_) => d.open_device(opts.device).map_err(|e| {
                    (
                        Status::Failed,
                        SmokeOutcome::CudaCallFailed,
                        cuda_failed(&e),
                    )
                }),
            }
        }
    };
    if let Ok(d) = &device {
        lock(progress).device = Some(d.info.clone());
    }

    // GEMM. What is known of cuBLAS goes in the report even when it cannot run.
    let base = match &cublas {
        Some(Ok(c)) => gemm::GemmReport {
            cublas_library: Some(c.library.clone()),
            cublas_version: c.version.clone(),
            ..Default::default()
        },
        _ => Default::default(),
    };
    let (gemm_check, gemm_outcome) = match (&device, toolkit, cublas) {
        (Err((Status::Skipped, _, _)), _, Some(Err(gemm::CublasFailure::Load(l)))) => (
            Check::new(Status::Failed, Some(load_failure_message(&l)), base.clone()),
            SmokeOutcome::LibraryMissing,
        ),
        (Err((s, o, m)), _, _) => (Check::new(*s, Some(m.clone()), base.clone()), *o),
        (Ok(_), None, _) | (Ok(_), _, None) => (
            Check::new(
                Status::Skipped,
                Some(msg!("smoke_no_toolkit")),
                base.clone(),
            ),
            SmokeOutcome::NoToolkit,
        ),
        (Ok(_), Some(t), Some(Err(gemm::CublasFailure::NotFound { .. }))) => (
            Check::new(
                Status::Failed,
                Some(msg!("smoke_no_cublas", dir = t.path.display())),
                base.clone(),
            ),
            SmokeOutcome::LibraryMissing,
        ),
        (Ok(_), _, Some(Err(gemm::CublasFailure::Load(l)))) => (
            Check::new(Status::Failed, Some(load_failure_message(&l)), base.clone()),
            SmokeOutcome::LibraryMissing,
        ),
        (Ok(dev), Some(t), Some(Ok(cublas))) => {
            let driver_cuda = &dev.driver.cuda_version;
            let unfit = match t.version.clone().or_else(|| cublas.version.clone()) {
                Some(v) => toolkit_fits(tables, &v, driver_cuda, &dev.info),
                // Only the library's major is known: check that much.
                None => toolkit_fits(
                    tables,
                    &Version::new(&[cublas.major, 0]),
                    driver_cuda,
                    &dev.info,
                )
                .filter(|(o, _)| *o == SmokeOutcome::ToolkitNewerThanDriver),
            };
            match unfit {
                Some((o, m)) => (Check::new(Status::Failed, Some(m), base.clone()), o),
                None => run_gemm(dev, &cublas, &opts.sizes, progress, base.clone()),
            }
        }
    };
    {
        let mut p = lock(progress);
        p.gemm = Some(gemm_check);
        p.gemm_outcome = Some(gemm_outcome);
    }

    // Bandwidth.
    let (bw, bw_outcome) = match &device {
        Err((s, o, m)) => (Check::new(*s, Some(m.clone()), Default::default()), *o),
        Ok(dev) => match gemm::bandwidth(dev, opts.bandwidth_bytes) {
            Ok(b) if b.round_trip_ok => (Check::new(Status::Passed, None, b), SmokeOutcome::Passed),
            Ok(b) => (
                Check::new(Status::Failed, Some(msg!("smoke_copy_corrupted")), b),
                SmokeOutcome::CopyCorrupted,
            ),
            Err(e) => (
                Check::new(Status::Failed, Some(cuda_failed(&e)), Default::default()),
                SmokeOutcome::CudaCallFailed,
            ),
        },
    };
    {
        let mut p = lock(progress);
        p.bandwidth = Some(bw);
        p.bandwidth_outcome = Some(bw_outcome);
    }

    // cuDNN.
    let c = cudnn::check(&cudnn::Context {
        host,
        toolkit_dir: toolkit.map(|t| t.path.as_path()),
        toolkit_version: toolkit.and_then(|t| t.version.as_ref()),
        toolkit_lib_dirs: &lib_dirs,
        installs,
        device: device.as_ref().map_err(|(_, _, m)| m.clone()),
    });
    lock(progress).cudnn = Some(c);
}

fn run_gemm(
    dev: &Device,
    cublas: &gemm::Cublas,
    sizes: &[usize],
    progress: &Mutex<Progress>,
    base: gemm::GemmReport,
) -> (Check<gemm::GemmReport>, SmokeOutcome) {
    let mut report = base;
    let r = gemm::run(dev, cublas, sizes, &mut report, |r| {
        lock(progress).gemm_partial = r.clone();
    });
    if let Err(e) = r {
        let m = match &e {
            gemm::GemmError::Cuda(c) => cuda_failed(c),
            gemm::GemmError::Cublas { call, status } => {
                msg!("smoke_cuda_call_failed", call = call).with("error", status)
            }
        };
        return (
            Check::new(Status::Failed, Some(m), report),
            SmokeOutcome::CudaCallFailed,
        );
    }
    if let Some(bad) = report.results.iter().find(|g| !g.accuracy.passed) {
        let m = msg!(
            "smoke_gemm_wrong",
            precision = bad.precision.name(),
            size = bad.size,
            error = format!("{:.2e}", bad.accuracy.max_error),
            tolerance = format!("{:.0e}", bad.accuracy.tolerance)
        );
        return (
            Check::new(Status::Failed, Some(m), report),
            SmokeOutcome::GemmWrong,
        );
    }
    if report.results.is_empty() {
        let m = msg!("smoke_gemm_nothing_ran", why = report.not_run.join("; "));
        return (
            Check::new(Status::Failed, Some(m), report),
            SmokeOutcome::CudaCallFailed,
        );
    }
    (
        Check::new(Status::Passed, None, report),
        SmokeOutcome::Passed,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overall_status_and_exit_codes() {
        use Status::*;
        assert_eq!(overall(Passed, &[Passed, Skipped, Passed]), Passed);
        assert_eq!(overall(Skipped, &[Skipped, Skipped]), Skipped);
        assert_eq!(overall(Skipped, &[Skipped, Failed]), Failed);
        assert_eq!(overall(Passed, &[Passed, Failed]), Failed);
        assert_eq!(overall(Failed, &[]), Failed);
        assert_eq!(Passed.exit_code(), 0);
        assert_eq!(Skipped.exit_code(), 4);
        assert_eq!(Failed.exit_code(), 5);
    }

    fn gpu(cc: &str) -> DeviceInfo {
        DeviceInfo {
            index: 0,
            name: "GPU".into(),
            compute_capability: cc.parse().unwrap(),
            multiprocessors: 1,
            memory_total_bytes: 1,
            pci_bus_id: String::new(),
        }
    }

    #[test]
    fn a_toolkit_the_driver_or_gpu_cannot_run() {
        let t = Tables::embedded().unwrap();
        let v = |s: &str| s.parse::<Version>().unwrap();
        // Same major, newer minor: minor-version compatibility, fine.
        assert_eq!(toolkit_fits(&t, &v("12.6"), &v("12.4"), &gpu("8.6")), None);
        // A newer major than the driver runs.
        let (o, m) = toolkit_fits(&t, &v("13.0"), &v("12.4"), &gpu("8.6")).unwrap();
        assert_eq!(o, SmokeOutcome::ToolkitNewerThanDriver);
        assert_eq!(m.key, "smoke_toolkit_newer_than_driver");
        // CUDA 13 dropped Pascal (sm_61); CUDA 11.8 predates Blackwell (sm_120).
        let m = toolkit_fits(&t, &v("13.0"), &v("13.0"), &gpu("6.1"))
            .unwrap()
            .1;
        assert_eq!(m.key, "smoke_toolkit_lacks_arch");
        let m = toolkit_fits(&t, &v("11.8"), &v("12.8"), &gpu("12.0"))
            .unwrap()
            .1;
        assert_eq!(m.key, "smoke_toolkit_lacks_arch");
        assert_eq!(m.param("sm"), Some("sm_120"));
        // 12.8's range (sm_50 – sm_120) has a gap at sm_103 (B300, first in 12.9): the
        // message lists what it builds for.
        let m = toolkit_fits(&t, &v("12.8"), &v("12.8"), &gpu("10.3"))
            .unwrap()
            .1;
        assert_eq!(m.key, "smoke_toolkit_lacks_arch");
        let archs = m.param("archs").unwrap();
        assert!(
            archs.contains("sm_100") && archs.contains("sm_120"),
            "{archs}"
        );
        assert!(!archs.contains("sm_103"), "{archs}");
        // Unknown to the tables: no claim either way.
        assert_eq!(toolkit_fits(&t, &v("12.99"), &v("12.4"), &gpu("8.6")), None);
    }

    #[test]
    fn driver_failures_map_to_skipped_or_failed() {
        let (s, o, m) = driver_outcome(&DriverFailure::NotLoaded(loader::LoadFailure {
            library: "libcuda.so.1".into(),
            detail: "libcuda.so.1: cannot open shared object file".into(),
            missing: Vec::new(),
        }));
        assert_eq!(
            (s, o, m.key),
            (Status::Skipped, SmokeOutcome::NoDriver, "smoke_no_driver")
        );
        let call = |code| {
            DriverFailure::Call(cuda::CudaError {
                call: "cuInit",
                code,
                name: "X".into(),
                text: "y".into(),
            })
        };
        assert_eq!(driver_outcome(&call(100)).0, Status::Skipped);
        assert_eq!(driver_outcome(&call(34)).1, SmokeOutcome::DriverStub);
        assert_eq!(driver_outcome(&call(999)).0, Status::Failed);
    }
}
