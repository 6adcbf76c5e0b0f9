//! OS, CPU, memory, free disk space and rights (sysinfo).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::compat::Os;
use crate::platform::{self, Host};

#[derive(Debug, Clone, Serialize)]
pub struct SystemInfo {
    pub os_name: String,
    pub os_version: String,
    pub kernel: String,
    pub arch: String,
    pub cpu: String,
    pub cpu_cores: usize,
    pub ram_total_bytes: u64,
    pub system_drive: PathBuf,
    pub system_drive_free_bytes: Option<u64>,
    /// Where a toolkit would be installed by default.
    pub install_location: PathBuf,
    pub install_location_free_bytes: Option<u64>,
    pub elevated: bool,
}

/// The default toolkit location for this OS.
pub fn default_install_location(host: &Host) -> PathBuf {
    match host.os {
        Os::Windows => program_files(host)
            .join("NVIDIA GPU Computing Toolkit")
            .join("CUDA"),
        Os::Linux => host.system_path("/usr/local"),
    }
}

/// `%ProgramFiles%`, or `C:\Program Files`.
pub fn program_files(host: &Host) -> PathBuf {
    match host.var("ProgramFiles") {
        Some(p) => PathBuf::from(p),
        None => host.system_path(r"C:\Program Files"),
    }
}

pub fn probe(host: &Host) -> SystemInfo {
    let mut sys = sysinfo::System::new().ok();
    if let Some(sys) = sys.as_mut() {
        sys.refresh_memory();
        sys.refresh_cpu_list(sysinfo::CpuRefreshKind::nothing());
    }
    let disks = sysinfo::Disks::new_with_refreshed_list().ok();
    let system_drive = match host.os {
        Os::Windows => PathBuf::from(
            host.var("SystemDrive")
                .map_or("C:\\".to_string(), |d| format!("{d}\\")),
        ),
        Os::Linux => host.system_path("/"),
    };
    let install_location = default_install_location(host);
    let free = |p: &Path| {
        // The disk whose mount point is the longest prefix of `p`.
        disks
            .as_ref()?
            .iter()
            .filter(|d| p.starts_with(d.mount_point()))
            .max_by_key(|d| d.mount_point().as_os_str().len())
            .map(|d| d.available_space())
    };
    SystemInfo {
        os_name: sysinfo::System::long_os_version()
            .unwrap_or_else(|_| std::env::consts::OS.to_string()),
        os_version: sysinfo::System::os_version().unwrap_or_default(),
        kernel: sysinfo::System::kernel_version().unwrap_or_default(),
        arch: std::env::consts::ARCH.to_string(),
        cpu: sys
            .as_ref()
            .and_then(|s| s.cpus().first())
            .map(|c| c.brand().trim().to_string())
            .unwrap_or_default(),
        cpu_cores: sys.as_ref().map_or(0, |s| s.cpus().len()),
        ram_total_bytes: sys.as_ref().map_or(0, |s| s.total_memory()),
        system_drive_free_bytes: free(&system_drive),
        install_location_free_bytes: free(&nearest_existing(&install_location)),
        system_drive,
        install_location,
        elevated: platform::is_elevated(),
    }
}

/// The path itself or its nearest existing ancestor (the install folder may not exist yet).
fn nearest_existing(p: &Path) -> PathBuf {
    p.ancestors()
        .find(|a| a.exists())
        .unwrap_or(p)
        .to_path_buf()
}
