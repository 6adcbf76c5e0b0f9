//! The developer link names NVIDIA's cuDNN wheel ships without: Linux `libcudnn.so →
//! libcudnn.so.9` (and each sub-library's), Windows `cudnn.lib` (and each
//! sub-library's), made from the DLLs' export tables. NVIDIA's tarball already has its
//! links and its zip its `.lib` files: only the wheel gets them, and never one the
//! archive has. They are staged beside the archive's files, so they are in the manifest
//! and the transaction: rollback and `cudnn uninstall` remove them, `verify` checks them.

use std::collections::HashSet;
use std::path::Path;

use super::CudnnError;
use super::archive::{Entry, Kind, Plan, dest_rel, fold};
use super::extract::Staged;
use crate::devlayout::{DevError, implib, links};

/// Whether `plan` is NVIDIA's `nvidia-cudnn-cuNN` wheel (the only layout without them).
pub(super) fn wanted(plan: &Plan) -> bool {
    plan.top == "nvidia/cudnn"
}

/// Stages, under `staging`, the link names and import libraries `staged` (a wheel's
/// files) lacks; returns them as staged entries to install with the rest. A DLL whose
/// export table cannot be read gets no import library (the build check names the missing
/// `.lib`); it is not a reason to refuse cuDNN.
pub(super) fn stage(
    plan: &Plan,
    staging: &Path,
    staged: &[Staged],
) -> Result<Vec<Staged>, CudnnError> {
    if !wanted(plan) {
        return Ok(Vec::new());
    }
    // What the archive already puts there, compared as Windows would.
    let mut taken: HashSet<String> = staged
        .iter()
        .map(|s| fold(&dest_rel(&s.entry, 13)))
        .collect();
    let mut out = Vec::new();
    let made = |inner: String, kind: Kind, size: u64, link: Option<String>| Entry {
        index: usize::MAX,
        name: inner.clone(),
        inner,
        kind,
        size,
        link,
    };

    // Linux: one link per unversioned name, to its shortest versioned file
    // (`libcudnn.so.9` before `libcudnn.so.9.27.0`), as NVIDIA's tarball has it.
    let links_to = links::link_targets(
        staged
            .iter()
            .filter(|s| s.entry.kind == Kind::SharedLib)
            .map(|s| file_name(&s.entry.inner)),
    );
    // (A Linux wheel's libraries are of no use on Windows: no links there.)
    for (link, target) in links_to.into_iter().filter(|_| cfg!(unix)) {
        let entry = made(format!("lib/{link}"), Kind::SharedLib, 0, Some(target));
        if !taken.insert(fold(&dest_rel(&entry, 13))) {
            continue;
        }
        let path = staging.join(&entry.inner);
        symlink(entry.link.as_deref().unwrap_or_default(), &path)?;
        out.push(Staged {
            entry,
            path,
            sha256: String::new(),
        });
    }

    // Windows: an import library per DLL, from its exports.
    for s in staged.iter().filter(|s| s.entry.kind == Kind::Dll) {
        let dll = file_name(&s.entry.inner);
        let Some(lib) = implib::lib_name_for_dll(dll) else {
            continue;
        };
        let probe = made(format!("lib/x64/{lib}"), Kind::ImportLib, 0, None);
        if taken.contains(&fold(&dest_rel(&probe, 13))) {
            continue;
        }
        let exports = match implib::read_exports(&s.path) {
            Ok(e) if !e.is_empty() => e,
            Ok(_) => continue,
            Err(e) => {
                tracing::warn!("no import library for {dll}: {e}");
                continue;
            }
        };
        let path = staging.join(&probe.inner);
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d).map_err(|e| CudnnError::io(d, e))?;
        }
        match implib::write_import_lib_with(&path, dll, &exports) {
            Ok(()) => {}
            Err(DevError::Io { path, source }) => return Err(CudnnError::Io { path, source }),
            Err(e @ DevError::Malformed { .. }) => {
                tracing::warn!("no import library for {dll}: {e}");
                continue;
            }
        }
        let (digest, size) =
            crate::download::hash_file(&path).map_err(|e| CudnnError::io(&path, e))?;
        taken.insert(fold(&dest_rel(&probe, 13)));
        out.push(Staged {
            entry: Entry { size, ..probe },
            path,
            sha256: digest.sha256,
        });
    }
    Ok(out)
}

fn file_name(inner: &str) -> &str {
    inner.rsplit('/').next().unwrap_or(inner)
}

#[cfg(unix)]
fn symlink(target: &str, path: &Path) -> Result<(), CudnnError> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(|e| CudnnError::io(d, e))?;
    }
    std::os::unix::fs::symlink(target, path).map_err(|e| CudnnError::io(path, e))
}

#[cfg(not(unix))]
fn symlink(_target: &str, path: &Path) -> Result<(), CudnnError> {
    // Unreachable: no links are made on Windows.
    Err(CudnnError::io(
        path,
        std::io::Error::from(std::io::ErrorKind::Unsupported),
    ))
}
