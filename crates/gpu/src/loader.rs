//! Loading NVIDIA's libraries at run time (nothing is linked at build time, so the binary
//! starts on machines with no CUDA), and saying *which* file is missing when a load fails.
//!
//! On Linux `dlopen` names a missing dependency itself. On Windows `LoadLibrary` only says
//! "The specified module could not be found" (error 126), so the DLL's import table is
//! read and each import looked up where the loader would look: the classic
//! "cudnn_ops64_9.dll not found" is named rather than guessed.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::os::Os;
use crate::platform::Host;

/// Declares a table of C functions looked up by name in a loaded library. Each field is a
/// plain function pointer; the library stays loaded as long as the table lives.
macro_rules! api {
    ($(#[$m:meta])* $name:ident { $($f:ident : fn($($a:ty),* $(,)?) -> $r:ty;)* }) => {
        $(#[$m])*
        #[allow(non_snake_case)]
        pub struct $name {
            _libs: Vec<libloading::Library>,
            $(pub $f: unsafe extern "C" fn($($a),*) -> $r,)*
        }

        #[allow(non_snake_case)]
        impl $name {
            /// Looks every function up in `lib`, which (with `keep`) stays loaded.
            pub fn from_library(
                lib: libloading::Library,
                mut keep: Vec<libloading::Library>,
            ) -> Result<Self, String> {
                $(
                    // SAFETY: the type is the function's C signature, from NVIDIA's headers.
                    let $f = unsafe {
                        lib.get::<unsafe extern "C" fn($($a),*) -> $r>(
                            concat!(stringify!($f), "\0").as_bytes(),
                        )
                    }
                    .map(|s| *s)
                    .map_err(|e| format!("{} is not exported: {e}", stringify!($f)))?;
                )*
                keep.push(lib);
                Ok($name { _libs: keep, $($f,)* })
            }
        }
    };
}

/// A library that would not load, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoadFailure {
    /// The path (or, for the driver, the name) that was loaded.
    pub library: String,
    pub detail: String,
    /// Dependencies the loader cannot find, each with the file that needs it.
    pub missing: Vec<MissingDep>,
}

impl LoadFailure {
    /// `libcudnn_ops.so.9 (needed by libcudnn.so.9)`, … for messages.
    pub fn missing_list(&self) -> String {
        self.missing
            .iter()
            .map(|m| format!("{} (needed by {})", m.name, m.needed_by))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct MissingDep {
    pub name: String,
    pub needed_by: String,
}

/// The text of a libloading error with its OS cause (`LoadLibraryExW failed: The
/// specified module could not be found. (os error 126)`).
fn error_text(e: &libloading::Error) -> String {
    match std::error::Error::source(e) {
        Some(src) => format!("{e}: {src}"),
        None => e.to_string(),
    }
}

/// Loads a library by path; dependencies are searched the way an application's would be,
/// starting in the library's own folder.
pub fn open(host: &Host, path: &Path) -> Result<libloading::Library, LoadFailure> {
    let fail = |detail: String, missing: Vec<MissingDep>| LoadFailure {
        library: path.display().to_string(),
        detail,
        missing,
    };
    if !path.is_file() {
        return Err(fail("file not found".into(), Vec::new()));
    }
    #[cfg(windows)]
    {
        use libloading::os::windows::{LOAD_WITH_ALTERED_SEARCH_PATH, Library};
        // SAFETY: loading runs the library's initialisers; these are NVIDIA's own DLLs.
        match unsafe { Library::load_with_flags(path, LOAD_WITH_ALTERED_SEARCH_PATH) } {
            Ok(lib) => Ok(lib.into()),
            Err(e) => {
                let missing = missing_dlls(path, &windows_search_dirs(host));
                Err(fail(error_text(&e), missing))
            }
        }
    }
    #[cfg(not(windows))]
    {
        let _ = host;
        // SAFETY: as above.
        match unsafe { libloading::Library::new(path) } {
            Ok(lib) => Ok(lib),
            Err(e) => {
                let text = error_text(&e);
                let own = path.file_name().map(|n| n.to_string_lossy().into_owned());
                let missing = missing_from_dlerror(&text)
                    .filter(|m| Some(m) != own.as_ref())
                    .map(|name| MissingDep {
                        name,
                        needed_by: own.clone().unwrap_or_default(),
                    })
                    .into_iter()
                    .collect();
                Err(fail(text, missing))
            }
        }
    }
}

/// Loads a system library by name (the driver: `libcuda.so.1`, `nvcuda.dll`).
pub fn open_system(name: &str) -> Result<libloading::Library, LoadFailure> {
    #[cfg(windows)]
    let r = {
        use libloading::os::windows::{LOAD_LIBRARY_SEARCH_SYSTEM32, Library};
        // The driver lives in System32; a stray copy elsewhere must not win.
        // SAFETY: loading runs the driver's initialisers.
        unsafe { Library::load_with_flags(name, LOAD_LIBRARY_SEARCH_SYSTEM32) }.map(Into::into)
    };
    #[cfg(not(windows))]
    // SAFETY: as above.
    let r = unsafe { libloading::Library::new(name) }.or_else(|first| {
        // The loader's search failed: where else the driver's library may be (WSL2's
        // stub folder, when `ld.wsl.conf` is missing). The first error is the one told.
        for p in system_candidates(name) {
            if p.is_file() {
                // SAFETY: as above; the Windows driver's own copy inside WSL2.
                if let Ok(lib) = unsafe { libloading::Library::new(&p) } {
                    return Ok(lib);
                }
            }
        }
        Err(first)
    });
    r.map_err(|e| LoadFailure {
        library: name.to_string(),
        detail: error_text(&e),
        missing: Vec::new(),
    })
}

/// Linux: where a system library (the driver's) may be when the loader's own search does
/// not find it — WSL2 puts the Windows driver's `libcuda.so.1` and `libnvidia-ml.so.1`
/// in `/usr/lib/wsl/lib`, which only `/etc/ld.so.conf.d/ld.wsl.conf` tells the loader
/// (dossier §13.2). A name with a folder in it has no other place.
pub fn system_candidates(name: &str) -> Vec<PathBuf> {
    if cfg!(windows) || name.contains('/') {
        return Vec::new();
    }
    vec![Path::new(WSL_LIB_DIR).join(name)]
}

/// The Windows driver's Linux libraries inside WSL2.
pub const WSL_LIB_DIR: &str = "/usr/lib/wsl/lib";

/// Where Windows looks for a DLL's dependencies (after the DLL's own folder): the system
/// folders, then PATH.
pub fn windows_search_dirs(host: &Host) -> Vec<PathBuf> {
    let root = host
        .var("SystemRoot")
        .or_else(|| host.var("windir"))
        .map(PathBuf::from)
        .unwrap_or_else(|| host.system_path(r"C:\Windows"));
    let mut dirs = vec![root.join("System32"), root.join("System"), root.clone()];
    dirs.extend(host.path_list("PATH"));
    dirs
}

/// From a `dlopen` error, the file that could not be found: `libcudnn_graph.so.9: cannot
/// open shared object file: No such file or directory` → `libcudnn_graph.so.9`.
pub fn missing_from_dlerror(message: &str) -> Option<String> {
    let head = &message[..message.find(": cannot open shared object file")?];
    let name = head.rsplit(": ").next()?.trim();
    Path::new(name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
}

/// The major version in a library file name: `cublas64_12.dll` / `libcublas.so.12.4.5.8`
/// → 12 for base `cublas`. Other libraries with a longer name (`cublasLt64_12.dll`,
/// `cudnn_ops64_9.dll`) do not match.
pub fn library_major(os: Os, file_name: &str, base: &str) -> Option<u32> {
    let name = file_name.to_ascii_lowercase();
    let base = base.to_ascii_lowercase();
    let digits = match os {
        Os::Windows => name
            .strip_suffix(".dll")?
            .strip_prefix(&format!("{base}64_"))?
            .to_string(),
        Os::Linux => name
            .strip_prefix(&format!("lib{base}.so."))?
            .split('.')
            .next()?
            .to_string(),
    };
    digits.parse().ok()
}

/// The file name of library `base` with major `major` (`cublasLt`, 12 →
/// `cublasLt64_12.dll` / `libcublasLt.so.12`).
pub fn library_file(os: Os, base: &str, major: u32) -> String {
    match os {
        Os::Windows => format!("{base}64_{major}.dll"),
        Os::Linux => format!("lib{base}.so.{major}"),
    }
}

/// The first folder in `dirs` holding library `base`, and in it the file with the
/// highest major (the exact `libX.so.N` name preferred over `libX.so.N.x.y`).
pub fn find_library(os: Os, dirs: &[PathBuf], base: &str) -> Option<(PathBuf, u32)> {
    for dir in dirs {
        let Ok(rd) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut hits: Vec<(u32, usize, PathBuf)> = rd
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let major = library_major(os, &name, base)?;
                Some((major, usize::MAX - name.len(), e.path()))
            })
            .collect();
        hits.sort();
        if let Some((major, _, path)) = hits.pop() {
            return Some((path, major));
        }
    }
    None
}

/// Windows API sets (`api-ms-win-crt-runtime-l1-1-0.dll`) are resolved by the loader
/// itself, never from a file.
fn is_api_set(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with("api-ms-win-") || n.starts_with("ext-ms-")
}

/// Why a DLL's import table could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PeError {
    #[error("cannot read it: {0}")]
    Io(#[source] std::io::Error),
    #[error("not a PE file: {0}")]
    Format(#[from] object::read::Error),
    #[error("damaged import table: {0}")]
    Imports(&'static str),
}

/// More imported DLLs than any real library has: past this the table is hostile.
const MAX_IMPORTS: usize = 4096;
/// The longest imported name read (Windows' MAX_PATH, with room for its NUL).
const MAX_NAME: u64 = 1024;

/// The DLLs a Windows library imports (its import table; delay-loaded imports are not
/// needed at load time and are left out).
pub fn pe_imports(bytes: &[u8]) -> Result<Vec<String>, PeError> {
    imports_in(bytes)
}

/// [`pe_imports`] of a file, reading only its headers, section table, import
/// descriptors and the names they point at: cuBLASLt is hundreds of MB.
pub fn pe_imports_of(path: &Path) -> Result<Vec<String>, PeError> {
    let file = std::fs::File::open(path).map_err(PeError::Io)?;
    let cache = object::ReadCache::new(file);
    imports_in(&cache)
}

pub(crate) fn imports_in<'a, R: object::ReadRef<'a>>(data: R) -> Result<Vec<String>, PeError> {
    use object::pe::{IMAGE_NT_OPTIONAL_HDR32_MAGIC, IMAGE_NT_OPTIONAL_HDR64_MAGIC};
    use object::pe::{ImageNtHeaders32, ImageNtHeaders64};
    match object::read::pe::optional_header_magic(data)? {
        IMAGE_NT_OPTIONAL_HDR64_MAGIC => imports_for::<ImageNtHeaders64, R>(data),
        IMAGE_NT_OPTIONAL_HDR32_MAGIC => imports_for::<ImageNtHeaders32, R>(data),
        _ => Err(PeError::Imports("unknown optional header")),
    }
}

fn imports_for<'a, Pe, R>(data: R) -> Result<Vec<String>, PeError>
where
    Pe: object::read::pe::ImageNtHeaders,
    R: object::ReadRef<'a>,
{
    use object::LittleEndian as LE;
    let dos = object::pe::ImageDosHeader::parse(data)?;
    let mut offset = u64::from(dos.nt_headers_offset());
    let (nt, dirs) = Pe::parse(data, &mut offset)?;
    let sections = nt.sections(data, offset)?;
    let Some(dir) = dirs.get(object::pe::IMAGE_DIRECTORY_ENTRY_IMPORT) else {
        return Ok(Vec::new());
    };
    // RVA → (file offset, bytes left in that section); None outside every section.
    let at = |rva: u32, what: &'static str| {
        sections
            .pe_file_range_at(rva)
            .map(|(off, len)| (u64::from(off), u64::from(len)))
            .ok_or(PeError::Imports(what))
    };
    let step = std::mem::size_of::<object::pe::ImageImportDescriptor>() as u32;
    let mut rva = dir.virtual_address.get(LE);
    let mut out = Vec::new();
    // Descriptors of 20 bytes, ended by an all-zero one.
    while out.len() < MAX_IMPORTS {
        let (off, _) = at(rva, "a descriptor outside every section")?;
        let desc: &object::pe::ImageImportDescriptor = data
            .read_at(off)
            .map_err(|()| PeError::Imports("a descriptor past the end of the file"))?;
        let name_rva = desc.name.get(LE);
        if name_rva == 0 {
            break;
        }
        let (start, len) = at(name_rva, "a name outside every section")?;
        // A DLL name is a file name (at most 260 characters): a longer run without its
        // NUL is damage, and not read on through a section of gigabytes.
        let end = start
            .checked_add(len.min(MAX_NAME))
            .ok_or(PeError::Imports("a name past the end of the file"))?;
        let name = data
            .read_bytes_at_until(start..end, 0)
            .map_err(|()| PeError::Imports("an unterminated name"))?;
        out.push(String::from_utf8_lossy(name).into_owned());
        rva = rva.checked_add(step).ok_or(PeError::Imports(
            "descriptors past the end of the address space",
        ))?;
    }
    Ok(out)
}

/// Every DLL that `dll` needs, directly or through the DLLs it finds, that is in none of:
/// the folder of `dll`, then `search` (in that order, as the loader looks). System
/// libraries found in `search` are not followed further.
pub fn missing_dlls(dll: &Path, search: &[PathBuf]) -> Vec<MissingDep> {
    let mut listing: HashMap<PathBuf, HashSet<String>> = HashMap::new();
    let mut dirs: Vec<PathBuf> = dll.parent().map(Path::to_path_buf).into_iter().collect();
    dirs.extend(search.iter().cloned());
    let system: Vec<PathBuf> = search.iter().take(3).cloned().collect();
    let mut find = |name: &str| -> Option<PathBuf> {
        let want = name.to_ascii_lowercase();
        dirs.iter().find_map(|d| {
            let names = listing.entry(d.clone()).or_insert_with(|| {
                std::fs::read_dir(d)
                    .map(|rd| {
                        rd.flatten()
                            .map(|e| e.file_name().to_string_lossy().to_ascii_lowercase())
                            .collect()
                    })
                    .unwrap_or_default()
            });
            names.contains(&want).then(|| d.join(name))
        })
    };
    let mut missing = BTreeSet::new();
    let mut seen = HashSet::new();
    let mut queue = vec![(dll.to_path_buf(), 0)];
    while let Some((file, depth)) = queue.pop() {
        let needed_by = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // An unreadable or damaged file names nothing; the load error still stands.
        for name in pe_imports_of(&file).unwrap_or_default() {
            if is_api_set(&name) || !seen.insert(name.to_ascii_lowercase()) {
                continue;
            }
            match find(&name) {
                None => {
                    missing.insert(MissingDep {
                        name,
                        needed_by: needed_by.clone(),
                    });
                }
                Some(p) if depth < 3 && !system.iter().any(|s| p.starts_with(s)) => {
                    queue.push((p, depth + 1));
                }
                Some(_) => {}
            }
        }
    }
    missing.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// WSL2's stub folder is where the driver is looked for after the loader's own search
    /// (#32); a path is never looked for elsewhere.
    #[cfg(not(windows))]
    #[test]
    fn the_driver_is_also_looked_for_in_wsl2s_stub_folder() {
        assert_eq!(
            system_candidates("libcuda.so.1"),
            [PathBuf::from("/usr/lib/wsl/lib/libcuda.so.1")]
        );
        assert!(system_candidates("/opt/x/libcuda.so.1").is_empty());
        // A name found nowhere still fails with the loader's own words.
        let e = open_system("libcuda-setup-no-such-library.so.1").unwrap_err();
        assert!(
            e.detail.contains("libcuda-setup-no-such-library.so.1"),
            "{e:?}"
        );
    }

    #[test]
    fn library_names_by_os() {
        assert_eq!(
            library_major(Os::Windows, "cublas64_12.dll", "cublas"),
            Some(12)
        );
        assert_eq!(
            library_major(Os::Windows, "CUBLAS64_11.DLL", "cublas"),
            Some(11)
        );
        assert_eq!(
            library_major(Os::Windows, "cublasLt64_12.dll", "cublas"),
            None
        );
        assert_eq!(
            library_major(Os::Windows, "cublasLt64_12.dll", "cublasLt"),
            Some(12)
        );
        assert_eq!(
            library_major(Os::Windows, "cudnn64_9.dll", "cudnn"),
            Some(9)
        );
        assert_eq!(
            library_major(Os::Windows, "cudnn_ops64_9.dll", "cudnn"),
            None
        );
        assert_eq!(
            library_major(Os::Linux, "libcublas.so.12", "cublas"),
            Some(12)
        );
        assert_eq!(
            library_major(Os::Linux, "libcublas.so.12.4.5.8", "cublas"),
            Some(12)
        );
        assert_eq!(
            library_major(Os::Linux, "libcublasLt.so.12", "cublas"),
            None
        );
        assert_eq!(library_major(Os::Linux, "libcublas.so", "cublas"), None);
        assert_eq!(library_major(Os::Linux, "libcudnn.so.9", "cudnn"), Some(9));
        assert_eq!(library_major(Os::Linux, "libcudnn_ops.so.9", "cudnn"), None);
        assert_eq!(
            library_file(Os::Windows, "cublasLt", 13),
            "cublasLt64_13.dll"
        );
        assert_eq!(library_file(Os::Linux, "cudnn_ops", 9), "libcudnn_ops.so.9");
    }

    #[test]
    fn find_library_prefers_the_first_folder_and_the_plain_soname() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        for n in [
            "libcublas.so.12",
            "libcublas.so.12.4.5.8",
            "libcublasLt.so.12",
        ] {
            std::fs::write(b.join(n), "").unwrap();
        }
        std::fs::write(b.join("libcublas.so.11"), "").unwrap();
        let (p, major) = find_library(Os::Linux, &[a.clone(), b.clone()], "cublas").unwrap();
        assert_eq!((p, major), (b.join("libcublas.so.12"), 12));
        std::fs::write(a.join("libcublas.so.13"), "").unwrap();
        assert_eq!(
            find_library(Os::Linux, &[a.clone(), b], "cublas")
                .unwrap()
                .1,
            13
        );
        assert!(find_library(Os::Linux, &[d.path().join("none")], "cublas").is_none());
    }

    #[test]
    fn dlerror_names_the_missing_file() {
        assert_eq!(
            missing_from_dlerror(
                "libcudnn_graph.so.9: cannot open shared object file: No such file or directory"
            )
            .as_deref(),
            Some("libcudnn_graph.so.9")
        );
        assert_eq!(
            missing_from_dlerror(
                "/usr/local/cuda/lib64/libcublas.so.12: cannot open shared object file: No such file or directory"
            )
            .as_deref(),
            Some("libcublas.so.12")
        );
        assert_eq!(
            missing_from_dlerror("/x/libcudnn.so.9: undefined symbol: foo"),
            None
        );
    }

    #[test]
    fn not_a_pe_file() {
        assert!(pe_imports(b"\x7fELF....").is_err());
        assert!(pe_imports(b"MZ").is_err());
        assert!(pe_imports(b"").is_err());
    }

    fn put(b: &mut [u8], at: usize, v: &[u8]) {
        b[at..at + v.len()].copy_from_slice(v);
    }

    /// A minimal PE32+ DLL, laid out by hand: headers, then one `.idata` section at RVA
    /// 0x1000 (file offset 0x200) holding the import descriptors and the names.
    fn tiny_dll(imports: &[&str]) -> Vec<u8> {
        const LFANEW: usize = 0x40;
        const COFF: usize = LFANEW + 4;
        const OPT: usize = COFF + 20;
        const OPT_SIZE: usize = 112 + 16 * 8;
        const SECTIONS: usize = OPT + OPT_SIZE;
        const RAW: usize = 0x200;
        const RVA: u32 = 0x1000;
        let mut b = vec![0u8; RAW + 0x200];
        put(&mut b, 0, b"MZ");
        put(&mut b, 0x3c, &(LFANEW as u32).to_le_bytes());
        put(&mut b, LFANEW, b"PE\0\0");
        put(&mut b, COFF, &0x8664u16.to_le_bytes()); // x86-64
        put(&mut b, COFF + 2, &1u16.to_le_bytes()); // one section
        put(&mut b, COFF + 16, &(OPT_SIZE as u16).to_le_bytes());
        put(&mut b, COFF + 18, &0x2022u16.to_le_bytes()); // a DLL
        put(&mut b, OPT, &0x20bu16.to_le_bytes()); // PE32+
        put(&mut b, OPT + 32, &0x1000u32.to_le_bytes()); // section alignment
        put(&mut b, OPT + 36, &0x200u32.to_le_bytes()); // file alignment
        put(&mut b, OPT + 108, &16u32.to_le_bytes()); // data directories
        let names_at = 20 * (imports.len() + 1);
        put(&mut b, OPT + 120, &RVA.to_le_bytes()); // import table
        put(&mut b, OPT + 124, &(names_at as u32).to_le_bytes());
        put(&mut b, SECTIONS, b".idata\0\0");
        put(&mut b, SECTIONS + 8, &0x200u32.to_le_bytes()); // virtual size
        put(&mut b, SECTIONS + 12, &RVA.to_le_bytes());
        put(&mut b, SECTIONS + 16, &0x200u32.to_le_bytes()); // raw size
        put(&mut b, SECTIONS + 20, &(RAW as u32).to_le_bytes());
        let mut name = names_at;
        for (i, dll) in imports.iter().enumerate() {
            let rva = RVA + u32::try_from(name).unwrap();
            put(&mut b, RAW + 20 * i + 12, &rva.to_le_bytes());
            put(&mut b, RAW + name, dll.as_bytes());
            name += dll.len() + 1;
        }
        assert!(name <= 0x200, "the names fit the section");
        b
    }

    #[test]
    fn imports_of_a_small_real_pe() {
        let dll = tiny_dll(&["cudnn_ops64_9.dll", "KERNEL32.dll"]);
        let want = ["cudnn_ops64_9.dll", "KERNEL32.dll"];
        assert_eq!(pe_imports(&dll).unwrap(), want);
        // The same read from a file, through the read cache.
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cudnn64_9.dll");
        std::fs::write(&p, &dll).unwrap();
        assert_eq!(pe_imports_of(&p).unwrap(), want);
        assert!(pe_imports(&tiny_dll(&[])).unwrap().is_empty());
        assert!(matches!(
            pe_imports_of(&d.path().join("none.dll")),
            Err(PeError::Io(_))
        ));
    }

    #[test]
    fn truncated_or_hostile_pe_files_are_errors() {
        let dll = tiny_dll(&["cudnn_ops64_9.dll"]);
        // Cut anywhere: an error or, once the table is whole, the import; never a panic.
        for len in 0..dll.len() {
            if let Ok(names) = pe_imports(&dll[..len]) {
                assert_eq!(names, ["cudnn_ops64_9.dll"], "cut at {len}");
            }
        }
        assert!(pe_imports(&dll[..0x200]).is_err(), "headers only");
        // `e_lfanew` past the end, or near u32::MAX.
        for lfanew in [0x1_0000u32, u32::MAX - 2] {
            let mut b = dll.clone();
            put(&mut b, 0x3c, &lfanew.to_le_bytes());
            assert!(pe_imports(&b).is_err());
        }
        // The import table's RVA outside every section.
        let mut b = dll.clone();
        put(&mut b, 0x44 + 20 + 120, &0xffff_fff0u32.to_le_bytes());
        assert!(matches!(pe_imports(&b), Err(PeError::Imports(_))));
        // A name RVA that wraps, and a name with no terminating NUL in its section.
        let mut b = dll.clone();
        put(&mut b, 0x200 + 12, &u32::MAX.to_le_bytes());
        assert!(pe_imports(&b).is_err());
        let mut b = dll.clone();
        b[0x200 + 40..].fill(b'A');
        assert!(pe_imports(&b).is_err());
        // A section claiming raw data far past the end of the file.
        let mut b = dll;
        put(&mut b, 0x44 + 20 + 240 + 20, &0x7fff_0000u32.to_le_bytes());
        assert!(pe_imports(&b).is_err());
    }
}
