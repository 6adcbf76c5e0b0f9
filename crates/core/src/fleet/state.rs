//! The machine's state in the lab profile's terms (#36, `state get`): the GPUs and the
//! driver (detection, or the what-if flags), the toolkits and cuDNN (`repair::existing`:
//! NVIDIA's folders and the user's own, our cuDNN manifests; plus what detection finds
//! elsewhere), the active toolkit (the persistent environment a new console gets), the
//! PyTorch build in the profile's Python, the guard's record of it, and the last GPU
//! check. Only reads: nothing is written (a bad state file of ours is set aside, as
//! every reader of one does).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::compat::{Os, Tables};
use crate::detect::{self, Deadlines, python::PythonSource};
use crate::guard;
use crate::last_check::{self, LastCheck};
use crate::platform::Host;
use crate::recommend::Method;
use crate::records::Use;
use crate::repair::{self, Overrides};
use crate::target::Target;
use crate::version::{ComputeCapability, Version};

/// The `schema` of `state get --json`.
pub const SCHEMA: &str = "cuda-setup/state";
pub const SCHEMA_VERSION: u32 = 1;

/// `schemas/state-v1.schema.json`, the JSON Schema of [`State`] (draft 2020-12).
pub const JSON_SCHEMA: &str = include_str!("../../../../schemas/state-v1.schema.json");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub schema: String,
    pub schema_version: u32,
    pub cuda_setup_version: String,
    pub computer: String,
    /// Unix seconds.
    pub taken_at: u64,
    pub os: Os,
    /// A `--root` sandbox; None: the machine.
    pub root: Option<PathBuf>,
    /// Taken by an elevated run (SYSTEM, administrator, root): it only records the guard,
    /// never pins (`guard::on` refuses), so the guard is judged by its record.
    #[serde(default)]
    pub elevated: bool,
    pub gpus: Vec<GpuState>,
    /// None: no driver.
    pub driver: Option<DriverState>,
    pub toolkits: Vec<ToolkitState>,
    pub cudnn: Vec<CudnnState>,
    /// None: no torch in the Python looked at (or no Python).
    pub pytorch: Option<TorchState>,
    /// None: no build was ever verified on the GPU.
    pub guard: Option<GuardState>,
    /// None: never checked.
    pub last_check: Option<LastCheck>,
    /// Linux: the distribution (`/etc/os-release`), so that a driver's drift names its
    /// commands wherever the report is judged (#36). Absent in older reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distro: Option<Distro>,
}

/// What the driver's advice needs of `/etc/os-release`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Distro {
    pub id: Option<String>,
    #[serde(default)]
    pub id_like: Vec<String>,
    pub version_id: Option<String>,
    pub pretty_name: Option<String>,
}

impl From<crate::linux_driver::OsRelease> for Distro {
    fn from(o: crate::linux_driver::OsRelease) -> Distro {
        Distro {
            id: o.id,
            id_like: o.id_like,
            version_id: o.version_id,
            pretty_name: o.pretty_name,
        }
    }
}

impl Distro {
    pub fn os_release(&self) -> crate::linux_driver::OsRelease {
        crate::linux_driver::OsRelease {
            id: self.id.clone(),
            id_like: self.id_like.clone(),
            version_id: self.version_id.clone(),
            pretty_name: self.pretty_name.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuState {
    pub name: String,
    pub compute_capability: Option<ComputeCapability>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriverState {
    pub version: Version,
    /// The newest CUDA the driver supports (NVML's figure), when known.
    pub cuda: Option<Version>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolkitState {
    pub version: Option<Version>,
    pub path: PathBuf,
    pub method: Method,
    /// What a new console uses: PATH's nvcc, or `CUDA_PATH` (Windows) / `CUDA_HOME`
    /// (Linux) names it.
    pub active: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CudnnState {
    pub version: Option<Version>,
    /// The toolkit it lies in (None: elsewhere on the library search path).
    pub toolkit_path: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TorchState {
    pub python: PathBuf,
    /// The release (`2.5.1`), without its local tag.
    pub version: String,
    /// The local tag (`cu124`), else `cpu` for a CPU build, else `pypi`.
    pub variant: String,
    /// `torch.version.cuda`; None for a CPU build.
    pub cuda: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuardState {
    /// pip's pin of the verified build is in place (and not lifted with `guard off`).
    pub on: bool,
    pub verified_at: u64,
    /// The verified build (`2.5.1+cu124`).
    #[serde(default)]
    pub torch: Option<String>,
    /// The installed torch is still the verified build (None: not asked).
    #[serde(default)]
    pub intact: Option<bool>,
}

/// What `state` is told instead of detecting: the what-if flags, and the Python to look
/// at (`--python-exe`, or the profile's).
#[derive(Debug, Clone, Default)]
pub struct Given {
    pub overrides: Overrides,
    pub python: Option<PathBuf>,
}

pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// This computer's name from the system (`/proc/sys/kernel/hostname`, `/etc/hostname`,
/// else `HOSTNAME`/`COMPUTERNAME`), without the environment's `COMPUTERNAME` first.
pub fn host_name() -> Option<String> {
    let from_file = ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| {
            let bytes = crate::place::read_regular_following(Path::new(p), 1024)
                .ok()
                .flatten()?;
            let s = String::from_utf8_lossy(&bytes).trim().to_string();
            (!s.is_empty()).then_some(s)
        });
    from_file.or_else(|| {
        ["COMPUTERNAME", "HOSTNAME"]
            .iter()
            .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()))
    })
}

/// The computer's name as a lab knows it: `%COMPUTERNAME%` (which a test or a lab may
/// set), else the system's.
pub fn computer(host: &Host) -> String {
    host.var("COMPUTERNAME")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .or_else(host_name)
        .unwrap_or_else(|| "unknown".into())
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// The variable that names the toolkit a new console uses.
fn home_var(os: Os) -> &'static str {
    match os {
        Os::Windows => "CUDA_PATH",
        Os::Linux => "CUDA_HOME",
    }
}

/// `2.5.1+cu124` → (`2.5.1`, `cu124`); a CPU build without a tag is `cpu`, PyPI's plain
/// CUDA build `pypi` (the guard's record names variants the same way).
pub fn torch_variant(version: &str, cpu_build: bool) -> (String, String) {
    let (release, local) = guard::record::split_version(version);
    let variant = match local {
        Some(l) => l,
        None if cpu_build => "cpu".into(),
        None => "pypi".into(),
    };
    (release, variant)
}

/// The machine's state (or the sandbox's): see the module's comment.
pub fn take(target: &Target, tables: &Tables, given: &Given) -> State {
    let env = repair::environment(target);
    let host = match &target.root {
        Some(root) => Host::sandbox(target.os, root, env.clone()),
        None => Host::real_with_env(env.clone()),
    };
    let deadlines = Deadlines::default();
    let mut report = detect::detect_without_python(&host, tables, deadlines);
    repair::apply_overrides(&mut report, tables, &given.overrides);
    let existing = repair::existing(target);

    let gpus = report
        .nvidia_gpus()
        .map(|g| GpuState {
            name: g.name.clone(),
            compute_capability: g.compute_capability,
        })
        .collect();
    let driver = report.driver.as_ref().map(|d| DriverState {
        version: d.version.clone(),
        cuda: d.cuda_version.clone(),
    });

    // The toolkits: ours and NVIDIA's folders first (their method), then any other
    // detection found (CUDA_HOME elsewhere, nvcc on PATH).
    let var = home_var(target.os);
    let named = env
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(var))
        .map(|(_, v)| PathBuf::from(v));
    let active = |dir: &Path| {
        named.as_deref().is_some_and(|n| same_dir(n, dir))
            || report
                .toolkits
                .iter()
                .any(|t| t.active && same_dir(&t.path, dir))
    };
    let mut toolkits: Vec<ToolkitState> = existing
        .toolkits
        .iter()
        .map(|t| {
            // Detection reads the folder's version file (12.4.1), the folder's name says 12.4.
            let detected = report
                .toolkits
                .iter()
                .find(|d| same_dir(&d.path, &t.dir))
                .and_then(|d| d.version.clone());
            ToolkitState {
                version: match (t.origin, detected) {
                    (repair::Origin::Installer, Some(v)) => Some(v),
                    _ => t.version.clone(),
                },
                path: t.dir.clone(),
                method: match t.origin {
                    repair::Origin::Installer => Method::Installer,
                    repair::Origin::Wheels => Method::Wheels,
                },
                active: active(&t.dir),
            }
        })
        .collect();
    for d in &report.toolkits {
        if !toolkits.iter().any(|t| same_dir(&t.path, &d.path)) {
            toolkits.push(ToolkitState {
                version: d.version.clone(),
                path: d.path.clone(),
                method: Method::Installer,
                active: active(&d.path),
            });
        }
    }

    // cuDNN: ours by its manifest, then what detection found beside it.
    let mut cudnn: Vec<CudnnState> = existing
        .cudnn
        .iter()
        .map(|c| CudnnState {
            version: Some(c.version.clone()),
            toolkit_path: Some(c.toolkit.clone()),
        })
        .collect();
    for c in &report.cudnn {
        let known = cudnn.iter().any(|k| match (&k.toolkit_path, &c.toolkit) {
            (Some(a), Some(b)) => same_dir(a, b),
            _ => false,
        });
        let state = CudnnState {
            version: c.version.clone(),
            toolkit_path: c.toolkit.clone(),
        };
        if !known && !cudnn.contains(&state) {
            cudnn.push(state);
        }
    }

    let (pytorch, guard) = torch_and_guard(target, &host, given, deadlines);
    State {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        cuda_setup_version: env!("CARGO_PKG_VERSION").into(),
        computer: computer(&target.host),
        taken_at: now(),
        os: target.os,
        root: target.root.clone(),
        elevated: target.elevated,
        gpus,
        driver,
        toolkits,
        cudnn,
        pytorch,
        guard,
        last_check: last_check::read(target),
        distro: crate::linux_driver::os_release(&host).map(Distro::from),
    }
}

/// The Python to look at: the one given, else the one whose build the guard recorded
/// last (only a record this run may act on names an interpreter it runs), else the
/// first with torch that a new console finds.
fn python_to_ask(
    target: &Target,
    host: &Host,
    given: &Given,
    deadlines: Deadlines,
) -> Option<PathBuf> {
    if let Some(p) = &given.python {
        return Some(p.clone());
    }
    let recorded = guard::record::found(target, Use::Act)
        .ok()
        .and_then(|rs| crate::records::newest(rs, |(r, _)| r.verified_at))
        .map(|(r, _)| r.python);
    recorded.or_else(|| repair::with_torch(&detect::python::probe(host, deadlines.python)))
}

fn torch_and_guard(
    target: &Target,
    host: &Host,
    given: &Given,
    deadlines: Deadlines,
) -> (Option<TorchState>, Option<GuardState>) {
    let python = python_to_ask(target, host, given, deadlines);
    let installed = python
        .as_ref()
        .map(|p| detect::python::probe_one(host, p.clone(), PythonSource::Path, deadlines.python));
    let pytorch = installed.as_ref().and_then(|p| {
        let t = p.torch.as_ref()?;
        let (version, variant) = torch_variant(&t.version, t.is_cpu_build());
        Some(TorchState {
            python: p.path.clone(),
            version,
            variant,
            cuda: t.cuda.clone(),
        })
    });
    // The guard of that Python (reported from either state folder), else the newest
    // record of any.
    let record = match &python {
        Some(p) => guard::record::seen(target, p).ok().flatten(),
        None => guard::record::found(target, Use::Report)
            .ok()
            .and_then(|rs| crate::records::newest(rs, |(r, _)| r.verified_at)),
    };
    let guard = record.map(|(rec, _)| GuardState {
        on: !rec.lifted && guard::pin::state(target.os, &rec) == guard::PinState::On,
        verified_at: rec.verified_at,
        intact: installed
            .as_ref()
            .filter(|p| p.probe_error.is_none() && guard::record::same_python(&p.path, &rec.python))
            .map(|p| p.torch.as_ref().map(|t| t.version.as_str()) == Some(rec.torch.as_str())),
        torch: Some(rec.torch),
    });
    (pytorch, guard)
}
