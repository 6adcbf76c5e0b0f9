//! The record of the last build check that passed (`STATE/build-check.json`): which
//! toolkit, and the stamps (size, modification time) of what the check used — nvcc and
//! its profile, the headers and libraries the program includes and links, the host
//! compiler. A run whose toolkit and compiler still have exactly those stamps skips the
//! compile and link: the same program against the same files would pass again. Any
//! difference, a missing or damaged record, or a check that did not pass: it is built.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::compat::Os;
use crate::platform::Host;
use crate::stamp::Stamp;
use crate::verify::nvcc::HostCompiler;
use crate::version::Version;

pub const FILE: &str = "build-check.json";

/// A record names a few dozen files; anything bigger is not one of ours.
const MAX_BYTES: usize = 64 << 10;

/// What the check was run for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key {
    pub toolkit: String,
    pub version: String,
    pub cudnn: bool,
}

#[derive(Debug, Serialize, Deserialize)]
struct Record {
    key: Key,
    /// The compiler file found (g++ or cl.exe on PATH, or vcvars64.bat).
    compiler: PathBuf,
    /// Found on PATH (else through vswhere).
    on_path: bool,
    files: BTreeMap<PathBuf, Stamp>,
}

/// The files the check used, with their stamps now; None if one cannot be read.
fn used(
    host: &Host,
    dir: &Path,
    version: &Version,
    cudnn: bool,
    compiler: &Path,
) -> Option<BTreeMap<PathBuf, Stamp>> {
    let mut paths = vec![
        dir.join("bin").join(host.exe("nvcc")),
        dir.join("bin").join("nvcc.profile"),
        compiler.to_path_buf(),
    ];
    for h in ["cuda.h", "cuda_runtime_api.h", "cublas_v2.h", "cudnn.h"] {
        let p = dir.join("include").join(h);
        if p.exists() {
            paths.push(p);
        }
    }
    for l in crate::devlayout::link_names(host.os, dir, version, cudnn) {
        paths.push(dir.join(&l.rel));
    }
    let mut files = BTreeMap::new();
    for p in paths {
        files.insert(p.clone(), crate::stamp::of(&p).ok()?);
        // A link (libcudart.so → libcudart.so.13, g++ → g++-13): its target too.
        if std::fs::symlink_metadata(&p).ok()?.file_type().is_symlink() {
            let t = std::fs::canonicalize(&p).ok()?;
            let s = crate::stamp::of(&t).ok()?;
            files.insert(t, s);
        }
    }
    Some(files)
}

fn compiler_of(c: &HostCompiler) -> (&Path, bool) {
    match c {
        HostCompiler::OnPath { path } => (path, true),
        HostCompiler::Vcvars { vcvars } => (vcvars, false),
    }
}

fn compiler_name(os: Os) -> &'static str {
    match os {
        Os::Linux => "g++",
        Os::Windows => "cl",
    }
}

/// Whether the record at `file` is for `key` and everything it names still has its stamp
/// (and PATH still finds the same compiler).
pub fn still_holds(file: &Path, key: &Key, host: &Host, dir: &Path, version: &Version) -> bool {
    // The record is input: read bounded and never through a link.
    let Ok(Some(bytes)) = crate::state_file::read(file) else {
        return false;
    };
    if bytes.len() > MAX_BYTES {
        return false;
    }
    let Ok(r) = serde_json::from_slice::<Record>(&bytes) else {
        return false;
    };
    if r.key != *key {
        return false;
    }
    // The compiler nvcc would use now is the one recorded.
    let found = host.which(compiler_name(host.os));
    let same_compiler = if r.on_path {
        found.as_deref() == Some(r.compiler.as_path())
    } else {
        found.is_none()
    };
    same_compiler && used(host, dir, version, key.cudnn, &r.compiler).is_some_and(|f| f == r.files)
}

/// Records a check that passed (best effort: without it the next run builds again).
pub fn save(
    file: &Path,
    key: Key,
    host: &Host,
    dir: &Path,
    version: &Version,
    compiler: &HostCompiler,
) {
    let (path, on_path) = compiler_of(compiler);
    let Some(files) = used(host, dir, version, key.cudnn, path) else {
        return forget(file);
    };
    let r = Record {
        key,
        compiler: path.to_path_buf(),
        on_path,
        files,
    };
    if let Some(d) = file.parent() {
        let _ = std::fs::create_dir_all(d);
    }
    let bytes = serde_json::to_vec_pretty(&r).expect("plain");
    if crate::state_file::write_unsynced(file, &bytes).is_err() {
        forget(file);
    }
}

/// Drops the record: the next run builds.
pub fn forget(file: &Path) {
    let _ = std::fs::remove_file(file);
}
