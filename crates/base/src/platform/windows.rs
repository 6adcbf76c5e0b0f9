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

/// The WSL distributions registered for this user:
/// `HKCU\Software\Microsoft\Windows\CurrentVersion\Lxss\{GUID}` → `DistributionName`.
pub fn wsl_distributions() -> Vec<String> {
    use winreg::RegKey;
    use winreg::enums::HKEY_CURRENT_USER;
    let hkcu = RegKey::predef(HKEY_CURRENT_USER);
    let Ok(lxss) = hkcu.open_subkey(r"Software\Microsoft\Windows\CurrentVersion\Lxss") else {
        return Vec::new();
    };
    lxss.enum_keys()
        .flatten()
        .filter_map(|guid| {
            let key = lxss.open_subkey(&guid).ok()?;
            let name: String = key.get_value("DistributionName").ok()?;
            // Registry text is input: shown safe, empty names dropped, a bounded list.
            Some(crate::shown::value(name.trim())).filter(|n| !n.is_empty())
        })
        .take(64)
        .collect()
}

/// Tells running programs (Explorer, new consoles) that the environment changed.
pub fn broadcast_environment_change() {
    use windows_sys::Win32::UI::WindowsAndMessaging::{
        HWND_BROADCAST, SMTO_ABORTIFHUNG, SendMessageTimeoutW, WM_SETTINGCHANGE,
    };
    let name: Vec<u16> = "Environment"
        .encode_utf16()
        .chain(std::iter::once(0))
        .collect();
    let mut result = 0usize;
    // SAFETY: a NUL-terminated UTF-16 string that outlives the call; a bounded wait.
    unsafe {
        SendMessageTimeoutW(
            HWND_BROADCAST,
            WM_SETTINGCHANGE,
            0,
            name.as_ptr() as isize,
            SMTO_ABORTIFHUNG,
            5000,
            &mut result,
        );
    }
}

/// Visual Studio's install folder, from vswhere (needed for nvcc's host compiler).
pub fn visual_studio() -> Option<std::path::PathBuf> {
    let pf86 =
        std::env::var("ProgramFiles(x86)").unwrap_or_else(|_| r"C:\Program Files (x86)".into());
    let vswhere =
        std::path::Path::new(&pf86).join(r"Microsoft Visual Studio\Installer\vswhere.exe");
    let out = std::process::Command::new(vswhere)
        .args(["-latest", "-products", "*", "-property", "installationPath"])
        .output()
        .ok()?;
    let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!p.is_empty()).then(|| std::path::PathBuf::from(p))
}

/// Whether `path`'s owner is the Administrators group or SYSTEM (see
/// `platform::written_by_us`).
pub fn owned_by_administrators(path: &std::path::Path) -> std::io::Result<bool> {
    use std::os::windows::ffi::OsStrExt;
    use windows_sys::Win32::Foundation::LocalFree;
    use windows_sys::Win32::Security::Authorization::{GetNamedSecurityInfoW, SE_FILE_OBJECT};
    use windows_sys::Win32::Security::{
        IsWellKnownSid, OWNER_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, PSID,
        WinBuiltinAdministratorsSid, WinLocalSystemSid,
    };
    let wide: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
    let mut owner: PSID = std::ptr::null_mut();
    let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
    // SAFETY: `wide` is NUL-terminated; `owner` points into `sd`, freed below with LocalFree.
    let err = unsafe {
        GetNamedSecurityInfoW(
            wide.as_ptr(),
            SE_FILE_OBJECT,
            OWNER_SECURITY_INFORMATION,
            &mut owner,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut sd,
        )
    };
    if err != 0 {
        return Err(std::io::Error::from_raw_os_error(err as i32));
    }
    // SAFETY: `owner` is a valid SID inside `sd` until `sd` is freed.
    let ok = unsafe {
        !owner.is_null()
            && (IsWellKnownSid(owner, WinBuiltinAdministratorsSid) != 0
                || IsWellKnownSid(owner, WinLocalSystemSid) != 0)
    };
    // SAFETY: `sd` was allocated by GetNamedSecurityInfoW.
    unsafe { LocalFree(sd as _) };
    Ok(ok)
}

/// Where Windows looks for programs to start once at the user's next sign-in.
const RUN_ONCE: &str = r"Software\Microsoft\Windows\CurrentVersion\RunOnce";
/// Our value under it.
const RUN_ONCE_NAME: &str = "cuda-setup";

/// Opens `exe` (the wizard) once after the next restart, so it resumes the plan waiting
/// in the journal: `HKCU\…\RunOnce`, for this user, no rights needed. The wizard calls
/// it (never for a `--root` target); the unattended CLI never does.
pub fn reopen_after_restart(exe: &std::path::Path) -> std::io::Result<()> {
    run_once_at(RUN_ONCE, RUN_ONCE_NAME, exe)
}

fn run_once_at(key: &str, name: &str, exe: &std::path::Path) -> std::io::Result<()> {
    use winreg::RegKey;
    use winreg::enums::HKEY_CURRENT_USER;
    let (k, _) = RegKey::predef(HKEY_CURRENT_USER).create_subkey(key)?;
    // Quoted: a path with spaces (C:\Program Files\…) is one program, not several words.
    k.set_value(name, &format!("\"{}\"", exe.display()))
}

/// The restart Windows does with `shutdown /r /t 0`.
fn restart_command() -> (PathBuf, [&'static str; 3]) {
    let windows = std::env::var("SystemRoot").unwrap_or_else(|_| r"C:\Windows".into());
    (
        std::path::Path::new(&windows).join(r"System32\shutdown.exe"),
        ["/r", "/t", "0"],
    )
}

/// Restarts the computer now (the wizard's "Restart now", after `reopen_after_restart`).
pub fn restart_now() -> Result<(), super::RunError> {
    let (program, args) = restart_command();
    let out = super::Host::real().run(&program, &args, std::time::Duration::from_secs(30))?;
    match out.status {
        Some(0) => Ok(()),
        status => Err(super::RunError::Spawn {
            program: program.display().to_string(),
            reason: format!("exit {status:?}: {}", out.stderr.trim()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The RunOnce value is the quoted program path (checked in a key of the test's own,
    /// so the real RunOnce is left alone).
    #[test]
    fn run_once_holds_the_quoted_program() {
        use winreg::RegKey;
        use winreg::enums::HKEY_CURRENT_USER;
        let key = r"Software\cuda-setup-tests\RunOnce";
        let exe = std::path::Path::new(r"C:\Program Files\cuda-setup\cuda-setup.exe");
        run_once_at(key, "cuda-setup", exe).unwrap();
        let k = RegKey::predef(HKEY_CURRENT_USER).open_subkey(key).unwrap();
        let v: String = k.get_value("cuda-setup").unwrap();
        assert_eq!(v, r#""C:\Program Files\cuda-setup\cuda-setup.exe""#);
        let _ = RegKey::predef(HKEY_CURRENT_USER).delete_subkey_all(r"Software\cuda-setup-tests");
    }

    #[test]
    fn restart_is_shutdown_r_now() {
        let (program, args) = restart_command();
        assert!(
            program.ends_with(r"System32\shutdown.exe"),
            "{}",
            program.display()
        );
        assert_eq!(args, ["/r", "/t", "0"]);
    }
}
