//! The GPU matmul: cuBLAS, loaded from the chosen toolkit's own folder, runs SGEMM (and
//! TF32 / FP16 where the GPU has the tensor cores), checked against the CPU reference on
//! sampled entries, and timed; then host↔device bandwidth with pageable and pinned memory.

use std::ffi::{c_int, c_void};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::cuda::{CudaError, Device};
use crate::loader::{self, LoadFailure};
use crate::os::Os;
use crate::platform::Host;
use crate::reference::{
    self, Accuracy, Precision, f16_bits_to_f32, f32_to_f16_bits, gb_per_s, gflops, iterations_for,
    sample_positions,
};
use crate::version::Version;

type Handle = *mut c_void;

api! {
    CublasApi {
        cublasCreate_v2: fn(*mut Handle) -> c_int;
        cublasDestroy_v2: fn(Handle) -> c_int;
        cublasGetVersion_v2: fn(Handle, *mut c_int) -> c_int;
        cublasSgemm_v2: fn(
            Handle, c_int, c_int, c_int, c_int, c_int,
            *const f32, *const f32, c_int, *const f32, c_int,
            *const f32, *mut f32, c_int,
        ) -> c_int;
        cublasGemmEx: fn(
            Handle, c_int, c_int, c_int, c_int, c_int,
            *const c_void, *const c_void, c_int, c_int, *const c_void, c_int, c_int,
            *const c_void, *mut c_void, c_int, c_int, c_int, c_int,
        ) -> c_int;
    }
}

const OP_N: c_int = 0;
const CUDA_R_32F: c_int = 0;
const CUDA_R_16F: c_int = 2;
const COMPUTE_32F: c_int = 68;
const COMPUTE_32F_FAST_TF32: c_int = 77;
const GEMM_DEFAULT: c_int = -1;

/// `cublasStatus_t` names (cublas_api.h).
pub fn cublas_status_name(code: i32) -> &'static str {
    match code {
        0 => "CUBLAS_STATUS_SUCCESS",
        1 => "CUBLAS_STATUS_NOT_INITIALIZED",
        3 => "CUBLAS_STATUS_ALLOC_FAILED",
        7 => "CUBLAS_STATUS_INVALID_VALUE",
        8 => "CUBLAS_STATUS_ARCH_MISMATCH",
        11 => "CUBLAS_STATUS_MAPPING_ERROR",
        13 => "CUBLAS_STATUS_EXECUTION_FAILED",
        14 => "CUBLAS_STATUS_INTERNAL_ERROR",
        15 => "CUBLAS_STATUS_NOT_SUPPORTED",
        16 => "CUBLAS_STATUS_LICENSE_ERROR",
        _ => "CUBLAS_STATUS_UNKNOWN",
    }
}

/// `cublasGetVersion`'s number as a version (120405 → 12.4.5).
pub fn decode_cublas_version(v: i32) -> Version {
    let v = v.max(0) as u32;
    Version::new(&[v / 10000, v % 10000 / 100, v % 100])
}

/// Where to look for the toolkit's libraries under `dir`: its runtime folder first (`bin`,
/// `bin\x64` for 13.x, `lib64`), then the other layouts (a pip `nvidia/cublas` folder keeps
/// them in `lib` or `bin`), then `dir` itself.
pub fn library_dirs(os: Os, dir: &Path, runtime_dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![runtime_dir.to_path_buf()];
    let more: &[&str] = match os {
        Os::Windows => &["bin/x64", "bin", "lib/x64", "lib"],
        Os::Linux => &["lib64", "lib", "targets/x86_64-linux/lib"],
    };
    out.extend(more.iter().map(|p| dir.join(p)));
    out.push(dir.to_path_buf());
    let mut seen = std::collections::HashSet::new();
    out.retain(|d| seen.insert(crate::platform::canonical(d)));
    out
}

/// Why cuBLAS is not usable.
#[derive(Debug, Clone)]
pub enum CublasFailure {
    NotFound { dirs: Vec<PathBuf> },
    Load(LoadFailure),
}

pub struct Cublas {
    api: CublasApi,
    pub library: PathBuf,
    pub major: u32,
    /// From `cublasGetProperty` (needs no GPU).
    pub version: Option<Version>,
}

/// Loads cuBLAS (and cuBLASLt, which it needs, from the same folder first).
pub fn load_cublas(host: &Host, dirs: &[PathBuf]) -> Result<Cublas, CublasFailure> {
    let (path, major) =
        loader::find_library(host.os, dirs, "cublas").ok_or_else(|| CublasFailure::NotFound {
            dirs: dirs.to_vec(),
        })?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut keep = Vec::new();
    let lt = dir.join(loader::library_file(host.os, "cublasLt", major));
    if lt.is_file() {
        keep.push(loader::open(host, &lt).map_err(CublasFailure::Load)?);
    }
    let lib = loader::open(host, &path).map_err(CublasFailure::Load)?;
    // SAFETY: cublasStatus_t cublasGetProperty(libraryPropertyType, int*), no GPU needed.
    let version = unsafe {
        lib.get::<unsafe extern "C" fn(c_int, *mut c_int) -> c_int>(b"cublasGetProperty\0")
    }
    .ok()
    .and_then(|f| {
        let mut part = [0 as c_int; 3];
        for (i, p) in part.iter_mut().enumerate() {
            // SAFETY: MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL; a valid out-pointer.
            if unsafe { f(i as c_int, p) } != 0 {
                return None;
            }
        }
        Some(Version::new(&part.map(|p| p.max(0) as u32)))
    });
    let api = CublasApi::from_library(lib, keep).map_err(|detail| {
        CublasFailure::Load(LoadFailure {
            library: path.display().to_string(),
            detail,
            missing: Vec::new(),
        })
    })?;
    Ok(Cublas {
        api,
        library: path,
        major,
        version,
    })
}

/// A failed step of the GEMM check.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GemmError {
    #[error(transparent)]
    Cuda(#[from] CudaError),
    #[error("{call} failed: {status}")]
    Cublas { call: &'static str, status: String },
}

struct Handle_(Handle, *const CublasApi);

impl Drop for Handle_ {
    fn drop(&mut self) {
        // SAFETY: created by cublasCreate; the API table outlives the handle.
        unsafe { ((*self.1).cublasDestroy_v2)(self.0) };
    }
}

fn cublas_check(call: &'static str, status: c_int) -> Result<(), GemmError> {
    if status == 0 {
        Ok(())
    } else {
        Err(GemmError::Cublas {
            call,
            status: format!("{} ({status})", cublas_status_name(status)),
        })
    }
}

/// One timed, checked GEMM.
#[derive(Debug, Clone, Serialize)]
pub struct GemmResult {
    pub precision: Precision,
    /// m = n = k.
    pub size: usize,
    /// Mean milliseconds per GEMM in the best of three timed runs.
    pub ms: f64,
    pub gflops: f64,
    pub iterations: u32,
    pub accuracy: Accuracy,
    /// The same product on the CPU, estimated from the timed reference entries
    /// ([`reference::cpu_gemm_ms`]): what the speed-up is measured against.
    pub cpu_ms: Option<f64>,
}

/// What the GEMM check ran and found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GemmReport {
    pub cublas_library: Option<PathBuf>,
    pub cublas_version: Option<Version>,
    pub results: Vec<GemmResult>,
    /// Precisions not run, with why (`tf32: needs compute capability 8.0`).
    pub not_run: Vec<String>,
}

impl GemmReport {
    /// How many times faster the GPU ran its largest single-precision product than the
    /// CPU reference would have (None before one ran, or when it was not timed).
    pub fn speedup(&self) -> Option<f64> {
        let r = self
            .results
            .iter()
            .filter(|r| r.precision == Precision::Fp32 && r.ms > 0.0)
            .max_by_key(|r| r.size)?;
        Some(r.cpu_ms? / r.ms)
    }
}

/// The seeds of the two input matrices (fixed, so a failure reproduces).
const SEED_A: u64 = 0x5eed_000a;
const SEED_B: u64 = 0x5eed_000b;
const SAMPLES: usize = 256;

/// Runs every precision the GPU supports at each size that fits in its memory.
/// `progress` hears about each result as it lands.
pub fn run(
    dev: &Device,
    cublas: &Cublas,
    sizes: &[usize],
    report: &mut GemmReport,
    mut progress: impl FnMut(&GemmReport),
) -> Result<(), GemmError> {
    let api = &cublas.api;
    let mut raw: Handle = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the device's context is current on this thread.
    cublas_check("cublasCreate", unsafe { (api.cublasCreate_v2)(&mut raw) })?;
    let handle = Handle_(raw, api);
    let mut v = 0;
    // SAFETY: live handle.
    if unsafe { (api.cublasGetVersion_v2)(handle.0, &mut v) } == 0 {
        report.cublas_version = Some(decode_cublas_version(v));
    }
    report.cublas_library = Some(cublas.library.clone());

    let cc = dev.info.compute_capability;
    let (free, _) = dev.memory()?;
    let fit_any = reference::sizes_that_fit(sizes, 4, free);
    let host_n = fit_any.iter().copied().max().unwrap_or(0).max(
        reference::sizes_that_fit(sizes, 2, free)
            .into_iter()
            .max()
            .unwrap_or(0),
    );
    if host_n == 0 {
        report.not_run.push(format!(
            "all: {} MiB free on the GPU is too little even for {}×{}",
            free >> 20,
            sizes.iter().min().unwrap_or(&0),
            sizes.iter().min().unwrap_or(&0)
        ));
        progress(report);
        return Ok(());
    }
    let a = reference::test_matrix(host_n * host_n, SEED_A);
    let b = reference::test_matrix(host_n * host_n, SEED_B);

    for p in Precision::ALL {
        let (maj, min) = p.min_cc();
        if (cc.major, cc.minor) < (maj, min) {
            report.not_run.push(format!(
                "{}: needs compute capability {maj}.{min} (tensor cores); this GPU is {cc}",
                p.name()
            ));
            continue;
        }
        let fit = reference::sizes_that_fit(sizes, p.element_bytes(), free);
        for n in sizes.iter().filter(|n| !fit.contains(n)) {
            report.not_run.push(format!(
                "{} {n}×{n}: {} MiB free on the GPU is too little",
                p.name(),
                free >> 20
            ));
        }
        let Some(max_n) = fit.iter().copied().max() else {
            continue;
        };
        let elems = max_n * max_n;
        let eb = p.element_bytes();
        let mut da = dev.alloc(elems * eb)?;
        let mut db = dev.alloc(elems * eb)?;
        let dc = dev.alloc(elems * eb)?;
        for &n in &fit {
            // Each size uses the first n² values of the same matrices.
            let (ha, hb) = (&a[..n * n], &b[..n * n]);
            match p {
                Precision::Fp16 => {
                    let to_h =
                        |x: &[f32]| -> Vec<u16> { x.iter().map(|v| f32_to_f16_bits(*v)).collect() };
                    da.upload(&to_h(ha))?;
                    db.upload(&to_h(hb))?;
                }
                _ => {
                    da.upload(ha)?;
                    db.upload(hb)?;
                }
            }
            let gemm = || -> Result<(), GemmError> { launch(api, handle.0, p, n, &da, &db, &dc) };
            // Warm-up (also the result that is checked), then an estimate of one GEMM.
            gemm()?;
            dev.synchronize()?;
            let (accuracy, cpu_ms) = check(p, n, ha, hb, &dc)?;
            let one = dev.time(gemm)?;
            let iterations = iterations_for(one, 200.0);
            let mut best = f64::INFINITY;
            for _ in 0..3 {
                let ms = dev.time(|| {
                    for _ in 0..iterations {
                        gemm()?;
                    }
                    Ok::<(), GemmError>(())
                })?;
                best = best.min(ms / f64::from(iterations));
            }
            report.results.push(GemmResult {
                precision: p,
                size: n,
                ms: best,
                gflops: gflops(n, n, n, best),
                iterations,
                accuracy,
                cpu_ms,
            });
            progress(report);
        }
    }
    Ok(())
}

fn launch(
    api: &CublasApi,
    handle: Handle,
    p: Precision,
    n: usize,
    a: &crate::cuda::DeviceBuffer,
    b: &crate::cuda::DeviceBuffer,
    c: &crate::cuda::DeviceBuffer,
) -> Result<(), GemmError> {
    let n = n as c_int;
    let (alpha, beta) = (1.0f32, 0.0f32);
    // SAFETY: the buffers hold at least n² elements of the precision's type; alpha and
    // beta are host floats (cuBLAS's default pointer mode) matching the 32F compute type.
    let status = unsafe {
        match p {
            Precision::Fp32 => (api.cublasSgemm_v2)(
                handle,
                OP_N,
                OP_N,
                n,
                n,
                n,
                &alpha,
                a.as_ptr(),
                n,
                b.as_ptr(),
                n,
                &beta,
                c.as_ptr(),
                n,
            ),
            Precision::Tf32 | Precision::Fp16 => {
                let (ty, compute) = if p == Precision::Tf32 {
                    (CUDA_R_32F, COMPUTE_32F_FAST_TF32)
                } else {
                    (CUDA_R_16F, COMPUTE_32F)
                };
                (api.cublasGemmEx)(
                    handle,
                    OP_N,
                    OP_N,
                    n,
                    n,
                    n,
                    (&alpha as *const f32).cast(),
                    a.as_ptr(),
                    ty,
                    n,
                    b.as_ptr(),
                    ty,
                    n,
                    (&beta as *const f32).cast(),
                    c.as_ptr(),
                    ty,
                    n,
                    compute,
                    GEMM_DEFAULT,
                )
            }
        }
    };
    cublas_check(
        if p == Precision::Fp32 {
            "cublasSgemm"
        } else {
            "cublasGemmEx"
        },
        status,
    )
}

/// Downloads C, scans all of it for NaN/Inf, and compares sampled entries with the CPU;
/// the comparison is timed, which gives the CPU's time for the whole product.
fn check(
    p: Precision,
    n: usize,
    a: &[f32],
    b: &[f32],
    dc: &crate::cuda::DeviceBuffer,
) -> Result<(Accuracy, Option<f64>), GemmError> {
    let c: Vec<f32> = match p {
        Precision::Fp16 => {
            let mut h = vec![0u16; n * n];
            dc.download(&mut h)?;
            h.into_iter().map(f16_bits_to_f32).collect()
        }
        _ => {
            let mut c = vec![0f32; n * n];
            dc.download(&mut c)?;
            c
        }
    };
    let all_finite = c.iter().all(|x| x.is_finite());
    let positions = sample_positions(n, n, SAMPLES, n as u64);
    let t = Instant::now();
    let accuracy = reference::compare(
        &positions,
        |i, j| f64::from(c[i + j * n]),
        |i, j| reference::gemm_entry(a, b, n, n, i, j),
        all_finite,
        p.tolerance(),
    );
    let sampled_ms = t.elapsed().as_secs_f64() * 1e3;
    Ok((
        accuracy,
        reference::cpu_gemm_ms(sampled_ms, positions.len(), n, n),
    ))
}

/// One bandwidth figure.
#[derive(Debug, Clone, Serialize)]
pub struct Bandwidth {
    /// `pageable` (ordinary memory) or `pinned` (page-locked, `pin_memory=True`).
    pub memory: &'static str,
    /// `host_to_device` or `device_to_host`.
    pub direction: &'static str,
    pub bytes: usize,
    /// Best of five copies.
    pub gb_per_s: f64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct BandwidthReport {
    pub results: Vec<Bandwidth>,
    /// Pinned host→device speed over pageable (how much `pin_memory=True` helps here).
    pub pinned_speedup: Option<f64>,
    /// The bytes came back as they went (each memory kind, a full round trip).
    pub round_trip_ok: bool,
}

/// Copies `bytes` each way from pageable and from pinned memory.
pub fn bandwidth(dev: &Device, bytes: usize) -> Result<BandwidthReport, CudaError> {
    let mut out = BandwidthReport {
        round_trip_ok: true,
        ..Default::default()
    };
    let mut dbuf = dev.alloc(bytes)?;
    let mut pageable: Vec<u8> = (0..bytes).map(|i| (i * 31 + 7) as u8).collect();
    let mut pinned = dev.alloc_pinned(bytes)?;
    pinned
        .as_mut_slice()
        .iter_mut()
        .enumerate()
        .for_each(|(i, b)| *b = (i * 17 + 3) as u8);
    for memory in ["pageable", "pinned"] {
        let host: &mut [u8] = if memory == "pinned" {
            pinned.as_mut_slice()
        } else {
            &mut pageable
        };
        for direction in ["host_to_device", "device_to_host"] {
            let mut best = f64::INFINITY;
            for rep in 0..6 {
                let t = Instant::now();
                if direction == "host_to_device" {
                    dbuf.upload(&*host)?;
                } else {
                    dbuf.download(&mut *host)?;
                }
                // A pageable upload may return before the DMA ends.
                dev.synchronize()?;
                // The first copy is a warm-up.
                if rep > 0 {
                    best = best.min(t.elapsed().as_secs_f64());
                }
            }
            out.results.push(Bandwidth {
                memory,
                direction,
                bytes,
                gb_per_s: gb_per_s(bytes, best),
            });
        }
        // Up then down: the host buffer must hold what it held.
        out.round_trip_ok &= host.iter().enumerate().all(|(i, b)| {
            *b == if memory == "pinned" {
                (i * 17 + 3) as u8
            } else {
                (i * 31 + 7) as u8
            }
        });
    }
    let h2d = |m: &str| {
        out.results
            .iter()
            .find(|r| r.memory == m && r.direction == "host_to_device")
            .map(|r| r.gb_per_s)
    };
    out.pinned_speedup = match (h2d("pinned"), h2d("pageable")) {
        (Some(p), Some(q)) if q > 0.0 => Some(p / q),
        _ => None,
    };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_and_version_decoding() {
        assert_eq!(cublas_status_name(13), "CUBLAS_STATUS_EXECUTION_FAILED");
        assert_eq!(cublas_status_name(99), "CUBLAS_STATUS_UNKNOWN");
        assert_eq!(decode_cublas_version(120405).to_string(), "12.4.5");
        assert_eq!(decode_cublas_version(111103).to_string(), "11.11.3");
    }

    fn result(precision: Precision, size: usize, ms: f64, cpu_ms: Option<f64>) -> GemmResult {
        GemmResult {
            precision,
            size,
            ms,
            gflops: gflops(size, size, size, ms),
            iterations: 1,
            accuracy: reference::compare(&[], |_, _| 0.0, |_, _| (0.0, 1.0), true, 1.0),
            cpu_ms,
        }
    }

    #[test]
    fn the_speedup_is_the_largest_single_precision_product_against_the_cpu() {
        let mut r = GemmReport::default();
        assert_eq!(r.speedup(), None, "nothing ran");
        r.results = vec![
            result(Precision::Fp32, 1024, 1.0, Some(50.0)),
            result(Precision::Fp32, 2048, 4.0, Some(400.0)),
            // Half precision is faster still, but the CPU reference is single precision.
            result(Precision::Fp16, 4096, 1.0, Some(3200.0)),
        ];
        assert_eq!(r.speedup(), Some(100.0));
        r.results[1].cpu_ms = None;
        assert_eq!(r.speedup(), None, "the largest one was not timed");
    }

    #[test]
    fn library_dirs_start_with_the_runtime_folder() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        let dirs = library_dirs(Os::Windows, root, &root.join("bin/x64"));
        assert_eq!(dirs[0], root.join("bin/x64"));
        assert_eq!(dirs.last().unwrap(), &root.to_path_buf());
        // No duplicates (bin/x64 is also in the fallback list).
        assert_eq!(
            dirs.iter().filter(|p| **p == root.join("bin/x64")).count(),
            1
        );
        let dirs = library_dirs(Os::Linux, root, &root.join("lib64"));
        assert_eq!(dirs[0], root.join("lib64"));
        assert!(dirs.contains(&root.join("lib")));
    }
}
