//! The machine most wizard tests stand in for: one RTX 3060 (compute capability 8.6), a
//! driver (or none) and a Python, as the wizard's what-if overrides give them.

use cuda_setup::ui::Overrides;
use cuda_setup_core::recommend::GpuFact;

/// An RTX 3060 with `driver` (None: no driver installed) and Python `python`.
pub fn rtx_3060(driver: Option<&str>, python: &str) -> Overrides {
    Overrides {
        gpus: vec![GpuFact {
            name: Some("NVIDIA GeForce RTX 3060".into()),
            compute_capability: "8.6".parse().unwrap(),
        }],
        driver: Some(driver.map(|d| d.parse().unwrap())),
        driver_cuda: None,
        python: Some(python.parse().unwrap()),
        free_threaded: false,
        no_gpu: false,
    }
}

/// A Linux root inside WSL2 (#32, dossier §13.2): the WSL2 kernel release, `/dev/dxg`,
/// Ubuntu's os-release, the Windows driver's stub folder with `libcuda.so.1` (a plain
/// file, as Windows provides it) and `/etc/ld.so.conf.d/ld.wsl.conf`; with `driver`, the
/// Windows driver's `nvidia-smi` there, answering for an RTX 3060 on that (Windows)
/// driver version.
#[cfg(unix)]
pub fn wsl2(root: &std::path::Path, driver: Option<&str>) {
    use std::os::unix::fs::PermissionsExt;
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        "proc/sys/kernel/osrelease",
        "5.15.167.4-microsoft-standard-WSL2\n",
    );
    write("dev/dxg", "");
    write(
        "etc/os-release",
        "PRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"24.04\"\n",
    );
    write("usr/lib/wsl/lib/libcuda.so.1", "\x7fELF");
    write("etc/ld.so.conf.d/ld.wsl.conf", "/usr/lib/wsl/lib\n");
    if let Some(d) = driver {
        let smi = root.join("usr/lib/wsl/lib/nvidia-smi");
        std::fs::write(
            &smi,
            format!("#!/bin/sh\necho 'NVIDIA GeForce RTX 3060, {d}, 00000000:01:00.0'\n"),
        )
        .unwrap();
        std::fs::set_permissions(&smi, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}
