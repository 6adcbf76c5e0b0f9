//! The build check: can a developer compile *and link* against this toolkit? First the
//! link names (`devlayout::link_names`) must be there — a missing one is named; then,
//! when a host compiler exists (g++ on Linux; cl.exe on Windows, found as the nvcc check
//! finds it), nvcc builds a small program against the shared cudart, cuBLAS, cuDNN (when
//! installed) and the driver (`-lcuda`, through the stubs on Linux). Nothing runs on a GPU.
//! OWNER: #19 helper "build check" (H4a).

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::nvcc::HostCompiler;
use super::{Check, Status};
use crate::devlayout::LinkName;
use crate::platform::Host;
use crate::version::Version;

pub struct BuildOptions<'a> {
    pub host: &'a Host,
    pub toolkit: &'a Path,
    pub version: Option<&'a Version>,
    /// Link cuDNN too (it is installed in the toolkit).
    pub cudnn: bool,
    pub timeout: Duration,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct BuildReport {
    pub link_names: Vec<LinkName>,
    /// The missing link names' paths (relative to the toolkit), for messages.
    pub missing: Vec<String>,
    pub host_compiler: Option<HostCompiler>,
    /// The `-l` names the program was linked with: `cudart`, `cublas`, `cudnn`, `cuda`.
    pub libraries: Vec<String>,
    pub compiled: bool,
    pub linked: bool,
}

/// Runs the build check. Failed (missing link names, or the compiler's first error line),
/// Skipped (no toolkit version, no host compiler — with the fix), or Passed.
pub fn check(o: &BuildOptions) -> Check<BuildReport> {
    let _ = o;
    let _ = Status::Skipped;
    unimplemented!("#19 H4a")
}
