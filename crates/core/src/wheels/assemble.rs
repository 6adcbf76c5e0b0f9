//! Lays component wheels out as the tree NVIDIA's installer makes, so every tool that
//! knows a toolkit folder (nvcc.profile, CMake, PyTorch's cpp_extension, our detection)
//! finds what it expects:
//!
//! | wheel (`nvidia/cu13/…`, `nvidia/cuda_nvcc/…`) | Windows            | Linux            |
//! |-----------------------------------------------|--------------------|------------------|
//! | `bin/`                                        | `bin\`             | `bin/`           |
//! | `bin/x86_64/` (13.x DLLs)                     | `bin\x64\`         | —                |
//! | `lib/`                                        | `lib\` (`lib\x64`) | `lib64/` (+ `lib` → `lib64`) |
//! | `cccl/lib/cmake/`                             | `lib\cmake\`       | `lib64/cmake/`   |
//! | `include/`, `nvvm/`                           | as is              | as is            |
//!
//! Then it is completed for building programs as NVIDIA's installer lays a toolkit down
//! (`devlayout::complete`: link names, the driver stub, import libraries, pkg-config
//! files); the record says so (`dev_layout`), and a tree of ours built before that is
//! completed in place on the next run.
//!
//! The tree is built in a staging folder beside the destination and renamed into place,
//! so the destination is either the old tree or the complete new one, never half of each
//! (`swap.rs`); a folder we did not build is never replaced.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{WheelError, swap};
use crate::compat::Os;
use crate::devlayout::{Completion, DevError};
use crate::message::Message;
use crate::msg;
use crate::version::Version;

/// Our record of what a wheel-built tree holds (in the tree's `.cuda-setup/`).
pub const RECORD: &str = "toolkit-wheels.json";

/// The development layout a tree built now has ([`Record::dev_layout`]); a record with
/// less is completed ([`complete_in_place`]).
pub const DEV_LAYOUT: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssembleSpec {
    pub version: Version,
    pub wheels: Vec<PathBuf>,
    pub dir: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub version: Version,
    /// Wheel file names, sorted.
    pub wheels: Vec<String>,
    pub files: usize,
    /// [`DEV_LAYOUT`] once the tree was completed for building programs; 0 (absent) in
    /// records written before that, whose tree the next run completes.
    #[serde(default)]
    pub dev_layout: u32,
}

#[derive(Debug, Clone)]
pub struct Outcome {
    pub changed: bool,
    /// A complete toolkit we did not build was at the destination and is kept.
    pub kept_foreign: bool,
    pub files: usize,
    pub bytes: u64,
    /// What was added for building programs: to the new tree, or to a tree of ours built
    /// before the development layout (then `completed` is true and nothing was rebuilt).
    pub completion: Completion,
    pub completed: bool,
}

/// An I/O error while writing the tree; a full drive is told apart.
fn write_err(path: &Path, e: std::io::Error) -> WheelError {
    if crate::platform::is_disk_full(&e) {
        return WheelError::DiskFull {
            path: path.to_path_buf(),
            needed: None,
            free: crate::platform::free_space(path).ok(),
        };
    }
    io(path, e)
}

fn io(path: &Path, e: std::io::Error) -> WheelError {
    WheelError::io(path, crate::error::cause(e))
}

fn dev_err(e: DevError) -> WheelError {
    match e {
        DevError::Io { path, source } => WheelError::io(&path, source),
        DevError::Malformed { path, detail } => WheelError::io(&path, crate::error::text(detail)),
    }
}

/// Where a wheel entry goes in the toolkit tree; None for files that stay out
/// (`RECORD`, `WHEEL`, …). Licences go to `.cuda-setup/licenses/<wheel>/`.
pub fn dest_of(os: Os, wheel: &str, name: &str) -> Result<Option<String>, String> {
    if name.contains('\\') || name.starts_with('/') || name.contains(':') || name.contains('\0') {
        return Err(format!("entry \"{name}\" has an unsafe name"));
    }
    if name.split('/').any(|c| c == ".." || c == ".") {
        return Err(format!("entry \"{name}\" climbs out of the wheel"));
    }
    let mut parts = name.split('/');
    let first = parts.next().unwrap_or("");
    if first.ends_with(".dist-info") {
        let rest: Vec<&str> = parts.collect();
        return Ok(
            (rest.first() == Some(&"licenses") && rest.len() > 1).then(|| {
                format!(
                    "{}/licenses/{wheel}/{}",
                    crate::cudnn::txn::META,
                    rest[1..].join("/")
                )
            }),
        );
    }
    if first != "nvidia" {
        return Err(format!("entry \"{name}\" is outside nvidia/"));
    }
    let _package = parts
        .next()
        .ok_or_else(|| format!("entry \"{name}\" has no package folder"))?;
    let rest: Vec<&str> = parts.collect();
    if rest.is_empty() {
        return Ok(None);
    }
    let rel = rest.join("/");
    // Python package markers have no place in a toolkit.
    if rest.last().is_some_and(|f| *f == "__init__.py") || rest.contains(&"__pycache__") {
        return Ok(None);
    }
    let mapped = match os {
        Os::Windows => {
            if let Some(r) = rel.strip_prefix("bin/x86_64/") {
                format!("bin/x64/{r}")
            } else if let Some(r) = rel.strip_prefix("cccl/lib/") {
                format!("lib/{r}")
            } else {
                rel
            }
        }
        Os::Linux => {
            if let Some(r) = rel.strip_prefix("lib/") {
                format!("lib64/{r}")
            } else if let Some(r) = rel.strip_prefix("cccl/lib/") {
                format!("lib64/{r}")
            } else {
                rel
            }
        }
    };
    Ok(Some(mapped))
}

fn record_path(dir: &Path) -> PathBuf {
    dir.join(crate::cudnn::txn::META).join(RECORD)
}

/// Our record of the tree at `dir`: Ok(None) when there is none. A record is input like
/// any file on disk: it must be reached without leaving `dir` (no symbolic link on the
/// way), parse, and name only plain wheel file names; else the folder is not taken for
/// ours (so it is never replaced) and the error says why.
pub fn read_record(dir: &Path) -> Result<Option<Record>, WheelError> {
    let rel = Path::new(crate::cudnn::txn::META).join(RECORD);
    let bad = |detail: String| WheelError::BadRecord {
        path: record_path(dir).display().to_string(),
        detail,
    };
    let p = crate::safe_path::inside(dir, &rel).map_err(|e| bad(e.to_string()))?;
    // Bounded, never through a link; not set aside: the folder is not taken for ours, so
    // nothing in it is touched.
    let Some(b) = crate::state_file::read(&p).map_err(|r| bad(r.why))? else {
        return Ok(None);
    };
    let r: Record = serde_json::from_slice(&b).map_err(|e| bad(e.to_string()))?;
    for w in &r.wheels {
        crate::safe_path::file_name(w).map_err(|e| bad(e.to_string()))?;
    }
    Ok(Some(r))
}

/// Whether `dir` holds a tree we built (a valid record of ours).
pub fn is_ours(dir: &Path) -> bool {
    matches!(read_record(dir), Ok(Some(_)))
}

/// Who the destination belongs to, decided before anything is built.
enum Dest {
    /// Nothing there: the new tree goes in.
    Empty,
    /// Ours: replaced through [`swap::swap_in`] (the old tree comes back if the new fails).
    Ours(Record),
    /// Someone else's complete toolkit: kept as it is, nothing built.
    KeptForeign,
}

fn destination(
    dir: &Path,
    check: &dyn Fn(&Path) -> Result<(), WheelError>,
) -> Result<Dest, WheelError> {
    if std::fs::symlink_metadata(dir).is_err() {
        return Ok(Dest::Empty);
    }
    match read_record(dir)? {
        Some(r) => Ok(Dest::Ours(r)),
        None if check(dir).is_ok() => Ok(Dest::KeptForeign),
        None => Err(WheelError::NotOurs {
            dir: dir.display().to_string(),
        }),
    }
}

fn wheel_names(spec: &AssembleSpec) -> Vec<String> {
    let mut names: Vec<String> = spec
        .wheels
        .iter()
        .map(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    names.sort();
    names
}

/// Builds the tree. `progress(done, total)` in unpacked bytes; `cancelled()` is polled
/// between entries (a cancelled build leaves the destination untouched); `check(dir)`
/// says whether a tree at `dir` is a usable toolkit (nvcc, the runtime).
///
/// A folder at the destination that we did not build is never moved or deleted: a
/// complete toolkit there is kept (nothing is built), anything else is refused
/// ([`WheelError::NotOurs`]). A tree of ours is replaced only once the new one passes
/// `check` in its place; else the old one is put back. What a killed run left beside the
/// destination is restored or cleaned first ([`swap::recover`]).
pub fn assemble(
    spec: &AssembleSpec,
    os: Os,
    progress: &dyn Fn(u64, u64),
    cancelled: &dyn Fn() -> bool,
    check: &dyn Fn(&Path) -> Result<(), WheelError>,
) -> Result<Outcome, WheelError> {
    swap::recover(&spec.dir, &is_ours)?;
    let names = wheel_names(spec);
    match destination(&spec.dir, check)? {
        Dest::KeptForeign => {
            return Ok(Outcome {
                changed: false,
                kept_foreign: true,
                files: 0,
                bytes: 0,
                completion: Completion::default(),
                completed: false,
            });
        }
        Dest::Ours(r)
            if r.wheels == names
                && r.version == spec.version
                && spec.dir.join("version.json").is_file() =>
        {
            // Built before the development layout: completed where it is (what it
            // holds stays, cuDNN installed into it included), not rebuilt.
            let completed = r.dev_layout < DEV_LAYOUT;
            let completion = if completed {
                complete_in_place(os, &spec.dir)?
            } else {
                Completion::default()
            };
            check(&spec.dir)?;
            return Ok(Outcome {
                changed: completed,
                kept_foreign: false,
                files: r.files,
                bytes: 0,
                completion,
                completed,
            });
        }
        Dest::Ours(_) | Dest::Empty => {}
    }
    let parent = spec
        .dir
        .parent()
        .ok_or_else(|| WheelError::io(&spec.dir, crate::error::text("has no parent folder")))?;
    std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
    let staging = swap::staging_path(&spec.dir);
    let _ = std::fs::remove_dir_all(&staging);
    let result =
        build(spec, os, &staging, progress, cancelled).and_then(|(files, bytes, completion)| {
            let record = Record {
                version: spec.version.clone(),
                wheels: names.clone(),
                files,
                dev_layout: DEV_LAYOUT,
            };
            write_record(&staging, &record)?;
            swap::swap_in(&staging, &spec.dir, check)?;
            Ok(Outcome {
                changed: true,
                kept_foreign: false,
                files,
                bytes,
                completion,
                completed: false,
            })
        });
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result
}

/// Writes `record` into the tree at `dir`, beside and renamed into place: a record is
/// never seen half-written (a broken one would make the tree not ours).
fn write_record(dir: &Path, record: &Record) -> Result<(), WheelError> {
    let rp = record_path(dir);
    std::fs::create_dir_all(rp.parent().expect("has parent")).map_err(|e| io(&rp, e))?;
    let tmp = rp.with_extension("json.part");
    std::fs::write(
        &tmp,
        serde_json::to_vec_pretty(record).expect("serialisable"),
    )
    .map_err(|e| write_err(&tmp, e))?;
    std::fs::rename(&tmp, &rp).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(&rp, e)
    })
}

/// Completes a finished tree of ours at `dir` for building programs
/// ([`crate::devlayout::complete`]) and marks its record with [`DEV_LAYOUT`]. Idempotent;
/// a tree without a valid record of ours is refused, untouched.
pub fn complete_in_place(os: Os, dir: &Path) -> Result<Completion, WheelError> {
    let Some(mut record) = read_record(dir)? else {
        return Err(WheelError::NotOurs {
            dir: dir.display().to_string(),
        });
    };
    // cuDNN's files in the tree belong to its own transaction, which links them itself.
    let cudnn: Vec<String> = crate::cudnn::txn::read_manifest(dir)
        .ok()
        .flatten()
        .map(|m| m.files.into_iter().map(|f| f.path).collect())
        .unwrap_or_default();
    let completion = crate::devlayout::complete::complete_except(os, dir, &record.version, &cudnn)
        .map_err(dev_err)?;
    if record.dev_layout < DEV_LAYOUT {
        record.dev_layout = DEV_LAYOUT;
        write_record(dir, &record)?;
    }
    Ok(completion)
}

/// The words for what the development layout added, for the step's detail; None when
/// nothing was added (the plain "built" or "already built" words say all).
pub fn completion_message(
    o: &Outcome,
    version: &Version,
    wheels: usize,
    dir: &Path,
) -> Option<Message> {
    let c = &o.completion;
    let configs = c.files.len();
    if !c.import_libs.is_empty() || !c.unreadable.is_empty() {
        return Some(if c.unreadable.is_empty() {
            msg!(
                "step_assembled_dev_windows",
                version = version,
                wheels = wheels,
                dir = dir.display(),
                files = o.files,
                import_libs = c.import_libs.len()
            )
        } else {
            msg!(
                "step_assembled_dev_windows_unreadable",
                version = version,
                wheels = wheels,
                dir = dir.display(),
                files = o.files,
                import_libs = c.import_libs.len(),
                unreadable = c.unreadable.join(", ")
            )
        });
    }
    // The Linux words name links and the stub; a tree given neither (a Windows tree that
    // only got its nvcc.profile) has nothing worth a sentence.
    if c.links.is_empty() && c.stubs.is_empty() {
        return None;
    }
    let no_driver_stub = c
        .no_stub
        .iter()
        .any(|s| s == crate::devlayout::complete::DRIVER_STUB);
    // The same facts either way; the words differ by whether the stub could be made.
    let key = if no_driver_stub {
        "step_assembled_dev_linux_no_stub"
    } else {
        "step_assembled_dev_linux"
    };
    Some(
        Message::new(key)
            .with("version", version)
            .with("wheels", wheels)
            .with("dir", dir.display())
            .with("files", o.files)
            .with("links", c.links.len())
            .with("configs", configs),
    )
}

fn build(
    spec: &AssembleSpec,
    os: Os,
    out: &Path,
    progress: &dyn Fn(u64, u64),
    cancelled: &dyn Fn() -> bool,
) -> Result<(usize, u64, Completion), WheelError> {
    let mut zips = Vec::new();
    let mut total = 0u64;
    for w in &spec.wheels {
        let name = w
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let f = std::fs::File::open(w).map_err(|e| io(w, e))?;
        let mut z = zip::ZipArchive::new(f).map_err(|e| WheelError::Layout {
            wheel: name.clone(),
            detail: format!("not a readable wheel: {e}"),
        })?;
        for i in 0..z.len() {
            if let Ok(e) = z.by_index_raw(i) {
                total = total.saturating_add(e.size());
            }
        }
        zips.push((name, z));
    }
    if let Ok(free) = crate::platform::free_space(out.parent().unwrap_or(out))
        && free < total
    {
        return Err(WheelError::DiskFull {
            path: out.to_path_buf(),
            needed: Some(total),
            free: Some(free),
        });
    }
    let (mut files, mut done) = (0usize, 0u64);
    let mut buf = vec![0u8; 1 << 20];
    for (name, z) in &mut zips {
        let stem = name.trim_end_matches(".whl").to_string();
        for i in 0..z.len() {
            if cancelled() {
                return Err(WheelError::io(out, crate::error::text("cancelled")));
            }
            let mut e = z.by_index(i).map_err(|err| WheelError::Layout {
                wheel: name.clone(),
                detail: err.to_string(),
            })?;
            if e.is_dir() {
                continue;
            }
            let entry = String::from_utf8_lossy(e.name_raw()).into_owned();
            let layout = |detail: String| WheelError::Layout {
                wheel: name.clone(),
                detail,
            };
            if e.unix_mode().is_some_and(|m| m & 0o170000 == 0o120000) {
                return Err(layout(format!("entry \"{entry}\" is a symbolic link")));
            }
            let Some(rel) = dest_of(os, &stem, &entry).map_err(layout)? else {
                continue;
            };
            let dest = out.join(&rel);
            if let Some(d) = dest.parent() {
                std::fs::create_dir_all(d).map_err(|err| write_err(d, err))?;
            }
            let mut f = std::fs::File::create(&dest).map_err(|err| write_err(&dest, err))?;
            loop {
                let n = e.read(&mut buf).map_err(|err| WheelError::Layout {
                    wheel: name.clone(),
                    detail: format!("entry \"{entry}\" is damaged: {err}"),
                })?;
                if n == 0 {
                    break;
                }
                std::io::Write::write_all(&mut f, &buf[..n])
                    .map_err(|err| write_err(&dest, err))?;
                done += n as u64;
            }
            #[cfg(unix)]
            if let Some(mode) = e.unix_mode()
                && mode & 0o111 != 0
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o755))
                    .map_err(|err| io(&dest, err))?;
            }
            files += 1;
            progress(done, total);
        }
    }
    // nvcc.profile in the wheels links against $(TOP)/lib; NVIDIA's runfile tree has both.
    #[cfg(unix)]
    if os == Os::Linux && out.join("lib64").is_dir() && !out.join("lib").exists() {
        std::os::unix::fs::symlink("lib64", out.join("lib")).map_err(|e| io(out, e))?;
    }
    write_version_json(spec, out)?;
    // What NVIDIA's installer has for building programs and the wheels lack.
    let completion = crate::devlayout::complete(os, out, &spec.version).map_err(dev_err)?;
    Ok((files, done, completion))
}

/// NVIDIA's `version.json`: `cuda.version` is the release, one object per component.
fn write_version_json(spec: &AssembleSpec, out: &Path) -> Result<(), WheelError> {
    let mut v = serde_json::Map::new();
    v.insert(
        "cuda".into(),
        serde_json::json!({"name": "CUDA SDK", "version": spec.version.to_string()}),
    );
    for w in &spec.wheels {
        let name = w
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(parsed) = super::index::WheelName::parse(&name) {
            let key = parsed.dist.trim_start_matches("nvidia-").replace('-', "_");
            v.insert(
                key,
                serde_json::json!({"name": parsed.dist, "version": parsed.version.to_string(), "source": "wheel"}),
            );
        }
    }
    let p = out.join("version.json");
    std::fs::write(&p, serde_json::to_vec_pretty(&v).expect("serialisable")).map_err(|e| io(&p, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_full_drive_while_writing_the_tree_is_disk_full_not_permissions() {
        let full = std::io::Error::from_raw_os_error(libc::ENOSPC);
        let e = write_err(Path::new("/tmp/x"), full);
        assert!(matches!(e, WheelError::DiskFull { .. }), "{e:?}");
        let other = std::io::Error::from_raw_os_error(libc::EACCES);
        assert!(matches!(
            write_err(Path::new("/tmp/x"), other),
            WheelError::Io { .. }
        ));
    }

    #[test]
    fn layout_mapping() {
        let d = |os, n: &str| dest_of(os, "w", n).unwrap();
        assert_eq!(
            d(Os::Windows, "nvidia/cu13/bin/nvcc.exe").as_deref(),
            Some("bin/nvcc.exe")
        );
        assert_eq!(
            d(Os::Windows, "nvidia/cu13/bin/x86_64/cudart64_13.dll").as_deref(),
            Some("bin/x64/cudart64_13.dll")
        );
        assert_eq!(
            d(Os::Windows, "nvidia/cu13/lib/x64/cudart.lib").as_deref(),
            Some("lib/x64/cudart.lib")
        );
        assert_eq!(
            d(Os::Linux, "nvidia/cu13/lib/libcudart.so.13").as_deref(),
            Some("lib64/libcudart.so.13")
        );
        assert_eq!(
            d(Os::Linux, "nvidia/cu13/nvvm/bin/cicc").as_deref(),
            Some("nvvm/bin/cicc")
        );
        assert_eq!(
            d(Os::Linux, "nvidia/cu13/cccl/lib/cmake/cub/cub-config.cmake").as_deref(),
            Some("lib64/cmake/cub/cub-config.cmake")
        );
        assert_eq!(
            d(Os::Linux, "nvidia/cuda_nvcc/bin/ptxas").as_deref(),
            Some("bin/ptxas"),
            "12.x wheels: one folder per package"
        );
        assert_eq!(
            d(Os::Linux, "nvidia_cuda_nvcc-13.5.37.dist-info/RECORD"),
            None
        );
        assert_eq!(
            d(
                Os::Linux,
                "nvidia_cuda_nvcc-13.5.37.dist-info/licenses/License.txt"
            )
            .as_deref(),
            Some(".cuda-setup/licenses/w/License.txt")
        );
        assert_eq!(d(Os::Linux, "nvidia/__init__.py"), None);
        assert!(dest_of(Os::Linux, "w", "nvidia/cu13/../../etc/passwd").is_err());
        assert!(dest_of(Os::Linux, "w", "/etc/passwd").is_err());
        assert!(dest_of(Os::Linux, "w", "evil/bin/nvcc").is_err());
    }
}
