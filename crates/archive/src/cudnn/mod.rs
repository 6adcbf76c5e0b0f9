//! cuDNN into a CUDA toolkit folder: validate the archive as hostile input, extract to
//! staging, apply as a transaction with a manifest, verify and uninstall later.

pub mod archive;
mod check;
mod devnames;
mod extract;
mod places;
mod tarball;
pub mod txn;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use archive::{Refusal, RefusalRule};
pub use check::{Checked, Refused, archive_name, check};
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
    /// A folder on the way into the toolkit is a link (or junction) leading out of it,
    /// or one that cannot be followed safely: nothing is written through it (#30).
    #[error(
        "{} is a symbolic link or junction leading outside the toolkit folder; refused, nothing was written through it",
        .path.display()
    )]
    LinkOut { path: PathBuf },
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

    /// What to do about it, for the command line's `hint:` line (it may name commands
    /// and flags; the wizard says its own words for the failure's kind).
    pub fn hint(&self) -> crate::message::Message {
        use crate::msg;
        match self {
            CudnnError::Refused {
                refusal: Refusal::CudaMismatch { .. },
                ..
            } => msg!("hint_cudnn_cuda_mismatch"),
            CudnnError::Refused {
                refusal: Refusal::LinuxArchive,
                ..
            } => msg!("hint_cudnn_linux_archive"),
            CudnnError::Refused { .. } => msg!("hint_cudnn_refused"),
            CudnnError::NotAToolkit { .. } => msg!("hint_cudnn_not_a_toolkit"),
            CudnnError::InUse { .. } => msg!("hint_cudnn_in_use"),
            CudnnError::DiskFull { .. } => msg!("hint_cudnn_disk_full"),
            CudnnError::Io { .. } => msg!("hint_cudnn_io"),
            CudnnError::NotInstalled { .. } => msg!("hint_cudnn_not_installed"),
            CudnnError::Busy(_) => msg!("hint_busy"),
            CudnnError::LinkOut { .. } => msg!("hint_cudnn_link_out"),
            CudnnError::BadState(_) => msg!("hint_cudnn_record"),
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
    if !dir.is_dir() {
        return Ok(None);
    }
    // `.cuda-setup` must be a real folder before the lock file is made in it: a link
    // planted there is set aside (a rejected record), never written through.
    match std::fs::symlink_metadata(txn::meta(dir)) {
        Err(_) if !installing => return Ok(None),
        Ok(m) if !m.is_dir() => {
            let r = crate::state_file::Rejected::new(
                &txn::meta(dir),
                "not a folder (a symbolic link?)",
            );
            return Err(CudnnError::BadState(r.set_aside()));
        }
        _ => {}
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
    if !dir.is_dir() {
        return Ok(None);
    }
    txn::recover(&open(dir, false)?)
}

/// The toolkit folder held open ([`places`]); a rejected `.cuda-setup` is set aside.
fn open(dir: &Path, create: bool) -> Result<places::Toolkit, CudnnError> {
    places::Toolkit::open(dir, create).map_err(|e| match e {
        CudnnError::BadState(r) => CudnnError::BadState(r.set_aside()),
        e => e,
    })
}

/// What both installs hold from their start: the toolkit's version, its lock, and its
/// `.cuda-setup` folder (recovered first) with this process's staging name.
struct Begun {
    toolkit: Version,
    _lock: Option<crate::lock::Lock>,
    /// `.cuda-setup` was there before us (else a failure removes it again).
    meta_existed: bool,
    tk: places::Toolkit,
    staging_name: String,
}

impl Begun {
    fn new(dir: &Path, report: &(dyn Fn(Event) + Sync)) -> Result<Begun, CudnnError> {
        // (Before the lock: a folder that is no toolkit gets no lock file either.)
        let toolkit = toolkit_of(dir)?;
        let lock = lock(dir, true)?;
        // (The lock lives in `.cuda-setup`: it existed unless the lock just made it.)
        let meta_existed =
            txn::meta(dir).exists() && !lock.as_ref().is_some_and(|l| l.created_dir());
        let tk = open(dir, true)?;
        if let Some(r) = txn::recover(&tk)? {
            report(Event::Recovered(r));
        }
        Ok(Begun {
            toolkit,
            _lock: lock,
            meta_existed,
            tk,
            staging_name: format!("staging-{}", std::process::id()),
        })
    }

    fn meta(&self) -> Result<&crate::place::Dir, CudnnError> {
        self.tk.meta_or_err()
    }

    /// Leaves no trace of this install: its staging, and `.cuda-setup` if we made it.
    fn give_up(&self, e: CudnnError) -> CudnnError {
        if let Ok(meta) = self.meta() {
            let _ = meta.remove_all(&self.staging_name);
        }
        if !self.meta_existed {
            let _ = self.tk.remove_meta();
        }
        e
    }
}

/// The CUDA version of the toolkit at `dir`, which must be one (a `bin` folder and a version).
fn toolkit_of(dir: &Path) -> Result<Version, CudnnError> {
    crate::toolkit_version::version_of(&Host::real(), dir, Duration::from_secs(20))
        .filter(|_| dir.join("bin").is_dir())
        .ok_or_else(|| CudnnError::NotAToolkit {
            dir: dir.to_path_buf(),
            detail: "no version.json, version.txt or bin/nvcc".into(),
        })
}

/// Installs the cuDNN in `archive` into the toolkit at `dir`. A previous install by us
/// is uninstalled first (its own transaction), so backups always hold the toolkit's files.
pub fn install(
    archive: &Path,
    dir: &Path,
    report: &(dyn Fn(Event) + Sync),
) -> Result<Manifest, CudnnError> {
    let begun = Begun::new(dir, report)?;
    let (tk, meta, staging_name) = (&begun.tk, begun.meta()?, &begun.staging_name);
    let toolkit = begun.toolkit.clone();
    let give_up = |e: CudnnError| begun.give_up(e);
    // Created new by us (a link planted at the name is removed, never followed).
    let fresh = || {
        meta.fresh_sub(staging_name)
            .map_err(|e| give_up(CudnnError::io(&meta.display(staging_name), e)))
    };
    // NVIDIA's Linux tarball is checked and extracted in one pass of its stream, into
    // staging only (a tar has no index: a check-only pass would decode it twice); a zip
    // is checked first, then extracted. Either way the toolkit is untouched until the
    // transaction, and a refusal leaves no trace.
    let (plan, staged, staging) = if tarball::is_xz(archive) {
        let staging = fresh()?;
        let (p, s) =
            tarball::open_and_extract(archive, &archive::Limits::default(), &staging, report)
                .map_err(give_up)?;
        (p, Some(s), Some(staging))
    } else {
        let plan = archive::open(archive).map_err(|refusal| CudnnError::Refused {
            archive: archive.to_path_buf(),
            refusal,
        })?;
        (plan, None, None)
    };
    if let Some(e) = mismatch(archive, dir, &plan, &toolkit, os_of(&plan)) {
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
        return Err(give_up(CudnnError::DiskFull {
            dir: dir.to_path_buf(),
            needed: plan.total_bytes * 2,
            free,
        }));
    }
    // Extracted (CRCs checked) before the previous cuDNN is uninstalled: an entry found
    // damaged half-way leaves that install as it was, as a damaged tarball does.
    let (staged, staging) = match (staged, staging) {
        (Some(s), Some(d)) => (s, d),
        _ => {
            let staging = fresh()?;
            let s = extract::extract(&plan, &staging, report).map_err(give_up)?;
            (s, staging)
        }
    };
    // The wheel's developer names (`libcudnn.so`, `cudnn.lib`), staged with its files.
    let mut staged = staged;
    staged.extend(devnames::stage(&plan, &staging, &staged).map_err(give_up)?);
    commit(
        archive,
        tk,
        toolkit,
        &plan,
        (&staging, staging_name),
        staged,
        &give_up,
        report,
    )
}

/// A refusal of a cuDNN built for another CUDA major than the toolkit's. The advice names
/// the archive to get for `os` (the wheel of the toolkit's major for a wheel).
pub(crate) fn mismatch(
    archive: &Path,
    dir: &Path,
    plan: &archive::Plan,
    toolkit: &Version,
    os: crate::compat::Os,
) -> Option<CudnnError> {
    let major = plan.cuda_major?;
    if major == toolkit.major() {
        return None;
    }
    let v = plan.full_version.as_ref().unwrap_or(&plan.version);
    let suggestion = if plan.top == "nvidia/cudnn" {
        format!("the wheel nvidia-cudnn-cu{}=={v}", toolkit.major())
    } else {
        archive_name(os, v, toolkit.major())
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

/// The OS an archive is NVIDIA's for, by its format (a Linux tarball, else the zip).
fn os_of(plan: &archive::Plan) -> crate::compat::Os {
    match plan.format {
        archive::Format::TarXz => crate::compat::Os::Linux,
        archive::Format::Zip => crate::compat::Os::Windows,
    }
}

/// The part of an install after every file is in `staging` (`.cuda-setup/staging-PID`,
/// developer names included): the previous cuDNN of ours goes (its own transaction),
/// then the new files go in as one transaction. The same for both ways in (plain
/// [`install`], [`install_prestaged`]), so both leave the same files and manifest.
/// `give_up` cleans staging for a failure before the transaction (which cleans its own).
#[allow(clippy::too_many_arguments)]
fn commit(
    archive: &Path,
    tk: &places::Toolkit,
    toolkit: Version,
    plan: &archive::Plan,
    (staging, staging_name): (&crate::place::Dir, &str),
    staged: Vec<extract::Staged>,
    give_up: &dyn Fn(CudnnError) -> CudnnError,
    report: &(dyn Fn(Event) + Sync),
) -> Result<Manifest, CudnnError> {
    if let Some(old) = txn::load_manifest(tk).map_err(give_up)? {
        txn::uninstall(tk, old).map_err(give_up)?;
    }
    // Each destination folder is resolved here, once, and held for the transaction: one
    // that is a link out of the toolkit refuses the install before anything changes.
    let mut files = Vec::with_capacity(staged.len());
    for s in &staged {
        let path = archive::dest_rel(&s.entry, toolkit.major());
        files.push(ManifestFile {
            replaced: tk.present(&path).map_err(give_up)?,
            path,
            sha256: s.sha256.clone(),
            size: s.entry.size,
            link: s.entry.link.clone(),
            stamp: None,
        });
    }
    let moves: Vec<(String, String)> = files
        .iter()
        .zip(&staged)
        .map(|(f, s)| (f.path.clone(), s.entry.inner.clone()))
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
    txn::apply_install(tk, staging, staging_name, &moves, manifest)
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
    /// The folder holding the staging folder, held open, and the staging folder's name;
    /// None once moved into the toolkit (nothing left to delete then).
    beside: Option<(crate::place::Dir, String)>,
    /// The staging folder itself, held open while it is filled. Let go before it moves
    /// into the toolkit (Windows renames no folder held open) and opened again there,
    /// inside `.cuda-setup`, which is held open and ours.
    staging: Option<crate::place::Dir>,
    staged: Vec<extract::Staged>,
}

impl Drop for Prestaged {
    fn drop(&mut self) {
        // Our handle first: Windows deletes no folder held open.
        drop(self.staging.take());
        if let Some((parent, name)) = &self.beside {
            let _ = parent.remove_all(name);
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

/// The folder that holds the toolkit folder `dir` (made if missing), held open. Its path
/// is the user's choice: links on it are followed once, here.
fn beside(dir: &Path) -> Result<crate::place::Dir, CudnnError> {
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| CudnnError::io(parent, e))?;
    crate::place::Dir::open(&crate::platform::canonical(parent))
        .map_err(|e| CudnnError::io(parent, e))
}

/// Deletes the folders a killed run's [`stage`] left beside `dir` (any process's: the
/// caller holds the target's lock, so no other run of ours is staging there). Only
/// names exactly as [`prestage_path`] makes them (a link there is removed as a link);
/// returns how many.
pub fn clean_prestaged(dir: &Path) -> usize {
    let (Some(_), Some(leaf)) = (dir.parent(), dir.file_name()) else {
        return 0;
    };
    let Ok(parent) = beside(dir) else { return 0 };
    let prefix = format!(".{}{PRESTAGE}", leaf.to_string_lossy());
    let mut n = 0;
    let Ok(entries) = parent.handle().entries() else {
        return 0;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let ours = name
            .strip_prefix(&prefix)
            .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()));
        if ours && parent.remove_all(&name).is_ok() {
            n += 1;
        }
    }
    n
}

/// Checks `archive` and extracts it (every check of [`install`]'s, the developer names
/// included) into [`prestage_path`]`(dir)`, without touching `dir`, which need not
/// exist yet. A refusal leaves nothing behind. The staging folder is created new by us:
/// whatever is at its name (a planted link) is removed first, never followed.
pub fn stage(
    archive: &Path,
    dir: &Path,
    report: &(dyn Fn(Event) + Sync),
) -> Result<Prestaged, CudnnError> {
    let shown = prestage_path(dir);
    let name = shown
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = beside(dir)?;
    let fail = |e: CudnnError| {
        let _ = parent.remove_all(&name);
        e
    };
    let fresh = || {
        parent
            .fresh_sub(&name)
            .map_err(|e| fail(CudnnError::io(&shown, e)))
    };
    let (plan, mut staged, staging) = if tarball::is_xz(archive) {
        let staging = fresh()?;
        let (plan, staged) =
            tarball::open_and_extract(archive, &archive::Limits::default(), &staging, report)
                .map_err(fail)?;
        (plan, staged, staging)
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
        if let Ok(free) = crate::platform::free_space(parent.path())
            && free < plan.total_bytes * 2
        {
            return Err(CudnnError::DiskFull {
                dir: dir.to_path_buf(),
                needed: plan.total_bytes * 2,
                free,
            });
        }
        let staging = fresh()?;
        let staged = extract::extract(&plan, &staging, report).map_err(fail)?;
        (plan, staged, staging)
    };
    staged.extend(devnames::stage(&plan, &staging, &staged).map_err(fail)?);
    Ok(Prestaged {
        archive: archive.to_path_buf(),
        plan,
        beside: Some((parent, name)),
        staging: Some(staging),
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
    let begun = Begun::new(dir, report)?;
    let (tk, meta, staging_name) = (&begun.tk, begun.meta()?, &begun.staging_name);
    let toolkit = begun.toolkit.clone();
    let give_up = |e: CudnnError| begun.give_up(e);
    if let Some(e) = mismatch(&pre.archive, dir, &pre.plan, &toolkit, os_of(&pre.plan)) {
        return Err(give_up(e));
    }
    let _ = meta.remove_all(staging_name);
    // A kill from here on leaves the files in the toolkit's own staging folder, which
    // the next cuDNN command's recovery deletes (no journal yet). The rename is of the
    // name in the folder held open, into `.cuda-setup` held open.
    drop(pre.staging.take());
    if let Some((parent, name)) = &pre.beside {
        parent
            .handle()
            .rename(name, meta.handle(), staging_name)
            .map_err(|e| give_up(CudnnError::io(&parent.display(name), e)))?;
    }
    pre.beside = None;
    let staged = std::mem::take(&mut pre.staged);
    let staging = meta
        .sub(staging_name, false)
        .map_err(|e| give_up(CudnnError::io(&meta.display(staging_name), e)))?;
    commit(
        &pre.archive,
        tk,
        toolkit,
        &pre.plan,
        (&staging, staging_name),
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
    let (_lock, tk, m) = ours(dir)?;
    txn::uninstall(&tk, m)
}

/// Our cuDNN in `dir`, locked, any interrupted transaction recovered, and its manifest.
fn ours(dir: &Path) -> Result<(Option<crate::lock::Lock>, places::Toolkit, Manifest), CudnnError> {
    let lock = lock(dir, false)?;
    let not_installed = || CudnnError::NotInstalled {
        dir: dir.to_path_buf(),
    };
    if !dir.is_dir() {
        return Err(not_installed());
    }
    let tk = open(dir, false)?;
    txn::recover(&tk)?;
    let m = txn::load_manifest(&tk)?.ok_or_else(not_installed)?;
    Ok((lock, tk, m))
}

/// Each file of `m` that is not there with the bytes (or the link) we put.
fn problems(dir: &Path, m: &Manifest, depth: Depth) -> Vec<Problem> {
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
            // A link where we put a file is not ours, whatever it leads to.
            None if std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) => {
                Some("altered")
            }
            None => match crate::download::hash_file(&p) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some("missing"),
                Err(_) => Some("altered"),
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
    problems
}

/// What [`uninstall_unchanged`] did: the manifest it undid, and the files it left because
/// they changed since we put them (each hashed against the manifest; a link where we put
/// a file counts as changed and is never followed).
#[derive(Debug, Clone)]
pub struct Undone {
    pub manifest: Manifest,
    pub left: Vec<String>,
}

/// The files of our cuDNN in `dir` that changed since we put them (every file hashed):
/// what [`uninstall_unchanged`] would leave. Reads only.
pub fn changed_files(dir: &Path) -> Result<Vec<String>, CudnnError> {
    let report = verify_at(dir, Depth::Deep)?;
    Ok(report
        .problems
        .into_iter()
        .filter(|p| p.problem == "altered")
        .map(|p| p.path)
        .collect())
}

/// Restores the toolkit folder to what it was before our install, except the files that
/// changed since we put them: those stay as they are, named in the answer (`cuda-setup
/// uninstall`; `cudnn uninstall` restores everything).
pub fn uninstall_unchanged(dir: &Path) -> Result<Undone, CudnnError> {
    let (_lock, tk, m) = ours(dir)?;
    let left: Vec<String> = problems(dir, &m, Depth::Deep)
        .into_iter()
        .filter(|p| p.problem == "altered")
        .map(|p| p.path)
        .collect();
    let manifest = txn::uninstall_except(&tk, m, &left)?;
    Ok(Undone { manifest, left })
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
    let not_installed = || CudnnError::NotInstalled {
        dir: dir.to_path_buf(),
    };
    if !dir.is_dir() {
        return Err(not_installed());
    }
    let tk = open(dir, false)?;
    txn::recover(&tk)?;
    let m = txn::load_manifest(&tk)?.ok_or_else(not_installed)?;
    let problems = problems(dir, &m, depth);
    Ok(VerifyReport {
        cudnn_version: m.cudnn_version,
        files: m.files.len(),
        problems,
    })
}
