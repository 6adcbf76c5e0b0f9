//! Completes a toolkit tree the wheels method assembled so developers can build with it.
//! OWNER: #19 helper "layout" (H1).

use std::path::Path;

use super::{Completion, DevError};
use crate::compat::Os;
use crate::version::Version;

/// Adds to the tree at `dir` (a staging folder or a finished tree of ours) what NVIDIA's
/// installer has and the wheels lack. Idempotent: what is already there is kept.
pub fn complete(os: Os, dir: &Path, version: &Version) -> Result<Completion, DevError> {
    let _ = (os, dir, version);
    unimplemented!("#19 H1")
}
