//! Windows-only system access: elevation and the registry keys the CUDA installer writes.

use std::path::PathBuf;

/// Administrator rights (an elevated token).
pub fn is_elevated() -> bool {
    // SAFETY: IsUserAnAdmin takes no arguments and only reads the process token.
    unsafe { windows_sys::Win32::UI::Shell::IsUserAnAdmin() != 0 }
}

/// `HKLM\SOFTWARE\NVIDIA Corporation\GPU Computing Toolkit\CUDA\v*` → (`v12.4`, InstallDir).
/// (Key layout from 3rd-party code; NVIDIA does not document it: compat dossier §3.3.)
pub fn cuda_registry_installs() -> Vec<(String, PathBuf)> {
    use winreg::RegKey;
    use winreg::enums::HKEY_LOCAL_MACHINE;
    let hklm = RegKey::predef(HKEY_LOCAL_MACHINE);
    let Ok(cuda) = hklm.open_subkey(r"SOFTWARE\NVIDIA Corporation\GPU Computing Toolkit\CUDA")
    else {
        return Vec::new();
    };
    cuda.enum_keys()
        .flatten()
        .filter_map(|name| {
            let key = cuda.open_subkey(&name).ok()?;
            let dir: String = key.get_value("InstallDir").ok()?;
            Some((name, PathBuf::from(dir)))
        })
        .collect()
}
