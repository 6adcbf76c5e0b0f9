//! Windows import libraries for DLLs NVIDIA's wheels ship without one (`cublas64_13.dll`
//! has no `cublas.lib`): the DLL's export table is read with `object` and the library
//! written with `ar_archive_writer` (what rustc writes its raw-dylib import libraries with).
//! OWNER: #19 helper "implib" (H2).

use std::path::Path;

use super::DevError;

/// The import library NVIDIA's installer names for a DLL: `cublas64_13.dll` →
/// `cublas.lib`, `cudnn_adv64_9.dll` → `cudnn_adv.lib`, `nvrtc64_130_0.dll` → `nvrtc.lib`,
/// `nvJitLink_130_0.dll` → `nvJitLink.lib`; None for DLLs nobody links against
/// (`nvrtc-builtins64_130.dll`) or names that do not follow the pattern.
pub fn lib_name_for_dll(dll: &str) -> Option<String> {
    let _ = dll;
    unimplemented!("#19 H2")
}

/// The names a DLL exports (by name), sorted.
pub fn dll_exports(dll: &Path) -> Result<Vec<String>, DevError> {
    let _ = dll;
    unimplemented!("#19 H2")
}

/// Writes an x64 MSVC import library at `lib` for `dll_name` exporting `exports`.
pub fn write_import_lib(lib: &Path, dll_name: &str, exports: &[String]) -> Result<(), DevError> {
    let _ = (lib, dll_name, exports);
    unimplemented!("#19 H2")
}

/// The DLL an import library imports from and the names it lists, sorted.
pub fn read_import_lib(lib: &Path) -> Result<(String, Vec<String>), DevError> {
    let _ = lib;
    unimplemented!("#19 H2")
}

/// Reads `dll`'s exports and writes `lib`; returns how many names it lists.
pub fn generate(dll: &Path, lib: &Path) -> Result<usize, DevError> {
    let exports = dll_exports(dll)?;
    let name = dll
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    write_import_lib(lib, &name, &exports)?;
    Ok(exports.len())
}

/// What [`add_import_libs`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportLibs {
    /// `lib/x64/cublas.lib`, relative to the toolkit folder, sorted.
    pub made: Vec<String>,
    /// DLLs whose export table could not be read (`bin/x64/foo64_1.dll`): no library
    /// was made for them; the build check names the missing `.lib`.
    pub unreadable: Vec<String>,
}

/// In the Windows toolkit tree at `dir`: for every DLL in `bin\x64\` and `bin\` whose
/// import library (by [`lib_name_for_dll`]) is not in `lib\x64\`, generates it there.
/// Idempotent. A DLL that cannot be read is listed, not fatal.
// CONTRACT NOTE: returns nothing until H2 lands, so the wheels tests keep passing.
pub fn add_import_libs(dir: &Path) -> Result<ImportLibs, DevError> {
    let _ = dir;
    Ok(ImportLibs::default())
}
