//! Which library a failed load misses: the import tables of the native files (PE import
//! descriptors, ELF `DT_NEEDED`) walked against the search order the loader really uses,
//! and the first library found nowhere named with the chain that needs it
//! (`_C.pyd → torch_cuda.dll → cudnn_ops64_9.dll`).
//!
//! The search orders are data ([`WindowsSearch`], [`LinuxSearch`]), built by the caller
//! from what it knows of the process that failed (the engine's `verify::libwalk`); this
//! module only reads files. Every file is opened through `place` (non-blocking, a regular
//! file, bounded: a FIFO at a library's name is not a library and never blocks us), and
//! only its headers and the tables named are read (`object::ReadCache`): cuDNN's and
//! cuBLAS's libraries are hundreds of megabytes.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use cuda_setup_base::place;
use serde::Serialize;

/// The biggest library file opened (cuDNN's precompiled engines are about 1 GB); a bigger
/// one still counts as present, but its tables are not read.
const MAX_LIBRARY: u64 = 4 << 30;
/// Files whose tables are read in one walk, and how deep the chain goes.
const MAX_FILES: usize = 512;
const MAX_DEPTH: usize = 12;
/// Entries listed per folder (Windows looks names up ignoring case, so folders are listed).
const MAX_LISTING: usize = 100_000;
/// The longest string read from an ELF string table.
const MAX_STRING: u64 = 4096;

/// Where Windows looks for the DLLs a file needs.
#[derive(Debug, Clone, Default)]
pub struct WindowsSearch {
    /// `LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR`: the folder of the file being loaded is searched
    /// first for its dependencies (and theirs) — Python ≥ 3.8's extension modules.
    pub load_dir_first: bool,
    /// The folders searched, in order, after that one.
    pub dirs: Vec<PathBuf>,
    /// Among `dirs`, Windows' own folders: a DLL found there is Windows' and not walked.
    pub system: Vec<PathBuf>,
    /// Folders this loader does not search although users expect it to (PATH, for
    /// Python ≥ 3.8): a missing DLL found in one is reported with that folder.
    pub unsearched: Vec<PathBuf>,
}

/// Where glibc's `ld.so` looks for a `DT_NEEDED` library (ld.so(8), "Dynamic library
/// search"): the object's `DT_RPATH` (and its loaders', when it has no `DT_RUNPATH`),
/// `LD_LIBRARY_PATH`, the object's `DT_RUNPATH`, `/etc/ld.so.cache`, the default folders.
#[derive(Debug, Clone, Default)]
pub struct LinuxSearch {
    pub ld_library_path: Vec<PathBuf>,
    /// `/etc/ld.so.cache`: library name → file (see [`read_ld_so_cache`]).
    pub cache: BTreeMap<String, PathBuf>,
    /// `/lib`, `/usr/lib` and their multiarch and 64-bit folders, under the host's root.
    pub default_dirs: Vec<PathBuf>,
    /// Where an absolute `DT_RUNPATH`/`DT_RPATH` folder lives (a test's root; `/` on the
    /// machine itself). `$ORIGIN` folders are the file's own and are not moved.
    pub root: PathBuf,
    /// Folders whose libraries the package loads itself when the loader's search fails
    /// (torch's `_preload_cuda_deps`: the nvidia-* wheels' `lib` folders): searched last.
    pub preloaded: Vec<PathBuf>,
}

#[derive(Debug, Clone)]
pub enum Search {
    Windows(WindowsSearch),
    Linux(LinuxSearch),
}

/// A library found nowhere the loader looks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Missing {
    /// As the importing file names it (`cudnn_ops64_9.dll`, `libcublas.so.12`).
    pub name: String,
    /// The files from the one loaded to the one that needs it, by file name.
    pub chain: Vec<String>,
    /// A folder the loader does not search that holds it (PATH since Python 3.8).
    pub unsearched: Option<PathBuf>,
}

impl Missing {
    /// `_C.pyd → torch_cuda.dll → cudnn_ops64_9.dll`.
    pub fn chain_text(&self) -> String {
        let mut all = self.chain.clone();
        all.push(self.name.clone());
        all.join(" → ")
    }
}

/// What a walk found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Walk {
    /// In the order met (nearest the loaded file first), one entry per name.
    pub missing: Vec<Missing>,
    /// Files whose tables were read.
    pub files_read: usize,
    /// Files that could not be read (path, why): the walk goes on without them.
    pub unreadable: Vec<(PathBuf, String)>,
}

/// Windows API sets (`api-ms-win-crt-runtime-l1-1-0.dll`) are resolved by the loader
/// itself, never from a file.
pub fn is_api_set(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with("api-ms-win-") || n.starts_with("ext-ms-")
}

/// DLLs Windows maps from its KnownDLLs section before any search
/// (`HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\KnownDLLs`, Microsoft's
/// "Dynamic-link library search order"); `ntdll.dll` is in every process. The names every
/// Windows 10/11 lists there that a library built with MSVC imports: present on every
/// machine, so never reported missing even where a test's System32 is empty.
const KNOWN_DLLS: &[&str] = &[
    "ntdll.dll",
    "kernel32.dll",
    "kernelbase.dll",
    "user32.dll",
    "gdi32.dll",
    "advapi32.dll",
    "shell32.dll",
    "ole32.dll",
    "oleaut32.dll",
    "ws2_32.dll",
    "rpcrt4.dll",
    "sechost.dll",
    "shlwapi.dll",
    "combase.dll",
    "msvcrt.dll",
    "psapi.dll",
    "setupapi.dll",
    "imm32.dll",
    "comdlg32.dll",
    "imagehlp.dll",
    "normaliz.dll",
    "nsi.dll",
    "wldap32.dll",
];

pub fn is_known_dll(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    KNOWN_DLLS.contains(&n.as_str())
}

/// A file's dynamic section, as far as the search needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ElfDeps {
    pub needed: Vec<String>,
    pub rpath: Vec<String>,
    pub runpath: Vec<String>,
}

/// Why a file's tables could not be read.
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    #[error("{0}")]
    Place(#[from] place::ReadError),
    #[error("not a library: {0}")]
    Format(String),
    #[error("{0}")]
    Pe(#[from] crate::loader::PeError),
}

/// Opens a library file the way every read here does: following a link (Linux names its
/// libraries through links, `libcudnn.so.9 → libcudnn.so.9.10.2`), never blocking, a
/// regular file, at most [`MAX_LIBRARY`] bytes. None: nothing there.
fn open_library(path: &Path) -> Result<Option<std::fs::File>, place::ReadError> {
    Ok(place::open_regular_with(path, MAX_LIBRARY, true)?.map(|(f, _)| f))
}

/// Whether a library can be loaded from `path`: a regular file (a big one too). A folder,
/// FIFO or device at the name is not a library, and the loader looks on.
fn usable(path: &Path) -> bool {
    match open_library(path) {
        Ok(Some(_)) | Err(place::ReadError::TooBig { .. }) => true,
        Ok(None) | Err(_) => false,
    }
}

/// The DLLs a PE file imports (not its delay-loaded ones: not needed at load time).
pub fn pe_imports_at(path: &Path) -> Result<Vec<String>, WalkError> {
    let file = open_library(path)?.ok_or_else(|| WalkError::Format("file not found".into()))?;
    let cache = object::ReadCache::new(file);
    Ok(crate::loader::imports_in(&cache)?)
}

/// The `DT_NEEDED`, `DT_RPATH` and `DT_RUNPATH` of an ELF file, from its program headers
/// (a library needs no section headers, and some have none).
pub fn elf_deps_at(path: &Path) -> Result<ElfDeps, WalkError> {
    let file = open_library(path)?.ok_or_else(|| WalkError::Format("file not found".into()))?;
    let cache = object::ReadCache::new(file);
    elf_deps(&cache)
}

/// [`elf_deps_at`] over bytes (tests, and any `ReadRef`).
pub fn elf_deps<'a, R: object::ReadRef<'a>>(data: R) -> Result<ElfDeps, WalkError> {
    use object::elf::{FileHeader32, FileHeader64};
    match object::FileKind::parse(data).map_err(|e| WalkError::Format(e.to_string()))? {
        object::FileKind::Elf64 => elf_deps_for::<FileHeader64<object::Endianness>, R>(data),
        object::FileKind::Elf32 => elf_deps_for::<FileHeader32<object::Endianness>, R>(data),
        k => Err(WalkError::Format(format!("{k:?}, not ELF"))),
    }
}

fn elf_deps_for<'a, Elf, R>(data: R) -> Result<ElfDeps, WalkError>
where
    Elf: object::read::elf::FileHeader<Endian = object::Endianness>,
    R: object::ReadRef<'a>,
{
    use object::elf;
    use object::read::elf::{Dyn, ProgramHeader};
    let bad = |e: object::read::Error| WalkError::Format(e.to_string());
    let header = Elf::parse(data).map_err(bad)?;
    let endian = header.endian().map_err(bad)?;
    let phdrs = header.program_headers(endian, data).map_err(bad)?;
    let mut dynamic = None;
    for ph in phdrs {
        if let Some(d) = ph.dynamic(endian, data).map_err(bad)? {
            dynamic = Some(d);
            break;
        }
    }
    let Some(dynamic) = dynamic else {
        return Ok(ElfDeps::default()); // static, or not a dynamic object
    };
    // The string table's address → its place in the file, through the PT_LOAD segment
    // that maps it.
    let (mut strtab, mut strsz) = (None, None);
    for d in dynamic {
        let tag = d.tag(endian);
        if tag == elf::DT_NULL {
            break;
        }
        if tag == elf::DT_STRTAB {
            strtab = Some(d.val(endian));
        } else if tag == elf::DT_STRSZ {
            strsz = Some(d.val(endian));
        }
    }
    let Some(addr) = strtab else {
        return Err(WalkError::Format(
            "a dynamic section without a string table".into(),
        ));
    };
    let (table, table_len) = phdrs
        .iter()
        .filter(|p| p.p_type(endian) == elf::PT_LOAD)
        .find_map(|p| {
            let (va, off, size) = (
                p.p_vaddr(endian).into(),
                p.p_offset(endian).into(),
                p.p_filesz(endian).into(),
            );
            (va <= addr && addr - va < size).then(|| (off + (addr - va), size - (addr - va)))
        })
        .ok_or_else(|| WalkError::Format("the string table is in no segment".into()))?;
    let table_len = strsz.map_or(table_len, |s| s.min(table_len));
    let string = |at: u64| -> Result<String, WalkError> {
        if at >= table_len {
            return Err(WalkError::Format("a name past its string table".into()));
        }
        let start = table + at;
        let end = start + (table_len - at).min(MAX_STRING);
        let bytes = data
            .read_bytes_at_until(start..end, 0)
            .map_err(|()| WalkError::Format("an unterminated name".into()))?;
        Ok(String::from_utf8_lossy(bytes).into_owned())
    };
    let mut out = ElfDeps::default();
    for d in dynamic {
        let tag = d.tag(endian);
        if tag == elf::DT_NULL {
            break;
        }
        let list = |s: String| -> Vec<String> {
            s.split(':')
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect()
        };
        if tag == elf::DT_NEEDED {
            out.needed.push(string(d.val(endian))?);
        } else if tag == elf::DT_RPATH {
            out.rpath.extend(list(string(d.val(endian))?));
        } else if tag == elf::DT_RUNPATH {
            out.runpath.extend(list(string(d.val(endian))?));
        }
    }
    Ok(out)
}

/// glibc's `/etc/ld.so.cache` (the `glibc-ld.so.cache1.1` format, which glibc has written
/// since 2.32 and alone since 2.33; an old-format file prefix is skipped): library name →
/// file. Read bounded (4 MiB) and never through a FIFO; a damaged cache is empty.
pub fn read_ld_so_cache(path: &Path) -> BTreeMap<String, PathBuf> {
    let Ok(Some(bytes)) = place::read_regular_following(path, 4 << 20) else {
        return BTreeMap::new();
    };
    parse_ld_so_cache(&bytes)
}

/// [`read_ld_so_cache`] over bytes.
pub fn parse_ld_so_cache(bytes: &[u8]) -> BTreeMap<String, PathBuf> {
    const OLD: &[u8] = b"ld.so-1.7.0";
    const NEW: &[u8] = b"glibc-ld.so.cache1.1";
    let mut out = BTreeMap::new();
    // The new format starts the file, or follows the old one (entries of 12 bytes).
    let start = if bytes.starts_with(NEW) {
        0
    } else if bytes.starts_with(OLD) && bytes.len() >= 16 {
        let n = u32::from_le_bytes(bytes[12..16].try_into().unwrap_or_default()) as usize;
        let Some(after) = n.checked_mul(12).and_then(|x| x.checked_add(16)) else {
            return out;
        };
        // Aligned to 8 after the old table.
        let at = after.div_ceil(8) * 8;
        if !bytes.get(at..).is_some_and(|b| b.starts_with(NEW)) {
            return out;
        }
        at
    } else {
        return out;
    };
    let b = &bytes[start..];
    let u32_at =
        |i: usize| -> Option<u32> { Some(u32::from_le_bytes(b.get(i..i + 4)?.try_into().ok()?)) };
    // Header: magic+version (20), nlibs (4), len_strings (4), flags (1), padding (3),
    // extension offset (4), unused (12) = 48 bytes; entries of 24 bytes: flags (4),
    // key (4), value (4), osversion (4), hwcap (8). String offsets count from the start
    // of the new-format header.
    let Some(n) = u32_at(20) else { return out };
    let string = |off: u32| -> Option<String> {
        let s = b.get(off as usize..)?;
        let end = s.iter().take(4096).position(|&c| c == 0)?;
        Some(String::from_utf8_lossy(&s[..end]).into_owned())
    };
    for i in 0..(n as usize).min(100_000) {
        let e = 48 + i * 24;
        let (Some(key), Some(value)) = (u32_at(e + 4), u32_at(e + 8)) else {
            break;
        };
        if let (Some(k), Some(v)) = (string(key), string(value)) {
            // The first entry for a name wins (the cache lists the preferred first).
            out.entry(k).or_insert_with(|| PathBuf::from(v));
        }
    }
    out
}

/// A folder's names, lower-cased (Windows compares names ignoring case).
struct Listings(HashMap<PathBuf, HashMap<String, String>>);

impl Listings {
    fn find(&mut self, dir: &Path, name: &str) -> Option<PathBuf> {
        let names = self.0.entry(dir.to_path_buf()).or_insert_with(|| {
            std::fs::read_dir(dir)
                .map(|rd| {
                    rd.flatten()
                        .take(MAX_LISTING)
                        .map(|e| {
                            let n = e.file_name().to_string_lossy().into_owned();
                            (n.to_ascii_lowercase(), n)
                        })
                        .collect()
                })
                .unwrap_or_default()
        });
        let real = names.get(&name.to_ascii_lowercase())?;
        let p = dir.join(real);
        usable(&p).then_some(p)
    }
}

/// `$ORIGIN` (and `${ORIGIN}`) is the folder of the file that names the path; other
/// absolute folders are the machine's, under `root`.
fn expand(entry: &str, origin: &Path, root: &Path) -> PathBuf {
    let e = entry.replace("${ORIGIN}", "$ORIGIN");
    if let Some(rest) = e.strip_prefix("$ORIGIN") {
        return origin.join(rest.trim_start_matches('/'));
    }
    if let Some(rest) = e.strip_prefix('/') {
        return root.join(rest);
    }
    origin.join(e)
}

/// Where the loader finds `name` when a package asks for it by name at run time
/// (`LoadLibrary("cublas64_12.dll")`, `dlopen("libcublas.so.12")`): the search's folders
/// in order (on Linux `LD_LIBRARY_PATH`, the cache, the default folders, then the
/// package's preloaded ones). None: nowhere.
pub fn locate(name: &str, search: &Search) -> Option<PathBuf> {
    match search {
        Search::Windows(w) => {
            let mut listings = Listings(HashMap::new());
            w.dirs.iter().find_map(|d| listings.find(d, name))
        }
        Search::Linux(l) => l
            .ld_library_path
            .iter()
            .map(|d| d.join(name))
            .find(|p| usable(p))
            .or_else(|| {
                l.cache
                    .get(name)
                    .map(|p| expand(&p.to_string_lossy(), Path::new("/"), &l.root))
                    .filter(|p| usable(p))
            })
            .or_else(|| {
                l.default_dirs
                    .iter()
                    .chain(&l.preloaded)
                    .map(|d| d.join(name))
                    .find(|p| usable(p))
            }),
    }
}

struct Node {
    path: PathBuf,
    chain: Vec<String>,
    /// DT_RPATH folders inherited from the loading objects (ld.so applies a loader's
    /// RPATH to the libraries it pulls in, unless the needing object has a RUNPATH).
    inherited_rpath: Vec<PathBuf>,
    depth: usize,
}

/// Walks the libraries `start` needs, transitively, and returns what the loader would not
/// find. `start` is the file the loader was asked for (its own folder is the DLL-load
/// folder on Windows).
pub fn walk(start: &Path, search: &Search) -> Walk {
    let mut out = Walk::default();
    let mut listings = Listings(HashMap::new());
    let mut seen_names: HashSet<String> = HashSet::new();
    let mut seen_files: HashSet<PathBuf> = HashSet::new();
    let load_dir = start.parent().map(Path::to_path_buf);
    let mut queue = VecDeque::from([Node {
        path: start.to_path_buf(),
        chain: Vec::new(),
        inherited_rpath: Vec::new(),
        depth: 0,
    }]);
    while let Some(node) = queue.pop_front() {
        if out.files_read >= MAX_FILES || !seen_files.insert(node.path.clone()) {
            continue;
        }
        let own = node
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut chain = node.chain.clone();
        chain.push(own);
        let origin = node.path.parent().unwrap_or(Path::new("")).to_path_buf();
        out.files_read += 1;
        match search {
            Search::Windows(w) => {
                let imports = match pe_imports_at(&node.path) {
                    Ok(i) => i,
                    Err(e) => {
                        out.unreadable.push((node.path.clone(), e.to_string()));
                        continue;
                    }
                };
                let dirs: Vec<&PathBuf> = load_dir
                    .iter()
                    .filter(|_| w.load_dir_first)
                    .chain(&w.dirs)
                    .collect();
                for name in imports {
                    if is_api_set(&name)
                        || is_known_dll(&name)
                        || !seen_names.insert(name.to_ascii_lowercase())
                    {
                        continue;
                    }
                    let found = dirs
                        .iter()
                        .find_map(|d| listings.find(d, &name).map(|p| (d, p)));
                    match found {
                        None => {
                            let unsearched = w
                                .unsearched
                                .iter()
                                .find(|d| listings.find(d, &name).is_some())
                                .cloned();
                            out.missing.push(Missing {
                                name,
                                chain: chain.clone(),
                                unsearched,
                            });
                        }
                        Some((dir, p)) => {
                            if node.depth < MAX_DEPTH && !w.system.iter().any(|s| s == *dir) {
                                queue.push_back(Node {
                                    path: p,
                                    chain: chain.clone(),
                                    inherited_rpath: Vec::new(),
                                    depth: node.depth + 1,
                                });
                            }
                        }
                    }
                }
            }
            Search::Linux(l) => {
                let deps = match elf_deps_at(&node.path) {
                    Ok(d) => d,
                    Err(e) => {
                        out.unreadable.push((node.path.clone(), e.to_string()));
                        continue;
                    }
                };
                let own_rpath: Vec<PathBuf> = deps
                    .rpath
                    .iter()
                    .map(|e| expand(e, &origin, &l.root))
                    .collect();
                let runpath: Vec<PathBuf> = deps
                    .runpath
                    .iter()
                    .map(|e| expand(e, &origin, &l.root))
                    .collect();
                // ld.so(8): DT_RPATH is used only when there is no DT_RUNPATH.
                let rpath: Vec<PathBuf> = if runpath.is_empty() {
                    own_rpath
                        .iter()
                        .chain(&node.inherited_rpath)
                        .cloned()
                        .collect()
                } else {
                    Vec::new()
                };
                for name in deps.needed {
                    if !seen_names.insert(name.clone()) {
                        continue;
                    }
                    let found = if name.contains('/') {
                        let p = expand(&name, &origin, &l.root);
                        usable(&p).then_some(p)
                    } else {
                        rpath
                            .iter()
                            .chain(&l.ld_library_path)
                            .chain(&runpath)
                            .map(|d| d.join(&name))
                            .find(|p| usable(p))
                            .or_else(|| {
                                l.cache
                                    .get(&name)
                                    .map(|p| expand(&p.to_string_lossy(), &origin, &l.root))
                                    .filter(|p| usable(p))
                            })
                            .or_else(|| {
                                l.default_dirs
                                    .iter()
                                    .chain(&l.preloaded)
                                    .map(|d| d.join(&name))
                                    .find(|p| usable(p))
                            })
                    };
                    match found {
                        None => out.missing.push(Missing {
                            name,
                            chain: chain.clone(),
                            unsearched: None,
                        }),
                        Some(p) if node.depth < MAX_DEPTH => queue.push_back(Node {
                            path: p,
                            chain: chain.clone(),
                            inherited_rpath: if runpath.is_empty() {
                                rpath.clone()
                            } else {
                                Vec::new()
                            },
                            depth: node.depth + 1,
                        }),
                        Some(_) => {}
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
