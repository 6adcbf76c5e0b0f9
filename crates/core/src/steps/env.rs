//! The environment a toolkit needs: CUDA_PATH / CUDA_PATH_V<maj>_<min> and PATH on
//! Windows (machine level when elevated, else user level), a profile script on Linux.
//! Every change is recorded with the value it replaced, so it can be reverted; existing
//! PATH entries are never dropped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::StepError;
use crate::compat::Os;
use crate::target::Target;
use crate::version::Version;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    Machine,
    User,
    /// A Linux profile script (the "name" is the file).
    Profile,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvChange {
    pub scope: Scope,
    pub name: String,
    pub previous: Option<String>,
    pub value: Option<String>,
}

/// The Windows environment of a sandbox root: what the registry would hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowsEnvRecord {
    pub machine: BTreeMap<String, String>,
    pub user: BTreeMap<String, String>,
}

/// Where a sandboxed Windows environment lives.
pub fn windows_record_path(target: &Target) -> PathBuf {
    target.state_dir().join("windows-env.json")
}

/// PATH entries a toolkit needs, most important first.
pub fn path_entries(os: Os, dir: &Path, version: &Version) -> Vec<PathBuf> {
    let bin = dir.join("bin");
    match os {
        Os::Windows if version.major() >= 13 => vec![bin.join("x64"), bin],
        // libnvvp (the visual profiler, before 12) only when the installer put it there.
        Os::Windows if version.major() < 12 && dir.join("libnvvp").is_dir() => {
            vec![bin, dir.join("libnvvp")]
        }
        Os::Windows => vec![bin],
        Os::Linux => vec![bin],
    }
}

fn same_entry(a: &str, b: &str) -> bool {
    let n = |s: &str| s.trim().trim_end_matches(['\\', '/']).to_ascii_lowercase();
    n(a) == n(b)
}

/// `current` with `entries` added in front where missing; nothing removed.
pub fn merged_path(current: &str, entries: &[PathBuf]) -> String {
    let mut parts: Vec<String> = current
        .split(';')
        .filter(|s| !s.trim().is_empty())
        .map(str::to_string)
        .collect();
    for e in entries.iter().rev() {
        let e = e.display().to_string();
        if !parts.iter().any(|p| same_entry(p, &e)) {
            parts.insert(0, e);
        }
    }
    parts.join(";")
}

/// Sets the variables; returns the changes made (none when already right).
pub fn configure(
    target: &Target,
    dir: &Path,
    version: &Version,
) -> Result<Vec<EnvChange>, StepError> {
    match target.os {
        Os::Windows => windows(target, dir, version),
        Os::Linux => linux(target, dir),
    }
}

fn wanted_windows(dir: &Path, version: &Version) -> Vec<(String, String)> {
    let d = dir.display().to_string();
    vec![
        ("CUDA_PATH".into(), d.clone()),
        (
            format!("CUDA_PATH_V{}_{}", version.major(), version.minor()),
            d,
        ),
    ]
}

fn windows(target: &Target, dir: &Path, version: &Version) -> Result<Vec<EnvChange>, StepError> {
    let scope = if target.elevated {
        Scope::Machine
    } else {
        Scope::User
    };
    let mut store = WindowsStore::open(target, scope)?;
    let mut changes = Vec::new();
    let mut set = |store: &mut WindowsStore, name: &str, value: String| -> Result<(), StepError> {
        let previous = store.get(name);
        if previous.as_deref() != Some(value.as_str()) {
            store.set(name, &value)?;
            changes.push(EnvChange {
                scope,
                name: name.to_string(),
                previous,
                value: Some(value),
            });
        }
        Ok(())
    };
    for (k, v) in wanted_windows(dir, version) {
        set(&mut store, &k, v)?;
    }
    let path = store.get("Path").unwrap_or_default();
    let merged = merged_path(&path, &path_entries(Os::Windows, dir, version));
    if merged != path {
        set(&mut store, "Path", merged)?;
    }
    store.commit()?;
    Ok(changes)
}

/// The registry (real machine) or the sandbox record, behind one face.
enum WindowsStore {
    Record {
        path: PathBuf,
        record: WindowsEnvRecord,
        scope: Scope,
    },
    #[cfg(windows)]
    Registry { key: winreg::RegKey, changed: bool },
}

impl WindowsStore {
    fn open(target: &Target, scope: Scope) -> Result<WindowsStore, StepError> {
        #[cfg(windows)]
        if target.root.is_none() {
            use winreg::RegKey;
            use winreg::enums::{HKEY_CURRENT_USER, HKEY_LOCAL_MACHINE, KEY_READ, KEY_WRITE};
            let (hive, path) = match scope {
                Scope::Machine => (
                    HKEY_LOCAL_MACHINE,
                    r"SYSTEM\CurrentControlSet\Control\Session Manager\Environment",
                ),
                _ => (HKEY_CURRENT_USER, "Environment"),
            };
            let key = RegKey::predef(hive)
                .open_subkey_with_flags(path, KEY_READ | KEY_WRITE)
                .map_err(|e| StepError::env(format!("cannot open the {path} registry key"), e))?;
            return Ok(WindowsStore::Registry {
                key,
                changed: false,
            });
        }
        let path = windows_record_path(target);
        // Our record in the state folder: read bounded, a regular file, never a link.
        let record = match crate::state_file::read(&path) {
            Ok(Some(b)) => serde_json::from_slice(&b)
                .map_err(|e| StepError::env(path.display().to_string(), e))?,
            Ok(None) => WindowsEnvRecord::default(),
            Err(e) => return Err(StepError::env(path.display().to_string(), e)),
        };
        Ok(WindowsStore::Record {
            path,
            record,
            scope,
        })
    }

    fn get(&self, name: &str) -> Option<String> {
        match self {
            WindowsStore::Record { record, scope, .. } => {
                let map = if *scope == Scope::Machine {
                    &record.machine
                } else {
                    &record.user
                };
                map.iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.clone())
            }
            #[cfg(windows)]
            WindowsStore::Registry { key, .. } => key.get_value::<String, _>(name).ok(),
        }
    }

    fn set(&mut self, name: &str, value: &str) -> Result<(), StepError> {
        match self {
            WindowsStore::Record { record, scope, .. } => {
                let map = if *scope == Scope::Machine {
                    &mut record.machine
                } else {
                    &mut record.user
                };
                let key = map
                    .keys()
                    .find(|k| k.eq_ignore_ascii_case(name))
                    .cloned()
                    .unwrap_or_else(|| name.to_string());
                map.insert(key, value.to_string());
                Ok(())
            }
            #[cfg(windows)]
            WindowsStore::Registry { key, changed } => {
                use winreg::enums::RegType;
                // PATH keeps its REG_EXPAND_SZ type so %SystemRoot% entries still expand.
                let vtype = if name.eq_ignore_ascii_case("Path") {
                    RegType::REG_EXPAND_SZ
                } else {
                    RegType::REG_SZ
                };
                let mut bytes: Vec<u8> = value
                    .encode_utf16()
                    .chain(std::iter::once(0))
                    .flat_map(u16::to_le_bytes)
                    .collect();
                bytes.shrink_to_fit();
                key.set_raw_value(
                    name,
                    &winreg::RegValue {
                        bytes: bytes.into(),
                        vtype,
                    },
                )
                .map_err(|e| StepError::env(format!("cannot set {name}"), e))?;
                *changed = true;
                Ok(())
            }
        }
    }

    fn remove(&mut self, name: &str) -> Result<(), StepError> {
        match self {
            WindowsStore::Record { record, scope, .. } => {
                let map = if *scope == Scope::Machine {
                    &mut record.machine
                } else {
                    &mut record.user
                };
                map.retain(|k, _| !k.eq_ignore_ascii_case(name));
                Ok(())
            }
            #[cfg(windows)]
            WindowsStore::Registry { key, changed } => {
                key.delete_value(name)
                    .map_err(|e| StepError::env(format!("cannot remove {name}"), e))?;
                *changed = true;
                Ok(())
            }
        }
    }

    fn commit(self) -> Result<(), StepError> {
        match self {
            WindowsStore::Record { path, record, .. } => {
                if let Some(d) = path.parent() {
                    std::fs::create_dir_all(d).map_err(|e| StepError::io(d, e))?;
                }
                crate::state_file::write(
                    &path,
                    &serde_json::to_vec_pretty(&record).expect("serialisable"),
                )
                .map_err(|e| StepError::io(&path, e))
            }
            #[cfg(windows)]
            WindowsStore::Registry { changed, .. } => {
                if changed {
                    crate::platform::windows::broadcast_environment_change();
                }
                Ok(())
            }
        }
    }
}

/// Sets (or with None removes) one Windows variable at this target's scope; the change,
/// if any, is returned for the record.
pub fn set_windows_var(
    target: &Target,
    name: &str,
    value: Option<&str>,
) -> Result<Option<EnvChange>, StepError> {
    let scope = if target.elevated {
        Scope::Machine
    } else {
        Scope::User
    };
    let mut store = WindowsStore::open(target, scope)?;
    let previous = store.get(name);
    if previous.as_deref() == value {
        return Ok(None);
    }
    match value {
        Some(v) => store.set(name, v)?,
        None => store.remove(name)?,
    }
    store.commit()?;
    Ok(Some(EnvChange {
        scope,
        name: name.to_string(),
        previous,
        value: value.map(str::to_string),
    }))
}

/// One Windows variable at the scope this target writes (machine when elevated).
pub fn windows_var(target: &Target, name: &str) -> Option<String> {
    let scope = if target.elevated {
        Scope::Machine
    } else {
        Scope::User
    };
    WindowsStore::open(target, scope).ok()?.get(name)
}

/// The persistent Windows environment as a new console would see it: machine values,
/// user values over them, PATH = machine PATH + user PATH.
pub fn windows_view(target: &Target) -> BTreeMap<String, String> {
    let (machine, user) = match target.root {
        Some(_) => {
            let r: WindowsEnvRecord = crate::state_file::read(&windows_record_path(target))
                .ok()
                .flatten()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_default();
            (r.machine, r.user)
        }
        None => registry_maps(),
    };
    let mut view = machine.clone();
    for (k, v) in &user {
        if !k.eq_ignore_ascii_case("Path") {
            view.insert(k.clone(), v.clone());
        }
    }
    let path = |m: &BTreeMap<String, String>| {
        m.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("Path"))
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let joined = [path(&machine), path(&user)]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(";");
    view.retain(|k, _| !k.eq_ignore_ascii_case("Path"));
    view.insert("Path".into(), joined);
    view
}

#[cfg(windows)]
fn registry_maps() -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    use winreg::RegKey;
    use winreg::enums::{HKEY_CURRENT_USER, HKEY_LOCAL_MACHINE};
    let read = |hive, path: &str| -> BTreeMap<String, String> {
        RegKey::predef(hive)
            .open_subkey(path)
            .map(|k| {
                k.enum_values()
                    .flatten()
                    .filter_map(|(n, _)| k.get_value::<String, _>(&n).ok().map(|v| (n, v)))
                    .collect()
            })
            .unwrap_or_default()
    };
    (
        read(
            HKEY_LOCAL_MACHINE,
            r"SYSTEM\CurrentControlSet\Control\Session Manager\Environment",
        ),
        read(HKEY_CURRENT_USER, "Environment"),
    )
}

#[cfg(not(windows))]
fn registry_maps() -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    (BTreeMap::new(), BTreeMap::new())
}

/// Linux: the variables our profile script sets (`export K="V"` lines of our block).
pub fn profile_vars(target: &Target) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(profile_path(target)).unwrap_or_default();
    let Some(a) = text.find(BEGIN) else {
        return BTreeMap::new();
    };
    text[a..]
        .lines()
        .take_while(|l| !l.starts_with(END))
        .filter_map(|l| l.strip_prefix("export ")?.split_once('='))
        .filter(|(_, v)| v.starts_with('"') && !v.contains('$'))
        .map(|(k, v)| (k.to_string(), v.trim_matches('"').to_string()))
        .collect()
}

const BEGIN: &str = "# >>> cuda-setup >>>";
const END: &str = "# <<< cuda-setup <<<";

/// The profile script (root: /etc/profile.d; otherwise a block in ~/.profile).
pub fn profile_path(target: &Target) -> PathBuf {
    if target.elevated {
        target.system_path("/etc/profile.d/cuda-setup.sh")
    } else {
        target
            .host
            .home()
            .unwrap_or_else(|| PathBuf::from("."))
            .join(".profile")
    }
}

pub fn profile_block(dir: &Path) -> String {
    let d = dir.display();
    format!(
        "{BEGIN}\n# CUDA environment, written by cuda-setup.\nexport CUDA_HOME=\"{d}\"\nexport CUDA_PATH=\"{d}\"\n\
         case \":$PATH:\" in *\":$CUDA_HOME/bin:\"*) ;; *) export PATH=\"$CUDA_HOME/bin:$PATH\" ;; esac\n\
         case \":${{LD_LIBRARY_PATH:-}}:\" in *\":$CUDA_HOME/lib64:\"*) ;; *) export LD_LIBRARY_PATH=\"$CUDA_HOME/lib64${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}\" ;; esac\n{END}\n"
    )
}

/// `text` with our block replaced (or appended).
pub fn with_block(text: &str, block: &str) -> String {
    match (text.find(BEGIN), text.find(END)) {
        (Some(a), Some(b)) if b > a => {
            let end = b + END.len() + usize::from(text[b + END.len()..].starts_with('\n'));
            format!("{}{block}{}", &text[..a], &text[end..])
        }
        _ if text.is_empty() || text.ends_with('\n') => format!("{text}{block}"),
        _ => format!("{text}\n{block}"),
    }
}

/// `text` without our block (None: it holds none), the rest byte for byte: what
/// `cuda-setup uninstall` leaves of a profile file.
pub fn without_block(text: &str) -> Option<String> {
    match (text.find(BEGIN), text.find(END)) {
        (Some(a), Some(b)) if b > a => {
            let end = b + END.len() + usize::from(text[b + END.len()..].starts_with('\n'));
            Some(format!("{}{}", &text[..a], &text[end..]))
        }
        _ => None,
    }
}

fn linux(target: &Target, dir: &Path) -> Result<Vec<EnvChange>, StepError> {
    let path = profile_path(target);
    // Elevated, the file is ours (`/etc/profile.d/cuda-setup.sh`): read as a regular file,
    // never through a link, and replaced through a temporary file created new. Not
    // elevated, it is the user's own `~/.profile`, which may well be their link.
    let previous = if target.elevated {
        match crate::place::read_regular(&path, crate::state_file::MAX_BYTES) {
            Ok(b) => b.map(|b| String::from_utf8_lossy(&b).into_owned()),
            Err(e) => return Err(StepError::env(path.display().to_string(), e)),
        }
    } else {
        std::fs::read_to_string(&path).ok()
    };
    let new = with_block(previous.as_deref().unwrap_or(""), &profile_block(dir));
    if previous.as_deref() == Some(new.as_str()) {
        return Ok(Vec::new());
    }
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(|e| StepError::io(d, e))?;
    }
    if target.elevated {
        crate::state_file::write(&path, new.as_bytes()).map_err(|e| StepError::io(&path, e))?;
    } else {
        let tmp = path.with_extension("cuda-setup.tmp");
        std::fs::write(&tmp, &new)
            .and_then(|_| std::fs::rename(&tmp, &path))
            .map_err(|e| StepError::io(&path, e))?;
    }
    Ok(vec![EnvChange {
        scope: Scope::Profile,
        name: path.display().to_string(),
        previous,
        value: Some(new),
    }])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_merge_keeps_everything_and_does_not_duplicate() {
        let entries = vec![
            PathBuf::from(r"C:\CUDA\v13.0\bin\x64"),
            PathBuf::from(r"C:\CUDA\v13.0\bin"),
        ];
        let p = merged_path(r"C:\Windows;C:\cuda\v13.0\BIN\;C:\Tools", &entries);
        assert_eq!(
            p,
            r"C:\CUDA\v13.0\bin\x64;C:\Windows;C:\cuda\v13.0\BIN\;C:\Tools"
        );
        assert_eq!(merged_path(&p, &entries), p, "idempotent");
        assert_eq!(merged_path("", &entries[1..]), r"C:\CUDA\v13.0\bin");
    }

    #[test]
    fn the_block_comes_out_and_the_rest_stays() {
        let with = with_block(
            "export X=1\n",
            &profile_block(Path::new("/usr/local/cuda-13.5")),
        );
        assert_eq!(without_block(&with).as_deref(), Some("export X=1\n"));
        assert_eq!(without_block("export X=1\n"), None);
    }

    #[test]
    fn profile_block_is_replaced_not_stacked() {
        let a = with_block(
            "export X=1\n",
            &profile_block(Path::new("/usr/local/cuda-12.4")),
        );
        let b = with_block(&a, &profile_block(Path::new("/usr/local/cuda-12.6")));
        assert!(b.starts_with("export X=1\n"));
        assert_eq!(b.matches(BEGIN).count(), 1);
        assert!(b.contains("cuda-12.6") && !b.contains("cuda-12.4"));
    }
}
