//! Administrator rights on demand (Windows). The executable asks for none in its manifest
//! (`asInvoker`): the PyTorch goal, the doctor and every CLI subcommand that only reads run
//! as the user, and pip must install into the user's own Python. When the developer
//! install's pre-flight finds no administrator rights, the Prepare page offers to start
//! the wizard again elevated, through UAC (`ShellExecuteW` with the `runas` verb).

use cuda_setup_core::i18n::Lang;

/// Starts this program again with administrator rights (Windows shows the UAC prompt);
/// true when it started, and this instance should close.
#[cfg(windows)]
pub fn relaunch_as_admin(lang: Lang) -> bool {
    use std::os::windows::ffi::OsStrExt;
    use windows_sys::Win32::UI::Shell::ShellExecuteW;
    use windows_sys::Win32::UI::WindowsAndMessaging::SW_SHOWNORMAL;
    let Ok(exe) = std::env::current_exe() else {
        return false;
    };
    let wide = |s: &std::ffi::OsStr| -> Vec<u16> { s.encode_wide().chain(Some(0)).collect() };
    let verb = wide("runas".as_ref());
    let file = wide(exe.as_os_str());
    let params = wide(
        match lang {
            Lang::En => "--lang en",
            Lang::Zh => "--lang zh",
        }
        .as_ref(),
    );
    // SAFETY: NUL-terminated UTF-16 strings that outlive the call; no window handle.
    let r = unsafe {
        ShellExecuteW(
            std::ptr::null_mut(),
            verb.as_ptr(),
            file.as_ptr(),
            params.as_ptr(),
            std::ptr::null(),
            SW_SHOWNORMAL,
        )
    };
    // Above 32 means it started (the ShellExecute convention); the user may say no.
    r as isize > 32
}

#[cfg(not(windows))]
pub fn relaunch_as_admin(_lang: Lang) -> bool {
    false
}
