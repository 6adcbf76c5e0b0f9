//! The report a PC writes for its lab (`state get|test|set --report FILE`, #36) and
//! `fleet collect` reads from a share: one envelope around the state and, when tested,
//! its drift. A reader takes a report by its schema and version, or names it unreadable
//! — never guesses what another version of cuda-setup meant.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::drift::DriftEntry;
use super::state::State;
use crate::message::Message;
use crate::msg;

/// The `schema` of a fleet report.
pub const SCHEMA: &str = "cuda-setup/report";
/// The version this cuda-setup writes and reads.
pub const SCHEMA_VERSION: u32 = 1;
/// A report is a few KB; a file far larger is not one of ours.
pub const MAX_BYTES: u64 = 4 << 20;

/// The envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub schema_version: u32,
    /// Unix seconds.
    pub written_at: u64,
    pub cuda_setup_version: String,
    pub state: State,
    /// None: not tested (`state get`); Some(empty): in the desired state.
    pub drift: Option<Vec<DriftEntry>>,
    /// The profile it was tested against, as given.
    pub profile: Option<String>,
}

impl Report {
    /// A report of `state`, written now.
    pub fn new(state: State, drift: Option<Vec<DriftEntry>>, profile: Option<String>) -> Report {
        Report {
            schema: SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            written_at: super::state::now(),
            cuda_setup_version: env!("CARGO_PKG_VERSION").into(),
            state,
            drift,
            profile,
        }
    }
}

/// Why a file is not read as a report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    #[error("not JSON: {detail}")]
    NotJson { detail: String },
    /// No `schema`, or another one (an `install --report`, any other JSON).
    #[error("not a cuda-setup fleet report (schema {})", .schema.as_deref().unwrap_or("missing"))]
    NotFleetReport { schema: Option<String> },
    /// A schema version this cuda-setup does not know: a newer one wrote it.
    #[error("written by a newer cuda-setup (schema {schema_version})")]
    Newer { schema_version: u64 },
    /// Our schema and version, but not its shape (a torn or edited file).
    #[error("a cuda-setup fleet report that does not hold what schema 1 says: {detail}")]
    Malformed { detail: String },
    #[error("larger than {max} bytes")]
    TooBig { max: u64 },
}

impl Unreadable {
    /// Why, in plain words (the table's row for that PC says it).
    pub fn message(&self) -> Message {
        match self {
            Unreadable::NotJson { .. } => msg!("fleet_report_not_json"),
            Unreadable::NotFleetReport { .. } => msg!("fleet_report_not_ours"),
            Unreadable::Newer { schema_version } => {
                msg!("fleet_report_newer", version = schema_version)
            }
            Unreadable::Malformed { .. } => msg!("fleet_report_malformed"),
            Unreadable::TooBig { .. } => msg!("fleet_report_too_big"),
        }
    }
}

/// Reads a report: `schema` must be ours, `schema_version` one this cuda-setup knows
/// (1); a higher one is a newer cuda-setup's, anything else is not a fleet report.
pub fn read(bytes: &[u8]) -> Result<Report, Unreadable> {
    if bytes.len() as u64 > MAX_BYTES {
        return Err(Unreadable::TooBig { max: MAX_BYTES });
    }
    let v: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| Unreadable::NotJson {
        detail: e.to_string(),
    })?;
    let schema = v.get("schema").and_then(|s| s.as_str());
    if schema != Some(SCHEMA) {
        return Err(Unreadable::NotFleetReport {
            schema: v.get("schema").map(|s| match s.as_str() {
                Some(s) => s.to_string(),
                None => s.to_string(),
            }),
        });
    }
    match v.get("schema_version").and_then(|n| n.as_u64()) {
        Some(n) if n == u64::from(SCHEMA_VERSION) => {}
        Some(n) if n > u64::from(SCHEMA_VERSION) => {
            return Err(Unreadable::Newer { schema_version: n });
        }
        other => {
            return Err(Unreadable::Malformed {
                detail: format!(
                    "schema_version {}",
                    other.map_or("missing".to_string(), |n| n.to_string())
                ),
            });
        }
    }
    serde_json::from_value(v).map_err(|e| Unreadable::Malformed {
        detail: e.to_string(),
    })
}

/// `%NAME%` replaced by the variable `var` gives (Windows' way, on every OS: a lab's
/// share path names `%COMPUTERNAME%`); `%COMPUTERNAME%` falls back to this computer's
/// name. A name with no value is left as written, as cmd leaves it.
pub fn expand(path: &str, var: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(start) = rest.find('%') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('%') else {
            break;
        };
        let name = &after[..end];
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '(' || c == ')');
        let value = valid.then(|| var(name)).flatten().or_else(|| {
            (valid && name.eq_ignore_ascii_case("COMPUTERNAME"))
                .then(super::state::host_name)
                .flatten()
        });
        out.push_str(&rest[..start]);
        match value {
            Some(v) => {
                out.push_str(&v);
                rest = &after[end + 1..];
            }
            None => {
                // Kept as written; the closing `%` may open the next name.
                out.push('%');
                out.push_str(name);
                rest = &after[end..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Why a report was not written.
#[derive(Debug, thiserror::Error)]
#[error("{}", .path.display())]
pub struct WriteError {
    pub path: PathBuf,
    #[source]
    pub source: crate::error::Cause,
}

/// Writes `report` to `path` (`%VAR%` expanded from the process environment) so a
/// reader on the share sees the old file or the new one: a temporary file in the same
/// folder, renamed over it; the folder is opened without following a link, and a link
/// at the file's name is replaced, never written through. Returns the path written.
pub fn write(path: &str, report: &Report) -> Result<PathBuf, WriteError> {
    let expanded = PathBuf::from(expand(path, &|n| std::env::var(n).ok()));
    let err = |e: std::io::Error| WriteError {
        path: expanded.clone(),
        source: crate::error::cause(e),
    };
    let name = expanded.file_name().ok_or_else(|| {
        err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a file name",
        ))
    })?;
    let parent = match expanded.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let dir = crate::place::Dir::create(&parent).map_err(err)?;
    let bytes = serde_json::to_vec_pretty(report).expect("serialisable");
    dir.write_atomic(Path::new(name), &bytes, true)
        .map_err(err)?;
    Ok(expanded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state_json() -> serde_json::Value {
        serde_json::json!({
            "schema": "cuda-setup/state", "schema_version": 1, "cuda_setup_version": "0.1.0",
            "computer": "LAB-PC-07", "taken_at": 1796550000u64, "os": "windows", "root": null,
            "gpus": [{"name": "NVIDIA GeForce RTX 3060", "compute_capability": "8.6"}],
            "driver": {"version": "566.36", "cuda": "12.7"},
            "toolkits": [{"version": "12.4.1", "path": "C:\\CUDA\\v12.4", "method": "installer", "active": true}],
            "cudnn": [{"version": "9.1.0", "toolkit_path": "C:\\CUDA\\v12.4"}],
            "pytorch": {"python": "C:\\Python312\\python.exe", "version": "2.5.1", "variant": "cu124", "cuda": "12.4"},
            "guard": {"on": true, "verified_at": 1796540000u64},
            "last_check": {"at": 1796540000u64, "works": true, "speedup": 23.4}
        })
    }

    fn envelope(schema: serde_json::Value, version: serde_json::Value) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "schema": schema, "schema_version": version, "written_at": 1796550000u64,
            "cuda_setup_version": "0.1.0", "state": state_json(),
            "drift": [{"layer": "driver", "is": "550.54", "should": ">= 560.94",
                       "fix": "install the driver", "fix_step": "install_driver"}],
            "profile": "lab.toml"
        }))
        .unwrap()
    }

    #[test]
    fn a_report_of_schema_1_is_read() {
        let r = read(&envelope("cuda-setup/report".into(), 1.into())).unwrap();
        assert_eq!(r.state.computer, "LAB-PC-07");
        assert_eq!(r.drift.as_ref().unwrap()[0].should, ">= 560.94");
        assert_eq!(r.state.last_check.as_ref().unwrap().speedup, Some(23.4));
        // What is written is read back as it was.
        let again = read(&serde_json::to_vec(&r).unwrap()).unwrap();
        assert_eq!(again, r);
    }

    #[test]
    fn other_versions_and_other_files_are_named_never_guessed() {
        assert_eq!(
            read(&envelope("cuda-setup/report".into(), 2.into())),
            Err(Unreadable::Newer { schema_version: 2 })
        );
        assert!(matches!(
            read(&envelope("cuda-setup/report".into(), 0.into())),
            Err(Unreadable::Malformed { .. })
        ));
        // An old `install --report`: no schema at all.
        assert_eq!(
            read(br#"{"steps": [], "changed": true}"#),
            Err(Unreadable::NotFleetReport { schema: None })
        );
        assert!(matches!(
            read(&envelope("cuda-setup/state".into(), 1.into())),
            Err(Unreadable::NotFleetReport { schema: Some(_) })
        ));
        assert!(matches!(
            read(b"{\"schema\": "),
            Err(Unreadable::NotJson { .. })
        ));
        // Ours, but torn: the state is missing.
        assert!(matches!(
            read(br#"{"schema": "cuda-setup/report", "schema_version": 1}"#),
            Err(Unreadable::Malformed { .. })
        ));
    }

    #[test]
    fn variables_are_expanded_windows_style() {
        let var = |n: &str| match n {
            "COMPUTERNAME" => Some("LAB-PC-07".to_string()),
            "USERNAME" => Some("ann".to_string()),
            _ => None,
        };
        assert_eq!(
            expand(r"\\server\share\%COMPUTERNAME%.json", &var),
            r"\\server\share\LAB-PC-07.json"
        );
        assert_eq!(expand("%USERNAME%-%NOPE%-x%", &var), "ann-%NOPE%-x%");
        assert_eq!(expand("50%-%USERNAME%", &var), "50%-ann");
        // No COMPUTERNAME in the environment: this computer's name.
        let none = |_: &str| -> Option<String> { None };
        let named = expand("%COMPUTERNAME%.json", &none);
        assert!(
            !named.contains('%') || super::super::state::host_name().is_none(),
            "{named}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_report_replaces_a_link_at_its_name_and_never_writes_through_it() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, "keep").unwrap();
        let at = dir.path().join("share/pc.json");
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, &at).unwrap();
        let r: Report = read(&envelope("cuda-setup/report".into(), 1.into())).unwrap();
        let written = write(&at.display().to_string(), &r).unwrap();
        assert_eq!(written, at);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(
            !std::fs::symlink_metadata(&at)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(read(&std::fs::read(&at).unwrap()).unwrap(), r);
        // A folder that is a link is not written into.
        let real = dir.path().join("real");
        std::fs::create_dir_all(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("linked")).unwrap();
        assert!(write(&dir.path().join("linked/pc.json").display().to_string(), &r).is_err());
        assert!(!real.join("pc.json").exists());
    }
}
