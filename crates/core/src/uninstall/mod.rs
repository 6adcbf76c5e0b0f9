//! `cuda-setup uninstall`: undoes what cuda-setup did, from its own records only, and
//! nothing else (#35).
//!
//! [`plan`] reads the records — cuDNN's manifests (its backups), the wheels toolkit's
//! record (`toolkit-wheels.json`), `env-changes.json`, the guard's and the driver
//! policy's records, the install records and their Apps & features entries — into an
//! [`UninstallPlan`]: what will be undone ([`Action`]), what is left because it changed
//! since we made it ([`Left`]: a cuDNN file whose bytes are not the manifest's, a variable
//! set again after us, the user's files in our tree), and what only someone else can undo
//! ([`Manual`]: a toolkit NVIDIA's installer put there — NVIDIA's own uninstaller —, a
//! pin only the user's account may lift). [`execute`] runs the actions in order under the
//! target's lock, journaling each one done (`<state>/uninstall-journal.json`): a kill at
//! any point is finished by the next run, which resumes the journal's plan; every action
//! is idempotent, so a second run after a complete one finds nothing to do.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::compat::Os;
use crate::message::Message;
use crate::msg;
use crate::steps::env;
use crate::target::Target;
use crate::version::Version;

mod env_undo;
pub mod installs;
mod toolkit;

pub use installs::{InstallRecord, Method};

/// The record of our environment changes (`steps::run_step` appends to it).
pub const ENV_RECORD: &str = "env-changes.json";
const JOURNAL: &str = "uninstall-journal.json";

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Also our state folder (logs, downloads, records) and the download cache.
    pub purge: bool,
    /// Only this install (`--install-id`, the Apps & features entry's command).
    pub install_id: Option<String>,
}

/// One thing undone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// cuDNN out of a toolkit: the toolkit's own files back from the backups, the files we
    /// copied removed — except `left`, changed since.
    RestoreCudnn {
        toolkit: PathBuf,
        version: Version,
        files: usize,
        left: Vec<String>,
    },
    /// A toolkit we assembled from wheels, its record's files; `kept`: the user's.
    RemoveToolkit {
        dir: PathBuf,
        version: Version,
        files: usize,
        kept: Vec<String>,
    },
    /// A Windows variable back to its value before us (None: removed).
    RestoreVar { name: String, to: Option<String> },
    /// The PATH entries we added, out of PATH (the rest as it is).
    RemovePathEntries { name: String, entries: Vec<String> },
    /// Our block out of the profile script (the file too when only ours was in it).
    RemoveProfileBlock { file: PathBuf },
    /// The PyTorch guard's pin lifted (`guard off`).
    GuardOff { python: PathBuf, prefix: PathBuf },
    /// Windows' driver policy back to what `driver-policy on` found.
    PolicyOff { to: Option<u32> },
    /// The install's record and its Apps & features entry; the program's copy when no
    /// other install needs it.
    RemoveEntry {
        id: String,
        entry: Option<String>,
        exe: Option<PathBuf>,
    },
    /// Our records of what was just undone (`env-changes.json`, `build-check.json`).
    ForgetRecords { files: Vec<String> },
    /// One install undone: its changes out of `env-changes.json` (the others' stay).
    ForgetEnvChanges { dir: PathBuf },
    /// `--purge`: our state folder (logs, downloads, records) and the download cache.
    RemoveFolder { dir: PathBuf },
}

/// Something of ours left as it is, because it changed since.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "left", rename_all = "snake_case")]
pub enum Left {
    CudnnFile { toolkit: PathBuf, path: String },
    VarChanged { name: String, now: String },
    UserFiles { dir: PathBuf, files: Vec<String> },
}

/// What only someone else can undo.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "manual", rename_all = "snake_case")]
pub enum Manual {
    /// NVIDIA's installer put the toolkit there: NVIDIA's uninstaller removes it.
    NvidiaToolkit { dir: PathBuf, version: String },
    /// The guard's pin is the user's to lift (an elevated run writes nothing there).
    GuardAsUser { python: PathBuf },
    /// The driver policy needs administrator rights.
    PolicyAsAdmin,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UninstallPlan {
    pub actions: Vec<Action>,
    pub left: Vec<Left>,
    pub manual: Vec<Manual>,
    /// Actions an interrupted run finished (their indices): the plan is that run's.
    #[serde(default)]
    pub done: Vec<usize>,
}

impl UninstallPlan {
    pub fn nothing_to_do(&self) -> bool {
        self.actions.len() == self.done.len()
    }
    pub fn resumed(&self) -> bool {
        !self.done.is_empty()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum UninstallError {
    #[error(transparent)]
    Busy(crate::lock::Busy),
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Cudnn(#[from] crate::cudnn::CudnnError),
    /// Boxed: a step's error is large (a Windows build's the more).
    #[error(transparent)]
    Env(Box<crate::steps::StepError>),
    #[error(transparent)]
    Guard(#[from] crate::guard::GuardError),
    #[error(transparent)]
    Policy(#[from] crate::driverwatch::policy::PolicyError),
}

impl From<crate::steps::StepError> for UninstallError {
    fn from(e: crate::steps::StepError) -> Self {
        UninstallError::Env(Box::new(e))
    }
}

impl UninstallError {
    fn io(path: &Path, source: std::io::Error) -> Self {
        UninstallError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// What to do, for the command line.
    pub fn hint(&self) -> Message {
        match self {
            UninstallError::Busy(_) => msg!("hint_busy"),
            _ => msg!("hint_uninstall_again"),
        }
    }
}

impl Action {
    /// What it does, in words.
    pub fn message(&self) -> Message {
        match self {
            Action::RestoreCudnn {
                toolkit,
                version,
                files,
                ..
            } => msg!(
                "uninstall_action_cudnn",
                version = version,
                dir = toolkit.display(),
                files = files
            ),
            Action::RemoveToolkit {
                dir,
                version,
                files,
                ..
            } => msg!(
                "uninstall_action_toolkit",
                version = version,
                dir = dir.display(),
                files = files
            ),
            Action::RestoreVar { name, to: Some(v) } => {
                msg!("uninstall_action_var_restore", name = name, value = v)
            }
            Action::RestoreVar { name, to: None } => {
                msg!("uninstall_action_var_remove", name = name)
            }
            Action::RemovePathEntries { name, entries } => msg!(
                "uninstall_action_path",
                name = name,
                entries = entries.join("; ")
            ),
            Action::RemoveProfileBlock { file } => {
                msg!("uninstall_action_profile", file = file.display())
            }
            Action::GuardOff { prefix, .. } => {
                msg!("uninstall_action_guard", prefix = prefix.display())
            }
            Action::PolicyOff { to } => msg!(
                "uninstall_action_policy",
                value = to.map_or_else(|| "-".to_string(), |v| v.to_string())
            ),
            Action::RemoveEntry { id, entry, .. } => match entry {
                Some(key) => msg!("uninstall_action_entry", id = id, key = key),
                None => msg!("uninstall_action_record", id = id),
            },
            Action::ForgetRecords { files } => {
                msg!("uninstall_action_records", files = files.join(", "))
            }
            Action::ForgetEnvChanges { .. } => {
                msg!("uninstall_action_records", files = ENV_RECORD)
            }
            Action::RemoveFolder { dir } => msg!("uninstall_action_folder", dir = dir.display()),
        }
    }
}

impl Left {
    pub fn message(&self) -> Message {
        match self {
            Left::CudnnFile { toolkit, path } => {
                msg!("uninstall_left_file", path = toolkit.join(path).display())
            }
            Left::VarChanged { name, now } => msg!("uninstall_left_var", name = name, value = now),
            Left::UserFiles { dir, files } => msg!(
                "uninstall_left_user_files",
                dir = dir.display(),
                count = files.len(),
                files = short_list(files)
            ),
        }
    }
}

impl Manual {
    pub fn message(&self, os: Os) -> Message {
        match self {
            Manual::NvidiaToolkit { dir, version } if os == Os::Windows => msg!(
                "uninstall_manual_nvidia_windows",
                dir = dir.display(),
                version = version
            ),
            Manual::NvidiaToolkit { dir, version } => msg!(
                "uninstall_manual_nvidia_linux",
                dir = dir.display(),
                version = version,
                command = format!("sudo {}", dir.join("bin/cuda-uninstaller").display())
            ),
            Manual::GuardAsUser { python } => msg!(
                "uninstall_manual_guard",
                command = format!("cuda-setup guard off --python \"{}\"", python.display())
            ),
            Manual::PolicyAsAdmin => msg!(
                "uninstall_manual_policy",
                command = "cuda-setup driver-policy off"
            ),
        }
    }
}

/// At most ten names, and how many more.
fn short_list(names: &[String]) -> String {
    let mut s = names
        .iter()
        .take(10)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > 10 {
        s.push_str(&format!(" (+{})", names.len() - 10));
    }
    s
}

/// The toolkit folders our records name: installs, cuDNN manifests found where toolkits
/// live, the environment's CUDA_PATH; each once.
fn toolkit_dirs(target: &Target, records: &[InstallRecord]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = records.iter().map(|r| r.toolkit.clone()).collect();
    for t in crate::repair::existing(target).toolkits {
        if !dirs.contains(&t.dir) {
            dirs.push(t.dir);
        }
    }
    dirs
}

/// Reads our records into the plan; changes nothing. An uninstall a kill interrupted is
/// resumed: its own plan comes back, with the actions it finished in `done`.
pub fn plan(target: &Target, opts: &Options) -> Result<UninstallPlan, UninstallError> {
    if let Some(p) = read_journal(target) {
        return Ok(p);
    }
    let all_records = installs::all(target);
    let records: Vec<InstallRecord> = match &opts.install_id {
        Some(id) => all_records
            .iter()
            .filter(|r| &r.id == id)
            .cloned()
            .collect(),
        None => all_records.clone(),
    };
    // One install asked for that we have no record of: nothing of it to undo.
    if opts.install_id.is_some() && records.is_empty() {
        return Ok(UninstallPlan::default());
    }
    let only: Option<PathBuf> = opts
        .install_id
        .as_ref()
        .and_then(|_| records.first().map(|r| r.toolkit.clone()));
    // Everything that is not about one toolkit goes with the last install.
    let whole = records.len() == all_records.len();
    let mut p = UninstallPlan::default();
    let dirs = match &only {
        Some(d) => vec![d.clone()],
        None => toolkit_dirs(target, &records),
    };

    // cuDNN first: its backups are the toolkit's own files.
    for dir in &dirs {
        let Ok(Some(m)) = crate::cudnn::txn::read_manifest(dir) else {
            continue;
        };
        let left = crate::cudnn::changed_files(dir)?;
        p.left.extend(left.iter().map(|path| Left::CudnnFile {
            toolkit: dir.clone(),
            path: path.clone(),
        }));
        if m.files.len() > left.len() {
            p.actions.push(Action::RestoreCudnn {
                toolkit: dir.clone(),
                version: m.cudnn_version,
                files: m.files.len() - left.len(),
                left,
            });
        }
    }
    // Toolkits: ours (a wheels record) are removed; NVIDIA's are NVIDIA's to remove.
    for dir in &dirs {
        match crate::wheels::assemble::read_record(dir) {
            Ok(Some(rec)) => {
                let manifest = crate::cudnn::txn::read_manifest(dir).ok().flatten();
                let kept = rec
                    .paths
                    .as_ref()
                    .and_then(|_| crate::wheels::keep::foreign(dir, &rec, manifest.as_ref()))
                    .unwrap_or_default();
                if !kept.is_empty() {
                    p.left.push(Left::UserFiles {
                        dir: dir.clone(),
                        files: kept.clone(),
                    });
                }
                p.actions.push(Action::RemoveToolkit {
                    dir: dir.clone(),
                    version: rec.version,
                    files: rec.paths.as_ref().map_or(rec.files, Vec::len),
                    kept,
                });
            }
            _ if crate::place::Dir::open(&dir.join("bin")).is_ok() => {
                // Ours only through a record of an install we ran or set up.
                if let Some(r) = records.iter().find(|r| &r.toolkit == dir) {
                    p.manual.push(Manual::NvidiaToolkit {
                        dir: dir.clone(),
                        version: r.version.major_minor().to_string(),
                    });
                }
            }
            _ => {}
        }
    }
    // The environment.
    let changes = env_undo::recorded(target);
    env_undo::plan(
        target,
        &changes,
        only.as_deref(),
        &mut p.actions,
        &mut p.left,
    );
    if whole {
        guard_and_policy(target, &mut p);
    }
    // The installs' records and entries.
    let last = whole;
    for (i, r) in records.iter().enumerate() {
        let needs_exe = last && i + 1 == records.len();
        p.actions.push(Action::RemoveEntry {
            id: r.id.clone(),
            entry: r
                .entry
                .clone()
                .filter(|k| installs::entry_exists(target, k)),
            exe: r.exe.clone().filter(|e| needs_exe && e.exists()),
        });
    }
    // What we undid is no longer a record of anything.
    if let Some(dir) = only.as_ref().filter(|_| !whole)
        && changes.iter().any(|c| {
            c.value
                .as_deref()
                .is_some_and(|v| v.contains(&dir.display().to_string()))
        })
    {
        p.actions
            .push(Action::ForgetEnvChanges { dir: dir.clone() });
    }
    if whole {
        let state = target.state_dir();
        let files: Vec<String> = [ENV_RECORD, "build-check.json"]
            .into_iter()
            .filter(|f| std::fs::symlink_metadata(state.join(f)).is_ok())
            .map(str::to_string)
            .collect();
        if !files.is_empty() {
            p.actions.push(Action::ForgetRecords { files });
        }
    }
    if opts.purge && whole {
        let cache = crate::platform::cache_dir(&target.host).filter(|_| target.root.is_none());
        for dir in [Some(target.state_dir()), cache].into_iter().flatten() {
            if std::fs::symlink_metadata(&dir).is_ok() {
                p.actions.push(Action::RemoveFolder { dir });
            }
        }
    }
    Ok(p)
}

fn guard_and_policy(target: &Target, p: &mut UninstallPlan) {
    for rec in crate::guard::record::all(target).unwrap_or_default() {
        if crate::guard::pin::state(target.os, &rec) == crate::guard::pin::PinState::Off {
            continue;
        }
        if target.elevated {
            p.manual.push(Manual::GuardAsUser { python: rec.python });
        } else {
            p.actions.push(Action::GuardOff {
                python: rec.python,
                prefix: rec.prefix,
            });
        }
    }
    if target.os == Os::Windows
        && let Ok(s) = crate::driverwatch::policy::status(target)
        && let Some(saved) = s.ours
    {
        if target.elevated {
            p.actions.push(Action::PolicyOff { to: saved.previous });
        } else {
            p.manual.push(Manual::PolicyAsAdmin);
        }
    }
}

/// An event of a run, for the front ends' progress.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Started { index: usize, total: usize },
    Finished { index: usize, total: usize },
}

/// What a run did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// Actions done by this run (not those an interrupted run had finished).
    pub done: usize,
    /// Files found changed while undoing (left, named).
    pub left: Vec<Left>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    plan: UninstallPlan,
}

fn journal_path(target: &Target) -> PathBuf {
    target.state_dir().join(JOURNAL)
}

/// The plan of an interrupted uninstall (written by us, judged whole), else None.
fn read_journal(target: &Target) -> Option<UninstallPlan> {
    let path = journal_path(target);
    let bytes = crate::state_file::read(&path).ok().flatten()?;
    if !crate::platform::written_by_us(&path, target.elevated).unwrap_or(false) {
        crate::state_file::set_aside(&path);
        return None;
    }
    match serde_json::from_slice::<Journal>(&bytes) {
        Ok(j) if j.plan.done.iter().all(|&i| i < j.plan.actions.len()) => Some(j.plan),
        _ => {
            crate::state_file::set_aside(&path);
            None
        }
    }
}

fn save_journal(target: &Target, plan: &UninstallPlan) -> Result<(), UninstallError> {
    let j = Journal { plan: plan.clone() };
    let path = journal_path(target);
    crate::state_file::write(&path, &serde_json::to_vec(&j).expect("serialisable"))
        .map_err(|e| UninstallError::io(&path, e))
}

/// The target's lock (the one installs take): one writer per target.
fn lock(target: &Target) -> Result<crate::lock::Lock, UninstallError> {
    let state = target
        .state()
        .map_err(|e| UninstallError::io(&target.state_dir(), e))?;
    let folder = target
        .root
        .clone()
        .unwrap_or_else(|| state.path().to_path_buf());
    let file = state.path().join(crate::lock::FILE);
    crate::lock::acquire(&folder, &file).map_err(|e| match e {
        crate::lock::LockError::Busy(b) => UninstallError::Busy(b),
        crate::lock::LockError::Io { path, detail } => {
            UninstallError::io(&path, std::io::Error::other(detail))
        }
        crate::lock::LockError::Cancelled => {
            UninstallError::io(&folder, std::io::Error::other("cancelled"))
        }
    })
}

/// Runs the plan: each action in order, journaled. Kill-safe: the next [`plan`] returns
/// this plan with what was done, and every action is idempotent.
pub fn execute(
    target: &Target,
    plan: &UninstallPlan,
    on_event: &mut dyn FnMut(Event),
) -> Result<Report, UninstallError> {
    let mut report = Report::default();
    if plan.nothing_to_do() {
        let _ = std::fs::remove_file(journal_path(target));
        return Ok(report);
    }
    let lock = lock(target)?;
    let mut plan = plan.clone();
    let total = plan.actions.len();
    save_journal(target, &plan)?;
    for index in 0..total {
        if plan.done.contains(&index) {
            continue;
        }
        on_event(Event::Started { index, total });
        crate::lock::test_pause(&format!("uninstall_{index}"));
        let action = plan.actions[index].clone();
        let purge =
            matches!(action, Action::RemoveFolder { ref dir } if *dir == target.state_dir());
        run_action(target, &action, &mut report)?;
        report.done += 1;
        on_event(Event::Finished { index, total });
        if purge {
            // The journal went with the folder: nothing is left to resume.
            continue;
        }
        plan.done.push(index);
        save_journal(target, &plan)?;
    }
    drop(lock);
    let _ = std::fs::remove_file(journal_path(target));
    if plan
        .actions
        .iter()
        .any(|a| matches!(a, Action::RemoveFolder { dir } if *dir == target.state_dir()))
    {
        // The lock file was the last of it (Windows deletes no open file).
        let _ = std::fs::remove_file(target.state_dir().join(crate::lock::FILE));
        let _ = std::fs::remove_dir(target.state_dir());
    }
    Ok(report)
}

fn run_action(target: &Target, a: &Action, report: &mut Report) -> Result<(), UninstallError> {
    match a {
        Action::RestoreCudnn { toolkit, .. } => {
            match crate::cudnn::uninstall_unchanged(toolkit) {
                Ok(u) => report
                    .left
                    .extend(u.left.into_iter().map(|path| Left::CudnnFile {
                        toolkit: toolkit.clone(),
                        path,
                    })),
                // Done already (a rerun after a kill between this and the journal).
                Err(crate::cudnn::CudnnError::NotInstalled { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Action::RemoveToolkit { dir, .. } => {
            // The record says what is ours; read again now (a rerun finds it gone: done).
            let paths = match crate::wheels::assemble::read_record(dir) {
                Ok(Some(r)) => r.paths.unwrap_or_default(),
                _ => Vec::new(),
            };
            if !paths.is_empty() {
                let r = toolkit::remove(dir, &paths).map_err(|e| UninstallError::io(dir, e))?;
                if !r.left.is_empty() {
                    report.left.push(Left::UserFiles {
                        dir: dir.clone(),
                        files: r.left,
                    });
                }
            }
            // What the cuDNN step leaves of ours in the folder: its lock file in
            // `.cuda-setup` (Windows keeps the file after the lock is released). Only a real
            // folder holding nothing else, then the toolkit folder when that left it empty.
            let meta = dir.join(crate::cudnn::txn::META);
            if std::fs::symlink_metadata(&meta).is_ok_and(|m| m.is_dir()) {
                // The lock file and its owner's companion (`lock.pid`), as the lock names them.
                let lock = meta.join(crate::lock::FILE);
                for f in [crate::lock::pid_path(&lock), lock] {
                    if std::fs::symlink_metadata(&f).is_ok_and(|m| m.is_file()) {
                        let _ = std::fs::remove_file(&f);
                    }
                }
                let _ = std::fs::remove_dir(&meta);
                let _ = std::fs::remove_dir(dir);
            }
        }
        Action::RestoreVar { name, to } => {
            env::set_windows_var(target, name, to.as_deref())?;
        }
        Action::RemovePathEntries { name, entries } => {
            let now = env::windows_var(target, name).unwrap_or_default();
            let new = env_undo::path_without(&now, entries);
            if new != now {
                env::set_windows_var(target, name, Some(&new))?;
            }
        }
        Action::RemoveProfileBlock { file } => {
            env_undo::remove_profile_block(target, file)
                .map_err(|e| UninstallError::io(file, e))?;
        }
        Action::GuardOff { python, .. } => {
            crate::guard::off(target, python)?;
        }
        Action::PolicyOff { .. } => {
            crate::driverwatch::policy::off(target)?;
        }
        Action::RemoveEntry { id, entry, exe } => {
            if let Some(key) = entry {
                installs::remove_entry(target, key)
                    .map_err(|e| UninstallError::io(Path::new(key), e))?;
            }
            if let Some(exe) = exe {
                installs::remove_exe(exe).map_err(|e| UninstallError::io(exe, e))?;
            }
            installs::remove_record(target, id)
                .map_err(|e| UninstallError::io(&target.state_dir(), e))?;
        }
        Action::ForgetRecords { files } => {
            let state = target
                .state()
                .map_err(|e| UninstallError::io(&target.state_dir(), e))?;
            for f in files {
                state
                    .remove(f)
                    .map_err(|e| UninstallError::io(&state.display(f), e))?;
            }
        }
        Action::ForgetEnvChanges { dir } => {
            env_undo::forget_dir(target, dir)
                .map_err(|e| UninstallError::io(&target.state_dir().join(ENV_RECORD), e))?;
        }
        Action::RemoveFolder { dir } => {
            remove_folder(target, dir).map_err(|e| UninstallError::io(dir, e))?;
        }
    }
    Ok(())
}

/// Everything in `dir` (links removed as links), but the lock we hold; then the folder.
fn remove_folder(target: &Target, dir: &Path) -> std::io::Result<()> {
    let d = match crate::place::Dir::open(dir) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let names: Vec<std::ffi::OsString> = d
        .handle()
        .entries()?
        .flatten()
        .map(|e| e.file_name())
        .collect();
    let ours = *dir == target.state_dir();
    for n in names {
        if ours && n == crate::lock::FILE {
            continue;
        }
        d.remove_all(&n)?;
    }
    drop(d);
    if !ours {
        let _ = std::fs::remove_dir(dir);
    }
    Ok(())
}
