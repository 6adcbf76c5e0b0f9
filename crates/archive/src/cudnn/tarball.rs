//! NVIDIA's Linux cuDNN archive (`cudnn-linux-x86_64-<version>_cuda<major>-archive.tar.xz`)
//! as hostile input. A tar has no central directory, so an archive is judged only at the
//! end of its stream (the xz checksums come last). A check (`open_with`) reads it once
//! and writes nothing. An install (`open_and_extract`) reads it once too: each entry is
//! checked on its own before it is written into staging (one top folder, a place in
//! NVIDIA's layout, a link only in lib/ and only to a sibling's name, so nothing
//! resolves outside staging); the whole-archive checks run at the end, before any
//! transaction, and a refusal removes staging.
//! Decompression (pure Rust, streaming) is bounded, so a bomb stops at the limit.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::archive::{Destinations, Entry, Format, Kind, Limits, Plan, Refusal, check_name, fold};
use super::extract::Staged;
use super::{CudnnError, Event};
use crate::download::Hasher;
use crate::place;
use crate::version::Version;

/// The xz stream's magic bytes.
const XZ_MAGIC: &[u8] = &[0xFD, b'7', b'z', b'X', b'Z', 0];
/// A version header is a few kB; a larger one is not NVIDIA's.
const MAX_HEADER_BYTES: u64 = 1 << 20;
/// A GNU long-name or PAX record: a few hundred bytes in a real archive.
const MAX_EXTENSION_BYTES: u64 = 64 << 10;
/// xz -9 uses a 64 MiB dictionary; a header asking for more than 1 GiB is not NVIDIA's.
const MAX_DICT_KIB: u32 = 1 << 20;
/// Symlink chains in a real archive are two long (`.so` → `.so.9` → `.so.9.10.2`).
const MAX_LINK_HOPS: usize = 8;

/// Whether `path` starts like an xz file.
pub fn is_xz(path: &Path) -> bool {
    let mut head = [0u8; 6];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|_| head == XZ_MAGIC)
}

/// `cudnn-linux-x86_64-9.10.2.21_cuda12-archive` → (9.10.2.21, 12).
pub fn parse_linux_top(top: &str) -> Option<(Version, u32)> {
    super::archive::parse_top_for(top, "linux-x86_64")
}

/// Where a file under the top folder goes; None: not part of NVIDIA's layout.
fn classify(inner: &str) -> Option<Kind> {
    let lower = inner.to_ascii_lowercase();
    let (dir, file) = lower.rsplit_once('/').unwrap_or(("", &lower));
    match dir {
        "include" if file.ends_with(".h") => Some(Kind::Header),
        "lib" if file.starts_with("libcudnn") && file.contains(".so") => Some(Kind::SharedLib),
        "lib" if file.starts_with("libcudnn") && file.ends_with(".a") => Some(Kind::StaticLib),
        "" if file.starts_with("license") => Some(Kind::License),
        _ => None,
    }
}

/// The decompressed stream, stopped once it has produced more than any real archive
/// holds (the xz decoder streams: memory stays its dictionary, whatever the size).
struct Bounded {
    inner: lzma_rust2::XzReader<BufReader<Counting>>,
    produced: u64,
    cap: u64,
    over: Arc<Mutex<Option<Refusal>>>,
    limit: Refusal,
}

impl Read for Bounded {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(out)?;
        self.produced += n as u64;
        if self.produced > self.cap {
            self.over.lock().unwrap().get_or_insert(self.limit.clone());
            return Err(std::io::Error::other("decompression limit reached"));
        }
        Ok(n)
    }
}

/// The archive file, counting the compressed bytes read (progress of a single pass).
struct Counting {
    file: File,
    read: Arc<AtomicU64>,
}

impl Read for Counting {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(out)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// What explains a read error: the limit that stopped the decoder, else damage.
struct Guard {
    over: Arc<Mutex<Option<Refusal>>>,
    archive: String,
    /// Compressed bytes read so far.
    read: Arc<AtomicU64>,
}

impl Guard {
    fn refusal(&self, name: &str, e: std::io::Error) -> Refusal {
        self.over
            .lock()
            .unwrap()
            .clone()
            .unwrap_or(Refusal::Corrupt {
                name: if name.is_empty() {
                    self.archive.clone()
                } else {
                    name.to_string()
                },
                detail: e.to_string(),
            })
    }
}

/// One pass over the archive, its decompression bounded by `limits`.
fn stream(path: &Path, limits: &Limits) -> Result<(tar::Archive<Bounded>, Guard), Refusal> {
    let packed = std::fs::metadata(path).map_or(0, |m| m.len()).max(1);
    let over = Arc::new(Mutex::new(None));
    let archive = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    // Tar headers and padding add at most 1.5 kB an entry to the files' bytes.
    let slack = limits.entries as u64 * 1536 + (1 << 20);
    let by_size = limits.total_bytes.saturating_add(slack);
    let by_ratio = packed.saturating_mul(limits.ratio).saturating_add(slack);
    let (cap, limit) = if by_ratio < by_size {
        let limit = Refusal::Ratio {
            name: archive.clone(),
            ratio: by_ratio / packed,
            limit: limits.ratio,
        };
        (by_ratio, limit)
    } else {
        let limit = Refusal::TooLarge {
            total: by_size,
            limit: limits.total_bytes,
        };
        (by_size, limit)
    };
    let file = File::open(path).map_err(|e| Refusal::Corrupt {
        name: archive.clone(),
        detail: e.to_string(),
    })?;
    let read = Arc::new(AtomicU64::new(0));
    let counting = Counting {
        file,
        read: read.clone(),
    };
    let reader = Bounded {
        inner: lzma_rust2::XzReader::new_mem_limit(BufReader::new(counting), true, MAX_DICT_KIB),
        produced: 0,
        cap,
        over: over.clone(),
        limit,
    };
    Ok((
        tar::Archive::new(reader),
        Guard {
            over,
            archive,
            read,
        },
    ))
}

/// Reads what follows the tar's end so the decoder checks the whole stream (the xz
/// checksums come after the data they cover).
fn drain(tar: tar::Archive<Bounded>, g: &Guard) -> Result<(), Refusal> {
    std::io::copy(&mut tar.into_inner(), &mut std::io::sink())
        .map(|_| ())
        .map_err(|e| g.refusal("", e))
}

/// What one tar header says, checked on its own.
struct Header {
    name: String,
    size: u64,
    /// None for a directory.
    what: Option<What>,
}

#[derive(Debug, Clone, PartialEq)]
enum What {
    File,
    Link(String),
}

/// Long names and links from the extension records before an entry (GNU `L`/`K`, PAX
/// `path`/`linkpath`).
#[derive(Default)]
struct Pending {
    name: Option<String>,
    link: Option<String>,
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .trim_end_matches('\0')
        .to_string()
}

/// Reads an extension record into `pending`; Ok(false) when `e` is not one. The entries
/// are read raw, so each record is bounded here: the tar crate would read one whole,
/// whatever size its header claims.
fn extension<R: Read>(
    e: &mut tar::Entry<'_, R>,
    pending: &mut Pending,
    g: &Guard,
) -> Result<bool, Refusal> {
    use tar::EntryType as T;
    let kind = e.header().entry_type();
    if !matches!(
        kind,
        T::GNULongName | T::GNULongLink | T::XHeader | T::XGlobalHeader
    ) {
        return Ok(false);
    }
    let corrupt = |detail: String| Refusal::Corrupt {
        name: g.archive.clone(),
        detail,
    };
    if e.size() > MAX_EXTENSION_BYTES {
        return Err(corrupt(format!(
            "a {}-byte {kind:?} record; names are far shorter",
            e.size()
        )));
    }
    let mut bytes = Vec::new();
    e.read_to_end(&mut bytes)
        .map_err(|err| g.refusal("", err))?;
    match kind {
        T::GNULongName => pending.name = Some(text(&bytes)),
        T::GNULongLink => pending.link = Some(text(&bytes)),
        T::XHeader => {
            for x in tar::PaxExtensions::new(&bytes) {
                let x = x.map_err(|err| corrupt(format!("PAX record: {err}")))?;
                match x.key_bytes() {
                    b"path" => pending.name = Some(text(x.value_bytes())),
                    b"linkpath" => pending.link = Some(text(x.value_bytes())),
                    // Raw entries skip by the header's size: another size would desync.
                    b"size" => return Err(corrupt("a PAX size record (a file over 8 GiB)".into())),
                    _ => {}
                }
            }
        }
        // A global record carries no names or sizes of ours.
        _ => {}
    }
    Ok(true)
}

fn header<R: Read>(e: &tar::Entry<'_, R>, pending: &mut Pending) -> Result<Header, Refusal> {
    let raw = pending.name.take().unwrap_or_else(|| text(&e.path_bytes()));
    let link = pending.link.take();
    // GNU tar writes `./` before every name when run as `tar -C dir .`.
    let name = raw.strip_prefix("./").unwrap_or(&raw).to_string();
    check_name(&name)?;
    let what = match e.header().entry_type() {
        tar::EntryType::Directory => None,
        tar::EntryType::Regular | tar::EntryType::Continuous => Some(What::File),
        tar::EntryType::Symlink => {
            let target =
                link.unwrap_or_else(|| e.link_name_bytes().map(|t| text(&t)).unwrap_or_default());
            Some(What::Link(target))
        }
        tar::EntryType::Link => return Err(Refusal::HardLink { name }),
        other => {
            return Err(Refusal::Special {
                name,
                kind: format!("{other:?}").to_lowercase(),
            });
        }
    };
    Ok(Header {
        name,
        size: e.size(),
        what,
    })
}

/// A link target must be a sibling's plain file name.
fn check_link_target(name: &str, target: &str) -> Result<(), Refusal> {
    let why = if target.is_empty() {
        "it points nowhere"
    } else if target.starts_with('/') || target.contains(':') {
        "its target is an absolute path"
    } else if target.contains('/') || target.contains('\\') || target == ".." || target == "." {
        "its target is not a file in the same folder"
    } else if target.contains('\0') {
        "its target has a NUL"
    } else if crate::safe_path::file_name(target).is_err() {
        // A device, an 8.3 alias, a stream: no file of a Windows-safe archive.
        "its target is a name Windows cannot hold"
    } else {
        return Ok(());
    };
    Err(Refusal::BadLink {
        name: name.into(),
        target: target.into(),
        why: why.into(),
    })
}

/// Every link leads, within a few hops in its own folder, to a regular file.
fn check_link_chains(entries: &[Entry]) -> Result<(), Refusal> {
    let by_inner: HashMap<&str, &Entry> = entries.iter().map(|e| (e.inner.as_str(), e)).collect();
    for e in entries.iter().filter(|e| e.link.is_some()) {
        let mut at = e;
        for hop in 0.. {
            let Some(target) = &at.link else { break };
            let dir = at.inner.rsplit_once('/').map_or("", |(d, _)| d);
            let bad = |why: &str| Refusal::BadLink {
                name: e.name.clone(),
                target: e.link.clone().unwrap_or_default(),
                why: why.into(),
            };
            if hop == MAX_LINK_HOPS {
                return Err(bad("its chain of links loops or is too long"));
            }
            at = by_inner
                .get(format!("{dir}/{target}").as_str())
                .ok_or_else(|| bad("its target is not a file of the archive"))?;
        }
    }
    Ok(())
}

/// Validates the tarball at `path` without writing anything.
pub fn open_with(path: &Path, limits: &Limits) -> Result<Plan, Refusal> {
    let refusal = |e: CudnnError| match e {
        CudnnError::Refused { refusal, .. } => refusal,
        other => Refusal::Corrupt {
            name: path.display().to_string(),
            detail: other.to_string(),
        },
    };
    let scan = scan(path, limits, None).map_err(refusal)?;
    plan(path, scan.files, scan.headers, scan.total)
}

/// Validates and extracts in ONE pass of the stream, for an install: the xz decode is
/// the cost, and a check-then-extract would pay it twice. Everything is written only below
/// `staging` (links only to a sibling, so nothing resolves outside it); the
/// whole-archive checks (one top folder, layout, link chains, version, ratio, the xz
/// checksums at the end) all pass before this returns, so the caller's transaction
/// never sees a refused archive. Every file and link is created relative to the staging
/// folder held open. On any error the caller removes `staging`.
pub fn open_and_extract(
    path: &Path,
    limits: &Limits,
    staging: &place::Dir,
    report: &(dyn Fn(Event) + Sync),
) -> Result<(Plan, Vec<Staged>), CudnnError> {
    let run = || -> Result<(Plan, Vec<Staged>), CudnnError> {
        let scan = scan(path, limits, Some((staging, report)))?;
        let mut written = scan.written;
        let plan = plan(path, scan.files, scan.headers, scan.total).map_err(|refusal| {
            CudnnError::Refused {
                archive: path.to_path_buf(),
                refusal,
            }
        })?;
        let staged = plan
            .entries
            .iter()
            .map(|e| {
                let sha256 = written.remove(&e.index).expect("every entry was written");
                Staged {
                    entry: e.clone(),
                    sha256,
                }
            })
            .collect();
        Ok((plan, staged))
    };
    run()
}

/// What one pass collected.
struct Scan {
    files: Vec<(usize, Header)>,
    headers: HashMap<String, String>,
    total: u64,
    /// With staging: each written entry's SHA-256 (empty for a link), by index.
    written: HashMap<usize, String>,
}

/// One pass over the stream, to its end (so the xz checksums are verified): every
/// header checked; with `staging`, every file and link also written there, below its
/// top folder, once the entry's own checks (one top folder, a known place, a link's
/// target) have passed.
fn scan(
    path: &Path,
    limits: &Limits,
    staging: Option<(&place::Dir, &(dyn Fn(Event) + Sync))>,
) -> Result<Scan, CudnnError> {
    let refused = |refusal| CudnnError::Refused {
        archive: path.to_path_buf(),
        refusal,
    };
    if cfg!(windows) {
        return Err(refused(Refusal::LinuxArchive));
    }
    let (mut tar, g) = stream(path, limits).map_err(refused)?;
    let packed = std::fs::metadata(path).map_or(0, |m| m.len()).max(1);
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut files: Vec<(usize, Header)> = Vec::new();
    let mut headers: HashMap<String, String> = HashMap::new();
    let mut written: HashMap<usize, String> = HashMap::new();
    let mut first_top: Option<String> = None;
    let mut dests = Destinations::default();
    let mut total = 0u64;
    let mut buf = vec![0u8; 256 << 10];
    let mut pending = Pending::default();
    let entries = tar
        .entries()
        .map_err(|e| refused(g.refusal("", e)))?
        .raw(true);
    for (i, e) in entries.enumerate() {
        if i >= limits.entries {
            return Err(refused(Refusal::TooManyEntries {
                count: i + 1,
                limit: limits.entries,
            }));
        }
        let mut e = e.map_err(|err| refused(g.refusal("", err)))?;
        if extension(&mut e, &mut pending, &g).map_err(refused)? {
            continue;
        }
        let h = header(&e, &mut pending).map_err(refused)?;
        let folded = fold(h.name.trim_end_matches('/'));
        if let Some(prev) = seen.insert(folded, h.name.clone()) {
            return Err(refused(Refusal::CaseCollision { a: prev, b: h.name }));
        }
        let Some(what) = h.what.clone() else {
            continue;
        };
        total = total.saturating_add(h.size);
        if total > limits.total_bytes {
            return Err(refused(Refusal::TooLarge {
                total,
                limit: limits.total_bytes,
            }));
        }
        let file = h.name.rsplit('/').next().unwrap_or("");
        let version_header = what == What::File
            && matches!(file, "cudnn_version.h" | "cudnn.h")
            && h.size <= MAX_HEADER_BYTES;
        let mut bytes = Vec::new();
        if version_header {
            e.read_to_end(&mut bytes)
                .map_err(|err| refused(g.refusal(&h.name, err)))?;
            headers.insert(h.name.clone(), String::from_utf8_lossy(&bytes).into_owned());
        }
        if let Some((staging, report)) = staging {
            let (inner, kind) = entry_place(&h, &what, &mut first_top).map_err(refused)?;
            dests.add(&h.name, kind, inner).map_err(refused)?;
            let dest = staging.display(inner);
            let sha256 = match &what {
                What::Link(target) => {
                    symlink(target, staging, inner)?;
                    String::new()
                }
                What::File => {
                    let mut f = staging
                        .create_new(inner)
                        .map_err(|err| CudnnError::io(&dest, err))?;
                    let mut hasher = Hasher::new(false);
                    if version_header {
                        hasher.update(&bytes);
                        f.write_all(&bytes)
                            .map_err(|err| CudnnError::io(&dest, err))?;
                    }
                    loop {
                        let n = e
                            .read(&mut buf)
                            .map_err(|err| refused(g.refusal(&h.name, err)))?;
                        if n == 0 {
                            break;
                        }
                        hasher.update(&buf[..n]);
                        f.write_all(&buf[..n])
                            .map_err(|err| CudnnError::io(&dest, err))?;
                    }
                    hasher.finish().sha256
                }
            };
            written.insert(i, sha256);
            // Entries and sizes are known only at the end: progress is the compressed
            // bytes read.
            report(Event::Extracted {
                entries: written.len(),
                total_entries: written.len(),
                bytes: g.read.load(Ordering::Relaxed).min(packed),
                total_bytes: packed,
            });
        }
        files.push((i, h));
    }
    drain(tar, &g).map_err(refused)?;
    if total / packed > limits.ratio {
        return Err(refused(Refusal::Ratio {
            name: g.archive.clone(),
            ratio: total / packed,
            limit: limits.ratio,
        }));
    }
    Ok(Scan {
        files,
        headers,
        total,
        written,
    })
}

/// Where an entry goes below staging (its path under the top folder), checked before a
/// byte of it is written: the same top folder as the first entry, a place NVIDIA's
/// layout has, and for a link: in lib/, to a sibling's plain name. (`plan` checks the
/// same again, with the rest, once everything is read.)
fn entry_place<'a>(
    h: &'a Header,
    what: &What,
    first_top: &mut Option<String>,
) -> Result<(&'a str, Kind), Refusal> {
    let (top, inner) = h.name.split_once('/').ok_or_else(|| Refusal::Layout {
        found: format!("top-level entries [{:?}]", crate::shown::value(&h.name)),
    })?;
    let first = first_top.get_or_insert_with(|| top.to_string());
    if top != first.as_str() {
        return Err(Refusal::Layout {
            found: format!(
                "top-level entries [{:?}, {:?}]",
                crate::shown::value(first),
                crate::shown::value(top)
            ),
        });
    }
    let kind = classify(inner).ok_or_else(|| Refusal::Layout {
        found: format!("unexpected file \"{}\"", crate::shown::value(&h.name)),
    })?;
    if let What::Link(target) = what {
        if !matches!(kind, Kind::SharedLib | Kind::StaticLib) {
            return Err(Refusal::BadLink {
                name: h.name.clone(),
                target: target.clone(),
                why: "only lib/ holds links".into(),
            });
        }
        check_link_target(&h.name, target)?;
    }
    Ok((inner, kind))
}

/// The layout check, once every header has been read.
fn plan(
    path: &Path,
    files: Vec<(usize, Header)>,
    headers: HashMap<String, String>,
    total: u64,
) -> Result<Plan, Refusal> {
    let mut tops: Vec<&str> = files
        .iter()
        .map(|(_, h)| h.name.split('/').next().unwrap_or(""))
        .collect();
    tops.sort();
    tops.dedup();
    let top = match tops.as_slice() {
        [t] if files.iter().all(|(_, h)| h.name.contains('/')) => t.to_string(),
        _ => {
            return Err(Refusal::Layout {
                found: format!(
                    "top-level entries {:?}",
                    tops.iter()
                        .take(5)
                        .map(|t| crate::shown::value(t))
                        .collect::<Vec<_>>()
                ),
            });
        }
    };
    let (full_version, cuda_major) = parse_linux_top(&top).ok_or_else(|| Refusal::Layout {
        found: format!("top folder \"{}\"", crate::shown::value(&top)),
    })?;
    let mut entries = Vec::new();
    for (index, h) in files {
        let inner = h.name[top.len() + 1..].to_string();
        let kind = classify(&inner).ok_or_else(|| Refusal::Layout {
            found: format!("unexpected file \"{}\"", crate::shown::value(&h.name)),
        })?;
        let link = match h.what {
            Some(What::Link(target)) => {
                if !matches!(kind, Kind::SharedLib | Kind::StaticLib) {
                    return Err(Refusal::BadLink {
                        name: h.name,
                        target,
                        why: "only lib/ holds links".into(),
                    });
                }
                check_link_target(&h.name, &target)?;
                Some(target)
            }
            _ => None,
        };
        entries.push(Entry {
            index,
            name: h.name,
            inner,
            kind,
            size: if link.is_some() { 0 } else { h.size },
            link,
        });
    }
    check_link_chains(&entries)?;
    Destinations::check(&entries)?;
    if !entries
        .iter()
        .any(|e| e.kind == Kind::SharedLib && e.inner.starts_with("lib/libcudnn.so"))
    {
        return Err(Refusal::Layout {
            found: "no lib/libcudnn.so*".into(),
        });
    }
    let version = ["include/cudnn_version.h", "include/cudnn.h"]
        .iter()
        .find_map(|h| {
            headers
                .get(&format!("{top}/{h}"))
                .and_then(|t| crate::toolkit_version::parse_cudnn_header(t))
        })
        .ok_or(Refusal::NoVersion)?;
    if full_version.major_minor() != version.major_minor() {
        return Err(Refusal::Layout {
            found: format!("folder says cuDNN {full_version}, cudnn_version.h says {version}"),
        });
    }
    Ok(Plan {
        path: path.to_path_buf(),
        format: Format::TarXz,
        top,
        version,
        cuda_major: Some(cuda_major),
        full_version: Some(full_version),
        entries,
        total_bytes: total,
    })
}

/// Makes the link `inner` (below `staging`, its folder opened without following) to
/// `target` (a sibling's name: checked before).
#[cfg(unix)]
fn symlink(target: &str, staging: &place::Dir, inner: &str) -> Result<(), CudnnError> {
    let shown = staging.display(inner);
    let (folder, name) = inner.rsplit_once('/').unwrap_or((".", inner));
    let d = if folder == "." {
        staging.try_clone()
    } else {
        staging.sub(folder, true)
    }
    .map_err(|e| CudnnError::io(&shown, e))?;
    d.remove(name).map_err(|e| CudnnError::io(&shown, e))?;
    d.handle()
        .symlink(target, name)
        .map_err(|e| CudnnError::io(&shown, e))
}

#[cfg(not(unix))]
fn symlink(_target: &str, staging: &place::Dir, inner: &str) -> Result<(), CudnnError> {
    // Unreachable: `open_with` refuses the Linux archive on Windows.
    Err(CudnnError::Refused {
        archive: staging.display(inner),
        refusal: Refusal::LinuxArchive,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_layout() {
        let (v, c) = parse_linux_top("cudnn-linux-x86_64-9.10.2.21_cuda12-archive").unwrap();
        assert_eq!((v.to_string().as_str(), c), ("9.10.2.21", 12));
        assert!(parse_linux_top("cudnn-windows-x86_64-9.10.2.21_cuda12-archive").is_none());
        assert_eq!(classify("lib/libcudnn.so.9.10.2"), Some(Kind::SharedLib));
        assert_eq!(classify("lib/libcudnn_ops.so"), Some(Kind::SharedLib));
        assert_eq!(classify("lib/libcudnn_adv_static.a"), Some(Kind::StaticLib));
        assert_eq!(classify("include/cudnn_version.h"), Some(Kind::Header));
        assert_eq!(classify("LICENSE"), Some(Kind::License));
        assert_eq!(classify("lib/libevil.so"), None);
        assert_eq!(classify("bin/cudnn64_9.dll"), None);
    }

    #[test]
    fn link_targets() {
        assert!(check_link_target("x", "libcudnn.so.9").is_ok());
        for bad in ["", "/etc/passwd", "../x", "..", ".", "sub/x", "a\\b", "C:x"] {
            assert!(
                matches!(check_link_target("x", bad), Err(Refusal::BadLink { .. })),
                "{bad}"
            );
        }
    }
}
