//! cuDNN into a CUDA toolkit folder: validate the archive as hostile input, extract to
//! staging, apply as a transaction with a manifest, verify and uninstall later.

pub mod archive;
mod devnames;
mod extract;
mod tarball;
pub mod txn;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use archive::Refusal;
pub use txn::Recovered;

use crate::error::{Cause, cause, text};
use crate::platform::Host;
use crate::version::Version;

/// Why a cuDNN install, verify or uninstall failed. Causes are kept as sources: render
/// one with [`crate::error::chain`].
#[derive(Debug, Clone, thiserror::Error)]
pub enum CudnnError {
    #[error("{archive}: refused: {refusal}")]
    Refused { archive: PathBuf, refusal: Refusal },
    #[error("{dir} is not a CUDA toolkit folder: {detail}")]
    NotAToolkit { dir: PathBuf, detail: String },
    /// The cause is said inside the sentence (where a reader looks for it).
    #[error("{file} is in use by another program ({source}); nothing was changed")]
    InUse {
        file: PathBuf,
        #[source]
        source: Cause,
    },
    /// `needed` 0: the drive filled up while writing (how much more is not known).
    #[error("not enough free space in {dir}: {}", if *.needed > 0 { format!("{needed} bytes needed, {free} free") } else { format!("the drive is full ({free} bytes free)") })]
    DiskFull {
        dir: PathBuf,
        needed: u64,
        free: u64,
    },
    #[error("{}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: Cause,
    },
    #[error("no cuDNN installed by cuda-setup in {dir}")]
    NotInstalled { dir: PathBuf },
    #[error(transparent)]
    Busy(crate::lock::Busy),
    #[error(
        "cuda-setup's own record {0}; nothing was deleted or restored on its strength, and cuda-setup no longer tracks the cuDNN install in this toolkit"
    )]
    BadState(#[source] crate::state_file::Rejected),
}

impl CudnnError {
    pub fn io(path: &Path, e: std::io::Error) -> Self {
        // A full drive is its own failure (kind `disk_full`), not "check your rights".
        if crate::platform::is_disk_full(&e) {
            return CudnnError::DiskFull {
                dir: path.to_path_buf(),
                needed: 0,
                free: crate::platform::free_space(path).unwrap_or(0),
            };
        }
        CudnnError::Io {
            path: path.to_path_buf(),
            source: cause(e),
        }
    }

    pub fn hint(&self) -> &'static str {
        match self {
            CudnnError::Refused {
                refusal: Refusal::CudaMismatch { .. },
                ..
            } => "download the archive named above from NVIDIA's cuDNN archive page",
            CudnnError::Refused {
                refusal: Refusal::LinuxArchive,
                ..
            } => "on Windows, download NVIDIA's Windows zip of the same cuDNN instead",
            CudnnError::Refused { .. } => {
                "download the archive again from NVIDIA (https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/) and do not repack it"
            }
            CudnnError::NotAToolkit { .. } => {
                "give the folder of an installed CUDA toolkit, e.g. C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4"
            }
            CudnnError::InUse { .. } => {
                "close the program using it (Python, Jupyter, an IDE running your training script), then run the same command again"
            }
            CudnnError::DiskFull { .. } => {
                "free some space on that drive, then run the same command again"
            }
            CudnnError::Io { .. } => {
                "check that you may write to the toolkit folder (run as administrator for Program Files), then run the same command again"
            }
            CudnnError::NotInstalled { .. } => {
                "install cuDNN with `cuda-setup cudnn install --archive ARCHIVE --cuda-dir DIR`"
            }
            CudnnError::Busy(_) => {
                "wait for it to finish, or close it, then run the same command again (or add --wait to wait for it)"
            }
            CudnnError::BadState(_) => {
                "install cuDNN again (`cuda-setup cudnn install --archive ARCHIVE --cuda-dir DIR`, or `cuda-setup repair --fix`) to have it tracked; files it had replaced are kept in .cuda-setup/cudnn-backup.rejected-*"
            }
        }
    }
}

/// Progress for the GUI.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Validated {
        version: Version,
        entries: usize,
        total_bytes: u64,
    },
    Extracted {
        entries: usize,
        total_entries: usize,
        bytes: u64,
        total_bytes: u64,
    },
    Applying,
    Recovered(Recovered),
}

/// What we installed: each file, its hash, and whether it replaced one (kept as backup).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    pub cudnn_version: Version,
    pub cuda_major: Option<u32>,
    pub toolkit_version: Option<Version>,
    pub archive: String,
    /// Where the archive was installed from (repair reinstalls from it while it exists).
    #[serde(default)]
    pub archive_path: Option<PathBuf>,
    pub files: Vec<ManifestFile>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestFile {
    /// Relative to the toolkit folder, with `/`.
    pub path: String,
    pub sha256: String,
    pub size: u64,
    pub replaced: bool,
    /// A symbolic link's target (Linux tarball; hash and size are empty then). Records
    /// written before links existed have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// Size and modification time as installed (taken from the staged file, which the
    /// rename into place keeps): the quick check trusts `sha256` while they match.
    /// Manifests written before stamps have none: their files are hashed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamp: Option<crate::stamp::Stamp>,
}

/// How hard [`verify_at`] looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// A file whose stamp matches the manifest's is taken as installed; others are hashed.
    Quick,
    /// Every file is hashed (`verify --deep`): finds a change made behind our back with
    /// the size and the modification time put back.
    Deep,
}

#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    pub path: String,
    /// `missing` or `altered`.
    pub problem: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    pub cudnn_version: Version,
    pub files: usize,
    pub problems: Vec<Problem>,
}

/// The toolkit folder's lock, held for a whole cuDNN command: two runs on one toolkit
/// must never interleave (a second run's recovery would take the first one's live
/// transaction for a killed one's). None: no such folder, or — unless `installing` — no
/// record of ours in it (nothing to recover, verify or undo; and no trace left there).
fn lock(dir: &Path, installing: bool) -> Result<Option<crate::lock::Lock>, CudnnError> {
    if !dir.is_dir() || !(installing || txn::meta(dir).is_dir()) {
        return Ok(None);
    }
    match crate::lock::acquire(dir, &txn::meta(dir).join(crate::lock::FILE)) {
        Ok(l) => Ok(Some(l)),
        Err(crate::lock::LockError::Busy(b)) => Err(CudnnError::Busy(b)),
        // The lock keeps its I/O error as text.
        Err(crate::lock::LockError::Io { path, detail }) => Err(CudnnError::Io {
            path,
            source: text(detail),
        }),
        Err(crate::lock::LockError::Cancelled) => Err(CudnnError::Io {
            path: dir.to_path_buf(),
            source: text("cancelled"),
        }),
    }
}

/// Finishes or undoes whatever a killed run left in `dir`.
pub fn recover(dir: &Path) -> Result<Option<Recovered>, CudnnError> {
    let _lock = lock(dir, false)?;
    txn::recover(dir)
}

/// Installs the cuDNN in `archive` into the toolkit at `dir`. A previous install by us
/// is uninstalled first (its own transaction), so backups always hold the toolkit's files.
pub fn install(
    archive: &Path,
    dir: &Path,
    report: &(dyn Fn(Event) + Sync),
) -> Result<Manifest, CudnnError> {
    // (Before the lock: a folder that is no toolkit gets no lock file either.)
    let toolkit = crate::detect::toolkit::version_of(&Host::real(), dir, Duration::from_secs(20))
        .filter(|_| dir.join("bin").is_dir())
        .ok_or_else(|| CudnnError::NotAToolkit {
            dir: dir.to_path_buf(),
            detail: "no version.json, version.txt or bin/nvcc".into(),
        })?;
    let _lock = lock(dir, true)?;
    if let Some(r) = txn::recover(dir)? {
        report(Event::Recovered(r));
    }
    let meta = txn::meta(dir);
    // (The lock lives in it: it existed unless the lock just made it.)
    let meta_existed = meta.exists() && !_lock.as_ref().is_some_and(|l| l.created_dir());
    let staging = meta.join(format!("staging-{}", std::process::id()));
    // NVIDIA's Linux tarball is checked and extracted in one pass of its stream, into
    // staging only (a tar has no index: a check-only pass would decode it twice); a zip
    // is checked first, then extracted. Either way the toolkit is untouched until the
    // transaction, and a refusal leaves no trace.
    let (plan, staged) = if tarball::is_xz(archive) {
        std::fs::create_dir_all(&meta).map_err(|e| CudnnError::io(&meta, e))?;
        let _ = std::fs::remove_dir_all(&staging);
        match tarball::open_and_extract(archive, &archive::Limits::default(), &staging, report) {
            Ok((p, s)) => (p, Some(s)),
            Err(e) => {
                if !meta_existed {
                    let _ = std::fs::remove_dir_all(&meta);
                }
                return Err(e);
            }
        }
    } else {
        let plan = archive::open(archive).map_err(|refusal| CudnnError::Refused {
            archive: archive.to_path_buf(),
            refusal,
        })?;
        (plan, None)
    };
    let give_up = |e: CudnnError| {
        let _ = std::fs::remove_dir_all(&staging);
        if !meta_existed {
            let _ = std::fs::remove_dir_all(&meta);
        }
        e
    };
    if let Some(e) = mismatch(archive, dir, &plan, &toolkit) {
        return Err(give_up(e));
    }
    report(Event::Validated {
        version: plan.version.clone(),
        entries: plan.entries.len(),
        total_bytes: plan.total_bytes,
    });
    // (A tarball is already in staging: a full drive stopped it there.)
    if staged.is_none()
        && let Ok(free) = crate::platform::free_space(dir)
        && free < plan.total_bytes * 2
    {
        return Err(CudnnError::DiskFull {
            dir: dir.to_path_buf(),
            needed: plan.total_bytes * 2,
            free,
        });
    }
    // Extracted (CRCs checked) before the previous cuDNN is uninstalled: an entry found
    // damaged half-way leaves that install as it was, as a damaged tarball does.
    let staged = match staged {
        Some(s) => s,
        None => {
            std::fs::create_dir_all(&meta).map_err(|e| CudnnError::io(&meta, e))?;
            let _ = std::fs::remove_dir_all(&staging);
            extract::extract(&plan, &staging, report).map_err(give_up)?
        }
    };
    // The wheel's developer names (`libcudnn.so`, `cudnn.lib`), staged with its files.
    let mut staged = staged;
    staged.extend(devnames::stage(&plan, &staging, &staged).map_err(give_up)?);
    commit(
        archive, dir, toolkit, &plan, &staging, staged, &give_up, report,
    )
}

/// A refusal of a cuDNN built for another CUDA major than the toolkit's.
fn mismatch(
    archive: &Path,
    dir: &Path,
    plan: &archive::Plan,
    toolkit: &Version,
) -> Option<CudnnError> {
    let major = plan.cuda_major?;
    if major == toolkit.major() {
        return None;
    }
    let v = plan.full_version.as_ref().unwrap_or(&plan.version);
    let suggestion = if plan.top == "nvidia/cudnn" {
        format!("the wheel nvidia-cudnn-cu{}=={v}", toolkit.major())
    } else if plan.format == archive::Format::TarXz {
        format!(
            "cudnn-linux-x86_64-{v}_cuda{}-archive.tar.xz",
            toolkit.major()
        )
    } else {
        format!(
            "cudnn-windows-x86_64-{v}_cuda{}-archive.zip",
            toolkit.major()
        )
    };
    Some(CudnnError::Refused {
        archive: archive.to_path_buf(),
        refusal: Refusal::CudaMismatch {
            archive: major,
            toolkit: toolkit.to_string(),
            toolkit_dir: dir.to_path_buf(),
            suggestion,
        },
    })
}

/// The part of an install after every file is in `staging` (`.cuda-setup/staging-PID`,
/// developer names included): the previous cuDNN of ours goes (its own transaction),
/// then the new files go in as one transaction. The same for both ways in (plain
/// [`install`], [`install_prestaged`]), so both leave the same files and manifest.
/// `give_up` cleans staging for a failure before the transaction (which cleans its own).
#[allow(clippy::too_many_arguments)]
fn commit(
    archive: &Path,
    dir: &Path,
    toolkit: Version,
    plan: &archive::Plan,
    staging: &Path,
    staged: Vec<extract::Staged>,
    give_up: &dyn Fn(CudnnError) -> CudnnError,
    report: &(dyn Fn(Event) + Sync),
) -> Result<Manifest, CudnnError> {
    if let Some(old) = txn::load_manifest(dir).map_err(give_up)? {
        txn::uninstall(dir, old).map_err(give_up)?;
    }
    let files: Vec<ManifestFile> = staged
        .iter()
        .map(|s| {
            let path = archive::dest_rel(&s.entry, toolkit.major());
            ManifestFile {
                replaced: txn::present(&dir.join(&path)),
                path,
                sha256: s.sha256.clone(),
                size: s.entry.size,
                link: s.entry.link.clone(),
                stamp: None,
            }
        })
        .collect();
    let moves: Vec<(String, PathBuf)> = files
        .iter()
        .zip(&staged)
        .map(|(f, s)| (f.path.clone(), s.path.clone()))
        .collect();
    let manifest = Manifest {
        format: 1,
        cudnn_version: plan.version.clone(),
        cuda_major: plan.cuda_major,
        toolkit_version: Some(toolkit),
        archive: archive
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        archive_path: Some(crate::platform::canonical(archive)),
        files,
    };
    report(Event::Applying);
    txn::apply_install(dir, staging, &moves, manifest)
}

/// cuDNN checked and extracted ahead of its install, beside the toolkit folder it is
/// for ([`prestage_path`]: the same volume, so it moves in by renames): the pipelined
/// wheels install stages it while the toolkit is still being assembled, then
/// [`install_prestaged`] applies it once the toolkit is in place. Dropped unused (a
/// failure, the assembly failing), its folder goes; a kill leaves it, and
/// [`clean_prestaged`] deletes it before the next run stages again.
pub struct Prestaged {
    archive: PathBuf,
    plan: archive::Plan,
    /// Emptied once moved into the toolkit (nothing left to delete then).
    staging: PathBuf,
    staged: Vec<extract::Staged>,
}

impl Drop for Prestaged {
    fn drop(&mut self) {
        if !self.staging.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.staging);
        }
    }
}

const PRESTAGE: &str = ".cudnn-";

/// Where this process stages cuDNN ahead for the toolkit at `dir`: `.LEAF.cudnn-PID`
/// beside it (a name the toolkit swap's own leftovers never take).
pub fn prestage_path(dir: &Path) -> PathBuf {
    let leaf = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "cuda".into());
    dir.with_file_name(format!(".{leaf}{PRESTAGE}{}", std::process::id()))
}

/// Deletes the folders a killed run's [`stage`] left beside `dir` (any process's: the
/// caller holds the target's lock, so no other run of ours is staging there). Only
/// real folders named exactly as [`prestage_path`] names them; returns how many.
pub fn clean_prestaged(dir: &Path) -> usize {
    let (Some(parent), Some(leaf)) = (dir.parent(), dir.file_name()) else {
        return 0;
    };
    let prefix = format!(".{}{PRESTAGE}", leaf.to_string_lossy());
    let mut n = 0;
    for e in std::fs::read_dir(parent).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let ours = name
            .strip_prefix(&prefix)
            .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()));
        if ours
            && e.file_type().is_ok_and(|t| t.is_dir())
            && std::fs::remove_dir_all(e.path()).is_ok()
        {
            n += 1;
        }
    }
    n
}

/// Checks `archive` and extracts it (every check of [`install`]'s, the developer names
/// included) into [`prestage_path`]`(dir)`, without touching `dir`, which need not
/// exist yet. A refusal leaves nothing behind.
pub fn stage(
    archive: &Path,
    dir: &Path,
    report: &(dyn Fn(Event) + Sync),
) -> Result<Prestaged, CudnnError> {
    let staging = prestage_path(dir);
    let parent = staging.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| CudnnError::io(parent, e))?;
    let _ = std::fs::remove_dir_all(&staging);
    let fail = |e: CudnnError| {
        let _ = std::fs::remove_dir_all(&staging);
        e
    };
    let (plan, mut staged) = if tarball::is_xz(archive) {
        tarball::open_and_extract(archive, &archive::Limits::default(), &staging, report)
            .map_err(fail)?
    } else {
        let plan = archive::open(archive).map_err(|refusal| CudnnError::Refused {
            archive: archive.to_path_buf(),
            refusal,
        })?;
        report(Event::Validated {
            version: plan.version.clone(),
            entries: plan.entries.len(),
            total_bytes: plan.total_bytes,
        });
        // As in [`install`]: the files, and room for the backups of those they replace.
        if let Ok(free) = crate::platform::free_space(parent)
            && free < plan.total_bytes * 2
        {
            return Err(CudnnError::DiskFull {
                dir: dir.to_path_buf(),
                needed: plan.total_bytes * 2,
                free,
            });
        }
        std::fs::create_dir_all(&staging).map_err(|e| fail(CudnnError::io(&staging, e)))?;
        let staged = extract::extract(&plan, &staging, report).map_err(fail)?;
        (plan, staged)
    };
    staged.extend(devnames::stage(&plan, &staging, &staged).map_err(fail)?);
    Ok(Prestaged {
        archive: archive.to_path_buf(),
        plan,
        staging,
        staged,
    })
}

/// Installs what [`stage`] extracted into the toolkit at `dir` (now in place): the
/// staging folder moves into `.cuda-setup/staging-PID` in one rename, then the rest is
/// [`install`]'s own transaction — the same toolkit and CUDA-major checks, the previous
/// cuDNN uninstalled, journal, manifest, recovery.
pub fn install_prestaged(
    pre: Prestaged,
    dir: &Path,
    report: &(dyn Fn(Event) + Sync),
) -> Result<Manifest, CudnnError> {
    let mut pre = pre;
    let toolkit = crate::detect::toolkit::version_of(&Host::real(), dir, Duration::from_secs(20))
        .filter(|_| dir.join("bin").is_dir())
        .ok_or_else(|| CudnnError::NotAToolkit {
            dir: dir.to_path_buf(),
            detail: "no version.json, version.txt or bin/nvcc".into(),
        })?;
    let _lock = lock(dir, true)?;
    if let Some(r) = txn::recover(dir)? {
        report(Event::Recovered(r));
    }
    let meta = txn::meta(dir);
    let meta_existed = meta.exists() && !_lock.as_ref().is_some_and(|l| l.created_dir());
    let give_up = |e: CudnnError, staging: &Path| {
        let _ = std::fs::remove_dir_all(staging);
        if !meta_existed {
            let _ = std::fs::remove_dir_all(&meta);
        }
        e
    };
    if let Some(e) = mismatch(&pre.archive, dir, &pre.plan, &toolkit) {
        return Err(give_up(e, &pre.staging));
    }
    let staging = meta.join(format!("staging-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    // A kill from here on leaves the files in the toolkit's own staging folder, which
    // the next cuDNN command's recovery deletes (no journal yet).
    std::fs::rename(&pre.staging, &staging)
        .map_err(|e| give_up(CudnnError::io(&pre.staging, e), &pre.staging))?;
    let from = std::mem::take(&mut pre.staging);
    let mut staged = std::mem::take(&mut pre.staged);
    for s in &mut staged {
        if let Ok(rel) = s.path.strip_prefix(&from) {
            s.path = staging.join(rel);
        }
    }
    let give_up = |e: CudnnError| give_up(e, &staging);
    commit(
        &pre.archive,
        dir,
        toolkit,
        &pre.plan,
        &staging,
        staged,
        &give_up,
        report,
    )
}

/// Whether the cuDNN of ours in `dir` came from an archive named as `archive` (what the
/// install step's "already installed" check starts from); reads only its manifest.
pub fn installed_from(dir: &Path, archive: &Path) -> bool {
    matches!(txn::read_manifest(dir), Ok(Some(m))
        if archive.file_name().is_some_and(|n| n.to_string_lossy() == m.archive))
}

/// Restores the toolkit folder to what it was before our install.
pub fn uninstall(dir: &Path) -> Result<Manifest, CudnnError> {
    let _lock = lock(dir, false)?;
    txn::recover(dir)?;
    let m = txn::load_manifest(dir)?.ok_or_else(|| CudnnError::NotInstalled {
        dir: dir.to_path_buf(),
    })?;
    txn::uninstall(dir, m)
}

/// A link we installed: still a link, to the same name.
fn link_problem(p: &Path, target: &str) -> Option<&'static str> {
    match std::fs::symlink_metadata(p) {
        Err(_) => Some("missing"),
        Ok(m) if !m.file_type().is_symlink() => Some("altered"),
        Ok(_) => (std::fs::read_link(p).ok()? != Path::new(target)).then_some("altered"),
    }
}

/// Checks every file we installed is there with the bytes we put (every file hashed).
pub fn verify(dir: &Path) -> Result<VerifyReport, CudnnError> {
    verify_at(dir, Depth::Deep)
}

/// Checks every file we installed is there with the bytes we put: at [`Depth::Quick`]
/// a file whose size and modification time match the manifest's stamp is not re-read.
pub fn verify_at(dir: &Path, depth: Depth) -> Result<VerifyReport, CudnnError> {
    // A toolkit we may only read cannot be changed under us by a run of ours either.
    let _lock = match lock(dir, false) {
        Err(CudnnError::Io { .. }) => None,
        l => l?,
    };
    txn::recover(dir)?;
    let m = txn::load_manifest(dir)?.ok_or_else(|| CudnnError::NotInstalled {
        dir: dir.to_path_buf(),
    })?;
    let mut problems = Vec::new();
    for f in &m.files {
        let p = dir.join(&f.path);
        let problem = match &f.link {
            Some(target) => link_problem(&p, target),
            None if depth == Depth::Quick
                && f.stamp
                    .is_some_and(|s| s.size == f.size && crate::stamp::matches(&p, &s)) =>
            {
                None
            }
            None => match crate::download::hash_file(&p) {
                Err(_) => Some("missing"),
                Ok((d, n)) if n != f.size || d.sha256 != f.sha256 => Some("altered"),
                Ok(_) => None,
            },
        };
        if let Some(problem) = problem {
            problems.push(Problem {
                path: f.path.clone(),
                problem,
            });
        }
    }
    Ok(VerifyReport {
        cudnn_version: m.cudnn_version,
        files: m.files.len(),
        problems,
    })
}
