//! Linux: the running kernel, whether NVIDIA's module is loaded, built for this kernel,
//! and whether a driver package is still installed. Files under the host's root, read
//! bounded; folders listed, never followed out.

use crate::platform::Host;

/// The running kernel's release (`uname -r`): `/proc/sys/kernel/osrelease`.
pub(super) fn kernel(host: &Host) -> Option<String> {
    let p = host.system_path("/proc/sys/kernel/osrelease");
    let bytes = crate::place::read_regular_following(&p, 4096).ok()??;
    let k = String::from_utf8_lossy(&bytes).trim().to_string();
    (!k.is_empty() && k.len() <= 200).then_some(k)
}

/// The module is loaded: the kernel's own file for it exists.
pub(super) fn module_loaded(host: &Host) -> bool {
    host.system_path("/proc/driver/nvidia/version").exists()
}

/// A driver package that builds its module on the machine is still there: DKMS's tree
/// for `nvidia` (Debian, Ubuntu, NVIDIA's repositories), akmods' sources (Fedora), or the
/// driver's `nvidia-smi`.
pub(super) fn package_installed(host: &Host) -> bool {
    host.system_path("/var/lib/dkms/nvidia").is_dir()
        || std::fs::read_dir(host.system_path("/usr/src/akmods"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().contains("nvidia"))
        || host.system_path("/usr/bin/nvidia-smi").is_file()
}

/// Where a built module lands for `kernel`: DKMS (`updates/dkms`), distribution packages
/// and the .run (`kernel/drivers/video`), akmods (`extra`, `extra/nvidia`).
pub(super) fn module_for(host: &Host, kernel: &str) -> bool {
    // A release is one path component: never `..` or a separator from a file.
    if kernel.contains(['/', '\\']) || kernel == ".." || kernel == "." {
        return false;
    }
    let base = host.system_path("/lib/modules").join(kernel);
    [
        "updates/dkms",
        "kernel/drivers/video",
        "extra",
        "extra/nvidia",
    ]
    .iter()
    .any(|rel| {
        std::fs::read_dir(base.join(rel))
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let n = e.file_name().to_string_lossy().to_string();
                n.starts_with("nvidia") && n.contains(".ko")
            })
    })
}
