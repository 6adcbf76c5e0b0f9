//! The shape of the four table files, as serde reads them. `deny_unknown_fields`
//! everywhere: a misspelt key is a schema error, not a silently missing fact.

use serde::{Deserialize, Serialize};

use crate::version::{ComputeCapability, Version};

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    pub subject: String,
    pub sources: Vec<String>,
}

// ---------- toolkits.toml ----------

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ToolkitsFile {
    pub meta: Meta,
    #[serde(rename = "line")]
    pub lines: Vec<ToolkitLine>,
    /// NVIDIA's driver branch per CUDA minor (13.0 R580 … 13.4 R615, #32): a driver we
    /// install for a toolkit is at least of its branch.
    #[serde(rename = "branch", default)]
    pub branches: Vec<DriverBranch>,
    #[serde(rename = "release")]
    pub releases: Vec<ToolkitRelease>,
}

/// The driver branch NVIDIA pairs with one CUDA minor ("Update releases within a CUDA
/// minor version use the same driver branch"). A driver already there needs only the
/// major line's floor (minor-version compatibility); the branch is what a driver
/// installed *for* this toolkit is at least: R615 means 615.xx or newer on Linux and on
/// Windows alike.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DriverBranch {
    /// `MAJOR.MINOR` (`13.4`).
    pub cuda: Version,
    /// The branch number (`615` for R615).
    pub branch: u32,
    #[serde(default = "yes")]
    pub confirmed: bool,
    pub note: Option<String>,
}

/// One CUDA major line and its minor-version-compatibility driver floor.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ToolkitLine {
    pub major: u32,
    pub driver_floor_linux: Version,
    pub driver_floor_windows: Version,
    #[serde(default = "yes")]
    pub floor_confirmed: bool,
    pub sm_min: Option<ComputeCapability>,
    pub note: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ToolkitRelease {
    pub version: Version,
    pub label: String,
    /// The published minimum driver (Table 3's "Toolkit Driver Version") for Linux: a
    /// requirement. None where no source states one.
    pub driver_linux: Option<Version>,
    pub driver_windows: Option<Version>,
    #[serde(default = "yes")]
    pub driver_confirmed: bool,
    /// The driver NVIDIA's Linux runfile carries (its file name), when it carries one. A
    /// fact about the installer, never a requirement (#20 class 3).
    pub carried_driver_linux: Option<Version>,
    /// The driver the Windows local installer carries (None: it carries none, as 13.x).
    pub carried_driver_windows: Option<Version>,
    pub sm_min: ComputeCapability,
    pub sm_max: ComputeCapability,
    /// The exact architectures nvcc of this release builds for, where a source lists
    /// them (CMake's CMakeCUDAArchitecturesAll.cmake). Empty: only `sm_min..=sm_max`
    /// is known.
    #[serde(default)]
    pub sm: Vec<ComputeCapability>,
    #[serde(default = "yes")]
    pub confirmed: bool,
    #[serde(default)]
    pub preview: bool,
    pub note: Option<String>,
    pub windows_local: Option<Installer>,
    pub windows_network: Option<Installer>,
    pub linux_runfile: Option<Installer>,
    /// Not in the files: set for rows learned by `refresh`.
    #[serde(skip)]
    pub origin: super::Origin,
}

/// A downloadable file. `url` is derived from the file name when absent.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Installer {
    pub file: String,
    pub size: Option<u64>,
    pub md5: Option<String>,
    pub sha256: Option<String>,
    pub url: Option<String>,
}

// ---------- cudnn.toml ----------

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CudnnFile {
    pub meta: Meta,
    #[serde(rename = "release")]
    pub releases: Vec<CudnnRelease>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CudnnRelease {
    pub version: Version,
    #[serde(default = "yes")]
    pub confirmed: bool,
    pub sm_min: Option<ComputeCapability>,
    pub sm_max: Option<ComputeCapability>,
    pub windows_dll_dir: String,
    pub note: Option<String>,
    pub cuda: Vec<CudnnCuda>,
    #[serde(rename = "archive", default)]
    pub archives: Vec<CudnnArchive>,
    #[serde(skip)]
    pub origin: super::Origin,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CudnnCuda {
    pub major: u32,
    pub toolkit_min: Option<Version>,
    pub toolkit_max: Option<Version>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CudnnArchive {
    pub os: Os,
    pub cuda_major: u32,
    pub file: String,
    pub sha256: Option<String>,
    pub md5: Option<String>,
    pub size: Option<u64>,
    pub url: Option<String>,
}

// ---------- pytorch.toml ----------

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PytorchFile {
    pub meta: Meta,
    #[serde(rename = "variant")]
    pub variants: Vec<TorchVariant>,
    #[serde(rename = "release")]
    pub releases: Vec<TorchRelease>,
    /// Mirrors of PyTorch's wheel index, laid out like it (`<base>/<variant>/torch/`).
    #[serde(rename = "mirror", default)]
    pub mirrors: Vec<TorchMirror>,
    /// The torch releases with wheels for each free-threaded CPython ABI (`cp313t`).
    #[serde(rename = "free_threaded", default)]
    pub free_threaded: Vec<FreeThreaded>,
}

/// Torch releases with wheels for a free-threaded CPython (PEP 703): `python3.13t`
/// installs only `cp313t` wheels, a set apart from plain `cp313` (dossier §13.4). Rows of
/// one Python may be several (a range the tables hold, one learned by `refresh`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FreeThreaded {
    /// CPython `MAJOR.MINOR` (`3.13`: the ABI `cp313t`).
    pub python: Version,
    /// The first and the last torch release (`MAJOR.MINOR.PATCH`) with such wheels.
    pub torch_from: Version,
    pub torch_to: Version,
    #[serde(default = "yes")]
    pub confirmed: bool,
    pub source: String,
    pub note: Option<String>,
    /// Not in the files: set for rows learned by `refresh`.
    #[serde(skip)]
    pub origin: super::Origin,
}

impl FreeThreaded {
    /// The wheel tag's ABI: `cp313t`.
    pub fn abi(&self) -> String {
        format!("cp{}{}t", self.python.major(), self.python.minor())
    }

    /// Whether torch `patch` (`2.12.0`) has wheels for this ABI.
    pub fn has(&self, patch: &Version) -> bool {
        self.torch_from <= *patch && *patch <= self.torch_to
    }
}

/// A mirror of `download.pytorch.org/whl`, offered as another source for the wheels.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TorchMirror {
    /// Who runs it, as users know it (`NJU`).
    pub name: String,
    /// Stands in for `https://download.pytorch.org/whl` (no trailing slash).
    pub base: String,
    #[serde(default = "yes")]
    pub confirmed: bool,
    pub source: String,
    pub note: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TorchVariant {
    pub name: String,
    pub cuda: Version,
    #[serde(default)]
    pub arch: Vec<VariantArch>,
    pub note: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct VariantArch {
    pub torch_from: Version,
    pub torch_to: Version,
    pub sm: Vec<ComputeCapability>,
    #[serde(default)]
    pub ptx: bool,
    #[serde(default = "yes")]
    pub confirmed: bool,
    pub source: Option<String>,
    pub note: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TorchRelease {
    pub version: Version,
    pub patches: Vec<Version>,
    pub python_min: Version,
    pub python_max: Version,
    pub variants: Vec<String>,
    #[serde(default = "yes")]
    pub variants_confirmed: bool,
    pub linux_pypi_default: Option<String>,
    pub windows_pypi_default: Option<String>,
    pub torchvision: Option<Version>,
    #[serde(default)]
    pub torchvision_confirmed: bool,
    #[serde(default)]
    pub index_style: IndexStyle,
    #[serde(default = "yes")]
    pub confirmed: bool,
    pub note: Option<String>,
    #[serde(skip)]
    pub origin: super::Origin,
}

/// How the pip command names the PyTorch index.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IndexStyle {
    /// `pip install torch==X --index-url https://download.pytorch.org/whl/cuXXX`
    #[default]
    IndexUrl,
    /// 1.13 era: `torch==X+cuXXX --extra-index-url …`
    ExtraIndexUrlLocal,
}

// ---------- gpus.toml ----------

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GpusFile {
    pub meta: Meta,
    #[serde(rename = "architecture")]
    pub architectures: Vec<Architecture>,
    #[serde(rename = "gpu")]
    pub gpus: Vec<GpuModel>,
    /// Chip (as pci.ids names it: `GA106`) to compute capability, for GPUs known only by
    /// their PCI id.
    #[serde(rename = "chip", default)]
    pub chips: Vec<ChipRow>,
    /// Jetson Linux (L4T) release to JetPack release (#32): named to Jetson users, who
    /// know their board by its JetPack number.
    #[serde(rename = "jetpack", default)]
    pub jetpacks: Vec<JetPackRow>,
}

/// One Jetson Linux (L4T) release and the JetPack release it belongs to.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct JetPackRow {
    /// `36.4` (what `/etc/nv_tegra_release` says as `R36 … REVISION: 4.0`).
    pub l4t: Version,
    /// `6.1`, as NVIDIA names it (a developer preview keeps its `DP`).
    pub jetpack: String,
    /// false: the pairing is not read from an NVIDIA page first-hand.
    #[serde(default = "yes")]
    pub confirmed: bool,
    pub note: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Architecture {
    pub name: String,
    pub compute_capabilities: Vec<ComputeCapability>,
    pub driver_min_linux: Option<Version>,
    pub driver_min_windows: Option<Version>,
    #[serde(default = "yes")]
    pub driver_min_confirmed: bool,
    /// The last driver branch that supports this architecture (Kepler: 470). None: the
    /// current branches still do.
    pub last_branch: Option<u32>,
    #[serde(default = "yes")]
    pub last_branch_confirmed: bool,
    pub last_branch_source: Option<String>,
    pub note: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GpuModel {
    pub name: String,
    #[serde(default)]
    pub pci_ids: Vec<String>,
    pub cc: ComputeCapability,
    pub segment: Option<String>,
    /// Other names tools print for it (NVML on JetPack 6: "Orin (nvgpu)").
    #[serde(default)]
    pub aliases: Vec<String>,
}

/// A GPU chip family and its compute capability (`GA106` → 8.6).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ChipRow {
    pub chip: String,
    pub cc: ComputeCapability,
    /// false: inferred from a sibling chip, not from a GPU NVIDIA lists by name.
    #[serde(default = "yes")]
    pub confirmed: bool,
    pub note: Option<String>,
}

// ---------- drivers.toml ----------

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DriversFile {
    pub meta: Meta,
    pub hosts: DriverHosts,
    pub silent: DriverSilent,
    pub choose: DriverChoose,
    #[serde(rename = "package")]
    pub packages: Vec<DriverPackageRow>,
}

/// The hosts serving the same paths: the patterns' own, and mirrors tried before it.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DriverHosts {
    pub canonical: String,
    #[serde(default)]
    pub mirrors: Vec<String>,
    #[serde(default = "yes")]
    pub confirmed: bool,
    pub note: Option<String>,
}

/// The installer's silent arguments.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DriverSilent {
    pub args: Vec<String>,
    #[serde(default = "yes")]
    pub confirmed: bool,
    pub note: Option<String>,
}

/// Which package a GPU's name needs: the first matching rule, else `default`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DriverChoose {
    pub default: DriverPackage,
    #[serde(default = "yes")]
    pub confirmed: bool,
    pub note: Option<String>,
    #[serde(rename = "rule")]
    pub rules: Vec<DriverRule>,
}

/// `words` appear in the GPU's name one after another (case ignored; `a*` matches a word
/// beginning with `a`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DriverRule {
    pub package: DriverPackage,
    pub words: Vec<String>,
}

/// NVIDIA's Windows driver packages (dossier section 12): the GPU decides which one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DriverPackage {
    /// GeForce desktop (Game Ready, DCH).
    GeforceDesktop,
    /// GeForce notebook (a "Laptop GPU").
    GeforceNotebook,
    /// RTX / Quadro workstation cards (desktop and notebook in one package).
    Rtx,
    /// Data-centre cards (Tesla, A100, H100, L4, T4, V100 …).
    DataCenter,
}

impl DriverPackage {
    pub const ALL: [DriverPackage; 4] = [
        DriverPackage::GeforceDesktop,
        DriverPackage::GeforceNotebook,
        DriverPackage::Rtx,
        DriverPackage::DataCenter,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DriverPackage::GeforceDesktop => "geforce_desktop",
            DriverPackage::GeforceNotebook => "geforce_notebook",
            DriverPackage::Rtx => "rtx",
            DriverPackage::DataCenter => "data_center",
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DriverPackageRow {
    pub name: DriverPackage,
    pub label: String,
    /// The download URL with `{v}` for the version (`581.57`).
    pub url: String,
    #[serde(default = "yes")]
    pub confirmed: bool,
    pub note: Option<String>,
    /// The versions seen at that URL, ascending.
    #[serde(rename = "version")]
    pub versions: Vec<DriverVersionRow>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DriverVersionRow {
    pub version: Version,
    /// Bytes, when recorded exactly.
    pub size: Option<u64>,
    pub note: Option<String>,
}

// ---------- shared ----------

/// Lives in the base crate: `platform` (below the tables) needs it too.
pub use cuda_setup_base::os::Os;

fn yes() -> bool {
    true
}
