//! Reading a cuDNN zip as hostile input: every entry name, type and size is checked, and
//! the layout must be one NVIDIA ships, before a single byte is extracted. Two layouts:
//! NVIDIA's redist zip (one `cudnn-windows-x86_64-…-archive/` folder), and NVIDIA's PyPI
//! wheel `nvidia-cudnn-cuNN` (`nvidia/cudnn/{bin,include,lib}` + `*.dist-info/`). NVIDIA's
//! Linux redist archive (`.tar.xz`) is read by `tarball`, with the same limits and rules.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::version::Version;

/// Bounds no real cuDNN archive comes near (9.27 for CUDA 12: ~70 entries, 1.2 GB
/// unpacked, DLLs compress about 2:1).
pub const MAX_ENTRIES: usize = 5_000;
pub const MAX_TOTAL_BYTES: u64 = 16 << 30;
pub const MAX_RATIO: u64 = 200;

/// Why an archive is refused. Each says what was found and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum Refusal {
    #[error("not a readable zip archive: {detail}")]
    NotZip { detail: String },
    #[error("entry \"{}\" climbs out of the archive (..)", crate::shown::value(.name))]
    Traversal { name: String },
    #[error("entry \"{}\" is an absolute path or has a drive letter", crate::shown::value(.name))]
    Absolute { name: String },
    #[error("entry \"{}\" uses backslashes; zip paths use /", crate::shown::value(.name))]
    Backslash { name: String },
    #[error("entry \"{}\" cannot be a file on Windows: {why}", crate::shown::value(.name))]
    WindowsName {
        name: String,
        why: crate::safe_path::Unsafe,
    },
    #[error("entry \"{}\" is a symbolic link; cuDNN archives have none", crate::shown::value(.name))]
    Symlink { name: String },
    #[error("entry \"{}\" is a hard link; NVIDIA's archives have none", crate::shown::value(.name))]
    HardLink { name: String },
    #[error("entry \"{}\" is a {kind}, not a file; NVIDIA's archives have none", crate::shown::value(.name))]
    Special { name: String, kind: String },
    #[error("symbolic link \"{}\" -> \"{}\" is refused: {why}", crate::shown::value(.name), crate::shown::value(.target))]
    BadLink {
        name: String,
        target: String,
        why: String,
    },
    #[error(
        "this is NVIDIA's Linux cuDNN archive (.tar.xz); on Windows use cudnn-windows-x86_64-<version>_cuda<major>-archive.zip"
    )]
    LinuxArchive,
    #[error(
        "entries \"{}\" and \"{}\" differ only in letter case and would overwrite each other on Windows",
        crate::shown::value(.a),
        crate::shown::value(.b)
    )]
    CaseCollision { a: String, b: String },
    #[error(
        "entries \"{}\" and \"{}\" would both be installed as {} (one would overwrite the other, and the toolkit's own file with it)",
        crate::shown::value(.a),
        crate::shown::value(.b),
        crate::shown::value(.dest)
    )]
    SameDestination { a: String, b: String, dest: String },
    #[error("{count} entries; a cuDNN archive has far fewer (limit {limit})")]
    TooManyEntries { count: usize, limit: usize },
    #[error("{total} bytes unpacked; over the {limit}-byte limit")]
    TooLarge { total: u64, limit: u64 },
    #[error("entry \"{}\" would inflate {ratio}:1 (limit {limit}:1): a zip bomb, not cuDNN", crate::shown::value(.name))]
    Ratio {
        name: String,
        ratio: u64,
        limit: u64,
    },
    #[error("entry \"{}\" is damaged: {detail}", crate::shown::value(.name))]
    Corrupt { name: String, detail: String },
    #[error(
        "unexpected layout: {found}. Expected NVIDIA's cuDNN zip (one folder cudnn-windows-x86_64-<version>_cuda<major>-archive holding bin/ (bin/x64/ from 9.18), include/ and lib/x64/), NVIDIA's Linux tarball (one folder cudnn-linux-x86_64-<version>_cuda<major>-archive holding include/ and lib/) or NVIDIA's nvidia-cudnn-cu<major> wheel"
    )]
    Layout { found: String },
    #[error("no include/cudnn_version.h (or cudnn.h) with the version in the archive")]
    NoVersion,
    #[error(
        "this cuDNN is built for CUDA {archive}, but the toolkit in {toolkit_dir} is CUDA {toolkit}: get {suggestion}"
    )]
    CudaMismatch {
        archive: u32,
        toolkit: String,
        toolkit_dir: PathBuf,
        suggestion: String,
    },
}

/// The rule a [`Refusal`] broke, for a front end's title (the serde name is the i18n
/// key suffix: `ui_refused_<rule>`). Several refusals share one rule (every unsafe name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalRule {
    NotZip,
    UnsafeName,
    WindowsName,
    CaseCollision,
    SameDestination,
    TooLarge,
    Corrupt,
    Layout,
    NoVersion,
    CudaMismatch,
}

impl Refusal {
    pub fn rule(&self) -> RefusalRule {
        use Refusal::*;
        match self {
            NotZip { .. } => RefusalRule::NotZip,
            Traversal { .. }
            | Absolute { .. }
            | Backslash { .. }
            | Symlink { .. }
            | HardLink { .. }
            | Special { .. }
            | BadLink { .. } => RefusalRule::UnsafeName,
            WindowsName { .. } => RefusalRule::WindowsName,
            CaseCollision { .. } => RefusalRule::CaseCollision,
            SameDestination { .. } => RefusalRule::SameDestination,
            TooManyEntries { .. } | TooLarge { .. } | Ratio { .. } => RefusalRule::TooLarge,
            Corrupt { .. } => RefusalRule::Corrupt,
            Layout { .. } | LinuxArchive => RefusalRule::Layout,
            NoVersion => RefusalRule::NoVersion,
            CudaMismatch { .. } => RefusalRule::CudaMismatch,
        }
    }
}

/// Where an entry goes, relative to the toolkit folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Dll,
    /// A Linux shared library (`libcudnn_ops.so.9`, from the wheel or the tarball).
    SharedLib,
    /// A Linux static library (`libcudnn_adv_static.a`, from the tarball).
    StaticLib,
    Header,
    ImportLib,
    License,
}

#[derive(Debug, Clone)]
pub struct Entry {
    pub index: usize,
    /// The path inside the archive.
    pub name: String,
    /// The path under the archive's top folder (`bin/x64/cudnn64_9.dll`).
    pub inner: String,
    pub kind: Kind,
    /// 0 for a symbolic link.
    pub size: u64,
    /// A symbolic link's target: a file name in the same folder (tarball only).
    pub link: Option<String>,
}

/// The archive's container.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Zip,
    TarXz,
}

/// A validated archive, ready to extract.
#[derive(Debug, Clone)]
pub struct Plan {
    pub path: PathBuf,
    pub format: Format,
    pub top: String,
    pub version: Version,
    /// From the folder name (`_cuda12-archive`); None for the old `cuda/` layout.
    pub cuda_major: Option<u32>,
    /// The 4-part version in the folder name (`9.10.2.21`).
    pub full_version: Option<Version>,
    pub entries: Vec<Entry>,
    pub total_bytes: u64,
}

/// The bounds an archive must stay within.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub entries: usize,
    pub total_bytes: u64,
    pub ratio: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            entries: MAX_ENTRIES,
            total_bytes: MAX_TOTAL_BYTES,
            ratio: MAX_RATIO,
        }
    }
}

/// Checks every name before anything else reads the archive.
pub(super) fn check_name(name: &str) -> Result<(), Refusal> {
    let n = || name.to_string();
    if name.contains('\\') {
        return Err(Refusal::Backslash { name: n() });
    }
    // (Any other `:` is a stream, refused below.)
    if name.starts_with('/') || name.as_bytes().get(1) == Some(&b':') {
        return Err(Refusal::Absolute { name: n() });
    }
    if name.split('/').any(|c| c == "..") {
        return Err(Refusal::Traversal { name: n() });
    }
    if name.contains('\0') {
        return Err(Refusal::Corrupt {
            name: n(),
            detail: "NUL in the name".into(),
        });
    }
    // Every component as Windows would hold it (a device, an 8.3 alias, a stream, a
    // trailing dot): the same archive must be safe to install there, whatever OS reads it.
    // (An empty name is the tarball's own `./`, which names no file.)
    if name.is_empty() {
        return Ok(());
    }
    crate::safe_path::entry_path(name).map_err(|why| Refusal::WindowsName { name: n(), why })
}

/// `cudnn-windows-x86_64-9.10.2.21_cuda12-archive` → (9.10.2.21, 12).
pub fn parse_top(top: &str) -> Option<(Version, u32)> {
    parse_top_for(top, "windows-x86_64")
}

/// NVIDIA's archive folder `cudnn-<platform>-<version>_cuda<major>-archive`.
pub(super) fn parse_top_for(top: &str, platform: &str) -> Option<(Version, u32)> {
    let rest = top
        .strip_prefix("cudnn-")?
        .strip_prefix(platform)?
        .strip_prefix('-')?
        .strip_suffix("-archive")?;
    let (ver, cuda) = rest.split_once("_cuda")?;
    Some((ver.parse().ok()?, cuda.parse().ok()?))
}

fn classify(inner: &str) -> Option<Kind> {
    let lower = inner.to_ascii_lowercase();
    let (dir, file) = lower.rsplit_once('/').unwrap_or(("", &lower));
    match dir {
        "bin" | "bin/x64" if file.ends_with(".dll") => Some(Kind::Dll),
        "include" if file.ends_with(".h") => Some(Kind::Header),
        "lib/x64" | "lib" if file.ends_with(".lib") => Some(Kind::ImportLib),
        "" if file.starts_with("license") => Some(Kind::License),
        _ => None,
    }
}

/// Where the DLLs go: beside the toolkit's own runtime DLLs (`bin`, `bin/x64` for 13.x).
fn dll_dir(toolkit_major: u32) -> &'static str {
    if toolkit_major >= 13 {
        "bin/x64"
    } else {
        "bin"
    }
}

/// Where an entry is installed, relative to the toolkit folder, with `/`. The layouts'
/// two DLL folders (`bin`, `bin/x64`) and two import-library folders (`lib`, `lib/x64`)
/// each become one folder, so two entries can land on one file: [`Destinations`].
pub fn dest_rel(e: &Entry, toolkit_major: u32) -> String {
    dest_of(e.kind, &e.inner, toolkit_major)
}

fn dest_of(kind: Kind, inner: &str, toolkit_major: u32) -> String {
    let file = inner.rsplit('/').next().unwrap_or(inner);
    match kind {
        Kind::Dll => format!("{}/{file}", dll_dir(toolkit_major)),
        Kind::SharedLib | Kind::StaticLib => format!("lib64/{file}"),
        Kind::Header => format!("include/{file}"),
        Kind::ImportLib => format!("lib/x64/{file}"),
        Kind::License => format!("{}/cudnn-{file}", super::txn::META),
    }
}

/// A name as Windows compares it. NTFS folds case with its upcase table, a one-to-one
/// simple mapping; upper- then lower-casing with Rust's full Unicode mapping puts at
/// least every pair NTFS equates in one class (`ſ`/`s`, `K`/`k` too), and a class it
/// merges beyond NTFS only refuses a name NVIDIA never ships. Linux toolkits are
/// folded too: a toolkit may sit on a case-insensitive file system.
pub(super) fn fold(name: &str) -> String {
    name.to_uppercase().to_lowercase()
}

/// One destination, one source: every entry's destination, compared as Windows would,
/// must differ from every other's and from every folder on another's way (a file
/// `bin/x` against `bin/x/y`). Checked before a byte is written, for the whole
/// archive (zip) or entry by entry as the stream goes (tarball).
#[derive(Default)]
pub(super) struct Destinations {
    /// Folded destination → the entry that goes there.
    files: HashMap<String, String>,
    /// Folded folder on some destination's way → the entry that made it.
    dirs: HashMap<String, String>,
}

impl Destinations {
    /// Entry `name` (of `kind`, at `inner` below the top folder).
    pub(super) fn add(&mut self, name: &str, kind: Kind, inner: &str) -> Result<(), Refusal> {
        // The DLL folder is one folder whatever the toolkit's major, so one mapping
        // decides for every toolkit.
        let dest = dest_of(kind, inner, 13);
        let folded = fold(&dest);
        let clash = |a: &str| Refusal::SameDestination {
            a: a.to_string(),
            b: name.to_string(),
            dest: dest.clone(),
        };
        if let Some(a) = self.files.get(&folded) {
            return Err(clash(a));
        }
        if let Some(a) = self.dirs.get(&folded) {
            return Err(clash(a));
        }
        let mut at = 0;
        while let Some(i) = folded[at..].find('/') {
            let dir = &folded[..at + i];
            if let Some(a) = self.files.get(dir) {
                return Err(clash(a));
            }
            self.dirs
                .entry(dir.to_string())
                .or_insert_with(|| name.to_string());
            at += i + 1;
        }
        self.files.insert(folded, name.to_string());
        Ok(())
    }

    pub(super) fn check(entries: &[Entry]) -> Result<(), Refusal> {
        let mut d = Destinations::default();
        entries
            .iter()
            .try_for_each(|e| d.add(&e.name, e.kind, &e.inner))
    }
}

/// `nvidia_cudnn_cu13-9.27.0.42.dist-info` → (9.27.0.42, 13).
pub fn parse_wheel_dist_info(top: &str) -> Option<(Version, u32)> {
    let rest = top
        .strip_prefix("nvidia_cudnn_cu")?
        .strip_suffix(".dist-info")?;
    let (cuda, ver) = rest.split_once('-')?;
    Some((ver.parse().ok()?, cuda.parse().ok()?))
}

/// A wheel entry's kind and path under `nvidia/cudnn/`; Ok(None) for what stays out
/// (package metadata, `__init__.py`).
fn classify_wheel(name: &str) -> Result<Option<(Kind, String)>, ()> {
    let (first, rest) = name.split_once('/').ok_or(())?;
    if first.ends_with(".dist-info") && first.starts_with("nvidia_cudnn_cu") {
        return Ok(rest
            .strip_prefix("licenses/")
            .filter(|f| !f.contains('/'))
            .map(|f| (Kind::License, f.to_string())));
    }
    if name == "nvidia/__init__.py" || name == "nvidia/cudnn/__init__.py" {
        return Ok(None);
    }
    let inner = name.strip_prefix("nvidia/cudnn/").ok_or(())?;
    let lower = inner.to_ascii_lowercase();
    let (dir, file) = lower.rsplit_once('/').ok_or(())?;
    let kind = match dir {
        "bin" | "bin/x64" if file.ends_with(".dll") => Kind::Dll,
        "include" if file.ends_with(".h") => Kind::Header,
        "lib" if file.starts_with("libcudnn") && file.contains(".so") => Kind::SharedLib,
        "lib" | "lib/x64" if file.ends_with(".lib") => Kind::ImportLib,
        _ if dir.ends_with("__pycache__") || file == "__init__.py" => return Ok(None),
        _ => return Err(()),
    };
    Ok(Some((kind, inner.to_string())))
}

/// Opens and validates `path`. Reads the central directory and the version header only.
pub fn open(path: &Path) -> Result<Plan, Refusal> {
    open_with(path, &Limits::default())
}

pub fn open_with(path: &Path, limits: &Limits) -> Result<Plan, Refusal> {
    if super::tarball::is_xz(path) {
        return super::tarball::open_with(path, limits);
    }
    let file = File::open(path).map_err(|e| Refusal::NotZip {
        detail: e.to_string(),
    })?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| Refusal::NotZip {
        detail: e.to_string(),
    })?;
    if zip.len() > limits.entries {
        return Err(Refusal::TooManyEntries {
            count: zip.len(),
            limit: limits.entries,
        });
    }
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut files = Vec::new();
    let mut total = 0u64;
    for i in 0..zip.len() {
        let e = zip.by_index_raw(i).map_err(|e| Refusal::Corrupt {
            name: format!("#{i}"),
            detail: e.to_string(),
        })?;
        let name = String::from_utf8_lossy(e.name_raw()).into_owned();
        check_name(&name)?;
        if e.is_symlink() || e.unix_mode().is_some_and(|m| m & 0o170000 == 0o120000) {
            return Err(Refusal::Symlink { name });
        }
        let folded = fold(name.trim_end_matches('/'));
        if let Some(prev) = seen.insert(folded, name.clone()) {
            return Err(Refusal::CaseCollision { a: prev, b: name });
        }
        if e.is_dir() {
            continue;
        }
        let (size, packed) = (e.size(), e.compressed_size().max(1));
        if size / packed > limits.ratio {
            return Err(Refusal::Ratio {
                name,
                ratio: size / packed,
                limit: limits.ratio,
            });
        }
        total = total.saturating_add(size);
        if total > limits.total_bytes {
            return Err(Refusal::TooLarge {
                total,
                limit: limits.total_bytes,
            });
        }
        files.push((i, name, size));
    }

    if let Some(plan) = wheel_plan(path, &mut zip, &files, total)? {
        return Ok(plan);
    }
    // One top folder: NVIDIA's archive folder, or `cuda/` in old cuDNN 8 zips.
    let tops: Vec<&str> = files
        .iter()
        .map(|(_, n, _)| n.split('/').next().unwrap_or(""))
        .collect();
    let top = tops.first().copied().unwrap_or("").to_string();
    if top.is_empty()
        || tops.iter().any(|t| *t != top)
        || files.iter().any(|(_, n, _)| !n.contains('/'))
    {
        let mut distinct: Vec<&str> = tops.clone();
        distinct.sort();
        distinct.dedup();
        return Err(Refusal::Layout {
            found: format!(
                "top-level entries {:?}",
                distinct
                    .iter()
                    .take(5)
                    .map(|t| crate::shown::value(t))
                    .collect::<Vec<_>>()
            ),
        });
    }
    let named = parse_top(&top);
    if named.is_none() && top != "cuda" {
        return Err(Refusal::Layout {
            found: format!("top folder \"{}\"", crate::shown::value(&top)),
        });
    }
    let mut entries = Vec::new();
    for (index, name, size) in files {
        let inner = name[top.len() + 1..].to_string();
        let Some(kind) = classify(&inner) else {
            return Err(Refusal::Layout {
                found: format!("unexpected file \"{}\"", crate::shown::value(&name)),
            });
        };
        entries.push(Entry {
            index,
            name,
            inner,
            kind,
            size,
            link: None,
        });
    }
    if !entries
        .iter()
        .any(|e| e.kind == Kind::Dll && e.inner.to_ascii_lowercase().contains("cudnn64_"))
    {
        return Err(Refusal::Layout {
            found: "no cudnn64_*.dll under bin/ or bin/x64/".into(),
        });
    }
    Destinations::check(&entries)?;
    let version = read_version(&mut zip, &entries)?;
    if let Some((v, _)) = &named
        && v.major_minor() != version.major_minor()
    {
        return Err(Refusal::Layout {
            found: format!("folder says cuDNN {v}, cudnn_version.h says {version}"),
        });
    }
    Ok(Plan {
        path: path.to_path_buf(),
        format: Format::Zip,
        top,
        version,
        cuda_major: named.as_ref().map(|(_, c)| *c),
        full_version: named.map(|(v, _)| v),
        entries,
        total_bytes: total,
    })
}

/// The wheel layout, when the archive has a `nvidia_cudnn_cuNN-*.dist-info/` folder.
fn wheel_plan(
    path: &Path,
    zip: &mut zip::ZipArchive<File>,
    files: &[(usize, String, u64)],
    total: u64,
) -> Result<Option<Plan>, Refusal> {
    let Some(named) = files.iter().find_map(|(_, n, _)| {
        n.split_once('/')
            .and_then(|(top, _)| parse_wheel_dist_info(top))
    }) else {
        return Ok(None);
    };
    let mut entries = Vec::new();
    for (index, name, size) in files {
        let Ok(kind) = classify_wheel(name) else {
            return Err(Refusal::Layout {
                found: format!("unexpected file \"{}\"", crate::shown::value(name)),
            });
        };
        if let Some((kind, inner)) = kind {
            entries.push(Entry {
                index: *index,
                name: name.clone(),
                inner,
                kind,
                size: *size,
                link: None,
            });
        }
    }
    if !entries.iter().any(|e| {
        let f = e.inner.to_ascii_lowercase();
        (e.kind == Kind::Dll && f.contains("cudnn64_"))
            || (e.kind == Kind::SharedLib && f.starts_with("lib/libcudnn.so"))
    }) {
        return Err(Refusal::Layout {
            found: "a cuDNN wheel without cudnn64_*.dll or libcudnn.so.*".into(),
        });
    }
    Destinations::check(&entries)?;
    let version = read_version(zip, &entries)?;
    if named.0.major_minor() != version.major_minor() {
        return Err(Refusal::Layout {
            found: format!(
                "wheel says cuDNN {}, cudnn_version.h says {version}",
                named.0
            ),
        });
    }
    Ok(Some(Plan {
        path: path.to_path_buf(),
        format: Format::Zip,
        top: "nvidia/cudnn".into(),
        version,
        cuda_major: Some(named.1),
        full_version: Some(named.0),
        entries,
        total_bytes: total,
    }))
}

fn read_version(zip: &mut zip::ZipArchive<File>, entries: &[Entry]) -> Result<Version, Refusal> {
    for header in ["include/cudnn_version.h", "include/cudnn.h"] {
        let Some(e) = entries
            .iter()
            .find(|e| e.inner.eq_ignore_ascii_case(header))
        else {
            continue;
        };
        let mut f = zip.by_index(e.index).map_err(|err| Refusal::Corrupt {
            name: e.name.clone(),
            detail: err.to_string(),
        })?;
        let mut text = String::new();
        std::io::Read::read_to_string(&mut f, &mut text).map_err(|err| Refusal::Corrupt {
            name: e.name.clone(),
            detail: err.to_string(),
        })?;
        if let Some(v) = crate::toolkit_version::parse_cudnn_header(&text) {
            return Ok(v);
        }
    }
    Err(Refusal::NoVersion)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(check_name("cudnn-x/bin/cudnn64_9.dll").is_ok());
        assert!(matches!(
            check_name("a/../../evil.dll"),
            Err(Refusal::Traversal { .. })
        ));
        assert!(matches!(
            check_name("/etc/passwd"),
            Err(Refusal::Absolute { .. })
        ));
        assert!(matches!(
            check_name("C:/Windows/x.dll"),
            Err(Refusal::Absolute { .. })
        ));
        assert!(matches!(
            check_name("a\\..\\x.dll"),
            Err(Refusal::Backslash { .. })
        ));
        for bad in [
            "top/include/aux.h",
            "top/bin/CON.dll",
            "top/include/COM¹.h",
            "top/bin/CUDNN6~1.DLL",
            "top/include/cudnn.h.",
            "top/include /cudnn.h",
            "top/lpt1/x.h",
            "top/include/cudnn.h:evil",
        ] {
            assert!(
                matches!(check_name(bad), Err(Refusal::WindowsName { .. })),
                "{bad:?}: {:?}",
                check_name(bad)
            );
        }
        assert!(check_name("cudnn-windows-x86_64-9.10.2.21_cuda12-archive/").is_ok());
        assert!(check_name("nvidia_cudnn_cu12-9.1.0.70.dist-info/RECORD").is_ok());
    }

    #[test]
    fn top_folder() {
        let (v, c) = parse_top("cudnn-windows-x86_64-9.10.2.21_cuda12-archive").unwrap();
        assert_eq!((v.to_string().as_str(), c), ("9.10.2.21", 12));
        assert!(parse_top("cudnn-linux-x86_64-9.10.2.21_cuda12-archive").is_none());
        assert_eq!(classify("bin/x64/cudnn64_9.dll"), Some(Kind::Dll));
        assert_eq!(classify("lib/x64/cudnn.lib"), Some(Kind::ImportLib));
        assert_eq!(classify("include/cudnn_version.h"), Some(Kind::Header));
        assert_eq!(classify("bin/evil.exe"), None);
    }
}
