//! Windows' policy that keeps Windows Update from replacing drivers (#33): Group Policy
//! "Do not include drivers with Windows Updates", registry
//! `HKLM\SOFTWARE\Policies\Microsoft\Windows\WindowsUpdate`, DWORD
//! `ExcludeWUDriversInQualityUpdate`: 1 excludes Windows Update drivers, any other value
//! or none offers them (Microsoft Learn, "Configure Windows Update client policies",
//! https://learn.microsoft.com/windows/deployment/update/waas-configure-wufb#exclude-drivers-from-quality-updates;
//! Policy CSP Update/ExcludeWUDriversInQualityUpdate, added in Windows 10 1607, listed for
//! Pro, Enterprise and Education:
//! https://learn.microsoft.com/windows/client-management/mdm/policy-csp-update#excludewudriversinqualityupdate).
//! It also stops every other driver update from Windows Update.
//!
//! Off by default: `on` records what was there (absent, 0, 1, another number) in our state
//! folder, so `off` puts back exactly that. A `--root` sandbox has no registry: its
//! `.cuda-setup/windows-policy.json` stands for the key, as `windows-env.json` does for
//! the environment.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::compat::Os;
use crate::message::Message;
use crate::msg;
use crate::target::Target;

/// The key, under HKEY_LOCAL_MACHINE.
pub const KEY: &str = r"SOFTWARE\Policies\Microsoft\Windows\WindowsUpdate";
/// The DWORD value.
pub const VALUE: &str = "ExcludeWUDriversInQualityUpdate";
/// What was there before `on` (our state folder).
pub const RECORD: &str = "driver-policy.json";
/// A sandbox root's stand-in for the registry key (its state folder).
pub const SANDBOX_REGISTRY: &str = "windows-policy.json";

/// What `on` found, kept until `off` puts it back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Saved {
    pub format: u32,
    /// The value before (None: there was none).
    pub previous: Option<u32>,
    pub at: u64,
}

/// The policy now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PolicyStatus {
    /// The DWORD (None: not set).
    pub value: Option<u32>,
    /// Windows Update leaves drivers alone (value 1).
    pub on: bool,
    /// Set by cuda-setup: `off` restores `previous`.
    pub ours: Option<Saved>,
}

/// What `on` or `off` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum Change {
    /// Set to 1; `previous` recorded.
    TurnedOn { previous: Option<u32> },
    /// Already 1 (ours or not): nothing written.
    AlreadyOn,
    /// Put back what was there before `on` (None: removed).
    Restored { to: Option<u32> },
    /// Not set by cuda-setup: left as it is.
    NotOurs,
}

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("the Windows Update driver policy exists only on Windows")]
    NotWindows,
    #[error("changing the Windows Update driver policy needs administrator rights")]
    NeedsAdmin,
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Rejected(#[from] crate::state_file::Rejected),
}

impl PolicyError {
    /// The plain sentence and what to do (catalogue messages).
    pub fn said(&self) -> (Message, Message) {
        match self {
            PolicyError::NotWindows => (
                msg!("driverwatch_policy_not_windows"),
                msg!("driverwatch_policy_hint_not_windows"),
            ),
            PolicyError::NeedsAdmin => (
                msg!("driverwatch_policy_needs_admin"),
                msg!("driverwatch_policy_hint_admin"),
            ),
            PolicyError::Io { .. } | PolicyError::Rejected(_) => (
                msg!("driverwatch_policy_failed"),
                msg!("driverwatch_policy_hint_failed"),
            ),
        }
    }
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> PolicyError {
    let what = what.into();
    move |source| PolicyError::Io { what, source }
}

/// Where the value lives.
enum Store {
    /// A sandbox root: `<state>/windows-policy.json`, `{KEY: {VALUE: n}}`.
    Sandbox(std::path::PathBuf),
    #[cfg(windows)]
    Registry,
}

type SandboxKeys = BTreeMap<String, BTreeMap<String, u32>>;

fn hklm_key() -> String {
    format!(r"HKLM\{KEY}")
}

impl Store {
    fn of(target: &Target) -> Result<Store, PolicyError> {
        if target.os != Os::Windows {
            return Err(PolicyError::NotWindows);
        }
        if target.root.is_some() {
            // The registry is the machine's: the elevated run's folder, whoever asks.
            let machine = if target.elevated {
                target.state_dir()
            } else {
                target.other_state_dir()
            };
            return Ok(Store::Sandbox(machine.join(SANDBOX_REGISTRY)));
        }
        #[cfg(windows)]
        {
            Ok(Store::Registry)
        }
        #[cfg(not(windows))]
        Err(PolicyError::NotWindows)
    }

    fn sandbox_keys(path: &std::path::Path) -> Result<SandboxKeys, PolicyError> {
        match crate::state_file::read(path) {
            Ok(None) => Ok(SandboxKeys::new()),
            Ok(Some(b)) => serde_json::from_slice(&b).map_err(|e| {
                crate::state_file::Rejected::new(path, format!("not a registry record: {e}"))
                    .set_aside()
                    .into()
            }),
            Err(r) => Err(r.set_aside().into()),
        }
    }

    fn get(&self) -> Result<Option<u32>, PolicyError> {
        match self {
            Store::Sandbox(p) => Ok(Self::sandbox_keys(p)?
                .get(&hklm_key())
                .and_then(|k| k.get(VALUE).copied())),
            #[cfg(windows)]
            Store::Registry => {
                use winreg::RegKey;
                use winreg::enums::HKEY_LOCAL_MACHINE;
                match RegKey::predef(HKEY_LOCAL_MACHINE).open_subkey(KEY) {
                    Ok(k) => match k.get_value::<u32, _>(VALUE) {
                        Ok(v) => Ok(Some(v)),
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                        Err(e) => Err(io(format!("reading {}\\{VALUE}", hklm_key()))(e)),
                    },
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(io(format!("opening {}", hklm_key()))(e)),
                }
            }
        }
    }

    /// Sets (Some) or removes (None) the value.
    fn set(&self, target: &Target, v: Option<u32>) -> Result<(), PolicyError> {
        match self {
            Store::Sandbox(p) => {
                let mut keys = Self::sandbox_keys(p)?;
                let key = keys.entry(hklm_key()).or_default();
                match v {
                    Some(v) => {
                        key.insert(VALUE.into(), v);
                    }
                    None => {
                        key.remove(VALUE);
                    }
                }
                keys.retain(|_, k| !k.is_empty());
                let bytes = serde_json::to_vec_pretty(&keys).expect("serialisable");
                target
                    .state()
                    .and_then(|d| d.write_atomic(SANDBOX_REGISTRY, &bytes, true))
                    .map_err(io(p.display().to_string()))
            }
            #[cfg(windows)]
            Store::Registry => {
                use winreg::RegKey;
                use winreg::enums::HKEY_LOCAL_MACHINE;
                let _ = target;
                let hklm = RegKey::predef(HKEY_LOCAL_MACHINE);
                match v {
                    Some(v) => {
                        let (k, _) = hklm
                            .create_subkey(KEY)
                            .map_err(io(format!("opening {}", hklm_key())))?;
                        k.set_value(VALUE, &v)
                            .map_err(io(format!("setting {}\\{VALUE}", hklm_key())))
                    }
                    None => match hklm.open_subkey_with_flags(KEY, winreg::enums::KEY_SET_VALUE) {
                        Ok(k) => match k.delete_value(VALUE) {
                            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                                Err(io(format!("removing {}\\{VALUE}", hklm_key()))(e))
                            }
                            _ => Ok(()),
                        },
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                        Err(e) => Err(io(format!("opening {}", hklm_key()))(e)),
                    },
                }
            }
        }
    }
}

/// Our record of what was there before `on`; a link, or anything not ours, is refused
/// (set aside) and never followed.
fn saved(target: &Target) -> Result<Option<Saved>, PolicyError> {
    let path = target.state_dir().join(RECORD);
    match crate::state_file::read(&path) {
        Ok(None) => Ok(None),
        Ok(Some(b)) => match serde_json::from_slice::<Saved>(&b) {
            Ok(s) if s.format == 1 => Ok(Some(s)),
            _ => Err(
                crate::state_file::Rejected::new(&path, "not a policy record")
                    .set_aside()
                    .into(),
            ),
        },
        Err(r) => Err(r.set_aside().into()),
    }
}

/// Our record as `status` tells it: `on` runs elevated and records in the machine's
/// folder, so the user's run (the wizard's Repair page) reads that one too, read-only
/// (`crate::records`); the newer wins. Never the user's folder (`on` needs administrator
/// rights: a record there is not ours). `on`/`off` act only on [`saved`] (their own).
fn saved_seen(target: &Target) -> Result<Option<Saved>, PolicyError> {
    let mut all = Vec::new();
    for f in crate::records::read(target, RECORD, crate::records::Use::Act)? {
        match serde_json::from_slice::<Saved>(&f.bytes) {
            Ok(s) if s.format == 1 => all.push(s),
            _ => {
                let r = f.reject("not a policy record");
                if f.origin == crate::records::Origin::Own {
                    return Err(r.into());
                }
            }
        }
    }
    Ok(crate::records::newest(all, |s| s.at))
}

/// The policy's value, and whether we set it.
pub fn status(target: &Target) -> Result<PolicyStatus, PolicyError> {
    let value = Store::of(target)?.get()?;
    Ok(PolicyStatus {
        value,
        on: value == Some(1),
        ours: saved_seen(target)?,
    })
}

fn writable(target: &Target) -> Result<(), PolicyError> {
    if target.elevated {
        Ok(())
    } else {
        Err(PolicyError::NeedsAdmin)
    }
}

/// Turns the policy on (1), recording what was there first.
pub fn on(target: &Target) -> Result<Change, PolicyError> {
    let store = Store::of(target)?;
    writable(target)?;
    let previous = store.get()?;
    let ours = saved(target)?;
    if previous == Some(1) {
        return Ok(Change::AlreadyOn);
    }
    // Recorded before the value changes: a kill between leaves a record `off` can use.
    // A record already there keeps the first value seen (on, then someone set 0, then on).
    if ours.is_none() {
        let s = Saved {
            format: 1,
            previous,
            at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        };
        let bytes = serde_json::to_vec_pretty(&s).expect("serialisable");
        target
            .state()
            .and_then(|d| d.write_atomic(RECORD, &bytes, true))
            .map_err(io(target.state_dir().join(RECORD).display().to_string()))?;
    }
    store.set(target, Some(1))?;
    tracing::info!(previous = ?previous, "driver policy on");
    Ok(Change::TurnedOn { previous })
}

/// Puts back what `on` found; a policy we did not set is left as it is.
pub fn off(target: &Target) -> Result<Change, PolicyError> {
    let store = Store::of(target)?;
    writable(target)?;
    let Some(s) = saved(target)? else {
        return Ok(Change::NotOurs);
    };
    store.set(target, s.previous)?;
    target
        .state()
        .and_then(|d| d.remove(RECORD))
        .map_err(io(target.state_dir().join(RECORD).display().to_string()))?;
    tracing::info!(to = ?s.previous, "driver policy restored");
    Ok(Change::Restored { to: s.previous })
}

/// The offer's words: what it does, what else it stops, and its undo.
pub fn explanation() -> Message {
    msg!(
        "driverwatch_policy_explain",
        command_on = "cuda-setup driver-policy on",
        command_off = "cuda-setup driver-policy off"
    )
}

/// How the status reads.
pub fn describe(s: &PolicyStatus) -> Message {
    match (&s.value, &s.ours) {
        (Some(1), Some(_)) => msg!("driverwatch_policy_status_on_ours"),
        (Some(1), None) => msg!("driverwatch_policy_status_on_other"),
        (Some(v), _) => msg!("driverwatch_policy_status_off_value", value = v),
        (None, _) => msg!("driverwatch_policy_status_off"),
    }
}

/// What a change did, in words.
pub fn describe_change(c: &Change) -> Message {
    let shown = |v: &Option<u32>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
    match c {
        Change::TurnedOn { previous } => {
            msg!("driverwatch_policy_turned_on", previous = shown(previous))
        }
        Change::AlreadyOn => msg!("driverwatch_policy_already_on"),
        Change::Restored { to: None } => msg!("driverwatch_policy_restored_absent"),
        Change::Restored { to: Some(v) } => msg!("driverwatch_policy_restored_value", value = v),
        Change::NotOurs => msg!("driverwatch_policy_not_ours"),
    }
}
