//! Guard the verified PyTorch (#33): a later `pip install` that pins another torch, or a
//! `-i` mirror with only the CPU build, silently replaces a working CUDA build. After a
//! build is verified on the GPU (our pip step then the doctor, or the doctor alone) it is
//! recorded per interpreter; the pin (`pin.rs`) makes pip in that environment refuse to
//! replace it, with its own conflict message; a swap that happened anyway is told in
//! plain words and put back (`restore.rs`).
//!
//! One function per decision, for both front ends: [`status`], [`on`], [`off`],
//! [`swapped`], [`restore_plan`] / [`restore`]; the engine's hooks: [`lift_for_pip`],
//! [`check_wheel_args`], [`note_installed`] (the pip step) and [`after_doctor`].

pub mod pin;
pub mod pipconf;
pub mod probe;
pub mod record;
pub mod restore;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::message::Message;
use crate::msg;
use crate::target::Target;
use crate::verify::doctor::{self, DoctorReport, FindingKind};

pub use pin::{PinState, Places};
pub use pipconf::Ignored;
pub use probe::{Env, EnvKind};
pub use record::{Installed, Record, VerifiedBy, Wheel};
pub use restore::{CacheState, Restore};

/// Why a guard action did not happen.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GuardError {
    #[error("{}: no torch build has been verified on the GPU for this interpreter", .python.display())]
    NotVerified { python: PathBuf },
    #[error("{}: the installed torch ({}) is not the verified build ({recorded})", .python.display(), .installed.as_deref().unwrap_or("none"))]
    Differs {
        python: PathBuf,
        recorded: String,
        installed: Option<String>,
    },
    #[error("{}: could not ask the interpreter: {detail}", .python.display())]
    Probe { python: PathBuf, detail: String },
    /// A link (or a FIFO, a folder) where one of our files goes: never followed.
    #[error("{}: a link or something other than a plain file is there; not followed", .path.display())]
    Link { path: PathBuf },
    #[error("{}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: crate::error::Cause,
    },
    #[error(transparent)]
    Record(crate::state_file::Rejected),
    #[error("{}: SHA-256 {actual}, not the recorded {expected}; not installed", .file.display())]
    WheelHash {
        file: PathBuf,
        expected: String,
        actual: String,
    },
    #[error("pip failed (exit code {})", .code.map_or("none".into(), |c| c.to_string()))]
    Pip { code: Option<i32> },
    /// An elevated run only records: what it wrote or ran in the user's environment would
    /// act on that interpreter's word with our rights, and leave files the user cannot
    /// change.
    #[error("running as administrator: the guard is not changed and pip is not run")]
    Elevated,
    /// The interpreter named a prefix that does not hold it (`probe::check`).
    #[error("{}: its sys.prefix {} does not hold it; nothing written there", .python.display(), .prefix.display())]
    Prefix { python: PathBuf, prefix: PathBuf },
    /// A leftover of an earlier write that is not a plain file or a link (a folder): not
    /// ours to remove.
    #[error("{}: left by an earlier write, not a plain file; not removed", .path.display())]
    Leftover { path: PathBuf },
}

impl GuardError {
    pub fn io(path: &Path, e: std::io::Error) -> Self {
        GuardError::Io {
            path: path.to_path_buf(),
            source: crate::error::cause(e),
        }
    }

    /// What happened, in plain words.
    pub fn message(&self) -> Message {
        match self {
            GuardError::NotVerified { python } => {
                msg!("guard_err_not_verified", python = python.display())
            }
            GuardError::Differs {
                recorded,
                installed,
                ..
            } => msg!(
                "guard_err_differs",
                recorded = recorded,
                installed = installed.as_deref().unwrap_or("-")
            ),
            GuardError::Probe { python, .. } => {
                msg!("guard_err_probe", python = python.display())
            }
            GuardError::Link { path } => msg!("guard_err_link", path = path.display()),
            GuardError::Io { path, .. } => msg!("guard_err_io", path = path.display()),
            GuardError::Record(r) => msg!("guard_err_record", path = r.file.display()),
            GuardError::WheelHash { file, .. } => {
                msg!("guard_err_wheel_hash", file = file.display())
            }
            GuardError::Pip { .. } => msg!("guard_err_pip"),
            GuardError::Elevated => msg!("guard_err_elevated"),
            GuardError::Prefix { python, prefix } => msg!(
                "guard_err_prefix",
                python = python.display(),
                prefix = prefix.display()
            ),
            GuardError::Leftover { path } => msg!("guard_err_leftover", path = path.display()),
        }
    }

    /// What to do next (the command line's `hint:`).
    pub fn hint(&self, python: &Path) -> Message {
        let py = doctor::shell_quote(python);
        match self {
            GuardError::NotVerified { .. } => msg!("guard_hint_doctor_first", python = py),
            GuardError::Differs { .. } => msg!("guard_hint_differs", python = py),
            GuardError::Link { .. } => msg!("guard_hint_link"),
            GuardError::Elevated => msg!("guard_hint_elevated", python = py),
            GuardError::Prefix { .. } => msg!("guard_hint_prefix"),
            GuardError::Leftover { path } => {
                msg!("guard_hint_leftover", path = doctor::shell_quote(path))
            }
            GuardError::WheelHash { .. } | GuardError::Pip { .. } => {
                msg!("guard_hint_restore_index", python = py)
            }
            GuardError::Probe { .. } | GuardError::Io { .. } | GuardError::Record(_) => {
                msg!("guard_hint_retry")
            }
        }
    }
}

/// A companion of the verified torch (torchvision, torchaudio) that is no longer the
/// version recorded with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Replaced {
    pub name: String,
    pub recorded: String,
    /// None: no longer installed.
    pub installed: Option<String>,
}

impl Replaced {
    /// "torchvision 0.22.1+cu118 was replaced by 0.23.0."
    pub fn message(&self) -> Message {
        match &self.installed {
            Some(i) => msg!(
                "guard_swapped_companion",
                name = &self.name,
                recorded = &self.recorded,
                installed = i
            ),
            None => msg!(
                "guard_swapped_companion_removed",
                name = &self.name,
                recorded = &self.recorded
            ),
        }
    }

    /// `torchvision==0.22.1+cu118`: what puts it back.
    pub fn requirement(&self) -> String {
        format!("{}=={}", self.name, self.recorded)
    }
}

/// The verified build was replaced (or removed) after it was recorded: torch, or one of
/// the companions recorded with it (torchvision fails at import beside another torch).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Swap {
    pub python: PathBuf,
    /// torch as recorded, and as installed now (None: no longer installed); the same
    /// when only companions changed.
    pub recorded: String,
    pub installed: Option<String>,
    /// When the torch there now was installed (its dist-info folder's time).
    pub at: Option<u64>,
    /// The recorded companions that changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub companions: Vec<Replaced>,
}

impl Swap {
    /// Whether torch itself was replaced (not only a companion).
    pub fn torch_changed(&self) -> bool {
        self.installed.as_deref() != Some(self.recorded.as_str())
    }

    /// Every change, in words: torch's first when it changed, then each companion's.
    pub fn messages(&self) -> Vec<Message> {
        self.torch_changed()
            .then(|| self.torch_message())
            .into_iter()
            .chain(self.companions.iter().map(Replaced::message))
            .collect()
    }

    /// The change in one sentence (torch's when it changed, else the first companion's).
    pub fn message(&self) -> Message {
        match self.companions.first() {
            Some(c) if !self.torch_changed() => c.message(),
            _ => self.torch_message(),
        }
    }

    /// "torch 2.7.1+cu118 was replaced by 2.8.0+cpu on 2025-12-04 by another install."
    fn torch_message(&self) -> Message {
        let date = self.at.map(|s| {
            let t = crate::units::local_time(s);
            t.split(' ').next().unwrap_or(&t).to_string()
        });
        match (&self.installed, date) {
            (Some(i), Some(d)) => msg!(
                "guard_swapped",
                recorded = &self.recorded,
                installed = i,
                date = d
            ),
            (Some(i), None) => msg!(
                "guard_swapped_undated",
                recorded = &self.recorded,
                installed = i
            ),
            (None, _) => msg!("guard_swapped_removed", recorded = &self.recorded),
        }
    }

    /// The command that puts the verified build back.
    pub fn command(&self) -> String {
        format!(
            "cuda-setup guard restore --python {}",
            doctor::shell_quote(&self.python)
        )
    }
}

/// Whether `env`'s torch, and the companions recorded with it, are still `rec`'s.
pub fn swapped(rec: &Record, env: &Env) -> Option<Swap> {
    let companions: Vec<Replaced> = rec
        .companions
        .iter()
        .filter(|(name, v)| env.companions.get(*name) != Some(*v))
        .map(|(name, v)| Replaced {
            name: name.clone(),
            recorded: v.clone(),
            installed: env.companions.get(name).cloned(),
        })
        .collect();
    let torch = env.torch.as_deref() != Some(rec.torch.as_str());
    (torch || !companions.is_empty()).then(|| Swap {
        python: rec.python.clone(),
        recorded: rec.torch.clone(),
        installed: env.torch.clone(),
        at: env.torch_installed_at,
        companions,
    })
}

/// Everything `guard status` says about one interpreter.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub python: PathBuf,
    pub record: Option<Record>,
    /// The folder the record came from (`crate::records`): `machine` — an elevated run's,
    /// read by this one; `user` — only reported by this elevated run (no restore planned).
    pub origin: Option<crate::records::Origin>,
    pub env: Option<Env>,
    /// Why the interpreter could not be asked.
    pub probe_error: Option<String>,
    pub pin: PinState,
    pub places: Option<Places>,
    /// The installed torch is the recorded build.
    pub intact: Option<bool>,
    pub swap: Option<Swap>,
    /// How to put it back (only when swapped, and not for an elevated run).
    pub restore: Option<Restore>,
    /// This run is elevated: it reports the guard, never changes it.
    pub elevated: bool,
    /// Why pip ignores the pin although it is in place (this run's environment).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignored: Option<Ignored>,
    /// What the front ends print, in order.
    pub lines: Vec<Message>,
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn date(secs: u64) -> String {
    crate::units::local_time(secs)
}

/// What the wizard says of an interpreter's guard, and whether its switch can be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// No build verified on the GPU here: nothing to guard yet; `then`: what happens once
    /// one is.
    NotVerified {
        then: Then,
    },
    /// An elevated run: the guard is only reported (its switch is the user's run's).
    Elevated {
        torch: String,
    },
    /// The interpreter could not be asked.
    Unknown,
    /// The verified build was replaced: put it back first.
    Swapped(Swap),
    On {
        torch: String,
    },
    /// `system`: a system Python (turning it on asks first).
    Off {
        torch: String,
        system: bool,
    },
    /// Half in place: turning it on mends it.
    Broken {
        torch: String,
    },
}

/// What the doctor does with a build once it works on the GPU (the core's policy in
/// `after_doctor`), so the wizard promises only that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    /// A venv or conda env: guarded.
    Guarded,
    /// A system Python: recorded, guarded once the user agrees.
    Asks,
    /// An elevated run: recorded only.
    Recorded,
    /// The interpreter could not be asked.
    Unknown,
}

impl Shown {
    /// The switch can be used (on, off, or mended).
    pub fn switchable(&self) -> bool {
        matches!(
            self,
            Shown::On { .. } | Shown::Off { .. } | Shown::Broken { .. }
        )
    }
}

impl Status {
    pub fn shown(&self) -> Shown {
        let Some(rec) = &self.record else {
            let then = match &self.env {
                _ if self.elevated => Then::Recorded,
                None => Then::Unknown,
                Some(e) if e.kind == EnvKind::System => Then::Asks,
                Some(_) => Then::Guarded,
            };
            return Shown::NotVerified { then };
        };
        if let Some(s) = &self.swap {
            return Shown::Swapped(s.clone());
        }
        if self.env.is_none() {
            return Shown::Unknown;
        }
        let torch = rec.torch.clone();
        if self.elevated {
            return Shown::Elevated { torch };
        }
        match self.pin {
            PinState::On => Shown::On { torch },
            PinState::Off => Shown::Off {
                torch,
                system: self.env.as_ref().is_some_and(|e| e.kind == EnvKind::System),
            },
            PinState::Broken => Shown::Broken { torch },
        }
    }
}

/// The record, the pin, and whether the installed torch is still the verified build.
pub fn status(target: &Target, python: &Path) -> Result<Status, GuardError> {
    let (rec, origin) = record::seen(target, python)?.unzip();
    let (env, probe_error) = match probe::probe(&target.host, python) {
        Ok(e) => (Some(e), None),
        Err(GuardError::Probe { detail, .. }) => (None, Some(detail)),
        Err(e) => return Err(e),
    };
    let py = doctor::shell_quote(python);
    let mut lines = Vec::new();
    let Some(rec) = rec else {
        lines.push(msg!("guard_status_none", python = &py));
        return Ok(Status {
            python: python.to_path_buf(),
            record: None,
            origin: None,
            env,
            probe_error,
            pin: PinState::Off,
            places: None,
            intact: None,
            swap: None,
            restore: None,
            elevated: target.elevated,
            ignored: None,
            lines,
        });
    };
    let pin = pin::state(target.os, &rec);
    let places = pin::places(target.os, &rec.prefix);
    lines.push(match rec.by {
        VerifiedBy::Install => msg!(
            "guard_status_record_install",
            torch = &rec.torch,
            variant = &rec.variant,
            date = date(rec.verified_at)
        ),
        VerifiedBy::Doctor => msg!(
            "guard_status_record_doctor",
            torch = &rec.torch,
            variant = &rec.variant,
            date = date(rec.verified_at)
        ),
    });
    if origin == Some(crate::records::Origin::Machine) {
        lines.push(msg!(
            "records_guard_from_machine",
            folder = target.other_state_dir().display()
        ));
    }
    if let Some(w) = &rec.wheel {
        lines.push(msg!(
            "guard_status_wheel",
            file = &w.file,
            sha256 = &w.sha256
        ));
    }
    lines.push(match pin {
        PinState::On => msg!(
            "guard_status_on",
            config = places.config.display(),
            file = places.constraints.display()
        ),
        PinState::Off if rec.env == EnvKind::System => msg!(
            "guard_status_off_system",
            prefix = rec.prefix.display(),
            python = &py
        ),
        PinState::Off => msg!("guard_status_off", python = &py),
        PinState::Broken => msg!("guard_status_broken", python = &py),
    });
    // pip's environment can switch the pin off whatever its file says: said right after.
    let ignored = (pin != PinState::Off)
        .then(|| pipconf::Outside::read(&target.host, target.os).ignored(&target.host))
        .flatten();
    if let Some(i) = &ignored {
        lines.push(i.message(&rec.torch, &places.constraints));
    }
    let swap = env.as_ref().and_then(|e| swapped(&rec, e));
    let intact = env.as_ref().map(|_| swap.is_none());
    let acts = origin.is_none_or(crate::records::Origin::acts);
    // A record this run may not act on plans no restore (it would copy and hash a wheel
    // on that record's word); nor does an elevated run, which never runs that pip.
    let restore = swap
        .as_ref()
        .filter(|_| acts && !target.elevated)
        .map(|s| restore::plan(target, &rec, Some(s)));
    match (&swap, &env) {
        (Some(s), _) if !acts => {
            lines.extend(s.messages());
            lines.push(msg!("records_guard_user_record", command = s.command()));
        }
        (Some(s), _) if target.elevated => {
            lines.extend(s.messages());
            lines.push(msg!("guard_status_elevated_restore", command = s.command()));
        }
        (Some(s), _) => {
            lines.extend(s.messages());
            lines.push(msg!("guard_status_restore", command = s.command()));
        }
        (None, Some(_)) => lines.push(msg!("guard_status_intact", torch = &rec.torch)),
        (None, None) => lines.push(msg!("guard_err_probe", python = python.display())),
    }
    if pin == PinState::On {
        lines.push(msg!(
            "guard_status_uv",
            file = doctor::shell_quote(&places.constraints)
        ));
    }
    if target.elevated && swap.is_none() {
        lines.push(msg!("guard_status_elevated", python = &py));
    }
    Ok(Status {
        python: python.to_path_buf(),
        record: Some(rec),
        origin,
        env,
        probe_error,
        pin,
        places: Some(places),
        intact,
        swap,
        restore,
        elevated: target.elevated,
        ignored,
        lines,
    })
}

impl Status {
    /// Why pip ignores the pin, in words (the wizard's warning under the switch).
    pub fn ignored_message(&self) -> Option<Message> {
        let (i, rec, places) = (
            self.ignored.as_ref()?,
            self.record.as_ref()?,
            self.places.as_ref()?,
        );
        Some(i.message(&rec.torch, &places.constraints))
    }
}

/// What `on` did.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum OnOutcome {
    /// The pin is in place (written now, or already).
    Pinned { places: Places, written: bool },
    /// A system Python's prefix: written only once the user agrees (`confirmed`); what
    /// would be written where.
    NeedsConfirmation { prefix: PathBuf, places: Places },
}

impl OnOutcome {
    pub fn message(&self) -> Message {
        match self {
            OnOutcome::Pinned {
                places,
                written: true,
            } => msg!(
                "guard_on_done",
                config = places.config.display(),
                file = places.constraints.display()
            ),
            OnOutcome::Pinned { places, .. } => {
                msg!("guard_on_already", config = places.config.display())
            }
            OnOutcome::NeedsConfirmation { prefix, .. } => {
                msg!("guard_on_confirm", prefix = prefix.display())
            }
        }
    }
}

/// Pins the recorded build. Refused for an interpreter we did not verify, or whose torch
/// is no longer the verified one, and in an elevated run; a system Python's prefix (or one
/// whose venv or conda marker is missing) needs `confirmed`.
pub fn on(target: &Target, python: &Path, confirmed: bool) -> Result<OnOutcome, GuardError> {
    if target.elevated {
        return Err(GuardError::Elevated);
    }
    let rec = record::find(target, python)?.ok_or_else(|| GuardError::NotVerified {
        python: python.to_path_buf(),
    })?;
    let env = probe::probe(&target.host, python)?;
    if let Some(s) = swapped(&rec, &env).filter(Swap::torch_changed) {
        return Err(GuardError::Differs {
            python: python.to_path_buf(),
            recorded: s.recorded,
            installed: s.installed,
        });
    }
    // The prefix as the interpreter says it now (a moved venv), once it holds the
    // interpreter; its kind as the prefix's own marker has it.
    let kind = probe::check(python, &env.prefix, env.kind)?;
    let rec = Record {
        prefix: env.prefix.clone(),
        env: kind,
        lifted: false,
        ..rec
    };
    if pin::state(target.os, &rec) == PinState::On {
        return Ok(OnOutcome::Pinned {
            places: pin::places(target.os, &rec.prefix),
            written: false,
        });
    }
    if kind == EnvKind::System && !confirmed {
        return Ok(OnOutcome::NeedsConfirmation {
            places: pin::places(target.os, &rec.prefix),
            prefix: rec.prefix,
        });
    }
    let places = pin::write(target.os, &rec, python, &outside(target))?;
    record::put(target, rec)?;
    Ok(OnOutcome::Pinned {
        places,
        written: true,
    })
}

/// What `off` did.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum OffOutcome {
    Removed { places: Places },
    WasOff,
}

impl OffOutcome {
    pub fn message(&self) -> Message {
        match self {
            OffOutcome::Removed { places } => {
                msg!("guard_off_done", config = places.config.display())
            }
            OffOutcome::WasOff => msg!("guard_off_already"),
        }
    }
}

/// Lifts the pin: our lines out of pip's configuration, our constraints file removed.
/// The record stays (status still tells a swap), marked lifted: the doctor does not pin
/// this interpreter again until `on`.
/// Refused in an elevated run.
pub fn off(target: &Target, python: &Path) -> Result<OffOutcome, GuardError> {
    if target.elevated {
        return Err(GuardError::Elevated);
    }
    let rec = record::find(target, python)?;
    let (prefix, kind) = match &rec {
        Some(r) => (r.prefix.clone(), r.env),
        None => {
            let e = probe::probe(&target.host, python)?;
            (e.prefix, e.kind)
        }
    };
    probe::check(python, &prefix, kind)?;
    let removed = pin::remove(target.os, &prefix)?;
    if let Some(r) = rec.filter(|r| !r.lifted) {
        record::put(target, Record { lifted: true, ..r })?;
    }
    if removed {
        Ok(OffOutcome::Removed {
            places: pin::places(target.os, &prefix),
        })
    } else {
        Ok(OffOutcome::WasOff)
    }
}

/// How to put the verified build back into `python`. Refused in an elevated run: pip
/// as administrator in the user's environment leaves files the user's pip cannot replace.
pub fn restore_plan(target: &Target, python: &Path) -> Result<(Record, Restore), GuardError> {
    if target.elevated {
        return Err(GuardError::Elevated);
    }
    let rec = record::find(target, python)?.ok_or_else(|| GuardError::NotVerified {
        python: python.to_path_buf(),
    })?;
    let env = probe::probe(&target.host, python)?;
    let plan = restore::plan(target, &rec, swapped(&rec, &env).as_ref());
    Ok((rec, plan))
}

/// Runs `plan` (pip in `python`), each line of pip's output to `on_line`.
pub fn restore(
    target: &Target,
    python: &Path,
    rec: &Record,
    plan: &Restore,
    on_line: &mut dyn FnMut(String),
) -> Result<(), GuardError> {
    if target.elevated {
        return Err(GuardError::Elevated);
    }
    let Some(args) = plan.args() else {
        return Ok(());
    };
    restore::check_args(rec, args)?;
    let mut cmd = std::process::Command::new(python);
    cmd.args(["-m", "pip", "install"])
        .args(crate::proxy::pip_args())
        .args(args);
    for (k, v) in lift_for_pip(target, python) {
        cmd.env(k, v);
    }
    let finished = crate::platform::run_long(
        cmd,
        std::time::Duration::from_secs(3600),
        &|| false,
        on_line,
    )
    .map_err(|e| GuardError::Io {
        path: python.to_path_buf(),
        source: crate::error::cause(e),
    })?;
    match finished {
        crate::platform::Finished::Exited(Some(0)) => Ok(()),
        crate::platform::Finished::Exited(code) => Err(GuardError::Pip { code }),
        _ => Err(GuardError::Pip { code: None }),
    }
}

// ---- the engine's hooks ----

/// pip's configuration files other than the environment's, as this run's pip reads them.
fn outside(target: &Target) -> pipconf::Outside {
    pipconf::Outside::read(&target.host, target.os)
}

/// The environment our own pip call gets so that our pin does not refuse our own change
/// of torch: `PIP_CONSTRAINT` (which overrides pip's configuration files) naming the
/// constraint files pip would use without ours (the site file's own, else the user's or
/// the machine's files', `pipconf`) and an empty one of ours. Nothing when no pin of ours is
/// there, or when the user's environment already sets `PIP_CONSTRAINT`.
pub fn lift_for_pip(target: &Target, python: &Path) -> Vec<(String, String)> {
    if target.host.var("PIP_CONSTRAINT").is_some() {
        return Vec::new();
    }
    let prefix = match record::find(target, python) {
        Ok(Some(r)) => r.prefix,
        _ => return Vec::new(),
    };
    if !pin::config_names_ours(target.os, &prefix) {
        return Vec::new();
    }
    let Ok(empty) = record::lift_file(target) else {
        return Vec::new();
    };
    let mut files = pin::user_constraints(target.os, &prefix, &outside(target));
    files.push(pin::pip_value(&empty));
    vec![("PIP_CONSTRAINT".into(), files.join(" "))]
}

/// Before our pip installs `args`: a wheel our record names must still hash to the
/// recorded SHA-256.
pub fn check_wheel_args(target: &Target, python: &Path, args: &[String]) -> Result<(), GuardError> {
    match record::find(target, python) {
        Ok(Some(rec)) => restore::check_args(&rec, args),
        _ => Ok(()),
    }
}

/// After our pip step installed torch `version` from `index_url` into `python` (the wheel
/// our engine fetched, when it did): noted until the doctor verifies it.
pub fn note_installed(
    target: &Target,
    python: &Path,
    version: &str,
    index_url: &str,
    wheel: Option<Wheel>,
) {
    let installed = Installed {
        python: python.to_path_buf(),
        version: version.to_string(),
        index_url: index_url.to_string(),
        wheel,
        at: now(),
    };
    if let Err(e) = record::set_pending(target, python, Some(installed)) {
        tracing::warn!(error = %crate::error::chain(&e), "guard: the install was not noted");
    }
}

/// What [`after_doctor`] did.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum AfterDoctor {
    Nothing,
    /// A build verified on the GPU, recorded, the pin left off: the user lifted it here,
    /// or (`system`: its prefix) a system Python, which is pinned only once the user agrees.
    Recorded {
        torch: String,
        system: Option<PathBuf>,
    },
    /// Recorded by an elevated run, which writes nothing into the user's environment: the
    /// user's own run guards it (`guard on`, which also moves a pin left on an older build).
    RecordedOnly {
        torch: String,
    },
    /// Recorded and pinned (a venv or conda env; for an upgrade, the pin moved to it).
    Pinned {
        torch: String,
        places: Places,
    },
    /// The recorded build was replaced.
    Swapped(Swap),
    Failed {
        error: String,
    },
}

fn verified(report: &DoctorReport) -> Option<&str> {
    let t = report.torch.as_ref().filter(|t| !t.is_cpu_build())?;
    report
        .findings
        .iter()
        .any(|f| f.kind == FindingKind::GpuCheckOk)
        .then_some(t.version.as_str())
}

/// Whether our noted install is `torch` (`2.7.1+cu118` from `…/whl/cu118`).
fn is_ours(noted: &Installed, torch: &str) -> bool {
    let (version, local) = record::split_version(torch);
    version == noted.version
        && local.is_none_or(|l| noted.index_url.trim_end_matches('/').ends_with(&l))
}

/// After the doctor examined `report.python`: a build verified on the GPU — ours, just
/// installed, or one found there — is recorded and, in a venv or conda env, pinned (the
/// pin moves with an upgrade made through cuda-setup); a system Python's prefix is shared,
/// so there it is only recorded and the note asks; where the user lifted the guard it
/// stays lifted. A recorded build found replaced is told as a finding. The doctor's
/// findings gain a note saying which.
pub fn after_doctor(target: &Target, report: &mut DoctorReport) -> AfterDoctor {
    let Some(python) = report.python.clone() else {
        return AfterDoctor::Nothing;
    };
    let outcome = match judge(target, &python, report) {
        Ok(o) => o,
        Err(e) => AfterDoctor::Failed {
            error: crate::error::chain(&e),
        },
    };
    let py = doctor::shell_quote(&python);
    let note = match &outcome {
        AfterDoctor::Recorded {
            torch,
            system: None,
        } => Some((
            FindingKind::Guard,
            msg!("guard_doctor_recorded", torch = torch, python = &py),
            None,
        )),
        AfterDoctor::Recorded {
            torch,
            system: Some(prefix),
        } => Some((
            FindingKind::Guard,
            msg!(
                "guard_doctor_recorded_system",
                torch = torch,
                prefix = prefix.display(),
                python = &py
            ),
            None,
        )),
        AfterDoctor::RecordedOnly { torch } => Some((
            FindingKind::Guard,
            msg!(
                "guard_doctor_recorded_elevated",
                torch = torch,
                python = &py
            ),
            None,
        )),
        AfterDoctor::Pinned { torch, places } => Some((
            FindingKind::Guard,
            msg!(
                "guard_doctor_pinned",
                torch = torch,
                config = places.config.display(),
                python = &py
            ),
            None,
        )),
        AfterDoctor::Swapped(s) => Some((
            FindingKind::TorchSwapped,
            s.message(),
            Some(doctor::Fix {
                message: msg!("guard_fix_restore"),
                commands: vec![s.command()],
            }),
        )),
        AfterDoctor::Nothing | AfterDoctor::Failed { .. } => None,
    };
    if let Some((kind, message, fix)) = note {
        // Right after the interpreter's own line: it says what happened to it.
        let at = report.findings.len().min(1);
        report.findings.insert(
            at,
            doctor::Finding {
                kind,
                severity: doctor::Severity::Info,
                message,
                fix,
            },
        );
    }
    outcome
}

fn judge(target: &Target, python: &Path, report: &DoctorReport) -> Result<AfterDoctor, GuardError> {
    let rec = record::find(target, python)?;
    // A note older than the record was already verified (the note may sit in the
    // machine's folder, which this run does not clear).
    let noted = record::pending(target, python)
        .filter(|n| rec.as_ref().is_none_or(|r| n.at > r.verified_at));
    let Some(torch) = verified(report) else {
        // Not working on the GPU: only a recorded build that is gone is worth a word (an
        // elevated run tells the user's record too: telling runs nothing on its word but
        // the interpreter this doctor was asked to examine).
        let Some((rec, _)) = record::seen(target, python)? else {
            return Ok(AfterDoctor::Nothing);
        };
        let installed = report.torch.as_ref().map(|t| t.version.as_str());
        if installed == Some(rec.torch.as_str()) {
            return Ok(AfterDoctor::Nothing);
        }
        let env = probe::probe(&target.host, python)?;
        return Ok(swapped(&rec, &env).map_or(AfterDoctor::Nothing, AfterDoctor::Swapped));
    };
    let ours = noted.as_ref().filter(|n| is_ours(n, torch));
    let pinned_before = rec
        .as_ref()
        .is_some_and(|r| pin::state(target.os, r) != PinState::Off);
    match &rec {
        // Already recorded. Pinned now only where the policy pins and nothing is there
        // (a build recorded before the doctor pinned what it found).
        Some(r) if r.torch == torch && ours.is_none() => {
            // torch is the verified build; a torchvision/torchaudio replaced beside it is
            // still a swap (it fails at import), told here as repair and status tell it.
            if !r.companions.is_empty() {
                let env = probe::probe(&target.host, python)?;
                if let Some(s) = swapped(r, &env) {
                    return Ok(AfterDoctor::Swapped(s));
                }
            }
            if target.elevated
                || r.env == EnvKind::System
                || r.lifted
                || pin::state(target.os, r) != PinState::Off
            {
                return Ok(AfterDoctor::Nothing);
            }
            // A prefix without its marker counts as a system Python: asked, not pinned.
            if probe::check(python, &r.prefix, r.env)? == EnvKind::System {
                return Ok(AfterDoctor::Nothing);
            }
            let places = pin::write(target.os, r, python, &outside(target))?;
            return Ok(AfterDoctor::Pinned {
                torch: torch.to_string(),
                places,
            });
        }
        // Guarded, and replaced by something we did not install: tell, keep the record.
        Some(r) if r.torch != torch && pinned_before && ours.is_none() => {
            let env = probe::probe(&target.host, python)?;
            return Ok(swapped(r, &env).map_or(AfterDoctor::Nothing, AfterDoctor::Swapped));
        }
        _ => {}
    }
    let env = probe::probe(&target.host, python)?;
    if env.torch.as_deref() != Some(torch) {
        // The doctor and the metadata disagree (a torch on PYTHONPATH): record nothing.
        return Ok(AfterDoctor::Nothing);
    }
    // The prefix must hold the interpreter, the kind its marker (`probe::check`).
    let kind = probe::check(python, &env.prefix, env.kind)?;
    let lifted = rec.as_ref().is_some_and(|r| r.lifted);
    let (version, local) = record::split_version(torch);
    let variant = local.clone().unwrap_or_else(|| {
        report
            .torch
            .as_ref()
            .and_then(|t| t.cuda.clone())
            .map_or("pypi".into(), |c| format!("cuda {c}"))
    });
    let new = Record {
        python: python.to_path_buf(),
        prefix: env.prefix.clone(),
        env: kind,
        torch: torch.to_string(),
        version,
        index_url: ours
            .map(|n| n.index_url.clone())
            .or_else(|| record::index_for(local.as_deref())),
        local,
        variant,
        wheel: ours.and_then(|n| n.wheel.clone()),
        companions: env.companions.clone(),
        verified_at: now(),
        by: if ours.is_some() {
            VerifiedBy::Install
        } else {
            VerifiedBy::Doctor
        },
        lifted: lifted && !pinned_before,
    };
    // A pin in place moves; else a venv or conda env is pinned unless the user lifted it.
    // An elevated run writes nothing there: it only records.
    let pin_it = !target.elevated && (pinned_before || (kind != EnvKind::System && !new.lifted));
    let places = if pin_it {
        Some(pin::write(target.os, &new, python, &outside(target))?)
    } else {
        None
    };
    let system = (!pin_it && kind == EnvKind::System).then(|| new.prefix.clone());
    record::put(target, new)?;
    if noted.is_some() {
        record::set_pending(target, python, None)?;
    }
    Ok(match places {
        Some(places) => AfterDoctor::Pinned {
            torch: torch.to_string(),
            places,
        },
        None if target.elevated => AfterDoctor::RecordedOnly {
            torch: torch.to_string(),
        },
        None => AfterDoctor::Recorded {
            torch: torch.to_string(),
            system,
        },
    })
}

/// Every recorded interpreter whose build was replaced (the wizard's first page: no
/// wheel is hashed here). Interpreters that no longer exist or cannot be asked are
/// passed over.
pub fn swaps(target: &Target) -> Vec<(Swap, Record)> {
    let Ok(all) = record::all(target) else {
        return Vec::new();
    };
    all.into_iter()
        .filter(|r| r.python.is_file())
        .filter_map(|r| {
            let env = probe::probe(&target.host, &r.python).ok()?;
            Some((swapped(&r, &env)?, r))
        })
        .collect()
}

/// [`swaps`], each with how to put it back (repair's audit).
pub fn audit(target: &Target) -> Vec<(Swap, Record, Restore)> {
    swaps(target)
        .into_iter()
        .map(|(s, r)| {
            let plan = restore::plan(target, &r, Some(&s));
            (s, r, plan)
        })
        .collect()
}

#[cfg(test)]
mod tests;
