//! Linux link names: `libX.so → libX.so.N`, as NVIDIA's runfile and tarballs have them.
//! OWNER: #19 helper "layout" (H1).

use std::path::Path;

use super::DevError;

/// The unversioned link name of a versioned library file name: `libcublas.so.13` →
/// `libcublas.so`; None for anything else (`libcudart_static.a`, `libcublas.so`).
pub fn unversioned(file: &str) -> Option<String> {
    let _ = file;
    unimplemented!("#19 H1")
}

/// In folder `lib`, a relative link `libX.so → libX.so.N` for every versioned library
/// that has no unversioned name yet. Returns the link names made, sorted.
pub fn add_links(lib: &Path) -> Result<Vec<String>, DevError> {
    let _ = lib;
    unimplemented!("#19 H1")
}
