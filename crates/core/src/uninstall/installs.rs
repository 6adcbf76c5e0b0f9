//! One record per install (`<state>/installs/<id>.json`), written when an install run
//! ends well, and on Windows its entry in "Apps & features" (the registry's `Uninstall`
//! key: HKLM when elevated, else HKCU; a `--root` sandbox's
//! `<state>/windows-uninstall.json` stands for it, as `windows-env.json` does for the
//! environment). The entry runs `cuda-setup uninstall --install-id <id>` from a copy of
//! the program in a folder of ours, so it keeps working after the download is deleted.
//!
//! Value names and types are Microsoft's ("Uninstall Registry Key",
//! https://learn.microsoft.com/windows/win32/msi/uninstall-registry-key): DisplayName,
//! DisplayVersion, Publisher, InstallDate (YYYYMMDD), InstallLocation, EstimatedSize
//! (DWORD, KB), UninstallString, QuietUninstallString, NoModify/NoRepair (DWORD 1).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::compat::Os;
use crate::plan::Plan;
use crate::steps::Step;
use crate::target::Target;
use crate::version::Version;

pub const FOLDER: &str = "installs";
/// The sandbox's stand-in for the registry's Uninstall keys (its state folder).
pub const SANDBOX_REGISTRY: &str = "windows-uninstall.json";
/// The key under HKLM / HKCU.
pub const UNINSTALL_KEY: &str = r"Software\Microsoft\Windows\CurrentVersion\Uninstall";
pub const PUBLISHER: &str = "cuda-setup";

/// How the toolkit got there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Assembled by us from NVIDIA's wheels: ours to remove.
    Wheels,
    /// NVIDIA's installer: NVIDIA's own uninstaller removes it.
    Installer,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstallRecord {
    pub format: u32,
    pub id: String,
    pub version: Version,
    pub toolkit: PathBuf,
    pub method: Method,
    /// Unix seconds.
    pub installed_at: u64,
    /// The Apps & features entry's key (`HKLM\…\Uninstall\cuda-setup-<id>`); None off
    /// Windows.
    #[serde(default)]
    pub entry: Option<String>,
    /// The copy of the program the entry runs.
    #[serde(default)]
    pub exe: Option<PathBuf>,
}

/// The id of an install of `version`: one per toolkit version and kind of run (the
/// machine's state folder and the user's each hold their own).
pub fn id_for(version: &Version) -> String {
    format!("cuda-{}", version.major_minor())
}

/// A typed registry value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RegValue {
    Dword(u32),
    Sz(String),
}

/// `HKLM` when elevated, else `HKCU`.
fn hive(target: &Target) -> &'static str {
    if target.elevated { "HKLM" } else { "HKCU" }
}

pub fn entry_key(target: &Target, id: &str) -> String {
    format!(r"{}\{UNINSTALL_KEY}\cuda-setup-{id}", hive(target))
}

/// The records of this run's kind, judged one by one (a bad one is skipped).
pub fn all(target: &Target) -> Vec<InstallRecord> {
    let Ok(state) = target.state() else {
        return Vec::new();
    };
    let Ok(dir) = state.sub(FOLDER, false) else {
        return Vec::new();
    };
    let Ok(entries) = dir.handle().entries() else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
        .iter()
        .filter_map(|n| dir.read(n, 1 << 20).ok().flatten())
        .filter_map(|b| serde_json::from_slice::<InstallRecord>(&b).ok())
        .filter(|r| crate::safe_path::file_name(&r.id).is_ok())
        .collect()
}

pub fn remove_record(target: &Target, id: &str) -> std::io::Result<()> {
    let state = target.state()?;
    match state.sub(FOLDER, false) {
        Ok(d) => {
            d.remove(format!("{id}.json"))?;
            drop(d);
            // The folder too when it is empty (the last install's record).
            let _ = state.handle().remove_dir(FOLDER);
            Ok(())
        }
        Err(_) => Ok(()),
    }
}

/// The toolkit a plan installs, and how (None: the plan installs none — repair's fixes,
/// cuDNN or pip alone: their changes are in the other records, undone by a whole
/// uninstall, but they are no install of their own in Apps & features).
fn toolkit_of(plan: &Plan) -> Option<(PathBuf, Version, Method)> {
    plan.steps.iter().find_map(|s| match s {
        Step::AssembleToolkit(a) => Some((a.dir.clone(), a.version.clone(), Method::Wheels)),
        Step::InstallToolkit(t) => Some((t.dir.clone(), t.version.clone(), Method::Installer)),
        _ => None,
    })
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `YYYYMMDD` of a Unix time (UTC), as InstallDate wants it.
pub fn yyyymmdd(secs: u64) -> String {
    // Howard Hinnant's days-to-civil.
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}{m:02}{d:02}")
}

/// Bytes under `dir`, links not followed (bounded: a toolkit has some thousands of files).
fn size_of(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > 200_000 {
                return total;
            }
            let Ok(m) = std::fs::symlink_metadata(e.path()) else {
                continue;
            };
            if m.is_dir() {
                stack.push(e.path());
            } else if m.is_file() {
                total += m.len();
            }
        }
    }
    total
}

/// Where the program keeps a copy of itself for the entry's command: a folder of ours
/// (`%ProgramFiles%\cuda-setup` when elevated, else `%LOCALAPPDATA%\cuda-setup\bin`).
pub fn stable_exe(target: &Target) -> PathBuf {
    let dir = if target.elevated {
        target.program_files().join("cuda-setup")
    } else {
        target.state_dir().join("bin")
    };
    dir.join("cuda-setup.exe")
}

/// Copies the running program to [`stable_exe`] (a sandbox root gets a hard link where it
/// can: the same bytes, no hundred megabytes per test). Never through a link at the name.
fn copy_self(target: &Target, to: &Path) -> std::io::Result<()> {
    let me = std::env::current_exe()?;
    if std::fs::canonicalize(&me).ok() == std::fs::canonicalize(to).ok() {
        return Ok(()); // Running from it already.
    }
    let folder = to.parent().expect("a file in a folder");
    let dir = crate::place::Dir::create(folder)?;
    let name = to.file_name().expect("a name");
    let tmp = format!("{}.tmp-{}", name.to_string_lossy(), std::process::id());
    let _ = dir.remove(&tmp);
    let linked = target.root.is_some() && std::fs::hard_link(&me, dir.display(&tmp)).is_ok();
    if !linked {
        let mut out = dir.create_new(&tmp)?;
        std::io::copy(&mut std::fs::File::open(&me)?, &mut out)?;
        out.sync_all()?;
    }
    dir.rename(&tmp, &dir, name)
}

/// The values of the entry for `rec`.
pub fn entry_values(rec: &InstallRecord, exe: &Path, size: u64) -> BTreeMap<String, RegValue> {
    let lang = crate::locale::system_lang(None);
    let name = crate::i18n::render(
        &crate::msg!("apps_entry_name", version = rec.version.major_minor()),
        lang,
    );
    let cmd = format!("\"{}\" uninstall --install-id {}", exe.display(), rec.id);
    let sz = |s: String| RegValue::Sz(s);
    [
        ("DisplayName", sz(name)),
        ("DisplayVersion", sz(rec.version.to_string())),
        ("Publisher", sz(PUBLISHER.into())),
        ("InstallDate", sz(yyyymmdd(rec.installed_at))),
        ("InstallLocation", sz(rec.toolkit.display().to_string())),
        ("DisplayIcon", sz(exe.display().to_string())),
        (
            "EstimatedSize",
            RegValue::Dword(u32::try_from(size / 1024).unwrap_or(u32::MAX)),
        ),
        ("UninstallString", sz(cmd.clone())),
        ("QuietUninstallString", sz(format!("{cmd} --yes"))),
        ("NoModify", RegValue::Dword(1)),
        ("NoRepair", RegValue::Dword(1)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

type SandboxKeys = BTreeMap<String, BTreeMap<String, RegValue>>;

fn sandbox_file(target: &Target) -> PathBuf {
    target.state_dir().join(SANDBOX_REGISTRY)
}

/// The sandbox's entries (keys → values).
pub fn sandbox_entries(target: &Target) -> SandboxKeys {
    crate::state_file::read(&sandbox_file(target))
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn write_entry(
    target: &Target,
    key: &str,
    values: Option<&BTreeMap<String, RegValue>>,
) -> std::io::Result<()> {
    if target.root.is_some() {
        let mut all = sandbox_entries(target);
        match values {
            Some(v) => {
                all.insert(key.to_string(), v.clone());
            }
            None if !all.contains_key(key) => return Ok(()),
            None => {
                all.remove(key);
            }
        }
        if all.is_empty() {
            return target.state()?.remove(SANDBOX_REGISTRY);
        }
        return target.state()?.write_atomic(
            SANDBOX_REGISTRY,
            &serde_json::to_vec_pretty(&all).expect("serialisable"),
            true,
        );
    }
    registry::write(key, values)
}

/// Whether the entry `key` exists (the registry, or the sandbox's record).
pub fn entry_exists(target: &Target, key: &str) -> bool {
    if target.root.is_some() {
        return sandbox_entries(target).contains_key(key);
    }
    registry::exists(key)
}

pub fn remove_entry(target: &Target, key: &str) -> std::io::Result<()> {
    write_entry(target, key, None)
}

/// After an install run that ended well: the install's record and, on Windows, its
/// Apps & features entry (with the program copied where the entry finds it). Best
/// effort: what fails is said in the run's log, the install itself stands.
pub fn after_run(target: &Target, plan: &Plan) -> Result<Option<InstallRecord>, String> {
    let Some((toolkit, version, method)) = toolkit_of(plan) else {
        return Ok(None);
    };
    let id = id_for(&version);
    let previous = all(target).into_iter().find(|r| r.id == id);
    let mut rec = InstallRecord {
        format: 1,
        id: id.clone(),
        version,
        toolkit: toolkit.clone(),
        method,
        installed_at: previous.as_ref().map_or_else(now, |p| p.installed_at),
        entry: None,
        exe: None,
    };
    if target.os == Os::Windows && (target.root.is_some() || cfg!(windows)) {
        let exe = stable_exe(target);
        copy_self(target, &exe).map_err(|e| format!("{}: {e}", exe.display()))?;
        let key = entry_key(target, &id);
        let values = entry_values(&rec, &exe, size_of(&toolkit));
        write_entry(target, &key, Some(&values)).map_err(|e| format!("{key}: {e}"))?;
        rec.entry = Some(key);
        rec.exe = Some(exe);
    }
    let state = target.state().map_err(|e| e.to_string())?;
    let dir = state.sub(FOLDER, true).map_err(|e| e.to_string())?;
    dir.write_atomic(
        format!("{id}.json"),
        &serde_json::to_vec_pretty(&rec).expect("serialisable"),
        true,
    )
    .map_err(|e| format!("{}: {e}", dir.display(format!("{id}.json")).display()))?;
    Ok(Some(rec))
}

/// Removes the program's copy once no install needs it. The running program itself on
/// Windows cannot be deleted while it runs: a detached `cmd` deletes it a moment after
/// this process ends.
pub fn remove_exe(exe: &Path) -> std::io::Result<()> {
    let running = std::env::current_exe()
        .ok()
        .and_then(|m| std::fs::canonicalize(m).ok())
        == std::fs::canonicalize(exe).ok();
    if running && cfg!(windows) {
        return registry::delete_after_exit(exe);
    }
    let Some(folder) = exe.parent() else {
        return Ok(());
    };
    let dir = match crate::place::Dir::open(folder) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    dir.remove(exe.file_name().unwrap_or_default())?;
    drop(dir);
    let _ = std::fs::remove_dir(folder);
    Ok(())
}

#[cfg(windows)]
mod registry {
    use super::RegValue;
    use std::collections::BTreeMap;
    use std::path::Path;
    use winreg::RegKey;
    use winreg::enums::{HKEY_CURRENT_USER, HKEY_LOCAL_MACHINE, KEY_READ};

    fn split(key: &str) -> (RegKey, &str) {
        let (hive, rest) = key.split_once('\\').unwrap_or((key, ""));
        let h = if hive == "HKLM" {
            HKEY_LOCAL_MACHINE
        } else {
            HKEY_CURRENT_USER
        };
        (RegKey::predef(h), rest)
    }

    pub fn write(key: &str, values: Option<&BTreeMap<String, RegValue>>) -> std::io::Result<()> {
        let (root, path) = split(key);
        match values {
            None => match root.delete_subkey_all(path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                r => r,
            },
            Some(values) => {
                let (k, _) = root.create_subkey(path)?;
                for (name, v) in values {
                    match v {
                        RegValue::Dword(d) => k.set_value(name, d)?,
                        RegValue::Sz(s) => k.set_value(name, s)?,
                    }
                }
                Ok(())
            }
        }
    }

    pub fn exists(key: &str) -> bool {
        let (root, path) = split(key);
        root.open_subkey_with_flags(path, KEY_READ).is_ok()
    }

    /// `cmd` waits two seconds (this process has ended by then), then deletes the file
    /// and its folder when empty.
    pub fn delete_after_exit(exe: &Path) -> std::io::Result<()> {
        use std::os::windows::process::CommandExt;
        const DETACHED_PROCESS: u32 = 0x0000_0008;
        const CREATE_NO_WINDOW: u32 = 0x0800_0000;
        let folder = exe.parent().unwrap_or(exe);
        let script = format!(
            "ping -n 3 127.0.0.1 >nul & del /f /q \"{}\" & rmdir \"{}\"",
            exe.display(),
            folder.display()
        );
        std::process::Command::new("cmd.exe")
            .args(["/d", "/c"])
            .raw_arg(script)
            .creation_flags(DETACHED_PROCESS | CREATE_NO_WINDOW)
            .spawn()
            .map(|_| ())
    }
}

#[cfg(not(windows))]
mod registry {
    use super::RegValue;
    use std::collections::BTreeMap;
    use std::path::Path;

    pub fn write(_: &str, _: Option<&BTreeMap<String, RegValue>>) -> std::io::Result<()> {
        Ok(())
    }

    pub fn exists(_: &str) -> bool {
        false
    }

    pub fn delete_after_exit(_: &Path) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_date_is_the_civil_date() {
        assert_eq!(yyyymmdd(0), "19700101");
        assert_eq!(yyyymmdd(951_782_400), "20000229");
        assert_eq!(yyyymmdd(1_767_225_599), "20251231");
    }
}
