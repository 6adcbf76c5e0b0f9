//! Property tests over every reader of hostile input: the cuDNN zip validator (NVIDIA's
//! Windows zip, the nvidia-cudnn wheel), the Linux tarball reader (check and install),
//! the simple-index parser (PEP 691 JSON, PEP 503 HTML) and the state-file readers
//! (cuDNN manifest and journal, `.part.json`, `toolkit-wheels.json`, the install journal).
//! Inputs are structured (NVIDIA's layouts with hostile entries mixed in) and raw byte
//! mutations of valid archives. The properties: no panic, bounded time, and either a
//! refusal or a result that is safe (every destination one relative path inside the
//! toolkit, unique ignoring case; nothing outside the toolkit / download folder changed).
//!
//! Plain `cargo test` runs a few dozen cases per property (seconds). The long run,
//! 100,000 cases per property (see README.md, "Tests"):
//!
//!     PROPTEST_CASES=100000 cargo test --release --test fuzz -- --test-threads 1
//!
//! Failure persistence is off: a failure prints its shrunk input, nothing is written
//! into the repository.

mod support;

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::Config as ProptestConfig;

use cuda_setup_core::cudnn::{self, archive};
use cuda_setup_core::safe_path;
use support::cudnn_tar::{Item, LIBS_9, LinuxSpec, linux_toolkit, tar_bytes};
use support::cudnn_zip::{HEADERS_9, Spec, version_header};

/// `PROPTEST_CASES` when set (the long run), else `quick` cases (plain `cargo test`).
fn config(quick: u32) -> ProptestConfig {
    let mut c = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        c.cases = quick;
    }
    c.failure_persistence = None;
    c.max_shrink_time = 120_000;
    c
}

/// No case may take longer than this (a hang is a failure, not a slow test).
const CASE_LIMIT: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------
// The sandbox: a machine root with the toolkit and, beside it, things that must not change.

/// What a path holds, for before/after comparisons (links are not followed).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Dir,
    /// The bytes, as text (the sandbox's files are text).
    File(String),
    Link(PathBuf),
    /// A FIFO, socket or device: recorded, never opened (a FIFO would block the check).
    Special,
}

/// Everything under `root` except below `skip`: relative path → what it holds.
fn snapshot(root: &Path, skip: &[&Path]) -> BTreeMap<PathBuf, Node> {
    fn walk(base: &Path, d: &Path, skip: &[&Path], out: &mut BTreeMap<PathBuf, Node>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd.flatten() {
            let p = e.path();
            if skip.contains(&p.as_path()) {
                continue;
            }
            let rel = p.strip_prefix(base).unwrap().to_path_buf();
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if m.file_type().is_symlink() {
                out.insert(rel, Node::Link(std::fs::read_link(&p).unwrap_or_default()));
            } else if m.is_dir() {
                out.insert(rel, Node::Dir);
                walk(base, &p, skip, out);
            } else if !m.is_file() {
                out.insert(rel, Node::Special);
            } else {
                out.insert(
                    rel,
                    Node::File(
                        String::from_utf8_lossy(&std::fs::read(&p).unwrap_or_default())
                            .into_owned(),
                    ),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, skip, &mut out);
    out
}

/// A temporary folder in memory where there is one: the transactions sync every record
/// they write, and 100,000 cases of disk syncs would take an hour.
fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(t) = tempfile::tempdir_in(shm)
    {
        return t;
    }
    tempfile::tempdir().unwrap()
}

/// Fails the case naming each path that changed, vanished or appeared.
fn assert_same(
    before: &BTreeMap<PathBuf, Node>,
    after: &BTreeMap<PathBuf, Node>,
    what: &str,
) -> Result<(), TestCaseError> {
    let mut changes = Vec::new();
    for (p, n) in before {
        match after.get(p) {
            None => changes.push(format!("{} removed", p.display())),
            Some(m) if m != n => changes.push(format!("{} changed: {n:?} -> {m:?}", p.display())),
            Some(_) => {}
        }
    }
    for p in after.keys().filter(|p| !before.contains_key(*p)) {
        changes.push(format!("{} created", p.display()));
    }
    prop_assert!(
        changes.is_empty(),
        "{what} changed files outside its folder: {changes:?}"
    );
    Ok(())
}

/// A root holding a CUDA 12.4 toolkit (`cuda-12.4`) and, beside it, a sentinel file and
/// a folder whose names the hostile inputs aim at.
struct Sandbox {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    tk: PathBuf,
}

impl Sandbox {
    fn new() -> Sandbox {
        let tmp = scratch();
        let root = tmp.path().to_path_buf();
        let tk = linux_toolkit(&root, "12.4.1");
        std::fs::write(root.join("sentinel.txt"), b"sentinel: must keep its bytes").unwrap();
        std::fs::create_dir_all(root.join("keep/sub")).unwrap();
        std::fs::write(root.join("keep/a.dll"), b"keep a").unwrap();
        std::fs::write(root.join("keep/sub/b.h"), b"keep b").unwrap();
        Sandbox {
            _tmp: tmp,
            root,
            tk,
        }
    }

    /// Everything outside the toolkit folder.
    fn outside(&self) -> BTreeMap<PathBuf, Node> {
        snapshot(&self.root, &[&self.tk])
    }
}

/// Runs `f` on a thread, failing the case if it runs past `CASE_LIMIT` (the thread is
/// left behind: a hang is the finding). A panic inside fails the case with its message.
fn bounded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let t0 = Instant::now();
    let h = std::thread::spawn(move || {
        let r = f();
        let _ = tx.send(());
        r
    });
    match rx.recv_timeout(CASE_LIMIT) {
        Ok(()) => h.join().unwrap(),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match h.join() {
            Ok(r) => r,
            Err(p) => std::panic::resume_unwind(p),
        },
        Err(_) => panic!("{what} still running after {:?}", t0.elapsed()),
    }
}

// ---------------------------------------------------------------------------------------
// Hostile names and paths.

/// Path components that aim outside, at Windows' quirks, or at each other.
const COMPONENTS: &[&str] = &[
    "..",
    ".",
    "",
    "bin",
    "x64",
    "include",
    "lib",
    "lib64",
    "nvidia",
    "cudnn",
    "keep",
    "sentinel.txt",
    "a.dll",
    "C:",
    "c:",
    "D:\\x",
    "\\\\?\\C:",
    "..\\..",
    "/",
    "nul",
    "CON.dll",
    "x.dll.",
    "x.dll ",
    "a?b.dll",
    "a*b.h",
    "a\0b.dll",
    "cudnn64_9.dll",
    "CUDNN64_9.DLL",
    "cudnn.h",
    "cudnn_version.h",
    "cudnn.lib",
    "libcudnn.so.9",
    "LICENSE",
    "license",
    ".cuda-setup",
    "cudnn-backup",
    "é.dll",
    "Ⅹ.h",
];

fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => prop::sample::select(COMPONENTS).prop_map(str::to_string),
        1 => (1usize..300).prop_map(|n| format!("{}.dll", "a".repeat(n))),
        1 => "[a-zA-Z0-9._\\-]{1,12}",
    ]
}

/// A hostile relative-or-absolute path; `{ABS}` stands for the sandbox root.
fn hostile_path() -> impl Strategy<Value = String> {
    let templates = prop::sample::select(vec![
        "../sentinel.txt",
        "../keep",
        "../keep/a.dll",
        "../keep/sub",
        "..",
        "../..",
        "../../x",
        "bin/../../sentinel.txt",
        "..\\sentinel.txt",
        "..\\keep\\a.dll",
        "{ABS}/sentinel.txt",
        "{ABS}/keep",
        "{ABS}/keep/a.dll",
        "{ABS}",
        "/",
        "",
        ".",
        "C:/Windows/x.dll",
        "C:..\\sentinel.txt",
        "bin/nvcc",
        "version.json",
        "lib64",
        "lib64/libcudnn.so.9",
        "include/cudnn.h",
        ".cuda-setup",
        ".cuda-setup/cudnn-manifest.json",
        ".cuda-setup/cudnn-backup",
        "a//b",
        "nul",
        "CON.txt",
    ]);
    prop_oneof![
        3 => templates.prop_map(str::to_string),
        2 => (
            prop::sample::select(vec!["", "/", "{ABS}/", "C:/", "./"]),
            prop::collection::vec(component(), 1..5),
            prop::sample::select(vec!["/", "\\"]),
        )
            .prop_map(|(pre, parts, sep)| format!("{pre}{}", parts.join(sep))),
    ]
}

fn absolutize(p: &str, root: &Path) -> String {
    p.replace("{ABS}", &root.display().to_string())
}

// ---------------------------------------------------------------------------------------
// cuDNN archives: where each validated entry would go.

/// The destination the install gives an entry (mirrors `cudnn::dest_rel`: DLLs in
/// `bin` or `bin/x64` by the toolkit's major).
fn dest(e: &archive::Entry, toolkit_major: u32) -> String {
    let file = e.inner.rsplit('/').next().unwrap_or(&e.inner);
    let dll_dir = if toolkit_major >= 13 {
        "bin/x64"
    } else {
        "bin"
    };
    match e.kind {
        archive::Kind::Dll => format!("{dll_dir}/{file}"),
        archive::Kind::SharedLib | archive::Kind::StaticLib => format!("lib64/{file}"),
        archive::Kind::Header => format!("include/{file}"),
        archive::Kind::ImportLib => format!("lib/x64/{file}"),
        archive::Kind::License => format!(".cuda-setup/cudnn-{file}"),
    }
}

/// One name that stays in its folder: not empty, `.` or `..`, no separator, drive or NUL.
/// (Structural only: Windows' reserved names and characters are the archive checker's
/// business; here the question is where a file lands.)
fn stays(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', ':', '\0'])
}

/// An accepted plan is safe: every destination a relative path inside the toolkit (no
/// `..`, not absolute), no two the same file ignoring case; a link's target a sibling.
fn assert_plan_safe(plan: &archive::Plan) -> Result<(), TestCaseError> {
    for major in [12, 13] {
        let mut seen = HashSet::new();
        for e in &plan.entries {
            let d = dest(e, major);
            prop_assert!(
                d.split('/').all(stays),
                "entry {:?} would be written to {d:?}, not a path inside the toolkit",
                e.name
            );
            prop_assert!(
                seen.insert(d.to_lowercase()),
                "two entries would be written to {d:?} (CUDA {major}); the second: {:?}",
                e.name
            );
            if let Some(t) = &e.link {
                prop_assert!(stays(t), "link {:?} -> {t:?} is not a sibling name", e.name);
            }
        }
    }
    prop_assert!(plan.total_bytes <= archive::MAX_TOTAL_BYTES);
    prop_assert!(plan.entries.len() <= archive::MAX_ENTRIES);
    Ok(())
}

/// Checks the archive at `path` (as `cudnn check` does), then installs it into the
/// sandbox's toolkit (as `cudnn install` does): no panic, no hang, an accepted plan is
/// safe, and nothing outside the toolkit changed.
fn check_and_install(sb: &Sandbox, path: &Path) -> Result<(), TestCaseError> {
    let p = path.to_path_buf();
    let checked = bounded("archive::open", move || archive::open(&p));
    if let Ok(plan) = &checked {
        assert_plan_safe(plan)?;
    }
    // A zip refused by the check is refused by install the same way, before it writes
    // (a tarball is checked while it is extracted: installed always).
    if checked.is_err() && !path.to_string_lossy().ends_with(".tar.xz") {
        return Ok(());
    }
    let before = sb.outside();
    let (p, tk) = (path.to_path_buf(), sb.tk.clone());
    let _ = bounded("cudnn::install", move || cudnn::install(&p, &tk, &|_| {}));
    assert_same(&before, &sb.outside(), "cudnn::install")?;
    let tk = sb.tk.clone();
    let _ = bounded("cudnn::uninstall", move || cudnn::uninstall(&tk));
    assert_same(&before, &sb.outside(), "cudnn::uninstall")?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// 1. The cuDNN zip validator.

const VERSION: &str = "9.10.2.21";

/// NVIDIA's Windows zip for CUDA 12 (tiny DLLs).
fn windows_files() -> &'static [(String, Vec<u8>)] {
    static F: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    F.get_or_init(|| {
        Spec {
            version: VERSION,
            cuda_major: 12,
            dll_size: 64,
        }
        .files()
    })
}

/// NVIDIA's `nvidia-cudnn-cu12` wheel for Linux (tiny libraries).
fn wheel_files() -> &'static [(String, Vec<u8>)] {
    static F: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    F.get_or_init(|| {
        let mut f: Vec<(String, Vec<u8>)> = support::cudnn_zip::WHEEL_SOS
            .iter()
            .map(|so| (format!("nvidia/cudnn/lib/{so}"), so.as_bytes().repeat(4)))
            .collect();
        for h in HEADERS_9 {
            f.push((
                format!("nvidia/cudnn/include/{h}"),
                b"#pragma once\n".to_vec(),
            ));
        }
        f.push((
            "nvidia/cudnn/include/cudnn_version.h".into(),
            version_header(9, 10, 2).into_bytes(),
        ));
        let info = format!("nvidia_cudnn_cu12-{VERSION}.dist-info");
        f.push((format!("{info}/licenses/License.txt"), b"licence".to_vec()));
        f.push((
            format!("{info}/METADATA"),
            b"Name: nvidia-cudnn-cu12\n".to_vec(),
        ));
        f.push(("nvidia/cudnn/__init__.py".into(), Vec::new()));
        f
    })
}

#[derive(Debug, Clone)]
enum ZipItem {
    File(String, Vec<u8>, bool),
    Dir(String),
    Symlink(String, String),
}

/// A hostile entry name: under NVIDIA's folder, the wheel's, or anywhere.
fn zip_name() -> impl Strategy<Value = String> {
    let top = prop::sample::select(vec![
        format!("cudnn-windows-x86_64-{VERSION}_cuda12-archive"),
        format!("CUDNN-WINDOWS-X86_64-{VERSION}_cuda12-archive"),
        "nvidia/cudnn".to_string(),
        format!("nvidia_cudnn_cu12-{VERSION}.dist-info"),
        format!("nvidia_cudnn_cu12-{VERSION}.dist-info/licenses"),
        "cuda".to_string(),
        String::new(),
    ]);
    let dir = prop::sample::select(vec![
        "bin",
        "bin/x64",
        "BIN",
        "include",
        "Include",
        "lib",
        "lib/x64",
        "LIB/X64",
        "",
        "..",
        "bin/..",
        "x64/bin",
        "bin\\x64",
        "lib/__pycache__",
    ]);
    // Often a file name the archive already has: a twin under another folder.
    let real: Vec<String> = windows_files()
        .iter()
        .chain(wheel_files())
        .filter_map(|(n, _)| n.rsplit('/').next().map(str::to_string))
        .collect();
    let file = prop_oneof![component(), prop::sample::select(real)];
    (top, dir, file).prop_map(|(t, d, f)| {
        [t.as_str(), d, f.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("/")
    })
}

fn zip_item() -> impl Strategy<Value = ZipItem> {
    let bytes = prop::collection::vec(any::<u8>(), 0..64);
    prop_oneof![
        6 => (zip_name(), bytes, any::<bool>()).prop_map(|(n, b, s)| ZipItem::File(n, b, s)),
        1 => zip_name().prop_map(|n| ZipItem::Dir(format!("{n}/"))),
        1 => (zip_name(), hostile_path()).prop_map(|(n, t)| ZipItem::Symlink(n, t)),
    ]
}

/// A zip: one of NVIDIA's layouts (some entries dropped, some renamed to case twins)
/// with hostile entries mixed in, or hostile entries only.
/// `v`'s values half the time, else none.
fn sometimes<T: std::fmt::Debug + Clone + 'static>(
    v: impl Strategy<Value = Vec<T>> + 'static,
) -> impl Strategy<Value = Vec<T>> {
    prop_oneof![Just(Vec::new()), v]
}

fn zip_case() -> impl Strategy<Value = Vec<ZipItem>> {
    let base = prop_oneof![3 => Just(0u8), 2 => Just(1), 1 => Just(2)];
    (
        base,
        prop::collection::vec(any::<bool>(), 32),
        // Each kind of trouble in about half the cases, so that some archives are
        // accepted and their plans judged.
        sometimes(prop::collection::vec(
            (any::<prop::sample::Index>(), zip_item()),
            1..6,
        )),
        sometimes(prop::collection::vec(any::<prop::sample::Index>(), 1..3)),
        sometimes(prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                prop::sample::select(vec!["bin", "bin/x64", "lib", "lib/x64", "include", ""]),
            ),
            1..3,
        )),
    )
        .prop_map(|(base, keep, extra, twins, copies)| {
            let files: &[(String, Vec<u8>)] = match base {
                0 => windows_files(),
                1 => wheel_files(),
                _ => &[],
            };
            let mut items: Vec<ZipItem> = files
                .iter()
                .enumerate()
                // Drop about one in eight, but keep the version header.
                .filter(|(i, (n, _))| {
                    n.ends_with("cudnn_version.h")
                        || n.contains("cudnn64_")
                        || n.contains("libcudnn.so")
                        || keep[i % keep.len()]
                        || i % 8 != 0
                })
                .map(|(_, (n, b))| ZipItem::File(n.clone(), b.clone(), true))
                .collect();
            for t in twins {
                if !items.is_empty() {
                    let i = t.index(items.len());
                    if let ZipItem::File(n, b, _) = items[i].clone() {
                        items.push(ZipItem::File(n.to_uppercase(), b, true));
                    }
                }
            }
            // The same file again in another of the layout's folders.
            for (t, folder) in copies {
                if !items.is_empty() {
                    let i = t.index(items.len());
                    if let ZipItem::File(n, b, _) = items[i].clone() {
                        let (top, file) = match n.split_once("/cudnn/") {
                            Some(_) => ("nvidia/cudnn", n.rsplit('/').next().unwrap_or("")),
                            None => (
                                n.split('/').next().unwrap_or(""),
                                n.rsplit('/').next().unwrap_or(""),
                            ),
                        };
                        let lower = file.to_ascii_lowercase();
                        let folder = if folder.is_empty() {
                            folder
                        } else if lower.ends_with(".dll") {
                            if n.contains("/x64/") {
                                "bin"
                            } else {
                                "bin/x64"
                            }
                        } else if lower.ends_with(".lib") {
                            if n.contains("/x64/") {
                                "lib"
                            } else {
                                "lib/x64"
                            }
                        } else {
                            folder
                        };
                        let name = [top, folder, file]
                            .iter()
                            .filter(|s| !s.is_empty())
                            .copied()
                            .collect::<Vec<_>>()
                            .join("/");
                        items.push(ZipItem::File(name, b, true));
                    }
                }
            }
            for (at, item) in extra {
                let i = at.index(items.len() + 1);
                items.insert(i, item);
            }
            items
        })
}

fn zip_bytes(items: &[ZipItem], root: &Path) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let deflate = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let stored = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let mut names = HashSet::new();
    for item in items {
        let name = match item {
            ZipItem::File(n, ..) | ZipItem::Dir(n) | ZipItem::Symlink(n, _) => n.clone(),
        };
        if !names.insert(name.clone()) {
            continue; // the writer refuses an exact duplicate
        }
        // A refused name leaves the writer usable; the entry is just not there.
        let _ = match item {
            ZipItem::File(n, b, deflated) => z
                .start_file(n.clone(), if *deflated { deflate } else { stored })
                .and_then(|_| z.write_all(b).map_err(Into::into)),
            ZipItem::Dir(n) => z.add_directory(n.clone(), stored),
            ZipItem::Symlink(n, t) => z.add_symlink(n.clone(), absolutize(t, root), stored),
        };
    }
    z.finish().unwrap().into_inner()
}

/// One change to an archive's bytes; `ZipField` patches a field of the n-th central or
/// local header (sizes, CRC, name length, external attributes: a symlink's mode).
#[derive(Debug, Clone)]
enum Mutation {
    Byte(prop::sample::Index, u8),
    Field {
        central: bool,
        record: prop::sample::Index,
        field: usize,
        value: u32,
    },
    NameByte(prop::sample::Index, prop::sample::Index, u8),
    Truncate(prop::sample::Index),
    Insert(prop::sample::Index, Vec<u8>),
}

fn zip_mutation() -> impl Strategy<Value = Mutation> {
    let value = prop_oneof![
        Just(0u32),
        Just(1),
        Just(0xFFFF_FFFF),
        Just(0x7FFF_FFFF),
        Just(0xA1FF_0000), // external attributes: a unix symlink
        Just(0x4000_0010), // a directory
        any::<u32>(),
    ];
    prop_oneof![
        3 => (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Byte(i, b)),
        4 => (
            any::<bool>(),
            any::<prop::sample::Index>(),
            // central: crc 16, csize 20, size 24, name len 28, attrs 38, offset 42;
            // local: crc 14, csize 18, size 22, name len 26
            prop::sample::select(vec![16usize, 20, 24, 28, 38, 42, 14, 18, 22, 26]),
            value,
        )
            .prop_map(|(central, record, field, value)| Mutation::Field {
                central,
                record,
                field,
                value,
            }),
        3 => (
            any::<prop::sample::Index>(),
            any::<prop::sample::Index>(),
            prop::sample::select(vec![b'/', b'\\', b'.', b':', 0, b'A', b'a', 0xFF]),
        )
            .prop_map(|(r, i, b)| Mutation::NameByte(r, i, b)),
        1 => any::<prop::sample::Index>().prop_map(Mutation::Truncate),
        1 => (any::<prop::sample::Index>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
    ]
}

fn find_all(hay: &[u8], sig: &[u8]) -> Vec<usize> {
    hay.windows(sig.len())
        .enumerate()
        .filter(|(_, w)| *w == sig)
        .map(|(i, _)| i)
        .collect()
}

fn mutate_zip(bytes: &mut Vec<u8>, m: &Mutation) {
    if bytes.is_empty() {
        return;
    }
    match m {
        Mutation::Byte(i, b) => {
            let i = i.index(bytes.len());
            bytes[i] = *b;
        }
        Mutation::Field {
            central,
            record,
            field,
            value,
        } => {
            let sig: &[u8] = if *central {
                b"PK\x01\x02"
            } else {
                b"PK\x03\x04"
            };
            let at = find_all(bytes, sig);
            if at.is_empty() {
                return;
            }
            let r = at[record.index(at.len())];
            let two = matches!(field, 26 | 28);
            let end = r + field + if two { 2 } else { 4 };
            if end <= bytes.len() {
                if two {
                    bytes[r + field..end].copy_from_slice(&(*value as u16).to_le_bytes());
                } else {
                    bytes[r + field..end].copy_from_slice(&value.to_le_bytes());
                }
            }
        }
        Mutation::NameByte(record, i, b) => {
            let at = find_all(bytes, b"PK\x01\x02");
            if at.is_empty() {
                return;
            }
            let r = at[record.index(at.len())];
            if r + 46 > bytes.len() {
                return;
            }
            let len = u16::from_le_bytes([bytes[r + 28], bytes[r + 29]]) as usize;
            if len > 0 && r + 46 + len <= bytes.len() {
                bytes[r + 46 + i.index(len)] = *b;
            }
        }
        Mutation::Truncate(i) => bytes.truncate(i.index(bytes.len())),
        Mutation::Insert(i, b) => {
            let i = i.index(bytes.len());
            bytes.splice(i..i, b.iter().copied());
        }
    }
}

proptest! {
    #![proptest_config(config(64))]

    /// Structured hostile zips: checked and installed safely or refused.
    #[test]
    fn zip_structured(items in zip_case()) {
        let sb = Sandbox::new();
        let path = sb.root.join("cudnn.zip");
        std::fs::write(&path, zip_bytes(&items, &sb.root)).unwrap();
        check_and_install(&sb, &path)?;
    }

    /// Byte mutations of valid zips (NVIDIA's Windows zip, the wheel): header fields,
    /// names, truncation.
    #[test]
    fn zip_mutated(
        wheel in any::<bool>(),
        mutations in prop::collection::vec(zip_mutation(), 1..5),
    ) {
        let sb = Sandbox::new();
        let files = if wheel { wheel_files() } else { windows_files() };
        let items: Vec<ZipItem> =
            files.iter().map(|(n, b)| ZipItem::File(n.clone(), b.clone(), true)).collect();
        let mut bytes = zip_bytes(&items, &sb.root);
        for m in &mutations {
            mutate_zip(&mut bytes, m);
        }
        let path = sb.root.join("cudnn.zip");
        std::fs::write(&path, &bytes).unwrap();
        check_and_install(&sb, &path)?;
    }
}

// ---------------------------------------------------------------------------------------
// 2. The tarball reader (NVIDIA's Linux .tar.xz).

fn linux_spec() -> LinuxSpec {
    LinuxSpec {
        version: VERSION,
        cuda_major: 12,
        lib_size: 48,
    }
}

fn tar_name() -> impl Strategy<Value = String> {
    let top = prop::sample::select(vec![
        linux_spec().top(),
        format!("./{}", linux_spec().top()),
        linux_spec().top().to_uppercase(),
        "cudnn-linux-x86_64-9.9.0.1_cuda12-archive".to_string(),
        String::new(),
    ]);
    let dir = prop::sample::select(vec!["lib", "include", "", "LIB", "lib/..", "..", "lib/lib"]);
    let file = prop_oneof![
        3 => component(),
        2 => prop::sample::select(LIBS_9).prop_map(|l| format!("{l}.so.9")),
        1 => (60usize..260).prop_map(|n| format!("libcudnn{}.so", "x".repeat(n))),
    ];
    (top, dir, file).prop_map(|(t, d, f)| {
        [t.as_str(), d, f.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("/")
    })
}

fn link_target() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(LIBS_9).prop_map(|l| format!("{l}.so.9")),
        2 => hostile_path(),
        1 => Just("libcudnn.so".to_string()),
        1 => "[a-z./]{0,20}",
    ]
    .prop_filter("a tar header holds 100 bytes of link", |t| t.len() <= 100)
}

fn tar_item() -> impl Strategy<Value = Item> {
    let bytes = prop::collection::vec(any::<u8>(), 0..64);
    prop_oneof![
        4 => (tar_name(), bytes).prop_map(|(n, b)| Item::File(n, b)),
        1 => tar_name().prop_map(|n| Item::Dir(format!("{n}/"))),
        3 => (tar_name(), link_target()).prop_map(|(n, t)| Item::Symlink(n, t)),
        1 => (tar_name(), link_target()).prop_map(|(n, t)| Item::HardLink(n, t)),
        1 => tar_name().prop_map(Item::Fifo),
        1 => tar_name().prop_map(Item::CharDevice),
        1 => prop_oneof![1usize..300, 65_000usize..66_000].prop_map(Item::LongNameRecord),
        2 => (
            prop::sample::select(vec!["path", "linkpath", "size", "mtime", "uname"]),
            prop_oneof![tar_name(), link_target(), "[0-9]{1,20}"],
        )
            .prop_map(|(k, v)| Item::Pax(k.to_string(), v)),
    ]
}

/// A tar change: a header field (name, mode, size, type, link name) of the n-th header
/// set to a hostile value (checksum fixed, or not), a byte, truncation.
#[derive(Debug, Clone)]
enum TarMutation {
    Field {
        header: prop::sample::Index,
        offset: usize,
        value: Vec<u8>,
        fix_checksum: bool,
    },
    Byte(prop::sample::Index, u8),
    Truncate(prop::sample::Index),
}

fn tar_mutation() -> impl Strategy<Value = TarMutation> {
    let field = prop_oneof![
        // size: octal huge, base-256 huge, garbage
        Just((124usize, b"77777777777\0".to_vec())),
        Just((
            124,
            vec![
                0x80, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF
            ]
        )),
        Just((124, b"00000001000\0".to_vec())),
        Just((124, b"zzzz".to_vec())),
        // type flag
        prop::sample::select(vec![
            b'0', b'1', b'2', b'3', b'4', b'5', b'6', b'7', b'g', b'x', b'L', b'K', 0
        ])
        .prop_map(|t| (156usize, vec![t])),
        // name / link name
        Just((0, b"../../evil\0".to_vec())),
        Just((0, b"/etc/evil\0".to_vec())),
        Just((157, b"../../../etc/passwd\0".to_vec())),
        Just((157, b"/\0".to_vec())),
        // ustar prefix (joined before the name)
        Just((345, b"..\0".to_vec())),
        Just((257, b"ustar\0".to_vec())),
    ];
    prop_oneof![
        4 => (any::<prop::sample::Index>(), field, any::<bool>()).prop_map(
            |(header, (offset, value), fix_checksum)| TarMutation::Field {
                header,
                offset,
                value,
                fix_checksum,
            }
        ),
        2 => (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| TarMutation::Byte(i, b)),
        1 => any::<prop::sample::Index>().prop_map(TarMutation::Truncate),
    ]
}

/// Offsets of the 512-byte blocks whose checksum is valid: the headers.
fn tar_headers(tar: &[u8]) -> Vec<usize> {
    (0..tar.len() / 512)
        .map(|b| b * 512)
        .filter(|&o| {
            let h = &tar[o..o + 512];
            let sum: u32 = h
                .iter()
                .enumerate()
                .map(|(i, &c)| {
                    if (148..156).contains(&i) {
                        32
                    } else {
                        c as u32
                    }
                })
                .sum();
            let field = String::from_utf8_lossy(&h[148..156]);
            let digits = field.trim_matches(|c: char| c == '\0' || c == ' ');
            h.iter().any(|&c| c != 0) && u32::from_str_radix(digits, 8).ok() == Some(sum)
        })
        .collect()
}

fn fix_checksum(h: &mut [u8]) {
    h[148..156].fill(b' ');
    let sum: u32 = h[..512].iter().map(|&c| c as u32).sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
}

fn mutate_tar(tar: &mut Vec<u8>, m: &TarMutation) {
    if tar.is_empty() {
        return;
    }
    match m {
        TarMutation::Field {
            header,
            offset,
            value,
            fix_checksum: fix,
        } => {
            let hs = tar_headers(tar);
            if hs.is_empty() {
                return;
            }
            let o = hs[header.index(hs.len())];
            let end = (o + offset + value.len()).min(o + 512);
            tar[o + offset..end].copy_from_slice(&value[..end - o - offset]);
            if *fix {
                fix_checksum(&mut tar[o..o + 512]);
            }
        }
        TarMutation::Byte(i, b) => {
            let i = i.index(tar.len());
            tar[i] = *b;
        }
        TarMutation::Truncate(i) => tar.truncate(i.index(tar.len())),
    }
}

fn xz(tar: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = lzma_rust2::XzWriter::new(&mut out, lzma_rust2::XzOptions::with_preset(0)).unwrap();
    w.write_all(tar).unwrap();
    w.finish().unwrap();
    out
}

fn tar_case() -> impl Strategy<Value = Vec<Item>> {
    (
        any::<bool>(),
        prop::collection::vec(any::<bool>(), 40),
        sometimes(prop::collection::vec(
            (any::<prop::sample::Index>(), tar_item()),
            1..6,
        )),
    )
        .prop_map(|(base, keep, extra)| {
            let mut items: Vec<Item> = if base {
                linux_spec()
                    .items()
                    .into_iter()
                    .enumerate()
                    .filter(|(i, it)| {
                        it.name().ends_with("cudnn_version.h") || keep[i % keep.len()] || i % 6 != 0
                    })
                    .map(|(_, it)| it)
                    .collect()
            } else {
                Vec::new()
            };
            for (at, item) in extra {
                let i = at.index(items.len() + 1);
                items.insert(i, item);
            }
            items
        })
}

/// Absolute link targets name the sandbox.
fn rooted_items(items: &[Item], root: &Path) -> Vec<Item> {
    items
        .iter()
        .map(|it| match it {
            Item::Symlink(n, t) if t.contains("{ABS}") => {
                let t = absolutize(t, root);
                if t.len() <= 100 {
                    Item::Symlink(n.clone(), t)
                } else {
                    it.clone()
                }
            }
            _ => it.clone(),
        })
        .collect()
}

proptest! {
    #![proptest_config(config(16))]

    /// Structured hostile tarballs: long names, PAX records, links, devices.
    #[test]
    fn tar_structured(items in tar_case()) {
        let sb = Sandbox::new();
        let path = sb.root.join(linux_spec().file_name());
        std::fs::write(&path, xz(&tar_bytes(&rooted_items(&items, &sb.root)))).unwrap();
        check_and_install(&sb, &path)?;
    }

    /// Mutations of NVIDIA's layout: tar header fields (checksum fixed so the reader
    /// believes them), bytes, truncation; then the xz stream itself cut or flipped.
    #[test]
    fn tar_mutated(
        mutations in prop::collection::vec(tar_mutation(), 1..4),
        xz_cut in prop::option::weighted(0.1, any::<prop::sample::Index>()),
        xz_flip in prop::option::weighted(0.1, (any::<prop::sample::Index>(), any::<u8>())),
    ) {
        let sb = Sandbox::new();
        let mut tar = tar_bytes(&linux_spec().items());
        for m in &mutations {
            mutate_tar(&mut tar, m);
        }
        let mut bytes = xz(&tar);
        if let Some(cut) = xz_cut {
            bytes.truncate(cut.index(bytes.len()).max(6));
        }
        if let Some((i, b)) = xz_flip {
            let i = i.index(bytes.len());
            if i >= 6 {
                bytes[i] ^= b | 1;
            }
        }
        let path = sb.root.join(linux_spec().file_name());
        std::fs::write(&path, &bytes).unwrap();
        check_and_install(&sb, &path)?;
    }
}

// ---------------------------------------------------------------------------------------
// 3. The simple-index parser.

/// A file name from a package index, hostile or real.
fn index_file_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => hostile_path(),
        2 => Just("nvidia_cuda_nvcc-13.5.37-py3-none-win_amd64.whl".to_string()),
        1 => prop::sample::select(vec![
            "../../evil-1.0-py3-none-any.whl",
            "..\\evil-1.0-py3-none-any.whl",
            "C:evil-1.0-py3-none-any.whl",
            "/tmp/evil-1.0-py3-none-any.whl",
            "a/b-1.0-py3-none-any.whl",
            "nul-1.0-py3-none-any.whl",
            "CON.whl",
            "x-1.0-py3-none-any.whl.",
            "..",
            "",
        ]).prop_map(str::to_string),
        1 => ".{0,40}",
    ]
}

fn index_url() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("https://files.example/p/nvidia_cuda_nvcc-13.5.37-py3-none-win_amd64.whl".to_string()),
        Just("../../packages/ab/x-1.0-py3-none-any.whl".to_string()),
        Just("../../packages/ab/..%2F..%2Fevil-1.0-py3-none-any.whl".to_string()),
        Just("../../packages/ab/evil%5C..%5Cx.whl".to_string()),
        Just("../../packages/ab/%2e%2e".to_string()),
        Just("https://other.example/".to_string()),
        Just("file:///etc/passwd".to_string()),
        Just("javascript:alert(1)".to_string()),
        Just("//evil.example/x.whl".to_string()),
        hostile_path(),
        "[a-zA-Z0-9:/%.#?=_\\-]{0,40}",
    ]
}

fn json_page() -> impl Strategy<Value = String> {
    let file = (
        index_file_name(),
        index_url(),
        prop::option::of("[0-9a-fA-F]{0,64}"),
        prop::option::of(any::<u64>()),
        prop_oneof![
            Just(serde_json::json!(false)),
            Just(serde_json::json!(true)),
            Just(serde_json::json!("broken")),
            Just(serde_json::Value::Null),
            Just(serde_json::json!(7)),
        ],
    )
        .prop_map(|(filename, url, sha, size, yanked)| {
            let mut f = serde_json::json!({"filename": filename, "url": url, "yanked": yanked});
            if let Some(h) = sha {
                f["hashes"] = serde_json::json!({"sha256": h});
            }
            if let Some(s) = size {
                f["size"] = serde_json::json!(s);
            }
            f
        });
    prop::collection::vec(file, 0..5).prop_map(|files| {
        serde_json::json!({"meta": {"api-version": "1.1"}, "name": "x", "files": files}).to_string()
    })
}

fn html_page() -> impl Strategy<Value = String> {
    let anchor = (
        index_url(),
        prop::option::of("[0-9a-fA-F]{0,64}"),
        index_file_name(),
        any::<bool>(),
        prop::sample::select(vec!["\"", "'", ""]),
    )
        .prop_map(|(url, sha, text, yanked, q)| {
            let frag = sha.map(|h| format!("#sha256={h}")).unwrap_or_default();
            let y = if yanked { " data-yanked=\"\"" } else { "" };
            let text = text
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;");
            format!("<a{y} href={q}{url}{frag}{q}>{text}</a><br/>\n")
        });
    (prop::collection::vec(anchor, 0..5), any::<bool>()).prop_map(|(anchors, doctype)| {
        let head = if doctype {
            "<!DOCTYPE html><html><body>\n"
        } else {
            ""
        };
        format!("{head}{}</body></html>", anchors.concat())
    })
}

/// Parses `text` as a page from a mirror: no panic, and every file name it gives is one
/// safe component (a download lands at `downloads/<file name>`).
fn check_index(content_type: &str, text: &str) -> Result<(), TestCaseError> {
    let base = "https://mirror.example/pypi/simple/nvidia-cuda-nvcc/";
    if let Ok(files) = cuda_setup_core::wheels::index::parse_page(base, content_type, text) {
        for f in files {
            prop_assert!(
                safe_path::file_name(&f.filename).is_ok(),
                "the index gave the unsafe file name {:?} (url {:?})",
                f.filename,
                f.url
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn index_arbitrary_text(
        json in any::<bool>(),
        text in prop_oneof![".{0,200}", "(<a href=\"[^\"]{0,30}\">[^<]{0,30}</a>|<html>|\\{|\\}|\"files\"|:|\\[|\\]|,| ){0,20}"],
    ) {
        let ct = if json { "application/vnd.pypi.simple.v1+json" } else { "text/html" };
        check_index(ct, &text)?;
    }

    #[test]
    fn index_structured(
        labelled in any::<bool>(),
        page in prop_oneof![json_page(), html_page()],
    ) {
        let ct = if labelled && page.starts_with('{') {
            "application/vnd.pypi.simple.v1+json"
        } else {
            "text/html"
        };
        check_index(ct, &page)?;
    }
}

// ---------------------------------------------------------------------------------------
// 4. State files.

/// A JSON number or a value of the wrong type.
fn hostile_number() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![
        4 => (0u64..100_000).prop_map(|n| serde_json::json!(n)),
        1 => Just(serde_json::json!(u64::MAX)),
        1 => Just(serde_json::json!(-1)),
        1 => Just(serde_json::json!(1.5e300)),
        1 => Just(serde_json::json!("12")),
        1 => Just(serde_json::Value::Null),
    ]
}

fn manifest_file(root: PathBuf) -> impl Strategy<Value = serde_json::Value> {
    (
        hostile_path(),
        "[0-9a-f]{0,64}",
        hostile_number(),
        any::<bool>(),
        prop::option::weighted(0.3, hostile_path()),
    )
        .prop_map(move |(path, sha, size, replaced, link)| {
            let mut f = serde_json::json!({
                "path": absolutize(&path, &root),
                "sha256": sha,
                "size": size,
                "replaced": replaced,
            });
            if let Some(l) = link {
                f["link"] = serde_json::json!(absolutize(&l, &root));
            }
            f
        })
}

fn manifest(root: PathBuf) -> impl Strategy<Value = serde_json::Value> {
    (
        prop_oneof![Just(serde_json::json!(1)), hostile_number()],
        prop::sample::select(vec!["9.10.2", "9", "", "x.y", "99999999999999999999.1"]),
        prop::option::of(hostile_number()),
        prop::option::weighted(0.3, hostile_path()),
        prop::collection::vec(manifest_file(root.clone()), 0..6),
    )
        .prop_map(move |(format, version, cuda, archive_path, files)| {
            let mut m = serde_json::json!({
                "format": format,
                "cudnn_version": version,
                "cuda_major": cuda,
                "toolkit_version": "12.4.1",
                "archive": "cudnn.zip",
                "files": files,
            });
            if let Some(a) = archive_path {
                m["archive_path"] = serde_json::json!(absolutize(&a, &root));
            }
            m
        })
}

fn journal(root: PathBuf) -> impl Strategy<Value = serde_json::Value> {
    (
        prop::sample::select(vec!["install", "uninstall", "other"]),
        prop::sample::select(vec!["applying", "committed", "done"]),
        prop::option::of(hostile_path()),
        manifest(root.clone()),
    )
        .prop_map(move |(op, state, staging, manifest)| {
            serde_json::json!({
                "op": op,
                "state": state,
                "staging": staging.map(|s| absolutize(&s, &root)),
                "manifest": manifest,
            })
        })
}

/// The JSON as written, or cut short (a torn write).
fn write_state(path: &Path, v: &serde_json::Value, cut: Option<prop::sample::Index>) {
    let mut b = serde_json::to_vec_pretty(v).unwrap();
    if let Some(c) = cut {
        b.truncate(c.index(b.len()));
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, b).unwrap();
}

/// Placeholder root in generated paths, replaced per case (the sandbox's is random).
const ABS: &str = "/ABS-ROOT";

fn rebase(v: &serde_json::Value, root: &Path) -> serde_json::Value {
    let s = v.to_string().replace(ABS, &root.display().to_string());
    serde_json::from_str(&s).unwrap()
}

proptest! {
    #![proptest_config(config(128))]

    /// A hostile cudnn-manifest.json and cuDNN journal: recover, verify and uninstall
    /// touch nothing outside the toolkit folder.
    #[test]
    fn cudnn_state_files(
        j in prop::option::of(journal(PathBuf::from(ABS))),
        m in prop::option::of(manifest(PathBuf::from(ABS))),
        cut in prop::option::weighted(0.1, any::<prop::sample::Index>()),
        backups in prop::collection::vec(hostile_path(), 0..3),
    ) {
        let sb = Sandbox::new();
        let meta = sb.tk.join(".cuda-setup");
        // Files where a hostile path's backup would be looked for.
        std::fs::create_dir_all(meta.join("cudnn-backup/bin")).unwrap();
        std::fs::write(meta.join("sentinel.txt"), b"planted backup").unwrap();
        std::fs::write(meta.join("cudnn-backup/bin/nvcc"), b"planted backup nvcc").unwrap();
        std::fs::create_dir_all(meta.join("staging-1")).unwrap();
        for b in &backups {
            let p = meta.join("cudnn-backup").join(absolutize(b, &sb.root));
            if p.starts_with(&meta) && !p.components().any(|c| c.as_os_str() == "..") {
                if let Some(d) = p.parent() {
                    let _ = std::fs::create_dir_all(d);
                }
                let _ = std::fs::write(&p, b"planted backup");
            }
        }
        if let Some(j) = &j {
            write_state(&meta.join("cudnn-journal.json"), &rebase(j, &sb.root), cut);
        }
        if let Some(m) = &m {
            write_state(&meta.join("cudnn-manifest.json"), &rebase(m, &sb.root), None);
        }
        let before = sb.outside();
        let tk = sb.tk.clone();
        bounded("cudnn recover/verify/uninstall", move || {
            let _ = cudnn::verify(&tk);
            let _ = cudnn::recover(&tk);
            let _ = cudnn::uninstall(&tk);
        });
        assert_same(&before, &sb.outside(), "cuDNN recover/verify/uninstall")?;
    }
}

// .part.json: a download resumed from a hostile record.

const PART_SIZE: usize = 300 << 10; // two chunks of 256 KiB
const PART_PATH: &str = "/compute/cudnn/f.zip";

struct PartServer {
    server: support::server::Server,
    bytes: Arc<Vec<u8>>,
    sha256: String,
}

fn part_server() -> &'static PartServer {
    static S: OnceLock<PartServer> = OnceLock::new();
    S.get_or_init(|| {
        let bytes = Arc::new(support::server::pattern(PART_SIZE, 11));
        let sha256 = {
            use sha2::Digest;
            let d = sha2::Sha256::digest(&*bytes);
            d.iter().map(|b| format!("{b:02x}")).collect()
        };
        let server = support::server::Server::start();
        server.add(PART_PATH, support::server::Body::Bytes(bytes.clone()));
        PartServer {
            server,
            bytes,
            sha256,
        }
    })
}

fn part_state() -> impl Strategy<Value = serde_json::Value> {
    let n = |real: u64| {
        prop_oneof![
            3 => Just(real),
            1 => Just(0u64),
            1 => Just(1u64),
            1 => Just(u64::MAX),
            1 => Just(u64::MAX / 2 + 1),
            1 => 0u64..1_000_000,
        ]
    };
    (
        any::<bool>(),
        n(PART_SIZE as u64),
        n(256 << 10),
        prop::collection::vec(any::<bool>(), 0..8),
        any::<bool>(),
    )
        .prop_map(|(right_key, size, chunk, done, extra)| {
            let key = if right_key {
                format!("sha256-{}", part_server().sha256)
            } else {
                "sha256-00".to_string()
            };
            let mut v = serde_json::json!({"key": key, "size": size, "chunk": chunk, "done": done});
            if extra {
                v["unknown"] = serde_json::json!([1, 2, 3]);
            }
            v
        })
}

// toolkit-wheels.json

/// A tiny component wheel with NVIDIA's layout.
fn tiny_wheel(dir: &Path) -> PathBuf {
    let p = dir.join("nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl");
    let items = [
        ("nvidia/__init__.py", &b""[..]),
        ("nvidia/cuda_runtime/include/cuda_runtime.h", b"/* rt */"),
        ("nvidia/cuda_runtime/lib/libcudart.so.12", b"ELF rt"),
        (
            "nvidia_cuda_runtime_cu12-12.4.127.dist-info/licenses/License.txt",
            b"licence",
        ),
        (
            "nvidia_cuda_runtime_cu12-12.4.127.dist-info/METADATA",
            b"Name: x",
        ),
    ];
    let files: Vec<(String, Vec<u8>)> = items
        .iter()
        .map(|(n, b)| (n.to_string(), b.to_vec()))
        .collect();
    support::cudnn_zip::write_zip(&p, &files, false);
    p
}

fn install_journal(plan_json: String) -> impl Strategy<Value = serde_json::Value> {
    (
        prop_oneof![
            3 => Just(plan_json),
            1 => Just("{}".to_string()),
            1 => Just(String::new()),
            1 => ".{0,20}",
        ],
        prop::collection::vec(hostile_number(), 0..6),
    )
        .prop_map(|(plan, done)| serde_json::json!({"plan": plan, "done": done}))
}

/// A plan of steps that need neither network nor installer: recover and configure.
fn local_plan(root: &Path) -> cuda_setup_core::plan::Plan {
    use cuda_setup_core::steps::Step;
    let tk = root.join("cuda-12.4");
    let version: cuda_setup_core::version::Version = "12.4.1".parse().unwrap();
    cuda_setup_core::plan::Plan {
        format: 1,
        goal: cuda_setup_core::recommend::Goal::Developer,
        os: cuda_setup_core::compat::Os::Windows,
        root: Some(root.to_path_buf()),
        toolkit: Some(version.clone()),
        cudnn: None,
        torch_command: None,
        notes: vec![],
        steps: vec![
            Step::RecoverCudnn {
                cuda_dir: tk.clone(),
            },
            Step::ConfigureEnv {
                cuda_dir: tk,
                version,
            },
        ],
    }
}

proptest! {
    #![proptest_config(config(24))]

    /// A download resumed from a hostile `.part.json`: no panic, no hang, and either the
    /// right bytes at the destination or an error; nothing beside the download changed.
    #[test]
    fn part_json_resume(
        state in part_state(),
        part_len in prop_oneof![3 => Just(PART_SIZE), 1 => 0usize..PART_SIZE + 10],
        cut in prop::option::weighted(0.1, any::<prop::sample::Index>()),
    ) {
        use cuda_setup_core::download::{self, Cancel, Expected, Options, Request};
        let ps = part_server();
        let sb = Sandbox::new();
        let dl = sb.root.join("dl");
        std::fs::create_dir_all(&dl).unwrap();
        let dest = dl.join("f.zip");
        std::fs::write(dl.join("f.zip.part"), support::server::pattern(part_len, 3)).unwrap();
        write_state(&dl.join("f.zip.part.json"), &state, cut);
        let req = Request {
            url: ps.server.url(PART_PATH),
            mirrors: vec![],
            expected: Expected {
                sha256: Some(ps.sha256.clone()),
                md5: None,
                size: Some(PART_SIZE as u64),
            },
            dest: dest.clone(),
            connections: 2,
            cache_dir: None,
            bundle_dirs: vec![],
            allow_http: true,
        };
        let before = snapshot(&sb.root, &[&dl]);
        let opts = Options {
            retries: 2,
            backoff: Duration::from_millis(1),
            stall_timeout: Duration::from_secs(2),
            connect_timeout: Duration::from_secs(2),
            verify: true,
            ..Options::default()
        };
        let r = bounded("download", move || download::download(&req, &opts, &(), &Cancel::default()));
        if r.is_ok() {
            prop_assert!(std::fs::read(&dest).unwrap() == *ps.bytes, "resumed download has wrong bytes");
        }
        assert_same(&before, &snapshot(&sb.root, &[&dl]), "download")?;
    }

    /// A hostile toolkit-wheels.json in the destination: assemble builds or skips, and
    /// nothing beside the toolkit changed.
    #[test]
    fn toolkit_wheels_record(
        version in prop::sample::select(vec!["12.4.1", "12.4", "", "x", "13.0.0"]),
        wheels in prop::collection::vec(prop_oneof![
            Just("nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl".to_string()),
            hostile_path(),
        ], 0..3),
        files in hostile_number(),
        cut in prop::option::weighted(0.1, any::<prop::sample::Index>()),
    ) {
        use cuda_setup_core::wheels::{AssembleSpec, assemble};
        let sb = Sandbox::new();
        let wheel_dir = sb.root.join("wheels");
        std::fs::create_dir_all(&wheel_dir).unwrap();
        let wheel = tiny_wheel(&wheel_dir);
        let record = serde_json::json!({"version": version, "wheels": wheels, "files": files});
        write_state(&sb.tk.join(".cuda-setup/toolkit-wheels.json"), &record, cut);
        let spec = AssembleSpec {
            version: "12.4.1".parse().unwrap(),
            wheels: vec![wheel],
            dir: sb.tk.clone(),
        };
        let before = sb.outside();
        let _ = bounded("assemble", move || {
            assemble(&spec, cuda_setup_core::compat::Os::Linux, &|_, _| {}, &|| false, &|_| Ok(()))
        });
        assert_same(&before, &sb.outside(), "assemble")?;
    }

    /// A hostile install journal: the executor resumes or starts afresh, never panics,
    /// and writes nothing outside the target's root.
    #[test]
    fn install_journal_resume(j in install_journal(local_plan(Path::new(ABS)).pipe_json())) {
        use cuda_setup_core::download::Cancel;
        use cuda_setup_core::target::Target;
        let tmp = scratch();
        let outer = tmp.path();
        let root = outer.join("root");
        std::fs::create_dir_all(&root).unwrap();
        linux_toolkit(&root, "12.4.1");
        std::fs::write(outer.join("sentinel.txt"), b"sentinel").unwrap();
        let target = Target::rooted(cuda_setup_core::compat::Os::Windows, &root);
        let plan = local_plan(&root);
        write_state(
            &target.state_dir().join("install-journal.json"),
            &rebase(&j, &root),
            None,
        );
        let before = snapshot(outer, &[&root]);
        let steps = plan.steps.len();
        let report = bounded("run_blocking", move || {
            let _ = cuda_setup_core::run::interrupted_plan(&target);
            cuda_setup_core::run::run_blocking(&plan, &target, &Cancel::default(), &mut |_| {})
        });
        prop_assert_eq!(report.steps.len(), steps);
        assert_same(&before, &snapshot(outer, &[&root]), "the executor")?;
    }
}

trait PipeJson {
    fn pipe_json(&self) -> String;
}

impl PipeJson for cuda_setup_core::plan::Plan {
    /// The plan's JSON as the executor keys its journal.
    fn pipe_json(&self) -> String {
        serde_json::to_string(self).unwrap()
    }
}

// ---------------------------------------------------------------------------------------
// 5. Places (#30): links, FIFOs, hard links and device links planted in and around the
//    toolkit before cuDNN is installed, uninstalled and verified. Nothing outside the
//    toolkit may change, and nothing may block.

#[cfg(unix)]
mod places {
    use super::*;

    /// Where a plant goes, relative to the toolkit: the folders cuDNN writes into, the files
    /// it replaces, and our own records.
    const PLACES: &[&str] = &[
        "include",
        "bin",
        "lib",
        "lib/x64",
        "lib64",
        "include/cudnn.h",
        "include/cudnn_version.h",
        "bin/cudnn64_9.dll",
        "lib/x64/cudnn.lib",
        "version.json",
        ".cuda-setup",
        ".cuda-setup/cudnn-manifest.json",
        ".cuda-setup/cudnn-journal.json",
        ".cuda-setup/lock",
        ".cuda-setup/cudnn-backup",
    ];

    /// What is planted there.
    #[derive(Debug, Clone, Copy)]
    enum Plant {
        /// A symbolic link to a folder outside (`keep/`).
        LinkOutDir,
        /// A symbolic link to a file outside (`sentinel.txt`).
        LinkOutFile,
        /// A symbolic link to `/dev/zero`.
        LinkDevZero,
        /// A FIFO nobody writes.
        Fifo,
        /// A second name of a file outside (`keep/a.dll`).
        HardLinkOut,
        /// A dangling symbolic link.
        Dangling,
    }

    fn plant() -> impl Strategy<Value = (usize, Plant)> {
        (
            0..PLACES.len(),
            prop_oneof![
                Just(Plant::LinkOutDir),
                Just(Plant::LinkOutFile),
                Just(Plant::LinkDevZero),
                Just(Plant::Fifo),
                Just(Plant::HardLinkOut),
                Just(Plant::Dangling),
            ],
        )
    }

    /// Puts `what` at `tk/rel`, replacing what is there (a folder of the toolkit's is moved
    /// aside inside the toolkit, so the planted thing takes its name).
    fn put_plant(sb: &Sandbox, rel: &str, what: Plant) {
        use std::os::unix::fs::symlink;
        let at = sb.tk.join(rel);
        // Plant only inside the toolkit: never through a link planted before.
        if at
            .ancestors()
            .skip(1)
            .take_while(|a| *a != sb.tk)
            .any(|a| std::fs::symlink_metadata(a).is_ok_and(|m| !m.is_dir()))
        {
            return;
        }
        if let Some(p) = at.parent() {
            let _ = std::fs::create_dir_all(p);
        }
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {
                let _ =
                    std::fs::rename(&at, sb.tk.join(format!("{}.moved", rel.replace('/', "_"))));
            }
            Ok(_) => {
                let _ = std::fs::remove_file(&at);
            }
            Err(_) => {}
        }
        let _ = match what {
            Plant::LinkOutDir => symlink(sb.root.join("keep"), &at),
            Plant::LinkOutFile => symlink(sb.root.join("sentinel.txt"), &at),
            Plant::LinkDevZero => symlink("/dev/zero", &at),
            Plant::Dangling => symlink(sb.root.join("nowhere"), &at),
            Plant::HardLinkOut => std::fs::hard_link(sb.root.join("keep/a.dll"), &at),
            Plant::Fifo => {
                let c = std::ffi::CString::new(at.to_str().unwrap()).unwrap();
                // SAFETY: a NUL-terminated path.
                if unsafe { libc::mkfifo(c.as_ptr(), 0o644) } == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            }
        };
    }

    proptest! {
        #![proptest_config(config(48))]

        /// Random plants, then a valid cuDNN (NVIDIA's Windows zip or Linux tarball) installed,
        /// verified and uninstalled: each operation ends (a FIFO never blocks it), and nothing
        /// outside the toolkit changed — not through a link, not through a second name.
        #[test]
        fn planted_places_steer_nothing(
            plants in prop::collection::vec(plant(), 1..4),
            tarball in any::<bool>(),
            before_install in any::<bool>(),
        ) {
            let sb = Sandbox::new();
            let path = if tarball {
                let p = sb.root.join(linux_spec().file_name());
                linux_spec().write(&p);
                p
            } else {
                let p = sb.root.join("cudnn.zip");
                let items: Vec<ZipItem> = windows_files()
                    .iter()
                    .map(|(n, b)| ZipItem::File(n.clone(), b.clone(), true))
                    .collect();
                std::fs::write(&p, zip_bytes(&items, &sb.root)).unwrap();
                p
            };
            if !before_install {
                // Planted after a clean install: at our records, backups and the files we put.
                let (p, tk) = (path.clone(), sb.tk.clone());
                let _ = bounded("cudnn::install", move || cudnn::install(&p, &tk, &|_| {}));
            }
            let before = sb.outside();
            for (i, what) in &plants {
                put_plant(&sb, PLACES[*i], *what);
            }
            let (p, tk) = (path.clone(), sb.tk.clone());
            let _ = bounded("cudnn::install", move || cudnn::install(&p, &tk, &|_| {}));
            assert_same(&before, &sb.outside(), "cudnn::install")?;
            let tk = sb.tk.clone();
            let _ = bounded("cudnn::verify", move || cudnn::verify(&tk));
            assert_same(&before, &sb.outside(), "cudnn::verify")?;
            let tk = sb.tk.clone();
            let _ = bounded("cudnn::uninstall", move || cudnn::uninstall(&tk));
            assert_same(&before, &sb.outside(), "cudnn::uninstall")?;
        }
    }
}
