//! WSL2's own breakages (#32, compat dossier §13.2): the driver is the Windows host's,
//! stubbed in `/usr/lib/wsl/lib`. Three classics:
//! - ldconfig's "`libcuda.so.1` is not a symbolic link" warning: Windows provides the
//!   stub's files as copies, not links. Harmless; said so, never "fixed".
//! - no `/etc/ld.so.conf.d/ld.wsl.conf`: the loader does not look in `/usr/lib/wsl/lib`,
//!   so `dlopen("libcuda.so.1")` fails. The fix is the exact command (a root-owned file
//!   under `/etc` and `ldconfig`: the user runs it, as the Linux driver's commands).
//! - a Linux NVIDIA driver installed inside WSL2 (`libnvidia-compute-*`, a `nvidia.ko`):
//!   its `libcuda.so.1` shadows the stub and CUDA stops working. The exact removal
//!   command, never run by us.

use super::*;
use crate::detect::wsl::{LD_CONF, LIB_DIR};
use crate::recommend::HostKind;

/// Where a Linux driver's `libcuda.so.1` lands (Debian/Ubuntu's multiarch folder, and the
/// other distributions' `lib64`).
const LINUX_LIBCUDA: [&str; 3] = [
    "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
    "/usr/lib64/libcuda.so.1",
    "/usr/lib/aarch64-linux-gnu/libcuda.so.1",
];

/// The packages a Linux driver comes in, as apt patterns: removed together.
pub(super) const REMOVE_LINUX_DRIVER: &str = "sudo apt remove --purge 'libnvidia-compute-*' 'nvidia-driver-*' 'nvidia-dkms-*' 'nvidia-kernel-*' 'cuda-drivers*' && sudo apt autoremove";

/// The command that makes the loader find the stub.
pub(super) const WRITE_LD_CONF: &str =
    "echo /usr/lib/wsl/lib | sudo tee /etc/ld.so.conf.d/ld.wsl.conf && sudo ldconfig";

/// Whose numbers the driver has here: Windows' inside WSL2.
pub(super) fn driver_os(i: &Input) -> Os {
    if wsl2(i) { Os::Windows } else { i.target.os }
}

/// The driver's fix: on Windows inside WSL2.
pub(super) fn fix_driver(i: &Input) -> Fix {
    manual(if wsl2(i) {
        "repair_fix_driver_wsl"
    } else {
        "repair_fix_driver"
    })
}

fn wsl2(i: &Input) -> bool {
    i.report.host_kind == HostKind::Wsl2 && i.target.os == Os::Linux
}

pub(super) fn wsl(i: &Input, out: &mut Vec<Finding>) {
    if !wsl2(i) {
        return;
    }
    let t = i.target;
    let lib = t.system_path(LIB_DIR);
    let stub = lib.join("libcuda.so.1");
    let stub_meta = std::fs::symlink_metadata(&stub).ok();
    if stub_meta.as_ref().is_some_and(|m| m.is_file()) {
        out.push(finding(
            Layer::Driver,
            "repair_wsl_stub_not_a_link",
            Severity::Info,
            msg!("repair_wsl_stub_not_a_link", file = stub.display()),
            manual("repair_fix_wsl_stub_not_a_link"),
        ));
    }
    if stub_meta.is_some() && !ld_conf_names_lib(&t.system_path(LD_CONF)) {
        out.push(finding(
            Layer::Driver,
            "repair_wsl_ld_conf_missing",
            Severity::Warning,
            msg!(
                "repair_wsl_ld_conf_missing",
                file = t.system_path(LD_CONF).display(),
                dir = LIB_DIR
            ),
            Fix::Manual {
                how: msg!("repair_fix_wsl_ld_conf", command = WRITE_LD_CONF),
            },
        ));
    }
    let found = linux_driver(t);
    if !found.is_empty() {
        out.push(finding(
            Layer::Driver,
            "repair_wsl_linux_driver",
            Severity::Error,
            msg!("repair_wsl_linux_driver", found = found.join(", ")),
            Fix::Manual {
                how: msg!("repair_fix_wsl_linux_driver", command = REMOVE_LINUX_DRIVER),
            },
        ));
    }
}

/// Whether the loader's WSL entry is there and names the stub's folder (read bounded,
/// regular only).
fn ld_conf_names_lib(path: &Path) -> bool {
    crate::detect::wsl::read_text(path)
        .is_some_and(|t| t.lines().any(|l| l.trim().trim_end_matches('/') == LIB_DIR))
}

/// What a Linux NVIDIA driver installed inside WSL2 left: its `libcuda.so.1` (a file or
/// the link its package makes) and its kernel module `nvidia.ko` under `/lib/modules`.
fn linux_driver(t: &Target) -> Vec<String> {
    let mut found: Vec<String> = LINUX_LIBCUDA
        .iter()
        .map(|p| t.system_path(p))
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .map(|p| p.display().to_string())
        .collect();
    let modules = t.system_path("/lib/modules");
    for kernel in std::fs::read_dir(&modules).into_iter().flatten().flatten() {
        // Where distribution packages (dkms) and NVIDIA's .run put the module.
        for rel in [
            "updates/dkms/nvidia.ko",
            "updates/dkms/nvidia.ko.zst",
            "kernel/drivers/video/nvidia.ko",
            "video/nvidia.ko",
        ] {
            let p = kernel.path().join(rel);
            if std::fs::symlink_metadata(&p).is_ok() {
                found.push(p.display().to_string());
            }
        }
    }
    found
}
