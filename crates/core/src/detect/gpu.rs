//! GPUs and the driver: NVML first (loaded at run time, so a machine without a driver
//! just gets an error), then PCI enumeration, which finds cards with no working driver.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::ProbeError;
use crate::compat::{Os, Tables, normalise_pci_id};
use crate::platform::Host;
use crate::version::{ComputeCapability, Version};

pub const NVIDIA_VENDOR: &str = "0x10de";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GpuSource {
    Nvml,
    Pci,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    Nvidia,
    Intel,
    Amd,
    Other,
}

impl Vendor {
    fn from_pci(id: &str) -> Vendor {
        match id.to_ascii_lowercase().as_str() {
            NVIDIA_VENDOR => Vendor::Nvidia,
            "0x8086" => Vendor::Intel,
            "0x1002" | "0x1022" => Vendor::Amd,
            _ => Vendor::Other,
        }
    }
}

/// A device problem (Windows Device Manager code, or Linux "no driver bound").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceProblem {
    /// The Windows `ConfigManagerErrorCode`; None on Linux.
    pub code: Option<u32>,
    /// What is wrong, as a stable word (`disabled`, `no_driver`, …).
    pub key: GpuProblem,
}

/// What is wrong with a GPU device: the one table of Device Manager codes, the stable
/// word (`gpus[].problem.key`) and the catalogue key of the sentence that both detect's
/// notes and repair's findings say (the finding's id too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GpuProblem {
    /// Code 10: the device cannot start.
    FailedStart,
    /// Code 22: disabled in Device Manager.
    Disabled,
    /// Code 28 (Windows), or no kernel driver bound (Linux).
    NoDriver,
    /// Code 31: Windows could not load the driver.
    FailedAdd,
    /// Code 43: the driver stopped the device after reporting a problem.
    DriverFailed,
    /// Code 52: the driver's signature was refused.
    UnsignedDriver,
    /// Windows shows the card through its fallback "Basic Display Adapter" driver.
    BasicDisplayAdapter,
    /// Any other Device Manager code.
    DeviceProblem,
}

impl GpuProblem {
    /// Device Manager problem codes (Microsoft Learn, "Device Manager error messages").
    pub fn from_code(code: u32) -> GpuProblem {
        match code {
            10 => GpuProblem::FailedStart,
            22 => GpuProblem::Disabled,
            28 => GpuProblem::NoDriver,
            31 => GpuProblem::FailedAdd,
            43 => GpuProblem::DriverFailed,
            52 => GpuProblem::UnsignedDriver,
            _ => GpuProblem::DeviceProblem,
        }
    }

    /// The stable word of `gpus[].problem.key`.
    pub fn word(self) -> &'static str {
        match self {
            GpuProblem::FailedStart => "failed_start",
            GpuProblem::Disabled => "disabled",
            GpuProblem::NoDriver => "no_driver",
            GpuProblem::FailedAdd => "failed_add",
            GpuProblem::DriverFailed => "driver_failed",
            GpuProblem::UnsignedDriver => "unsigned_driver",
            GpuProblem::BasicDisplayAdapter => "basic_display_adapter",
            GpuProblem::DeviceProblem => "device_problem",
        }
    }

    /// The catalogue key of what to tell the user (params `gpu`, `code`).
    pub fn message_key(self) -> &'static str {
        match self {
            GpuProblem::FailedStart => "gpu_failed_start",
            GpuProblem::Disabled => "gpu_disabled",
            GpuProblem::NoDriver => "gpu_no_driver",
            GpuProblem::FailedAdd => "gpu_failed_add",
            GpuProblem::DriverFailed => "gpu_driver_failed",
            GpuProblem::UnsignedDriver => "gpu_unsigned_driver",
            GpuProblem::BasicDisplayAdapter => "gpu_basic_display_adapter",
            GpuProblem::DeviceProblem => "gpu_device_problem",
        }
    }

    /// The catalogue key of the fix: every one is the driver's to mend.
    pub fn fix_key(self) -> &'static str {
        "repair_fix_driver"
    }
}

impl std::fmt::Display for GpuProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

impl DeviceProblem {
    /// What to tell the user about `gpu` (`GpuProblem::message_key`, params `gpu`, `code`).
    pub fn message(&self, gpu: &str) -> crate::message::Message {
        crate::message::Message::new(self.key.message_key())
            .with("gpu", gpu)
            .with("code", self.code.map(|c| c.to_string()).unwrap_or_default())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Gpu {
    pub name: String,
    pub vendor: Vendor,
    pub source: GpuSource,
    /// An NVIDIA GPU; integrated Intel/AMD graphics are listed with `false`.
    pub cuda_capable: bool,
    pub compute_capability: Option<ComputeCapability>,
    pub architecture: Option<String>,
    pub uuid: Option<String>,
    pub memory_total_bytes: Option<u64>,
    pub memory_used_bytes: Option<u64>,
    pub pci_bus_id: Option<String>,
    /// `0x2684`
    pub pci_device_id: Option<String>,
    /// Linux: the kernel driver bound to the device (`nvidia`, `nouveau`), if any.
    pub kernel_driver: Option<String>,
    pub problem: Option<DeviceProblem>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DriverSource {
    Nvml,
    /// Linux `/proc/driver/nvidia/version`: the kernel module is loaded, NVML is not usable.
    Proc,
    /// A sandbox root's Windows DriverStore: `nv_dispi.inf`'s `DriverVer`.
    Inf,
    /// WSL2: the Windows driver's `/usr/lib/wsl/lib/nvidia-smi` (NVML not loadable).
    #[serde(rename = "nvidia-smi")]
    NvidiaSmi,
}

#[derive(Debug, Clone, Serialize)]
pub struct DriverInfo {
    pub version: Version,
    /// The highest CUDA the driver supports (`12.4`), from NVML.
    pub cuda_version: Option<Version>,
    pub source: DriverSource,
}

#[derive(Debug, Clone, Default)]
pub struct GpuProbe {
    pub driver: Option<DriverInfo>,
    pub driver_error: Option<ProbeError>,
    pub gpus: Vec<Gpu>,
}

/// A display-class PCI device, from sysfs or Windows PnP.
#[derive(Debug, Clone, PartialEq)]
pub struct PciDevice {
    pub vendor: String,
    pub device: String,
    pub bus_id: Option<String>,
    pub name: Option<String>,
    pub kernel_driver: Option<String>,
    pub problem: Option<DeviceProblem>,
}

pub fn probe(host: &Host, tables: &Tables, timeout: Duration) -> Result<GpuProbe, ProbeError> {
    let pci = pci_devices(host, timeout);
    let mut out = GpuProbe::default();
    let nvml = if host.root_is_real() {
        nvml_probe(tables)
    } else {
        Err(no_nvml_in_sandbox())
    };
    match nvml {
        Ok((driver, gpus)) => {
            out.driver = Some(driver);
            out.gpus = gpus;
        }
        Err(e) => {
            match smi_probe(host, tables, timeout) {
                Some((driver, gpus)) => {
                    out.driver = Some(driver);
                    out.gpus = gpus;
                }
                None => out.driver = proc_driver(host).or_else(|| inf_driver(host)),
            }
            out.driver_error = Some(e);
        }
    }
    let pci = match pci {
        Ok(p) => p,
        Err(e) if out.gpus.is_empty() => return Err(e),
        Err(_) => Vec::new(),
    };
    // PCI devices NVML did not list: other vendors, and NVIDIA cards without a working driver.
    for dev in pci {
        let seen = out
            .gpus
            .iter()
            .any(|g| same_bus(g.pci_bus_id.as_deref(), dev.bus_id.as_deref()));
        if !seen {
            out.gpus.push(from_pci(tables, dev));
        }
    }
    Ok(out)
}

fn no_nvml_in_sandbox() -> ProbeError {
    ProbeError::Missing {
        what: "NVML".into(),
        detail: "not loaded for a sandboxed root".into(),
    }
}

/// Windows' own driver for a card it has no driver for ("Microsoft Basic Display Adapter"):
/// its name says nothing about the card.
fn is_fallback_adapter(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("basic display") || n.contains("basic render") || n.contains("video controller")
}

/// Bus ids compare without the PCI domain's width (`00000000:01:00.0` vs `0000:01:00.0`).
fn same_bus(a: Option<&str>, b: Option<&str>) -> bool {
    let key = |s: &str| {
        s.rsplit_once(':')
            .map(|(l, r)| format!("{}:{r}", l.rsplit(':').next().unwrap_or(l)).to_ascii_lowercase())
    };
    match (a, b) {
        (Some(a), Some(b)) => key(a).is_some() && key(a) == key(b),
        _ => false,
    }
}

fn from_pci(tables: &Tables, dev: PciDevice) -> Gpu {
    let vendor = Vendor::from_pci(&dev.vendor);
    let nvidia = vendor == Vendor::Nvidia;
    // A `[[gpu]]` row, else pci.ids' chip; else the name Windows gives the device when it
    // names one model (Windows with the driver but no NVML), never the fallback adapter's.
    let known = nvidia.then(|| tables.identify_pci(&dev.device)).flatten();
    let by_name = match (&known, &dev.name) {
        (None, Some(n)) if nvidia && !n.is_empty() => tables.cc_by_name(n),
        _ => None,
    };
    let cc = known.as_ref().map(|k| k.cc).or(by_name);
    let db_name = || {
        nvidia
            .then(|| tables.pci_name(&dev.device))
            .flatten()
            .map(|n| match (n.find('['), n.rfind(']')) {
                (Some(a), Some(b)) if a < b => n[a + 1..b].to_string(),
                _ => n.to_string(),
            })
    };
    let name = match (known, &dev.name) {
        (Some(k), _) => k.name,
        (None, Some(n)) if !n.is_empty() && (by_name.is_some() || !is_fallback_adapter(n)) => {
            n.clone()
        }
        (None, n) => db_name()
            .or_else(|| n.clone().filter(|n| !n.is_empty()))
            .unwrap_or_else(|| format!("PCI {}:{}", dev.vendor, dev.device)),
    };
    Gpu {
        name,
        vendor,
        source: GpuSource::Pci,
        cuda_capable: vendor == Vendor::Nvidia,
        architecture: cc
            .and_then(|c| tables.architecture_of(c))
            .map(|a| a.name.clone()),
        compute_capability: cc,
        uuid: None,
        memory_total_bytes: None,
        memory_used_bytes: None,
        pci_bus_id: dev.bus_id,
        pci_device_id: normalise_pci_id(&dev.device),
        kernel_driver: dev.kernel_driver,
        problem: dev.problem,
    }
}

fn nvml_probe(tables: &Tables) -> Result<(DriverInfo, Vec<Gpu>), ProbeError> {
    let failed = |what: &str, e: &dyn std::fmt::Display| ProbeError::Failed {
        what: what.into(),
        detail: e.to_string(),
    };
    // NVML is a C library loaded at run time: keep a misbehaving one from taking us down.
    let nvml = std::panic::catch_unwind(init_nvml)
        .map_err(|_| failed("NVML", &"panicked while loading"))?
        .map_err(|e| match e {
            nvml_wrapper::error::NvmlError::LibloadingError(_) => ProbeError::Missing {
                what: "NVIDIA driver".into(),
                detail: format!("the NVML library ({}) is not installed", nvml_library()),
            },
            nvml_wrapper::error::NvmlError::DriverNotLoaded => ProbeError::Missing {
                what: "NVIDIA driver".into(),
                detail: "the driver is installed but not loaded".into(),
            },
            e => failed("NVML", &e),
        })?;
    let version = nvml
        .sys_driver_version()
        .map_err(|e| failed("driver version", &e))?;
    let version: Version = version.parse().map_err(|e| failed("driver version", &e))?;
    let cuda_version = nvml.sys_cuda_driver_version().ok().map(|v| {
        Version::new(&[
            nvml_wrapper::cuda_driver_version_major(v) as u32,
            nvml_wrapper::cuda_driver_version_minor(v) as u32,
        ])
    });
    let count = nvml.device_count().map_err(|e| failed("GPU count", &e))?;
    let mut gpus = Vec::new();
    for i in 0..count {
        let Ok(d) = nvml.device_by_index(i) else {
            continue;
        };
        let pci = d.pci_info().ok();
        let mem = d.memory_info().ok();
        // pci_device_id packs the device id in the upper and the vendor in the lower half.
        let device_id = pci
            .as_ref()
            .map(|p| format!("0x{:04x}", p.pci_device_id >> 16));
        let name = d.name().ok();
        // NVML's own answer; else (an old driver, an error) the tables' by id, then by name.
        let cc = d
            .cuda_compute_capability()
            .ok()
            .map(|c| ComputeCapability::new(c.major as u32, c.minor as u32))
            .or_else(|| identify(tables, device_id.as_deref(), name.as_deref()));
        gpus.push(Gpu {
            uuid: d.uuid().ok(),
            memory_total_bytes: mem.as_ref().map(|m| m.total),
            memory_used_bytes: mem.as_ref().map(|m| m.used),
            pci_bus_id: pci.as_ref().map(|p| p.bus_id.clone()),
            pci_device_id: device_id,
            ..listed_by_driver(
                tables,
                name.unwrap_or_else(|| format!("NVIDIA GPU {i}")),
                cc,
            )
        });
    }
    Ok((
        DriverInfo {
            version,
            cuda_version,
            source: DriverSource::Nvml,
        },
        gpus,
    ))
}

/// NVML by its name; else, inside WSL2 where the loader may not know `/usr/lib/wsl/lib`
/// (no `ld.wsl.conf`), the Windows driver's own copy there (dossier §13.2).
fn init_nvml() -> Result<nvml_wrapper::Nvml, nvml_wrapper::error::NvmlError> {
    use nvml_wrapper::{Nvml, error::NvmlError};
    match Nvml::init() {
        Err(NvmlError::LibloadingError(e)) if cfg!(target_os = "linux") => {
            let wsl = Path::new(super::wsl::LIB_DIR).join("libnvidia-ml.so.1");
            if wsl.is_file() {
                Nvml::builder().lib_path(wsl.as_os_str()).init()
            } else {
                Err(NvmlError::LibloadingError(e))
            }
        }
        r => r,
    }
}

/// WSL2 with NVML unusable: the Windows driver's `nvidia-smi` in `/usr/lib/wsl/lib`
/// (never on PATH there by default) names the driver — a Windows version number — and
/// the GPUs. Only inside WSL2: no other program under a root is run for this.
fn smi_probe(host: &Host, tables: &Tables, timeout: Duration) -> Option<(DriverInfo, Vec<Gpu>)> {
    if !super::wsl::is_wsl2(host) {
        return None;
    }
    let smi = super::wsl::nvidia_smi(host);
    if !std::fs::symlink_metadata(&smi).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let out = host
        .run(
            &smi,
            &[
                "--query-gpu=name,driver_version,pci.bus_id",
                "--format=csv,noheader",
            ],
            timeout,
        )
        .ok()?;
    if out.status != Some(0) {
        return None;
    }
    parse_smi(tables, &out.stdout)
}

/// `NVIDIA GeForce RTX 3060, 512.95, 00000000:01:00.0` lines: the driver and the GPUs.
fn parse_smi(tables: &Tables, text: &str) -> Option<(DriverInfo, Vec<Gpu>)> {
    let mut version = None;
    let mut gpus = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let [name, driver, bus] = f.as_slice() else {
            continue;
        };
        let Ok(v) = driver.parse::<Version>() else {
            continue;
        };
        version.get_or_insert(v);
        let cc = identify(tables, None, Some(name));
        gpus.push(Gpu {
            pci_bus_id: Some(bus.to_string()).filter(|b| !b.is_empty()),
            ..listed_by_driver(tables, name.to_string(), cc)
        });
    }
    Some((
        DriverInfo {
            version: version?,
            cuda_version: None,
            source: DriverSource::NvidiaSmi,
        },
        gpus,
    ))
}

/// A GPU the driver lists (NVML, or `nvidia-smi` inside WSL2): CUDA-capable, its
/// architecture from the tables; what only NVML knows is left to the caller.
fn listed_by_driver(tables: &Tables, name: String, cc: Option<ComputeCapability>) -> Gpu {
    Gpu {
        name,
        vendor: Vendor::Nvidia,
        source: GpuSource::Nvml,
        cuda_capable: true,
        architecture: cc
            .and_then(|c| tables.architecture_of(c))
            .map(|a| a.name.clone()),
        compute_capability: cc,
        uuid: None,
        memory_total_bytes: None,
        memory_used_bytes: None,
        pci_bus_id: None,
        pci_device_id: None,
        kernel_driver: None,
        problem: None,
    }
}

/// A GPU's compute capability from the tables: by PCI device id, else by its name.
pub fn identify(
    tables: &Tables,
    device_id: Option<&str>,
    name: Option<&str>,
) -> Option<ComputeCapability> {
    device_id
        .and_then(|id| tables.identify_pci(id))
        .map(|g| g.cc)
        .or_else(|| name.and_then(|n| tables.cc_by_name(n)))
}

fn nvml_library() -> &'static str {
    if cfg!(windows) {
        "nvml.dll"
    } else {
        "libnvidia-ml.so.1"
    }
}

/// Linux: the kernel module's version when NVML is unusable.
fn proc_driver(host: &Host) -> Option<DriverInfo> {
    if host.os != Os::Linux {
        return None;
    }
    let text = std::fs::read_to_string(host.system_path("/proc/driver/nvidia/version")).ok()?;
    parse_proc_version(&text).map(|version| DriverInfo {
        version,
        cuda_version: None,
        source: DriverSource::Proc,
    })
}

/// The installed driver's version alone (the driver step's "already there?"): NVML on the
/// machine itself; under a sandbox root what `probe` reads there instead.
pub fn installed_driver(host: &Host) -> Option<Version> {
    if host.root_is_real() {
        let nvml = std::panic::catch_unwind(init_nvml).ok()?.ok()?;
        return nvml.sys_driver_version().ok()?.parse().ok();
    }
    proc_driver(host)
        .or_else(|| inf_driver(host))
        .map(|d| d.version)
}

/// A sandbox root standing for Windows: the display driver package's INF in the root's
/// DriverStore (`nv_dispi.inf_amd64_*/nv_dispi.inf`, the newest if several). Only under a
/// root: a real DriverStore keeps the packages of old drivers too, and NVML says which runs.
fn inf_driver(host: &Host) -> Option<DriverInfo> {
    if host.os != Os::Windows || host.root_is_real() {
        return None;
    }
    let repo = host.system_path("C:\\Windows\\System32\\DriverStore\\FileRepository");
    std::fs::read_dir(repo)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("nv_dispi.inf_"))
        .filter_map(|e| std::fs::read_to_string(e.path().join("nv_dispi.inf")).ok())
        .filter_map(|text| parse_inf_version(&text))
        .max()
        .map(|version| DriverInfo {
            version,
            cuda_version: None,
            source: DriverSource::Inf,
        })
}

/// `DriverVer = 10/28/2025,32.0.15.8157` → 581.57: NVIDIA's version is the last five digits
/// of the Windows version's last two fields (15.8157 → 158157 → 581.57).
pub fn parse_inf_version(text: &str) -> Option<Version> {
    let line = text.lines().find(|l| {
        l.trim_start()
            .get(..9)
            .is_some_and(|k| k.eq_ignore_ascii_case("driverver"))
    })?;
    let windows = line.split_once('=')?.1.split(',').nth(1)?.trim();
    let fields: Vec<&str> = windows.split('.').collect();
    let [_, _, a, b] = fields.as_slice() else {
        return None;
    };
    if !(a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit()) && b.len() == 4) {
        return None;
    }
    let digits = format!("{a}{b}");
    let last5 = digits.get(digits.len().checked_sub(5)?..)?;
    format!("{}.{}", &last5[..3], &last5[3..]).parse().ok()
}

/// `NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 …` → 550.54.15.
pub fn parse_proc_version(text: &str) -> Option<Version> {
    let line = text.lines().find(|l| l.starts_with("NVRM version"))?;
    line.split_whitespace().find_map(|w| {
        let v: Version = w.parse().ok()?;
        (v.major() >= 100 && w.contains('.')).then_some(v)
    })
}

fn pci_devices(host: &Host, timeout: Duration) -> Result<Vec<PciDevice>, ProbeError> {
    match host.os {
        Os::Linux => scan_sysfs(&host.system_path("/sys/bus/pci/devices")),
        Os::Windows if host.windows_apis => windows_pnp(host, timeout),
        Os::Windows => Ok(Vec::new()),
    }
}

/// Display-class PCI devices from a sysfs tree (`vendor`, `device`, `class`, `driver`).
pub fn scan_sysfs(dir: &Path) -> Result<Vec<PciDevice>, ProbeError> {
    let entries = std::fs::read_dir(dir).map_err(|e| ProbeError::Missing {
        what: "PCI device list".into(),
        detail: format!("{}: {e}", dir.display()),
    })?;
    let read = |p: &Path, f: &str| {
        std::fs::read_to_string(p.join(f))
            .ok()
            .map(|s| s.trim().to_ascii_lowercase())
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let p = e.path();
        let (Some(vendor), Some(device), Some(class)) =
            (read(&p, "vendor"), read(&p, "device"), read(&p, "class"))
        else {
            continue;
        };
        // Class 0x03xxxx: display controllers (VGA, 3D controller, other).
        if !class.starts_with("0x03") {
            continue;
        }
        let kernel_driver = std::fs::read_link(p.join("driver"))
            .ok()
            .and_then(|l| l.file_name().map(|n| n.to_string_lossy().into_owned()));
        let problem =
            (vendor == NVIDIA_VENDOR && kernel_driver.is_none()).then_some(DeviceProblem {
                code: None,
                key: GpuProblem::NoDriver,
            });
        out.push(PciDevice {
            vendor,
            device,
            bus_id: Some(e.file_name().to_string_lossy().into_owned()),
            name: None,
            kernel_driver,
            problem,
        });
    }
    out.sort_by(|a, b| a.bus_id.cmp(&b.bus_id));
    Ok(out)
}

/// Windows: display devices and driverless NVIDIA devices from WMI's Win32_PnPEntity.
fn windows_pnp(host: &Host, timeout: Duration) -> Result<Vec<PciDevice>, ProbeError> {
    const QUERY: &str = "Get-CimInstance Win32_PnPEntity -Filter \"PNPDeviceID LIKE 'PCI%'\" | \
        Where-Object { $_.PNPClass -eq 'Display' -or ($_.PNPDeviceID -like 'PCI\\VEN_10DE*' -and -not $_.PNPClass) } | \
        Select-Object Name,PNPDeviceID,PNPClass,ConfigManagerErrorCode | ConvertTo-Json -Compress";
    let ps = host
        .which("powershell")
        .unwrap_or_else(|| std::path::PathBuf::from("powershell.exe"));
    let out = host.run(
        &ps,
        &["-NoProfile", "-NonInteractive", "-Command", QUERY],
        timeout,
    )?;
    parse_pnp_json(&out.stdout)
}

/// Parses `ConvertTo-Json` output of Win32_PnPEntity / Win32_VideoController rows
/// (one object or an array).
pub fn parse_pnp_json(text: &str) -> Result<Vec<PciDevice>, ProbeError> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| ProbeError::Failed {
        what: "Windows device list".into(),
        detail: e.to_string(),
    })?;
    let rows = match value {
        serde_json::Value::Array(a) => a,
        v => vec![v],
    };
    let mut out = Vec::new();
    for row in rows {
        let id = row["PNPDeviceID"]
            .as_str()
            .unwrap_or_default()
            .to_ascii_uppercase();
        let field = |key: &str| {
            id.split(['\\', '&'])
                .find_map(|p| p.strip_prefix(key))
                .map(|h| format!("0x{}", h.to_ascii_lowercase()))
        };
        let (Some(vendor), Some(device)) = (field("VEN_"), field("DEV_")) else {
            continue;
        };
        let name = row["Name"].as_str().map(str::to_string);
        let code = row["ConfigManagerErrorCode"].as_u64().map(|c| c as u32);
        let basic = name.as_deref().is_some_and(|n| n.contains("Basic Display"));
        let problem = match code {
            Some(0) | None if basic && vendor == NVIDIA_VENDOR => Some(DeviceProblem {
                code,
                key: GpuProblem::BasicDisplayAdapter,
            }),
            Some(0) | None => None,
            Some(c) => Some(DeviceProblem {
                code: Some(c),
                key: GpuProblem::from_code(c),
            }),
        };
        out.push(PciDevice {
            vendor,
            device,
            bus_id: None,
            name: name.filter(|n| !n.contains("Basic Display")),
            kernel_driver: None,
            problem,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    /// WSL2's `nvidia-smi` answer: the Windows driver's number, the GPUs by name.
    #[test]
    fn nvidia_smi_lines_give_the_driver_and_the_gpus() {
        let tables = crate::compat::Tables::embedded().unwrap();
        let (d, gpus) = super::parse_smi(
            &tables,
            "NVIDIA GeForce RTX 3060, 512.95, 00000000:01:00.0\n\nnot, a line\n",
        )
        .unwrap();
        assert_eq!(d.version.to_string(), "512.95");
        assert_eq!(d.source, super::DriverSource::NvidiaSmi);
        assert_eq!(gpus.len(), 1);
        assert_eq!(
            gpus[0].compute_capability.map(|c| c.sm()),
            Some("sm_86".into())
        );
        assert!(super::parse_smi(&tables, "garbage\n").is_none());
    }
    use super::*;

    #[test]
    fn a_windows_driver_version_reads_as_nvidia_numbers() {
        let inf = "[Version]\nSignature=\"$Windows NT$\"\nDriverVer = 10/28/2025,32.0.15.8157\n";
        assert_eq!(parse_inf_version(inf), Some("581.57".parse().unwrap()));
        let inf = "driverver=03/10/2024,31.0.15.5176";
        assert_eq!(parse_inf_version(inf), Some("551.76".parse().unwrap()));
        assert_eq!(parse_inf_version("DriverVer = 01/01/2020,1.2.3"), None);
        assert_eq!(parse_inf_version("Class = Display"), None);
    }

    /// A sandbox root standing for Windows: the INF says which driver is installed; the
    /// newest package wins, and a Linux root never looks there.
    #[test]
    fn a_sandbox_windows_driver_is_read_from_its_driver_store() {
        let root = tempfile::tempdir().unwrap();
        let host = Host::sandbox(Os::Windows, root.path(), Default::default());
        assert_eq!(installed_driver(&host), None);
        let repo = root
            .path()
            .join("C/Windows/System32/DriverStore/FileRepository");
        for (dir, ver) in [
            ("nv_dispi.inf_amd64_a", "31.0.15.5176"),
            ("nv_dispi.inf_amd64_b", "32.0.15.8157"),
        ] {
            std::fs::create_dir_all(repo.join(dir)).unwrap();
            std::fs::write(
                repo.join(dir).join("nv_dispi.inf"),
                format!("DriverVer = 10/28/2025,{ver}\n"),
            )
            .unwrap();
        }
        assert_eq!(installed_driver(&host), Some("581.57".parse().unwrap()));
        let linux = Host::sandbox(Os::Linux, root.path(), Default::default());
        assert_eq!(installed_driver(&linux), None);
    }

    #[test]
    fn bus_ids_match_across_domain_widths() {
        assert!(same_bus(Some("00000000:01:00.0"), Some("0000:01:00.0")));
        assert!(!same_bus(Some("00000000:01:00.0"), Some("0000:02:00.0")));
        assert!(!same_bus(None, Some("0000:02:00.0")));
    }

    #[test]
    fn pnp_rows_with_problem_codes() {
        let json = r#"[
          {"Name":"NVIDIA GeForce RTX 3060","PNPDeviceID":"PCI\\VEN_10DE&DEV_2503&SUBSYS_397D1462&REV_A1\\4&1A2B","PNPClass":"Display","ConfigManagerErrorCode":0},
          {"Name":"Microsoft Basic Display Adapter","PNPDeviceID":"PCI\\VEN_10DE&DEV_2684&SUBSYS_16F310DE&REV_A1\\4&3C","PNPClass":"Display","ConfigManagerErrorCode":0},
          {"Name":"Video Controller","PNPDeviceID":"PCI\\VEN_10DE&DEV_1B80&SUBSYS_00000000&REV_A1\\4&5","PNPClass":null,"ConfigManagerErrorCode":28},
          {"Name":"NVIDIA Quadro P4000","PNPDeviceID":"PCI\\VEN_10DE&DEV_1BB1&SUBSYS_11A310DE&REV_A1\\4&6","PNPClass":"Display","ConfigManagerErrorCode":43},
          {"Name":"Intel(R) UHD Graphics 630","PNPDeviceID":"PCI\\VEN_8086&DEV_3E92&SUBSYS_00000000&REV_00\\3&11","PNPClass":"Display","ConfigManagerErrorCode":22}
        ]"#;
        let d = parse_pnp_json(json).unwrap();
        assert_eq!(d.len(), 5);
        assert_eq!(
            (
                d[0].vendor.as_str(),
                d[0].device.as_str(),
                d[0].problem.as_ref()
            ),
            ("0x10de", "0x2503", None)
        );
        assert_eq!(
            d[1].problem.as_ref().unwrap().key,
            GpuProblem::BasicDisplayAdapter
        );
        assert_eq!(
            d[1].name, None,
            "the fallback adapter's name is not the card's"
        );
        assert_eq!(d[2].problem.as_ref().unwrap().key, GpuProblem::NoDriver);
        assert_eq!(d[3].problem.as_ref().unwrap().key, GpuProblem::DriverFailed);
        assert_eq!(d[4].problem.as_ref().unwrap().key, GpuProblem::Disabled);
        // A single object (one device) is not wrapped in an array by ConvertTo-Json.
        let one = parse_pnp_json(
            r#"{"Name":"x","PNPDeviceID":"PCI\\VEN_10DE&DEV_2684","ConfigManagerErrorCode":0}"#,
        )
        .unwrap();
        assert_eq!(one.len(), 1);
        assert!(parse_pnp_json("not json").is_err());
        assert!(parse_pnp_json("").unwrap().is_empty());
    }

    #[test]
    fn proc_version_line() {
        let text = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version:  gcc version 12.2.0\n";
        assert_eq!(parse_proc_version(text).unwrap().to_string(), "550.54.15");
        assert!(parse_proc_version("garbage").is_none());
    }

    /// A display-class device in a sysfs tree under `root`.
    fn sysfs_device(root: &Path, bdf: &str, vendor: &str, device: &str, class: &str) {
        let d = root.join("sys/bus/pci/devices").join(bdf);
        std::fs::create_dir_all(&d).unwrap();
        for (f, v) in [("vendor", vendor), ("device", device), ("class", class)] {
            std::fs::write(d.join(f), format!("{v}\n")).unwrap();
        }
    }

    /// Driverless cards known only by their PCI id: an MX450 laptop, an RTX 5090, an
    /// RTX PRO 6000D and a GH100 board with no `[[gpu]]` row are placed by the tables (the
    /// MX450 and the pci.ids-only ones were "not identified" on the base commit); an unknown
    /// id and a Kepler GK104 (CC 3.0) stay unidentified, the latter under its pci.ids name.
    #[test]
    fn driverless_cards_are_identified_by_pci_id() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        sysfs_device(r, "0000:01:00.0", "0x10de", "0x1f97", "0x030200"); // MX450
        sysfs_device(r, "0000:02:00.0", "0x10de", "0x2b85", "0x030000"); // RTX 5090
        sysfs_device(r, "0000:03:00.0", "0x10de", "0x2bb2", "0x030000"); // RTX PRO 6000D
        sysfs_device(r, "0000:04:00.0", "0x10de", "0x2302", "0x030200"); // GH100
        sysfs_device(r, "0000:05:00.0", "0x10de", "0x1180", "0x030000"); // GTX 680 (Kepler 3.0)
        sysfs_device(r, "0000:06:00.0", "0x10de", "0xfffe", "0x030000"); // unknown
        let host = Host::sandbox(Os::Linux, r, Default::default());
        let tables = Tables::embedded().unwrap();
        let found = probe(&host, &tables, Duration::from_secs(5)).unwrap();
        let got: Vec<(String, Option<String>, Option<String>)> = found
            .gpus
            .iter()
            .map(|g| {
                (
                    g.name.clone(),
                    g.compute_capability.map(|c| c.to_string()),
                    g.architecture.clone(),
                )
            })
            .collect();
        let s = |v: &str| Some(v.to_string());
        assert_eq!(
            got,
            [
                ("GeForce MX450".into(), s("7.5"), s("Turing")),
                ("GeForce RTX 5090".into(), s("12.0"), s("Blackwell")),
                (
                    "RTX PRO 6000D Blackwell Workstation Edition".into(),
                    s("12.0"),
                    s("Blackwell")
                ),
                ("GH100".into(), s("9.0"), s("Hopper")),
                ("GeForce GTX 680".into(), None, None),
                ("PCI 0x10de:0xfffe".into(), None, None),
            ]
        );
        assert!(
            found
                .gpus
                .iter()
                .all(|g| g.problem.as_ref().map(|p| p.key) == Some(GpuProblem::NoDriver))
        );
        let facts = crate::detect::SystemReport {
            gpus: found.gpus.clone(),
            ..Default::default()
        }
        .facts(Os::Linux);
        assert_eq!(facts.gpus.len(), 4);
        assert_eq!(
            facts.unidentified_gpus,
            [
                "GeForce GTX 680 [10de:1180]",
                "PCI 0x10de:0xfffe [10de:fffe]"
            ]
        );
    }

    /// Windows with a driver but no NVML: the device's own name places an id the tables
    /// lack; the fallback adapter's name never names the card.
    #[test]
    fn a_windows_device_name_places_an_unknown_id() {
        let tables = Tables::embedded().unwrap();
        let dev = |name: &str| PciDevice {
            vendor: "0x10de".into(),
            device: "0xfffd".into(),
            bus_id: None,
            name: Some(name.into()),
            kernel_driver: None,
            problem: None,
        };
        let g = from_pci(&tables, dev("NVIDIA A100-SXM4-80GB"));
        assert_eq!(
            g.compute_capability.map(|c| c.to_string()).as_deref(),
            Some("8.0")
        );
        assert_eq!(g.name, "NVIDIA A100-SXM4-80GB");
        let g = from_pci(&tables, dev("Microsoft Basic Display Adapter"));
        assert_eq!(g.compute_capability, None);
        assert_eq!(
            identify(&tables, Some("0x1f97"), None)
                .map(|c| c.to_string())
                .as_deref(),
            Some("7.5")
        );
        assert_eq!(
            identify(&tables, None, Some("NVIDIA H100 80GB HBM3"))
                .map(|c| c.to_string())
                .as_deref(),
            Some("9.0")
        );
        assert_eq!(identify(&tables, Some("0xfffd"), Some("Voodoo")), None);
    }
}
