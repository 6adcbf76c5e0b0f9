//! The driver stub NVIDIA's installer puts in `lib64/stubs/libcuda.so`: a shared library
//! with SONAME `libcuda.so.1` that exports the driver API, so `-lcuda` links on a machine
//! without a driver (the real driver's `libcuda.so.1` is what loads at run time). No wheel
//! carries it; we write it from the declarations in the toolkit's own `cuda.h`.
//! OWNER: #19 helper "layout" (H1).

use std::path::Path;

use super::DevError;

/// The driver API's exported names declared in `cuda.h`'s text (`cuInit`, and the
/// versioned names its `#define cuX cuX_v2` lines map to), sorted, without duplicates.
pub fn symbols_from_header(cuda_h: &str) -> Vec<String> {
    let _ = cuda_h;
    unimplemented!("#19 H1")
}

/// Writes an x86-64 ELF shared library at `path` with SONAME `soname` exporting
/// `symbols` (functions), with the section headers a linker reads (`.dynsym`, `.dynstr`,
/// `.dynamic`, `.hash`).
pub fn write_stub(path: &Path, soname: &str, symbols: &[String]) -> Result<(), DevError> {
    let _ = (path, soname, symbols);
    unimplemented!("#19 H1")
}
