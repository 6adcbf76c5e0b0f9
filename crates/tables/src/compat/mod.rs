//! The compatibility tables: loading (embedded or from `--compat-dir`), validation, and
//! the look-ups the recommender and detection need. Pure data, no network.

mod gpu_lookup;
pub mod gpu_packages;
mod live;
pub mod notes;
pub mod schema;
mod validate;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::version::{ComputeCapability, Version};
pub use gpu_lookup::{MAX_PCI_IDS_BYTES, PCI_IDS_FILE, PciDb, PciGpu, PciGpuSource, PciIds};
pub use gpu_packages::{GPU_PACKAGES_FILE, GpuPackagesFile};
pub use live::{IndexSeen, Live, Origin, PypiTorch, Refreshed, Wheel, utc};
pub use schema::*;

/// The four file names, in load order.
pub const FILES: [&str; 4] = ["toolkits.toml", "cudnn.toml", "pytorch.toml", "gpus.toml"];

const EMBEDDED: [&str; 4] = [
    include_str!("../../../../compat-tables/toolkits.toml"),
    include_str!("../../../../compat-tables/cudnn.toml"),
    include_str!("../../../../compat-tables/pytorch.toml"),
    include_str!("../../../../compat-tables/gpus.toml"),
];

/// The Windows driver packages. Optional in a `--compat-dir` (folders made before it
/// existed keep working): when absent there, the built-in one is used.
pub const DRIVERS_FILE: &str = "drivers.toml";
const EMBEDDED_DRIVERS: &str = include_str!("../../../../compat-tables/drivers.toml");

pub const CUDA_DOWNLOAD_BASE: &str = "https://developer.download.nvidia.com/compute/cuda";
pub const CUDNN_REDIST_BASE: &str =
    "https://developer.download.nvidia.com/compute/cudnn/redist/cudnn";
pub const TORCH_INDEX_BASE: &str = "https://download.pytorch.org/whl";

/// Where a set of tables came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "path", rename_all = "lowercase")]
pub enum TableSource {
    Embedded,
    Dir(PathBuf),
}

/// Why the tables could not be used. Every variant names the file; `Invalid` also the key.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    // (`--compat-dir` is the user's; a megabyte of it is not echoed: `shown`.)
    #[error("compat table {}: cannot read it: {source}", crate::shown::path(.file))]
    Read {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "compat table {}: not valid TOML for this table: {}",
        crate::shown::value(.file),
        crate::shown::text(.message)
    )]
    Parse { file: String, message: String },
    #[error(
        "compat table {}: {}: {}",
        crate::shown::value(.file),
        crate::shown::value(.key),
        crate::shown::text(.problem)
    )]
    Invalid {
        file: String,
        key: String,
        problem: String,
    },
}

/// All four tables, validated.
#[derive(Debug, Clone)]
pub struct Tables {
    pub source: TableSource,
    pub toolkits: ToolkitsFile,
    pub cudnn: CudnnFile,
    pub pytorch: PytorchFile,
    pub gpus: GpusFile,
    pub drivers: DriversFile,
    /// What the GPU packages besides PyTorch need (#33; optional in a `--compat-dir`).
    pub gpu_packages: GpuPackagesFile,
    /// What `refresh` added (nothing for tables read from files alone).
    pub live: Live,
    /// The pci.ids database (NVIDIA's device ids), for GPUs with no `[[gpu]]` row.
    pub pci: Arc<PciDb>,
}

/// Which installer of a toolkit release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InstallerKind {
    WindowsLocal,
    WindowsNetwork,
    LinuxRunfile,
}

impl Tables {
    /// The tables compiled into the binary.
    pub fn embedded() -> Result<Tables, TableError> {
        Self::from_texts(
            TableSource::Embedded,
            EMBEDDED,
            EMBEDDED_DRIVERS,
            gpu_packages::EMBEDDED_GPU_PACKAGES,
            (gpu_lookup::EMBEDDED_PCI_IDS, "embedded".into()),
        )
    }

    /// Tables from a directory holding the four files (`--compat-dir`), and
    /// `drivers.toml` and `pci-ids-nvidia.txt` if it holds them (else the built-in ones).
    pub fn from_dir(dir: &Path) -> Result<Tables, TableError> {
        let mut texts = Vec::with_capacity(4);
        for name in FILES {
            let file = dir.join(name);
            let text = read_table(&file).map_err(|source| TableError::Read {
                file: file.clone(),
                source,
            })?;
            texts.push(text);
        }
        let texts: [&str; 4] = [&texts[0], &texts[1], &texts[2], &texts[3]];
        let file = dir.join(DRIVERS_FILE);
        let drivers = match std::fs::symlink_metadata(&file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => EMBEDDED_DRIVERS.to_string(),
            _ => read_table(&file).map_err(|source| TableError::Read {
                file: file.clone(),
                source,
            })?,
        };
        let file = dir.join(GPU_PACKAGES_FILE);
        let gpu_packages = match std::fs::symlink_metadata(&file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                gpu_packages::EMBEDDED_GPU_PACKAGES.to_string()
            }
            _ => read_table(&file).map_err(|source| TableError::Read {
                file: file.clone(),
                source,
            })?,
        };
        let file = dir.join(PCI_IDS_FILE);
        let pci = match std::fs::symlink_metadata(&file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                (gpu_lookup::EMBEDDED_PCI_IDS.to_string(), "embedded".into())
            }
            _ => (
                read_table(&file).map_err(|source| TableError::Read {
                    file: file.clone(),
                    source,
                })?,
                file.display().to_string(),
            ),
        };
        Self::from_texts(
            TableSource::Dir(dir.to_path_buf()),
            texts,
            &drivers,
            &gpu_packages,
            (&pci.0, pci.1),
        )
    }

    /// Embedded tables, or those in `dir` when given.
    pub fn load(dir: Option<&Path>) -> Result<Tables, TableError> {
        match dir {
            Some(d) => Self::from_dir(d),
            None => Self::embedded(),
        }
    }

    fn from_texts(
        source: TableSource,
        texts: [&str; 4],
        drivers: &str,
        gpu_packages: &str,
        (pci, pci_origin): (&str, String),
    ) -> Result<Tables, TableError> {
        let gpus: GpusFile = parse(FILES[3], texts[3])?;
        let pci = gpu_lookup::database(pci, pci_origin, texts[3], &gpus.chips);
        let tables = Tables {
            source,
            toolkits: parse(FILES[0], texts[0])?,
            cudnn: parse(FILES[1], texts[1])?,
            pytorch: parse(FILES[2], texts[2])?,
            gpus,
            drivers: parse(DRIVERS_FILE, drivers)?,
            gpu_packages: parse(GPU_PACKAGES_FILE, gpu_packages)?,
            live: Live::default(),
            pci,
        };
        validate::all(&tables)?;
        Ok(tables)
    }

    /// Checks tables assembled in code (the refresh merge) as loading checks files.
    pub fn validate(&self) -> Result<(), TableError> {
        validate::all(self)
    }

    pub fn toolkit_line(&self, major: u32) -> Option<&ToolkitLine> {
        self.toolkits.lines.iter().find(|l| l.major == major)
    }

    /// The driver branch NVIDIA pairs with the CUDA minor of `version` (`13.4.1` → R615),
    /// when the tables know it.
    pub fn driver_branch(&self, version: &Version) -> Option<&DriverBranch> {
        let mm = version.major_minor();
        self.toolkits.branches.iter().find(|b| b.cuda == mm)
    }

    pub fn toolkit(&self, version: &Version) -> Option<&ToolkitRelease> {
        self.toolkits
            .releases
            .iter()
            .find(|r| &r.version == version)
    }

    pub fn variant(&self, name: &str) -> Option<&TorchVariant> {
        self.pytorch.variants.iter().find(|v| v.name == name)
    }

    pub fn architecture_of(&self, cc: ComputeCapability) -> Option<&Architecture> {
        self.gpus
            .architectures
            .iter()
            .find(|a| a.compute_capabilities.contains(&cc))
    }

    /// Newest toolkit, cuDNN and torch, confirmed or not.
    pub fn newest(
        &self,
    ) -> (
        Option<&ToolkitRelease>,
        Option<&CudnnRelease>,
        Option<&TorchRelease>,
    ) {
        (
            self.toolkits.releases.last(),
            self.cudnn.releases.last(),
            self.pytorch.releases.last(),
        )
    }
}

impl Tables {
    /// The Windows driver package a GPU named `name` needs: the first rule of
    /// `drivers.toml` whose words appear in the name, else the model's segment in
    /// `gpus.toml` (workstation, data centre), else the default (GeForce desktop).
    pub fn driver_package_for(&self, name: &str) -> DriverPackage {
        let words = gpu_lookup::name_words(name);
        let hit = |rule: &DriverRule| {
            let n = rule.words.len();
            n > 0
                && words.windows(n).any(|w| {
                    w.iter()
                        .zip(&rule.words)
                        .all(|(have, want)| match want.strip_suffix('*') {
                            Some(prefix) => have.starts_with(prefix),
                            None => have == want,
                        })
                })
        };
        if let Some(rule) = self.drivers.choose.rules.iter().find(|r| hit(r)) {
            return rule.package;
        }
        // A notebook GeForce numbered with an "M" (GTX 980M, 960M, 940MX): the number,
        // then "m" or "mx".
        let notebook_number = |w: &String| {
            let digits = w.bytes().take_while(u8::is_ascii_digit).count();
            digits >= 3 && matches!(&w[digits..], "m" | "mx")
        };
        if words.iter().any(notebook_number) {
            return DriverPackage::GeforceNotebook;
        }
        // The models the name matches, when they are all of one segment (the H100's form
        // factors, a laptop name matching its desktop model).
        let hits = self.gpus_by_name(name);
        let segment = hits.first().and_then(|g| g.segment.as_deref());
        match segment.filter(|s| hits.iter().all(|g| g.segment.as_deref() == Some(*s))) {
            Some("datacenter") => DriverPackage::DataCenter,
            Some("workstation") => DriverPackage::Rtx,
            _ => self.drivers.choose.default,
        }
    }

    pub fn driver_package(&self, package: DriverPackage) -> Option<&DriverPackageRow> {
        self.drivers.packages.iter().find(|p| p.name == package)
    }
}

impl DriverPackageRow {
    /// The installer's URL for `version` (the pattern's `{v}` filled in).
    pub fn url_for(&self, version: &Version) -> String {
        self.url.replace("{v}", &version.to_string())
    }
}

impl Architecture {
    /// The driver this architecture needs at the least on `os` (Blackwell: 570.x).
    pub fn driver_min(&self, os: Os) -> Option<&Version> {
        match os {
            Os::Windows => self.driver_min_windows.as_ref(),
            Os::Linux => self.driver_min_linux.as_ref(),
        }
    }
}

impl ToolkitRelease {
    pub fn installer(&self, kind: InstallerKind) -> Option<&Installer> {
        match kind {
            InstallerKind::WindowsLocal => self.windows_local.as_ref(),
            InstallerKind::WindowsNetwork => self.windows_network.as_ref(),
            InstallerKind::LinuxRunfile => self.linux_runfile.as_ref(),
        }
    }

    /// The installer's download URL: the explicit `url`, else NVIDIA's pattern.
    pub fn installer_url(&self, kind: InstallerKind) -> Option<String> {
        let inst = self.installer(kind)?;
        if let Some(url) = &inst.url {
            return Some(url.clone());
        }
        let dir = match kind {
            InstallerKind::WindowsNetwork => "network_installers",
            _ => "local_installers",
        };
        Some(format!(
            "{CUDA_DOWNLOAD_BASE}/{}/{dir}/{}",
            self.version, inst.file
        ))
    }

    /// The toolkit's own driver minimum for `os`, if published.
    pub fn driver_min(&self, os: Os) -> Option<&Version> {
        match os {
            Os::Windows => self.driver_windows.as_ref(),
            Os::Linux => self.driver_linux.as_ref(),
        }
    }

    /// Whether nvcc of this release can build code for a GPU of capability `cc`: the
    /// exact list when the tables have one, else the range.
    pub fn builds_for(&self, cc: ComputeCapability) -> bool {
        if self.sm.is_empty() {
            self.sm_min <= cc && cc <= self.sm_max
        } else {
            self.sm.contains(&cc)
        }
    }

    /// The driver an installer's file name carries: `cuda_12.8.0_571.96_windows.exe` →
    /// 571.96, `cuda_12.8.0_570.86.10_linux.run` → 570.86.10; None for names without
    /// one (`cuda_13.0.0_windows.exe`, `cuda_13.4.1_linux.run`).
    pub fn driver_in_file_name(version: &Version, file: &str) -> Option<Version> {
        let rest = file.strip_prefix(&format!("cuda_{version}_"))?;
        let (drv, _) = rest.split_once('_')?;
        if !drv.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        drv.parse().ok()
    }

    /// This release with `carried_driver_*` read from its installers' file names (rows
    /// learned by `refresh`).
    pub fn with_carried_from_names(mut self) -> Self {
        let named = |i: &Option<Installer>| {
            i.as_ref()
                .and_then(|i| Self::driver_in_file_name(&self.version, &i.file))
        };
        self.carried_driver_linux = named(&self.linux_runfile);
        self.carried_driver_windows = named(&self.windows_local);
        self
    }

    /// The driver the installer for `os` carries, if it carries one.
    pub fn carried_driver(&self, os: Os) -> Option<&Version> {
        match os {
            Os::Windows => self.carried_driver_windows.as_ref(),
            Os::Linux => self.carried_driver_linux.as_ref(),
        }
    }
}

impl ToolkitLine {
    pub fn driver_floor(&self, os: Os) -> &Version {
        match os {
            Os::Windows => &self.driver_floor_windows,
            Os::Linux => &self.driver_floor_linux,
        }
    }
}

impl CudnnRelease {
    pub fn archive(&self, os: Os, cuda_major: u32) -> Option<&CudnnArchive> {
        self.archives
            .iter()
            .find(|a| a.os == os && a.cuda_major == cuda_major)
    }

    pub fn cuda(&self, major: u32) -> Option<&CudnnCuda> {
        self.cuda.iter().find(|c| c.major == major)
    }
}

impl CudnnArchive {
    pub fn url(&self) -> String {
        if let Some(url) = &self.url {
            return url.clone();
        }
        let platform = match self.os {
            Os::Windows => "windows-x86_64",
            Os::Linux => "linux-x86_64",
        };
        format!("{CUDNN_REDIST_BASE}/{platform}/{}", self.file)
    }
}

impl Tables {
    /// The rows naming free-threaded CPython `python` (`MAJOR.MINOR`).
    pub fn free_threaded(&self, python: &Version) -> impl Iterator<Item = &FreeThreaded> {
        let py = python.major_minor();
        self.pytorch
            .free_threaded
            .iter()
            .filter(move |f| f.python == py)
    }

    /// Whether torch `patch` (`2.12.0`) has wheels for free-threaded CPython `python`.
    pub fn free_threaded_has(&self, python: &Version, patch: &Version) -> bool {
        self.free_threaded(python).any(|f| f.has(patch))
    }

    /// The free-threaded CPythons (`MAJOR.MINOR`) any torch release has wheels for,
    /// ascending.
    pub fn free_threaded_pythons(&self) -> Vec<Version> {
        let mut out: Vec<Version> = self
            .pytorch
            .free_threaded
            .iter()
            .map(|f| f.python.clone())
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

impl TorchVariant {
    /// The SM list this variant builds for in torch `torch` (MAJOR.MINOR), if known.
    pub fn arch_for(&self, torch: &Version) -> Option<&VariantArch> {
        let t = torch.major_minor();
        self.arch
            .iter()
            .find(|a| a.torch_from <= t && t <= a.torch_to)
    }

    pub fn index_url(&self) -> String {
        format!("{TORCH_INDEX_BASE}/{}", self.name)
    }
}

impl VariantArch {
    /// Whether a GPU of capability `cc` can run these wheels: machine code for the same
    /// major at or below its minor, or PTX at or below it (JIT-compiled by the driver).
    pub fn runs_on(&self, cc: ComputeCapability) -> bool {
        self.sm.iter().any(|s| s.binary_runs_on(cc))
            || (self.ptx && self.sm.iter().max().is_some_and(|top| *top <= cc))
    }
}

impl GpuModel {
    pub fn has_pci_id(&self, id: &str) -> bool {
        normalise_pci_id(id).is_some_and(|want| self.pci_ids.contains(&want))
    }
}

/// `2684`, `0x2684`, `0X2684` → `0x2684`; anything else → None.
pub fn normalise_pci_id(id: &str) -> Option<String> {
    let t = id.trim();
    let hex = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    (hex.len() == 4 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| format!("0x{}", hex.to_ascii_lowercase()))
}

/// The most a table file may hold (the built-in ones are well under 1 MiB).
pub const MAX_TABLE_BYTES: u64 = 16 << 20;

/// A table file's text: a regular file only — a FIFO would block the read for ever and a
/// device (`/dev/zero`) never ends — and at most [`MAX_TABLE_BYTES`], judged on the open
/// handle (`place::read_regular_following`: opened without waiting for a FIFO's writer;
/// a `--compat-dir` of links is the user's own choice, so links are followed).
fn read_table(file: &Path) -> std::io::Result<String> {
    use crate::place::ReadError;
    use std::io::{Error, ErrorKind};
    let bytes = crate::place::read_regular_following(file, MAX_TABLE_BYTES)
        .map_err(|e| match e {
            ReadError::Io { source, .. } => source,
            ReadError::NotRegular { what, .. } => Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "not a regular file ({what}; a FIFO, a device or a folder cannot be a table)"
                ),
            ),
            ReadError::TooBig { size, max, .. } => Error::new(
                ErrorKind::InvalidData,
                format!("{size} bytes, more than a table can be ({max})"),
            ),
            ReadError::Link { .. } => {
                Error::new(ErrorKind::InvalidInput, "a link that cannot be followed")
            }
        })?
        .ok_or_else(|| Error::new(ErrorKind::NotFound, "no such file"))?;
    String::from_utf8(bytes).map_err(|e| Error::new(ErrorKind::InvalidData, e))
}

fn parse<T: serde::de::DeserializeOwned>(file: &str, text: &str) -> Result<T, TableError> {
    toml::from_str(text).map_err(|e| TableError::Parse {
        file: file.to_string(),
        message: e.to_string().trim().replace('\n', " | "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_ids_normalise() {
        assert_eq!(normalise_pci_id("2684").as_deref(), Some("0x2684"));
        assert_eq!(normalise_pci_id("0X1B80").as_deref(), Some("0x1b80"));
        assert_eq!(normalise_pci_id("0x268"), None);
        assert_eq!(normalise_pci_id("zzzz"), None);
    }
}
