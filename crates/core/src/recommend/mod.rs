//! The recommendation engine: pure functions from the system's facts, the user's goal
//! and the tables to a toolkit / cuDNN / PyTorch choice with its reasons.
//!
//! Three axes must hold at once: the driver runs it, it builds for every GPU's
//! architecture, and it exists for this OS and Python. Among what holds, the engine
//! prefers what runs on the current driver, then confirmed facts over unconfirmed ones,
//! then the newest.

mod choice;
mod cudnn_version;
mod driver;
pub mod jetson;
mod leave_out;
mod toolkit;
mod torch;
mod wsl;

use serde::Serialize;

use crate::compat::{Origin, Os, TableSource, Tables};
use crate::message::Message;
use crate::msg;
use crate::version::{ComputeCapability, Version};

pub use cudnn_version::{CudnnVersionError, cudnn_by_version};
pub use driver::{DriverFit, reinstall as reinstall_driver};
pub use jetson::JetsonAdvice;
pub use wsl::{WslAdvice, WslToolkit};

/// What the user wants. The default, for every command and the wizard alike, is
/// PyTorch: what most beginners come for, and what needs no toolkit at all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Goal {
    /// The driver and the right PyTorch wheel (the wheels bundle CUDA and cuDNN).
    #[default]
    Pytorch,
    /// The CUDA toolkit, cuDNN and environment, for compiling extensions.
    Developer,
}

/// One GPU as the recommender needs it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuFact {
    pub name: Option<String>,
    pub compute_capability: ComputeCapability,
}

impl GpuFact {
    pub fn label(&self) -> String {
        match &self.name {
            Some(n) => format!(
                "{n} (sm_{}{})",
                self.compute_capability.major, self.compute_capability.minor
            ),
            None => self.compute_capability.sm(),
        }
    }
}

/// The system's facts (from detection, or from what-if flags).
#[derive(Debug, Clone, Serialize)]
pub struct Facts {
    pub os: Os,
    pub gpus: Vec<GpuFact>,
    /// None: no NVIDIA driver installed (or none working).
    pub driver: Option<Version>,
    /// The highest CUDA the driver supports, as NVML reports it (`12.4`), when known.
    pub driver_cuda: Option<Version>,
    /// `MAJOR.MINOR` of the Python that will run torch, when known.
    pub python: Option<Version>,
    pub installed_toolkits: Vec<Version>,
    /// NVIDIA GPUs found whose model (and so compute capability) is unknown.
    pub unidentified_gpus: Vec<String>,
    /// What detection noticed about the devices (disabled, no driver, Code 43), shown first.
    pub notes: Vec<Message>,
    /// Where this runs: a plain PC, Linux inside WSL2, or a Jetson board (#32). It decides
    /// who provides the driver (and, on Jetson, CUDA and cuDNN too).
    pub host_kind: HostKind,
    /// The Python is a free-threaded build (`3.13t`): its wheels carry the `cp313t` ABI, a
    /// different set from plain `cp313` (#32, dossier §13.4).
    pub free_threaded: bool,
}

/// Where the machine runs, as it changes the advice (#32, dossier §13.2–13.3).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HostKind {
    /// A PC running Windows or Linux itself.
    #[default]
    Native,
    /// Linux inside WSL2: the GPU driver is the Windows host's, stubbed as
    /// `/usr/lib/wsl/lib/libcuda.so.1`; no Linux driver may ever be installed in it.
    Wsl2,
    /// A Jetson (Tegra) board: JetPack provides the driver, CUDA and cuDNN.
    Jetson {
        /// `/proc/device-tree/model` ("NVIDIA Jetson AGX Orin Developer Kit").
        model: Option<String>,
        /// The L4T release from `/etc/nv_tegra_release` ("36.4.0").
        l4t: Option<String>,
    },
}

/// The user's choices (`..Default::default()`: today's defaults for what a caller does not
/// choose — no torch pin, no driver floor).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Request {
    pub goal: Goal,
    /// Restrict the toolkit to this version prefix (`12`, `12.4`, `12.4.1`).
    pub cuda: Option<Version>,
    /// Wheels: a release needs no installer in the tables (PyPI's `cuda-toolkit` pins it).
    pub method: Method,
    /// With a driver that works but is old: update it or keep it, when an update unlocks
    /// a newer PyTorch line or toolkit major (#32). Auto: `DriverChoice::default`.
    pub driver: DriverPref,
    /// Linux: the distribution (`linux_driver::os_release`), so that the update's default
    /// knows whether the distribution packages the driver. None: unknown (keep).
    #[serde(skip)]
    pub distro: Option<crate::linux_driver::OsRelease>,
    /// Restrict PyTorch to this release prefix (`2`, `2.5`, `2.5.1`; a lab profile's
    /// `[pytorch] version`). None: the recommended one.
    pub torch_version: Option<Version>,
    /// Restrict PyTorch to this variant (`cu124`). None: the recommended one.
    pub torch_variant: Option<String>,
    /// A lab profile's `[driver] min`/`exact` (#36): the driver must be at least (or
    /// exactly) this, above what the picks need. None: what the picks need.
    pub driver_floor: Option<DriverFloor>,
}

/// The driver a lab profile asks for, beyond what CUDA needs (#36).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DriverFloor {
    AtLeast(Version),
    /// Windows installs exactly this version when the tables list it; a newer driver
    /// installed is never taken down (no plan step downgrades a driver).
    Exact(Version),
}

/// Which way the user wants to go when a driver that works is old (#32).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DriverPref {
    /// The recommendation's default (`DriverChoice::default`).
    #[default]
    Auto,
    Keep,
    Update,
}

/// One of the two ways an old driver that works can go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DriverPath {
    /// Update the driver first: the newer PyTorch line (or toolkit major) it unlocks.
    Update,
    /// Keep today's driver: what runs on it now.
    Keep,
}

/// Both ways for a driver that works but holds back PyTorch or the toolkit (#32). The
/// recommendation's picks, driver action and plan follow `chosen`.
#[derive(Debug, Clone, Serialize)]
pub struct DriverChoice {
    /// Update when the update is ours to do (`ours`), else keep.
    pub default: DriverPath,
    /// The request's path, else `default`.
    pub chosen: DriverPath,
    /// Windows: a driver package of ours installs it; Linux: the distribution packages it.
    pub ours: bool,
    pub update: PathOutcome,
    pub keep: PathOutcome,
}

/// What one path installs.
#[derive(Debug, Clone, Serialize)]
pub struct PathOutcome {
    /// Update: the driver installed (Windows) or the least asked for; keep: today's.
    pub driver: Option<Version>,
    /// Update: the driver installer's exact size, when recorded (they are ≈ 0.7–0.9 GB).
    pub download_size: Option<u64>,
    /// The PC restarts before the GPU can be used (a driver install).
    pub restart: bool,
    pub torch: Option<Version>,
    /// The CUDA the torch wheel is built with (`cu118` → 11.8).
    pub torch_cuda: Option<Version>,
    pub toolkit: Option<Version>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Recommendation {
    pub goal: Goal,
    pub os: Os,
    pub gpus: Vec<GpuFact>,
    pub toolkit: Option<ToolkitPick>,
    pub cudnn: Option<CudnnPick>,
    pub torch: Option<TorchPick>,
    pub driver: DriverAdvice,
    pub reasons: Vec<Message>,
    pub blockers: Vec<Message>,
    /// GPUs a pick carries no code for, when no pick covers them all (#20 class 1); each
    /// also has a `gpu_left_out` reason.
    pub left_out: Vec<LeftOut>,
    /// With GPUs left out: the `CUDA_VISIBLE_DEVICES` value (with
    /// `CUDA_DEVICE_ORDER=PCI_BUS_ID`) that shows programs only the GPUs kept.
    pub visible_devices: Option<String>,
    pub tables: TableSource,
    /// When fetched data (`refresh`) is merged in: when it was fetched, and whether live.
    pub refreshed: Option<crate::compat::Refreshed>,
    /// Linux inside WSL2 (#32): the Windows driver to update on Windows and the
    /// `wsl-ubuntu` toolkit commands; None elsewhere.
    pub wsl: Option<WslAdvice>,
    /// A Jetson board (#32): JetPack provides the driver, CUDA and cuDNN, so nothing is
    /// picked and nothing can be planned; this says what the board has instead.
    pub jetson: Option<JetsonAdvice>,
    /// A driver that works but is old, and an update that unlocks more: both paths, the
    /// default and the one these picks follow (#32).
    pub choice: Option<DriverChoice>,
}

impl Recommendation {
    /// Something fits (possibly after a driver update).
    pub fn fits(&self) -> bool {
        self.blockers.is_empty()
    }

    /// Something fits that cuda-setup can install: not on a Jetson board, where JetPack
    /// provides everything (the wizard offers no install, `install` refuses).
    pub fn installable(&self) -> bool {
        self.fits() && self.jetson.is_none()
    }

    /// The line both front ends show first, above the reasons, when the driver must be
    /// installed or updated: "Update the driver to X or newer (you have Y)".
    pub fn driver_headline(&self) -> Option<Message> {
        // Inside WSL2 the line says where: on Windows, never here (a beginner reading
        // "install the driver" inside Ubuntu reaches for apt, which breaks the stub).
        if self.wsl.is_some() && self.driver.action != DriverAction::None {
            let target = self.driver_target().unwrap_or_default();
            return Some(match self.driver.current {
                Some(_) => msg!("wsl_driver_on_windows_any", minimum = target),
                None => msg!("wsl_driver_install", minimum = target),
            });
        }
        if let Some(h) = self.branch_headline() {
            return Some(h);
        }
        let minimum = self.driver.minimum.as_ref();
        match (self.driver.action, &self.driver.current) {
            (DriverAction::None, _) => None,
            (DriverAction::Install, _) | (DriverAction::Update, None) => Some(match minimum {
                Some(m) => msg!("driver_headline_install", minimum = m),
                None => msg!("driver_headline_install_any"),
            }),
            (DriverAction::Update, Some(current)) => Some(match minimum {
                Some(m) => msg!("driver_headline_update", minimum = m, current = current),
                None => msg!("driver_headline_install_any"),
            }),
        }
    }
}

impl Recommendation {
    /// The driver to reach, as both front ends name it: the version the plan installs for
    /// a toolkit's branch, else the branch (`R615`), else the lowest that runs it all.
    pub fn driver_target(&self) -> Option<String> {
        let d = &self.driver;
        match (&d.install, d.branch) {
            (Some(i), Some(_)) => Some(i.version.to_string()),
            (None, Some(b)) => Some(format!("R{b}")),
            _ => d.minimum.as_ref().map(ToString::to_string),
        }
    }

    /// The headline when the driver installed is for a toolkit's branch (#32): it names
    /// what is installed, never "the newest" while installing an older one.
    fn branch_headline(&self) -> Option<Message> {
        let d = &self.driver;
        let (b, tk) = (d.branch?, self.toolkit.as_ref()?);
        let cuda = tk.version.major_minor();
        let current = d
            .current
            .as_ref()
            .filter(|_| d.action == DriverAction::Update);
        Some(match (&d.install, current) {
            (Some(i), _) if i.version.major() < b => msg!(
                "driver_headline_short",
                version = &i.version,
                branch = b,
                cuda = &cuda
            ),
            (Some(i), None) => msg!(
                "driver_headline_install_version",
                version = &i.version,
                branch = b,
                cuda = &cuda
            ),
            (Some(i), Some(c)) => msg!(
                "driver_headline_update_version",
                version = &i.version,
                current = c,
                branch = b,
                cuda = &cuda
            ),
            (None, None) => msg!("driver_headline_install_branch", branch = b, cuda = &cuda),
            (None, Some(c)) => msg!(
                "driver_headline_update_branch",
                branch = b,
                current = c,
                cuda = &cuda
            ),
        })
    }
}

/// Which pick leaves a GPU out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Part {
    Torch,
    Toolkit,
}

/// A GPU that a pick carries no code for.
#[derive(Debug, Clone, Serialize)]
pub struct LeftOut {
    pub part: Part,
    /// Its position in `Facts::gpus` (NVML's order, which is PCI bus order).
    pub index: usize,
    pub gpu: GpuFact,
}

#[derive(Debug, Clone, Serialize)]
pub struct Download {
    pub file: String,
    pub url: String,
    pub size: Option<u64>,
    pub sha256: Option<String>,
    pub md5: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ToolkitPick {
    pub version: Version,
    pub label: String,
    /// The installer for this OS (Windows local installer / Linux runfile).
    /// None only for the wheels method, when the tables know no installer of this release.
    pub installer: Option<Download>,
    /// Windows only: the small network installer, when known.
    pub network_installer: Option<Download>,
    /// The driver that installer carries (None: it carries none, as CUDA 13.x on
    /// Windows and the Linux runfiles from 13.4.1 on). What `--with-driver` can install.
    pub carried_driver: Option<Version>,
    pub confirmed: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct CudnnPick {
    pub version: Version,
    pub cuda_major: u32,
    pub archive_url: String,
    pub archive: Download,
    /// Where the DLLs sit in the Windows zip (`bin` or `bin/x64`).
    pub windows_dll_dir: String,
    pub confirmed: bool,
}

impl CudnnPick {
    /// The pick of archive `a` of release `r`.
    pub fn new(
        r: &crate::compat::CudnnRelease,
        a: &crate::compat::CudnnArchive,
        confirmed: bool,
    ) -> CudnnPick {
        CudnnPick {
            version: r.version.clone(),
            cuda_major: a.cuda_major,
            archive_url: a.url(),
            archive: Download {
                file: a.file.clone(),
                url: a.url(),
                size: a.size,
                sha256: a.sha256.clone(),
                md5: a.md5.clone(),
            },
            windows_dll_dir: r.windows_dll_dir.clone(),
            confirmed,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct TorchPick {
    pub version: Version,
    pub variant: String,
    pub cuda: Version,
    pub index_url: String,
    /// The command line, for people (`pip install torch==… --index-url …`): derived from
    /// `pip_args`, which is what runs.
    pub command: String,
    /// pip's arguments after `install`, one element each (an index address with a space
    /// stays one argument).
    pub pip_args: Vec<String>,
    /// For a free-threaded Python, how the command starts it to run pip (`python3.13t`,
    /// `py -3.13t`), so pip installs into its site-packages and not the regular build's;
    /// None: plain `pip`.
    pub interpreter: Option<String>,
    pub python_min: Version,
    pub python_max: Version,
    pub confirmed: bool,
}

impl TorchPick {
    /// The build as a beginner reads it, "PyTorch 2.13 (CUDA 13.2)": never the build tag
    /// (`cu132`), which the CLI's technical lines keep. Both front ends' plain lines.
    pub fn label(&self) -> Message {
        crate::msg!("torch_label", version = &self.version, cuda = &self.cuda)
    }

    /// The same wheels from a mirror of PyTorch's index (`https://mirror/whl`): the
    /// index URL and the arguments change, nothing else. A PyPI index (`…/simple`, a
    /// `pypi` host or path) is never taken as torch's index: it has no CUDA wheels (on
    /// Windows only the CPU build); false then, and nothing changes.
    pub fn use_index(&mut self, base: &str) -> bool {
        let base = base.trim_end_matches('/');
        if is_pypi_index(base) {
            return false;
        }
        let default = crate::compat::TORCH_INDEX_BASE;
        for a in &mut self.pip_args {
            if let Some(rest) = a.strip_prefix(default) {
                *a = format!("{base}{rest}");
            }
        }
        self.command = command_line(self.interpreter.as_deref(), &self.pip_args);
        self.index_url = self.index_url.replace(default, base);
        true
    }

    /// pip's arguments for a run: `pip_args`, with a PyPI mirror for torch's dependencies
    /// as an extra index (as `--index-url` it would replace PyTorch's index and bring
    /// back the CPU build), and `extra` first (`--force-reinstall`).
    pub fn run_args(&self, extra: &[&str], pypi_mirror: Option<&str>) -> Vec<String> {
        let mut args: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        args.extend(self.pip_args.iter().cloned());
        if let Some(m) = pypi_mirror {
            args.extend(["--extra-index-url".to_string(), m.to_string()]);
        }
        args
    }
}

/// `pip install ARGS` as a user would type it: an argument with a space is quoted.
pub fn pip_command(args: &[String]) -> String {
    let mut c = String::from("pip install");
    for a in args {
        c.push(' ');
        if a.chars().any(char::is_whitespace) {
            c.push_str(&format!("\"{a}\""));
        } else {
            c.push_str(a);
        }
    }
    c
}

/// [`pip_command`], run by `interpreter` when given (`python3.13t -m pip install ARGS`).
pub fn command_line(interpreter: Option<&str>, args: &[String]) -> String {
    match interpreter {
        Some(i) => format!("{i} -m {}", pip_command(args)),
        None => pip_command(args),
    }
}

/// The driver a PyTorch wheel built with CUDA `cuda` needs on `os` at the least: the
/// wheels carry their own runtime, so their major line's floor (compat dossier §6.3).
pub fn wheel_driver_floor(tables: &Tables, os: Os, cuda: &Version) -> Option<Version> {
    tables
        .toolkit_line(cuda.major())
        .map(|l| l.driver_floor(os).clone())
}

/// Whether `url` looks like a PyPI index or mirror (`https://pypi.org/simple`,
/// `https://pypi.tuna.tsinghua.edu.cn/simple`, `https://mirrors.aliyun.com/pypi/simple`)
/// rather than PyTorch's wheel index (`…/whl`).
pub fn is_pypi_index(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = host.to_ascii_lowercase();
    let path = path.trim_end_matches('/').to_ascii_lowercase();
    host.split('.').any(|label| label == "pypi")
        || path.split('/').any(|seg| seg == "pypi" || seg == "simple")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DriverAction {
    None,
    Install,
    Update,
}

#[derive(Debug, Clone, Serialize)]
pub struct DriverAdvice {
    pub current: Option<Version>,
    /// The highest CUDA the current driver runs (NVML's figure, or derived from the tables).
    pub cuda: Option<Version>,
    pub action: DriverAction,
    /// The lowest driver that runs everything recommended.
    pub minimum: Option<Version>,
    /// With action `none`: a driver at least this new unlocks `unlocks`.
    pub upgrade_minimum: Option<Version>,
    pub unlocks: Option<String>,
    /// The last driver branch every GPU here still gets (Kepler: 470), when one of them
    /// is on a branch NVIDIA has stopped (#20 class 4): no driver above it can be offered.
    pub last_branch: Option<u32>,
    /// Windows, action `install`/`update`: the driver package the plan's first step
    /// downloads and installs silently (None on Linux, or when no package is known).
    pub install: Option<DriverInstall>,
    /// Action `install`/`update` for a toolkit whose driver branch is above `minimum`
    /// (CUDA 13.4: R615, #32): a driver installed for it is of this branch or newer
    /// (`minimum` stays what runs it, through minor-version compatibility).
    pub branch: Option<u32>,
}

pub use crate::compat::DriverPackage;

/// The driver the plan installs on Windows.
#[derive(Debug, Clone, Serialize)]
pub struct DriverInstall {
    /// At least `DriverAdvice::minimum`; the newest known by default.
    pub version: Version,
    pub package: DriverPackage,
    /// The installer. NVIDIA publishes no hash for it: its Authenticode signature is
    /// checked before it runs. `size` when known (≈ 0.7–0.9 GB).
    pub download: Download,
    /// False when the URL pattern or version for this package is UNCONFIRMED.
    pub confirmed: bool,
    /// Hosts serving the same path, tried before `download.url` (`drivers.toml` `[hosts]`).
    pub mirrors: Vec<String>,
    /// The installer's silent flags (`drivers.toml` `[silent]`: `-s -noreboot`).
    pub silent_args: Vec<String>,
}

/// The pip command that installs the CPU build, offered when there is no NVIDIA GPU.
pub const CPU_TORCH_COMMAND: &str =
    "pip install torch torchvision --index-url https://download.pytorch.org/whl/cpu";

/// Recommends what to install. Never fails: what does not fit becomes a blocker.
///
/// A driver that works but holds back PyTorch (a newer line) or the toolkit (a newer
/// major) gets both paths (#32): keep it, or update it first, as a driver that is
/// replaced anyway would be (the newest that runs after the update). The picks follow the
/// request's path, else the default: update when it is ours to do.
pub fn recommend(tables: &Tables, facts: &Facts, request: &Request) -> Recommendation {
    let keep = recommend_as_is(tables, facts, request);
    let Some(current) = facts.driver.clone() else {
        return keep;
    };
    if !keep.fits()
        || keep.driver.action != DriverAction::None
        || keep.driver.upgrade_minimum.is_none()
    {
        return keep;
    }
    // After the update the driver is a new one: the same as no driver today.
    let replaced = Facts {
        driver: None,
        driver_cuda: None,
        ..facts.clone()
    };
    let mut update = recommend_as_is(tables, &replaced, request);
    let newer_line = |k: Option<Version>, u: Option<Version>| match (k, u) {
        (Some(k), Some(u)) => u > k,
        (None, Some(_)) => true,
        _ => false,
    };
    let unlocks = newer_line(
        keep.torch.as_ref().map(|t| t.version.major_minor()),
        update.torch.as_ref().map(|t| t.version.major_minor()),
    ) || newer_line(
        keep.toolkit
            .as_ref()
            .map(|t| Version::new(&[t.version.major()])),
        update
            .toolkit
            .as_ref()
            .map(|t| Version::new(&[t.version.major()])),
    );
    if !update.fits() || update.driver.action == DriverAction::None || !unlocks {
        return keep;
    }
    as_update(&mut update, &keep, &current);
    let ours = match facts.os {
        Os::Windows => update.driver.install.is_some(),
        Os::Linux => {
            facts.host_kind == HostKind::Native
                && request.distro.as_ref().is_some_and(|d| {
                    crate::linux_driver::packaged(
                        d,
                        update.driver.minimum.as_ref(),
                        update.driver.branch,
                        update.driver.last_branch,
                    )
                })
        }
    };
    let default = if ours {
        DriverPath::Update
    } else {
        DriverPath::Keep
    };
    let chosen = match request.driver {
        DriverPref::Auto => default,
        DriverPref::Keep => DriverPath::Keep,
        DriverPref::Update => DriverPath::Update,
    };
    let outcome = |r: &Recommendation, driver: Option<Version>, size, restart| PathOutcome {
        driver,
        download_size: size,
        restart,
        torch: r.torch.as_ref().map(|t| t.version.clone()),
        torch_cuda: r.torch.as_ref().map(|t| t.cuda.clone()),
        toolkit: r.toolkit.as_ref().map(|t| t.version.clone()),
    };
    let install = update.driver.install.as_ref();
    let choice = DriverChoice {
        default,
        chosen,
        ours,
        update: outcome(
            &update,
            install
                .map(|i| i.version.clone())
                .or_else(|| update.driver.minimum.clone()),
            install.and_then(|i| i.download.size),
            true,
        ),
        keep: outcome(&keep, Some(current), None, false),
    };
    let mut rec = match chosen {
        DriverPath::Update => update,
        DriverPath::Keep => keep,
    };
    rec.choice = Some(choice);
    rec
}

/// A recommendation made as if there were no driver, told as the update of `current`:
/// today's driver described (from `keep`), and "update" where it said "install".
fn as_update(update: &mut Recommendation, keep: &Recommendation, current: &Version) {
    const DESCRIBED: [&str; 3] = [
        "driver_runs_cuda",
        "driver_runs_cuda_at_least",
        "driver_cuda_unknown",
    ];
    let described = keep
        .reasons
        .iter()
        .find(|m| DESCRIBED.contains(&m.key))
        .cloned();
    let minimum = update
        .driver
        .minimum
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    update.reasons.retain_mut(|m| match m.key {
        "driver_missing" => match &described {
            Some(d) => {
                *m = d.clone();
                true
            }
            None => false,
        },
        // WSL2: `wsl::finish` says "update it on Windows" for the update path.
        "wsl_driver_install" => false,
        "driver_install" | "driver_install_linux" => {
            *m = msg!(
                "driver_update_chosen",
                current = current,
                minimum = &minimum
            );
            true
        }
        _ => true,
    });
    update.driver.current = Some(current.clone());
    update.driver.cuda = keep.driver.cuda.clone();
    update.driver.action = DriverAction::Update;
}

/// The recommendation for the driver as it is (none: one to install).
fn recommend_as_is(tables: &Tables, facts: &Facts, request: &Request) -> Recommendation {
    let mut rec = Recommendation {
        goal: request.goal,
        os: facts.os,
        gpus: facts.gpus.clone(),
        toolkit: None,
        cudnn: None,
        torch: None,
        driver: DriverAdvice {
            current: facts.driver.clone(),
            cuda: driver::driver_cuda(tables, facts),
            action: DriverAction::None,
            minimum: None,
            upgrade_minimum: None,
            unlocks: None,
            last_branch: None,
            install: None,
            branch: None,
        },
        reasons: Vec::new(),
        blockers: Vec::new(),
        left_out: Vec::new(),
        visible_devices: None,
        tables: tables.source.clone(),
        refreshed: tables.live.refreshed.clone(),
        wsl: None,
        jetson: None,
        choice: None,
    };

    rec.reasons.extend(facts.notes.iter().cloned());
    // A Jetson board: JetPack's, not a PC's answer (#32).
    if let Some((model, l4t)) = jetson::host(tables, facts) {
        jetson::advise(tables, facts, model, l4t, &mut rec);
        return rec;
    }
    if facts.gpus.is_empty() {
        if facts.unidentified_gpus.is_empty() {
            rec.blockers
                .push(msg!("no_nvidia_gpu", cpu_command = CPU_TORCH_COMMAND));
        } else {
            rec.blockers.push(msg!(
                "gpu_not_identified",
                gpus = facts.unidentified_gpus.join(", ")
            ));
        }
        return rec;
    }
    describe_driver(&mut rec, facts);
    for gpu in &facts.gpus {
        match tables.architecture_of(gpu.compute_capability) {
            Some(a) => rec.reasons.push(msg!(
                "gpu_architecture",
                gpu = gpu.label(),
                architecture = &a.name
            )),
            None => rec
                .reasons
                .push(msg!("gpu_architecture_unknown", gpu = gpu.label())),
        }
    }

    // The driver floor every pick shares: the GPUs' own architecture needs.
    let mut needs = driver::Needs::default();
    for gpu in &facts.gpus {
        driver::gpu_needs(tables, facts, gpu, &mut needs, &mut rec.reasons);
    }
    driver::floor_needs(facts, request.driver_floor.as_ref(), &mut needs);

    match request.goal {
        Goal::Pytorch => {
            let pick = torch::pick(
                tables,
                facts,
                None,
                torch::Want::of(request),
                &mut needs,
                &mut rec.reasons,
                &mut rec.blockers,
            );
            if let Some(p) = pick {
                needs.add(p.need);
                rec.left_out.extend(p.left_out);
                rec.torch = Some(p.pick);
            }
        }
        Goal::Developer => {
            if let Some((tk, need)) = toolkit::pick(
                tables,
                facts,
                request,
                &mut needs,
                &mut rec.reasons,
                &mut rec.blockers,
                &mut rec.left_out,
            ) {
                needs.add(need);
                let kept = leave_out::kept_facts(facts, &rec.left_out);
                rec.cudnn = toolkit::pick_cudnn(tables, &kept, &tk, &mut rec.reasons);
                let major = tk.version.major();
                rec.toolkit = Some(tk);
                // Extensions must be built with the toolkit major torch was built with.
                let mut torch_reasons = Vec::new();
                let found = torch::pick(
                    tables,
                    facts,
                    Some(major),
                    torch::Want::of(request),
                    &mut needs,
                    &mut torch_reasons,
                    &mut Vec::new(),
                );
                if let Some(p) = found {
                    rec.reasons.extend(torch_reasons);
                    needs.add(p.need);
                    rec.left_out.extend(p.left_out);
                    rec.reasons
                        .push(msg!("torch_matches_toolkit_major", major = major));
                    rec.torch = Some(p.pick);
                } else {
                    rec.reasons
                        .push(msg!("torch_none_for_toolkit_major", major = major));
                }
            }
        }
    }

    // The GPUs every pick keeps (#20 class 1).
    rec.visible_devices = leave_out::visible_devices(facts, &rec.left_out);
    if rec.blockers.is_empty() {
        driver::advise(tables, facts, request, &needs, &mut rec);
    }
    wsl::finish(facts, &mut rec);
    provenance(tables, &mut rec);
    rec
}

/// One reason per pick saying where its facts came from: the tables, a live source, or
/// the cache of an earlier refresh (with its date).
fn provenance(tables: &Tables, rec: &mut Recommendation) {
    let mut picks: Vec<(String, &Origin)> = Vec::new();
    if let Some(tk) = &rec.toolkit
        && let Some(r) = tables.toolkit(&tk.version)
    {
        picks.push((format!("CUDA {}", tk.version), &r.origin));
    }
    if let Some(c) = &rec.cudnn
        && let Some(r) = tables
            .cudnn
            .releases
            .iter()
            .find(|r| r.version == c.version)
    {
        picks.push((format!("cuDNN {}", c.version), &r.origin));
    }
    if let Some(t) = &rec.torch
        && let Some(r) = tables
            .pytorch
            .releases
            .iter()
            .find(|r| r.version == t.version.major_minor())
    {
        picks.push((format!("PyTorch {}", t.version), &r.origin));
        if tables.live.wheels.contains_key(&t.variant) {
            picks.push((
                format!("PyTorch wheel list ({})", t.variant),
                &tables.live.wheels_origin,
            ));
        }
    }
    for (what, origin) in picks {
        rec.reasons
            .push(source_reason(&what, origin, &tables.source));
    }
    // A torch line learned from PyPI alone: whether its CUDA variants are confirmed.
    if let Some(t) = &rec.torch {
        rec.reasons
            .extend(crate::compat::notes::torch_reasons(tables, &t.version));
    }
}

fn source_reason(what: &str, origin: &Origin, source: &TableSource) -> Message {
    match (origin, source) {
        (
            Origin::Fetched {
                file,
                fetched_at,
                live: true,
            },
            _,
        ) => msg!(
            "fact_from_live",
            what = what,
            file = file,
            at = crate::compat::utc(*fetched_at)
        ),
        (
            Origin::Fetched {
                file,
                fetched_at,
                live: false,
            },
            _,
        ) => msg!(
            "fact_from_cache",
            what = what,
            file = file,
            at = crate::compat::utc(*fetched_at)
        ),
        (Origin::Table, TableSource::Embedded) => msg!("fact_from_tables", what = what),
        (Origin::Table, TableSource::Dir(d)) => {
            msg!("fact_from_dir", what = what, dir = d.display())
        }
    }
}

fn describe_driver(rec: &mut Recommendation, facts: &Facts) {
    match (&facts.driver, &rec.driver.cuda) {
        (None, _) => rec.reasons.push(msg!("driver_missing")),
        (Some(d), Some(c)) if facts.driver_cuda.is_some() => {
            rec.reasons
                .push(msg!("driver_runs_cuda", driver = d, cuda = c))
        }
        (Some(d), Some(c)) => {
            rec.reasons
                .push(msg!("driver_runs_cuda_at_least", driver = d, cuda = c))
        }
        (Some(d), None) => rec.reasons.push(msg!("driver_cuda_unknown", driver = d)),
    }
}

/// Renders `m` as an English sentence (what the CLI prints by default).
pub fn english(m: &Message) -> String {
    crate::i18n::render(m, crate::i18n::Lang::En)
}

#[cfg(test)]
mod sweep;
#[cfg(test)]
mod tests;

/// How the toolkit gets onto the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// NVIDIA's installer (needs administrator rights).
    #[default]
    Installer,
    /// NVIDIA's component wheels from a PyPI index or mirror (no administrator rights).
    Wheels,
}

/// What the user's situation says about the method.
#[derive(Debug, Clone, Copy, Default)]
pub struct MethodFacts {
    /// Administrator (or root) rights, or a relaunch that gets them.
    pub elevated: bool,
    /// The user chose a PyPI mirror (a slow or blocked link to NVIDIA).
    pub pypi_mirror: bool,
    /// A download from NVIDIA failed or crawled in this session.
    pub installer_download_failed: bool,
}

/// The method to offer first, and why. The installer is NVIDIA's supported path, so it
/// stays the default unless it cannot work (no rights) or its server is the problem.
pub fn method_advice(f: &MethodFacts) -> (Method, Message) {
    if f.installer_download_failed {
        (Method::Wheels, crate::msg!("method_wheels_download_failed"))
    } else if !f.elevated {
        (Method::Wheels, crate::msg!("method_wheels_no_admin"))
    } else if f.pypi_mirror {
        (Method::Wheels, crate::msg!("method_wheels_mirror"))
    } else {
        (Method::Installer, crate::msg!("method_installer_default"))
    }
}
