//! The wheels the #21 benches install: NVIDIA's real Linux wheels for CUDA 13.2's developer
//! components and cuDNN 9.27 (1.7 GB), from `BENCH_WHEELS` (a folder of .whl) or
//! `pip download`ed once into `target/bench-wheels/linux` (needs PyPI). Included by path
//! beside `tests/support/wheels.rs` (as `wheels`).

use std::path::{Path, PathBuf};

/// The `cuda-toolkit` 13.2.2 metapackage's developer-component pins on Linux, and the
/// cuDNN the tables recommend with it.
pub const PINS: &[&str] = &[
    "cuda-toolkit==13.2.2",
    "nvidia-cublas==13.4.1.3",
    "nvidia-cuda-cccl==13.2.86",
    "nvidia-cuda-crt==13.2.86",
    "nvidia-cuda-nvcc==13.2.86",
    "nvidia-cuda-nvrtc==13.2.86",
    "nvidia-cuda-profiler-api==13.2.86",
    "nvidia-cuda-runtime==13.2.86",
    "nvidia-cudnn-cu13==9.27.0.42",
    "nvidia-cufft==12.2.0.57",
    "nvidia-curand==10.4.2.66",
    "nvidia-cusolver==12.2.0.11",
    "nvidia-cusparse==12.7.10.12",
    "nvidia-nvjitlink==13.5.37",
    "nvidia-nvtx==13.2.86",
    "nvidia-nvvm==13.2.86",
];

/// The platform tags those wheels carry.
const TAGS: &[&str] = &[
    "manylinux_2_27_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "manylinux_2_12_x86_64",
    "manylinux2010_x86_64",
    "manylinux_2_5_x86_64",
    "manylinux1_x86_64",
];

/// The folder holding the wheels, fetched first if need be.
pub fn dir() -> PathBuf {
    if let Some(d) = std::env::var_os("BENCH_WHEELS") {
        return PathBuf::from(d);
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-wheels/linux");
    let have = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "whl"))
                .count()
        })
        .unwrap_or(0);
    if have < PINS.len() {
        eprintln!(
            "fetching NVIDIA's wheels with pip into {} (once)",
            dir.display()
        );
        super::wheels::pip_download(&dir, TAGS, PINS);
    }
    dir
}
