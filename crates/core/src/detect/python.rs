//! Python interpreters and, where it imports, torch: its build, CUDA, cuDNN and arch
//! list — read by running a short script in each interpreter, with a timeout.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::compat::Os;
use crate::platform::{Host, RunError};
use crate::version::Version;

pub const PROBE_SCRIPT: &str = include_str!("../../../../assets/python_probe.py");
const MARKER: &str = "CUDA_SETUP_PROBE ";
/// More interpreters than this are rare; each costs a process start.
const MAX_INTERPRETERS: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PythonSource {
    Path,
    PyLauncher,
    Conda,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TorchInfo {
    pub version: String,
    /// `torch.version.cuda`; None for a CPU build.
    pub cuda: Option<String>,
    #[serde(default)]
    pub cuda_available: bool,
    #[serde(default)]
    pub cuda_error: Option<String>,
    #[serde(default)]
    pub cudnn: Option<u64>,
    #[serde(default)]
    pub arch_list: Vec<String>,
}

impl TorchInfo {
    /// A CPU-only build: no CUDA version, or a `+cpu` local version. Users' most common
    /// failure: `pip install torch` on Windows gives this.
    pub fn is_cpu_build(&self) -> bool {
        self.cuda.is_none() || self.version.contains("+cpu")
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct PythonInstall {
    pub path: PathBuf,
    pub source: PythonSource,
    pub version: Option<Version>,
    /// A free-threaded build (`Py_GIL_DISABLED`, `python3.13t`): it installs only wheels
    /// of its own ABI (`cp313t`).
    pub free_threaded: bool,
    pub torch: Option<TorchInfo>,
    /// Why torch is absent (not installed, or failed to import).
    pub torch_error: Option<String>,
    /// torch is a CPU-only build.
    pub torch_cpu_build: bool,
    /// Why the interpreter could not be probed.
    pub probe_error: Option<RunError>,
}

impl PythonInstall {
    /// The version as users name it: `3.13.1`, or `3.13.1t` for a free-threaded build.
    pub fn version_label(&self) -> String {
        self.version.as_ref().map_or("?".to_string(), |v| {
            crate::version::PythonVersion::label(v, self.free_threaded)
        })
    }
}

/// What the probe script prints (one JSON object).
#[derive(Debug, Deserialize)]
pub struct ProbeOutput {
    pub version: String,
    /// `sysconfig.get_config_var("Py_GIL_DISABLED")` is 1 (absent before 3.13).
    #[serde(default)]
    pub free_threaded: bool,
    pub torch: Option<TorchInfo>,
    pub torch_error: Option<String>,
}

/// Finds the probe line in the interpreter's output (torch may print warnings around it).
pub fn parse_probe_output(stdout: &str) -> Option<ProbeOutput> {
    let line = stdout.lines().rev().find_map(|l| l.strip_prefix(MARKER))?;
    serde_json::from_str(line).ok()
}

pub fn probe(host: &Host, timeout: Duration) -> Vec<PythonInstall> {
    let found = interpreters(host, timeout);
    // Probe the interpreters in parallel: each may spend seconds importing torch.
    let handles: Vec<_> = found
        .into_iter()
        .map(|(path, source)| {
            let host = host.clone();
            std::thread::spawn(move || probe_one(&host, path, source, timeout))
        })
        .collect();
    handles.into_iter().filter_map(|h| h.join().ok()).collect()
}

pub fn probe_one(
    host: &Host,
    path: PathBuf,
    source: PythonSource,
    timeout: Duration,
) -> PythonInstall {
    let mut py = PythonInstall {
        path,
        source,
        version: None,
        free_threaded: false,
        torch: None,
        torch_error: None,
        torch_cpu_build: false,
        probe_error: None,
    };
    match host.run(&py.path, &["-c", PROBE_SCRIPT], timeout) {
        Ok(out) => match parse_probe_output(&out.stdout) {
            Some(p) => {
                py.version = p.version.parse().ok();
                py.free_threaded = p.free_threaded;
                py.torch_cpu_build = p.torch.as_ref().is_some_and(TorchInfo::is_cpu_build);
                py.torch = p.torch;
                py.torch_error = p.torch_error;
            }
            None => {
                py.probe_error = Some(RunError::Spawn {
                    program: py.path.display().to_string(),
                    reason: format!(
                        "no probe output (exit {:?}): {}",
                        out.status,
                        out.stderr.trim()
                    ),
                });
            }
        },
        Err(e) => py.probe_error = Some(e),
    }
    py
}

/// Interpreters on PATH, from the Windows `py` launcher, and in the usual conda places.
fn interpreters(host: &Host, timeout: Duration) -> Vec<(PathBuf, PythonSource)> {
    let mut out: Vec<(PathBuf, PythonSource)> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut add = |p: PathBuf, s: PythonSource| {
        // The Windows Store alias (WindowsApps\python.exe) opens the Store instead of running.
        if p.to_string_lossy().contains("WindowsApps") || !p.is_file() {
            return;
        }
        if seen.insert(std::fs::canonicalize(&p).unwrap_or_else(|_| p.clone())) {
            out.push((p, s));
        }
    };
    for name in ["python3", "python"] {
        for dir in host.path_list("PATH") {
            add(dir.join(host.exe(name)), PythonSource::Path);
        }
    }
    if host.os == Os::Windows
        && let Some(py) = host.which("py")
        && let Ok(o) = host.run(&py, &["-0p"], timeout)
    {
        for p in parse_py_launcher(&o.stdout) {
            add(p, PythonSource::PyLauncher);
        }
    }
    for p in conda_pythons(host) {
        add(p, PythonSource::Conda);
    }
    out.truncate(MAX_INTERPRETERS);
    out
}

/// `py -0p` lines: ` -V:3.12 *        C:\Python312\python.exe` (older launchers:
/// ` -3.8-64        C:\Python38\python.exe *`).
pub fn parse_py_launcher(text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|l| {
            // The path starts at the drive letter before the first `:\`.
            let colon = l.find(":\\")?;
            let path = l
                .get(colon.checked_sub(1)?..)?
                .trim()
                .trim_end_matches('*')
                .trim();
            path.to_ascii_lowercase()
                .ends_with(".exe")
                .then(|| PathBuf::from(path))
        })
        .collect()
}

fn conda_pythons(host: &Host) -> Vec<PathBuf> {
    let exe = |root: &Path| match host.os {
        Os::Windows => root.join("python.exe"),
        Os::Linux => root.join("bin").join("python"),
    };
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Some(prefix) = host.var("CONDA_PREFIX") {
        roots.push(PathBuf::from(prefix));
    }
    if let Some(home) = host.home() {
        for base in ["miniconda3", "anaconda3", "miniforge3", "mambaforge"] {
            let base = home.join(base);
            if base.is_dir() {
                roots.push(base.clone());
                if let Ok(rd) = std::fs::read_dir(base.join("envs")) {
                    roots.extend(rd.flatten().map(|e| e.path()));
                }
            }
        }
    }
    roots.iter().map(|r| exe(r)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launcher_list_both_formats() {
        let new = " -V:3.12 *        C:\\Users\\李雷\\AppData\\Local\\Programs\\Python\\Python312\\python.exe\n -V:3.9          C:\\Python39\\python.exe\n";
        let p = parse_py_launcher(new);
        assert_eq!(p.len(), 2);
        assert_eq!(
            p[0],
            PathBuf::from(
                "C:\\Users\\李雷\\AppData\\Local\\Programs\\Python\\Python312\\python.exe"
            )
        );
        assert_eq!(p[1], PathBuf::from("C:\\Python39\\python.exe"));
        let old = " -3.8-64        C:\\Python38\\python.exe *\n";
        assert_eq!(
            parse_py_launcher(old),
            vec![PathBuf::from("C:\\Python38\\python.exe")]
        );
        assert!(parse_py_launcher("No installed Pythons found!").is_empty());
    }

    #[test]
    fn probe_line_among_warnings() {
        let out = "UserWarning: something\nCUDA_SETUP_PROBE {\"version\": \"3.12.1\", \"torch\": {\"version\": \"2.5.1+cpu\", \"cuda\": null}, \"torch_error\": null}\n";
        let p = parse_probe_output(out).unwrap();
        assert_eq!(p.version, "3.12.1");
        assert!(!p.free_threaded, "absent: a regular build");
        assert!(p.torch.unwrap().is_cpu_build());
        assert!(parse_probe_output("Traceback ...").is_none());
    }
}
