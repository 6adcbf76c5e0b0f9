//! The link names a developer's build needs from a toolkit, where NVIDIA's installer puts
//! them, and which of its sub-packages lays each one down.
//! OWNER: #19 helper "build check" (H4a).

use std::path::Path;

use serde::Serialize;

use crate::compat::Os;
use crate::version::Version;

/// One library a developer links: `-lcublas` / `cublas.lib`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LinkName {
    /// The name after `-l`: `cudart`, `cublas`, `cudnn`, `cuda`.
    pub lib: String,
    /// Where it must be, relative to the toolkit folder: `lib64/libcublas.so`,
    /// `lib64/stubs/libcuda.so`, `lib/x64/cublas.lib`.
    pub rel: String,
    pub present: bool,
    /// The installer sub-package that lays it down (`cublas_dev_13.5`), where known.
    pub package: Option<String>,
}

/// The link names the build check needs for the toolkit at `dir`: cudart, cuBLAS, the
/// driver (`cuda`, through the stubs on Linux) and, when `cudnn`, cuDNN.
pub fn link_names(os: Os, dir: &Path, version: &Version, cudnn: bool) -> Vec<LinkName> {
    let _ = (os, dir, version, cudnn);
    unimplemented!("#19 H4a")
}
