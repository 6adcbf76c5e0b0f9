//! WSL2: Linux inside Windows, whose GPU driver is the Windows host's, stubbed as
//! `/usr/lib/wsl/lib/libcuda.so.1` (compat dossier §13.2). Read from the host's files, so
//! a sandbox root stands for a WSL2 machine in tests.
//!
//! The rule: **one strong sign, or two weak ones.**
//! - Strong: the kernel release (`/proc/sys/kernel/osrelease`, else `/proc/version`)
//!   names `WSL2` (`5.15.153.1-microsoft-standard-WSL2`), or `/dev/dxg` exists (the GPU
//!   paravirtualisation device, which only WSL2's kernel has).
//! - Weak: the kernel release names `microsoft` without `WSL2` (a custom WSL kernel, or
//!   WSL1), `/proc/sys/fs/binfmt_misc/WSLInterop`, the driver stub
//!   `/usr/lib/wsl/lib/libcuda.so.1`, or `WSL_DISTRO_NAME` in the environment.
//!
//! One weak sign alone is not enough: a variable copied into a container, or a stray
//! folder, must not turn a real Linux PC's driver advice into Windows advice. Files are
//! read bounded and regular only (`place::read_regular`); a path's presence is looked at
//! without following a link.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::compat::Os;
use crate::platform::Host;

/// Where the Windows driver puts its Linux libraries (and `nvidia-smi`) inside WSL2.
pub const LIB_DIR: &str = "/usr/lib/wsl/lib";
/// The loader entry WSL writes so `dlopen("libcuda.so.1")` finds the stub.
pub const LD_CONF: &str = "/etc/ld.so.conf.d/ld.wsl.conf";

/// The kernel files are a line or two; 64 KiB bounds a planted monster.
const MAX_KERNEL_FILE: u64 = 64 * 1024;

/// One sign of WSL2, as found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sign {
    /// The kernel release names WSL2.
    KernelWsl2,
    /// `/dev/dxg` exists.
    Dxg,
    /// The kernel release names Microsoft (not WSL2).
    KernelMicrosoft,
    /// `/proc/sys/fs/binfmt_misc/WSLInterop` exists.
    Interop,
    /// `/usr/lib/wsl/lib/libcuda.so.1` exists.
    DriverStub,
    /// `WSL_DISTRO_NAME` is set.
    DistroVariable,
    /// The kernel is WSL1's (`4.4.0-19041-Microsoft`): a translation layer with no GPU at
    /// all, whatever else says WSL. Never WSL2.
    KernelWsl1,
}

impl Sign {
    pub fn strong(self) -> bool {
        matches!(self, Sign::KernelWsl2 | Sign::Dxg)
    }
}

/// Every sign of WSL2 on `host` (none off Linux).
pub fn signs(host: &Host) -> Vec<Sign> {
    if host.os != Os::Linux {
        return Vec::new();
    }
    let mut out = Vec::new();
    let kernel = ["/proc/sys/kernel/osrelease", "/proc/version"]
        .iter()
        .find_map(|p| read_text(&host.system_path(p)))
        .map(|t| t.to_ascii_lowercase());
    if let Some(k) = kernel {
        if k.contains("wsl2") {
            out.push(Sign::KernelWsl2);
        } else if is_wsl1_kernel(&k) {
            out.push(Sign::KernelWsl1);
        } else if k.contains("microsoft") {
            out.push(Sign::KernelMicrosoft);
        }
    }
    if present(&host.system_path("/dev/dxg")) {
        out.push(Sign::Dxg);
    }
    if present(&host.system_path("/proc/sys/fs/binfmt_misc/WSLInterop")) {
        out.push(Sign::Interop);
    }
    if present(&stub(host)) {
        out.push(Sign::DriverStub);
    }
    if host.var("WSL_DISTRO_NAME").is_some() {
        out.push(Sign::DistroVariable);
    }
    out
}

/// WSL1's kernel release: `4.4.0-<Windows build>-Microsoft` (its `/proc/version` starts
/// `Linux version 4.4.0-…-Microsoft`); lowercased here.
fn is_wsl1_kernel(k: &str) -> bool {
    k.split_whitespace()
        .find(|w| w.starts_with("4.4.0-"))
        .is_some_and(|r| r.ends_with("-microsoft"))
}

/// Whether `signs` make WSL2: one strong sign, or two weak ones (see the module's rule);
/// never WSL1's kernel, which has no GPU.
pub fn decide(signs: &[Sign]) -> bool {
    if signs.contains(&Sign::KernelWsl1) {
        return false;
    }
    signs.iter().any(|s| s.strong()) || signs.len() >= 2
}

/// Whether `host` is Linux inside WSL2.
pub fn is_wsl2(host: &Host) -> bool {
    decide(&signs(host))
}

/// The driver stub under the host's root.
pub fn stub(host: &Host) -> PathBuf {
    host.system_path(LIB_DIR).join("libcuda.so.1")
}

/// `nvidia-smi` as the Windows driver provides it inside WSL2.
pub fn nvidia_smi(host: &Host) -> PathBuf {
    host.system_path(LIB_DIR).join("nvidia-smi")
}

/// A small text file, regular and bounded; None when absent or refused.
pub(crate) fn read_text(path: &Path) -> Option<String> {
    match crate::place::read_regular(path, MAX_KERNEL_FILE) {
        Ok(Some(b)) => Some(String::from_utf8_lossy(&b).into_owned()),
        _ => None,
    }
}

/// Something is at `path` (a file, a device, a link): looked at, never followed.
fn present(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Native Windows: the WSL distributions registered for this user
/// (`HKCU\Software\Microsoft\Windows\CurrentVersion\Lxss\{GUID}\DistributionName`). A
/// sandbox root stands for the registry with `.cuda-setup/windows-lxss.json`, a JSON list
/// of names, as `windows-env.json` stands for the environment's keys.
pub fn windows_distributions(host: &Host) -> Vec<String> {
    if host.os != Os::Windows {
        return Vec::new();
    }
    #[cfg(windows)]
    if host.windows_apis {
        return crate::platform::windows::wsl_distributions();
    }
    if host.root_is_real() {
        return Vec::new();
    }
    let path = host.system_path("/.cuda-setup/windows-lxss.json");
    let Some(text) = read_text(&path) else {
        return Vec::new();
    };
    let names: Vec<String> = serde_json::from_str(&text).unwrap_or_default();
    names
        .into_iter()
        .map(|n| crate::shown::value(n.trim()))
        .filter(|n| !n.is_empty())
        .collect()
}

/// What detect says about where it runs (#32): inside WSL2, the driver is Windows'; on
/// native Windows with WSL distributions, that WSL2 is TensorFlow's own way to a GPU
/// there (TensorFlow 2.11 and newer have none on native Windows, dossier §9).
pub fn notes(r: &super::SystemReport) -> Vec<crate::message::Message> {
    let mut out = Vec::new();
    if r.host_kind == crate::recommend::HostKind::Wsl2 {
        out.push(crate::msg!("detect_wsl2"));
    }
    if !r.wsl_distributions.is_empty() {
        out.push(crate::msg!(
            "detect_wsl_distributions",
            names = r.wsl_distributions.join(", ")
        ));
        out.push(crate::msg!("tensorflow_wsl2"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(root: &Path, env: &[(&str, &str)]) -> Host {
        Host::sandbox(
            Os::Linux,
            root,
            env.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn the_wsl2_kernel_alone_is_enough() {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            "proc/sys/kernel/osrelease",
            "5.15.153.1-microsoft-standard-WSL2\n",
        );
        let h = host(d.path(), &[]);
        assert_eq!(signs(&h), [Sign::KernelWsl2]);
        assert!(is_wsl2(&h));
    }

    #[test]
    fn proc_version_is_read_when_osrelease_is_missing() {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            "proc/version",
            "Linux version 6.6.36.6-microsoft-standard-WSL2 (root@f9c8) (gcc (GCC) 11.2.0) #1 SMP\n",
        );
        assert!(is_wsl2(&host(d.path(), &[])));
    }

    #[test]
    fn dxg_alone_is_enough() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "dev/dxg", "");
        assert_eq!(signs(&host(d.path(), &[])), [Sign::Dxg]);
        assert!(is_wsl2(&host(d.path(), &[])));
    }

    #[test]
    fn wsl1_is_never_wsl2() {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            "proc/sys/kernel/osrelease",
            "4.4.0-19041-Microsoft\n",
        );
        write(d.path(), "proc/sys/fs/binfmt_misc/WSLInterop", "enabled\n");
        let h = host(d.path(), &[("WSL_DISTRO_NAME", "Ubuntu")]);
        assert_eq!(
            signs(&h),
            [Sign::KernelWsl1, Sign::Interop, Sign::DistroVariable]
        );
        assert!(!is_wsl2(&h));
    }

    #[test]
    fn one_weak_sign_is_not_enough_two_are() {
        let d = tempfile::tempdir().unwrap();
        // A variable carried into a container on a real Linux PC.
        let h = host(d.path(), &[("WSL_DISTRO_NAME", "Ubuntu")]);
        assert_eq!(signs(&h), [Sign::DistroVariable]);
        assert!(!is_wsl2(&h));
        // A custom WSL kernel names Microsoft but not WSL2.
        write(
            d.path(),
            "proc/sys/kernel/osrelease",
            "6.1.21-microsoft-custom\n",
        );
        assert!(!is_wsl2(&host(d.path(), &[])));
        assert!(is_wsl2(&h));
        // The stub with the interop entry, without the variable.
        let e = tempfile::tempdir().unwrap();
        write(e.path(), "usr/lib/wsl/lib/libcuda.so.1", "ELF");
        assert!(!is_wsl2(&host(e.path(), &[])));
        write(e.path(), "proc/sys/fs/binfmt_misc/WSLInterop", "enabled\n");
        assert_eq!(
            signs(&host(e.path(), &[])),
            [Sign::Interop, Sign::DriverStub]
        );
        assert!(is_wsl2(&host(e.path(), &[])));
    }

    #[test]
    fn a_plain_linux_pc_and_windows_are_not_wsl2() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "proc/sys/kernel/osrelease", "6.8.0-45-generic\n");
        assert!(signs(&host(d.path(), &[])).is_empty());
        // Windows has no such files; even a root that holds them is not read as Linux.
        write(d.path(), "dev/dxg", "");
        let w = Host::sandbox(Os::Windows, d.path(), Default::default());
        assert!(!is_wsl2(&w));
    }

    /// A kernel file that is a link is not followed (a planted link to a file saying
    /// WSL2 must not turn the advice around), and a FIFO does not block.
    #[cfg(unix)]
    #[test]
    fn kernel_files_are_read_regular_only() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "elsewhere", "5.15-microsoft-standard-WSL2");
        std::fs::create_dir_all(d.path().join("proc/sys/kernel")).unwrap();
        std::os::unix::fs::symlink(
            d.path().join("elsewhere"),
            d.path().join("proc/sys/kernel/osrelease"),
        )
        .unwrap();
        let fifo = d.path().join("proc/version");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        assert!(signs(&host(d.path(), &[])).is_empty());
    }

    #[test]
    fn windows_distributions_from_the_sandbox_stand_in() {
        let d = tempfile::tempdir().unwrap();
        let w = Host::sandbox(Os::Windows, d.path(), Default::default());
        assert!(windows_distributions(&w).is_empty());
        write(
            d.path(),
            ".cuda-setup/windows-lxss.json",
            r#"["Ubuntu-24.04", " ", "docker-desktop"]"#,
        );
        assert_eq!(
            windows_distributions(&w),
            ["Ubuntu-24.04", "docker-desktop"]
        );
        // Linux has no such registry.
        assert!(windows_distributions(&host(d.path(), &[])).is_empty());
        // Detect's notes name them, and TensorFlow's way to a GPU.
        let r = super::super::SystemReport {
            wsl_distributions: windows_distributions(&w),
            ..Default::default()
        };
        let keys: Vec<&str> = notes(&r).iter().map(|m| m.key).collect();
        assert_eq!(keys, ["detect_wsl_distributions", "tensorflow_wsl2"]);
        assert!(notes(&super::super::SystemReport::default()).is_empty());
    }
}
