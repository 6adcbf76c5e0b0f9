//! The developer link names NVIDIA's cuDNN wheel ships without: Linux `libcudnn.so →
//! libcudnn.so.9` (and each sub-library's), Windows `cudnn.lib` (and each
//! sub-library's), made from the DLLs' export tables. NVIDIA's tarball already has its
//! links and its zip its `.lib` files: only the wheel gets them, and never one the
//! archive has. They are staged beside the archive's files, so they are in the manifest
//! and the transaction: rollback and `cudnn uninstall` remove them, `verify` checks them.

use std::collections::HashSet;

use super::CudnnError;
use super::archive::{Entry, Kind, Plan, dest_rel, fold};
use super::extract::Staged;
use crate::devlayout::{DevError, implib, links};
use crate::place;
use crate::safe_path;

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
    staging: &place::Dir,
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
    for (link, target) in links_to
        .into_iter()
        .filter(|(link, _)| cfg!(unix) && safe_path::file_name(link).is_ok())
    {
        let entry = made(format!("lib/{link}"), Kind::SharedLib, 0, Some(target));
        if !taken.insert(fold(&dest_rel(&entry, 13))) {
            continue;
        }
        symlink(
            entry.link.as_deref().unwrap_or_default(),
            staging,
            &entry.inner,
        )?;
        out.push(Staged {
            entry,
            sha256: String::new(),
        });
    }

    // Windows: an import library per DLL, from its exports.
    for s in staged.iter().filter(|s| s.entry.kind == Kind::Dll) {
        let dll = file_name(&s.entry.inner);
        // A name made from an entry's is judged as an entry's: `con64_9.dll` would
        // make `con.lib`, a device on Windows (made for no one, then).
        let Some(lib) = implib::lib_name_for_dll(dll).filter(|l| safe_path::file_name(l).is_ok())
        else {
            continue;
        };
        let probe = made(format!("lib/x64/{lib}"), Kind::ImportLib, 0, None);
        if taken.contains(&fold(&dest_rel(&probe, 13))) {
            continue;
        }
        let exports = match implib::read_exports(&staging.display(&s.entry.inner)) {
            Ok(e) if !e.is_empty() => e,
            Ok(_) => continue,
            Err(e) => {
                tracing::warn!("no import library for {dll}: {e}");
                continue;
            }
        };
        let path = staging.display(&probe.inner);
        let bytes = match implib::import_lib_bytes(&path, dll, &exports) {
            Ok(b) => b,
            Err(DevError::Io { path, source }) => return Err(CudnnError::Io { path, source }),
            Err(e @ DevError::Malformed { .. }) => {
                tracing::warn!("no import library for {dll}: {e}");
                continue;
            }
        };
        // Created new relative to the staging folder held open (#30).
        staging
            .create_new(&probe.inner)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes))
            .map_err(|e| CudnnError::io(&path, e))?;
        let mut h = crate::download::Hasher::new(false);
        h.update(&bytes);
        taken.insert(fold(&dest_rel(&probe, 13)));
        out.push(Staged {
            entry: Entry {
                size: bytes.len() as u64,
                ..probe
            },
            sha256: h.finish().sha256,
        });
    }
    Ok(out)
}

fn file_name(inner: &str) -> &str {
    inner.rsplit('/').next().unwrap_or(inner)
}

/// The link `inner` below staging, its folder opened without following (#30).
#[cfg(unix)]
fn symlink(target: &str, staging: &place::Dir, inner: &str) -> Result<(), CudnnError> {
    let shown = staging.display(inner);
    let (folder, name) = inner.rsplit_once('/').unwrap_or((".", inner));
    staging
        .sub(folder, true)
        .and_then(|d| d.handle().symlink(target, name))
        .map_err(|e| CudnnError::io(&shown, e))
}

#[cfg(not(unix))]
fn symlink(_target: &str, staging: &place::Dir, inner: &str) -> Result<(), CudnnError> {
    // Unreachable: no links are made on Windows.
    Err(CudnnError::io(
        &staging.display(inner),
        std::io::Error::from(std::io::ErrorKind::Unsupported),
    ))
}
