//! cuda-setup's calls into the GPU. NVIDIA's libraries are loaded at run time (nothing
//! is linked at build time, so the binary starts on a machine with no CUDA); a failed
//! load names the file that is missing. The driver API and cuBLAS run the smoke test's
//! matrix product, checked against a CPU reference; NVML samples utilisation while a
//! check runs. Every `unsafe` block here calls a C function through a pointer typed from
//! NVIDIA's headers, and says so (`clippy::undocumented_unsafe_blocks` is denied).

#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]
#![deny(clippy::undocumented_unsafe_blocks)]

// The base crate's modules, under the names the code has always used.
use cuda_setup_base::{os, platform, version};

#[macro_use]
pub mod loader;
pub mod cuda;
pub mod cudnn;
pub mod gemm;
pub mod libwalk;
pub mod monitor;
pub mod reference;
