//! Windows import libraries for DLLs NVIDIA's wheels ship without one (`cublas64_13.dll`
//! has no `cublas.lib`): the DLL's export table is read with `object` and the library
//! written with `ar_archive_writer` (what rustc writes its raw-dylib import libraries with).
//! OWNER: #19 helper "implib" (H2).
//!
//! A DLL and an import library are input: their sizes are bounded before anything is
//! read (a 500 MB `cublasLt64_13.dll` is read through a cache, its export directory
//! only), and nothing here ever runs or loads them. Plain files: works on any OS.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};

use object::LittleEndian as LE;
use object::pe;
use object::read::pe::{ExportTarget, PeFile64};

use super::DevError;

/// No DLL NVIDIA ships comes near: `cublasLt64_13.dll` is ~500 MB, and PE images cannot
/// pass 4 GiB.
pub const MAX_DLL_BYTES: u64 = 4 << 30;
/// `cublasLt64_13.dll`'s export directory is well under 1 MB.
pub const MAX_EXPORT_DIRECTORY_BYTES: u32 = 64 << 20;
/// No DLL of ours exports more names (cuBLAS: a few hundred; cuDNN: under a thousand).
pub const MAX_EXPORTS: usize = 200_000;
/// An import library is ~250 bytes per name: far below this.
pub const MAX_LIB_BYTES: u64 = 256 << 20;

/// The import library NVIDIA's installer names for a DLL: `cublas64_13.dll` →
/// `cublas.lib`, `cudnn_adv64_9.dll` → `cudnn_adv.lib`, `nvrtc64_130_0.dll` → `nvrtc.lib`,
/// `nvJitLink_130_0.dll` → `nvJitLink.lib`; None for DLLs nobody links against
/// (`nvrtc-builtins64_130.dll`) or names that do not follow the pattern.
pub fn lib_name_for_dll(dll: &str) -> Option<String> {
    if dll.contains(['/', '\\', ':']) {
        return None;
    }
    let dot = dll.len().checked_sub(4)?;
    if !dll.is_char_boundary(dot) || !dll[dot..].eq_ignore_ascii_case(".dll") {
        return None;
    }
    let mut stem = &dll[..dot];
    // Version groups at the end: `_13`, `_130_0`, `_110`, (CUPTI) `_2025.1.0`.
    let mut versions = 0;
    while let Some((rest, group)) = stem.rsplit_once('_') {
        let version = !group.is_empty()
            && group.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && group.bytes().next().is_some_and(|b| b.is_ascii_digit());
        if !version {
            break;
        }
        stem = rest;
        versions += 1;
    }
    if versions == 0 {
        return None;
    }
    // The bitness NVIDIA puts before the version (`cublas64`), not in the library's name.
    let name = stem.strip_suffix("64").unwrap_or(stem);
    let plain = name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    // `nvrtc-builtins64_130.dll` is loaded by nvrtc itself; its '-' already rules it out.
    plain.then(|| format!("{name}.lib"))
}

/// One name a DLL exports, and whether it is data (its address is in a section that does
/// not execute): an import library marks those DATA, so the linker makes no code thunk.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Export {
    pub name: String,
    pub data: bool,
}

fn malformed(path: &Path, detail: impl Into<String>) -> DevError {
    DevError::Malformed {
        path: path.to_path_buf(),
        detail: detail.into(),
    }
}

/// The names a DLL exports (by name), sorted.
pub fn dll_exports(dll: &Path) -> Result<Vec<String>, DevError> {
    Ok(read_exports(dll)?.into_iter().map(|e| e.name).collect())
}

/// The names a DLL exports (by name) with their kind, sorted by name. A DLL without an
/// export table exports nothing. Ordinal-only exports are left out (nobody links to
/// NVIDIA's libraries by ordinal); forwarded ones are kept (the loader follows them).
pub fn read_exports(dll: &Path) -> Result<Vec<Export>, DevError> {
    let file = File::open(dll).map_err(|e| DevError::io(dll, e))?;
    let len = file.metadata().map_err(|e| DevError::io(dll, e))?.len();
    if len > MAX_DLL_BYTES {
        return Err(malformed(
            dll,
            format!("{len} bytes: larger than any DLL can be"),
        ));
    }
    let cache = object::ReadCache::new(file);
    let pe =
        PeFile64::parse(&cache).map_err(|e| malformed(dll, format!("not a 64-bit DLL: {e}")))?;
    let headers = pe.nt_headers();
    let machine = headers.file_header.machine.get(LE);
    if machine != pe::IMAGE_FILE_MACHINE_AMD64 {
        return Err(malformed(
            dll,
            format!("built for machine {machine:#06x}, not x64"),
        ));
    }
    let Some(dir) = pe.data_directory(pe::IMAGE_DIRECTORY_ENTRY_EXPORT) else {
        return Ok(Vec::new());
    };
    let size = dir.size.get(LE);
    if size > MAX_EXPORT_DIRECTORY_BYTES {
        return Err(malformed(
            dll,
            format!("an export directory of {size} bytes (limit {MAX_EXPORT_DIRECTORY_BYTES})"),
        ));
    }
    let table = pe
        .export_table()
        .map_err(|e| malformed(dll, format!("export table: {e}")))?
        .ok_or_else(|| malformed(dll, "no export table"))?;
    let names = table.name_pointers().len();
    if names > MAX_EXPORTS {
        return Err(malformed(
            dll,
            format!("{names} exported names (limit {MAX_EXPORTS})"),
        ));
    }
    let sections = pe.section_table();
    let mut out = BTreeMap::new();
    for (pointer, index) in table.name_iter() {
        let name = table
            .name_from_pointer(pointer)
            .map_err(|e| malformed(dll, format!("export name: {e}")))?;
        let target = table.target_by_index(index).map_err(|e| {
            malformed(
                dll,
                format!("export {}: {e}", String::from_utf8_lossy(name)),
            )
        })?;
        // A name no linker could take (not UTF-8, empty, with spaces) is left out.
        let Ok(name) = std::str::from_utf8(name) else {
            continue;
        };
        if name.is_empty()
            || name
                .bytes()
                .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            continue;
        }
        let data = match target {
            ExportTarget::Address(rva) => !sections.section_containing(rva).is_some_and(|s| {
                s.characteristics
                    .get(LE)
                    .intersects(pe::IMAGE_SCN_MEM_EXECUTE | pe::IMAGE_SCN_CNT_CODE)
            }),
            ExportTarget::ForwardByName(..) | ExportTarget::ForwardByOrdinal(..) => false,
        };
        out.entry(name.to_string()).or_insert(data);
    }
    Ok(out
        .into_iter()
        .map(|(name, data)| Export { name, data })
        .collect())
}

/// Writes an x64 MSVC import library at `lib` for `dll_name` exporting `exports`.
pub fn write_import_lib(lib: &Path, dll_name: &str, exports: &[String]) -> Result<(), DevError> {
    let exports: Vec<Export> = exports
        .iter()
        .map(|name| Export {
            name: name.clone(),
            data: false,
        })
        .collect();
    write_import_lib_with(lib, dll_name, &exports)
}

/// [`write_import_lib`] with each name's kind (data exports get no code thunk). Written
/// beside `lib` first and renamed over it: a killed run never leaves half a library
/// that a later run would take for a finished one.
pub fn write_import_lib_with(
    lib: &Path,
    dll_name: &str,
    exports: &[Export],
) -> Result<(), DevError> {
    let bytes = import_lib_bytes(lib, dll_name, exports)?;
    let tmp = temp_beside(lib);
    std::fs::write(&tmp, &bytes).map_err(|e| DevError::io(&tmp, e))?;
    std::fs::rename(&tmp, lib).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        DevError::io(lib, e)
    })
}

/// The bytes of the import library [`write_import_lib_with`] writes (`lib` names it in
/// errors), for a caller that writes it itself (relative to a folder held open).
pub fn import_lib_bytes(
    lib: &Path,
    dll_name: &str,
    exports: &[Export],
) -> Result<Vec<u8>, DevError> {
    if dll_name.is_empty() || dll_name.contains(['/', '\\', '\0', ':']) {
        return Err(malformed(
            lib,
            format!("\"{dll_name}\" is not a DLL's file name"),
        ));
    }
    if let Some(bad) = exports
        .iter()
        .find(|e| e.name.is_empty() || e.name.contains('\0'))
    {
        return Err(malformed(
            lib,
            format!(
                "\"{}\" is not a name a DLL exports",
                bad.name.escape_debug()
            ),
        ));
    }
    let entries: Vec<ar_archive_writer::COFFShortExport> = exports
        .iter()
        .map(|e| ar_archive_writer::COFFShortExport {
            name: e.name.clone(),
            ext_name: None,
            symbol_name: None,
            import_name: None,
            export_as: None,
            ordinal: 0,
            noname: false,
            data: e.data,
            private: false,
            constant: false,
        })
        .collect();
    let mut bytes = std::io::Cursor::new(Vec::new());
    ar_archive_writer::write_import_library(
        &mut bytes,
        dll_name,
        &entries,
        ar_archive_writer::MachineTypes::AMD64,
        false, // MSVC's flavour: what link.exe (and lld-link) expect
        false,
        &[],
    )
    .map_err(|e| malformed(lib, format!("cannot write the import library: {e}")))?;
    Ok(bytes.into_inner())
}

fn temp_beside(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp-{}", std::process::id()));
    path.with_file_name(name)
}

/// The DLL an import library imports from and the names it lists, sorted.
pub fn read_import_lib(lib: &Path) -> Result<(String, Vec<String>), DevError> {
    let (dll, imports) = read_import_lib_with(lib)?;
    Ok((dll, imports.into_iter().map(|e| e.name).collect()))
}

/// [`read_import_lib`] with each name's kind (DATA or code).
pub fn read_import_lib_with(lib: &Path) -> Result<(String, Vec<Export>), DevError> {
    // Read at most one byte past the limit, whatever the file says its size is.
    let file = File::open(lib).map_err(|e| DevError::io(lib, e))?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(file, MAX_LIB_BYTES + 1),
        &mut bytes,
    )
    .map_err(|e| DevError::io(lib, e))?;
    if bytes.len() as u64 > MAX_LIB_BYTES {
        return Err(malformed(
            lib,
            format!("larger than any import library (limit {MAX_LIB_BYTES} bytes)"),
        ));
    }
    let archive = object::read::archive::ArchiveFile::parse(&*bytes)
        .map_err(|e| malformed(lib, format!("not a library archive: {e}")))?;
    let mut dll: Option<String> = None;
    let mut names = BTreeMap::new();
    for member in archive.members() {
        let member = member.map_err(|e| malformed(lib, format!("archive member: {e}")))?;
        let data = member
            .data(&*bytes)
            .map_err(|e| malformed(lib, format!("archive member: {e}")))?;
        // The import descriptor and the null thunk are ordinary COFF objects: only the
        // short import objects name what is imported.
        let Ok(import) = object::read::coff::ImportFile::parse(data) else {
            continue;
        };
        let from = String::from_utf8_lossy(import.dll()).into_owned();
        match &dll {
            None => dll = Some(from),
            Some(d) if d.eq_ignore_ascii_case(&from) => {}
            Some(d) => {
                return Err(malformed(lib, format!("imports from both {d} and {from}")));
            }
        }
        let data = import.import_type() != object::read::coff::ImportType::Code;
        names.insert(String::from_utf8_lossy(import.symbol()).into_owned(), data);
    }
    let dll = dll.ok_or_else(|| malformed(lib, "imports nothing (no short import objects)"))?;
    Ok((
        dll,
        names
            .into_iter()
            .map(|(name, data)| Export { name, data })
            .collect(),
    ))
}

/// Reads `dll`'s exports and writes `lib`; returns how many names it lists.
pub fn generate(dll: &Path, lib: &Path) -> Result<usize, DevError> {
    let exports = read_exports(dll)?;
    let name = dll
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    write_import_lib_with(lib, &name, &exports)?;
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

/// The DLL folders of a Windows toolkit, in the order they are looked at: 13.x keeps its
/// DLLs in `bin\x64\`, earlier toolkits in `bin\`.
pub const DLL_DIRS: [&str; 2] = ["bin/x64", "bin"];
/// Where NVIDIA's installer keeps the import libraries.
pub const LIB_DIR: &str = "lib/x64";

/// In the Windows toolkit tree at `dir`: for every DLL in `bin\x64\` and `bin\` whose
/// import library (by [`lib_name_for_dll`]) is not in `lib\x64\`, generates it there.
/// Idempotent. A DLL that cannot be read is listed, not fatal. A DLL that exports no
/// name gets no library (there is nothing to link against).
pub fn add_import_libs(dir: &Path) -> Result<ImportLibs, DevError> {
    add_import_libs_except(dir, &[])
}

/// [`add_import_libs`], leaving alone the DLLs in `others` (`bin/x64/cudnn64_9.dll`,
/// relative to `dir`): cuDNN's, whose own transaction makes their libraries.
pub fn add_import_libs_except(dir: &Path, others: &[String]) -> Result<ImportLibs, DevError> {
    let lib_dir = dir.join(LIB_DIR);
    // Never written through a link: `lib` or `lib\x64` could lead out of the tree.
    for p in [dir.join("lib"), lib_dir.clone()] {
        if std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(DevError::Malformed {
                path: p,
                detail: "is a symbolic link; nothing is written through it".into(),
            });
        }
    }
    // Compared as Windows does: `CUBLAS.lib` is `cublas.lib`. Any entry counts as there
    // (a link too: it is not ours to replace).
    let mut have: BTreeSet<String> = match std::fs::read_dir(&lib_dir) {
        Ok(rd) => rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_ascii_lowercase())
            .collect(),
        Err(_) => BTreeSet::new(),
    };
    let mut out = ImportLibs::default();
    for sub in DLL_DIRS {
        let bin = dir.join(sub);
        for name in file_names(&bin)? {
            let Some(lib_name) = lib_name_for_dll(&name) else {
                continue;
            };
            if have.contains(&lib_name.to_ascii_lowercase())
                || others.iter().any(|o| *o == format!("{sub}/{name}"))
            {
                continue;
            }
            let dll = bin.join(&name);
            let exports = match read_exports(&dll) {
                Ok(e) => e,
                Err(e) => {
                    tracing::warn!("no import library for {}: {e}", dll.display());
                    out.unreadable.push(format!("{sub}/{name}"));
                    continue;
                }
            };
            if exports.is_empty() {
                continue;
            }
            std::fs::create_dir_all(&lib_dir).map_err(|e| DevError::io(&lib_dir, e))?;
            write_import_lib_with(&lib_dir.join(&lib_name), &name, &exports)?;
            have.insert(lib_name.to_ascii_lowercase());
            out.made.push(format!("{LIB_DIR}/{lib_name}"));
        }
    }
    out.made.sort();
    out.unreadable.sort();
    Ok(out)
}

/// The plain files in `dir` (no links, no folders), sorted; none when it does not exist.
fn file_names(dir: &Path) -> Result<Vec<String>, DevError> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(DevError::io(dir, e)),
    };
    let mut out = Vec::new();
    for entry in rd {
        let entry = entry.map_err(|e| DevError::io(dir, e))?;
        // A link could lead out of the tree: only what is itself a file here counts.
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        if let Ok(name) = entry.file_name().into_string() {
            out.push(name);
        }
    }
    out.sort();
    Ok(out)
}

/// The tests' PE writer (`tests/support/pe.rs`): real DLLs with export tables.
#[cfg(test)]
#[path = "../../../../tests/support/pe.rs"]
mod test_pe;

#[cfg(test)]
mod tests {
    use super::test_pe::{Dll, MACHINE_OFFSET};
    use super::*;

    #[test]
    fn nvidias_dll_names_give_nvidias_library_names() {
        for (dll, lib) in [
            ("cublas64_13.dll", "cublas.lib"),
            ("cublasLt64_13.dll", "cublasLt.lib"),
            ("nvblas64_13.dll", "nvblas.lib"),
            ("cudart64_13.dll", "cudart.lib"),
            ("cudart64_110.dll", "cudart.lib"),
            ("nvrtc64_130_0.dll", "nvrtc.lib"),
            ("nvJitLink_130_0.dll", "nvJitLink.lib"),
            ("cufft64_12.dll", "cufft.lib"),
            ("cusolverMg64_12.dll", "cusolverMg.lib"),
            ("nvvm64_40_0.dll", "nvvm.lib"),
            ("cudnn64_9.dll", "cudnn.lib"),
            ("cudnn_adv64_9.dll", "cudnn_adv.lib"),
            (
                "cudnn_engines_precompiled64_9.dll",
                "cudnn_engines_precompiled.lib",
            ),
            ("cupti64_2025.1.0.dll", "cupti.lib"),
            ("CUBLAS64_13.DLL", "CUBLAS.lib"),
        ] {
            assert_eq!(lib_name_for_dll(dll).as_deref(), Some(lib), "{dll}");
        }
        for none in [
            "nvrtc-builtins64_130.dll",
            "nvrtc-builtins64_13.dll",
            "cublas64_13.so",
            "cublas64_13.dll.bak",
            "cublas64_13",
            "bin/cublas64_13.dll",
            "bin\\cublas64_13.dll",
            "C:cublas64_13.dll",
            "nvml.dll",
            "64_13.dll",
            "_13.dll",
            ".dll",
            "",
            "dll",
            "cublas64_1a.dll",
            "cublas 64_13.dll",
        ] {
            assert_eq!(lib_name_for_dll(none), None, "{none}");
        }
    }

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn a_library_made_from_a_dll_lists_exactly_its_exports_and_its_name() {
        let d = tmp();
        let spec = Dll::new(
            "cublas64_13.dll",
            &["cublasSgemm_v2", "cublasCreate_v2", "cublasDestroy_v2"],
        )
        .data(&["cublasVersionTable"])
        .forward("cublasAlias", "cublasLt64_13.cublasLtCreate")
        .unnamed(2);
        let dll = d.path().join("cublas64_13.dll");
        spec.write(&dll);
        assert_eq!(dll_exports(&dll).unwrap(), spec.names());
        let kinds = read_exports(&dll).unwrap();
        let data: Vec<&str> = kinds
            .iter()
            .filter(|e| e.data)
            .map(|e| e.name.as_str())
            .collect();
        assert_eq!(data, ["cublasVersionTable"]);

        let lib = d.path().join("cublas.lib");
        assert_eq!(generate(&dll, &lib).unwrap(), 5);
        let (from, names) = read_import_lib(&lib).unwrap();
        assert_eq!(from, "cublas64_13.dll");
        assert_eq!(names, spec.names());
        // The data export is DATA in the library too; the functions are code.
        let (_, with) = read_import_lib_with(&lib).unwrap();
        assert_eq!(with, kinds);
        // An MSVC archive: the `!<arch>` magic, a linker member whose symbol map has what
        // link.exe looks up: `__imp_` names, code thunks (not for data), the descriptor.
        let bytes = std::fs::read(&lib).unwrap();
        assert!(bytes.starts_with(b"!<arch>\n/               "));
        let archive = object::read::archive::ArchiveFile::parse(&*bytes).unwrap();
        let symbols: BTreeSet<String> = archive
            .symbols()
            .unwrap()
            .unwrap()
            .map(|s| String::from_utf8_lossy(s.unwrap().name()).into_owned())
            .collect();
        for want in [
            "__imp_cublasSgemm_v2",
            "cublasSgemm_v2",
            "__imp_cublasVersionTable",
            "__IMPORT_DESCRIPTOR_cublas64_13",
        ] {
            assert!(symbols.contains(want), "{want} not in {symbols:?}");
        }
        assert!(!symbols.contains("cublasVersionTable"), "data has no thunk");
        // Nothing left beside it.
        let left: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(left.len(), 2, "{left:?}");
    }

    #[test]
    fn write_then_read_keeps_every_name() {
        let d = tmp();
        let lib = d.path().join("x.lib");
        let names: Vec<String> = (0..300).map(|i| format!("fn_{i:03}")).collect();
        write_import_lib(&lib, "x64_1.dll", &names).unwrap();
        assert_eq!(
            read_import_lib(&lib).unwrap(),
            ("x64_1.dll".to_string(), names)
        );
        assert!(matches!(
            write_import_lib(&lib, "../evil.dll", &["f".into()]),
            Err(DevError::Malformed { .. })
        ));
        assert!(matches!(
            write_import_lib(&lib, "x.dll", &["".into()]),
            Err(DevError::Malformed { .. })
        ));
    }

    #[test]
    fn what_is_not_an_x64_dll_is_refused_not_read() {
        let d = tmp();
        let p = d.path().join("x64_1.dll");
        // Random bytes, an empty file, a truncated DLL, a DLL for another machine.
        let good = Dll::new("x64_1.dll", &["f"]).bytes();
        let mut arm = good.clone();
        arm[MACHINE_OFFSET..MACHINE_OFFSET + 2].copy_from_slice(&0xAA64u16.to_le_bytes());
        for bytes in [
            b"MZ not a dll at all".to_vec(),
            Vec::new(),
            good[..0x180].to_vec(),
            arm,
        ] {
            std::fs::write(&p, &bytes).unwrap();
            assert!(
                matches!(dll_exports(&p), Err(DevError::Malformed { .. })),
                "{} bytes",
                bytes.len()
            );
        }
        assert!(matches!(
            dll_exports(&d.path().join("missing.dll")),
            Err(DevError::Io { .. })
        ));
        // A library that is not one.
        let lib = d.path().join("x.lib");
        std::fs::write(&lib, b"!<arch>\nnonsense").unwrap();
        assert!(read_import_lib(&lib).is_err());
        std::fs::write(&lib, b"not an archive").unwrap();
        assert!(matches!(
            read_import_lib(&lib),
            Err(DevError::Malformed { .. })
        ));
    }

    #[test]
    fn add_import_libs_makes_what_is_missing_once() {
        let d = tmp();
        let tk = d.path();
        Dll::new("cublas64_13.dll", &["cublasCreate_v2"])
            .write(&tk.join("bin/x64/cublas64_13.dll"));
        Dll::new("cudart64_13.dll", &["cudaMalloc"]).write(&tk.join("bin/x64/cudart64_13.dll"));
        Dll::new("nvrtc-builtins64_130.dll", &["x"])
            .write(&tk.join("bin/x64/nvrtc-builtins64_130.dll"));
        Dll::new("cufft64_11.dll", &["cufftPlan1d"]).write(&tk.join("bin/cufft64_11.dll"));
        Dll::new("cufft64_12.dll", &["cufftPlan1d"]).write(&tk.join("bin/x64/cufft64_12.dll"));
        std::fs::write(tk.join("bin/x64/cusparse64_12.dll"), b"MZ damaged").unwrap();
        std::fs::write(tk.join("bin/x64/nvcc.exe"), b"MZ").unwrap();
        std::fs::create_dir_all(tk.join("lib/x64")).unwrap();
        std::fs::write(tk.join("lib/x64/CUDART.lib"), b"NVIDIA's own").unwrap();

        let r = add_import_libs(tk).unwrap();
        assert_eq!(r.made, ["lib/x64/cublas.lib", "lib/x64/cufft.lib"]);
        assert_eq!(r.unreadable, ["bin/x64/cusparse64_12.dll"]);
        // bin/x64 (13.x) before bin: cufft.lib imports from cufft64_12.dll.
        assert_eq!(
            read_import_lib(&tk.join("lib/x64/cufft.lib")).unwrap().0,
            "cufft64_12.dll"
        );
        assert_eq!(
            std::fs::read(tk.join("lib/x64/CUDART.lib")).unwrap(),
            b"NVIDIA's own"
        );
        // Again: nothing more to make.
        let again = add_import_libs(tk).unwrap();
        assert!(again.made.is_empty(), "{again:?}");
        assert_eq!(again.unreadable, ["bin/x64/cusparse64_12.dll"]);
        // A tree with no DLL folders at all: nothing, no error.
        assert_eq!(
            add_import_libs(&tk.join("nowhere")).unwrap(),
            ImportLibs::default()
        );
    }
}
